//! `gpufleet cost --advice` and the `max_run_hours` red line, through the built binary, on
//! ledgers written by the real ledger code into the real ledger file: the cheapest billing mode
//! over the last 30 days, what it would have cost against what was paid, the break-even hours
//! per month, the keys to set when a host has no prices per mode, in English and Chinese; a
//! host billed without a break past its run limit crossing a red line in `gpufleet cost`.

use crate::cli as support;

use std::time::{SystemTime, UNIX_EPOCH};

use gpufleet::cost::{GpuObservation, Ledger, LedgerBook, LedgerSettings, LedgerStore};
use serde_json::Value;
use support::{Home, stderr, stdout};

const SEC: u64 = 1_000;
const HOUR: u64 = 3_600 * SEC;

const BUSY: GpuObservation = GpuObservation {
    utilization_gpu_pct: Some(95.0),
    memory_used_mib: Some(60_000),
};
const IDLE: GpuObservation = GpuObservation {
    utilization_gpu_pct: Some(0.0),
    memory_used_mib: Some(300),
};

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap()
}

/// A ledger watched from `start` every 10 s: `busy_ms` busy, then idle up to `end`.
fn watched(start: u64, busy_ms: u64, end: u64) -> Ledger {
    let mut ledger = Ledger::new(LedgerSettings::default(), None);
    let mut at = start;
    ledger.observe(at, &[BUSY]);
    while at < end {
        at = (at + 10 * SEC).min(end);
        let gpu = if at - start <= busy_ms { BUSY } else { IDLE };
        ledger.observe(at, &[gpu]);
    }
    ledger
}

fn store(home: &Home, hosts: &[(&str, Ledger)]) {
    let mut book = LedgerBook::default();
    for (name, ledger) in hosts {
        book.hosts
            .insert(name.to_string(), ledger.clone().into_state());
    }
    LedgerStore::at(home.path().join("state/ledger.json"))
        .save(&book)
        .unwrap();
}

const CONFIG: &str = "[[hosts]]\nname = \"kept\"\nssh = \"root@10.0.0.1\"\n\
    price_per_hour = 2.0\ncurrency = \"USD\"\n\
    [hosts.prices]\ndaily = 40.0\nweekly = 250.0\nmonthly = 900.0\n\n\
    [[hosts]]\nname = \"bare\"\nssh = \"root@10.0.0.2\"\nprice_per_hour = 1.5\n\
    currency = \"USD\"\n";

/// `kept`: rented 470 h ago, busy 400 h of it. `bare`: 10 h, no prices per mode.
fn fleet_home() -> (Home, String) {
    let home = Home::new();
    let config = home.write("c.toml", CONFIG);
    let now = now_ms();
    store(
        &home,
        &[
            ("kept", watched(now - 470 * HOUR, 400 * HOUR, now)),
            ("bare", watched(now - 10 * HOUR, 10 * HOUR, now)),
        ],
    );
    (home, config)
}

