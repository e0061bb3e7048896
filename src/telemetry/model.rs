//! What a GPU and a host report: samples, processes and clock-event reasons, with units in names.

use serde::Serialize;

use crate::telemetry::accel::{Health, Vendor};
use crate::words::Words;

/// Milliseconds since the Unix epoch; every event carries one so the model never reads a clock.
pub type TimestampMs = u64;

/// Text a GPU says the same way in reading after reading (its name, UUID, bus ID, P-state,
/// driver): shared, so that a reading laid over the last full one copies a pointer, not the text.
pub type SharedText = std::sync::Arc<str>;

/// One reading of one GPU. Every measured field is optional: a `[N/A]`, `[Not Supported]` or
/// `[Unknown Error]` field makes only that field unknown.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct GpuSample {
    pub index: u32,
    /// Who made the accelerator (`nvidia` unless a vendor tool said otherwise). A metric its
    /// tool does not report stays `None` (shown `-`), never `0`.
    pub vendor: Vendor,
    pub uuid: SharedText,
    pub name: SharedText,
    pub bus_id: SharedText,
    pub memory_total_mib: Option<u64>,
    pub memory_used_mib: Option<u64>,
    pub utilization_gpu_pct: Option<f64>,
    pub utilization_memory_pct: Option<f64>,
    pub temperature_c: Option<f64>,
    pub temperature_memory_c: Option<f64>,
    pub power_draw_w: Option<f64>,
    /// The enforced power limit (what the card is held to right now).
    pub power_limit_w: Option<f64>,
    pub power_min_limit_w: Option<f64>,
    pub power_max_limit_w: Option<f64>,
    pub power_default_limit_w: Option<f64>,
    pub clock_sm_mhz: Option<u32>,
    pub clock_sm_max_mhz: Option<u32>,
    pub clock_mem_mhz: Option<u32>,
    pub pstate: Option<SharedText>,
    pub fan_speed_pct: Option<f64>,
    pub clock_event_reasons: Option<ClockEventReasons>,
    pub ecc_uncorrected_volatile: Option<u64>,
    pub retired_pages_pending: Option<bool>,
    pub persistence_mode: Option<bool>,
    /// Temperature at which the card starts slowing down, when the source knows it
    /// (`nvidia-smi -q -x`, NVML); used to colour the temperature against the card's own limit.
    pub temperature_slowdown_c: Option<f64>,
    pub temperature_shutdown_c: Option<f64>,
    /// The device's health as its vendor tool prints it (`npu-smi`'s Health column); `None`
    /// where the tool has none (nvidia-smi: health shows through the fields above).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub health: Option<Health>,
    /// Driver version as reported alongside the sample (the CSV stream carries it per line).
    #[serde(skip)]
    pub driver_version: Option<SharedText>,
}

/// The NVML clock-event ("throttle") bitmask, decoded into words.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ClockEventReasons(pub u64);

/// Bits of the NVML clock-event mask (nvml.h, API 13) and the word gpufleet uses for each.
pub const CLOCK_EVENT_BITS: [(u64, &str, &str); 9] = [
    (0x1, "gpu_idle", "idle"),
    (0x2, "applications_clocks_setting", "app clocks"),
    (0x4, "sw_power_cap", "power cap"),
    (0x8, "hw_slowdown", "hardware slowdown"),
    (0x10, "sync_boost", "sync boost"),
    (0x20, "sw_thermal_slowdown", "thermal slowdown"),
    (0x40, "hw_thermal_slowdown", "hw thermal slowdown"),
    (0x80, "hw_power_brake_slowdown", "power brake"),
    (0x100, "display_clock_setting", "display clocks"),
];

