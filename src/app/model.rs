//! The whole state the console shows; only `update` changes it.

use rust_i18n::t;

use std::cmp::Reverse;
use std::collections::VecDeque;

use crate::app::alert_log::AlertLog;
use crate::app::badges::problem_count;
use crate::app::keymap::InputMode;
use crate::app::panel::{HostSource, Panel, Runbooks};
use crate::app::prompt::Prompt;
use crate::app::release_state::ReleaseDialog;
use crate::app::screen::Screen;
use crate::fleet::host::HostStatus;
use crate::fleet::{Fleet, FleetOptions, HostId};
use crate::telemetry::TimestampMs;

/// How long a notice stays in the bottom bar unless a key clears it first.
pub const NOTICE_MS: u64 = 8_000;

/// A short message in the bottom bar.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Notice {
    pub text: String,
    pub warning: bool,
    pub until_ms: TimestampMs,
}

/// Which screen is on top.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum View {
    Fleet,
    Host(usize),
}

/// Which pane of the host view has the cursor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HostFocus {
    Gpus,
    Processes,
    /// The findings pane (only while the host has findings).
    Findings,
}

/// Fleet view ordering; `s` cycles through them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SortKey {
    Config,
    Name,
    /// The most problems first: critical ones (a host down, a GPU lost, critical findings),
    /// then warnings; ties by status, worst first.
    Problems,
    Utilization,
    Memory,
    Temperature,
    Power,
}

impl SortKey {
    pub fn next(self) -> Self {
        match self {
            SortKey::Config => SortKey::Name,
            SortKey::Name => SortKey::Problems,
            SortKey::Problems => SortKey::Utilization,
            SortKey::Utilization => SortKey::Memory,
            SortKey::Memory => SortKey::Temperature,
            SortKey::Temperature => SortKey::Power,
            SortKey::Power => SortKey::Config,
        }
    }

    /// The order's name in the fleet's title, in the interface's language.
    pub fn label(self) -> String {
        let label = match self {
            SortKey::Config => t!("sort.config"),
            SortKey::Name => t!("sort.name"),
            SortKey::Problems => t!("sort.problems"),
            SortKey::Utilization => t!("sort.utilization"),
            SortKey::Memory => t!("sort.memory"),
            SortKey::Temperature => t!("sort.temperature"),
            SortKey::Power => t!("sort.power"),
        };
        label.into_owned()
    }
}

/// Settings the model is built with.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ModelOptions {
    /// The engine's: interval, history, read-only, live findings, money.
    pub fleet: FleetOptions,
    /// Where the hosts are: the demo fleet runs no runbook and no check.
    pub source: HostSource,
    /// The runbooks `p` lists.
    pub runbooks: Runbooks,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Model {
    /// The engine's state: hosts, findings, money. The console is one driver of it.
    pub fleet: Fleet,
    pub view: View,
    /// Position in the *visible* (filtered, sorted) fleet list.
    pub fleet_cursor: usize,
    pub gpu_cursor: usize,
    pub process_cursor: usize,
    pub host_focus: HostFocus,
    /// Scroll positions of the findings and the help, and where the last frame drew what.
    pub screen: Screen,
    pub filter: String,
    /// The mode chosen by the user (filter, help); an open prompt overrides it, see `input_mode`.
    pub mode: InputMode,
    /// Open questions from links, oldest first; the first is shown.
    pub prompts: VecDeque<Prompt>,
    /// What has been typed into a passphrase/password prompt (never drawn, only its length).
    pub secret_input: String,
    pub sort: SortKey,
    /// Where the hosts are and the runbooks `p` lists (the engine's options are in `fleet`).
    pub source: HostSource,
    pub runbooks: Runbooks,
    /// The release dialog, when one is open.
    pub dialog: Option<ReleaseDialog>,
    /// Hosts whose countdown ran out while a dialog was open; released in turn.
    pub pending_auto: VecDeque<HostId>,
    /// An attached console: releases and holds are asked of the watcher, which runs them.
    pub through_watcher: bool,
    pub notice: Option<Notice>,
    /// The runbook picker, runbook pane, check, audit log or alerts, when one is open.
    pub panel: Option<Panel>,
    /// The alerts raised since the console started, and how their delivery went.
    pub alerts: AlertLog,
    /// The money nobody watches in the provider accounts (the cost panel lists it).
    pub unwatched: Vec<super::unwatched::UnwatchedLine>,
    pub quit: bool,
    /// Quitting asks about these hosts' armed dead-man switches: leave them armed or disarm.
    pub quit_ask: Option<Vec<String>>,
    /// The user quit with Ctrl-C: the console exits 130.
    pub interrupted: bool,
    next_ops_id: u64,
    dirty: bool,
    /// The clock when the screen was last marked for redraw; a tick redraws only once the shown
    /// ages could have changed.
    dirty_at_ms: TimestampMs,
    /// Arrival time of the oldest sample not yet on screen (for the latency benchmark).
    undrawn_sample_ms: Option<TimestampMs>,
    /// A change no frame has shown yet that asked for none (see [`Model::mark_offscreen`]).
    offscreen_changed: bool,
}

