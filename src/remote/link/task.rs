//! Followed links as tasks on one small tokio runtime, not a thread each. A session's socket is
//! registered with the runtime; a link wakes when its socket is readable (or writable while
//! libssh2 has output pending), when a timer of its own is due, or when it is stopped, and
//! costs nothing in between.
//!
//! Connecting (the handshake, authentication, perhaps a prompt on the console) blocks, so it
//! runs on the runtime's blocking pool; `connect.rs` lets at most
//! [`MAX_CONCURRENT_HANDSHAKES`](crate::remote::connect::MAX_CONCURRENT_HANDSHAKES) handshake at
//! once (sshd's `MaxStartups`) and gives its slot back while a prompt waits for the user. A
//! host reached directly connects TCP and waits for its slot as a task, so the threads are
//! about as many as the handshakes under way (a proxy command or a jump host connects on the
//! thread).

use std::io::ErrorKind;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use tokio::io::{Interest, Ready};
use tokio::net::{TcpStream, UnixStream};
use tokio::runtime::{Builder, Runtime};

use std::sync::Arc;

use crate::fleet::{DownWords, HostEvent, HostId, HostSink};
use crate::remote::LinkOptions;
use crate::remote::backoff::Backoff;
use crate::remote::connect::open_direct;
use crate::remote::error::RemoteError;
use crate::remote::host::RemoteHost;
use crate::remote::link::mux::Mux;
use crate::remote::link::session_state::SessionState;
use crate::remote::link::{Ended, Link, Mode};
use crate::remote::sanitize::sanitize;
use crate::remote::wait::{Wake, wait_socket};
use crate::telemetry::source::{Backlog, SourceHandle, StopFlag, now_ms};
use crate::words::Words;

/// The one thread that runs every followed link. The work per link is small (a 1,000-host
/// fleet needs a fraction of a core), and a second thread only woke to find nothing to take
/// (tokio wakes an idle worker to share whatever the first one was given).
const WORKER_THREADS: usize = 1;
/// Before the links' thread waits for sockets again, it lets this much time pass, so that the
/// readings that arrive meanwhile are taken in one wake-up instead of one each: 200 hosts whose
/// readings come at their own phases woke it ~1.4 times a host-second (a context switch each,
/// a fifth of the links' CPU), and now at most 100 times a second whatever the fleet's size. A
/// reading waits at most this long in its socket before its link reads it, within the 100 ms
/// in which it must reach the screen (the loop's own budget is 70 ms).
const GATHER: Duration = Duration::from_millis(10);
/// Threads for connection attempts: those handshaking, those waiting for the user to answer a
/// prompt, and those of hosts behind a proxy or jump host (which connect and wait for a slot
/// on their thread). Made on demand, ended after ten idle seconds.
const CONNECT_THREADS: usize = 64;
/// How often a link whose stop waker could not be made looks at its stop flag.
const STOP_POLL: Duration = Duration::from_millis(200);

/// The runtime of the followed links, made on first use.
pub(crate) fn runtime() -> std::io::Result<&'static Runtime> {
    static RUNTIME: OnceLock<Runtime> = OnceLock::new();
    if let Some(runtime) = RUNTIME.get() {
        return Ok(runtime);
    }
    let runtime = Builder::new_multi_thread()
        .worker_threads(WORKER_THREADS)
        // Called only when the thread has no task left to run, that is after a round of work.
        .on_thread_park(|| std::thread::sleep(GATHER))
        .max_blocking_threads(CONNECT_THREADS)
        .thread_name("ssh-links")
        .enable_io()
        .enable_time()
        .build()?;
    // Two first callers at once: one runtime is kept, the other is dropped unused.
    Ok(RUNTIME.get_or_init(|| runtime))
}

/// The session's socket registered with the runtime, through a duplicate handle: only its
/// readiness is used here; libssh2 does the reading and writing on the original.
enum Watched {
    Tcp(TcpStream),
    /// A proxy command's or a jump bridge's socket pair.
    Unix(UnixStream),
}

impl Watched {
    fn of(mux: &Mux) -> std::io::Result<Self> {
        let fd = mux.socket().try_clone()?;
        Ok(if mux.is_direct() {
            Self::Tcp(TcpStream::from_std(std::net::TcpStream::from(fd))?)
        } else {
            Self::Unix(UnixStream::from_std(std::os::unix::net::UnixStream::from(
                fd,
            ))?)
        })
    }

    async fn ready(&self, interest: Interest) -> std::io::Result<Ready> {
        match self {
            Self::Tcp(s) => s.ready(interest).await,
            Self::Unix(s) => s.ready(interest).await,
        }
    }

