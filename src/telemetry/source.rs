//! Running a telemetry source on its own thread: the event sink, a stop flag, and the wall clock.

use std::io::Write;
use std::os::unix::net::UnixStream;
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
/// on a condition variable, so an idle source costs no wake-ups between its ticks; a thread that
/// waits in `poll(2)` instead asks for a [`StopFlag::waker`].
#[derive(Debug, Clone, Default)]
pub struct StopFlag(Arc<StopInner>);

#[derive(Debug, Default)]
struct StopInner {
    stopped: Mutex<bool>,
    cond: Condvar,
    /// Write ends of the wakers handed out; setting the flag writes a byte to each.
    wakers: Mutex<Vec<UnixStream>>,
}

impl StopFlag {
    pub fn is_set(&self) -> bool {
        self.0.stopped.lock().map(|g| *g).unwrap_or(true)
    }

    pub fn set(&self) {
        if let Ok(mut stopped) = self.0.stopped.lock() {
            *stopped = true;
        }
        self.0.cond.notify_all();
        if let Ok(wakers) = self.0.wakers.lock() {
            for mut w in wakers.iter() {
                // Non-blocking: a full socket already says "stopped".
                let _ = w.write(&[1]);
            }
        }
    }

    /// A socket that becomes readable once the flag is set (at once if it already is), so a
    /// thread waiting in `poll(2)` on its own sockets hears the stop without a timeout.
    pub fn waker(&self) -> std::io::Result<UnixStream> {
        let (read, write) = UnixStream::pair()?;
        write.set_nonblocking(true)?;
        read.set_nonblocking(true)?;
        if let Ok(mut wakers) = self.0.wakers.lock() {
            wakers.push(write);
        }
        if self.is_set() {
            self.set();
        }
        Ok(read)
    }

    /// Sleeps up to `total`, waking early when stopped. Returns true when the flag was set.
    pub fn sleep(&self, total: Duration) -> bool {
        let Ok(guard) = self.0.stopped.lock() else {
            return true;
        };
        match self
            .0
            .cond
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
