//! One authenticated session in non-blocking mode carrying a few concurrent remote commands
//! (the telemetry stream, periodic queries, the kernel log), with keepalives and a silence
//! clock that tells a dead link from a quiet one.
//!
//! Every command runs tied to its channel (`end_with_channel.rs`), so closing a channel, or the session,
//! ends it on the host. A job that is cancelled or floods is closed gracefully (the host must
//! see the close) and drained apart from the slots, which are free again at once.

use std::os::fd::OwnedFd;
use std::os::unix::net::UnixStream;
use std::time::{Duration, Instant};

use ssh2::{BlockDirections, Session};

use crate::remote::error::RemoteError;
use crate::remote::link::channel_run::{Budget, ChannelRun, RunEvent, StepError};
use crate::remote::link::end_with_channel::tied;
use crate::remote::quote::CommandError;
use crate::remote::transport::{Connection, Keeper};
use crate::remote::wait::{Wake, wait_readable, wait_socket};

/// Longest wait while a job opens, starts or closes a channel (see `pump`).
const TRANSIENT_WAIT: Duration = Duration::from_millis(20);
/// What one channel read may take at once (libssh2 hands out at most one packet's worth; a
/// larger answer takes a few reads). A tick of 8 GPUs is ~1.5 KiB. One buffer per thread, not per
/// link: the buffer is zeroed, so resident, and a thousand links would hold 8 MB of it.
const READ_BUFFER_BYTES: usize = 8 * 1024;
/// A round of `pump` hands its events over once it has this many, so a flooding channel cannot
/// grow them without bound before the link looks at them.
const MAX_PUMP_EVENTS: usize = 1_024;
/// Closing jobs kept until the host confirms; past this many the oldest is dropped unconfirmed.
const MAX_DRAINING: usize = 8;
/// Shells that end or are refused without being asked to before a session gives up on them and
/// runs its periodic queries on a channel each, as it did before shells.
const MAX_SHELL_FAILURES: u8 = 2;

/// What a channel is for; at most one job per slot runs at a time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Slot {
    Versions,
    /// The full `--query-gpu` (names, totals, limits) that completes the stream's lines.
    Detail,
    Stream,
    Processes,
    Kernel,
    /// `nvidia-smi -q`, once, at the session's first fault (`evidence.rs`).
    Evidence,
    /// What the GPU processes run and where their output goes (`job_find.rs`).
    JobProbe,
    /// A job's log, its recent part and then what it adds (`job_follow.rs`).
    JobLog,
    /// The kernel's boot id, once at connect (a new one ends the faults of the boot before).
    BootId,
    /// `df -P -k` of `/`, `/dev/shm` and the jobs' directories, once a minute (`disk.rs`).
    Disk,
}

const SLOTS: [Slot; 10] = [
    Slot::Versions,
    Slot::Detail,
    Slot::Stream,
    Slot::Processes,
    Slot::Kernel,
    Slot::Evidence,
    Slot::JobProbe,
    Slot::JobLog,
    Slot::BootId,
    Slot::Disk,
];

thread_local! {
    /// The read buffer of every job stepped on this thread (a round steps one job at a time and
    /// never waits in between), so a read does not clear a fresh one each time.
    static READ_BUFFER: std::cell::RefCell<Box<[u8]>> =
        std::cell::RefCell::new(vec![0u8; READ_BUFFER_BYTES].into_boxed_slice());
}

pub(crate) struct Mux {
    session: Session,
    socket: OwnedFd,
    jobs: [Option<ChannelRun>; SLOTS.len()],
    /// Jobs closing on gpufleet's account; what they still say is not reported.
    draining: Vec<ChannelRun>,
    /// What the job being stepped says, handed to the round's events after each step; kept
    /// empty between steps so that its room is not allocated again for every reading.
    stepped: Vec<RunEvent>,
    /// The last round stepped every job and none could move, and nothing has touched the
    /// session since: until the socket wakes, another round would only repeat those reads.
    settled: bool,
    last_rx: Instant,
    next_keepalive: Instant,
    keepalive_interval: Duration,
    /// Whether the periodic queries run through a long-lived shell each (`run_shell.rs`).
    shells: bool,
    shell_failures: u8,
    /// Declared last: dropped after the session and its channels.
    _keeper: Keeper,
}

