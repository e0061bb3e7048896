//! Record, replay, black box and incident report, through the built binary: a demo watcher's
//! session recorded and played back in the console (tmux), a report built from the recorded
//! GPU loss, the black box across a restart, and damaged recordings refused clearly.

use crate::tmux;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use gpufleet::recording::{Line, RecordingReader};
use tmux::{Tmux, binary};

const DEMO_HOSTS: [&str; 11] = [
    "train-h100x8",
    "idle-a100",
    "hot-4090",
    "leaky-t4",
    "flaky-h200",
    "unreachable-box",
    "ascend-910b",
    "xpu-flex170",
    "mthreads-s80",
    "cambricon-mlu",
    "mi300x-amd",
];

/// Runs the demo fleet's watcher at 20x for `seconds` (the flaky H200 loses its GPU after a
/// minute of scenario time, three seconds here), recording to `record` when given; ends it
/// with SIGTERM as a service manager would.
pub(crate) fn demo_watch(state: &Path, record: Option<&Path>, seconds: u64) {
    let mut cmd = Command::new(binary());
    cmd.args(["--demo", "--speed", "20", "watch", "-q"]);
    if let Some(record) = record {
        cmd.arg("--record").arg(record);
    }
    let mut child = cmd
        .env("GPUFLEET_STATE_DIR", state)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn watch");
    std::thread::sleep(Duration::from_secs(seconds));
    // SAFETY: signalling the child this test started.
    unsafe {
        libc::kill(child.id() as i32, libc::SIGTERM);
    }
    let status = child.wait().expect("wait watch");
    assert_eq!(
        status.code(),
        Some(0),
        "the watcher ends cleanly on SIGTERM"
    );
}

pub(crate) fn gpufleet(args: &[&str], state: &Path) -> Output {
    Command::new(binary())
        .args(args)
        .env("GPUFLEET_STATE_DIR", state)
        .env_remove("GPUFLEET_TEST_TOKEN")
        .stdin(Stdio::null())
        .output()
        .expect("run gpufleet")
}

pub(crate) fn lines_of(path: &Path) -> Vec<Line> {
    RecordingReader::open(path)
        .expect("a recording")
        .map(|l| l.expect("a line"))
        .collect()
}

pub(crate) fn mode(path: &Path) -> u32 {
    std::fs::metadata(path)
        .expect("metadata")
        .permissions()
        .mode()
        & 0o777
}

/// The event with its time stamp taken out, to compare a replay with its recording.
fn unstamped(line: &Line) -> (String, serde_json::Value) {
    let event = line.event.clone().restamped(0);
    (
        line.host.clone(),
        serde_json::to_value(event).expect("json"),
    )
}

#[test]
fn a_recorded_demo_session_replays_in_the_console_as_the_same_events() {
    let dir = tempfile::tempdir().expect("temp");
    let state = dir.path().join("state");
    let first = dir.path().join("session.ndjson");
    demo_watch(&state, Some(&first), 4);

    let reader = RecordingReader::open(&first).expect("header");
    assert_eq!(reader.header.format, "gpufleet-recording");
    assert_eq!(reader.header.version, gpufleet::recording::FORMAT_VERSION);
    assert_eq!(reader.header.hosts, DEMO_HOSTS);
    assert!(
        reader
            .header
            .gpufleet
            .starts_with(env!("CARGO_PKG_VERSION"))
    );
    assert_eq!(mode(&first), 0o600, "the recording is private");
    let recorded = lines_of(&first);
    assert!(
        recorded.iter().any(|l| l.host == "flaky-h200"
            && matches!(l.event, gpufleet::recording::wire::Event::Lost { .. })),
        "the GPU loss is recorded"
    );
    let segments_before = count_files(&state.join("blackbox"));

    // Played back at 4x in the console, recorded again.
    let second = dir.path().join("replayed.ndjson");
    let command = format!(
        "env GPUFLEET_STATE_DIR={} {} replay {} --speed 4 --record {}; echo EXIT=$?; sleep 30",
        state.display(),
        binary().display(),
        first.display(),
        second.display()
    );
    let Some(tmux) = Tmux::start(&command, 120, 30) else {
        return;
    };
    let wait = Duration::from_secs(20);
    let screen = tmux.wait_for("GPU lost", wait);
    assert!(screen.contains("train-h100x8"), "{screen}");
    // Let the rest of the file play (four seconds at 4x), then quit.
    std::thread::sleep(Duration::from_secs(3));
    tmux.keys(&["q"]);
    let after = tmux.wait_for("EXIT=", wait);
    assert!(after.contains("EXIT=0"), "{after}");

    let replayed = lines_of(&second);
    assert_eq!(
        replayed.iter().map(unstamped).collect::<Vec<_>>(),
        recorded.iter().map(unstamped).collect::<Vec<_>>(),
        "the replay sends the recorded events, in order"
    );
    // The spacing of the events, four times closer.
    let stamps =
        |lines: &[Line]| -> Vec<u64> { lines.iter().filter_map(|l| l.event.at_ms()).collect() };
    let (a, b) = (stamps(&recorded), stamps(&replayed));
    for i in 1..a.len() {
        let want = (a[i] as i64 - a[0] as i64) as f64 / 4.0;
        let got = (b[i] as i64 - b[0] as i64) as f64;
        assert!(
            (want - got).abs() <= 2.0,
            "event {i}: {got} ms apart, want {want}"
        );
    }
    assert_eq!(
        count_files(&state.join("blackbox")),
        segments_before,
        "a replay writes nothing into the black box"
    );
}

