//! The `/metrics` page of a fleet, checked by the real `promtool` (Debian's `prometheus`
//! package): it parses, gpufleet's own series pass the linter, dcgm-exporter's names and labels
//! stay as dcgm-exporter spells them, every series names its host in `instance`, a host that is
//! not streaming has no GPU series, and a value a GPU cannot report is left out.

use std::io::Write;
use std::process::{Command, Stdio};

use gpufleet::fleet::host::HostStatus;
use gpufleet::fleet::{Fleet, FleetOptions};
use gpufleet::metrics::render;
use gpufleet::telemetry::accel::Vendor;
use gpufleet::telemetry::sim::Simulator;

/// The demo fleet after `seconds` of its scenario (it has a host whose GPU falls off the bus).
fn demo_fleet(seconds: u64) -> Fleet {
    let mut sim = Simulator::demo(7);
    let mut fleet = Fleet::new(sim.host_names(), FleetOptions::default(), 0);
    let step = sim.interval_ms();
    let mut scenario_ms = 0;
    while scenario_ms <= seconds * 1000 {
        for (host, event) in sim.advance(scenario_ms, scenario_ms) {
            fleet.apply(host, event);
        }
        fleet.advance_clock(scenario_ms);
        fleet.refresh_findings();
        fleet.money_tick();
        scenario_ms += step;
    }
    fleet
}