    /// Forgets the readiness the runtime holds (an I/O attempt that would block is how tokio
    /// is told); what the socket holds now is then read with a level check.
    fn forget(&self) {
        let would_block = || Err::<(), _>(std::io::Error::from(ErrorKind::WouldBlock));
        // One direction at a time: tokio clears nothing for a combined interest.
        for interest in [Interest::READABLE, Interest::WRITABLE] {
            let _ = match self {
                Self::Tcp(s) => s.try_io(interest, would_block),
                Self::Unix(s) => s.try_io(interest, would_block),
            };
        }
    }
}

/// The link's stop, awaitable.
struct Stop {
    flag: StopFlag,
    waker: Option<UnixStream>,
}

impl Stop {
    /// Returns once the link is asked to stop.
    async fn requested(&self) {
        if let Some(waker) = &self.waker
            && waker.readable().await.is_ok()
        {
            return;
        }
        while !self.flag.is_set() {
            tokio::time::sleep(STOP_POLL).await;
        }
    }
}

/// Starts following `host` as a task on the links' runtime (no thread of its own). Events go
/// to `sink` as host `id`'s; dropping or stopping the handle ends the link: at once while it
/// streams or waits to reconnect, at the end of a connection attempt's current step (bounded
/// by the connect timeout) or when a pending prompt is answered or cancelled.
pub fn spawn_link(
    host: RemoteHost,
    id: HostId,
    sink: HostSink,
    opts: LinkOptions,
) -> std::io::Result<SourceHandle> {
    let runtime = runtime()?;
    let stop = StopFlag::default();
    let backlog = Arc::new(Backlog::default());
    let mut link = Link::new(host, id, sink, opts, stop.clone(), Mode::Follow);
    link.backlog = Arc::clone(&backlog);
    let (done, ended) = std::sync::mpsc::channel::<()>();
    runtime.spawn(async move {
        // Dropped when the task ends, however it ends: that is what `stop_and_join` waits for.
        let _done = done;
        follow(link).await;
    });
    Ok(SourceHandle::for_task(stop, id, backlog, ended))
}

/// Follows the host until stopped: connects (paced), serves each session, and reconnects
/// with backoff, as the link's events tell the fleet.
pub(crate) async fn follow(mut link: Link) {
    let stop = Stop {
        flag: link.stop.clone(),
        waker: link.waker.take().and_then(|w| UnixStream::from_std(w).ok()),
    };
    link.warn_settings();
    let mut backoff = Backoff::new(
        link.opts.reconnect_base_ms,
        link.opts.reconnect_cap_ms,
        link.id as u64,
    );
    let mut attempt = 0u32;
    let mut down = false;
    while !stop.flag.is_set() {
        attempt = attempt.saturating_add(1);
        link.emit(HostEvent::Connecting {
            attempt,
            at_ms: Some(now_ms()),
        });
        // A direct host's TCP connection and handshake slot first, without a thread: the
        // thread is taken only for the handshake and login.
        // A host from a provider inventory may have come back elsewhere (a restart).
        if down {
            link.follow_endpoint();
        }
        down = true;
        let direct = tokio::select! {
            biased;
            () = stop.requested() => return,
            direct = open_direct(&link.host, &link.opts) => direct,
        };
        let result = match direct {
            Err(e) => Err(e),
            Ok(opened) => {
                let attempt = tokio::task::spawn_blocking(move || {
                    let result = link.open(opened);
                    (link, result)
                })
                .await;
                // The connection step panicked: the link is gone with it.
                let Ok((back, result)) = attempt else { return };
                link = back;
                result
            }
        };
        let failure = match result {
            Ok(connection) => {
                attempt = 0;
                backoff.reset();
                let (mut mux, mut st) = link.begin(connection);
                let ended = serve(&mut link, &mut mux, &mut st, &stop).await;
                mux.close();
                match ended {
                    Ended::Stopped => return,
                    Ended::Finished => None,
                    Ended::Dropped(e) => Some(e),
                }
            }
            Err(RemoteError::Stopped) => return,
            Err(e) if e.is_permanent() => {
                // A declined key is asked about again when the user says so, where one can:
                // the link waits for that rather than ending.
                let ask_again = match (&e, &link.opts.ask_again) {
                    (RemoteError::HostKeyDeclined { .. }, Some(ask)) => Some(ask.clone()),
                    _ => None,
                };
                // The English is the catalogue's, made safe as a whole, as the log keeps it.
                let words = if ask_again.is_some() {
                    e.words()
                } else {
                    e.words_not_retrying()
                };
                link.emit(HostEvent::Disconnected {
                    at_ms: now_ms(),
                    reason: sanitize(&words.english()),
                    summary: sanitize(&e.summary()),
                    retry_at_ms: None,
                    words: Some(DownWords {
                        reason: words.map_verbatim(&sanitize),
                        summary: e.summary_words(),
                    }),
                });
                let Some(ask_again) = ask_again else { return };
                tokio::select! {
                    biased;
                    () = stop.requested() => return,
                    () = ask_again.wait(link.id) => {}
                }
                attempt = 0;
                backoff.restart();
                continue;
            }
            Err(e) => Some(e),
        };
        // The delay is drawn first so the event can say when the next attempt comes.
        let delay = backoff.next_delay();
        if let Some(e) = failure {
            link.disconnected(&e, Some(delay));
        }
        tokio::select! {
            biased;
            () = stop.requested() => return,
            () = tokio::time::sleep(delay) => {}
        }
    }
}

