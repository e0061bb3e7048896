//! What one session knows of its host's jobs and the log it follows (`job_follow.rs` acts on
//! it); kept apart so the session's state does not depend on the code that serves it.

/// Missing PIDs remembered as scanned for.
pub(super) const MAX_SCANNED: usize = 64;

/// What a session knows of the host's jobs.
#[derive(Debug, Default)]
pub(crate) struct JobWatch {
    /// The processes the running probe asks about.
    pub(super) probing: Vec<u32>,
    pub(super) probe_lines: Vec<String>,
    /// The processes the last `Jobs` event listed; `None` before the first.
    pub(super) listed: Option<Vec<u32>>,
    /// The process whose log is read, and whether its first chunk has gone out.
    pub(super) following: Option<(u32, bool)>,
    /// The log followed is the config's (`[[hosts.jobs]] log`), not a descriptor of the job:
    /// one that cannot be read yet (the job has not created it) is tried again at the next
    /// listing.
    pub(super) configured: bool,
    /// Processes whose log could not be read, not tried again in this session.
    pub(super) given_up: Vec<u32>,
    /// Log text not yet sent.
    pub(super) pending: Vec<u8>,
    /// The PIDs nvidia-smi's last process list named (the probe asks about more).
    pub(super) reported: Vec<u32>,
    /// Jobs were found through their GPU devices while nvidia-smi's PIDs were not in `/proc`:
    /// the session is in a container (`job_find.rs`).
    pub(super) container: bool,
    /// The GPUs' minor numbers and UUIDs, once `nvidia-smi -q` was asked (maybe empty).
    pub(super) minors: Option<Vec<(u32, String)>>,
    /// Missing PIDs the probe already scanned for (the newest [`MAX_SCANNED`]).
    pub(super) scanned: Vec<u32>,
    /// How each process of the last `Jobs` event was found, and the GPU devices it held.
    pub(super) found: Vec<(u32, crate::fleet::job_found::JobFound, Vec<u32>)>,
    /// The descriptor of the log followed (`None`: the config's log).
    pub(super) following_fd: Option<crate::remote::link::job_find::LogFd>,
    /// How often the running `tail` reads the log, in seconds.
    pub(super) every_s: u32,
    /// The running process list carries the probe of the jobs known (`probing`).
    pub(super) list_probe: bool,
    /// That list's output has reached the probe's part.
    pub(super) past_marker: bool,
}

impl JobWatch {
    /// The process list ended or failed: whatever probe it carried is over.
    pub(super) fn list_ended(&mut self) {
        self.list_probe = false;
        self.past_marker = false;
    }
}
