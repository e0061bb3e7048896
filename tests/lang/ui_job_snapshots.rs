//! Snapshots of the host view with a training job on it: the job's loss and eval-loss
//! sparklines on the processes pane's top border, its line on the lower one, at 80x24 and
//! 160x48, in English and Chinese. The job's log is a real one (`hf_plateau.log`, the first two
//! thirds of a 3,000-step `Trainer` run), fed to the demo fleet's 8-GPU host as its link would.
//!
//! The interface language is process-wide: each test holds the binary's language lock so
//! switching it does not race other tests.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::Terminal;
use ratatui::backend::TestBackend;

use gpufleet::app::model::ModelOptions;
use gpufleet::app::{Event, Model, update};
use gpufleet::config::lang::Lang;
use gpufleet::fleet::HostEvent;
use gpufleet::fleet::job::JobProcess;
use gpufleet::fleet::job_found::JobFound;
use gpufleet::telemetry::sim::Simulator;
use gpufleet::theme::Theme;

/// A fixed wall clock so the snapshots never depend on when the test ran.
const WALL_START_MS: u64 = 1_800_000_000_000;
/// Scenario time before the job is seen.
const SECONDS: u64 = 300;
/// Lines of the log read so far: up to the evaluation at step 2,000 of 3,000.
const LOG_LINES: usize = 171;

fn fixture_log() -> String {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/training-logs/hf_plateau.log"
    );
    let text = std::fs::read_to_string(path).expect("fixture");
    text.split_inclusive('\n').take(LOG_LINES).collect()
}

/// The demo fleet's 8-GPU host opened, its first GPU process a job whose log says so far what
/// the first [`LOG_LINES`] lines of the real run said.
fn model_with_a_job() -> (Model, usize) {
    let mut sim = Simulator::demo(7);
    let mut model = Model::new(sim.host_names(), ModelOptions::default(), WALL_START_MS);
    let step = sim.interval_ms();
    let mut t = 0;
    while t <= SECONDS * 1000 {
        for (host, event) in sim.advance(t, WALL_START_MS + t) {
            update(&mut model, Event::Host { host, event });
        }
        t += step;
    }
    update(
        &mut model,
        Event::Key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE)),
    );
    let host = model.selected_host().expect("a host is open");
    let pid = model.fleet.hosts[host].processes[0].pid;
    let at_ms = WALL_START_MS + SECONDS * 1000;
    let events = [
        HostEvent::Jobs {
            at_ms,
            jobs: vec![JobProcess {
                pid,
                user: Some("root".into()),
                elapsed_s: Some(40),
                cpu_s: Some(38),
                command: "python3 noisy.py".into(),
                log: Some("stdout: /root/run/hf_plateau.log".into()),
                found: JobFound::ProcessList,
                ..JobProcess::default()
            }],
        },
        HostEvent::JobLog {
            at_ms,
            pid,
            restart: true,
            text: fixture_log(),
        },
    ];
    for event in events {
        update(&mut model, Event::Host { host, event });
    }
    update(&mut model, Event::Tick { now_ms: at_ms });
    (model, host)
}

fn render(model: &Model, width: u16, height: u16) -> String {
    let theme = Theme::default_theme();
    let mut terminal = Terminal::new(TestBackend::new(width, height)).expect("test backend");
    terminal
        .draw(|f| gpufleet::ui::draw(f, model, &theme))
        .expect("draw");
    let buffer = terminal.backend().buffer();
    let mut out = String::new();
    // A wide character (CJK) takes two cells; the second holds nothing of its own.
    for y in 0..height {
        let mut x = 0;
        while x < width {
            let symbol = buffer[(x, y)].symbol();
            out.push_str(symbol);
            x += u16::try_from(gpufleet::cells::width(symbol).max(1)).unwrap_or(1);
        }
        out.push('\n');
    }
    out
}

/// The bars between `label` and ` value` on the processes pane's top border, if drawn.
fn sparkline(screen: &str, label: &str, value: &str) -> Option<String> {
    let top = screen
        .lines()
        .find(|l| l.contains("Processes") || l.contains("进程"))?;
    let after = top.split(label).nth(1)?;
    let bars = after.split(&format!(" {value}")).next()?;
    bars.chars()
        .all(|c| ('▁'..='█').contains(&c))
        .then(|| bars.to_string())
}

