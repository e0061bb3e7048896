//! How the process allocates, set once before any thread starts: by `main`, and by the
//! benchmarks that measure the console, so that what they measure is what ships.

/// One malloc arena. glibc gives each thread that allocates under contention an arena of its
/// own (up to eight per core), and every thread's small allocations then keep a partly used
/// arena resident: two arenas instead of eight saved about 2.5 MB at 50 hosts, one instead of
/// two another ~0.5 MB, the free space a second arena keeps (docs/PERFORMANCE.md, "Memory").
/// The allocations are few per second (the links gather their wake-ups), so sharing one arena
/// costs no measurable contention.
pub fn limit_malloc_arenas() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only sets an allocator parameter; callers make it before any thread
    // starts.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, 1);
    }
}
