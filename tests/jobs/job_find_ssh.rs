//! Finding the job where nvidia-smi's process list does not lead to it, over a real
//! sshd:
//!
//! - **In a container.** The sshd runs in a PID and mount namespace of its own (`unshare
//!   --pid --fork --mount-proc --mount`), as on a rented GPU that is a container; the job runs
//!   in it with a GPU device file open and its stdout a training log. The fake nvidia-smi lists
//!   the job under its PID outside the namespace, as the real one does from inside a
//!   container, so that PID is not in the sshd's `/proc`. There is no NVIDIA driver here: the
//!   device file is `/dev/nvidia0` on a tmpfs mounted over `/dev` inside the namespace only (a
//!   character device with the null device's numbers, so it can be opened), and the GPU it is
//!   comes from the fake's captured `nvidia-smi -q` (minor number 0). The host's `/dev` is not
//!   touched; the mounts end with the namespace.
//! - **Starting.** A job that writes the configured log (`[[hosts.jobs]] log`) but is on no
//!   GPU yet: `snapshot --json` shows it starting, and the watcher's auto-release waits while
//!   it lives and releases once it exits.

use crate::common;
use crate::tmux;
use crate::watcher;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use common::sshd::{Sshd, SshdOptions};
use tmux::{Tmux, binary};
use watcher::Watcher;

const WAIT: Duration = Duration::from_secs(40);
const UUID: &str = "GPU-67e6a1fd-a60b-985c-12e3-e9316c8ff001";

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/training-logs")
        .join(name)
}

fn put_on_gpu(sshd: &Sshd, pids: &[u32]) {
    let list: Vec<String> = pids.iter().map(u32::to_string).collect();
    std::fs::write(sshd.dir().join("apps_pids"), list.join("\n")).expect("apps_pids");
}

/// One host, the sshd, at 3.6 USD/h; `host_extra` ends its table.
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

/// Whether this machine lets a test make PID and mount namespaces (root, or a container with
/// the right to). Prints why not.
fn namespaces_work() -> bool {
    let ok = Command::new("unshare")
        .args([
            "--pid",
            "--fork",
            "--mount-proc",
            "--mount",
            "--kill-child",
            "sh",
            "-c",
            "mount -t tmpfs none /mnt",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        // Written past libtest's capture (which takes only the print macros), so the skip
        // shows in every run's output, CI's included: never a silent pass.
        use std::io::Write;
        let _ = writeln!(
            std::io::stderr(),
            "SKIPPED (not passed): a container test: unshare cannot make PID and mount \
             namespaces on this machine (it needs root or CAP_SYS_ADMIN)"
        );
    }
    ok
}

/// Started in the namespace before sshd: `/dev` becomes a tmpfs holding the host's few device
/// files sshd needs (bound from `$1`, the host's `/dev` bound there first) and a
/// `/dev/nvidia$4`; then the job `$2` runs with its output in `$3`, and sshd takes over.
const CONTAINER: &str = r#"set -e
h=$1; j=$2; l=$3; n=$4; shift 4
mount --bind /dev "$h"
mount -t tmpfs -o mode=755 gpufleet-test-dev /dev
for d in null zero full random urandom tty; do
  [ -e "$h/$d" ] || continue
  touch "/dev/$d"
  mount --bind "$h/$d" "/dev/$d"
done
mkdir /dev/pts
mount --bind "$h/pts" /dev/pts
mknod -m 666 "/dev/nvidia$n" c 1 3
sh -c "$j" >"$l" 2>&1 </dev/null &
exec "$@""#;

/// The PID of the sshd's descendant running `sleep 300` (the job once it has written its
/// log), as this machine sees it, and as the namespace does.
fn job_pids(sshd: &Sshd) -> Option<(u32, u32)> {
    sshd.session_pids().into_iter().find_map(|pid| {
        let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).ok()?;
        if comm.trim() != "sleep" {
            return None;
        }
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
        let inner = status
            .lines()
            .find_map(|l| l.strip_prefix("NSpid:"))?
            .split_whitespace()
            .last()?
            .parse()
            .ok()?;
        Some((pid, inner))
    })
}

