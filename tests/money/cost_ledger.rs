//! Ledger arithmetic under a simulated clock: busy, idle, parked and unobserved time, effective
//! utilization, money spent and spent while idle; fleet totals per currency; red lines.

use std::path::Path;

use gpufleet::commands::money::cost_report;
use gpufleet::config::{self, Config};
use gpufleet::cost::{
    FleetCost, GpuObservation, HostCost, Ledger, LedgerBook, LedgerSettings, LedgerTotals, Price,
    REOPEN_AFTER_MS, RedLine, auto_release_triggered, fleet_cost, red_lines,
};

const SEC: u64 = 1_000;
const MIN: u64 = 60 * SEC;
const HOUR: u64 = 60 * MIN;
const STEP: u64 = 10 * SEC;

fn gpu(util: f64, mem_mib: u64) -> GpuObservation {
    GpuObservation {
        utilization_gpu_pct: Some(util),
        memory_used_mib: Some(mem_mib),
    }
}

const BUSY: GpuObservation = GpuObservation {
    utilization_gpu_pct: Some(95.0),
    memory_used_mib: Some(60_000),
};
const IDLE_EMPTY: GpuObservation = GpuObservation {
    utilization_gpu_pct: Some(0.0),
    memory_used_mib: Some(300),
};
const IDLE_PARKED: GpuObservation = GpuObservation {
    utilization_gpu_pct: Some(0.0),
    memory_used_mib: Some(40_000),
};
const BETWEEN: GpuObservation = GpuObservation {
    utilization_gpu_pct: Some(30.0),
    memory_used_mib: Some(40_000),
};

/// Feeds one reading every [`STEP`] for `duration_ms` after `*now`, advancing `*now`.
fn hold(ledger: &mut Ledger, now: &mut u64, duration_ms: u64, gpus: &[GpuObservation]) {
    let end = *now + duration_ms;
    while *now < end {
        *now = (*now + STEP).min(end);
        ledger.observe(*now, gpus);
    }
}

fn settings() -> LedgerSettings {
    LedgerSettings::default()
}

#[test]
fn default_settings_follow_the_config() {
    let s = settings();
    assert_eq!((s.busy_util_pct, s.idle_util_pct), (70.0, 5.0));
    assert_eq!(s.idle_after_ms, 10 * MIN);
    assert_eq!(s.gap_ms, 15 * SEC);
    assert_eq!(s.parked_floor_mib, 1024);
}

#[test]
fn a_day_of_a_rented_host() {
    let start = 1_795_939_200_000;
    let mut ledger = Ledger::new(settings(), None);
    let mut now = start;
    ledger.observe(now, &[BUSY]); // first connection: billing starts here
    hold(&mut ledger, &mut now, HOUR, &[BUSY]);
    hold(&mut ledger, &mut now, 5 * MIN, &[IDLE_EMPTY]); // too short to count as idle
    hold(&mut ledger, &mut now, 30 * MIN, &[BETWEEN]);
    hold(&mut ledger, &mut now, 20 * MIN, &[IDLE_PARKED]);
    hold(&mut ledger, &mut now, 15 * MIN, &[IDLE_EMPTY]); // continues the same idle stretch
    assert_eq!(ledger.current_idle_ms(), 35 * MIN);
    // Unreachable for an hour: billed, neither busy nor idle; the idle stretch ends.
    now += HOUR;
    ledger.observe(now, &[IDLE_EMPTY]);
    assert_eq!(ledger.current_idle_ms(), 0);
    hold(&mut ledger, &mut now, 10 * MIN, &[BUSY]);

    let totals = ledger.totals(now);
    let billed = HOUR + 5 * MIN + 30 * MIN + 20 * MIN + 15 * MIN + HOUR + 10 * MIN;
    assert_eq!(totals.billed_ms, billed);
    assert_eq!(totals.busy_ms, HOUR + 10 * MIN);
    assert_eq!(totals.idle_ms, 35 * MIN);
    assert_eq!(totals.parked_ms, 20 * MIN);
    assert_eq!(totals.unobserved_ms, HOUR);
    let effective = totals.effective_utilization().unwrap();
    assert!((effective - 70.0 / 200.0).abs() < 1e-12, "{effective}");

    let config = host_config("price_per_hour = 30.0\ncurrency = \"CNY\"\n");
    let cost = HostCost::new(&config.hosts[0], totals);
    assert!((cost.spent().unwrap() - 100.0).abs() < 1e-9); // 200 min at 30/h
    assert!((cost.spent_idle().unwrap() - 17.5).abs() < 1e-9); // 35 min at 30/h
}

