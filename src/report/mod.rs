//! `gpufleet report HOST`: an incident bundle for a provider's ticket, built from what the
//! console or the watcher recorded (the black box, or a `--record` file). One host's data
//! only; every file passes through the secret scrubber on its way out.

pub mod analyse;
pub mod billing;
pub mod bundle;
pub mod gather;
pub mod markdown;
pub mod secrets;
pub mod ticket;
pub mod write;

use rust_i18n::t;
use serde::Serialize;

use crate::audit::AuditEntry;
use crate::check::CheckReport;
use crate::config::Config;
use crate::cost::LedgerBook;
use crate::utc::rfc3339;
use crate::words::Words;

pub use analyse::Analysis;
pub use billing::Billing;
pub use gather::{GatherError, Gathered, Source};

/// The version of `report.json`'s layout.
pub const SCHEMA: u32 = 1;

/// `report.json`'s verdicts and check results: identifiers, English in every language.
pub const VERDICT_FAULT: &str = "fault";
pub const VERDICT_NO_FAULT: &str = "no_fault_recorded";
pub const RESULT_PASS: &str = "pass";
pub const RESULT_WARNING: &str = "warning";
pub const RESULT_FAILURE: &str = "failure";

/// A check's result (`pass`, `warning`, `failure`, as `report.json` writes it) as a reader of
/// report.md or a ticket reads it, in catalogue words; any other result as it is.
pub fn result_words(result: &str) -> crate::words::Words {
    match result {
        RESULT_PASS => crate::words::Words::new("report_md.result_pass"),
        RESULT_WARNING => crate::words::Words::new("report_md.result_warning"),
        RESULT_FAILURE => crate::words::Words::new("report_md.result_failure"),
        other => crate::words::Words::verbatim(other),
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WindowText {
    pub from_ms: u64,
    pub to_ms: u64,
    pub from: String,
    pub to: String,
}

/// The newest acceptance check of the host, with what did not pass.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CheckSeen {
    pub started_at_ms: u64,
    pub started_at: String,
    /// `pass`, `warning` or `failure` (as `gpufleet check` exits 0, 1, 2).
    pub result: &'static str,
    pub not_passed: Vec<CheckLine>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CheckLine {
    pub id: String,
    pub gpu: Option<u32>,
    pub status: &'static str,
    pub measured: String,
    pub expected: String,
    pub message: String,
}

/// An event whose own stamp fell far outside the window: what it was, when it says it
/// happened and when it was recorded.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StampedOutside {
    /// The event's kind as the recording writes it (`sample`, `kernel`, ...).
    pub kind: String,
    pub stamped_ms: u64,
    pub stamped: String,
    pub recorded_ms: u64,
    pub recorded: String,
}

/// The field of a recorded event that names its kind (`sample`, `kernel`, ...).
const EVENT_TAG: &str = "kind";

/// Events stamped outside the window named in the report at most.
pub const MAX_STAMPED_OUTSIDE: usize = 10;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Tickets {
    pub en: String,
    pub zh: String,
}

/// Everything the bundle says; `report.json` is this, `report.md` its rendering.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Report {
    pub schema: u32,
    pub host: String,
    pub gpufleet: String,
    pub generated_at: String,
    /// `the black box` or `the recording FILE`, in the reader's language.
    pub source: String,
    pub window: WindowText,
    /// `fault` or `no_fault_recorded`: identifiers.
    pub verdict: &'static str,
    pub broken_since_ms: Option<u64>,
    pub broken_since: Option<String>,
    pub analysis: Analysis,
    pub check: Option<CheckSeen>,
    /// Audit-log entries of this host in the window: runbook steps, backups, releases.
    pub runbook_steps: Vec<AuditEntry>,
    pub billing: Option<Billing>,
    pub ticket: Tickets,
    /// Events stamped far outside the window, left out of the analysis (the first few).
    pub stamped_outside: Vec<StampedOutside>,
    pub stamped_outside_count: usize,
    /// The bundle's files, by name.
    pub files: Vec<String>,
    pub notes: Vec<String>,
}

/// What the report is built from besides the recording.
pub struct Context<'a> {
    pub config: &'a Config,
    pub book: Option<&'a LedgerBook>,
    pub audit: &'a [AuditEntry],
    pub check: Option<&'a CheckReport>,
    pub now_ms: u64,
}

