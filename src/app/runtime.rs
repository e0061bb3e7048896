//! The interactive loop: owns the terminal, feeds events to `update`, runs commands, redraws only
//! when something changed.

use std::sync::mpsc::{Receiver, RecvTimeoutError, TryRecvError};
use std::time::{Duration, Instant};

use crossterm::event::{Event as TermEvent, MouseButton, MouseEventKind};
use ratatui::Terminal;
use ratatui::backend::Backend;

use crate::alerts::Sink;
use crate::app::alert_bridge::AlertBridge;
use crate::app::command::Command;
use crate::app::event::Event;
use crate::app::event::EventSink;
use crate::app::model::{Model, View};
use crate::app::ops_bridge::{OpsBridge, OpsSetup};
use crate::app::prompt_bridge::PendingPrompts;
use crate::app::release_bridge::{BridgeSetup, ReleaseBridge};
use crate::app::terminal::{TerminalGuard, forward_signals};
use crate::app::unwatched::JoinedHosts;
use crate::app::update::update;
use crate::duty::Duties;
use crate::fleet::{HostEvent, HostId};
use crate::metrics::MetricsBridge;
use crate::telemetry::TimestampMs;
use crate::telemetry::source::{Backlogs, SourceHandle, now_ms};
use crate::theme::{ColorDepth, Theme};
use crate::watch::LiveHosts;

/// How often the clock ticks (stale ages, chart windows) when nothing else happens.
const TICK: Duration = Duration::from_secs(1);
/// How long to wait for the rest of a burst of events before drawing; well under the 100 ms in
/// which a sample must reach the screen.
const COALESCE: Duration = Duration::from_millis(8);
/// Telemetry never draws more often than this: fifty hosts ticking at their own phases would
/// otherwise ask for a frame every 20 ms. Keys are not held back.
const MIN_FRAME: Duration = Duration::from_millis(100);
/// ... except that no sample waits longer than this between arriving and the frame that shows
/// it (the goal is 100 ms; the rest is headroom for drawing and a busy machine). A lone host's
/// samples, arriving long after the last frame, are drawn at once.
const SAMPLE_BUDGET_MS: u64 = 70;
/// While gathering without a sample waiting, the loop looks for one this often.
const LOOK_FOR_SAMPLES: Duration = Duration::from_millis(20);
/// Events taken in one go before the loop looks at the clock again: however fast events
/// arrive, a frame is drawn and a key answered when due (taking events until none are left
/// could go on for as long as some source keeps sending).
const MAX_TAKEN_AT_ONCE: usize = 4_096;

/// Forwards terminal input to the event channel from a thread of its own, so the loop only ever
/// waits on one channel; `loop_thread` is unparked after each key, since the loop gathers
/// telemetry parked rather than waking for every event (see [`event_loop_with_ops`]).
pub fn spawn_input(sink: EventSink, loop_thread: std::thread::Thread) -> std::io::Result<()> {
    std::thread::Builder::new()
        .name("input".to_string())
        .spawn(move || {
            while let Ok(ev) = crossterm::event::read() {
                let event = match ev {
                    TermEvent::Key(key) => Event::Key(key),
                    TermEvent::Resize(_, _) => Event::Resize,
                    // Clicks and the wheel; releases (and motion, should a terminal send it)
                    // would only wake the loop.
                    TermEvent::Mouse(mouse)
                        if matches!(
                            mouse.kind,
                            MouseEventKind::Down(MouseButton::Left)
                                | MouseEventKind::ScrollUp
                                | MouseEventKind::ScrollDown
                        ) =>
                    {
                        Event::Mouse(mouse)
                    }
                    _ => continue,
                };
                if sink.send(event).is_err() {
                    return;
                }
                loop_thread.unpark();
            }
        })?;
    Ok(())
}

