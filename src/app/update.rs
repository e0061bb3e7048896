//! The pure state transition: `update(&mut Model, Event) -> Vec<Command>`; no I/O, no clocks.

use rust_i18n::t;

use crate::app::action::Action;
use crate::app::command::Command;
use crate::app::cursor::step;
use crate::app::event::Event;
use crate::app::keymap::{BINDINGS, InputMode, action_for};
use crate::app::model::{HostFocus, Model, View};
use crate::app::prompt::PromptAnswer;
use crate::app::release_dialog;
use crate::app::{alerts_view, audit_view, check_pane, ops, pointer, runbook_pane};
use crate::fleet::FleetCommand;
use crate::fleet::{HostEvent, HostId};

/// Rows a PageUp/PageDown moves.
const PAGE_ROWS: usize = 10;

pub fn update(model: &mut Model, event: Event) -> Vec<Command> {
    match event {
        Event::Host { host, event } => {
            host_event(model, host, event);
            Vec::new()
        }
        Event::Hosts { host, events } => {
            for event in events {
                host_event(model, host, event);
            }
            Vec::new()
        }
        Event::Tick { now_ms } => {
            model.advance_clock(now_ms);
            model.draw_offscreen();
            let refreshed = model.fleet.refresh_findings();
            // Findings only worded anew (a plateau's money since) show in their host's view;
            // the fleet's rows show which findings there are, not their words.
            let shown = match model.view {
                View::Host(host) => refreshed.reshaped || refreshed.reworded.contains(&host),
                View::Fleet => refreshed.reshaped,
            };
            if shown {
                model.mark_dirty();
            }
            money_tick(model)
        }
        Event::Release(event) => release_dialog::on_event(model, event),
        Event::Runbook(event) => runbook_pane::on_event(model, event),
        Event::Check(event) => check_pane::on_event(model, event),
        Event::AuditLoaded(read) => audit_view::on_loaded(model, read),
        Event::ReportWritten(written) => {
            match written {
                Ok(text) => {
                    model.notify(t!("notice.report_written", text = text).into_owned(), false)
                }
                Err(why) => model.notify(t!("notice.report_failed", why = why).into_owned(), true),
            }
            Vec::new()
        }
        Event::LedgersSaved(saved) => {
            let now_ms = model.now_ms();
            match saved {
                Ok(book) => {
                    let fleet = &mut model.fleet;
                    fleet.money.adopt_saved(&book, &fleet.options.money, now_ms);
                }
                Err(why) => {
                    model.notify(
                        t!("notice.ledger_not_saved", why = why.as_str()).into_owned(),
                        true,
                    );
                    model.fleet.money.save_error = Some(why);
                }
            }
            model.mark_dirty();
            Vec::new()
        }
        Event::Scrape => vec![Command::ServeMetrics],
        Event::DeadManHeld { outcome } => {
            let warning = outcome.is_err();
            let (Ok(text) | Err(text)) = outcome;
            model.notify(text, warning);
            Vec::new()
        }
        Event::JobStopped { host, outcome } => {
            let host = crate::ui::format::clean(&host);
            match outcome {
                Ok(text) | Err(text) => model.notify(
                    t!("job_action.notice", host = host, text = text).into_owned(),
                    true,
                ),
            }
            Vec::new()
        }
        Event::Holds(Ok(hosts)) => {
            for host in hosts {
                if model.fleet.money.hold(&host) {
                    model.notify(t!("notice.held", host = host.as_str()).into_owned(), false);
                }
            }
            Vec::new()
        }
        Event::HostAdded { id, name } => {
            // Told in id order, each before its first event.
            if id == model.fleet.hosts.len() {
                model.fleet.add_host(name.clone());
                model.notify(
                    t!(
                        "attach_action.host_added",
                        host = crate::ui::format::clean(&name)
                    )
                    .into_owned(),
                    false,
                );
                model.mark_dirty();
            }
            Vec::new()
        }
        Event::WatcherAnswer { text, warning } => {
            model.notify(text, warning);
            Vec::new()
        }
        Event::Holds(Err(why)) => {
            model.notify(t!("notice.holds_unread", why = why).into_owned(), true);
            Vec::new()
        }
        Event::Alerts { alerts, sender } => alerts_view::on_alerts(model, alerts, sender),
        Event::AlertDelivery(event) => alerts_view::on_delivery(model, event),
        Event::Unwatched(lines) => {
            if model.unwatched != lines {
                model.fleet.unwatched.clone_from(&lines);
                model.unwatched = lines;
                model.mark_dirty();
            }
            Vec::new()
        }
        Event::InventorySynced => vec![Command::Rejoin],
        Event::HostsJoined(Ok(joined)) => {
            // One notice shows at a time: every change in it.
            let notices = super::unwatched::notices(&joined);
            if !notices.is_empty() {
                let warning = notices.iter().any(|(_, warning)| *warning);
                let text: Vec<String> = notices.into_iter().map(|(text, _)| text).collect();
                model.notify(text.join(" · "), warning);
            }
            model.mark_dirty();
            Vec::new()
        }
        Event::HostsJoined(Err(why)) => {
            model.notify(t!("inventory.not_joined", why = why).into_owned(), true);
            Vec::new()
        }
        Event::Duties(notes) => {
            for note in notes {
                model.notify(note.text, note.warning);
            }
            Vec::new()
        }
        Event::Resize => {
            model.mark_dirty();
            Vec::new()
        }
        Event::Prompt(prompt) => {
            model.prompts.push_back(prompt);
            model.mark_dirty();
            Vec::new()
        }
        // Stopped by a signal: nobody is there to answer a question.
        Event::Stop => quit(model, false),
        Event::Mouse(mouse) => {
            let mut commands = Vec::new();
            for action in pointer::on_mouse(model, mouse) {
                model.mark_dirty();
                commands.extend(apply_action(model, action));
            }
            commands
        }
        Event::Key(key) => match action_for(key, model.input_mode()) {
            Some(action) => {
                model.mark_dirty();
                if action != Action::CancelCountdown {
                    model.notice = None;
                }
                apply_action(model, action)
            }
            None => Vec::new(),
        },
    }
}