impl Mux {
    pub(crate) fn new(connection: Connection, keepalive_interval_s: u32) -> Self {
        connection.session.set_blocking(false);
        let now = Instant::now();
        Self {
            session: connection.session,
            socket: connection.socket,
            jobs: [const { None }; SLOTS.len()],
            draining: Vec::new(),
            stepped: Vec::new(),
            settled: false,
            last_rx: now,
            next_keepalive: now,
            keepalive_interval: Duration::from_secs(u64::from(keepalive_interval_s.max(1))),
            shells: false,
            shell_failures: 0,
            _keeper: connection.keeper,
        }
    }

    /// Runs the periodic queries (the full query, the process list and the probe of its
    /// processes) of this session through a long-lived shell per slot instead of a channel per
    /// run: for a followed link, whose session asks them again and again.
    pub(crate) fn keep_query_channels(&mut self) {
        self.shells = true;
    }

    /// Starts `command` (a quoted command line) in `slot`, tied to its channel, stopping
    /// whatever ran there; `budget` bounds what it may send. A periodic query goes to its
    /// slot's shell when the session keeps those ([`Mux::keep_query_channels`]).
    pub(crate) fn start(
        &mut self,
        slot: Slot,
        command: &str,
        budget: Budget,
    ) -> Result<(), CommandError> {
        if self.shells && matches!(slot, Slot::Detail | Slot::Processes | Slot::JobProbe) {
            self.settled = false;
            if let Some(job) = self.jobs[slot as usize].as_mut()
                && job.ask(command, budget)
            {
                return Ok(());
            }
            let mut shell = ChannelRun::shell(budget)?;
            if shell.ask(command, budget) {
                self.cancel(slot);
                self.jobs[slot as usize] = Some(shell);
                return Ok(());
            }
        }
        let job = ChannelRun::new(tied(command)?, budget);
        self.cancel(slot);
        self.jobs[slot as usize] = Some(job);
        self.settled = false;
        Ok(())
    }

    /// As [`Mux::start`], for output handed on as it comes ([`ChannelRun::pass_bytes`]): a training
    /// log, which its reader cuts at `\r` and `\n` itself.
    pub(crate) fn start_passing_bytes(
        &mut self,
        slot: Slot,
        command: &str,
        budget: Budget,
    ) -> Result<(), CommandError> {
        self.start(slot, command, budget)?;
        if let Some(job) = self.jobs[slot as usize].as_mut() {
            job.pass_bytes();
        }
        Ok(())
    }

    /// Whether a command runs in `slot` (a shell between runs is not running one).
    pub(crate) fn running(&self, slot: Slot) -> bool {
        self.jobs[slot as usize]
            .as_ref()
            .is_some_and(ChannelRun::is_busy)
    }

    /// Whether the command in `slot` is up and its output awaited.
    pub(crate) fn reading(&self, slot: Slot) -> bool {
        self.jobs[slot as usize]
            .as_ref()
            .is_some_and(ChannelRun::is_reading)
    }

    /// Closes the channel of `slot` (its command ends on the host); nothing more is reported
    /// from it.
    pub(crate) fn cancel(&mut self, slot: Slot) {
        if let Some(job) = self.jobs[slot as usize].take() {
            self.drain(job);
        }
        self.settled = false;
    }

    fn drain(&mut self, mut job: ChannelRun) {
        job.stop();
        if job.is_done() {
            return;
        }
        if self.draining.len() >= MAX_DRAINING {
            self.draining.remove(0);
        }
        self.draining.push(job);
    }

    /// How long nothing has arrived while something was listening.
    pub(crate) fn silent_for(&self) -> Duration {
        self.last_rx.elapsed()
    }

    /// Steps every job until none can move, then waits up to `max_wait` for the socket unless
    /// events are ready; `stop` (the link's stop waker) cuts the wait short. A session-level
    /// failure ends the link. The blocking form of [`Mux::round`], for a one-shot reading on
    /// the caller's thread; a followed link waits on the runtime instead (`task.rs`).
    pub(crate) fn pump(
        &mut self,
        max_wait: Duration,
        out: &mut Vec<(Slot, RunEvent)>,
        stop: Option<&UnixStream>,
    ) -> Result<(), RemoteError> {
        let deadline = Instant::now() + max_wait;
        // A keepalive reply is swallowed by whichever job reads next, without a trace; so look
        // at the socket just before the jobs do. (Later rounds follow a wake-up that counted.)
        if wait_socket(&self.socket, BlockDirections::None, Duration::ZERO, None) == Wake::Readable
        {
            self.woke(Wake::Readable);
        }
        loop {
            self.round(out)?;
            let now = Instant::now();
            if !out.is_empty() || now >= deadline {
                return Ok(());
            }
            if self.is_idle() {
                // Nothing reads the socket now, so silence says nothing about the link.
                if let Some(stop) = stop {
                    wait_readable(stop, deadline - now);
                } else {
                    std::thread::sleep(deadline - now);
                }
                self.idle_waited();
                return Ok(());
            }
            let wait = self.bounded_wait(deadline - now);
            match wait_socket(&self.socket, self.session.block_directions(), wait, stop) {
                Wake::Timeout | Wake::Stopped => return Ok(()),
                wake => self.woke(wake),
            }
        }
    }

