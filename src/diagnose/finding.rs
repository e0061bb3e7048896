//! A finding: what was seen, how serious it is, the lines that show it, and what to do about it
//! on a rented host; plus the collector that keeps one finding per label and GPU.

use serde::Serialize;

use crate::diagnose::pci::normalize_pci;
use crate::remote::sanitize;

/// How urgent a finding is. Ordered, so the worst of several is `max`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Info,
    Warning,
    Critical,
}

impl Severity {
    /// The lowercase word used in JSON and in the text report.
    pub fn word(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Critical => "critical",
        }
    }

    /// The word in the reader's language (`critical` in English, as JSON writes it), for
    /// alerts and the incident report.
    pub fn said(self) -> String {
        match self {
            Severity::Critical => rust_i18n::t!("alert_text.severity_critical"),
            Severity::Warning => rust_i18n::t!("alert_text.severity_warning"),
            Severity::Info => rust_i18n::t!("alert_text.severity_info"),
        }
        .into_owned()
    }
}

/// Ids of the runbooks a finding can point at (the runbook's curated set).
pub mod runbook {
    pub const POWER_LIMIT: &str = "power-limit";
    pub const GPU_LOST: &str = "gpu-lost";
    pub const DRIVER_LOST: &str = "driver-lost";
    pub const CUDA_MISMATCH: &str = "cuda-mismatch";
    pub const THROTTLE: &str = "throttle";
    pub const ECC_REMAP: &str = "ecc-remap";
}

/// The stable labels other code (UI badges, runbook choice, scripts) may match on. Xid findings
/// are `xid_<N>`, built by [`xid_label`].
pub mod label {
    pub const GPU_LOST: &str = "gpu_lost";
    /// The host lost a GPU a second time (or more) since it was first watched.
    pub const GPU_LOST_AGAIN: &str = "gpu_lost_again";
    pub const DRIVER_NOT_LOADED: &str = "driver_not_loaded";
    pub const DRIVER_LIB_MISMATCH: &str = "driver_lib_mismatch";
    pub const NO_DEVICES: &str = "no_devices";
    /// NVML failed for a reason that is none of the four above (permissions, a container that
    /// lost its device nodes, an unknown error): worth saying, but not a lost GPU.
    pub const NVML_ERROR: &str = "nvml_error";
    pub const ECC_UNCORRECTABLE: &str = "ecc_uncorrectable";
    pub const ROW_REMAP_PENDING: &str = "row_remap_pending";
    pub const THERMAL_THROTTLE: &str = "thermal_throttle";
    pub const POWER_BRAKE: &str = "power_brake";
    pub const POWER_THROTTLE: &str = "power_throttle";
    pub const CUDA_ARCH_MISMATCH: &str = "cuda_arch_mismatch";
    pub const DRIVER_TOO_OLD: &str = "driver_too_old";
    pub const OOM: &str = "oom";
    pub const NCCL_ERROR: &str = "nccl_error";
    pub const IDLE_BILLING: &str = "idle_billing";
    pub const STALE: &str = "stale";
    // Finer labels keep their family's name as a prefix; new kinds have their own name.
    pub const NVML_ERROR_UNKNOWN: &str = "nvml_error_unknown";
    pub const GPU_INIT_FAILED: &str = "gpu_init_failed";
    pub const GPU_INIT_FAILED_GSP: &str = "gpu_init_failed_gsp";
    pub const GPU_INIT_FAILED_GFW_BOOT: &str = "gpu_init_failed_gfw_boot";
    pub const DRIVER_PROBE_FAILED: &str = "driver_probe_failed";
    pub const NOUVEAU_CONFLICT: &str = "nouveau_conflict";
    pub const PCIE_AER: &str = "pcie_aer";
    pub const PCIE_AER_FATAL: &str = "pcie_aer_fatal";
    pub const FABRIC_MANAGER: &str = "fabric_manager";
    pub const FABRIC_MANAGER_NOT_READY: &str = "fabric_manager_not_ready";
    pub const CONTAINER_NO_GPU_RUNTIME: &str = "container_no_gpu_runtime";
    pub const GSP_TIMEOUT: &str = "gsp_timeout";
    /// The GSP firmware itself failed (Xid 120: a task exception or an error it reported).
    pub const GSP_ERROR: &str = "gsp_error";
    pub const NVSWITCH_SXID: &str = "nvswitch_sxid";
    pub const NVSWITCH_SXID_FATAL: &str = "nvswitch_sxid_fatal";
    pub const CUDA_ILLEGAL_ADDRESS: &str = "cuda_illegal_address";
    pub const CUDA_DEVICE_ASSERT: &str = "cuda_device_assert";
    pub const CUDA_DEVICE_BUSY: &str = "cuda_device_busy";
    pub const CUDA_LAUNCH_FAILURE: &str = "cuda_launch_failure";
    pub const NCCL_TIMEOUT: &str = "nccl_timeout";
    pub const NCCL_NETWORK: &str = "nccl_network";
    pub const NCCL_SYSTEM: &str = "nccl_system";
    // What rented containers report: shared memory, disk, which GPU, the runtime, cuBLAS.
    pub const SHM_TOO_SMALL: &str = "shm_too_small";
    pub const DISK_FULL: &str = "disk_full";
    pub const INVALID_DEVICE_ORDINAL: &str = "invalid_device_ordinal";
    pub const NO_CUDA_GPUS: &str = "no_cuda_gpus";
    pub const DRIVER_TOO_OLD_COMPAT: &str = "driver_too_old_compat";
    pub const CUBLAS_INIT_FAILED: &str = "cublas_init_failed";
    /// A training run whose loss (or loss scale) shows it diverged: NaN or inf.
    pub const LOSS_NAN: &str = "loss_nan";
    // What a training job's own log shows.
    pub const TRAINING_PLATEAU: &str = "training_plateau";
    pub const TRAINING_OVERFIT: &str = "training_overfit";
    pub const JOB_FINISHED: &str = "job_finished";
    // How a job uses its GPUs.
    pub const INPUT_BOUND: &str = "input_bound";
    pub const CARD_OVERSIZED: &str = "card_oversized";
    pub const CARD_UNDERSIZED: &str = "card_undersized";
    // The host around the GPUs, read live.
    pub const SMI_MISSING: &str = "smi_missing";
    pub const DISK_NEARLY_FULL: &str = "disk_nearly_full";
    pub const SHM_SMALL: &str = "shm_small";
}

