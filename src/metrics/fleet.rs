//! The fleet as a Prometheus page: every GPU of every streaming host under dcgm-exporter's
//! metric names, types, help and labels (`gpu`, `UUID`, `pci_bus_id`, `device`, `modelName`,
//! `Hostname`, `DCGM_FI_DRIVER_VERSION`), so dashboards built for dcgm-exporter work unchanged;
//! then the vendor-neutral `gpufleet_gpu_*` series of every accelerator, NVIDIA's or not
//! (`accel.rs`), and gpufleet's own `gpufleet_*` series (link, money, findings, red lines,
//! auto-release).
//!
//! Every series also carries `instance` = the configured host name: scraped with
//! `honor_labels: true`, a dashboard's host selector (it reads `instance`) lists each rented
//! host, not the watcher. A host that is not streaming has no GPU series at all (old values are
//! not repeated as live), and a value a GPU cannot report is left out, never written as 0.

use crate::cost::AutoDecision;
use crate::fleet::Fleet;
use crate::fleet::host::{GpuState, HostState, HostStatus};
use crate::telemetry::GpuSample;
use crate::telemetry::accel::Vendor;

use super::text::{Kind, Page};

/// One dcgm-exporter family: name, help (as dcgm-exporter's default counters say it), type,
/// and how to read it from a sample.
struct GpuFamily {
    name: &'static str,
    help: &'static str,
    kind: Kind,
    value: fn(&GpuState) -> Option<f64>,
}

const GPU_FAMILIES: &[GpuFamily] = &[
    GpuFamily {
        name: "DCGM_FI_DEV_GPU_UTIL",
        help: "GPU utilization (in %).",
        kind: Kind::Gauge,
        value: |g| g.latest.utilization_gpu_pct,
    },
    GpuFamily {
        name: "DCGM_FI_DEV_MEM_COPY_UTIL",
        help: "Memory utilization (in %).",
        kind: Kind::Gauge,
        value: |g| g.latest.utilization_memory_pct,
    },
    GpuFamily {
        name: "DCGM_FI_DEV_FB_FREE",
        help: "Framebuffer memory free (in MiB).",
        kind: Kind::Gauge,
        value: |g| fb_free_mib(&g.latest),
    },
    GpuFamily {
        name: "DCGM_FI_DEV_FB_USED",
        help: "Framebuffer memory used (in MiB).",
        kind: Kind::Gauge,
        value: |g| g.latest.memory_used_mib.map(|v| v as f64),
    },
    GpuFamily {
        name: "DCGM_FI_DEV_POWER_USAGE",
        help: "Power draw (in W).",
        kind: Kind::Gauge,
        value: |g| g.latest.power_draw_w,
    },
    GpuFamily {
        name: "DCGM_FI_DEV_GPU_TEMP",
        help: "GPU temperature (in C).",
        kind: Kind::Gauge,
        value: |g| g.latest.temperature_c,
    },
    GpuFamily {
        name: "DCGM_FI_DEV_MEMORY_TEMP",
        help: "Memory temperature (in C).",
        kind: Kind::Gauge,
        value: |g| g.latest.temperature_memory_c,
    },
    GpuFamily {
        name: "DCGM_FI_DEV_SM_CLOCK",
        help: "SM clock frequency (in MHz).",
        kind: Kind::Gauge,
        value: |g| g.latest.clock_sm_mhz.map(f64::from),
    },
    GpuFamily {
        name: "DCGM_FI_DEV_MEM_CLOCK",
        help: "Memory clock frequency (in MHz).",
        kind: Kind::Gauge,
        value: |g| g.latest.clock_mem_mhz.map(f64::from),
    },
    GpuFamily {
        name: "DCGM_FI_DEV_CLOCKS_EVENT_REASONS",
        help: "Current clock event reasons (bitmask of DCGM_CLOCKS_EVENT_REASON_*).",
        kind: Kind::Gauge,
        value: |g| g.latest.clock_event_reasons.map(|r| r.0 as f64),
    },
];

fn fb_free_mib(sample: &GpuSample) -> Option<f64> {
    let total = sample.memory_total_mib?;
    let used = sample.memory_used_mib?;
    Some(total.saturating_sub(used) as f64)
}

