//! How a live job uses its GPU: `input_bound`, `card_oversized`, `card_undersized`,
//! on host histories built through `HostState::apply` (the path real sources use). Samples start
//! from the real H200 stream line under load (`tests/fixtures/diagnose/healthy/stream_load.txt`)
//! and change only the fields a scenario is about; the job is listed every 5 s, as a followed
//! link probes it, with the CPU seconds `ps -o times=` would report.

use std::path::Path;

use gpufleet::cost::Price;
use gpufleet::diagnose::{Finding, LiveOptions, Severity, live_findings};
use gpufleet::fleet::HostEvent;
use gpufleet::fleet::host::HostState;
use gpufleet::fleet::job::JobProcess;
use gpufleet::telemetry::GpuSample;
use gpufleet::telemetry::smi_csv::{FieldLayout, QUERY_FIELDS, parse_gpu_line};

const T0: u64 = 1_800_000_000_000;
const PID: u32 = 4242;

fn load_samples() -> Vec<GpuSample> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/diagnose/healthy/stream_load.txt");
    let text = std::fs::read_to_string(path).expect("stream_load.txt");
    let layout = FieldLayout::new(QUERY_FIELDS);
    text.lines()
        .map(|l| parse_gpu_line(&layout, l).expect("stream line"))
        .collect()
}

fn host(price: Option<f64>) -> HostState {
    let mut h = HostState::new(
        "h200",
        gpufleet::fleet::FleetOptions::default().history_shape(),
    );
    h.jobs.set_price(price.map(|p| Price {
        price_per_hour: p,
        currency: "USD".into(),
    }));
    h
}

/// One sample a second for `seconds` from `start_s`, shaped by `shape`, and the job listed
/// every 5 s having used `cpu_per_s` CPU seconds per second.
fn feed(
    host: &mut HostState,
    start_s: u64,
    seconds: u64,
    cpu_per_s: f64,
    shape: impl Fn(&mut GpuSample),
) {
    let base = load_samples();
    for s in start_s..start_s + seconds {
        let mut gpu = base[(s as usize) % base.len()].clone();
        shape(&mut gpu);
        host.apply(HostEvent::Sample {
            at_ms: T0 + s * 1000,
            gpu,
        });
        if s % 5 == 0 {
            host.apply(HostEvent::Jobs {
                at_ms: T0 + s * 1000,
                jobs: vec![JobProcess {
                    pid: PID,
                    user: Some("root".into()),
                    elapsed_s: Some(s + 30),
                    cpu_s: Some((s as f64 * cpu_per_s) as u64 + 12),
                    command: "python3 train.py".into(),
                    log: None,
                    ..JobProcess::default()
                }],
            });
        }
    }
}

fn findings_at(host: &HostState, s: u64) -> Vec<Finding> {
    live_findings(host, T0 + s * 1000, &LiveOptions::default())
}

fn labels(findings: &[Finding]) -> Vec<&str> {
    findings.iter().map(|f| f.label.as_str()).collect()
}

fn find<'a>(findings: &'a [Finding], label: &str) -> &'a Finding {
    findings
        .iter()
        .find(|f| f.label == label)
        .unwrap_or_else(|| panic!("no {label} in {:?}", labels(findings)))
}

/// The load line with the GPU starved: 3 % utilization (its memory stays as captured, 40 %).
fn starved(g: &mut GpuSample) {
    g.utilization_gpu_pct = Some(3.0);
}

#[test]
fn a_starved_gpu_while_the_job_keeps_a_core_busy_is_input_bound_with_the_money_it_wastes() {
    let mut h = host(Some(3.6));
    feed(&mut h, 0, 60, 1.0, |_| {});
    feed(&mut h, 60, 200, 1.0, starved);
    // A minute in: not yet minutes.
    assert!(!labels(&findings_at(&h, 120)).contains(&"input_bound"));
    let findings = findings_at(&h, 259);
    let f = find(&findings, "input_bound");
    assert_eq!((f.severity, f.gpu), (Severity::Warning, Some(0)));
    assert!(f.summary.contains(&PID.to_string()), "{}", f.summary);
    // 3.6 USD/h × (1 − 3 %).
    assert!(f.summary.contains("3.49 USD"), "{}", f.summary);
    assert!(f.action.contains("num_workers"), "{}", f.action);
    assert!(
        f.evidence.iter().any(|e| e.contains("1.00 CPU cores")),
        "{:?}",
        f.evidence
    );
    // The GPU is fed again: the finding clears once its hold has passed.
    feed(&mut h, 260, 200, 1.0, |_| {});
    assert!(!labels(&findings_at(&h, 459)).contains(&"input_bound"));
}