/// How the console's bridges are set up: `money` says where ledgers are stored and how hosts
/// are released; `ops` where runbooks and checks run and where the audit log is.
pub struct Bridges {
    pub money: BridgeSetup,
    pub ops: OpsSetup,
    /// Where `/metrics` pages go, when the console serves them (`[metrics] listen`).
    pub metrics: Option<MetricsBridge>,
    /// The `[[alerts]]` sinks and how long a host may be unreachable before it alerts.
    pub alerts: (Vec<Sink>, u64),
    /// What this console holds of the fleet's duties (auto-release, alerts); `None` without a
    /// state directory (the demo fleet).
    pub duties: Option<Duties>,
    /// The configured hosts' links, when the provider inventory is joined again after each
    /// sync (their handles are here, not in `sources`).
    pub live: Option<LiveHosts>,
    /// An attached console's watchers, asked to run its releases and holds.
    pub watcher: Option<crate::remote_watcher::WatcherActions>,
}

/// The loop's optional parts: runbooks and checks, `/metrics`, alerts, duties.
#[derive(Default)]
pub struct Parts<'a> {
    pub ops: Option<&'a mut OpsBridge>,
    pub metrics: Option<&'a MetricsBridge>,
    pub alerts: Option<&'a mut AlertBridge>,
    pub duties: Option<&'a mut Duties>,
    /// The hosts the synced provider inventory adds to and marks gone in the fleet.
    pub live: Option<&'a mut LiveHosts>,
}

/// Runs the console until the user quits or SIGTERM / SIGHUP stops it. The terminal is restored
/// on return, on error and on panic (see [`TerminalGuard`]). `theme` is drawn in the colours the
/// terminal has (`NO_COLOR`, `COLORTERM`, `TERM`: [`ColorDepth::from_env`]).
pub fn run(
    mut model: Model,
    theme: &Theme,
    events: Receiver<Event>,
    sink: EventSink,
    sources: Vec<SourceHandle>,
    prompts: PendingPrompts,
    bridges: Bridges,
) -> std::io::Result<Ended> {
    let mut bridge = ReleaseBridge::new(bridges.money, sink.clone());
    bridge.set_watcher(bridges.watcher);
    let mut ops = OpsBridge::new(bridges.ops, sink.clone());
    let (sinks, unreachable_after_ms) = bridges.alerts;
    let mut alerts = AlertBridge::new(sinks, unreachable_after_ms, sink.clone());
    let mut duties = bridges.duties;
    let mut live = bridges.live;
    let theme = &theme.for_depth(ColorDepth::from_env());
    forward_signals(sink.clone(), std::thread::current())?;
    spawn_input(sink, std::thread::current())?;
    let mut backlogs = Backlogs::arm(&sources);
    for (_, handle) in live.iter().flat_map(|l| l.running.iter().flatten()) {
        backlogs.add(handle);
    }
    let mut guard = TerminalGuard::enter()?;
    let mut stats = FrameStats::default();
    let result = event_loop_with_ops(
        guard.terminal(),
        &mut model,
        theme,
        (&events, &backlogs),
        &prompts,
        &mut bridge,
        Parts {
            ops: Some(&mut ops),
            metrics: bridges.metrics.as_ref(),
            alerts: Some(&mut alerts),
            duties: duties.as_mut(),
            live: live.as_mut(),
        },
        &mut stats,
    );
    drop(guard);
    alerts.finish();
    // Dropping every handle first sets every stop flag, so links wind down in parallel.
    drop(sources);
    drop(live);
    result.map(|()| match model.interrupted {
        true => Ended::Interrupted,
        false => Ended::Quit,
    })
}

/// How the console ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ended {
    /// `q`: exit 0.
    Quit,
    /// Ctrl-C: exit 130, as every cancelled command.
    Interrupted,
}

impl Ended {
    /// The word the log says (`how="quit"`), not Rust's name for it.
    pub fn word(self) -> &'static str {
        match self {
            Ended::Quit => "quit",
            Ended::Interrupted => "interrupted",
        }
    }
}

/// What the loop measured: frames drawn and, only when made with [`FrameStats::recording`] (a
/// benchmark's), for each frame that showed new samples, when it was drawn (wall clock) and how
/// long the oldest of them waited between its line arriving and the frame being drawn. The
/// console's own stats keep no list: a list per frame grows ~0.6 MB an hour at ten frames a
/// second, for as long as the console runs.
#[derive(Debug, Default, Clone)]
pub struct FrameStats {
    pub frames: u64,
    pub sample_to_screen_ms: Vec<u64>,
    pub drawn_at_ms: Vec<TimestampMs>,
    keep_latencies: bool,
}

