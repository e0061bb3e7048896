//! The Xid catalog, kept as data: what each NVIDIA Xid means, NVIDIA's immediate action for
//! it, and what a tenant of a rented host should do.
//!
//! Source: [`SOURCE`], as of [`SOURCE_DATE`]. Meanings and buckets follow NVIDIA's Xid catalog
//! (Ampere and newer) and NVIDIA's r555 Xid table. NVIDIA's RESET_GPU / RESTART_BM buckets become "reboot the instance" here,
//! because a tenant usually cannot reset bare metal; recurrence becomes "release the host and
//! rent another".

use crate::words::Words;

use crate::diagnose::finding::{Finding, Severity, runbook, xid_label};

/// One catalog entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct XidInfo {
    pub code: u32,
    /// NVIDIA's mnemonic, e.g. `ROBUST_CHANNEL_GPU_HAS_FALLEN_OFF_THE_BUS`; empty where the
    /// catalogue gives none.
    pub mnemonic: &'static str,
    /// The catalogue key of what it means, in plain words ([`XidInfo::meaning`] reads it).
    pub meaning_key: &'static str,
    pub severity: Severity,
    /// The catalogue key of what to do on a rented host ([`XidInfo::action`] reads it).
    pub action_key: &'static str,
    pub runbook: Option<&'static str>,
}

/// Where the catalog's facts come from.
pub const SOURCE: &str = "NVIDIA, \"Analyzing Xid Errors with the Xid Catalog\", \
    https://docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html (spreadsheet \
    https://docs.nvidia.com/Xid-Catalog.xlsx); NVIDIA \"XID Errors\" r555, \
    https://docs.nvidia.com/deploy/xid-errors/index.html";

/// The date of the copy of the catalog the entries were checked against (the generated copy
/// in leptonai/gpud, "Generated at 2025-10-29", and the r555 table of 2024-09-24).
pub const SOURCE_DATE: &str = "2025-10-29";

/// NVIDIA's immediate action ("resolution bucket") per Xid, from the catalog's "Resolution
/// Bucket (Immediate Action)" column; 144-150 share the NVLink5 decode workflow.
const NVIDIA_ACTIONS: &[(u32, &str)] = &[
    (8, "RESTART_APP"),
    (13, "RESTART_APP"),
    (31, "RESTART_APP"),
    (32, "RESTART_APP"),
    (38, "IGNORE"),
    (43, "IGNORE"),
    (45, "WORKFLOW_XID_45"),
    (46, "RESET_GPU"),
    (48, "WORKFLOW_XID_48"),
    (54, "CHECK_MECHANICALS"),
    (61, "CONTACT_SUPPORT"),
    (62, "RESET_GPU"),
    (63, "IGNORE"),
    (64, "RESET_GPU"),
    (68, "RESTART_APP"),
    (69, "RESTART_APP"),
    (74, "WORKFLOW_NVLINK_ERR"),
    (79, "RESTART_BM"),
    (92, "IGNORE"),
    (94, "RESTART_APP"),
    (95, "RESET_GPU"),
    (109, "RESET_GPU"),
    (110, "RESET_GPU"),
    (119, "RESET_GPU"),
    (120, "RESET_GPU"),
    (121, "IGNORE"),
    (140, "RESET_GPU"),
    (143, "RESET_GPU"),
    (154, "XID_154"),
];

/// NVIDIA's immediate action for `code`, when the catalog copy records one.
pub fn nvidia_action(code: u32) -> Option<&'static str> {
    if (144..=150).contains(&code) {
        return Some("XID_144_150_DECODE");
    }
    NVIDIA_ACTIONS
        .iter()
        .find(|(c, _)| *c == code)
        .map(|(_, a)| *a)
}

const fn entry(
    code: u32,
    mnemonic: &'static str,
    meaning_key: &'static str,
    severity: Severity,
    action_key: &'static str,
    runbook: Option<&'static str>,
) -> XidInfo {
    XidInfo {
        code,
        mnemonic,
        meaning_key,
        severity,
        action_key,
        runbook,
    }
}

use Severity::{Critical, Info, Warning};

