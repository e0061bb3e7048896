//! Runbooks in the console, driven through `update`: `p` lists the runbook for the host's worst
//! finding first, a change step runs only on `y`, read-only refuses, Esc stops, the demo fleet
//! runs nothing; snapshots of the picker and of a run waiting for confirmation; and the ops
//! bridge running a real runbook on this machine, audited step by step.

use gpufleet::fleet::FleetOptions;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::Terminal;
use ratatui::backend::TestBackend;

use gpufleet::app::keymap::InputMode;
use gpufleet::app::model::ModelOptions;
use gpufleet::app::ops_bridge::{OpsBridge, OpsFleet, OpsSetup};
use gpufleet::app::panel::{HostSource, Panel};
use gpufleet::app::runbook_run::{LineKind, PaneLine, RunStage, RunbookEvent, RunbookRun, StepAsk};
use gpufleet::app::{Command, Event, Model, update};
use gpufleet::audit::{AuditEntry, AuditLog};
use gpufleet::diagnose::{Finding, Severity};
use gpufleet::fleet::HostEvent;
use gpufleet::runbook::{Danger, parse_runbook};
use gpufleet::telemetry::sim::Simulator;
use gpufleet::telemetry::{GpuSample, TimestampMs};
use gpufleet::theme::Theme;

const T0: TimestampMs = 1_800_000_000_000;

fn key(code: KeyCode) -> Event {
    Event::Key(KeyEvent::new(code, KeyModifiers::NONE))
}

fn press(model: &mut Model, codes: &[KeyCode]) -> Vec<Command> {
    codes.iter().flat_map(|&c| update(model, key(c))).collect()
}

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

/// One SSH host with a GPU whose power is capped far below its limit.
fn ssh_model(read_only: bool) -> Model {
    let options = ModelOptions {
        source: HostSource::Ssh,
        fleet: FleetOptions {
            read_only,
            ..FleetOptions::default()
        },
        ..ModelOptions::default()
    };
    let mut model = Model::new(vec!["gpu-1".into()], options, T0);
    let gpu = GpuSample {
        index: 0,
        uuid: "GPU-0".into(),
        name: "NVIDIA GeForce RTX 4090".into(),
        memory_total_mib: Some(24564),
        memory_used_mib: Some(20000),
        utilization_gpu_pct: Some(100.0),
        power_draw_w: Some(150.0),
        power_limit_w: Some(150.0),
        ..GpuSample::default()
    };
    update(
        &mut model,
        Event::Host {
            host: 0,
            event: HostEvent::Sample { at_ms: T0, gpu },
        },
    );
    let mut finding = Finding::new(
        "power_throttle",
        Severity::Warning,
        "power capped far below the card's limit",
        "raise the power limit",
    );
    finding.gpu = Some(0);
    model.fleet.hosts[0].findings = vec![
        finding,
        Finding::new("idle_billing", Severity::Info, "idle", "release it"),
    ];
    model
}

fn picker(model: &Model) -> &gpufleet::app::runbook_run::Picker {
    match &model.panel {
        Some(Panel::Picker(picker)) => picker,
        other => panic!("no picker: {other:?}"),
    }
}

fn run(model: &Model) -> &RunbookRun {
    match &model.panel {
        Some(Panel::Runbook(run)) => run,
        other => panic!("no playbook pane: {other:?}"),
    }
}

fn change_ask() -> StepAsk {
    StepAsk {
        title: "Set the GPU's power limit".into(),
        why: "The power limit caps what the card may draw.".into(),
        danger: Danger::Change,
        command: "nvidia-smi -i 0 -pl 250".into(),
    }
}

/// Starts power-limit on the SSH host with watts typed; returns the run's id.
fn start_power_limit(model: &mut Model) -> u64 {
    press(model, &[KeyCode::Char('p'), KeyCode::Enter, KeyCode::Down]);
    for c in "250".chars() {
        update(model, key(KeyCode::Char(c)));
    }
    let commands = press(model, &[KeyCode::Enter]);
    match commands.as_slice() {
        [Command::StartRunbook { id, .. }] => *id,
        other => panic!("expected a start, got {other:?}"),
    }
}