impl FrameStats {
    /// Stats that keep every frame's latency and time, for a run of bounded length.
    pub fn recording() -> Self {
        Self {
            keep_latencies: true,
            ..Self::default()
        }
    }

    fn drawn(&mut self, undrawn_since_ms: Option<TimestampMs>) {
        self.frames += 1;
        if let (true, Some(arrived_ms)) = (self.keep_latencies, undrawn_since_ms) {
            let drawn_ms = now_ms();
            self.sample_to_screen_ms
                .push(drawn_ms.saturating_sub(arrived_ms));
            self.drawn_at_ms.push(drawn_ms);
        }
    }
}

/// The loop itself, over any backend (the console uses the real terminal; benchmarks a test
/// backend). Returns when a command says quit or every sender is gone. Runbook, check and
/// audit-log commands are dropped: see [`event_loop_with_ops`]. `backlogs` are the sources'
/// counts of events not yet taken ([`Backlogs::arm`]; `Backlogs::default()` counts none).
pub fn event_loop<B: Backend>(
    terminal: &mut Terminal<B>,
    model: &mut Model,
    theme: &Theme,
    events: (&Receiver<Event>, &Backlogs),
    prompts: &PendingPrompts,
    bridge: &mut ReleaseBridge,
    stats: &mut FrameStats,
) -> Result<(), B::Error> {
    event_loop_with_ops(
        terminal,
        model,
        theme,
        events,
        prompts,
        bridge,
        Parts::default(),
        stats,
    )
}