const CATALOG: &[XidInfo] = &[
    entry(
        8,
        "ROBUST_CHANNEL_FIFO_ERROR_IDLE_TIMEOUT",
        "xid_text.x8.meaning",
        Warning,
        "xid_text.x8.action",
        None,
    ),
    entry(
        13,
        "ROBUST_CHANNEL_GR_EXCEPTION",
        "xid_text.x13.meaning",
        Warning,
        "xid_text.app_fault",
        None,
    ),
    entry(
        31,
        "ROBUST_CHANNEL_FIFO_ERROR_MMU_ERR_FLT",
        "xid_text.x31.meaning",
        Warning,
        "xid_text.app_fault",
        None,
    ),
    entry(
        32,
        "ROBUST_CHANNEL_PBDMA_ERROR",
        "xid_text.x32.meaning",
        Warning,
        "xid_text.x32.action",
        None,
    ),
    entry(
        38,
        "ROBUST_CHANNEL_FECS_ERR_WATCHDOG_TIMEOUT",
        "xid_text.x38.meaning",
        Warning,
        "xid_text.x38.action",
        None,
    ),
    entry(
        43,
        "ROBUST_CHANNEL_RESETCHANNEL_VERIF_ERROR",
        "xid_text.x43.meaning",
        Info,
        "xid_text.x43.action",
        None,
    ),
    entry(
        45,
        "ROBUST_CHANNEL_PREEMPTIVE_REMOVAL",
        "xid_text.x45.meaning",
        Info,
        "xid_text.x45.action",
        None,
    ),
    entry(
        46,
        "",
        "xid_text.x46.meaning",
        Critical,
        "xid_text.reboot_then_replace",
        Some(runbook::GPU_LOST),
    ),
    entry(
        48,
        "ROBUST_CHANNEL_GPU_ECC_DBE",
        "xid_text.x48.meaning",
        Critical,
        "xid_text.memory_replace",
        Some(runbook::ECC_REMAP),
    ),
    entry(
        54,
        "",
        "xid_text.x54.meaning",
        Critical,
        "xid_text.x54.action",
        None,
    ),
    entry(
        61,
        "PMU_BREAKPOINT",
        "xid_text.x61.meaning",
        Critical,
        "xid_text.reboot_then_replace",
        Some(runbook::GPU_LOST),
    ),
    entry(
        62,
        "PMU_HALT_ERROR",
        "xid_text.x62.meaning",
        Critical,
        "xid_text.reboot_then_replace",
        Some(runbook::GPU_LOST),
    ),
    entry(
        63,
        "INFOROM_DRAM_RETIREMENT_EVENT",
        "xid_text.x63.meaning",
        Info,
        "xid_text.x63.action",
        Some(runbook::ECC_REMAP),
    ),
    entry(
        64,
        "INFOROM_DRAM_RETIREMENT_FAILURE",
        "xid_text.x64.meaning",
        Critical,
        "xid_text.memory_replace",
        Some(runbook::ECC_REMAP),
    ),
    entry(
        68,
        "ROBUST_CHANNEL_NVDEC0_ERROR",
        "xid_text.x68.meaning",
        Warning,
        "xid_text.x68.action",
        None,
    ),
    entry(
        69,
        "ROBUST_CHANNEL_GR_CLASS_ERROR",
        "xid_text.x69.meaning",
        Warning,
        "xid_text.x69.action",
        None,
    ),
    entry(
        74,
        "NVLINK_ERROR",
        "xid_text.x74.meaning",
        Critical,
        "xid_text.x74.action",
        Some(runbook::GPU_LOST),
    ),
    entry(
        79,
        "ROBUST_CHANNEL_GPU_HAS_FALLEN_OFF_THE_BUS",
        "xid_text.x79.meaning",
        Critical,
        "xid_text.x79.action",
        Some(runbook::GPU_LOST),
    ),
    entry(
        92,
        "EXCESSIVE_SBE_INTERRUPTS",
        "xid_text.x92.meaning",
        Warning,
        "xid_text.x92.action",
        Some(runbook::ECC_REMAP),
    ),
    entry(
        94,
        "ROBUST_CHANNEL_CONTAINED_ERROR",
        "xid_text.x94.meaning",
        Warning,
        "xid_text.x94.action",
        Some(runbook::ECC_REMAP),
    ),
    entry(
        95,
        "ROBUST_CHANNEL_UNCONTAINED_ERROR",
        "xid_text.x95.meaning",
        Critical,
        "xid_text.memory_replace",
        Some(runbook::ECC_REMAP),
    ),
    entry(
        109,
        "",
        "xid_text.x109.meaning",
        Critical,
        "xid_text.reboot_then_replace",
        Some(runbook::GPU_LOST),
    ),
    entry(
        110,
        "",
        "xid_text.x110.meaning",
        Critical,
        "xid_text.reboot_then_replace",
        Some(runbook::GPU_LOST),
    ),
    entry(
        119,
        "GSP_RPC_TIMEOUT",
        "xid_text.x119.meaning",
        Critical,
        "xid_text.reboot_then_replace",
        Some(runbook::GPU_LOST),
    ),
    entry(
        120,
        "GSP_ERROR",
        "xid_text.x120.meaning",
        Critical,
        "xid_text.reboot_then_replace",
        Some(runbook::GPU_LOST),
    ),
    entry(
        121,
        "C2C_ERROR",
        "xid_text.x121.meaning",
        Info,
        "xid_text.x121.action",
        None,
    ),
    entry(
        140,
        "UNRECOVERABLE_ECC_ERROR_ESCAPE",
        "xid_text.x140.meaning",
        Critical,
        "xid_text.memory_replace",
        Some(runbook::ECC_REMAP),
    ),
    entry(
        143,
        "",
        "xid_text.x143.meaning",
        Critical,
        "xid_text.reboot_then_replace",
        Some(runbook::GPU_LOST),
    ),
    entry(
        171,
        "",
        "xid_text.x171.meaning",
        Critical,
        "xid_text.memory_replace",
        Some(runbook::ECC_REMAP),
    ),
    entry(
        172,
        "",
        "xid_text.x172.meaning",
        Critical,
        "xid_text.memory_replace",
        Some(runbook::ECC_REMAP),
    ),
    entry(
        154,
        "GPU_RECOVERY_ACTION_CHANGED",
        "xid_text.x154.meaning",
        Warning,
        "xid_text.x154.action",
        None,
    ),
];

