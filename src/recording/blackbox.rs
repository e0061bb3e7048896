//! The black box: a bounded rolling recording per host in the state directory
//! (`blackbox/<host>/<start>.ndjson`, the host escaped by [`host_dir_name`]; `blackbox/demo/...`
//! for the demo fleet), so an incident report can be written after the fact, across restarts.
//! Each segment is a recording of its own (header first). Every event is kept except samples
//! and process lists, which are thinned to one per GPU (one list) every
//! [`BlackBoxOptions::sample_every_ms`], and any whose
//! error counters or clock-event reasons (whose processes) changed. At ~750 bytes a sample,
//! an 8-GPU host fills about 60 MB a day, so the defaults keep a day of one within the cap.
//! Old segments go once they are older than `keep_ms`, and the oldest go
//! while a host's segments pass `max_bytes`. One process writes a host's box at a time (a lock
//! per host); another that watches the same host leaves it alone and takes over when the
//! first stops.

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use crate::fleet::HostEvent;
use crate::paths::host_dir_name;
use crate::state_file::{ProcessLock, create_private_dir};

use super::wire::Header;

/// Defaults: a day, 64 MiB per host, a sample per GPU every 10 s.
pub const DEFAULT_KEEP_MS: u64 = 24 * 3_600_000;
pub const DEFAULT_MAX_BYTES: u64 = 64 << 20;
pub const DEFAULT_SAMPLE_EVERY_MS: u64 = 10_000;
/// A segment is closed after an hour, or at a sixteenth of the host's cap.
const SEGMENT_MS: u64 = 3_600_000;
const SEGMENTS_PER_CAP: u64 = 16;
/// How often a host whose box another process holds (or whose segment could not be started)
/// is tried again.
const LOCK_RETRY_MS: u64 = 30_000;
const SEGMENT_EXT: &str = "ndjson";
const LOCK_FILE: &str = "lock";

#[derive(Debug, Clone, PartialEq)]
pub struct BlackBoxOptions {
    /// `state_dir()/blackbox` (or its `demo` folder).
    pub dir: PathBuf,
    pub keep_ms: u64,
    pub max_bytes: u64,
    pub sample_every_ms: u64,
    /// Who writes, for the lock file (`gpufleet watch`, `gpufleet console`).
    pub who: String,
}

impl BlackBoxOptions {
    /// The defaults, in `dir` (see [`default_dir`]).
    pub fn new(dir: PathBuf, who: &str) -> Self {
        Self {
            dir,
            keep_ms: DEFAULT_KEEP_MS,
            max_bytes: DEFAULT_MAX_BYTES,
            sample_every_ms: DEFAULT_SAMPLE_EVERY_MS,
            who: who.to_string(),
        }
    }
}

/// `state_dir()/blackbox`, or for the demo fleet the run to read under its `demo` folder
/// (see [`super::demo_runs`]).
pub fn default_dir(demo: bool) -> Option<PathBuf> {
    let root = crate::paths::state_dir()?.join("blackbox");
    Some(if demo {
        super::demo_runs::run_to_read(&root.join("demo"))
    } else {
        root
    })
}

/// The folder a recorder writes into: `state_dir()/blackbox`, or for the demo fleet a run of
/// this process's own under its `demo` folder, started at `now_ms`.
pub fn dir_to_write(demo: bool, now_ms: u64) -> Option<PathBuf> {
    let root = crate::paths::state_dir()?.join("blackbox");
    Some(if demo {
        super::demo_runs::start_run(&root.join("demo"), now_ms)
    } else {
        root
    })
}

/// The folder of `host`'s segments under `dir`: [`host_dir_name`].
pub fn host_dir(dir: &Path, host: &str) -> PathBuf {
    dir.join(host_dir_name(host))
}

/// The folder an older gpufleet wrote `host`'s box in (every other character as `_`, so
/// `a/b` and `a_b` shared it), when it differs from [`host_dir`]: still read, never written.
fn legacy_host_dir(dir: &Path, host: &str) -> Option<PathBuf> {
    crate::paths::legacy_host_dir_name(host).map(|legacy| dir.join(legacy))
}

/// `host`'s segments under `dir`, oldest first, with their sizes: those in its folder, and
/// those an older gpufleet left in its former folder (whose lines the reader keeps only when
/// they name `host` exactly: another host may have shared that folder).
pub fn segments(dir: &Path, host: &str) -> std::io::Result<Vec<(PathBuf, u64)>> {
    let mut out = segments_under(&host_dir(dir, host))?;
    if let Some(legacy) = legacy_host_dir(dir, host) {
        out.extend(segments_under(&legacy)?);
    }
    out.sort_by(|a, b| a.0.file_name().cmp(&b.0.file_name()).then(a.0.cmp(&b.0)));
    Ok(out)
}

