//! Tying what a link starts on a host to its channel, so it ends when the session does.
//!
//! Without a terminal, sshd neither signals a command when its channel or connection closes
//! nor kills it: a command learns of it only when it next writes to the closed pipe, and a quiet
//! follower (`dmesg --follow-new`) never writes. What sshd does do is close the command's
//! standard input. So every command of a link runs under a small POSIX `sh` script that starts
//! it in the background with its input from `/dev/null`, waits for it (passing its exit status
//! on), and meanwhile reads its own input until the end: when that comes (the channel closed,
//! the connection dropped, gpufleet quit), it signals its whole process group (`kill -TERM 0`;
//! sshd starts every session's command as the leader of a new one), which is everything
//! gpufleet started through that channel and nothing else. A command that ends by itself ends
//! the script; sshd then closes the input and the reader exits alone.
//!
//! `exec.rs` stops its commands differently (by a pid marker, on cancel): those commands read
//! their standard input (the check probe is sent that way), so its end cannot mean "gone".

use crate::remote::quote::{CommandError, RemoteCommand};

/// The script: fixed text on one line (a csh login shell would not take a newline inside
/// quotes), with the command line as `$1`, never pasted into it.
const WATCH: &str = "exec 3<&0 </dev/null; eval \"$1\" 3<&- & c=$!; \
{ while read -r l; do :; done; kill -TERM 0; } <&3 >/dev/null 2>&1 & exec 3<&-; wait $c";

/// `command` (a line built by [`RemoteCommand::to_shell`]) run under the watch script.
pub(crate) fn tied(command: &str) -> Result<String, CommandError> {
    RemoteCommand::new("sh")
        .args(["-c", WATCH, "sh", command])
        .to_shell()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::os::unix::process::CommandExt;
    use std::process::{Command, Stdio};
    use std::time::{Duration, Instant};

    /// Runs `line` through `sh -c`, as sshd would, in a process group of its own.
    fn spawn(line: &str) -> std::process::Child {
        Command::new("sh")
            .args(["-c", line])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .process_group(0)
            .spawn()
            .expect("sh")
    }

    fn alive(pid: u32) -> bool {
        std::path::Path::new(&format!("/proc/{pid}")).exists()
            && !std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .unwrap_or_default()
                .contains(") Z ")
    }

    #[test]
    fn the_command_line_is_an_argument_of_a_fixed_script() {
        let inner = RemoteCommand::new("nvidia-smi")
            .arg("--query-gpu=index")
            .to_shell()
            .expect("inner");
        let line = tied(&inner).expect("tied");
        assert!(line.starts_with("sh -c 'exec 3<&0 </dev/null;"), "{line}");
        assert!(
            line.ends_with(" sh 'nvidia-smi --query-gpu=index'"),
            "{line}"
        );
        assert!(!WATCH.contains('\n'));
    }

    #[test]
    fn output_and_exit_status_are_the_commands_own() {
        let mut child = spawn(&tied("echo one; echo two >&2; exit 3").expect("tied"));
        // The input stays open (as a link's channel does): the command ends by itself.
        let stdin = child.stdin.take();
        let mut stdout = String::new();
        {
            use std::io::Read;
            let mut pipe = child.stdout.take().expect("stdout");
            pipe.read_to_string(&mut stdout).expect("read");
        }
        let status = child.wait().expect("wait");
        drop(stdin);
        assert_eq!(stdout, "one\n");
        assert_eq!(status.code(), Some(3));
    }

    #[test]
    fn the_end_of_input_ends_a_quiet_command_and_its_children() {
        let mut child = spawn(&tied("sleep 300 & echo $!; wait").expect("tied"));
        let mut pid = String::new();
        {
            use std::io::BufRead;
            let stdout = child.stdout.take().expect("stdout");
            std::io::BufReader::new(stdout)
                .read_line(&mut pid)
                .expect("pid line");
        }
        let sleeper: u32 = pid.trim().parse().expect("pid");
        assert!(alive(sleeper));
        let mut stdin = child.stdin.take().expect("stdin");
        let _ = stdin.write_all(b"ignored\n");
        std::thread::sleep(Duration::from_millis(100));
        assert!(alive(sleeper), "input that is not its end changes nothing");
        drop(stdin);
        let start = Instant::now();
        while alive(sleeper) && start.elapsed() < Duration::from_secs(5) {
            std::thread::sleep(Duration::from_millis(20));
        }
        assert!(!alive(sleeper), "still running after its input ended");
        let _ = child.wait();
    }
}
