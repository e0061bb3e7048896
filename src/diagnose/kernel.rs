//! Kernel log lines from the NVIDIA driver: the Xid parser and the findings the lines add up to.
//!
//! Tolerates every real layout of kernel lines seen in renters' pastes: dmesg (`[ 1234.5678] `,
//! `[Sun Jul 28 09:15:27 2024] `) and journal (`Nov 22 18:29:55 host kernel: `) prefixes, old
//! drivers without `PCI:`, a PCI function suffix, MIG `GPU-I:`/`GPU-CI:` attribution,
//! `pid='<unknown>'`, pid without name, no pid at all, a bare code, "caused by previous Xid N",
//! and "fallen off the bus" lines that carry no Xid number (including the multi-line form).

use std::collections::HashMap;

use crate::diagnose::finding::{Finding, Findings, Severity};
use crate::diagnose::pci::normalize_pci;
use crate::diagnose::recovery::RecoveryAction;
use crate::diagnose::xid;
use crate::diagnose::{labels, labels_host};

/// One parsed `NVRM: Xid (...)` line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct XidEvent {
    pub code: u32,
    /// `domain:bus:device` in lower case (`0000:3b:00`), the form Xid lines print.
    pub pci: Option<String>,
    pub gpu_instance: Option<u32>,
    pub compute_instance: Option<u32>,
    /// As printed: a number, `'<unknown>'`, or absent on older drivers.
    pub pid: Option<String>,
    pub process: Option<String>,
    /// The driver's text after the code, pid and name.
    pub message: String,
    /// `N` from "caused by previous Xid N".
    pub caused_by: Option<u32>,
    /// For Xid 154: the action the GPU now needs.
    pub recovery: Option<RecoveryAction>,
}

/// What a kernel line says about the GPUs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KernelEvent {
    Xid(XidEvent),
    /// A GPU-lost line without an Xid number; `pci` when the line names the device.
    FellOffBus {
        pci: Option<String>,
    },
    /// `NVRM: GPU at PCI:0000:02:00: GPU-660d987e-...`, printed once per GPU before its first
    /// Xid: ties the PCI tuple to a UUID.
    GpuUuid {
        pci: String,
        uuid: String,
    },
    /// `NVRM: The NVIDIA GPU 0000:b3:00.0`: the first line of the multi-line lost message.
    GpuMention {
        pci: String,
    },
}

/// Parses one kernel line; `None` for lines that say nothing about a GPU.
pub fn parse_line(line: &str) -> Option<KernelEvent> {
    let at = line.find("NVRM:")?;
    let rest = line[at + "NVRM:".len()..].trim_start();
    if let Some(after) = rest.strip_prefix("Xid") {
        return parse_xid(after).map(KernelEvent::Xid);
    }
    let lower = rest.to_ascii_lowercase();
    if lower.contains("fallen off the bus") || lower.contains("nv_err_gpu_is_lost") {
        return Some(KernelEvent::FellOffBus {
            pci: pci_after(rest, "GPU at ").or_else(|| pci_after(rest, "GPU ")),
        });
    }
    if let Some(after) = rest.strip_prefix("GPU at ") {
        let (pci, uuid) = after.split_once(": ")?;
        let uuid = uuid.trim();
        if uuid.starts_with("GPU-") {
            return Some(KernelEvent::GpuUuid {
                pci: normalize_pci(pci)?,
                uuid: uuid.to_string(),
            });
        }
    }
    if let Some(after) = rest.strip_prefix("The NVIDIA GPU ") {
        return Some(KernelEvent::GpuMention {
            pci: normalize_pci(after.split_whitespace().next()?)?,
        });
    }
    None
}

fn parse_xid(after: &str) -> Option<XidEvent> {
    let inner_start = after.trim_start().strip_prefix('(')?;
    let (inner, tail) = inner_start.split_once(')')?;
    let mut event = XidEvent {
        code: 0,
        pci: None,
        gpu_instance: None,
        compute_instance: None,
        pid: None,
        process: None,
        message: String::new(),
        caused_by: None,
        recovery: None,
    };
    for token in inner.split_whitespace() {
        if let Some(n) = token.strip_prefix("GPU-CI:") {
            event.compute_instance = n.parse().ok();
        } else if let Some(n) = token.strip_prefix("GPU-I:") {
            event.gpu_instance = n.parse().ok();
        } else if event.pci.is_none() {
            event.pci = normalize_pci(token);
        }
    }
    let tail = tail.trim_start().strip_prefix(':')?.trim_start();
    let digits = tail.bytes().take_while(u8::is_ascii_digit).count();
    event.code = tail[..digits].parse().ok()?;
    let mut rest = tail[digits..].trim_start();
    rest = rest.strip_prefix(',').unwrap_or(rest).trim_start();
    if let Some(after) = rest.strip_prefix("pid=") {
        let (pid, more) = after.split_once(',').unwrap_or((after, ""));
        event.pid = Some(pid.trim().to_string());
        rest = more.trim_start();
        if let Some(after) = rest.strip_prefix("name=") {
            let (name, more) = after.split_once(", ").unwrap_or((after, ""));
            event.process = Some(name.trim().trim_end_matches(',').to_string());
            rest = more.trim_start();
        }
    }
    event.message = rest.trim_end().to_string();
    event.caused_by = caused_by(&event.message);
    if event.code == 154 {
        event.recovery = RecoveryAction::from_message(&event.message);
    }
    Some(event)
}

