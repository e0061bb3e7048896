//! An attached console's runbook: the runner walks the runbook here as everywhere (each exact
//! command shown, asked before anything but a read, its output judged), and each step's
//! command runs on the watcher. What the watcher is sent is the runbook's id, the step's id,
//! the typed parameters and the command shown here: the watcher builds the command again from
//! its own catalogue and runs it only when it is that one, so no command text from this
//! console ever runs as such. The step being run is the one the runner announced last
//! ([`StepTracker`]).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use rust_i18n::t;

use crate::fleet::HostId;
use crate::remote_watcher::{Ask, WatcherActions};
use crate::runbook::{ExecError, ExecResult, Executor, Observer, RunEvent};
use crate::telemetry::source::StopFlag;

/// The step the runner announced last, shared by the tracker and the executor.
pub type CurrentStep = Arc<Mutex<Option<String>>>;

/// Passes every event on, noting each step as it is announced.
pub struct StepTracker<'a> {
    pub inner: &'a mut dyn Observer,
    pub current: CurrentStep,
}

impl Observer for StepTracker<'_> {
    fn event(&mut self, event: &RunEvent<'_>) {
        if let RunEvent::Step { step, .. } = event
            && let Ok(mut current) = self.current.lock()
        {
            *current = Some(step.id.clone());
        }
        self.inner.event(event);
    }
}

/// Runs a runbook's steps on the watcher that has the host.
pub struct WatcherExecutor {
    pub watcher: WatcherActions,
    pub host: HostId,
    /// The host's name in this console.
    pub name: String,
    /// This run's name on the watcher (the watcher keeps what its earlier steps found).
    pub run: String,
    pub runbook: String,
    pub params: Vec<(String, String)>,
    pub current: CurrentStep,
}

impl Executor for WatcherExecutor {
    fn host(&self) -> &str {
        &self.name
    }

    fn is_local(&self) -> bool {
        false
    }

    fn run(
        &mut self,
        argv: &[String],
        _timeout: Duration,
        stop: &StopFlag,
        on_line: &mut dyn FnMut(&str),
    ) -> Result<ExecResult, ExecError> {
        if stop.is_set() {
            return Err(ExecError::Stopped);
        }
        let step = self.current.lock().ok().and_then(|c| c.clone());
        let Some(step) = step else {
            return Err(ExecError::Watcher(
                t!("watcher_actions.step_unknown").into_owned(),
            ));
        };
        let ask = Ask::Step {
            run: self.run.clone(),
            runbook: self.runbook.clone(),
            step,
            params: self.params.clone(),
            command: argv.to_vec(),
        };
        let answer = self
            .watcher
            .ask(self.host, &ask)
            .map_err(|e| ExecError::Watcher(e.to_string()))?;
        for line in &answer.output {
            on_line(line);
        }
        Ok(ExecResult {
            exit_status: answer.exit_status,
            timed_out: answer.timed_out,
        })
    }
}
