//! Finding the jobs behind a host's GPU processes: one small remote command, built only from
//! the process ids the process list gave (integers, never remote text), asks `/proc` for each
//! one's owner and age (`ps`), the CPU time it has used (`ps -o times=`, whole seconds, for the
//! engine's `input_bound` rule), command line, and whether its stdout and stderr are regular files
//! (a job started as `python train.py > train.log 2>&1`). What comes back is untrusted: each
//! line must name a process asked about, and every text is sanitized and cut.

use crate::fleet::job::{COMMAND_CHARS, JobProcess};
use crate::remote::quote::{CommandError, RemoteCommand};
use crate::remote::sanitize::sanitize;

/// Processes asked about in one probe (a host has a handful of GPU processes).
pub(crate) const MAX_PROBED: usize = 16;
/// Characters kept of a log's path.
const PATH_CHARS: usize = 256;
/// Digits a CPU time may have (`u64` seconds).
const CPU_DIGITS: usize = 19;

/// Which of a process's descriptors is its log.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LogFd {
    Stdout,
    Stderr,
}

impl LogFd {
    pub(crate) fn number(self) -> u8 {
        match self {
            LogFd::Stdout => 1,
            LogFd::Stderr => 2,
        }
    }

    fn word(self) -> &'static str {
        match self {
            LogFd::Stdout => "stdout",
            LogFd::Stderr => "stderr",
        }
    }
}

/// A process found, with the descriptor its log can be read through.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Found {
    pub(crate) process: JobProcess,
    pub(crate) log_fd: Option<LogFd>,
}

/// The probe for `pids` (at most [`MAX_PROBED`], each asked once). Per process it prints
/// `PID ps ELAPSED USER`, `PID cpu SECONDS`, `PID cmd ARGS` and `PID fd1 PATH` / `PID fd2 PATH` for a descriptor
/// that is a regular file; a process gone meanwhile prints nothing.
pub(crate) fn probe_command(pids: &[u32]) -> Result<String, CommandError> {
    let mut list: Vec<u32> = pids.to_vec();
    list.sort_unstable();
    list.dedup();
    list.truncate(MAX_PROBED);
    let words: Vec<String> = list.iter().map(u32::to_string).collect();
    // Only integers are spliced in; `$(...)` output is joined onto one line and cut, and
    // printf's `%s` prints it as data.
    let script = format!(
        "for p in {}; do d=/proc/$p; [ -d $d ] || continue; \
         printf '%s ps %s\\n' $p \"$(ps -o etimes=,user= -p $p 2>/dev/null | head -c 128 | tr -s '\\n\\r\\t ' '    ')\"; \
         printf '%s cpu %s\\n' $p \"$(ps -o times= -p $p 2>/dev/null | head -c 32 | tr -d '\\n\\r\\t ')\"; \
         printf '%s cmd %s\\n' $p \"$(head -c 2048 $d/cmdline 2>/dev/null | tr '\\000\\n\\r' '   ')\"; \
         for f in 1 2; do [ -f $d/fd/$f ] && printf '%s fd%s %s\\n' $p $f \"$(readlink $d/fd/$f 2>/dev/null | head -c 1024 | tr '\\n\\r' '  ')\"; done; \
         done; true",
        words.join(" ")
    );
    RemoteCommand::new("sh").arg("-c").arg(script).to_shell()
}

