//! The ticket text to paste into the provider's support form, in English and in Simplified
//! Chinese whatever the interface's language (the provider decides which one is read). Facts
//! only: the host, the GPU, when, the evidence lines verbatim, the failed check, the hours
//! billed, and what is asked. Every sentence is the catalogue's, in the ticket's language.

use rust_i18n::t;

use super::Report;
use super::analyse::FindingSeen;
use crate::config::lang::Lang;
use crate::words::{Words, joined};

/// Evidence lines quoted in a ticket at most (the bundle has them all).
const TICKET_LINES: usize = 12;

/// The ticket's name of a fault, by label family (`pcie_aer_fatal` is a `pcie_aer`); labels of
/// none of them get `report_fault.other`.
const FAULTS: &[&str] = &[
    "report_fault.gpu_lost",
    "report_fault.no_devices",
    "report_fault.driver_not_loaded",
    "report_fault.driver_lib_mismatch",
    "report_fault.ecc_uncorrectable",
    "report_fault.row_remap_pending",
    "report_fault.thermal_throttle",
    "report_fault.power_brake",
    "report_fault.pcie_aer",
    "report_fault.gpu_init_failed",
    "report_fault.fabric_manager",
    "report_fault.stale",
    "report_fault.xid",
];

/// The finding the ticket is about: the first critical one, else the first one.
fn headline(report: &Report) -> Option<&FindingSeen> {
    let findings = &report.analysis.findings;
    findings
        .iter()
        .filter(|f| f.severity == crate::diagnose::Severity::Critical)
        .min_by_key(|f| f.first_seen_ms)
        .or_else(|| findings.first())
}

/// `GPU 3 (PCI 00000000:1B:00.0, UUID GPU-...)`, from the finding and the GPUs seen.
fn which_gpu(report: &Report) -> Option<Words> {
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
    parts.extend(pci.map(|p| Words::verbatim(format!("PCI {p}"))));
    parts.extend(uuid.map(|u| Words::verbatim(format!("UUID {u}"))));
    let index = f.gpu.map(|i| i.to_string()).unwrap_or_else(|| "?".into());
    let ids = joined(&parts, "list_words.comma").unwrap_or_else(|| Words::verbatim(""));
    Some(
        Words::new("report_ticket.gpu")
            .put("index", index)
            .put_words("ids", ids),
    )
}

/// `8 x NVIDIA H200, driver 550.54.15`.
fn machine(report: &Report, locale: &str) -> String {
    let gpus = &report.analysis.gpus;
    let model = gpus
        .first()
        .map(|g| g.name.clone())
        .unwrap_or_else(|| "GPU".to_string());
    let driver = report
        .analysis
        .driver_version
        .as_deref()
        .map(|d| {
            Words::new("report_ticket.driver")
                .put("driver", d)
                .render(locale)
        })
        .unwrap_or_default();
    format!("{} x {model}{driver}", gpus.len().max(1))
}

fn quoted_evidence(report: &Report, locale: &str) -> String {
    let mut out = String::new();
    for line in report.analysis.evidence.iter().take(TICKET_LINES) {
        out.push_str(&format!("    {} {}\n", line.at, line.text));
    }
    let more = report.analysis.evidence.len().saturating_sub(TICKET_LINES);
    if more > 0 {
        let more =
            crate::words::Words::counted("report_ticket.more_lines", more as u64).render(locale);
        out.push_str(&format!("    {more}\n"));
    }
    out
}

/// The name of the fault `label`: the label itself in English, a few words and the label in
/// Chinese.
fn fault_name(label: &str) -> Words {
    let key = FAULTS
        .iter()
        .find(|key| {
            key.strip_prefix("report_fault.")
                .is_some_and(|family| label.starts_with(family))
        })
        .copied()
        .unwrap_or("report_fault.other");
    Words::new(key).put("label", label)
}

/// What the finding means in the ticket's language `locale`. Findings are worded in the interface's language when
/// they are made; a finding that said a catalogue text (its label's summary, an Xid's) is said
/// again in the ticket's language, any other as it was said.
/// `here` is the language the finding was worded in.
fn said_again(f: &FindingSeen, here: &str, locale: &str) -> String {
    if here == locale {
        return f.summary.clone();
    }
    if let Some(code) = f
        .label
        .strip_prefix("xid_")
        .and_then(|c| c.parse::<u32>().ok())
    {
        let xid = |locale: &str| crate::diagnose::xid::words(code).0.render(locale);
        return if xid(here) == f.summary {
            xid(locale)
        } else {
            f.summary.clone()
        };
    }
    let key = format!("finding_text.{}.summary", f.label);
    if t!(&key, locale = here) == f.summary {
        t!(&key, locale = locale).into_owned()
    } else {
        f.summary.clone()
    }
}

