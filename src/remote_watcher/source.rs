//! The watchers' streams as one source: each watcher followed on its own thread, its hosts'
//! events sent into the sink under the console's host ids; a watcher gone is said (its hosts
//! shown unresponsive, keeping their last state) and opened again with backoff; a one-shot read
//! of every watcher's state for `snapshot --from`.

use std::collections::HashMap;
use std::path::Path;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::fleet::{Fleet, FleetOptions, HostEvent, HostId, HostSink};
use crate::recording::wire::{Event, Line};
use crate::telemetry::source::{SourceHandle, StopFlag, now_ms};
use crate::words::Words;

use super::actions::WatcherActions;
use super::stream::{AttachError, EventStream, open};

/// The variable the token is read from when no file is given.
pub const TOKEN_ENV: &str = "GPUFLEET_TOKEN";
/// A stream silent this long (three heartbeats and more) is taken for a gone watcher.
const SILENT: Duration = Duration::from_secs(10);
/// The first wait before opening a stream again; doubled each failure up to [`MAX_BACKOFF`].
const FIRST_BACKOFF: Duration = Duration::from_millis(500);
const MAX_BACKOFF: Duration = Duration::from_secs(30);
/// Lines read ahead of the sink.
const READ_AHEAD: usize = 4_096;

/// The bearer token sent to the watchers; never shown.
#[derive(Clone)]
pub struct AttachToken(String);

impl std::fmt::Debug for AttachToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("AttachToken(..)")
    }
}

impl AttachToken {
    /// The token in `file` (its first line) when given, else `GPUFLEET_TOKEN`.
    pub fn find(file: Option<&Path>) -> Result<Self, AttachError> {
        let token = match file {
            Some(path) => {
                let text = std::fs::read_to_string(path).map_err(|e| AttachError::TokenFile {
                    path: path.to_path_buf(),
                    error: e.to_string(),
                })?;
                text.lines().next().unwrap_or_default().trim().to_string()
            }
            None => std::env::var(TOKEN_ENV)
                .unwrap_or_default()
                .trim()
                .to_string(),
        };
        if token.is_empty() {
            return Err(AttachError::NoToken);
        }
        Ok(Self(token))
    }
}

/// `report --from URL...`: the incident bundle of `host` made over the `since_ms` before its
/// newest recorded event by the first of the watchers at `urls` that serves it, or by the one
/// named in `host` (`name@HOST:PORT`, as an attached console tags a name several watchers
/// have); `known_secrets` scrubbed again. A watcher that cannot be asked is passed over while
/// another may serve the host; its error is the answer when none does.
pub fn fetch_report(
    urls: &[String],
    token: &AttachToken,
    host: &str,
    since_ms: u64,
    known_secrets: &[String],
) -> Result<super::Fetched, super::FetchError> {
    use super::FetchError;
    let tagged = host.rsplit_once('@').and_then(|(name, label)| {
        urls.iter()
            .find(|url| watcher_label(url) == label)
            .map(|url| (name, url))
    });
    if let Some((name, url)) = tagged {
        let mut fetched = super::report::fetch_with(url, &token.0, name, since_ms, known_secrets)?;
        fetched.made.host = host.to_string();
        return Ok(fetched);
    }
    let mut failed = None;
    for url in urls {
        match super::report::fetch_with(url, &token.0, host, since_ms, known_secrets) {
            Err(FetchError::UnknownHost { .. }) => {}
            Err(e @ FetchError::Attach(_)) => {
                failed.get_or_insert(e);
            }
            answered => return answered,
        }
    }
    Err(failed.unwrap_or_else(|| FetchError::UnknownHost {
        host: host.to_string(),
        url: urls.join(", "),
    }))
}

/// One watcher: its URL, its hosts (their names on the watcher, each with its id here), and the
/// stream opened to check it.
struct Watcher {
    url: String,
    ids: HashMap<String, HostId>,
    opened: Option<EventStream>,
}

/// The watchers, checked and ready to follow.
pub struct Attach {
    watchers: Vec<Watcher>,
    hosts: Vec<String>,
    token: AttachToken,
    /// Where each host is asked to act; hosts a watcher adds later join it.
    actions: WatcherActions,
}

/// Told of a host a watcher added after the console attached (a reload), with the id its
/// events come under, before its first event.
pub type NewHost = Arc<dyn Fn(HostId, String) + Send + Sync>;

/// What the watchers' threads share to add a host: the next free id (taken and told under one
/// lock, so hosts are told in id order), whether names are tagged with their watcher, and
/// where the console's actions for it go.
#[derive(Clone)]
struct Adding {
    next_id: Arc<Mutex<HostId>>,
    tagged: bool,
    tell: NewHost,
    actions: WatcherActions,
}

