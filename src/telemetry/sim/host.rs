//! One simulated host: its connection story, its GPUs, and what it emits on each tick.

use super::gpu::SimGpu;
use crate::fleet::HostEvent;
use crate::telemetry::accel::Vendor;
use crate::telemetry::boot_id::BootId;
use crate::telemetry::{HostInfo, LostReason, TimestampMs};
use crate::words::Words;

/// What `ssh` prints for a connection that runs into its timeout, the words around the OS's
/// `Connection timed out` in the user's language.
fn timed_out(address: &str) -> Words {
    Words::new("sim_words.connect_timed_out")
        .put("address", address)
        .put("error", OS_TIMED_OUT)
}

/// The OS's text for `ETIMEDOUT`, as `ssh` quotes it.
const OS_TIMED_OUT: &str = "Connection timed out";

/// `--query-compute-apps` is polled less often than the GPU readings.
pub(super) const PROCESSES_EVERY_MS: u64 = 5_000;

/// How the scenario treats a host over time.
#[derive(Debug, Clone)]
pub(super) enum Plan {
    /// Connects at once and reports until the end.
    Healthy,
    /// Reports until `at_ms`, then its one GPU falls off the PCIe bus (Xid 79).
    FallsOffBus { at_ms: u64, board_serial: String },
    /// Never answers: every attempt runs into the SSH connect timeout, with growing backoff.
    Unreachable {
        address: String,
        connect_timeout_ms: u64,
    },
}

/// Where the host's link stands now.
#[derive(Debug, Clone, Copy)]
enum Link {
    NotStarted,
    Up,
    /// Kernel lines are out; the next query fails at `lost_at_ms`.
    FallenOff {
        lost_at_ms: u64,
    },
    Lost,
    Dialing {
        attempt: u32,
        fails_at_ms: u64,
    },
    Waiting {
        attempt: u32,
        retry_at_ms: u64,
    },
}

#[derive(Debug, Clone)]
pub(super) struct SimHost {
    pub name: String,
    driver_version: &'static str,
    cuda_version: &'static str,
    pub gpus: Vec<SimGpu>,
    plan: Plan,
    link: Link,
    /// Boots so far, for `/proc/sys/kernel/random/boot_id` (a reboot counts one more).
    boots: u32,
}

/// Wait before attempt `attempt + 1`: 5 s, 10 s, 20 s, then 30 s, like a reconnecting client.
fn backoff_ms(attempt: u32) -> u64 {
    (5_000u64 << attempt.saturating_sub(1).min(3)).min(30_000)
}

/// `0000:00:06.0` (domain 16 bits) from nvidia-smi's `00000000:00:06.0`.
fn short_bus_id(bus_id: &str) -> &str {
    bus_id.get(4..).unwrap_or(bus_id)
}

impl SimHost {
    /// Whether the host's tool lists processes, as the real link reads it: nvidia-smi,
    /// `npu-smi info`, the `mthreads-gmi` table and `amd-smi process` do; `xpu-smi dump` and
    /// `cnmon` do not, so such a host sends no process list at all.
    fn lists_processes(&self) -> bool {
        !self
            .gpus
            .iter()
            .any(|g| matches!(g.spec.vendor, Vendor::Intel | Vendor::Cambricon))
    }

    pub(super) fn new(
        name: impl Into<String>,
        driver_version: &'static str,
        cuda_version: &'static str,
        gpus: Vec<SimGpu>,
        plan: Plan,
    ) -> Self {
        Self {
            name: name.into(),
            driver_version,
            cuda_version,
            gpus,
            plan,
            link: Link::NotStarted,
            boots: 1,
        }
    }

