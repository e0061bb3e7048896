//! `ProxyJump`: a `direct-tcpip` channel of the jump host's session, joined to one end of a
//! Unix socket pair by a thread of its own, while the next session (libssh2) reads and writes
//! the other end.
//!
//! The thread owns the jump host's session (and whatever carries that one in turn) and copies
//! both ways until either side ends; dropping the [`Bridge`] shuts the pair down and joins the
//! thread, which ends the jump host's session and everything under it (`transport.rs`).

use std::io::{ErrorKind, Read, Write};
use std::net::Shutdown;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::net::UnixStream;
use std::time::{Duration, Instant};

use ssh2::{BlockDirections, Channel};

use crate::remote::error::RemoteError;
use crate::remote::transport::{Bridge, Connection};
use crate::remote::wait::wait_any;
use crate::words::Words;

/// What one read may take at once.
const BUFFER_BYTES: usize = 32 * 1024;
const LIBSSH2_ERROR_EAGAIN: i32 = -37;
/// Longest sleep between looks at both sides when nothing wakes the thread.
const MAX_WAIT: Duration = Duration::from_secs(5);

/// Opens a channel from the jump host (`hop`, authenticated, in blocking mode) to
/// `host:port` and starts copying; returns the descriptor for the next session.
pub(crate) fn bridge(
    hop: Connection,
    host: &str,
    port: u16,
    keepalive_interval_s: u32,
) -> Result<(OwnedFd, Bridge), RemoteError> {
    let channel = hop
        .session
        .channel_direct_tcpip(host, port, None)
        .map_err(|e| {
            RemoteError::ssh_said(
                Words::new("ssh_context.jump_channel")
                    .put("host", host)
                    .put("port", port.to_string()),
                e.message(),
            )
        })?;
    let io =
        |e: std::io::Error| RemoteError::ssh_said(Words::new("ssh_context.jump_socket_pair"), e);
    let (near, far) = UnixStream::pair().map_err(io)?;
    far.set_nonblocking(true).map_err(io)?;
    let handle = near.try_clone().map_err(io)?;
    // Keepalives without a reply: they keep a NAT on the way open, and the next session's own
    // probes (which pass through this channel) tell whether the far end lives. A reply would
    // stay on libssh2's packet queue for good (see `ChannelRun::probe`).
    hop.session.set_keepalive(false, keepalive_interval_s);
    hop.session.set_blocking(false);
    let mut copier = Copier {
        hop,
        channel,
        far,
        to_far: Vec::new(),
        to_channel: Vec::new(),
        channel_eof: false,
        far_eof: false,
        next_keepalive: Instant::now(),
    };
    let thread = std::thread::Builder::new()
        .name("ssh-jump".to_string())
        .spawn(move || copier.run())
        .map_err(io)?;
    Ok((OwnedFd::from(near), Bridge::new(handle, thread)))
}

struct Copier {
    hop: Connection,
    channel: Channel,
    /// The bridge's end of the pair.
    far: UnixStream,
    to_far: Vec<u8>,
    to_channel: Vec<u8>,
    channel_eof: bool,
    far_eof: bool,
    next_keepalive: Instant,
}

/// Whether a read or write could move bytes: `Err` ends the bridge.
type Step = Result<bool, ()>;

fn would_block(e: &std::io::Error) -> bool {
    matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::Interrupted)
}

impl Copier {
    fn run(&mut self) {
        let mut buf = vec![0u8; BUFFER_BYTES].into_boxed_slice();
        while let Ok(moved) = self.step(&mut buf) {
            // The next session has gone, and what it sent has been passed on.
            if self.far_eof && self.to_channel.is_empty() {
                break;
            }
            // The target closed, and the next session has been told.
            if self.channel_eof && self.to_far.is_empty() {
                let _ = self.far.shutdown(Shutdown::Write);
            }
            if self.keepalive().is_err() {
                break;
            }
            if !moved {
                self.wait();
            }
        }
        let _ = self.channel.close();
        let _ = self
            .hop
            .session
            .disconnect(None, "gpufleet closing the jump", None);
    }

    fn step(&mut self, buf: &mut [u8]) -> Step {
        let mut moved = false;
        if self.to_far.is_empty() && !self.channel_eof {
            match self.channel.read(buf) {
                Ok(0) => {
                    if self.channel.eof() {
                        self.channel_eof = true;
                        moved = true;
                    }
                }
                Ok(n) => {
                    self.to_far.extend_from_slice(&buf[..n]);
                    moved = true;
                }
                Err(e) if would_block(&e) => {}
                Err(_) => return Err(()),
            }
        }
        if !self.to_far.is_empty() {
            match self.far.write(&self.to_far) {
                Ok(n) => {
                    self.to_far.drain(..n);
                    moved |= n > 0;
                }
                Err(e) if would_block(&e) => {}
                Err(_) => return Err(()),
            }
        }
        if self.to_channel.is_empty() && !self.far_eof {
            match self.far.read(buf) {
                Ok(0) => {
                    self.far_eof = true;
                    moved = true;
                }
                Ok(n) => {
                    self.to_channel.extend_from_slice(&buf[..n]);
                    moved = true;
                }
                Err(e) if would_block(&e) => {}
                Err(_) => return Err(()),
            }
        }
        if !self.to_channel.is_empty() {
            match self.channel.write(&self.to_channel) {
                Ok(n) => {
                    self.to_channel.drain(..n);
                    moved |= n > 0;
                }
                Err(e) if would_block(&e) => {}
                Err(_) => return Err(()),
            }
        }
        Ok(moved)
    }

    fn keepalive(&mut self) -> Result<(), ()> {
        let now = Instant::now();
        if now < self.next_keepalive {
            return Ok(());
        }
        match self.hop.session.keepalive_send() {
            Ok(secs) => self.next_keepalive = now + Duration::from_secs(u64::from(secs.max(1))),
            Err(e) if e.code() == ssh2::ErrorCode::Session(LIBSSH2_ERROR_EAGAIN) => {
                self.next_keepalive = now + Duration::from_millis(100);
            }
            Err(_) => return Err(()),
        }
        Ok(())
    }

    /// Sleeps until the jump host sends something (or can take what waits), the next session
    /// does, or a keepalive falls due.
    fn wait(&self) {
        let outbound = matches!(
            self.hop.session.block_directions(),
            BlockDirections::Outbound | BlockDirections::Both
        );
        // The jump host's socket matters while the channel is read, or while bytes wait for
        // it (its window may open); otherwise only the next session's side does.
        let hop_read = (self.to_far.is_empty() && !self.channel_eof) || !self.to_channel.is_empty();
        let far_read = self.to_channel.is_empty() && !self.far_eof;
        let far_write = !self.to_far.is_empty();
        let timeout = self
            .next_keepalive
            .saturating_duration_since(Instant::now())
            .min(MAX_WAIT);
        wait_any(
            &[
                (self.hop.socket.as_fd(), hop_read, outbound),
                (self.far.as_fd(), far_read, far_write),
            ],
            timeout,
        );
    }
}