#[test]
fn an_idle_stretch_counts_whole_once_it_is_long_enough() {
    let mut ledger = Ledger::new(settings(), Some(0));
    let mut now = 0;
    hold(&mut ledger, &mut now, 10 * MIN - STEP, &[IDLE_EMPTY]);
    assert_eq!(ledger.totals(now).idle_ms, 0);
    hold(&mut ledger, &mut now, STEP, &[IDLE_EMPTY]);
    assert_eq!(ledger.totals(now).idle_ms, 10 * MIN);
    hold(&mut ledger, &mut now, 2 * MIN, &[IDLE_EMPTY]);
    assert_eq!(ledger.totals(now).idle_ms, 12 * MIN);
    assert_eq!(ledger.totals(now).parked_ms, 0);
}

#[test]
fn a_multi_gpu_host_is_busy_on_average_and_idle_only_when_every_gpu_is() {
    let cases: [(&[GpuObservation], u64, u64); 6] = [
        (&[gpu(90.0, 0), gpu(60.0, 0)], STEP, 0), // mean 75: busy
        (&[gpu(90.0, 0), gpu(0.0, 0)], 0, 0),     // mean 45: one GPU works, not idle
        (&[gpu(0.0, 0), gpu(3.0, 0)], 0, STEP),   // all under 5: idle
        (
            &[
                gpu(0.0, 0),
                GpuObservation {
                    utilization_gpu_pct: None,
                    memory_used_mib: None,
                },
            ],
            0,
            STEP,
        ), // a GPU without a reading is left out
        (&[gpu(0.0, 0), gpu(0.0, 2_000)], 0, STEP), // one GPU holding VRAM parks the host
        (&[], 0, 0),
    ];
    let idle_now = LedgerSettings {
        idle_after_ms: 0,
        ..settings()
    };
    for (gpus, busy, idle) in cases {
        let mut ledger = Ledger::new(idle_now, Some(0));
        ledger.observe(STEP, gpus);
        let totals = ledger.totals(STEP);
        assert_eq!((totals.busy_ms, totals.idle_ms), (busy, idle), "{gpus:?}");
        assert_eq!(totals.billed_ms, STEP);
    }
}

#[test]
fn readings_without_utilization_are_unobserved() {
    let unknown = GpuObservation {
        utilization_gpu_pct: None,
        memory_used_mib: Some(100),
    };
    let mut ledger = Ledger::new(settings(), Some(0));
    let mut now = 0;
    hold(&mut ledger, &mut now, MIN, &[unknown]);
    let totals = ledger.totals(now);
    assert_eq!((totals.billed_ms, totals.unobserved_ms), (MIN, MIN));
}

#[test]
fn billing_runs_while_nobody_watches() {
    // Billing started an hour before gpufleet first connected.
    let mut ledger = Ledger::new(settings(), Some(0));
    ledger.observe(HOUR, &[BUSY]);
    let mut now = HOUR;
    hold(&mut ledger, &mut now, MIN, &[BUSY]);
    let totals = ledger.totals(now + 30 * MIN);
    assert_eq!(totals.billed_ms, HOUR + MIN + 30 * MIN);
    assert_eq!(totals.unobserved_ms, HOUR + 30 * MIN);
    assert_eq!(totals.busy_ms, MIN);
    // Readings from before billing started, or out of order, change nothing.
    let before = ledger.clone();
    ledger.observe(now - STEP, &[BUSY]);
    assert_eq!(ledger, before);
}

