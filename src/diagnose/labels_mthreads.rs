//! The wording of the findings from Moore Threads' kernel driver (`mtgpu`), matched on the
//! lines of its published kernel log (tests/fixtures/accel/mthreads-kernel-dmesg-01.txt): the
//! end marker of the driver's GPU debug dump (`MTGPU DBG: END`), which it prints when a GPU
//! job faults or locks up, and a kernel `WARNING` raised inside the module (`[mtgpu]`).

use rust_i18n::t;

use crate::diagnose::finding::{Finding, Severity, runbook};

/// The `mtgpu` driver dumped a GPU's state or warned: the GPU faulted or hung on its work.
pub const MTGPU_FAULT: &str = "mtgpu_fault";

pub fn mtgpu_fault() -> Finding {
    Finding::new(
        MTGPU_FAULT,
        Severity::Critical,
        t!("label_mthreads.mtgpu_fault.summary"),
        t!("label_mthreads.mtgpu_fault.action"),
    )
    .with_runbook(runbook::GPU_LOST)
}
