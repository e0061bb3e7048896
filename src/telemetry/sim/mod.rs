//! The `--demo` simulator: a seeded fleet whose readings look like real cards and which emits
//! exactly the `HostEvent`s a real source would.

mod accel;
mod cards;
mod gpu;
mod host;
mod rng;
mod shell;
#[cfg(test)]
mod tests;

use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

pub use shell::{SimAnswer, SimHostFacts};

use cards::{CardSpec, FLEET_MODELS, HGX_BUSES, PCIE_BUSES, bus_id};
use gpu::{SimGpu, SimProcess, Work};
use host::{Plan, SimHost};
use rng::Rng;

use crate::fleet::{HostEvent, HostId, HostSink};
use crate::telemetry::TimestampMs;
use crate::telemetry::source::{SourceHandle, now_ms};

/// Scenario time between two readings, as `nvidia-smi -lms 1000` would give them.
const INTERVAL_MS: u64 = 1_000;

/// When flaky-h200 drops off the bus, in scenario time.
const FLAKY_FAILS_AT_MS: u64 = 60_000;

/// `ssh -o ConnectTimeout=10` against an address that drops SYNs.
const CONNECT_TIMEOUT_MS: u64 = 10_000;

const DATACENTER_DRIVER: (&str, &str) = ("580.159.04", "13.0");
const GEFORCE_DRIVER: (&str, &str) = ("550.54.14", "12.4");
const CLOUD_T4_DRIVER: (&str, &str) = ("535.183.01", "12.2");
/// The npu-smi version of the published 910B1 table the demo's Ascend host follows.
const ASCEND_DRIVER: &str = "23.0.rc2";
/// The eight NPUs' buses, in npu-smi's form: cards 0, 1 and 7 as the table prints them
/// (`C1`, `01`, `42`); cards 2 to 6, which its author elided, on buses of the demo's choosing.
const ASCEND_BUSES: [u8; 8] = [0xC1, 0x01, 0x41, 0xC2, 0x81, 0xC3, 0x82, 0x42];
/// The mthreads-gmi driver version of the published idle S80 table the demo follows.
const MTHREADS_DRIVER: &str = "3.0.0";
/// The cnmon driver version of the published MLU370-X8 table the demo follows.
const CAMBRICON_DRIVER: &str = "v5.10.13";

/// A deterministic fleet advanced by an explicit scenario clock.
#[derive(Debug, Clone)]
pub struct Simulator {
    hosts: Vec<SimHost>,
    interval_ms: u64,
    /// Scenario time of the next tick not yet emitted.
    next_tick_ms: u64,
}

/// Builds the GPUs of one host; `work` picks each GPU's job from its index.
struct HostBuilder<'a> {
    seed: u64,
    host_index: u64,
    spec: &'static CardSpec,
    driver_version: &'static str,
    buses: &'a [String],
    first_pid: u32,
    process_name: &'static str,
}

impl HostBuilder<'_> {
    fn gpus(&self, work: impl Fn(u32, &mut Rng) -> Work) -> Vec<SimGpu> {
        self.buses
            .iter()
            .zip(0u32..)
            .map(|(bus, index)| {
                let mut rng = Rng::derive(self.seed, &[self.host_index, u64::from(index)]);
                let job = work(index, &mut rng);
                let process = SimProcess {
                    pid: self.first_pid + index,
                    name: self.process_name,
                };
                SimGpu::new(
                    index,
                    bus.clone(),
                    self.spec,
                    self.driver_version,
                    job,
                    Some(process),
                    rng,
                )
            })
            .collect()
    }
}

/// A plausible Linux PID for a long-running job.
fn pid(rng: &mut Rng) -> u32 {
    1_000 + rng.below(900_000) as u32
}

impl Simulator {
    fn new(hosts: Vec<SimHost>) -> Self {
        Self {
            hosts,
            interval_ms: INTERVAL_MS,
            next_tick_ms: 0,
        }
    }