impl Adding {
    /// The id of `name` on `watcher`, added (told, routed) when it is new.
    fn id_of(&self, watcher: &mut Watcher, name: &str) -> Option<HostId> {
        if let Some(id) = watcher.ids.get(name) {
            return Some(*id);
        }
        if name.is_empty() {
            return None;
        }
        let shown = if self.tagged {
            format!("{name}@{}", watcher_label(&watcher.url))
        } else {
            name.to_string()
        };
        let mut next = self.next_id.lock().ok()?;
        let id = *next;
        *next += 1;
        self.actions
            .add(id, watcher.url.clone(), name.to_string(), shown.clone());
        (self.tell)(id, shown);
        drop(next);
        watcher.ids.insert(name.to_string(), id);
        tracing::info!(watcher = %watcher.url, host = name, "the watcher added a host");
        Some(id)
    }
}

impl Attach {
    /// Opens every watcher's stream (a refusal, an unreachable watcher or another format is an
    /// error naming it, before anything is shown) and names their hosts: as the watcher does,
    /// or `name@watcher` for a name more than one watcher has.
    pub fn open(urls: &[String], token: AttachToken) -> Result<Self, AttachError> {
        let mut streams = Vec::new();
        for url in urls {
            streams.push(open(url, &token.0)?);
        }
        let mut seen: HashMap<&str, usize> = HashMap::new();
        for stream in &streams {
            for name in &stream.header.hosts {
                *seen.entry(name.as_str()).or_default() += 1;
            }
        }
        let clashes: Vec<String> = seen
            .into_iter()
            .filter(|(_, n)| *n > 1)
            .map(|(name, _)| name.to_string())
            .collect();
        let mut hosts = Vec::new();
        let mut watchers = Vec::new();
        for stream in streams {
            let label = watcher_label(&stream.url);
            let mut ids = HashMap::new();
            for name in &stream.header.hosts {
                let shown = if clashes.contains(name) {
                    format!("{name}@{label}")
                } else {
                    name.clone()
                };
                ids.insert(name.clone(), hosts.len());
                hosts.push(shown);
            }
            watchers.push(Watcher {
                url: stream.url.clone(),
                ids,
                opened: Some(stream),
            });
        }
        let routes = watchers
            .iter()
            .flat_map(|watcher| {
                watcher.ids.iter().map(|(name, id)| {
                    let shown = hosts.get(*id).cloned().unwrap_or_default();
                    (*id, watcher.url.clone(), name.clone(), shown)
                })
            })
            .collect();
        let actions = WatcherActions::new(routes, token.0.clone());
        Ok(Self {
            watchers,
            hosts,
            token,
            actions,
        })
    }

    /// The hosts in id order, as the console shows them.
    pub fn host_names(&self) -> Vec<String> {
        self.hosts.clone()
    }

    /// What sends this console's actions to the watchers that have its hosts (and those they
    /// add later).
    pub fn actions(&self) -> WatcherActions {
        self.actions.clone()
    }
}

/// A watcher's URL without its scheme, to tag its hosts with.
fn watcher_label(url: &str) -> String {
    url.split_once("://")
        .map_or(url, |(_, rest)| rest)
        .trim_end_matches('/')
        .to_string()
}

/// Follows every watcher into `sink`, each on its own thread; a host a watcher adds later is
/// told to `new_host` before its first event.
pub fn spawn(
    attach: Attach,
    sink: HostSink,
    new_host: NewHost,
) -> std::io::Result<Vec<SourceHandle>> {
    let token = attach.token;
    let adding = Adding {
        next_id: Arc::new(Mutex::new(attach.hosts.len())),
        tagged: attach.watchers.len() > 1,
        tell: new_host,
        actions: attach.actions,
    };
    attach
        .watchers
        .into_iter()
        .map(|watcher| {
            let sink = sink.clone();
            let token = token.clone();
            let adding = adding.clone();
            SourceHandle::spawn("attach", move |stop| {
                follow(watcher, &token, &sink, &stop, &adding);
            })
        })
        .collect()
}

/// Events a stream opened again sends a second time that must not be taken twice: those a
/// host keeps a list of (kernel lines, notices). The rest replace what they replace.
fn repeats_harm(event: &Event) -> bool {
    matches!(
        event,
        Event::Kernel { .. } | Event::Notice { .. } | Event::Evidence { .. }
    )
}

