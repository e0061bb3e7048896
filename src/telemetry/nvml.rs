//! The local source: GPUs of the machine gpufleet runs on, read through NVML (nvml-wrapper).

use rust_i18n::t;
use std::time::{Duration, Instant};

use nvml_wrapper::Nvml;
use nvml_wrapper::enum_wrappers::device::{
    Clock, EccCounter, MemoryError, TemperatureSensor, TemperatureThreshold,
};
use nvml_wrapper::enums::device::UsedGpuMemory;
use nvml_wrapper::error::NvmlError;

use crate::fleet::{HostEvent, HostId, HostSink};
use crate::telemetry::source::{SourceHandle, StopFlag, now_ms};
use crate::telemetry::{
    ClockEventReasons, GpuProcess, GpuSample, HostInfo, LostReason, SharedText, TimestampMs,
};

/// Processes are listed this often; they change slowly and the call is the costliest one.
const PROCESS_EVERY: Duration = Duration::from_secs(5);
const MIB: u64 = 1024 * 1024;

/// Why NVML could not be opened, in words a user can act on.
#[derive(Debug, thiserror::Error)]
pub enum NvmlOpenError {
    #[error("{}", t!("nvml_error.no_library"))]
    NoLibrary,
    #[error("{}", t!("nvml_error.not_loaded", error = .0))]
    DriverNotLoaded(NvmlError),
    #[error("{}", t!("nvml_error.other", error = .0))]
    Other(NvmlError),
}

/// What a GPU reports that does not change while it runs, read once at start so each tick makes
/// only the calls whose answers move.
#[derive(Debug, Clone, Default)]
struct StaticGpu {
    uuid: String,
    name: String,
    bus_id: String,
    memory_total_mib: Option<u64>,
    power_min_limit_w: Option<f64>,
    power_max_limit_w: Option<f64>,
    power_default_limit_w: Option<f64>,
    clock_sm_max_mhz: Option<u32>,
    temperature_slowdown_c: Option<f64>,
    temperature_shutdown_c: Option<f64>,
    /// Passively cooled cards answer "not supported" for the fan; asking every tick is waste.
    has_fan: bool,
}

/// Health counters that change rarely; read every `SLOW_EVERY` ticks instead of every tick.
#[derive(Debug, Clone, Copy, Default)]
struct SlowFields {
    ecc_uncorrected_volatile: Option<u64>,
    retired_pages_pending: Option<bool>,
    persistence_mode: Option<bool>,
}

const SLOW_EVERY: u32 = 5;

/// An initialized NVML library; cheap to read from at every tick.
pub struct LocalGpus {
    nvml: Nvml,
    statics: Vec<StaticGpu>,
    slow: Vec<SlowFields>,
    ticks: u32,
}

impl LocalGpus {
    pub fn open() -> Result<Self, NvmlOpenError> {
        let nvml = match Nvml::init() {
            Ok(nvml) => nvml,
            Err(NvmlError::LibloadingError(_)) => return Err(NvmlOpenError::NoLibrary),
            Err(e @ NvmlError::DriverNotLoaded) => return Err(NvmlOpenError::DriverNotLoaded(e)),
            Err(e) => return Err(NvmlOpenError::Other(e)),
        };
        let count = nvml.device_count().unwrap_or(0);
        let statics: Vec<StaticGpu> = (0..count)
            .map(|i| match nvml.device_by_index(i) {
                Ok(d) => read_static(&d),
                Err(_) => StaticGpu::default(),
            })
            .collect();
        let slow = vec![SlowFields::default(); statics.len()];
        Ok(Self {
            nvml,
            statics,
            slow,
            ticks: 0,
        })
    }

    /// Driver version from NVML; the CUDA version from one `nvidia-smi` run, because NVML's own
    /// CUDA-version call loads and initializes libcuda, which measured on the H200 as 18 MB of
    /// resident memory kept for the life of the console.
    pub fn info(&self) -> HostInfo {
        let (smi_driver, cuda_version) = nvidia_smi_versions();
        HostInfo {
            driver_version: self.nvml.sys_driver_version().ok().or(smi_driver),
            cuda_version,
            source: "local NVML".to_string(),
        }
    }

