//! Running a telemetry source on its own thread: the event sink, a stop flag, and the wall clock.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::Sender;
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

/// A cooperative stop signal shared between the app and one source thread.
#[derive(Debug, Clone, Default)]
pub struct StopFlag(Arc<AtomicBool>);

impl StopFlag {
    pub fn is_set(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }

    pub fn set(&self) {
        self.0.store(true, Ordering::Relaxed);
    }

    /// Sleeps up to `total`, waking early when stopped. Returns true when the flag was set.
    pub fn sleep(&self, total: Duration) -> bool {
        let step = Duration::from_millis(50);
        let mut left = total;
        while !left.is_zero() {
            if self.is_set() {
                return true;
            }
            let nap = left.min(step);
            std::thread::sleep(nap);
            left -= nap;
        }
        self.is_set()
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
