//! Reports, recordings and the state directory against hostile or careless input, through the
//! built binary: a recording stamped years ahead, a host that names its GPU and driver with
//! Markdown, secrets that are a webhook's path, a `--record` path that is not a recording.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::recording::{demo_watch, written_bundle};
use crate::tmux::binary;

/// A year of milliseconds.
const YEAR_MS: u64 = 365 * 86_400_000;

/// Runs `cmd` and waits at most `limit`; `None` (the child killed) when it ran past it.
fn run_within(cmd: &mut Command, limit: Duration) -> Option<Output> {
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn gpufleet");
    let started = Instant::now();
    while started.elapsed() < limit {
        if child.try_wait().expect("wait").is_some() {
            return Some(child.wait_with_output().expect("output"));
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let _ = child.kill();
    let _ = child.wait();
    None
}

/// A demo watcher's recording of five seconds (the flaky H200 loses its GPU in it), its lines
/// as JSON to edit.
fn demo_recording(dir: &Path) -> (PathBuf, PathBuf, Vec<serde_json::Value>) {
    let state = dir.join("state");
    let recording = dir.join("session.ndjson");
    demo_watch(&state, Some(&recording), 5);
    let lines = std::fs::read_to_string(&recording)
        .expect("read")
        .lines()
        .map(|l| serde_json::from_str(l).expect("json line"))
        .collect();
    (state, recording, lines)
}

fn write_lines(path: &Path, lines: &[serde_json::Value]) {
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(path, text).expect("write");
}

fn is_event(line: &serde_json::Value, host: &str, kind: &str) -> bool {
    line["host"] == host && line["event"]["kind"] == kind
}

/// `report HOST --from FILE --out DIR`, given a minute at most.
fn report_within_a_minute(state: &Path, host: &str, from: &Path, out: &Path) -> Output {
    std::fs::create_dir_all(out).expect("out");
    let started = Instant::now();
    let output = run_within(
        Command::new(binary())
            .args(["report", host, "--from"])
            .arg(from)
            .arg("--out")
            .arg(out)
            .env("GPUFLEET_STATE_DIR", state),
        Duration::from_secs(60),
    );
    output.unwrap_or_else(|| panic!("report still running after {:?}", started.elapsed()))
}

#[test]
fn a_report_with_one_sample_stamped_ten_years_ahead_ends_quickly_and_names_it() {
    let dir = tempfile::tempdir().expect("temp");
    let (state, recording, mut lines) = demo_recording(dir.path());
    let sample = lines
        .iter_mut()
        .find(|l| is_event(l, "flaky-h200", "sample"))
        .expect("a sample of the flaky H200");
    let ahead = sample["event"]["at_ms"].as_u64().expect("at_ms") + 10 * YEAR_MS;
    sample["event"]["at_ms"] = ahead.into();
    write_lines(&recording, &lines);

    let out = report_within_a_minute(&state, "flaky-h200", &recording, &dir.path().join("out"));
    let bundle = written_bundle(&out);
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(bundle.join("report.json")).expect("json"))
            .expect("json");
    assert_eq!(json["stamped_outside_count"], 1, "{json}");
    let named = &json["stamped_outside"][0];
    assert_eq!(named["kind"], "sample", "{named}");
    assert_eq!(named["stamped_ms"], ahead, "{named}");
    assert!(
        json["window"]["to_ms"].as_u64().expect("to") < ahead,
        "the window does not reach the stray stamp: {}",
        json["window"]
    );
    // The rest is read as before: the GPU loss is still the fault.
    assert_eq!(json["verdict"], "fault", "{json}");
    let md = std::fs::read_to_string(bundle.join("report.md")).expect("md");
    let stamped = named["stamped"].as_str().expect("stamped");
    assert!(
        md.contains("stamped far outside the window") && md.contains(stamped),
        "report.md names the event left out:\n{md}"
    );
    let csv = std::fs::read_to_string(bundle.join("samples.csv")).expect("csv");
    assert!(
        !csv.contains(&ahead.to_string()),
        "the stray sample is not a reading"
    );
}

/// `md` without its fenced code blocks and inline code spans, each backslash-escaped
/// character shown as `·`: what a Markdown viewer could take as markup.
fn outside_code(md: &str) -> String {
    let mut out = String::new();
    let mut fenced = false;
    for line in md.lines() {
        if line.starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        let chars: Vec<char> = line.chars().collect();
        let mut i = 0;
        while i < chars.len() {
            match chars[i] {
                '\\' if i + 1 < chars.len() => {
                    out.push('·');
                    i += 2;
                }
                '`' => {
                    // A code span: a run of backticks up to the next run of the same length.
                    let ticks = chars[i..].iter().take_while(|c| **c == '`').count();
                    let mut j = i + ticks;
                    let mut close = None;
                    while j < chars.len() {
                        let run = chars[j..].iter().take_while(|c| **c == '`').count();
                        if run == ticks {
                            close = Some(j + run);
                            break;
                        }
                        j += run.max(1);
                    }
                    match close {
                        Some(end) => i = end,
                        None => {
                            out.extend(&chars[i..i + ticks]);
                            i += ticks;
                        }
                    }
                }
                c => {
                    out.push(c);
                    i += 1;
                }
            }
        }
        out.push('\n');
    }
    out
}

/// The pipes that split a table row into cells (not those escaped as `\|`).
fn cell_pipes(row: &str) -> usize {
    let mut count = 0;
    let mut escaped = false;
    for c in row.chars() {
        match c {
            '\\' if !escaped => escaped = true,
            '|' if !escaped => count += 1,
            _ => escaped = false,
        }
    }
    count
}

#[test]
fn host_markup_in_the_gpu_name_and_driver_stays_text_in_report_md() {
    let dir = tempfile::tempdir().expect("temp");
    let (state, recording, mut lines) = demo_recording(dir.path());
    let driver = "550.54 [click](http://evil.example/d) <img src=x onerror=alert(1)> | **x** `y``";
    let gpu_name =
        "NVIDIA H200 <b>big</b> ![i](http://evil.example/i.png) | _a_ https://evil.example/u";
    let mut changed = (0, 0);
    for line in lines.iter_mut() {
        if is_event(line, "flaky-h200", "connected") {
            line["event"]["info"]["driver_version"] = driver.into();
            changed.0 += 1;
        }
        if is_event(line, "flaky-h200", "sample") {
            line["event"]["gpu"]["name"] = gpu_name.into();
            changed.1 += 1;
        }
    }
    assert!(changed.0 > 0 && changed.1 > 0, "{changed:?}");
    write_lines(&recording, &lines);

    let out = report_within_a_minute(&state, "flaky-h200", &recording, &dir.path().join("out"));
    let bundle = written_bundle(&out);
    let md = std::fs::read_to_string(bundle.join("report.md")).expect("md");
    let rendered = outside_code(&md);
    for markup in [
        "](http",
        "[click]",
        "<img",
        "<b>",
        "**x**",
        "_a_",
        "https://evil",
    ] {
        assert!(
            !rendered.contains(markup),
            "{markup:?} stands as Markdown outside code:\n{rendered}\n--- report.md:\n{md}"
        );
    }
    // The tables keep their columns: two in the summary, four in the GPUs'.
    let mut table_columns = None;
    for row in md.lines() {
        if !row.starts_with('|') {
            table_columns = None;
            continue;
        }
        let pipes = cell_pipes(row);
        let want = *table_columns.get_or_insert(pipes);
        assert_eq!(
            pipes, want,
            "a row with other columns than its table: {row}"
        );
    }
    // The values are still there to read.
    assert!(md.contains("550.54"), "{md}");
    assert!(md.contains("NVIDIA H200"), "{md}");
}

#[test]
fn alert_addresses_whose_secret_is_their_path_are_scrubbed_from_every_bundle_file() {
    let dir = tempfile::tempdir().expect("temp");
    let (state, recording, mut lines) = demo_recording(dir.path());
    // Addresses as the services document them (Slack's incoming webhooks page, Telegram's Bot
    // API page), and a Feishu hook id, given by variable and by file.
    let slack = "https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX";
    let telegram =
        "https://api.telegram.org/bot123456:ABC-DEF1234ghIkl-zyx57W2v1u123ew11/sendMessage";
    let feishu_id = "2d6b4f8a-1c3e-4a5b-9d7f-0e8c6a4b2d1f";
    let feishu_file = dir.path().join("feishu.url");
    std::fs::write(
        &feishu_file,
        format!("https://open.feishu.cn/open-apis/bot/v2/hook/{feishu_id}\n"),
    )
    .expect("feishu");
    let config = dir.path().join("config.toml");
    std::fs::write(
        &config,
        format!(
            "[[hosts]]\nname = \"flaky-h200\"\nssh = \"root@127.0.0.1:1\"\n\n\
             [[alerts]]\nkind = \"slack\"\nurl_env = \"GPUFLEET_TEST_SLACK\"\n\n\
             [[alerts]]\nkind = \"telegram\"\nurl_env = \"GPUFLEET_TEST_TELEGRAM\"\nchat_id = \"-100123\"\n\n\
             [[alerts]]\nkind = \"feishu\"\nurl_file = \"{}\"\n",
            feishu_file.display()
        ),
    )
    .expect("config");
    // What a host or a job printed bare: the Slack path in a GPU's name (samples.csv), the
    // Telegram token in a notice (failure.txt), the Feishu id in `nvidia-smi -q`'s output.
    let slack_path = "T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX";
    let token = "123456:ABC-DEF1234ghIkl-zyx57W2v1u123ew11";
    let mut last = (0, 0);
    for line in lines.iter_mut() {
        if is_event(line, "flaky-h200", "sample") {
            line["event"]["gpu"]["name"] = format!("NVIDIA H200 {slack_path}").into();
            last = (
                line["t_ms"].as_u64().expect("t_ms"),
                line["event"]["at_ms"].as_u64().expect("at_ms"),
            );
        }
    }
    let (t_ms, at_ms) = last;
    lines.push(
        serde_json::json!({"t_ms": t_ms, "host": "flaky-h200", "event": {
        "kind": "notice", "at_ms": at_ms, "text": format!("job: posting to bot{token} failed")}}),
    );
    lines.push(
        serde_json::json!({"t_ms": t_ms, "host": "flaky-h200", "event": {
        "kind": "evidence", "at_ms": at_ms, "command": "nvidia-smi -q",
        "output": format!("==============NVSMI LOG==============\nhook {feishu_id}\n")}}),
    );
    write_lines(&recording, &lines);

    let out_dir = dir.path().join("out");
    std::fs::create_dir(&out_dir).expect("out");
    let out = Command::new(binary())
        .args(["report", "flaky-h200", "--from"])
        .arg(&recording)
        .arg("--out")
        .arg(&out_dir)
        .arg("--config")
        .arg(&config)
        .env("GPUFLEET_STATE_DIR", &state)
        .env("GPUFLEET_TEST_SLACK", slack)
        .env("GPUFLEET_TEST_TELEGRAM", telegram)
        .output()
        .expect("report");
    let bundle = written_bundle(&out);
    let mut seen = 0;
    for entry in std::fs::read_dir(&bundle).expect("bundle").flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let text = std::fs::read_to_string(entry.path()).expect("text");
        for secret in [
            "XXXXXXXXXXXXXXXXXXXXXXXX",
            "T00000000",
            "B00000000",
            "ABC-DEF1234ghIkl-zyx57W2v1u123ew11",
            feishu_id,
        ] {
            assert!(!text.contains(secret), "{name} holds {secret}:\n{text}");
        }
        seen += 1;
    }
    assert_eq!(seen, 7, "every bundle file read");
    // Scrubbed, not dropped: the lines are still there.
    let csv = std::fs::read_to_string(bundle.join("samples.csv")).expect("csv");
    assert!(csv.contains("NVIDIA H200 ***"), "{csv}");
    let failure = std::fs::read_to_string(bundle.join("failure.txt")).expect("failure");
    assert!(failure.contains("job: posting to"), "{failure}");
}

