//! Which vendor tool reads a host's accelerators: the tools in the probe's order, the fixed
//! probe script and its answer, and what one session keeps of the tool's output. Data only;
//! `accel_poll.rs` runs them on the link.

use crate::remote::quote::{CommandError, RemoteCommand};
use crate::telemetry::LostReason;
use crate::telemetry::accel::amd_smi::POLL_SCRIPT as AMD_SMI_SCRIPT;
use crate::telemetry::accel::mthreads_gmi::QUERY_JSON_ARGS;
use crate::telemetry::accel::rocm_smi::ROCM_SMI_ARGS;
use crate::telemetry::accel::sample::newest_per_device;
use crate::telemetry::accel::{
    AccelError, AccelProcess, AccelReading, amd_smi, cnmon, mthreads_gmi, npu_smi, rocm_smi,
    xpu_smi,
};

/// The probe: the first of the configured nvidia-smi and the vendor tools that the host's
/// `PATH` has, by its position in that list. Fixed text; the nvidia-smi command is `$1`.
pub(super) const PROBE_SCRIPT: &str = "i=0; for t in \"$1\" npu-smi amd-smi rocm-smi xpu-smi mthreads-gmi cnmon; do \
if command -v \"$t\" >/dev/null 2>&1; then echo \"gpufleet-probe $i\"; exit 0; fi; \
i=$((i+1)); done; echo gpufleet-probe none";
/// What the probe prints before the position.
pub(super) const PROBE_MARK: &str = "gpufleet-probe ";
/// Lines of one poll kept for the parser (a 16-card `rocm-smi --json` is ~1,500).
pub(super) const MAX_POLL_LINES: usize = 8_192;

/// The vendor tools gpufleet reads, in the probe's order after nvidia-smi (amd-smi before
/// rocm-smi: where both are installed, amd-smi is AMD's current tool).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Tool {
    Npu,
    Amd,
    Rocm,
    Xpu,
    Mthreads,
    Cnmon,
}

/// `mthreads-gmi`: its JSON report, and the table where the tool refuses the report (fixed
/// text; the report's arguments are its only arguments).
const MTHREADS_SCRIPT: &str = "mthreads-gmi \"$@\" 2>/dev/null || mthreads-gmi";

impl Tool {
    /// The tool at `position` in the probe's list (0 is nvidia-smi).
    fn at(position: usize) -> Option<Tool> {
        [
            Tool::Npu,
            Tool::Amd,
            Tool::Rocm,
            Tool::Xpu,
            Tool::Mthreads,
            Tool::Cnmon,
        ]
        .get(position.checked_sub(1)?)
        .copied()
    }

    pub(crate) fn name(self) -> &'static str {
        match self {
            Tool::Npu => "npu-smi",
            Tool::Rocm => "rocm-smi",
            Tool::Amd => "amd-smi",
            Tool::Xpu => "xpu-smi",
            Tool::Mthreads => "mthreads-gmi",
            Tool::Cnmon => "cnmon",
        }
    }

    /// Whether the command loops by itself (read line by line) rather than answering once:
    /// only while the link follows the host (`follow`), not for a one-shot reading.
    pub(crate) fn streams(self, follow: bool) -> bool {
        self == Tool::Xpu && follow
    }

    /// The command, built from typed values only; `processes`: the tool's own process report is
    /// due too (only `amd-smi` has one apart from its reading).
    pub(crate) fn command(
        self,
        interval_ms: u32,
        follow: bool,
        processes: bool,
    ) -> Option<RemoteCommand> {
        Some(match self {
            Tool::Npu => RemoteCommand::new("npu-smi").arg("info"),
            Tool::Rocm => RemoteCommand::new("rocm-smi").args(ROCM_SMI_ARGS),
            Tool::Amd => amd_command(false, processes),
            Tool::Xpu => {
                let seconds = (interval_ms / 1_000).max(1).to_string();
                let mut command = RemoteCommand::new("xpu-smi")
                    .args(["dump", "-d", "-1", "-m", "0,1,2,3,4,5"])
                    .args(["-i", seconds.as_str()]);
                if !self.streams(follow) {
                    command = command.args(["-n", "1"]);
                }
                command
            }
            Tool::Mthreads => RemoteCommand::new("sh")
                .args(["-c", MTHREADS_SCRIPT, "sh"])
                .args(QUERY_JSON_ARGS),
            Tool::Cnmon => RemoteCommand::new("cnmon"),
        })
    }

    /// The command of a connection's first reading: for `amd-smi`, [`Tool::command`] with
    /// `amd-smi static` before it, for `xpu-smi` the dump after `xpu-smi discovery` (and, for a
    /// one-shot reading, `xpu-smi health -l`), whose facts
    /// ([`Tool::facts`]) hold for the connection; for the other tools, the same command.
    pub(crate) fn first_command(
        self,
        interval_ms: u32,
        follow: bool,
        processes: bool,
    ) -> Option<RemoteCommand> {
        match self {
            Tool::Amd => Some(amd_command(true, processes)),
            Tool::Xpu => {
                let dump = self.command(interval_ms, follow, processes)?;
                let mut argv = dump.argv().into_iter();
                argv.next();
                // The health report only where the reading is one-shot: a followed host keeps
                // its first reading's facts for the whole connection.
                let health = if self.streams(follow) { "-" } else { "health" };
                Some(
                    RemoteCommand::new("sh")
                        .args(["-c", xpu_smi::FIRST_SCRIPT, "sh", health])
                        .args(argv),
                )
            }
            _ => self.command(interval_ms, follow, processes),
        }
    }

    /// What the first reading's output states once of each device (model, bus id, memory size,
    /// driver), where the tool prints such a report (`amd-smi static`); `None` otherwise.
    pub(crate) fn facts(self, text: &str) -> Option<Vec<AccelReading>> {
        match self {
            Tool::Amd => amd_smi::static_facts(text),
            Tool::Xpu => xpu_smi::discovery_facts(text),
            _ => None,
        }
    }

    /// Where a streaming first reading's preamble (`xpu-smi discovery`) starts or ends: the
    /// report name after the tool's mark on `line` (`Some("dump")` ends it); `None` for any
    /// other line.
    pub(crate) fn section_name(self, line: &str) -> Option<&str> {
        match self {
            Tool::Xpu => line.trim().strip_prefix(xpu_smi::SECTION_MARK),
            _ => None,
        }
    }

    /// The processes the polled output lists, where the tool prints a process table in it
    /// (`npu-smi info`, the `mthreads-gmi` table, `amd-smi process --csv` or its report after the
    /// monitor);
    /// `None` where it does not, so the host's processes stay unknown rather than none.
    pub(crate) fn processes(self, text: &str) -> Option<Vec<AccelProcess>> {
        match self {
            Tool::Npu => npu_smi::listed_processes(text),
            Tool::Mthreads => mthreads_gmi::listed_processes(text),
            Tool::Amd => amd_smi::listed_processes(text),
            Tool::Rocm | Tool::Xpu | Tool::Cnmon => None,
        }
    }

    /// One answer's readings, the newest per device.
    pub(crate) fn parse(self, text: &str) -> Result<Vec<AccelReading>, AccelError> {
        match self {
            Tool::Npu => npu_smi::parse_info(text),
            Tool::Rocm => rocm_smi::parse_json(text),
            Tool::Amd => amd_smi::parse_reading(text),
            Tool::Xpu => xpu_smi::parse_dump(text).map(newest_per_device),
            Tool::Mthreads => mthreads_gmi::parse(text),
            Tool::Cnmon => cnmon::parse_table(text),
        }
    }
}

