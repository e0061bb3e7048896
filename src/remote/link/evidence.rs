//! Evidence taken when a session sees the host's first fault (the GPUs lost, an Xid or
//! bring-up failure in the kernel log): one `nvidia-smi -q` run, whose text goes out whole as
//! [`HostEvent::Evidence`], so recordings and the black box keep the GPUs' state from the time
//! of the fault for the incident report (`gpufleet report`). Once per session: a host that
//! keeps failing is not asked again and again.

use crate::fleet::HostEvent;
use crate::remote::link::channel_run::Budget;
use crate::remote::quote::{CommandError, RemoteCommand};
use crate::remote::sanitize::sanitize;
use crate::telemetry::source::now_ms;

/// The most of the output kept; `nvidia-smi -q` prints ~250 lines (~12 KiB) per GPU.
pub(crate) const MAX_EVIDENCE_BYTES: usize = 1 << 20;
/// What the command may send per second before it counts as flooding: a 64-GPU host's `-q`
/// fits in one window.
pub(crate) const EVIDENCE_BUDGET: Budget = Budget {
    window: std::time::Duration::from_secs(1),
    lines: 16_384,
    bytes: 16_384 * 1_024,
};

/// `nvidia-smi -q` with the configured program.
pub(crate) fn evidence_command(nvidia_smi: &str) -> Result<String, CommandError> {
    RemoteCommand::new(nvidia_smi).arg("-q").to_shell()
}

/// Kernel lines that mean a fault worth evidence: an Xid, a GPU off the bus, a failed
/// bring-up. (Triage says which; this only decides when to take the snapshot.)
pub(crate) fn is_fault_line(line: &str) -> bool {
    [
        "Xid",
        "fallen off the bus",
        "RmInitAdapter failed",
        "GPU is lost",
    ]
    .iter()
    .any(|word| line.contains(word))
}

/// One session's evidence: wanted, running, or taken.
#[derive(Default)]
pub(crate) struct EvidenceRun {
    /// A fault was seen; the command starts on the next timer round.
    pub(crate) wanted: bool,
    /// Started in this session already.
    pub(crate) started: bool,
    text: String,
    cut: bool,
}

impl EvidenceRun {
    /// Asks for evidence, unless this session took it already.
    pub(crate) fn want(&mut self) {
        if !self.started {
            self.wanted = true;
        }
    }

    /// Whether to start the command now (once per session).
    pub(crate) fn start_now(&mut self) -> bool {
        let start = self.wanted && !self.started;
        if start {
            self.started = true;
            self.wanted = false;
        }
        start
    }

    /// One line of output, kept while under [`MAX_EVIDENCE_BYTES`].
    pub(crate) fn line(&mut self, line: &str) {
        if self.text.len() + line.len() + 1 > MAX_EVIDENCE_BYTES {
            self.cut = true;
            return;
        }
        self.text.push_str(&sanitize(line));
        self.text.push('\n');
    }

    /// The event for what the command said; `status` its exit status, `refused` why it could
    /// not run.
    pub(crate) fn finish(&mut self, status: Option<i32>, refused: Option<&str>) -> HostEvent {
        let mut output = std::mem::take(&mut self.text);
        if self.cut {
            output.push_str(&format!(
                "[gpufleet: output cut at {} KiB]\n",
                MAX_EVIDENCE_BYTES / 1024
            ));
        }
        match (refused, status) {
            (Some(why), _) => {
                output.push_str(&format!("[gpufleet: could not run: {}]\n", sanitize(why)))
            }
            (None, Some(0)) => {}
            (None, Some(code)) => output.push_str(&format!("[exit {code}]\n")),
            (None, None) => output.push_str("[gpufleet: ended without an exit status]\n"),
        }
        HostEvent::Evidence {
            at_ms: now_ms(),
            command: crate::fleet::event::SMI_QUERY_ALL.to_string(),
            output,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn evidence_is_taken_once_per_session() {
        let mut run = EvidenceRun::default();
        assert!(!run.start_now(), "nothing wanted yet");
        run.want();
        assert!(run.start_now());
        run.want();
        assert!(
            !run.start_now(),
            "a second fault in the session asks nothing more"
        );
    }

    #[test]
    fn the_output_is_kept_whole_up_to_its_cap_and_says_when_cut() {
        let mut run = EvidenceRun::default();
        run.line("GPU 00000000:5A:00.0");
        run.line("    Product Name                          : NVIDIA H200");
        let HostEvent::Evidence {
            output, command, ..
        } = run.finish(Some(0), None)
        else {
            panic!("not evidence");
        };
        assert_eq!(command, "nvidia-smi -q");
        assert_eq!(
            output,
            "GPU 00000000:5A:00.0\n    Product Name                          : NVIDIA H200\n"
        );
        let line = "x".repeat(1_000);
        for _ in 0..2_000 {
            run.line(&line);
        }
        let HostEvent::Evidence { output, .. } = run.finish(Some(15), None) else {
            panic!("not evidence");
        };
        assert!(output.len() <= MAX_EVIDENCE_BYTES + 100);
        assert!(output.contains("output cut at 1024 KiB"));
        assert!(output.ends_with("[exit 15]\n"));
    }

    #[test]
    fn remote_escapes_do_not_reach_the_evidence() {
        let mut run = EvidenceRun::default();
        run.line("Product Name : \u{1b}]0;pwned\u{7}H200\u{1b}[2J");
        let HostEvent::Evidence { output, .. } = run.finish(Some(0), None) else {
            panic!("not evidence");
        };
        assert!(!output.contains('\u{1b}'), "{output:?}");
    }

    #[test]
    fn fault_lines_are_xids_and_lost_gpus_not_every_driver_line() {
        assert!(is_fault_line(
            "NVRM: Xid (PCI:0000:5a:00): 79, GPU has fallen off the bus."
        ));
        assert!(is_fault_line("NVRM: RmInitAdapter failed! (0x22:0x56:667)"));
        assert!(!is_fault_line(
            "nvidia-nvlink: Nvlink Core is being initialized, major device number 511"
        ));
    }
}
