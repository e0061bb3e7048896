//! The memory only start-up used, handed back once the fleet streams.
//!
//! Starting up runs code that never runs again (argument and config parsing, the first
//! handshakes' key exchange, provider and alert set-up): the kernel keeps those pages of the
//! binary and its libraries resident, and malloc keeps the heap that start-up freed. Measured on
//! the watcher at 50 hosts, about 15 MB of its RSS were such code pages, of which under 1 MB were
//! touched again once every host streamed.
//!
//! So, half a minute after every watched host has been heard from (its first reading, or its
//! link given up on; by then the first full queries' parsing is over and freed), or a minute and
//! a half after start, whichever comes first, the process hands back, once:
//! - the heap malloc holds free (`malloc_trim(0)`), and
//! - the resident pages of its private read-only file mappings (code and constants of the
//!   binary and its libraries: `madvise(MADV_PAGEOUT)`). The kernel reclaims only the pages no
//!   other process maps; a page used again later is read back from the file, as any page on
//!   first use. Nothing is written and no contents change. The same mappings are marked
//!   `MADV_RANDOM` first, so such a read brings back that page alone, not the 128 KB the kernel
//!   would read around it (which brought back 5 of the 7 MB handed back within a minute).
//!
//! Where either call does not exist (not Linux with glibc, a kernel before 5.4), nothing happens.

use std::time::{Duration, Instant};

use crate::fleet::Fleet;
use crate::fleet::host::Link;

/// How long after every host was heard from the pages are handed back.
const AFTER_SETTLED: Duration = Duration::from_secs(30);
/// The longest wait from start before the pages are handed back anyway.
const AT_MOST: Duration = Duration::from_secs(90);

/// When the start-up pages go back: once, after the fleet settles.
#[derive(Debug)]
pub struct StartUpPages {
    started: Instant,
    settled_at: Option<Instant>,
    handed_back: bool,
}

/// What one hand-back did: the process's resident memory just before and just after it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HandedBack {
    pub rss_before_kib: u64,
    pub rss_after_kib: u64,
}

impl HandedBack {
    /// How many KiB the hand-back freed (none when RSS went up meanwhile).
    pub fn freed_kib(&self) -> u64 {
        self.rss_before_kib.saturating_sub(self.rss_after_kib)
    }
}

impl Default for StartUpPages {
    fn default() -> Self {
        Self::new()
    }
}

impl StartUpPages {
    pub fn new() -> Self {
        Self {
            started: Instant::now(),
            settled_at: None,
            handed_back: false,
        }
    }

    /// Hands the start-up pages back the first time the fleet has settled (see the module's
    /// words); `None` before that and every time after.
    pub fn hand_back_when_settled(&mut self, fleet: &Fleet) -> Option<HandedBack> {
        if self.handed_back {
            return None;
        }
        if self.settled_at.is_none() && settled(fleet) {
            self.settled_at = Some(Instant::now());
        }
        let due = self
            .settled_at
            .is_some_and(|at| at.elapsed() >= AFTER_SETTLED)
            || self.started.elapsed() >= AT_MOST;
        if !due {
            return None;
        }
        self.handed_back = true;
        Some(hand_back())
    }
}

/// Every host still watched has sent a reading or has had its link given up on at least once.
fn settled(fleet: &Fleet) -> bool {
    fleet
        .hosts
        .iter()
        .filter(|h| !h.retired)
        .all(|h| h.last_sample_ms.is_some() || matches!(h.link, Link::Down { .. }))
}

/// Hands back the free heap and the resident pages of private read-only file mappings now.
pub fn hand_back() -> HandedBack {
    let rss_before_kib = resident_kib();
    trim_heap();
    if let Ok(maps) = std::fs::read_to_string("/proc/self/maps") {
        for range in read_only_file_mappings(&maps) {
            page_out(range);
        }
    }
    HandedBack {
        rss_before_kib,
        rss_after_kib: resident_kib(),
    }
}

