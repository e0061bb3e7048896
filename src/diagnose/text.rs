//! Findings from any text a user pastes: nvidia-smi output and failure texts, kernel lines,
//! Python tracebacks (CUDA, PyTorch, NCCL, pynvml), DCGM health messages; and, through the same
//! matcher, the kernel lines the live console receives from a host.

use std::collections::HashSet;

use crate::diagnose::finding::{Finding, Findings, label};
use crate::diagnose::kernel::{self, GpuResolver, NoResolver};
use crate::diagnose::line_detail::{self, AerLine};
use crate::diagnose::line_rules::{Detail, LINE_RULES, MATCHER};
use crate::diagnose::needles::Bits;
use crate::diagnose::training::{self, TrainingReader};
use crate::diagnose::verdict::Diagnosis;
use crate::diagnose::{
    amd_view, labels, labels_app, labels_ascend, labels_container, labels_host, order, smi,
    smi_reading,
};
use crate::telemetry::LostReason;
use crate::telemetry::smi_csv::classify_failure;

/// Findings that say why NVML failed; with one of them, the generic `nvml_error` adds nothing.
const NVML_LABELS: &[&str] = &[
    label::GPU_LOST,
    label::DRIVER_NOT_LOADED,
    label::DRIVER_LIB_MISMATCH,
    label::NO_DEVICES,
    label::NVML_ERROR_UNKNOWN,
];

/// NCCL findings finer than the generic `nccl_error`.
const NCCL_FINER: &[&str] = &[label::NCCL_TIMEOUT, label::NCCL_NETWORK, label::NCCL_SYSTEM];

/// AER lines of devices not known yet to be GPUs, kept until the end of the text decides.
const MAX_PENDING_AER: usize = 64;

/// Classifies `text` and returns its findings, most severe (and root causes) first.
///
/// Every source of evidence is read from the same text, so a paste can mix a traceback, a dmesg
/// excerpt and nvidia-smi output. One finding per label and GPU; its evidence lists the first
/// lines that showed it. A lone `ERR!` or `[Unknown Error]` field is not a finding: nvidia-smi
/// prints those for one unreadable field of a working GPU.
pub fn diagnose_text(text: &str) -> Vec<Finding> {
    diagnose(text).findings
}

/// [`diagnose_text`] with the verdict: healthy needs positive evidence of working GPUs.
///
/// A training log (Hugging Face `Trainer`, Lightning, tqdm with losses, `step N loss X` prints)
/// is recognised as such: its progress comes with the diagnosis and its findings
/// (`training_plateau`, `training_overfit`, `job_finished`) join the others.
pub fn diagnose(text: &str) -> Diagnosis {
    let mut diagnoser = TextDiagnoser::default();
    let mut training = TrainingReader::default();
    for line in text.lines() {
        diagnoser.line(line);
        training.line(line);
    }
    training::merge(diagnoser.finish_with(&NoResolver), training.finish())
}

/// [`diagnose_text`] a line at a time, for input read as a stream: memory stays bounded
/// however long the input is, and the findings are the same as for the whole text at once.
///
/// Each reader (kernel lines, line rules, the nvidia-smi formats) collects apart and the
/// collections are merged in a fixed order at the end, so which finding comes first and which
/// evidence lines are kept do not depend on how the readers' lines interleave.
#[derive(Default)]
pub struct TextDiagnoser {
    kernel: kernel::Collector,
    lines: Findings,
    smi: smi::Collector,
    /// A pasted amd-smi default view, evidence of working AMD GPUs.
    amd_view: amd_view::Collector,
    aer_pending: Vec<(String, AerLine)>,
    /// Whether a line showed working GPUs (`nvidia-smi -L`, a framework using the GPU).
    working: bool,
    /// The current line in lower case, kept to save an allocation per line.
    lower: String,
}

impl TextDiagnoser {
    /// Reads one line, without its line ending.
    pub fn line(&mut self, line: &str) {
        self.lower.clear();
        self.lower.push_str(line);
        self.lower.make_ascii_lowercase();
        let matcher = &*MATCHER;
        // One pass finds every phrase any reader looks for; a reader whose phrase is absent
        // (in any case) skips its own search.
        let hits = matcher.set.find(self.lower.as_bytes());
        if hits.meets(matcher.kernel_bit) {
            self.kernel.line(line);
        }
        self.working |= hits.meets(matcher.working_bits);
        if !hits.is_empty() {
            self.classify_line(line, hits);
        }
        let [table_header, query_flag, xml_start, xml_end] =
            matcher.smi_bits.map(|bit| hits.meets(bit));
        let hints = smi_reading::LineHints {
            table_header,
            query_flag,
            xml_start,
            xml_end,
        };
        self.smi.line(line, hints);
        self.amd_view.line(line);
    }

    /// The findings, most severe first, for pasted text (no GPU indexes known).
    pub fn finish(self) -> Vec<Finding> {
        self.finish_with(&NoResolver).findings
    }