/// [`event_loop`] with its optional [`Parts`]: the ops bridge that runs runbooks and checks
/// and reads the audit log, `/metrics`, alerts and the fleet's duties.
#[allow(clippy::too_many_arguments)]
pub fn event_loop_with_ops<B: Backend>(
    terminal: &mut Terminal<B>,
    model: &mut Model,
    theme: &Theme,
    (events, backlogs): (&Receiver<Event>, &Backlogs),
    prompts: &PendingPrompts,
    bridge: &mut ReleaseBridge,
    parts: Parts,
    stats: &mut FrameStats,
) -> Result<(), B::Error> {
    let Parts {
        mut ops,
        metrics,
        mut alerts,
        mut duties,
        mut live,
    } = parts;
    let mut next_tick = Instant::now() + TICK;
    let mut last_frame = Instant::now();
    let mut looked_at: Option<Option<HostId>> = None;
    let mut start_up_pages = crate::start_up_pages::StartUpPages::new();
    loop {
        if model.take_dirty() {
            let area = terminal
                .draw(|frame| crate::ui::draw(frame, model, theme))?
                .area;
            // Where this frame put what the mouse can point at; not a change to redraw for.
            model.screen.regions = crate::ui::regions::of(model, theme, area);
            last_frame = Instant::now();
            stats.drawn(model.take_undrawn_sample_ms());
        }
        let wait = next_tick.saturating_duration_since(Instant::now());
        let (mut commands, from_user, quiet) = match events.recv_timeout(wait) {
            Ok(event) => {
                if let Event::Host { host, .. } | Event::Hosts { host, .. } = &event {
                    backlogs.taken(*host);
                }
                let from_user = is_from_user(&event);
                let quiet = is_quiet(&event);
                (update(model, event), from_user, quiet)
            }
            Err(RecvTimeoutError::Timeout) => (Vec::new(), false, true),
            Err(RecvTimeoutError::Disconnected) => return Ok(()),
        };
        // Gather the rest of a burst (one line per GPU arrives as separate events) before
        // drawing, so a tick of eight GPUs costs one frame, not eight. The loop sleeps parked
        // and takes what queued when it wakes: telemetry never wakes it (fifty hosts would
        // wake it hundreds of times a second); the input thread does, for keys.
        let mut burst_end = Instant::now() + COALESCE;
        if !from_user {
            burst_end = burst_end.max(telemetry_frame_at(last_frame, model.undrawn_sample_ms()));
        }
        // The tick's timeout, or a job's listing or log read (every 5 s a host, apart from its
        // samples), that asks for no frame: there is no burst to gather, so the loop goes back
        // to waiting at once instead of napping until the next frame would be due (fifty
        // followed logs kept it awake up to 100 ms a read). Telemetry still gathers: its
        // readings come in bursts, off screen ones too.
        let mut nothing_waits = quiet && !model.is_dirty() && model.undrawn_sample_ms().is_none();
        if nothing_waits {
            burst_end = Instant::now();
        }
        'gather: loop {
            for _ in 0..MAX_TAKEN_AT_ONCE {
                let event = match events.try_recv() {
                    Ok(event) => event,
                    Err(TryRecvError::Empty) => break,
                    Err(TryRecvError::Disconnected) => break 'gather,
                };
                if let Event::Host { host, .. } | Event::Hosts { host, .. } = &event {
                    backlogs.taken(*host);
                }
                let from_user = is_from_user(&event);
                let sample_was_waiting = model.undrawn_sample_ms().is_some();
                commands.extend(update(model, event));
                if nothing_waits && (model.is_dirty() || model.undrawn_sample_ms().is_some()) {
                    // Something to draw after all: gather its burst as usual.
                    nothing_waits = false;
                    burst_end = (Instant::now() + COALESCE)
                        .max(telemetry_frame_at(last_frame, model.undrawn_sample_ms()));
                }
                if from_user {
                    // A key answers at once, whatever telemetry was waiting for.
                    burst_end = burst_end.min(Instant::now() + COALESCE);
                } else if !sample_was_waiting {
                    // The first sample of this burst may bring its budget's end forward.
                    burst_end = burst_end.min(
                        telemetry_frame_at(last_frame, model.undrawn_sample_ms())
                            .max(Instant::now() + COALESCE),
                    );
                }
            }
            let now = Instant::now();
            if now >= burst_end {
                break;
            }
            // Until a sample waits, look again soon: one arriving now may need a frame before
            // `burst_end` to stay within its budget.
            let mut nap = burst_end - now;
            if model.undrawn_sample_ms().is_none() {
                nap = nap.min(LOOK_FOR_SAMPLES);
            }
            std::thread::park_timeout(nap);
        }
        // The host whose view is open gets its process list every few seconds, the others
        // twice a minute (each fetch is an `nvidia-smi` on the host).
        let open = match model.view {
            View::Host(host) => Some(host),
            View::Fleet => None,
        };
        if looked_at != Some(open) {
            backlogs.look_at(open);
            looked_at = Some(open);
        }
        if Instant::now() >= next_tick {
            next_tick = Instant::now() + TICK;
            start_up_pages.hand_back_when_settled(&model.fleet);
            if let Some(duties) = duties.as_deref_mut() {
                let notes = duties.poll(&mut model.fleet);
                if duties.holds.is_some() {
                    bridge.set_holds(duties.holds.take());
                }
                if !notes.is_empty() {
                    commands.extend(update(model, Event::Duties(notes)));
                }
            }
            if model.fleet.money.counting_down()
                && let Some(holds) = bridge.take_holds()
            {
                commands.extend(update(model, Event::Holds(holds)));
            }
            commands.extend(update(model, Event::Tick { now_ms: now_ms() }));
            if let Some(alerts) = alerts.as_deref_mut() {
                let sent_by = duties.as_deref().and_then(Duties::alerts_sent_by);
                if let Some(event) = alerts.tick(&model.fleet, sent_by) {
                    commands.extend(update(model, event));
                }
            }
        }
        for command in commands {
            match command {
                Command::Quit => return Ok(()),
                Command::AnswerPrompt { id, answer } => prompts.answer(id, answer),
                Command::AskHostKeyAgain { host } => prompts.ask_host_key_again(host),
                Command::ServeMetrics => {
                    if let Some(metrics) = metrics
                        && metrics.wanted()
                    {
                        metrics.publish(crate::metrics::render(&model.fleet));
                    }
                }
                Command::Rejoin => {
                    if let Some(live) = live.as_deref_mut() {
                        let joined = match live.rejoin(&mut model.fleet) {
                            Ok(None) => None,
                            Ok(Some((changes, release_config))) => {
                                bridge.set_config(release_config);
                                Some(Ok(JoinedHosts {
                                    joined: [changes.added, changes.restarted].concat(),
                                    gone: changes.gone,
                                    left: changes.removed,
                                }))
                            }
                            Err(why) => Some(Err(why)),
                        };
                        if let Some(joined) = joined {
                            // Answered with a notice only: no command follows.
                            let _ = update(model, Event::HostsJoined(joined));
                        }
                    }
                }
                Command::StartRunbook { .. }
                | Command::AnswerStep { .. }
                | Command::StopRunbook { .. }
                | Command::StartCheck { .. }
                | Command::StopCheck { .. }
                | Command::LoadAudit
                | Command::WriteReport { .. } => {
                    if let Some(ops) = ops.as_deref_mut() {
                        ops.execute(command);
                    }
                }
                // Saving, planning, backing up and sending: the bridge does the I/O.
                other => bridge.execute(other),
            }
        }
    }
}

