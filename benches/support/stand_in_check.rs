//! Checks the compiled stand-in against the shell fake it replaces: every distinct
//! `nvidia-smi` command line that gpufleet ran in the benchmark (from the stand-in's call log)
//! is run through both with the same GPU count (and the same `apps_pids` list of processes,
//! when the hosts had one), and their output and exit status must be byte for byte the same
//! (streams: their first readings, at a 10 ms cadence).

use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::process::{Command, Stdio};

/// Readings compared per stream.
const STREAM_READINGS: usize = 3;

/// The shell fake, where this binary was built from a checkout that still has it.
fn shell_fake() -> Option<std::path::PathBuf> {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/fake-nvidia-smi/nvidia-smi");
    path.is_file().then_some(path)
}

/// `program args...` with `GPUFLEET_FAKE_DIR=state`: its output (for a stream, the first
/// `lines` lines, then it is stopped) and exit status (`None` for a stopped stream).
fn run(
    mut cmd: Command,
    state: &Path,
    lines: Option<usize>,
) -> Result<(String, Option<i32>), String> {
    cmd.env("GPUFLEET_FAKE_DIR", state)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    let mut child = cmd.spawn().map_err(|e| format!("spawn: {e}"))?;
    let stdout = child.stdout.take().ok_or("no stdout")?;
    let mut text = String::new();
    match lines {
        Some(n) => {
            let mut reader = BufReader::new(stdout);
            for _ in 0..n {
                let mut line = String::new();
                if reader.read_line(&mut line).map_err(|e| e.to_string())? == 0 {
                    break;
                }
                text.push_str(&line);
            }
            let _ = child.kill();
            let _ = child.wait();
            Ok((text, None))
        }
        None => {
            BufReader::new(stdout)
                .read_to_string(&mut text)
                .map_err(|e| e.to_string())?;
            let status = child.wait().map_err(|e| e.to_string())?;
            Ok((text, status.code()))
        }
    }
}

/// Compares the stand-in (`stand_in`, a link named `nvidia-smi`) with the shell fake on every
/// command line in `calls_log`; the number of distinct command lines compared, or the first
/// difference. `None` when the shell fake is not there to compare with.
pub fn compare(
    stand_in: &Path,
    calls_log: &Path,
    gpus: usize,
    apps_pids: Option<&str>,
) -> Option<Result<usize, String>> {
    let fake = shell_fake()?;
    Some(compare_with(&fake, stand_in, calls_log, gpus, apps_pids))
}

fn compare_with(
    fake: &Path,
    stand_in: &Path,
    calls_log: &Path,
    gpus: usize,
    apps_pids: Option<&str>,
) -> Result<usize, String> {
    let calls =
        std::fs::read_to_string(calls_log).map_err(|e| format!("{}: {e}", calls_log.display()))?;
    // gpufleet's calls, and one with a field the capture does not have (a refusal).
    let mut distinct: Vec<&str> = calls.lines().collect();
    distinct.push("--query-gpu=index,no.such.field --format=csv,noheader,nounits");
    distinct.sort_unstable();
    distinct.dedup();
    let state = tempfile::tempdir().map_err(|e| e.to_string())?;
    std::fs::write(state.path().join("gpus"), gpus.to_string()).map_err(|e| e.to_string())?;
    if let Some(pids) = apps_pids {
        std::fs::write(state.path().join("apps_pids"), pids).map_err(|e| e.to_string())?;
    }
    for call in &distinct {
        let mut args: Vec<String> = call.split_whitespace().map(str::to_string).collect();
        let stream = args.iter().position(|a| a == "-lms");
        if let Some(at) = stream
            && let Some(ms) = args.get_mut(at + 1)
        {
            *ms = "10".to_string();
        }
        let lines = stream.map(|_| STREAM_READINGS * gpus);
        let mut shell = Command::new("sh");
        shell.arg(fake).args(&args);
        let mut ours = Command::new(stand_in);
        ours.args(&args);
        let expected = run(shell, state.path(), lines)?;
        let got = run(ours, state.path(), lines)?;
        if expected != got {
            return Err(format!(
                "nvidia-smi {call}: the shell fake gave {expected:?}, the stand-in {got:?}"
            ));
        }
    }
    Ok(distinct.len())
}