fn count_files(dir: &Path) -> usize {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .flatten()
        .map(|e| {
            if e.path().is_dir() {
                count_files(&e.path())
            } else {
                1
            }
        })
        .sum()
}

fn bundle_files(dir: &Path) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).expect("bundle dir").flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        assert_eq!(mode(&entry.path()), 0o600, "{name} is private");
        out.push((
            name,
            std::fs::read_to_string(entry.path()).expect("text file"),
        ));
    }
    out.sort();
    out
}

pub(crate) fn written_bundle(out: &Output) -> PathBuf {
    assert_eq!(
        out.status.code(),
        Some(0),
        "report: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let dir = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    assert_eq!(mode(&dir), 0o700, "the bundle folder is private");
    dir
}

#[test]
fn a_report_of_a_recorded_gpu_loss_has_the_evidence_and_nothing_of_other_hosts_or_secrets() {
    let dir = tempfile::tempdir().expect("temp");
    let state = dir.path().join("state");
    let recording = dir.path().join("session.ndjson");
    demo_watch(&state, Some(&recording), 5);
    // A text from the host that quotes a token the config names (an error echoing a URL).
    let token = "tok-0123456789-SECRET";
    let mut text = std::fs::read_to_string(&recording).expect("read");
    let last_t = lines_of(&recording).last().expect("lines").t_ms;
    text.push_str(&format!(
        "{{\"t_ms\":{last_t},\"host\":\"flaky-h200\",\"event\":{{\"kind\":\"notice\",\"at_ms\":{last_t},\"text\":\"proxy said: GET https://api.example/x?key={token}\"}}}}\n"
    ));
    std::fs::write(&recording, text).expect("write");
    let config = dir.path().join("config.toml");
    std::fs::write(
        &config,
        "[[hosts]]\nname = \"flaky-h200\"\nssh = \"root@127.0.0.1:1\"\nprice_per_hour = 3.5\ncurrency = \"USD\"\n\
         [hosts.release]\nprovider = \"vast\"\ninstance_id = \"12345\"\ntoken_env = \"GPUFLEET_TEST_TOKEN\"\n",
    )
    .expect("config");
    // The host's acceptance check (a real one, of an H200) and actions in the audit log, one
    // of them on another host.
    place_h200_check(&state);
    let step = |host: &str, command: &str| {
        format!(
            "{{\"at_ms\":{last_t},\"host\":\"{host}\",\"kind\":\"playbook_step\",\"command\":\"{command}\",\"outcome\":\"ok\",\"exit_status\":0,\"runbook\":\"gpu-lost\",\"step\":\"reset\",\"dry_run\":false}}\n"
        )
    };
    std::fs::write(
        state.join("audit.jsonl"),
        step("flaky-h200", "nvidia-smi -r -i 0") + &step("train-h100x8", "nvidia-smi -r -i 5"),
    )
    .expect("audit");
    let out_dir = dir.path().join("out");
    std::fs::create_dir(&out_dir).expect("out");
    let out = Command::new(binary())
        .args(["report", "flaky-h200", "--since", "1h", "--from"])
        .arg(&recording)
        .arg("--out")
        .arg(&out_dir)
        .arg("--config")
        .arg(&config)
        .env("GPUFLEET_STATE_DIR", &state)
        .env("GPUFLEET_TEST_TOKEN", token)
        .output()
        .expect("report");
    let bundle = written_bundle(&out);
    let files = bundle_files(&bundle);
    let names: Vec<&str> = files.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        [
            "failure.txt",
            "kernel.log",
            "nvidia-smi-q.txt",
            "recording.ndjson",
            "report.json",
            "report.md",
            "samples.csv"
        ]
    );
    let file = |name: &str| &files.iter().find(|(n, _)| n == name).expect(name).1;
    for (name, text) in &files {
        assert!(!text.contains(token), "{name} holds the token");
        for other in DEMO_HOSTS.iter().filter(|h| **h != "flaky-h200") {
            assert!(!text.contains(other), "{name} names {other}");
        }
    }
    let md = file("report.md");
    assert!(md.contains("gpu_lost"), "{md}");
    assert!(
        md.contains("GPU is lost"),
        "the failure text verbatim:\n{md}"
    );
    assert!(md.contains("Xid"), "the kernel lines verbatim:\n{md}");
    assert!(md.contains("USD"), "money billed while broken:\n{md}");
    assert!(
        md.contains("result **pass**"),
        "the acceptance check:\n{md}"
    );
    assert!(
        md.contains("gpu-lost / reset: `nvidia-smi -r -i 0`"),
        "the runbook step:\n{md}"
    );
    assert!(!md.contains("-i 5"), "another host's step:\n{md}");
    assert!(
        md.contains("## Ticket (English)") && md.contains("请为我们更换机器"),
        "{md}"
    );
    let json: serde_json::Value = serde_json::from_str(file("report.json")).expect("json");
    assert_eq!(json["verdict"], "fault");
    assert_eq!(json["host"], "flaky-h200");
    let lost = json["analysis"]["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .find(|f| f["label"] == "gpu_lost")
        .expect("gpu_lost finding");
    assert!(lost["gpu"].is_u64(), "which GPU: {lost}");
    assert!(
        json["billing"]["cost"].as_f64().is_some_and(|c| c > 0.0),
        "{json}"
    );
    assert!(file("kernel.log").contains("Xid"), "{}", file("kernel.log"));
    assert!(file("failure.txt").contains("GPU is lost"));
    let csv = file("samples.csv");
    assert!(csv.starts_with("time_utc,at_ms,gpu,"), "{csv}");
    assert!(csv.lines().count() > 10, "{csv}");
    // The bundle's recording is itself a recording of this host alone.
    let own = bundle.join("recording.ndjson");
    let reader = RecordingReader::open(&own).expect("replayable");
    assert_eq!(reader.header.hosts, ["flaky-h200"]);
    assert!(
        reader
            .map(|l| l.expect("line"))
            .all(|l| l.host == "flaky-h200")
    );

    // A host with nothing recorded: exit 1 and a plain reason.
    let none = gpufleet(
        &[
            "report",
            "no-such-host",
            "--from",
            recording.to_str().expect("utf-8"),
        ],
        &state,
    );
    assert_eq!(none.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&none.stderr).contains("nothing recorded for no-such-host"));
}