/// The page for `fleet` as it stands now.
pub fn render(fleet: &Fleet) -> String {
    let gpus: usize = fleet.hosts.iter().map(|h| h.gpus.len()).sum();
    let mut page = Page::with_capacity(4_096 + gpus * 3_000);
    let streaming: Vec<&HostState> = fleet
        .hosts
        .iter()
        .enumerate()
        .filter(|(id, _)| fleet.status(*id) == Some(HostStatus::Live))
        .map(|(_, host)| host)
        .collect();
    for family in GPU_FAMILIES {
        gpu_family(&mut page, family, &streaming);
    }
    last_xid(&mut page, &streaming);
    super::accel::series(&mut page, &streaming);
    own_series(&mut page, fleet);
    page.finish()
}

/// The host's NVIDIA GPUs: dcgm-exporter's names are NVIDIA's counters, so other vendors'
/// accelerators have only the vendor-neutral series (`accel.rs`).
fn nvidia(host: &HostState) -> impl Iterator<Item = &GpuState> {
    host.gpus
        .iter()
        .filter(|g| g.latest.vendor == Vendor::Nvidia)
}

/// The labels dcgm-exporter puts on a GPU's series, in its order, plus `instance`.
struct GpuLabels {
    gpu: String,
    device: String,
}

fn gpu_family(page: &mut Page, family: &GpuFamily, hosts: &[&HostState]) {
    let mut started = false;
    for host in hosts {
        for gpu in nvidia(host) {
            let Some(value) = (family.value)(gpu) else {
                continue;
            };
            if !started {
                page.family(family.name, family.help, family.kind);
                started = true;
            }
            gpu_sample(page, family.name, host, gpu, &[], value);
        }
    }
}

fn gpu_sample(
    page: &mut Page,
    name: &str,
    host: &HostState,
    gpu: &GpuState,
    extra: &[(&str, &str)],
    value: f64,
) {
    let sample = &gpu.latest;
    let ids = GpuLabels {
        gpu: sample.index.to_string(),
        device: format!("nvidia{}", sample.index),
    };
    let driver = sample
        .driver_version
        .as_deref()
        .or(host.info.driver_version.as_deref())
        .unwrap_or("");
    let mut labels: Vec<(&str, &str)> = vec![
        ("gpu", &ids.gpu),
        ("UUID", &sample.uuid),
        ("pci_bus_id", &sample.bus_id),
        ("device", &ids.device),
        ("modelName", &sample.name),
        ("Hostname", &host.name),
    ];
    if !driver.is_empty() {
        labels.push(("DCGM_FI_DRIVER_VERSION", driver));
    }
    labels.extend_from_slice(extra);
    labels.push(("instance", &host.name));
    page.sample(name, &labels, value);
}

/// `DCGM_FI_DEV_XID_ERRORS`: the value of the last Xid each GPU reported, from the host's
/// findings (`xid_<N>` on that GPU); GPUs with none are left out, as dcgm-exporter leaves out
/// blank values.
fn last_xid(page: &mut Page, hosts: &[&HostState]) {
    let mut started = false;
    for host in hosts {
        for gpu in nvidia(host) {
            let index = gpu.latest.index;
            let xid = host
                .findings
                .iter()
                .filter(|f| f.gpu == Some(index))
                .filter_map(|f| f.label.strip_prefix("xid_")?.parse::<u32>().ok())
                .next_back();
            let Some(xid) = xid else {
                continue;
            };
            if !started {
                page.family(
                    "DCGM_FI_DEV_XID_ERRORS",
                    "Value of the last XID error encountered.",
                    Kind::Gauge,
                );
                started = true;
            }
            gpu_sample(
                page,
                "DCGM_FI_DEV_XID_ERRORS",
                host,
                gpu,
                &[],
                f64::from(xid),
            );
        }
    }
}

