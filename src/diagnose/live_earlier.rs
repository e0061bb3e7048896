//! Findings of faults that ended. When the link reconnects to a new boot, or the GPUs stream
//! again after they were lost (see `fleet::fault_end`), the kernel lines of the fault are read
//! once more, as the live findings read them, and leave the live findings for the host's
//! *earlier* ones: no longer firing, kept with their time, and counted (`live.rs` raises
//! `gpu_lost_again` for a host that lost a GPU twice).

use rust_i18n::t;

use crate::diagnose::live::{HostResolver, LiveOptions, is_lost_gpu, lost_finding};
use crate::diagnose::text::TextDiagnoser;
use crate::fleet::fault_end::{EarlierFinding, EndCause, PendingEnd};
use crate::fleet::host::HostState;
use crate::telemetry::TimestampMs;

/// Moves the findings of the faults that ended since the last refresh to the host's earlier
/// ones; true when one ended.
pub fn settle(host: &mut HostState, now_ms: TimestampMs, opts: &LiveOptions) -> bool {
    if !host.faults.has_pending() {
        return false;
    }
    for end in host.faults.take_pending() {
        settle_one(host, &end, now_ms, opts);
    }
    true
}

fn settle_one(host: &mut HostState, end: &PendingEnd, now_ms: TimestampMs, opts: &LiveOptions) {
    // Only lines the live findings still read: older ones raise nothing that could end.
    let since = now_ms.saturating_sub(opts.kernel_minutes * 60_000);
    let resolver = HostResolver(host);
    let mut ended_lines: Vec<(TimestampMs, String)> = Vec::new();
    // When each (label, GPU) first showed, from the lines one at a time.
    let mut first_seen: Vec<(String, Option<u32>, TimestampMs)> = Vec::new();
    for (at_ms, line) in host
        .kernel_lines
        .iter()
        .filter(|(at, _)| *at >= since && *at <= end.at_ms)
    {
        let mut one = TextDiagnoser::default();
        one.line(line);
        let found = one.finish_with(&resolver).findings;
        // A line about a GPU that has not streamed since stays live: its fault goes on.
        let ends = match end.cause {
            EndCause::NewBoot => true,
            EndCause::StreamsAgain => found
                .iter()
                .all(|f| f.gpu.is_none_or(|g| end.gpus.contains(&g))),
        };
        if !ends {
            continue;
        }
        for f in &found {
            if !first_seen
                .iter()
                .any(|(l, g, _)| *l == f.label && *g == f.gpu)
            {
                first_seen.push((f.label.clone(), f.gpu, *at_ms));
            }
        }
        ended_lines.push((*at_ms, line.clone()));
    }
    // The lines together, as the live findings read them (a finding may take several).
    let mut together = TextDiagnoser::default();
    for (_, line) in &ended_lines {
        together.line(line);
    }
    let fault_start = ended_lines.first().map_or(end.at_ms, |(at, _)| *at);
    let mut earlier: Vec<EarlierFinding> = together
        .finish_with(&resolver)
        .findings
        .into_iter()
        .map(|finding| {
            let at_ms = first_seen
                .iter()
                .find(|(l, g, _)| *l == finding.label && *g == finding.gpu)
                .map_or(fault_start, |(_, _, at)| *at);
            EarlierFinding {
                finding,
                at_ms,
                ended_ms: end.at_ms,
                cause: end.cause,
            }
        })
        .collect();
    if let Some(lost) = &end.lost {
        earlier.push(EarlierFinding {
            finding: lost_finding(host, lost.reason, &lost.raw),
            at_ms: lost.since_ms,
            ended_ms: end.at_ms,
            cause: end.cause,
        });
    }
    earlier.sort_by_key(|e| e.at_ms);
    let lost_gpu = earlier.iter().any(|e| is_lost_gpu(&e.finding.label));
    host.fault_ended(&ended_lines, earlier, lost_gpu);
}

/// Why a fault ended, in the reader's language.
pub fn end_words(cause: EndCause) -> String {
    match cause {
        EndCause::StreamsAgain => t!("finding_end.streams"),
        EndCause::NewBoot => t!("finding_end.new_boot"),
    }
    .into_owned()
}