#[test]
fn p_lists_the_runbook_for_the_worst_finding_first_and_types_its_parameters() {
    let mut model = ssh_model(false);
    assert!(press(&mut model, &[KeyCode::Char('p')]).is_empty());
    assert_eq!(model.input_mode(), InputMode::Runbooks);
    let items = &picker(&model).items;
    assert_eq!(items[0].id, "power-limit");
    assert_eq!(items[0].for_label.as_deref(), Some("power_throttle"));
    assert_eq!(items.len(), 6, "every curated runbook is listed");
    assert!(items[1..].iter().all(|i| i.for_label.is_none()));

    // Enter: the parameters, the GPU of the finding already filled, watts left to the runbook.
    assert!(press(&mut model, &[KeyCode::Enter]).is_empty());
    assert_eq!(model.input_mode(), InputMode::RunbookParams);
    let form = picker(&model).form.clone().expect("form");
    assert_eq!(form.fields[0].name, "gpu");
    assert_eq!(form.fields[0].value, "0");
    assert_eq!(form.fields[1].name, "watts");
    assert!(form.fields[1].value.is_empty());
    assert!(form.fields[1].hint.contains("proposed"), "{form:?}");

    // A value that is not watts is refused before anything starts.
    press(
        &mut model,
        &[KeyCode::Tab, KeyCode::Char('x'), KeyCode::Enter],
    );
    let form = picker(&model).form.clone().expect("form");
    assert!(form.error.is_some(), "{form:?}");
    press(&mut model, &[KeyCode::Backspace]);
    for c in "250".chars() {
        update(&mut model, key(KeyCode::Char(c)));
    }
    let commands = press(&mut model, &[KeyCode::Enter]);
    let [
        Command::StartRunbook {
            host,
            runbook,
            params,
            read_only,
            ..
        },
    ] = commands.as_slice()
    else {
        panic!("expected one start, got {commands:?}");
    };
    assert_eq!(*host, 0);
    assert_eq!(runbook.id, "power-limit");
    assert_eq!(
        params,
        &vec![
            ("gpu".to_string(), "0".to_string()),
            ("watts".to_string(), "250".to_string())
        ]
    );
    assert!(!read_only);
    assert_eq!(model.input_mode(), InputMode::RunbookRunning);
}

#[test]
fn a_change_step_runs_only_on_y() {
    let mut model = ssh_model(false);
    let id = start_power_limit(&mut model);
    for (answer, want) in [
        (KeyCode::Enter, false),
        (KeyCode::Char('n'), false),
        (KeyCode::Esc, false),
        (KeyCode::Char(' '), false),
        (KeyCode::Char('y'), true),
    ] {
        let commands = update(
            &mut model,
            Event::Runbook(RunbookEvent::Confirm {
                id,
                ask: change_ask(),
            }),
        );
        assert!(commands.is_empty());
        assert_eq!(model.input_mode(), InputMode::RunbookConfirm);
        let commands = press(&mut model, &[answer]);
        assert_eq!(
            commands,
            vec![Command::AnswerStep {
                id,
                confirmed: want
            }],
            "{answer:?}"
        );
        assert_eq!(model.input_mode(), InputMode::RunbookRunning);
    }
    // A question from a run left behind changes nothing.
    update(
        &mut model,
        Event::Runbook(RunbookEvent::Confirm {
            id: id + 100,
            ask: change_ask(),
        }),
    );
    assert_eq!(model.input_mode(), InputMode::RunbookRunning);
}