    /// Steps every job until none can move, without waiting: what they said goes to `out`.
    /// Hands over early once `out` holds `MAX_PUMP_EVENTS`, so a flooding channel cannot grow
    /// it without bound.
    pub(crate) fn round(&mut self, out: &mut Vec<(Slot, RunEvent)>) -> Result<(), RemoteError> {
        let mut rechecked = false;
        // One read pulls what the socket holds into libssh2's queues; after it (`pulled`), a
        // reading job steps only when its queue has input, instead of each asking the socket
        // again, in this pass or the next, until a call of another kind (opening, starting or
        // closing a channel) may have left bytes unread. The stream, which has something
        // almost every time the socket wakes, is the one that pulls while it reads. (`pulled`:
        // this round's last call into libssh2 was a channel read.)
        //
        // A pull does not always empty the socket: libssh2 reads into a 35,000-byte buffer,
        // and with an AEAD cipher (ChaCha20-Poly1305, AES-GCM) it stops as soon as the buffer
        // ends inside a packet, whatever the socket still holds. Under a burst (a flood, a
        // long process list) bytes stay behind, and no new edge may ever tell the runtime of
        // them (a full receive buffer stops the host sending); so the task looks at the
        // socket before every wait (`task.rs`).
        let mut pulled = false;
        loop {
            let mut progressed = false;
            let slots = if self.settled { &[][..] } else { &SLOTS[..] };
            let stream_reads = self.jobs[Slot::Stream as usize]
                .as_ref()
                .is_some_and(ChannelRun::is_reading);
            for &slot in slots {
                let Some(job) = self.jobs[slot as usize].as_mut() else {
                    continue;
                };
                let reading = job.is_reading();
                if reading {
                    let pulls = !pulled && (slot == Slot::Stream || !stream_reads);
                    if !pulls && !job.has_queued_input() {
                        continue;
                    }
                }
                let mut events = std::mem::take(&mut self.stepped);
                let stepped =
                    READ_BUFFER.with_borrow_mut(|buf| job.step(&self.session, buf, &mut events));
                // A job that read and reads on made a read its last call; one that started,
                // closed or finished may have stopped short of the socket's end.
                pulled = reading && job.is_reading();
                let finished = match stepped {
                    Ok(moved) => {
                        progressed |= moved;
                        job.is_done()
                    }
                    Err(StepError::Refused(why)) => {
                        events.push(RunEvent::Refused(why));
                        true
                    }
                    Err(StepError::Session(e)) => return Err(e),
                };
                if finished {
                    if job.is_shell() {
                        self.shell_ended();
                    }
                    self.jobs[slot as usize] = None;
                } else if job.is_quiet() || (!self.shells && job.is_shell() && !job.is_busy()) {
                    // It flooded and is closing, or it is a shell the session gave up on and its
                    // run is over: its slot is free for the next one.
                    if let Some(job) = self.jobs[slot as usize].take() {
                        self.drain(job);
                    }
                }
                out.extend(events.drain(..).map(|e| (slot, e)));
                self.stepped = events;
            }
            if !self.draining.is_empty() {
                pulled = false;
            }
            progressed |= self.step_draining()?;
            if progressed {
                self.last_rx = Instant::now();
                if out.len() >= MAX_PUMP_EVENTS {
                    self.settled = false;
                    return Ok(());
                }
                rechecked = false;
                // Another job's read may have queued packets for one already stepped.
                continue;
            }
            // A job stepped later in the round may have pulled input for a reading job
            // stepped before it; libssh2 holds it now, so the socket will not say so.
            if !rechecked
                && self
                    .jobs
                    .iter()
                    .flatten()
                    .any(|j| j.is_reading() && j.has_queued_input())
            {
                rechecked = true;
                continue;
            }
            self.settled = !self.transient();
            return Ok(());
        }
    }

    /// Whether the last round left every job unable to move and nothing has touched the
    /// session since: the next round reads nothing until the socket wakes.
    pub(crate) fn is_settled(&self) -> bool {
        self.settled
    }

