//! Running a telemetry source on its own thread: the event sink, a stop flag, and the wall clock.

use std::sync::mpsc::Sender;
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::app::event::Event;
use crate::telemetry::TimestampMs;

/// Where sources send their events; the app loop owns the receiving end.
pub type EventSink = Sender<Event>;

/// The wall clock in milliseconds since the Unix epoch.
pub fn now_ms() -> TimestampMs {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as TimestampMs)
        .unwrap_or(0)
}

/// A cooperative stop signal shared between the app and one source thread. Waiting on it sleeps
/// on a condition variable, so an idle source costs no wake-ups between its ticks.
#[derive(Debug, Clone, Default)]
pub struct StopFlag(Arc<(Mutex<bool>, Condvar)>);

impl StopFlag {
    pub fn is_set(&self) -> bool {
        self.0.0.lock().map(|g| *g).unwrap_or(true)
    }

    pub fn set(&self) {
        if let Ok(mut stopped) = self.0.0.lock() {
            *stopped = true;
        }
        self.0.1.notify_all();
    }

    /// Sleeps up to `total`, waking early when stopped. Returns true when the flag was set.
    pub fn sleep(&self, total: Duration) -> bool {
        let Ok(guard) = self.0.0.lock() else {
            return true;
        };
        match self
            .0
            .1
            .wait_timeout_while(guard, total, |stopped| !*stopped)
        {
            Ok((stopped, _)) => *stopped,
            Err(_) => true,
        }
    }
}

/// A running source thread; dropping it asks the thread to stop without waiting for it.
#[derive(Debug)]
pub struct SourceHandle {
    stop: StopFlag,
    join: Option<JoinHandle<()>>,
}

impl SourceHandle {
    /// Starts `run` on a named thread with a fresh stop flag.
    pub fn spawn<F>(name: &str, run: F) -> std::io::Result<Self>
    where
        F: FnOnce(StopFlag) + Send + 'static,
    {
        let stop = StopFlag::default();
        let flag = stop.clone();
        let join = std::thread::Builder::new()
            .name(name.to_string())
            .spawn(move || run(flag))?;
        Ok(Self {
            stop,
            join: Some(join),
        })
    }

    /// Asks the source to stop and waits for its thread.
    pub fn stop_and_join(mut self) {
        self.stop.set();
        if let Some(join) = self.join.take() {
            let _ = join.join();
        }
    }
}

impl Drop for SourceHandle {
    fn drop(&mut self) {
        self.stop.set();
    }
}
