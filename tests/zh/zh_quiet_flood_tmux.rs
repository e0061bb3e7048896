//! The last English a host's state put on screen, in Chinese, over a real sshd in a real
//! terminal (tmux) at 80x24 with `--lang zh-CN`: a host that floods says what it sent over its
//! budget in Chinese in its row, while the log keeps the English; a host
//! that stops answering says for how long it sent nothing, in Chinese; and a recording's
//! flooding line replays in Chinese from its catalogue words.

use crate::common;
use crate::tmux;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use common::sshd::Sshd;
use tmux::{Tmux, binary};

const WAIT: Duration = Duration::from_secs(20);

fn config(sshd: &Sshd, dir: &Path, name: &str) -> PathBuf {
    let path = dir.join("config.toml");
    let text = format!(
        "interval_ms = 500\n\n[[hosts]]\nname = \"{name}\"\nssh = \"{}@127.0.0.1:{}\"\nidentity_file = \"{}\"\n",
        sshd.user,
        sshd.port,
        sshd.client_key().display()
    );
    std::fs::write(&path, text).expect("config");
    path
}

/// The console in Chinese at 80x24 on `config`, its log under `state`.
fn console(sshd: &Sshd, config: &Path, state: &Path) -> Option<Tmux> {
    let command = format!(
        "GPUFLEET_STATE_DIR={state} SSH_AUTH_SOCK= {bin} --lang zh-CN --config {config} \
         --known-hosts {known}; echo EXIT=$?; sleep 30",
        state = state.display(),
        bin = binary().display(),
        config = config.display(),
        known = sshd.trusted_known_hosts().display(),
    );
    Tmux::start(&command, 80, 24)
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

#[test]
fn a_flooding_hosts_detail_reads_in_chinese_in_its_row_and_in_english_in_the_log() {
    let Some(sshd) = Sshd::start() else { return };
    sshd.set_scenario("flood");
    let dir = tempfile::tempdir().expect("temp");
    let config = config(&sshd, dir.path(), "flood-box");
    let state = dir.path().join("state");
    let Some(tmux) = console(&sshd, &config, &state) else {
        return;
    };
    let screen = tmux.wait_for("超出预算", WAIT);
    let row = screen
        .lines()
        .find(|l| l.contains("flood-box") && l.contains("输出过多"))
        .unwrap_or_else(|| panic!("a flooding row:\n{screen}"));
    assert!(
        row.contains("超出预算"),
        "the detail in Chinese in the row:\n{screen}"
    );
    assert!(
        !screen.contains("over budget") && !screen.contains("from the nvidia-smi"),
        "no English flood detail on screen:\n{screen}"
    );
    let log = wait_for_file(&state.join("gpufleet.log"), "flooding");
    let line = log
        .lines()
        .find(|l| l.contains("flooding") && l.contains("flood-box"))
        .expect("a flooding line");
    assert!(
        line.contains("over budget:") && line.contains("output past that is dropped"),
        "the log says it in English: {line}"
    );
    tmux.keys(&["q"]);
    tmux.wait_for("EXIT=0", WAIT);
}

#[test]
fn a_host_that_stops_answering_says_so_in_chinese() {
    let Some(sshd) = Sshd::start() else { return };
    let dir = tempfile::tempdir().expect("temp");
    let config = config(&sshd, dir.path(), "quiet-box");
    let state = dir.path().join("state");
    let Some(tmux) = console(&sshd, &config, &state) else {
        return;
    };
    tmux.wait_for("1x H200", WAIT);
    // The network path dies: the session stays open but nothing comes.
    let frozen = sshd.freeze_sessions();
    assert!(!frozen.is_empty(), "a session to freeze");
    let screen = tmux.wait_for("无数据", WAIT);
    let lines: Vec<&str> = screen.lines().collect();
    let row = lines
        .iter()
        .position(|l| l.contains("quiet-box") && l.contains("连不上"))
        .unwrap_or_else(|| panic!("an unreachable row:\n{screen}"));
    let row_and_under = format!("{}{}", lines[row], lines.get(row + 1).unwrap_or(&""));
    assert!(
        row_and_under.contains("无数据"),
        "the quiet outage in Chinese by its row:\n{screen}"
    );
    assert!(
        !screen.contains("no data for"),
        "no English outage on screen:\n{screen}"
    );
    tmux.keys(&["Enter"]);
    let host = tmux.wait_for("没有发来数据", WAIT);
    assert!(
        !host.contains("no data from the host"),
        "no English reason in the host view:\n{host}"
    );
    sshd.thaw(&frozen);
    tmux.keys(&["q"]);
    tmux.wait_for("EXIT=0", WAIT);
}

#[test]
fn a_recorded_flood_replays_in_chinese_and_an_old_one_as_written() {
    if Tmux::start("true", 10, 5).is_none() {
        return;
    }
    let dir = tempfile::tempdir().expect("temp");
    let detail = "over budget: 70 lines, 7 KiB in 1 s from the nvidia-smi stream (budget 64 \
                  lines, 64 KiB); output past that is dropped";
    let replayed = |name: &str, version: u32, words: &str, wanted: &str| {
        let path = dir.path().join(name);
        let header = format!(
            "{{\"format\":\"gpufleet-recording\",\"version\":{version},\"gpufleet\":\"0.1.0\",\
             \"started_ms\":1000,\"started\":\"1970-01-01T00:00:01Z\",\"hosts\":[\"h\"]}}"
        );
        let sample = "{\"t_ms\":1050,\"host\":\"h\",\"event\":{\"kind\":\"connected\",\"info\":{\"source\":\"ssh\"}}}";
        let flood = format!(
            "{{\"t_ms\":1100,\"host\":\"h\",\"event\":{{\"kind\":\"flooding\",\"at_ms\":1100,\
             \"detail\":\"{detail}\"{words}}}}}"
        );
        std::fs::write(&path, format!("{header}\n{sample}\n{flood}\n")).expect("recording");
        let command = format!(
            "{} replay {} --lang zh-CN; echo EXIT=$?; sleep 30",
            binary().display(),
            path.display()
        );
        let tmux = Tmux::start(&command, 80, 24).expect("tmux");
        let screen = tmux.wait_for(wanted, WAIT);
        tmux.keys(&["q"]);
        screen
    };
    let words = ",\"detail_words\":{\"key\":\"flood_words.over_budget\",\"args\":{\
                 \"budget_kib\":\"64\",\"budget_lines\":\"64\",\"kib\":\"7\",\"lines\":\"70\",\
                 \"what\":{\"key\":\"flood_words.stream\"},\"within\":\"1 s\"}}";
    let zh = replayed("new.ndjson", 4, words, "超出预算");
    assert!(!zh.contains("over budget"), "{zh}");
    let old = replayed("old.ndjson", 3, "", "over budget");
    assert!(!old.contains("超出预算"), "{old}");
}

/// A demo host's view in Chinese: its readings' source and the card's clock reasons are
/// the catalogue's words, not the telemetry's English labels.
#[test]
fn a_hosts_clock_reasons_and_source_read_in_chinese() {
    let dir = tempfile::tempdir().expect("temp");
    let command = format!(
        "GPUFLEET_STATE_DIR={} {} --demo --lang zh-CN; echo EXIT=$?; sleep 30",
        dir.path().display(),
        binary().display()
    );
    let Some(tmux) = Tmux::start(&command, 80, 24) else {
        return;
    };
    tmux.wait_for("hot-4090", WAIT);
    // hot-4090 is the third row: its card throttles for heat.
    tmux.keys(&["Down", "Down", "Enter"]);
    let screen = tmux.wait_for("时钟：", WAIT);
    let header = screen
        .lines()
        .find(|l| l.contains("hot-4090"))
        .unwrap_or_default();
    assert!(header.contains("模拟"), "the source in Chinese:\n{screen}");
    assert!(!screen.contains("simulated"), "{screen}");
    let clocks = screen
        .lines()
        .find(|l| l.contains("时钟："))
        .unwrap_or_default();
    assert!(
        clocks.contains("降频"),
        "the clock reasons in Chinese:\n{screen}"
    );
    assert!(
        !clocks.contains("slowdown") && !clocks.contains("power cap"),
        "no English clock reason:\n{screen}"
    );
    tmux.keys(&["q"]);
    tmux.wait_for("EXIT=", WAIT);
}