/// The run folders of the demo's black box, oldest first.
fn demo_runs(state: &Path) -> Vec<PathBuf> {
    let mut runs: Vec<PathBuf> = std::fs::read_dir(state.join("blackbox/demo"))
        .expect("the demo's black box")
        .flatten()
        .map(|e| e.path())
        .collect();
    runs.sort();
    runs
}

#[test]
fn each_demo_run_has_its_own_black_box_and_the_report_reads_the_newest_at_the_demo_price() {
    let dir = tempfile::tempdir().expect("temp");
    let state = dir.path().join("state");
    demo_watch(&state, None, 2);
    demo_watch(&state, None, 4);
    // Each run plays the scenario from its own start: two runs, two folders.
    let runs = demo_runs(&state);
    assert_eq!(runs.len(), 2, "a folder per run: {runs:?}");
    for run in &runs {
        let segments: Vec<PathBuf> = std::fs::read_dir(run.join("flaky-h200"))
            .expect("the run's black box of flaky-h200")
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "ndjson"))
            .collect();
        assert_eq!(segments.len(), 1, "{}: {segments:?}", run.display());
        assert_eq!(mode(&segments[0]), 0o600);
    }
    let out_dir = dir.path().join("out");
    std::fs::create_dir(&out_dir).expect("out");
    let out_text = out_dir.to_str().expect("utf-8");
    let out = gpufleet(
        &["--demo", "report", "flaky-h200", "--out", out_text],
        &state,
    );
    let bundle = written_bundle(&out);
    let lines = lines_of(&bundle.join("recording.ndjson"));
    let connected = lines
        .iter()
        .filter(|l| matches!(l.event, gpufleet::recording::wire::Event::Connected { .. }))
        .count();
    assert_eq!(connected, 1, "the newest run only, not a mix of runs");
    assert!(
        lines.windows(2).all(|w| w[0].t_ms <= w[1].t_ms),
        "the timeline runs forward"
    );
    let md = std::fs::read_to_string(bundle.join("report.md")).expect("md");
    assert!(md.contains("gpu_lost"), "{md}");
    assert!(
        !md.contains("no price_per_hour"),
        "the demo host has a price: {md}"
    );
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(bundle.join("report.json")).expect("json"))
            .expect("json");
    assert_eq!(json["billing"]["price_per_hour"], 3.99, "{json}");
    // Every time the report gives falls inside the window it says it covers.
    let (from, to) = (
        json["window"]["from_ms"].as_u64().expect("from"),
        json["window"]["to_ms"].as_u64().expect("to"),
    );
    let inside = |at: u64| from <= at && at <= to;
    let broken = json["broken_since_ms"].as_u64().expect("a fault");
    assert!(inside(broken), "fault since {broken} outside {from}..{to}");
    let findings = json["analysis"]["findings"].as_array().expect("findings");
    for f in findings {
        for key in ["first_seen_ms", "last_seen_ms"] {
            let at = f[key].as_u64().expect(key);
            assert!(inside(at), "{key} {at} outside {from}..{to}: {f}");
        }
    }
    let timeline = json["analysis"]["timeline"].as_array().expect("timeline");
    let times: Vec<u64> = timeline
        .iter()
        .filter_map(|m| m["at_ms"].as_u64())
        .collect();
    assert!(
        times.windows(2).all(|w| w[0] <= w[1]),
        "timeline in order: {times:?}"
    );
    assert!(
        times.iter().all(|&at| inside(at)),
        "{times:?} in {from}..{to}"
    );

    // The demo host that never connects has no readings to report: said, with why, exit 1.
    let never = gpufleet(
        &["--demo", "report", "unreachable-box", "--out", out_text],
        &state,
    );
    let stderr = String::from_utf8_lossy(&never.stderr);
    assert_eq!(never.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("no readings for unreachable-box: never connected ("),
        "{stderr}"
    );
    assert!(!stderr.contains("no fault recorded"), "{stderr}");
    assert!(String::from_utf8_lossy(&never.stdout).is_empty());

    // A third and fourth run: the oldest go, the newest few stay.
    demo_watch(&state, None, 1);
    demo_watch(&state, None, 1);
    demo_watch(&state, None, 1);
    let kept = demo_runs(&state);
    assert_eq!(kept.len(), 4, "three kept besides the newest: {kept:?}");
    assert!(!kept.contains(&runs[0]), "the oldest run is gone: {kept:?}");
}

