//! What carries an SSH session, and what must live as long as it does. The parts are recursive
//! by nature, so they live together: a [`Connection`] (an authenticated session on its socket)
//! holds a [`Keeper`] of whatever carries it, a proxy command ([`CommandGuard`]) or a jump
//! host's bridge ([`Bridge`]), whose thread owns the jump host's own `Connection` in turn.
//!
//! Whatever a transport started (the command, the bridge thread and the jump host's session)
//! is ended and reaped when it is dropped. Opening them: `proxy.rs` (TCP, `ProxyCommand`) and
//! `bridge.rs` (`ProxyJump`).

use std::net::Shutdown;
use std::os::fd::OwnedFd;
use std::os::unix::net::UnixStream;
use std::process::Child;
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use ssh2::Session;

use crate::remote::sanitize::sanitize;

/// How long a failed handshake waits for the proxy command to finish saying why.
const STDERR_WAIT: Duration = Duration::from_millis(500);

/// A transport with an authenticated session on it.
pub(crate) struct Connection {
    pub session: Session,
    /// The same socket libssh2 uses (a duplicate handle), for waiting on it.
    pub socket: OwnedFd,
    /// The proxy command or jump bridge the session runs over; ended after the session.
    pub keeper: Keeper,
}

/// The byte stream a session runs over and whatever keeps it going.
pub(crate) struct Transport {
    /// The descriptor libssh2 reads and writes.
    pub stream: OwnedFd,
    /// Where it leads, for messages: `127.0.0.1:2222`, or that it goes through a proxy.
    pub peer: crate::words::Words,
    pub keeper: Keeper,
}

/// What must live as long as the session does, and end with it.
pub(crate) enum Keeper {
    Nothing,
    Command(CommandGuard),
    /// Kept for its drop: ends the jump host's session.
    Bridge {
        _running: Bridge,
    },
}

impl Keeper {
    /// What a proxy command wrote to stderr, once it ended or after a short wait.
    pub(crate) fn proxy_said(&mut self) -> Option<String> {
        match self {
            Keeper::Command(guard) => guard.said(),
            _ => None,
        }
    }
}

/// A running proxy command: killed and reaped on drop.
pub(crate) struct CommandGuard {
    child: Child,
    /// The last bytes of its stderr, filled by a reader thread.
    said: Arc<Mutex<Vec<u8>>>,
}

impl CommandGuard {
    pub(crate) fn new(child: Child, said: Arc<Mutex<Vec<u8>>>) -> Self {
        Self { child, said }
    }

    fn said(&mut self) -> Option<String> {
        let deadline = Instant::now() + STDERR_WAIT;
        while Instant::now() < deadline && matches!(self.child.try_wait(), Ok(None)) {
            std::thread::sleep(Duration::from_millis(20));
        }
        // The reader may still hold the last bytes of a command that just ended.
        std::thread::sleep(Duration::from_millis(20));
        let bytes = self.said.lock().unwrap_or_else(PoisonError::into_inner);
        let text = sanitize(String::from_utf8_lossy(&bytes).trim());
        (!text.is_empty()).then_some(text)
    }
}

impl Drop for CommandGuard {
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            let _ = self.child.kill();
        }
        let _ = self.child.wait();
    }
}

/// A running jump bridge (`bridge.rs`); dropping it ends the jump host's session.
pub(crate) struct Bridge {
    /// A handle on the end libssh2 uses, to shut it down.
    near: UnixStream,
    /// The thread that copies, and owns the jump host's [`Connection`].
    thread: Option<JoinHandle<()>>,
}

impl Bridge {
    pub(crate) fn new(near: UnixStream, thread: JoinHandle<()>) -> Self {
        Self {
            near,
            thread: Some(thread),
        }
    }
}

impl Drop for Bridge {
    fn drop(&mut self) {
        let _ = self.near.shutdown(Shutdown::Both);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}
