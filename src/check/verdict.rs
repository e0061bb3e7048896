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

#[cfg(test)]
mod tests {
    //! Unit tests of the verdict logic: each rule at and around its thresholds.

    use crate::check::inventory::{GpuStatic, KernelLog};
    use crate::check::load;
    use crate::check::probe::{
        LoadSample, MatmulResult, PcieReading, ProbeData, ProbeDevice, VramResult, Window,
    };
    use crate::check::reference::lookup;
    use crate::check::report::Status;
    use crate::check::verdict;
    use crate::config::{CudaVersion, Expect};
    use crate::diagnose::kernel::parse_line;
    use crate::telemetry::{ClockEventReasons, GpuSample};

    fn none() -> Expect {
        Expect {
            gpu: None,
            count: None,
            memory_gib: None,
            min_cuda: None,
        }
    }

    fn h200() -> GpuStatic {
        GpuStatic {
            index: 0,
            name: "NVIDIA H200".to_string(),
            uuid: "GPU-67e6a1fd".to_string(),
            memory_total_mib: Some(143771),
            power_enforced_w: Some(700.0),
            power_default_w: Some(700.0),
            power_max_w: Some(700.0),
            ecc_enabled: Some(true),
            ecc_volatile: Some(0),
            ecc_aggregate: Some(0),
            remap_pending: Some(false),
            remap_failure: Some(false),
            persistence: Some(true),
            pcie_gen: Some(5),
            pcie_gen_max: Some(5),
            pcie_width: Some(16),
            pcie_width_max: Some(16),
            ..GpuStatic::default()
        }
    }

    fn sample(phase: &str, t: f64, clock: u32, power: f64, temp: f64, mask: u64) -> LoadSample {
        LoadSample {
            phase: phase.to_string(),
            elapsed_s: t,
            gpu: GpuSample {
                index: 0,
                clock_sm_mhz: Some(clock),
                clock_sm_max_mhz: Some(1980),
                power_draw_w: Some(power),
                power_limit_w: Some(700.0),
                temperature_c: Some(temp),
                clock_event_reasons: Some(ClockEventReasons(mask)),
                ..GpuSample::default()
            },
            pcie: PcieReading {
                gen_current: Some(5),
                gen_max: Some(5),
                width_current: Some(16),
                width_max: Some(16),
            },
        }
    }

    fn status_of(r: &crate::check::report::CheckResult) -> Status {
        r.status
    }

    #[test]
    fn identity_count_model_and_memory() {
        let gpus = vec![h200()];
        let want = |count| Expect {
            count: Some(count),
            ..none()
        };
        assert_eq!(verdict::count(&gpus, &want(1)).status, Status::Pass);
        assert_eq!(verdict::count(&gpus, &want(2)).status, Status::Fail);
        assert_eq!(verdict::count(&gpus, &none()).status, Status::Pass);

        let gpu = |g: &str| Expect {
            gpu: Some(g.to_string()),
            ..none()
        };
        assert_eq!(verdict::model(&h200(), &gpu("H200")).status, Status::Pass);
        let wrong = verdict::model(&h200(), &gpu("RTX 4090"));
        assert_eq!(wrong.status, Status::Fail);
        assert_eq!(wrong.measured, "NVIDIA H200");
        assert_eq!(wrong.expected, "RTX 4090");

        let mem = |gib| Expect {
            memory_gib: Some(gib),
            ..none()
        };
        assert_eq!(verdict::memory(&h200(), &mem(141.0)).status, Status::Pass);
        assert_eq!(
            verdict::memory(&h200(), &none()).status,
            Status::Pass,
            "label"
        );
        let a10 = GpuStatic {
            name: "NVIDIA A10".to_string(),
            memory_total_mib: Some(23028),
            ..h200()
        };
        assert_eq!(
            verdict::memory(&a10, &mem(24.0)).status,
            Status::Pass,
            "24 GB label"
        );
        let sliced = GpuStatic {
            memory_total_mib: Some(71 * 1024),
            ..h200()
        };
        assert_eq!(verdict::memory(&sliced, &mem(141.0)).status, Status::Fail);
        assert_eq!(
            verdict::memory(&sliced, &none()).status,
            Status::Fail,
            "vs label"
        );
        let short = GpuStatic {
            memory_total_mib: Some(120 * 1024),
            ..h200()
        };
        assert_eq!(verdict::memory(&short, &mem(141.0)).status, Status::Warn);
    }

