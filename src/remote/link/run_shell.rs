//! A long-lived remote shell that runs the periodic queries (the full query, the process list)
//! one after another on one channel, instead of a channel of their own per run.
//!
//! Opening a channel, starting a command and closing the channel again take about ten packets
//! each way and a few wake-ups of the link, for an answer of one or two packets; at 200 hosts
//! the periodic runs were a sixth of what the links cost. The shell reads a request on its
//! standard input (the command line, already quoted by [`RemoteCommand`], then a line holding
//! only the session's end marker), runs it with its input from `/dev/null` and stderr merged,
//! and prints the marker with the exit status: `<marker> <status>`, on a line of its own.
//!
//! The marker is random per shell, so no output of a command (a process's command line, say)
//! can end a run early by accident. A request is refused here (the caller then runs the command
//! the old way, on a channel of its own) when it holds a NUL or a line equal to the marker.
//!
//! When the channel closes (the link ends, gpufleet quits), the shell reads the end of its input
//! and exits once the command in hand ends; the queries it runs are one-shot and end by
//! themselves.
//!
//! [`RemoteCommand`]: crate::remote::quote::RemoteCommand

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};

use crate::remote::quote::{CommandError, RemoteCommand};

/// The shell's script: fixed text on one line (a csh login shell would not take a newline
/// inside quotes), with the marker as `$1`. It gathers lines until one equals the marker, runs
/// what it gathered in a subshell (so no command can change the shell's own state), and prints
/// an empty line (dropped by the reader; it ends an unended last line) and the end line.
const SCRIPT: &str = "n=$(printf '\\nx'); n=${n%x}; c=; while IFS= read -r l; do \
if [ \"$l\" = \"$1\" ]; then (eval \"$c\") </dev/null 2>&1; s=$?; \
printf '\\n%s %s\\n' \"$1\" \"$s\"; c=; else c=\"$c$l$n\"; fi; done";

/// One shell's end marker and the request it is working on.
pub(crate) struct RunShell {
    marker: String,
    /// The request (command and marker line) not yet written whole.
    request: Vec<u8>,
    written: usize,
    /// A run was asked for and its end line has not come back.
    busy: bool,
}

impl RunShell {
    pub(crate) fn new() -> Self {
        // `RandomState` is seeded from the operating system's randomness once per process and
        // moved on per instance: a fresh 64-bit value per shell without another crate.
        let mut hasher = RandomState::new().build_hasher();
        hasher.write_u64(0x6770_7566_6c65_6574);
        Self {
            marker: format!("gpufleet-end-{:016x}", hasher.finish()),
            request: Vec::new(),
            written: 0,
            busy: false,
        }
    }

    /// The command line that starts the shell.
    pub(crate) fn command(&self) -> Result<String, CommandError> {
        RemoteCommand::new("sh")
            .args(["-c", SCRIPT, "sh", self.marker.as_str()])
            .to_shell()
    }

    /// Takes `command` (a quoted command line) as the next run; false, with nothing changed,
    /// when a run is in hand or the shell could not tell the command from its end.
    pub(crate) fn ask(&mut self, command: &str) -> bool {
        if self.busy || command.contains('\0') || command.lines().any(|l| l == self.marker) {
            return false;
        }
        self.request.clear();
        self.request.extend_from_slice(command.as_bytes());
        self.request.push(b'\n');
        self.request.extend_from_slice(self.marker.as_bytes());
        self.request.push(b'\n');
        self.written = 0;
        self.busy = true;
        true
    }

    /// What of the request is still to be written.
    pub(crate) fn unwritten(&self) -> &[u8] {
        &self.request[self.written..]
    }

    pub(crate) fn wrote(&mut self, n: usize) {
        self.written = (self.written + n).min(self.request.len());
        if self.written == self.request.len() {
            // Not kept between runs: a probe's script is a few KB, and a shell waits ~30 s.
            self.request = Vec::new();
            self.written = 0;
        }
    }

    pub(crate) fn is_busy(&self) -> bool {
        self.busy
    }