/// The catalogue key of each bit's label, in the order of [`CLOCK_EVENT_BITS`].
const CLOCK_EVENT_KEYS: [&str; 9] = [
    "clock_words.gpu_idle",
    "clock_words.applications_clocks_setting",
    "clock_words.sw_power_cap",
    "clock_words.hw_slowdown",
    "clock_words.sync_boost",
    "clock_words.sw_thermal_slowdown",
    "clock_words.hw_thermal_slowdown",
    "clock_words.hw_power_brake_slowdown",
    "clock_words.display_clock_setting",
];

impl ClockEventReasons {
    pub const GPU_IDLE: u64 = 0x1;
    pub const SW_POWER_CAP: u64 = 0x4;
    pub const HW_SLOWDOWN: u64 = 0x8;
    pub const SW_THERMAL_SLOWDOWN: u64 = 0x20;
    pub const HW_THERMAL_SLOWDOWN: u64 = 0x40;
    pub const HW_POWER_BRAKE: u64 = 0x80;

    pub fn contains(self, bit: u64) -> bool {
        self.0 & bit != 0
    }

    /// Machine words (`sw_power_cap`, ...) for every active bit, in bit order.
    pub fn words(self) -> Vec<&'static str> {
        CLOCK_EVENT_BITS
            .iter()
            .filter(|(bit, _, _)| self.contains(*bit))
            .map(|(_, word, _)| *word)
            .collect()
    }

    /// Short human labels (`power cap`, `thermal slowdown`, ...) for every active bit.
    pub fn labels(self) -> Vec<&'static str> {
        CLOCK_EVENT_BITS
            .iter()
            .filter(|(bit, _, _)| self.contains(*bit))
            .map(|(_, _, label)| *label)
            .collect()
    }

    /// The labels of every active bit as catalogue words (the card's clock line, the check
    /// report); their English is [`ClockEventReasons::labels`].
    pub fn label_words(self) -> Vec<Words> {
        CLOCK_EVENT_BITS
            .iter()
            .zip(CLOCK_EVENT_KEYS)
            .filter(|((bit, _, _), _)| self.contains(*bit))
            .map(|(_, key)| Words::new(key))
            .collect()
    }

    /// True when a reason that means "the hardware is protecting itself" is active.
    pub fn is_hardware_slowdown(self) -> bool {
        self.contains(Self::HW_SLOWDOWN)
            || self.contains(Self::HW_THERMAL_SLOWDOWN)
            || self.contains(Self::HW_POWER_BRAKE)
    }

    pub fn is_thermal(self) -> bool {
        self.contains(Self::SW_THERMAL_SLOWDOWN) || self.contains(Self::HW_THERMAL_SLOWDOWN)
    }
}

impl Serialize for ClockEventReasons {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.words())
    }
}

/// A compute process using a GPU (`--query-compute-apps`, or a vendor tool's process table).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GpuProcess {
    pub pid: u32,
    pub name: String,
    /// The GPU's UUID, as NVIDIA's tools tie a process to its GPU; empty (and left out of
    /// JSON) where the tool prints none.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub gpu_uuid: String,
    /// The GPU's `index` where the tool ties a process to its card by number instead of UUID
    /// (`npu-smi`'s NPU ID and chip, `mthreads-gmi`'s GPU ID); `None` otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gpu_index: Option<u32>,
    pub used_memory_mib: Option<u64>,
}

impl GpuProcess {
    /// True when the process runs on `gpu`: by UUID where both have one, else by the index the
    /// vendor tool printed.
    pub fn runs_on(&self, gpu: &GpuSample) -> bool {
        match self.gpu_index {
            Some(index) => gpu.uuid.is_empty() && gpu.index == index,
            None => !self.gpu_uuid.is_empty() && *gpu.uuid == *self.gpu_uuid,
        }
    }
}

/// What is known about a host once connected.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct HostInfo {
    pub driver_version: Option<String>,
    pub cuda_version: Option<String>,
    /// Where the data comes from, for the header: `simulated`, `nvml`, `ssh user@host:port`.
    pub source: String,
}

