//! A new libssh2 session's cleared pages, given back to the kernel until libssh2 writes to them.
//!
//! libssh2 allocates each session as one block of about 83 KB (two packet buffers of 35,000
//! bytes and an 8 KB banner buffer among them) and clears it with `memset`, which makes every
//! page of it resident, though a session streaming a few lines a second writes to few of them.
//! Right after the session is made, before anything else can touch it, every whole page of the
//! block that holds only zeros is handed back with `madvise(MADV_DONTNEED)`: the block's
//! contents are unchanged (a page given back reads as zeros again), and a page libssh2 writes
//! later is made resident again by the kernel. Pages with any other byte are left as they are.

use ssh2::Session;

/// Gives back the whole pages of `session`'s block that hold only zeros; the number of bytes
/// given back. Call it right after `Session::new`, before the session is shared or used.
pub(crate) fn release_cleared_pages(session: &Session) -> usize {
    let block = session_block(session);
    match block {
        Some((start, len)) => release_zero_pages(start, len),
        None => 0,
    }
}

/// Where libssh2's session block lies: its address and the size malloc gave it.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn session_block(session: &Session) -> Option<(usize, usize)> {
    let raw = session.raw();
    let start = std::ptr::from_ref(&*raw).cast::<libc::c_void>().cast_mut();
    // SAFETY: libssh2 made the session with its default allocator, `malloc` (ssh2 passes no
    // allocator of its own), so `start` is a live block of malloc's; the guard keeps the
    // session from being used elsewhere while its size is read.
    let len = unsafe { libc::malloc_usable_size(start) };
    Some((start as usize, len))
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn session_block(_session: &Session) -> Option<(usize, usize)> {
    None
}

/// Hands back each run of whole pages inside `[start, start + len)` that hold only zeros.
#[cfg(target_os = "linux")]
fn release_zero_pages(start: usize, len: usize) -> usize {
    // SAFETY: sysconf has no preconditions.
    let page = match usize::try_from(unsafe { libc::sysconf(libc::_SC_PAGESIZE) }) {
        Ok(page) if page.is_power_of_two() => page,
        _ => return 0,
    };
    let first = start.div_ceil(page) * page;
    let end = (start + len) / page * page;
    let mut released = 0;
    let mut run: Option<usize> = None;
    let mut at = first;
    while at < end {
        // SAFETY: the page lies wholly inside the live block `[start, start + len)`, which
        // nothing else reads or writes while this runs (see `release_cleared_pages`).
        let bytes = unsafe { std::slice::from_raw_parts(at as *const u8, page) };
        let zero = bytes.iter().all(|b| *b == 0);
        match (zero, run) {
            (true, None) => run = Some(at),
            (false, Some(from)) => {
                released += give_back(from, at - from);
                run = None;
            }
            _ => {}
        }
        at += page;
    }
    if let Some(from) = run {
        released += give_back(from, end - from);
    }
    released
}

#[cfg(not(target_os = "linux"))]
fn release_zero_pages(_start: usize, _len: usize) -> usize {
    0
}

/// `madvise(MADV_DONTNEED)` on pages that hold only zeros: private anonymous memory given back
/// reads as zeros, so what the block holds is unchanged. The bytes given back (0 on refusal).
#[cfg(target_os = "linux")]
fn give_back(from: usize, len: usize) -> usize {
    // SAFETY: `[from, from + len)` is page-aligned, inside a live malloc block of private
    // anonymous memory, and holds only zeros, which is what the pages read as afterwards.
    let said = unsafe { libc::madvise(from as *mut libc::c_void, len, libc::MADV_DONTNEED) };
    if said == 0 { len } else { 0 }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// How many whole pages of `[start, start + len)` are resident (`mincore`).
    fn resident_pages(start: usize, len: usize) -> usize {
        let page = 4096;
        let first = start.div_ceil(page) * page;
        let end = (start + len) / page * page;
        let mut flags = vec![0u8; (end - first) / page];
        // SAFETY: the range is page-aligned and mapped (a live malloc block); `flags` holds a
        // byte per page.
        let said =
            unsafe { libc::mincore(first as *mut libc::c_void, end - first, flags.as_mut_ptr()) };
        assert_eq!(said, 0);
        flags.iter().filter(|f| **f & 1 == 1).count()
    }

    #[test]
    fn a_new_session_gives_back_most_of_its_cleared_block_and_still_works() {
        let sessions: Vec<Session> = (0..16).map(|_| Session::new().expect("session")).collect();
        for session in &sessions {
            let (start, len) = session_block(session).expect("block");
            // libssh2 cleared the whole block: every page of it is resident.
            let before = resident_pages(start, len);
            assert!(before >= 19, "{before}");
            let released = release_cleared_pages(session);
            // Its two 35,000-byte packet buffers and its banner buffer are all zeros.
            assert!(released >= 64 * 1024, "{released}");
            let after = resident_pages(start, len);
            assert!(after <= before - 16, "{before} -> {after}");
        }
        // What libssh2 set when it made the session is still there: it still answers.
        for session in &sessions {
            assert!(session.is_blocking());
            assert_eq!(session.timeout(), 0);
        }
    }

    #[test]
    fn pages_with_data_are_kept_and_read_back_unchanged() {
        let page = 4096;
        let mut block = vec![0u8; page * 8];
        let base = block.as_ptr() as usize;
        let aligned = base.div_ceil(page) * page - base;
        block[aligned + page * 2 + 17] = 7;
        block[aligned + page * 5] = 9;
        let released = release_zero_pages(base, block.len());
        assert!(released >= page * 4, "{released}");
        assert_eq!(block[aligned + page * 2 + 17], 7);
        assert_eq!(block[aligned + page * 5], 9);
        assert_eq!(block.iter().map(|b| u32::from(*b)).sum::<u32>(), 16);
        block[aligned] = 1;
        assert_eq!(block[aligned], 1);
    }
}
