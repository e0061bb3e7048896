//! How the bytes of an SSH session reach a host: a TCP connection, a `ProxyCommand`'s
//! standard input and output, or a `direct-tcpip` channel of a jump host's own session
//! (`ProxyJump`, see `bridge.rs`).
//!
//! libssh2 needs a file descriptor to read and write, so a proxy command gets one end of a
//! Unix socket pair as both its stdin and stdout, and libssh2 the other end; nothing copies
//! in between. Whatever a transport started (the command, the bridge thread and the jump
//! host's session) is ended and reaped when the transport is dropped.

use std::fmt;
use std::io::Read;
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::os::fd::OwnedFd;
use std::os::unix::net::UnixStream;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use crate::remote::bridge::Bridge;
use crate::remote::error::RemoteError;
use crate::remote::sanitize::sanitize;
use crate::remote::target::RemoteHost;

/// How much of a proxy command's stderr is kept for an error message.
const STDERR_KEPT_BYTES: usize = 2_048;
/// How long a failed handshake waits for the proxy command to finish saying why.
const STDERR_WAIT: Duration = Duration::from_millis(500);

/// How a host is reached (`ProxyCommand` / `ProxyJump` in the ssh config).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Proxy {
    /// A TCP connection to the host itself.
    #[default]
    Direct,
    /// A command whose stdin and stdout carry the session.
    Command(ProxyCommand),
    /// A `direct-tcpip` channel of this jump host's session; the jump host carries how it is
    /// reached in turn (the chain `ProxyJump a,b` is `b` reached through `a`).
    Jump(Box<JumpHost>),
}

/// A jump host: the name it was given in `ProxyJump` and what it resolved to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JumpHost {
    /// As written in `ProxyJump` (`bastion`, `admin@bastion:2222`), for messages.
    pub spec: String,
    pub host: RemoteHost,
}

/// A proxy command with its `%` tokens expanded, run by the user's shell. Its text is never
/// printed (it may carry a token), only said to exist.
#[derive(Clone, PartialEq, Eq)]
pub struct ProxyCommand(pub(crate) String);

impl fmt::Debug for ProxyCommand {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ProxyCommand(..)")
    }
}

/// The byte stream a session runs over and whatever keeps it going.
pub(crate) struct Transport {
    /// The descriptor libssh2 reads and writes.
    pub stream: OwnedFd,
    /// Where it leads, for messages: `127.0.0.1:2222`, or that it goes through a proxy.
    pub peer: String,
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

/// Connects to the first address of `host:port` that answers within `timeout`.
pub(crate) fn open_tcp(host: &str, port: u16, timeout: Duration) -> Result<Transport, RemoteError> {
    let addrs: Vec<SocketAddr> = (host, port)
        .to_socket_addrs()
        .map_err(|source| RemoteError::Resolve {
            host: host.to_string(),
            source,
        })?
        .collect();
    let mut last_error = None;
    for addr in &addrs {
        match TcpStream::connect_timeout(addr, timeout.max(Duration::from_millis(1))) {
            Ok(tcp) => {
                let fail = |source| RemoteError::Connect {
                    addr: addr.to_string(),
                    source,
                };
                // Nagle plus delayed ACKs cost ~40 ms per handshake round trip.
                tcp.set_nodelay(true).map_err(fail)?;
                return Ok(Transport {
                    stream: OwnedFd::from(tcp),
                    peer: addr.to_string(),
                    keeper: Keeper::Nothing,
                });
            }
            Err(source) => {
                last_error = Some(RemoteError::Connect {
                    addr: addr.to_string(),
                    source,
                })
            }
        }
    }
    Err(last_error.unwrap_or_else(|| RemoteError::Resolve {
        host: host.to_string(),
        source: std::io::Error::new(std::io::ErrorKind::NotFound, "no address"),
    }))
}

/// Starts `command` with the user's shell (`$SHELL -c "exec ..."`, as OpenSSH does), its
/// stdin and stdout one end of a socket pair; its stderr is kept for messages.
pub(crate) fn open_command(command: &ProxyCommand, host: &str) -> Result<Transport, RemoteError> {
    let fail = |e: std::io::Error| RemoteError::Proxy {
        host: host.to_string(),
        message: format!("cannot start its ProxyCommand: {e}"),
    };
    let (ours, theirs) = UnixStream::pair().map_err(fail)?;
    let theirs_out = theirs.try_clone().map_err(fail)?;
    let shell = std::env::var("SHELL")
        .ok()
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "/bin/sh".to_string());
    let mut child = Command::new(shell)
        .arg("-c")
        .arg(format!("exec {}", command.0))
        .stdin(Stdio::from(OwnedFd::from(theirs)))
        .stdout(Stdio::from(OwnedFd::from(theirs_out)))
        .stderr(Stdio::piped())
        .spawn()
        .map_err(fail)?;
    let said = Arc::new(Mutex::new(Vec::new()));
    if let Some(mut stderr) = child.stderr.take() {
        let keep = Arc::clone(&said);
        // Ends when the command (and whatever it started holding stderr) is gone.
        let _ = std::thread::Builder::new()
            .name("proxy-stderr".to_string())
            .spawn(move || {
                let mut buf = [0u8; 512];
                while let Ok(n @ 1..) = stderr.read(&mut buf) {
                    let mut kept = keep.lock().unwrap_or_else(PoisonError::into_inner);
                    kept.extend_from_slice(&buf[..n]);
                    let over = kept.len().saturating_sub(STDERR_KEPT_BYTES);
                    kept.drain(..over);
                }
            });
    }
    Ok(Transport {
        stream: OwnedFd::from(ours),
        peer: format!("{host} (through its ProxyCommand)"),
        keeper: Keeper::Command(CommandGuard { child, said }),
    })
}

/// A running proxy command: killed and reaped on drop.
pub(crate) struct CommandGuard {
    child: Child,
    said: Arc<Mutex<Vec<u8>>>,
}

impl CommandGuard {
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
