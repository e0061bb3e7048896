//! A console and a watcher on one state directory: each alert reaches the sinks once, sent by
//! whichever holds the alerts duty; the console shows every alert and who sent it (`!`); when
//! the console that held a duty quits, the watcher takes it over (alerts and auto-release).
//! Real sshd hosts, the console in tmux, the watcher as a child, a loopback webhook.

use crate::common;
use crate::release_server as server;
use crate::tmux;
use crate::watcher;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use common::sshd::Sshd;
use server::{Server, answer};
use tmux::{Tmux, binary};
use watcher::Watcher;

const WAIT: Duration = Duration::from_secs(40);

struct Fixture {
    dir: tempfile::TempDir,
    config: PathBuf,
    known_hosts: PathBuf,
    hook: Server,
    sshd: Sshd,
}

impl Fixture {
    fn new(extra_host_keys: &str) -> Option<Self> {
        let sshd = Sshd::start()?;
        let dir = tempfile::tempdir().expect("temp");
        let known_hosts = dir.path().join("known_hosts");
        std::fs::write(&known_hosts, sshd.known_hosts_line("ed25519")).expect("known_hosts");
        let hook = Server::start(vec![answer(200, "{}")]);
        let config = dir.path().join("config.toml");
        std::fs::write(
            &config,
            format!(
                "interval_ms = 500\ncountdown_s = 10\n\n[[hosts]]\nname = \"h1\"\nssh = \"{}@127.0.0.1:{}\"\nidentity_file = \"{}\"\n{extra_host_keys}\n\
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
            sshd,
        })
    }

    fn state(&self) -> PathBuf {
        self.dir.path().join("state")
    }

    fn watch(&self) -> Watcher {
        let log = self.dir.path().join("watch.log");
        Watcher::start(
            &binary(),
            &self.config,
            &self.known_hosts,
            &self.state(),
            &log,
        )
    }

    fn console(&self) -> Option<Tmux> {
        let command = format!(
            "GPUFLEET_STATE_DIR={} SSH_AUTH_SOCK= {} --known-hosts {} --config {}; echo EXIT=$?; sleep 30",
            self.state().display(),
            binary().display(),
            self.known_hosts.display(),
            self.config.display()
        );
        let tmux = Tmux::start(&command, 160, 30)?;
        tmux.wait_for("h1", WAIT);
        Some(tmux)
    }

    /// The webhook's `gpu_lost` alerts in `state`.
    fn gpu_lost(&self, state: &str) -> usize {
        self.hook
            .requests()
            .iter()
            .map(|r| r.json())
            .filter(|a| a["label"] == "gpu_lost" && a["state"] == state)
            .count()
    }

    /// The host's GPU falls off the bus: its running stream ends, and every later
    /// `nvidia-smi` prints the driver's GPU-lost text.
    fn lose_gpu(&self) {
        self.sshd.set_scenario("gpu-lost");
        std::fs::write(self.sshd.dir().join("lost"), "").expect("lost");
        end_stream(&self.sshd);
    }

    /// The GPU is back (after a reset): the next stream reads it again.
    fn recover_gpu(&self) {
        self.sshd.set_scenario("healthy");
        let _ = std::fs::remove_file(self.sshd.dir().join("lost"));
    }
}

/// The host's running `nvidia-smi -lms` streams (the shells and the awk replaying them).
fn streams(sshd: &Sshd) -> Vec<(u32, String)> {
    sshd.host_processes()
        .into_iter()
        .filter_map(|pid| {
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
            let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
            ((cmdline.contains("nvidia-smi") && cmdline.contains("-lms"))
                || cmdline.contains("pause="))
            .then_some((pid, cmdline))
        })
        .collect()
}

/// Kills the host's running streams so each link starts a new one.
fn end_stream(sshd: &Sshd) {
    for (pid, _) in streams(sshd) {
        let _ = Command::new("kill").arg(pid.to_string()).status();
    }
}

/// Waits until `n` streams were started on the host (one `nvidia-smi -lms` per link).
fn wait_for_streams(sshd: &Sshd, n: usize) {
    let started = || {
        sshd.calls("nvidia-smi")
            .iter()
            .filter(|c| c.contains("-lms"))
            .count()
    };
    wait_until(
        &format!("{n} streams start on the host"),
        &|| format!("{:?}", sshd.calls("nvidia-smi")),
        || started() >= n,
    );
    // The stream's processes run a moment after the call is logged.
    std::thread::sleep(Duration::from_millis(500));
}

/// Waits up to `WAIT`.
fn wait_until(what: &str, why: &dyn Fn() -> String, ok: impl FnMut() -> bool) {
    watcher::wait_until(what, WAIT, why, ok);
}

fn exists(path: &Path) -> bool {
    path.exists()
}

