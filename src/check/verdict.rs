//! Verdicts on what nvidia-smi and the kernel log say at rest: identity, health, power limits,
//! and the PCIe link (read under load when the probe ran, otherwise at rest).

use crate::check::expect::model_matches;
use crate::check::format::{gib_of_mib, watts};
use crate::check::inventory::{GpuStatic, KernelLog};
use crate::check::probe::{LoadSample, ProbeData};
use crate::check::reference::{self, Reference};
use crate::check::report::{Category, CheckResult, Status};
use crate::config::{CudaVersion, Expect};
use crate::diagnose::finding::Severity;
use crate::diagnose::kernel::KernelEvent;
use crate::diagnose::xid;

fn result(id: &str, category: Category, gpu: Option<u32>, status: Status) -> CheckResult {
    CheckResult::new(id, category, gpu, status)
}

/// `identity.count`: fewer GPUs than rented fails.
pub fn count(gpus: &[GpuStatic], expect: &Expect) -> CheckResult {
    let found = gpus.len() as u32;
    let mut names: Vec<&str> = gpus.iter().map(|g| g.name.as_str()).collect();
    names.dedup();
    let measured = format!("{found} ({})", names.join(", "));
    let r = result("identity.count", Category::Identity, None, Status::Pass).measured(measured);
    match expect.count {
        Some(want) if found < want => r
            .expected(want.to_string())
            .message(format!(
                "Only {found} of the {want} GPUs rented are visible: the rest are missing, \
                 hidden from this container, or failed."
            ))
            .with_status(Status::Fail),
        Some(want) => r
            .expected(want.to_string())
            .message("All the GPUs rented are visible."),
        None => r.message("No GPU count was expected; this is what the host has."),
    }
}

/// `identity.model`: the card is the model rented.
pub fn model(g: &GpuStatic, expect: &Expect) -> CheckResult {
    let reference = reference::lookup(&g.name);
    let r = result(
        "identity.model",
        Category::Identity,
        Some(g.index),
        Status::Pass,
    )
    .measured(g.name.clone());
    let about = match reference {
        Some(r) => format!("reference figures: {}", r.model),
        None => "not in the reference table, so throughput is recorded but not graded".to_string(),
    };
    match &expect.gpu {
        Some(want) if !model_matches(want, &g.name) => r
            .expected(want.clone())
            .with_status(Status::Fail)
            .message(format!(
                "This is a {}, not the {want} that was rented.",
                g.name
            )),
        Some(want) => r
            .expected(want.clone())
            .message(format!("The model rented ({about}).")),
        None => r.message(format!("No model was expected ({about}).")),
    }
}

/// `identity.memory`: the card's memory against the expectation or the model's label. Labels
/// and listings are usually in GB, so the total is read as GB when that is closer.
pub fn memory(g: &GpuStatic, expect: &Expect) -> CheckResult {
    let r = result(
        "identity.memory",
        Category::Identity,
        Some(g.index),
        Status::Pass,
    );
    let Some(mib) = g.memory_total_mib else {
        return r
            .with_status(Status::Warn)
            .message("nvidia-smi did not report the memory size.");
    };
    let gib = gib_of_mib(mib);
    let gb = mib as f64 * 1_048_576.0 / 1e9;
    let r = r.measured(format!("{gib:.1} GiB ({mib} MiB)"));
    let (want, source) = match (expect.memory_gib, reference::lookup(&g.name)) {
        (Some(want), _) => (want, String::new()),
        (None, Some(refr)) => (refr.memory_label_gb, format!(" ({} label)", refr.model)),
        (None, None) => return r.message("No memory size was expected for this model."),
    };
    let ratio = gib.max(gb) / want;
    let r = r.expected(format!("{want} GiB{source}"));
    if ratio > 1.15 {
        r.message("More memory than expected: a larger card than the one rented.")
    } else if ratio >= 0.95 {
        r.message("The memory matches the label.")
    } else if ratio >= 0.85 {
        r.with_status(Status::Warn).message(format!(
            "{:.0}% of the {want} GiB expected: a different memory configuration or part of \
             the card reserved.",
            ratio * 100.0
        ))
    } else {
        r.with_status(Status::Fail).message(format!(
            "Only {:.0}% of the {want} GiB expected: a smaller card or a slice of one (vGPU, MIG).",
            ratio * 100.0
        ))
    }
}

