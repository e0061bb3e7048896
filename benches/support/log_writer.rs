//! The fleet benchmark's training job (`--job-logs`): a process whose stdout is a log file that
//! grows as a real run's does, for every stand-in host's job probe to find (the stand-in
//! `nvidia-smi` lists its PID, `fake_smi.rs`) and follow (`tail -f --pid` of
//! `/proc/PID/fd/1`, each host over its own SSH connection).
//!
//! It is the benchmark's own binary once more, started under the name [`PROGRAM`] (a link in
//! the stand-in directory): it replays a real `Trainer` log (`hf_plateau.log`, compiled in)
//! piece by piece as the library wrote it, one `\r` or `\n`-ended piece every
//! [`PIECE_MS`] (tqdm redraws its bar about ten times a second; the 262 lines and 879 pieces
//! take about 90 s), and starts over at its end, for as long as the benchmark lives. The
//! first third (1/[`HEAD_PART`]) of the first pass is written at once: the run is already under
//! way when the links connect, as a renter's job is when gpufleet comes to its host, so the
//! log's tail read back at connect holds steps and losses (a followed log nobody looks at is
//! read only every 30 s after that). The run's closing `{'train_runtime': …}` summary is left out, so the log
//! always reads as a run in progress. One writer serves every host: its log is one file, read
//! by as many `tail`s as there are hosts.

use std::io::Write;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The name under which this binary writes the log.
pub const PROGRAM: &str = "train-replay";
/// The replayed log.
pub const FIXTURE: &str = "hf_plateau.log";
const LOG: &[u8] = include_bytes!("../../tests/fixtures/training-logs/hf_plateau.log");
/// Between two pieces of the log.
pub const PIECE_MS: u64 = 100;
/// The part of the log written at once when the writer starts (a run under way).
const HEAD_PART: usize = 3;
/// The longest a writer lives, should the benchmark die without stopping it.
const MAX_LIFE: Duration = Duration::from_secs(2 * 3_600);

/// Runs the writer when this binary was started as [`PROGRAM`], returning its exit status;
/// `None` when it was started as something else.
pub fn run_if_called_as_writer() -> Option<i32> {
    let argv0 = std::env::args().next()?;
    if Path::new(&argv0).file_name()?.to_str()? != PROGRAM {
        return None;
    }
    Some(replay())
}

/// The log's pieces, each ended by `\r` or `\n` as tqdm and `print` end them, without the
/// run's closing summary.
fn pieces() -> Vec<&'static [u8]> {
    LOG.split_inclusive(|b| *b == b'\r' || *b == b'\n')
        .filter(|p| !p.windows(15).any(|w| w == b"'train_runtime'"))
        .collect()
}

/// How fast the log grows: its replayed bytes over the time one pass takes.
pub fn bytes_per_s() -> f64 {
    let pieces = pieces();
    let bytes: usize = pieces.iter().map(|p| p.len()).sum();
    let paced = pieces.iter().filter(|p| !blank(p)).count();
    bytes as f64 * 1_000.0 / (paced as u64 * PIECE_MS).max(1) as f64
}

/// A piece of only white space (a line end, tqdm's clearing spaces): written without a pause.
fn blank(piece: &[u8]) -> bool {
    piece.iter().all(|b| b.is_ascii_whitespace())
}

fn replay() -> i32 {
    let parent = std::os::unix::process::parent_id();
    let born = Instant::now();
    let pieces = pieces();
    let mut out = std::io::stdout().lock();
    let mut head = pieces.len() / HEAD_PART;
    loop {
        for piece in &pieces {
            // Each piece is written and flushed on its own: a `\r` update reaches the file as
            // tqdm's does, not held back until a newline.
            if out.write_all(piece).and_then(|()| out.flush()).is_err() {
                return 1;
            }
            if head > 0 {
                head -= 1;
                continue;
            }
            if blank(piece) {
                continue;
            }
            std::thread::sleep(Duration::from_millis(PIECE_MS));
            // The benchmark went away without stopping the writer: stop too.
            if std::os::unix::process::parent_id() != parent || born.elapsed() > MAX_LIFE {
                return 0;
            }
        }
    }
}

/// A running writer: its stdout is the log file; stopped when dropped.
pub struct LogWriter {
    child: Child,
}

impl LogWriter {
    /// Starts the writer as `bin_dir/`[`PROGRAM`] (a link to this binary, made here), its
    /// stdout the new file `log`.
    pub fn start(bin_dir: &Path, log: &Path) -> std::io::Result<LogWriter> {
        let exe = std::env::current_exe()?;
        let link = bin_dir.join(PROGRAM);
        let _ = std::fs::remove_file(&link);
        std::os::unix::fs::symlink(&exe, &link)?;
        let file = std::fs::File::create(log)?;
        let child = Command::new(&link)
            .stdin(Stdio::null())
            .stdout(file)
            .stderr(Stdio::null())
            .spawn()?;
        Ok(LogWriter { child })
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }
}

impl Drop for LogWriter {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
