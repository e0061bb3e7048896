//! Runs an argv on a configured host over SSH for the one-shot commands (a release's backup and
//! the `ssh` provider's shutdown), through `remote::exec`.

use rust_i18n::t;
use std::time::Duration;

use crate::config::Config;
use crate::release::HostRunner;
use crate::remote::{ExecRequest, SshSettings, exec, link_options, resolve_named};
use crate::telemetry::source::StopFlag;

/// A backup copying checkpoints may take long; past this it is cut short and counts as failed.
const RUN_TIMEOUT: Duration = Duration::from_secs(6 * 3600);

/// Runs commands on the hosts of `config`, with the SSH settings of the command line.
pub struct SshRunner<'a> {
    pub ssh: &'a SshSettings,
    pub config: &'a Config,
    pub interval_ms: u64,
}

impl HostRunner for SshRunner<'_> {
    fn run(
        &self,
        host: &str,
        argv: &[String],
        on_line: &mut dyn FnMut(&str),
    ) -> Result<Option<i32>, String> {
        let remote = resolve_named(
            self.ssh,
            std::slice::from_ref(&host.to_string()),
            self.config,
        )
        .map_err(|e| e.localized())?
        .pop()
        .ok_or_else(|| t!("host_runner.no_host", host = host).into_owned())?;
        let opts = link_options(self.ssh, self.interval_ms);
        let request = ExecRequest {
            argv,
            stdin: None,
            timeout: RUN_TIMEOUT,
        };
        let outcome = exec(&remote, &opts, &request, &StopFlag::default(), on_line)
            .map_err(|e| e.localized())?;
        if outcome.timed_out {
            return Err(t!("host_runner.timed_out", seconds = RUN_TIMEOUT.as_secs()).into_owned());
        }
        Ok(outcome.exit_status)
    }
}
