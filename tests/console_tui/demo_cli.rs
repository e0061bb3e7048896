//! The demo without a GPU or network, as a user meets it from the command line: `cost`,
//! `check`, `release` and `playbook` with `--demo` run against the simulated fleet and a
//! simulated provider, say they are simulated, leave the state directory alone, and touch no
//! network (checked with strace: no internet socket, no connect).

use crate::cli;
use crate::demo_traces as support;

use std::path::Path;
use std::process::{Command, Output, Stdio};

use cli::{Home, stderr, stdout};

/// Nothing a demo does may land in the user's state (nor anywhere in the home) but its own
/// black box (`blackbox/demo/`, which `report --demo` reads) and the console's log: no ledger,
/// audit line or check report of a simulated host.
fn assert_state_untouched(home: &Home) {
    for dir in ["state", "xdg-state", "xdg-data"] {
        let path = home.path().join(dir);
        support::assert_only_demo_traces(&path);
    }
}

#[test]
fn cost_demo_prints_the_simulated_fleets_prices_spend_idle_billing_and_red_line() {
    let home = Home::new();
    let out = home.run(&["cost", "--demo"]);
    let text = stdout(&out);
    assert!(
        text.starts_with("[simulated] the demo fleet 1m after its start"),
        "{text}"
    );
    // Mixed currencies, as renters of Chinese platforms pay.
    for needle in [
        "train-h100x8",
        "23.92 USD",
        "idle-a100",
        "1.10 USD",
        "hot-4090",
        "1.98 CNY",
        "unreachable-box",
        "4.58 CNY",
    ] {
        assert!(text.contains(needle), "{needle} missing:\n{text}");
    }
    // 90 s of 8x H100 at $23.92/h: about 60 cents, over the demo's $0.25 budget.
    let h100 = text
        .lines()
        .find(|l| l.starts_with("train-h100x8"))
        .expect("h100 row");
    assert!(
        h100.contains("0.59 USD") || h100.contains("0.60 USD"),
        "{h100}"
    );
    // The idle A100 bills while idle: its NOW column says for how long.
    let a100 = text
        .lines()
        .find(|l| l.starts_with("idle-a100"))
        .expect("a100 row");
    assert!(a100.contains("idle 1m"), "{a100}");
    assert!(
        text.contains("! train-h100x8: spent 0.") && text.contains("over its budget of 0.25 USD"),
        "{text}"
    );
    // A crossed red line is exit 1, as for real ledgers.
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert_state_untouched(&home);

    let json = home.run(&["cost", "--demo", "--json"]);
    let value: serde_json::Value = serde_json::from_slice(&json.stdout).expect("json");
    assert_eq!(value["simulated"]["scenario_ms"], 90_000, "{value}");
    assert_eq!(value["red_lines"][0]["kind"], "host_budget", "{value}");
}

#[test]
fn check_demo_runs_the_acceptance_check_on_a_simulated_host() {
    let home = Home::new();
    let out = home.run(&["check", "--demo", "--speed", "1000"]);
    let text = stdout(&out);
    assert!(
        text.starts_with("[simulated] acceptance check of the demo host flaky-h200"),
        "{text}\n{}",
        stderr(&out)
    );
    assert!(text.contains("NVIDIA H200"), "{text}");
    assert!(text.contains("PASS"), "{text}");
    assert_eq!(out.status.code(), Some(0), "{text}\n{}", stderr(&out));
    assert!(stderr(&out).contains("[simulated] checking the demo host flaky-h200"));
    assert_state_untouched(&home);

    // A host whose card the replayed captures are not of says so instead of inventing results.
    let other = home.run(&["check", "--demo", "train-h100x8", "--speed", "1000"]);
    assert_eq!(other.status.code(), Some(3), "{}", stdout(&other));
    assert!(
        stderr(&other).contains("train-h100x8 is a simulated NVIDIA H100 80GB HBM3 x8"),
        "{}",
        stderr(&other)
    );
    let unknown = home.run(&["check", "--demo", "nosuch"]);
    assert_eq!(unknown.status.code(), Some(3));
    assert!(
        stderr(&unknown).contains("\"nosuch\" is not a host of the demo fleet"),
        "{}",
        stderr(&unknown)
    );
}