    /// Reads every GPU; a field the GPU cannot report is `None`, a GPU that cannot be reached at
    /// all ends the whole read with the reason, as nvidia-smi does.
    pub fn read_samples(&mut self) -> Result<Vec<GpuSample>, (LostReason, String)> {
        if self.statics.is_empty() {
            return Err((LostReason::NoDevices, "No devices were found".to_string()));
        }
        if self.ticks.is_multiple_of(SLOW_EVERY) {
            for i in 0..self.slow.len() {
                if let Ok(d) = self.nvml.device_by_index(i as u32) {
                    self.slow[i] = read_slow(&d);
                }
            }
        }
        self.ticks = self.ticks.wrapping_add(1);
        (0..self.statics.len() as u32)
            .map(|i| self.read_one(i))
            .collect()
    }

    fn read_one(&self, index: u32) -> Result<GpuSample, (LostReason, String)> {
        let d = self.nvml.device_by_index(index).map_err(lost)?;
        let slow = self.slow.get(index as usize).copied().unwrap_or_default();
        let st = self
            .statics
            .get(index as usize)
            .cloned()
            .unwrap_or_default();
        let memory = d.memory_info().ok();
        let utilization = d.utilization_rates().ok();
        Ok(GpuSample {
            index,
            vendor: crate::telemetry::accel::Vendor::Nvidia,
            uuid: st.uuid.into(),
            name: st.name.into(),
            bus_id: st.bus_id.into(),
            memory_total_mib: st
                .memory_total_mib
                .or(memory.as_ref().map(|m| m.total / MIB)),
            memory_used_mib: memory.as_ref().map(|m| m.used / MIB),
            utilization_gpu_pct: utilization.as_ref().map(|u| f64::from(u.gpu)),
            utilization_memory_pct: utilization.as_ref().map(|u| f64::from(u.memory)),
            temperature_c: d.temperature(TemperatureSensor::Gpu).ok().map(f64::from),
            temperature_memory_c: None,
            power_draw_w: d.power_usage().ok().map(milliwatts),
            power_limit_w: d.enforced_power_limit().ok().map(milliwatts),
            power_min_limit_w: st.power_min_limit_w,
            power_max_limit_w: st.power_max_limit_w,
            power_default_limit_w: st.power_default_limit_w,
            clock_sm_mhz: d.clock_info(Clock::SM).ok(),
            clock_sm_max_mhz: st.clock_sm_max_mhz,
            clock_mem_mhz: d.clock_info(Clock::Memory).ok(),
            pstate: d
                .performance_state()
                .ok()
                .map(|p| format!("P{}", p.as_c()))
                .filter(|p| p != "P32")
                .map(SharedText::from),
            fan_speed_pct: if st.has_fan {
                d.fan_speed(0).ok().map(f64::from)
            } else {
                None
            },
            clock_event_reasons: d
                .current_throttle_reasons()
                .ok()
                .map(|r| ClockEventReasons(r.bits())),
            ecc_uncorrected_volatile: slow.ecc_uncorrected_volatile,
            retired_pages_pending: slow.retired_pages_pending,
            persistence_mode: slow.persistence_mode,
            temperature_slowdown_c: st.temperature_slowdown_c,
            temperature_shutdown_c: st.temperature_shutdown_c,
            health: None,
            driver_version: None,
        })
    }

    /// One reading as the events a source sends: a sample per GPU (or the failure that stopped
    /// the read), then the process list when asked for.
    pub fn read_events(&mut self, at_ms: TimestampMs, with_processes: bool) -> Vec<HostEvent> {
        let mut events = match self.read_samples() {
            Ok(samples) => samples
                .into_iter()
                .map(|gpu| HostEvent::Sample { at_ms, gpu })
                .collect(),
            Err((reason, raw)) => vec![HostEvent::Lost { at_ms, reason, raw }],
        };
        if with_processes {
            events.push(HostEvent::Processes {
                at_ms,
                processes: self.read_processes(),
            });
        }
        events
    }

    pub fn read_processes(&self) -> Vec<GpuProcess> {
        let mut out = Vec::new();
        let Ok(count) = self.nvml.device_count() else {
            return out;
        };
        for i in 0..count {
            let Ok(d) = self.nvml.device_by_index(i) else {
                continue;
            };
            let uuid = d.uuid().unwrap_or_default();
            for p in d.running_compute_processes().unwrap_or_default() {
                out.push(GpuProcess {
                    gpu_index: None,
                    pid: p.pid,
                    name: process_name(p.pid),
                    gpu_uuid: uuid.clone(),
                    used_memory_mib: match p.used_gpu_memory {
                        UsedGpuMemory::Used(bytes) => Some(bytes / MIB),
                        UsedGpuMemory::Unavailable => None,
                    },
                });
            }
        }
        out
    }
}