    /// The demo fleet: one host per situation the console is built to show.
    pub fn demo(seed: u64) -> Self {
        let mut rng = Rng::derive(seed, &[u64::MAX]);
        let single = |bus: u8, device: u8| vec![bus_id(bus, device)];
        let (dc_driver, dc_cuda) = DATACENTER_DRIVER;

        let hgx: Vec<String> = HGX_BUSES.iter().map(|&b| bus_id(b, 0)).collect();
        let train = HostBuilder {
            seed,
            host_index: 0,
            spec: &cards::H100_SXM,
            driver_version: dc_driver,
            buses: &hgx,
            first_pid: pid(&mut rng),
            process_name: "python",
        }
        .gpus(|_, rng| Work::PowerCapped {
            // About 70 GB per rank: weights, optimizer shards and activations.
            vram_mib: 70_400 + rng.below(2_600),
        });

        let idle = HostBuilder {
            seed,
            host_index: 1,
            spec: &cards::A100_SXM_80GB,
            driver_version: dc_driver,
            buses: &single(0x00, 0x05),
            first_pid: pid(&mut rng),
            process_name: "python3",
        }
        .gpus(|_, _| Work::Idle { held_mib: 3_212 });

        let hot = HostBuilder {
            seed,
            host_index: 2,
            spec: &cards::RTX_4090,
            driver_version: GEFORCE_DRIVER.0,
            buses: &single(0x01, 0x00),
            first_pid: pid(&mut rng),
            process_name: "python3",
        }
        .gpus(|_, _| Work::Overheating { vram_mib: 21_876 });

        let leaky = HostBuilder {
            seed,
            host_index: 3,
            spec: &cards::T4,
            driver_version: CLOUD_T4_DRIVER.0,
            buses: &single(0x00, 0x04),
            first_pid: pid(&mut rng),
            process_name: "python3",
        }
        .gpus(|_, _| Work::Serving {
            vram_mib: 2_140,
            // About 20 MiB/s: the card is full after roughly eleven minutes.
            leak_mib_per_s: 20.0,
        });

        let flaky = HostBuilder {
            seed,
            host_index: 4,
            spec: &cards::H200_SXM,
            driver_version: dc_driver,
            buses: &single(0x00, 0x06),
            first_pid: pid(&mut rng),
            process_name: "python3",
        }
        .gpus(|_, _| Work::PowerCapped { vram_mib: 58_352 });
        let board_serial = format!("165{:010}", rng.below(10_000_000_000));

        // A renter's Ascend host beside the NVIDIA ones, idle as its published table shows it:
        // the same 4175 MB of HBM held on every NPU at 0 % AI Core.
        let ascend: Vec<String> = ASCEND_BUSES
            .iter()
            .map(|&b| format!("0000:{b:02X}:00.0"))
            .collect();
        let ascend = HostBuilder {
            seed,
            host_index: 6,
            spec: &cards::ASCEND_910B1,
            driver_version: ASCEND_DRIVER,
            buses: &ascend,
            first_pid: pid(&mut rng),
            process_name: "python3",
        }
        .gpus(|_, _| Work::Idle { held_mib: 4_175 });

        // An Intel host read through `xpu-smi dump`, idle as its published Flex 170 dump shows.
        let intel = HostBuilder {
            seed,
            host_index: 7,
            spec: &cards::INTEL_FLEX_170,
            driver_version: "",
            buses: &single(0x4d, 0x00),
            first_pid: pid(&mut rng),
            process_name: "python3",
        }
        .gpus(|_, _| Work::Idle { held_mib: 0 });

        // A Moore Threads desktop and a Cambricon server, idle as their published tables show
        // them: the S80 with 662 MiB held by Xorg, the two MLU370-X8 with nothing running.
        let mthreads = HostBuilder {
            seed,
            host_index: 8,
            spec: &cards::MTT_S80,
            driver_version: MTHREADS_DRIVER,
            buses: &["00000000:01:00.0".to_string()],
            first_pid: pid(&mut rng),
            process_name: "/usr/lib/xorg/Xorg",
        }
        .gpus(|_, _| Work::Idle { held_mib: 662 });
        let cambricon = HostBuilder {
            seed,
            host_index: 9,
            spec: &cards::MLU370_X8,
            driver_version: CAMBRICON_DRIVER,
            buses: &["0000:39:00.0".to_string(), "0000:3D:00.0".to_string()],
            first_pid: pid(&mut rng),
            process_name: "python3",
        }
        .gpus(|_, _| Work::Idle { held_mib: 0 });

        // An AMD host read through `amd-smi monitor`, busy as its published row shows it; its
        // process is named as the published `amd-smi process --csv` of eight MI300X names
        // theirs (tests/fixtures/accel/amd-amd-smi-process-csv-01.txt).
        let mi300x = HostBuilder {
            seed,
            host_index: 10,
            spec: &cards::MI300X,
            driver_version: "",
            buses: &[String::new()],
            first_pid: pid(&mut rng),
            process_name: "pt_main_thread",
        }
        .gpus(|_, _| Work::PowerCapped {
            // 3.0 GB (binary) used, less the context the simulator adds for a process.
            vram_mib: 3_063,
        });

        Self::new(vec![
            SimHost::new("train-h100x8", dc_driver, dc_cuda, train, Plan::Healthy),
            SimHost::new("idle-a100", dc_driver, dc_cuda, idle, Plan::Healthy),
            SimHost::new(
                "hot-4090",
                GEFORCE_DRIVER.0,
                GEFORCE_DRIVER.1,
                hot,
                Plan::Healthy,
            ),
            SimHost::new(
                "leaky-t4",
                CLOUD_T4_DRIVER.0,
                CLOUD_T4_DRIVER.1,
                leaky,
                Plan::Healthy,
            ),
            SimHost::new(
                "flaky-h200",
                dc_driver,
                dc_cuda,
                flaky,
                Plan::FallsOffBus {
                    at_ms: FLAKY_FAILS_AT_MS,
                    board_serial,
                },
            ),
            SimHost::new(
                "unreachable-box",
                dc_driver,
                dc_cuda,
                Vec::new(),
                Plan::Unreachable {
                    address: "203.0.113.7".to_string(),
                    connect_timeout_ms: CONNECT_TIMEOUT_MS,
                },
            ),
            SimHost::new("ascend-910b", ASCEND_DRIVER, "", ascend, Plan::Healthy),
            SimHost::new("xpu-flex170", "", "", intel, Plan::Healthy),
            SimHost::new("mthreads-s80", MTHREADS_DRIVER, "", mthreads, Plan::Healthy),
            SimHost::new(
                "cambricon-mlu",
                CAMBRICON_DRIVER,
                "",
                cambricon,
                Plan::Healthy,
            ),
            SimHost::new("mi300x-amd", "", "", mi300x, Plan::Healthy),
        ])
    }

