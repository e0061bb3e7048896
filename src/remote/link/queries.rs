//! What the telemetry stream and the full query say besides samples, and what the link does
//! when each run ends: fields an older driver refuses are dropped and the query run again, a
//! failure text becomes the host's `Lost` (once, its lines gathered), and a stream that ends
//! is started again.

use std::time::Instant;

use crate::fleet::HostEvent;
use crate::remote::error::RemoteError;
use crate::remote::link::mux::{Mux, Slot};
use crate::remote::link::sanitize_sample::sanitize_sample;
use crate::remote::link::session_state::{MAX_GPUS, SessionState, keep};
use crate::remote::link::{Link, Mode};
use crate::remote::sanitize::sanitize;
use crate::telemetry::LostReason;
use crate::telemetry::smi_csv::{classify_failure, parse_gpu_line, rejected_field};
use crate::telemetry::source::now_ms;
use crate::words::Words;

impl Link {
    pub(super) fn on_detail_line(&mut self, st: &mut SessionState, line: String) {
        match parse_gpu_line(self.detail.layout(), &line) {
            Ok(mut gpu) => {
                sanitize_sample(&mut gpu);
                if st.first_driver.is_none() {
                    st.first_driver = gpu.driver_version.as_deref().map(str::to_string);
                }
                if self.details.len() < MAX_GPUS || self.details.contains_key(&gpu.index) {
                    self.details.insert(gpu.index, gpu);
                }
            }
            Err(_) => {
                if let Some(field) = rejected_field(&line) {
                    st.detail_run.rejected = Some(field);
                }
                keep(&mut st.detail_run.other_lines, line);
            }
        }
    }

    pub(super) fn on_detail_exit(
        &mut self,
        mux: &mut Mux,
        st: &mut SessionState,
        status: Option<i32>,
    ) -> Result<(), RemoteError> {
        let run = std::mem::take(&mut st.detail_run);
        if let Some(field) = &run.rejected
            && self.drop_rejected(field)
        {
            return self.start_detail(mux, st);
        }
        let output = run.other_lines.join("\n");
        // Unreadable GPUs are the stream's to report; the kept details stay meanwhile.
        if status != Some(0) && classify_failure(&output).is_none() {
            self.notice_once(detail_failed(status, &output));
        }
        self.detail_answered(st);
        Ok(())
    }

    /// The session's first full query is over, one way or another.
    pub(super) fn detail_answered(&mut self, st: &mut SessionState) {
        if st.detail_pending {
            st.detail_pending = false;
            if st.versions_done {
                self.announce(st);
            }
        }
    }

    /// Forgets a field this host's nvidia-smi refused, in every list that has it (an old
    /// driver refuses it in any query). True when the command that asked for it can run again
    /// without it; false when the refused name was never asked for, so a rerun would fail alike.
    fn drop_rejected(&mut self, field: &str) -> bool {
        let dropped = self.detail.remove(field) | self.stream.remove(field);
        if dropped {
            self.rejected.insert(field.to_string());
            self.notice_once_per(field, field_unknown(field));
        }
        // Both queries may have been refused at once; the second finds the field gone already.
        dropped || self.rejected.contains(field)
    }

    pub(super) fn on_stream_line(
        &mut self,
        mux: &mut Mux,
        st: &mut SessionState,
        line: String,
    ) -> Result<(), RemoteError> {
        if st.run.failure.is_some() {
            keep(&mut st.run.failure_lines, line);
            return Ok(());
        }
        match parse_gpu_line(&st.stream_layout, &line) {
            Ok(mut gpu) => {
                sanitize_sample(&mut gpu);
                if st.first_driver.is_none() {
                    st.first_driver = gpu.driver_version.as_deref().map(str::to_string);
                }
                st.last_lost = None;
                st.run.sampled = true;
                self.emit_sample(st, now_ms(), gpu);
                if st.detail_on_sample {
                    st.detail_on_sample = false;
                    if !mux.running(Slot::Detail) {
                        self.start_detail(mux, st)?;
                    }
                }
            }
            Err(_) => {
                if let Some(reason) = classify_failure(&line) {
                    st.run.failure = Some(reason);
                    st.run.failure_since = Some(Instant::now());
                    st.run.failure_lines.push(line);
                } else if let Some(field) = rejected_field(&line) {
                    st.run.rejected = Some(field);
                    keep(&mut st.run.other_lines, line);
                } else {
                    self.notice_once(odd_line(&line));
                    keep(&mut st.run.other_lines, line);
                }
            }
        }
        Ok(())
    }

    pub(super) fn on_stream_exit(
        &mut self,
        mux: &mut Mux,
        st: &mut SessionState,
        status: Option<i32>,
    ) -> Result<(), RemoteError> {
        let run = std::mem::take(&mut st.run);
        if let Some(field) = &run.rejected
            && self.drop_rejected(field)
        {
            // An older driver: probe again without the field and keep the shorter list.
            return self.start_stream(mux, st);
        }
        if let Some(reason) = run.failure {
            if !run.lost_sent {
                self.emit_lost(st, reason, &run.failure_lines);
            }
        } else if status != Some(0) && run.sampled {
            // A stream that was reading the GPUs ended without saying why (killed on the host,
            // say): not yet a fault. The next run, one interval on, reads them or names the
            // failure; only a run that never read a sample raises `nvml_error`.
            if self.mode == Mode::Follow {
                self.schedule_restart(st, self.opts.interval_ms.into());
            }
            return Ok(());
        } else if status != Some(0) {
            let mut raw = run.other_lines;
            raw.push(match status {
                Some(code) => format!("nvidia-smi exited with status {code}"),
                None => "nvidia-smi ended without an exit status".to_string(),
            });
            // 127: the shell found no such command (POSIX, "Command Search and Execution").
            let reason = if status == Some(127) {
                LostReason::SmiMissing
            } else {
                LostReason::Other
            };
            self.emit_lost(st, reason, &raw);
        }
        let retry_ms = if status == Some(0) {
            self.opts.interval_ms.into()
        } else {
            self.opts.telemetry_retry_ms
        };
        if self.mode == Mode::Follow {
            self.schedule_restart(st, retry_ms);
        }
        Ok(())
    }

    /// Reports the GPUs unreadable, once per distinct failure in a session (a retry that fails
    /// the same way stays quiet).
    pub(super) fn emit_lost(&self, st: &mut SessionState, reason: LostReason, lines: &[String]) {
        let raw = lines
            .iter()
            .map(|l| sanitize(l))
            .collect::<Vec<_>>()
            .join("\n");
        let key = (reason, raw.clone());
        if st.last_lost.as_ref() == Some(&key) {
            return;
        }
        st.last_lost = Some(key);
        st.evidence.want();
        self.emit_or_hold(
            st,
            HostEvent::Lost {
                at_ms: now_ms(),
                reason,
                raw,
            },
        );
    }
}

/// `exit status N`, or that there was none.
pub(crate) fn exit_status(status: Option<i32>) -> Words {
    match status {
        Some(code) => Words::new("link_notice.exit_status").put("code", code.to_string()),
        None => Words::new("link_notice.no_exit_status"),
    }
}

/// The full query failed; `output` is what nvidia-smi printed.
fn detail_failed(status: Option<i32>, output: &str) -> Words {
    Words::new("link_notice.detail_failed")
        .put_words("why", exit_status(status))
        .put("output", output)
}

fn field_unknown(field: &str) -> Words {
    Words::new("link_notice.field_unknown").put("field", field)
}

fn odd_line(line: &str) -> Words {
    Words::new("link_notice.odd_line").put("line", line)
}
