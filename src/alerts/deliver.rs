//! Delivery that never holds up monitoring: one worker thread per sink behind a bounded queue
//! (a full queue drops the alert and counts it), a rate limit per sink, and for each alert its
//! own retries with backoff and its own deadline for what may pass later (throttling, server
//! errors, no answer). The worker takes whichever queued alert is due first, so an alert that
//! keeps failing never holds back the ones queued after it. A sink that failed
//! [`DOWN_AFTER`] tries in a row is marked down until one succeeds; statuses are shown by the
//! console and logged by the watcher, and what was still queued at the end is named.

use rust_i18n::t;
use std::collections::VecDeque;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use super::answer::{Verdict, judge};
use super::message::Alert;
use super::sink::Sink;
use crate::telemetry::TimestampMs;

/// Failed tries in a row (any alert) after which a sink is marked down.
pub const DOWN_AFTER: u32 = 2;

#[derive(Debug, Clone, Copy)]
pub struct DeliveryOptions {
    /// Alerts waiting per sink; more are dropped (and counted) rather than held in memory.
    pub queue_len: usize,
    /// Tries per alert, the first included.
    pub max_attempts: u32,
    pub first_backoff: Duration,
    pub max_backoff: Duration,
    /// How long after it was queued an alert is given up on, whatever its tries.
    pub deadline: Duration,
}

impl Default for DeliveryOptions {
    fn default() -> Self {
        Self {
            queue_len: 64,
            max_attempts: 5,
            first_backoff: Duration::from_secs(1),
            max_backoff: Duration::from_secs(60),
            deadline: Duration::from_secs(600),
        }
    }
}

/// How one sink is doing.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SinkStatus {
    pub delivered: u64,
    /// Alerts given up on (refused, or still failing after every try or past their deadline).
    pub failed: u64,
    /// Alerts dropped because the queue was full.
    pub dropped: u64,
    pub last_error: Option<String>,
    pub last_error_at_ms: Option<TimestampMs>,
    /// Since when the sink has been down ([`DOWN_AFTER`] failed tries in a row).
    pub down_since_ms: Option<TimestampMs>,
    /// Alerts queued or being tried now.
    pub waiting: usize,
    /// After [`Dispatcher::finish`]: the titles of the alerts that were never delivered.
    pub undelivered: Vec<String>,
}

/// What happened to one alert at one sink, for the log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DeliveryEvent {
    Delivered {
        sink: String,
        alert: String,
    },
    Retrying {
        sink: String,
        alert: String,
        why: String,
        after: Duration,
    },
    Failed {
        sink: String,
        alert: String,
        why: String,
    },
    Dropped {
        sink: String,
        alert: String,
    },
    /// The sink failed [`DOWN_AFTER`] tries in a row; `waiting` alerts are queued for it.
    Down {
        sink: String,
        why: String,
        waiting: usize,
    },
    /// A sink that was down delivered again.
    Up {
        sink: String,
    },
}

/// Where delivery events go (the watcher's log, a test's list).
pub type Reporter = Arc<dyn Fn(DeliveryEvent) + Send + Sync>;

/// The clock, in Unix ms (signatures, statuses).
pub type Clock = fn() -> TimestampMs;

/// An alert waiting for its next try.
struct Pending {
    alert: Alert,
    tries: u32,
    next_at: Instant,
    deadline: Instant,
    backoff: Duration,
}

/// One sink's queue, shared by the dispatcher and the sink's worker.
#[derive(Default)]
struct Queue {
    pending: VecDeque<Pending>,
    /// The title of the alert being tried now.
    trying: Option<String>,
    /// No more alerts come: what is queued is tried once more, at once.
    closed: bool,
}

type Shared = Arc<(Mutex<Queue>, Condvar)>;

struct Worker {
    sink: Arc<Sink>,
    queue: Shared,
    status: Arc<Mutex<SinkStatus>>,
}

/// Every sink's worker.
pub struct Dispatcher {
    workers: Vec<Worker>,
    done: Receiver<()>,
    reporter: Reporter,
    options: DeliveryOptions,
}