fn bar_heights(bars: &str) -> Vec<u32> {
    bars.chars().map(|c| c as u32 - '▁' as u32).collect()
}

#[test]
fn the_host_view_draws_the_jobs_losses_as_sparklines_in_both_languages() {
    let _language = crate::language();
    let (model, host) = model_with_a_job();
    let report = model.fleet.hosts[host]
        .jobs
        .iter()
        .next()
        .and_then(|j| j.report.clone())
        .expect("the log reads as a training log");
    let loss = format!("{:.4}", report.loss.expect("a loss").value);
    let eval = format!("{:.4}", report.eval_loss.expect("an eval loss").value);
    assert_eq!(report.step, Some(2000), "the log was read up to step 2,000");

    Lang::En.apply();
    let wide = render(&model, 160, 48);
    let narrow = render(&model, 80, 24);
    Lang::ZhCn.apply();
    let wide_zh = render(&model, 160, 48);
    let narrow_zh = render(&model, 80, 24);
    Lang::En.apply();

    for (name, screen, loss_label, eval_label) in [
        ("160x48", &wide, "loss ", "eval "),
        ("80x24", &narrow, "loss ", "eval "),
        ("160x48 zh-CN", &wide_zh, "训练 loss ", "验证 loss "),
        ("80x24 zh-CN", &narrow_zh, "训练 loss ", "验证 loss "),
    ] {
        let loss_bars = sparkline(screen, loss_label, &loss)
            .unwrap_or_else(|| panic!("{name}: no loss sparkline\n{screen}"));
        let eval_bars = sparkline(screen, eval_label, &eval)
            .unwrap_or_else(|| panic!("{name}: no eval-loss sparkline\n{screen}"));
        assert!(loss_bars.chars().count() >= 4, "{name}: {loss_bars}");
        assert!(eval_bars.chars().count() >= 4, "{name}: {eval_bars}");
        // The training loss fell over the run: its first bar is the highest, its last the
        // lowest; the eval loss fell from its first evaluation to its newest.
        let heights = bar_heights(&loss_bars);
        assert_eq!(heights.first(), Some(&7), "{name}: {loss_bars}");
        assert_eq!(heights.last(), Some(&0), "{name}: {loss_bars}");
        let heights = bar_heights(&eval_bars);
        assert!(heights.first() > heights.last(), "{name}: {eval_bars}");
        // Each newest value is said once: next to its sparkline, not again on the job line.
        assert_eq!(screen.matches(loss.as_str()).count(), 1, "{name}\n{screen}");
        assert_eq!(screen.matches(eval.as_str()).count(), 1, "{name}\n{screen}");
    }
    assert!(wide.contains("step 2000/3000 (67 %)"), "{wide}");
    assert!(wide_zh.contains("第 2000/3000 步"), "{wide_zh}");
    // Wider screens draw longer sparklines.
    let count = |s: &str, label: &str, value: &str| {
        sparkline(s, label, value).map_or(0, |b| b.chars().count())
    };
    assert!(count(&wide, "loss ", &loss) > count(&narrow, "loss ", &loss));
    insta::assert_snapshot!("host_job_160x48", wide);
    insta::assert_snapshot!("host_job_80x24", narrow);
    insta::assert_snapshot!("host_job_160x48_zh_cn", wide_zh);
    insta::assert_snapshot!("host_job_80x24_zh_cn", narrow_zh);
}

/// Where the pane is too narrow for a sparkline, the values stay readable: on the top border
/// without bars, or else on the job line.
#[test]
fn narrow_panes_keep_the_values_without_the_bars() {
    let _language = crate::language();
    let (model, host) = model_with_a_job();
    let report = model.fleet.hosts[host]
        .jobs
        .iter()
        .next()
        .and_then(|j| j.report.clone())
        .expect("a report");
    let loss = format!("{:.4}", report.loss.expect("a loss").value);
    // Either language: `loss 4.3850` and `训练 loss 4.3850` both hold `loss 4.3850`.
    for width in [44u16, 56, 64] {
        let screen = render(&model, width, 24);
        assert!(
            screen.contains(&format!("loss {loss}"))
                || sparkline(&screen, "loss ", &loss).is_some(),
            "{width} columns: the loss is still said\n{screen}"
        );
    }
}