    #[test]
    fn driver_cuda_and_pytorch() {
        let min = |v: &str| Expect {
            min_cuda: CudaVersion::parse(v).ok(),
            ..none()
        };
        let c = |cuda, e: &Expect| verdict::cuda(Some("580.159.04"), Some(cuda), e).status;
        assert_eq!(c("13.0", &min("12.1")), Status::Pass);
        assert_eq!(c("12.0", &min("12.1")), Status::Fail);
        assert_eq!(c("12.1", &min("12.1")), Status::Pass);
        assert_eq!(verdict::cuda(None, None, &min("12.1")).status, Status::Warn);

        let mut probe = ProbeData {
            torch_version: Some("2.5.1".to_string()),
            torch_cuda: Some("12.4".to_string()),
            ..ProbeData::default()
        };
        assert_eq!(verdict::torch(&probe, Some("13.0")).status, Status::Pass);
        assert_eq!(
            verdict::torch(&probe, Some("12.2")).status,
            Status::Pass,
            "minor compat"
        );
        assert_eq!(verdict::torch(&probe, Some("11.8")).status, Status::Fail);
        probe.devices.push(ProbeDevice {
            index: 0,
            name: "Tesla P100".to_string(),
            uuid: None,
            capability: vec![6, 0],
            total_bytes: 16 << 30,
            bf16: false,
            arch_ok: Some(false),
        });
        let r = verdict::torch(&probe, Some("13.0"));
        assert_eq!(r.status, Status::Fail);
        assert!(r.message.contains("sm_60"), "{}", r.message);
        let skipped = ProbeData::skipped("PyTorch is not importable");
        assert_eq!(verdict::torch(&skipped, Some("13.0")).status, Status::Skip);
    }

    #[test]
    fn health_rules() {
        let refr = lookup("NVIDIA H200");
        assert_eq!(verdict::ecc(&h200(), refr).status, Status::Pass);
        let g = GpuStatic {
            ecc_volatile: Some(2),
            ..h200()
        };
        assert_eq!(verdict::ecc(&g, refr).status, Status::Fail);
        let g = GpuStatic {
            ecc_aggregate: Some(1),
            ..h200()
        };
        assert_eq!(verdict::ecc(&g, refr).status, Status::Warn);
        let g = GpuStatic {
            ecc_enabled: Some(false),
            ..h200()
        };
        assert_eq!(verdict::ecc(&g, refr).status, Status::Warn);
        let consumer = GpuStatic {
            name: "NVIDIA GeForce RTX 4090".to_string(),
            ecc_enabled: None,
            ecc_volatile: None,
            ecc_aggregate: None,
            ..h200()
        };
        assert_eq!(
            verdict::ecc(&consumer, lookup(&consumer.name)).status,
            Status::Pass
        );

        assert_eq!(verdict::retirement(&h200()).status, Status::Pass);
        let g = GpuStatic {
            remap_failure: Some(true),
            ..h200()
        };
        assert_eq!(verdict::retirement(&g).status, Status::Fail);
        let g = GpuStatic {
            remap_pending: Some(true),
            ..h200()
        };
        assert_eq!(verdict::retirement(&g).status, Status::Warn);
        let g = GpuStatic {
            retired_pending: Some(true),
            ..h200()
        };
        assert_eq!(verdict::retirement(&g).status, Status::Warn);
        let g = GpuStatic {
            persistence: Some(false),
            ..h200()
        };
        assert_eq!(verdict::persistence(&g).status, Status::Pass);
    }

    fn log(lines: &[&str]) -> KernelLog {
        KernelLog::Read(
            lines
                .iter()
                .filter_map(|l| parse_line(l).map(|e| (e, l.to_string())))
                .collect(),
        )
    }