/// `identity.cuda`: the newest CUDA the driver supports against `min_cuda`.
pub fn cuda(driver: Option<&str>, cuda: Option<&str>, expect: &Expect) -> CheckResult {
    let r = result("identity.cuda", Category::Identity, None, Status::Pass).measured(format!(
        "driver {}, CUDA {}",
        driver.unwrap_or("unknown"),
        cuda.unwrap_or("unknown")
    ));
    let Some(min) = expect.min_cuda else {
        return r.message("The newest CUDA this driver supports; no minimum was expected.");
    };
    let r = r.expected(format!("CUDA ≥ {min}"));
    match cuda.and_then(|c| CudaVersion::parse(c).ok()) {
        Some(have) if have >= min => r.message("The driver is new enough."),
        Some(have) => r.with_status(Status::Fail).message(format!(
            "The driver supports CUDA {have} at most: programs built for CUDA {min} will not \
             start; a newer driver or another host is needed."
        )),
        None => r
            .with_status(Status::Warn)
            .message("nvidia-smi did not say which CUDA version the driver supports."),
    }
}

/// `identity.torch`: the host's PyTorch can use these GPUs (its CUDA no newer than the
/// driver's major version; kernels compiled for the cards' architecture).
pub fn torch(probe: &ProbeData, driver_cuda: Option<&str>) -> CheckResult {
    let r = result("identity.torch", Category::Identity, None, Status::Pass);
    let Some(version) = &probe.torch_version else {
        let why = probe
            .skip
            .clone()
            .unwrap_or_else(|| "the probe did not report PyTorch".to_string());
        return r.with_status(Status::Skip).message(why);
    };
    let torch_cuda = probe.torch_cuda.as_deref();
    let r = r.measured(format!(
        "PyTorch {version} (CUDA {})",
        torch_cuda.unwrap_or("none")
    ));
    let r = match driver_cuda {
        Some(d) => r.expected(format!("CUDA ≤ {d} (driver)")),
        None => r,
    };
    let parse = |v: Option<&str>| v.and_then(|v| CudaVersion::parse(v).ok());
    if let (Some(t), Some(d)) = (parse(torch_cuda), parse(driver_cuda))
        && t.major > d.major
    {
        return r.with_status(Status::Fail).message(format!(
            "PyTorch was built for CUDA {t} but the driver supports {d} at most: it cannot use \
             the GPUs until the driver is upgraded or a build for CUDA {}.x is installed.",
            d.major
        ));
    }
    let no_kernels: Vec<String> = probe
        .devices
        .iter()
        .filter(|d| d.arch_ok == Some(false))
        .map(|d| {
            format!(
                "{} (sm_{})",
                d.name,
                d.capability.iter().map(u32::to_string).collect::<String>()
            )
        })
        .collect();
    if !no_kernels.is_empty() {
        return r.with_status(Status::Fail).message(format!(
            "This PyTorch has no kernels for {}: expect \"no kernel image is available\"; \
             install a build that supports the architecture.",
            no_kernels.join(", ")
        ));
    }
    if let Some(skip) = &probe.skip {
        return r.with_status(Status::Skip).message(skip.clone());
    }
    r.message("PyTorch can use these GPUs.")
}

/// `health.ecc`: uncorrectable errors since the driver loaded fail; over the card's life warn.
pub fn ecc(g: &GpuStatic, reference: Option<&Reference>) -> CheckResult {
    let r = result("health.ecc", Category::Health, Some(g.index), Status::Pass);
    let mode = match g.ecc_enabled {
        Some(true) => "on",
        Some(false) => "off",
        None => "not supported",
    };
    let r = r.measured(format!(
        "ECC {mode}; uncorrectable {} since driver load, {} lifetime",
        count_text(g.ecc_volatile),
        count_text(g.ecc_aggregate)
    ));
    let r = r.expected("0 uncorrectable");
    match (g.ecc_volatile, g.ecc_aggregate) {
        (Some(v), _) if v > 0 => r.with_status(Status::Fail).message(format!(
            "{v} uncorrectable memory errors since the driver loaded: data on this card may be \
             corrupt; reboot, and rent another host if they come back."
        )),
        (_, Some(a)) if a > 0 => r.with_status(Status::Warn).message(format!(
            "{a} uncorrectable memory errors over the card's life (none since the driver \
             loaded): watch it."
        )),
        _ if g.ecc_enabled == Some(false) && reference.is_some_and(|r| r.ecc) => {
            r.with_status(Status::Warn).message(
                "ECC is off on a card that normally runs with it: memory errors go unnoticed.",
            )
        }
        _ if g.ecc_enabled.is_none() => r.message("This card has no ECC to report."),
        _ => r.message("No uncorrectable memory errors."),
    }
}

