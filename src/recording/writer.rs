//! The recorder: a thread that writes every host event it is handed, as NDJSON, to a
//! `--record` file and to the black box. Sources hand events over through
//! [`Recorder::wrap`]ped sinks (the console's and the watcher's), so both drivers record the
//! same way. Handing over never blocks a source: when the disk falls behind and
//! [`QUEUE_EVENTS`] wait, events are dropped from the recording (counted, and said at the end).
//! The queue is a list channel counted by hand, not a bounded (array) channel: that one
//! allocates and touches all its slots at once, ~29 MB of resident memory for 65,536 events
//! that are almost never waiting.
//! The thread takes events in batches (a few wake-ups a second however busy the fleet); writes
//! are buffered and flushed at least once a second.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError, Sender};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::fleet::{HostEvent, HostId, HostSink};
use crate::telemetry::source::now_ms;

use super::blackbox::{BlackBox, BlackBoxOptions};
use super::wire::{Header, Line};

/// Events that may wait for the recorder before new ones are dropped from the recording.
pub const QUEUE_EVENTS: usize = 65_536;
/// Buffered lines reach the files at least this often.
const FLUSH_EVERY: Duration = Duration::from_secs(1);
/// After the first of a burst, how long the thread lets the rest gather before taking them.
const BATCH: Duration = Duration::from_millis(200);

/// What to record into.
#[derive(Debug, Clone, Default)]
pub struct RecordOptions {
    /// `--record FILE`.
    pub file: Option<PathBuf>,
    pub blackbox: Option<BlackBoxOptions>,
}

#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    #[error("--record {}: {source}", .path.display())]
    Open {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{}", rust_i18n::t!("record_refused.symlink", path = .path.display()))]
    Symlink { path: PathBuf },
    #[error("{}", rust_i18n::t!("record_refused.not_a_file", path = .path.display()))]
    NotAFile { path: PathBuf },
    /// An existing file that is not a recording of this format: left exactly as it was.
    #[error("{}", rust_i18n::t!("record_refused.not_a_recording", path = .path.display(), why = .why))]
    NotARecording { path: PathBuf, why: String },
    #[error("{}", rust_i18n::t!("recording_writer.no_thread", error = .0))]
    Thread(std::io::Error),
}

/// Opens the `--record` file for appending, never through a symbolic link: a new file is
/// created `0600`; an existing one is appended to only when it is a regular file whose first
/// line is a gpufleet recording header of a version this build reads, and is refused
/// otherwise, untouched (contents, mode and time as they were).
pub fn open_record_file(path: &Path) -> Result<File, RecordError> {
    use std::os::unix::fs::OpenOptionsExt;
    let io = |source| RecordError::Open {
        path: path.to_path_buf(),
        source,
    };
    let mut existing = std::fs::OpenOptions::new();
    existing
        .read(true)
        .append(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC);
    let file = match existing.open(path) {
        Ok(file) => file,
        Err(e) if e.raw_os_error() == Some(libc::ELOOP) => {
            return Err(RecordError::Symlink {
                path: path.to_path_buf(),
            });
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            // `create_new` (O_EXCL) creates no file behind a dangling link either.
            return std::fs::OpenOptions::new()
                .append(true)
                .create_new(true)
                .mode(0o600)
                .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
                .open(path)
                .map_err(|e| match e.kind() {
                    std::io::ErrorKind::AlreadyExists => RecordError::Symlink {
                        path: path.to_path_buf(),
                    },
                    _ => io(e),
                });
        }
        Err(e) => return Err(io(e)),
    };
    if !file.metadata().map_err(io)?.is_file() {
        return Err(RecordError::NotAFile {
            path: path.to_path_buf(),
        });
    }
    // Each session starts with its own header: an older version's recording reads on.
    if let Err(e) = super::read::header_of(file.try_clone().map_err(io)?, path) {
        return Err(RecordError::NotARecording {
            path: path.to_path_buf(),
            why: e.to_string(),
        });
    }
    crate::state_file::tighten(&file).map_err(io)?;
    Ok(file)
}

// Events are nearly every message, moved through the queue as the sources send them.
#[allow(clippy::large_enum_variant)]
enum Msg {
    Event {
        host: HostId,
        t_ms: u64,
        event: HostEvent,
    },
    Name(HostId, String),
    Stop,
}

