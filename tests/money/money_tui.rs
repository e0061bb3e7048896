//! Money in the console, driven through `update` under a simulated clock: ledgers fed on ticks,
//! the release dialog by keys (default Cancel, typed name, read-only, Esc, a failed backup and
//! its override), the auto-release countdown, saving, snapshots of the cost panel and the dialog,
//! and the runtime's release bridge against a local `command` provider (no real provider).

use std::path::Path;
use std::sync::{Arc, mpsc};

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::Terminal;
use ratatui::backend::TestBackend;

use gpufleet::app::keymap::InputMode;
use gpufleet::app::model::ModelOptions;
use gpufleet::app::release_bridge::{BridgeSetup, ReleaseBridge};
use gpufleet::app::release_state::{
    BackupResult, Confirmation, PlanView, ReleaseEvent, ReleaseStage,
};
use gpufleet::app::{Command, Event, Model, update};
use gpufleet::audit::{AuditKind, AuditLog};
use gpufleet::config::{self, Config};
use gpufleet::cost::{AutoDecision, HoldStore, Ledger, LedgerStore, RedLine};
use gpufleet::fleet::FleetOptions;
use gpufleet::fleet::HostEvent;
use gpufleet::fleet::money::MoneyOptions;
use gpufleet::release::{HostRunner, ReleaseAction, SendOptions};
use gpufleet::telemetry::{GpuProcess, GpuSample, TimestampMs};
use gpufleet::theme::Theme;

const T0: TimestampMs = 1_800_000_000_000;

const CONFIG: &str = r#"
idle_minutes = 10

[[hosts]]
name = "a100-1"
ssh = "root@connect.example.com:38291"
price_per_hour = 30.0
currency = "CNY"
backup = ["rsync", "-a", "/root/ckpt/", "user@nas.example.com:ckpt/"]
[hosts.release]
provider = "vast"
instance_id = "12345"
token_env = "VAST_API_KEY"

[[hosts]]
name = "h100-2"
ssh = "root@h100.example.com"
price_per_hour = 2.5
currency = "USD"
[hosts.release]
provider = "runpod"
instance_id = "pod-abc"
token_env = "RUNPOD_API_KEY"

[[hosts]]
name = "lam-3"
ssh = "ubuntu@lam.example.com"
price_per_hour = 1.29
currency = "USD"
auto_release = true
[hosts.release]
provider = "command"
command = ["true"]
"#;

fn config() -> Config {
    config::parse(CONFIG, Path::new("test.toml")).expect("test config")
}

fn options(config: &Config) -> ModelOptions {
    ModelOptions {
        fleet: FleetOptions {
            money: MoneyOptions::from_config(config),
            ..FleetOptions::default()
        },
        ..ModelOptions::default()
    }
}

fn model_with(options: ModelOptions) -> Model {
    let names = ["a100-1", "h100-2", "lam-3"].map(String::from).to_vec();
    Model::new(names, options, T0)
}

fn model() -> Model {
    model_with(options(&config()))
}

fn key(code: KeyCode) -> Event {
    Event::Key(KeyEvent::new(code, KeyModifiers::NONE))
}

fn press(model: &mut Model, codes: &[KeyCode]) -> Vec<Command> {
    codes.iter().flat_map(|&c| update(model, key(c))).collect()
}

fn type_text(model: &mut Model, text: &str) -> Vec<Command> {
    text.chars()
        .flat_map(|c| update(model, key(KeyCode::Char(c))))
        .collect()
}

fn sample(util: f64, used_mib: u64) -> GpuSample {
    GpuSample {
        index: 0,
        uuid: "GPU-0".into(),
        name: "NVIDIA A100-SXM4-80GB".into(),
        memory_total_mib: Some(81920),
        memory_used_mib: Some(used_mib),
        utilization_gpu_pct: Some(util),
        temperature_c: Some(40.0),
        power_draw_w: Some(80.0),
        power_limit_w: Some(400.0),
        ..GpuSample::default()
    }
}

/// One second: a reading of `host` (when given), its process list, then the tick.
fn second(
    model: &mut Model,
    at_ms: TimestampMs,
    readings: &[(usize, f64, u64, bool)],
) -> Vec<Command> {
    for &(host, util, used, process) in readings {
        update(
            model,
            Event::Host {
                host,
                event: HostEvent::Sample {
                    at_ms,
                    gpu: sample(util, used),
                },
            },
        );
        let processes = if process {
            vec![GpuProcess {
                gpu_index: None,
                pid: 4242,
                name: "python".into(),
                gpu_uuid: "GPU-0".into(),
                used_memory_mib: Some(used),
            }]
        } else {
            Vec::new()
        };
        update(
            model,
            Event::Host {
                host,
                event: HostEvent::Processes { at_ms, processes },
            },
        );
    }
    update(model, Event::Tick { now_ms: at_ms })
}

fn plan(action: ReleaseAction, backup: bool, other: Option<ReleaseAction>) -> PlanView {
    PlanView {
        provider: "runpod".into(),
        instance_id: Some("pod-abc".into()),
        action,
        effect: "stops the pod; the volume disk is kept (and billed), the container disk is wiped"
            .into(),
        backup: backup.then(|| "rsync -a /root/ckpt/ user@nas.example.com:ckpt/".into()),
        request: vec![
            "POST https://rest.runpod.io/v1/pods/pod-abc/stop".into(),
            "  Authorization: Bearer <redacted>".into(),
        ],
        warnings: Vec::new(),
        token_problem: None,
        other_action: other,
    }
}

