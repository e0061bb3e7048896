//! One simulated GPU: what it is doing and the nvidia-smi-like reading it gives each second.

use super::cards::CardSpec;
use super::rng::{Drift, Rng};
use crate::telemetry::accel::Vendor;
use crate::telemetry::{ClockEventReasons, GpuProcess, GpuSample};

/// Memory nvidia-smi counts as used beyond the processes' own (the capture: 58361 used,
/// 58352 by the one process).
const CONTEXT_OVERHEAD_MIB: u64 = 9;

/// Free memory a leaking process leaves when its allocator stops getting more.
const LEAK_HEADROOM_MIB: u64 = 259;

/// What a GPU is busy with for the whole scenario.
#[derive(Debug, Clone)]
pub(super) enum Work {
    /// Nothing runs; a parked process may still hold `held_mib` (0: no process at all).
    Idle { held_mib: u64 },
    /// A dense job (training, burn-in) held at the power cap.
    PowerCapped { vram_mib: u64 },
    /// Busy but overheating: thermal slowdown, hardware slowdown on and off.
    Overheating { vram_mib: u64 },
    /// A partly busy service whose memory grows by about `leak_mib_per_s` (0: steady).
    Serving { vram_mib: u64, leak_mib_per_s: f64 },
}

/// The process a busy GPU shows in `--query-compute-apps`.
#[derive(Debug, Clone)]
pub(super) struct SimProcess {
    pub pid: u32,
    pub name: &'static str,
}

#[derive(Debug, Clone)]
pub(super) struct SimGpu {
    pub index: u32,
    pub uuid: String,
    pub bus_id: String,
    pub spec: &'static CardSpec,
    driver_version: &'static str,
    work: Work,
    process: Option<SimProcess>,
    rng: Rng,
    /// Where the card sits in the chassis: some slots get warmer air than others.
    temp_offset_c: f64,
    temp_drift: Drift,
    load_drift: Drift,
    /// Memory the work holds now (grows for a leak).
    vram_mib: u64,
    /// Thermal state of an overheating card: its die temperature and whether the hardware
    /// slowdown is engaged (with hysteresis, as the real one cycles).
    hot_temp_c: f64,
    hw_slowdown: bool,
}

/// `GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx` as nvidia-smi prints UUIDs.
pub(super) fn gpu_uuid(rng: &mut Rng) -> String {
    format!(
        "GPU-{}-{}-{}-{}-{}",
        rng.hex(8),
        rng.hex(4),
        rng.hex(4),
        rng.hex(4),
        rng.hex(12)
    )
}

/// Quantizes a clock to the 15 MHz steps real SM clocks move in.
fn clock_step(mhz: f64) -> u32 {
    ((mhz / 15.0).round() * 15.0).max(0.0) as u32
}

/// nvidia-smi prints power with two decimals.
fn watts(w: f64) -> f64 {
    (w * 100.0).round() / 100.0
}

impl SimGpu {
    pub(super) fn new(
        index: u32,
        bus_id: String,
        spec: &'static CardSpec,
        driver_version: &'static str,
        work: Work,
        process: Option<SimProcess>,
        mut rng: Rng,
    ) -> Self {
        let uuid = gpu_uuid(&mut rng);
        let temp_offset_c = rng.range_f64(-2.5, 4.5).round();
        let vram_mib = match work {
            Work::Idle { held_mib } => held_mib,
            Work::PowerCapped { vram_mib }
            | Work::Overheating { vram_mib }
            | Work::Serving { vram_mib, .. } => vram_mib,
        };
        let process = match work {
            Work::Idle { held_mib: 0 } => None,
            _ => process,
        };
        Self {
            index,
            uuid,
            bus_id,
            spec,
            driver_version,
            work,
            process,
            rng,
            temp_offset_c,
            temp_drift: Drift::default(),
            load_drift: Drift::default(),
            vram_mib: vram_mib.min(spec.memory_total_mib - CONTEXT_OVERHEAD_MIB),
            hot_temp_c: spec.temp_slowdown_c + 0.6,
            hw_slowdown: false,
        }
    }

    /// Memory used as nvidia-smi reports it.
    fn memory_used_mib(&self) -> u64 {
        if self.process.is_some() {
            self.vram_mib + CONTEXT_OVERHEAD_MIB
        } else {
            self.vram_mib
        }
    }

    /// The fields that do not depend on the load.
    fn base_sample(&self) -> GpuSample {
        let spec = self.spec;
        GpuSample {
            index: self.index,
            uuid: self.uuid.as_str().into(),
            name: spec.name.into(),
            bus_id: self.bus_id.as_str().into(),
            memory_total_mib: Some(spec.memory_total_mib),
            power_limit_w: Some(spec.power_default_w),
            power_min_limit_w: Some(spec.power_min_w),
            power_max_limit_w: Some(spec.power_max_w),
            power_default_limit_w: Some(spec.power_default_w),
            clock_sm_max_mhz: Some(spec.clock_sm_max_mhz),
            ecc_uncorrected_volatile: spec.ecc.then_some(0),
            retired_pages_pending: spec.retires_pages.then_some(false),
            persistence_mode: Some(spec.persistence),
            temperature_slowdown_c: Some(spec.temp_slowdown_c),
            temperature_shutdown_c: Some(spec.temp_shutdown_c),
            driver_version: Some(self.driver_version.into()),
            ..GpuSample::default()
        }
    }