fn read_static(d: &nvml_wrapper::Device<'_>) -> StaticGpu {
    let constraints = d.power_management_limit_constraints().ok();
    StaticGpu {
        uuid: d.uuid().unwrap_or_default(),
        name: d.name().unwrap_or_default(),
        bus_id: d.pci_info().map(|p| p.bus_id).unwrap_or_default(),
        memory_total_mib: d.memory_info().ok().map(|m| m.total / MIB),
        power_min_limit_w: constraints.as_ref().map(|c| milliwatts(c.min_limit)),
        power_max_limit_w: constraints.as_ref().map(|c| milliwatts(c.max_limit)),
        power_default_limit_w: d.power_management_limit_default().ok().map(milliwatts),
        clock_sm_max_mhz: d.max_clock_info(Clock::SM).ok(),
        temperature_slowdown_c: d
            .temperature_threshold(TemperatureThreshold::Slowdown)
            .ok()
            .map(f64::from),
        temperature_shutdown_c: d
            .temperature_threshold(TemperatureThreshold::Shutdown)
            .ok()
            .map(f64::from),
        has_fan: d.fan_speed(0).is_ok(),
    }
}

fn read_slow(d: &nvml_wrapper::Device<'_>) -> SlowFields {
    SlowFields {
        ecc_uncorrected_volatile: d
            .total_ecc_errors(MemoryError::Uncorrected, EccCounter::Volatile)
            .ok(),
        retired_pages_pending: d.are_pages_pending_retired().ok(),
        persistence_mode: d.is_in_persistent_mode().ok(),
    }
}

fn milliwatts(mw: u32) -> f64 {
    f64::from(mw) / 1000.0
}

/// Maps an NVML failure to the host state it means, keeping the library's own words.
fn lost(e: NvmlError) -> (LostReason, String) {
    let reason = match e {
        NvmlError::GpuLost => LostReason::GpuLost,
        NvmlError::DriverNotLoaded => LostReason::DriverNotLoaded,
        NvmlError::LibRmVersionMismatch => LostReason::DriverLibraryMismatch,
        NvmlError::NotFound => LostReason::NoDevices,
        _ => LostReason::Other,
    };
    (reason, format!("NVML: {e}"))
}

/// How long the one `nvidia-smi` run at start may take before it is abandoned (a wedged driver
/// can make it hang; the console must not).
const SMI_TIMEOUT: Duration = Duration::from_secs(5);

fn nvidia_smi_versions() -> (Option<String>, Option<String>) {
    let child = std::process::Command::new("nvidia-smi")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .stdin(std::process::Stdio::null())
        .spawn();
    let Ok(mut child) = child else {
        return (None, None);
    };
    let started = Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(_)) => break,
            Ok(None) if started.elapsed() < SMI_TIMEOUT => {
                std::thread::sleep(Duration::from_millis(20));
            }
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return (None, None);
            }
        }
    }
    let mut text = String::new();
    if let Some(mut out) = child.stdout.take() {
        use std::io::Read;
        let _ = out.read_to_string(&mut text);
    }
    crate::telemetry::smi_table::parse_versions(text.lines())
}

/// The process name from /proc (NVML's own lookup needs a buffer size guess and root).
fn process_name(pid: u32) -> String {
    std::fs::read_to_string(format!("/proc/{pid}/comm"))
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| format!("pid {pid}"))
}

/// Reads the local GPUs every `interval` on a thread, as host `host`.
pub fn spawn(
    gpus: LocalGpus,
    host: HostId,
    sink: HostSink,
    interval: Duration,
) -> std::io::Result<SourceHandle> {
    SourceHandle::spawn("nvml", move |stop| run(gpus, host, sink, interval, stop))
}

fn run(mut gpus: LocalGpus, host: HostId, sink: HostSink, interval: Duration, stop: StopFlag) {
    if !sink.send(host, HostEvent::Connected(gpus.info())) {
        return;
    }
    let mut last_processes: Option<Instant> = None;
    loop {
        let started = Instant::now();
        let with_processes = last_processes.is_none_or(|t| t.elapsed() >= PROCESS_EVERY);
        if with_processes {
            last_processes = Some(started);
        }
        for event in gpus.read_events(now_ms(), with_processes) {
            if !sink.send(host, event) {
                return;
            }
        }
        if stop.sleep(interval.saturating_sub(started.elapsed())) {
            return;
        }
    }
}