/// A running recorder; [`Recorder::finish`] writes what is left and says what went wrong.
pub struct Recorder {
    tx: Sender<Msg>,
    /// Events handed over and not yet taken by the thread.
    queued: Arc<AtomicUsize>,
    dropped: Arc<AtomicU64>,
    join: Option<JoinHandle<Vec<String>>>,
}

impl Recorder {
    /// Opens the `--record` file (its header written at once) and starts the thread; `hosts`
    /// are the names of host ids 0, 1, ... (more come by [`Recorder::name_host`]).
    pub fn start(options: RecordOptions, hosts: Vec<String>) -> Result<Self, RecordError> {
        let started_ms = now_ms();
        let file = match &options.file {
            Some(path) => {
                let open = |source| RecordError::Open {
                    path: path.clone(),
                    source,
                };
                let file = open_record_file(path)?;
                let mut writer = BufWriter::with_capacity(64 << 10, file);
                let mut header = serde_json::to_vec(&Header::new(started_ms, hosts.clone()))
                    .map_err(|e| open(std::io::Error::other(e)))?;
                header.push(b'\n');
                writer
                    .write_all(&header)
                    .and_then(|()| writer.flush())
                    .map_err(open)?;
                Some((path.clone(), writer))
            }
            None => None,
        };
        let blackbox = options.blackbox.map(BlackBox::new);
        let (tx, rx) = mpsc::channel();
        let queued = Arc::new(AtomicUsize::new(0));
        let taken = Arc::clone(&queued);
        let join = std::thread::Builder::new()
            .name("recorder".to_string())
            .spawn(move || {
                let mut writing = Writing {
                    names: hosts,
                    file,
                    blackbox,
                    errors: Vec::new(),
                };
                writing.run(rx, &taken);
                writing.errors
            })
            .map_err(RecordError::Thread)?;
        Ok(Self {
            tx,
            queued,
            dropped: Arc::default(),
            join: Some(join),
        })
    }

    /// `sink`, with every event also handed to the recorder first (a burst event by event).
    pub fn wrap(&self, sink: HostSink) -> HostSink {
        let record = {
            let tx = self.tx.clone();
            let queued = Arc::clone(&self.queued);
            let dropped = Arc::clone(&self.dropped);
            Arc::new(move |host: HostId, event: &HostEvent| {
                if queued.fetch_add(1, Ordering::Relaxed) >= QUEUE_EVENTS {
                    queued.fetch_sub(1, Ordering::Relaxed);
                    dropped.fetch_add(1, Ordering::Relaxed);
                } else {
                    let msg = Msg::Event {
                        host,
                        t_ms: now_ms(),
                        event: event.clone(),
                    };
                    // Gone only when the thread ended: nothing more is recorded then.
                    let _ = tx.send(msg);
                }
            })
        };
        let one = {
            let record = Arc::clone(&record);
            let sink = sink.clone();
            move |host, event: HostEvent| {
                record(host, &event);
                sink.send(host, event)
            }
        };
        HostSink::new(one).with_bursts(move |host, events: Vec<HostEvent>| {
            for event in &events {
                record(host, event);
            }
            sink.send_all(host, events)
        })
    }

    /// Names host `id` (a host added while running), before its source starts.
    pub fn name_host(&self, id: HostId, name: &str) {
        let _ = self.tx.send(Msg::Name(id, name.to_string()));
    }

    /// Writes what waits, closes the files; the problems met, one line each.
    pub fn finish(mut self) -> Vec<String> {
        let _ = self.tx.send(Msg::Stop);
        let mut problems = self
            .join
            .take()
            .and_then(|join| join.join().ok())
            .unwrap_or_default();
        let dropped = self.dropped.load(Ordering::Relaxed);
        if dropped > 0 {
            problems.push(dropped_words(dropped).localized());
        }
        problems
    }
}

/// What is said at the end when `dropped` events were left out of the recording.
pub fn dropped_words(dropped: u64) -> crate::words::Words {
    crate::words::Words::counted("recording_writer.dropped", dropped)
}

impl Drop for Recorder {
    fn drop(&mut self) {
        let _ = self.tx.send(Msg::Stop);
    }
}

/// The recorder thread's state.
struct Writing {
    names: Vec<String>,
    file: Option<(PathBuf, BufWriter<File>)>,
    blackbox: Option<BlackBox>,
    errors: Vec<String>,
}

