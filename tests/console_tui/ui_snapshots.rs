//! Snapshots of every screen at 80x24 and 160x48, rendered from the seeded demo fleet.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::Terminal;
use ratatui::backend::TestBackend;

use gpufleet::app::model::ModelOptions;
use gpufleet::app::{Event, Model, update};
use gpufleet::telemetry::sim::Simulator;
use gpufleet::theme::Theme;

/// A fixed wall clock so the snapshots never depend on when the test ran.
const WALL_START_MS: u64 = 1_800_000_000_000;

/// The demo fleet after `seconds` of scenario time, fed through `update` like the runtime does.
fn demo_model(seconds: u64) -> Model {
    let mut sim = Simulator::demo(7);
    let mut model = Model::new(sim.host_names(), ModelOptions::default(), WALL_START_MS);
    let step = sim.interval_ms();
    let mut t = 0;
    while t <= seconds * 1000 {
        for (host, event) in sim.advance(t, WALL_START_MS + t) {
            update(&mut model, Event::Host { host, event });
        }
        t += step;
    }
    update(
        &mut model,
        Event::Tick {
            now_ms: WALL_START_MS + seconds * 1000,
        },
    );
    model
}

fn press(model: &mut Model, codes: &[KeyCode]) {
    for &c in codes {
        update(model, Event::Key(KeyEvent::new(c, KeyModifiers::NONE)));
    }
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

#[test]
fn fleet_view() {
    let model = demo_model(90);
    insta::assert_snapshot!("fleet_80x24", render(&model, 80, 24));
    insta::assert_snapshot!("fleet_160x48", render(&model, 160, 48));
    insta::assert_snapshot!("fleet_60x15", render(&model, 60, 15));
}

#[test]
fn host_view_of_eight_gpus() {
    let mut model = demo_model(300);
    press(&mut model, &[KeyCode::Enter]);
    let eight = render(&model, 160, 48);
    for gpu in 0..8 {
        assert!(
            eight.contains(&format!(" {gpu} · H100")),
            "card of GPU {gpu} visible at 160x48"
        );
    }
    insta::assert_snapshot!("host_h100x8_160x48", eight);
    insta::assert_snapshot!("host_h100x8_80x24", render(&model, 80, 24));
}

#[test]
fn host_view_of_a_lost_gpu() {
    let mut model = demo_model(120);
    let lost = model
        .fleet
        .hosts
        .iter()
        .position(|h| h.lost_raw().is_some())
        .expect("the demo has a host whose GPU falls off the bus");
    press(&mut model, &[KeyCode::Char('/')]);
    for c in model.fleet.hosts[lost].name.clone().chars() {
        press(&mut model, &[KeyCode::Char(c)]);
    }
    press(&mut model, &[KeyCode::Enter, KeyCode::Enter]);
    let screen = render(&model, 160, 48);
    assert!(
        screen.contains("GPU is lost"),
        "the raw failure text is shown"
    );
    insta::assert_snapshot!("host_lost_160x48", screen);
}

#[test]
fn help_overlay_lists_every_key() {
    let mut model = demo_model(5);
    press(&mut model, &[KeyCode::Char('?')]);
    let screen = render(&model, 80, 30);
    for (keys, _) in gpufleet::app::keymap::BINDINGS {
        assert!(screen.contains(keys), "help shows {keys}");
    }
    // At 80x24 the list scrolls; the last key is one PgDn away.
    let screen = render(&model, 80, 24);
    assert!(screen.contains("Keys 1-20 of 25"), "{screen}");
    insta::assert_snapshot!("help_80x24", screen);
    press(&mut model, &[KeyCode::PageDown]);
    let screen = render(&model, 80, 24);
    assert!(screen.contains("q / Ctrl-C"), "{screen}");
}

#[test]
fn filter_bar_and_empty_result() {
    let mut model = demo_model(5);
    press(
        &mut model,
        &[KeyCode::Char('/'), KeyCode::Char('z'), KeyCode::Char('z')],
    );
    insta::assert_snapshot!("filter_80x24", render(&model, 80, 24));
}

#[test]
fn unknown_host_key_dialog() {
    use gpufleet::app::prompt::{Prompt, PromptKind};
    let mut model = demo_model(5);
    update(
        &mut model,
        Event::Prompt(Prompt {
            id: 1,
            host: 0,
            target: "root@127.0.0.1:2222".into(),
            kind: PromptKind::HostKey {
                known_as: "[127.0.0.1]:2222".into(),
                key_type: "ssh-ed25519".into(),
                fingerprint: "SHA256:47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU".into(),
                other_types_known: vec![],
            },
        }),
    );
    let screen = render(&model, 80, 24);
    assert!(screen.contains("SHA256:47DEQpj8HBSa"), "{screen}");
    insta::assert_snapshot!("host_key_80x24", screen);
}

/// A fleet longer than the screen: the cursor's host is always on screen, the table scrolls
/// only as far as it must (the cursor on the last line), and Home-side rows come back on the
/// way up.
#[test]
fn a_long_fleet_scrolls_with_the_cursor() {
    let mut sim = gpufleet::telemetry::sim::fleet(7, 60);
    let mut model = Model::new(sim.host_names(), ModelOptions::default(), WALL_START_MS);
    for (host, event) in sim.advance(0, WALL_START_MS) {
        update(&mut model, Event::Host { host, event });
    }
    let order: Vec<String> = model
        .visible_hosts()
        .iter()
        .map(|&i| model.fleet.hosts[i].name.clone())
        .collect();
    // 80x24: title, banner-free body of 22 lines, status line; the table has borders, a
    // header and the totals line, so 18 host rows fit.
    let row_of = |screen: &str, name: &str| {
        screen
            .lines()
            .position(|l| l.starts_with(&format!("│{name} ")))
    };
    let screen = render(&model, 80, 24);
    assert_eq!(row_of(&screen, &order[0]), Some(3), "{screen}");
    assert_eq!(row_of(&screen, &order[17]), Some(20), "{screen}");
    assert_eq!(row_of(&screen, &order[18]), None, "{screen}");
    assert!(
        screen
            .lines()
            .nth(21)
            .is_some_and(|l| l.starts_with("│Total")),
        "{screen}"
    );

    press(&mut model, &vec![KeyCode::Down; 30]);
    let screen = render(&model, 80, 24);
    assert_eq!(
        row_of(&screen, &order[30]),
        Some(20),
        "cursor on the last line: {screen}"
    );
    assert_eq!(row_of(&screen, &order[13]), Some(3), "{screen}");
    assert_eq!(row_of(&screen, &order[12]), None, "{screen}");

    press(&mut model, &vec![KeyCode::Down; 100]);
    let screen = render(&model, 80, 24);
    assert_eq!(
        row_of(&screen, &order[59]),
        Some(20),
        "the last host: {screen}"
    );
}

/// Opens the demo host whose GPU fell off the bus (it has two findings), as a user would: filter
/// by its name, Enter, Enter.
fn open_lost_host(model: &mut Model) {
    let lost = model
        .fleet
        .hosts
        .iter()
        .position(|h| h.lost_raw().is_some())
        .expect("the demo has a host whose GPU falls off the bus");
    press(model, &[KeyCode::Char('/')]);
    for c in model.fleet.hosts[lost].name.clone().chars() {
        press(model, &[KeyCode::Char(c)]);
    }
    press(model, &[KeyCode::Enter, KeyCode::Enter]);
    assert_eq!(model.fleet.hosts[lost].findings.len(), 2);
}

/// Every box on the screen closed: each `┌` has its `┐` on the same row and its `└` / `┘` below
/// with unbroken sides, so no widget was drawn over another.
fn boxes_are_whole(screen: &str) -> Result<usize, String> {
    let grid: Vec<Vec<char>> = screen.lines().map(|l| l.chars().collect()).collect();
    let at = |x: usize, y: usize| grid.get(y).and_then(|row| row.get(x)).copied();
    let mut boxes = 0;
    for (y, row) in grid.iter().enumerate() {
        for (x, &c) in row.iter().enumerate() {
            if c != '┌' {
                continue;
            }
            let Some(right) = (x + 1..row.len()).find(|&i| matches!(row[i], '┐' | '┌')) else {
                return Err(format!("box at {x},{y} has no top-right corner"));
            };
            if row[right] != '┐' {
                return Err(format!("box at {x},{y} runs into another box"));
            }
            let mut bottom = y + 1;
            while at(x, bottom) == Some('│') && at(right, bottom) == Some('│') {
                bottom += 1;
            }
            if at(x, bottom) != Some('└') || at(right, bottom) != Some('┘') {
                return Err(format!("box at {x},{y} is broken at row {bottom}"));
            }
            boxes += 1;
        }
    }
    Ok(boxes)
}

/// The findings pane at 80x24 (its scrolling, in both languages and at 100x30 too, is in
/// `ui_findings_snapshots.rs`): the summary reads whole and the bottom edge says that more
/// rows follow.
#[test]
fn findings_at_80x24_are_readable_and_scroll() {
    let mut model = demo_model(120);
    open_lost_host(&mut model);
    let shown = render(&model, 80, 24);
    assert!(shown.contains("Findings 1-1 of 2"), "{shown}");
    assert!(shown.contains("Processes (1)"), "{shown}");
    press(&mut model, &[KeyCode::Tab, KeyCode::Tab]);
    let top = render(&model, 80, 24);
    assert!(
        top.contains("has fallen off the bus or is otherwise"),
        "{top}"
    );
    assert!(top.contains("restarts."), "the whole summary: {top}");
    assert!(top.contains("↓ 8 more lines"), "{top}");
    insta::assert_snapshot!("host_findings_80x24", top);
}

/// 60x15: every pane of the host view gets a usable height in turn (Tab), nothing is drawn
/// over anything else, the overlays fit and say how to close them.
#[test]
fn sixty_by_fifteen_has_no_overlap() {
    let mut model = demo_model(120);
    let fleet = render(&model, 60, 15);
    assert!(boxes_are_whole(&fleet).is_ok(), "{fleet}");
    // No snapshot of the fleet or the cost panel here: their columns overflow 60 cells, and
    // ratatui's layout solver then splits the shortfall differently from run to run.
    open_lost_host(&mut model);
    for (pane, wanted) in [
        ("gpus", "0 · H200"),
        ("processes", "python3"),
        ("findings", "gpu_lost GPU 0"),
    ] {
        let screen = render(&model, 60, 15);
        assert!(screen.contains(wanted), "{pane}: {screen}");
        assert!(screen.contains("Tab pane"), "{pane}: {screen}");
        let boxes = boxes_are_whole(&screen).unwrap_or_else(|e| panic!("{pane}: {e}\n{screen}"));
        assert!(boxes >= 2, "{pane}: {screen}");
        insta::assert_snapshot!(format!("host_{pane}_60x15"), screen);
        press(&mut model, &[KeyCode::Tab]);
    }
    press(&mut model, &[KeyCode::Char('?')]);
    let help = render(&model, 60, 15);
    assert!(help.contains("Esc or ? closes"), "{help}");
    assert!(
        help.contains("Keys 1-") && help.contains(" of 25 "),
        "the help scrolls and says where: {help}"
    );
    assert!(boxes_are_whole(&help).is_ok(), "{help}");
    insta::assert_snapshot!("help_60x15", help);
    press(&mut model, &[KeyCode::Esc, KeyCode::Char('$')]);
    let cost = render(&model, 60, 15);
    assert!(boxes_are_whole(&cost).is_ok(), "{cost}");
    press(&mut model, &[KeyCode::Esc, KeyCode::Char('!')]);
    let alerts = render(&model, 60, 15);
    assert!(boxes_are_whole(&alerts).is_ok(), "{alerts}");
    insta::assert_snapshot!("alerts_60x15", alerts);
}

/// An alert as the alert book makes it, firing now.
fn alert(host: &str, gpu: Option<u32>, label: &str, summary: &str) -> gpufleet::alerts::Alert {
    use gpufleet::alerts::{Alert, AlertState, Money};
    Alert {
        host: host.into(),
        gpu,
        label: label.into(),
        severity: gpufleet::diagnose::Severity::Critical,
        summary: summary.into(),
        runbook: None,
        money: Money::default(),
        state: AlertState::Firing,
        at_ms: WALL_START_MS,
    }
}

fn fire(model: &mut Model, alerts: Vec<gpufleet::alerts::Alert>) {
    update(
        model,
        Event::Alerts {
            alerts,
            sender: gpufleet::app::alert_log::AlertSender::Nobody,
        },
    );
}

#[test]
fn an_alert_notice_names_the_host_once() {
    let mut model = demo_model(5);
    fire(
        &mut model,
        vec![alert(
            "train-h100x8",
            None,
            "red_line_host_idle",
            "train-h100x8: GPUs idle for 2h 10m (red line 2h)",
        )],
    );
    let notice = model.notice.as_ref().map(|n| n.text.clone());
    assert_eq!(
        notice.as_deref(),
        Some("alert: train-h100x8 GPUs idle for 2h 10m (red line 2h)")
    );
}

#[test]
fn a_long_notice_is_cut_between_words_with_an_ellipsis() {
    let mut model = demo_model(5);
    let words = "alert: flaky-h200 GPU 3 has fallen off the bus (Xid 79); the card is gone until \
                 the host reboots, and the training job on it stopped making progress";
    model.notify(words, true);
    let screen = render(&model, 80, 24);
    let bottom = screen.lines().last().unwrap_or_default().trim_end();
    let shown = bottom
        .trim_start()
        .split('…')
        .next()
        .filter(|_| bottom.contains('…'))
        .unwrap_or_else(|| panic!("the cut is marked: {bottom:?}"));
    assert!(words.starts_with(shown), "{shown:?}");
    // Cut between words: what follows the cut in the notice is a space.
    assert_eq!(
        words[shown.len()..].chars().next(),
        Some(' '),
        "cut inside a word: {bottom:?}"
    );
    assert!(shown.len() > 40, "the bar is used: {bottom:?}");
}

#[test]
fn the_alerts_panel_cuts_its_columns_with_an_ellipsis() {
    let mut model = demo_model(5);
    let long = "GPU 3 has fallen off the bus and every process on it was killed by the driver";
    fire(
        &mut model,
        vec![alert("flaky-h200", Some(3), "xid_79", long)],
    );
    press(&mut model, &[KeyCode::Char('!')]);
    let screen = render(&model, 80, 24);
    let row = screen
        .lines()
        .find(|l| l.contains("xid_79"))
        .unwrap_or_else(|| panic!("no alert row:\n{screen}"));
    assert!(row.contains("flaky-h200…"), "{row}\n{screen}");
    assert!(!row.contains("flaky-h200 G"), "{row}\n{screen}");
    // The summary is cut to its column, marked, and the row keeps its border.
    let summary = row.split("xid_79").nth(1).unwrap_or_default();
    assert!(
        summary.trim_end_matches('│').trim_end().ends_with('…'),
        "{row}"
    );
    assert!(row.ends_with('│'), "{row}");
}

#[test]
fn release_dialog_rows_that_go_on_stay_inside_the_border() {
    let mut model = demo_model(5);
    press(&mut model, &[KeyCode::Char('R')]);
    for width in [46, 60, 80] {
        let screen = render(&model, width, 24);
        let top = screen
            .lines()
            .position(|l| l.contains("┌ Release"))
            .unwrap_or_else(|| panic!("no release dialog:\n{screen}"));
        let mut wrapped = 0;
        for line in screen.lines().skip(top + 1) {
            let inside = line.trim_start();
            if inside.starts_with('└') {
                break;
            }
            // Every row inside the border starts with a space: none runs into the border.
            assert!(
                inside.starts_with("│ "),
                "a row against the border at {width}: {line:?}\n{screen}"
            );
            if inside.starts_with("│   ") {
                wrapped += 1;
            }
        }
        assert!(
            wrapped > 0 || width == 80,
            "nothing wrapped at {width}:\n{screen}"
        );
    }
}

/// A fleet of one host with one GPU (the demo's idle A100 host alone) is counted in the
/// singular wherever the console counts: the header, the fleet's title, the total line.
#[test]
fn one_host_with_one_gpu_is_counted_in_the_singular() {
    let mut sim = Simulator::demo(7);
    let name = sim.host_names()[1].clone();
    let mut model = Model::new(vec![name], ModelOptions::default(), WALL_START_MS);
    let step = sim.interval_ms();
    let mut t = 0;
    while t <= 30_000 {
        for (host, event) in sim.advance(t, WALL_START_MS + t) {
            if host == 1 {
                update(&mut model, Event::Host { host: 0, event });
            }
        }
        t += step;
    }
    update(
        &mut model,
        Event::Tick {
            now_ms: WALL_START_MS + 30_000,
        },
    );
    for (width, height) in [(80, 24), (100, 30), (160, 48)] {
        let screen = render(&model, width, height);
        assert!(screen.contains("1 host "), "{width}x{height}:\n{screen}");
        assert!(screen.contains("1 GPU "), "{width}x{height}:\n{screen}");
        assert!(
            !screen.contains("1 hosts") && !screen.contains("1 GPUs"),
            "{width}x{height}:\n{screen}"
        );
    }
}
