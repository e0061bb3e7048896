//! `gpufleet replay FILE [--speed N]`: a recording played back as a telemetry source, like the
//! simulator. The file is read through once before anything starts (every line checked, the
//! hosts collected), then played on its own thread: each event is sent when its recorded time
//! comes round (divided by the speed) and stamped with the time it is played, so the console
//! sees it as live. Nothing reaches a real host: the console runs read-only. A file recorded
//! into twice plays its second session straight after the first.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

use crate::fleet::{HostEvent, HostSink};
use crate::telemetry::source::{SourceHandle, StopFlag, now_ms};

use super::read::{RecordingError, RecordingReader};
use super::wire::Line;

/// A recording checked and ready to play.
#[derive(Debug, Clone)]
pub struct Replay {
    path: PathBuf,
    hosts: Vec<String>,
    /// `t_ms` of the first event (the header's start when there is none).
    first_ms: u64,
    pub events: usize,
}

impl Replay {
    /// Reads `path` through: a bad line anywhere is an error naming it, before anything plays.
    pub fn open(path: &Path) -> Result<Self, RecordingError> {
        let mut reader = RecordingReader::open(path)?;
        let mut hosts = reader.header.hosts.clone();
        let mut first_ms = None;
        let mut events = 0;
        while let Some(line) = reader.next_line()? {
            first_ms.get_or_insert(line.t_ms);
            if !hosts.contains(&line.host) {
                hosts.push(line.host);
            }
            events += 1;
        }
        Ok(Self {
            path: path.to_path_buf(),
            hosts,
            first_ms: first_ms.unwrap_or(reader.header.started_ms),
            events,
        })
    }

    /// The recorded hosts: the header's, then others in the order they first appear.
    pub fn host_names(&self) -> Vec<String> {
        self.hosts.clone()
    }
}

/// Plays `replay` into `sink` at `speed` (2 plays twice as fast) on its own thread; the thread
/// ends at the end of the file, when stopped, or when nobody listens.
pub fn spawn(replay: Replay, sink: HostSink, speed: f64) -> std::io::Result<SourceHandle> {
    SourceHandle::spawn("replay", move |stop| play(&replay, &sink, speed, &stop))
}

fn play(replay: &Replay, sink: &HostSink, speed: f64, stop: &StopFlag) {
    let Ok(mut reader) = RecordingReader::open(&replay.path) else {
        return;
    };
    let ids: HashMap<&str, usize> = replay
        .hosts
        .iter()
        .enumerate()
        .map(|(id, name)| (name.as_str(), id))
        .collect();
    let speed = if speed.is_finite() && speed > 0.0 {
        speed
    } else {
        1.0
    };
    let began = Instant::now();
    let began_ms = now_ms();
    // Between two sessions recorded into one file nothing was watched: that time is skipped.
    let (mut sessions, mut skipped_ms, mut last_t_ms) = (reader.sessions, 0, replay.first_ms);
    // Ends quietly on a line that no longer reads: the file changed after it was checked.
    while let Ok(Some(Line { t_ms, host, event })) = reader.next_line() {
        if reader.sessions != sessions {
            sessions = reader.sessions;
            skipped_ms += t_ms.saturating_sub(last_t_ms);
        }
        last_t_ms = t_ms;
        let base_ms = replay.first_ms + skipped_ms;
        let due_ms = scaled(t_ms.saturating_sub(base_ms), speed);
        let elapsed_ms = began.elapsed().as_millis() as u64;
        if due_ms > elapsed_ms && stop.sleep(std::time::Duration::from_millis(due_ms - elapsed_ms))
        {
            return;
        }
        if stop.is_set() {
            return;
        }
        let Some(&id) = ids.get(host.as_str()) else {
            continue;
        };
        let event = match event.at_ms() {
            Some(at_ms) => {
                let offset = at_ms as i128 - base_ms as i128;
                let moved = began_ms as i128 + (offset as f64 / speed) as i128;
                event.restamped(u64::try_from(moved.max(0)).unwrap_or(0))
            }
            None => event,
        };
        if !sink.send(id, HostEvent::from(event)) {
            return;
        }
    }
}

fn scaled(ms: u64, speed: f64) -> u64 {
    (ms as f64 / speed) as u64
}
