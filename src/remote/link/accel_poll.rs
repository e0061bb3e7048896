//! Hosts whose accelerators are not NVIDIA's, over the same link: which vendor tool a host has
//! (probed once per host, nvidia-smi first), and that tool run at the interval, its output fed
//! to the parsers of `telemetry::accel`. The kernel log is followed as on NVIDIA hosts, so a
//! vendor driver's lines (Moore Threads' `mtgpu`) reach the findings.
//!
//! The probe and every command are fixed text built here from typed values; the probe's answer
//! only selects one of the tools listed here, so nothing remote is ever run. `npu-smi info`,
//! `rocm-smi --json` and the amd-smi script (monitor, or `metric` where it is refused; process
//! list; `amd-smi static` on a connection's first reading, whose facts the link keeps) are polled; `xpu-smi dump` loops by
//! itself and is read as a stream. Output that a parser does not know is reported as `Lost` with
//! "unsupported output from TOOL VERSION" and its first lines, never as a number.

use std::time::{Duration, Instant};

use crate::fleet::HostEvent;
use crate::remote::accel_tools::{Probed, Tool, probe_answer, probe_command};
use crate::remote::error::RemoteError;
use crate::remote::link::channel_run::RunEvent;
use crate::remote::link::flood::OTHER_BUDGET;
use crate::remote::link::mux::{Mux, Slot};
use crate::remote::link::session_state::SessionState;
use crate::remote::link::{Link, Mode};
use crate::telemetry::LostReason;
use crate::telemetry::accel::sample::{apply_facts, to_processes, to_samples};
use crate::telemetry::accel::{AccelError, AccelProcess, AccelReading, UNSUPPORTED_PREFIX};
use crate::telemetry::source::now_ms;
use crate::words::Words;

impl Link {
    /// Starts the session the accelerator way: the probe on a host not yet probed, or its
    /// vendor tool. False when the host is NVIDIA's (the usual session then starts).
    pub(crate) fn accel_start(
        &mut self,
        mux: &mut Mux,
        st: &mut SessionState,
    ) -> Result<bool, RemoteError> {
        match self.accel {
            Probed::Nvidia => Ok(false),
            Probed::NotYet => {
                st.processes_due = None;
                st.accel.probing = true;
                mux.start(
                    Slot::Versions,
                    &probe_command(&self.opts.nvidia_smi)?,
                    OTHER_BUDGET,
                )?;
                Ok(true)
            }
            Probed::Tool(tool) => {
                st.processes_due = None;
                st.accel.tool = Some(tool);
                self.accel_poll(mux, st, tool)?;
                self.start_kernel(mux)?;
                Ok(true)
            }
        }
    }

    fn accel_poll(
        &mut self,
        mux: &mut Mux,
        st: &mut SessionState,
        tool: Tool,
    ) -> Result<(), RemoteError> {
        st.stream_restart_at = None;
        st.accel.lines.clear();
        st.accel.header = None;
        st.accel.preamble = false;
        let follow = self.mode == Mode::Follow;
        let now = Instant::now();
        let processes = st.accel.processes_due.is_none_or(|due| now >= due);
        if processes {
            let every_ms = if self.backlog.looked_at() {
                self.opts.processes_interval_ms
            } else {
                self.opts.processes_unwatched_interval_ms
            };
            st.accel.processes_due = Some(now + Duration::from_millis(every_ms.max(100)));
        }
        let command = match st.accel.facts {
            None => tool.first_command(self.opts.interval_ms, follow, processes),
            Some(_) => tool.command(self.opts.interval_ms, follow, processes),
        };
        match command {
            Some(command) => mux.start(Slot::Stream, &command.to_shell()?, OTHER_BUDGET)?,
            None => self.accel_failed(st, tool, &tool.parse("").err()),
        }
        Ok(())
    }

