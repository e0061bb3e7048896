//! The live findings over an hour, as the history keeps its points: the demo fleet (a host per
//! situation the console shows: power-capped training, thermal throttling, idle GPUs, a lost
//! GPU, ...) and a host streaming the real H200 lines under load, whose power limit a playbook
//! lowers half-way, each fed through `HostState::apply` one second at a time; every second
//! every host's findings are worked out as the console does.
//!
//! The snapshot was recorded with 16-byte history points (every reading kept in hundredths) and
//! guards that packing the points tighter leaves every finding of every second unchanged: the
//! changes of each host's findings with their evidence, and a fingerprint of every second's
//! findings in full.

use std::path::Path;

use gpufleet::diagnose::{Finding, LiveOptions, live_findings};
use gpufleet::fleet::HostEvent;
use gpufleet::fleet::host::HostState;
use gpufleet::telemetry::GpuSample;
use gpufleet::telemetry::sim::Simulator;
use gpufleet::telemetry::smi_csv::{FieldLayout, QUERY_FIELDS, parse_gpu_line};

const T0: u64 = 1_800_000_000_000;
const HOUR_S: u64 = 3600;

/// The real streamed samples of the H200 under load (~690 W of a 700 W limit).
fn load_samples() -> Vec<GpuSample> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/diagnose/healthy/stream_load.txt");
    let text = std::fs::read_to_string(path).expect("stream_load.txt");
    let layout = FieldLayout::new(QUERY_FIELDS);
    text.lines()
        .map(|l| parse_gpu_line(&layout, l).expect("stream line"))
        .collect()
}

/// One line a finding: label, GPU, severity and evidence.
fn describe(findings: &[Finding]) -> String {
    findings
        .iter()
        .map(|f| {
            let gpu = f.gpu.map_or_else(|| "-".to_string(), |g| g.to_string());
            format!(
                "{} gpu {gpu} {:?}: {}",
                f.label,
                f.severity,
                f.evidence.join(" | ")
            )
        })
        .collect::<Vec<_>>()
        .join("\n      ")
}

/// What a host's findings are without their evidence (which counts the seconds).
fn kinds(findings: &[Finding]) -> Vec<(String, Option<u32>)> {
    findings.iter().map(|f| (f.label.clone(), f.gpu)).collect()
}

/// FNV-1a, 64 bits: the same on every platform and toolchain.
fn fnv(hash: u64, text: &str) -> u64 {
    text.bytes().fold(hash, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

#[test]
fn an_hour_of_live_findings_is_unchanged_by_how_points_are_kept() {
    let shape = gpufleet::fleet::FleetOptions::default().history_shape();
    let opts = LiveOptions::default();
    let mut sim = Simulator::demo(42);
    let names = sim.host_names();
    let mut hosts: Vec<HostState> = names
        .iter()
        .map(|name| HostState::new(name.as_str(), shape))
        .collect();
    let real = hosts.len();
    hosts.push(HostState::new("h200-stream", shape));
    let stream = load_samples();

    let mut timeline = String::new();
    let mut fingerprint = 0xcbf2_9ce4_8422_2325_u64;
    let mut last: Vec<Vec<(String, Option<u32>)>> = vec![Vec::new(); hosts.len()];
    let mut findings_seen = 0usize;
    for s in 0..HOUR_S {
        let now = T0 + s * 1000;
        for (id, event) in sim.advance(s * 1000, now) {
            hosts[id].apply(event);
        }
        let mut gpu = stream[(s as usize) % stream.len()].clone();
        if s >= HOUR_S / 2 {
            // A playbook lowers the limit; the card then draws what it allows.
            gpu.power_limit_w = Some(450.0);
            gpu.power_draw_w = gpu.power_draw_w.map(|w| w.min(449.7));
        }
        hosts[real].apply(HostEvent::Sample { at_ms: now, gpu });

        for (i, host) in hosts.iter().enumerate() {
            let findings = live_findings(host, now, &opts);
            findings_seen += findings.len();
            let described = describe(&findings);
            fingerprint = fnv(fingerprint, &described);
            let kinds = kinds(&findings);
            if kinds != last[i] {
                timeline.push_str(&format!("{s:>4} {}:\n      {described}\n", host.name));
                last[i] = kinds;
            }
        }
    }
    assert!(findings_seen > 0, "the hour raises findings to compare");
    timeline.push_str(&format!(
        "findings over the hour: {findings_seen}\nfingerprint: {fingerprint:016x}\n"
    ));
    insta::assert_snapshot!(timeline);
}