/// What a multi-GPU (NCCL) failure most likely comes from, as far as the text shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Cause {
    /// Sockets, InfiniBand or a peer host that went away.
    Network,
    /// A GPU fault (lost GPU, uncorrectable memory error, fatal Xid) in the same text.
    PeerGpu,
    /// Nothing on the host explains it: a hang, desync or bug in the program.
    Code,
}

/// `xid_79` for Xid 79.
pub fn xid_label(code: u32) -> String {
    format!("xid_{code}")
}

/// Evidence lines kept per finding; the first ones seen are kept, repeats are dropped.
pub const MAX_EVIDENCE: usize = 5;

/// A pasted line can be a whole minified log; the report only needs enough to recognise it.
const MAX_EVIDENCE_CHARS: usize = 300;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Finding {
    pub label: String,
    pub severity: Severity,
    /// The lines or samples that triggered it, free of control characters and escapes.
    pub evidence: Vec<String>,
    /// What it means, in plain words.
    pub summary: String,
    /// What to do on a rented host.
    pub action: String,
    /// The runbook that walks the fix, when there is one.
    pub runbook: Option<String>,
    /// The GPU index, when the finding belongs to one GPU and its index is known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gpu: Option<u32>,
    /// The GPU's PCI address (`0000:3b:00`, as kernel lines print it), when the text names it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pci: Option<String>,
    /// The GPU's UUID, when the text ties one to it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub uuid: Option<String>,
    /// NCCL: the rank that reported it, when the text names one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rank: Option<u32>,
    /// NCCL: the host that reported it, or the peer it lost, when the text names them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    /// NCCL: the peer host the connection to was lost, when the text names it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub peer: Option<String>,
    /// NCCL: whether the cause looks like the network, a peer's GPU or the code.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cause: Option<Cause>,
}

impl Finding {
    pub fn new(
        label: impl Into<String>,
        severity: Severity,
        summary: impl Into<String>,
        action: impl Into<String>,
    ) -> Self {
        Self {
            label: label.into(),
            severity,
            evidence: Vec::new(),
            summary: summary.into(),
            action: action.into(),
            runbook: None,
            gpu: None,
            pci: None,
            uuid: None,
            rank: None,
            host: None,
            peer: None,
            cause: None,
        }
    }

    pub fn with_runbook(mut self, id: &str) -> Self {
        self.runbook = Some(id.to_string());
        self
    }

    pub fn on_gpu(mut self, gpu: Option<u32>) -> Self {
        self.gpu = gpu;
        self
    }

    /// Sets the PCI address (any form [`normalize_pci`] reads).
    pub fn on_pci(mut self, pci: Option<&str>) -> Self {
        self.pci = pci.and_then(normalize_pci);
        self
    }

    pub fn with_evidence(mut self, line: &str) -> Self {
        self.add_evidence(line);
        self
    }

    /// Adds one evidence line: sanitized, trimmed, shortened; empty lines, repeats and lines past
    /// [`MAX_EVIDENCE`] are dropped.
    pub fn add_evidence(&mut self, line: &str) {
        push_evidence(&mut self.evidence, line);
    }

    /// The same finding about the same device: the same label, and the same GPU index and
    /// PCI address, or the same PCI address where only one of them knows the index (a kernel
    /// line names the address alone, nvidia-smi's table both).
    fn key_matches(&self, other: &Finding) -> bool {
        if self.label != other.label {
            return false;
        }
        match (&self.pci, &other.pci) {
            (Some(a), Some(b)) => {
                a == b && (self.gpu == other.gpu || self.gpu.is_none() || other.gpu.is_none())
            }
            _ => self.gpu == other.gpu && self.pci == other.pci,
        }
    }
}