/// The ticket in `lang`.
pub fn ticket(report: &Report, lang: Lang) -> String {
    let locale = lang.tag();
    let host = &report.host;
    let Some(f) = headline(report) else {
        return t!(
            "report_ticket.no_fault",
            locale = locale,
            host = host,
            from = report.window.from,
            to = report.window.to
        )
        .into_owned();
    };
    let since = report.broken_since.as_deref().unwrap_or(&f.first_seen);
    let fault = fault_name(&f.label).render(locale);
    let mut t = t!(
        "report_ticket.subject",
        locale = locale,
        host = host,
        fault = fault,
        since = since
    )
    .into_owned();
    let faulty = t!(
        "report_ticket.faulty_since",
        locale = locale,
        host = host,
        machine = machine(report, locale),
        since = since,
        summary = said_again(f, &rust_i18n::locale(), locale)
    );
    t.push_str(&format!("{faulty}\n"));
    if let Some(gpu) = which_gpu(report) {
        let gpu = Words::new("report_ticket.faulty_gpu")
            .put_words("gpu", gpu)
            .render(locale);
        t.push_str(&format!("{gpu}\n"));
    }
    if !report.analysis.evidence.is_empty() {
        let head = t!("report_ticket.evidence", locale = locale);
        t.push_str(&format!("\n{head}\n"));
        t.push_str(&quoted_evidence(report, locale));
    }
    if let Some(check) = &report.check {
        let result = super::result_words(check.result).render(locale);
        let said = t!(
            "report_ticket.check",
            locale = locale,
            at = check.started_at,
            result = result
        );
        t.push_str(&format!("\n{said}\n"));
    }
    if let Some(billing) = &report.billing {
        let billed = t!(
            "report_ticket.billed",
            locale = locale,
            billed = billing.text()
        );
        t.push_str(&format!("\n{billed}\n"));
    }
    let ask = t!("report_ticket.ask", locale = locale);
    t.push_str(&format!("\n{ask}\n"));
    let by = t!(
        "report_ticket.by",
        locale = locale,
        version = report.gpufleet
    );
    t.push_str(&format!("\n{by}\n"));
    t
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnose::Severity;

    fn seen(label: &str, summary: &str) -> FindingSeen {
        FindingSeen {
            label: label.to_string(),
            severity: Severity::Critical,
            summary: summary.to_string(),
            action: String::new(),
            runbook: None,
            gpu: Some(0),
            pci: None,
            uuid: None,
            first_seen_ms: 0,
            first_seen: String::new(),
            last_seen_ms: 0,
            last_seen: String::new(),
            evidence: Vec::new(),
        }
    }

    #[test]
    fn a_catalogue_summary_is_said_again_in_the_tickets_language() {
        let key = "finding_text.gpu_lost.summary";
        let zh = seen("gpu_lost", &t!(key, locale = "zh-CN"));
        assert_eq!(said_again(&zh, "zh-CN", "en"), t!(key, locale = "en"));
        assert_eq!(said_again(&zh, "zh-CN", "zh-CN"), zh.summary);
        let xid = seen("xid_79", &crate::diagnose::xid::words(79).0.render("zh-CN"));
        let english = crate::diagnose::xid::words(79).0.render("en");
        assert!(english.starts_with("Xid 79 (ROBUST_CHANNEL"), "{english}");
        assert_eq!(said_again(&xid, "zh-CN", "en"), english);
        // Words the catalogue does not hold (a summary with a recovery action added) stay.
        let other = seen("xid_79", "Xid 79: something else");
        assert_eq!(said_again(&other, "en", "zh-CN"), other.summary);
        let other = seen("gpu_lost", "something else");
        assert_eq!(said_again(&other, "en", "zh-CN"), other.summary);
    }

    #[test]
    fn the_fault_is_named_by_its_family_in_chinese_and_by_its_label_in_english() {
        assert_eq!(fault_name("pcie_aer_fatal").render("en"), "pcie_aer_fatal");
        assert_eq!(
            fault_name("pcie_aer_fatal").render("zh-CN"),
            "PCIe 总线错误（pcie_aer_fatal）"
        );
        assert_eq!(
            fault_name("xid_48").render("zh-CN"),
            "内核报告 Xid 错误（xid_48）"
        );
        assert_eq!(fault_name("oom").render("zh-CN"), "检测到故障（oom）");
    }
}