#[test]
fn a_released_ledger_stops_and_reopens_only_when_the_host_returns() {
    let mut ledger = Ledger::new(settings(), Some(0));
    let mut now = 0;
    hold(&mut ledger, &mut now, HOUR, &[BUSY]);
    ledger.close(now + 5 * SEC, "stop", "vast");
    let closed = ledger.totals(now + 5 * HOUR);
    assert_eq!(closed.billed_ms, HOUR + 5 * SEC);
    assert_eq!(
        closed.released.as_ref().map(|r| r.action.as_str()),
        Some("stop")
    );
    ledger.observe(now + MIN, &[BUSY]); // the host winding down
    assert!(ledger.is_released());
    let back = now + 5 * SEC + REOPEN_AFTER_MS;
    ledger.observe(back, &[BUSY]); // started again
    assert!(!ledger.is_released());
    ledger.observe(back + STEP, &[BUSY]);
    assert_eq!(ledger.totals(back + STEP).billed_ms, HOUR + 5 * SEC + STEP);
}

#[test]
fn resuming_a_stored_ledger() {
    let mut ledger = Ledger::new(settings(), Some(HOUR));
    let mut now = HOUR;
    hold(&mut ledger, &mut now, HOUR, &[BUSY]);
    let stored = ledger.clone().into_state();

    let same = Ledger::resume(settings(), Some(stored.clone()), Some(HOUR));
    assert_eq!(same.state(), &stored);
    let earlier = Ledger::resume(settings(), Some(stored.clone()), Some(0));
    assert_eq!(earlier.totals(now).billed_ms, 2 * HOUR);
    assert_eq!(earlier.totals(now).unobserved_ms, HOUR);

    let mut released = ledger.clone();
    released.close(now, "terminate", "vast");
    let rented_again = Ledger::resume(settings(), Some(released.into_state()), Some(now + HOUR));
    assert_eq!(rented_again.totals(now + 2 * HOUR).billed_ms, HOUR);
    assert!(!rented_again.is_released());
}

fn host_config(extra: &str) -> Config {
    let text = format!("[[hosts]]\nname = \"a\"\nssh = \"h\"\n{extra}");
    config::parse(&text, Path::new("c.toml")).unwrap()
}

fn fleet_config() -> Config {
    let text = "idle_minutes = 10\n[budget]\nmax_spend = 100.0\nmax_hours = 5.0\n\
                [[hosts]]\nname = \"cn\"\nssh = \"h\"\nprice_per_hour = 30.0\ncurrency = \"CNY\"\n\
                [[hosts]]\nname = \"us\"\nssh = \"h\"\nprice_per_hour = 2.5\ncurrency = \"USD\"\n\
                [[hosts]]\nname = \"free\"\nssh = \"h\"\n";
    config::parse(text, Path::new("c.toml")).unwrap()
}

fn totals(billed_ms: u64, busy_ms: u64, idle_ms: u64, current_idle_ms: u64) -> LedgerTotals {
    LedgerTotals {
        billed_ms,
        busy_ms,
        idle_ms,
        current_idle_ms,
        ..LedgerTotals::default()
    }
}