/// Adds `line` to an evidence list as [`Finding::add_evidence`] does. Adding a line the list
/// already holds changes nothing, so lists gathered apart can be merged line by line.
pub(crate) fn push_evidence(evidence: &mut Vec<String>, line: &str) {
    if evidence.len() >= MAX_EVIDENCE {
        return;
    }
    let clean = sanitize(line);
    let clean = clean.trim();
    if clean.is_empty() {
        return;
    }
    let clean = shorten(clean);
    if !evidence.contains(&clean) {
        evidence.push(clean);
    }
}

fn shorten(line: &str) -> String {
    match line.char_indices().nth(MAX_EVIDENCE_CHARS) {
        Some((cut, _)) => format!("{}…", &line[..cut]),
        None => line.to_string(),
    }
}

/// Distinct (label, GPU) findings one collection keeps; later new ones are dropped. Real input
/// raises a handful; a crafted paste of a million different Xid codes must not cost memory and
/// a quadratic merge.
pub const MAX_FINDINGS: usize = 256;

/// Collects findings so that each (label, GPU index, PCI address) appears once, with the evidence
/// of every sighting.
#[derive(Debug, Default)]
pub struct Findings {
    items: Vec<Finding>,
}

impl Findings {
    /// Adds a finding, or folds it into the one already there for the same label and GPU: the
    /// evidence accumulates, and the more severe wording (summary, action, runbook) wins, so a
    /// later, graver sighting is not hidden behind an earlier, milder one. Past
    /// [`MAX_FINDINGS`] distinct ones, a new one is dropped.
    pub fn push(&mut self, finding: Finding) {
        let Some(existing) = self.items.iter_mut().find(|f| f.key_matches(&finding)) else {
            if self.items.len() < MAX_FINDINGS {
                self.items.push(finding);
            }
            return;
        };
        if finding.severity > existing.severity {
            existing.severity = finding.severity;
            existing.summary = finding.summary;
            existing.action = finding.action;
            existing.runbook = finding.runbook;
        }
        for line in &finding.evidence {
            existing.add_evidence(line);
        }
        existing.gpu = existing.gpu.or(finding.gpu);
        existing.uuid = existing.uuid.take().or(finding.uuid);
        existing.rank = existing.rank.or(finding.rank);
        existing.host = existing.host.take().or(finding.host);
        existing.peer = existing.peer.take().or(finding.peer);
    }

    pub fn extend(&mut self, findings: impl IntoIterator<Item = Finding>) {
        for f in findings {
            self.push(f);
        }
    }

    /// Folds every finding of `other` in, in the order it first saw them: the same as pushing
    /// what `other` was pushed, one after the other.
    pub fn absorb(&mut self, other: Findings) {
        self.extend(other.items);
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    pub fn contains(&self, label: &str) -> bool {
        self.items.iter().any(|f| f.label == label)
    }

    pub fn items_mut(&mut self) -> &mut Vec<Finding> {
        &mut self.items
    }

    /// The findings in the order they were first seen; a report lists them root cause first
    /// ([`crate::diagnose::order::root_cause_first`]).
    pub fn into_items(self) -> Vec<Finding> {
        self.items
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_label_and_gpu_merge_and_keep_the_graver_wording() {
        let mut all = Findings::default();
        all.push(Finding::new("x", Severity::Info, "mild", "wait").with_evidence("a"));
        all.push(Finding::new("x", Severity::Critical, "grave", "act").with_evidence("b"));
        all.push(Finding::new("x", Severity::Info, "other", "other").on_gpu(Some(1)));
        let out = all.into_items();
        assert_eq!(out.len(), 2);
        assert_eq!(out[0].summary, "grave");
        assert_eq!(out[0].evidence, vec!["a", "b"]);
    }

    #[test]
    fn evidence_is_sanitized_deduplicated_and_capped() {
        let mut f = Finding::new("x", Severity::Info, "", "");
        f.add_evidence("\u{1b}]0;title\u{7}line\r");
        f.add_evidence("line");
        for i in 0..10 {
            f.add_evidence(&format!("more {i}"));
        }
        assert_eq!(f.evidence[0], "line");
        assert_eq!(f.evidence.len(), MAX_EVIDENCE);
        f.evidence.clear();
        f.add_evidence(&"é".repeat(400));
        assert_eq!(f.evidence[0].chars().count(), MAX_EVIDENCE_CHARS + 1);
        // Adding a kept line again, shortened or not, changes nothing.
        let kept = f.evidence.clone();
        f.add_evidence(&kept[0]);
        assert_eq!(f.evidence, kept);
    }

    #[test]
    fn distinct_findings_are_capped() {
        let mut all = Findings::default();
        for code in 0..(MAX_FINDINGS as u32 + 10) {
            all.push(Finding::new(xid_label(code), Severity::Info, "", ""));
        }
        all.push(Finding::new(xid_label(0), Severity::Critical, "grave", ""));
        let out = all.into_items();
        assert_eq!(out.len(), MAX_FINDINGS);
        assert_eq!(out[0].summary, "grave", "known ones still merge");
    }
}
