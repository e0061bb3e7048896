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
use rust_i18n::t;

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
            .message(t!("check_msg.count_missing", found = found, want = want))
            .with_status(Status::Fail),
        Some(want) => r
            .expected(want.to_string())
            .message(t!("check_msg.count_ok")),
        None => r.message(t!("check_msg.count_none")),
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
        Some(r) => t!("check_msg.model_reference", model = r.model).into_owned(),
        None => t!("check_msg.model_unknown").into_owned(),
    };
    match &expect.gpu {
        Some(want) if !model_matches(want, &g.name) => r
            .expected(want.clone())
            .with_status(Status::Fail)
            .message(t!("check_msg.model_wrong", name = g.name, want = want)),
        Some(want) => r
            .expected(want.clone())
            .message(t!("check_msg.model_ok", about = about)),
        None => r.message(t!("check_msg.model_none", about = about)),
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
            .message(t!("check_msg.memory_unknown"));
    };
    let gib = gib_of_mib(mib);
    let gb = mib as f64 * 1_048_576.0 / 1e9;
    let r = r.measured(format!("{gib:.1} GiB ({mib} MiB)"));
    let (want, source) = match (expect.memory_gib, reference::lookup(&g.name)) {
        (Some(want), _) => (want, String::new()),
        (None, Some(refr)) => (
            refr.memory_label_gb,
            format!(" ({})", t!("check_value.label", model = refr.model)),
        ),
        (None, None) => return r.message(t!("check_msg.memory_none")),
    };
    let ratio = gib.max(gb) / want;
    let r = r.expected(format!("{want} GiB{source}"));
    if ratio > 1.15 {
        r.message(t!("check_msg.memory_more"))
    } else if ratio >= 0.95 {
        r.message(t!("check_msg.memory_ok"))
    } else if ratio >= 0.85 {
        r.with_status(Status::Warn).message(t!(
            "check_msg.memory_less",
            percent = format!("{:.0}", ratio * 100.0),
            want = want
        ))
    } else {
        r.with_status(Status::Fail).message(t!(
            "check_msg.memory_slice",
            percent = format!("{:.0}", ratio * 100.0),
            want = want
        ))
    }
}