/// Quits: the ledgers saved a last time, then the loop ends.
fn quit(model: &mut Model, interrupted: bool) -> Vec<Command> {
    model.interrupted = interrupted;
    let mut commands = Vec::new();
    if let Some(book) = model.fleet.book_to_store() {
        commands.push(Command::SaveLedgers { book, last: true });
    }
    commands.push(Command::Quit);
    commands
}

/// The watched hosts whose dead-man switch is armed: quitting asks whether to leave them so.
fn armed_switches(model: &Model) -> Vec<String> {
    model
        .fleet
        .watched()
        .filter(|(_, h)| h.dead_man.as_ref().is_some_and(|d| d.armed))
        .map(|(_, h)| h.name.clone())
        .collect()
}

/// Applies one user action.
pub fn apply_action(model: &mut Model, action: Action) -> Vec<Command> {
    if let Some(commands) = ops::apply(model, &action) {
        return commands;
    }
    match action {
        Action::Quit => {
            let armed = armed_switches(model);
            if armed.is_empty() || model.fleet.options.read_only {
                return quit(model, false);
            }
            model.quit_ask = Some(armed);
        }
        Action::Interrupt => return quit(model, true),
        Action::QuitAnswer { disarm } => {
            let hosts = model.quit_ask.take().unwrap_or_default();
            let mut commands = Vec::new();
            if disarm && !hosts.is_empty() {
                commands.push(Command::DisarmDeadMen { hosts });
            }
            commands.extend(quit(model, false));
            return commands;
        }
        Action::QuitStay => model.quit_ask = None,
        Action::HoldDeadMan => {
            let id = match model.view {
                View::Host(id) => Some(id),
                View::Fleet => model.selected_host(),
            };
            let Some(host) = id.and_then(|id| model.fleet.hosts.get(id)) else {
                return Vec::new();
            };
            let name = host.name.clone();
            if model.through_watcher {
                // The watcher holds the duties: its auto-release countdown is the one held.
                let host = id.unwrap_or_default();
                model.notify(
                    t!(
                        "attach_action.asking",
                        host = crate::ui::format::clean(&name)
                    )
                    .into_owned(),
                    false,
                );
                return vec![Command::AskWatcher {
                    id: 0,
                    host,
                    ask: crate::remote_watcher::Ask::Hold,
                }];
            }
            if host.dead_man.is_none() {
                let name = crate::ui::format::clean(&name);
                model.notify(t!("dead_man.hold_none", host = name).into_owned(), true);
            } else if model.fleet.options.read_only {
                model.notify(t!("job_action.read_only").into_owned(), true);
            } else {
                return vec![Command::HoldDeadMan { host: name }];
            }
        }
        Action::ToggleCost => {
            model.mode = match model.mode {
                InputMode::Cost => InputMode::Normal,
                _ => InputMode::Cost,
            };
        }
        Action::Release => {
            let host = match model.view {
                View::Host(host) => Some(host),
                View::Fleet => model.selected_host(),
            };
            if let Some(host) = host {
                return release_dialog::open(model, host, false);
            }
        }
        Action::InstanceAction(action) => {
            let host = match model.view {
                View::Host(host) => Some(host),
                View::Fleet => model.selected_host(),
            };
            if let Some(host) = host {
                return release_dialog::open_action(model, host, action);
            }
        }
        Action::CancelCountdown => {
            if model.fleet.money.cancel_countdowns() {
                model.notify(t!("notice.countdown_cancelled").into_owned(), false);
            }
        }
        Action::ReleaseProceed => return release_dialog::proceed(model),
        Action::ReleaseCancel => return release_dialog::cancel(model),
        Action::ReleaseSwitch => return release_dialog::switch_action(model, None),
        Action::ReleaseChoose(wanted) => {
            return release_dialog::switch_action(model, Some(wanted));
        }
        Action::ReleaseOverride => return release_dialog::override_backup(model),
        Action::ReleaseClose => return release_dialog::close(model),
        Action::TextInput(c) if model.input_mode() == InputMode::ReleaseTyping => {
            if let Some(dialog) = model.dialog.as_mut() {
                dialog.typed.push(c);
            }
        }
        Action::TextBackspace if model.input_mode() == InputMode::ReleaseTyping => {
            if let Some(dialog) = model.dialog.as_mut() {
                dialog.typed.pop();
            }
        }
        Action::ToggleHelp => {
            model.mode = match model.mode {
                InputMode::Help => InputMode::Normal,
                _ => InputMode::Help,
            };
            model.screen.help_scroll = 0;
        }
        Action::StartFilter => {
            model.view = View::Fleet;
            model.mode = InputMode::Filter;
        }
        Action::TextInput(c) if model.input_mode() == InputMode::Secret => {
            model.secret_input.push(c);
        }
        Action::TextBackspace if model.input_mode() == InputMode::Secret => {
            model.secret_input.pop();
        }
        Action::TextInput(c) => {
            model.filter.push(c);
            model.fleet_cursor = 0;
        }
        Action::TextBackspace => {
            model.filter.pop();
            model.fleet_cursor = 0;
        }
        Action::FilterAccept => model.mode = InputMode::Normal,
        Action::FilterCancel => {
            model.filter.clear();
            model.mode = InputMode::Normal;
            model.fleet_cursor = 0;
        }
        Action::AskHostKeyAgain => return ask_host_key_again(model),
        Action::PromptAccept => return answer_prompt(model, true),
        Action::PromptDecline => return answer_prompt(model, false),
        Action::CycleSort => {
            let selected = model.selected_host();
            model.sort = model.sort.next();
            keep_selection(model, selected);
        }
        Action::Open => {
            if model.view == View::Fleet
                && let Some(host) = model.selected_host()
            {
                model.view = View::Host(host);
                model.gpu_cursor = 0;
                model.process_cursor = 0;
                model.host_focus = HostFocus::Gpus;
                model.screen.findings_scroll = 0;
            }
        }
        Action::Back => match model.view {
            View::Host(_) => model.view = View::Fleet,
            View::Fleet => {
                model.filter.clear();
                model.fleet_cursor = 0;
            }
        },
        Action::NextPane => {
            let has_findings = match model.view {
                View::Host(host) => model
                    .fleet
                    .hosts
                    .get(host)
                    .is_some_and(crate::fleet::host::HostState::has_any_findings),
                View::Fleet => false,
            };
            model.host_focus = match model.host_focus {
                HostFocus::Gpus => HostFocus::Processes,
                HostFocus::Processes if has_findings => HostFocus::Findings,
                HostFocus::Processes | HostFocus::Findings => HostFocus::Gpus,
            };
        }
        Action::Up => move_cursor(model, -1),
        Action::Down => move_cursor(model, 1),
        Action::PageUp => move_cursor(model, -page_rows(model)),
        Action::PageDown => move_cursor(model, page_rows(model)),
        Action::Top => move_cursor(model, i64::MIN / 2),
        Action::Bottom => move_cursor(model, i64::MAX / 2),
        Action::Left => move_gpu(model, -1),
        Action::Right => move_gpu(model, 1),
        // Handled by `ops::apply` above.
        Action::OpenRunbooks
        | Action::CheckHost
        | Action::OpenAudit
        | Action::WriteReport
        | Action::OpenAlerts
        | Action::RunbookChoose
        | Action::PanelBack
        | Action::PanelClose
        | Action::StopRun
        | Action::StepConfirm
        | Action::StepDecline => {}
    }
    Vec::new()
}