/// Whether the user made this event (a key, a resize): it is answered without waiting for
/// telemetry's frame.
fn is_from_user(event: &Event) -> bool {
    matches!(
        event,
        Event::Key(_) | Event::Mouse(_) | Event::Resize | Event::Stop
    )
}

/// An event that comes alone, not in a burst of readings: a job's listing or a read of its log.
fn is_quiet(event: &Event) -> bool {
    matches!(
        event,
        Event::Host {
            event: HostEvent::JobLog { .. } | HostEvent::Jobs { .. },
            ..
        }
    )
}

/// When the next frame that only shows telemetry is due: `MIN_FRAME` after the last one, or
/// sooner when the oldest sample not yet on screen (stamped `undrawn_ms`) would otherwise wait
/// past its budget.
fn telemetry_frame_at(last_frame: Instant, undrawn_ms: Option<TimestampMs>) -> Instant {
    let capped = last_frame + MIN_FRAME;
    let Some(arrived_ms) = undrawn_ms else {
        return capped;
    };
    let waited_ms = now_ms().saturating_sub(arrived_ms);
    let left = Duration::from_millis(SAMPLE_BUDGET_MS.saturating_sub(waited_ms));
    capped.min(Instant::now() + left)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_consoles_frame_stats_keep_nothing_per_frame_so_its_memory_stays_flat() {
        let mut console = FrameStats::default();
        let mut bench = FrameStats::recording();
        for _ in 0..10_000 {
            console.drawn(Some(now_ms()));
            bench.drawn(Some(now_ms()));
        }
        assert_eq!(console.frames, 10_000);
        assert_eq!(console.sample_to_screen_ms.capacity(), 0);
        assert_eq!(console.drawn_at_ms.capacity(), 0);
        // A benchmark's stats keep each frame that showed a new sample.
        assert_eq!(bench.sample_to_screen_ms.len(), 10_000);
        assert_eq!(bench.drawn_at_ms.len(), 10_000);
    }

    #[test]
    fn a_telemetry_frame_waits_for_the_cap_unless_a_sample_would_wait_too_long() {
        let last_frame = Instant::now();
        // Nothing waiting: the cap decides.
        assert_eq!(telemetry_frame_at(last_frame, None), last_frame + MIN_FRAME);
        // A sample that just arrived: due within its budget, before the cap.
        let due = telemetry_frame_at(last_frame, Some(now_ms()));
        assert!(due <= Instant::now() + Duration::from_millis(SAMPLE_BUDGET_MS));
        assert!(due < last_frame + MIN_FRAME);
        // A sample that already waited past its budget: due now.
        let due = telemetry_frame_at(last_frame, Some(now_ms().saturating_sub(500)));
        assert!(due <= Instant::now());
        // A long-past frame: the cap is in the past, so the frame is due at once.
        if let Some(long_ago) = Instant::now().checked_sub(Duration::from_secs(2)) {
            assert!(telemetry_frame_at(long_ago, Some(now_ms())) <= Instant::now());
        }
    }
}