fn count_text(n: Option<u64>) -> String {
    n.map_or_else(|| "n/a".to_string(), |n| n.to_string())
}

/// `health.retirement`: row remapping that failed fails; pending remaps or page retirements
/// (which need a reset) warn.
pub fn retirement(g: &GpuStatic) -> CheckResult {
    let yes = |v: Option<bool>| match v {
        Some(true) => "yes",
        Some(false) => "no",
        None => "n/a",
    };
    let r = result(
        "health.retirement",
        Category::Health,
        Some(g.index),
        Status::Pass,
    )
    .measured(format!(
        "remap failed: {}, remap pending: {}, retired pages pending: {}",
        yes(g.remap_failure),
        yes(g.remap_pending),
        yes(g.retired_pending)
    ))
    .expected("none");
    if g.remap_failure == Some(true) {
        return r.with_status(Status::Fail).message(
            "A memory row could not be remapped: the card has run out of spare rows, an RMA \
             case; rent another host.",
        );
    }
    if g.remap_pending == Some(true) || g.retired_pending == Some(true) {
        return r.with_status(Status::Warn).message(
            "Memory rows or pages wait to be retired at the next GPU reset: reboot the \
             instance before long jobs.",
        );
    }
    r.message("No failed or pending memory repairs.")
}

/// `health.persistence`: reported for what it means; not a fault on its own.
pub fn persistence(g: &GpuStatic) -> CheckResult {
    let r = result(
        "health.persistence",
        Category::Health,
        Some(g.index),
        Status::Pass,
    );
    match g.persistence {
        Some(true) => r
            .measured("enabled")
            .message("The driver stays loaded between programs."),
        Some(false) => r.measured("disabled").message(
            "The driver unloads when no program uses the GPU: each start pays ~1-2 s and \
             volatile ECC counters reset per run (harmless for long jobs).",
        ),
        None => r
            .measured("n/a")
            .message("Persistence mode is not reported here."),
    }
}

/// `health.xid`: Xid lines in the kernel log, graded by the Xid catalog.
pub fn xid_lines(log: &KernelLog) -> CheckResult {
    let r = result("health.xid", Category::Health, None, Status::Pass).expected("no Xid errors");
    let events = match log {
        KernelLog::NotRead => {
            return r
                .with_status(Status::Skip)
                .message("The kernel log was not read.");
        }
        KernelLog::Unreadable(why) => {
            return r
                .with_status(Status::Skip)
                .message(format!("The kernel log is not readable here: {why}"));
        }
        KernelLog::Read(events) => events,
    };
    let mut codes: Vec<(u32, usize)> = Vec::new();
    let mut worst = Status::Pass;
    let mut first_bad: Option<&str> = None;
    for (event, line) in events {
        let (code, severity) = match event {
            KernelEvent::Xid(x) => (Some(x.code), xid::lookup(x.code).map(|i| i.severity)),
            KernelEvent::FellOffBus { .. } => (None, Some(Severity::Critical)),
            _ => continue,
        };
        let status = match severity {
            Some(Severity::Critical) => Status::Fail,
            Some(Severity::Info) => Status::Pass,
            Some(Severity::Warning) | None => Status::Warn,
        };
        if status > worst {
            worst = status;
            first_bad = Some(line);
        }
        let code = code.unwrap_or(79);
        match codes.iter_mut().find(|(c, _)| *c == code) {
            Some((_, n)) => *n += 1,
            None => codes.push((code, 1)),
        }
    }
    if codes.is_empty() {
        return r.measured("none").message("No Xid errors since boot.");
    }
    let listed: Vec<String> = codes.iter().map(|(c, n)| format!("Xid {c} ×{n}")).collect();
    let r = r.measured(listed.join(", ")).with_status(worst);
    let line = first_bad.map(|l| format!(" ({l})")).unwrap_or_default();
    match worst {
        Status::Fail => r.message(format!(
            "The kernel log shows a hardware-class GPU error since boot{line}: reboot, and rent \
             another host if it recurs."
        )),
        Status::Warn => r.message(format!(
            "The kernel log shows GPU errors since boot{line}, usually from programs; watch for \
             repeats."
        )),
        _ => r.message("Only informational Xid lines since boot (programs stopped or killed)."),
    }
}

