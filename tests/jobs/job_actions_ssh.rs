//! Acting on a run that stopped learning, over a real sshd: a real process on the
//! sshd host holds the "GPU" (its PID in the fake nvidia-smi's process list) and writes a
//! captured `Trainer` log whose eval loss has plateaued (`hf_plateau.log`, up to its closing
//! summary: the run goes on). With `[[hosts.jobs]] on_plateau = "stop-job"` the watcher
//! announces the exact commands with the auto-release countdown, then sends the job SIGINT and,
//! as the job ignores it, SIGTERM after `stop_grace_s`; both are in the audit log. `gpufleet hold`
//! during the countdown leaves the job alone, and so does `--read-only`. The plateau's alert
//! says the money spent since the run stopped improving; a job past its own `max_run_hours` is a
//! red line.

use crate::common;
use crate::release_server as server;
use crate::tmux;
use crate::watcher;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::sshd::Sshd;
use server::{Server, answer};
use tmux::binary;

const WAIT: Duration = Duration::from_secs(40);

/// The job: writes the plateaued run's log to its stdout, then runs on, writing each signal it
/// gets to `signals` (SIGINT is noted and ignored; SIGTERM ends it).
struct Job {
    child: Child,
    signals: PathBuf,
}

impl Job {
    fn start(dir: &Path) -> Self {
        let source = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/training-logs/hf_plateau.log");
        let text = std::fs::read(&source).expect("fixture");
        let text = String::from_utf8_lossy(&text);
        let running = text.split("{'train_runtime'").next().unwrap_or_default();
        let partial = dir.join("plateau-running.log");
        std::fs::write(&partial, running).expect("partial log");
        let signals = dir.join("signals");
        let script = format!(
            "trap 'echo INT >> \"{s}\"' INT; trap 'echo TERM >> \"{s}\"; exit 0' TERM; \
             cat '{log}'; while :; do sleep 0.2; done",
            s = signals.display(),
            log = partial.display()
        );
        let out = std::fs::File::create(dir.join("train.log")).expect("log");
        let err = out.try_clone().expect("log");
        let child = Command::new("sh")
            .arg("-c")
            .arg(script)
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err)
            .spawn()
            .expect("job");
        Self { child, signals }
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }

    fn signals(&self) -> String {
        std::fs::read_to_string(&self.signals).unwrap_or_default()
    }

    /// Whether the process has exited (reaped here).
    fn exited(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(Some(_)))
    }
}

impl Drop for Job {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

struct Fixture {
    dir: tempfile::TempDir,
    config: PathBuf,
    known_hosts: PathBuf,
    hook: Server,
    job: Job,
    _sshd: Sshd,
}

impl Fixture {
    /// The job acted on: `on_plateau = "stop-job"`, 2 s from SIGINT to SIGTERM.
    fn new() -> Option<Self> {
        Self::with_jobs("on_plateau = \"stop-job\"\nstop_grace_s = 2\n")
    }

    /// One host, the sshd, whose `[[hosts.jobs]]` table holds `jobs`.
    fn with_jobs(jobs: &str) -> Option<Self> {
        let sshd = Sshd::start()?;
        sshd.set_scenario("healthy");
        let dir = tempfile::tempdir().expect("temp");
        let known_hosts = dir.path().join("known_hosts");
        std::fs::write(&known_hosts, sshd.known_hosts_line("ed25519")).expect("known_hosts");
        let hook = Server::start(vec![answer(200, "{}")]);
        let job = Job::start(dir.path());
        std::fs::write(sshd.dir().join("apps_pids"), job.pid().to_string()).expect("apps_pids");
        let config = dir.path().join("config.toml");
        std::fs::write(
            &config,
            format!(
                "interval_ms = 500\ncountdown_s = 10\n\n[[hosts]]\nname = \"h1\"\n\
                 ssh = \"{}@127.0.0.1:{}\"\nidentity_file = \"{}\"\nprice_per_hour = 3.6\ncurrency = \"USD\"\n\n\
                 [[hosts.jobs]]\n{jobs}\n\
                 [[alerts]]\nkind = \"webhook\"\nurl = \"{}/hook\"\nmin_severity = \"info\"\n",
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
            job,
            _sshd: sshd,
        })
    }

    fn state(&self) -> PathBuf {
        self.dir.path().join("state")
    }

