//! `update()` driven by key sequences and source events, as the runtime would feed it.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use gpufleet::app::keymap::InputMode;
use gpufleet::app::model::{HostFocus, ModelOptions, SortKey};
use gpufleet::app::prompt::{Prompt, PromptAnswer, PromptKind};
use gpufleet::app::{Command, Event, Model, View, update};
use gpufleet::fleet::host::{HostStatus, Link};
use gpufleet::fleet::{DownWords, HostEvent};
use gpufleet::telemetry::{GpuProcess, GpuSample, LostReason};
use gpufleet::words::Words;

fn key(code: KeyCode) -> Event {
    Event::Key(KeyEvent::new(code, KeyModifiers::NONE))
}

fn keys(model: &mut Model, codes: &[KeyCode]) -> Vec<Command> {
    codes.iter().flat_map(|&c| update(model, key(c))).collect()
}

fn sample(index: u32, name: &str, util: f64, used_mib: u64) -> GpuSample {
    GpuSample {
        index,
        uuid: format!("GPU-{index}").into(),
        name: name.into(),
        memory_total_mib: Some(81920),
        memory_used_mib: Some(used_mib),
        utilization_gpu_pct: Some(util),
        temperature_c: Some(50.0),
        power_draw_w: Some(300.0),
        power_limit_w: Some(400.0),
        ..GpuSample::default()
    }
}

fn fleet() -> Model {
    let names = ["alpha", "bravo", "charlie"].map(String::from).to_vec();
    let mut m = Model::new(names, ModelOptions::default(), 1_000_000);
    for (host, util) in [(0, 10.0), (1, 90.0), (2, 50.0)] {
        for gpu in 0..2 {
            update(
                &mut m,
                Event::Host {
                    host,
                    event: HostEvent::Sample {
                        at_ms: 1_000_000,
                        gpu: sample(gpu, "NVIDIA A100 80GB PCIe", util, 1000),
                    },
                },
            );
        }
    }
    m
}

#[test]
fn q_and_ctrl_c_quit() {
    let mut m = fleet();
    assert_eq!(keys(&mut m, &[KeyCode::Char('q')]), vec![Command::Quit]);
    let ctrl_c = Event::Key(KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL));
    assert!(!m.interrupted, "q is a plain quit");
    assert_eq!(update(&mut m, ctrl_c), vec![Command::Quit]);
    assert!(m.interrupted, "Ctrl-C exits 130");
}

#[test]
fn arrows_and_hjkl_move_and_enter_opens_the_host() {
    let mut m = fleet();
    keys(&mut m, &[KeyCode::Down, KeyCode::Char('j'), KeyCode::Down]);
    assert_eq!(m.fleet_cursor, 2, "cursor stops at the last host");
    keys(&mut m, &[KeyCode::Char('k'), KeyCode::Enter]);
    assert_eq!(m.view, View::Host(1));
    keys(
        &mut m,
        &[KeyCode::Right, KeyCode::Char('l'), KeyCode::Right],
    );
    assert_eq!(m.gpu_cursor, 1, "two GPUs: cursor stops at the second");
    keys(&mut m, &[KeyCode::Char('h')]);
    assert_eq!(m.gpu_cursor, 0);
    keys(&mut m, &[KeyCode::Esc]);
    assert_eq!(m.view, View::Fleet);
    assert_eq!(
        m.selected_host(),
        Some(1),
        "selection kept after going back"
    );
}

#[test]
fn tab_switches_to_processes_and_moves_there() {
    let mut m = fleet();
    update(
        &mut m,
        Event::Host {
            host: 0,
            event: HostEvent::Processes {
                at_ms: 1_000_000,
                processes: (1..=3)
                    .map(|pid| GpuProcess {
                        gpu_index: None,
                        pid,
                        name: "python".into(),
                        gpu_uuid: "GPU-0".into(),
                        used_memory_mib: Some(100),
                    })
                    .collect(),
            },
        },
    );
    keys(
        &mut m,
        &[
            KeyCode::Enter,
            KeyCode::Tab,
            KeyCode::Down,
            KeyCode::Down,
            KeyCode::Down,
        ],
    );
    assert_eq!(m.host_focus, HostFocus::Processes);
    assert_eq!(m.process_cursor, 2);
    assert_eq!(
        m.gpu_cursor, 0,
        "GPU cursor untouched while processes have focus"
    );
}