#[test]
fn damaged_newer_or_foreign_recordings_are_refused_with_file_and_line() {
    let dir = tempfile::tempdir().expect("temp");
    let state = dir.path().join("state");
    let header = r#"{"format":"gpufleet-recording","version":1,"gpufleet":"0.1.0","started_ms":1,"started":"x","hosts":["a"]}"#;
    let good = r#"{"t_ms":2,"host":"a","event":{"kind":"kernel","at_ms":2,"line":"NVRM: Xid 79"}}"#;
    let cases: [(&str, String, &str); 4] = [
        (
            "foreign.txt",
            "hello world\n".to_string(),
            ":1: not a gpufleet recording",
        ),
        (
            "empty.ndjson",
            String::new(),
            "empty: not a gpufleet recording",
        ),
        (
            "damaged.ndjson",
            format!(
                "{header}\n{good}\n{{\"t_ms\":3,\"host\":\"a\",\"event\":{{\"kind\":\"bogus\"}}}}\n{good}\n"
            ),
            ":3: not a recorded event",
        ),
        (
            "newer.ndjson",
            header.replace("\"version\":1", "\"version\":99") + "\n",
            "version 99 is newer than this gpufleet reads",
        ),
    ];
    for (name, text, want) in cases {
        let path = dir.path().join(name);
        std::fs::write(&path, text).expect("write");
        let path_text = path.to_str().expect("utf-8");
        for args in [
            vec!["replay", path_text],
            vec!["report", "a", "--from", path_text],
        ] {
            let out = gpufleet(&args, &state);
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
            assert!(
                stderr.contains(path_text),
                "{args:?} names the file: {stderr}"
            );
            assert!(stderr.contains(want), "{args:?}: {stderr}");
        }
    }
}

