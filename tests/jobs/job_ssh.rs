//! The job, not only the GPU, over a real sshd: a real process whose stdout is a
//! captured training log (`tests/fixtures/training-logs/`) holds the "GPU" (its PID in the fake
//! nvidia-smi's process list). `snapshot --json` finds the job, reads its log back and reports
//! its progress, cost and findings; the watcher follows the log as it grows and alerts the
//! webhook when the run stops learning, and again when the job's process exits.

use crate::common;
use crate::release_server as server;
use crate::tmux;
use crate::watcher;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use common::sshd::Sshd;
use server::{Server, answer};
use tmux::{Tmux, binary};
use watcher::Watcher;

/// Long enough for a log read while nobody has the host open (every 30 s, as the watcher reads
/// it) and what follows from it, on a loaded 2-core machine.
const WAIT: Duration = Duration::from_secs(60);

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/training-logs")
        .join(name)
}

/// A process running `script` with its stdout and stderr going to `log` (as
/// `python train.py > train.log 2>&1` would), killed on drop.
struct Job {
    child: Child,
}

impl Job {
    fn start(script: &str, log: &Path) -> Self {
        let out = std::fs::File::create(log).expect("log");
        let err = out.try_clone().expect("log");
        let child = Command::new("sh")
            .arg("-c")
            .arg(script)
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err)
            .spawn()
            .expect("job");
        Self { child }
    }

    /// A process whose stdout and stderr go nowhere: its log is a file it writes itself.
    fn start_quiet(script: &str) -> Self {
        let child = Command::new("sh")
            .arg("-c")
            .arg(script)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("job");
        Self { child }
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }
}