#[test]
fn slash_filters_by_name_and_esc_clears() {
    let mut m = fleet();
    keys(
        &mut m,
        &[KeyCode::Char('/'), KeyCode::Char('c'), KeyCode::Char('h')],
    );
    assert_eq!(m.input_mode(), InputMode::Filter);
    assert_eq!(m.visible_hosts(), vec![2]);
    // While typing, q is text, not quit.
    assert!(keys(&mut m, &[KeyCode::Char('q')]).is_empty());
    assert!(m.visible_hosts().is_empty());
    keys(&mut m, &[KeyCode::Backspace, KeyCode::Enter]);
    assert_eq!(m.input_mode(), InputMode::Normal);
    assert_eq!(m.filter, "ch");
    keys(&mut m, &[KeyCode::Enter]);
    assert_eq!(m.view, View::Host(2), "Enter opens the one filtered host");
    keys(&mut m, &[KeyCode::Esc, KeyCode::Esc]);
    assert!(m.filter.is_empty());
    assert_eq!(m.visible_hosts().len(), 3);
}

#[test]
fn filter_matches_gpu_model_and_status() {
    let mut m = fleet();
    update(
        &mut m,
        Event::Host {
            host: 1,
            event: HostEvent::Lost {
                at_ms: 1_000_500,
                reason: LostReason::GpuLost,
                raw: "Unable to determine the device handle for GPU 0000:00:06.0: GPU is lost"
                    .into(),
            },
        },
    );
    keys(&mut m, &[KeyCode::Char('/')]);
    for c in "lost".chars() {
        keys(&mut m, &[KeyCode::Char(c)]);
    }
    assert_eq!(m.visible_hosts(), vec![1]);
    keys(&mut m, &[KeyCode::Esc, KeyCode::Char('/')]);
    for c in "a100".chars() {
        keys(&mut m, &[KeyCode::Char(c)]);
    }
    assert_eq!(m.visible_hosts().len(), 3);
}

#[test]
fn s_cycles_sort_and_keeps_the_selected_host() {
    let mut m = fleet();
    keys(&mut m, &[KeyCode::Down]);
    assert_eq!(m.selected_host(), Some(1));
    for _ in 0..3 {
        keys(&mut m, &[KeyCode::Char('s')]);
    }
    assert_eq!(m.sort, SortKey::Utilization);
    assert_eq!(m.visible_hosts(), vec![1, 2, 0], "busiest first");
    assert_eq!(m.selected_host(), Some(1));
}

#[test]
fn problems_first_puts_hosts_down_on_top_worst_first() {
    let mut m = fleet();
    update(
        &mut m,
        Event::Host {
            host: 1,
            event: HostEvent::Disconnected {
                at_ms: 1_000_100,
                reason: "cannot connect to 10.0.0.2:22: Connection refused (os error 111)".into(),
                summary: "connection refused".into(),
                retry_at_ms: Some(1_005_000),
                words: None,
            },
        },
    );
    update(
        &mut m,
        Event::Host {
            host: 2,
            event: HostEvent::Lost {
                at_ms: 1_000_200,
                reason: LostReason::GpuLost,
                raw: "Unable to determine the device handle for GPU0000:01:00.0: GPU is lost"
                    .into(),
            },
        },
    );
    update(&mut m, Event::Tick { now_ms: 1_000_500 });
    keys(&mut m, &[KeyCode::Char('s'), KeyCode::Char('s')]);
    assert_eq!(m.sort, SortKey::Problems);
    assert_eq!(m.sort.label(), "problems first");
    // Both down hosts count one critical problem; the lost GPUs rank before the lost link,
    // and the healthy host comes last.
    assert_eq!(m.visible_hosts(), vec![2, 1, 0]);
}

#[test]
fn question_mark_opens_help_and_only_esc_or_question_mark_closes_it() {
    let mut m = fleet();
    keys(&mut m, &[KeyCode::Char('?')]);
    assert_eq!(m.input_mode(), InputMode::Help);
    // What the help says closes it (`HELP_CLOSE_HINT`) and nothing else.
    keys(
        &mut m,
        &[
            KeyCode::Down,
            KeyCode::Char('x'),
            KeyCode::Enter,
            KeyCode::Tab,
        ],
    );
    assert_eq!(m.input_mode(), InputMode::Help, "other keys leave it open");
    assert_eq!(m.fleet_cursor, 0, "keys in the help did not move the fleet");
    keys(&mut m, &[KeyCode::Esc]);
    assert_eq!(m.input_mode(), InputMode::Normal);
    keys(&mut m, &[KeyCode::Char('?'), KeyCode::Char('?')]);
    assert_eq!(m.input_mode(), InputMode::Normal);
    let hint = gpufleet::app::keymap::HELP_CLOSE_HINT;
    assert!(hint.contains("Esc or ? closes"), "{hint}");
}

