//! Telemetry: the GPU model types, nvidia-smi parsers, and the sources that produce samples.

pub mod accel;
pub mod boot_id;
pub mod df;
pub mod local;
pub mod local_rocm;
pub mod model;
pub mod nvml;
pub mod sim;
pub mod smi_csv;
pub(crate) mod smi_csv_values;
pub mod smi_table;
pub mod smi_xml;
pub mod source;

pub use model::{
    ClockEventReasons, GpuProcess, GpuSample, HostInfo, LostReason, SharedText, TimestampMs,
};