impl Dispatcher {
    /// Starts one worker per sink.
    pub fn start(
        sinks: Vec<Sink>,
        options: DeliveryOptions,
        clock: Clock,
        reporter: Reporter,
    ) -> Self {
        let (done_tx, done) = mpsc::channel();
        let workers = sinks
            .into_iter()
            .map(|sink| {
                let sink = Arc::new(sink);
                let queue: Shared = Arc::default();
                let status = Arc::new(Mutex::new(SinkStatus::default()));
                let job = Job {
                    sink: Arc::clone(&sink),
                    status: Arc::clone(&status),
                    queue: Arc::clone(&queue),
                    options,
                    clock,
                    reporter: Arc::clone(&reporter),
                    failed_in_a_row: 0,
                };
                let done = done_tx.clone();
                let spawned = std::thread::Builder::new()
                    .name(format!("alert-{}", sink.name))
                    .spawn(move || {
                        job.run();
                        let _ = done.send(());
                    });
                if let Err(e) = spawned {
                    lock(&status).last_error =
                        Some(t!("alert_delivery.no_thread", error = e).into_owned());
                }
                Worker {
                    sink,
                    queue,
                    status,
                }
            })
            .collect();
        Self {
            workers,
            done,
            reporter,
            options,
        }
    }

    /// Queues `alert` for every sink that wants it; never waits.
    pub fn send(&self, alert: &Alert) {
        for worker in self.workers.iter().filter(|w| w.sink.wants(alert)) {
            self.enqueue(worker, alert);
        }
    }

    /// Queues `alert` for the sink called `name` whatever its filters (`alert test`). False
    /// when there is no such sink.
    pub fn send_to(&self, name: &str, alert: &Alert) -> bool {
        let Some(worker) = self.workers.iter().find(|w| w.sink.name == name) else {
            return false;
        };
        self.enqueue(worker, alert);
        true
    }

    fn enqueue(&self, worker: &Worker, alert: &Alert) {
        let (queue, wake) = &*worker.queue;
        let mut queue = lock(queue);
        let waiting = queue.pending.len() + usize::from(queue.trying.is_some());
        if waiting >= self.options.queue_len.max(1) {
            drop(queue);
            lock(&worker.status).dropped += 1;
            (self.reporter)(DeliveryEvent::Dropped {
                sink: worker.sink.name.clone(),
                alert: alert.title(),
            });
            return;
        }
        let now = Instant::now();
        queue.pending.push_back(Pending {
            alert: alert.clone(),
            tries: 0,
            next_at: now,
            deadline: now + self.options.deadline,
            backoff: self.options.first_backoff,
        });
        lock(&worker.status).waiting = waiting + 1;
        wake.notify_all();
    }

    /// Each sink's name and status.
    pub fn statuses(&self) -> Vec<(String, SinkStatus)> {
        self.workers
            .iter()
            .map(|w| (w.sink.name.clone(), lock(&w.status).clone()))
            .collect()
    }