#[test]
fn stale_after_two_intervals_and_live_again_on_a_new_sample() {
    let mut m = fleet();
    update(&mut m, Event::Tick { now_ms: 1_001_500 });
    assert_eq!(m.status(0), Some(HostStatus::Live));
    update(&mut m, Event::Tick { now_ms: 1_002_500 });
    assert_eq!(m.status(0), Some(HostStatus::Stale { age_ms: 2500 }));
    update(
        &mut m,
        Event::Host {
            host: 0,
            event: HostEvent::Sample {
                at_ms: 1_002_600,
                gpu: sample(0, "NVIDIA A100 80GB PCIe", 5.0, 10),
            },
        },
    );
    assert_eq!(m.status(0), Some(HostStatus::Live));
}

#[test]
fn an_unreachable_host_is_a_row_not_a_crash() {
    let mut m = Model::new(vec!["far".into()], ModelOptions::default(), 0);
    update(
        &mut m,
        Event::Host {
            host: 0,
            event: HostEvent::Connecting {
                attempt: 1,
                at_ms: None,
            },
        },
    );
    update(
        &mut m,
        Event::Host {
            host: 0,
            event: HostEvent::Disconnected {
                at_ms: 10,
                reason: "Connection timed out".into(),
                summary: "connection timed out".into(),
                retry_at_ms: Some(5_010),
                words: None,
            },
        },
    );
    update(
        &mut m,
        Event::Host {
            host: 0,
            event: HostEvent::Connecting {
                attempt: 2,
                at_ms: None,
            },
        },
    );
    assert!(matches!(
        m.fleet.hosts[0].link,
        Link::Down { attempts: 2, .. }
    ));
    assert_eq!(
        m.status(0),
        Some(HostStatus::Unreachable {
            reason: "Connection timed out".into(),
            words: None,
        })
    );
    // Events for hosts that do not exist are ignored.
    assert!(
        update(
            &mut m,
            Event::Host {
                host: 9,
                event: HostEvent::Connecting {
                    attempt: 1,
                    at_ms: None,
                }
            }
        )
        .is_empty()
    );
}

#[test]
fn redraw_only_when_something_changed() {
    let mut m = fleet();
    assert!(m.take_dirty());
    assert!(!m.take_dirty());
    update(&mut m, key(KeyCode::Char('x')));
    assert!(!m.take_dirty(), "an unbound key changes nothing");
    update(&mut m, Event::Tick { now_ms: 1_000_000 });
    assert!(
        !m.take_dirty(),
        "a tick that does not move the clock changes nothing"
    );
    update(&mut m, key(KeyCode::Down));
    assert!(m.take_dirty());
}

fn host_key_prompt(id: u64) -> Event {
    Event::Prompt(Prompt {
        id,
        host: 0,
        target: "root@127.0.0.1:2222".into(),
        kind: PromptKind::HostKey {
            known_as: "[127.0.0.1]:2222".into(),
            key_type: "ssh-ed25519".into(),
            fingerprint: "SHA256:abc".into(),
            other_types_known: vec![],
        },
    })
}

#[test]
fn only_y_n_or_esc_answer_a_host_key_prompt() {
    let mut m = fleet();
    update(&mut m, host_key_prompt(1));
    update(&mut m, host_key_prompt(2));
    update(&mut m, host_key_prompt(3));
    assert_eq!(m.input_mode(), InputMode::Confirm);
    // Keys meant for the screen below, or typed by mistake, neither answer nor act.
    let stray = [
        KeyCode::Down,
        KeyCode::Up,
        KeyCode::PageDown,
        KeyCode::Enter,
        KeyCode::Tab,
        KeyCode::Char('q'),
        KeyCode::Char('x'),
        KeyCode::Char(' '),
    ];
    assert_eq!(
        keys(&mut m, &stray),
        vec![],
        "no key but y, n or Esc answers"
    );
    assert_eq!(m.prompts.len(), 3, "the question is still open");
    assert_eq!(m.input_mode(), InputMode::Confirm);
    assert_eq!(
        m.fleet_cursor, 0,
        "the arrows did not reach the fleet below"
    );
    assert_eq!(m.view, View::Fleet);
    assert_eq!(
        keys(&mut m, &[KeyCode::Char('n')]),
        vec![Command::AnswerPrompt {
            id: 1,
            answer: PromptAnswer::HostKey(false)
        }]
    );
    assert_eq!(
        keys(&mut m, &[KeyCode::Esc]),
        vec![Command::AnswerPrompt {
            id: 2,
            answer: PromptAnswer::HostKey(false)
        }]
    );
    assert_eq!(
        keys(&mut m, &[KeyCode::Char('y')]),
        vec![Command::AnswerPrompt {
            id: 3,
            answer: PromptAnswer::HostKey(true)
        }]
    );
    assert_eq!(m.input_mode(), InputMode::Normal);
    assert_eq!(m.view, View::Fleet, "nothing else moved");
}