impl Writing {
    fn run(&mut self, rx: mpsc::Receiver<Msg>, queued: &AtomicUsize) {
        let mut flushed = Instant::now();
        let take = |writing: &mut Self, msg: Msg| {
            if let Msg::Event { .. } = msg {
                queued.fetch_sub(1, Ordering::Relaxed);
            }
            writing.take(msg)
        };
        loop {
            let mut stop = match rx.recv_timeout(FLUSH_EVERY.saturating_sub(flushed.elapsed())) {
                Ok(msg) => take(self, msg),
                Err(RecvTimeoutError::Disconnected) => true,
                Err(RecvTimeoutError::Timeout) => false,
            };
            if !stop {
                // What came meanwhile, in one go: a busy fleet wakes this thread a few times a
                // second, not once per event.
                std::thread::sleep(BATCH);
                for msg in rx.try_iter() {
                    if take(self, msg) {
                        stop = true;
                        break;
                    }
                }
            }
            if stop {
                break;
            }
            if flushed.elapsed() >= FLUSH_EVERY {
                self.flush();
                flushed = Instant::now();
            }
        }
        self.flush();
        if let Some(error) = self.blackbox.as_mut().and_then(|b| b.error.take()) {
            self.errors
                .push(rust_i18n::t!("recording_writer.black_box", error = error).into_owned());
        }
    }

    /// Handles one message; true on the last one.
    fn take(&mut self, msg: Msg) -> bool {
        match msg {
            Msg::Event { host, t_ms, event } => self.write(host, t_ms, &event),
            Msg::Name(id, name) => {
                if self.names.len() <= id {
                    self.names.resize(id + 1, String::new());
                }
                self.names[id] = name;
            }
            Msg::Stop => return true,
        }
        false
    }

    fn write(&mut self, host: HostId, t_ms: u64, event: &HostEvent) {
        let Some(name) = self.names.get(host).filter(|n| !n.is_empty()) else {
            return;
        };
        let to_box = self
            .blackbox
            .as_mut()
            .is_some_and(|b| b.wants(name, t_ms, event));
        if self.file.is_none() && !to_box {
            return;
        }
        let line = Line {
            t_ms,
            host: name.clone(),
            event: event.into(),
        };
        let mut bytes = match serde_json::to_vec(&line) {
            Ok(bytes) => bytes,
            Err(_) => return,
        };
        bytes.push(b'\n');
        if let Some((path, writer)) = &mut self.file
            && let Err(e) = writer.write_all(&bytes)
        {
            self.errors
                .push(format!("--record {}: {e}", path.display()));
            self.file = None;
        }
        if to_box && let Some(blackbox) = self.blackbox.as_mut() {
            blackbox.write(name, t_ms, &bytes);
        }
    }

    fn flush(&mut self) {
        if let Some((path, writer)) = &mut self.file
            && let Err(e) = writer.flush()
        {
            self.errors
                .push(format!("--record {}: {e}", path.display()));
            self.file = None;
        }
        if let Some(blackbox) = self.blackbox.as_mut() {
            blackbox.flush();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_burst_through_the_recorder_is_recorded_event_by_event_and_reaches_the_listener_whole() {
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join("run.jsonl");
        let options = RecordOptions {
            file: Some(path.clone()),
            blackbox: None,
        };
        let recorder = Recorder::start(options, vec!["h".into()]).expect("start");
        let (tx, rx) = mpsc::channel();
        let single = tx.clone();
        let listener = HostSink::new(move |host, event| single.send((host, vec![event])).is_ok())
            .with_bursts(move |host, events| tx.send((host, events)).is_ok());
        let sink = recorder.wrap(listener);
        let burst: Vec<HostEvent> = (1..=3)
            .map(|attempt| HostEvent::Connecting {
                attempt,
                at_ms: Some(u64::from(attempt)),
            })
            .collect();
        assert!(sink.send_all(0, burst.clone()));
        assert_eq!(rx.try_iter().collect::<Vec<_>>(), vec![(0, burst)]);
        assert!(recorder.finish().is_empty());
        let text = std::fs::read_to_string(&path).expect("recording");
        // The header, then one line per event.
        assert_eq!(text.lines().count(), 4, "{text}");
    }
}
