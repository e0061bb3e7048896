//! Turns the probe's lines into progress reports: which phase runs, how far the whole check
//! is, and the latest nvidia-smi reading and throughput.

use crate::check::probe::{ProbeData, ProbeUpdate};
use crate::check::{CheckPhase, CheckProgress, LiveReading};

/// Where the benchmarks start and the sustained load takes over on the progress bar.
const BENCH_FROM: f64 = 0.05;
const SUSTAIN_FROM: f64 = 0.35;
const SUSTAIN_TO: f64 = 0.98;

pub struct Tracker {
    gpus: usize,
    sustain_s: f64,
    phase: CheckPhase,
    fraction: f64,
}

impl Tracker {
    pub fn new(gpus: usize, sustain_s: f64) -> Self {
        Self {
            gpus: gpus.max(1),
            sustain_s,
            phase: CheckPhase::Probe,
            fraction: BENCH_FROM,
        }
    }

    fn bench_to(&self) -> f64 {
        if self.sustain_s > 0.0 {
            SUSTAIN_FROM
        } else {
            SUSTAIN_TO
        }
    }

    /// The progress report for `update`, if it moves anything.
    pub fn update(&mut self, update: &ProbeUpdate, data: &ProbeData) -> Option<CheckProgress> {
        let reading = match update {
            ProbeUpdate::Phase { phase, gpu } => {
                let stage = match phase.as_str() {
                    "matmul" => 0,
                    "copy" => 1,
                    "vram" => 2,
                    "sustain" => {
                        self.phase = CheckPhase::Sustain;
                        self.fraction = self.fraction.max(self.bench_to());
                        return Some(self.report(None));
                    }
                    _ => return None,
                };
                let g = gpu.unwrap_or(0);
                self.phase = match stage {
                    0 => CheckPhase::Matmul { gpu: g },
                    1 => CheckPhase::Copy { gpu: g },
                    _ => CheckPhase::Vram { gpu: g },
                };
                let done = (g as usize * 3 + stage) as f64 / (self.gpus * 3) as f64;
                let at = BENCH_FROM + done.min(1.0) * (self.bench_to() - BENCH_FROM);
                self.fraction = self.fraction.max(at);
                None
            }
            ProbeUpdate::Sample => data.samples.last().map(|s| LiveReading {
                gpu: s.gpu.index,
                utilization_pct: s.gpu.utilization_gpu_pct,
                temperature_c: s.gpu.temperature_c,
                power_w: s.gpu.power_draw_w,
                power_limit_w: s.gpu.power_limit_w,
                sm_clock_mhz: s.gpu.clock_sm_mhz,
                tflops: None,
            }),
            ProbeUpdate::Window(w) => {
                if let Some(start) = data.sustain_started_s
                    && self.sustain_s > 0.0
                {
                    let done = ((w.elapsed_s - start) / self.sustain_s).clamp(0.0, 1.0);
                    let at = SUSTAIN_FROM + done * (SUSTAIN_TO - SUSTAIN_FROM);
                    self.fraction = self.fraction.max(at);
                }
                let smi_index = smi_index_of(data, w.gpu);
                let latest = data.samples.iter().rev().find(|s| s.gpu.index == smi_index);
                Some(LiveReading {
                    gpu: smi_index,
                    utilization_pct: latest.and_then(|s| s.gpu.utilization_gpu_pct),
                    temperature_c: latest.and_then(|s| s.gpu.temperature_c),
                    power_w: latest.and_then(|s| s.gpu.power_draw_w),
                    power_limit_w: latest.and_then(|s| s.gpu.power_limit_w),
                    sm_clock_mhz: latest.and_then(|s| s.gpu.clock_sm_mhz),
                    tflops: w.tflops,
                })
            }
            ProbeUpdate::Started | ProbeUpdate::Other => None,
        };
        let moved = matches!(update, ProbeUpdate::Phase { .. }) || reading.is_some();
        moved.then(|| self.report(reading))
    }

    fn report(&self, reading: Option<LiveReading>) -> CheckProgress {
        CheckProgress {
            phase: self.phase,
            fraction: self.fraction,
            message: self.phase.label(),
            reading,
        }
    }
}

/// The nvidia-smi index of PyTorch device `torch_gpu`, through the UUID both report.
fn smi_index_of(data: &ProbeData, torch_gpu: u32) -> u32 {
    let uuid = data
        .devices
        .iter()
        .find(|d| d.index == torch_gpu)
        .and_then(|d| d.uuid.as_deref());
    uuid.and_then(|u| {
        data.samples
            .iter()
            .find(|s| {
                s.gpu
                    .uuid
                    .trim_start_matches("GPU-")
                    .eq_ignore_ascii_case(u)
            })
            .map(|s| s.gpu.index)
    })
    .unwrap_or(torch_gpu)
}