/// `host`'s link gave up on a host key the user declined, as the SSH link reports it.
fn key_declined(m: &mut Model, host: usize) {
    update(
        m,
        Event::Host {
            host,
            event: HostEvent::Disconnected {
                at_ms: 1_000_500,
                reason: "host key of [127.0.0.1]:2222 (ssh-ed25519 SHA256:abc) was not accepted"
                    .into(),
                summary: "host key declined".into(),
                retry_at_ms: None,
                words: Some(DownWords {
                    reason: Words::new("link_error.host_key_declined")
                        .put("known_as", "[127.0.0.1]:2222")
                        .put("key_type", "ssh-ed25519")
                        .put("fingerprint", "SHA256:abc"),
                    summary: Words::new("link_summary.key_declined"),
                }),
            },
        },
    );
}

#[test]
fn capital_k_asks_again_about_a_declined_host_key_and_only_there() {
    let mut m = fleet();
    key_declined(&mut m, 1);
    // On a host whose key was not declined: nothing to ask, and the notice says so.
    assert_eq!(keys(&mut m, &[KeyCode::Char('K')]), vec![]);
    let notice = m
        .notice
        .as_ref()
        .map(|n| n.text.clone())
        .unwrap_or_default();
    assert!(
        notice.contains("alpha") && notice.contains("no declined host key"),
        "{notice}"
    );
    // From the declined host's row.
    assert_eq!(
        keys(&mut m, &[KeyCode::Down, KeyCode::Char('K')]),
        vec![Command::AskHostKeyAgain { host: 1 }]
    );
    let notice = m
        .notice
        .as_ref()
        .map(|n| n.text.clone())
        .unwrap_or_default();
    assert!(
        notice.contains("bravo") && notice.contains("host key"),
        "{notice}"
    );
    // And from its host view.
    assert_eq!(
        keys(&mut m, &[KeyCode::Enter, KeyCode::Char('K')]),
        vec![Command::AskHostKeyAgain { host: 1 }]
    );
    assert_eq!(m.view, View::Host(1));
}

#[test]
fn a_password_is_typed_hidden_and_esc_cancels() {
    let mut m = fleet();
    let ask = |id| {
        Event::Prompt(Prompt {
            id,
            host: 1,
            target: "root@h:22".into(),
            kind: PromptKind::Password,
        })
    };
    update(&mut m, ask(7));
    assert_eq!(m.input_mode(), InputMode::Secret);
    let typed: Vec<Command> = "s3cr q"
        .chars()
        .flat_map(|c| update(&mut m, key(KeyCode::Char(c))))
        .collect();
    assert!(typed.is_empty(), "typing q into a password does not quit");
    keys(&mut m, &[KeyCode::Backspace, KeyCode::Backspace]);
    assert_eq!(
        keys(&mut m, &[KeyCode::Enter]),
        vec![Command::AnswerPrompt {
            id: 7,
            answer: PromptAnswer::Secret(Some("s3cr".into()))
        }]
    );
    assert!(
        m.secret_input.is_empty(),
        "the typed secret does not linger in the model"
    );
    assert!(
        m.filter.is_empty(),
        "the password never went into the filter"
    );
    update(&mut m, ask(8));
    keys(&mut m, &[KeyCode::Char('x'), KeyCode::Esc]);
    assert!(m.secret_input.is_empty());
    assert_eq!(
        format!("{:?}", PromptAnswer::Secret(Some("s3cr".into()))),
        "Secret(***)"
    );
}