impl Tool {
    /// The reason a failure text of a published form gives (amd-smi: driver not initialized,
    /// no GPU devices); `None` for any other output.
    pub(crate) fn failure_reason(self, text: &str) -> Option<LostReason> {
        match self {
            Tool::Amd => amd_smi::failure_reason(text),
            _ => None,
        }
    }
}

/// What the probe found; kept by the link across reconnects, so a host is probed once.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) enum Probed {
    #[default]
    NotYet,
    /// nvidia-smi (or no tool at all, which nvidia-smi's own failure then reports).
    Nvidia,
    Tool(Tool),
}

/// The probe command: fixed script, the configured nvidia-smi as its only argument.
pub(crate) fn probe_command(nvidia_smi: &str) -> Result<String, CommandError> {
    RemoteCommand::new("sh")
        .args(["-c", PROBE_SCRIPT, "sh", nvidia_smi])
        .to_shell()
}

/// The probe as words (the fixed script, the configured nvidia-smi as its only argument), for
/// the acceptance check's runners.
pub(crate) fn probe_argv(nvidia_smi: &str) -> Vec<String> {
    ["sh", "-c", PROBE_SCRIPT, "sh", nvidia_smi]
        .map(str::to_string)
        .to_vec()
}

/// The probe's answer: `None` until a line of its own form names a position.
pub(crate) fn probe_answer(lines: &[String]) -> Option<Probed> {
    lines.iter().find_map(|line| {
        let word = line.trim().strip_prefix(PROBE_MARK)?;
        if word == "none" {
            return Some(Probed::Nvidia);
        }
        let position: usize = word.parse().ok()?;
        if position == 0 {
            return Some(Probed::Nvidia);
        }
        Tool::at(position).map(Probed::Tool)
    })
}

/// The amd-smi poll script with its two switches: `amd-smi static` first, the process report last.
fn amd_command(with_static: bool, processes: bool) -> RemoteCommand {
    let first = if with_static { "static" } else { "-" };
    let mut command = RemoteCommand::new("sh").args(["-c", AMD_SMI_SCRIPT, "sh", first]);
    if processes {
        command = command.arg("process");
    }
    command
}

/// One session's accelerator work: the probe running, or the tool being read.
#[derive(Default)]
pub(crate) struct AccelSession {
    pub(super) probing: bool,
    pub(super) tool: Option<Tool>,
    /// What the connection's first reading stated once of each device (`Tool::facts`), applied
    /// to every later reading; `None` until a first reading was read.
    pub(super) facts: Option<Vec<AccelReading>>,
    /// A streaming first reading is inside its preamble (the `xpu-smi discovery` report), whose
    /// lines are kept until the stream proper starts.
    pub(super) preamble: bool,
    /// What the running probe or poll printed so far.
    pub(super) lines: Vec<String>,
    /// A streaming tool's header line, which each data line is read under.
    pub(super) header: Option<String>,
    /// When the tool's own process report is next due (`None`: with the next reading).
    pub(super) processes_due: Option<std::time::Instant>,
}

impl AccelSession {
    /// Whether this session is the accelerator path's (the probe or a vendor tool).
    pub(crate) fn active(&self) -> bool {
        self.probing || self.tool.is_some()
    }

    pub(super) fn keep(&mut self, line: String) {
        if self.lines.len() < MAX_POLL_LINES {
            self.lines.push(line);
        }
    }
}