#[test]
fn advice_names_the_cheapest_mode_against_what_was_paid() {
    let (home, config) = fleet_home();
    let out = home.run(&["--config", &config, "cost", "--advice", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let json: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let kept = &json["hosts"][0];
    assert_eq!(kept["name"], "kept");
    // 470 h: 940 hourly, 20 days = 800, 3 weeks = 750, one month = 900.
    let costs: Vec<(String, f64)> = kept["modes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                m["mode"].as_str().unwrap().to_string(),
                m["cost"].as_f64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        costs[1..],
        [
            ("daily".to_string(), 800.0),
            ("weekly".to_string(), 750.0),
            ("monthly".to_string(), 900.0)
        ]
    );
    assert!((costs[0].1 - 940.0).abs() < 0.1, "{costs:?}");
    assert_eq!(kept["cheapest"]["mode"], "weekly");
    assert_eq!(kept["cheapest"]["cost"], 750.0);
    let paid = kept["paid"].as_f64().unwrap();
    assert!((paid - 940.0).abs() < 0.1, "{paid}");
    // Break-even against 2 USD/h: 40×30/2 = 600 h, 900/2 = 450 h a month.
    assert_eq!(kept["modes"][1]["break_even_hours_per_month"], 600.0);
    assert_eq!(kept["modes"][3]["break_even_hours_per_month"], 450.0);
    assert_eq!(kept["modes"][2]["break_even_hours_per_month"], 535.7);
    assert!((kept["busy_ms"].as_u64().unwrap() as f64 / HOUR as f64 - 400.0).abs() < 0.01);
    assert_eq!(kept["missing_keys"], serde_json::json!([]));
    let bare = &json["hosts"][1];
    assert_eq!(bare["cheapest"], Value::Null);
    assert_eq!(
        bare["missing_keys"],
        serde_json::json!(["prices.daily", "prices.weekly", "prices.monthly"])
    );
}

#[test]
fn advice_text_in_english_and_chinese() {
    let (home, config) = fleet_home();
    let out = home.run(&["--config", &config, "--lang", "en", "cost", "--advice"]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        text.contains("kept: billed 470.0 h, busy 400.0 h; paid 940.0"),
        "{text}"
    );
    assert!(
        text.contains(
            "  weekly: 250.00 USD per week -> 750.00 USD, cheaper than hourly above 536 h a month"
        ),
        "{text}"
    );
    assert!(
        text.contains("  cheapest: weekly, 750.00 USD against 940.0"),
        "{text}"
    );
    assert!(
        text.contains("set prices.daily, prices.weekly, prices.monthly for this host"),
        "{text}"
    );
    let out = home.run(&["--config", &config, "--lang", "zh-CN", "cost", "--advice"]);
    let text = stdout(&out);
    assert!(text.contains("最便宜：按周，750.00 USD"), "{text}");
    assert!(text.contains("每月使用超过 450 h 时比按小时便宜"), "{text}");
    assert!(text.contains("请为这台主机设置 prices.daily"), "{text}");
}

#[test]
fn bad_prices_and_run_limits_name_file_line_and_key() {
    let home = Home::new();
    let bad = home.write(
        "bad.toml",
        "[[hosts]]\nname = \"a\"\nssh = \"root@10.0.0.1\"\n[hosts.prices]\ndaily = -5.0\n",
    );
    let out = home.run(&["config", "check", "--config", &bad]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains(&format!(
            "{bad}:5: hosts[0].prices.daily: must be 0 or more"
        )),
        "{}",
        stderr(&out)
    );
    let bad = home.write(
        "bad2.toml",
        "[[hosts]]\nname = \"a\"\nssh = \"root@10.0.0.1\"\nmax_run_hours = 0\n",
    );
    let out = home.run(&["config", "check", "--config", &bad]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains(&format!(
            "{bad}:4: hosts[0].max_run_hours: must be more than 0"
        )),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_host_billed_past_its_run_limit_crosses_a_red_line() {
    let home = Home::new();
    let config = home.write(
        "c.toml",
        "[[hosts]]\nname = \"trainer\"\nssh = \"root@10.0.0.1\"\nmax_run_hours = 12\n\n\
         [[hosts]]\nname = \"short\"\nssh = \"root@10.0.0.2\"\nmax_run_hours = 12\n",
    );
    let now = now_ms();
    store(
        &home,
        &[
            ("trainer", watched(now - 13 * HOUR, 13 * HOUR, now)),
            ("short", watched(now - 2 * HOUR, 2 * HOUR, now)),
        ],
    );
    let out = home.run(&["--config", &config, "--lang", "en", "cost"]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "{text}{}", stderr(&out));
    assert!(
        text.contains("! trainer: billed without a break for 13h00m, over its run limit of 12 h"),
        "{text}"
    );
    assert!(!text.contains("! short"), "{text}");
    let out = home.run(&["--config", &config, "cost", "--json"]);
    let json: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(json["red_lines"][0]["kind"], "host_run_time");
    assert_eq!(json["red_lines"][0]["host"], "trainer");
    assert_eq!(json["red_lines"].as_array().unwrap().len(), 1);
    let out = home.run(&["--config", &config, "--lang", "zh-CN", "cost"]);
    assert!(
        stdout(&out).contains("trainer：已连续计费 13h00m，超过运行时长上限 12 h"),
        "{}",
        stdout(&out)
    );
}

/// `cost --advice --demo` advises on the demo fleet's own simulated ledgers and prices (each
/// demo host sells a day, a week and a month at 90 %, 80 % and 65 % of the hourly rate), never
/// on the user's ledger and hosts, and says how short the demo's history is.
#[test]
fn the_demo_advises_on_its_own_fleet_not_the_users() {
    let (home, config) = fleet_home();
    let empty = home.write("empty.toml", "");
    for config in [&config, &empty] {
        let out = home.run(&[
            "--config", config, "--lang", "en", "cost", "--advice", "--demo",
        ]);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        let text = stdout(&out);
        assert!(text.starts_with("Demo fleet: its own simulated ledgers, 1m into the demo (your ledger and hosts are not read)."), "{text}");
        assert!(!text.contains("No hosts in the config."), "{text}");
        assert!(!text.contains("kept:") && !text.contains("bare:"), "{text}");
        // 23.92 USD/h: a day at 90 % is 516.67, a month at 65 % pays above 468 h.
        assert!(text.contains("train-h100x8: billed 0.0 h"), "{text}");
        assert!(text.contains("  daily: 516.67 USD per day"), "{text}");
        assert!(
            text.contains("  monthly: 11194.56 USD per month (30 days) -> 11194.56 USD, cheaper than hourly above 468 h a month"),
            "{text}"
        );
    }
    let out = home.run(&["--config", &config, "cost", "--advice", "--demo", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let json: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let names: Vec<&str> = json["hosts"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|h| h["name"].as_str())
        .collect();
    assert_eq!(names.len(), 11, "{json}");
    assert!(
        names.contains(&"train-h100x8") && names.contains(&"hot-4090"),
        "{names:?}"
    );
    for host in json["hosts"].as_array().unwrap() {
        assert_eq!(host["cheapest"]["mode"], "hourly", "{host}");
        assert_eq!(host["missing_keys"], serde_json::json!([]), "{host}");
    }
}