#[test]
fn a_starved_gpu_with_an_idle_process_or_a_busy_gpu_is_not_input_bound() {
    // The process sleeps (waiting on the network, a lock): its CPU time does not grow.
    let mut h = host(Some(3.6));
    feed(&mut h, 0, 260, 0.0, starved);
    assert!(!labels(&findings_at(&h, 259)).contains(&"input_bound"));
    // The process is busy and so is the GPU (the captured load).
    let mut h = host(Some(3.6));
    feed(&mut h, 0, 260, 1.0, |_| {});
    assert!(!labels(&findings_at(&h, 259)).contains(&"input_bound"));
    // The contrast: the same starved GPU while the process keeps a core busy.
    let mut h = host(Some(3.6));
    feed(&mut h, 0, 260, 1.0, starved);
    assert!(labels(&findings_at(&h, 259)).contains(&"input_bound"));
}

#[test]
fn without_a_price_input_bound_says_so_plainly() {
    let mut h = host(None);
    feed(&mut h, 0, 260, 1.0, starved);
    let findings = findings_at(&h, 259);
    let f = find(&findings, "input_bound");
    assert!(f.summary.contains("No price is set"), "{}", f.summary);
}

#[test]
fn a_job_using_a_sliver_of_an_h200_is_told_which_smaller_card_would_do() {
    let mut h = host(Some(3.6));
    // 8,000 MiB of the H200's 143,771 (8.4 GB) at 12 % utilization.
    feed(&mut h, 0, 200, 1.0, |g| {
        g.memory_used_mib = Some(8_000);
        g.utilization_gpu_pct = Some(12.0);
    });
    let findings = findings_at(&h, 199);
    let f = find(&findings, "card_oversized");
    assert_eq!((f.severity, f.gpu), (Severity::Info, Some(0)));
    // 8.4 GB fits a 24 GB card within 70 % (16.8 GB); nothing smaller is in the table.
    assert!(f.summary.contains("8.4 GB"), "{}", f.summary);
    assert!(f.summary.contains("24 GB card"), "{}", f.summary);
    assert!(f.summary.contains("L4"), "{}", f.summary);
    assert!(f.action.contains("3.60 USD"), "{}", f.action);
    // Without a price it says so.
    let mut h = host(None);
    feed(&mut h, 0, 200, 1.0, |g| {
        g.memory_used_mib = Some(8_000);
        g.utilization_gpu_pct = Some(12.0);
    });
    let findings = findings_at(&h, 199);
    let f = find(&findings, "card_oversized");
    assert!(f.action.contains("No price is set"), "{}", f.action);
}

#[test]
fn the_captured_load_is_neither_oversized_nor_undersized_but_the_same_card_filled_is() {
    // 58,361 MiB of 143,771 (40 %) at 100 %: a card the job uses.
    let mut h = host(Some(3.6));
    feed(&mut h, 0, 200, 1.0, |_| {});
    let findings = findings_at(&h, 199);
    for label in ["card_oversized", "card_undersized", "input_bound"] {
        assert!(
            !labels(&findings).contains(&label),
            "{:?}",
            labels(&findings)
        );
    }
    // The contrast: the same load with its memory nearly full.
    let mut h = host(Some(3.6));
    feed(&mut h, 0, 200, 1.0, |g| g.memory_used_mib = Some(140_000));
    assert!(labels(&findings_at(&h, 199)).contains(&"card_undersized"));
}

#[test]
fn a_job_that_fills_its_memory_is_at_risk_of_running_out() {
    let mut h = host(Some(3.6));
    // 140,000 MiB of 143,771: 97 % full, for minutes.
    feed(&mut h, 0, 200, 1.0, |g| g.memory_used_mib = Some(140_000));
    let findings = findings_at(&h, 199);
    let f = find(&findings, "card_undersized");
    assert_eq!((f.severity, f.gpu), (Severity::Warning, Some(0)));
    assert!(f.summary.contains("out of memory"), "{}", f.summary);
    assert!(f.action.contains("batch size"), "{}", f.action);
    assert!(
        f.evidence.iter().any(|e| e.contains("97 %")),
        "{:?}",
        f.evidence
    );
    // 92 % is tight but not the rule's 95 %.
    let mut h = host(Some(3.6));
    feed(&mut h, 0, 200, 1.0, |g| g.memory_used_mib = Some(132_300));
    assert!(!labels(&findings_at(&h, 199)).contains(&"card_undersized"));
}

