//! Sleeping until the SSH socket has something to do, so an idle link costs no CPU: a thin
//! `poll(2)` over the socket libssh2 reads from.

use std::net::TcpStream;
use std::os::fd::AsRawFd;
use std::time::Duration;

use ssh2::BlockDirections;

#[repr(C)]
struct PollFd {
    fd: std::ffi::c_int,
    events: std::ffi::c_short,
    revents: std::ffi::c_short,
}

const POLLIN: std::ffi::c_short = 0x1;
const POLLOUT: std::ffi::c_short = 0x4;

#[cfg(target_os = "linux")]
type NfdsT = std::ffi::c_ulong;
#[cfg(not(target_os = "linux"))]
type NfdsT = std::ffi::c_uint;

unsafe extern "C" {
    fn poll(fds: *mut PollFd, nfds: NfdsT, timeout: std::ffi::c_int) -> std::ffi::c_int;
}

/// Why [`wait_socket`] returned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Wake {
    Timeout,
    /// Bytes (or a hang-up) arrived from the host.
    Readable,
    /// Only the pending output can now be written.
    Writable,
}

/// Waits up to `timeout` for the socket to become readable (or writable when libssh2 has
/// output pending).
pub(crate) fn wait_socket(
    socket: &TcpStream,
    directions: BlockDirections,
    timeout: Duration,
) -> Wake {
    let mut events = POLLIN;
    if matches!(
        directions,
        BlockDirections::Outbound | BlockDirections::Both
    ) {
        events |= POLLOUT;
    }
    let mut fds = PollFd {
        fd: socket.as_raw_fd(),
        events,
        revents: 0,
    };
    let millis = std::ffi::c_int::try_from(timeout.as_millis()).unwrap_or(std::ffi::c_int::MAX);
    // SAFETY: `fds` is one valid, initialised pollfd that outlives the call, and nfds is 1.
    let ready = unsafe { poll(&mut fds, 1, millis) };
    if ready <= 0 || fds.revents == 0 {
        Wake::Timeout
    } else if fds.revents & !POLLOUT != 0 {
        Wake::Readable
    } else {
        Wake::Writable
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::net::TcpListener;
    use std::time::Instant;

    #[test]
    fn wakes_on_data_and_times_out_without() {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let addr = listener.local_addr().expect("addr");
        let client = TcpStream::connect(addr).expect("connect");
        let (mut server, _) = listener.accept().expect("accept");
        let start = Instant::now();
        assert_eq!(
            wait_socket(&client, BlockDirections::None, Duration::from_millis(50)),
            Wake::Timeout
        );
        assert!(start.elapsed() >= Duration::from_millis(40));
        server.write_all(b"x").expect("write");
        assert_eq!(
            wait_socket(&client, BlockDirections::None, Duration::from_secs(5)),
            Wake::Readable
        );
    }
}