#[test]
fn each_alert_is_sent_once_and_the_watcher_takes_over_when_the_console_quits() {
    let Some(fx) = Fixture::new("") else { return };
    let Some(console) = fx.console() else { return };
    // The console came first: it sends the alerts; the watcher keeps its books and waits.
    let watcher = fx.watch();
    wait_until(
        "the watcher defers to the console",
        &|| watcher.log(),
        || {
            watcher
                .log()
                .contains("alerts are sent by gpufleet console (pid ")
        },
    );
    wait_until("h1 streams in the console", &|| console.screen(), || {
        console.screen().contains("H200")
    });
    wait_for_streams(&fx.sshd, 2);

    fx.lose_gpu();
    wait_until("the lost GPU is alerted", &|| watcher.log(), || {
        fx.gpu_lost("firing") > 0
    });
    // Both processes see the GPU lost; give a second sender time to show up.
    wait_until("the watcher sees it too", &|| watcher.log(), || {
        watcher.log().contains("gpu_lost")
    });
    std::thread::sleep(Duration::from_secs(3));
    assert_eq!(fx.gpu_lost("firing"), 1, "one process sends each alert");
    assert!(
        watcher.log().contains("sent_here=false"),
        "{}",
        watcher.log()
    );

    // The console shows it: a notice, and `!` lists it with who sent it.
    console.keys(&["!"]);
    let screen = console.wait_for("gpu_lost", WAIT);
    assert!(screen.contains("FIRING"), "{screen}");
    assert!(
        screen.contains("sent by this console to webhook"),
        "{screen}"
    );
    assert!(screen.contains("webhook: 1 delivered"), "{screen}");
    console.keys(&["Escape", "q"]);
    console.wait_for("EXIT=", WAIT);

    // The console is gone: the watcher takes the alerts over and sends the resolve.
    wait_until(
        "the watcher takes the alerts over",
        &|| watcher.log(),
        || watcher.log().contains("alerts taken over"),
    );
    fx.recover_gpu();
    wait_until("the recovery is alerted", &|| watcher.log(), || {
        fx.gpu_lost("resolved") > 0
    });
    std::thread::sleep(Duration::from_secs(2));
    assert_eq!(fx.gpu_lost("resolved"), 1);
    assert_eq!(fx.gpu_lost("firing"), 1);
}

#[test]
fn a_console_beside_a_watcher_shows_the_alerts_the_watcher_sends() {
    let Some(fx) = Fixture::new("") else { return };
    let watcher = fx.watch();
    wait_until("the watcher connects", &|| watcher.log(), || {
        watcher.log().contains("connected")
    });
    let Some(console) = fx.console() else { return };
    wait_for_streams(&fx.sshd, 2);
    fx.lose_gpu();
    wait_until("the lost GPU is alerted", &|| watcher.log(), || {
        fx.gpu_lost("firing") > 0
    });
    let screen = console.wait_for("alert: h1", WAIT);
    assert!(screen.contains("gpu"), "{screen}");
    console.keys(&["!"]);
    let screen = console.wait_for("gpu_lost", WAIT);
    assert!(screen.contains("sent by gpufleet watch (pid "), "{screen}");
    std::thread::sleep(Duration::from_secs(3));
    assert_eq!(fx.gpu_lost("firing"), 1, "one process sends each alert");
}

#[test]
fn the_watcher_takes_auto_release_over_from_a_console_that_quits() {
    // Billed for two hours at 100 USD/h with max_spend = 1: over budget at once.
    let billing_started = watcher::hours_ago(2);
    let marker_dir = tempfile::tempdir().expect("temp");
    let marker = marker_dir.path().join("released-i-1");
    let host_keys = format!(
        "price_per_hour = 100.0\ncurrency = \"USD\"\nbilling_started = \"{billing_started}\"\nmax_spend = 1.0\nauto_release = true\n\
         [hosts.release]\nprovider = \"command\"\ninstance_id = \"i-1\"\ncommand = [\"touch\", \"{}/released-{{instance_id}}\"]\n",
        marker_dir.path().display()
    );
    let Some(fx) = Fixture::new(&host_keys) else {
        return;
    };
    fx.sshd.set_scenario("idle");
    let Some(console) = fx.console() else { return };
    let watcher = fx.watch();
    wait_until(
        "the watcher defers to the console",
        &|| watcher.log(),
        || {
            watcher
                .log()
                .contains("auto-release is done by gpufleet console (pid ")
        },
    );
    // Quit at once, before the console's countdown runs out (any key cancels it; `q` quits).
    console.keys(&["q"]);
    console.wait_for("EXIT=", WAIT);
    assert!(!exists(&marker), "the console released before quitting");
    wait_until(
        "the watcher takes auto-release over",
        &|| watcher.log(),
        || watcher.log().contains("auto-release taken over"),
    );
    wait_until("the watcher releases the host", &|| watcher.log(), || {
        exists(&marker)
    });
}