/// gpufleet's own series, one family at a time.
fn own_series(page: &mut Page, fleet: &Fleet) {
    let now_ms = fleet.now_ms;
    let hosts = &fleet.hosts;
    let statuses: Vec<Option<HostStatus>> = (0..hosts.len()).map(|id| fleet.status(id)).collect();
    let each = |page: &mut Page, name: &str, value: &dyn Fn(usize) -> Option<f64>| {
        for (id, host) in fleet.watched() {
            if let Some(v) = value(id) {
                page.sample(name, &[("instance", &host.name)], v);
            }
        }
    };
    page.family(
        "gpufleet_host_up",
        "1 while gpufleet has a working link to the host, else 0.",
        Kind::Gauge,
    );
    each(page, "gpufleet_host_up", &|id| {
        let up = !matches!(
            statuses[id],
            Some(HostStatus::Unreachable { .. } | HostStatus::Connecting { .. }) | None
        );
        Some(f64::from(u8::from(up)))
    });
    page.family(
        "gpufleet_host_streaming",
        "1 while the host's GPU readings are live (not stale, lost, unreachable or flooding).",
        Kind::Gauge,
    );
    each(page, "gpufleet_host_streaming", &|id| {
        Some(f64::from(u8::from(statuses[id] == Some(HostStatus::Live))))
    });
    page.family(
        "gpufleet_sample_age_seconds",
        "Seconds since the host's newest GPU reading.",
        Kind::Gauge,
    );
    each(page, "gpufleet_sample_age_seconds", &|id| {
        hosts[id]
            .last_sample_ms
            .map(|at| now_ms.saturating_sub(at) as f64 / 1000.0)
    });
    money_series(page, fleet);
    findings_series(page, fleet);
    filesystem_series(page, fleet);
    dead_man_series(page, fleet);
    super::jobs::job_series(page, fleet);
    super::accounts::account_series(page, fleet);
}

/// Each host with a dead-man switch (`[hosts.dead_man]`): armed or not, and when it fires.
fn dead_man_series(page: &mut Page, fleet: &Fleet) {
    page.family(
        "gpufleet_dead_man_armed",
        "1 while the host's dead-man switch is armed (it stops the instance when no gpufleet pushes it back), else 0.",
        Kind::Gauge,
    );
    for (_, host) in fleet.watched() {
        if let Some(state) = &host.dead_man {
            page.sample(
                "gpufleet_dead_man_armed",
                &[("instance", &host.name)],
                f64::from(u8::from(state.armed)),
            );
        }
    }
    page.family(
        "gpufleet_dead_man_deadline_seconds",
        "When the host's armed dead-man switch stops the instance unless pushed back, as a Unix time in seconds.",
        Kind::Gauge,
    );
    for (_, host) in fleet.watched() {
        if let Some(deadline_ms) = host.dead_man.as_ref().and_then(|s| s.deadline_ms) {
            page.sample(
                "gpufleet_dead_man_deadline_seconds",
                &[("instance", &host.name)],
                deadline_ms as f64 / 1000.0,
            );
        }
    }
}

/// Each file system a host's `df` reading found (`/`, `/dev/shm`, the jobs' directories), once
/// per mount point: the share used as `df` counts its capacity.
fn filesystem_series(page: &mut Page, fleet: &Fleet) {
    page.family(
        "gpufleet_filesystem_used_ratio",
        "Share of the file system in use, 0 to 1, as df counts its capacity (used / (used + available)).",
        Kind::Gauge,
    );
    for (_, host) in fleet.watched() {
        for (fs, _) in host.disks.filesystems() {
            if let Some(ratio) = fs.used_ratio() {
                page.sample(
                    "gpufleet_filesystem_used_ratio",
                    &[("instance", &host.name), ("mount", &fs.mount)],
                    ratio,
                );
            }
        }
    }
}

