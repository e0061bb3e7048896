//! The host view's findings pane with two critical findings (the demo's GPU that falls off the
//! bus: `gpu_lost` and `xid_79`), at 80x24 and 100x30, in English and Chinese: every row of
//! both findings' actions (what the renter is to do, the point of the tool) can be brought
//! into view with ↓ and with PgDn, ↑ and PgUp bring the top back, and the wrapped text keeps
//! English words whole and starts no Chinese row with closing punctuation.
//!
//! The interface language is process-wide: the test holds the binary's language lock so
//! switching it does not race other tests.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::layout::Rect;

use gpufleet::app::model::ModelOptions;
use gpufleet::app::{Event, Model, update};
use gpufleet::config::lang::Lang;
use gpufleet::diagnose::Severity;
use gpufleet::telemetry::sim::Simulator;
use gpufleet::theme::Theme;

/// A fixed wall clock so the snapshots never depend on when the test ran.
const WALL_START_MS: u64 = 1_800_000_000_000;

/// The demo fleet after two minutes of scenario time (the H200 has fallen off the bus), in the
/// language applied before, with the lost host opened as a user would (filter by its name,
/// Enter, Enter) and Tab pressed twice to give the findings pane the keys.
fn lost_host_findings(width: u16, height: u16) -> (Model, usize) {
    let mut sim = Simulator::demo(7);
    let mut model = Model::new(sim.host_names(), ModelOptions::default(), WALL_START_MS);
    let step = sim.interval_ms();
    let mut t = 0;
    while t <= 120_000 {
        for (host, event) in sim.advance(t, WALL_START_MS + t) {
            update(&mut model, Event::Host { host, event });
        }
        t += step;
    }
    update(
        &mut model,
        Event::Tick {
            now_ms: WALL_START_MS + 120_000,
        },
    );
    let lost = model
        .fleet
        .hosts
        .iter()
        .position(|h| h.lost_raw().is_some())
        .expect("the demo has a host whose GPU falls off the bus");
    let mut keys = vec![KeyCode::Char('/')];
    keys.extend(model.fleet.hosts[lost].name.chars().map(KeyCode::Char));
    keys.extend([KeyCode::Enter, KeyCode::Enter, KeyCode::Tab, KeyCode::Tab]);
    for key in keys {
        press(&mut model, key, (width, height));
    }
    let findings = &model.fleet.hosts[lost].findings;
    assert_eq!(findings.len(), 2);
    assert!(findings.iter().all(|f| f.severity == Severity::Critical));
    (model, lost)
}