    pub(super) fn driver_version(&self) -> &'static str {
        self.driver_version
    }

    /// Whether a connection to the host gets anywhere; `Err` says why not, as `ssh` would.
    pub(super) fn reachable(&self) -> Result<(), String> {
        match &self.plan {
            Plan::Unreachable { address, .. } => Err(timed_out(address).english()),
            _ => Ok(()),
        }
    }

    /// Whether the host's GPU fell off the bus (the kernel lines are out).
    pub(super) fn gpu_lost(&self) -> bool {
        matches!(self.link, Link::FallenOff { .. } | Link::Lost)
    }

    /// The boot id, in the kernel's UUID form: a new one with every reboot.
    pub(super) fn boot_id(&self) -> String {
        let seed: u32 = self
            .name
            .bytes()
            .fold(0, |acc, b| acc.wrapping_mul(31).wrapping_add(u32::from(b)));
        format!(
            "{seed:08x}-{:04x}-4d1e-9c1a-{:012x}",
            self.boots & 0xffff,
            u64::from(seed ^ self.boots)
        )
    }

    /// A reboot: a lost GPU is back on the bus (for good: the fault does not recur in the demo),
    /// and the link reconnects on the next tick, as a rebooted host's does.
    pub(super) fn reboot(&mut self) {
        self.boots += 1;
        if let Plan::FallsOffBus { .. } = self.plan {
            self.plan = Plan::Healthy;
        }
        if !matches!(self.plan, Plan::Unreachable { .. }) {
            self.link = Link::NotStarted;
        }
    }

    /// The host's NVIDIA kernel lines with their seconds since boot: the driver loading (when
    /// a real H200 host's log has it), and a GPU falling off the bus once it has.
    pub(super) fn kernel_lines(&self) -> Vec<(f64, String)> {
        let mut lines = vec![(
            0.538_629,
            format!(
                "NVRM: loading NVIDIA UNIX Open Kernel Module for x86_64  {}  Release Build  \
                 (nixbld@)",
                self.driver_version
            ),
        )];
        if let (true, Plan::FallsOffBus { at_ms, .. }) = (self.gpu_lost(), &self.plan) {
            let at_s = *at_ms as f64 / 1000.0;
            lines.extend(self.fall_off_bus_lines().into_iter().map(|l| (at_s, l)));
        }
        lines
    }

    fn info(&self) -> HostInfo {
        HostInfo {
            driver_version: Some(self.driver_version.to_string()),
            // A host without NVIDIA's driver has no CUDA version.
            cuda_version: (!self.cuda_version.is_empty()).then(|| self.cuda_version.to_string()),
            source: "simulated".to_string(),
        }
    }

    /// Everything this host emits on the tick at scenario time `t_ms`, stamped `at_ms` (the
    /// simulated clock, which the fleet follows at any `--speed`).
    pub(super) fn tick(
        &mut self,
        t_ms: u64,
        interval_ms: u64,
        at_ms: TimestampMs,
    ) -> Vec<HostEvent> {
        let mut out = Vec::new();
        if let Link::NotStarted = self.link {
            out.push(HostEvent::Connecting {
                attempt: 1,
                at_ms: Some(at_ms),
            });
            if let Plan::Unreachable {
                connect_timeout_ms, ..
            } = self.plan
            {
                self.link = Link::Dialing {
                    attempt: 1,
                    fails_at_ms: t_ms + connect_timeout_ms,
                };
                return out;
            }
            out.push(HostEvent::Connected(self.info()));
            // Read on connect, as a link reads `/proc/sys/kernel/random/boot_id`.
            if let Ok(boot_id) = BootId::parse(&self.boot_id()) {
                out.push(HostEvent::Boot { at_ms, boot_id });
            }
            self.link = Link::Up;
        }
        match self.link {
            Link::NotStarted | Link::Lost => {}
            Link::Up => {
                if let Plan::FallsOffBus { at_ms: fail_ms, .. } = self.plan
                    && t_ms >= fail_ms
                {
                    out.extend(self.fall_off_bus(at_ms));
                    self.link = Link::FallenOff {
                        lost_at_ms: t_ms + interval_ms,
                    };
                    return out;
                }
                out.extend(self.gpus.iter_mut().map(|gpu| HostEvent::Sample {
                    at_ms,
                    gpu: gpu.sample(),
                }));
                if t_ms.is_multiple_of(PROCESSES_EVERY_MS) && self.lists_processes() {
                    out.push(HostEvent::Processes {
                        at_ms,
                        processes: self.gpus.iter().filter_map(SimGpu::process).collect(),
                    });
                }
            }
            Link::FallenOff { lost_at_ms } => {
                if t_ms >= lost_at_ms {
                    out.push(self.lost(at_ms));
                    self.link = Link::Lost;
                }
            }
            Link::Dialing {
                attempt,
                fails_at_ms,
            } => {
                if t_ms >= fails_at_ms {
                    let reason = match &self.plan {
                        Plan::Unreachable { address, .. } => timed_out(address),
                        _ => Words::new("link_summary.timed_out"),
                    };
                    let summary = Words::new("link_summary.timed_out");
                    let wait_ms = backoff_ms(attempt);
                    out.push(HostEvent::Disconnected {
                        at_ms,
                        reason: reason.english(),
                        summary: summary.english(),
                        retry_at_ms: Some(at_ms.saturating_add(wait_ms)),
                        words: Some(crate::fleet::DownWords { reason, summary }),
                    });
                    self.link = Link::Waiting {
                        attempt,
                        retry_at_ms: t_ms + wait_ms,
                    };
                }
            }
            Link::Waiting {
                attempt,
                retry_at_ms,
            } => {
                if t_ms >= retry_at_ms {
                    let attempt = attempt + 1;
                    out.push(HostEvent::Connecting {
                        attempt,
                        at_ms: Some(at_ms),
                    });
                    let timeout_ms = match self.plan {
                        Plan::Unreachable {
                            connect_timeout_ms, ..
                        } => connect_timeout_ms,
                        _ => 0,
                    };
                    self.link = Link::Dialing {
                        attempt,
                        fails_at_ms: t_ms + timeout_ms,
                    };
                }
            }
        }
        out
    }

    /// The kernel log of a GPU dropping off the bus, in the order the driver prints it: the
    /// once-per-GPU UUID and serial lines, the Xid itself, then `osHandleGpuLost`'s line.
    fn fall_off_bus(&self, at_ms: TimestampMs) -> Vec<HostEvent> {
        self.fall_off_bus_lines()
            .into_iter()
            .map(|line| HostEvent::Kernel { at_ms, line })
            .collect()
    }

    /// The lines of [`SimHost::fall_off_bus`].
    fn fall_off_bus_lines(&self) -> Vec<String> {
        let Some(gpu) = self.gpus.first() else {
            return Vec::new();
        };
        let serial = match &self.plan {
            Plan::FallsOffBus { board_serial, .. } => board_serial.as_str(),
            _ => "",
        };
        let bus = short_bus_id(&gpu.bus_id);
        // The Xid tuple is domain:bus:device, without the function.
        let pci = bus.rsplit_once('.').map_or(bus, |(head, _)| head);
        [
            format!("NVRM: GPU at PCI:{pci}: {}", gpu.uuid),
            format!("NVRM: GPU Board Serial Number: {serial}"),
            format!(
                "NVRM: Xid (PCI:{pci}): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus."
            ),
            format!("NVRM: GPU {bus}: GPU has fallen off the bus."),
        ]
        .into()
    }

    /// What the next nvidia-smi query prints once the GPU is gone.
    fn lost(&self, at_ms: TimestampMs) -> HostEvent {
        HostEvent::Lost {
            at_ms,
            reason: LostReason::GpuLost,
            raw: self.lost_text(),
        }
    }

    /// nvidia-smi's words for a GPU that fell off the bus.
    pub(super) fn lost_text(&self) -> String {
        let bus = self
            .gpus
            .first()
            .map_or("", |gpu| short_bus_id(&gpu.bus_id));
        format!(
            "Unable to determine the device handle for GPU {bus}: GPU is lost. \
             Reboot the system to recover this GPU"
        )
    }
}
