//! What a renter sees when an alert sink hangs: a webhook on loopback that reads each alert and
//! never answers, and a host behind a real OpenSSH server whose GPU is lost. The console's
//! alerts panel (`!`) marks the sink down, at 80x24 and 100x30, in English and in Chinese;
//! `gpufleet watch` stopped while the sink hangs names on stderr the alerts that sink never got,
//! and exits as documented (0 after SIGTERM, 130 after SIGINT, within two seconds).

use crate::common;
use crate::release_server as server;
use crate::tmux;
use crate::watcher;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::sshd::Sshd;
use server::{Reply, Server};
use tmux::{Tmux, binary};

/// Two tries of 10 s each hang before the sink is marked down; the rest is slack for a busy
/// machine.
const WAIT: Duration = Duration::from_secs(90);

/// One host whose GPU is lost, a webhook that never answers, and the config naming both.
struct Fixture {
    dir: tempfile::TempDir,
    config: PathBuf,
    known_hosts: PathBuf,
    hook: Server,
    _sshd: Sshd,
}

impl Fixture {
    fn new() -> Option<Self> {
        let sshd = Sshd::start()?;
        sshd.set_scenario("gpu-lost");
        let dir = tempfile::tempdir().expect("temp");
        let known_hosts = dir.path().join("known_hosts");
        std::fs::write(&known_hosts, sshd.known_hosts_line("ed25519")).expect("known_hosts");
        let hook = Server::start(vec![Reply::Silent]);
        let config = dir.path().join("config.toml");
        std::fs::write(
            &config,
            format!(
                "interval_ms = 500\n\n[[hosts]]\nname = \"h1\"\nssh = \"{}@127.0.0.1:{}\"\nidentity_file = \"{}\"\n\n\
                 [[alerts]]\nkind = \"webhook\"\nurl = \"{}/hook\"\n",
                sshd.user,
                sshd.port,
                sshd.client_key().display(),
                hook.base_url
            ),
        )
        .expect("config");
        Some(Self {
            dir,
            config,
            known_hosts,
            hook,
            _sshd: sshd,
        })
    }

    /// A console of its own (its own state directory, so it holds the alerts duty) in a
    /// `width` x `height` terminal, with `args` added.
    fn console(&self, name: &str, args: &str, width: u16, height: u16) -> Option<Tmux> {
        let command = format!(
            "GPUFLEET_STATE_DIR={} SSH_AUTH_SOCK= {} {args} --known-hosts {} --config {}; echo EXIT=$?; sleep 30",
            self.dir.path().join(name).display(),
            binary().display(),
            self.known_hosts.display(),
            self.config.display()
        );
        Tmux::start(&command, width, height)
    }

    /// `gpufleet watch` with `args` added, its stderr in a file.
    fn watch(&self, args: &[&str]) -> (Child, PathBuf) {
        let stderr = self.dir.path().join("watch.log");
        let child = Command::new(binary())
            .arg("watch")
            .args(args)
            .arg("--known-hosts")
            .arg(&self.known_hosts)
            .arg("--config")
            .arg(&self.config)
            .env("GPUFLEET_STATE_DIR", self.dir.path().join("state"))
            .env("SSH_AUTH_SOCK", "")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&stderr).expect("log"))
            .spawn()
            .expect("spawn gpufleet watch");
        (child, stderr)
    }

    /// The `gpu_lost` alerts the webhook has read (and not answered).
    fn gpu_lost_requests(&self) -> usize {
        self.hook
            .requests()
            .iter()
            .filter(|r| r.json()["label"] == "gpu_lost")
            .count()
    }
}

/// The line of `screen` naming the webhook sink's deliveries (`webhook:` / `webhook：`).
fn sink_line<'a>(screen: &'a str, delivered: &str) -> Option<&'a str> {
    screen
        .lines()
        .find(|l| l.contains("webhook") && l.contains(delivered))
}