    /// `gpufleet watch` with `extra` arguments, its log in `watch.log`.
    fn watch(&self, extra: &[&str]) -> Watch {
        let log = self.dir.path().join("watch.log");
        let child = Command::new(binary())
            .arg("watch")
            .args(extra)
            .arg("--known-hosts")
            .arg(&self.known_hosts)
            .arg("--config")
            .arg(&self.config)
            .env("GPUFLEET_STATE_DIR", self.state())
            .env("SSH_AUTH_SOCK", "")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).expect("log"))
            .spawn()
            .expect("gpufleet watch");
        Watch { child, log }
    }

    fn alerts(&self, label: &str) -> Vec<serde_json::Value> {
        self.hook
            .requests()
            .iter()
            .map(|r| r.json())
            .filter(|a| a["label"] == label)
            .collect()
    }

    fn audit(&self) -> String {
        std::fs::read_to_string(self.state().join("audit.jsonl")).unwrap_or_default()
    }
}

struct Watch {
    child: Child,
    log: PathBuf,
}

impl Watch {
    fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn a_plateaued_job_is_announced_counted_down_and_sent_sigint_then_sigterm() {
    let Some(mut fx) = Fixture::new() else { return };
    let watch = fx.watch(&[]);
    let log = || watch.log();
    watcher::wait_until("the countdown is announced", WAIT, &log, || {
        !fx.alerts("auto_release").is_empty()
    });
    let started = Instant::now();
    let pid = fx.job.pid();
    let announced = fx.alerts("auto_release")[0]["summary"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(
        announced.contains(&format!("kill -s INT {pid}"))
            && announced.contains(&format!("kill -s TERM {pid}"))
            && announced.contains("gpufleet hold h1"),
        "the exact commands and the way to hold them: {announced}"
    );
    assert_eq!(
        fx.job.signals(),
        "",
        "signalled before the countdown ran out"
    );
    watcher::wait_until("the job gets SIGINT", WAIT, &log, || {
        fx.job.signals().contains("INT")
    });
    assert!(
        started.elapsed() >= Duration::from_secs(8),
        "the countdown ran {:?}",
        started.elapsed()
    );
    watcher::wait_until("the job gets SIGTERM and ends", WAIT, &log, || {
        fx.job.exited()
    });
    assert_eq!(fx.job.signals(), "INT\nTERM\n");
    watcher::wait_until("the stop is alerted", WAIT, &log, || {
        !fx.alerts("job_stopped").is_empty()
    });
    let done = fx.alerts("job_stopped")[0]["summary"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(done.contains("SIGTERM"), "{done}");
    let audit = fx.audit();
    let lines: Vec<&str> = audit
        .lines()
        .filter(|l| l.contains("\"kind\":\"stop_job\""))
        .collect();
    assert_eq!(lines.len(), 2, "{audit}");
    assert!(
        lines[0].contains(&format!("\"command\":\"kill -s INT {pid}\"")),
        "{audit}"
    );
    assert!(
        lines[1].contains(&format!("\"command\":\"kill -s TERM {pid}\"")),
        "{audit}"
    );
    assert!(watch.log().contains("stop-job done"), "{}", watch.log());
}

#[test]
fn a_held_countdown_leaves_the_job_running() {
    let Some(mut fx) = Fixture::new() else { return };
    let watch = fx.watch(&[]);
    let log = || watch.log();
    watcher::wait_until("the countdown is announced", WAIT, &log, || {
        !fx.alerts("auto_release").is_empty()
    });
    let out = Command::new(binary())
        .args(["hold", "h1", "--config"])
        .arg(&fx.config)
        .env("GPUFLEET_STATE_DIR", fx.state())
        .stdin(Stdio::null())
        .output()
        .expect("gpufleet hold");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    watcher::wait_until("the hold is taken", WAIT, &log, || {
        watch.log().contains("auto-release held")
    });
    // Past the 10 s countdown and the grace period: nothing was sent.
    std::thread::sleep(Duration::from_secs(14));
    assert_eq!(fx.job.signals(), "", "{}", watch.log());
    assert!(!fx.job.exited());
    assert!(!fx.audit().contains("stop_job"), "{}", fx.audit());
    assert!(fx.alerts("job_stopped").is_empty());
}

#[test]
fn read_only_never_stops_the_job() {
    let Some(mut fx) = Fixture::new() else { return };
    let watch = fx.watch(&["--read-only"]);
    let log = || watch.log();
    watcher::wait_until("the plateau is alerted", WAIT, &log, || {
        !fx.alerts("training_plateau").is_empty()
    });
    std::thread::sleep(Duration::from_secs(14));
    assert!(fx.alerts("auto_release").is_empty(), "{}", watch.log());
    assert_eq!(fx.job.signals(), "");
    assert!(!fx.job.exited());
    assert!(!fx.audit().contains("stop_job"), "{}", fx.audit());
}

#[test]
fn a_job_running_past_its_own_max_run_hours_is_a_red_line_alerted() {
    // 0.001 h: 3.6 s.
    let Some(fx) = Fixture::with_jobs("max_run_hours = 0.001\n") else {
        return;
    };
    let watch = fx.watch(&[]);
    let log = || watch.log();
    watcher::wait_until("the run limit is alerted", WAIT, &log, || {
        !fx.alerts("red_line_job_run_time").is_empty()
    });
    let alert = fx.alerts("red_line_job_run_time")[0].clone();
    let summary = alert["summary"].as_str().unwrap_or_default();
    assert!(
        summary.starts_with(&format!("h1: job {} has run for ", fx.job.pid()))
            && summary.ends_with("over its run limit of 0.001 h"),
        "{alert}"
    );
    // Alerting only: `on_plateau` is not set, so nothing is counted down or stopped.
    assert!(fx.alerts("auto_release").is_empty(), "{}", watch.log());
    assert_eq!(fx.job.signals(), "");
}

#[test]
fn a_plateau_alert_says_since_which_step_and_the_money_spent_since() {
    // Only alerting: a job table that asks for nothing more.
    let Some(fx) = Fixture::with_jobs("patience = 3\n") else {
        return;
    };
    let watch = fx.watch(&[]);
    let log = || watch.log();
    watcher::wait_until("the plateau is alerted", WAIT, &log, || {
        !fx.alerts("training_plateau").is_empty()
    });
    // The `Trainer`'s bar keeps the run's clock: the time since the plateau began is the log's,
    // at most the 39 s the whole run took, priced at 3.6 USD/h (a second is 0.001 USD).
    let plateau = fx.alerts("training_plateau")[0]["summary"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let since = plateau
        .split(" Since step ")
        .nth(1)
        .unwrap_or_default()
        .to_string();
    assert!(
        since.contains("s ago) this host has cost 0.0") && since.ends_with(" USD."),
        "{plateau}"
    );
    assert!(fx.alerts("auto_release").is_empty(), "{}", watch.log());
}

#[test]
fn on_plateau_release_releases_the_host_through_the_countdown() {
    let marker = tempfile::tempdir().expect("temp");
    let jobs = format!(
        "on_plateau = \"release\"\n\n[hosts.release]\nprovider = \"command\"\ninstance_id = \"i-1\"\n\
         command = [\"touch\", \"{}/released-{{instance_id}}\"]\n",
        marker.path().display()
    );
    let Some(fx) = Fixture::with_jobs(&jobs) else {
        return;
    };
    let released = marker.path().join("released-i-1");
    let watch = fx.watch(&[]);
    let log = || watch.log();
    watcher::wait_until("the countdown is announced", WAIT, &log, || {
        !fx.alerts("auto_release").is_empty()
    });
    let started = Instant::now();
    let announced = fx.alerts("auto_release")[0]["summary"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(
        announced.contains(&format!("job {} stopped learning", fx.job.pid()))
            && announced.contains("gpufleet hold h1"),
        "{announced}"
    );
    assert!(!released.exists(), "released before the countdown ran out");
    watcher::wait_until("the host is released", WAIT, &log, || released.exists());
    assert!(
        started.elapsed() >= Duration::from_secs(8),
        "the countdown ran {:?}",
        started.elapsed()
    );
    watcher::wait_until("the release is alerted", WAIT, &log, || {
        !fx.alerts("auto_release_done").is_empty()
    });
    assert!(
        fx.audit().contains("\"kind\":\"auto_release\""),
        "{}",
        fx.audit()
    );
    // The job itself is not signalled: the release is what was asked for.
    assert_eq!(fx.job.signals(), "");
}