    /// Handles what the probe or the vendor tool said.
    pub(crate) fn accel_event(
        &mut self,
        slot: Slot,
        event: RunEvent,
        mux: &mut Mux,
        st: &mut SessionState,
    ) -> Result<(), RemoteError> {
        if let RunEvent::Flooded(flood) = &event {
            self.on_flood(st, slot, flood);
            return Ok(());
        }
        if st.accel.probing {
            if slot != Slot::Versions {
                return Ok(());
            }
            match event {
                RunEvent::Line(line) => st.accel.keep(line),
                RunEvent::Exited { .. } | RunEvent::Refused(_) => {
                    let found = probe_answer(&st.accel.lines);
                    self.probed(mux, st, found)?;
                }
                RunEvent::Flooded(_) | RunEvent::Bytes(_) => {}
            }
            return Ok(());
        }
        let (Some(tool), Slot::Stream) = (st.accel.tool, slot) else {
            return Ok(());
        };
        match event {
            RunEvent::Line(line) if tool.streams(self.mode == Mode::Follow) => {
                self.accel_line(st, tool, line)
            }
            RunEvent::Line(line) => st.accel.keep(line),
            RunEvent::Exited { status } => self.accel_exit(st, tool, status),
            RunEvent::Refused(why) => {
                self.notice_once(accel_refused(tool.name(), &why));
                self.accel_next(st, self.opts.telemetry_retry_ms);
            }
            RunEvent::Flooded(_) | RunEvent::Bytes(_) => {}
        }
        Ok(())
    }

    /// The probe answered (or failed: `None`, when the NVIDIA session runs as before, and the
    /// host is probed again on its next session).
    fn probed(
        &mut self,
        mux: &mut Mux,
        st: &mut SessionState,
        found: Option<Probed>,
    ) -> Result<(), RemoteError> {
        st.accel.probing = false;
        st.accel.lines.clear();
        if let Some(found) = found {
            self.accel = found;
        }
        match found {
            Some(Probed::Tool(tool)) => {
                st.accel.tool = Some(tool);
                self.accel_poll(mux, st, tool)?;
                self.start_kernel(mux)
            }
            _ => {
                st.processes_due = Some(Instant::now());
                let remembered = self.accel;
                self.accel = Probed::Nvidia;
                let started = self.start_session(mux, st);
                if remembered == Probed::NotYet {
                    self.accel = Probed::NotYet;
                }
                started
            }
        }
    }

    /// One line of a streaming tool: the header is kept, each data line read under it.
    fn accel_line(&mut self, st: &mut SessionState, tool: Tool, line: String) {
        if line.trim().is_empty() {
            return;
        }
        match tool.section_name(&line) {
            Some("dump") => {
                st.accel.preamble = false;
                st.accel.keep(line);
                let text = std::mem::take(&mut st.accel.lines).join("\n");
                st.accel.facts = Some(tool.facts(&text).unwrap_or_default());
                return;
            }
            Some(_) => {
                st.accel.preamble = true;
                st.accel.keep(line);
                return;
            }
            None if st.accel.preamble => {
                st.accel.keep(line);
                return;
            }
            None => {}
        }
        let Some(header) = st.accel.header.clone() else {
            st.accel.header = Some(line);
            return;
        };
        match tool.parse(&format!("{header}\n{line}")) {
            Ok(mut readings) => {
                if let Some(facts) = &st.accel.facts {
                    apply_facts(&mut readings, facts);
                }
                self.accel_readings(st, readings, None)
            }
            Err(e) => self.accel_failed(st, tool, &Some(e)),
        }
    }

    fn accel_exit(&mut self, st: &mut SessionState, tool: Tool, status: Option<i32>) {
        let lines = std::mem::take(&mut st.accel.lines);
        if !tool.streams(self.mode == Mode::Follow) {
            let text = lines.join("\n");
            match tool.parse(&text) {
                Ok(mut readings) => {
                    if st.accel.facts.is_none() {
                        st.accel.facts = Some(tool.facts(&text).unwrap_or_default());
                    }
                    if let Some(facts) = &st.accel.facts {
                        apply_facts(&mut readings, facts);
                    }
                    let processes = tool.processes(&text);
                    self.accel_readings(st, readings, processes);
                }
                Err(e) => match tool.failure_reason(&text) {
                    Some(reason) => {
                        self.announce(st);
                        self.emit_lost(st, reason, &lines);
                    }
                    None => {
                        let e = match status {
                            Some(0) => e,
                            _ => exit_error(tool, status, &text),
                        };
                        self.accel_failed(st, tool, &Some(e));
                    }
                },
            }
        } else if status != Some(0) {
            let e = exit_error(tool, status, &lines.join("\n"));
            self.accel_failed(st, tool, &Some(e));
        }
        let interval_ms = u64::from(self.opts.interval_ms.max(1));
        self.accel_next(st, interval_ms);
    }