/// Two consoles (80x24 and 100x30) in `lang` on one host whose GPU is lost: once the lost GPU
/// has been sent to the hanging webhook, each one's alerts panel shows the alert and, on the
/// sink's line, that it is down.
fn the_alerts_panel_marks_the_hanging_sink_down(lang: &str, delivered: &str, down: &str) {
    let Some(fx) = Fixture::new() else { return };
    let args = format!("--lang {lang}");
    let mut consoles = Vec::new();
    for (width, height) in [(80, 24), (100, 30)] {
        let name = format!("state-{width}x{height}");
        let Some(console) = fx.console(&name, &args, width, height) else {
            return;
        };
        consoles.push((width, height, console));
    }
    watcher::wait_until(
        "the lost GPU reaches the webhook",
        WAIT,
        &|| {
            consoles
                .iter()
                .map(|(_, _, c)| c.screen())
                .collect::<Vec<_>>()
                .join("\n")
        },
        || fx.gpu_lost_requests() > 0,
    );
    for (width, height, console) in &consoles {
        console.keys(&["!"]);
        let screen = console.wait_until(
            &format!("the sink marked down at {width}x{height}"),
            WAIT,
            |screen| sink_line(screen, delivered).is_some_and(|l| l.contains(down)),
        );
        assert!(screen.contains("gpu_lost"), "{width}x{height}:\n{screen}");
        let line = sink_line(&screen, delivered).unwrap_or_default();
        assert!(
            line.contains(&format!("webhook{delivered}")),
            "{width}x{height}: nothing delivered:\n{screen}"
        );
    }
    for (_, _, console) in &consoles {
        console.keys(&["Escape", "q"]);
        console.wait_for("EXIT=0", WAIT);
    }
}

#[test]
fn the_alerts_panel_marks_a_hanging_sink_down_in_english() {
    the_alerts_panel_marks_the_hanging_sink_down("en", ": 0 delivered", ", DOWN");
}

#[test]
fn the_alerts_panel_marks_a_hanging_sink_down_in_chinese() {
    the_alerts_panel_marks_the_hanging_sink_down("zh-CN", "：已投递 0", "，不可用");
}

/// Sends `signal` to `child` once the hanging webhook holds an alert; its exit code, how long it
/// took to stop and its stderr.
fn stop_while_the_sink_hangs(
    fx: &Fixture,
    child: &mut Child,
    stderr: &Path,
    signal: &str,
) -> (Option<i32>, Duration, String) {
    let log = || std::fs::read_to_string(stderr).unwrap_or_default();
    watcher::wait_until("the lost GPU reaches the webhook", WAIT, &log, || {
        fx.gpu_lost_requests() > 0
    });
    Command::new("kill")
        .args([signal, &child.id().to_string()])
        .status()
        .expect("kill");
    let sent = Instant::now();
    loop {
        if let Some(status) = child.try_wait().expect("wait") {
            return (status.code(), sent.elapsed(), log());
        }
        assert!(
            sent.elapsed() < Duration::from_secs(10),
            "still running 10 s after {signal}:\n{}",
            log()
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// The line of the watcher's stderr that names what `sink` never got (`gpufleet watch: …`).
fn undelivered_line<'a>(stderr: &'a str, says: &str) -> Option<&'a str> {
    stderr
        .lines()
        .find(|l| l.starts_with("gpufleet watch: ") && l.contains(says))
}

#[test]
fn sigterm_while_a_sink_hangs_names_the_undelivered_alerts_and_exits_0() {
    let Some(fx) = Fixture::new() else { return };
    let (mut child, stderr) = fx.watch(&[]);
    let (code, took, log) = stop_while_the_sink_hangs(&fx, &mut child, &stderr, "-TERM");
    assert_eq!(code, Some(0), "{log}");
    assert!(took < Duration::from_secs(2), "took {took:?}:\n{log}");
    let line = undelivered_line(&log, "not delivered to webhook before stopping: ")
        .unwrap_or_else(|| panic!("no undelivered alerts named:\n{log}"));
    assert!(
        line.contains("gpufleet watch: 1 alert not delivered") && line.contains("h1"),
        "{line}"
    );
    assert!(line.contains("gpu_lost"), "{line}");
    // The log says it too, as a structured line.
    assert!(
        log.contains("alerts not delivered before stopping") && log.contains("sink=webhook"),
        "{log}"
    );
}

#[test]
fn sigint_while_a_sink_hangs_names_the_undelivered_alerts_in_chinese_and_exits_130() {
    let Some(fx) = Fixture::new() else { return };
    let (mut child, stderr) = fx.watch(&["--lang", "zh-CN"]);
    let (code, took, log) = stop_while_the_sink_hangs(&fx, &mut child, &stderr, "-INT");
    assert_eq!(code, Some(130), "{log}");
    assert!(took < Duration::from_secs(2), "took {took:?}:\n{log}");
    let line = undelivered_line(&log, "条告警未能发送到 webhook：")
        .unwrap_or_else(|| panic!("no undelivered alerts named:\n{log}"));
    assert!(
        line.contains("停止前有 1 条") && line.contains("h1") && line.contains("gpu_lost"),
        "{line}"
    );
}