#[test]
fn read_only_refuses_change_steps() {
    let mut model = ssh_model(true);
    press(&mut model, &[KeyCode::Char('p'), KeyCode::Enter]);
    let commands = press(&mut model, &[KeyCode::Enter]);
    let [Command::StartRunbook { id, read_only, .. }] = commands.as_slice() else {
        panic!("{commands:?}");
    };
    assert!(*read_only, "the runner is told to refuse change steps");
    // Should a change step still ask, the pane answers no by itself.
    let commands = update(
        &mut model,
        Event::Runbook(RunbookEvent::Confirm {
            id: *id,
            ask: change_ask(),
        }),
    );
    assert_eq!(
        commands,
        vec![Command::AnswerStep {
            id: *id,
            confirmed: false
        }]
    );
    assert_eq!(model.input_mode(), InputMode::RunbookRunning);
    assert!(
        run(&model)
            .lines
            .iter()
            .any(|l| l.text.contains("read-only"))
    );
}

#[test]
fn esc_stops_the_run_and_closes_once_finished() {
    let mut model = ssh_model(false);
    let id = start_power_limit(&mut model);
    assert_eq!(
        press(&mut model, &[KeyCode::Esc]),
        vec![Command::StopRunbook { id }]
    );
    assert_eq!(run(&model).stage, RunStage::Stopping);
    update(
        &mut model,
        Event::Runbook(RunbookEvent::Finished {
            id,
            text: "cancelled".into(),
            good: false,
        }),
    );
    assert_eq!(model.input_mode(), InputMode::RunbookDone);
    assert!(press(&mut model, &[KeyCode::Esc]).is_empty());
    assert!(model.panel.is_none());
    assert_eq!(model.input_mode(), InputMode::Normal);

    // `x` stops too; closing a run that still goes on stops it as well.
    let id = start_power_limit(&mut model);
    assert_eq!(
        press(&mut model, &[KeyCode::Char('x')]),
        vec![Command::StopRunbook { id }]
    );
    assert_eq!(
        press(&mut model, &[KeyCode::Esc]),
        vec![Command::StopRunbook { id }]
    );
    assert!(model.panel.is_none());
}

fn demo_model(seconds: u64) -> Model {
    let mut sim = Simulator::demo(7);
    let mut model = Model::new(sim.host_names(), ModelOptions::default(), T0);
    let step = sim.interval_ms();
    let mut t = 0;
    while t <= seconds * 1000 {
        for (host, event) in sim.advance(t, T0 + t) {
            update(&mut model, Event::Host { host, event });
        }
        t += step;
    }
    update(
        &mut model,
        Event::Tick {
            now_ms: T0 + seconds * 1000,
        },
    );
    model
}

#[test]
fn the_demo_fleet_lists_runbooks_but_runs_none() {
    let mut model = demo_model(120);
    let lost = model
        .fleet
        .hosts
        .iter()
        .position(|h| h.lost_raw().is_some())
        .expect("a lost GPU in the demo");
    let row = model
        .visible_hosts()
        .iter()
        .position(|&h| h == lost)
        .expect("visible");
    for _ in 0..row {
        press(&mut model, &[KeyCode::Down]);
    }
    press(&mut model, &[KeyCode::Char('p')]);
    let first = picker(&model).items[0].clone();
    assert_eq!(first.id, "gpu-lost", "{:?}", picker(&model).items);
    assert!(first.for_label.is_some());
    insta::assert_snapshot!("picker_80x24", render(&model, 80, 24));
    insta::assert_snapshot!("picker_160x48", render(&model, 160, 48));

    let commands = press(&mut model, &[KeyCode::Enter]);
    assert!(commands.is_empty(), "{commands:?}");
    assert!(
        picker(&model)
            .note
            .as_deref()
            .unwrap_or("")
            .contains("demo")
    );
    assert!(
        model
            .notice
            .as_ref()
            .is_some_and(|n| n.text.contains("nothing real to run"))
    );
    press(&mut model, &[KeyCode::Esc]);
    assert!(model.panel.is_none());
}

