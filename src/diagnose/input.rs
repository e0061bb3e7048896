//! Reading what `gpufleet diagnose` is given as a stream: a line at a time, decoded lossily
//! (a log with one bad byte is a normal log), with a cap on what is kept of one line and on how
//! much is read at all, so `diagnose < /dev/zero` ends in bounded memory.

use std::io::{BufRead, BufReader, Read};

use crate::diagnose::InputError;
use crate::diagnose::finding::Finding;
use crate::diagnose::kernel::NoResolver;
use crate::diagnose::text::TextDiagnoser;
use crate::diagnose::training::{self, TrainingReader};
use crate::diagnose::verdict::Verdict;
use crate::job::JobReport;

const MIB: u64 = 1024 * 1024;

/// Bytes kept of one line; the rest of it, up to its newline, is read and dropped. Evidence
/// shows 300 characters of a line, and no rule needs more than its first few hundred.
pub const MAX_LINE_BYTES: usize = 64 * 1024;

/// Bytes read at most; reading stops there and the report says so.
pub const MAX_INPUT_BYTES: u64 = 1024 * MIB;

/// How much of the input is read and kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReadLimits {
    pub line_bytes: usize,
    pub input_bytes: u64,
}

impl Default for ReadLimits {
    fn default() -> Self {
        Self {
            line_bytes: MAX_LINE_BYTES,
            input_bytes: MAX_INPUT_BYTES,
        }
    }
}

/// The findings and what was left unread or cut.
#[derive(Debug, Clone, PartialEq)]
pub struct InputReport {
    pub verdict: Verdict,
    pub findings: Vec<Finding>,
    /// Bytes read.
    pub read_bytes: u64,
    /// Lines longer than [`ReadLimits::line_bytes`], of which only the start was classified.
    pub cut_lines: u64,
    /// Whether reading stopped at [`ReadLimits::input_bytes`] with more input left.
    pub truncated: bool,
    /// Whether some byte was not UTF-8 (shown as U+FFFD).
    pub replaced_bytes: bool,
    /// What the text said of a training job, when it was a training log.
    pub training: Option<JobReport>,
}

impl InputReport {
    /// The verdict and findings, for [`crate::diagnose::render_text`] and
    /// [`crate::diagnose::render_json`].
    pub fn diagnosis(&self) -> crate::diagnose::Diagnosis {
        crate::diagnose::Diagnosis {
            verdict: self.verdict,
            findings: self.findings.clone(),
            training: self.training.clone(),
        }
    }

    /// Sentences for the report and stderr about what was not read in full; none for ordinary
    /// input.
    pub fn notes(&self, limits: &ReadLimits) -> Vec<String> {
        let mut notes = Vec::new();
        if self.truncated {
            let mib = limits.input_bytes / MIB;
            notes.push(rust_i18n::t!("diagnose_text.note_truncated", mib = mib).into_owned());
        }
        if self.cut_lines > 0 {
            let kib = limits.line_bytes / 1024;
            let lines = self.cut_lines;
            let note = rust_i18n::t!("diagnose_text.note_cut_lines", lines = lines, kib = kib);
            notes.push(note.into_owned());
        }
        notes
    }
}