    /// Fan duty for a card with fans: the default curve ramps from 30 % at 40 C to 100 % at 90 C.
    fn fan_pct(&self, temp_c: f64) -> Option<f64> {
        self.spec
            .has_fan
            .then(|| (30.0 + (temp_c - 40.0) * 1.4).clamp(30.0, 100.0).round())
    }

    /// A die temperature around `base_c`, drifting slowly, never at the shutdown point.
    fn drifting_temp(&mut self, base_c: f64) -> f64 {
        let drift = self.temp_drift.step(&mut self.rng, 0.9, 0.35);
        (base_c + self.temp_offset_c + drift)
            .round()
            .min(self.spec.temp_shutdown_c - 4.0)
    }

    fn memory_temp(&self, temp_c: f64, idle: bool) -> Option<f64> {
        // HBM sits a few degrees off the die under load and close to it when idle.
        let scale = if idle { 0.4 } else { 1.0 };
        self.spec
            .temp_memory_delta_c
            .map(|delta| (temp_c + delta * scale).round())
    }

    /// The reading for this second; advances the GPU's own noise and its memory leak.
    pub(super) fn sample(&mut self) -> GpuSample {
        let spec = self.spec;
        let mut s = self.base_sample();
        match self.work.clone() {
            Work::Idle { .. } => {
                let temp_c = self.drifting_temp(spec.temp_idle_c);
                s.utilization_gpu_pct = Some(0.0);
                s.utilization_memory_pct = Some(0.0);
                s.power_draw_w = Some(watts(
                    spec.power_idle_w * (1.0 + 0.03 * self.rng.gauss()).clamp(0.85, 1.15),
                ));
                s.clock_sm_mhz = Some(spec.clock_sm_idle_mhz);
                s.clock_mem_mhz = Some(spec.clock_mem_idle_mhz);
                s.pstate = Some(spec.pstate_idle.into());
                s.clock_event_reasons = Some(ClockEventReasons(ClockEventReasons::GPU_IDLE));
                s.temperature_c = Some(temp_c);
                s.temperature_memory_c = self.memory_temp(temp_c, true);
                s.fan_speed_pct = self.fan_pct(temp_c);
            }
            Work::PowerCapped { .. } => {
                let temp_c = self.drifting_temp(spec.temp_load_c);
                // Mostly 100 %, now and then a data-loader or all-reduce gap shaves a point or two.
                let util = if self.rng.unit() < 0.12 {
                    97.0 + self.rng.below(3) as f64
                } else {
                    100.0
                };
                // The power controller holds draw 0.2-1.8 % under the cap, as in the capture
                // (689.9-695.2 W against 700 W).
                let power_w =
                    spec.power_max_w * (0.9905 + 0.0045 * self.rng.gauss().clamp(-1.7, 1.7));
                let clock =
                    clock_step(f64::from(spec.clock_sm_capped_mhz) + 30.0 * self.rng.gauss());
                s.utilization_gpu_pct = Some(util);
                s.utilization_memory_pct = Some(
                    (spec.util_memory_load_pct + self.rng.gauss())
                        .round()
                        .max(0.0),
                );
                s.power_draw_w = Some(watts(power_w));
                s.clock_sm_mhz = Some(clock.min(spec.clock_sm_max_mhz - 15));
                s.clock_mem_mhz = Some(spec.clock_mem_load_mhz);
                s.pstate = Some(spec.pstate_load.into());
                s.clock_event_reasons = Some(ClockEventReasons(ClockEventReasons::SW_POWER_CAP));
                s.temperature_c = Some(temp_c);
                s.temperature_memory_c = self.memory_temp(temp_c, false);
                s.fan_speed_pct = self.fan_pct(temp_c);
            }
            Work::Overheating { .. } => self.overheating(&mut s),
            Work::Serving { leak_mib_per_s, .. } => {
                let temp_c = self.drifting_temp(spec.temp_load_c - 4.0);
                let load = self.load_drift.step(&mut self.rng, 0.92, 4.0);
                let util = (58.0 + load + 6.0 * self.rng.gauss())
                    .round()
                    .clamp(8.0, 99.0);
                let power_w = spec.power_idle_w
                    + (spec.power_max_w * 0.82 - spec.power_idle_w) * util / 100.0
                    + 0.02 * spec.power_max_w * self.rng.gauss();
                s.utilization_gpu_pct = Some(util);
                s.utilization_memory_pct = Some((util * 0.35).round());
                s.power_draw_w = Some(watts(
                    power_w.clamp(spec.power_idle_w, spec.power_max_w * 0.95),
                ));
                s.clock_sm_mhz = Some(spec.clock_sm_max_mhz);
                s.clock_mem_mhz = Some(spec.clock_mem_load_mhz);
                s.pstate = Some(spec.pstate_load.into());
                s.clock_event_reasons = Some(ClockEventReasons(0));
                s.temperature_c = Some(temp_c);
                s.temperature_memory_c = self.memory_temp(temp_c, false);
                s.fan_speed_pct = self.fan_pct(temp_c);
                if leak_mib_per_s > 0.0 {
                    self.leak(leak_mib_per_s);
                }
            }
        }
        s.memory_used_mib = Some(self.memory_used_mib());
        super::accel::vendor_view(spec.vendor, s)
    }