    #[test]
    fn xid_lines_are_graded_by_the_catalog() {
        assert_eq!(verdict::xid_lines(&log(&[])).status, Status::Pass);
        let lost = verdict::xid_lines(&log(&[
            "[ 8123.0] NVRM: Xid (PCI:0000:5a:00): 79, GPU has fallen off the bus.",
        ]));
        assert_eq!(lost.status, Status::Fail);
        assert_eq!(lost.measured, "Xid 79 ×1");
        let app = verdict::xid_lines(&log(&[
            "NVRM: Xid (PCI:0000:3d:00): 13, pid=35521, name=python3, Graphics Exception",
            "NVRM: Xid (PCI:0000:3d:00): 13, pid=35521, name=python3, Graphics Exception",
        ]));
        assert_ne!(app.status, Status::Fail);
        assert_eq!(app.measured, "Xid 13 ×2");
        let denied = KernelLog::Unreadable("dmesg: read kernel buffer failed".to_string());
        assert_eq!(verdict::xid_lines(&denied).status, Status::Skip);
    }

    #[test]
    fn power_cap_thresholds() {
        let capped = |w| GpuStatic {
            power_enforced_w: Some(w),
            ..h200()
        };
        assert_eq!(verdict::power(&capped(700.0)).status, Status::Pass);
        assert_eq!(verdict::power(&capped(650.0)).status, Status::Warn);
        let r = verdict::power(&capped(450.0));
        assert_eq!(r.status, Status::Fail);
        assert_eq!(r.measured, "450 W");
        assert_eq!(r.expected, "700 W (default, max 700 W)");
        let unknown = GpuStatic {
            power_enforced_w: None,
            ..h200()
        };
        assert_eq!(verdict::power(&unknown).status, Status::Skip);
    }

    #[test]
    fn pcie_is_judged_under_load() {
        let mut s = sample("sustain", 20.0, 1455, 690.0, 60.0, 0x4);
        assert_eq!(verdict::pcie(&h200(), &[&s]).0.status, Status::Pass);
        s.pcie.width_current = Some(8);
        let (r, fig) = verdict::pcie(&h200(), &[&s]);
        assert_eq!(r.status, Status::Fail);
        assert_eq!(r.measured, "Gen5 x8 (under load)");
        assert!(fig.under_load);
        s.pcie.width_current = Some(16);
        s.pcie.gen_current = Some(4);
        assert_eq!(verdict::pcie(&h200(), &[&s]).0.status, Status::Warn);
        let idle = GpuStatic {
            pcie_gen: Some(1),
            ..h200()
        };
        let (r, fig) = verdict::pcie(&idle, &[]);
        assert_eq!(r.status, Status::Pass, "links idle down: {}", r.message);
        assert!(!fig.under_load);
        let idle_x8 = GpuStatic {
            pcie_width: Some(8),
            ..h200()
        };
        assert_eq!(verdict::pcie(&idle_x8, &[]).0.status, Status::Warn);
    }

    fn probe_with_vram(allocated_gib: f64, mismatched: u64) -> ProbeData {
        let total = 150_109_880_320u64;
        ProbeData {
            vram: vec![VramResult {
                gpu: 0,
                free_bytes: total - (750 << 20),
                total_bytes: total,
                target_bytes: 0,
                allocated_bytes: (allocated_gib * (1u64 << 30) as f64) as u64,
                oom: None,
                verify_error: None,
                checked_elements: 1000,
                mismatched_elements: mismatched,
            }],
            ..ProbeData::default()
        }
    }

    #[test]
    fn usable_vram_rules() {
        assert_eq!(
            load::vram(0, Some(0), &probe_with_vram(132.1, 0)).0.status,
            Status::Pass
        );
        assert_eq!(
            load::vram(0, Some(0), &probe_with_vram(110.0, 0)).0.status,
            Status::Warn
        );
        assert_eq!(
            load::vram(0, Some(0), &probe_with_vram(66.0, 0)).0.status,
            Status::Fail
        );
        assert_eq!(
            load::vram(0, Some(0), &probe_with_vram(132.1, 3)).0.status,
            Status::Fail
        );
        let skipped = ProbeData::skipped("no torch");
        let (r, usable) = load::vram(0, Some(0), &skipped);
        assert_eq!((r.status, usable), (Status::Skip, None));
        let crashed = ProbeData {
            failure: Some("the probe ended with exit 1: RuntimeError: CUDA error".to_string()),
            ..ProbeData::default()
        };
        assert_eq!(load::vram(0, Some(0), &crashed).0.status, Status::Fail);
    }