    /// Closes the queues and waits at most `within` for what is queued to be delivered or
    /// given up on. Returns each sink's final status (with the alerts never delivered), and
    /// whether every worker finished.
    pub fn finish(self, within: Duration) -> (Vec<(String, SinkStatus)>, bool) {
        for worker in &self.workers {
            let (queue, wake) = &*worker.queue;
            lock(queue).closed = true;
            wake.notify_all();
        }
        let count = self.workers.len();
        let deadline = Instant::now() + within;
        let mut finished = 0;
        while finished < count {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.done.recv_timeout(left) {
                Ok(()) => finished += 1,
                Err(RecvTimeoutError::Timeout | RecvTimeoutError::Disconnected) => break,
            }
        }
        let out = self
            .workers
            .iter()
            .map(|w| {
                let queue = lock(&w.queue.0);
                let undelivered = queue
                    .trying
                    .iter()
                    .cloned()
                    .chain(queue.pending.iter().map(|p| p.alert.title()))
                    .collect();
                drop(queue);
                let mut status = lock(&w.status).clone();
                status.undelivered = undelivered;
                (w.sink.name.clone(), status)
            })
            .collect();
        (out, finished == count)
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // A worker that panicked mid-update leaves counters that are still worth reading.
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// One sink's worker.
struct Job {
    sink: Arc<Sink>,
    status: Arc<Mutex<SinkStatus>>,
    queue: Shared,
    options: DeliveryOptions,
    clock: Clock,
    reporter: Reporter,
    failed_in_a_row: u32,
}

impl Job {
    fn run(mut self) {
        let client = reqwest::blocking::Client::builder()
            .timeout(self.sink.timeout())
            .connect_timeout(self.sink.timeout())
            .redirect(reqwest::redirect::Policy::none())
            .build();
        let client = match client {
            Ok(client) => client,
            Err(e) => {
                lock(&self.status).last_error =
                    Some(t!("alert_delivery.no_client", error = e.without_url()).into_owned());
                return;
            }
        };
        let mut bucket = Bucket::new(self.sink.per_minute);
        while let Some(pending) = self.next_due() {
            std::thread::sleep(bucket.wait());
            self.deliver(&client, pending);
        }
    }

    /// The queued alert due first, once it is due (at once when the queue is closed); `None`
    /// when the queue is closed and empty.
    fn next_due(&self) -> Option<Pending> {
        let (queue, wake) = &*self.queue;
        let mut queue = lock(queue);
        queue.trying = None;
        loop {
            let first = queue
                .pending
                .iter()
                .enumerate()
                .min_by_key(|(_, p)| p.next_at)
                .map(|(i, p)| (i, p.next_at));
            let wait = match first {
                None if queue.closed => return None,
                None => None,
                Some((i, next_at)) => {
                    let now = Instant::now();
                    if queue.closed || next_at <= now {
                        let pending = queue.pending.remove(i)?;
                        queue.trying = Some(pending.alert.title());
                        return Some(pending);
                    }
                    Some(next_at - now)
                }
            };
            queue = match wait {
                Some(wait) => {
                    wake.wait_timeout(queue, wait)
                        .unwrap_or_else(std::sync::PoisonError::into_inner)
                        .0
                }
                None => wake
                    .wait(queue)
                    .unwrap_or_else(std::sync::PoisonError::into_inner),
            };
        }
    }

    fn deliver(&mut self, client: &reqwest::blocking::Client, mut pending: Pending) {
        let name = self.sink.name.clone();
        let alert = pending.alert.title();
        pending.tries += 1;
        let why = match self.attempt(client, &pending.alert) {
            Verdict::Delivered => {
                self.tried(true, None);
                (self.reporter)(DeliveryEvent::Delivered { sink: name, alert });
                return;
            }
            Verdict::Failed(why) => why.localized(),
            Verdict::Retry { after, why } => {
                let why = why.localized();
                let wait = after
                    .unwrap_or(pending.backoff)
                    .min(self.options.max_backoff);
                let next_at = Instant::now() + wait;
                if pending.tries < self.options.max_attempts && next_at < pending.deadline {
                    (self.reporter)(DeliveryEvent::Retrying {
                        sink: name,
                        alert,
                        why: why.clone(),
                        after: wait,
                    });
                    pending.next_at = next_at;
                    pending.backoff = (pending.backoff * 2).min(self.options.max_backoff);
                    let (queue, _) = &*self.queue;
                    let mut queue = lock(queue);
                    // Queued again, no longer being tried: counted and named once.
                    queue.trying = None;
                    queue.pending.push_back(pending);
                    drop(queue);
                    self.tried(false, Some(&why));
                    return;
                }
                self.give_up(name, alert, why.clone());
                self.tried(false, Some(&why));
                return;
            }
        };
        self.give_up(name, alert, why);
    }

    /// Counts an alert given up on and reports it.
    fn give_up(&self, name: String, alert: String, why: String) {
        let mut status = lock(&self.status);
        status.failed += 1;
        status.last_error = Some(why.clone());
        status.last_error_at_ms = Some((self.clock)());
        drop(status);
        (self.reporter)(DeliveryEvent::Failed {
            sink: name,
            alert,
            why,
        });
    }

    /// Counts a try towards the sink being up or down, and says when that changes.
    fn tried(&mut self, delivered: bool, why: Option<&str>) {
        // The alert just tried is settled: delivered, given up on, or queued again.
        let waiting = lock(&self.queue.0).pending.len();
        let mut status = lock(&self.status);
        status.waiting = waiting;
        if delivered {
            self.failed_in_a_row = 0;
            status.delivered += 1;
            if status.down_since_ms.take().is_some() {
                drop(status);
                (self.reporter)(DeliveryEvent::Up {
                    sink: self.sink.name.clone(),
                });
            }
            return;
        }
        self.failed_in_a_row = self.failed_in_a_row.saturating_add(1);
        if self.failed_in_a_row >= DOWN_AFTER && status.down_since_ms.is_none() {
            let why = why.unwrap_or_default().to_string();
            status.down_since_ms = Some((self.clock)());
            status.last_error = Some(why.clone());
            status.last_error_at_ms = status.down_since_ms;
            drop(status);
            (self.reporter)(DeliveryEvent::Down {
                sink: self.sink.name.clone(),
                why,
                waiting,
            });
        }
    }

    fn attempt(&self, client: &reqwest::blocking::Client, alert: &Alert) -> Verdict {
        let request = self.sink.request(alert, (self.clock)());
        let mut builder = client.post(request.url).body(request.body);
        for (name, value) in request.headers {
            builder = builder.header(name, value);
        }
        match builder.send() {
            Ok(response) => {
                let status = response.status().as_u16();
                let retry_after = response
                    .headers()
                    .get(reqwest::header::RETRY_AFTER)
                    .and_then(|v| v.to_str().ok())
                    .map(str::to_string);
                let body = response.text().unwrap_or_default();
                judge(self.sink.kind, status, retry_after.as_deref(), &body)
            }
            // The address may hold the sink's key: errors are shown without it.
            Err(e) => Verdict::Retry {
                after: None,
                why: transport_problem(e, self.sink.timeout()),
            },
        }
    }
}

/// Why a request got no HTTP answer, in the reader's language where it is one of the usual
/// two (no answer in time, no connection); else the HTTP library's words, without the address.
fn transport_problem(e: reqwest::Error, timeout: Duration) -> crate::words::Words {
    if e.is_timeout() {
        crate::words::Words::new("alert_answer.no_answer").put("s", timeout.as_secs().to_string())
    } else if e.is_connect() {
        crate::words::Words::new("alert_answer.no_connection")
    } else {
        crate::words::Words::verbatim(e.without_url().to_string())
    }
}

/// A token bucket: `per_minute` messages a minute, in bursts of at most a few.
struct Bucket {
    tokens: f64,
    capacity: f64,
    per_second: f64,
    at: Instant,
}

impl Bucket {
    fn new(per_minute: u32) -> Self {
        let per_minute = f64::from(per_minute.max(1));
        let capacity = per_minute.clamp(1.0, 5.0);
        Self {
            tokens: capacity,
            capacity,
            per_second: per_minute / 60.0,
            at: Instant::now(),
        }
    }

    /// How long to wait before the next message; takes its token.
    fn wait(&mut self) -> Duration {
        let now = Instant::now();
        let earned = now.duration_since(self.at).as_secs_f64() * self.per_second;
        self.tokens = (self.tokens + earned).min(self.capacity);
        self.at = now;
        self.tokens -= 1.0;
        if self.tokens >= 0.0 {
            Duration::ZERO
        } else {
            Duration::from_secs_f64(-self.tokens / self.per_second)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bucket_allows_a_short_burst_then_paces() {
        let mut bucket = Bucket::new(20);
        for _ in 0..5 {
            assert_eq!(bucket.wait(), Duration::ZERO);
        }
        let wait = bucket.wait();
        assert!(
            wait > Duration::from_secs(2) && wait <= Duration::from_secs(3),
            "{wait:?}"
        );
    }
}