/// `power.limit`: a limit more than 10% under the default fails; any cap under it warns.
pub fn power(g: &GpuStatic) -> CheckResult {
    let r = result("power.limit", Category::Power, Some(g.index), Status::Pass);
    let Some(enforced) = g.power_enforced_w else {
        return r
            .with_status(Status::Skip)
            .message("The power limit is not reported for this card (laptop parts, some vGPUs).");
    };
    let r = r.measured(watts(enforced));
    let Some(default) = g.power_default_w else {
        return r.message("The default limit is not reported, so the cap cannot be compared.");
    };
    let max = g
        .power_max_w
        .map(|m| format!(", max {}", watts(m)))
        .unwrap_or_default();
    let r = r.expected(format!("{} (default{max})", watts(default)));
    let ratio = enforced / default;
    if ratio >= 0.98 {
        r.message("The card runs at its default power limit.")
    } else if ratio >= 0.9 {
        r.with_status(Status::Warn).message(format!(
            "The power limit is lowered to {:.0}% of the default: slightly slower under load.",
            ratio * 100.0
        ))
    } else {
        r.with_status(Status::Fail).message(format!(
            "The power limit is cut to {:.0}% of the default: the card cannot reach its rated \
             throughput; ask the provider to restore it or rent another host.",
            ratio * 100.0
        ))
    }
}

/// `pcie.link`: the link generation and width reached under load against the maximum. Fewer
/// lanes fail (a seating or riser fault); a lower generation warns.
pub fn pcie(g: &GpuStatic, samples: &[&LoadSample]) -> (CheckResult, PcieFigures) {
    let r = result("pcie.link", Category::Pcie, Some(g.index), Status::Pass);
    let loaded = !samples.is_empty();
    let max_of = |f: fn(&LoadSample) -> Option<u32>| samples.iter().filter_map(|s| f(s)).max();
    let fig = if loaded {
        PcieFigures {
            generation: max_of(|s| s.pcie.gen_current).or(g.pcie_gen),
            gen_max: max_of(|s| s.pcie.gen_max).or(g.pcie_gen_max),
            width: max_of(|s| s.pcie.width_current).or(g.pcie_width),
            width_max: max_of(|s| s.pcie.width_max).or(g.pcie_width_max),
            under_load: true,
        }
    } else {
        PcieFigures {
            generation: g.pcie_gen,
            gen_max: g.pcie_gen_max,
            width: g.pcie_width,
            width_max: g.pcie_width_max,
            under_load: false,
        }
    };
    let (Some(gen_now), Some(width)) = (fig.generation, fig.width) else {
        return (
            r.with_status(Status::Skip)
                .message("The PCIe link is not reported (virtualized or SXM-only parts)."),
            fig,
        );
    };
    let gen_max = fig.gen_max.unwrap_or(gen_now);
    let width_max = fig.width_max.unwrap_or(width);
    let when = if loaded { "under load" } else { "at rest" };
    let r = r
        .measured(format!("Gen{gen_now} x{width} ({when})"))
        .expected(format!("Gen{gen_max} x{width_max}"));
    let r = if width < width_max {
        let status = if loaded { Status::Fail } else { Status::Warn };
        r.with_status(status).message(format!(
            "The link trained to x{width} of x{width_max} lanes: host-to-GPU transfers get \
             {:.0}% of the bandwidth; usually a seating or riser fault.",
            width as f64 / width_max as f64 * 100.0
        ))
    } else if gen_now < gen_max && loaded {
        r.with_status(Status::Warn).message(format!(
            "The link runs at Gen{gen_now} under load though Gen{gen_max} is possible: \
             host-to-GPU transfers are slower than they should be."
        ))
    } else if gen_now < gen_max {
        r.message("Read at rest, where links slow down to save power; not checked under load.")
    } else if loaded {
        r.message("The link runs at full generation and width under load.")
    } else {
        r.message("Full generation and width (read at rest; no load was run).")
    };
    (r, fig)
}

/// The PCIe figures a verdict was made on.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PcieFigures {
    pub generation: Option<u32>,
    pub gen_max: Option<u32>,
    pub width: Option<u32>,
    pub width_max: Option<u32>,
    pub under_load: bool,
}
