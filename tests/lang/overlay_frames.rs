//! Every box drawn over the fleet view and the host view keeps its whole frame in Chinese, at
//! 80x24 and 100x30. A Chinese character takes two cells; where one under an overlay starts
//! just left of the overlay's left border, a terminal draws the whole character and the border
//! cell is lost. The screen is read back from ratatui's test backend, which receives exactly
//! the cells a terminal would be sent.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;

use gpufleet::app::model::ModelOptions;
use gpufleet::app::prompt::{Prompt, PromptKind};
use gpufleet::app::{Event, Model, update};
use gpufleet::cells;
use gpufleet::config::lang::Lang;
use gpufleet::telemetry::sim::Simulator;
use gpufleet::theme::Theme;

const WALL_START_MS: u64 = 1_800_000_000_000;

/// The demo fleet after `seconds` of scenario time, fed through `update` as the runtime does.
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

/// The screen as a terminal receives it: one frame drawn to a fresh test backend.
fn draw(model: &Model, width: u16, height: u16) -> Buffer {
    let theme = Theme::default_theme();
    let mut terminal = Terminal::new(TestBackend::new(width, height)).expect("test backend");
    terminal
        .draw(|f| gpufleet::ui::draw(f, model, &theme))
        .expect("draw");
    terminal.backend().buffer().clone()
}

fn symbol(buf: &Buffer, x: u16, y: u16) -> &str {
    buf[(x, y)].symbol()
}

/// The screen's rows as text, a wide character once (its second cell left out).
fn text(buf: &Buffer) -> String {
    let mut out = String::new();
    for y in 0..buf.area.height {
        let mut x = 0;
        while x < buf.area.width {
            let s = symbol(buf, x, y);
            out.push_str(s);
            x += u16::try_from(cells::width(s).max(1)).unwrap_or(1);
        }
        out.push('\n');
    }
    out
}

/// Where `needle` starts on screen, in cells: the first row holding it.
fn find(buf: &Buffer, needle: &str) -> Option<(u16, u16)> {
    for y in 0..buf.area.height {
        // The row's text, with the cell each of its characters starts at.
        let mut row = String::new();
        let mut starts = Vec::new();
        let mut x = 0;
        while x < buf.area.width {
            let s = symbol(buf, x, y);
            starts.push((row.len(), x));
            row.push_str(s);
            x += u16::try_from(cells::width(s).max(1)).unwrap_or(1);
        }
        if let Some(at) = row.find(needle) {
            let x = starts
                .iter()
                .rev()
                .find(|(byte, _)| *byte <= at)
                .map_or(0, |(_, x)| *x);
            return Some((x, y));
        }
    }
    None
}

/// The box titled `title` is whole: its top left corner just before the title, the top right
/// corner on that row, the left and right borders on every row down to the bottom corners.
/// Returns how many of its rows have a wide character just left of its left border in
/// `under` (the view without the box), which is what would hide the border.
fn assert_frame(buf: &Buffer, under: &Buffer, title: &str, what: &str) -> usize {
    let screen = text(buf);
    let (title_x, top) =
        find(buf, title).unwrap_or_else(|| panic!("{what}: no box titled {title:?}\n{screen}"));
    let left = title_x
        .checked_sub(1)
        .unwrap_or_else(|| panic!("{what}: title at the edge\n{screen}"));
    assert_eq!(
        symbol(buf, left, top),
        "┌",
        "{what}: the top left corner of {title:?} at ({left}, {top})\n{screen}"
    );
    let right = (left + 1..buf.area.width)
        .find(|&x| symbol(buf, x, top) == "┐")
        .unwrap_or_else(|| panic!("{what}: no top right corner\n{screen}"));
    let bottom = (top + 1..buf.area.height)
        .find(|&y| symbol(buf, left, y) != "│")
        .unwrap_or_else(|| panic!("{what}: the left border runs off the screen\n{screen}"));
    assert_eq!(
        symbol(buf, left, bottom),
        "└",
        "{what}: the left border of {title:?} is broken at row {bottom}\n{screen}"
    );
    assert_eq!(symbol(buf, right, bottom), "┘", "{what}\n{screen}");
    let mut hidden_by_wide = 0;
    for y in top + 1..bottom {
        assert_eq!(
            symbol(buf, right, y),
            "│",
            "{what}: the right border of {title:?} at row {y}\n{screen}"
        );
        if left > 0 && cells::width(symbol(under, left - 1, y)) > 1 {
            hidden_by_wide += 1;
        }
    }
    if left > 0 && cells::width(symbol(under, left - 1, top)) > 1 {
        hidden_by_wide += 1;
    }
    hidden_by_wide
}

/// Opens each overlay over the current view, checks its frame, closes it; returns how many
/// rows of all the overlays had a wide character just left of them.
fn every_overlay(model: &mut Model, width: u16, height: u16, view: &str) -> usize {
    let under = draw(model, width, height);
    let host = model
        .fleet
        .hosts
        .get(model.selected_host().unwrap_or(0))
        .map(|h| h.name.clone())
        .unwrap_or_default();
    let mut wide_under = 0;
    let overlays: [(KeyCode, String, KeyCode); 6] = [
        (KeyCode::Char('?'), " 按键 ".to_string(), KeyCode::Esc),
        (KeyCode::Char('$'), " 费用 ".to_string(), KeyCode::Esc),
        (
            KeyCode::Char('p'),
            format!(" {host} 的运维手册"),
            KeyCode::Esc,
        ),
        (KeyCode::Char('R'), format!(" 释放 {host} "), KeyCode::Esc),
        (KeyCode::Char('!'), " 告警（".to_string(), KeyCode::Esc),
        (KeyCode::Char('a'), " 审计日志（".to_string(), KeyCode::Esc),
    ];
    for (open, title, close) in overlays {
        press(model, &[open]);
        let what = format!("{view} {width}x{height} {open:?}");
        wide_under += assert_frame(&draw(model, width, height), &under, &title, &what);
        press(model, &[close]);
    }
    // A link's question: an unknown host key.
    update(
        model,
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
    let what = format!("{view} {width}x{height} host key");
    wide_under += assert_frame(
        &draw(model, width, height),
        &under,
        " 未知的主机密钥 ",
        &what,
    );
    press(model, &[KeyCode::Char('n')]);
    assert!(model.prompts.is_empty(), "the question is answered");
    wide_under
}

#[test]
fn overlays_keep_their_frames_over_chinese_text() {
    let _language = crate::language();
    Lang::ZhCn.apply();
    let mut wide_under = 0;
    for (width, height) in [(80, 24), (100, 30)] {
        let mut model = demo_model(90);
        wide_under += every_overlay(&mut model, width, height, "fleet");
        // The hot card's view, whose findings are Chinese text.
        press(&mut model, &[KeyCode::Char('/')]);
        press(
            &mut model,
            &"hot".chars().map(KeyCode::Char).collect::<Vec<_>>(),
        );
        press(&mut model, &[KeyCode::Enter, KeyCode::Enter]);
        let host = text(&draw(&model, width, height));
        assert!(host.contains("┌ 发现"), "the host view is open:\n{host}");
        wide_under += every_overlay(&mut model, width, height, "host");
    }
    // The case this guards: Chinese text running under an overlay's left border.
    assert!(
        wide_under > 0,
        "no overlay had a wide character at its left"
    );
}