/// Opens the dialog on host `host` (fleet row) and answers the plan.
fn open_planned(model: &mut Model, host: usize, plan: PlanView) -> u64 {
    for _ in 0..host {
        press(model, &[KeyCode::Down]);
    }
    let commands = press(model, &[KeyCode::Char('R')]);
    let id = match commands.as_slice() {
        [Command::PlanRelease { id, .. }] => *id,
        other => panic!("R plans the release: {other:?}"),
    };
    assert!(
        update(model, Event::Release(ReleaseEvent::Planned { id, plan })).is_empty(),
        "an interactive plan runs nothing by itself"
    );
    id
}

/// The commands but the periodic save (the test configs store their ledgers).
fn acting(commands: Vec<Command>) -> Vec<Command> {
    commands
        .into_iter()
        .filter(|c| !matches!(c, Command::SaveLedgers { .. }))
        .collect()
}

fn has_send(commands: &[Command]) -> bool {
    commands
        .iter()
        .any(|c| matches!(c, Command::SendRelease { .. }))
}

fn stage(model: &Model) -> Option<ReleaseStage> {
    model.dialog.as_ref().map(|d| d.stage.clone())
}

// ---- the release dialog, by keys ----

#[test]
fn r_plans_a_stop_of_the_selected_host_with_what_it_cost() {
    let mut m = model();
    press(&mut m, &[KeyCode::Down]);
    let commands = press(&mut m, &[KeyCode::Char('R')]);
    match commands.as_slice() {
        [
            Command::PlanRelease {
                host,
                action,
                fallback,
                cost,
                ..
            },
        ] => {
            assert_eq!(host, "h100-2");
            assert_eq!(*action, ReleaseAction::Stop, "stop, which keeps the disk");
            assert!(*fallback);
            assert_eq!(cost.as_ref().map(|c| c.host.as_str()), Some("h100-2"));
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(stage(&m), Some(ReleaseStage::Planning));
    assert_eq!(m.input_mode(), InputMode::ReleaseBusy);
}

#[test]
fn confirmation_defaults_to_cancel() {
    let mut m = model();
    let id = open_planned(&mut m, 1, plan(ReleaseAction::Stop, false, None));
    assert_eq!(
        stage(&m),
        Some(ReleaseStage::Typing),
        "no backup: type the name"
    );
    let commands = press(&mut m, &[KeyCode::Enter]);
    assert_eq!(commands, vec![Command::CancelRelease { id }]);
    assert!(m.dialog.is_none());
    let notice = m.notice.as_ref().expect("a notice says so");
    assert!(notice.text.contains("cancelled"), "{}", notice.text);
}

#[test]
fn a_wrong_typed_name_refuses() {
    let mut m = model();
    let id = open_planned(&mut m, 1, plan(ReleaseAction::Stop, false, None));
    type_text(&mut m, "h100-3");
    let commands = press(&mut m, &[KeyCode::Enter]);
    assert!(!has_send(&commands), "{commands:?}");
    assert_eq!(commands, vec![Command::CancelRelease { id }]);
    assert!(m.dialog.is_none());
    let notice = m.notice.as_ref().map(|n| n.text.clone());
    assert!(
        notice
            .as_deref()
            .is_some_and(|n| n.contains("not the host name")),
        "{notice:?}"
    );
}

#[test]
fn the_right_name_sends_and_marks_the_host_released() {
    let mut m = model();
    for s in 0..60 {
        second(&mut m, T0 + s * 1000, &[(1, 95.0, 40_000, true)]);
    }
    let id = open_planned(&mut m, 1, plan(ReleaseAction::Stop, false, None));
    type_text(&mut m, "h100-2");
    let commands = press(&mut m, &[KeyCode::Enter]);
    assert_eq!(
        commands,
        vec![Command::SendRelease {
            id,
            confirmation: Confirmation::Typed("h100-2".into()),
            override_backup: false,
        }]
    );
    assert_eq!(stage(&m), Some(ReleaseStage::Sending));
    assert!(
        press(&mut m, &[KeyCode::Esc]).is_empty(),
        "a request on its way cannot be called back"
    );
    update(
        &mut m,
        Event::Release(ReleaseEvent::Sent {
            id,
            answers: vec!["POST https://rest.runpod.io/v1/pods/pod-abc/stop: 200 {}".into()],
            problems: Vec::new(),
        }),
    );
    assert!(m.fleet.money.is_released(1), "the ledger is closed");
    let released = m
        .fleet
        .money
        .cost(1)
        .and_then(|c| c.totals.released.clone());
    assert_eq!(released.map(|r| r.action), Some("stop".to_string()));
    // Closed: the ledger bills no more.
    let billed = m.fleet.money.cost(1).map(|c| c.totals.billed_ms);
    second(&mut m, T0 + 120_000, &[]);
    assert_eq!(m.fleet.money.cost(1).map(|c| c.totals.billed_ms), billed);
    let screen = render(&m, 160, 48);
    assert!(screen.contains("sent and accepted"), "{screen}");
    press(&mut m, &[KeyCode::Char('x')]);
    assert!(m.dialog.is_none(), "any key closes the finished dialog");
    let screen = render(&m, 160, 48);
    assert!(
        screen.contains("released"),
        "the row says released:\n{screen}"
    );
}

#[test]
fn read_only_refuses_and_hides_the_hint() {
    let config = config();
    let mut options = options(&config);
    options.fleet.read_only = true;
    let mut m = model_with(options);
    let commands = press(&mut m, &[KeyCode::Char('R')]);
    assert!(commands.is_empty(), "{commands:?}");
    assert!(m.dialog.is_none());
    let notice = m.notice.as_ref().map(|n| n.text.clone());
    assert!(
        notice.as_deref().is_some_and(|n| n.contains("read-only")),
        "{notice:?}"
    );
    let screen = render(&m, 160, 48);
    assert!(screen.contains("read-only"), "{screen}");
    press(&mut m, &[KeyCode::Char('j')]);
    let screen = render(&m, 160, 48);
    assert!(!screen.contains("R release"), "{screen}");
    assert!(render(&model(), 160, 48).contains("R release"));
}

#[test]
fn esc_cancels_at_every_step_before_sending() {
    // Planning.
    let mut m = model();
    press(&mut m, &[KeyCode::Char('R')]);
    let commands = press(&mut m, &[KeyCode::Esc]);
    assert!(matches!(
        commands.as_slice(),
        [Command::CancelRelease { .. }]
    ));
    assert!(m.dialog.is_none());
    // Review (a backup is configured).
    let mut m = model();
    open_planned(&mut m, 0, plan(ReleaseAction::Stop, true, None));
    assert_eq!(stage(&m), Some(ReleaseStage::Review));
    press(&mut m, &[KeyCode::Esc]);
    assert!(m.dialog.is_none());
    // Backing up.
    let mut m = model();
    open_planned(&mut m, 0, plan(ReleaseAction::Stop, true, None));
    press(&mut m, &[KeyCode::Enter]);
    assert_eq!(stage(&m), Some(ReleaseStage::BackingUp));
    let commands = press(&mut m, &[KeyCode::Esc]);
    assert!(matches!(
        commands.as_slice(),
        [Command::CancelRelease { .. }]
    ));
    assert!(m.dialog.is_none());
    // Typing, half a name in.
    let mut m = model();
    open_planned(&mut m, 1, plan(ReleaseAction::Stop, false, None));
    type_text(&mut m, "h100");
    let commands = press(&mut m, &[KeyCode::Esc]);
    assert!(!has_send(&commands));
    assert!(m.dialog.is_none());
}

#[test]
fn a_failed_backup_blocks_unless_overridden() {
    let mut m = model();
    let id = open_planned(&mut m, 0, plan(ReleaseAction::Stop, true, None));
    assert_eq!(
        press(&mut m, &[KeyCode::Enter]),
        vec![Command::RunBackup { id }],
        "Enter runs the backup"
    );
    for line in ["sending incremental file list", "rsync: connection refused"] {
        update(
            &mut m,
            Event::Release(ReleaseEvent::BackupLine {
                id,
                line: line.into(),
            }),
        );
    }
    update(
        &mut m,
        Event::Release(ReleaseEvent::BackupDone {
            id,
            result: BackupResult::Failed("exit 23".into()),
        }),
    );
    assert_eq!(
        stage(&m),
        Some(ReleaseStage::BackupFailed {
            reason: "exit 23".into()
        })
    );
    let screen = render(&m, 160, 48);
    assert!(screen.contains("rsync: connection refused"), "{screen}");
    assert!(screen.contains("the release is blocked"), "{screen}");
    // Typing the name does nothing here: the backup must be overridden first.
    let commands = type_text(&mut m, "a100-1");
    assert!(commands.is_empty() && !has_send(&commands));
    let commands = press(&mut m, &[KeyCode::Enter]);
    assert!(!has_send(&commands), "Enter cancels: {commands:?}");
    assert!(m.dialog.is_none());

    // Again, overriding explicitly.
    let mut m = model();
    let id = open_planned(&mut m, 0, plan(ReleaseAction::Stop, true, None));
    press(&mut m, &[KeyCode::Enter]);
    update(
        &mut m,
        Event::Release(ReleaseEvent::BackupDone {
            id,
            result: BackupResult::Failed("exit 23".into()),
        }),
    );
    press(&mut m, &[KeyCode::Char('o')]);
    assert_eq!(stage(&m), Some(ReleaseStage::Typing));
    type_text(&mut m, "a100-1");
    let commands = press(&mut m, &[KeyCode::Enter]);
    assert_eq!(
        commands,
        vec![Command::SendRelease {
            id,
            confirmation: Confirmation::Typed("a100-1".into()),
            override_backup: true,
        }]
    );
}

#[test]
fn tab_and_s_t_switch_the_action_until_the_backup_ran() {
    let mut m = model();
    let id = open_planned(
        &mut m,
        1,
        plan(ReleaseAction::Stop, false, Some(ReleaseAction::Terminate)),
    );
    let commands = press(&mut m, &[KeyCode::Tab]);
    assert_eq!(
        commands,
        vec![Command::PlanRelease {
            id,
            host: "h100-2".into(),
            action: ReleaseAction::Terminate,
            fallback: false,
            cost: m.fleet.money.cost(1).cloned(),
        }]
    );
    assert_eq!(stage(&m), Some(ReleaseStage::Planning));
    // With a backup: `t` in the review, nothing once the backup ran.
    let mut m = model();
    let id = open_planned(
        &mut m,
        0,
        plan(ReleaseAction::Stop, true, Some(ReleaseAction::Terminate)),
    );
    assert!(
        press(&mut m, &[KeyCode::Char('s')]).is_empty(),
        "already stop"
    );
    let commands = press(&mut m, &[KeyCode::Char('t')]);
    assert!(matches!(
        commands.as_slice(),
        [Command::PlanRelease {
            action: ReleaseAction::Terminate,
            ..
        }]
    ));
    let mut terminate = plan(ReleaseAction::Terminate, true, Some(ReleaseAction::Stop));
    terminate.effect = "terminates the pod and deletes all of its disks".into();
    update(
        &mut m,
        Event::Release(ReleaseEvent::Planned {
            id,
            plan: terminate,
        }),
    );
    press(&mut m, &[KeyCode::Enter]);
    update(
        &mut m,
        Event::Release(ReleaseEvent::BackupDone {
            id,
            result: BackupResult::Succeeded,
        }),
    );
    assert_eq!(stage(&m), Some(ReleaseStage::Typing));
    assert!(
        press(&mut m, &[KeyCode::Tab]).is_empty(),
        "fixed after the backup"
    );
    type_text(&mut m, "a100-1");
    let commands = press(&mut m, &[KeyCode::Enter]);
    assert!(has_send(&commands));
    assert_eq!(
        m.dialog.as_ref().map(|d| d.action),
        Some(ReleaseAction::Terminate)
    );
}

#[test]
fn a_host_not_in_the_config_or_without_release_table_is_refused_in_the_dialog() {
    let mut m = Model::new(vec!["demo".into()], ModelOptions::default(), T0);
    let commands = press(&mut m, &[KeyCode::Char('R')]);
    assert!(commands.is_empty());
    assert!(matches!(stage(&m), Some(ReleaseStage::Refused { .. })));
    assert!(render(&m, 80, 24).contains("not in the config"));
    press(&mut m, &[KeyCode::Enter]);
    assert!(m.dialog.is_none());
}

// ---- the ledger, on ticks ----

#[test]
fn ticks_feed_the_ledger_busy_idle_parked_and_unobserved() {
    let mut m = model();
    // h100-2 busy for 10 minutes, a100-1 idle but holding VRAM (parked) for 20 minutes.
    for s in 0..=1200u64 {
        let mut readings = vec![(0, 0.0, 30_000, true)];
        if s <= 600 {
            readings.push((1, 95.0, 70_000, true));
        }
        second(&mut m, T0 + s * 1000, &readings);
    }
    let busy = m.fleet.money.cost(1).expect("h100-2").clone();
    assert_eq!(busy.totals.busy_ms, 600_000);
    // h100-2 went silent after 10 minutes: still billed, as unobserved time.
    assert_eq!(busy.totals.billed_ms, 1_200_000);
    assert_eq!(busy.totals.unobserved_ms, 600_000);
    assert_eq!(busy.totals.effective_utilization(), Some(0.5));
    let spent = busy.spent().expect("priced");
    assert!(
        (spent - 2.5 * 1_200_000.0 / 3_600_000.0).abs() < 1e-9,
        "{spent}"
    );

    let idle = m.fleet.money.cost(0).expect("a100-1").clone();
    assert_eq!(idle.totals.billed_ms, 1_200_000);
    assert_eq!(idle.totals.busy_ms, 0);
    assert_eq!(
        idle.totals.idle_ms, 1_200_000,
        "idle past 10 minutes counts whole"
    );
    assert_eq!(idle.totals.parked_ms, 1_200_000, "VRAM held while idle");
    let idle_spent = idle.spent_idle().expect("priced");
    assert!(
        (idle_spent - 10.0).abs() < 1e-9,
        "20 minutes at 30 CNY/h: {idle_spent}"
    );
    assert!(
        m.fleet
            .money
            .red_lines
            .iter()
            .any(|l| matches!(l, RedLine::HostIdle { host, .. } if host == "a100-1")),
        "{:?}",
        m.fleet.money.red_lines
    );
    let screen = render(&m, 160, 48);
    assert!(
        screen.contains("a100-1: GPUs idle for 20m"),
        "banner:\n{screen}"
    );
    assert!(screen.contains("10.00 CNY"), "spent in CNY:\n{screen}");
    assert!(screen.contains("0.83 USD"), "spent in USD:\n{screen}");
}

#[test]
fn ledgers_are_saved_every_30_s_and_on_quit_and_a_release_on_disk_is_kept() {
    let mut m = model();
    let mut saves = Vec::new();
    for s in 0..=61u64 {
        saves.extend(second(&mut m, T0 + s * 1000, &[(0, 95.0, 1000, true)]));
    }
    assert_eq!(
        saves
            .iter()
            .filter(|c| matches!(c, Command::SaveLedgers { last: false, .. }))
            .count(),
        2,
        "{saves:?}"
    );
    let commands = press(&mut m, &[KeyCode::Char('q')]);
    assert!(matches!(
        commands.as_slice(),
        [Command::SaveLedgers { last: true, .. }, Command::Quit]
    ));
    // What the store wrote back says `gpufleet release` closed a100-1 meanwhile.
    let mut book = m.fleet.money.book();
    let mut closed = Ledger::resume(
        m.fleet.options.money.settings,
        book.hosts.get("a100-1").cloned(),
        None,
    );
    closed.close(T0 + 61_000, "stop", "vast");
    book.hosts.insert("a100-1".into(), closed.into_state());
    update(&mut m, Event::LedgersSaved(Ok(book)));
    assert!(
        m.fleet.money.is_released(0),
        "released elsewhere stays released"
    );
    assert!(!m.fleet.money.is_released(1));
    update(&mut m, Event::LedgersSaved(Err("disk full".into())));
    assert_eq!(m.fleet.money.save_error.as_deref(), Some("disk full"));
}

#[test]
fn nothing_is_saved_for_a_console_that_does_not_persist() {
    let mut m = Model::new(vec!["demo".into()], ModelOptions::default(), T0);
    assert_eq!(press(&mut m, &[KeyCode::Char('q')]), vec![Command::Quit]);
    for s in 0..=40u64 {
        assert!(second(&mut m, T0 + s * 1000, &[(0, 0.0, 0, false)]).is_empty());
    }
}

// ---- auto-release ----

/// lam-3 idle (no process) from T0; its idle red line starts the countdown at 10 minutes.
fn idle_until_countdown(m: &mut Model) -> TimestampMs {
    let mut s = 0;
    loop {
        let at = T0 + s * 1000;
        let commands = acting(second(m, at, &[(2, 0.0, 200, false)]));
        assert!(commands.is_empty(), "{commands:?}");
        if m.fleet.money.counting_down() {
            return at;
        }
        s += 1;
        assert!(s < 700, "the countdown starts after 10 idle minutes");
    }
}

#[test]
fn the_countdown_is_shown_and_any_key_cancels_it_and_does_nothing_else() {
    let mut m = model();
    let started = idle_until_countdown(&mut m);
    assert_eq!(started, T0 + 600_000);
    assert_eq!(
        m.fleet.money.hosts[2].auto_decision,
        AutoDecision::CountingDown {
            remaining_ms: 300_000
        }
    );
    second(&mut m, started + 1000, &[(2, 0.0, 200, false)]);
    let screen = render(&m, 80, 24);
    assert!(screen.contains("AUTO-RELEASE"), "{screen}");
    assert!(screen.contains("4:59"), "{screen}");
    assert_eq!(m.input_mode(), InputMode::Countdown);
    // `q` would quit: here it only cancels.
    assert!(press(&mut m, &[KeyCode::Char('q')]).is_empty());
    assert!(!m.fleet.money.counting_down());
    assert_eq!(m.fleet_cursor, 0);
    // Five more minutes: it does not come back by itself.
    for s in 2..=400 {
        let commands = acting(second(&mut m, started + s * 1000, &[(2, 0.0, 200, false)]));
        assert!(commands.is_empty(), "{commands:?}");
    }
    assert!(m.dialog.is_none());
    // The key that cancels is swallowed even when it is Ctrl-C.
    let mut m = model();
    idle_until_countdown(&mut m);
    let ctrl_c = Event::Key(KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL));
    assert!(update(&mut m, ctrl_c).is_empty());
    assert!(!m.fleet.money.counting_down());
}

#[test]
fn a_hold_from_a_shell_cancels_the_countdown_through_the_bridge() {
    let dir = tempfile::tempdir().expect("temp dir");
    let config = config::parse(BRIDGE_CONFIG, Path::new("b.toml")).expect("config");
    let (sink, _events) = mpsc::channel();
    let bridge = ReleaseBridge::new(bridge_setup(dir.path(), 0, config), sink);
    assert_eq!(
        bridge.take_holds(),
        Some(Ok(Vec::new())),
        "nothing asked yet"
    );
    // What `gpufleet hold lam-3` leaves in the state directory.
    HoldStore::at(dir.path().join("holds.json"))
        .hold("lam-3", T0)
        .expect("hold");
    let mut m = model();
    let started = idle_until_countdown(&mut m);
    let holds = bridge.take_holds().expect("this console takes holds");
    assert!(update(&mut m, Event::Holds(holds)).is_empty());
    assert!(!m.fleet.money.counting_down(), "held");
    assert!(
        m.notice
            .as_ref()
            .is_some_and(|n| n.text.contains("lam-3 held")),
        "{:?}",
        m.notice
    );
    assert_eq!(
        bridge.take_holds(),
        Some(Ok(Vec::new())),
        "a hold is taken once"
    );
    for s in 1..=400 {
        let commands = acting(second(&mut m, started + s * 1000, &[(2, 0.0, 200, false)]));
        assert!(commands.is_empty(), "released although held: {commands:?}");
    }
}

#[test]
fn the_countdown_fires_when_not_cancelled_and_runs_the_flow_unattended() {
    let mut m = model();
    let started = idle_until_countdown(&mut m);
    let mut fired = Vec::new();
    for s in 1..=300 {
        let commands = acting(second(&mut m, started + s * 1000, &[(2, 0.0, 200, false)]));
        if !commands.is_empty() {
            fired = commands;
            assert_eq!(s, 300, "fires exactly when the countdown runs out");
            break;
        }
    }
    let id = match fired.as_slice() {
        [
            Command::PlanRelease {
                id,
                host,
                action: ReleaseAction::Stop,
                fallback: false,
                ..
            },
        ] => {
            assert_eq!(host, "lam-3");
            *id
        }
        other => panic!("{other:?}"),
    };
    assert!(m.dialog.as_ref().is_some_and(|d| d.unattended));
    // With a backup: it runs by itself, and a failed one still blocks.
    let commands = update(
        &mut m,
        Event::Release(ReleaseEvent::Planned {
            id,
            plan: plan(ReleaseAction::Stop, true, None),
        }),
    );
    assert_eq!(commands, vec![Command::RunBackup { id }]);
    let commands = update(
        &mut m,
        Event::Release(ReleaseEvent::BackupDone {
            id,
            result: BackupResult::Failed("exit 1".into()),
        }),
    );
    assert!(commands.is_empty(), "blocked: {commands:?}");
    assert!(matches!(stage(&m), Some(ReleaseStage::BackupFailed { .. })));
    press(&mut m, &[KeyCode::Esc]);
    assert!(m.dialog.is_none());

    // A good backup: sent without a typed name.
    let mut m = model();
    let started = idle_until_countdown(&mut m);
    let mut id = 0;
    for s in 1..=300 {
        for c in second(&mut m, started + s * 1000, &[(2, 0.0, 200, false)]) {
            if let Command::PlanRelease { id: fired, .. } = c {
                id = fired;
            }
        }
    }
    update(
        &mut m,
        Event::Release(ReleaseEvent::Planned {
            id,
            plan: plan(ReleaseAction::Stop, true, None),
        }),
    );
    let commands = update(
        &mut m,
        Event::Release(ReleaseEvent::BackupDone {
            id,
            result: BackupResult::Succeeded,
        }),
    );
    assert_eq!(
        commands,
        vec![Command::SendRelease {
            id,
            confirmation: Confirmation::Unattended,
            override_backup: false,
        }]
    );
}

#[test]
fn the_countdown_never_runs_while_a_user_process_runs_nor_in_read_only() {
    let mut m = model();
    for s in 0..=1200u64 {
        let commands = acting(second(&mut m, T0 + s * 1000, &[(2, 0.0, 9000, true)]));
        assert!(commands.is_empty(), "{commands:?}");
    }
    assert!(!m.fleet.money.counting_down());
    assert_eq!(m.fleet.money.hosts[2].auto_decision, AutoDecision::Held);
    assert!(render(&m, 160, 48).contains("auto-release of lam-3 held"));

    let config = config();
    let mut options = options(&config);
    options.fleet.read_only = true;
    let mut m = model_with(options);
    for s in 0..=1200u64 {
        let commands = second(&mut m, T0 + s * 1000, &[(2, 0.0, 200, false)]);
        assert!(
            commands
                .iter()
                .all(|c| matches!(c, Command::SaveLedgers { .. }))
        );
    }
    assert!(!m.fleet.money.counting_down());
}

// ---- snapshots ----

fn render(model: &Model, width: u16, height: u16) -> String {
    let theme = Theme::default_theme();
    let mut terminal = Terminal::new(TestBackend::new(width, height)).expect("test backend");
    terminal
        .draw(|f| gpufleet::ui::draw(f, model, &theme))
        .expect("draw");
    let buffer = terminal.backend().buffer();
    let mut out = String::new();
    for y in 0..height {
        for x in 0..width {
            out.push_str(buffer[(x, y)].symbol());
        }
        out.push('\n');
    }
    out
}

/// Two hours: a100-1 parked idle, h100-2 busy, lam-3 half busy.
fn priced_fleet() -> Model {
    let mut m = model();
    for s in 0..=7200u64 {
        let lam = if s % 600 < 300 { 90.0 } else { 30.0 };
        second(
            &mut m,
            T0 + s * 1000,
            &[
                (0, 0.0, 30_000, true),
                (1, 97.0, 70_000, true),
                (2, lam, 20_000, true),
            ],
        );
    }
    m
}

#[test]
fn cost_panel_snapshots() {
    let mut m = priced_fleet();
    press(&mut m, &[KeyCode::Char('$')]);
    let wide = render(&m, 160, 48);
    assert!(wide.contains("60.00 CNY"), "{wide}");
    assert!(wide.contains("fleet"), "{wide}");
    insta::assert_snapshot!("cost_panel_160x48", wide);
    insta::assert_snapshot!("cost_panel_80x24", render(&m, 80, 24));
    press(&mut m, &[KeyCode::Char('$')]);
    assert_eq!(m.input_mode(), InputMode::Normal, "$ closes it again");
    insta::assert_snapshot!("fleet_with_costs_160x48", render(&m, 160, 48));
}

#[test]
fn release_dialog_snapshots() {
    let mut m = priced_fleet();
    let mut vast = plan(ReleaseAction::Stop, true, Some(ReleaseAction::Terminate));
    vast.provider = "vast".into();
    vast.instance_id = Some("12345".into());
    vast.effect = "stops the instance; its disk is kept (storage is still billed), and starting \
                   it again depends on the machine being free"
        .into();
    vast.request = vec![
        "PUT https://console.vast.ai/api/v0/instances/12345/".into(),
        "  Authorization: Bearer <redacted>".into(),
        "  {\"state\":\"stopped\"}".into(),
    ];
    let id = open_planned(&mut m, 0, vast);
    insta::assert_snapshot!("release_review_80x24", render(&m, 80, 24));
    press(&mut m, &[KeyCode::Enter]);
    for line in [
        "sending incremental file list",
        "ckpt/step-4000.pt",
        "sent 4,213,884,117 bytes  received 35 bytes  93,641,870.04 bytes/sec",
    ] {
        update(
            &mut m,
            Event::Release(ReleaseEvent::BackupLine {
                id,
                line: line.into(),
            }),
        );
    }
    update(
        &mut m,
        Event::Release(ReleaseEvent::BackupDone {
            id,
            result: BackupResult::Succeeded,
        }),
    );
    type_text(&mut m, "a100");
    let typing = render(&m, 160, 48);
    assert!(typing.contains("<redacted>"), "{typing}");
    assert!(typing.contains("type a100-1 to stop it"), "{typing}");
    insta::assert_snapshot!("release_typing_160x48", typing);
    insta::assert_snapshot!("release_typing_80x24", render(&m, 80, 24));
    // 60x15: the plan gives way, what to type and the keys stay on screen.
    let small = render(&m, 60, 15);
    assert!(small.contains("type a100-1 to stop it"), "{small}");
    assert!(small.contains("Esc cancel"), "{small}");
}

// ---- the runtime's bridge, with a local `command` provider ----

struct FakeRunner {
    status: i32,
}

impl HostRunner for FakeRunner {
    fn run(
        &self,
        _host: &str,
        argv: &[String],
        on_line: &mut dyn FnMut(&str),
    ) -> Result<Option<i32>, String> {
        on_line(&format!("running {}", argv.join(" ")));
        on_line("\u{1b}[31mcopied 3 files\u{1b}[0m");
        Ok(Some(self.status))
    }
}

const BRIDGE_CONFIG: &str = r#"
[[hosts]]
name = "cmd-1"
ssh = "root@cmd.example.com"
price_per_hour = 12.0
currency = "CNY"
backup = ["save-ckpt"]
[hosts.release]
provider = "command"
instance_id = "i-9"
command = ["sh", "-c", "echo released {instance_id}"]
"#;

/// Runs `commands` through the bridge and feeds what it reports back into `update`, as the
/// runtime does, until nothing is left to do.
fn pump(
    model: &mut Model,
    bridge: &mut ReleaseBridge,
    events: &mpsc::Receiver<Event>,
    mut commands: Vec<Command>,
) {
    for _ in 0..50 {
        for command in std::mem::take(&mut commands) {
            bridge.execute(command);
        }
        bridge.join_workers();
        let mut any = false;
        for event in events.try_iter() {
            any = true;
            commands.extend(update(model, event));
        }
        if !any && commands.is_empty() {
            return;
        }
    }
    panic!("the bridge never settled");
}

fn bridge_setup(dir: &Path, status: i32, config: Config) -> BridgeSetup {
    BridgeSetup {
        config,
        read_only: false,
        store: Some(LedgerStore::at(dir.join("ledger.json"))),
        audit: Some(AuditLog::at(dir.join("audit.jsonl"))),
        runner: Arc::new(FakeRunner { status }),
        env: Arc::new(|_| None),
        send: SendOptions::default(),
        holds: Some(HoldStore::at(dir.join("holds.json"))),
        simulated: false,
        sync_soon: Default::default(),
    }
}

#[test]
fn the_bridge_backs_up_sends_closes_the_ledger_and_writes_the_audit_log() {
    let dir = tempfile::tempdir().expect("temp dir");
    let config = config::parse(BRIDGE_CONFIG, Path::new("b.toml")).expect("config");
    let (sink, events) = mpsc::channel();
    let mut bridge = ReleaseBridge::new(bridge_setup(dir.path(), 0, config.clone()), sink);
    let mut m = Model::new(vec!["cmd-1".into()], options(&config), T0);
    for s in 0..=40u64 {
        let commands = second(&mut m, T0 + s * 1000, &[(0, 80.0, 1000, true)]);
        pump(&mut m, &mut bridge, &events, commands);
    }
    assert!(m.fleet.money.save_error.is_none());
    let stored = LedgerStore::at(dir.path().join("ledger.json"))
        .load()
        .expect("saved");
    assert!(stored.hosts.contains_key("cmd-1"), "saved after 30 s");

    let commands = press(&mut m, &[KeyCode::Char('R')]);
    pump(&mut m, &mut bridge, &events, commands);
    assert_eq!(stage(&m), Some(ReleaseStage::Review), "{:?}", m.dialog);
    let plan = m.dialog.as_ref().and_then(|d| d.plan.clone());
    assert!(
        plan.as_ref()
            .is_some_and(|p| p.request.iter().any(|l| l.contains("released i-9"))),
        "{plan:?}"
    );
    let commands = press(&mut m, &[KeyCode::Enter]);
    pump(&mut m, &mut bridge, &events, commands);
    assert_eq!(stage(&m), Some(ReleaseStage::Typing));
    let output: Vec<String> = m
        .dialog
        .as_ref()
        .map(|d| d.backup_output.iter().cloned().collect())
        .unwrap_or_default();
    assert_eq!(
        output,
        vec!["running save-ckpt", "copied 3 files"],
        "sanitized"
    );
    type_text(&mut m, "cmd-1");
    let commands = press(&mut m, &[KeyCode::Enter]);
    pump(&mut m, &mut bridge, &events, commands);
    match stage(&m) {
        Some(ReleaseStage::Sent { answers, .. }) => {
            assert!(
                answers.iter().any(|a| a.contains("released i-9")),
                "{answers:?}"
            )
        }
        other => panic!("{other:?}"),
    }
    assert!(m.fleet.money.is_released(0));
    let stored = LedgerStore::at(dir.path().join("ledger.json"))
        .load()
        .expect("ledger");
    assert!(stored.hosts["cmd-1"].released.is_some(), "closed on disk");
    let audit = AuditLog::at(dir.path().join("audit.jsonl"))
        .read_all()
        .expect("audit");
    let kinds: Vec<AuditKind> = audit.iter().map(|e| e.kind).collect();
    assert_eq!(kinds, vec![AuditKind::Backup, AuditKind::Release]);
    assert_eq!(audit[1].outcome, "ok");
}

#[test]
fn the_bridge_keeps_a_failed_backup_from_sending_and_refuses_read_only() {
    let dir = tempfile::tempdir().expect("temp dir");
    let config = config::parse(BRIDGE_CONFIG, Path::new("b.toml")).expect("config");
    let (sink, events) = mpsc::channel();
    let mut bridge = ReleaseBridge::new(bridge_setup(dir.path(), 23, config.clone()), sink);
    let mut m = Model::new(vec!["cmd-1".into()], options(&config), T0);
    let commands = press(&mut m, &[KeyCode::Char('R')]);
    pump(&mut m, &mut bridge, &events, commands);
    let commands = press(&mut m, &[KeyCode::Enter]);
    pump(&mut m, &mut bridge, &events, commands);
    assert_eq!(
        stage(&m),
        Some(ReleaseStage::BackupFailed {
            reason: "exit 23".into()
        })
    );
    // Even a send asked for directly is refused by the flow.
    let id = m.dialog.as_ref().map_or(0, |d| d.id);
    pump(
        &mut m,
        &mut bridge,
        &events,
        vec![Command::SendRelease {
            id,
            confirmation: Confirmation::Typed("cmd-1".into()),
            override_backup: false,
        }],
    );
    match stage(&m) {
        Some(ReleaseStage::Failed { reason, .. }) => {
            assert!(reason.contains("backup failed"), "{reason}")
        }
        other => panic!("{other:?}"),
    }
    assert!(!m.fleet.money.is_released(0));

    let mut setup = bridge_setup(dir.path(), 0, config.clone());
    setup.read_only = true;
    let (sink, events) = mpsc::channel();
    let mut bridge = ReleaseBridge::new(setup, sink);
    let mut m = Model::new(vec!["cmd-1".into()], options(&config), T0);
    let commands = press(&mut m, &[KeyCode::Char('R')]);
    pump(&mut m, &mut bridge, &events, commands);
    match stage(&m) {
        Some(ReleaseStage::Refused { reason }) => assert!(reason.contains("read-only"), "{reason}"),
        other => panic!("{other:?}"),
    }
}

// ---- restart and start from the console, against a loopback provider ----

/// A vast.ai host whose provider answers on `base_url`; its backup must never run for a
/// restart.
fn vast_config(base_url: &str) -> Config {
    let text = format!(
        "[[hosts]]\nname = \"a100-1\"\nssh = \"root@connect.example.com:38291\"\n\
         price_per_hour = 30.0\ncurrency = \"CNY\"\nbackup = [\"save-ckpt\"]\n\
         [hosts.release]\nprovider = \"vast\"\ninstance_id = \"12345\"\n\
         token_env = \"VAST_API_KEY\"\nbase_url = \"{base_url}\"\n"
    );
    config::parse(&text, Path::new("v.toml")).expect("vast config")
}

fn vast_bridge(dir: &Path, config: Config, sink: mpsc::Sender<Event>) -> ReleaseBridge {
    let mut setup = bridge_setup(dir, 0, config);
    setup.env = Arc::new(|name| (name == "VAST_API_KEY").then(|| "vast-SECRET-77".to_string()));
    ReleaseBridge::new(setup, sink)
}

#[test]
fn r_opens_the_restart_dialog_with_its_request_and_cancel_sends_nothing() {
    let server = crate::release_server::Server::start(vec![crate::release_server::answer(
        200,
        r#"{"success": true}"#,
    )]);
    let dir = tempfile::tempdir().expect("temp dir");
    let config = vast_config(&server.base_url);
    let (sink, events) = mpsc::channel();
    let mut bridge = vast_bridge(dir.path(), config.clone(), sink);
    let mut m = Model::new(vec!["a100-1".into()], options(&config), T0);
    press(&mut m, &[KeyCode::Enter]);

    let commands = press(&mut m, &[KeyCode::Char('r')]);
    assert!(
        commands.iter().any(|c| matches!(
            c,
            Command::PlanRelease {
                action: ReleaseAction::Restart,
                fallback: false,
                ..
            }
        )),
        "r plans a restart: {commands:?}"
    );
    pump(&mut m, &mut bridge, &events, commands);
    assert_eq!(
        stage(&m),
        Some(ReleaseStage::Typing),
        "no backup step: {:?}",
        m.dialog
    );
    let screen = render(&m, 100, 30);
    assert!(
        screen.contains("restart a100-1 through the provider"),
        "{screen}"
    );
    assert!(
        screen.contains("/api/v0/instances/reboot/12345/"),
        "{screen}"
    );
    assert!(screen.contains("<redacted>"), "{screen}");
    assert!(!screen.contains("vast-SECRET-77"), "{screen}");
    assert!(screen.contains("type a100-1 to restart it"), "{screen}");
    assert!(
        !screen.contains("save-ckpt"),
        "no backup is offered: {screen}"
    );

    // Enter with nothing typed is Cancel: nothing reaches the provider.
    let commands = press(&mut m, &[KeyCode::Enter]);
    pump(&mut m, &mut bridge, &events, commands);
    assert!(m.dialog.is_none());
    assert!(server.requests().is_empty(), "{:?}", server.requests());
    let audit = AuditLog::at(dir.path().join("audit.jsonl"))
        .read_all()
        .unwrap_or_default();
    assert!(audit.is_empty(), "{audit:?}");

    // The typed name sends the reboot; the host is not released and bills on.
    let commands = press(&mut m, &[KeyCode::Char('r')]);
    pump(&mut m, &mut bridge, &events, commands);
    type_text(&mut m, "a100-1");
    let commands = press(&mut m, &[KeyCode::Enter]);
    pump(&mut m, &mut bridge, &events, commands);
    assert!(
        matches!(stage(&m), Some(ReleaseStage::Sent { .. })),
        "{:?}",
        m.dialog
    );
    let seen = server.requests();
    assert_eq!(seen.len(), 1, "{seen:?}");
    assert_eq!(
        (seen[0].method.as_str(), seen[0].path.as_str()),
        ("PUT", "/api/v0/instances/reboot/12345/")
    );
    assert!(!m.fleet.money.is_released(0), "a restart releases nothing");
    let screen = render(&m, 100, 30);
    assert!(screen.contains("restart sent and accepted"), "{screen}");
    assert!(!screen.contains("marked released"), "{screen}");
    let audit = AuditLog::at(dir.path().join("audit.jsonl"))
        .read_all()
        .expect("audit");
    assert_eq!(audit.len(), 1, "{audit:?}");
    assert_eq!(audit[0].kind, AuditKind::Release);
    assert!(audit[0].command.contains("reboot"), "{:?}", audit[0]);
}

#[test]
fn capital_s_opens_the_start_dialog_and_read_only_refuses_both() {
    let config = vast_config("http://127.0.0.1:9");
    let mut m = Model::new(vec!["a100-1".into()], options(&config), T0);
    let commands = press(&mut m, &[KeyCode::Char('S')]);
    assert!(
        commands.iter().any(|c| matches!(
            c,
            Command::PlanRelease {
                action: ReleaseAction::Start,
                ..
            }
        )),
        "S plans a start: {commands:?}"
    );
    press(&mut m, &[KeyCode::Esc]);
    assert!(m.dialog.is_none(), "Esc cancels");

    let mut read_only = options(&config);
    read_only.fleet.read_only = true;
    let mut m = Model::new(vec!["a100-1".into()], read_only, T0);
    for key in ['r', 'S'] {
        let commands = acting(press(&mut m, &[KeyCode::Char(key)]));
        assert!(commands.is_empty(), "{key}: {commands:?}");
        assert!(m.dialog.is_none(), "{key}");
    }
    let screen = render(&m, 100, 30);
    assert!(
        screen.contains("restarting and starting hosts is turned off"),
        "{screen}"
    );
}