/// The segments in one folder, with their sizes, unsorted.
fn segments_under(dir: &Path) -> std::io::Result<Vec<(PathBuf, u64)>> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e),
    };
    Ok(entries
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == SEGMENT_EXT))
        .filter_map(|e| Some((e.path(), e.metadata().ok()?.len())))
        .collect())
}

/// `0000001764640000000.ndjson`: start time, padded so names sort by time.
fn segment_name(started_ms: u64) -> String {
    format!("{started_ms:020}.{SEGMENT_EXT}")
}

fn segment_start(path: &Path) -> Option<u64> {
    path.file_stem()?.to_str()?.parse().ok()
}

/// The black boxes of the hosts one process watches.
pub struct BlackBox {
    options: BlackBoxOptions,
    hosts: HashMap<String, HostBox>,
    /// The first error met, reported once.
    pub error: Option<String>,
}

#[derive(Default)]
struct HostBox {
    /// `None` while another process holds this host's box.
    lock: Option<ProcessLock>,
    next_lock_try_ms: u64,
    segment: Option<Segment>,
    /// Per GPU index: when its last sample was kept and the fields whose change is kept at once.
    last_sample: HashMap<u32, (u64, SampleMarks)>,
    /// When the last process list was kept, and which processes it had (hashed).
    last_processes: Option<(u64, u64)>,
    /// After a segment could not be started (a full disk, no permission): when to try again.
    retry_at_ms: u64,
}

struct Segment {
    writer: BufWriter<File>,
    started_ms: u64,
    bytes: u64,
}

type SampleMarks = (Option<u64>, Option<bool>, Option<u64>);

impl BlackBox {
    pub fn new(options: BlackBoxOptions) -> Self {
        Self {
            options,
            hosts: HashMap::new(),
            error: None,
        }
    }

    pub fn options(&self) -> &BlackBoxOptions {
        &self.options
    }

    /// Whether `event` goes into `host`'s box (samples and process lists are thinned, job
    /// logs left out); updates the thinning.
    pub fn wants(&mut self, host: &str, t_ms: u64, event: &HostEvent) -> bool {
        let every = self.options.sample_every_ms;
        // A job's log stays on its host: the box keeps the GPUs' story, not the user's output.
        if matches!(event, HostEvent::JobLog { .. }) {
            return false;
        }
        if let HostEvent::Processes { processes, .. } = event {
            let mut who: Vec<(u32, &str, Option<u32>)> = processes
                .iter()
                .map(|p| (p.pid, p.gpu_uuid.as_str(), p.gpu_index))
                .collect();
            who.sort_unstable();
            let mut hasher = std::collections::hash_map::DefaultHasher::new();
            std::hash::Hash::hash(&who, &mut hasher);
            let who = std::hash::Hasher::finish(&hasher);
            let state = self.hosts.entry(host.to_string()).or_default();
            let keep = state
                .last_processes
                .is_none_or(|(kept_ms, kept)| kept != who || t_ms.saturating_sub(kept_ms) >= every);
            if keep {
                state.last_processes = Some((t_ms, who));
            }
            return keep;
        }
        let HostEvent::Sample { gpu, .. } = event else {
            return true;
        };
        let marks = (
            gpu.ecc_uncorrected_volatile,
            gpu.retired_pages_pending,
            gpu.clock_event_reasons.map(|r| r.0),
        );
        let state = self.hosts.entry(host.to_string()).or_default();
        let keep = match state.last_sample.get(&gpu.index) {
            Some((kept_ms, kept_marks)) => {
                t_ms.saturating_sub(*kept_ms) >= every || *kept_marks != marks
            }
            None => true,
        };
        if keep {
            state.last_sample.insert(gpu.index, (t_ms, marks));
        }
        keep
    }