/// Reads `input` to its end (or to the limit) and classifies it line by line, as
/// [`crate::diagnose::diagnose_text`] would the whole text.
pub fn diagnose_reader(input: impl Read, limits: &ReadLimits) -> Result<InputReport, InputError> {
    let mut reader = BufReader::with_capacity(64 * 1024, input.take(limits.input_bytes));
    let mut diagnoser = TextDiagnoser::default();
    let mut training = TrainingReader::default();
    let mut line: Vec<u8> = Vec::new();
    let mut report = InputReport {
        verdict: Verdict::Unrecognised,
        findings: Vec::new(),
        read_bytes: 0,
        cut_lines: 0,
        truncated: false,
        replaced_bytes: false,
        training: None,
    };
    let mut any_text = false;
    loop {
        line.clear();
        let read = (&mut reader)
            .take(limits.line_bytes as u64)
            .read_until(b'\n', &mut line)
            .map_err(|e| InputError::Read(e.to_string()))?;
        if read == 0 {
            break;
        }
        report.read_bytes += read as u64;
        let ended = line.last() == Some(&b'\n');
        if ended {
            line.pop();
            // As `str::lines`: a `\r` before the newline belongs to the line ending.
            if line.last() == Some(&b'\r') {
                line.pop();
            }
        } else if read == limits.line_bytes {
            let next = reader
                .fill_buf()
                .map_err(|e| InputError::Read(e.to_string()))?;
            // A line of exactly the limit, then its line ending, is whole.
            let ending = [&b"\n"[..], b"\r\n"]
                .into_iter()
                .find(|ending| next.starts_with(ending))
                .map(<[u8]>::len);
            if let Some(ending) = ending {
                reader.consume(ending);
                report.read_bytes += ending as u64;
                if ending == 1 && line.last() == Some(&b'\r') {
                    line.pop();
                }
            } else if !next.is_empty() {
                let skipped = reader
                    .skip_until(b'\n')
                    .map_err(|e| InputError::Read(e.to_string()))?;
                report.read_bytes += skipped as u64;
                report.cut_lines += 1;
            }
        }
        // `from_utf8` checks plain text faster than the lossy decoder, which only bad lines need.
        let text = match std::str::from_utf8(&line) {
            Ok(text) => std::borrow::Cow::Borrowed(text),
            Err(_) => {
                report.replaced_bytes = true;
                String::from_utf8_lossy(&line)
            }
        };
        any_text |= !text.trim().is_empty();
        diagnoser.line(&text);
        training.line(&text);
    }
    if report.read_bytes >= limits.input_bytes {
        // The limit was reached: is there more?
        let mut probe = [0u8; 1];
        report.truncated = reader
            .into_inner()
            .into_inner()
            .read(&mut probe)
            .is_ok_and(|n| n > 0);
    }
    if !any_text {
        return Err(InputError::Empty);
    }
    let diagnosis = training::merge(diagnoser.finish_with(&NoResolver), training.finish());
    report.verdict = diagnosis.verdict;
    report.findings = diagnosis.findings;
    report.training = diagnosis.training;
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    const LOST: &str = "Unable to determine the device handle for GPU 0000:00:06.0: GPU is lost.";

    fn small() -> ReadLimits {
        ReadLimits {
            line_bytes: 16,
            input_bytes: 1024,
        }
    }

    #[test]
    fn a_bad_byte_is_replaced_not_rejected() {
        let mut input = b"ok \xff line\n".to_vec();
        input.extend_from_slice(LOST.as_bytes());
        let report = diagnose_reader(input.as_slice(), &ReadLimits::default()).expect("read");
        assert!(report.replaced_bytes);
        assert_eq!(report.findings[0].label, "gpu_lost");
    }

    #[test]
    fn long_lines_are_cut_and_counted() {
        let input = format!("{}\nnext\n{}\n", "x".repeat(100), "y".repeat(16));
        let report = diagnose_reader(input.as_bytes(), &small()).expect("read");
        assert_eq!(report.cut_lines, 1);
        assert_eq!(report.read_bytes, input.len() as u64);
        assert!(!report.truncated);
        assert_eq!(report.notes(&small()).len(), 1);
    }

    #[test]
    fn reading_stops_at_the_input_limit() {
        let report = diagnose_reader(std::io::repeat(b'a'), &small()).expect("read");
        assert!(report.truncated);
        assert_eq!(report.read_bytes, 1024);
        assert!(report.notes(&small())[0].contains("truncated"));
        // Exactly the limit, nothing more: not truncated.
        let exact = "a".repeat(1024);
        let report = diagnose_reader(exact.as_bytes(), &small()).expect("read");
        assert!(!report.truncated);
    }

    #[test]
    fn blank_input_is_an_error() {
        assert_eq!(
            diagnose_reader(&b" \n\r\n"[..], &small()),
            Err(InputError::Empty)
        );
    }

    #[test]
    fn line_endings_are_those_of_str_lines() {
        let text = "NVRM: Xid (PCI:0000:3b:00): 79, pid=1, GPU has fallen off the bus.\r\nx\r";
        let streamed = diagnose_reader(text.as_bytes(), &ReadLimits::default())
            .expect("read")
            .findings;
        assert_eq!(streamed, crate::diagnose::diagnose_text(text));
    }
}