fn caused_by(message: &str) -> Option<u32> {
    let lower = message.to_ascii_lowercase();
    let at = lower.find("caused by previous xid")?;
    let digits: String = lower[at + "caused by previous xid".len()..]
        .trim_start()
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    digits.parse().ok()
}

fn pci_after(text: &str, marker: &str) -> Option<String> {
    let at = text.find(marker)?;
    let token = text[at + marker.len()..].split_whitespace().next()?;
    normalize_pci(token.trim_end_matches(':'))
}

/// How to turn a kernel line's PCI tuple (or the UUID printed for it) into a GPU index.
pub trait GpuResolver {
    fn gpu_index(&self, pci: Option<&str>, uuid: Option<&str>) -> Option<u32>;
}

/// For pasted text: nothing says which index a PCI tuple has, so no index is guessed.
pub struct NoResolver;

impl GpuResolver for NoResolver {
    fn gpu_index(&self, _pci: Option<&str>, _uuid: Option<&str>) -> Option<u32> {
        None
    }
}

/// Adds the findings the kernel `lines` show to `out`.
///
/// Xid 79 and lost-GPU lines also raise `gpu_lost`, and some Xids their family's finding
/// (uncorrectable ECC, the GSP); "caused by previous Xid N" also raises
/// `xid_N`; and when an Xid 154 names a recovery action for a device, that action replaces the
/// catalog's advice on every finding of that device (the latest Xid 154 wins).
pub fn collect<'a>(
    lines: impl IntoIterator<Item = &'a str>,
    resolver: &dyn GpuResolver,
    out: &mut Findings,
) {
    let mut collector = Collector::default();
    for line in lines {
        collector.line(line);
    }
    collector.finish(resolver, out);
}

/// Bytes of kernel lines a [`Collector`] holds before it turns them into findings early. A
/// recovery action or PCI-to-UUID line read after that point no longer changes the findings
/// of the lines before it, and those early findings name no GPU index (only a pasted log,
/// which never resolves indexes, can be this long); no real log comes near this much driver
/// output.
pub const MAX_HELD_BYTES: usize = 16 * 1024 * 1024;

/// [`collect`] a line at a time. The findings wait for the end (or [`MAX_HELD_BYTES`]),
/// because a later Xid 154 changes the advice for the device's earlier lines and a later
/// `GPU at PCI:` line names the GPU of earlier ones.
#[derive(Default)]
pub struct Collector {
    events: Vec<(String, KernelEvent)>,
    held_bytes: usize,
    uuids: HashMap<String, String>,
    recovery: HashMap<Option<String>, RecoveryAction>,
    last_mention: Option<String>,
    /// Findings of lines already turned over, when the held lines outgrew the limit.
    early: Findings,
}

impl Collector {
    pub fn line(&mut self, line: &str) {
        let Some(mut event) = parse_line(line) else {
            return;
        };
        match &mut event {
            KernelEvent::GpuUuid { pci, uuid } => {
                self.uuids.insert(pci.clone(), uuid.clone());
            }
            KernelEvent::GpuMention { pci } => self.last_mention = Some(pci.clone()),
            KernelEvent::FellOffBus { pci } if pci.is_none() => {
                pci.clone_from(&self.last_mention);
            }
            KernelEvent::Xid(x) => {
                if let Some(action) = x.recovery {
                    self.recovery.insert(x.pci.clone(), action);
                }
            }
            KernelEvent::FellOffBus { .. } => {}
        }
        if matches!(event, KernelEvent::Xid(_) | KernelEvent::FellOffBus { .. }) {
            self.held_bytes += line.len();
            self.events.push((line.to_string(), event));
        }
        if self.held_bytes > MAX_HELD_BYTES {
            let mut early = std::mem::take(&mut self.early);
            self.turn_over(&NoResolver, &mut early);
            self.early = early;
        }
    }