/// NVLink5 Xids 144-150 share one meaning; the registers in the message tell them apart.
const NVLINK5: XidInfo = entry(
    144,
    "",
    "xid_text.nvlink5.meaning",
    Warning,
    "xid_text.nvlink5.action",
    None,
);

/// The catalog entry for `code`, when gpufleet knows it.
pub fn lookup(code: u32) -> Option<XidInfo> {
    if (144..=150).contains(&code) {
        return Some(XidInfo { code, ..NVLINK5 });
    }
    CATALOG.iter().find(|x| x.code == code).copied()
}

/// The finding for one Xid, from the catalog or a generic one for codes it lacks, in the
/// interface's language. NVIDIA's mnemonic and action bucket are NVIDIA's own identifiers and
/// stay as NVIDIA writes them.
pub fn finding(code: u32) -> Finding {
    let info = lookup(code);
    let (summary, action) = words(code);
    let f = Finding::new(
        xid_label(code),
        info.map_or(Severity::Warning, |info| info.severity),
        summary.localized(),
        action.localized(),
    );
    match info.and_then(|info| info.runbook) {
        Some(id) => f.with_runbook(id),
        None => f,
    }
}

/// What the Xid `code` means and what to do, as catalogue words: said in the interface's
/// language by [`finding`], in the provider's by the incident report's ticket.
pub fn words(code: u32) -> (Words, Words) {
    match lookup(code) {
        Some(info) => {
            let name = if info.mnemonic.is_empty() {
                Words::new("xid_text.name").put("code", code.to_string())
            } else {
                Words::new("xid_text.name_mnemonic")
                    .put("code", code.to_string())
                    .put("mnemonic", info.mnemonic)
            };
            let nvidia = match nvidia_action(code) {
                Some(a) => Words::new("xid_text.nvidia_action").put("action", a),
                None => Words::verbatim(""),
            };
            let summary = Words::new("xid_text.summary")
                .put_words("name", name)
                .put_words("meaning", Words::new(info.meaning_key))
                .put_words("nvidia", nvidia);
            (summary, Words::new(info.action_key))
        }
        None => (
            Words::new("xid_text.unknown_summary").put("code", code.to_string()),
            Words::new("xid_text.unknown_action"),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_the_issue_names_is_in_the_catalog() {
        for code in [
            13, 31, 32, 38, 43, 45, 48, 61, 62, 63, 64, 68, 69, 74, 79, 92, 94, 95, 119, 120, 121,
            140, 154,
        ] {
            assert!(lookup(code).is_some(), "Xid {code} missing");
        }
        assert_eq!(lookup(147).map(|x| x.code), Some(147));
        assert_eq!(finding(999).label, "xid_999");
    }

    #[test]
    fn every_entry_has_nvidias_action_and_the_source_is_dated() {
        for info in CATALOG {
            if info.code < 171 {
                assert!(nvidia_action(info.code).is_some(), "Xid {}", info.code);
            }
        }
        assert!(
            finding(79)
                .summary
                .ends_with("NVIDIA's immediate action: RESTART_BM.")
        );
        assert!(finding(172).summary.contains("SRAM"));
        assert!(SOURCE.contains("docs.nvidia.com"));
        assert_eq!(SOURCE_DATE.len(), "2025-10-29".len());
    }
}