    /// One reading of every accelerator, with the processes the same output lists where the
    /// tool prints them (`None`: not listed, so the host's processes stay unknown).
    fn accel_readings(
        &mut self,
        st: &mut SessionState,
        readings: Vec<AccelReading>,
        processes: Option<Vec<AccelProcess>>,
    ) {
        st.last_lost = None;
        if st.first_driver.is_none() {
            st.first_driver = readings.iter().find_map(|r| r.driver_version.clone());
        }
        self.announce(st);
        let at_ms = now_ms();
        if let Some(processes) = processes {
            let processes = to_processes(&readings, &processes);
            self.emit(HostEvent::Processes { at_ms, processes });
        }
        for gpu in to_samples(&readings) {
            self.emit(HostEvent::Sample { at_ms, gpu });
        }
    }

    /// The tool's output could not be read: the host is reported with the tool, its version
    /// and the first lines (once per distinct failure), never with a guessed number.
    fn accel_failed(&mut self, st: &mut SessionState, tool: Tool, error: &Option<AccelError>) {
        let text = match error {
            Some(e) => e.to_string(),
            None => format!("{UNSUPPORTED_PREFIX}{}", tool.name()),
        };
        self.announce(st);
        self.emit_lost(st, LostReason::Other, &[text]);
    }

    /// The next poll (or, for a stream, its restart) in `after_ms`; a one-shot reading ends.
    fn accel_next(&self, st: &mut SessionState, after_ms: u64) {
        if self.mode == Mode::Follow {
            self.schedule_restart(st, after_ms);
        }
    }

    /// The accelerator path's timers: the probe's deadline and the next poll.
    pub(crate) fn accel_timers(
        &mut self,
        mux: &mut Mux,
        st: &mut SessionState,
    ) -> Result<(), RemoteError> {
        let now = Instant::now();
        if st.accel.probing {
            if now >= st.versions_deadline {
                mux.cancel(Slot::Versions);
                self.probed(mux, st, None)?;
            }
            return Ok(());
        }
        if let Some(tool) = st.accel.tool
            && st.stream_restart_at.is_some_and(|t| now >= t)
            && !mux.running(Slot::Stream)
        {
            self.accel_poll(mux, st, tool)?;
        }
        if self.flood.calmed(now, self.stream_window()) {
            self.emit_or_hold(
                st,
                HostEvent::Flooding {
                    at_ms: now_ms(),
                    detail: None,
                    words: None,
                },
            );
        }
        Ok(())
    }
}

/// A tool that failed and printed nothing the parser knows: its status and first lines.
fn exit_error(tool: Tool, status: Option<i32>, text: &str) -> AccelError {
    let reason = match status {
        Some(code) => format!("exit status {code}"),
        None => "ended without an exit status".to_string(),
    };
    AccelError::unsupported(tool.name(), None, reason, text)
}