    /// Host names in `HostId` order.
    pub fn host_names(&self) -> Vec<String> {
        self.hosts.iter().map(|h| h.name.clone()).collect()
    }

    /// Scenario time between two ticks.
    pub fn interval_ms(&self) -> u64 {
        self.interval_ms
    }

    /// Scenario time of the next tick not yet played: how far the scenario has run.
    pub fn scenario_ms(&self) -> u64 {
        self.next_tick_ms
    }

    /// Plays the scenario up to `scenario_ms` with the events stamped on the simulated clock
    /// (`started_ms` plus scenario time) and hands each to `apply`; a one-shot command's way to
    /// run the demo forward without waiting.
    pub fn run_to(
        &mut self,
        scenario_ms: u64,
        started_ms: TimestampMs,
        apply: &mut dyn FnMut(HostId, HostEvent),
    ) {
        while self.next_tick_ms <= scenario_ms {
            let tick_ms = self.next_tick_ms;
            for (host, event) in self.advance(tick_ms, started_ms + tick_ms) {
                apply(host, event);
            }
        }
    }

    /// Advance the scenario clock to `scenario_ms` (ms since the scenario started) and return the
    /// events produced since the last call, stamped with `wall_ms` (the wall clock now).
    ///
    /// Every tick in between is played in order, so one call to minute 5 yields the same events
    /// as three hundred one-second calls. When a call covers several ticks, each earlier tick is
    /// stamped `wall_ms` minus how far it lies behind `scenario_ms`, so a catch-up still gives
    /// one distinct, increasing timestamp per reading; the live driver calls once per tick, where
    /// that is exactly `wall_ms`.
    pub fn advance(&mut self, scenario_ms: u64, wall_ms: TimestampMs) -> Vec<(HostId, HostEvent)> {
        let mut out = Vec::new();
        while self.next_tick_ms <= scenario_ms {
            let t_ms = self.next_tick_ms;
            let at_ms = wall_ms.saturating_sub(scenario_ms - t_ms);
            for (id, host) in self.hosts.iter_mut().enumerate() {
                out.extend(
                    host.tick(t_ms, self.interval_ms, at_ms)
                        .into_iter()
                        .map(|event| (id, event)),
                );
            }
            self.next_tick_ms += self.interval_ms;
        }
        out
    }
}

