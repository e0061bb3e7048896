//! Findings of accelerators read with their vendors' tools (`npu-smi`, `rocm-smi`, `xpu-smi`),
//! with the vendor named in the action text:
//!
//! - `accel_health`: the tool's health word is not `OK` (`npu-smi`'s Health column: `Warning`,
//!   `Alarm`, `Critical`, or a word gpufleet does not know); Warning is a warning, the others
//!   critical.
//! - `accel_unsupported_output`: the tool printed output its parser does not know (another
//!   version, another form, a failure text no published sample shows), so the host is reported
//!   with the tool's first lines instead of figures.
//!
//! Apart from amd-smi's published failure texts (`labels_amd`), the fixtures show no "device
//! not found", "driver not loaded" or ECC output of these tools
//! (tests/fixtures/accelerators/README.md), so none is matched by its words here: such output
//! reaches the user as `accel_unsupported_output` with its first lines, never as a number.

use rust_i18n::t;

use crate::diagnose::finding::{Finding, Severity};
use crate::fleet::host::GpuState;
use crate::telemetry::accel::{Health, TOOLS, UNSUPPORTED_PREFIX};

pub const ACCEL_HEALTH: &str = "accel_health";
pub const ACCEL_UNSUPPORTED_OUTPUT: &str = "accel_unsupported_output";

/// `accel_health` for a GPU whose vendor tool prints a health word other than `OK`.
pub fn health(gpu: &GpuState) -> Option<Finding> {
    let sample = &gpu.latest;
    let state = sample.health.as_ref()?;
    let severity = match state {
        Health::Ok => return None,
        Health::Warning | Health::Other(_) => Severity::Warning,
        Health::Alarm | Health::Critical => Severity::Critical,
    };
    let vendor = sample.vendor.label();
    let word = state.word();
    let index = sample.index;
    let tool = sample.vendor.tool().unwrap_or_default();
    let command = sample
        .vendor
        .health_command(index)
        .unwrap_or_else(|| tool.to_string());
    let finding = Finding::new(
        ACCEL_HEALTH,
        severity,
        t!(
            "finding_text.accel_health.summary",
            vendor = vendor,
            state = word
        ),
        t!(
            "finding_text.accel_health.action",
            vendor = vendor,
            command = command
        ),
    )
    .on_gpu(Some(index))
    .on_pci(Some(&*sample.bus_id).filter(|b| !b.is_empty()));
    let who = format!("{} {index}", sample.name);
    Some(finding.with_evidence(&t!(
        "live_evidence_accel.health",
        who = who,
        tool = tool,
        state = word
    )))
}

/// `accel_unsupported_output` for a host whose link reported its vendor tool unreadable;
/// `None` for any other failure text.
pub fn unsupported_output(raw: &str) -> Option<Finding> {
    let rest = raw.strip_prefix(UNSUPPORTED_PREFIX)?;
    let (tool, vendor) = TOOLS
        .iter()
        .find(|(tool, _)| rest.starts_with(tool))
        .copied()?;
    let vendor = vendor.label();
    let mut finding = Finding::new(
        ACCEL_UNSUPPORTED_OUTPUT,
        Severity::Warning,
        t!("finding_text.accel_unsupported.summary", tool = tool),
        t!(
            "finding_text.accel_unsupported.action",
            tool = tool,
            vendor = vendor
        ),
    );
    for line in raw.lines() {
        finding.add_evidence(line);
    }
    Some(finding)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fleet::history::History;
    use crate::telemetry::GpuSample;
    use crate::telemetry::accel::Vendor;

    fn npu(health: Option<Health>) -> GpuState {
        GpuState {
            latest: GpuSample {
                index: 3,
                vendor: Vendor::Huawei,
                name: "910B1".into(),
                bus_id: "0000:C1:00.0".into(),
                health,
                ..GpuSample::default()
            },
            at_ms: 0,
            history: History::with_capacity(4),
        }
    }

    #[test]
    fn an_npu_in_alarm_is_critical_and_the_action_names_huawei_and_the_command() {
        let f = health(&npu(Some(Health::Alarm))).expect("finding");
        assert_eq!(
            (f.label.as_str(), f.severity),
            (ACCEL_HEALTH, Severity::Critical)
        );
        assert_eq!(f.gpu, Some(3));
        assert!(f.action.contains("Huawei Ascend"), "{}", f.action);
        assert!(
            f.action.contains("npu-smi info -t health -i 3"),
            "{}",
            f.action
        );
        assert!(f.evidence[0].contains("Alarm"), "{:?}", f.evidence);
        let w = health(&npu(Some(Health::Warning))).expect("finding");
        assert_eq!(w.severity, Severity::Warning);
    }

    #[test]
    fn ok_or_no_health_word_is_no_finding() {
        assert!(health(&npu(Some(Health::Ok))).is_none());
        assert!(health(&npu(None)).is_none());
    }

    #[test]
    fn unsupported_output_names_the_tool_and_vendor_with_the_first_lines() {
        let raw = "unsupported output from npu-smi 99.1: unknown table header; first lines: a | b";
        let f = unsupported_output(raw).expect("finding");
        assert_eq!(f.label, ACCEL_UNSUPPORTED_OUTPUT);
        assert!(f.summary.contains("npu-smi"), "{}", f.summary);
        assert!(f.action.contains("Huawei Ascend"), "{}", f.action);
        assert!(
            f.evidence[0].contains("first lines: a | b"),
            "{:?}",
            f.evidence
        );
        assert!(unsupported_output("nvidia-smi exited with status 9").is_none());
        assert!(unsupported_output("unsupported output from bash").is_none());
    }
}