/// The host refused to run `tool` (`rocm-smi`, `npu-smi`, ...).
fn accel_refused(tool: &str, why: &Words) -> Words {
    Words::new("link_notice.accel_refused")
        .put("tool", tool)
        .put_words("why", why.clone())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::remote::accel_tools::*;

    fn lines(text: &[&str]) -> Vec<String> {
        text.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn the_probe_answer_selects_only_tools_of_the_list() {
        assert_eq!(
            probe_answer(&lines(&["gpufleet-probe 0"])),
            Some(Probed::Nvidia)
        );
        assert_eq!(
            probe_answer(&lines(&["Welcome!", "gpufleet-probe 1"])),
            Some(Probed::Tool(Tool::Npu))
        );
        assert_eq!(
            probe_answer(&lines(&["gpufleet-probe 4"])),
            Some(Probed::Tool(Tool::Xpu))
        );
        assert_eq!(
            probe_answer(&lines(&["gpufleet-probe 5"])),
            Some(Probed::Tool(Tool::Mthreads))
        );
        assert_eq!(
            probe_answer(&lines(&["gpufleet-probe 6"])),
            Some(Probed::Tool(Tool::Cnmon))
        );
        assert_eq!(
            probe_answer(&lines(&["gpufleet-probe none"])),
            Some(Probed::Nvidia)
        );
        // Anything else is no answer: the NVIDIA session runs as before.
        assert_eq!(probe_answer(&lines(&["gpufleet-probe 9"])), None);
        assert_eq!(probe_answer(&lines(&["gpufleet-probe rm -rf /"])), None);
        assert_eq!(probe_answer(&[]), None);
    }

    #[test]
    fn the_probe_passes_the_configured_nvidia_smi_as_an_argument_only() {
        let command = probe_command("/opt/x y/nvidia-smi; reboot").expect("command");
        assert!(
            command.contains("'/opt/x y/nvidia-smi; reboot'"),
            "{command}"
        );
        assert!(command.starts_with("sh -c "), "{command}");
    }

    #[test]
    fn the_probe_script_finds_the_first_tool_on_the_path() {
        let dir = tempfile::tempdir().expect("dir");
        let tool = dir.path().join("rocm-smi");
        std::fs::write(&tool, "#!/bin/sh\n").expect("write");
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&tool, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        let out = std::process::Command::new("sh")
            .args(["-c", PROBE_SCRIPT, "sh", "no-such-nvidia-smi"])
            .env("PATH", format!("{}:/usr/bin:/bin", dir.path().display()))
            .output()
            .expect("sh");
        let out = String::from_utf8_lossy(&out.stdout).to_string();
        assert_eq!(
            probe_answer(&lines(&[out.trim()])),
            Some(Probed::Tool(Tool::Rocm))
        );
    }

    #[test]
    fn commands_are_fixed_words() {
        let npu = Tool::Npu.command(1_000, true, true).expect("npu");
        assert_eq!(npu.to_shell().expect("shell"), "npu-smi info");
        let xpu = Tool::Xpu.command(2_500, true, true).expect("xpu");
        assert_eq!(
            xpu.to_shell().expect("shell"),
            "xpu-smi dump -d -1 -m 0,1,2,3,4,5 -i 2"
        );
        let amd = Tool::Amd.command(1_000, false, false).expect("amd");
        let amd = amd.to_shell().expect("shell");
        assert!(amd.starts_with("sh -c 'if [ \"$1\" = static ]"), "{amd}");
        assert!(amd.ends_with("exit $s' sh -"), "{amd}");
        let xpu = Tool::Xpu.first_command(2_500, false, true).expect("xpu");
        let xpu = xpu.to_shell().expect("shell");
        assert!(
            xpu.starts_with("sh -c 'echo '\\''gpufleet-xpu-smi discovery"),
            "{xpu}"
        );
        assert!(
            xpu.ends_with("' sh health dump -d -1 -m 0,1,2,3,4,5 -i 2 -n 1"),
            "{xpu}"
        );
        // A followed host's first reading has no health report: its facts hold all along.
        let xpu = Tool::Xpu.first_command(2_500, true, true).expect("xpu");
        let xpu = xpu.to_shell().expect("shell");
        assert!(
            xpu.ends_with("' sh - dump -d -1 -m 0,1,2,3,4,5 -i 2"),
            "{xpu}"
        );
        let first = Tool::Amd.first_command(1_000, false, true).expect("amd");
        assert!(
            first
                .to_shell()
                .expect("shell")
                .ends_with("' sh static process")
        );
        assert_eq!(
            Tool::Npu.first_command(1_000, true, true),
            Tool::Npu.command(1_000, true, true)
        );
        let gmi = Tool::Mthreads.command(1_000, true, true).expect("mthreads");
        assert_eq!(
            gmi.to_shell().expect("shell"),
            "sh -c 'mthreads-gmi \"$@\" 2>/dev/null || mthreads-gmi' sh --query --json"
        );
        let cnmon = Tool::Cnmon.command(1_000, true, true).expect("cnmon");
        assert_eq!(cnmon.to_shell().expect("shell"), "cnmon");
    }
}
