//! The GPU recovery action: what the driver says must happen before a GPU is usable again
//! (announced by Xid 154, shown as `GPU Recovery Action` in `nvidia-smi -q`); when present it
//! outranks the Xid catalog's advice.

use std::borrow::Cow;

use rust_i18n::t;

use crate::diagnose::finding::{Finding, Severity, runbook};

/// What the driver says must happen before the GPU is usable again (Xid 154, `GPU Recovery
/// Action` in `nvidia-smi -q`). NVML numbers them 0-4 (plus 5-7 on newer drivers).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RecoveryAction {
    None,
    GpuReset,
    NodeReboot,
    DrainP2p,
    DrainAndReset,
}

impl RecoveryAction {
    /// Reads the target of `... recovery action changed from 0x0 (None) to 0x2 (Node Reboot
    /// Required)`. Names vary by driver (`OS Reboot`, `PF FLR`), so the name is read for its
    /// words and the number is the fallback.
    pub fn from_message(message: &str) -> Option<Self> {
        let lower = message.to_ascii_lowercase();
        let at = lower.rfind(" to ")?;
        let target = lower[at + 4..].trim();
        let name = target
            .split_once('(')
            .and_then(|(_, rest)| rest.split_once(')'))
            .map(|(name, _)| name.trim());
        if let Some(action) = name.and_then(Self::from_name) {
            return Some(action);
        }
        let hex = target
            .strip_prefix("0x")?
            .split(|c: char| !c.is_ascii_hexdigit())
            .next()?;
        match u32::from_str_radix(hex, 16).ok()? {
            0 => Some(Self::None),
            1 | 6 => Some(Self::GpuReset),
            2 | 7 => Some(Self::NodeReboot),
            3 => Some(Self::DrainP2p),
            4 => Some(Self::DrainAndReset),
            _ => Option::None,
        }
    }

    fn from_name(name: &str) -> Option<Self> {
        if name.contains("reboot") {
            Some(Self::NodeReboot)
        } else if name.contains("drain") && name.contains("reset") {
            Some(Self::DrainAndReset)
        } else if name.contains("drain") {
            Some(Self::DrainP2p)
        } else if name.contains("reset") || name.contains("flr") {
            Some(Self::GpuReset)
        } else if name == "none" {
            Some(Self::None)
        } else {
            Option::None
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Self::None => "None",
            Self::GpuReset => "GPU Reset Required",
            Self::NodeReboot => "Node Reboot Required",
            Self::DrainP2p => "Drain P2P",
            Self::DrainAndReset => "Drain and Reset",
        }
    }

    pub fn severity(self) -> Severity {
        match self {
            Self::None => Severity::Info,
            Self::DrainP2p | Self::DrainAndReset => Severity::Warning,
            Self::GpuReset | Self::NodeReboot => Severity::Critical,
        }
    }

    /// The action on a rented host; `None` when the driver asks for nothing.
    pub fn action(self) -> Option<Cow<'static, str>> {
        match self {
            Self::None => Option::None,
            Self::GpuReset => Some(t!("finding_text.recovery.gpu_reset")),
            Self::NodeReboot => Some(t!("finding_text.recovery.node_reboot")),
            Self::DrainP2p => Some(t!("finding_text.recovery.drain_p2p")),
            Self::DrainAndReset => Some(t!("finding_text.recovery.drain_and_reset")),
        }
    }

    pub fn runbook(self) -> Option<&'static str> {
        match self {
            Self::None | Self::DrainP2p => Option::None,
            Self::GpuReset | Self::NodeReboot | Self::DrainAndReset => Some(runbook::GPU_LOST),
        }
    }

    /// Rewrites `finding` so the driver's verdict outranks the catalog's advice.
    pub fn apply_to(self, finding: &mut Finding) {
        let Some(action) = self.action() else {
            return;
        };
        finding.action = action.into_owned();
        finding.severity = finding.severity.max(self.severity());
        finding.runbook = self.runbook().map(str::to_string);
        finding.summary = t!(
            "finding_text.recovery.summary",
            summary = finding.summary,
            name = self.name()
        )
        .into_owned();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recovery_action_reads_names_and_numbers() {
        let cases = [
            (
                "changed from 0x0 (None) to 0x2 (Node Reboot Required)",
                RecoveryAction::NodeReboot,
            ),
            (
                "changed from 0x0 (None) to 0x2 (OS Reboot)",
                RecoveryAction::NodeReboot,
            ),
            (
                "changed from 0x0 (None) to 0x1 (PF FLR)",
                RecoveryAction::GpuReset,
            ),
            (
                "changed from 0x0 (None) to 0x4 (Drain and Reset)",
                RecoveryAction::DrainAndReset,
            ),
            (
                "changed from 0x1 (GPU Reset Required) to 0x0 (None)",
                RecoveryAction::None,
            ),
            ("changed from 0x0 to 0x3", RecoveryAction::DrainP2p),
        ];
        for (text, want) in cases {
            assert_eq!(RecoveryAction::from_message(text), Some(want), "{text}");
        }
        assert_eq!(RecoveryAction::from_message("154 ("), None);
    }
}