    fn matmul(tflops: f64, correct: bool) -> ProbeData {
        ProbeData {
            matmul: vec![MatmulResult {
                gpu: 0,
                dtype: "bf16".to_string(),
                n: 8192,
                tflops: Some(tflops),
                tflops_random: Some(tflops * 0.85),
                correct: Some(correct),
                finite: Some(true),
            }],
            ..ProbeData::default()
        }
    }

    #[test]
    fn matmul_against_the_reference() {
        let refr = lookup("NVIDIA H200");
        let grade = |t, ok| load::matmul(0, Some(0), &matmul(t, ok), refr).0.status;
        assert_eq!(grade(778.7, true), Status::Pass, "the real H200");
        assert_eq!(grade(672.0, true), Status::Pass, "15% under 790");
        assert_eq!(grade(660.0, true), Status::Warn);
        assert_eq!(grade(400.0, true), Status::Fail);
        assert_eq!(grade(790.0, false), Status::Fail, "wrong answers");
        let unknown = load::matmul(0, Some(0), &matmul(100.0, true), None).0;
        assert_eq!(unknown.status, Status::Pass);
        assert!(unknown.message.contains("No reference"));
    }

    fn sustain(samples: Vec<LoadSample>, rates: &[f64]) -> (Status, String) {
        let probe = ProbeData {
            windows: rates
                .iter()
                .enumerate()
                .map(|(i, t)| Window {
                    gpu: 0,
                    elapsed_s: 2.0 * i as f64,
                    tflops: Some(*t),
                })
                .collect(),
            ..ProbeData::default()
        };
        let refs: Vec<&LoadSample> = samples.iter().collect();
        let (r, _) = load::sustained(0, Some(0), &probe, &refs, 60.0);
        (r.status, r.message)
    }

    #[test]
    fn sustained_load_rules() {
        let steady: Vec<LoadSample> = (0..12)
            .map(|i| sample("sustain", i as f64, 1455, 690.0, 61.0, 0x4))
            .collect();
        let even = [667.0; 6];
        assert_eq!(sustain(steady.clone(), &even).0, Status::Pass);

        let mut hot = steady.clone();
        hot[8].gpu.clock_event_reasons = Some(ClockEventReasons(0x48));
        let (status, message) = sustain(hot, &even);
        assert_eq!(status, Status::Fail);
        assert!(message.contains("thermal"), "{message}");

        let mut brake = steady.clone();
        brake[3].gpu.clock_event_reasons = Some(ClockEventReasons(0x88));
        let (status, message) = sustain(brake, &even);
        assert_eq!(status, Status::Fail);
        assert!(message.contains("power brake"), "{message}");

        let mut warm = steady.clone();
        warm[5].gpu.clock_event_reasons = Some(ClockEventReasons(0x24));
        assert_eq!(sustain(warm.clone(), &even).0, Status::Warn);
        warm[6].gpu.clock_event_reasons = Some(ClockEventReasons(0x20));
        assert_eq!(sustain(warm, &even).0, Status::Fail);

        let sagging: Vec<LoadSample> = (0..12)
            .map(|i| sample("sustain", i as f64, 1700 - 80 * i, 300.0, 70.0, 0x0))
            .collect();
        let (status, message) = sustain(sagging, &even);
        assert_eq!(status, Status::Warn);
        assert!(message.contains("power stayed far under"), "{message}");

        let fading = [667.0, 660.0, 600.0, 520.0, 480.0, 470.0];
        assert_eq!(sustain(steady, &fading).0, Status::Warn);

        let skipped = ProbeData::skipped("no torch");
        let (r, _) = load::sustained(0, Some(0), &skipped, &[], 60.0);
        assert_eq!(status_of(&r), Status::Skip);
    }
}