#[test]
fn record_is_refused_where_nothing_would_be_recorded() {
    let dir = tempfile::tempdir().expect("temp");
    let file = dir.path().join("x.ndjson");
    let out = gpufleet(
        &[
            "--record",
            file.to_str().expect("utf-8"),
            "snapshot",
            "--demo",
        ],
        dir.path(),
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--record records the console"));
    assert!(!file.exists(), "no file left behind");
}

/// `e` in the console writes the selected host's bundle from the black box the console keeps,
/// into the directory the console runs in, and says where.
#[test]
fn e_in_the_console_writes_the_hosts_incident_report() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    let work = dir.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    let command = format!(
        "cd {} && GPUFLEET_STATE_DIR={} {} --demo --speed 20",
        work.display(),
        state.display(),
        binary().display()
    );
    let Some(tmux) = Tmux::start(&command, 160, 40) else {
        return;
    };
    tmux.wait_for("GPU lost", Duration::from_secs(20));
    // The black box writes in batches; give it a moment to hold the loss.
    std::thread::sleep(Duration::from_secs(2));
    tmux.keys(&["/", "f", "l", "a", "k", "y", "Enter", "e"]);
    let screen = tmux.wait_for("report written", Duration::from_secs(20));
    assert!(screen.contains("gpufleet-report-flaky-h200"), "{screen}");
    let bundle = std::fs::read_dir(&work)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.to_string_lossy().contains("gpufleet-report-flaky-h200"))
        .expect("the bundle's folder in the console's directory");
    let md = std::fs::read_to_string(bundle.join("report.md")).expect("report.md");
    assert!(md.contains("gpu_lost"), "{md}");
    tmux.keys(&["q"]);
}

/// The English catalogue's texts under `section` (`report_md`), as `key -> text`; each form of
/// a plural table (`report_md.samples.one`) is a text of its own.
fn english_texts(section: &str) -> Vec<(String, String)> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/locales/en.toml");
    let text = std::fs::read_to_string(path).expect("en.toml");
    let table: toml::Table = toml::from_str(&text).expect("en.toml parses");
    let texts = table[section].as_table().expect(section);
    let mut out = Vec::new();
    for (k, v) in texts {
        match v.as_table() {
            Some(forms) => out.extend(forms.iter().map(|(form, v)| {
                let text = v.as_str().expect(form).to_string();
                (format!("{section}.{k}.{form}"), text)
            })),
            None => out.push((format!("{section}.{k}"), v.as_str().expect(k).to_string())),
        }
    }
    out
}

