//! The local source on an AMD machine: `rocm-smi` on this machine's `PATH`, run at the
//! interval with the fixed flags of [`ROCM_SMI_ARGS`] (no shell) and read by the same parser as
//! the SSH link. Output the parser does not know is reported as lost with "unsupported output
//! from rocm-smi" and its first lines, never as numbers.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::fleet::HostEvent;
use crate::telemetry::accel::rocm_smi::{ROCM_SMI_ARGS, parse_json};
use crate::telemetry::accel::sample::to_samples;
use crate::telemetry::accel::{AccelError, AccelReading};
use crate::telemetry::{HostInfo, LostReason, TimestampMs};

/// The program looked for on `PATH`.
pub const ROCM_SMI: &str = "rocm-smi";
/// One reading may take this long before it is stopped and reported.
const READ_TIMEOUT: Duration = Duration::from_secs(30);
/// Output kept of one reading (a 16-card answer is ~100 KiB).
const MAX_OUTPUT_BYTES: u64 = 8 * 1024 * 1024;
const POLL: Duration = Duration::from_millis(20);

/// `rocm-smi` found on this machine.
#[derive(Debug, Clone)]
pub struct LocalRocm {
    program: PathBuf,
    driver_version: Option<String>,
    /// The reading `info` made, handed to the next `read_events` rather than read twice.
    pending: Option<Result<Vec<AccelReading>, String>>,
}

impl LocalRocm {
    /// `rocm-smi` on `path` (the value of `PATH`), if one of its folders has it executable.
    pub fn find(path: Option<&std::ffi::OsStr>) -> Option<Self> {
        let program = std::env::split_paths(path?)
            .map(|dir| dir.join(ROCM_SMI))
            .find(|p| is_executable(p))?;
        Some(Self {
            program,
            driver_version: None,
            pending: None,
        })
    }

    /// What the header shows: the driver version of the first reading, once there is one.
    pub fn info(&mut self) -> HostInfo {
        if self.driver_version.is_none() {
            let reading = self.read();
            if let Ok(readings) = &reading {
                self.driver_version = readings.iter().find_map(|r| r.driver_version.clone());
            }
            self.pending = Some(reading);
        }
        HostInfo {
            driver_version: self.driver_version.clone(),
            cuda_version: None,
            source: format!("local {ROCM_SMI}"),
        }
    }

    /// One reading as the fleet's events: a sample per card, or the host lost with why.
    pub fn read_events(&mut self, at_ms: TimestampMs) -> Vec<HostEvent> {
        let reading = self.pending.take().unwrap_or_else(|| self.read());
        match reading {
            Ok(readings) => to_samples(&readings)
                .into_iter()
                .map(|gpu| HostEvent::Sample { at_ms, gpu })
                .collect(),
            Err(e) => vec![HostEvent::Lost {
                at_ms,
                reason: LostReason::Other,
                raw: e,
            }],
        }
    }

    /// One reading; the error is the text the host is reported lost with.
    fn read(&self) -> Result<Vec<AccelReading>, String> {
        let (stdout, stderr, status) = run(&self.program)?;
        match parse_json(&stdout) {
            Ok(readings) => Ok(readings),
            Err(e) if status == Some(0) => Err(e.to_string()),
            Err(_) => {
                let reason = status.map_or_else(
                    || "ended without an exit status".to_string(),
                    |code| format!("exit status {code}"),
                );
                let said = format!("{stderr}\n{stdout}");
                Err(AccelError::unsupported(ROCM_SMI, None, reason, &said).to_string())
            }
        }
    }
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    path.metadata()
        .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// Runs `program` with the fixed flags; its standard output, standard error and exit status,
/// or why it could not run.
fn run(program: &Path) -> Result<(String, String, Option<i32>), String> {
    let mut child = Command::new(program)
        .args(ROCM_SMI_ARGS)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| {
            rust_i18n::t!("exec_error.spawn", program = program.display(), error = e).into_owned()
        })?;
    let readers: Vec<_> = [
        child
            .stdout
            .take()
            .map(|o| Box::new(o) as Box<dyn Read + Send>),
        child
            .stderr
            .take()
            .map(|e| Box::new(e) as Box<dyn Read + Send>),
    ]
    .into_iter()
    .flatten()
    .map(|source| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            let _ = source.take(MAX_OUTPUT_BYTES).read_to_end(&mut bytes);
            bytes
        })
    })
    .collect();
    let deadline = Instant::now() + READ_TIMEOUT;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status.code(),
            Ok(None) if Instant::now() < deadline => std::thread::sleep(POLL),
            Ok(None) | Err(_) => {
                let _ = child.kill();
                let _ = child.wait();
                let seconds = READ_TIMEOUT.as_secs();
                return Err(rust_i18n::t!(
                    "telemetry_rocm.no_answer",
                    tool = ROCM_SMI,
                    seconds = seconds
                )
                .into_owned());
            }
        }
    };
    let mut texts = readers
        .into_iter()
        .map(|reader| String::from_utf8_lossy(&reader.join().unwrap_or_default()).into_owned());
    let stdout = texts.next().unwrap_or_default();
    let stderr = texts.next().unwrap_or_default();
    Ok((stdout, stderr, status))
}
