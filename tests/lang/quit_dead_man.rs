//! Quitting the console while hosts have a dead-man switch armed asks whether to leave them
//! armed: `y` or Enter quits and leaves them (each host then stops itself once nobody watches
//! it), `d` quits and disarms them, Esc stays. A host whose switch is not armed asks nothing,
//! nor does a signal (nobody is there to answer). The question is drawn whole, in English and
//! in Chinese, at 80x24 and 100x30.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::Terminal;
use ratatui::backend::TestBackend;

use gpufleet::app::keymap::InputMode;
use gpufleet::app::model::ModelOptions;
use gpufleet::app::{Command, Event, Model, update};
use gpufleet::config::lang::Lang;
use gpufleet::fleet::HostEvent;
use gpufleet::fleet::dead_man::{DeadManState, NotArmed};
use gpufleet::theme::Theme;

const NOW_MS: u64 = 1_800_000_000_000;

/// Three hosts: `alpha` armed, `bravo` not armed, `charlie` without a switch.
fn fleet() -> Model {
    let names = ["alpha", "bravo", "charlie"].map(String::from).to_vec();
    let mut model = Model::new(names, ModelOptions::default(), NOW_MS);
    let states = [
        (0, DeadManState::armed(30, NOW_MS + 1_800_000)),
        (1, DeadManState::not_armed(30, NotArmed::NoDetach)),
    ];
    for (host, state) in states {
        update(
            &mut model,
            Event::Host {
                host,
                event: HostEvent::DeadMan {
                    at_ms: NOW_MS,
                    state,
                },
            },
        );
    }
    model
}

fn press(model: &mut Model, code: KeyCode) -> Vec<Command> {
    update(model, Event::Key(KeyEvent::new(code, KeyModifiers::NONE)))
}

fn quits(commands: &[Command]) -> bool {
    commands.last() == Some(&Command::Quit)
}

fn screen(model: &Model, width: u16, height: u16) -> String {
    let theme = Theme::default_theme();
    let mut terminal = Terminal::new(TestBackend::new(width, height)).expect("backend");
    terminal
        .draw(|f| gpufleet::ui::draw(f, model, &theme))
        .expect("draw");
    let buffer = terminal.backend().buffer().clone();
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
fn quitting_asks_about_armed_switches_and_the_answer_is_honoured() {
    let _language = crate::language();
    let mut model = fleet();
    let asked = press(&mut model, KeyCode::Char('q'));
    assert!(asked.is_empty(), "quit before the answer: {asked:?}");
    assert_eq!(model.input_mode(), InputMode::QuitAsk);
    assert_eq!(model.quit_ask.as_deref(), Some(&["alpha".to_string()][..]));

    // Esc: still here, nothing asked any more.
    assert!(press(&mut model, KeyCode::Esc).is_empty());
    assert_eq!(model.input_mode(), InputMode::Normal);

    // y (or Enter): quit, the switch left armed.
    press(&mut model, KeyCode::Char('q'));
    let kept = press(&mut model, KeyCode::Char('y'));
    assert!(quits(&kept), "{kept:?}");
    assert!(
        !kept
            .iter()
            .any(|c| matches!(c, Command::DisarmDeadMen { .. })),
        "{kept:?}"
    );
    let mut model = fleet();
    press(&mut model, KeyCode::Char('q'));
    assert!(quits(&press(&mut model, KeyCode::Enter)));

    // d: the armed host's switch disarmed, then quit.
    let mut model = fleet();
    press(&mut model, KeyCode::Char('q'));
    let disarmed = press(&mut model, KeyCode::Char('d'));
    assert!(quits(&disarmed), "{disarmed:?}");
    assert!(
        disarmed.contains(&Command::DisarmDeadMen {
            hosts: vec!["alpha".to_string()]
        }),
        "{disarmed:?}"
    );

    // A signal quits at once.
    let mut model = fleet();
    assert!(quits(&update(&mut model, Event::Stop)));

    // No switch armed: q quits as it always did.
    let names = vec!["bravo".to_string()];
    let mut plain = Model::new(names, ModelOptions::default(), NOW_MS);
    assert!(quits(&press(&mut plain, KeyCode::Char('q'))));
}

#[test]
fn the_question_is_drawn_whole_in_both_languages() {
    let _language = crate::language();
    for (lang, title, keep) in [
        (
            Lang::En,
            "Leave the dead-man switches armed?",
            "quit and leave them armed",
        ),
        (Lang::ZhCn, "保持失联关机开关启用？", "退出并保持开关启用"),
    ] {
        lang.apply();
        for (width, height) in [(80, 24), (100, 30)] {
            let mut model = fleet();
            press(&mut model, KeyCode::Char('q'));
            // Wide characters take two cells: compare with the spaces a cell adds removed.
            let text = screen(&model, width, height).replace(' ', "");
            for needle in [title, keep, "alpha", "Esc"] {
                let needle = needle.replace(' ', "");
                assert!(
                    text.contains(&needle),
                    "{lang:?} {width}x{height}: no {needle:?} in\n{}",
                    screen(&model, width, height)
                );
            }
        }
    }
}

#[test]
fn h_pushes_the_selected_hosts_switch_and_says_when_there_is_none() {
    let _language = crate::language();
    let mut model = fleet();
    assert_eq!(
        press(&mut model, KeyCode::Char('H')),
        vec![Command::HoldDeadMan {
            host: "alpha".to_string()
        }]
    );
    // charlie has no switch: nothing is sent, and the notice says why.
    press(&mut model, KeyCode::Down);
    press(&mut model, KeyCode::Down);
    assert!(press(&mut model, KeyCode::Char('H')).is_empty());
    let notice = model
        .notice
        .as_ref()
        .map(|n| n.text.clone())
        .unwrap_or_default();
    assert!(
        notice.contains("charlie") && notice.contains("[hosts.dead_man]"),
        "{notice}"
    );
}
