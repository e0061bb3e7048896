//! `c` in the console, driven through `update`: the demo fleet refuses, a check's progress
//! (replayed from a real H200 run) shows the phase and live readings, then the report with the
//! previous one beside it; Esc stops a running check. And `a`: the audit-log view lists the
//! entries it is given, newest first. Snapshots at 80x24 and 160x48.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::Terminal;
use ratatui::backend::TestBackend;

use gpufleet::app::check_run::{CheckEvent, CheckStage, done_event};
use gpufleet::app::keymap::InputMode;
use gpufleet::app::model::ModelOptions;
use gpufleet::app::panel::{HostSource, Panel};
use gpufleet::app::{Command, Event, Model, update};
use gpufleet::audit::{AuditEntry, AuditKind};
use gpufleet::check::{
    CheckError, CheckOptions, CheckPhase, CheckProgress, CheckReport, PROBE_SCRIPT, RunEnd, Runner,
    Status, run_check_with,
};
use gpufleet::config::Expect;
use gpufleet::telemetry::TimestampMs;
use gpufleet::telemetry::source::StopFlag;
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

fn model(source: HostSource) -> Model {
    let options = ModelOptions {
        source,
        ..ModelOptions::default()
    };
    Model::new(vec!["h200-1".into(), "4090-2".into()], options, T0)
}

/// Replays the recorded outputs of a real H200 (`tests/fixtures/check/real-h200`).
struct Replay {
    dir: PathBuf,
}

impl Runner for Replay {
    fn run(
        &mut self,
        argv: &[String],
        stdin: Option<&[u8]>,
        _timeout: Duration,
        _stop: &StopFlag,
        on_line: &mut dyn FnMut(&str),
    ) -> Result<RunEnd, CheckError> {
        let file = match (argv[0].as_str(), argv.get(1).map(String::as_str)) {
            ("nvidia-smi", Some("-q")) => "smi_qx.xml",
            ("nvidia-smi", _) => "query.csv",
            ("dmesg", _) => "dmesg.txt",
            ("python3", Some("-")) => {
                assert_eq!(stdin, Some(PROBE_SCRIPT.as_bytes()));
                "probe.jsonl"
            }
            other => panic!("unexpected command {other:?}"),
        };
        let text = std::fs::read_to_string(self.dir.join(file)).expect("recording");
        for line in text.lines() {
            on_line(line);
        }
        Ok(RunEnd {
            exit_status: Some(0),
            timed_out: false,
            missing: false,
        })
    }
}

/// The real H200 run: its progress reports and its report, at a fixed time.
fn h200_check() -> (Vec<CheckProgress>, CheckReport) {
    let mut replay = Replay {
        dir: Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/check/real-h200"),
    };
    let expect = Expect {
        gpu: Some("H200".to_string()),
        count: Some(1),
        memory_gib: Some(141.0),
        min_cuda: None,
    };
    let mut progress = Vec::new();
    let mut report = run_check_with(
        &mut replay,
        "h200-1",
        "ssh root@h200.example.com:22",
        &expect,
        &CheckOptions::default(),
        &mut |p| progress.push(p),
        &StopFlag::default(),
    )
    .expect("the replayed check runs");
    report.started_at_ms = T0;
    report.duration_ms = 98_000;
    (progress, report)
}

fn progress_event(id: u64, p: &CheckProgress) -> Event {
    Event::Check(CheckEvent::Progress {
        id,
        phase: p.phase.label(),
        fraction: p.fraction,
        message: p.message.clone(),
        reading: p.reading,
    })
}

fn started(model: &mut Model) -> u64 {
    match press(model, &[KeyCode::Char('c')]).as_slice() {
        [Command::StartCheck { id, host: 0 }] => *id,
        other => panic!("expected a check of host 0, got {other:?}"),
    }
}

#[test]
fn the_demo_fleet_refuses_to_check() {
    let mut model = model(HostSource::Demo);
    assert!(press(&mut model, &[KeyCode::Char('c')]).is_empty());
    assert!(model.panel.is_none());
    let notice = model.notice.as_ref().map(|n| n.text.clone());
    assert!(
        notice
            .as_deref()
            .is_some_and(|t| t.contains("nothing real to run")),
        "{notice:?}"
    );
}

