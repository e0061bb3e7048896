//! The Xid catalog, kept as data: what each NVIDIA Xid means, NVIDIA's immediate action for
//! it, and what a tenant of a rented host should do.
//!
//! Source: [`SOURCE`], as of [`SOURCE_DATE`]. Meanings and buckets follow NVIDIA's Xid catalog
//! (Ampere and newer) and the r555 Xid table as summarised in `shared/research/faults.md`
//! section 1. NVIDIA's RESET_GPU / RESTART_BM buckets become "reboot the instance" here,
//! because a tenant usually cannot reset bare metal; recurrence becomes "release the host and
//! rent another".

use crate::diagnose::finding::{Finding, Severity, runbook, xid_label};

/// One catalog entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct XidInfo {
    pub code: u32,
    /// NVIDIA's mnemonic, e.g. `ROBUST_CHANNEL_GPU_HAS_FALLEN_OFF_THE_BUS`; empty where the
    /// research notes did not record one.
    pub mnemonic: &'static str,
    /// What it means, in plain words.
    pub meaning: &'static str,
    pub severity: Severity,
    /// What to do on a rented host.
    pub action: &'static str,
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

const APP_FAULT: &str = "Not a host fault by itself: restart the application (run it under \
    compute-sanitizer to find the bad access). Only if it repeats on this GPU with different, \
    known-good programs, suspect the hardware and rent another host.";
const REBOOT_THEN_REPLACE: &str = "Stop the jobs on this GPU and reboot the instance to reset it \
    (with root on bare metal and nothing using the GPU, `nvidia-smi -r -i <gpu>` also works). \
    If it recurs on this host, release the host and rent another.";
const MEMORY_REPLACE: &str = "Stop the jobs on this GPU and reboot the instance to reset it. If \
    it recurs on this host, release the host and rent another: repeated memory faults are an \
    RMA case.";

const fn entry(
    code: u32,
    mnemonic: &'static str,
    meaning: &'static str,
    severity: Severity,
    action: &'static str,
    runbook: Option<&'static str>,
) -> XidInfo {
    XidInfo {
        code,
        mnemonic,
        meaning,
        severity,
        action,
        runbook,
    }
}

use Severity::{Critical, Info, Warning};

