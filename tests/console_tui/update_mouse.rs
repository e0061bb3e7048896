//! The mouse through `update()`, with the regions the runtime stores after drawing a frame
//! (`ui::regions::of`): what a click or a wheel notch at a cell does in each state.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers, MouseButton, MouseEvent, MouseEventKind};
use ratatui::layout::Rect;

use gpufleet::app::keymap::InputMode;
use gpufleet::app::model::{HostFocus, ModelOptions};
use gpufleet::app::prompt::{Prompt, PromptKind};
use gpufleet::app::{Command, Event, Model, View, update};
use gpufleet::fleet::HostEvent;
use gpufleet::telemetry::{GpuProcess, GpuSample};
use gpufleet::theme::Theme;

const SCREEN: Rect = Rect::new(0, 0, 80, 24);

fn fleet() -> Model {
    let names = ["alpha", "bravo", "charlie"].map(String::from).to_vec();
    let mut m = Model::new(names, ModelOptions::default(), 1_000_000);
    for host in 0..3 {
        for index in 0..2 {
            let gpu = GpuSample {
                index,
                uuid: format!("GPU-{host}-{index}").into(),
                name: "NVIDIA A100 80GB PCIe".into(),
                ..GpuSample::default()
            };
            let at_ms = 1_000_000;
            update(
                &mut m,
                Event::Host {
                    host,
                    event: HostEvent::Sample { at_ms, gpu },
                },
            );
        }
        let processes = (0..12)
            .map(|pid| GpuProcess {
                gpu_index: None,
                pid,
                gpu_uuid: format!("GPU-{host}-0"),
                name: format!("worker-{pid}"),
                used_memory_mib: Some(100),
            })
            .collect();
        let at_ms = 1_000_000;
        update(
            &mut m,
            Event::Host {
                host,
                event: HostEvent::Processes { at_ms, processes },
            },
        );
    }
    drawn(&mut m);
    m
}

/// What the runtime does after each frame.
fn drawn(model: &mut Model) {
    model.screen.regions = gpufleet::ui::regions::of(model, &Theme::default_theme(), SCREEN);
}

fn mouse(model: &mut Model, kind: MouseEventKind, column: u16, row: u16) -> Vec<Command> {
    let event = MouseEvent {
        kind,
        column,
        row,
        modifiers: KeyModifiers::NONE,
    };
    let commands = update(model, Event::Mouse(event));
    drawn(model);
    commands
}

const CLICK: MouseEventKind = MouseEventKind::Down(MouseButton::Left);

#[test]
fn a_click_selects_a_fleet_row_and_a_second_click_opens_it() {
    let mut m = fleet();
    // Top bar, the table's border and header: the first host is on rows 3 and 4 (three hosts
    // leave room for a second line each, their per-GPU bars), the second on 5 and 6.
    mouse(&mut m, CLICK, 5, 5);
    assert_eq!(m.fleet_cursor, 1);
    assert_eq!(m.view, View::Fleet);
    // A click on the selected host's second line opens it.
    mouse(&mut m, CLICK, 5, 6);
    assert_eq!(m.view, View::Host(1));
    // Below the last host: nothing.
    let mut m = fleet();
    mouse(&mut m, CLICK, 5, 12);
    assert_eq!(m.fleet_cursor, 0);
    mouse(&mut m, MouseEventKind::ScrollDown, 5, 10);
    assert_eq!(
        m.fleet_cursor, 1,
        "the wheel over the table moves the selection"
    );
}

#[test]
fn the_wheel_scrolls_the_pane_under_it_and_gives_it_the_focus() {
    let mut m = fleet();
    update(
        &mut m,
        Event::Key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE)),
    );
    drawn(&mut m);
    let procs = m.screen.regions.processes.expect("a process table");
    let (x, y) = (procs.rows.x + 2, procs.rows.y);
    for _ in 0..5 {
        mouse(&mut m, MouseEventKind::ScrollDown, x, y);
    }
    assert_eq!(m.host_focus, HostFocus::Processes);
    assert_eq!(m.process_cursor, 5);
    let first = m.screen.regions.processes.map(|list| list.first);
    assert!(first > Some(0), "the table scrolled: {first:?}");
    // Over a card: the next GPU.
    let (card, gpu) = m.screen.regions.cards[1];
    assert_eq!(gpu, 1);
    mouse(&mut m, CLICK, card.x + 2, card.y + 2);
    assert_eq!((m.host_focus, m.gpu_cursor), (HostFocus::Gpus, 1));
}

#[test]
fn the_wheel_scrolls_the_help_and_clicks_never_answer_a_prompt() {
    let mut m = fleet();
    update(
        &mut m,
        Event::Key(KeyEvent::new(KeyCode::Char('?'), KeyModifiers::NONE)),
    );
    drawn(&mut m);
    mouse(&mut m, MouseEventKind::ScrollDown, 40, 12);
    assert_eq!(
        m.input_mode(),
        InputMode::Help,
        "the wheel does not close the help"
    );
    assert!(m.screen.help_scroll > 0, "it scrolls it");
    update(
        &mut m,
        Event::Key(KeyEvent::new(KeyCode::Esc, KeyModifiers::NONE)),
    );

    update(
        &mut m,
        Event::Prompt(Prompt {
            id: 7,
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
    drawn(&mut m);
    for kind in [CLICK, MouseEventKind::ScrollDown, MouseEventKind::ScrollUp] {
        assert_eq!(mouse(&mut m, kind, 40, 12), Vec::new());
    }
    assert_eq!(
        m.input_mode(),
        InputMode::Confirm,
        "the question is still open"
    );
    assert_eq!(m.prompts.len(), 1);
}
