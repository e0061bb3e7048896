//! The SSH link's notices in the user's language, over a real sshd in a real terminal (tmux):
//! with `--lang zh-CN` the host view's header line says the notice in Chinese at 80x24, with
//! what the host printed quoted as it came, while the log file and the recording keep it in
//! English (the recording with its catalogue key, so a replay can say it in either language).

use crate::common;
use crate::tmux;

use std::path::Path;
use std::time::{Duration, Instant};

use common::sshd::Sshd;
use tmux::{Tmux, binary};

const WAIT: Duration = Duration::from_secs(20);
/// What the fake `dmesg` of the `dmesg-denied` scenario prints (a real container's denial).
const DENIED: &str = "dmesg: read kernel buffer failed: Operation not permitted";

fn write_config(sshd: &Sshd, dir: &Path) -> std::path::PathBuf {
    let path = dir.join("config.toml");
    let text = format!(
        "interval_ms = 500\n\n[[hosts]]\nname = \"h200-test\"\nssh = \"{}@127.0.0.1:{}\"\nidentity_file = \"{}\"\n",
        sshd.user,
        sshd.port,
        sshd.client_key().display()
    );
    std::fs::write(&path, text).expect("config");
    path
}

/// Waits until the file at `path` holds `needle`, returning its text.
fn wait_for_file(path: &Path, needle: &str) -> String {
    let start = Instant::now();
    loop {
        let text = std::fs::read_to_string(path).unwrap_or_default();
        if text.contains(needle) {
            return text;
        }
        assert!(
            start.elapsed() < WAIT,
            "no {needle:?} in {}:\n{text}",
            path.display()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn has_cjk(text: &str) -> bool {
    text.chars().any(|c| ('\u{4e00}'..='\u{9fff}').contains(&c))
}

#[test]
fn a_link_notice_reads_in_chinese_on_screen_and_in_english_in_the_log_and_recording() {
    let Some(sshd) = Sshd::start() else { return };
    sshd.set_scenario("dmesg-denied");
    let dir = tempfile::tempdir().expect("temp");
    let config = write_config(&sshd, dir.path());
    let state = dir.path().join("state");
    let recording = dir.path().join("rec.ndjson");
    let command = format!(
        "GPUFLEET_STATE_DIR={state} SSH_AUTH_SOCK= {bin} --lang zh-CN --config {config} \
         --known-hosts {known} --record {recording}; echo EXIT=$?; sleep 30",
        state = state.display(),
        bin = binary().display(),
        config = config.display(),
        known = sshd.trusted_known_hosts().display(),
        recording = recording.display(),
    );
    let Some(tmux) = Tmux::start(&command, 80, 24) else {
        return;
    };
    tmux.wait_for("在线", WAIT);
    tmux.keys(&["Enter"]);
    let screen = tmux.wait_for("内核日志", WAIT);
    let header = screen
        .lines()
        .find(|l| l.contains("h200-test"))
        .unwrap_or_default();
    // The notice follows the facts and is cut where the line ends: its start is on screen.
    assert!(
        header.contains("这台主机上读不了内核日志"),
        "the notice in Chinese on the header line:\n{screen}"
    );
    assert!(
        !screen.contains("kernel log") && !screen.contains("not readable"),
        "no English notice on screen:\n{screen}"
    );

    let log = wait_for_file(&state.join("gpufleet.log"), "notice");
    let line = log
        .lines()
        .find(|l| l.contains("notice") && l.contains("h200-test"))
        .expect("a notice line");
    assert!(
        line.contains(&format!(
            "the kernel log is not readable on this host, so Xid lines will not show ({DENIED})"
        )),
        "the log says it in English: {line}"
    );
    assert!(!has_cjk(&log), "the log stays English:\n{log}");

    tmux.keys(&["q"]);
    tmux.wait_for("EXIT=0", WAIT);
    let recorded = wait_for_file(&recording, "\"kind\":\"notice\"");
    let notice = recorded
        .lines()
        .find(|l| l.contains("\"kind\":\"notice\""))
        .expect("a notice line");
    assert!(
        notice.contains("\"text\":\"the kernel log is not readable on this host")
            && notice.contains("\"key\":\"link_notice.kernel_unreadable\"")
            && notice.contains(DENIED),
        "the recording keeps the English text and the key: {notice}"
    );
    assert!(!has_cjk(&recorded), "the recording stays English");
}

/// A port on 127.0.0.1 where nothing listens (bound, then let go).
fn closed_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    listener.local_addr().expect("addr").port()
}

#[test]
fn a_down_hosts_reason_reads_in_chinese_under_its_row_and_in_english_in_the_log() {
    let Some(sshd) = Sshd::start() else { return };
    let dir = tempfile::tempdir().expect("temp");
    let port = closed_port();
    let config = dir.path().join("config.toml");
    std::fs::write(
        &config,
        format!(
            "interval_ms = 500\n\n[[hosts]]\nname = \"down-box\"\nssh = \"{}@127.0.0.1:{port}\"\nidentity_file = \"{}\"\n",
            sshd.user,
            sshd.client_key().display()
        ),
    )
    .expect("config");
    let state = dir.path().join("state");
    let command = format!(
        "GPUFLEET_STATE_DIR={state} SSH_AUTH_SOCK= {bin} --lang zh-CN --config {config} \
         --known-hosts {known}; echo EXIT=$?; sleep 30",
        state = state.display(),
        bin = binary().display(),
        config = config.display(),
        known = sshd.trusted_known_hosts().display(),
    );
    let Some(tmux) = Tmux::start(&command, 80, 24) else {
        return;
    };
    let addr = format!("127.0.0.1:{port}");
    let screen = tmux.wait_for("无法连接", WAIT);
    let lines: Vec<&str> = screen.lines().collect();
    let row = lines
        .iter()
        .position(|l| l.contains("down-box") && l.contains("连不上"))
        .unwrap_or_else(|| panic!("a down row:\n{screen}"));
    let under = lines.get(row + 1).copied().unwrap_or_default();
    // The few words first, the whole message last (cut with an ellipsis at 80 columns).
    assert!(
        under.contains("连接被拒绝"),
        "the few words in Chinese:\n{screen}"
    );
    assert!(
        under.contains("无法连接"),
        "the whole message in Chinese under the row:\n{screen}"
    );
    assert!(
        !screen.contains("cannot connect") && !screen.contains("connection refused ·"),
        "no English link error on screen:\n{screen}"
    );
    // The host view's header says why in Chinese too.
    tmux.keys(&["Enter"]);
    let host = tmux.wait_for("(无法连接", WAIT);
    assert!(
        !host.contains("cannot connect"),
        "no English link error in the host view:\n{host}"
    );
    let log = wait_for_file(&state.join("gpufleet.log"), "disconnected");
    let line = log
        .lines()
        .find(|l| l.contains("disconnected") && l.contains("down-box"))
        .expect("a disconnected line");
    assert!(
        line.contains(&format!("cannot connect to {addr}")),
        "the log says it in English: {line}"
    );
    assert!(!has_cjk(&log), "the log stays English:\n{log}");
    tmux.keys(&["q"]);
    tmux.wait_for("EXIT=0", WAIT);
}

/// A recording of one host `h` that says `notice` (the event's JSON) once, with `version` in
/// its header.
fn recording_with(dir: &Path, name: &str, version: u32, notice: &str) -> std::path::PathBuf {
    let path = dir.join(name);
    let header = format!(
        "{{\"format\":\"gpufleet-recording\",\"version\":{version},\"gpufleet\":\"0.1.0\",\
         \"started_ms\":1000,\"started\":\"1970-01-01T00:00:01Z\",\"hosts\":[\"h\"]}}"
    );
    let line = format!("{{\"t_ms\":1100,\"host\":\"h\",\"event\":{notice}}}");
    std::fs::write(&path, format!("{header}\n{line}\n")).expect("recording");
    path
}

/// The host view's header of host `h` once a replay of `recording` in Chinese shows `wanted`.
fn replayed_header(recording: &Path, wanted: &str) -> String {
    let command = format!(
        "{} replay {} --lang zh-CN; echo EXIT=$?; sleep 30",
        binary().display(),
        recording.display()
    );
    let tmux = Tmux::start(&command, 80, 24).expect("tmux");
    tmux.wait_for("│h ", WAIT);
    tmux.keys(&["Enter"]);
    let screen = tmux.wait_for(wanted, WAIT);
    tmux.keys(&["q"]);
    screen
        .lines()
        .find(|l| l.starts_with(" h "))
        .unwrap_or_default()
        .to_string()
}

#[test]
fn a_notice_replays_from_an_old_recording_as_written_and_from_a_new_one_in_chinese() {
    if Tmux::start("true", 10, 5).is_none() {
        return;
    }
    let dir = tempfile::tempdir().expect("temp");
    // Version 3 and before: the notice is its English text only, and replays as it was written.
    let old = recording_with(
        dir.path(),
        "old.ndjson",
        3,
        "{\"kind\":\"notice\",\"at_ms\":1100,\"text\":\"nvidia-smi on this host does not know \
         the field power.limit; reading the others\"}",
    );
    let header = replayed_header(&old, "nvidia-smi on this host");
    assert!(header.contains("does not know the field"), "{header}");
    // Version 4: the English text, the key and the values; replayed in the user's language.
    let new = recording_with(
        dir.path(),
        "new.ndjson",
        4,
        "{\"kind\":\"notice\",\"at_ms\":1100,\"text\":\"nvidia-smi on this host does not know \
         the field power.limit; reading the others\",\"key\":\"link_notice.field_unknown\",\
         \"args\":{\"field\":\"power.limit\"}}",
    );
    let header = replayed_header(&new, "不认识字段 power.limit");
    assert!(!header.contains("does not know"), "{header}");
}