/// A large healthy fleet for render benchmarks: `hosts` hosts cycling through the card models,
/// 1-8 GPUs each, most busy at the power cap or serving, some idle.
pub fn fleet(seed: u64, hosts: usize) -> Simulator {
    let mut rng = Rng::derive(seed, &[u64::MAX - 1]);
    let (dc_driver, dc_cuda) = DATACENTER_DRIVER;
    let list = (0..hosts)
        .map(|i| {
            let (spec, counts) = FLEET_MODELS[i % FLEET_MODELS.len()];
            let count = counts[rng.below(counts.len() as u64) as usize];
            // HBM datacenter parts come on SXM baseboards, the rest as PCIe cards.
            let sxm = matches!(spec.short, "h100" | "h200" | "a100");
            let slots = if sxm { &HGX_BUSES } else { &PCIE_BUSES };
            let buses: Vec<String> = slots
                .iter()
                .take(count as usize)
                .map(|&b| bus_id(b, 0))
                .collect();
            let (driver, cuda) = match spec.short {
                "4090" => GEFORCE_DRIVER,
                "t4" => CLOUD_T4_DRIVER,
                _ => (dc_driver, dc_cuda),
            };
            // Most rented hosts work; a fifth sit idle, a fifth serve at partial load.
            let mood = rng.below(5);
            let gpus = HostBuilder {
                seed,
                host_index: i as u64,
                spec,
                driver_version: driver,
                buses: &buses,
                first_pid: pid(&mut rng),
                process_name: "python3",
            }
            .gpus(|_, rng| {
                let vram_mib = spec.memory_total_mib * (55 + rng.below(35)) / 100;
                match mood {
                    0 => Work::Idle { held_mib: 0 },
                    1 => Work::Serving {
                        vram_mib,
                        leak_mib_per_s: 0.0,
                    },
                    _ => Work::PowerCapped { vram_mib },
                }
            });
            let name = format!("{}x{}-{:03}", spec.short, count, i);
            SimHost::new(name, driver, cuda, gpus, Plan::Healthy)
        })
        .collect();
    Simulator::new(list)
}

/// The fastest the simulated clock may run: at the default 1 s interval, one tick a millisecond.
pub const MAX_SPEED: f64 = 1000.0;

/// A simulator speed is more than 0 and at most [`MAX_SPEED`] (the one rule, for `--speed` and
/// for [`spawn`]); the error says the allowed range.
pub fn check_speed(speed: f64) -> Result<(), String> {
    if speed.is_finite() && speed > 0.0 && speed <= MAX_SPEED {
        Ok(())
    } else {
        Err(format!(
            "must be more than 0 and at most {MAX_SPEED}, found {speed}"
        ))
    }
}

/// A simulator shared between its source thread and whoever runs commands on its hosts (the
/// demo's runbooks, checks and releases), so a simulated reboot shows in the live fleet.
pub type SharedSim = Arc<Mutex<Simulator>>;

/// Locks a shared simulator; a thread that panicked holding it left a consistent simulator
/// (every tick is applied whole), so the poison is ignored.
pub fn lock(sim: &SharedSim) -> std::sync::MutexGuard<'_, Simulator> {
    sim.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Runs the simulator on its own thread: one tick per `interval_ms / speed` of wall time, scenario
/// clock advancing `speed` times faster than the wall clock; sends each host's events into `sink`.
///
/// Events are stamped on the simulated clock, the wall clock at the start plus scenario time,
/// so everything that reads the fleet's clock (findings, ledgers, red lines) runs `speed` times
/// faster too; at speed 1 the simulated clock is the wall clock.
///
/// Fails with `InvalidInput` unless [`check_speed`] accepts `speed`. The thread ends when the
/// handle is stopped or the receiving end of `sink` is gone.
pub fn spawn(sim: Simulator, sink: HostSink, speed: f64) -> std::io::Result<SourceHandle> {
    spawn_shared(Arc::new(Mutex::new(sim)), sink, speed)
}

/// [`spawn`] for a simulator others may run commands on meanwhile.
pub fn spawn_shared(sim: SharedSim, sink: HostSink, speed: f64) -> std::io::Result<SourceHandle> {
    if let Err(message) = check_speed(speed) {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!("simulator speed {message}"),
        ));
    }
    let interval_ms = lock(&sim).interval_ms();
    let tick_s = interval_ms as f64 / 1000.0 / speed;
    SourceHandle::spawn("gpufleet-sim", move |stop| {
        let started = Instant::now();
        let started_ms = now_ms();
        let mut tick: u64 = 0;
        while !stop.is_set() {
            let scenario_ms = tick * interval_ms;
            let events = lock(&sim).advance(scenario_ms, started_ms + scenario_ms);
            for (host, event) in events {
                if !sink.send(host, event) {
                    return;
                }
            }
            tick += 1;
            // Deadlines come from the start, so sleeping late never accumulates into drift.
            let due = started + Duration::from_secs_f64(tick_s * tick as f64);
            let wait = due.saturating_duration_since(Instant::now());
            if stop.sleep(wait) {
                return;
            }
        }
    })
}