/// Builds the report of `host` from its gathered lines.
pub fn build(host: &str, source: &Source, gathered: &Gathered, ctx: &Context) -> Report {
    let analysis = analyse::analyse(host, &gathered.lines);
    let broken_since_ms = analysis.broken_since_ms;
    // Events carry their source's clock (the demo's runs ahead of the wall at `--speed`), the
    // window the recorder's: the window said spans both, so that every time the report gives
    // (a fault's start, a finding's last sighting) falls inside it.
    let event_times = || {
        gathered
            .lines
            .iter()
            .map(|l| l.event.at_ms().unwrap_or(l.t_ms))
    };
    let from_ms = event_times()
        .min()
        .map_or(gathered.from_ms, |first| first.min(gathered.from_ms));
    let events_end_ms = event_times()
        .max()
        .unwrap_or(gathered.to_ms)
        .max(gathered.to_ms);
    let to_ms = events_end_ms;
    let billing =
        billing::billed_while_broken(host, broken_since_ms, events_end_ms, ctx.config, ctx.book);
    let runbook_steps = ctx
        .audit
        .iter()
        .filter(|e| e.host == host && e.at_ms >= from_ms)
        .cloned()
        .collect();
    let mut notes = gathered.warnings.clone();
    let stamped_outside: Vec<StampedOutside> = gathered
        .outside
        .iter()
        .take(MAX_STAMPED_OUTSIDE)
        .map(stamped_outside)
        .collect();
    if !stamped_outside.is_empty() {
        let named = stamped_outside
            .iter()
            .map(|o| {
                t!(
                    "report_outside.one",
                    kind = o.kind,
                    stamped = o.stamped,
                    recorded = o.recorded
                )
                .into_owned()
            })
            .collect::<Vec<_>>()
            .join(&t!("report_outside.separator"));
        notes.push(
            Words::counted("report_outside.note", gathered.outside.len() as u64)
                .put("from", rfc3339(gathered.from_ms))
                .put("to", rfc3339(gathered.to_ms))
                .put("named", named)
                .localized(),
        );
    }
    if !analysis
        .evidence
        .iter()
        .any(|e| e.kind == analyse::KIND_KERNEL)
    {
        notes.push(t!("report_words.no_kernel_lines").into_owned());
    }
    let smi_q_taken = gathered
        .lines
        .iter()
        .any(|l| matches!(&l.event, crate::recording::wire::Event::Evidence { command, .. } if command == crate::fleet::event::SMI_QUERY_ALL));
    if !smi_q_taken {
        notes.push(bundle::no_smi_q());
    }
    let mut report = Report {
        schema: SCHEMA,
        host: host.to_string(),
        gpufleet: crate::recording::wire::WRITER.to_string(),
        generated_at: rfc3339(ctx.now_ms),
        source: source.describe(),
        window: WindowText {
            from_ms,
            to_ms,
            from: rfc3339(from_ms),
            to: rfc3339(to_ms),
        },
        verdict: if broken_since_ms.is_some() {
            VERDICT_FAULT
        } else {
            VERDICT_NO_FAULT
        },
        broken_since_ms,
        broken_since: broken_since_ms.map(rfc3339),
        analysis,
        check: ctx.check.map(check_seen),
        runbook_steps,
        billing,
        ticket: Tickets {
            en: String::new(),
            zh: String::new(),
        },
        stamped_outside,
        stamped_outside_count: gathered.outside.len(),
        files: bundle::FILES.iter().map(|f| f.to_string()).collect(),
        notes,
    };
    report.ticket = Tickets {
        en: ticket::ticket(&report, crate::config::lang::Lang::En),
        zh: ticket::ticket(&report, crate::config::lang::Lang::ZhCn),
    };
    report
}

fn stamped_outside(line: &crate::recording::Line) -> StampedOutside {
    let kind = serde_json::to_value(&line.event)
        .ok()
        .and_then(|v| v.get(EVENT_TAG)?.as_str().map(str::to_string))
        .unwrap_or_default();
    let stamped_ms = line.event.at_ms().unwrap_or(line.t_ms);
    StampedOutside {
        kind,
        stamped_ms,
        stamped: rfc3339(stamped_ms),
        recorded_ms: line.t_ms,
        recorded: rfc3339(line.t_ms),
    }
}

fn check_seen(report: &CheckReport) -> CheckSeen {
    use crate::check::report::Status;
    CheckSeen {
        started_at_ms: report.started_at_ms,
        started_at: rfc3339(report.started_at_ms),
        result: match crate::check::exit_code(report) {
            crate::check::EXIT_PASS => RESULT_PASS,
            crate::check::EXIT_WARN => RESULT_WARNING,
            _ => RESULT_FAILURE,
        },
        not_passed: report
            .checks
            .iter()
            .filter(|c| matches!(c.status, Status::Warn | Status::Fail))
            .map(|c| CheckLine {
                id: c.id.clone(),
                gpu: c.gpu,
                status: c.status.word(),
                measured: c.measured.clone(),
                expected: c.expected.clone(),
                message: c.message.clone(),
            })
            .collect(),
    }
}