#[test]
fn a_run_waiting_for_confirmation() {
    let mut model = ssh_model(false);
    let id = start_power_limit(&mut model);
    // One line per row: a tag for its kind, then the text as the bridge would send it.
    let script = "\
H power-limit on gpu-1: Read, set, verify and undo a GPU's power limit
R [1/5] Read the power limits of every GPU (read)
W why: A new limit must lie within the card's min..max.
$ $ nvidia-smi '--query-gpu=index,power.min_limit,power.max_limit,power.default_limit,enforced.power.limit' --format=csv,noheader,nounits
O 0, 150.00, 600.00, 450.00, 150.00\u{1b}[2J
K ok (exit 0, 212 ms)
R [2/5] Check whether the login is root (read)
W why: nvidia-smi -pl requires root.
$ $ id -u
O 0
K ok (exit 0, 35 ms)
C [3/5] Set the GPU's power limit (CHANGE)
W why: The power limit caps what the card may draw.
$ $ nvidia-smi -i 0 -pl 250";
    for row in script.lines() {
        let (tag, text) = row.split_at(2);
        let kind = match tag.trim() {
            "H" => LineKind::Heading,
            "R" => LineKind::Step(Danger::Read),
            "C" => LineKind::Step(Danger::Change),
            "W" => LineKind::Why,
            "$" => LineKind::Command,
            "O" => LineKind::Output,
            _ => LineKind::Ok,
        };
        // The escape sequence in the output is removed, as the bridge does.
        let text = gpufleet::ui::format::clean(text);
        let line = PaneLine::new(kind, text);
        update(&mut model, Event::Runbook(RunbookEvent::Line { id, line }));
    }
    update(
        &mut model,
        Event::Runbook(RunbookEvent::Confirm {
            id,
            ask: change_ask(),
        }),
    );
    let small = render(&model, 80, 24);
    assert!(small.contains("nvidia-smi -i 0 -pl 250"), "{small}");
    assert!(small.contains("cancel (default)"), "{small}");
    insta::assert_snapshot!("playbook_confirm_80x24", small);
    insta::assert_snapshot!("playbook_confirm_160x48", render(&model, 160, 48));
    // 60x15: the answer keys wrap onto a line of their own instead of being cut off.
    let narrow = render(&model, 60, 15);
    assert!(narrow.contains("cancel (default)"), "{narrow}");
    assert!(narrow.contains("Run it on the host?"), "{narrow}");
}

/// The explanations of a real runbook (gpu-lost) in the playbook pane at 80 columns: wrapped
/// at spaces, each English word whole on a row (`reset` was once cut as `re` / `set`).
#[test]
fn runbook_explanations_wrap_between_words() {
    let mut model = ssh_model(false);
    let id = start_power_limit(&mut model);
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/runbooks/gpu-lost.toml");
    let book: toml::Table = std::fs::read_to_string(path)
        .expect("runbook")
        .parse()
        .expect("TOML");
    let whys: Vec<String> = book["steps"]
        .as_array()
        .expect("steps")
        .iter()
        .filter_map(|step| step.get("why").and_then(|w| w.as_str()))
        .map(|why| format!("why: {why}"))
        .collect();
    assert!(whys.len() >= 5);
    for why in &whys {
        let line = PaneLine::new(LineKind::Why, why.clone());
        update(&mut model, Event::Runbook(RunbookEvent::Line { id, line }));
    }
    let screen = render(&model, 80, 60);
    let rows: Vec<&str> = screen
        .lines()
        .map(|l| l.trim_matches(|c: char| c == '│' || c.is_whitespace()))
        .collect();
    let shown: String = rows.concat().split_whitespace().collect();
    for why in &whys {
        let squeezed: String = why.split_whitespace().collect();
        assert!(shown.contains(&squeezed), "{why:?} shown:\n{screen}");
        for word in why.split_whitespace() {
            assert!(
                rows.iter().any(|r| r.split_whitespace().any(|w| w == word)),
                "{word:?} of {why:?} shown whole:\n{screen}"
            );
        }
    }
}

const RUNBOOK: &str = r#"
id = "tui-test"
title = "Read, then change"
summary = "A read step, then a change step that asks first."

[[steps]]
id = "look"
title = "Look"
why = "to see"
danger = "read"
command = ["echo", "hello from the host"]
timeout_s = 10

[[steps]]
id = "touch"
title = "Change something"
why = "to change"
danger = "change"
command = ["true"]
timeout_s = 10
"#;

/// Runs the test runbook through the real bridge on this machine, answering every
/// confirmation with `answer`; returns the model once the run finished, and the audit log.
fn bridge_run(answer: KeyCode, read_only: bool) -> (Model, Vec<AuditEntry>) {
    let dir = tempfile::tempdir().expect("temp dir");
    let audit = AuditLog::at(dir.path().join("audit.jsonl"));
    let (sink, events) = mpsc::channel();
    let setup = OpsSetup {
        fleet: OpsFleet::Local,
        audit: Some(audit.clone()),
        ..OpsSetup::default()
    };
    let mut bridge = OpsBridge::new(setup, sink);
    let mut model = ssh_model(read_only);
    model.source = HostSource::Local;
    let id = model.next_ops_id();
    let book = parse_runbook(RUNBOOK, "test").expect("runbook");
    model.panel = Some(Panel::Runbook(RunbookRun {
        id,
        host: 0,
        host_name: "gpu-1".into(),
        runbook: book.id.clone(),
        title: book.title.clone(),
        read_only,
        lines: Default::default(),
        stage: RunStage::Running,
        scroll: 0,
    }));
    bridge.execute(Command::StartRunbook {
        id,
        host: 0,
        runbook: Box::new(book),
        params: Vec::new(),
        read_only,
    });
    let deadline = Instant::now() + Duration::from_secs(20);
    while !run(&model).is_finished() {
        let left = deadline.saturating_duration_since(Instant::now());
        let event = events.recv_timeout(left).expect("the run reports back");
        let mut commands = update(&mut model, event);
        if model.input_mode() == InputMode::RunbookConfirm {
            commands.extend(press(&mut model, &[answer]));
        }
        for command in commands {
            bridge.execute(command);
        }
    }
    bridge.join_workers();
    let entries = audit.read_all().expect("audit log");
    (model, entries)
}

#[test]
fn the_bridge_runs_a_runbook_and_the_runner_audits_each_step() {
    let (model, entries) = bridge_run(KeyCode::Char('y'), false);
    let done = run(&model);
    assert_eq!(
        done.stage,
        RunStage::Finished {
            text: "done".into(),
            good: true
        }
    );
    assert!(done.lines.iter().any(|l| l.text == "hello from the host"));
    assert!(
        done.lines
            .iter()
            .any(|l| l.text == "$ echo 'hello from the host'")
    );
    let steps: Vec<_> = entries.iter().map(|e| e.step.clone()).collect();
    assert_eq!(steps, vec![Some("look".into()), Some("touch".into())]);

    // Anything but y: the change step does not run, and only the read is in the log.
    let (model, entries) = bridge_run(KeyCode::Enter, false);
    assert!(
        matches!(&run(&model).stage, RunStage::Finished { good: false, text } if text.contains("not confirmed"))
    );
    assert_eq!(entries.len(), 1, "{entries:?}");

    // Read-only: the runner refuses the change step before anything runs.
    let (model, entries) = bridge_run(KeyCode::Char('y'), true);
    assert!(
        matches!(&run(&model).stage, RunStage::Finished { good: false, text } if text.contains("read-only")),
        "{:?}",
        run(&model).stage
    );
    assert!(
        entries.iter().all(|e| e.step.as_deref() != Some("touch")),
        "{entries:?}"
    );
}
