//! The wording of the host-side findings that are not Xids: the driver bringing up the card,
//! PCIe errors, the fabric manager, NVML in containers and the container runtime. Kept apart
//! from [`crate::diagnose::labels`] only for size; the same rules hold (one place per label).

use crate::diagnose::finding::{Finding, Severity, label, runbook};

const INIT_ACTION: &str = "A host fault, not your code: reboot the instance once (a GPU left in a \
    bad state by an earlier crash can recover). If the GPU still fails to initialise, release the \
    host and rent another; give the provider these kernel lines and `nvidia-smi` output.";

pub fn gpu_init_failed() -> Finding {
    Finding::new(
        label::GPU_INIT_FAILED,
        Severity::Critical,
        "The NVIDIA driver failed to initialise a GPU (RmInitAdapter failed): the GPU is missing \
         from nvidia-smi and no program can use it.",
        INIT_ACTION,
    )
    .with_runbook(runbook::GPU_LOST)
}

pub fn gpu_init_failed_gsp() -> Finding {
    Finding::new(
        label::GPU_INIT_FAILED_GSP,
        Severity::Critical,
        "The GPU's system processor (GSP) firmware could not be started, so the driver could not \
         initialise the GPU (often a GPU left in a bad state that needs a reset).",
        INIT_ACTION,
    )
    .with_runbook(runbook::GPU_LOST)
}

pub fn gpu_init_failed_gfw_boot() -> Finding {
    Finding::new(
        label::GPU_INIT_FAILED_GFW_BOOT,
        Severity::Critical,
        "The GPU's own boot firmware (GFW_BOOT) never reported ready, so the driver gave up on \
         the GPU: a hardware, VBIOS or power problem of the card.",
        INIT_ACTION,
    )
    .with_runbook(runbook::GPU_LOST)
}

pub fn driver_probe_failed() -> Finding {
    Finding::new(
        label::DRIVER_PROBE_FAILED,
        Severity::Critical,
        "The NVIDIA driver's probe failed for a GPU (none or not all of the GPUs were \
         initialised).",
        "Reboot the instance; if the GPU stays missing, release the host and rent another, with \
         these kernel lines for the provider.",
    )
    .with_runbook(runbook::GPU_LOST)
}

pub fn nouveau_conflict() -> Finding {
    Finding::new(
        label::NOUVEAU_CONFLICT,
        Severity::Critical,
        "Another driver (usually the open-source nouveau) holds the GPU, so the NVIDIA driver's \
         probe routine never ran for it.",
        "The image is misconfigured, not the GPU: blacklist nouveau (`modprobe.blacklist=nouveau`, \
         rebuild the initramfs) and reboot, or ask the provider for an image with the NVIDIA \
         driver set up.",
    )
    .with_runbook(runbook::DRIVER_LOST)
}

pub fn pcie_aer(fatal: bool) -> Finding {
    if fatal {
        return Finding::new(
            label::PCIE_AER_FATAL,
            Severity::Critical,
            "The PCIe link to a GPU reported an uncorrectable error; the GPU usually falls off the \
             bus right after.",
            "A host fault: reboot the instance, and if it recurs release the host and rent \
             another; give the provider these AER lines (bad riser, slot or card).",
        )
        .with_runbook(runbook::GPU_LOST);
    }
    Finding::new(
        label::PCIE_AER,
        Severity::Warning,
        "The PCIe link to a GPU reported corrected errors: data got through, but the link is \
         marginal.",
        "Nothing to do for a few; if they keep coming (or the GPU later falls off the bus), report \
         the host to the provider with these lines and rent another.",
    )
}

pub fn fabric_manager() -> Finding {
    Finding::new(
        label::FABRIC_MANAGER,
        Severity::Critical,
        "The NVIDIA fabric manager (needed by NVSwitch machines such as HGX A100/H100/H200/B200) \
         failed, so the GPUs cannot use NVLink and CUDA may refuse to start.",
        "On a rented host this is the provider's setup: check `systemctl status \
         nvidia-fabricmanager` (its version must match the driver's); if you cannot fix it, \
         ask the provider or rent another host.",
    )
}

pub fn fabric_manager_not_ready() -> Finding {
    Finding::new(
        label::FABRIC_MANAGER_NOT_READY,
        Severity::Critical,
        "CUDA reports \"system not yet initialized\" (error 802): on NVSwitch machines the fabric \
         manager is not running or does not match the driver.",
        "Start the fabric manager (`systemctl start nvidia-fabricmanager`, same version as the \
         driver) and retry; if you cannot, ask the provider or rent another host.",
    )
}

pub fn nvml_error_unknown() -> Finding {
    Finding::new(
        label::NVML_ERROR_UNKNOWN,
        Severity::Warning,
        "NVML failed to initialise with \"Unknown Error\". Inside a container this is the \
         container losing its GPU device nodes (after a `systemctl daemon-reload` on the host, \
         for instance); the GPUs themselves may be fine.",
        "Restart or recreate the container. If `nvidia-smi` on the host itself fails the same \
         way, look at the kernel log for Xid lines and reboot the instance.",
    )
}

pub fn container_no_gpu_runtime() -> Finding {
    Finding::new(
        label::CONTAINER_NO_GPU_RUNTIME,
        Severity::Warning,
        "The container runtime cannot give containers a GPU (\"could not select device driver\"): \
         the NVIDIA container toolkit is missing or not configured. The GPUs are not at fault.",
        "Install and configure nvidia-container-toolkit (`nvidia-ctk runtime configure`, then \
         restart docker), or ask the provider for an image where containers get GPUs.",
    )
}

pub fn nvswitch_sxid_nonfatal() -> Finding {
    Finding::new(
        label::NVSWITCH_SXID,
        Severity::Info,
        "An NVSwitch (the NVLink fabric of HGX machines) reported a non-fatal error (SXid); \
         NVLink traffic goes on.",
        "Nothing to do while jobs run normally; if they repeat or jobs hang in NVLink \
         collectives, report the host to the provider with these lines.",
    )
}

pub fn nvswitch_sxid_fatal() -> Finding {
    Finding::new(
        label::NVSWITCH_SXID_FATAL,
        Severity::Critical,
        "An NVSwitch reported a fatal error (SXid): NVLink traffic through it stalls, and the \
         GPUs' jobs abort (usually with Xid 45).",
        "Reboot the instance to reset the GPUs and NVSwitches; if it recurs, release the host \
         and rent another, giving the provider these lines.",
    )
    .with_runbook(runbook::GPU_LOST)
}

pub fn gsp_timeout() -> Finding {
    Finding::new(
        label::GSP_TIMEOUT,
        Severity::Critical,
        "The GPU's system processor (GSP) stopped answering the driver (heartbeat or RPC \
         timeout); nvidia-smi and programs may hang.",
        "Stop the jobs on this GPU and reboot the instance. If it recurs on this host, release \
         it and rent another, giving the provider these kernel lines.",
    )
    .with_runbook(runbook::GPU_LOST)
}