#[test]
fn an_ended_job_is_judged_no_more() {
    let mut h = host(Some(3.6));
    feed(&mut h, 0, 260, 1.0, starved);
    assert!(labels(&findings_at(&h, 259)).contains(&"input_bound"));
    h.apply(HostEvent::Jobs {
        at_ms: T0 + 260_000,
        jobs: Vec::new(),
    });
    let findings = findings_at(&h, 260);
    assert!(!labels(&findings).contains(&"input_bound"));
    assert!(labels(&findings).contains(&"job_finished"));
}

/// A job found inside a container through the device file of GPU 1 (`/dev/nvidia1`, its UUID
/// by `nvidia-smi -q`) is judged on that GPU, not on the host's busy GPU 0 as well.
#[test]
fn a_job_found_through_its_gpu_device_is_judged_on_that_gpu_only() {
    use gpufleet::fleet::job_found::JobFound;
    let mut h = host(Some(3.6));
    let base = load_samples();
    let second = "GPU-00000000-0000-0000-0000-000000000001";
    for s in 0..260u64 {
        let busy = base[(s as usize) % base.len()].clone();
        let mut idle = busy.clone();
        idle.index = 1;
        idle.uuid = second.into();
        starved(&mut idle);
        for gpu in [busy, idle] {
            h.apply(HostEvent::Sample {
                at_ms: T0 + s * 1000,
                gpu,
            });
        }
        if s % 5 == 0 {
            h.apply(HostEvent::Jobs {
                at_ms: T0 + s * 1000,
                jobs: vec![JobProcess {
                    pid: PID,
                    elapsed_s: Some(s + 30),
                    cpu_s: Some(s + 12),
                    command: "python3 train.py".into(),
                    found: JobFound::Device,
                    devices: vec![1],
                    gpus: vec![second.to_string()],
                    ..JobProcess::default()
                }],
            });
        }
    }
    let findings = findings_at(&h, 259);
    let f = find(&findings, "input_bound");
    assert_eq!(f.gpu, Some(1));
    // Its GPU's half of 3.6 USD/h × (1 − 3 %).
    assert!(f.summary.contains("1.75 USD"), "{}", f.summary);
}

/// The fleet judges a job's use of its GPUs every few seconds, not every second: within
/// `JOB_FIT_EVERY_MS` the last judgement stands, after it the newest points count, and a job
/// that ends (or a new one) is judged again at once.
#[test]
fn the_fleet_judges_a_jobs_gpus_every_few_seconds_and_at_once_when_the_jobs_change() {
    use gpufleet::diagnose::live_findings_judged;
    use gpufleet::diagnose::live_fit::{JOB_FIT_EVERY_MS, JobFitMemo};
    let opts = LiveOptions::default();
    let roomy = |g: &mut GpuSample| {
        g.memory_used_mib = Some(8_000);
        g.utilization_gpu_pct = Some(12.0);
    };
    let mut h = host(Some(3.6));
    feed(&mut h, 0, 200, 0.0, roomy);
    let mut memo = JobFitMemo::default();
    let at = |s: u64| T0 + s * 1000;
    let first = memo.refresh(&h, at(199), &opts).to_vec();
    assert_eq!(labels(&first), ["card_oversized"]);
    // Judged with the memo, the findings are those judged from scratch.
    assert_eq!(
        live_findings_judged(&h, at(199), &opts, &first),
        findings_at(&h, 199)
    );
    // The card fills up: within the pace the roomy verdict stands, after it the full one.
    feed(&mut h, 200, 200, 0.0, |g| {
        g.memory_used_mib = Some(140_000);
        g.utilization_gpu_pct = Some(99.0);
    });
    let soon = at(199) + JOB_FIT_EVERY_MS - 1000;
    assert_eq!(memo.refresh(&h, soon, &opts), first.as_slice());
    let later = at(399);
    assert_eq!(
        labels(memo.refresh(&h, later, &opts)),
        ["card_undersized"],
        "judged anew after {JOB_FIT_EVERY_MS} ms"
    );
    // The job ends: judged again at once, nothing left to say of it.
    h.apply(HostEvent::Jobs {
        at_ms: at(400),
        jobs: Vec::new(),
    });
    assert!(memo.refresh(&h, at(400), &opts).is_empty());
}
