//! What a session watches besides the output itself: commands that flood (over their budget,
//! see `flood.rs`), and a host that stops answering while its stream should speak.

use std::time::{Duration, Instant};

use crate::fleet::HostEvent;
use crate::remote::link::channel_run::Flood;
use crate::remote::link::evidence::EVIDENCE_BUDGET;
use crate::remote::link::flood::{OTHER_BUDGET, describe, query_budget, stream_window};
use crate::remote::link::mux::{Mux, Slot};
use crate::remote::link::session_state::SessionState;
use crate::remote::link::{Link, Mode};
use crate::remote::sanitize::sanitize;
use crate::telemetry::source::now_ms;
use crate::words::Words;

/// The shortest silence that makes a streaming host unresponsive, whatever the interval (a
/// network's jitter alone can hold a line up a few hundred milliseconds).
const MIN_SILENCE: Duration = Duration::from_secs(1);

impl Link {
    /// A command sent more than its budget; the mux is already closing its channel.
    pub(super) fn on_flood(&mut self, st: &mut SessionState, slot: Slot, flood: &Flood) {
        let (what, budget) = match slot {
            Slot::Stream => ("flood_words.stream", st.stream_budget),
            Slot::Detail => ("flood_words.detail", query_budget(self.details.len())),
            Slot::Processes => ("flood_words.processes", OTHER_BUDGET),
            Slot::Versions => ("flood_words.versions", OTHER_BUDGET),
            Slot::Kernel => ("flood_words.kernel", OTHER_BUDGET),
            Slot::Evidence => ("flood_words.evidence", EVIDENCE_BUDGET),
            Slot::Disk => ("flood_words.disk", OTHER_BUDGET),
            Slot::DeadMan => ("dead_man.flood_what", OTHER_BUDGET),
            // Handled by `job_follow.rs`, which never gets here.
            Slot::JobProbe | Slot::JobLog => ("flood_words.job_log", OTHER_BUDGET),
            Slot::BootId if st.kind_probing => ("host_kind.flood", OTHER_BUDGET),
            Slot::BootId => ("flood_words.boot_id", OTHER_BUDGET),
        };
        if self.flood.flooded(Instant::now()) {
            let words = describe(Words::new(what), flood, budget.lines);
            self.emit_or_hold(
                st,
                HostEvent::Flooding {
                    at_ms: now_ms(),
                    detail: Some(sanitize(&words.english())),
                    words: Some(words),
                },
            );
        }
        match slot {
            Slot::Stream => {
                // Started again a window later: what the host says then is the newest reading.
                if self.mode == Mode::Follow {
                    st.after_flood = true;
                    let window_ms = self.stream_window().as_millis();
                    self.schedule_restart(st, u64::try_from(window_ms).unwrap_or(u64::MAX));
                }
            }
            Slot::Detail => self.detail_answered(st),
            Slot::Versions => {
                st.versions_done = true;
                if !st.detail_pending {
                    self.announce(st);
                }
            }
            Slot::Processes => {
                st.apps_lines.clear();
                st.job.list_ended();
            }
            Slot::JobProbe | Slot::JobLog | Slot::BootId => {}
            Slot::Disk => st.disk_pending = false,
            // Its next push is due at its time anyway.
            Slot::DeadMan => {}
            // What it sent so far goes out, cut; the session does not ask again.
            Slot::Evidence => {
                let event = st
                    .evidence
                    .finish(None, Some("it sent more than its budget"));
                self.emit_or_hold(st, event);
            }
            Slot::Kernel => {
                st.kernel_lines.clear();
                self.notice_once(kernel_flood());
            }
        }
    }

    pub(super) fn stream_window(&self) -> Duration {
        stream_window(self.opts.interval_ms)
    }

    /// How long the host may send nothing while the stream runs: two intervals.
    pub(super) fn silence_limit(&self) -> Duration {
        (2 * Duration::from_millis(u64::from(self.opts.interval_ms))).max(MIN_SILENCE)
    }

    /// Whether silence now means the host is not answering: the stream runs and should speak.
    /// Not for a vendor tool (`accel_poll.rs`): `npu-smi info` may take seconds to answer and
    /// `xpu-smi dump` speaks only every whole second, so keepalives judge those links.
    pub(super) fn watches_silence(&self, mux: &Mux, st: &SessionState) -> bool {
        self.mode == Mode::Follow && st.connected && mux.reading(Slot::Stream) && !st.accel.active()
    }

    /// Says when the host stops answering (nothing at all, keepalive replies included, for two
    /// intervals while the stream runs) and when it answers again.
    pub(super) fn check_silence(&mut self, mux: &Mux, st: &mut SessionState) {
        let silent = mux.silent_for();
        if st.unresponsive {
            if silent < self.silence_limit() {
                st.unresponsive = false;
                self.emit(HostEvent::Responsive { at_ms: now_ms() });
            }
        } else if silent >= self.silence_limit() && self.watches_silence(mux, st) {
            st.unresponsive = true;
            self.emit(HostEvent::Unresponsive {
                at_ms: now_ms(),
                silent_ms: u64::try_from(silent.as_millis()).unwrap_or(u64::MAX),
            });
        }
    }
}

fn kernel_flood() -> Words {
    Words::new("link_notice.kernel_flood")
}