#[test]
fn fleet_money_stays_in_its_currency() {
    let config = fleet_config();
    let fleet = FleetCost::from_hosts(vec![
        HostCost::new(&config.hosts[0], totals(4 * HOUR, HOUR, HOUR, 0)),
        HostCost::new(&config.hosts[1], totals(2 * HOUR, 2 * HOUR, 0, 0)),
        HostCost::new(&config.hosts[2], totals(HOUR, 0, 0, 0)),
    ]);
    assert_eq!(fleet.billed_ms, 7 * HOUR);
    assert_eq!(fleet.busy_ms, 3 * HOUR);
    let money: Vec<_> = fleet
        .by_currency
        .iter()
        .map(|t| (t.currency.as_str(), t.spent, t.spent_idle, t.hosts))
        .collect();
    assert_eq!(money, [("CNY", 120.0, 30.0, 1), ("USD", 5.0, 0.0, 1)]);
    assert!((fleet.effective_utilization().unwrap() - 3.0 / 7.0).abs() < 1e-12);

    let lines = red_lines(&config, &fleet);
    assert_eq!(
        lines,
        [
            RedLine::FleetOverBudget {
                currency: "CNY".into(),
                spent: 120.0,
                max_spend: 100.0
            },
            RedLine::FleetOverHours {
                billed_ms: 7 * HOUR,
                max_hours: 5.0
            },
        ]
    );
    assert_eq!(
        lines[0].message(),
        "fleet: spent 120.00 CNY, over the budget of 100.00 CNY"
    );
}

#[test]
fn a_host_idle_past_the_limit_is_a_red_line_until_released() {
    let config = fleet_config();
    let idle = totals(HOUR, 0, 12 * MIN, 12 * MIN);
    let fleet = FleetCost::from_hosts(vec![HostCost::new(&config.hosts[1], idle.clone())]);
    let lines = red_lines(&config, &fleet);
    assert_eq!(lines.len(), 1);
    assert_eq!(lines[0].host(), Some("us"));
    assert_eq!(lines[0].message(), "us: GPUs idle for 12m (red line 10m)");
    assert!(auto_release_triggered(&lines, "us"));
    assert!(!auto_release_triggered(&lines, "cn"));

    let mut released = idle;
    released.released = Some(gpufleet::cost::Released {
        at_ms: 0,
        action: "stop".into(),
        provider: "vast".into(),
    });
    let fleet = FleetCost::from_hosts(vec![HostCost::new(&config.hosts[1], released)]);
    assert!(red_lines(&config, &fleet).is_empty());
}

#[test]
fn the_cost_command_prints_a_table_and_json() {
    let config = fleet_config();
    let mut book = LedgerBook::default();
    let mut ledger = Ledger::new(LedgerSettings::from_config(&config), None);
    let mut now = 0;
    ledger.observe(now, &[BUSY]);
    hold(&mut ledger, &mut now, HOUR, &[BUSY]);
    hold(&mut ledger, &mut now, 20 * MIN, &[IDLE_PARKED]);
    book.hosts.insert("cn".into(), ledger.into_state());

    let (table, code) = cost_report(&config, &book, false, now).unwrap();
    assert_eq!(code, 1, "the idle host is a red line");
    assert!(table.starts_with("HOST"), "{table}");
    let cn = table.lines().find(|l| l.starts_with("cn ")).unwrap();
    for cell in [
        "30.00 CNY",
        "1h20m",
        "1h00m",
        " 20m",
        "75%",
        "40.00 CNY",
        "10.00 CNY",
        "idle 20m",
    ] {
        assert!(cn.contains(cell), "{cell} missing in {cn:?}");
    }
    assert!(
        table.contains("! cn: GPUs idle for 20m (red line 10m)"),
        "{table}"
    );

    let (json, _) = cost_report(&config, &book, true, now).unwrap();
    let value: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(value["hosts"][0]["name"], "cn");
    assert_eq!(value["hosts"][0]["spent"], 40.0);
    assert_eq!(value["hosts"][0]["parked_ms"], 20 * MIN);
    assert_eq!(value["hosts"][0]["effective_utilization"], 0.75);
    assert_eq!(value["hosts"][2]["spent"], serde_json::Value::Null);
    assert_eq!(value["fleet"]["by_currency"][0]["currency"], "CNY");
    assert_eq!(value["red_lines"][0]["kind"], "host_idle");

    let fleet = fleet_cost(&config, &book, now);
    assert_eq!(fleet.hosts.len(), 3);
}

