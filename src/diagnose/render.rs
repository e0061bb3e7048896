//! A diagnosis as text for people and as JSON for scripts.

use std::borrow::Cow;
use std::fmt::Write as _;

use rust_i18n::t;

use serde::Serialize;

use crate::diagnose::finding::{Cause, Finding, Severity};
use crate::diagnose::render_training::training_text;
use crate::diagnose::verdict::{Diagnosis, Verdict, hint};
use crate::job::JobReport;

fn cause_words(cause: Cause) -> Cow<'static, str> {
    match cause {
        Cause::Network => t!("diagnose_text.cause_network"),
        Cause::PeerGpu => t!("diagnose_text.cause_peer_gpu"),
        Cause::Code => t!("diagnose_text.cause_code"),
    }
}

/// The severity as the report's line starts it: `CRITICAL`, or the language's word.
fn severity_loud(severity: Severity) -> Cow<'static, str> {
    match severity {
        Severity::Critical => t!("diagnose_text.critical"),
        Severity::Warning => t!("diagnose_text.warning"),
        Severity::Info => t!("diagnose_text.info"),
    }
}

/// Which GPU, rank or host a finding is about, as ` (GPU 0, 0000:3b:00)`; empty when unknown.
fn whom(f: &Finding) -> String {
    let mut parts: Vec<String> = Vec::new();
    if let Some(g) = f.gpu {
        parts.push(format!("GPU {g}"));
    }
    if let Some(pci) = &f.pci {
        parts.push(if f.gpu.is_some() {
            pci.clone()
        } else {
            format!("GPU {pci}")
        });
    }
    if let Some(uuid) = &f.uuid {
        parts.push(uuid.clone());
    }
    if let Some(rank) = f.rank {
        parts.push(t!("diagnose_text.rank", rank = rank).into_owned());
    }
    if let Some(host) = &f.host {
        parts.push(t!("diagnose_text.host", host = host).into_owned());
    }
    if let Some(peer) = &f.peer {
        parts.push(t!("diagnose_text.peer", peer = peer).into_owned());
    }
    if parts.is_empty() {
        String::new()
    } else {
        format!(" ({})", parts.join(", "))
    }
}

/// A human-readable report: the verdict on the first line, then the findings (most severe and
/// root causes first) with their action, runbook, likely cause and evidence.
pub fn render_text(d: &Diagnosis) -> String {
    let mut out = String::new();
    match (d.verdict, &d.training) {
        (Verdict::Healthy, None) => return format!("{}\n", t!("diagnose_text.healthy")),
        (Verdict::Healthy, Some(job)) => {
            let healthy = t!("diagnose_text.healthy_training");
            return format!("{healthy}\n{}", training_text(job));
        }
        (Verdict::Unrecognised, _) => return format!("{}\n", hint()),
        (Verdict::Findings, job) => {
            let count = d.findings.len();
            let _ = writeln!(out, "{}", t!("diagnose_text.findings", count = count));
            if let Some(job) = job {
                out.push_str(&training_text(job));
            }
        }
    }
    for f in &d.findings {
        out.push('\n');
        let _ = writeln!(
            out,
            "{} {}{}{}{}",
            severity_loud(f.severity),
            f.label,
            whom(f),
            t!("diagnose_text.colon"),
            f.summary
        );
        let _ = writeln!(out, "{}", t!("diagnose_text.action", action = f.action));
        if let Some(cause) = f.cause {
            let cause = cause_words(cause);
            let _ = writeln!(out, "{}", t!("diagnose_text.likely_cause", cause = cause));
        }
        if let Some(id) = &f.runbook {
            let _ = writeln!(out, "{}", t!("diagnose_text.runbook", runbook = id));
        }
        if !f.evidence.is_empty() {
            let _ = writeln!(out, "{}", t!("diagnose_text.evidence"));
            for line in &f.evidence {
                let _ = writeln!(out, "    {line}");
            }
        }
    }
    out
}

#[derive(Serialize)]
struct Report<'a> {
    verdict: Verdict,
    #[serde(skip_serializing_if = "Option::is_none")]
    hint: Option<String>,
    findings: &'a [Finding],
    #[serde(skip_serializing_if = "Option::is_none")]
    training: Option<&'a JobReport>,
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    notes: &'a [String],
}

/// `{"verdict":"healthy"|"findings"|"unrecognised","hint":...,"findings":[{"label":...,
/// "severity":...,"evidence":[...],"summary":...,"action":...,"runbook":...,"gpu":...,
/// "pci":...,"uuid":...,"rank":...,"host":...,"peer":...,"cause":...}],"notes":[...]}`:
/// `hint` only when unrecognised; `runbook` is `null` when there is none; the GPU, NCCL and
/// cause fields only when the text says; `notes` (what was not read in full) only when any.
/// A training log adds `"training":{"formats":[...],"step":...,"total":...,"rate_per_s":...,
/// "elapsed_s":...,"eta_s":...,"loss":{"step":...,"value":...},"eval_loss":...,
/// "best_eval_loss":...,"loss_series":[...],"eval_series":[...],"checkpoints":[...],
/// "state":"running"|"completed"|"crashed","crash":{"exception":...,"lines":[...]},
/// "judgement":{"plateau":{...},"overfit":{...}}}`.
pub fn render_json(d: &Diagnosis, notes: &[String]) -> String {
    let report = Report {
        verdict: d.verdict,
        hint: (d.verdict == Verdict::Unrecognised).then(hint),
        findings: &d.findings,
        training: d.training.as_ref(),
        notes,
    };
    // Serializing strings, numbers and unit enums cannot fail; the fallback keeps the output
    // valid JSON should that ever change.
    serde_json::to_string(&report).unwrap_or_else(|e| {
        let message = serde_json::Value::from(e.to_string());
        format!("{{\"verdict\":\"unrecognised\",\"findings\":[],\"error\":{message}}}")
    })
}