fn promtool(page: &str) -> (bool, String) {
    let mut child = Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("promtool (Debian package prometheus; .ci/run installs it)");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(page.as_bytes())
        .expect("write");
    let out = child.wait_with_output().expect("promtool");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

/// `promtool ARGS` succeeds; its output is shown when it does not.
fn promtool_accepts(args: &[&str]) {
    let out = Command::new("promtool")
        .args(args)
        .output()
        .expect("promtool");
    assert!(
        out.status.success(),
        "promtool {args:?}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn promtool_parses_the_page_and_finds_nothing_to_lint_in_gpufleet_series() {
    let fleet = demo_fleet(120);
    let page = render(&fleet);
    let (_, report) = promtool(&page);
    assert!(
        !report.contains("error while linting") && !report.contains("parse"),
        "{report}"
    );
    let ours: Vec<&str> = report
        .lines()
        .filter(|line| line.starts_with("gpufleet_"))
        .collect();
    assert!(
        ours.is_empty(),
        "lint problems in gpufleet series:\n{report}"
    );
    // dcgm-exporter's names are kept as they are, even where the linter prefers snake_case.
    for name in [
        "DCGM_FI_DEV_GPU_UTIL",
        "DCGM_FI_DEV_FB_USED",
        "DCGM_FI_DEV_GPU_TEMP",
    ] {
        assert!(page.contains(&format!("# TYPE {name} gauge\n")), "{name}");
    }
    // A page of our own series only passes the linter outright.
    let own: String = page
        .lines()
        .filter(|l| l.contains("gpufleet_"))
        .map(|l| format!("{l}\n"))
        .collect();
    let (clean, report) = promtool(&own);
    assert!(clean, "{report}");
}

#[test]
fn gpu_series_carry_dcgm_labels_and_the_host_as_instance() {
    let fleet = demo_fleet(60);
    let page = render(&fleet);
    let (id, host) = fleet
        .hosts
        .iter()
        .enumerate()
        .find(|(id, h)| fleet.status(*id) == Some(HostStatus::Live) && !h.gpus.is_empty())
        .expect("a live host");
    assert!(
        page.contains(&format!(
            "gpufleet_host_streaming{{instance=\"{}\"}} 1\n",
            host.name
        )),
        "host {id}"
    );
    let gpu = &host.gpus[0].latest;
    let line = page
        .lines()
        .find(|l| {
            l.starts_with("DCGM_FI_DEV_GPU_TEMP{")
                && l.contains(&format!("Hostname=\"{}\"", host.name))
                && l.contains(&format!("gpu=\"{}\"", gpu.index))
        })
        .expect("a temperature line for the host's first GPU");
    for label in [
        format!("UUID=\"{}\"", gpu.uuid),
        format!("device=\"nvidia{}\"", gpu.index),
        format!("modelName=\"{}\"", gpu.name),
        format!("instance=\"{}\"", host.name),
    ] {
        assert!(line.contains(&label), "{label} missing: {line}");
    }
    for sample in page
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
    {
        assert!(sample.contains("instance=\""), "no instance: {sample}");
    }
}

#[test]
fn a_host_that_is_not_streaming_has_no_gpu_series_and_unknown_values_are_left_out() {
    let fleet = demo_fleet(240);
    let page = render(&fleet);
    let down: Vec<&str> = fleet
        .hosts
        .iter()
        .enumerate()
        .filter(|(id, h)| fleet.status(*id) != Some(HostStatus::Live) && !h.gpus.is_empty())
        .map(|(_, h)| h.name.as_str())
        .collect();
    assert!(!down.is_empty(), "the demo has a host that stops streaming");
    for name in &down {
        let gpu_lines = page
            .lines()
            .filter(|l| l.starts_with("DCGM_") && l.contains(&format!("instance=\"{name}\"")))
            .count();
        assert_eq!(gpu_lines, 0, "{name} repeats old GPU values as live");
        assert!(page.contains(&format!(
            "gpufleet_host_streaming{{instance=\"{name}\"}} 0\n"
        )));
    }
    // No GPU of the demo reports a memory temperature on every model; where it does not, no
    // sample is written rather than a zero. The DCGM names are NVIDIA's only.
    let nvidia = |g: &&gpufleet::fleet::host::GpuState| g.latest.vendor == Vendor::Nvidia;
    let unknown_memory_temp = fleet
        .hosts
        .iter()
        .flat_map(|h| h.gpus.iter().filter(nvidia).map(move |g| (h, g)))
        .filter(|(h, g)| {
            g.latest.temperature_memory_c.is_none() && !down.contains(&h.name.as_str())
        })
        .count();
    let written = page
        .lines()
        .filter(|l| l.starts_with("DCGM_FI_DEV_MEMORY_TEMP{"))
        .count();
    let live_gpus: usize = fleet
        .hosts
        .iter()
        .filter(|h| !down.contains(&h.name.as_str()))
        .map(|h| h.gpus.iter().filter(nvidia).count())
        .sum();
    assert_eq!(written, live_gpus - unknown_memory_temp);
}

#[test]
fn contrib_dashboard_queries_and_scrape_config_pass_promtool_and_name_served_series() {
    let dashboard: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string("contrib/grafana-dashboard.json").expect("dashboard"),
    )
    .expect("dashboard JSON");
    let exprs: Vec<String> = dashboard["panels"]
        .as_array()
        .expect("panels")
        .iter()
        .flat_map(|p| p["targets"].as_array().cloned().unwrap_or_default())
        .filter_map(|t| t["expr"].as_str().map(str::to_string))
        .collect();
    assert!(exprs.len() >= 10, "{exprs:?}");
    let dir = tempfile::tempdir().expect("temp");
    // promtool checks PromQL in rule files; each query becomes a recording rule. Grafana's
    // variables are given a value first.
    let mut rules = String::from("groups:\n  - name: dashboard\n    rules:\n");
    for (i, expr) in exprs.iter().enumerate() {
        let expr = expr.replace("$instance", ".*");
        rules.push_str(&format!(
            "      - record: dashboard_query_{i}\n        expr: '{}'\n",
            expr.replace('\'', "''")
        ));
    }
    let rules_path = dir.path().join("rules.yml");
    std::fs::write(&rules_path, rules).expect("rules");
    promtool_accepts(&["check", "rules", rules_path.to_str().expect("utf-8")]);
    // Every metric a panel asks for is one the page serves.
    let page = render(&demo_fleet(120));
    for expr in &exprs {
        for name in expr
            .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .filter(|w| w.starts_with("gpufleet_") || w.starts_with("DCGM_"))
        {
            assert!(
                page.contains(&format!("# TYPE {name} ")),
                "{name} in {expr} is not served"
            );
        }
    }
    promtool_accepts(&["check", "config", "contrib/prometheus-scrape.yml"]);
    promtool_accepts(&["check", "config", "contrib/prometheus-federate.yml"]);
    // The token's case, its credentials file beside it as the comment says.
    let token_config = dir.path().join("prometheus-scrape-token.yml");
    std::fs::copy("contrib/prometheus-scrape-token.yml", &token_config).expect("copy");
    std::fs::write(dir.path().join("gpufleet-metrics.token"), "k9-Wq2-rT7\n").expect("token");
    promtool_accepts(&["check", "config", token_config.to_str().expect("utf-8")]);
}

#[test]
fn every_accelerator_has_vendor_neutral_series_and_only_nvidia_has_dcgm_names() {
    let fleet = demo_fleet(60);
    let page = render(&fleet);
    // The demo's Ascend host: its NPUs under gpufleet's names with vendor `huawei`.
    let npu = page
        .lines()
        .find(|l| {
            l.starts_with("gpufleet_gpu_memory_total_bytes{")
                && l.contains("instance=\"ascend-910b\"")
        })
        .unwrap_or_else(|| panic!("no NPU memory series:\n{page}"));
    assert!(npu.contains("vendor=\"huawei\""), "{npu}");
    assert!(npu.ends_with(" 68719476736"), "64 GiB of HBM: {npu}");
    assert!(
        page.contains("gpufleet_gpu_health{gpu=\"0\",vendor=\"huawei\",model=\"910B1\""),
        "{page}"
    );
    // dcgm-exporter's names mean NVIDIA's counters: none for the NPUs.
    assert!(
        !page
            .lines()
            .any(|l| l.starts_with("DCGM_") && l.contains("ascend-910b")),
        "{page}"
    );
    // NVIDIA GPUs have both, the neutral series with vendor `nvidia`.
    assert!(
        page.lines()
            .any(|l| l.starts_with("gpufleet_gpu_utilization_ratio{")
                && l.contains("vendor=\"nvidia\"")
                && l.contains("instance=\"train-h100x8\"")),
        "{page}"
    );
    // npu-smi reports no clock: the NPUs have no clock series rather than a 0.
    assert!(
        !page
            .lines()
            .any(|l| l.starts_with("gpufleet_gpu_core_clock_hertz{") && l.contains("ascend-910b")),
        "{page}"
    );
}

#[test]
fn a_dead_man_switch_has_its_armed_and_deadline_series_and_passes_the_linter() {
    use gpufleet::fleet::HostEvent;
    use gpufleet::fleet::dead_man::{DeadManState, NotArmed};
    let mut fleet = demo_fleet(5);
    let armed = DeadManState::armed(30, 1_800_000_000_000);
    fleet.apply(
        0,
        HostEvent::DeadMan {
            at_ms: 1,
            state: armed,
        },
    );
    let not_armed = DeadManState::not_armed(30, NotArmed::NoDetach);
    fleet.apply(
        1,
        HostEvent::DeadMan {
            at_ms: 1,
            state: not_armed,
        },
    );
    let (first, second) = (fleet.hosts[0].name.clone(), fleet.hosts[1].name.clone());
    let page = render(&fleet);
    let value = |name: &str, host: &str| -> Option<f64> {
        let prefix = format!("{name}{{instance=\"{host}\"}} ");
        page.lines()
            .find_map(|l| l.strip_prefix(prefix.as_str()))
            .and_then(|v| v.parse().ok())
    };
    assert_eq!(
        value("gpufleet_dead_man_armed", &first),
        Some(1.0),
        "{page}"
    );
    assert_eq!(
        value("gpufleet_dead_man_armed", &second),
        Some(0.0),
        "{page}"
    );
    assert_eq!(
        value("gpufleet_dead_man_deadline_seconds", &first),
        Some(1_800_000_000.0),
        "{page}"
    );
    assert_eq!(value("gpufleet_dead_man_deadline_seconds", &second), None);
    // Hosts without a switch have no series.
    let third = fleet.hosts[2].name.clone();
    assert_eq!(value("gpufleet_dead_man_armed", &third), None);
    let own: String = page
        .lines()
        .filter(|l| l.contains("gpufleet_dead_man"))
        .map(|l| format!("{l}\n"))
        .collect();
    let (clean, report) = promtool(&own);
    assert!(clean, "{report}\n{own}");
}