impl HostInfo {
    /// Where the readings come from (`simulated`, `local NVML`, `ssh root@h`) in catalogue
    /// words: the words of ours, the tool and target as they are.
    pub fn source_words(&self) -> Words {
        if self.source == "simulated" {
            return Words::new("clock_words.simulated");
        }
        match self.source.strip_prefix("local ") {
            Some(tool) => Words::new("clock_words.local").put("tool", tool),
            None => Words::verbatim(self.source.as_str()),
        }
    }
}

/// Why a host's GPUs can no longer be read; each maps to a real nvidia-smi / NVML failure text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LostReason {
    /// "Unable to determine the device handle for GPU ...: GPU is lost"
    GpuLost,
    /// "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver"
    DriverNotLoaded,
    /// "Failed to initialize NVML: Driver/library version mismatch"
    DriverLibraryMismatch,
    /// "No devices were found"
    NoDevices,
    /// The shell could not find nvidia-smi (exit status 127, "not found"): the image has no
    /// NVIDIA driver tools, or they are not on a non-interactive shell's `PATH`.
    SmiMissing,
    /// Any other failure that ended the telemetry stream.
    Other,
}

impl LostReason {
    /// The machine word used in JSON (`gpu_lost`, `driver_not_loaded`, ...).
    pub fn word(self) -> &'static str {
        match self {
            LostReason::GpuLost => "gpu_lost",
            LostReason::DriverNotLoaded => "driver_not_loaded",
            LostReason::DriverLibraryMismatch => "driver_library_mismatch",
            LostReason::NoDevices => "no_devices",
            LostReason::SmiMissing => "smi_missing",
            LostReason::Other => "telemetry_failed",
        }
    }

    /// The reason in catalogue words, as the status column says it; their English is
    /// [`LostReason::label`].
    pub fn words(self) -> Words {
        Words::new(match self {
            LostReason::GpuLost => "status.lost.gpu_lost",
            LostReason::DriverNotLoaded => "status.lost.driver_not_loaded",
            LostReason::DriverLibraryMismatch => "status.lost.driver_library_mismatch",
            LostReason::NoDevices => "status.lost.no_devices",
            LostReason::SmiMissing => "status.lost.smi_missing",
            LostReason::Other => "status.lost.telemetry_failed",
        })
    }

    /// The engine's English words: the log's field, the status the snapshot and tests compare.
    pub fn label(self) -> &'static str {
        match self {
            LostReason::GpuLost => "GPU lost",
            LostReason::DriverNotLoaded => "driver not loaded",
            LostReason::DriverLibraryMismatch => "driver/library mismatch",
            LostReason::NoDevices => "no devices",
            LostReason::SmiMissing => "nvidia-smi missing",
            LostReason::Other => "telemetry failed",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The clock reasons and a reading's source in English are the telemetry's own words, and
    /// in Chinese the catalogue's.
    #[test]
    fn clock_reasons_and_sources_are_the_telemetrys_english_and_chinese_in_zh() {
        let all = ClockEventReasons(
            CLOCK_EVENT_BITS
                .iter()
                .fold(0, |acc, (bit, _, _)| acc | bit),
        );
        let english: Vec<String> = all.label_words().iter().map(Words::english).collect();
        let labels: Vec<String> = all.labels().into_iter().map(str::to_string).collect();
        assert_eq!(english, labels);
        for words in all.label_words() {
            let zh = words.render("zh-CN");
            assert!(zh.chars().any(|c| c > '\u{2e80}'), "{zh}");
        }
        for source in ["simulated", "local NVML", "ssh root@h:22"] {
            let info = HostInfo {
                source: source.to_string(),
                ..HostInfo::default()
            };
            assert_eq!(info.source_words().english(), source);
        }
        let simulated = HostInfo {
            source: "simulated".to_string(),
            ..HostInfo::default()
        };
        assert_eq!(simulated.source_words().render("zh-CN"), "模拟");
    }
}