    /// The diagnosis; `resolver` turns PCI addresses into the host's GPU indexes.
    pub fn finish_with(mut self, resolver: &dyn GpuResolver) -> Diagnosis {
        let mut out = Findings::default();
        self.kernel.finish(resolver, &mut out);
        out.absorb(self.lines);
        let processes = self.smi.take_processes();
        let smi_gpus = self.smi.finish(&mut out);
        // Out of memory with nvidia-smi's process list in the same paste: who holds the memory.
        for f in out.items_mut().iter_mut().filter(|f| f.label == label::OOM) {
            for p in &processes {
                f.add_evidence(p);
            }
        }
        let known: HashSet<String> = out
            .items_mut()
            .iter()
            .filter_map(|f| f.pci.clone())
            .collect();
        let is_gpu = |pci: &Option<String>| {
            pci.as_ref()
                .is_some_and(|p| known.contains(p) || resolver.gpu_index(Some(p), None).is_some())
        };
        for (line, aer) in &self.aer_pending {
            let pci = [&aer.source, &aer.device].into_iter().find(|p| is_gpu(p));
            if let Some(pci) = pci {
                out.push(
                    labels_host::pcie_aer(aer.fatal)
                        .on_pci(pci.as_deref())
                        .with_evidence(line),
                );
            }
        }
        settle(&mut out, resolver);
        let amd_gpus = self.amd_view.gpus() > 0;
        Diagnosis::new(
            order::root_cause_first(out),
            self.working || smi_gpus || amd_gpus,
        )
    }

    /// Runs the line rules on a line whose needles `hits` holds.
    fn classify_line(&mut self, line: &str, hits: Bits) {
        let matcher = &*MATCHER;
        let lower = self.lower.as_str();
        let mut found: Vec<Finding> = Vec::new();
        for (rule, bits) in LINE_RULES.iter().zip(&matcher.rule_bits) {
            if !hits.meets(*bits) {
                continue;
            }
            let mut f = (rule.finding)().with_evidence(line);
            match rule.detail {
                Detail::None => {}
                Detail::Pci => f = f.on_pci(line_detail::gpu_pci(line).as_deref()),
                Detail::Failed if !lower.contains("fail") => continue,
                Detail::Failed => {}
                Detail::Sxid if lower.contains(", non-fatal,") => {}
                Detail::Sxid if lower.contains(", fatal,") => {
                    f = labels_host::nvswitch_sxid_fatal().with_evidence(line);
                }
                Detail::Sxid => continue,
                Detail::Space if line_detail::is_shared_memory(lower) => {
                    f = labels_container::shm_too_small().with_evidence(line);
                }
                Detail::Space => {}
                Detail::LossScale if !line_detail::loss_scale_at_floor(lower) => continue,
                Detail::LossScale => {}
                Detail::AscendKbox => match labels_ascend::kbox_device(line) {
                    Some(npu) => f = f.on_gpu(Some(npu)),
                    None => continue,
                },
                Detail::Amdgpu if !lower.contains("amdgpu") => continue,
                Detail::Amdgpu => f = f.on_pci(line_detail::amdgpu_pci(line).as_deref()),
                Detail::NcclSocket if !lower.contains("nccl") => continue,
                Detail::NcclSocket => {
                    let who = line_detail::nccl(line);
                    f.rank = who.rank;
                    f.host = who.host;
                    f.peer = who.peer;
                }
                Detail::Nccl => {
                    let who = line_detail::nccl(line);
                    f.rank = who.rank;
                    f.host = who.host;
                    f.peer = who.peer;
                }
                Detail::Aer => {
                    let Some(aer) = line_detail::aer(line) else {
                        continue;
                    };
                    if !aer.nvidia {
                        if self.aer_pending.len() < MAX_PENDING_AER {
                            self.aer_pending.push((line.to_string(), aer));
                        }
                        continue;
                    }
                    f = labels_host::pcie_aer(aer.fatal)
                        .on_pci(aer.device.as_deref())
                        .with_evidence(line);
                }
            }
            found.push(f);
        }
        if found.iter().any(|f| NCCL_FINER.contains(&f.label.as_str())) {
            found.retain(|f| f.label != label::NCCL_ERROR);
        }
        let failure = if hits.meets(matcher.failure_bits) {
            classify_failure(line)
        } else {
            None
        };
        match failure {
            // "Failed to initialize nvml: DriverNotLoaded" is generic to nvidia-smi's texts but
            // names its cause: the specific finding stands alone.
            Some(LostReason::Other)
                if found
                    .iter()
                    .any(|f| NVML_LABELS.contains(&f.label.as_str())) => {}
            Some(reason) => found.push(
                labels::for_lost_reason(reason)
                    .on_pci(line_detail::any_pci(line).as_deref())
                    .with_evidence(line),
            ),
            None => {}
        }
        self.lines.extend(found);
        // DCGM health: "Detected clocks event due to thermal violation in GPU 2. ..."
        if hits.meets(matcher.thermal_bit) {
            let gpu = lower
                .split("in gpu ")
                .nth(1)
                .and_then(|rest| rest.split(|c: char| !c.is_ascii_digit()).next())
                .and_then(|n| n.parse().ok());
            self.lines.push(
                labels::thermal_throttle(false)
                    .on_gpu(gpu)
                    .with_evidence(line),
            );
        }
    }
}

/// What the whole text decides about single findings: GPU indexes for PCI addresses, the generic
/// NCCL finding where a finer one explains it, a probe failure that only follows from a lost GPU,
/// and whom a program's error blames.
fn settle(out: &mut Findings, resolver: &dyn GpuResolver) {
    let items = out.items_mut();
    for f in items
        .iter_mut()
        .filter(|f| f.gpu.is_none() && f.pci.is_some())
    {
        f.gpu = resolver.gpu_index(f.pci.as_deref(), f.uuid.as_deref());
    }
    let has = |items: &[Finding], name: &str| items.iter().any(|f| f.label == name);
    if NCCL_FINER.iter().any(|n| has(items, n)) {
        items.retain(|f| f.label != label::NCCL_ERROR);
    }
    if has(items, label::GPU_LOST) {
        items.retain(|f| f.label != label::DRIVER_PROBE_FAILED);
    }
    labels_app::blame(out);
}
