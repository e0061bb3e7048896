//! Steps on an SSH host: each command through `remote::exec` on a session of its own, so a long
//! step never holds up the telemetry link, and a dropped connection is an error the reboot
//! logic can read as "the host went down".

use std::time::Duration;

use crate::remote::{ExecRequest, LinkOptions, RemoteHost, exec};
use crate::runbook::exec::{ExecError, ExecResult, Executor};
use crate::telemetry::source::StopFlag;

#[derive(Debug, Clone)]
pub struct RemoteExecutor {
    host: RemoteHost,
    options: LinkOptions,
}

impl RemoteExecutor {
    pub fn new(host: RemoteHost, options: LinkOptions) -> Self {
        Self { host, options }
    }
}

impl Executor for RemoteExecutor {
    fn host(&self) -> &str {
        &self.host.name
    }

    fn is_local(&self) -> bool {
        false
    }

    fn run(
        &mut self,
        argv: &[String],
        timeout: Duration,
        stop: &StopFlag,
        on_line: &mut dyn FnMut(&str),
    ) -> Result<ExecResult, ExecError> {
        if argv.is_empty() {
            return Err(ExecError::Empty);
        }
        let request = ExecRequest {
            argv,
            stdin: None,
            timeout,
        };
        let outcome = exec(&self.host, &self.options, &request, stop, on_line);
        if stop.is_set() {
            return Err(ExecError::Stopped);
        }
        let outcome = outcome?;
        Ok(ExecResult {
            exit_status: outcome.exit_status,
            timed_out: outcome.timed_out,
        })
    }
}