/// Contents, mode and modification time of `path` (not following a link).
fn file_state(path: &Path) -> (Vec<u8>, u32, std::time::SystemTime) {
    use std::os::unix::fs::PermissionsExt;
    let meta = std::fs::metadata(path).expect("metadata");
    (
        std::fs::read(path).expect("read"),
        meta.permissions().mode() & 0o7777,
        meta.modified().expect("mtime"),
    )
}

/// `--demo watch --record PATH` for a moment; its exit code and stderr.
fn watch_recording_into(state: &Path, path: &Path) -> (Option<i32>, String) {
    let out = run_within(
        Command::new(binary())
            .args(["--demo", "--speed", "20", "watch", "-q", "--record"])
            .arg(path)
            .env("GPUFLEET_STATE_DIR", state),
        Duration::from_secs(3),
    );
    match out {
        Some(out) => (
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        ),
        // Still recording after three seconds: it took the file.
        None => (None, String::new()),
    }
}

#[test]
fn record_refuses_links_and_files_that_are_not_recordings_and_leaves_them_as_they_were() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().expect("temp");
    let state = dir.path().join("state");
    // A script the user keeps, executable, last changed long ago.
    let script = dir.path().join("deploy.sh");
    std::fs::write(&script, "#!/bin/sh\necho deploy\n").expect("script");
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    std::fs::File::options()
        .write(true)
        .open(&script)
        .expect("open")
        .set_modified(std::time::UNIX_EPOCH + Duration::from_secs(1_600_000_000))
        .expect("mtime");
    let before = file_state(&script);
    let link = dir.path().join("link.ndjson");
    std::os::unix::fs::symlink(&script, &link).expect("link");
    let nowhere = dir.path().join("nowhere.ndjson");
    let dangling = dir.path().join("dangling.ndjson");
    std::os::unix::fs::symlink(&nowhere, &dangling).expect("dangling link");

    for (path, want) in [
        (&script, "is not a gpufleet recording"),
        (&link, "a symbolic link"),
        (&dangling, "a symbolic link"),
    ] {
        let (code, stderr) = watch_recording_into(&state, path);
        assert_eq!(code, Some(2), "{}: {stderr}", path.display());
        assert!(
            stderr.contains(want) && stderr.contains(&path.display().to_string()),
            "{}: {stderr}",
            path.display()
        );
        assert_eq!(file_state(&script), before, "the script is as it was");
    }
    assert!(
        std::fs::symlink_metadata(&nowhere).is_err(),
        "nothing created behind the dangling link"
    );

    // A recording of an earlier session is appended to: a second session in the same file.
    let earlier = dir.path().join("earlier.ndjson");
    demo_watch(&state, Some(&earlier), 2);
    let first_len = std::fs::metadata(&earlier).expect("recording").len();
    demo_watch(&state, Some(&earlier), 2);
    let reader = gpufleet::recording::RecordingReader::open(&earlier).expect("recording");
    let lines: Vec<_> = reader.map(|l| l.expect("line")).collect();
    assert!(!lines.is_empty());
    assert!(std::fs::metadata(&earlier).expect("recording").len() > first_len);
    let text = std::fs::read_to_string(&earlier).expect("text");
    assert_eq!(
        text.lines()
            .filter(|l| l.contains("\"format\":\"gpufleet-recording\""))
            .count(),
        2,
        "two sessions, each with its header"
    );
}