/// A "container": the sshd and a job in PID and mount namespaces of their own, the job holding
/// `/dev/nvidia{minor}` open with a captured training log as its output.
struct Container {
    sshd: Sshd,
    dir: tempfile::TempDir,
    log: PathBuf,
    /// The job's PID outside the namespace (what nvidia-smi lists) and inside it.
    outside: u32,
    inside: u32,
}

fn start_container(minor: u32) -> Option<Container> {
    if !common::sshd::available() || !namespaces_work() {
        return None;
    }
    let dir = tempfile::tempdir().expect("temp");
    let host_dev = dir.path().join("host-dev");
    std::fs::create_dir(&host_dev).expect("dir");
    let log = dir.path().join("train.log");
    let job = format!(
        "exec 3</dev/nvidia{minor}; cat '{}'; exec sleep 300",
        fixture("hf_plateau.log").display()
    );
    let mut wrapper: Vec<String> = [
        "unshare",
        "--pid",
        "--fork",
        "--mount-proc",
        "--mount",
        "--kill-child",
        "sh",
        "-c",
        CONTAINER,
        "sh",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    wrapper.push(host_dev.display().to_string());
    wrapper.push(job);
    wrapper.push(log.display().to_string());
    wrapper.push(minor.to_string());
    let sshd = Sshd::start_with(&SshdOptions {
        wrapper,
        ..Default::default()
    })?;
    let size = std::fs::metadata(fixture("hf_plateau.log"))
        .expect("fixture")
        .len();
    watcher::wait_until("the job wrote its log", WAIT, &|| sshd.log(), || {
        std::fs::metadata(&log).is_ok_and(|m| m.len() == size) && job_pids(&sshd).is_some()
    });
    let (outside, inside) = job_pids(&sshd).expect("the job");
    assert_ne!(outside, inside, "the job is in a PID namespace of its own");
    // nvidia-smi names the job as the machine outside the container sees it.
    put_on_gpu(&sshd, &[outside]);
    Some(Container {
        sshd,
        dir,
        log,
        outside,
        inside,
    })
}

/// The console on the container's host, on an 80x24 screen, in the host view.
fn console(c: &Container) -> Option<Tmux> {
    let command = format!(
        "SSH_AUTH_SOCK= GPUFLEET_STATE_DIR={} {} --config {} --known-hosts {}; sleep 30",
        c.dir.path().join("state").display(),
        binary().display(),
        c.dir.path().join("config.toml").display(),
        c.sshd.trusted_known_hosts().display()
    );
    let tmux = Tmux::start(&command, 80, 24)?;
    tmux.wait_for("1x H200", WAIT);
    tmux.keys(&["Enter"]);
    Some(tmux)
}

#[test]
fn a_job_in_a_container_is_found_through_the_gpu_device_it_holds() {
    let had_device = Path::new("/dev/nvidia0").exists();
    let Some(c) = start_container(0) else { return };
    let doc = snapshot(&config(&c.sshd, c.dir.path(), ""), c.dir.path());
    let jobs = &doc["hosts"][0]["jobs"];
    assert_eq!(jobs.as_array().map(Vec::len), Some(1), "{doc:#}");
    let job = &jobs[0];
    // The job as the host (the container) knows it: its own PID, found through its device.
    assert_eq!(job["pid"], c.inside, "{doc:#}");
    assert_eq!(job["found"], "device", "{doc:#}");
    assert_eq!(job["devices"], serde_json::json!([0]), "{doc:#}");
    // Minor number 0 is the captured H200, by `nvidia-smi -q`.
    assert_eq!(job["gpus"], serde_json::json!([UUID]), "{doc:#}");
    assert_eq!(job["process"], "running", "{doc:#}");
    assert_eq!(job["command"], "sleep 300", "{doc:#}");
    // Its log is read back as for any job.
    assert_eq!(
        job["log"],
        format!("stdout: {}", c.log.display()),
        "{doc:#}"
    );
    assert_eq!(job["total"], 3000, "{doc:#}");
    // The console's host view says where the job is.
    if let Some(tmux) = console(&c) {
        let screen = tmux.wait_for(
            &format!("job {} · in a container, on GPU 0", c.inside),
            WAIT,
        );
        // The process nvidia-smi names from outside shows the job's command line.
        assert!(
            screen
                .lines()
                .any(|l| l.contains(&c.outside.to_string()) && l.contains("sleep 300")),
            "{screen}"
        );
    }
    // The host's /dev was never touched.
    assert_eq!(Path::new("/dev/nvidia0").exists(), had_device);
}

#[test]
fn a_job_in_a_container_whose_gpu_cannot_be_told_is_the_hosts() {
    // `/dev/nvidia3`: no GPU `nvidia-smi -q` lists has minor number 3.
    let Some(c) = start_container(3) else { return };
    let doc = snapshot(&config(&c.sshd, c.dir.path(), ""), c.dir.path());
    let job = &doc["hosts"][0]["jobs"][0];
    assert_eq!(job["pid"], c.inside, "{doc:#}");
    assert_eq!(job["devices"], serde_json::json!([3]), "{doc:#}");
    assert_eq!(job["gpus"], serde_json::json!([]), "{doc:#}");
    if let Some(tmux) = console(&c) {
        let screen = tmux.wait_for(
            &format!("job {} · in a container, its GPU unknown", c.inside),
            WAIT,
        );
        // Which listed process is the job cannot be told either.
        assert!(
            screen
                .lines()
                .any(|l| l.contains(&c.outside.to_string()) && l.contains("python3")),
            "{screen}"
        );
    }
}

/// A process whose stdout and stderr go nowhere, killed on drop.
struct Job {
    child: Child,
}

impl Job {
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

/// A job that writes `log` through a descriptor of its own (not its stdout): the first
/// `bytes` of `fixture`, then it lives on.
fn writing_job(log: &Path, fixture_name: &str, bytes: u64) -> Job {
    Job::start_quiet(&format!(
        "exec 3>>'{}'; head -c {bytes} '{}' >&3; exec sleep 300",
        log.display(),
        fixture(fixture_name).display()
    ))
}

#[test]
fn a_job_that_writes_the_configured_log_before_it_is_on_a_gpu_is_starting() {
    let Some(sshd) = Sshd::start() else { return };
    let dir = tempfile::tempdir().expect("temp");
    let run = dir.path().join("run");
    std::fs::create_dir(&run).expect("run dir");
    let log = run.join("train.log");
    let job = writing_job(&log, "hf_full.log", 5_000);
    // No process on the GPU yet.
    put_on_gpu(&sshd, &[]);
    watcher::wait_until("the job wrote its log", WAIT, &String::new, || {
        std::fs::metadata(&log).is_ok_and(|m| m.len() == 5_000)
    });
    // A reader of the same log is no job.
    let reader = Job::start_quiet(&format!("exec sleep 300 3<'{}'", log.display()));
    let glob = format!("{}/*.log", run.display());
    let jobs = format!("\n[[hosts.jobs]]\nlog = \"{glob}\"\n");
    let doc = snapshot(&config(&sshd, dir.path(), &jobs), dir.path());
    let listed = &doc["hosts"][0]["jobs"];
    assert_eq!(listed.as_array().map(Vec::len), Some(1), "{doc:#}");
    let found = &listed[0];
    assert_eq!(found["pid"], job.pid(), "{doc:#}");
    assert_ne!(found["pid"], reader.pid(), "{doc:#}");
    assert_eq!(found["process"], "starting", "{doc:#}");
    assert_eq!(found["found"], "log", "{doc:#}");
    assert_eq!(found["log"], format!("config: {glob}"), "{doc:#}");
    assert_eq!(found["command"], "sleep 300", "{doc:#}");
    // Its log is read already: the run's progress so far.
    assert_eq!(found["total"], 600, "{doc:#}");
    // Once on the GPU it runs.
    put_on_gpu(&sshd, &[job.pid()]);
    let doc = snapshot(&config(&sshd, dir.path(), &jobs), dir.path());
    let found = &doc["hosts"][0]["jobs"][0];
    assert_eq!(found["process"], "running", "{doc:#}");
    assert_eq!(found["found"], "process_list", "{doc:#}");
}

#[test]
fn auto_release_waits_while_a_job_starts_and_releases_once_it_exits() {
    let Some(sshd) = Sshd::start() else { return };
    let dir = tempfile::tempdir().expect("temp");
    let known_hosts = dir.path().join("known_hosts");
    std::fs::write(&known_hosts, sshd.known_hosts_line("ed25519")).expect("known_hosts");
    let run = dir.path().join("run");
    std::fs::create_dir(&run).expect("run dir");
    let log = run.join("train.log");
    // Billed two hours at 100 USD/h with max_spend = 1: over budget at once, released after a
    // 10 s countdown unless something holds it.
    let config = dir.path().join("config.toml");
    std::fs::write(
        &config,
        format!(
            "interval_ms = 500\ncountdown_s = 10\n\n[[hosts]]\nname = \"h1\"\nssh = \"{}@127.0.0.1:{}\"\nidentity_file = \"{}\"\n\
             price_per_hour = 100.0\ncurrency = \"USD\"\nbilling_started = \"{}\"\nmax_spend = 1.0\nauto_release = true\n\
             [hosts.release]\nprovider = \"command\"\ninstance_id = \"i-1\"\ncommand = [\"touch\", \"{}/released-{{instance_id}}\"]\n\
             [[hosts.jobs]]\nlog = \"{}/*.log\"\n",
            sshd.user,
            sshd.port,
            sshd.client_key().display(),
            watcher::hours_ago(2),
            dir.path().display(),
            run.display()
        ),
    )
    .expect("config");
    let marker = dir.path().join("released-i-1");
    // A run setting up: it has written the start of a healthy log and is on no GPU.
    put_on_gpu(&sshd, &[]);
    let mut job = writing_job(&log, "hf_full.log", 5_000);
    let started = std::time::Instant::now();
    let watch = Watcher::start(
        &binary(),
        &config,
        &known_hosts,
        &dir.path().join("state"),
        &dir.path().join("watch.log"),
    );
    // Without the job the countdown would run out 10 s after the first reading.
    while started.elapsed() < Duration::from_secs(30) {
        assert!(
            !marker.exists(),
            "released while the job was starting:\n{}",
            watch.log()
        );
        std::thread::sleep(Duration::from_millis(500));
    }
    // The job's process exits before it ever used a GPU: the host is idle, released.
    let _ = job.child.kill();
    let _ = job.child.wait();
    watcher::wait_until(
        "released after the job ended",
        Duration::from_secs(60),
        &|| watch.log(),
        || marker.exists(),
    );
}

#[test]
fn the_console_host_view_shows_a_job_starting_on_an_80x24_screen() {
    let Some(sshd) = Sshd::start() else { return };
    let dir = tempfile::tempdir().expect("temp");
    let run = dir.path().join("run");
    std::fs::create_dir(&run).expect("run dir");
    let job = writing_job(&run.join("train.log"), "hf_full.log", 5_000);
    put_on_gpu(&sshd, &[]);
    let jobs = format!("\n[[hosts.jobs]]\nlog = \"{}/*.log\"\n", run.display());
    let config = config(&sshd, dir.path(), &jobs);
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
    tmux.wait_for(&format!("job {}", job.pid()), WAIT);
    // The job's line comes with the process list; its log's progress with the read of the log
    // that opening the host starts, a moment later.
    let screen = tmux.wait_until("the starting job with its progress", WAIT, |s| {
        s.contains("starting (on no GPU yet)") && s.contains("step 256/600")
    });
    assert!(screen.contains(&format!("job {}", job.pid())), "{screen}");
}