const CATALOG: &[XidInfo] = &[
    entry(
        8,
        "ROBUST_CHANNEL_FIFO_ERROR_IDLE_TIMEOUT",
        "GPU stopped processing (channel idle timeout).",
        Warning,
        "Restart the application; if it repeats with known-good code, rent another host.",
        None,
    ),
    entry(
        13,
        "ROBUST_CHANNEL_GR_EXCEPTION",
        "Graphics engine exception, most often an application bug (out-of-bounds access, \
         illegal instruction).",
        Warning,
        APP_FAULT,
        None,
    ),
    entry(
        31,
        "ROBUST_CHANNEL_FIFO_ERROR_MMU_ERR_FLT",
        "GPU memory page fault: a program used an illegal address.",
        Warning,
        APP_FAULT,
        None,
    ),
    entry(
        32,
        "ROBUST_CHANNEL_PBDMA_ERROR",
        "Invalid or corrupted push buffer stream; NVIDIA attributes these mainly to PCIe quality \
         problems, not to the application.",
        Warning,
        "Restart the application; if it repeats, report the host to the provider and rent \
         another.",
        None,
    ),
    entry(
        38,
        "ROBUST_CHANNEL_FECS_ERR_WATCHDOG_TIMEOUT",
        "Driver firmware error (FECS watchdog timeout).",
        Warning,
        "Note it; if it repeats, the driver or the host is at fault: ask the provider or rent \
         another host.",
        None,
    ),
    entry(
        43,
        "ROBUST_CHANNEL_RESETCHANNEL_VERIF_ERROR",
        "GPU stopped processing: an application hit a software-induced fault and had to end; \
         the GPU itself remains healthy.",
        Info,
        "No host action: fix or restart the application.",
        None,
    ),
    entry(
        45,
        "ROBUST_CHANNEL_PREEMPTIVE_REMOVAL",
        "Preemptive cleanup after earlier errors, or after a process was killed (Ctrl-C, \
         SIGKILL, GPU reset); usually not a fault by itself.",
        Info,
        "Act on the Xid it follows (newer drivers print \"caused by previous Xid N\"); alone, \
         no action is needed.",
        None,
    ),
    entry(
        46,
        "",
        "GPU stopped processing; NVIDIA's action is a GPU reset.",
        Critical,
        REBOOT_THEN_REPLACE,
        Some(runbook::GPU_LOST),
    ),
    entry(
        48,
        "ROBUST_CHANNEL_GPU_ECC_DBE",
        "Double-bit ECC error: an uncorrectable GPU memory error; a GPU reset or reboot is \
         needed to clear it.",
        Critical,
        MEMORY_REPLACE,
        Some(runbook::ECC_REMAP),
    ),
    entry(
        54,
        "",
        "Auxiliary power is not connected to the GPU.",
        Critical,
        "A hardware problem only the provider can fix: release the host and rent another.",
        None,
    ),
    entry(
        61,
        "PMU_BREAKPOINT",
        "Internal micro-controller breakpoint or warning (unused on Ampere and newer).",
        Critical,
        REBOOT_THEN_REPLACE,
        Some(runbook::GPU_LOST),
    ),
    entry(
        62,
        "PMU_HALT_ERROR",
        "Internal micro-controller halt.",
        Critical,
        REBOOT_THEN_REPLACE,
        Some(runbook::GPU_LOST),
    ),
    entry(
        63,
        "INFOROM_DRAM_RETIREMENT_EVENT",
        "A GPU memory row was marked for remapping (or a page retired); it takes effect at the \
         next GPU reset.",
        Info,
        "Nothing urgent: reboot the instance when the GPU is idle so the remap takes effect.",
        Some(runbook::ECC_REMAP),
    ),
    entry(
        64,
        "INFOROM_DRAM_RETIREMENT_FAILURE",
        "GPU memory row remapping or page retirement failed.",
        Critical,
        MEMORY_REPLACE,
        Some(runbook::ECC_REMAP),
    ),
    entry(
        68,
        "ROBUST_CHANNEL_NVDEC0_ERROR",
        "Video decoder (NVDEC) exception.",
        Warning,
        "Restart the application; if it repeats, rent another host.",
        None,
    ),
    entry(
        69,
        "ROBUST_CHANNEL_GR_CLASS_ERROR",
        "Graphics engine class error.",
        Warning,
        "Restart the application; if it repeats, rent another host.",
        None,
    ),
    entry(
        74,
        "NVLINK_ERROR",
        "NVLink error; a GPU reset or reboot is needed to clear it, and the fault may be at the \
         device on the other end of the link.",
        Critical,
        "Reboot the instance and check `nvidia-smi nvlink -s`; if it repeats after the reboot, \
         release the host and rent another.",
        Some(runbook::GPU_LOST),
    ),
    entry(
        79,
        "ROBUST_CHANNEL_GPU_HAS_FALLEN_OFF_THE_BUS",
        "The GPU has fallen off the bus: the PCIe link or the GPU failed, and the GPU cannot be \
         used until the host restarts.",
        Critical,
        "Reboot the instance (a GPU reset cannot bring it back). If it falls off again on this \
         host, release the host and rent another, and give the provider the Xid lines.",
        Some(runbook::GPU_LOST),
    ),
    entry(
        92,
        "EXCESSIVE_SBE_INTERRUPTS",
        "High rate of single-bit (corrected) ECC errors.",
        Warning,
        "Keep watching; if it persists, rent another host.",
        Some(runbook::ECC_REMAP),
    ),
    entry(
        94,
        "ROBUST_CHANNEL_CONTAINED_ERROR",
        "Contained uncorrectable memory error: only one application was affected.",
        Warning,
        "Restart the application; reboot the instance (GPU reset) when convenient.",
        Some(runbook::ECC_REMAP),
    ),
    entry(
        95,
        "ROBUST_CHANNEL_UNCONTAINED_ERROR",
        "Uncontained uncorrectable memory error: several applications may be affected, and the \
         GPU must be reset before any application restarts.",
        Critical,
        MEMORY_REPLACE,
        Some(runbook::ECC_REMAP),
    ),
    entry(
        109,
        "",
        "Context switch timeout; NVIDIA's action is a GPU reset.",
        Critical,
        REBOOT_THEN_REPLACE,
        Some(runbook::GPU_LOST),
    ),
    entry(
        110,
        "",
        "Security fault; NVIDIA asks for a cold reset of the system.",
        Critical,
        REBOOT_THEN_REPLACE,
        Some(runbook::GPU_LOST),
    ),
    entry(
        119,
        "GSP_RPC_TIMEOUT",
        "The GPU's system processor (GSP) stopped answering; nvidia-smi may hang meanwhile.",
        Critical,
        REBOOT_THEN_REPLACE,
        Some(runbook::GPU_LOST),
    ),
    entry(
        120,
        "GSP_ERROR",
        "Error in the GPU's system processor (GSP).",
        Critical,
        REBOOT_THEN_REPLACE,
        Some(runbook::GPU_LOST),
    ),
    entry(
        121,
        "C2C_ERROR",
        "Corrected errors on the C2C link to the Grace CPU (GB200); no operational impact.",
        Info,
        "Nothing now; a reboot while idle retrains the link.",
        None,
    ),
    entry(
        140,
        "UNRECOVERABLE_ECC_ERROR_ESCAPE",
        "Unrecovered ECC error.",
        Critical,
        MEMORY_REPLACE,
        Some(runbook::ECC_REMAP),
    ),
    entry(
        143,
        "",
        "GPU initialization error.",
        Critical,
        REBOOT_THEN_REPLACE,
        Some(runbook::GPU_LOST),
    ),
    entry(
        171,
        "",
        "Uncorrectable GPU DRAM error, reported in addition to Xid 48 on newer GPUs.",
        Critical,
        MEMORY_REPLACE,
        Some(runbook::ECC_REMAP),
    ),
    entry(
        172,
        "",
        "Uncorrectable GPU SRAM error, reported in addition to Xid 48 on newer GPUs.",
        Critical,
        MEMORY_REPLACE,
        Some(runbook::ECC_REMAP),
    ),
    entry(
        154,
        "GPU_RECOVERY_ACTION_CHANGED",
        "The driver changed the GPU's recovery action; it always accompanies another Xid.",
        Warning,
        "Follow the recovery action it names.",
        None,
    ),
];