impl Model {
    pub fn new(host_names: Vec<String>, options: ModelOptions, now_ms: TimestampMs) -> Self {
        Self {
            fleet: Fleet::new(host_names, options.fleet, now_ms),
            view: View::Fleet,
            fleet_cursor: 0,
            gpu_cursor: 0,
            process_cursor: 0,
            host_focus: HostFocus::Gpus,
            screen: Screen::default(),
            filter: String::new(),
            mode: InputMode::Normal,
            prompts: VecDeque::new(),
            secret_input: String::new(),
            sort: SortKey::Config,
            source: options.source,
            runbooks: options.runbooks,
            dialog: None,
            pending_auto: VecDeque::new(),
            through_watcher: false,
            notice: None,
            panel: None,
            alerts: AlertLog::default(),
            unwatched: Vec::new(),
            quit: false,
            quit_ask: None,
            interrupted: false,
            next_ops_id: 1,
            dirty: true,
            dirty_at_ms: now_ms,
            undrawn_sample_ms: None,
            offscreen_changed: false,
        }
    }

    pub fn status(&self, host: usize) -> Option<HostStatus> {
        self.fleet.status(host)
    }

    /// The clock as the fleet knows it.
    pub fn now_ms(&self) -> TimestampMs {
        self.fleet.now_ms
    }

    /// Shows `text` in the bottom bar for a few seconds.
    pub fn notify(&mut self, text: impl Into<String>, warning: bool) {
        self.notice = Some(Notice {
            text: text.into(),
            warning,
            until_ms: self.fleet.now_ms.saturating_add(NOTICE_MS),
        });
        self.mark_dirty();
    }

    /// Host indices as the fleet view lists them: filtered by name/model/status text, sorted.
    pub fn visible_hosts(&self) -> Vec<usize> {
        let needle = self.filter.to_lowercase();
        let mut ids: Vec<usize> = (0..self.fleet.hosts.len())
            .filter(|&i| !self.fleet.hosts[i].retired)
            .filter(|&i| needle.is_empty() || self.matches_filter(i, &needle))
            .collect();
        let key_f64 = |i: usize| -> f64 {
            let h = &self.fleet.hosts[i];
            match self.sort {
                SortKey::Utilization => h.mean_utilization_pct().unwrap_or(-1.0),
                SortKey::Memory => h
                    .memory_mib()
                    .map_or(-1.0, |(u, t)| u as f64 / t.max(1) as f64),
                SortKey::Temperature => h.hottest_c().unwrap_or(-1.0),
                SortKey::Power => h.power_w().map_or(-1.0, |(d, _)| d),
                _ => 0.0,
            }
        };
        match self.sort {
            SortKey::Config => {}
            SortKey::Name => {
                ids.sort_by(|&a, &b| self.fleet.hosts[a].name.cmp(&self.fleet.hosts[b].name))
            }
            SortKey::Problems => ids.sort_by_cached_key(|&i| {
                let host = &self.fleet.hosts[i];
                match self.status(i) {
                    Some(status) => {
                        let (critical, warning) = problem_count(host, &status);
                        (Reverse(critical), Reverse(warning), status.severity_rank())
                    }
                    None => (Reverse(0), Reverse(0), u8::MAX),
                }
            }),
            _ => ids.sort_by(|&a, &b| key_f64(b).total_cmp(&key_f64(a))),
        }
        ids
    }

