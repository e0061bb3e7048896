//! The ticket text to paste into the provider's support form, in English and in Simplified
//! Chinese (many renters rent from Chinese platforms). Facts only: the host, the GPU, when,
//! the evidence lines verbatim, the failed check, the hours billed, and what is asked.

use super::Report;

/// Evidence lines quoted in a ticket at most (the bundle has them all).
const TICKET_LINES: usize = 12;

/// The finding the ticket is about: the first critical one, else the first one.
fn headline(report: &Report) -> Option<&super::analyse::FindingSeen> {
    let findings = &report.analysis.findings;
    findings
        .iter()
        .filter(|f| f.severity == crate::diagnose::Severity::Critical)
        .min_by_key(|f| f.first_seen_ms)
        .or_else(|| findings.first())
}

/// `GPU 3 (PCI 00000000:1B:00.0, UUID GPU-...)`, from the finding and the GPUs seen.
fn which_gpu(report: &Report, zh: bool) -> Option<String> {
    let f = headline(report)?;
    let seen = f
        .gpu
        .and_then(|i| report.analysis.gpus.iter().find(|g| g.index == i));
    let pci = f
        .pci
        .clone()
        .or_else(|| seen.map(|g| g.bus_id.clone()))
        .filter(|p| !p.is_empty());
    let uuid = f
        .uuid
        .clone()
        .or_else(|| seen.map(|g| g.uuid.clone()))
        .filter(|u| !u.is_empty());
    if f.gpu.is_none() && pci.is_none() {
        return None;
    }
    let mut parts = Vec::new();
    parts.extend(pci.map(|p| format!("PCI {p}")));
    parts.extend(uuid.map(|u| format!("UUID {u}")));
    let index = f.gpu.map(|i| i.to_string()).unwrap_or_else(|| "?".into());
    Some(if zh {
        format!("{index} 号 GPU（{}）", parts.join("，"))
    } else {
        format!("GPU {index} ({})", parts.join(", "))
    })
}

fn machine(report: &Report) -> String {
    let gpus = &report.analysis.gpus;
    let model = gpus
        .first()
        .map(|g| g.name.clone())
        .unwrap_or_else(|| "GPU".to_string());
    let driver = report
        .analysis
        .driver_version
        .as_deref()
        .map(|d| format!(", driver {d}"))
        .unwrap_or_default();
    format!("{} x {model}{driver}", gpus.len().max(1))
}

fn quoted_evidence(report: &Report) -> String {
    let mut out = String::new();
    for line in report.analysis.evidence.iter().take(TICKET_LINES) {
        out.push_str(&format!("    {} {}\n", line.at, line.text));
    }
    let more = report.analysis.evidence.len().saturating_sub(TICKET_LINES);
    if more > 0 {
        out.push_str(&format!(
            "    (+{more} more lines in the attached report)\n"
        ));
    }
    out
}

/// A short Chinese name for the labels a ticket is most often about; others keep the label.
fn label_zh(label: &str) -> String {
    let known = [
        ("gpu_lost", "GPU 掉卡（驱动已无法访问该 GPU）"),
        ("no_devices", "找不到 GPU 设备"),
        ("driver_not_loaded", "NVIDIA 驱动未加载"),
        ("driver_lib_mismatch", "驱动与库版本不一致"),
        ("ecc_uncorrectable", "显存出现不可纠正的 ECC 错误"),
        ("row_remap_pending", "显存行重映射待处理"),
        ("thermal_throttle", "GPU 过热降频"),
        ("power_brake", "电源制动降频"),
        ("pcie_aer", "PCIe 总线错误"),
        ("gpu_init_failed", "GPU 初始化失败"),
        ("fabric_manager", "Fabric Manager 错误"),
        ("stale", "主机失联"),
    ];
    if let Some(code) = label.strip_prefix("xid_") {
        return format!("内核报告 Xid {code} 错误");
    }
    known
        .iter()
        .find(|(l, _)| label.starts_with(l))
        .map(|(_, zh)| (*zh).to_string())
        .unwrap_or_else(|| format!("检测到故障（{label}）"))
}

/// The English ticket.
pub fn english(report: &Report) -> String {
    let host = &report.host;
    let Some(f) = headline(report) else {
        return format!(
            "Subject: {host}: no fault recorded\n\ngpufleet recorded no fault on {host} between \
             {} and {} (UTC).\n",
            report.window.from, report.window.to
        );
    };
    let since = report.broken_since.as_deref().unwrap_or(&f.first_seen);
    let mut t = format!(
        "Subject: GPU fault on {host}: {} since {since}\n\nHello,\n\n",
        f.label
    );
    t.push_str(&format!(
        "Our rented machine {host} ({}) has been faulty since {since} (UTC): {}\n",
        machine(report),
        f.summary
    ));
    if let Some(gpu) = which_gpu(report, false) {
        t.push_str(&format!("The faulty GPU: {gpu}.\n"));
    }
    if !report.analysis.evidence.is_empty() {
        t.push_str("\nEvidence from the machine, verbatim (UTC):\n");
        t.push_str(&quoted_evidence(report));
    }
    if let Some(check) = &report.check {
        t.push_str(&format!(
            "\nThe acceptance check of {} gave: {}.\n",
            check.started_at, check.result
        ));
    }
    if let Some(billing) = &report.billing {
        t.push_str(&format!(
            "\nWe were billed {} while the machine was broken.\n",
            billing.text()
        ));
    }
    t.push_str(
        "\nPlease replace the machine (or move our instance to a healthy host) and credit the \
         hours billed while it was broken. The full report and raw logs are attached.\n",
    );
    t.push_str(&format!("\n(Report by gpufleet {})\n", report.gpufleet));
    t
}

/// The Simplified Chinese ticket (the same facts; evidence lines stay verbatim).
pub fn chinese(report: &Report) -> String {
    let host = &report.host;
    let Some(f) = headline(report) else {
        return format!(
            "主题：{host}：未记录到故障\n\n在 {} 至 {}（UTC）期间，gpufleet 未在 {host} 上记录到故障。\n",
            report.window.from, report.window.to
        );
    };
    let since = report.broken_since.as_deref().unwrap_or(&f.first_seen);
    let what = label_zh(&f.label);
    let mut t = format!("主题：{host} GPU 故障：{what}，自 {since} 起\n\n您好，\n\n");
    t.push_str(&format!(
        "我们租用的机器 {host}（{}）自 {since}（UTC）起出现故障：{what}。\n",
        machine(report)
    ));
    t.push_str(&format!("gpufleet 的诊断（英文原文）：{}\n", f.summary));
    if let Some(gpu) = which_gpu(report, true) {
        t.push_str(&format!("故障 GPU：{gpu}。\n"));
    }
    if !report.analysis.evidence.is_empty() {
        t.push_str("\n机器上的原始日志（原文，UTC 时间）：\n");
        t.push_str(&quoted_evidence(report));
    }
    if let Some(check) = &report.check {
        t.push_str(&format!(
            "\n{} 的验收检查结果：{}。\n",
            check.started_at, check.result
        ));
    }
    if let Some(billing) = &report.billing {
        t.push_str(&format!(
            "\n机器故障期间我们被计费 {}。\n",
            billing
                .text()
                .replace(" h", " 小时")
                .replace(" min", " 分钟")
        ));
    }
    t.push_str(
        "\n请为我们更换机器（或将实例迁移到正常的主机），并退还故障期间的费用。完整报告和原始日志见附件。\n",
    );
    t.push_str(&format!("\n（报告由 gpufleet {} 生成）\n", report.gpufleet));
    t
}
