//! Sleeping until the SSH socket has something to do, so an idle link costs no CPU: `poll(2)`
//! over the socket libssh2 reads from, through rustix's safe wrapper.

use std::os::fd::{AsFd, BorrowedFd};
use std::os::unix::net::UnixStream;
use std::time::Duration;

use rustix::event::{PollFd, PollFlags, Timespec};
use ssh2::BlockDirections;

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
    socket: &impl AsFd,
    directions: BlockDirections,
    timeout: Duration,
    stop: Option<&UnixStream>,
) -> Wake {
    let mut events = PollFlags::IN;
    if matches!(
        directions,
        BlockDirections::Outbound | BlockDirections::Both
    ) {
        events |= PollFlags::OUT;
    }
    // The stop socket, when there is none, is the session's socket again, left out of the
    // poll by the slice's length (a wait is made for every reading: no list is allocated).
    let stop_fd = stop.map_or(socket.as_fd(), AsFd::as_fd);
    let mut both = [
        PollFd::new(socket, events),
        PollFd::new(&stop_fd, PollFlags::IN),
    ];
    let fds = &mut both[..if stop.is_some() { 2 } else { 1 }];
    if !poll_fds(fds, timeout) {
        return Wake::Timeout;
    }
    let socket_ready = fds[0].revents();
    if fds.get(1).is_some_and(|f| !f.revents().is_empty()) {
        Wake::Stopped
    } else if !(socket_ready - PollFlags::OUT).is_empty() {
        Wake::Readable
    } else if !socket_ready.is_empty() {
        Wake::Writable
    } else {
        Wake::Timeout
    }
}

/// `timeout` for `poll(2)`, rounded up to whole milliseconds: rounded down, a wait for a timer
/// due in under a millisecond would be a zero timeout, and the caller would spin until it fell
/// due. (poll counts in milliseconds; rustix passes the rest on as they are.)
fn poll_timeout(timeout: Duration) -> Timespec {
    let millis = timeout.as_micros().div_ceil(1000);
    // poll(2) takes at most i32::MAX milliseconds (~24 days); longer waits wake and wait again.
    let millis = millis.min(i32::MAX as u128) as i64;
    Timespec {
        tv_sec: millis / 1000,
        tv_nsec: (millis % 1000) * 1_000_000,
    }
}

/// Waits up to `timeout` for `stream` alone to become readable (a stop waker while no socket
/// needs watching). True when it did.
pub(crate) fn wait_readable(stream: &UnixStream, timeout: Duration) -> bool {
    let mut fds = [PollFd::new(stream, PollFlags::IN)];
    poll_fds(&mut fds, timeout) && !fds[0].revents().is_empty()
}

/// Waits up to `timeout` until any of `fds` is ready for what it is asked about: each is
/// `(descriptor, readable wanted, writable wanted)`; one asked about nothing is left out.
pub(crate) fn wait_any(fds: &[(BorrowedFd<'_>, bool, bool)], timeout: Duration) {
    let mut polled: Vec<PollFd> = fds
        .iter()
        .filter(|(_, read, write)| *read || *write)
        .map(|(fd, read, write)| {
            let mut events = PollFlags::empty();
            if *read {
                events |= PollFlags::IN;
            }
            if *write {
                events |= PollFlags::OUT;
            }
            PollFd::from_borrowed_fd(*fd, events)
        })
        .collect();
    poll_fds(&mut polled, timeout);
}

/// One `poll(2)` over `fds` for up to `timeout`; true when any of them is ready. An interrupted
/// or failed poll counts as nothing ready (the callers wait again or look at their timers).
fn poll_fds(fds: &mut [PollFd<'_>], timeout: Duration) -> bool {
    rustix::event::poll(fds, Some(&poll_timeout(timeout))).is_ok_and(|ready| ready > 0)
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
        let ms = |t: Timespec| t.tv_sec * 1000 + t.tv_nsec / 1_000_000;
        assert_eq!(ms(poll_timeout(Duration::ZERO)), 0);
        assert_eq!(ms(poll_timeout(Duration::from_micros(1))), 1);
        assert_eq!(ms(poll_timeout(Duration::from_micros(999))), 1);
        assert_eq!(ms(poll_timeout(Duration::from_micros(1001))), 2);
        assert_eq!(
            ms(poll_timeout(Duration::from_secs(u64::MAX))),
            i64::from(i32::MAX)
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