    fn matches_filter(&self, host: usize, needle: &str) -> bool {
        let h = &self.fleet.hosts[host];
        h.name.to_lowercase().contains(needle)
            || h.gpus
                .iter()
                .any(|g| g.latest.name.to_lowercase().contains(needle))
            || self.status(host).is_some_and(|s| {
                s.text().to_lowercase().contains(needle)
                    || s.words().localized().to_lowercase().contains(needle)
            })
    }

    /// What keys mean right now: a running auto-release countdown takes the next key, then an
    /// open prompt takes every key until answered, then the release dialog, then the open panel.
    pub fn input_mode(&self) -> InputMode {
        if self.fleet.money.counting_down() {
            return InputMode::Countdown;
        }
        if self.quit_ask.is_some() {
            return InputMode::QuitAsk;
        }
        match self.prompts.front() {
            Some(p) if p.wants_secret() => InputMode::Secret,
            Some(_) => InputMode::Confirm,
            None => match (&self.dialog, &self.panel) {
                (Some(dialog), _) => dialog.input_mode(),
                (None, Some(panel)) => panel.input_mode(),
                (None, None) => self.mode,
            },
        }
    }

    /// The host under the fleet cursor.
    pub fn selected_host(&self) -> Option<usize> {
        self.visible_hosts().get(self.fleet_cursor).copied()
    }

    /// A fresh id for a runbook run or a check.
    pub fn next_ops_id(&mut self) -> u64 {
        let id = self.next_ops_id;
        self.next_ops_id += 1;
        id
    }

    pub fn mark_dirty(&mut self) {
        self.dirty = true;
        self.dirty_at_ms = self.fleet.now_ms;
    }

    /// Moves the clock forward; asks for a redraw only when a whole second passed without one
    /// (ages and stale states are shown to the second), so a tick that lands between two samples
    /// costs no frame.
    pub fn advance_clock(&mut self, now_ms: TimestampMs) {
        if now_ms <= self.fleet.now_ms {
            return;
        }
        self.fleet.advance_clock(now_ms);
        if now_ms.saturating_sub(self.dirty_at_ms) >= 1000 {
            self.mark_dirty();
        }
    }

    /// Notes a change the last frame's screen did not show (a reading of a host off screen).
    pub fn mark_offscreen(&mut self) {
        self.offscreen_changed = true;
    }

    /// On the clock's tick: asks for a frame when something changed off screen and no frame
    /// since showed it (the totals line, the order of the rows).
    pub fn draw_offscreen(&mut self) {
        if self.offscreen_changed {
            self.mark_dirty();
        }
    }

    /// Notes that a sample stamped `at_ms` is waiting to be drawn.
    pub fn note_sample(&mut self, at_ms: TimestampMs) {
        self.undrawn_sample_ms.get_or_insert(at_ms);
    }

    /// The arrival time of the oldest sample not yet drawn, if any.
    pub fn undrawn_sample_ms(&self) -> Option<TimestampMs> {
        self.undrawn_sample_ms
    }

    /// The arrival time of the oldest sample drawn by the frame just made, once.
    pub fn take_undrawn_sample_ms(&mut self) -> Option<TimestampMs> {
        self.undrawn_sample_ms.take()
    }

    /// Whether a change waits for a frame (without taking it).
    pub fn is_dirty(&self) -> bool {
        self.dirty
    }

    /// True once after any change; the runtime redraws only then.
    pub fn take_dirty(&mut self) -> bool {
        let dirty = std::mem::take(&mut self.dirty);
        if dirty {
            // The frame about to be drawn shows every change, off screen ones included.
            self.offscreen_changed = false;
        }
        dirty
    }
}