#[test]
fn progress_then_the_report_beside_the_previous_one() {
    let (progress, report) = h200_check();
    assert_eq!(report.status, Status::Pass);
    let mut model = model(HostSource::Ssh);
    let id = started(&mut model);
    assert_eq!(model.input_mode(), InputMode::CheckRunning);

    // Up to the sustained load with a live reading in.
    let at = progress
        .iter()
        .position(|p| p.phase == CheckPhase::Sustain && p.reading.is_some())
        .expect("the sustained load reports readings");
    for p in &progress[..=at] {
        update(&mut model, progress_event(id, p));
    }
    let Some(Panel::Check(check)) = &model.panel else {
        panic!("no check pane");
    };
    assert_eq!(check.phase, "sustained load");
    assert!(check.fraction > 0.3 && check.fraction < 1.0, "{check:?}");
    let reading = check.readings.first().copied().expect("a reading");
    assert!(reading.temperature_c.is_some() && reading.power_w.is_some());
    let small = render(&model, 80, 24);
    assert!(small.contains("sustained load"), "{small}");
    assert!(small.contains("TFLOP/s"), "{small}");
    insta::assert_snapshot!("check_progress_80x24", small);
    insta::assert_snapshot!("check_progress_160x48", render(&model, 160, 48));

    for p in &progress[at + 1..] {
        update(&mut model, progress_event(id, p));
    }
    let mut previous = report.clone();
    previous.started_at_ms = T0 - 86_400_000;
    if let Some(gpu) = previous.gpus.first_mut() {
        gpu.matmul_tflops = gpu.matmul_tflops.map(|t| t * 0.9);
    }
    update(
        &mut model,
        Event::Check(done_event(
            id,
            &report,
            Some(&previous),
            Some("kept in /state/checks/h200-1/2027-01-15T08-00-00Z.json".into()),
        )),
    );
    assert_eq!(model.input_mode(), InputMode::CheckDone);
    let wide = render(&model, 160, 48);
    assert!(
        wide.contains("this check") && wide.contains("previous check"),
        "{wide}"
    );
    let Some(Panel::Check(check)) = &model.panel else {
        panic!("no check pane");
    };
    let CheckStage::Done { report, .. } = &check.stage else {
        panic!("not done: {:?}", check.stage);
    };
    assert!(
        report
            .iter()
            .any(|l| l.contains("Compared with the check of")),
        "{report:?}"
    );
    insta::assert_snapshot!("check_report_160x48", wide);
    insta::assert_snapshot!("check_report_80x24", render(&model, 80, 24));

    // The report scrolls; Esc closes it.
    press(&mut model, &[KeyCode::PageDown]);
    let Some(Panel::Check(check)) = &model.panel else {
        panic!("no check pane");
    };
    assert_eq!(check.scroll, 10);
    assert!(press(&mut model, &[KeyCode::Esc]).is_empty());
    assert!(model.panel.is_none());
}

#[test]
fn esc_stops_a_running_check() {
    let mut model = model(HostSource::Local);
    let id = started(&mut model);
    assert_eq!(
        press(&mut model, &[KeyCode::Esc]),
        vec![Command::StopCheck { id }]
    );
    update(
        &mut model,
        Event::Check(CheckEvent::Failed {
            id,
            reason: "stopped: the check was cancelled".into(),
        }),
    );
    let Some(Panel::Check(check)) = &model.panel else {
        panic!("no check pane");
    };
    assert!(matches!(&check.stage, CheckStage::Failed { reason } if reason.contains("cancelled")));
    assert_eq!(model.input_mode(), InputMode::CheckDone);
    // Events of a check left behind change nothing.
    update(
        &mut model,
        Event::Check(CheckEvent::Failed {
            id: id + 1,
            reason: "other".into(),
        }),
    );
    assert!(press(&mut model, &[KeyCode::Esc]).is_empty());
    assert!(model.panel.is_none());

    // A check closed while running is stopped too (Esc twice: stop, then leave it).
    let id = started(&mut model);
    press(&mut model, &[KeyCode::Char('x')]);
    assert_eq!(
        press(&mut model, &[KeyCode::Esc]),
        vec![Command::StopCheck { id }]
    );
    assert!(model.panel.is_none());
}

#[test]
fn the_audit_view_lists_what_it_is_given_newest_first() {
    let mut model = model(HostSource::Ssh);
    assert_eq!(
        press(&mut model, &[KeyCode::Char('a')]),
        vec![Command::LoadAudit]
    );
    assert_eq!(model.input_mode(), InputMode::Audit);
    let entry = |at_ms, step: &str, outcome: &str, exit| AuditEntry {
        at_ms,
        host: "h200-1".into(),
        kind: AuditKind::RunbookStep,
        command: format!("nvidia-smi {step}"),
        outcome: outcome.into(),
        exit_status: exit,
        runbook: Some("power-limit".into()),
        step: Some(step.into()),
        dry_run: false,
        simulated: false,
    };
    update(
        &mut model,
        Event::AuditLoaded(Ok(vec![
            entry(T0, "read-limits", "ok", Some(0)),
            entry(T0 + 60_000, "apply", "failed", Some(4)),
        ])),
    );
    let Some(Panel::Audit(view)) = &model.panel else {
        panic!("no audit view");
    };
    assert_eq!(view.entries[0].step.as_deref(), Some("apply"));
    let screen = render(&model, 160, 48);
    assert!(screen.contains("2027-01-15 08:01:00"), "{screen}");
    assert!(screen.contains("power-limit/apply"), "{screen}");
    assert!(screen.contains("failed (4)"), "{screen}");
    let apply = screen.find("power-limit/apply").unwrap_or(usize::MAX);
    let read = screen.find("power-limit/read-limits").unwrap_or(0);
    assert!(apply < read, "newest first:\n{screen}");
    insta::assert_snapshot!("audit_80x24", render(&model, 80, 24));
    press(&mut model, &[KeyCode::Esc]);
    assert!(model.panel.is_none());
}
