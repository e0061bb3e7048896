//! The machine gpufleet runs on: its NVIDIA GPUs through NVML, or, where NVML cannot open and
//! `rocm-smi` is on the `PATH`, its AMD GPUs through that tool's JSON.

use std::time::{Duration, Instant};

use crate::fleet::{HostEvent, HostId, HostSink};
use crate::telemetry::local_rocm::LocalRocm;
use crate::telemetry::nvml::{self, LocalGpus, NvmlOpenError};
use crate::telemetry::source::{SourceHandle, StopFlag, now_ms};
use crate::telemetry::{HostInfo, TimestampMs};

/// Where the local readings come from.
pub enum LocalSource {
    Nvml(Box<LocalGpus>),
    Rocm(LocalRocm),
}

impl LocalSource {
    /// NVML first; without it, `rocm-smi` on the `PATH`; with neither, NVML's reason.
    pub fn open() -> Result<Self, NvmlOpenError> {
        match LocalGpus::open() {
            Ok(gpus) => Ok(LocalSource::Nvml(Box::new(gpus))),
            Err(nvml) => LocalRocm::find(std::env::var_os("PATH").as_deref())
                .map(LocalSource::Rocm)
                .ok_or(nvml),
        }
    }

    pub fn info(&mut self) -> HostInfo {
        match self {
            LocalSource::Nvml(gpus) => gpus.info(),
            LocalSource::Rocm(rocm) => rocm.info(),
        }
    }

    /// One reading's events (NVML's with the process list when `with_processes`; rocm-smi's
    /// without one, as on an AMD host over SSH).
    pub fn read_events(&mut self, at_ms: TimestampMs, with_processes: bool) -> Vec<HostEvent> {
        match self {
            LocalSource::Nvml(gpus) => gpus.read_events(at_ms, with_processes),
            LocalSource::Rocm(rocm) => rocm.read_events(at_ms),
        }
    }
}

/// Reads the local GPUs every `interval` on a thread of their own.
pub fn spawn(
    source: LocalSource,
    host: HostId,
    sink: HostSink,
    interval: Duration,
) -> std::io::Result<SourceHandle> {
    match source {
        LocalSource::Nvml(gpus) => nvml::spawn(*gpus, host, sink, interval),
        LocalSource::Rocm(rocm) => SourceHandle::spawn("rocm-smi", move |stop| {
            run_rocm(rocm, host, sink, interval, stop)
        }),
    }
}

fn run_rocm(mut rocm: LocalRocm, host: HostId, sink: HostSink, interval: Duration, stop: StopFlag) {
    if !sink.send(host, HostEvent::Connected(rocm.info())) {
        return;
    }
    loop {
        let started = Instant::now();
        for event in rocm.read_events(now_ms()) {
            if !sink.send(host, event) {
                return;
            }
        }
        if stop.sleep(interval.saturating_sub(started.elapsed())) {
            return;
        }
    }
}