fn follow(
    mut watcher: Watcher,
    token: &AttachToken,
    sink: &HostSink,
    stop: &StopFlag,
    adding: &Adding,
) {
    let mut backoff = FIRST_BACKOFF;
    // The watcher's time of the newest line taken: lines of a stream opened again that are
    // no newer and would be kept twice are passed over.
    let mut newest_t_ms = 0;
    let mut gone_since: Option<u64> = None;
    let mut last_refusal = String::new();
    loop {
        let stream = match watcher.opened.take() {
            Some(stream) => stream,
            None => match open(&watcher.url, &token.0) {
                Ok(stream) => stream,
                Err(e) => {
                    let said = e.to_string();
                    if said != last_refusal {
                        tracing::warn!(watcher = %watcher.url, "{said}");
                        notify(
                            &watcher,
                            sink,
                            Words::new("attach.still_gone")
                                .put("url", watcher.url.clone())
                                .put("why", said.clone()),
                        );
                        last_refusal = said;
                    }
                    if stop.sleep(backoff) {
                        return;
                    }
                    backoff = (backoff * 2).min(MAX_BACKOFF);
                    continue;
                }
            },
        };
        backoff = FIRST_BACKOFF;
        last_refusal.clear();
        if gone_since.take().is_some() {
            let at_ms = now_ms();
            for id in watcher.ids.values() {
                sink.send(*id, HostEvent::Responsive { at_ms });
            }
            tracing::info!(watcher = %watcher.url, "the watcher is back");
            notify(
                &watcher,
                sink,
                Words::new("attach.back").put("url", watcher.url.clone()),
            );
        }
        let cut_t_ms = newest_t_ms;
        let taken = take_stream(
            stream,
            &mut watcher,
            adding,
            sink,
            stop,
            cut_t_ms,
            &mut newest_t_ms,
        );
        let why = match taken {
            Taken::Stopped => return,
            Taken::Gone(why) => why,
        };
        tracing::warn!(watcher = %watcher.url, "{why}");
        let at_ms = now_ms();
        gone_since = Some(at_ms);
        for id in watcher.ids.values() {
            sink.send(
                *id,
                HostEvent::Unresponsive {
                    at_ms,
                    silent_ms: 0,
                },
            );
        }
        notify(
            &watcher,
            sink,
            Words::new("attach.gone")
                .put("url", watcher.url.clone())
                .put("why", why),
        );
        if stop.sleep(backoff) {
            return;
        }
    }
}

/// Says `words` on the watcher's first host (the console shows a host's notice).
fn notify(watcher: &Watcher, sink: &HostSink, words: Words) {
    if let Some(first) = watcher.ids.values().min() {
        sink.send(
            *first,
            HostEvent::Notice {
                at_ms: now_ms(),
                text: words,
            },
        );
    }
}

enum Taken {
    Stopped,
    Gone(String),
}

/// Reads `stream` (on a thread of its own, so that stopping never waits for the network) into
/// `sink` until it ends, falls silent or the source is stopped.
fn take_stream(
    mut stream: EventStream,
    watcher: &mut Watcher,
    adding: &Adding,
    sink: &HostSink,
    stop: &StopFlag,
    cut_t_ms: u64,
    newest_t_ms: &mut u64,
) -> Taken {
    let (tx, rx) = mpsc::sync_channel::<Result<Line, String>>(READ_AHEAD);
    let url = watcher.url.clone();
    let reader = std::thread::Builder::new()
        .name("attach-read".to_string())
        .spawn(move || {
            loop {
                let next = match stream.next_line() {
                    Ok(Some(line)) => Ok(line),
                    Ok(None) => Err(rust_i18n::t!("attach.ended", url = url).into_owned()),
                    Err(e) => Err(e.to_string()),
                };
                let end = next.is_err();
                if tx.send(next).is_err() || end {
                    return;
                }
            }
        });
    if let Err(e) = reader {
        return Taken::Gone(e.to_string());
    }
    let mut heard = Instant::now();
    loop {
        if stop.is_set() {
            return Taken::Stopped;
        }
        match rx.recv_timeout(Duration::from_millis(200)) {
            Ok(Ok(line)) => {
                heard = Instant::now();
                let Some(id) = adding.id_of(watcher, &line.host) else {
                    continue;
                };
                if line.t_ms <= cut_t_ms && repeats_harm(&line.event) {
                    continue;
                }
                *newest_t_ms = (*newest_t_ms).max(line.t_ms);
                if !sink.send(id, HostEvent::from(line.event)) {
                    return Taken::Stopped;
                }
            }
            Ok(Err(why)) => return Taken::Gone(why),
            Err(RecvTimeoutError::Timeout) => {
                if heard.elapsed() >= SILENT {
                    return Taken::Gone(
                        rust_i18n::t!("attach.silent", url = watcher.url, s = SILENT.as_secs())
                            .into_owned(),
                    );
                }
            }
            Err(RecvTimeoutError::Disconnected) => {
                return Taken::Gone(rust_i18n::t!("attach.ended", url = watcher.url).into_owned());
            }
        }
    }
}

/// Every watcher's state now, read once into a fresh fleet (for `snapshot --from`).
pub fn read_once(attach: Attach, options: FleetOptions) -> Result<Fleet, AttachError> {
    let mut fleet = Fleet::new(attach.host_names(), options, now_ms());
    for mut watcher in attach.watchers {
        let Some(mut stream) = watcher.opened.take() else {
            continue;
        };
        let lines = stream.state_lines.unwrap_or(0);
        for _ in 0..lines {
            let Some(line) = stream.next_line()? else {
                return Err(AttachError::Ended(watcher.url.clone()));
            };
            if let Some(&id) = watcher.ids.get(&line.host) {
                fleet.apply(id, HostEvent::from(line.event));
            }
        }
    }
    fleet.advance_clock(now_ms());
    Ok(fleet)
}
