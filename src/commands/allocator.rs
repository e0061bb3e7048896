//! How the process allocates, set once before any thread starts: by `main`, and by the
//! benchmarks that measure the console, so that what they measure is what ships.

/// At most two malloc arenas. glibc gives each thread that allocates under contention an arena
/// of its own (up to eight per core), and every link thread's small allocations then keep a
/// partly used arena resident: at 50 hosts this saves about 2.5 MB (docs/PERFORMANCE.md). The
/// allocations are few per second, so two arenas cost no measurable contention.
pub fn limit_malloc_arenas() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only sets an allocator parameter; callers make it before any thread
    // starts.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, 2);
    }
}