#[test]
fn release_demo_dry_run_shows_the_real_request_marked_simulated() {
    let home = Home::new();
    let out = home.run(&["release", "--demo", "idle-a100", "--dry-run"]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(0), "{text}\n{}", stderr(&out));
    assert!(
        text.starts_with("[simulated] a demo host: the provider answers in-process"),
        "{text}"
    );
    assert!(
        text.contains("stop idle-a100 (vast, instance 14523871)"),
        "{text}"
    );
    assert!(text.contains("https://console.vast.ai/"), "{text}");
    assert!(text.contains("Authorization: Bearer <redacted>"), "{text}");
    // The simulated ledger: 90 s billed at $1.10/h.
    assert!(
        text.contains("spent so far: 0.03 USD over 1m billed"),
        "{text}"
    );
    assert!(text.contains("dry run: nothing was run or sent"), "{text}");
    assert!(!text.contains("simulated-demo-token"), "{text}");
    assert_state_untouched(&home);

    // With --json, one JSON document that says it is simulated.
    let json = home.run(&["release", "--demo", "idle-a100", "--dry-run", "--json"]);
    let plan: serde_json::Value = serde_json::from_slice(&json.stdout).expect("one JSON document");
    assert_eq!(plan["simulated"], true, "{plan}");
    assert_eq!(plan["provider"], "vast", "{plan}");
}

#[test]
fn release_demo_sends_to_the_simulated_provider_after_the_backup_and_typed_name() {
    let home = Home::new();
    let mut child = home
        .command(&["release", "--demo", "flaky-h200"])
        .stdin(Stdio::piped())
        .spawn()
        .expect("spawn");
    use std::io::Write;
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(b"flaky-h200\n")
        .expect("type the name");
    let out = child.wait_with_output().expect("wait");
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(0), "{text}\n{}", stderr(&out));
    assert!(
        text.contains("backup first, on flaky-h200: tar -czf /workspace/checkpoints.tar.gz"),
        "{text}"
    );
    assert!(text.contains("backup done"), "{text}");
    assert!(text.contains("type flaky-h200 to stop it"), "{text}");
    assert!(
        text.contains("POST https://rest.runpod.io/v1/pods/h2q8w3e5r7t9yu/stop (simulated): 200"),
        "{text}"
    );
    assert!(
        text.contains("flaky-h200: stop sent and accepted"),
        "{text}"
    );
    assert!(text.contains("[simulated] nothing was sent"), "{text}");
    assert_state_untouched(&home);

    // An empty answer cancels, as for a real host.
    let cancelled = home.run(&["release", "--demo", "idle-a100"]);
    assert_eq!(cancelled.status.code(), Some(130), "{}", stdout(&cancelled));
    assert!(stdout(&cancelled).contains("nothing was sent"));
}

#[test]
fn playbook_demo_recovers_the_lost_gpu_on_the_simulated_host() {
    let home = Home::new();
    let out = home.run(&[
        "playbook",
        "run",
        "gpu-lost",
        "--host",
        "flaky-h200",
        "--demo",
        "--yes",
    ]);
    let text = stdout(&out);
    assert!(
        text.starts_with("[simulated] flaky-h200 is a demo host 1m into the scenario"),
        "{text}"
    );
    // The commands as they would run on a real host, and the simulator's answers: the GPU is
    // lost, the reset is skipped, the reboot brings it back.
    for needle in [
        "$ nvidia-smi --query-gpu=index,pci.bus_id,name --format=csv,noheader",
        "GPU is lost",
        "Xid (PCI:0000:00:06): 79",
        "$ reboot",
        "back with a new boot id",
        "0, 00000000:00:06.0, NVIDIA H200",
    ] {
        assert!(text.contains(needle), "{needle} missing:\n{text}");
    }
    assert_eq!(out.status.code(), Some(0), "{text}\n{}", stderr(&out));
    assert_state_untouched(&home);

    let unknown = home.run(&[
        "playbook", "run", "gpu-lost", "--host", "real-box", "--demo",
    ]);
    assert_ne!(unknown.status.code(), Some(0));
    assert!(
        stderr(&unknown).contains("\"real-box\" is not a host of the demo fleet"),
        "{}",
        stderr(&unknown)
    );
}

/// The internet sockets and connects `args` made, as strace saw them (every thread and child).
fn network_calls(home: &Home, args: &[&str], stdin: &[u8]) -> (Output, Vec<String>) {
    let trace = home.path().join(format!("strace-{}.txt", args.join("_")));
    let command = home.command(&[]);
    let program = command.get_program().to_owned();
    let mut strace = Command::new("strace");
    strace
        .args(["-f", "-qq", "-e", "trace=socket,connect,sendto", "-o"])
        .arg(&trace)
        .arg(program)
        .args(args);
    for (key, value) in command.get_envs() {
        match value {
            Some(value) => strace.env(key, value),
            None => strace.env_remove(key),
        };
    }
    strace
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = strace.spawn().expect("strace");
    {
        use std::io::Write;
        let _ = child.stdin.take().expect("stdin").write_all(stdin);
    }
    let out = child.wait_with_output().expect("wait");
    let lines = std::fs::read_to_string(&trace).unwrap_or_default();
    let calls = lines
        .lines()
        .filter(|l| {
            l.contains("AF_INET")
                || l.contains("AF_INET6")
                || l.contains("AF_NETLINK")
                || l.contains("connect(")
        })
        .map(str::to_string)
        .collect();
    (out, calls)
}

