//! The recorded events of one host over a window: from its black-box segments, or from a
//! `--record` file (other hosts' lines are never kept). The window ends at the host's newest
//! recorded event and reaches `since_ms` back; memory stays bounded by the window.

use std::collections::VecDeque;
use std::path::{Path, PathBuf};

use rust_i18n::t;

use crate::recording::blackbox::segments;
use crate::recording::{Line, RecordingError, RecordingReader};

/// Where the events come from.
#[derive(Debug, Clone, PartialEq)]
pub enum Source {
    /// The black-box folder (`state_dir()/blackbox`, or its `demo` folder).
    BlackBox(PathBuf),
    /// A `--record` file.
    File(PathBuf),
}

impl Source {
    /// The source in the reader's language: `the black box`, `the recording FILE`.
    pub fn describe(&self) -> String {
        match self {
            Source::BlackBox(_) => t!("report_words.source_black_box").into_owned(),
            Source::File(path) => {
                let file = path.file_name().map_or_else(
                    || path.display().to_string(),
                    |n| n.to_string_lossy().into(),
                );
                t!("report_words.source_recording", file = file).into_owned()
            }
        }
    }
}

/// One host's lines in the window, oldest first.
#[derive(Debug, Default)]
pub struct Gathered {
    pub lines: Vec<Line>,
    pub from_ms: u64,
    pub to_ms: u64,
    /// Black-box segments that could not be read (named, with the line), passed over.
    pub warnings: Vec<String>,
    /// Lines whose event is stamped far outside the window (a clock that jumped, a tampered
    /// file): left out of the analysis and the bundle, and named in the report.
    pub outside: Vec<Line>,
}

/// How far outside the recorder's window an event's own stamp may fall and still be read:
/// the window's length, and at least a day (the demo's clock runs ahead at `--speed`, a
/// host's clock may be off).
pub const MIN_STAMP_SLACK_MS: u64 = 24 * 3_600_000;

#[derive(Debug, thiserror::Error)]
pub enum GatherError {
    #[error(transparent)]
    Recording(#[from] RecordingError),
    #[error("{}: {source}", .path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// `host`'s lines from `source` over the `since_ms` before its newest one.
pub fn gather(source: &Source, host: &str, since_ms: u64) -> Result<Gathered, GatherError> {
    let mut window = Window {
        since_ms,
        lines: VecDeque::new(),
        newest_ms: 0,
    };
    let mut warnings = Vec::new();
    match source {
        Source::File(path) => read_into(path, host, &mut window)?,
        Source::BlackBox(dir) => {
            let files = segments(dir, host).map_err(|source| GatherError::Io {
                path: dir.clone(),
                source,
            })?;
            for (path, _) in files {
                if let Err(e) = read_into(&path, host, &mut window) {
                    warnings.push(t!("report_words.passed_over", error = e).into_owned());
                }
            }
        }
    }
    let to_ms = window.newest_ms;
    let mut lines: Vec<Line> = window.lines.into();
    lines.retain(|l| l.t_ms >= to_ms.saturating_sub(since_ms));
    lines.sort_by_key(|l| l.t_ms);
    // The window as far back as something was recorded.
    let from_ms = lines.first().map_or(to_ms, |l| l.t_ms);
    let slack = since_ms.max(MIN_STAMP_SLACK_MS);
    let (lines, outside) = lines.into_iter().partition(|l| {
        l.event.at_ms().is_none_or(|at| {
            at >= from_ms.saturating_sub(slack) && at <= to_ms.saturating_add(slack)
        })
    });
    Ok(Gathered {
        lines,
        from_ms,
        to_ms,
        warnings,
        outside,
    })
}

struct Window {
    since_ms: u64,
    lines: VecDeque<Line>,
    newest_ms: u64,
}

impl Window {
    fn push(&mut self, line: Line) {
        self.newest_ms = self.newest_ms.max(line.t_ms);
        let from = self.newest_ms.saturating_sub(self.since_ms);
        while self.lines.front().is_some_and(|l| l.t_ms < from) {
            self.lines.pop_front();
        }
        self.lines.push_back(line);
    }
}

fn read_into(path: &Path, host: &str, window: &mut Window) -> Result<(), RecordingError> {
    let mut reader = RecordingReader::open(path)?;
    while let Some(line) = reader.next_line()? {
        if line.host == host {
            window.push(line);
        }
    }
    Ok(())
}