/// Once a second: the fleet's money tick (ledgers, costs, red lines, countdowns); a host whose
/// countdown ran out gets its release dialog (unattended); the notice expires.
fn money_tick(model: &mut Model) -> Vec<Command> {
    let mut commands = Vec::new();
    for command in model.fleet.money_tick() {
        match command {
            FleetCommand::SaveLedgers { book } => {
                commands.push(Command::SaveLedgers { book, last: false });
            }
            FleetCommand::AutoRelease { host } => {
                commands.extend(release_dialog::open(model, host, true));
            }
            FleetCommand::StopJob { host, stop } => {
                if let Some(name) = model.fleet.hosts.get(host).map(|h| h.name.clone()) {
                    commands.push(Command::StopJob { host: name, stop });
                }
            }
        }
    }
    let now_ms = model.now_ms();
    if model.notice.as_ref().is_some_and(|n| n.until_ms <= now_ms) {
        model.notice = None;
        model.mark_dirty();
    }
    commands
}

/// `K`: the selected host's link, waiting after a declined host key, connects again and asks
/// again; on any other host a notice says there is nothing to ask.
fn ask_host_key_again(model: &mut Model) -> Vec<Command> {
    let Some(id) = crate::app::pane_common::target_host(model) else {
        return Vec::new();
    };
    let Some(host) = model.fleet.hosts.get(id) else {
        return Vec::new();
    };
    let name = host.name.clone();
    let declined =
        crate::fleet::outage::outage(host, model.now_ms(), model.fleet.options.interval_ms)
            .is_some_and(|o| o.key_declined());
    if !declined {
        model.notify(
            t!("notice.no_key_declined", host = name.as_str()).into_owned(),
            false,
        );
        return Vec::new();
    }
    model.notify(
        t!("notice.asking_key_again", host = name.as_str()).into_owned(),
        false,
    );
    vec![Command::AskHostKeyAgain { host: id }]
}

