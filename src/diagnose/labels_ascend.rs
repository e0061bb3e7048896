//! The wording of Huawei Ascend failures from their published texts: `npu-smi` unable to open
//! the driver's management interface (dcmi, ret -8005) or finding the device in use (-8020), a
//! multi-bit HBM ECC error in an NPU's black-box log (`hisi_logs/device-N/.../kbox.txt`), and
//! the CANN runtime's lost heartbeat (EL0001). The same rules hold as in
//! [`crate::diagnose::labels`]: one place per label. The samples are in
//! tests/fixtures/accel/ with their sources.

use rust_i18n::t;

use crate::diagnose::finding::{Finding, Severity};

pub const NPU_DCMI_INIT_FAILED: &str = "npu_dcmi_init_failed";
pub const NPU_DEVICE_IN_USE: &str = "npu_device_in_use";
pub const NPU_HBM_ECC: &str = "npu_hbm_ecc";
pub const NPU_LOST_HEARTBEAT: &str = "npu_lost_heartbeat";

/// Every label of this file, for the live path that prefers them to "unsupported output".
pub const LABELS: [&str; 4] = [
    NPU_DCMI_INIT_FAILED,
    NPU_DEVICE_IN_USE,
    NPU_HBM_ECC,
    NPU_LOST_HEARTBEAT,
];

/// `dcmi module initialize failed. ret is -8005`.
pub fn dcmi_init_failed() -> Finding {
    Finding::new(
        NPU_DCMI_INIT_FAILED,
        Severity::Critical,
        t!("label_ascend.dcmi_init_failed.summary"),
        t!("label_ascend.dcmi_init_failed.action"),
    )
}

/// `dcmi model initialized failed, because the device is used. ret is -8020`.
pub fn device_in_use() -> Finding {
    Finding::new(
        NPU_DEVICE_IN_USE,
        Severity::Warning,
        t!("label_ascend.device_in_use.summary"),
        t!("label_ascend.device_in_use.action"),
    )
}

/// `[Hardware Error]  error_type: 3, multi-bit ECC` in an NPU's black-box log.
pub fn hbm_ecc() -> Finding {
    Finding::new(
        NPU_HBM_ECC,
        Severity::Critical,
        t!("label_ascend.hbm_ecc.summary"),
        t!("label_ascend.hbm_ecc.action"),
    )
}

/// `Device[1] lost heartbeat.`, `Device_Absent/Abnormal(EL0001)`.
pub fn lost_heartbeat() -> Finding {
    Finding::new(
        NPU_LOST_HEARTBEAT,
        Severity::Critical,
        t!("label_ascend.lost_heartbeat.summary"),
        t!("label_ascend.lost_heartbeat.action"),
    )
}

/// The NPU a black-box log line is about: `N` of `hisi_logs/device-N/`.
pub fn kbox_device(line: &str) -> Option<u32> {
    let (_, rest) = line.split_once("hisi_logs/device-")?;
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok()
}
