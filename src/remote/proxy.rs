//! Opening the bytes of an SSH session to a host: a TCP connection, or a `ProxyCommand`'s
//! standard input and output (a jump host's `direct-tcpip` channel, `ProxyJump`, is
//! `bridge.rs`).
//!
//! libssh2 needs a file descriptor to read and write, so a proxy command gets one end of a
//! Unix socket pair as both its stdin and stdout, and libssh2 the other end; nothing copies
//! in between. The command is killed and reaped when its [`Transport`] is dropped
//! (`transport.rs`).

use std::io::Read;
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::os::fd::OwnedFd;
use std::os::unix::net::UnixStream;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use crate::remote::error::RemoteError;
use crate::remote::host::ProxyCommand;
use crate::remote::transport::{CommandGuard, Keeper, Transport};

/// How much of a proxy command's stderr is kept for an error message.
const STDERR_KEPT_BYTES: usize = 2_048;

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
            Ok(tcp) => return tcp_transport(tcp, addr),
            Err(source) => {
                last_error = Some(RemoteError::Connect {
                    addr: addr.to_string(),
                    source,
                })
            }
        }
    }
    Err(last_error.unwrap_or_else(|| RemoteError::NoAddress {
        host: host.to_string(),
    }))
}

/// [`open_tcp`] as a task: the name looked up and each address tried without holding a
/// thread while it waits (a name that is not an address is looked up on the runtime's
/// blocking pool, as the resolver blocks). The socket comes back blocking, as libssh2 wants it.
pub(crate) async fn open_tcp_async(
    host: &str,
    port: u16,
    timeout: Duration,
) -> Result<Transport, RemoteError> {
    let addrs: Vec<SocketAddr> = tokio::net::lookup_host((host, port))
        .await
        .map_err(|source| RemoteError::Resolve {
            host: host.to_string(),
            source,
        })?
        .collect();
    let mut last_error = None;
    for addr in &addrs {
        let connecting = tokio::net::TcpStream::connect(addr);
        let source =
            match tokio::time::timeout(timeout.max(Duration::from_millis(1)), connecting).await {
                Ok(Ok(tcp)) => match tcp.into_std() {
                    Ok(tcp) => match tcp.set_nonblocking(false) {
                        Ok(()) => return tcp_transport(tcp, addr),
                        Err(e) => e,
                    },
                    Err(e) => e,
                },
                Ok(Err(e)) => e,
                // The words std's `connect_timeout` gives.
                Err(_) => std::io::Error::new(std::io::ErrorKind::TimedOut, "connection timed out"),
            };
        last_error = Some(RemoteError::Connect {
            addr: addr.to_string(),
            source,
        });
    }
    Err(last_error.unwrap_or_else(|| RemoteError::NoAddress {
        host: host.to_string(),
    }))
}

/// A connected TCP socket as a session's transport, without Nagle's delay.
fn tcp_transport(tcp: TcpStream, addr: &SocketAddr) -> Result<Transport, RemoteError> {
    // Nagle plus delayed ACKs cost ~40 ms per handshake round trip.
    tcp.set_nodelay(true)
        .map_err(|source| RemoteError::Connect {
            addr: addr.to_string(),
            source,
        })?;
    Ok(Transport {
        stream: OwnedFd::from(tcp),
        peer: crate::words::Words::new("remote_words.peer").put("addr", addr.to_string()),
        keeper: Keeper::Nothing,
    })
}

/// Starts `command` with the user's shell (`$SHELL -c "exec ..."`, as OpenSSH does), its
/// stdin and stdout one end of a socket pair; its stderr is kept for messages.
pub(crate) fn open_command(command: &ProxyCommand, host: &str) -> Result<Transport, RemoteError> {
    let fail = |e: std::io::Error| RemoteError::Proxy {
        host: host.to_string(),
        message: Box::new(
            crate::words::Words::new("option_words.proxy_start").put("error", e.to_string()),
        ),
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
        peer: crate::words::Words::new("remote_words.through_proxy_command").put("host", host),
        keeper: Keeper::Command(CommandGuard::new(child, said)),
    })
}