fn strace_works() -> bool {
    let works = Command::new("strace")
        .args(["-qq", "-e", "trace=none", "true"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !works {
        assert!(
            std::env::var_os("CI").is_none(),
            "strace is required in CI (the demo's no-network test)"
        );
        eprintln!("strace missing or not permitted (ptrace): skipping the no-network test");
    }
    works
}

#[test]
fn no_demo_subcommand_opens_an_internet_socket_or_connects_anywhere() {
    if !strace_works() {
        return;
    }
    let home = Home::new();
    // The tracing sees a connection when one is made: a real host word dials (loopback only).
    let (_, control) = network_calls(&home, &["snapshot", "127.0.0.1:9"], b"");
    assert!(
        control.iter().any(|call| call.contains("connect(")),
        "strace saw no connect for a real host: {control:?}"
    );
    // The real fleet's outside world, which the demo must leave alone: an alert sink
    // (loopback here) and a host.
    std::fs::create_dir_all(home.config_path().parent().expect("dir")).expect("mkdir");
    std::fs::write(
        home.config_path(),
        "[[alerts]]\nkind = \"webhook\"\nurl = \"http://127.0.0.1:9/alerts\"\n\n\
         [[hosts]]\nname = \"flaky-h200\"\nssh = \"root@127.0.0.1:9\"\n",
    )
    .expect("config");
    let runs: [(&[&str], &[u8]); 7] = [
        (&["snapshot", "--demo"], b""),
        (&["cost", "--demo"], b""),
        (&["check", "--demo", "--speed", "1000"], b""),
        (&["release", "--demo", "idle-a100", "--dry-run"], b""),
        (&["release", "--demo", "hot-4090"], b"hot-4090\n"),
        (
            &[
                "playbook",
                "run",
                "gpu-lost",
                "--host",
                "flaky-h200",
                "--demo",
                "--yes",
            ],
            b"",
        ),
        (&["watch", "--demo", "--speed", "100"], b""),
    ];
    for (args, stdin) in runs {
        let (out, calls) = if args[0] == "watch" {
            watch_briefly(&home, args)
        } else {
            network_calls(&home, args, stdin)
        };
        assert!(
            calls.is_empty(),
            "gpufleet {} touched the network:\n{}",
            args.join(" "),
            calls.join("\n")
        );
        // It did run (not refused before doing anything).
        assert!(
            !stdout(&out).is_empty() || args[0] == "watch",
            "gpufleet {}: {}",
            args.join(" "),
            stderr(&out)
        );
    }
    assert_state_untouched(&home);
}

/// `watch --demo` runs until stopped: traced for three seconds, then interrupted.
fn watch_briefly(home: &Home, args: &[&str]) -> (Output, Vec<String>) {
    let trace = home.path().join("strace-watch.txt");
    let command = home.command(&[]);
    let program = command.get_program().to_owned();
    let mut strace = Command::new("strace");
    strace
        .args(["-f", "-qq", "-e", "trace=socket,connect,sendto", "-o"])
        .arg(&trace)
        .arg(program)
        .args(args);
    for (key, value) in command.get_envs() {
        match value {
            Some(value) => strace.env(key, value),
            None => strace.env_remove(key),
        };
    }
    let child = strace
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("strace watch");
    std::thread::sleep(std::time::Duration::from_secs(3));
    // SIGINT to strace's child (the watcher, found by strace's id) ends it as Ctrl-C would.
    let children = format!("/proc/{0}/task/{0}/children", child.id());
    let watcher = std::fs::read_to_string(children).unwrap_or_default();
    for pid in watcher.split_whitespace() {
        let _ = Command::new("kill").args(["-INT", pid]).status();
    }
    let out = child.wait_with_output().expect("wait");
    let lines = std::fs::read_to_string(Path::new(&trace)).unwrap_or_default();
    let calls = lines
        .lines()
        .filter(|l| l.contains("AF_INET") || l.contains("AF_NETLINK") || l.contains("connect("))
        .map(str::to_string)
        .collect();
    (out, calls)
}

#[test]
fn subcommands_that_act_on_the_real_world_have_no_demo() {
    let home = Home::new();
    for args in [
        &["alert", "test", "--demo"][..],
        &["hold", "idle-a100", "--demo"],
        &["audit", "--demo"],
    ] {
        let out = home.run(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stdout(&out));
        assert!(stderr(&out).contains("demo"), "{args:?}: {}", stderr(&out));
        assert!(stdout(&out).is_empty(), "{args:?}");
    }
    assert_state_untouched(&home);
}