/// Closes the prompt on top and sends its answer; a declined secret prompt answers `None`.
fn answer_prompt(model: &mut Model, accept: bool) -> Vec<Command> {
    let Some(prompt) = model.prompts.pop_front() else {
        return Vec::new();
    };
    let typed = std::mem::take(&mut model.secret_input);
    let answer = if prompt.wants_secret() {
        PromptAnswer::Secret(accept.then_some(typed))
    } else {
        PromptAnswer::HostKey(accept)
    };
    vec![Command::AnswerPrompt {
        id: prompt.id,
        answer,
    }]
}

fn keep_selection(model: &mut Model, selected: Option<usize>) {
    if let Some(host) = selected
        && let Some(pos) = model.visible_hosts().iter().position(|&h| h == host)
    {
        model.fleet_cursor = pos;
    }
}

fn move_cursor(model: &mut Model, delta: i64) {
    if model.mode == InputMode::Help {
        model.screen.scroll_help(delta, BINDINGS.len());
        return;
    }
    match model.view {
        View::Fleet => {
            let len = model.visible_hosts().len();
            model.fleet_cursor = step(model.fleet_cursor, delta, len);
        }
        View::Host(host) => match model.host_focus {
            HostFocus::Gpus => move_gpu(model, delta),
            HostFocus::Processes => {
                let len = model.fleet.hosts.get(host).map_or(0, |h| h.processes.len());
                model.process_cursor = step(model.process_cursor, delta, len);
            }
            HostFocus::Findings => model.screen.scroll_findings(delta),
        },
    }
}