impl Drop for Job {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One host, the sshd, at 3.6 USD/h; `host_extra` ends its table (a `[[hosts.jobs]]`).
fn config(sshd: &Sshd, dir: &Path, host_extra: &str) -> PathBuf {
    let path = dir.join("config.toml");
    let text = format!(
        "interval_ms = 500\n\n[[hosts]]\nname = \"h1\"\nssh = \"{}@127.0.0.1:{}\"\nidentity_file = \"{}\"\n\
         price_per_hour = 3.6\ncurrency = \"USD\"\n{host_extra}",
        sshd.user,
        sshd.port,
        sshd.client_key().display()
    );
    std::fs::write(&path, text).expect("config");
    path
}

fn put_on_gpu(sshd: &Sshd, pids: &[u32]) {
    let list: Vec<String> = pids.iter().map(u32::to_string).collect();
    std::fs::write(sshd.dir().join("apps_pids"), list.join("\n")).expect("apps_pids");
}

fn labels(findings: &serde_json::Value) -> Vec<String> {
    findings
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|f| f["label"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn snapshot_finds_the_job_behind_a_gpu_process_and_reads_its_progress_and_plateau() {
    let Some(sshd) = Sshd::start() else { return };
    let dir = tempfile::tempdir().expect("temp");
    let log = dir.path().join("train.log");
    let script = format!(
        "cat '{}'; exec sleep 300",
        fixture("hf_plateau.log").display()
    );
    let job = Job::start(&script, &log);
    put_on_gpu(&sshd, &[job.pid()]);
    // The whole log is written before the snapshot reads it.
    let size = std::fs::metadata(fixture("hf_plateau.log"))
        .expect("fixture")
        .len();
    watcher::wait_until("the job wrote its log", WAIT, &String::new, || {
        std::fs::metadata(&log).is_ok_and(|m| m.len() == size)
    });
    let config = config(&sshd, dir.path(), "");
    let out = Command::new(binary())
        .env("SSH_AUTH_SOCK", "")
        .args(["snapshot", "--json", "--accept-new-host-keys", "--config"])
        .arg(&config)
        .arg("--known-hosts")
        .arg(dir.path().join("known_hosts"))
        .output()
        .expect("snapshot");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: serde_json::Value = serde_json::from_str(&stdout).expect("JSON");
    let jobs = &doc["hosts"][0]["jobs"];
    assert_eq!(jobs.as_array().map(Vec::len), Some(1), "{stdout}");
    let job_json = &jobs[0];
    assert_eq!(job_json["pid"], job.pid());
    assert_eq!(job_json["process"], "running");
    assert_eq!(job_json["command"], "sleep 300");
    assert_eq!(
        job_json["log"],
        format!("stdout: {}", log.display()),
        "{stdout}"
    );
    assert_eq!(job_json["user"], sshd.user.as_str());
    let formats: Vec<&str> = job_json["formats"]
        .as_array()
        .map(|a| a.iter().filter_map(|f| f.as_str()).collect())
        .unwrap_or_default();
    assert!(formats.contains(&"hf_trainer"), "{stdout}");
    assert_eq!(job_json["total"], 3000, "{stdout}");
    assert_eq!(job_json["step"], 3000, "{stdout}");
    assert!(job_json["eval_loss"].as_f64().is_some(), "{stdout}");
    assert!(job_json["spent"].as_f64().is_some(), "{stdout}");
    let found = labels(&job_json["findings"]);
    assert!(found.contains(&"training_plateau".to_string()), "{stdout}");
}

#[test]
fn the_watcher_follows_a_growing_log_and_alerts_a_plateau_then_the_jobs_end() {
    let Some(sshd) = Sshd::start() else { return };
    sshd.set_scenario("healthy");
    let dir = tempfile::tempdir().expect("temp");
    let known_hosts = dir.path().join("known_hosts");
    std::fs::write(&known_hosts, sshd.known_hosts_line("ed25519")).expect("known_hosts");
    let hook = Server::start(vec![answer(200, "{}")]);
    let metrics = format!(
        "127.0.0.1:{}",
        std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port")
            .port()
    );
    let alerts = format!(
        "\n[metrics]\nlisten = \"{metrics}\"\n\n[[alerts]]\nkind = \"webhook\"\nurl = \"{}/hook\"\nmin_severity = \"info\"\n",
        hook.base_url
    );
    // The alert block goes after the host's table.
    let config = config(&sshd, dir.path(), "");
    let mut text = std::fs::read_to_string(&config).expect("config");
    text.push_str(&alerts);
    std::fs::write(&config, text).expect("config");

    // The first fifth of the run, then (once told) the rest.
    let source = fixture("hf_plateau.log");
    let size = std::fs::metadata(&source).expect("fixture").len();
    let first = size / 5;
    let go = dir.path().join("go");
    let log = dir.path().join("train.log");
    let script = format!(
        "head -c {first} '{src}'; while [ ! -e '{go}' ]; do sleep 0.1; done; tail -c +{next} '{src}'; exec sleep 300",
        src = source.display(),
        go = go.display(),
        next = first + 1
    );
    let mut job = Job::start(&script, &log);
    put_on_gpu(&sshd, &[job.pid()]);
    let watch = Watcher::start(
        &binary(),
        &config,
        &known_hosts,
        &dir.path().join("state"),
        &dir.path().join("watch.log"),
    );
    let with_label = |label: &str| {
        hook.requests()
            .iter()
            .map(|r| r.json())
            .filter(|a| a["label"] == label)
            .count()
    };
    // Reading its first part: the job is followed, and no finding yet.
    std::thread::sleep(Duration::from_secs(4));
    assert_eq!(with_label("training_plateau"), 0, "{}", watch.log());
    // The rest of the run arrives while the watcher follows the log.
    std::fs::write(&go, "").expect("go");
    watcher::wait_until("the plateau alerted", WAIT, &|| watch.log(), || {
        with_label("training_plateau") > 0
    });
    // `/metrics` has the job's progress and the finding.
    let page = reqwest::blocking::get(format!("http://{metrics}/metrics"))
        .and_then(|r| r.text())
        .unwrap_or_default();
    let series = format!("instance=\"h1\",pid=\"{}\"", job.pid());
    assert!(
        page.contains(&format!("gpufleet_job_total_steps{{{series}}} 3000")),
        "{page}"
    );
    assert!(
        page.contains(&format!("gpufleet_job_running{{{series}}} 1")),
        "{page}"
    );
    assert!(page.contains("label=\"training_plateau\""), "{page}");
    // The job's process exits: the host is idle and billed again.
    put_on_gpu(&sshd, &[]);
    let _ = job.child.kill();
    let _ = job.child.wait();
    watcher::wait_until("the job's end alerted", WAIT, &|| watch.log(), || {
        with_label("job_finished") > 0
    });
}

#[test]
fn the_console_host_view_shows_the_job_on_an_80x24_screen() {
    let Some(sshd) = Sshd::start() else { return };
    let dir = tempfile::tempdir().expect("temp");
    let log = dir.path().join("train.log");
    let script = format!(
        "cat '{}'; exec sleep 300",
        fixture("hf_plateau.log").display()
    );
    let job = Job::start(&script, &log);
    put_on_gpu(&sshd, &[job.pid()]);
    let config = config(&sshd, dir.path(), "");
    let command = format!(
        "SSH_AUTH_SOCK= GPUFLEET_STATE_DIR={} {} --config {} --known-hosts {}; sleep 30",
        dir.path().join("state").display(),
        binary().display(),
        config.display(),
        sshd.trusted_known_hosts().display()
    );
    let Some(tmux) = Tmux::start(&command, 80, 24) else {
        return;
    };
    tmux.wait_for("1x H200", WAIT);
    tmux.keys(&["Enter"]);
    let screen = tmux.wait_for(&format!("job {}", job.pid()), WAIT);
    let screen = if screen.contains("step 3000/3000") {
        screen
    } else {
        tmux.wait_for("step 3000/3000", WAIT)
    };
    assert!(
        screen.contains("sleep 300"),
        "the job's command line:\n{screen}"
    );
    // The last training loss, after its sparkline when there is room for one.
    assert!(
        screen
            .lines()
            .any(|l| l.contains("loss ") && l.contains(" 4.0490")),
        "the last training loss:\n{screen}"
    );
    // The run's plateau is a finding of the host.
    tmux.wait_for("Eval loss has stopped improving", WAIT);
}

/// `snapshot --json` of the config's one host.
fn snapshot(config: &Path, dir: &Path) -> serde_json::Value {
    let out = Command::new(binary())
        .env("SSH_AUTH_SOCK", "")
        .args(["snapshot", "--json", "--accept-new-host-keys", "--config"])
        .arg(config)
        .arg("--known-hosts")
        .arg(dir.join("known_hosts"))
        .output()
        .expect("snapshot");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_str(&stdout).expect("JSON")
}

#[test]
fn a_job_whose_output_is_no_file_is_read_from_the_configured_log_and_judged_as_configured() {
    let Some(sshd) = Sshd::start() else { return };
    let dir = tempfile::tempdir().expect("temp");
    let run = dir.path().join("run");
    std::fs::create_dir(&run).expect("run dir");
    // An older log and the job's own, newer one: the glob reads the newest.
    std::fs::write(run.join("old.log"), "step 1 loss 9.0\n").expect("old log");
    std::thread::sleep(Duration::from_millis(1_100));
    let log = run.join("train.log");
    let script = format!(
        "cat '{}' > '{}'; exec sleep 300",
        fixture("hf_plateau.log").display(),
        log.display()
    );
    let job = Job::start_quiet(&script);
    put_on_gpu(&sshd, &[job.pid()]);
    let size = std::fs::metadata(fixture("hf_plateau.log"))
        .expect("fixture")
        .len();
    watcher::wait_until("the job wrote its log", WAIT, &String::new, || {
        std::fs::metadata(&log).is_ok_and(|m| m.len() == size)
    });
    let glob = format!("{}/*.log", run.display());
    // Patience of 20 evaluations: this run's five evaluations without a gain are no plateau.
    let jobs = format!("\n[[hosts.jobs]]\nlog = \"{glob}\"\npatience = 20\n");
    let doc = snapshot(&config(&sshd, dir.path(), &jobs), dir.path());
    let job_json = &doc["hosts"][0]["jobs"][0];
    assert_eq!(job_json["pid"], job.pid(), "{doc:#}");
    assert_eq!(job_json["log"], format!("config: {glob}"), "{doc:#}");
    assert_eq!(job_json["total"], 3000, "{doc:#}");
    assert_eq!(
        labels(&job_json["findings"]),
        Vec::<String>::new(),
        "{doc:#}"
    );
    // The same log with the default patience is a plateau.
    let doc = snapshot(
        &config(
            &sshd,
            dir.path(),
            &format!("\n[[hosts.jobs]]\nlog = \"{glob}\"\n"),
        ),
        dir.path(),
    );
    let found = labels(&doc["hosts"][0]["jobs"][0]["findings"]);
    assert!(found.contains(&"training_plateau".to_string()), "{doc:#}");
}

/// Whether some process on this machine follows job `pid`'s log (`tail ... --pid=PID`).
fn log_followed(pid: u32) -> bool {
    let needle = format!("--pid={pid}");
    std::fs::read_dir("/proc")
        .map(|entries| {
            entries.flatten().any(|e| {
                std::fs::read(e.path().join("cmdline"))
                    .map(|c| String::from_utf8_lossy(&c).contains(&needle))
                    .unwrap_or(false)
            })
        })
        .unwrap_or(false)
}

#[test]
fn auto_release_waits_while_the_job_lives_off_the_gpu_and_releases_once_it_exits() {
    let Some(sshd) = Sshd::start() else { return };
    let dir = tempfile::tempdir().expect("temp");
    let known_hosts = dir.path().join("known_hosts");
    std::fs::write(&known_hosts, sshd.known_hosts_line("ed25519")).expect("known_hosts");
    // Billed two hours at 100 USD/h with max_spend = 1: over budget at once, released after a
    // 10 s countdown unless something holds it.
    let config = dir.path().join("config.toml");
    std::fs::write(
        &config,
        format!(
            "interval_ms = 500\ncountdown_s = 10\n\n[[hosts]]\nname = \"h1\"\nssh = \"{}@127.0.0.1:{}\"\nidentity_file = \"{}\"\n\
             price_per_hour = 100.0\ncurrency = \"USD\"\nbilling_started = \"{}\"\nmax_spend = 1.0\nauto_release = true\n\
             [hosts.release]\nprovider = \"command\"\ninstance_id = \"i-1\"\ncommand = [\"touch\", \"{}/released-{{instance_id}}\"]\n",
            sshd.user,
            sshd.port,
            sshd.client_key().display(),
            watcher::hours_ago(2),
            dir.path().display()
        ),
    )
    .expect("config");
    let marker = dir.path().join("released-i-1");
    // A run that is learning (the first part of a healthy log), then keeps running.
    let log = dir.path().join("train.log");
    let script = format!(
        "head -c 5000 '{}'; exec sleep 300",
        fixture("hf_full.log").display()
    );
    let mut job = Job::start(&script, &log);
    put_on_gpu(&sshd, &[job.pid()]);
    let started = std::time::Instant::now();
    let watch = Watcher::start(
        &binary(),
        &config,
        &known_hosts,
        &dir.path().join("state"),
        &dir.path().join("watch.log"),
    );
    watcher::wait_until("the job's log followed", WAIT, &|| watch.log(), || {
        log_followed(job.pid())
    });
    // The job leaves the GPU (between phases) but its process lives and it still learns. The
    // next process list (30 s after the first) shows no GPU process; without the job the
    // countdown would then run out 10 s later.
    put_on_gpu(&sshd, &[]);
    while started.elapsed() < Duration::from_secs(48) {
        assert!(
            !marker.exists(),
            "released while the job ran:\n{}",
            watch.log()
        );
        std::thread::sleep(Duration::from_millis(500));
    }
    // The job's process exits: the host is idle, counted down and released.
    let _ = job.child.kill();
    let _ = job.child.wait();
    watcher::wait_until(
        "released after the job ended",
        WAIT,
        &|| watch.log(),
        || marker.exists(),
    );
}

#[test]
fn the_watcher_alerts_a_job_that_keeps_a_core_busy_while_its_gpu_idles() {
    let Some(sshd) = Sshd::start() else { return };
    // The GPU streams the captured idle reading: 0 % utilization, no memory used.
    sshd.set_scenario("idle-stream");
    let dir = tempfile::tempdir().expect("temp");
    let known_hosts = dir.path().join("known_hosts");
    std::fs::write(&known_hosts, sshd.known_hosts_line("ed25519")).expect("known_hosts");
    let hook = Server::start(vec![answer(200, "{}")]);
    let config = config(&sshd, dir.path(), "");
    let text = std::fs::read_to_string(&config).expect("config");
    let text = text.replacen(
        "interval_ms = 500\n",
        "interval_ms = 500\njob_window_s = 10\n",
        1,
    );
    let alerts = format!(
        "\n[[alerts]]\nkind = \"webhook\"\nurl = \"{}/hook\"\nmin_severity = \"info\"\n",
        hook.base_url
    );
    std::fs::write(&config, text + &alerts).expect("config");
    // A real process that burns a core (a data loader that never feeds the GPU).
    let job = Job::start_quiet("while :; do :; done");
    put_on_gpu(&sshd, &[job.pid()]);
    let watch = Watcher::start(
        &binary(),
        &config,
        &known_hosts,
        &dir.path().join("state"),
        &dir.path().join("watch.log"),
    );
    let alert = |label: &str| {
        hook.requests()
            .iter()
            .map(|r| r.json())
            .find(|a| a["label"] == label)
    };
    watcher::wait_until(
        "input_bound alerted",
        Duration::from_secs(100),
        &|| watch.log(),
        || alert("input_bound").is_some(),
    );
    let body = alert("input_bound").expect("alert").to_string();
    // 3.6 USD/h, one GPU of one, 0 % utilization: all of it wasted.
    assert!(body.contains("3.60 USD"), "{body}");
    assert!(body.contains(&job.pid().to_string()), "{body}");
    // The same GPU, its memory unused: the card is larger than the job needs.
    watcher::wait_until(
        "card_oversized alerted",
        Duration::from_secs(20),
        &|| watch.log(),
        || alert("card_oversized").is_some(),
    );
    let body = alert("card_oversized").expect("alert").to_string();
    assert!(body.contains("24 GB"), "{body}");
}
