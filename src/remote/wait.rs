//! Sleeping until the SSH socket has something to do, so an idle link costs no CPU: a thin
//! `poll(2)` over the socket libssh2 reads from.

use std::os::fd::AsRawFd;
use std::os::unix::net::UnixStream;
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
    /// The stop waker became readable: the link is asked to end.
    Stopped,
    /// Bytes (or a hang-up) arrived from the host.
    Readable,
    /// Only the pending output can now be written.
    Writable,
}

/// Waits up to `timeout` for the socket to become readable (or writable when libssh2 has
/// output pending), or for `stop` (a [`StopFlag::waker`]) to become readable.
///
/// [`StopFlag::waker`]: crate::telemetry::source::StopFlag::waker
pub(crate) fn wait_socket(
    socket: &impl AsRawFd,
    directions: BlockDirections,
    timeout: Duration,
    stop: Option<&UnixStream>,
) -> Wake {
    let mut events = POLLIN;
    if matches!(
        directions,
        BlockDirections::Outbound | BlockDirections::Both
    ) {
        events |= POLLOUT;
    }
    let mut fds = [
        PollFd {
            fd: socket.as_raw_fd(),
            events,
            revents: 0,
        },
        PollFd {
            fd: stop.map_or(-1, AsRawFd::as_raw_fd),
            events: POLLIN,
            revents: 0,
        },
    ];
    let nfds = if stop.is_some() { 2 } else { 1 };
    let ready = poll_fds(&mut fds[..nfds], timeout);
    let [socket_fd, stop_fd] = fds;
    if !ready {
        Wake::Timeout
    } else if stop_fd.revents != 0 {
        Wake::Stopped
    } else if socket_fd.revents & !POLLOUT != 0 {
        Wake::Readable
    } else if socket_fd.revents != 0 {
        Wake::Writable
    } else {
        Wake::Timeout
    }
}

/// `timeout` in whole milliseconds for `poll(2)`, rounded up: rounded down, a wait for a timer
/// due in under a millisecond would be a zero timeout, and the caller would spin until it fell
/// due.
fn poll_millis(timeout: Duration) -> std::ffi::c_int {
    let millis = timeout.as_micros().div_ceil(1000);
    std::ffi::c_int::try_from(millis).unwrap_or(std::ffi::c_int::MAX)
}

/// Waits up to `timeout` for `stream` alone to become readable (a stop waker while no socket
/// needs watching). True when it did.
pub(crate) fn wait_readable(stream: &UnixStream, timeout: Duration) -> bool {
    let mut fds = [PollFd {
        fd: stream.as_raw_fd(),
        events: POLLIN,
        revents: 0,
    }];
    poll_fds(&mut fds, timeout) && fds[0].revents != 0
}

/// Waits up to `timeout` until any of `fds` is ready for what it is asked about: each is
/// `(descriptor, readable wanted, writable wanted)`; one asked about nothing is left out.
pub(crate) fn wait_any(fds: &[(&dyn AsRawFd, bool, bool)], timeout: Duration) {
    let mut polled: Vec<PollFd> = fds
        .iter()
        .filter(|(_, read, write)| *read || *write)
        .map(|(fd, read, write)| PollFd {
            fd: fd.as_raw_fd(),
            events: if *read { POLLIN } else { 0 } | if *write { POLLOUT } else { 0 },
            revents: 0,
        })
        .collect();
    poll_fds(&mut polled, timeout);
}

/// One `poll(2)` over `fds` for up to `timeout`; true when any of them is ready.
fn poll_fds(fds: &mut [PollFd], timeout: Duration) -> bool {
    let nfds = NfdsT::try_from(fds.len()).unwrap_or(0);
    // SAFETY: `fds` is a slice of `nfds` valid, initialised pollfds that outlives the call.
    let ready = unsafe { poll(fds.as_mut_ptr(), nfds, poll_millis(timeout)) };
    ready > 0
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::net::{TcpListener, TcpStream};
    use std::time::Instant;

    #[test]
    fn wakes_on_data_and_times_out_without() {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let addr = listener.local_addr().expect("addr");
        let client = TcpStream::connect(addr).expect("connect");
        let (mut server, _) = listener.accept().expect("accept");
        let start = Instant::now();
        assert_eq!(
            wait_socket(
                &client,
                BlockDirections::None,
                Duration::from_millis(50),
                None
            ),
            Wake::Timeout
        );
        assert!(start.elapsed() >= Duration::from_millis(40));
        server.write_all(b"x").expect("write");
        assert_eq!(
            wait_socket(&client, BlockDirections::None, Duration::from_secs(5), None),
            Wake::Readable
        );
    }

    #[test]
    fn a_wait_under_a_millisecond_is_not_a_zero_timeout() {
        assert_eq!(poll_millis(Duration::ZERO), 0);
        assert_eq!(poll_millis(Duration::from_micros(1)), 1);
        assert_eq!(poll_millis(Duration::from_micros(999)), 1);
        assert_eq!(poll_millis(Duration::from_micros(1001)), 2);
        assert_eq!(
            poll_millis(Duration::from_secs(u64::MAX)),
            std::ffi::c_int::MAX
        );
    }

    #[test]
    fn a_stop_ends_the_wait_at_once() {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let client = TcpStream::connect(listener.local_addr().expect("addr")).expect("connect");
        let stop = crate::telemetry::source::StopFlag::default();
        let waker = stop.waker().expect("waker");
        let setter = stop.clone();
        let start = Instant::now();
        let thread = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(50));
            setter.set();
        });
        let woke = wait_socket(
            &client,
            BlockDirections::None,
            Duration::from_secs(30),
            Some(&waker),
        );
        assert_eq!(woke, Wake::Stopped);
        assert!(start.elapsed() < Duration::from_secs(10));
        thread.join().expect("setter");
        // Once set, every later wait ends at once too.
        assert_eq!(
            wait_socket(
                &client,
                BlockDirections::None,
                Duration::from_secs(30),
                Some(&waker)
            ),
            Wake::Stopped
        );
        // A waker asked for after the stop starts out readable.
        let late = stop.waker().expect("late waker");
        assert_eq!(
            wait_socket(
                &client,
                BlockDirections::None,
                Duration::from_secs(30),
                Some(&late)
            ),
            Wake::Stopped
        );
    }
}
