//! What the acceptance check says while it runs: its phase, how far it is, the latest reading,
//! and the progress line `gpufleet check` prints on stderr, in the reader's language.

use rust_i18n::t;

use crate::check::report::Status;

/// What the check is doing, for a progress bar.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CheckPhase {
    Inventory,
    KernelLog,
    /// Starting Python and importing PyTorch.
    Probe,
    Matmul {
        gpu: u32,
    },
    Copy {
        gpu: u32,
    },
    Vram {
        gpu: u32,
    },
    Sustain,
    Done,
}

impl CheckPhase {
    /// The phase in a few words: `GPU 0: matrix multiply` (`GPU 0：矩阵乘法`).
    pub fn label(self) -> String {
        match self {
            CheckPhase::Inventory => t!("check_phase.inventory"),
            CheckPhase::KernelLog => t!("check_phase.kernel_log"),
            CheckPhase::Probe => t!("check_phase.probe"),
            CheckPhase::Matmul { gpu } => t!("check_phase.matmul", gpu = gpu),
            CheckPhase::Copy { gpu } => t!("check_phase.copy", gpu = gpu),
            CheckPhase::Vram { gpu } => t!("check_phase.vram", gpu = gpu),
            CheckPhase::Sustain => t!("check_phase.sustain"),
            CheckPhase::Done => t!("check_phase.done"),
        }
        .into_owned()
    }
}

/// One live reading during the load (nvidia-smi's, plus the last window's throughput).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct LiveReading {
    /// nvidia-smi index.
    pub gpu: u32,
    pub utilization_pct: Option<f64>,
    pub temperature_c: Option<f64>,
    pub power_w: Option<f64>,
    pub power_limit_w: Option<f64>,
    pub sm_clock_mhz: Option<u32>,
    pub tflops: Option<f64>,
}

/// A progress report: where the check is, how far overall (0 to 1), and the latest reading.
#[derive(Debug, Clone, PartialEq)]
pub struct CheckProgress {
    pub phase: CheckPhase,
    pub fraction: f64,
    pub message: String,
    pub reading: Option<LiveReading>,
}

impl CheckProgress {
    /// The line `gpufleet check` prints on stderr: `[ 42%] GPU 0: memory copy: ...`; the phase
    /// once when the message only repeats it (`[  0%] reading nvidia-smi`).
    pub fn line(&self) -> String {
        let pct = format!("{:>3.0}", self.fraction * 100.0);
        let phase = self.phase.label();
        if phase == self.message {
            return t!("check_phase.line_alone", pct = pct, phase = phase).into_owned();
        }
        t!(
            "check_phase.line",
            pct = pct,
            phase = phase,
            message = self.message
        )
        .into_owned()
    }
}

/// The last progress message: the host and its verdict (`flaky-h200: pass`).
pub fn finished(host: &str, status: Status) -> String {
    let word = match status {
        Status::Pass => t!("check_report.pass"),
        Status::Skip => t!("check_report.skip"),
        Status::Warn => t!("check_report.warn"),
        Status::Fail => t!("check_report.fail"),
    };
    t!("check_phase.finished", host = host, status = word).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The English words are the ones `gpufleet check` printed before they came from the
    /// catalogue.
    #[test]
    fn english_progress_words() {
        assert_eq!(
            CheckPhase::Matmul { gpu: 3 }.label(),
            "GPU 3: matrix multiply"
        );
        assert_eq!(finished("h1", Status::Warn), "h1: warn");
        let p = CheckProgress {
            phase: CheckPhase::Probe,
            fraction: 0.05,
            message: CheckPhase::Probe.label(),
            reading: None,
        };
        assert_eq!(p.line(), "[  5%] starting PyTorch");
    }
}
