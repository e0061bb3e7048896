//! Running a telemetry source on its own thread: the event sink, a stop flag, the wall clock,
//! and the backlog count that bounds what one source may have queued for the loop.

use std::io::Write;
use std::os::unix::net::UnixStream;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, mpsc};
use std::thread::JoinHandle;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::fleet::HostId;
use crate::telemetry::TimestampMs;

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

/// How many events of one source wait in the channel, not yet taken by the loop. The channel
/// itself has no bound; a source that counts its events here holds its samples back (the
/// newest per GPU replacing older ones) once `cap` wait, so a loop that falls behind (a stalled
/// terminal) never has more than that per source queued. Counting starts only once the loop
/// [arms](Backlogs::arm) it: a consumer that does not count (`snapshot`, tests) sees every
/// event.
///
/// It also carries the one thing the loop tells a running source: whether someone looks at its
/// host now (the console's host view is open on it), so the link fetches what only a person
/// reads (the process list) often while looked at and seldom otherwise.
#[derive(Debug, Default)]
pub struct Backlog {
    armed: AtomicBool,
    queued: AtomicUsize,
    looked_at: AtomicBool,
}

impl Backlog {
    /// Whether someone looks at this source's host now.
    pub fn looked_at(&self) -> bool {
        self.looked_at.load(Ordering::Relaxed)
    }

    /// Counts one more event about to be sent if fewer than `cap` wait (or nobody counts);
    /// false when the source should hold it back.
    pub fn try_add(&self, cap: usize) -> bool {
        if !self.armed.load(Ordering::Relaxed) {
            return true;
        }
        if self.queued.load(Ordering::Relaxed) >= cap {
            return false;
        }
        self.queued.fetch_add(1, Ordering::Relaxed);
        true
    }

    /// Counts one more event about to be sent, whatever waits (events that must not be held).
    pub fn add(&self) {
        if self.armed.load(Ordering::Relaxed) {
            self.queued.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// The loop took one of this source's events.
    fn taken(&self) {
        let _ = self
            .queued
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| n.checked_sub(1));
    }

    /// Events waiting now (for tests and measurements).
    pub fn queued(&self) -> usize {
        self.queued.load(Ordering::Relaxed)
    }
}

/// The loop's side of the sources' backlogs, by host.
#[derive(Debug, Default)]
pub struct Backlogs(Vec<Option<Arc<Backlog>>>);

impl Backlogs {
    /// Starts counting the backlog of every source in `sources` that keeps one.
    pub fn arm(sources: &[SourceHandle]) -> Self {
        let mut backlogs = Self::default();
        for source in sources {
            backlogs.add(source);
        }
        backlogs
    }

    /// Starts counting the backlog of one more source (a host added while running).
    pub fn add(&mut self, source: &SourceHandle) {
        let Some((host, backlog)) = source.backlog.as_ref() else {
            return;
        };
        if self.0.len() <= *host {
            self.0.resize(*host + 1, None);
        }
        backlog.armed.store(true, Ordering::Relaxed);
        self.0[*host] = Some(Arc::clone(backlog));
    }

    /// Tells every source whether its host is the one looked at now (`None`: none is).
    pub fn look_at(&self, host: Option<HostId>) {
        for (id, backlog) in self.0.iter().enumerate() {
            if let Some(backlog) = backlog {
                backlog.looked_at.store(host == Some(id), Ordering::Relaxed);
            }
        }
    }

    /// The loop took an event of `host` off the channel.
    pub fn taken(&self, host: HostId) {
        if let Some(Some(backlog)) = self.0.get(host) {
            backlog.taken();
        }
    }
}

/// What a running source runs on.
#[derive(Debug)]
enum Running {
    Thread(JoinHandle<()>),
    /// A task on a runtime: the channel's sender is dropped when the task ends.
    Task(mpsc::Receiver<()>),
}

/// A running source (a thread or a task); dropping it asks the source to stop without waiting
/// for it.
#[derive(Debug)]
pub struct SourceHandle {
    stop: StopFlag,
    running: Option<Running>,
    /// The host this source reports on and its backlog, for sources that count one.
    backlog: Option<(HostId, Arc<Backlog>)>,
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
            running: Some(Running::Thread(join)),
            backlog: None,
        })
    }

    /// A source of `host` already running as a task: `stop` ends it, and `ended` reports
    /// (its sender dropped) once it has.
    pub fn for_task(
        stop: StopFlag,
        host: HostId,
        backlog: Arc<Backlog>,
        ended: mpsc::Receiver<()>,
    ) -> Self {
        Self {
            stop,
            running: Some(Running::Task(ended)),
            backlog: Some((host, backlog)),
        }
    }

    /// [`SourceHandle::spawn`] for a source of one host that counts its [`Backlog`].
    pub fn spawn_counted<F>(name: &str, host: HostId, run: F) -> std::io::Result<Self>
    where
        F: FnOnce(StopFlag, Arc<Backlog>) + Send + 'static,
    {
        let backlog = Arc::new(Backlog::default());
        let shared = Arc::clone(&backlog);
        let mut handle = Self::spawn(name, move |stop| run(stop, shared))?;
        handle.backlog = Some((host, backlog));
        Ok(handle)
    }

    /// Asks the source to stop and waits until it has. Not for a thread of the runtime the
    /// source runs on.
    pub fn stop_and_join(mut self) {
        self.stop.set();
        match self.running.take() {
            Some(Running::Thread(join)) => {
                let _ = join.join();
            }
            Some(Running::Task(ended)) => {
                // Only ever dropped, never sent on: this returns when the task is over.
                let _ = ended.recv();
            }
            None => {}
        }
    }
}

impl Drop for SourceHandle {
    fn drop(&mut self) {
        self.stop.set();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_backlog_counts_only_once_armed_and_holds_back_at_its_cap() {
        let handle = SourceHandle::spawn_counted("t", 2, |_, _| {}).expect("spawn");
        let backlog = Arc::clone(&handle.backlog.as_ref().expect("counted").1);
        assert!(
            backlog.try_add(1) && backlog.try_add(1),
            "not armed: no bound"
        );
        assert_eq!(backlog.queued(), 0);
        let backlogs = Backlogs::arm(std::slice::from_ref(&handle));
        assert!(backlog.try_add(2));
        backlog.add();
        assert!(!backlog.try_add(2), "two wait: the third is held");
        backlogs.taken(2);
        assert_eq!(backlog.queued(), 1);
        assert!(backlog.try_add(2));
        // Events of other hosts change nothing; the count never wraps.
        backlogs.taken(7);
        for _ in 0..5 {
            backlogs.taken(2);
        }
        assert_eq!(backlog.queued(), 0);
        handle.stop_and_join();
    }
}