    /// Appends one serialized line (with its newline) to `host`'s current segment, starting a
    /// new segment (and pruning old ones) when one is due.
    pub fn write(&mut self, host: &str, t_ms: u64, line: &[u8]) {
        let options = self.options.clone();
        let state = self.hosts.entry(host.to_string()).or_default();
        if state.lock.is_none() {
            if t_ms < state.next_lock_try_ms {
                return;
            }
            let dir = host_dir(&options.dir, host);
            match ProcessLock::try_take(&dir.join(LOCK_FILE), &options.who) {
                Ok(lock) => state.lock = Some(lock),
                Err(_) => {
                    state.next_lock_try_ms = t_ms + LOCK_RETRY_MS;
                    return;
                }
            }
        }
        let segment_cap = (options.max_bytes / SEGMENTS_PER_CAP).max(1);
        let due = state.segment.as_ref().is_none_or(|s| {
            t_ms.saturating_sub(s.started_ms) >= SEGMENT_MS
                || s.bytes + line.len() as u64 > segment_cap
        });
        if due {
            if let Some(mut old) = state.segment.take() {
                let _ = old.writer.flush();
            }
            if t_ms < state.retry_at_ms {
                return;
            }
            match start_segment(&options, host, t_ms, segment_cap) {
                Ok(segment) => state.segment = Some(segment),
                Err(e) => {
                    self.error.get_or_insert(e);
                    state.retry_at_ms = t_ms + LOCK_RETRY_MS;
                    return;
                }
            }
        }
        if let Some(segment) = state.segment.as_mut() {
            match segment.writer.write_all(line) {
                Ok(()) => segment.bytes += line.len() as u64,
                Err(e) => {
                    self.error.get_or_insert(
                        rust_i18n::t!("recording_writer.black_box_of", host = host, error = e)
                            .into_owned(),
                    );
                    state.segment = None;
                }
            }
        }
    }

    /// Writes what is buffered to the files.
    pub fn flush(&mut self) {
        for (host, state) in self.hosts.iter_mut() {
            if let Some(segment) = state.segment.as_mut()
                && let Err(e) = segment.writer.flush()
            {
                self.error.get_or_insert(
                    rust_i18n::t!("recording_writer.black_box_of", host = host, error = e)
                        .into_owned(),
                );
            }
        }
    }
}

/// Prunes `host`'s old segments so a new one fits under the cap, then opens the new one
/// (private) with its header.
fn start_segment(
    options: &BlackBoxOptions,
    host: &str,
    t_ms: u64,
    segment_cap: u64,
) -> Result<Segment, String> {
    let dir = host_dir(&options.dir, host);
    create_private_dir(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    prune(
        host,
        options,
        t_ms,
        options.max_bytes.saturating_sub(segment_cap),
    )
    .map_err(|e| format!("{}: {e}", dir.display()))?;
    let path = dir.join(segment_name(t_ms));
    let file = crate::state_file::open_private_append(&path)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    // Flushed every second, and a host writes a few lines a second: 8 KiB holds them (64 KiB
    // per host was 3.2 MB allocated at 50 hosts for nothing).
    let mut writer = BufWriter::with_capacity(8 << 10, file);
    let header = Header::new(t_ms, vec![host.to_string()]);
    let mut bytes = serde_json::to_vec(&header).map_err(|e| e.to_string())?;
    bytes.push(b'\n');
    writer
        .write_all(&bytes)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(Segment {
        writer,
        started_ms: t_ms,
        bytes: bytes.len() as u64,
    })
}

/// When `path` was last written, in ms since the epoch.
fn modified_ms(path: &Path) -> Option<u64> {
    let modified = std::fs::metadata(path).and_then(|m| m.modified()).ok()?;
    let since = modified.duration_since(std::time::UNIX_EPOCH).ok()?;
    u64::try_from(since.as_millis()).ok()
}

/// Deletes segments that ended more than `keep_ms` before `now_ms` (the next one started
/// before then), then the oldest while the rest pass `budget_bytes`.
fn prune(
    host: &str,
    options: &BlackBoxOptions,
    now_ms: u64,
    budget_bytes: u64,
) -> std::io::Result<()> {
    let cutoff = now_ms.saturating_sub(options.keep_ms);
    // The former folder's segments go once nothing was written to them for `keep_ms`; the
    // host that shares that folder may still be writing its newest one.
    if let Some(legacy) = legacy_host_dir(&options.dir, host) {
        for (path, _) in segments_under(&legacy)? {
            if modified_ms(&path).is_some_and(|at| at < cutoff) {
                std::fs::remove_file(&path)?;
            }
        }
    }
    let mut segs = segments_under(&host_dir(&options.dir, host))?;
    segs.sort();
    let mut i = 0;
    while i + 1 < segs.len() {
        let next_start = segment_start(&segs[i + 1].0).unwrap_or(u64::MAX);
        if next_start < cutoff {
            std::fs::remove_file(&segs[i].0)?;
            segs.remove(i);
        } else {
            i += 1;
        }
    }
    // The newest segment may still be written by this process: it is at its end here, so
    // the last one ended before `now_ms` too.
    if let Some((path, _)) = segs.last()
        && modified_ms(path).is_some_and(|at| at < cutoff)
    {
        std::fs::remove_file(path)?;
        segs.pop();
    }
    let mut total: u64 = segs.iter().map(|(_, len)| len).sum();
    for (path, len) in &segs {
        if total <= budget_bytes {
            break;
        }
        std::fs::remove_file(path)?;
        total -= len;
    }
    Ok(())
}