    /// Adds the findings of every line read to `out`.
    pub fn finish(mut self, resolver: &dyn GpuResolver, out: &mut Findings) {
        out.absorb(std::mem::take(&mut self.early));
        self.turn_over(resolver, out);
    }

    /// Findings for the held lines, with what is known now; the lines are let go.
    fn turn_over(&mut self, resolver: &dyn GpuResolver, out: &mut Findings) {
        let gpu_of = |pci: &Option<String>| {
            let uuid = pci.as_ref().and_then(|p| self.uuids.get(p));
            resolver.gpu_index(pci.as_deref(), uuid.map(String::as_str))
        };
        for (line, event) in &self.events {
            let (pci, mut found) = match event {
                KernelEvent::Xid(x) => (&x.pci, xid_findings(x, line)),
                KernelEvent::FellOffBus { pci } => {
                    (pci, vec![labels::gpu_lost().with_evidence(line)])
                }
                KernelEvent::GpuUuid { .. } | KernelEvent::GpuMention { .. } => continue,
            };
            let gpu = gpu_of(pci);
            let uuid = pci.as_ref().and_then(|p| self.uuids.get(p)).cloned();
            let verdict = self.recovery.get(pci).or_else(|| self.recovery.get(&None));
            for mut finding in found.drain(..) {
                match verdict {
                    Some(RecoveryAction::None) if finding.label == "xid_154" => {
                        finding.severity = Severity::Info;
                        finding.action = rust_i18n::t!("finding_text.recovery.none").into_owned();
                    }
                    Some(action) => action.apply_to(&mut finding),
                    None => {}
                }
                let mut finding = finding.on_gpu(gpu);
                finding.pci.clone_from(pci);
                finding.uuid.clone_from(&uuid);
                out.push(finding);
            }
        }
        self.events.clear();
        self.held_bytes = 0;
    }
}

/// The family finding an Xid belongs to besides its own `xid_N`: uncorrectable memory errors
/// (48 double-bit ECC, 95 uncontained, 140 unrecovered escape) are `ecc_uncorrectable`, as is a
/// failed page retirement or row remap (64, worded as such); the GSP's RPC timeout (119) and
/// error (120) are `gsp_timeout` and `gsp_error`. The family comes first, so a reader sees the
/// kind of fault before NVIDIA's code for it.
fn family(code: u32) -> Option<Finding> {
    match code {
        48 | 95 | 140 => Some(labels::ecc_uncorrectable()),
        64 => Some(labels::remap_failed()),
        119 => Some(labels_host::gsp_timeout()),
        120 => Some(labels_host::gsp_error()),
        _ => None,
    }
}

fn xid_findings(x: &XidEvent, line: &str) -> Vec<Finding> {
    let mut found: Vec<Finding> = family(x.code)
        .map(|f| f.with_evidence(line))
        .into_iter()
        .collect();
    found.push(xid::finding(x.code).with_evidence(line));
    if let Some(previous) = x.caused_by {
        found.push(xid::finding(previous).with_evidence(line));
    }
    if x.code == 79 {
        found.push(labels::gpu_lost().with_evidence(line));
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    fn xid(line: &str) -> XidEvent {
        match parse_line(line) {
            Some(KernelEvent::Xid(x)) => x,
            other => panic!("{line}: {other:?}"),
        }
    }

    #[test]
    fn reads_mig_attribution_and_function_suffix() {
        let x = xid("NVRM: Xid (PCI:0000:3b:00 GPU-I:01 GPU-CI:02): 13, pid=9, name=a, Graphics");
        assert_eq!(
            (x.code, x.pci.as_deref(), x.gpu_instance, x.compute_instance),
            (13, Some("0000:3b:00"), Some(1), Some(2))
        );
        let x = xid("NVRM: Xid (PCI:0000:00:08.0): 145, RLW_REMAP Nonfatal XC1 i0 Link 10");
        assert_eq!(x.pci.as_deref(), Some("0000:00:08"));
        assert_eq!(x.message, "RLW_REMAP Nonfatal XC1 i0 Link 10");
    }

    #[test]
    fn reads_a_bare_code_and_rejects_malformed_lines() {
        assert_eq!(xid("NVRM: Xid (PCI:0000:3f:00): 46").code, 46);
        assert_eq!(parse_line("NVRM: Xid : 32, pid=2280636"), None);
        assert_eq!(parse_line("NVRM: Xid (PCI:0000:66:00): abc, pid=1"), None);
        assert_eq!(parse_line("Xid 79 is documented here"), None);
    }
}