fn money_series(page: &mut Page, fleet: &Fleet) {
    let money = &fleet.money;
    let costs = &money.fleet.hosts;
    let watched = |id: usize| fleet.hosts.get(id).is_some_and(|h| !h.retired);
    let with_currency = |page: &mut Page, name: &str, value: &dyn Fn(usize) -> Option<f64>| {
        for (id, cost) in costs.iter().enumerate().filter(|(id, _)| watched(*id)) {
            if let Some(v) = value(id) {
                let currency = cost.currency().unwrap_or("");
                page.sample(name, &[("currency", currency), ("instance", &cost.host)], v);
            }
        }
    };
    page.family(
        "gpufleet_price_per_hour",
        "The host's price per hour, in its currency.",
        Kind::Gauge,
    );
    with_currency(page, "gpufleet_price_per_hour", &|id| {
        costs[id].price.as_ref().map(|p| p.price_per_hour)
    });
    page.family(
        "gpufleet_spent",
        "Money spent on the host so far in this rental, in its currency.",
        Kind::Gauge,
    );
    with_currency(page, "gpufleet_spent", &|id| costs[id].spent());
    for (name, help, read) in [
        (
            "gpufleet_billed_seconds_total",
            "Seconds billed for the host in this rental.",
            (|c| c.billed_ms) as fn(&crate::cost::LedgerTotals) -> u64,
        ),
        (
            "gpufleet_busy_seconds_total",
            "Billed seconds the host's GPUs were busy.",
            |c| c.busy_ms,
        ),
        (
            "gpufleet_idle_seconds_total",
            "Billed seconds the host's GPUs sat idle (counted once idle long enough).",
            |c| c.idle_ms,
        ),
    ] {
        page.family(name, help, Kind::Counter);
        for (_, cost) in costs.iter().enumerate().filter(|(id, _)| watched(*id)) {
            page.sample(
                name,
                &[("instance", &cost.host)],
                read(&cost.totals) as f64 / 1000.0,
            );
        }
    }
    page.family(
        "gpufleet_effective_utilization_ratio",
        "Busy time over billed time (0 to 1).",
        Kind::Gauge,
    );
    for (_, cost) in costs.iter().enumerate().filter(|(id, _)| watched(*id)) {
        if let Some(ratio) = cost.totals.effective_utilization() {
            page.sample(
                "gpufleet_effective_utilization_ratio",
                &[("instance", &cost.host)],
                ratio,
            );
        }
    }
    page.family(
        "gpufleet_red_line_crossed",
        "1 for each red line crossed (kind: host_idle, host_budget, host_hours, host_run_time, job_run_time, fleet_budget, fleet_hours).",
        Kind::Gauge,
    );
    let mut seen: Vec<(&str, &str)> = Vec::new();
    for line in &money.red_lines {
        let instance = line.host().unwrap_or("fleet");
        // Two jobs of one host over their run limit are one series.
        if seen.contains(&(line.kind(), instance)) {
            continue;
        }
        seen.push((line.kind(), instance));
        page.sample(
            "gpufleet_red_line_crossed",
            &[("kind", line.kind()), ("instance", instance)],
            1.0,
        );
    }
    page.family(
        "gpufleet_auto_release_state",
        "1 for the auto-release state of each host that has auto_release on.",
        Kind::Gauge,
    );
    for (_, host) in money
        .hosts
        .iter()
        .enumerate()
        .filter(|(id, h)| h.auto.is_some() && watched(*id))
    {
        let state = match host.auto_decision {
            AutoDecision::Nothing => "watching",
            AutoDecision::CountingDown { .. } => "counting_down",
            AutoDecision::Held => "held",
            AutoDecision::Fire => "releasing",
        };
        page.sample(
            "gpufleet_auto_release_state",
            &[("state", state), ("instance", &host.config.name)],
            1.0,
        );
    }
}

fn findings_series(page: &mut Page, fleet: &Fleet) {
    page.family(
        "gpufleet_finding_firing",
        "1 for each finding firing on a host (label as gpufleet diagnose names it); 0 for one \
         whose fault ended (a new boot, or its GPU streams again) while it fires no more.",
        Kind::Gauge,
    );
    for (_, host) in fleet.watched() {
        let firing = host.findings.iter().map(|f| (f, 1.0));
        // An ended finding once per label and GPU, unless the same one fires again.
        let mut ended: Vec<&crate::diagnose::Finding> = Vec::new();
        for e in host.faults.earlier() {
            let f = &e.finding;
            let same = |o: &&crate::diagnose::Finding| o.label == f.label && o.gpu == f.gpu;
            if !host.findings.iter().any(|o| same(&o)) && !ended.iter().any(same) {
                ended.push(f);
            }
        }
        for (finding, value) in firing.chain(ended.into_iter().map(|f| (f, 0.0))) {
            let gpu = finding.gpu.map(|g| g.to_string()).unwrap_or_default();
            page.sample(
                "gpufleet_finding_firing",
                &[
                    ("label", &finding.label),
                    ("severity", finding.severity.word()),
                    ("gpu", &gpu),
                    ("instance", &host.name),
                ],
                value,
            );
        }
    }
}
