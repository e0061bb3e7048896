//! Delivery that never holds up monitoring: one worker thread per sink behind a bounded queue
//! (a full queue drops the alert and counts it), a rate limit per sink, retries with backoff
//! for what may pass later (throttling, server errors, no answer), and a status per sink that
//! the console shows and the watcher logs.

use rust_i18n::t;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, SyncSender, TrySendError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::answer::{Verdict, judge};
use super::message::Alert;
use super::sink::Sink;
use crate::telemetry::TimestampMs;

#[derive(Debug, Clone, Copy)]
pub struct DeliveryOptions {
    /// Alerts waiting per sink; more are dropped (and counted) rather than held in memory.
    pub queue_len: usize,
    /// Tries per alert, the first included.
    pub max_attempts: u32,
    pub first_backoff: Duration,
    pub max_backoff: Duration,
}

impl Default for DeliveryOptions {
    fn default() -> Self {
        Self {
            queue_len: 64,
            max_attempts: 5,
            first_backoff: Duration::from_secs(1),
            max_backoff: Duration::from_secs(60),
        }
    }
}

/// How one sink is doing.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SinkStatus {
    pub delivered: u64,
    /// Alerts given up on (refused, or still failing after every try).
    pub failed: u64,
    /// Alerts dropped because the queue was full.
    pub dropped: u64,
    pub last_error: Option<String>,
    pub last_error_at_ms: Option<TimestampMs>,
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
}

/// Where delivery events go (the watcher's log, a test's list).
pub type Reporter = Arc<dyn Fn(DeliveryEvent) + Send + Sync>;

/// The clock, in Unix ms (signatures, statuses).
pub type Clock = fn() -> TimestampMs;

struct Worker {
    sink: Arc<Sink>,
    queue: SyncSender<Alert>,
    status: Arc<Mutex<SinkStatus>>,
}

/// Every sink's worker.
pub struct Dispatcher {
    workers: Vec<Worker>,
    done: Receiver<()>,
    reporter: Reporter,
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
                let (queue, inbox) = mpsc::sync_channel(options.queue_len.max(1));
                let status = Arc::new(Mutex::new(SinkStatus::default()));
                let job = Job {
                    sink: Arc::clone(&sink),
                    status: Arc::clone(&status),
                    options,
                    clock,
                    reporter: Arc::clone(&reporter),
                };
                let done = done_tx.clone();
                let spawned = std::thread::Builder::new()
                    .name(format!("alert-{}", sink.name))
                    .spawn(move || {
                        job.run(inbox);
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
        match worker.queue.try_send(alert.clone()) {
            Ok(()) => {}
            Err(TrySendError::Full(_)) | Err(TrySendError::Disconnected(_)) => {
                lock(&worker.status).dropped += 1;
                (self.reporter)(DeliveryEvent::Dropped {
                    sink: worker.sink.name.clone(),
                    alert: alert.title(),
                });
            }
        }
    }

    /// Each sink's name and status.
    pub fn statuses(&self) -> Vec<(String, SinkStatus)> {
        self.workers
            .iter()
            .map(|w| (w.sink.name.clone(), lock(&w.status).clone()))
            .collect()
    }

    /// Closes the queues and waits at most `within` for what is queued to be delivered or
    /// given up on. Returns each sink's final status, and whether every worker finished.
    pub fn finish(self, within: Duration) -> (Vec<(String, SinkStatus)>, bool) {
        let statuses: Vec<_> = self
            .workers
            .iter()
            .map(|w| (w.sink.name.clone(), Arc::clone(&w.status)))
            .collect();
        let count = self.workers.len();
        drop(self.workers);
        let deadline = Instant::now() + within;
        let mut finished = 0;
        while finished < count {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.done.recv_timeout(left) {
                Ok(()) => finished += 1,
                Err(RecvTimeoutError::Timeout | RecvTimeoutError::Disconnected) => break,
            }
        }
        let out = statuses
            .into_iter()
            .map(|(name, status)| (name, lock(&status).clone()))
            .collect();
        (out, finished == count)
    }
}

fn lock(status: &Mutex<SinkStatus>) -> std::sync::MutexGuard<'_, SinkStatus> {
    // A worker that panicked mid-update leaves counters that are still worth reading.
    status
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// One sink's worker.
struct Job {
    sink: Arc<Sink>,
    status: Arc<Mutex<SinkStatus>>,
    options: DeliveryOptions,
    clock: Clock,
    reporter: Reporter,
}

impl Job {
    fn run(self, inbox: Receiver<Alert>) {
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
        for alert in inbox {
            std::thread::sleep(bucket.wait());
            self.deliver(&client, &alert);
        }
    }

    fn deliver(&self, client: &reqwest::blocking::Client, alert: &Alert) {
        let name = &self.sink.name;
        let mut backoff = self.options.first_backoff;
        for attempt in 1..=self.options.max_attempts.max(1) {
            let verdict = self.attempt(client, alert);
            let why = match verdict {
                Verdict::Delivered => {
                    lock(&self.status).delivered += 1;
                    (self.reporter)(DeliveryEvent::Delivered {
                        sink: name.clone(),
                        alert: alert.title(),
                    });
                    return;
                }
                Verdict::Failed(why) => why.localized(),
                Verdict::Retry { after, why } if attempt < self.options.max_attempts => {
                    let wait = after.unwrap_or(backoff).min(self.options.max_backoff);
                    (self.reporter)(DeliveryEvent::Retrying {
                        sink: name.clone(),
                        alert: alert.title(),
                        why: why.localized(),
                        after: wait,
                    });
                    std::thread::sleep(wait);
                    backoff = (backoff * 2).min(self.options.max_backoff);
                    continue;
                }
                Verdict::Retry { why, .. } => why.localized(),
            };
            let mut status = lock(&self.status);
            status.failed += 1;
            status.last_error = Some(why.clone());
            status.last_error_at_ms = Some((self.clock)());
            drop(status);
            (self.reporter)(DeliveryEvent::Failed {
                sink: name.clone(),
                alert: alert.title(),
                why,
            });
            return;
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
                why: crate::words::Words::verbatim(e.without_url().to_string()),
            },
        }
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