/// NVLink5 Xids 144-150 share one meaning; the registers in the message tell them apart.
const NVLINK5: XidInfo = entry(
    144,
    "",
    "NVLink5 error (decode the IntrInfo/ErrorStatus registers in the message).",
    Warning,
    "If the message says Fatal or it repeats, reboot the instance; if it recurs, rent another \
     host.",
    None,
);

/// The catalog entry for `code`, when gpufleet knows it.
pub fn lookup(code: u32) -> Option<XidInfo> {
    if (144..=150).contains(&code) {
        return Some(XidInfo { code, ..NVLINK5 });
    }
    CATALOG.iter().find(|x| x.code == code).copied()
}

/// The finding for one Xid, from the catalog or a generic one for codes it lacks.
pub fn finding(code: u32) -> Finding {
    let label = xid_label(code);
    match lookup(code) {
        Some(info) => {
            let name = if info.mnemonic.is_empty() {
                format!("Xid {code}")
            } else {
                format!("Xid {code} ({})", info.mnemonic)
            };
            let nvidia = nvidia_action(code)
                .map(|a| format!(" NVIDIA's immediate action: {a}."))
                .unwrap_or_default();
            let f = Finding::new(
                label,
                info.severity,
                format!("{name}: {}{nvidia}", info.meaning),
                info.action,
            );
            match info.runbook {
                Some(id) => f.with_runbook(id),
                None => f,
            }
        }
        None => Finding::new(
            label,
            Severity::Warning,
            format!("Xid {code}: not in gpufleet's catalog."),
            "Look the code up in NVIDIA's Xid catalog; if it repeats, reboot the instance, and \
             if it persists, rent another host.",
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