/// A key, then what the runtime does after the frame it causes: keep where the panes were.
fn press(model: &mut Model, key: KeyCode, (width, height): (u16, u16)) {
    update(model, Event::Key(KeyEvent::new(key, KeyModifiers::NONE)));
    let area = Rect::new(0, 0, width, height);
    model.screen.regions = gpufleet::ui::regions::of(model, &Theme::default_theme(), area);
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

/// The findings pane's title row and the rows inside its frame.
fn pane(screen: &str, label: &str) -> (String, Vec<String>) {
    let lines: Vec<&str> = screen.lines().collect();
    let top = lines
        .iter()
        .position(|l| l.starts_with(&format!("┌ {label}")))
        .unwrap_or_else(|| panic!("no findings pane:\n{screen}"));
    let rows = lines[top + 1..]
        .iter()
        .take_while(|l| l.starts_with('│'))
        .map(|l| {
            let inside = l.trim_start_matches('│');
            inside.strip_suffix('│').unwrap_or(inside).to_string()
        })
        .collect();
    (lines[top].to_string(), rows)
}

/// Every row the pane shows on the way down, pressing `key` until the last row is in view
/// (the bottom edge no longer says what is below); also the screens at the top and bottom.
fn read_down(
    model: &mut Model,
    key: KeyCode,
    size: (u16, u16),
    label: &str,
) -> (Vec<String>, String, String) {
    let top = render(model, size.0, size.1);
    let mut seen: Vec<String> = Vec::new();
    let mut screen = top.clone();
    for _ in 0..40 {
        let (_, rows) = pane(&screen, label);
        let bottom_edge = screen
            .lines()
            .skip_while(|l| !l.starts_with(&format!("┌ {label}")))
            .find(|l| l.starts_with('└'))
            .unwrap_or_default()
            .to_string();
        // The rows not seen yet: those past the overlap with what was shown before.
        let overlap = (0..=rows.len().min(seen.len()))
            .rev()
            .find(|&n| seen[seen.len() - n..] == rows[..n])
            .unwrap_or(0);
        seen.extend(rows[overlap..].iter().cloned());
        if !bottom_edge.contains('↓') {
            return (seen, top, screen);
        }
        let before = model.screen.findings_scroll;
        press(model, key, size);
        assert!(
            model.screen.findings_scroll > before,
            "{key:?} scrolls on while rows are below:\n{screen}"
        );
        screen = render(model, size.0, size.1);
    }
    panic!("the pane never reached its last row:\n{screen}");
}

/// `text` without its whitespace, for following a text across row breaks.
fn squeezed(text: &str) -> String {
    text.chars().filter(|c| !c.is_whitespace()).collect()
}

#[test]
fn both_critical_findings_actions_can_be_read_whole_at_80x24_and_100x30_in_both_languages() {
    let _language = crate::language();
    for (lang, label, tag) in [(Lang::En, "Findings", "en"), (Lang::ZhCn, "发现", "zh")] {
        lang.apply();
        for size in [(80u16, 24u16), (100, 30)] {
            let name = format!("{}x{}_{tag}", size.0, size.1);
            let (mut model, lost) = lost_host_findings(size.0, size.1);
            let findings = model.fleet.hosts[lost].findings.clone();

            // ↓ a row at a time, from the top to the last row.
            let (rows, top, bottom) = read_down(&mut model, KeyCode::Down, size, label);
            let text = squeezed(&rows.join("\n"));
            for f in &findings {
                assert!(
                    text.contains(&squeezed(&f.action)),
                    "{name}: the whole action of {} is read by scrolling:\n{}",
                    f.label,
                    rows.join("\n")
                );
            }
            // Where the pane cannot show every row at once, ↓ moves it one row: the second
            // row comes to the top. Where it can, nothing scrolls.
            press(&mut model, KeyCode::Char('g'), size);
            let (_, first_rows) = pane(&top, label);
            press(&mut model, KeyCode::Down, size);
            let (_, next_rows) = pane(&render(&model, size.0, size.1), label);
            if top == bottom {
                assert_eq!(model.screen.findings_scroll, 0, "{name}");
                assert_eq!(first_rows, rows, "{name}: all in view");
            } else {
                assert_eq!(model.screen.findings_scroll, 1, "{name}");
                assert_eq!(next_rows[0], first_rows[1], "{name}: one row");
            }

            // English words are never cut; no Chinese row starts with closing punctuation.
            for f in &findings {
                for word in f.action.split_whitespace() {
                    if word.is_ascii() {
                        assert!(
                            rows.iter().any(|r| r.split_whitespace().any(|w| w == word)),
                            "{name}: {word:?} is shown whole:\n{}",
                            rows.join("\n")
                        );
                    }
                }
            }
            for row in &rows {
                let start = row.trim_start().chars().next();
                assert!(
                    !matches!(start, Some('）' | '。' | '，' | '、' | '；' | '：')),
                    "{name}: {row:?}"
                );
            }

            // PgDn reaches the same last row, in fewer steps; PgUp goes back to the top.
            press(&mut model, KeyCode::Char('g'), size);
            let (paged, _, paged_bottom) = read_down(&mut model, KeyCode::PageDown, size, label);
            assert_eq!(paged, rows, "{name}: PgDn shows every row ↓ does");
            assert_eq!(paged_bottom, bottom, "{name}");
            let deepest = model.screen.findings_scroll;
            press(&mut model, KeyCode::Down, size);
            assert_eq!(model.screen.findings_scroll, deepest, "{name}: no further");
            while model.screen.findings_scroll > 0 {
                let before = model.screen.findings_scroll;
                press(&mut model, KeyCode::PageUp, size);
                assert!(model.screen.findings_scroll < before, "{name}");
            }
            assert_eq!(
                render(&model, size.0, size.1),
                top,
                "{name}: back at the top"
            );

            insta::assert_snapshot!(format!("findings_top_{name}"), top);
            insta::assert_snapshot!(format!("findings_bottom_{name}"), bottom);
        }
    }
    Lang::En.apply();
}
