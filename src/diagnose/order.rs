//! Root cause first: where a finding sits in the chain from the PCIe bus to the program, so that
//! a report lists a lost GPU before the NCCL timeout it caused.

use crate::diagnose::finding::{Finding, Findings, label};

/// The findings, most severe first; within a severity, root causes before what they cause
/// ([`tier`]: the bus, the card's hardware, its bring-up, then the GPU, then the program, then
/// NCCL); ties keep the order they were first seen in.
pub fn root_cause_first(findings: Findings) -> Vec<Finding> {
    let mut items = findings.into_items();
    items.sort_by_key(|f| (std::cmp::Reverse(f.severity), tier(&f.label)));
    items
}

/// The place of `label` in the causal chain; lower comes first. Within one severity the
/// report lists findings in this order.
///
/// 0. the bus: PCIe AER and a GPU that fell off the bus;
/// 1. the card's own hardware failing under the driver: uncorrectable memory errors (Xid 48,
///    64, 95, 140) and the GSP firmware timing out or crashing (Xid 119, 120). A driver that meets
///    them while bringing the card up then fails to (RmInitAdapter, GFW_BOOT), so they come
///    before the bring-up failures they explain;
/// 2. the driver's bring-up of the card (RmInitAdapter, GSP boot, GFW_BOOT, nouveau, probe
///    failures);
/// 3. the driver and the GPU otherwise (other Xids, NVLink, fabric manager, NVML failures,
///    clocks);
/// 4. the container runtime and the program's CUDA errors, and what a container lacks (shared
///    memory, disk, the GPU it asks for; they follow from the above when those are present);
/// 5. NCCL, which reports the failure of whichever rank broke first;
/// 6. billing and data freshness, and what a training job's log shows (a crash follows from
///    the program's errors above it; a plateau causes nothing; a diverged loss is the job's
///    own).
pub fn tier(name: &str) -> u8 {
    const BUS: &[&str] = &[
        label::PCIE_AER_FATAL,
        label::PCIE_AER,
        label::GPU_LOST,
        "xid_79",
    ];
    if BUS.contains(&name) {
        return 0;
    }
    const HARDWARE: &[&str] = &[
        label::ECC_UNCORRECTABLE,
        label::GSP_TIMEOUT,
        label::GSP_ERROR,
        "xid_48",
        "xid_64",
        "xid_95",
        "xid_140",
        "xid_119",
        "xid_120",
    ];
    if HARDWARE.contains(&name) {
        return 1;
    }
    const BRING_UP: &[&str] = &[
        label::GPU_INIT_FAILED_GFW_BOOT,
        label::GPU_INIT_FAILED_GSP,
        label::GPU_INIT_FAILED,
        label::NOUVEAU_CONFLICT,
        label::DRIVER_PROBE_FAILED,
    ];
    if BRING_UP.contains(&name) {
        return 2;
    }
    if name.starts_with("nccl") {
        return 5;
    }
    const PROGRAM: &[&str] = &[
        label::OOM,
        label::CONTAINER_NO_GPU_RUNTIME,
        label::DRIVER_TOO_OLD,
        label::DRIVER_TOO_OLD_COMPAT,
        label::SHM_TOO_SMALL,
        label::DISK_FULL,
        label::INVALID_DEVICE_ORDINAL,
        label::NO_CUDA_GPUS,
        label::CUBLAS_INIT_FAILED,
        label::DISK_NEARLY_FULL,
        label::SHM_SMALL,
    ];
    if name.starts_with("cuda_") || PROGRAM.contains(&name) {
        return 4;
    }
    if name == label::IDLE_BILLING
        || name == label::STALE
        || name == label::JOB_FINISHED
        || name == label::LOSS_NAN
        || name.starts_with("training_")
    {
        return 6;
    }
    3
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bus_comes_before_the_gpu_the_program_and_nccl() {
        let chain = [
            label::PCIE_AER,
            "xid_79",
            "xid_48",
            label::CUDA_ILLEGAL_ADDRESS,
            label::NCCL_TIMEOUT,
            label::IDLE_BILLING,
        ];
        let tiers: Vec<u8> = chain.iter().map(|l| tier(l)).collect();
        assert!(tiers.windows(2).all(|w| w[0] <= w[1]), "{tiers:?}");
        assert!(tier(label::GPU_LOST) < tier(label::NCCL_ERROR));
        // The card's memory and GSP failing explain a bring-up that fails after them.
        for cause in [
            label::ECC_UNCORRECTABLE,
            label::GSP_ERROR,
            "xid_48",
            "xid_119",
        ] {
            assert!(
                tier(cause) < tier(label::GPU_INIT_FAILED_GFW_BOOT),
                "{cause}"
            );
            assert!(tier(cause) < tier(label::GPU_INIT_FAILED), "{cause}");
        }
    }

    #[test]
    fn reports_list_the_gravest_first_then_root_causes_then_first_seen() {
        use crate::diagnose::finding::Severity;
        let mut all = Findings::default();
        all.push(Finding::new(
            label::NCCL_TIMEOUT,
            Severity::Critical,
            "",
            "",
        ));
        all.push(Finding::new(label::IDLE_BILLING, Severity::Warning, "", ""));
        all.push(Finding::new("xid_48", Severity::Critical, "", ""));
        all.push(Finding::new(label::GPU_LOST, Severity::Critical, "", ""));
        all.push(Finding::new("xid_13", Severity::Critical, "", ""));
        let labels: Vec<String> = root_cause_first(all).into_iter().map(|f| f.label).collect();
        assert_eq!(
            labels,
            [
                label::GPU_LOST,
                "xid_48",
                "xid_13",
                label::NCCL_TIMEOUT,
                label::IDLE_BILLING
            ]
        );
    }
}