#[test]
fn what_an_older_version_left_open_under_the_state_directory_is_made_private_on_start() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().expect("temp");
    let state = dir.path().join("state");
    let host = state.join("blackbox/gpu-a");
    std::fs::create_dir_all(&host).expect("black box");
    let chmod = |path: &Path, mode: u32| {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).expect("chmod")
    };
    let segment = host.join("00000000000000001000.ndjson");
    let lock = host.join("lock");
    let log = state.join("gpufleet.log");
    for (file, mode) in [(&segment, 0o644), (&lock, 0o644), (&log, 0o755)] {
        std::fs::write(file, "x\n").expect("write");
        chmod(file, mode);
    }
    for folder in [&state, &state.join("blackbox"), &host] {
        chmod(folder, 0o755);
    }
    // A link an older version never made, to a file of the user's elsewhere: not followed.
    let elsewhere = dir.path().join("notes.txt");
    std::fs::write(&elsewhere, "mine\n").expect("notes");
    chmod(&elsewhere, 0o644);
    std::os::unix::fs::symlink(&elsewhere, state.join("notes-link")).expect("link");

    let out = Command::new(binary())
        .args(["--demo", "snapshot"])
        .env("GPUFLEET_STATE_DIR", &state)
        .output()
        .expect("snapshot");
    // 1: the demo fleet has hosts that need attention.
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mode = |path: &Path| {
        std::fs::metadata(path)
            .expect("metadata")
            .permissions()
            .mode()
            & 0o7777
    };
    for folder in [&state, &state.join("blackbox"), &host] {
        assert_eq!(mode(folder), 0o700, "{}", folder.display());
    }
    for file in [&segment, &lock, &log] {
        assert_eq!(mode(file), 0o600, "{}", file.display());
    }
    assert_eq!(mode(&elsewhere), 0o644, "the link's target is left alone");
}