/// Rows a PageUp/PageDown moves: the findings pane's page where it has the keys (all it shows
/// but one row), else [`PAGE_ROWS`].
fn page_rows(model: &Model) -> i64 {
    let findings = model.mode != InputMode::Help
        && matches!(model.view, View::Host(_))
        && model.host_focus == HostFocus::Findings;
    let rows = match model.screen.findings_page() {
        Some(page) if findings => page,
        _ => PAGE_ROWS,
    };
    i64::try_from(rows).unwrap_or(i64::MAX / 2)
}

fn move_gpu(model: &mut Model, delta: i64) {
    if let View::Host(host) = model.view {
        let len = model.fleet.hosts.get(host).map_or(0, |h| h.gpus.len());
        model.gpu_cursor = step(model.gpu_cursor, delta, len);
    }
}

/// Folds one host event into the fleet and marks what the screen should show of it.
fn host_event(model: &mut Model, host: HostId, event: HostEvent) {
    let sample_at_ms = match &event {
        HostEvent::Sample { at_ms, .. } => Some(*at_ms),
        _ => None,
    };
    // A job (its listing, its log) shows only in its host's view: the fleet row has no
    // job text, what the job makes of the findings shows on the tick that judges them
    // when it changes which findings there are, and the money it moves with the next
    // frame (one a second at least).
    let job_unseen = matches!(event, HostEvent::JobLog { .. } | HostEvent::Jobs { .. })
        && model.view != View::Host(host);
    // What an attached console says of its watcher (gone, back) is the whole fleet's news: the
    // bottom bar says it too, not only the host view.
    if let HostEvent::Notice { text, .. } = &event
        && let Some(key) = text.key().filter(|k| k.starts_with("attach."))
    {
        model.notify(text.localized(), key != "attach.back");
    }
    // A switch left on a host whose config no longer has one was disarmed: the bottom bar says
    // so, whichever host is on screen.
    if let HostEvent::Notice { text, .. } = &event
        && text.key() == Some("dead_man_stray.disarmed")
    {
        let name = model.fleet.hosts.get(host).map(|h| h.name.clone());
        model.notify(
            format!("{}: {}", name.unwrap_or_default(), text.localized()),
            true,
        );
    }
    if model.fleet.apply(host, event) {
        match sample_at_ms {
            None if job_unseen => {}
            // A reading of a host off screen changes only the totals and perhaps the
            // order: the next frame shows it, within the second.
            Some(_) if !model.screen.regions.shows_host(host) => model.mark_offscreen(),
            Some(at_ms) => {
                model.note_sample(at_ms);
                model.mark_dirty();
            }
            None => model.mark_dirty(),
        }
    }
}