/// Serves one session until it ends: rounds of the channels, each followed by what the link
/// does with their events and its timers, with the waits between on the runtime.
async fn serve(link: &mut Link, mux: &mut Mux, st: &mut SessionState, stop: &Stop) -> Ended {
    let socket = match Watched::of(mux) {
        Ok(socket) => socket,
        Err(e) => {
            return Ended::Dropped(RemoteError::ssh_said(
                Words::new("ssh_context.watch_socket"),
                e,
            ));
        }
    };
    if let Err(e) = link.start_session(mux, st) {
        return Ended::Dropped(e);
    }
    let mut events = Vec::new();
    // Whether the last round ended on events, that is right after reading the socket.
    let mut just_read = false;
    loop {
        if stop.flag.is_set() {
            return Ended::Stopped;
        }
        let deadline = Instant::now() + link.next_wait(mux, st);
        match round(mux, &socket, stop, deadline, just_read, &mut events).await {
            Ok(true) => {}
            Ok(false) => return Ended::Stopped,
            Err(e) => return Ended::Dropped(e),
        }
        just_read = !events.is_empty();
        if let Some(ended) = link.after_round(mux, st, &mut events) {
            return ended;
        }
        // The links share the runtime's thread: a session whose rounds never wait (a timer
        // always due) must still let the others run.
        tokio::task::consume_budget().await;
    }
}

/// Steps the channels until they have events or `deadline` passes, waiting on the runtime
/// between rounds. False when the link was stopped meanwhile. `just_read`: the last round
/// ended on what it read a moment ago.
async fn round(
    mux: &mut Mux,
    socket: &Watched,
    stop: &Stop,
    deadline: Instant,
    just_read: bool,
    events: &mut Vec<(
        crate::remote::link::mux::Slot,
        crate::remote::link::channel_run::RunEvent,
    )>,
) -> Result<bool, RemoteError> {
    // Bytes a job reads without an event of its own (a probe's answer, taken in by another
    // job's read) leave no trace; so after a wait, look at the socket before the jobs do. Right
    // after a round that read, there has been no wait to look after.
    if !just_read
        && wait_socket(
            mux.socket(),
            ssh2::BlockDirections::None,
            Duration::ZERO,
            None,
        ) == Wake::Readable
    {
        mux.woke(Wake::Readable);
    }
    loop {
        if !mux.is_settled() {
            // What the runtime saw is forgotten before libssh2 reads the socket: whatever
            // arrives after those reads wakes the wait below. (A settled round reads nothing:
            // what the runtime saw is kept, and wakes the wait at once.)
            socket.forget();
        }
        mux.round(events)?;
        let now = Instant::now();
        if !events.is_empty() || now >= deadline {
            return Ok(true);
        }
        if mux.is_idle() {
            // Nothing reads the socket now, so silence says nothing about the link.
            tokio::select! {
                biased;
                () = stop.requested() => return Ok(false),
                () = tokio::time::sleep(deadline - now) => {}
            }
            mux.idle_waited();
            return Ok(true);
        }
        // The jobs' last calls may have left bytes in the socket, which the runtime was told
        // to forget: look at what it holds now. Even a channel read can leave some (libssh2
        // stops where its buffer ends inside a packet, see `Mux::round`), and when the
        // receive buffer is full no new edge comes to say so.
        socket.forget();
        let directions = if mux.wants_write() {
            ssh2::BlockDirections::Both
        } else {
            ssh2::BlockDirections::Inbound
        };
        match wait_socket(mux.socket(), directions, Duration::ZERO, None) {
            wake @ (Wake::Readable | Wake::Writable) => {
                mux.woke(wake);
                continue;
            }
            Wake::Timeout | Wake::Stopped => {}
        }
        let interest = if mux.wants_write() {
            Interest::READABLE | Interest::WRITABLE
        } else {
            Interest::READABLE
        };
        let wait = mux.bounded_wait(deadline - now);
        tokio::select! {
            biased;
            () = stop.requested() => return Ok(false),
            ready = socket.ready(interest) => match ready {
                Ok(seen) => {
                    mux.woke(if seen.is_readable() || seen.is_read_closed() || seen.is_error() {
                        Wake::Readable
                    } else {
                        Wake::Writable
                    });
                }
                Err(e) => {
                    return Err(RemoteError::ssh_said(
                        Words::new("ssh_context.wait_socket"),
                        e,
                    ));
                }
            },
            () = tokio::time::sleep(wait) => return Ok(true),
        }
    }
}