/// The pieces of a catalogue text between its `%{...}` values that hold two words or more:
/// what one of our English sentences leaves in a text, whatever was put into it.
fn sentence_pieces(text: &str) -> Vec<String> {
    let mut pieces = Vec::new();
    let mut rest = text;
    loop {
        let (piece, after) = match rest.find("%{") {
            Some(at) => (
                &rest[..at],
                rest[at..].find('}').map(|end| &rest[at + end + 1..]),
            ),
            None => (rest, None),
        };
        let words = piece
            .split(|c: char| !c.is_ascii_alphabetic())
            .filter(|w| !w.is_empty())
            .count();
        if words >= 2 {
            pieces.push(piece.trim().to_string());
        }
        match after {
            Some(after) => rest = after,
            None => return pieces,
        }
    }
}

/// The text of the code fence under the heading `## TITLE` of a report.md.
fn fenced<'a>(md: &'a str, title: &str) -> &'a str {
    let head = format!("## {title}\n\n```text\n");
    let start = md
        .find(&head)
        .unwrap_or_else(|| panic!("no {title}:\n{md}"))
        + head.len();
    let len = md[start..].find("```\n").expect("the fence ends");
    &md[start..start + len]
}

/// `gpufleet report --lang zh-CN`: report.md's headings, sentences and timeline in Chinese
/// with none of the English report's own sentences left, identifiers, figures and times
/// written as in English; the two tickets, each in its own language, the same whichever
/// language the report is written in; the summary line and the errors in Chinese.
#[test]
fn a_report_in_chinese_says_its_own_words_in_chinese_and_keeps_its_figures() {
    let dir = tempfile::tempdir().expect("temp");
    let state = dir.path().join("state");
    let recording = dir.path().join("session.ndjson");
    demo_watch(&state, Some(&recording), 5);
    let config = dir.path().join("config.toml");
    std::fs::write(
        &config,
        "[[hosts]]\nname = \"flaky-h200\"\nssh = \"root@127.0.0.1:1\"\nprice_per_hour = 3.5\ncurrency = \"USD\"\n",
    )
    .expect("config");
    place_h200_check(&state);
    let report = |lang: &str| {
        let out_dir = dir.path().join(format!("out-{lang}"));
        std::fs::create_dir(&out_dir).expect("out");
        let out = Command::new(binary())
            .args(["report", "flaky-h200", "--since", "1h", "--lang", lang])
            .arg("--from")
            .arg(&recording)
            .arg("--out")
            .arg(&out_dir)
            .arg("--config")
            .arg(&config)
            .env("GPUFLEET_STATE_DIR", &state)
            .output()
            .expect("report");
        let bundle = written_bundle(&out);
        let read = |name: &str| std::fs::read_to_string(bundle.join(name)).expect(name);
        (
            read("report.md"),
            read("nvidia-smi-q.txt"),
            read("report.json"),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let (en, _, _, _) = report("en");
    let (zh, zh_smi_q, zh_json, zh_said) = report("zh-CN");

    // Chinese headings, table rows, sentences and timeline.
    for want in [
        "# 故障报告：flaky-h200\n",
        "| 主机 | flaky-h200 |",
        "| 结论 | 自 ",
        "| 时间窗口（UTC） | ",
        "| 数据来源 | 录制文件 session.ndjson |",
        "## 经过\n",
        "读不到 GPU：掉卡",
        "已连接（驱动 ",
        "## 发现\n",
        "- **gpu_lost**（严重",
        "  处理：",
        "## GPU 列表\n",
        "| GPU | 卡型 | PCI | UUID |",
        "个采样（`samples.csv`）。",
        "## 证据（原文）\n",
        "## 验卡\n",
        "结果 **通过**。",
        "## 运维手册步骤与操作（审计日志）\n",
        "## 故障期间计费\n",
        "这台主机没有账本",
        "## 英文工单\n",
        "## 简体中文工单\n",
        "## 文件\n",
        "- `report.json`",
        "## 备注\n",
        "此时间窗口内没有 `nvidia-smi -q`",
    ] {
        assert!(zh.contains(want), "{want:?} missing:\n{zh}");
    }
    assert!(
        zh_smi_q.starts_with("# 此时间窗口内没有 `nvidia-smi -q`"),
        "{zh_smi_q}"
    );

    // None of our English sentences is left (the English ticket is English on purpose).
    let english_ticket = fenced(&zh, "英文工单");
    let ours = zh.replace(english_ticket, "");
    for section in ["report_md", "report_timeline", "report_words"] {
        for (key, text) in english_texts(section) {
            for piece in sentence_pieces(&text) {
                for (name, file) in [("report.md", &ours), ("nvidia-smi-q.txt", &zh_smi_q)] {
                    assert!(
                        !file.contains(&piece),
                        "{name} says {piece:?} ({key}) in English:\n{file}"
                    );
                }
            }
        }
    }
    for line in en.lines().filter(|l| l.starts_with('#')) {
        assert!(!zh.lines().any(|l| l == line), "an English heading: {line}");
    }
    for row in ["| Host |", "| Verdict |", "| From |", "| Written |"] {
        assert!(!zh.contains(row), "{row}:\n{zh}");
    }

    // Times, hours and money as the English report writes them (the Written row aside).
    let stamp = regex::Regex::new(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z").expect("regex");
    for line in en.lines().filter(|l| !l.starts_with("| Written |")) {
        for at in stamp.find_iter(line) {
            assert!(zh.contains(at.as_str()), "{} missing:\n{zh}", at.as_str());
        }
    }
    let billed = en
        .lines()
        .find_map(|l| l.strip_prefix("| Billed while broken | "))
        .and_then(|l| l.strip_suffix(" |"))
        .expect("billed row");
    assert!(billed.contains("USD"), "{billed}");
    assert!(
        zh.contains(&format!("| 故障期间计费 | {billed} |")),
        "{billed}:\n{zh}"
    );

    // Each ticket in its own language, the same in both reports.
    assert_eq!(english_ticket, fenced(&en, "Ticket (English)"));
    assert_eq!(fenced(&zh, "简体中文工单"), fenced(&en, "工单（简体中文）"));
    let cjk =
        |c: char| ('\u{3000}'..='\u{9fff}').contains(&c) || ('\u{ff00}'..='\u{ffef}').contains(&c);
    assert!(
        !english_ticket.chars().any(cjk),
        "the English ticket of a Chinese report:\n{english_ticket}"
    );
    let chinese_ticket = fenced(&zh, "简体中文工单");
    for want in [
        "主题：flaky-h200 GPU 故障：内核报告 Xid 错误（xid_79），自 ",
        "Xid 79（ROBUST_CHANNEL_GPU_HAS_FALLEN_OFF_THE_BUS）：GPU 从总线上掉了（掉卡）",
        "gpufleet 的诊断：",
        "的验卡结果：通过。",
    ] {
        assert!(chinese_ticket.contains(want), "{want}:\n{chinese_ticket}");
    }
    assert!(
        chinese_ticket.contains(&format!("我们被计费 {billed}。")),
        "the same figures:\n{chinese_ticket}"
    );

    // report.json: English keys and identifiers, the reader's words.
    let json: serde_json::Value = serde_json::from_str(&zh_json).expect("json");
    assert_eq!(json["verdict"], "fault");
    assert_eq!(json["check"]["result"], "pass");
    assert_eq!(json["source"], "录制文件 session.ndjson");
    assert!(
        json["analysis"]["evidence"]
            .as_array()
            .expect("evidence")
            .iter()
            .any(|e| e["kind"] == "kernel"),
        "{json}"
    );

    // What the command says, and a host with nothing recorded.
    assert!(
        zh_said.contains("起故障（") && zh_said.contains("）；工单文本见 report.md"),
        "{zh_said}"
    );
    let path = recording.to_str().expect("utf-8");
    let none = gpufleet(
        &["report", "no-such-host", "--lang", "zh-CN", "--from", path],
        &state,
    );
    assert_eq!(none.status.code(), Some(1));
    let said = String::from_utf8_lossy(&none.stderr);
    assert!(
        said.contains("没有 no-such-host 的记录（查找范围：录制文件 session.ndjson；"),
        "{said}"
    );
}

/// The host's acceptance check as the state directory keeps it: a real one, of an H200.
fn place_h200_check(state: &Path) {
    let checks = state.join("checks/flaky-h200");
    std::fs::create_dir_all(&checks).expect("checks dir");
    let check = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/check/real-h200/check-local.json"
    ))
    .expect("check report")
    .replace("\"host\": \"local\"", "\"host\": \"flaky-h200\"");
    std::fs::write(checks.join("2026-11-29T13-38-35.123Z.json"), check).expect("check");
}