/// The processes the probe's `lines` describe, in the order of `pids`; lines about anything
/// else are ignored.
pub(crate) fn parse_probe(pids: &[u32], lines: &[String]) -> Vec<Found> {
    let mut found: Vec<Found> = Vec::new();
    for line in lines {
        let mut words = line.splitn(3, ' ');
        let (Some(pid), Some(key)) = (words.next(), words.next()) else {
            continue;
        };
        let rest = words.next().unwrap_or("").trim();
        let Ok(pid) = pid.parse::<u32>() else {
            continue;
        };
        if !pids.contains(&pid) {
            continue;
        }
        let i = match found.iter().position(|f| f.process.pid == pid) {
            Some(i) => i,
            None => {
                if found.len() >= MAX_PROBED {
                    continue;
                }
                found.push(Found {
                    process: JobProcess {
                        pid,
                        user: None,
                        elapsed_s: None,
                        cpu_s: None,
                        command: String::new(),
                        log: None,
                    },
                    log_fd: None,
                });
                found.len() - 1
            }
        };
        let entry = &mut found[i];
        match key {
            "ps" => {
                let mut fields = rest.split_whitespace();
                entry.process.elapsed_s = fields.next().and_then(|s| s.parse().ok());
                entry.process.user = fields.next().map(|u| cut(&sanitize(u), 64));
            }
            "cpu" => entry.process.cpu_s = cpu_seconds(rest),
            "cmd" => entry.process.command = cut(&sanitize(rest), COMMAND_CHARS),
            "fd1" | "fd2" => {
                let fd = if key == "fd1" {
                    LogFd::Stdout
                } else {
                    LogFd::Stderr
                };
                // Stdout first: `2>&1` makes both the same file.
                if entry.log_fd.is_none() {
                    entry.log_fd = Some(fd);
                    entry.process.log = Some(format!(
                        "{}: {}",
                        fd.word(),
                        cut(&sanitize(rest), PATH_CHARS)
                    ));
                }
            }
            _ => {}
        }
    }
    found.sort_by_key(|f| pids.iter().position(|p| *p == f.process.pid));
    found
}

/// `ps -o times=`'s answer: whole seconds, digits only; anything else is no answer.
fn cpu_seconds(text: &str) -> Option<u64> {
    let ok =
        !text.is_empty() && text.len() <= CPU_DIGITS && text.bytes().all(|b| b.is_ascii_digit());
    ok.then(|| text.parse().ok()).flatten()
}

fn cut(text: &str, chars: usize) -> String {
    text.chars().take(chars).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_probe_holds_only_the_integers_it_was_given() {
        let command = probe_command(&[42, 7, 42]).expect("command");
        assert!(command.starts_with("sh -c '"), "{command}");
        assert!(command.contains("for p in 7 42;"), "{command}");
    }

    #[test]
    fn probe_lines_become_jobs_and_lines_about_other_processes_are_ignored() {
        let lines: Vec<String> = [
            "1307 ps 15 root",
            "1307 cpu 14",
            "1307 cmd python3 hf_long.py ",
            "1307 fd1 /root/run/hf_long.log",
            "1307 fd2 /root/run/hf_long.log",
            "999 cmd rm -rf /",
            "x cmd junk",
            "1307 cmd \u{1b}]0;title\u{7}again",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let found = parse_probe(&[1307], &lines);
        assert_eq!(found.len(), 1);
        let job = &found[0];
        assert_eq!(job.process.elapsed_s, Some(15));
        assert_eq!(job.process.user.as_deref(), Some("root"));
        assert_eq!(job.process.cpu_s, Some(14));
        assert_eq!(job.log_fd, Some(LogFd::Stdout));
        assert_eq!(
            job.process.log.as_deref(),
            Some("stdout: /root/run/hf_long.log")
        );
        // The last word wins, and no escape survives.
        assert!(!job.process.command.contains('\u{1b}'));
    }

    #[test]
    fn a_cpu_time_is_whole_seconds_or_nothing() {
        for (answer, want) in [
            ("0", Some(0)),
            ("3671", Some(3671)),
            ("", None),
            ("-5", None),
            ("1:02", None),
            ("12 34", None),
            ("99999999999999999999", None),
        ] {
            let lines = vec![format!("7 cpu {answer}")];
            let found = parse_probe(&[7], &lines);
            assert_eq!(found[0].process.cpu_s, want, "{answer:?}");
        }
    }
}