#[test]
fn a_release_recorded_before_any_observation_is_kept_and_a_reopened_ledger_survives_a_restart() {
    // `gpufleet release` on a host no console ever watched and with no billing start: the
    // stored ledger holds only the release.
    let mut first = Ledger::resume(LedgerSettings::default(), None, None);
    first.close(HOUR, "stop", "command");
    let stored = first.into_state();
    assert!(stored.billing_started_ms.is_none());

    let resumed = Ledger::resume(LedgerSettings::default(), Some(stored.clone()), None);
    let released = resumed
        .totals(2 * HOUR)
        .released
        .expect("the release is kept");
    assert_eq!(released.at_ms, HOUR);
    assert_eq!(released.action, "stop");

    // Rented again: a console sees it working long after the release, and later restarts.
    let mut reopened = resumed;
    let later = HOUR + REOPEN_AFTER_MS;
    reopened.observe(later, &[BUSY]);
    reopened.observe(later + STEP, &[BUSY]);
    assert!(!reopened.is_released());
    let after_restart =
        Ledger::resume(LedgerSettings::default(), Some(reopened.into_state()), None);
    assert_eq!(after_restart.totals(later + STEP).busy_ms, STEP);
}

/// The provider's price changed at a sync: the time billed before is priced at the old price,
/// the time after at the new one, in the host's spending, its idle spending and the fleet's
/// total; the ledger keeps it through a save and a resume, and a ledger stored before prices
/// were recorded reads as billed at one price throughout.
#[test]
fn a_price_change_bills_the_time_before_at_the_old_price_and_after_at_the_new() {
    let mut ledger = Ledger::new(settings(), Some(0));
    ledger.reprice(Some(2.0), None);
    // Idle from the start (10 minutes make an idle stretch), watched for the first hour.
    let mut at = 0;
    while at < HOUR {
        at += STEP;
        ledger.observe(at, &[IDLE_EMPTY]);
    }
    // Half an hour unwatched, then the sync sees the new price: it bills from then on.
    ledger.reprice(Some(4.0), Some(HOUR + 30 * MIN));
    let stored = serde_json::to_string(ledger.state()).unwrap();
    let resumed = Ledger::resume(settings(), serde_json::from_str(&stored).unwrap(), Some(0));
    let mut ledger = resumed;
    ledger.reprice(Some(4.0), None);
    let cost = HostCost {
        host: "a".into(),
        price: Some(Price {
            price_per_hour: 4.0,
            currency: "USD".into(),
        }),
        totals: ledger.totals(2 * HOUR),
    };
    assert_eq!(cost.totals.billed_ms, 2 * HOUR);
    // 1.5 h at 2.0 and 0.5 h at 4.0 (not 2 h at 4.0).
    assert!(
        (cost.spent().unwrap() - 5.0).abs() < 1e-9,
        "{:?}",
        cost.spent()
    );
    // The idle hour was at the old price.
    assert_eq!(cost.totals.idle_ms, HOUR);
    assert!((cost.spent_idle().unwrap() - 2.0).abs() < 1e-9);
    let fleet = FleetCost::from_hosts(vec![cost]);
    assert!((fleet.by_currency[0].spent - 5.0).abs() < 1e-9);

    // A ledger from before prices were recorded: one price for all its time.
    let old = r#"{"billing_started_ms": 0, "accounted_to_ms": 3600000, "billed_ms": 3600000,
        "busy_ms": 0, "idle_ms": 0, "parked_ms": 0, "unobserved_ms": 3600000}"#;
    let mut old = Ledger::resume(settings(), serde_json::from_str(old).unwrap(), Some(0));
    old.reprice(Some(3.0), Some(2 * HOUR));
    assert!(old.totals(HOUR).earlier_prices.is_empty());
    assert_eq!(old.state().price_per_hour, Some(3.0));
}