    /// A shell ended or was refused without gpufleet asking: after a few, this session runs its
    /// queries on a channel each (a host whose `sh` cannot run the script, a server that
    /// refuses long-lived channels).
    fn shell_ended(&mut self) {
        self.shell_failures = self.shell_failures.saturating_add(1);
        if self.shell_failures >= MAX_SHELL_FAILURES && self.shells {
            self.shells = false;
            // The shells between runs close now; one with a run in hand, once it is over.
            for slot in SLOTS {
                if self.jobs[slot as usize]
                    .as_ref()
                    .is_some_and(|j| j.is_shell() && !j.is_busy())
                {
                    self.cancel(slot);
                }
            }
        }
    }

    /// A job opening, starting or closing a channel waits for a reply another job's read may
    /// already have taken in; such a job is stepped again soon, not only when the socket wakes.
    fn transient(&self) -> bool {
        self.jobs.iter().flatten().any(|j| !j.is_reading()) || !self.draining.is_empty()
    }

    /// `wait`, cut to `TRANSIENT_WAIT` while a job opens, starts or closes a channel.
    pub(crate) fn bounded_wait(&self, wait: Duration) -> Duration {
        if self.transient() {
            wait.min(TRANSIENT_WAIT)
        } else {
            wait
        }
    }

    /// No command running and nothing draining: nothing reads the socket (a shell between runs
    /// waits for gpufleet, not for the host).
    pub(crate) fn is_idle(&self) -> bool {
        self.jobs.iter().flatten().all(|j| !j.is_busy()) && self.draining.is_empty()
    }

    /// A wait while idle ended: silence during it says nothing about the link.
    pub(crate) fn idle_waited(&mut self) {
        self.last_rx = Instant::now();
    }

    /// The socket woke the link: bytes arrived (the link is alive) or pending output can go.
    pub(crate) fn woke(&mut self, wake: Wake) {
        match wake {
            Wake::Readable => {
                self.last_rx = Instant::now();
                self.settled = false;
            }
            Wake::Writable => self.settled = false,
            Wake::Timeout | Wake::Stopped => {}
        }
    }

    /// The session's socket, for waiting on it.
    pub(crate) fn socket(&self) -> &OwnedFd {
        &self.socket
    }

    /// Whether the session runs straight over TCP (not over a proxy command's or a jump
    /// bridge's socket pair).
    pub(crate) fn is_direct(&self) -> bool {
        matches!(self._keeper, Keeper::Nothing)
    }

    /// Whether libssh2 waits to write (as well as to read).
    pub(crate) fn wants_write(&self) -> bool {
        matches!(
            self.session.block_directions(),
            BlockDirections::Outbound | BlockDirections::Both
        )
    }

    /// Steps the closing jobs, dropping what they say; true when any moved.
    fn step_draining(&mut self) -> Result<bool, RemoteError> {
        let mut progressed = false;
        let mut failed = None;
        let mut ignored = Vec::new();
        let session = &self.session;
        self.draining.retain_mut(|job| {
            let stepped = READ_BUFFER.with_borrow_mut(|buf| job.step(session, buf, &mut ignored));
            let keep = match stepped {
                Ok(moved) => {
                    progressed |= moved;
                    !job.is_done()
                }
                // The channel went away on its own: nothing left to close.
                Err(StepError::Refused(_)) => false,
                Err(StepError::Session(e)) => {
                    failed = Some(e);
                    false
                }
            };
            ignored.clear();
            keep
        });
        match failed {
            Some(e) => Err(e),
            None => Ok(progressed),
        }
    }

    /// Probes the host when the link has been quiet for a keepalive interval: a channel opened
    /// and closed again (see [`ChannelRun::probe`]), whose answers keep `silent_for` low on a healthy
    /// link even when every command is quiet. A busy link (the stream speaks every interval)
    /// is never probed.
    pub(crate) fn keepalive(&mut self) -> Result<(), RemoteError> {
        let now = Instant::now();
        if now < self.next_keepalive {
            return Ok(());
        }
        self.next_keepalive = now + self.keepalive_interval;
        if self.silent_for() >= self.keepalive_interval {
            if self.draining.len() >= MAX_DRAINING {
                self.draining.remove(0);
            }
            self.draining.push(ChannelRun::probe());
            self.settled = false;
        }
        Ok(())
    }

    /// Time until the next keepalive is due.
    pub(crate) fn until_keepalive(&self) -> Duration {
        self.next_keepalive
            .saturating_duration_since(Instant::now())
    }

    /// Says goodbye without waiting for the host to answer.
    pub(crate) fn close(self) {
        self.session.set_blocking(false);
        let _ = self
            .session
            .disconnect(None, "gpufleet closing the link", None);
    }
}
