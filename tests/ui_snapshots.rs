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
    let screen = render(&model, 80, 24);
    for (keys, _) in gpufleet::app::keymap::BINDINGS {
        assert!(screen.contains(keys), "help shows {keys}");
    }
    insta::assert_snapshot!("help_80x24", screen);
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