    /// A card whose cooling cannot keep up: software thermal slowdown all the time, the hardware
    /// slowdown engaging above the slowdown temperature and letting go when the die cools to it.
    fn overheating(&mut self, s: &mut GpuSample) {
        let spec = self.spec;
        let slowdown_c = spec.temp_slowdown_c;
        // Halved clocks pull the die toward the slowdown point, full clocks push it above; the
        // small gain is the heatsink's thermal mass, so a cycle takes tens of seconds.
        let target_c = if self.hw_slowdown {
            slowdown_c - 0.5
        } else {
            slowdown_c + 2.2
        };
        self.hot_temp_c += (target_c - self.hot_temp_c) * 0.08 + 0.15 * self.rng.gauss();
        if !self.hw_slowdown && self.hot_temp_c >= slowdown_c + 1.2 {
            self.hw_slowdown = true;
        } else if self.hw_slowdown && self.hot_temp_c <= slowdown_c + 0.1 {
            self.hw_slowdown = false;
        }
        // The sensor reads whole degrees and the card never lets itself cool below the
        // slowdown point while throttled this hard.
        let temp_c = self
            .hot_temp_c
            .round()
            .clamp(slowdown_c, spec.temp_shutdown_c - 1.0);
        let sw_clock = 1470.0 + 45.0 * self.rng.gauss();
        let (clock, power_w, mut bits) = if self.hw_slowdown {
            let bits = ClockEventReasons::HW_SLOWDOWN | ClockEventReasons::HW_THERMAL_SLOWDOWN;
            (sw_clock / 2.0, 185.0 + 8.0 * self.rng.gauss(), bits)
        } else {
            (sw_clock, 282.0 + 12.0 * self.rng.gauss(), 0)
        };
        bits |= ClockEventReasons::SW_THERMAL_SLOWDOWN;
        s.utilization_gpu_pct = Some(100.0);
        s.utilization_memory_pct = Some((spec.util_memory_load_pct * clock / 2400.0).round());
        s.power_draw_w = Some(watts(power_w.min(spec.power_max_w * 0.8)));
        s.clock_sm_mhz = Some(clock_step(clock));
        s.clock_mem_mhz = Some(spec.clock_mem_load_mhz);
        s.pstate = Some(spec.pstate_load.into());
        s.clock_event_reasons = Some(ClockEventReasons(bits));
        s.temperature_c = Some(temp_c);
        s.temperature_memory_c = self.memory_temp(temp_c, false);
        // The fans are already flat out; the box simply cannot move enough air.
        s.fan_speed_pct = spec.has_fan.then_some(100.0);
    }

    /// Grows the held memory by about `rate` MiB (never less than 1, so it strictly grows) until
    /// the allocator can get no more.
    fn leak(&mut self, rate_mib: f64) {
        let ceiling = self.spec.memory_total_mib - LEAK_HEADROOM_MIB - CONTEXT_OVERHEAD_MIB;
        let grow = (rate_mib * self.rng.range_f64(0.5, 1.5)).round().max(1.0) as u64;
        self.vram_mib = (self.vram_mib + grow).min(ceiling.max(self.vram_mib));
    }

    /// This GPU's line in `--query-compute-apps`, if anything runs on it.
    /// The process on this GPU as nvidia-smi lists it; none for another vendor's card, whose
    /// process table gpufleet does not read.
    /// The process on this GPU as its tool lists it: nvidia-smi by the GPU's UUID, AMD's
    /// `amd-smi process --csv` by the GPU's number; the other vendors' demo cards list none.
    pub(super) fn process(&self) -> Option<GpuProcess> {
        let (gpu_uuid, gpu_index) = match self.spec.vendor {
            Vendor::Nvidia => (self.uuid.clone(), None),
            Vendor::Amd => (String::new(), Some(self.index)),
            _ => return None,
        };
        self.process.as_ref().map(|p| GpuProcess {
            gpu_index,
            pid: p.pid,
            name: p.name.to_string(),
            gpu_uuid,
            used_memory_mib: Some(self.vram_mib),
        })
    }
}