/// The address ranges of `/proc/PID/maps` lines that map a file privately without write
/// access (`r-xp`, `r--p`): code and constants. Anonymous, writable, shared and special
/// (`[vdso]`, `[heap]`) mappings are left out.
fn read_only_file_mappings(maps: &str) -> Vec<std::ops::Range<usize>> {
    maps.lines()
        .filter_map(|line| {
            let mut fields = line.split_whitespace();
            let range = fields.next()?;
            let perms = fields.next()?;
            let path = fields.nth(3)?;
            let perms = perms.as_bytes();
            let private_read_only =
                perms.len() == 4 && perms[0] == b'r' && perms[1] == b'-' && perms[3] == b'p';
            if !private_read_only || !path.starts_with('/') {
                return None;
            }
            let (start, end) = range.split_once('-')?;
            let start = usize::from_str_radix(start, 16).ok()?;
            let end = usize::from_str_radix(end, 16).ok()?;
            (start < end).then_some(start..end)
        })
        .collect()
}

/// The process's resident set in KiB (`/proc/self/statm`'s second field), 0 when unreadable.
fn resident_kib() -> u64 {
    let pages = std::fs::read_to_string("/proc/self/statm")
        .ok()
        .and_then(|s| s.split_whitespace().nth(1)?.parse::<u64>().ok())
        .unwrap_or(0);
    pages * page_size() as u64 / 1024
}

fn page_size() -> usize {
    // SAFETY: sysconf only reads a system constant.
    let size = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    usize::try_from(size).unwrap_or(4096)
}