/// `identity.cuda`: the newest CUDA the driver supports against `min_cuda`.
pub fn cuda(driver: Option<&str>, cuda: Option<&str>, expect: &Expect) -> CheckResult {
    let r = result("identity.cuda", Category::Identity, None, Status::Pass).measured(t!(
        "check_report.driver",
        driver = driver.map_or_else(|| t!("check_value.unknown"), Into::into),
        cuda = cuda.map_or_else(|| t!("check_value.unknown"), Into::into)
    ));
    let Some(min) = expect.min_cuda else {
        return r.message(t!("check_msg.cuda_none"));
    };
    let r = r.expected(format!("CUDA ≥ {min}"));
    match cuda.and_then(|c| CudaVersion::parse(c).ok()) {
        Some(have) if have >= min => r.message(t!("check_msg.cuda_ok")),
        Some(have) => {
            r.with_status(Status::Fail)
                .message(t!("check_msg.cuda_old", have = have, min = min))
        }
        None => r
            .with_status(Status::Warn)
            .message(t!("check_msg.cuda_unknown")),
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
            .unwrap_or_else(|| t!("check_msg.torch_unknown").into_owned());
        return r.with_status(Status::Skip).message(why);
    };
    let torch_cuda = probe.torch_cuda.as_deref();
    let r = r.measured(t!(
        "check_report.torch",
        version = version,
        cuda = torch_cuda.map_or_else(|| t!("check_report.none"), Into::into)
    ));
    let r = match driver_cuda {
        Some(d) => r.expected(t!("check_value.cuda_at_most", cuda = d)),
        None => r,
    };
    let parse = |v: Option<&str>| v.and_then(|v| CudaVersion::parse(v).ok());
    if let (Some(t), Some(d)) = (parse(torch_cuda), parse(driver_cuda))
        && t.major > d.major
    {
        return r.with_status(Status::Fail).message(t!(
            "check_msg.torch_too_new",
            torch = t,
            driver = d,
            major = d.major
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
        return r.with_status(Status::Fail).message(t!(
            "check_msg.torch_no_kernels",
            gpus = no_kernels.join(", ")
        ));
    }
    if let Some(skip) = &probe.skip {
        return r.with_status(Status::Skip).message(skip.clone());
    }
    r.message(t!("check_msg.torch_ok"))
}

/// `health.ecc`: uncorrectable errors since the driver loaded fail; over the card's life warn.
pub fn ecc(g: &GpuStatic, reference: Option<&Reference>) -> CheckResult {
    let r = result("health.ecc", Category::Health, Some(g.index), Status::Pass);
    let mode = match g.ecc_enabled {
        Some(true) => t!("check_value.on"),
        Some(false) => t!("check_value.off"),
        None => t!("check_value.not_supported"),
    };
    let r = r.measured(t!(
        "check_value.ecc",
        mode = mode,
        now = count_text(g.ecc_volatile),
        lifetime = count_text(g.ecc_aggregate)
    ));
    let r = r.expected(t!("check_value.ecc_expected"));
    match (g.ecc_volatile, g.ecc_aggregate) {
        (Some(v), _) if v > 0 => r
            .with_status(Status::Fail)
            .message(t!("check_msg.ecc_now", n = v)),
        (_, Some(a)) if a > 0 => r
            .with_status(Status::Warn)
            .message(t!("check_msg.ecc_lifetime", n = a)),
        _ if g.ecc_enabled == Some(false) && reference.is_some_and(|r| r.ecc) => {
            r.with_status(Status::Warn).message(t!("check_msg.ecc_off"))
        }
        _ if g.ecc_enabled.is_none() => r.message(t!("check_msg.ecc_none")),
        _ => r.message(t!("check_msg.ecc_ok")),
    }
}

fn count_text(n: Option<u64>) -> String {
    n.map_or_else(|| t!("check_value.na").into_owned(), |n| n.to_string())
}

/// `health.retirement`: row remapping that failed fails; pending remaps or page retirements
/// (which need a reset) warn.
pub fn retirement(g: &GpuStatic) -> CheckResult {
    let yes = |v: Option<bool>| match v {
        Some(true) => t!("check_value.yes"),
        Some(false) => t!("check_value.no"),
        None => t!("check_value.na"),
    };
    let r = result(
        "health.retirement",
        Category::Health,
        Some(g.index),
        Status::Pass,
    )
    .measured(t!(
        "check_value.retirement",
        failed = yes(g.remap_failure),
        pending = yes(g.remap_pending),
        retired = yes(g.retired_pending)
    ))
    .expected(t!("check_report.none"));
    if g.remap_failure == Some(true) {
        return r
            .with_status(Status::Fail)
            .message(t!("check_msg.remap_failed"));
    }
    if g.remap_pending == Some(true) || g.retired_pending == Some(true) {
        return r
            .with_status(Status::Warn)
            .message(t!("check_msg.remap_pending"));
    }
    r.message(t!("check_msg.remap_ok"))
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
            .measured(t!("check_value.enabled"))
            .message(t!("check_msg.persistence_on")),
        Some(false) => r
            .measured(t!("check_value.disabled"))
            .message(t!("check_msg.persistence_off")),
        None => r
            .measured(t!("check_value.na"))
            .message(t!("check_msg.persistence_unknown")),
    }
}

/// `health.xid`: Xid lines in the kernel log, graded by the Xid catalog.
pub fn xid_lines(log: &KernelLog) -> CheckResult {
    let r = result("health.xid", Category::Health, None, Status::Pass)
        .expected(t!("check_value.no_xid"));
    let events = match log {
        KernelLog::NotRead => {
            return r
                .with_status(Status::Skip)
                .message(t!("check_msg.xid_not_read"));
        }
        KernelLog::Unreadable(why) => {
            return r
                .with_status(Status::Skip)
                .message(t!("check_msg.xid_unreadable", why = why));
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
        return r
            .measured(t!("check_report.none"))
            .message(t!("check_msg.xid_ok"));
    }
    let listed: Vec<String> = codes.iter().map(|(c, n)| format!("Xid {c} ×{n}")).collect();
    let r = r.measured(listed.join(", ")).with_status(worst);
    let line = first_bad.map(|l| format!(" ({l})")).unwrap_or_default();
    match worst {
        Status::Fail => r.message(t!("check_msg.xid_hardware", line = line)),
        Status::Warn => r.message(t!("check_msg.xid_program", line = line)),
        _ => r.message(t!("check_msg.xid_info")),
    }
}

/// `power.limit`: a limit more than 10% under the default fails; any cap under it warns.
pub fn power(g: &GpuStatic) -> CheckResult {
    let r = result("power.limit", Category::Power, Some(g.index), Status::Pass);
    let Some(enforced) = g.power_enforced_w else {
        return r
            .with_status(Status::Skip)
            .message(t!("check_msg.power_unknown"));
    };
    let r = r.measured(watts(enforced));
    let Some(default) = g.power_default_w else {
        return r.message(t!("check_msg.power_no_default"));
    };
    let max = g
        .power_max_w
        .map(|m| t!("check_value.power_max", watts = watts(m)))
        .unwrap_or_default();
    let r = r.expected(t!(
        "check_value.power_default",
        watts = watts(default),
        max = max
    ));
    let ratio = enforced / default;
    if ratio >= 0.98 {
        r.message(t!("check_msg.power_ok"))
    } else if ratio >= 0.9 {
        r.with_status(Status::Warn).message(t!(
            "check_msg.power_lowered",
            percent = format!("{:.0}", ratio * 100.0)
        ))
    } else {
        r.with_status(Status::Fail).message(t!(
            "check_msg.power_cut",
            percent = format!("{:.0}", ratio * 100.0)
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
                .message(t!("check_msg.pcie_unknown")),
            fig,
        );
    };
    let gen_max = fig.gen_max.unwrap_or(gen_now);
    let width_max = fig.width_max.unwrap_or(width);
    let when = if loaded {
        t!("check_value.under_load")
    } else {
        t!("check_value.at_rest")
    };
    let r = r
        .measured(format!("Gen{gen_now} x{width} ({when})"))
        .expected(format!("Gen{gen_max} x{width_max}"));
    let r = if width < width_max {
        let status = if loaded { Status::Fail } else { Status::Warn };
        r.with_status(status).message(t!(
            "check_msg.pcie_narrow",
            width = width,
            width_max = width_max,
            percent = format!("{:.0}", width as f64 / width_max as f64 * 100.0)
        ))
    } else if gen_now < gen_max && loaded {
        r.with_status(Status::Warn)
            .message(t!("check_msg.pcie_slow", now = gen_now, max = gen_max))
    } else if gen_now < gen_max {
        r.message(t!("check_msg.pcie_rest"))
    } else if loaded {
        r.message(t!("check_msg.pcie_ok"))
    } else {
        r.message(t!("check_msg.pcie_ok_rest"))
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
