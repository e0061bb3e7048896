//! Reading a recording back: the header checked first (format and version), then one
//! [`Line`] at a time, with a clear error naming the file and line for anything else. A last
//! line cut short (the writer stopped mid-line: a crash, a full disk) is passed over.

use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

use rust_i18n::t;

use super::wire::{FORMAT_NAME, FORMAT_VERSION, Header, Line};

/// The longest line read; a longer one is damage, not a host event.
pub const MAX_LINE_BYTES: u64 = 1 << 20;

/// Why a recording cannot be read, in the interface's language (`gpufleet replay` and
/// `gpufleet report` print it): the file and line as written, then the catalogue's sentence
/// (`recording_error.*`).
#[derive(Debug, thiserror::Error)]
pub enum RecordingError {
    #[error("{}: {source}", .path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{}: {}", .path.display(), t!("recording_error.empty"))]
    Empty { path: PathBuf },
    /// `message`: a `recording_error.*` text, already in the reader's language.
    #[error("{}:{line}: {message}", .path.display())]
    Bad {
        path: PathBuf,
        line: usize,
        message: String,
    },
    #[error("{}:{line}: {}", .path.display(), newer_words(.found, .writer))]
    Newer {
        path: PathBuf,
        line: usize,
        found: u64,
        writer: String,
    },
}

/// A newer format's refusal: which version, which this build reads, who wrote it.
fn newer_words(found: &u64, writer: &str) -> String {
    t!(
        "recording_error.newer",
        found = found,
        version = FORMAT_VERSION,
        writer = writer
    )
    .into_owned()
}

/// An open recording, its header read.
pub struct RecordingReader {
    path: PathBuf,
    reader: BufReader<File>,
    /// Number of the line read last (1 is the header).
    line_no: usize,
    pub header: Header,
    /// Sessions read so far: a file recorded into twice has a second header where the second
    /// session begins.
    pub sessions: usize,
}

impl RecordingReader {
    pub fn open(path: &Path) -> Result<Self, RecordingError> {
        let file = File::open(path).map_err(|source| RecordingError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        let mut reader = BufReader::new(file);
        let first = match read_line(&mut reader, path, 1)? {
            Some((text, _)) => text,
            None => {
                return Err(RecordingError::Empty {
                    path: path.to_path_buf(),
                });
            }
        };
        let header = check_header(&first, path, 1)?;
        Ok(Self {
            path: path.to_path_buf(),
            reader,
            line_no: 1,
            header,
            sessions: 1,
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The next event line; `None` at the end.
    pub fn next_line(&mut self) -> Result<Option<Line>, RecordingError> {
        loop {
            self.line_no += 1;
            let Some((text, complete)) = read_line(&mut self.reader, &self.path, self.line_no)?
            else {
                return Ok(None);
            };
            if text.trim().is_empty() {
                continue;
            }
            return match serde_json::from_str::<Line>(&text) {
                Ok(line) => Ok(Some(line)),
                // Cut short by a writer that stopped mid-line: the end of the recording.
                Err(_) if !complete => Ok(None),
                // The next session appended to the same file.
                Err(_) if is_header(&text) => {
                    let header = check_header(&text, &self.path, self.line_no)?;
                    for host in header.hosts {
                        if !self.header.hosts.contains(&host) {
                            self.header.hosts.push(host);
                        }
                    }
                    self.sessions += 1;
                    continue;
                }
                Err(e) => Err(RecordingError::Bad {
                    path: self.path.clone(),
                    line: self.line_no,
                    message: t!("recording_error.not_an_event", why = e).into_owned(),
                }),
            };
        }
    }
}

impl Iterator for RecordingReader {
    type Item = Result<Line, RecordingError>;

    fn next(&mut self) -> Option<Self::Item> {
        self.next_line().transpose()
    }
}

/// The header of the recording open as `file` (`path` names it in errors): what `--record`
/// checks before it appends to an existing file. The file's offset moves past the first line.
pub fn header_of(file: File, path: &Path) -> Result<Header, RecordingError> {
    let mut reader = BufReader::new(file);
    match read_line(&mut reader, path, 1)? {
        Some((text, true)) => check_header(&text, path, 1),
        Some((text, false)) if !text.is_empty() => check_header(&text, path, 1),
        _ => Err(RecordingError::Empty {
            path: path.to_path_buf(),
        }),
    }
}

fn is_header(text: &str) -> bool {
    serde_json::from_str::<serde_json::Value>(text).is_ok_and(|v| v.get("format").is_some())
}

/// A header line: a gpufleet recording's, of a version this build reads.
pub(crate) fn check_header(text: &str, path: &Path, line: usize) -> Result<Header, RecordingError> {
    let bad = |message: String| RecordingError::Bad {
        path: path.to_path_buf(),
        line,
        message,
    };
    let value: serde_json::Value = serde_json::from_str(text)
        .map_err(|_| bad(t!("recording_error.no_header").into_owned()))?;
    if value.get("format").and_then(|f| f.as_str()) != Some(FORMAT_NAME) {
        return Err(bad(
            t!("recording_error.wrong_format", name = FORMAT_NAME).into_owned()
        ));
    }
    match value.get("version").and_then(|v| v.as_u64()) {
        Some(found) if found > u64::from(FORMAT_VERSION) => {
            return Err(RecordingError::Newer {
                path: path.to_path_buf(),
                line,
                found,
                writer: value
                    .get("gpufleet")
                    .and_then(|v| v.as_str())
                    .map(crate::remote::sanitize)
                    .unwrap_or_else(|| "?".to_string()),
            });
        }
        Some(0) | None => return Err(bad(t!("recording_error.no_version").into_owned())),
        Some(_) => {}
    }
    serde_json::from_value(value)
        .map_err(|e| bad(t!("recording_error.bad_header", why = e).into_owned()))
}

/// One line without its newline, and whether it ended with one; `None` at the end of input.
fn read_line(
    reader: &mut BufReader<File>,
    path: &Path,
    line_no: usize,
) -> Result<Option<(String, bool)>, RecordingError> {
    let mut bytes = Vec::new();
    reader
        .by_ref()
        .take(MAX_LINE_BYTES + 1)
        .read_until(b'\n', &mut bytes)
        .map_err(|source| RecordingError::Io {
            path: path.to_path_buf(),
            source,
        })?;
    if bytes.is_empty() {
        return Ok(None);
    }
    let complete = bytes.last() == Some(&b'\n');
    if complete {
        bytes.pop();
    } else if bytes.len() as u64 > MAX_LINE_BYTES {
        return Err(RecordingError::Bad {
            path: path.to_path_buf(),
            line: line_no,
            message: t!("recording_error.line_too_long", bytes = MAX_LINE_BYTES).into_owned(),
        });
    }
    match String::from_utf8(bytes) {
        Ok(text) => Ok(Some((text, complete))),
        // A cut-short last line may end inside a character.
        Err(_) if !complete => Ok(Some((String::new(), false))),
        Err(_) => Err(RecordingError::Bad {
            path: path.to_path_buf(),
            line: line_no,
            message: t!("recording_error.not_utf8").into_owned(),
        }),
    }
}