/// Returns the heap malloc holds free to the kernel (glibc's `malloc_trim(0)`; nothing elsewhere):
/// after a passing peak, such as a report bundle a watcher made.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
pub fn trim_heap() {
    // SAFETY: malloc_trim only returns free memory of malloc's own to the kernel; it is safe to
    // call from any thread at any time.
    unsafe {
        libc::malloc_trim(0);
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
pub fn trim_heap() {}

#[cfg(target_os = "linux")]
fn page_out(range: std::ops::Range<usize>) {
    let (at, len) = (range.start as *mut libc::c_void, range.end - range.start);
    // SAFETY: MADV_RANDOM and MADV_PAGEOUT are advice on a mapping this process holds (read from
    // its own maps): the first stops read-around on its faults, the second lets the kernel
    // reclaim its clean pages, which later reads fault back in unchanged. A range unmapped
    // meanwhile makes the calls fail with ENOMEM, which is ignored.
    unsafe {
        libc::madvise(at, len, libc::MADV_RANDOM);
        libc::madvise(at, len, libc::MADV_PAGEOUT);
    }
}

#[cfg(not(target_os = "linux"))]
fn page_out(_range: std::ops::Range<usize>) {}

#[cfg(test)]
mod tests {
    use super::*;

    // Lines of a real /proc/PID/maps of the gpufleet watcher (2026-12-06, x86-64, glibc 2.41).
    const MAPS: &str = "\
562d15009000-562d15098000 r--p 00000000 fd:00 1054 /work/target/release/gpufleet
562d15098000-562d15a4c000 r-xp 0008f000 fd:00 1054 /work/target/release/gpufleet
562d15a4c000-562d15d06000 r--p 00a43000 fd:00 1054 /work/target/release/gpufleet
562d15d06000-562d15d7f000 rw-p 00cfd000 fd:00 1054 /work/target/release/gpufleet
562d16e3a000-562d17550000 rw-p 00000000 00:00 0                          [heap]
7f3c1c000000-7f3c1c021000 rw-p 00000000 00:00 0 
7f3c2a2c0000-7f3c2a3a0000 r--p 00000000 fd:00 2233 /usr/lib/x86_64-linux-gnu/libcrypto.so.3
7f3c2a3a0000-7f3c2a63e000 r-xp 000e0000 fd:00 2233 /usr/lib/x86_64-linux-gnu/libcrypto.so.3
7f3c2a80e000-7f3c2a80f000 rw-s 00000000 00:05 77 /dev/zero (deleted)
7ffc040c9000-7ffc040ea000 rw-p 00000000 00:00 0                          [stack]
7ffc041d8000-7ffc041da000 r-xp 00000000 00:00 0                          [vdso]
";

    #[test]
    fn only_private_read_only_file_mappings_are_handed_back() {
        let ranges = read_only_file_mappings(MAPS);
        assert_eq!(
            ranges,
            vec![
                0x562d15009000..0x562d15098000,
                0x562d15098000..0x562d15a4c000,
                0x562d15a4c000..0x562d15d06000,
                0x7f3c2a2c0000..0x7f3c2a3a0000,
                0x7f3c2a3a0000..0x7f3c2a63e000,
            ]
        );
    }

    /// Resident pages of `[start, start + len)` by `mincore`.
    fn resident_pages(start: *mut libc::c_void, len: usize) -> usize {
        let pages = len.div_ceil(page_size());
        let mut vec = vec![0u8; pages];
        // SAFETY: the range is a live mapping of the test's; vec holds one byte a page.
        let rc = unsafe { libc::mincore(start, len, vec.as_mut_ptr()) };
        assert_eq!(rc, 0, "mincore failed");
        vec.iter().filter(|b| **b & 1 == 1).count()
    }

    /// Whether `/proc/self/smaps` shows the mapping starting at `at` advised for random reads
    /// (`rr` among its `VmFlags`, the kernel's mark of `MADV_RANDOM`).
    fn random_read_advised(at: *mut libc::c_void) -> bool {
        let smaps = std::fs::read_to_string("/proc/self/smaps").expect("smaps");
        let header = format!("{:x}-", at as usize);
        let mut lines = smaps.lines().skip_while(|l| !l.starts_with(&header));
        assert!(lines.next().is_some(), "the mapping is listed in smaps");
        // Each mapping's block ends with its VmFlags line.
        lines
            .find(|l| l.starts_with("VmFlags:"))
            .is_some_and(|l| l.split_whitespace().any(|flag| flag == "rr"))
    }

    #[test]
    fn a_read_only_file_mapping_read_once_is_no_longer_resident_and_reads_the_same() {
        use std::io::Write;
        use std::os::fd::AsRawFd;
        // On disk (not a tmpfs, whose pages could only go to swap).
        let dir = tempfile::tempdir_in(env!("CARGO_MANIFEST_DIR")).expect("dir");
        let path = dir.path().join("pages");
        let len = 64 * page_size();
        let content: Vec<u8> = (0..len).map(|i| (i % 251) as u8).collect();
        let mut file = std::fs::File::create(&path).expect("create");
        file.write_all(&content).expect("write");
        file.sync_all().expect("sync");
        drop(file);
        let file = std::fs::File::open(&path).expect("open");
        // SAFETY: a private read-only mapping of a file the test owns, unmapped below.
        let at = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ,
                libc::MAP_PRIVATE,
                file.as_raw_fd(),
                0,
            )
        };
        assert_ne!(at, libc::MAP_FAILED);
        // SAFETY: `at` maps `len` readable bytes.
        let mapped = unsafe { std::slice::from_raw_parts(at.cast::<u8>(), len) };
        assert_eq!(mapped, &content[..]);
        assert_eq!(
            resident_pages(at, len),
            64,
            "read once, every page is resident"
        );

        let handed = hand_back();
        assert!(handed.rss_before_kib > 0);
        assert!(
            random_read_advised(at),
            "the mapping is advised for random reads (no read-around) after the hand-back"
        );
        // The kernel may keep a page a moment (a folio another CPU still holds in its batch,
        // one locked by writeback elsewhere); asked again, it goes.
        for _ in 0..20 {
            if resident_pages(at, len) < 8 {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
            hand_back();
        }
        let kept = resident_pages(at, len);
        if kept >= 8 {
            // Whether clean file pages can be reclaimed at all depends on the file system and
            // the kernel (tmpfs without swap keeps them). What the hand-back must do is what
            // the kernel does when asked directly: if a direct MADV_PAGEOUT reclaims them, the
            // hand-back missed the mapping.
            // SAFETY: advice on the test's own live mapping.
            unsafe { libc::madvise(at, len, libc::MADV_PAGEOUT) };
            let kept_when_asked_directly = resident_pages(at, len);
            assert!(
                kept_when_asked_directly >= 8,
                "the pages read once are handed back: {kept} of 64 still resident, \
                 yet {kept_when_asked_directly} after a direct MADV_PAGEOUT"
            );
            eprintln!(
                "note: this kernel kept {kept_when_asked_directly} of 64 clean file pages even when \
                 asked directly; checked the advice and the contents only"
            );
        }
        assert_eq!(
            mapped,
            &content[..],
            "the contents read the same afterwards"
        );
        // SAFETY: unmaps the mapping made above; `mapped` is not used after it.
        unsafe { libc::munmap(at, len) };
    }
}