    /// When `line` is the end line of the run in hand: the run is over, with the status it
    /// names (`None` if that is not a number).
    pub(crate) fn end_of_run(&mut self, line: &[u8]) -> Option<Option<i32>> {
        if !self.busy {
            return None;
        }
        let rest = line.strip_prefix(self.marker.as_bytes())?;
        let status = rest.strip_prefix(b" ")?;
        self.busy = false;
        Some(
            std::str::from_utf8(status)
                .ok()
                .and_then(|s| s.parse().ok()),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{BufRead, BufReader, Write};
    use std::process::{Command, Stdio};

    #[test]
    fn each_shell_has_its_own_marker_and_a_one_line_script() {
        let a = RunShell::new();
        let b = RunShell::new();
        assert_ne!(a.marker, b.marker);
        assert!(a.marker.starts_with("gpufleet-end-") && a.marker.len() == 29);
        assert!(!SCRIPT.contains('\n'));
        let line = a.command().expect("command");
        assert!(line.starts_with("sh -c '"), "{line}");
        assert!(line.ends_with(&format!(" sh {}", a.marker)), "{line}");
    }

    #[test]
    fn a_request_is_the_command_then_the_marker_and_one_is_in_hand_at_a_time() {
        let mut shell = RunShell::new();
        assert!(shell.ask("nvidia-smi -L"));
        let expected = format!("nvidia-smi -L\n{}\n", shell.marker);
        assert_eq!(shell.unwritten(), expected.as_bytes());
        assert!(!shell.ask("echo second"), "one run at a time");
        shell.wrote(5);
        assert_eq!(shell.unwritten(), &expected.as_bytes()[5..]);
        shell.wrote(expected.len());
        assert!(shell.unwritten().is_empty());
        // Output that only looks like the end line is not it; the marker itself is.
        assert_eq!(shell.end_of_run(b"gpufleet-end-0000000000000000 0"), None);
        let end = format!("{} 3", shell.marker);
        assert_eq!(shell.end_of_run(end.as_bytes()), Some(Some(3)));
        assert!(!shell.is_busy());
        assert_eq!(shell.end_of_run(end.as_bytes()), None, "no run in hand");
    }

    #[test]
    fn a_command_that_could_end_its_own_run_is_refused() {
        let mut shell = RunShell::new();
        let marker = shell.marker.clone();
        assert!(!shell.ask(&format!("echo a\n{marker}\necho b")));
        assert!(!shell.ask("echo a\0b"));
        assert!(!shell.is_busy());
        assert!(
            shell.ask(&format!("echo {marker}")),
            "the marker inside a line is data"
        );
    }

    /// The script run by `sh` as sshd would: several runs through one shell, their output and
    /// status each their own, a multi-line command and one without a final newline included.
    #[test]
    fn one_shell_runs_request_after_request() {
        let mut shell = RunShell::new();
        let line = shell.command().expect("command");
        let mut child = Command::new("sh")
            .args(["-c", &line])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("sh");
        let mut stdin = child.stdin.take().expect("stdin");
        let mut lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
        let mut run = |shell: &mut RunShell, command: &str| {
            assert!(shell.ask(command));
            stdin.write_all(shell.unwritten()).expect("write");
            let n = shell.unwritten().len();
            shell.wrote(n);
            let mut out = Vec::new();
            loop {
                let l = lines.next().expect("a line").expect("utf-8");
                if let Some(status) = shell.end_of_run(l.as_bytes()) {
                    return (out, status);
                }
                if !l.is_empty() {
                    out.push(l);
                }
            }
        };
        assert_eq!(
            run(&mut shell, "echo one; echo two >&2"),
            (vec!["one".to_string(), "two".to_string()], Some(0))
        );
        assert_eq!(
            run(&mut shell, "printf 'no end'; exit 4"),
            (vec!["no end".to_string()], Some(4))
        );
        // A multi-line script, as the process list with its probe is; `cd` in one run does not
        // move the next.
        assert_eq!(
            run(&mut shell, "sh -c 'echo a\necho b'\ncd /"),
            (vec!["a".to_string(), "b".to_string()], Some(0))
        );
        let (out, status) = run(&mut shell, "pwd; read x; echo \"read:$x\"");
        assert_eq!(status, Some(0));
        assert_eq!(
            out[1], "read:",
            "a run's input is /dev/null, not the requests"
        );
        assert_ne!(out[0], "/", "each run starts where the shell started");
        drop(stdin);
        let status = child.wait().expect("wait");
        assert!(status.success(), "the end of its input ends the shell");
    }
}
