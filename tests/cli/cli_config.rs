//! `gpufleet config init | path | check` in a home of their own, and the one message a first run
//! without a config gets.

use crate::cli;

use std::os::unix::fs::PermissionsExt;

use cli::{Home, stderr, stdout};

#[test]
fn config_path_is_the_xdg_path() {
    let home = Home::new();
    let out = home.run(&["config", "path"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        stdout(&out).trim_end(),
        home.config_path().to_str().expect("utf-8")
    );
    let out = home.run(&["config", "path", "--config", "/elsewhere/c.toml"]);
    assert_eq!(stdout(&out).trim_end(), "/elsewhere/c.toml");
}

#[test]
fn config_init_writes_a_private_valid_config_and_never_overwrites() {
    let home = Home::new();
    let path = home.config_path();
    let out = home.run(&["config", "init"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stdout(&out).contains(path.to_str().expect("utf-8")));
    let mode =
        |p: &std::path::Path| std::fs::metadata(p).expect("metadata").permissions().mode() & 0o777;
    assert_eq!(mode(&path), 0o600);
    assert_eq!(mode(path.parent().expect("dir")), 0o700);
    let written = std::fs::read_to_string(&path).expect("read");
    assert!(written.contains("# [[hosts]]"), "{written}");

    // A commented config with no hosts is valid as written.
    let out = home.run(&["config", "check"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stdout(&out).starts_with("ok: 0 hosts"), "{}", stdout(&out));

    // A second init leaves the file alone and names it.
    std::fs::write(&path, "interval_ms = 2000\n").expect("edit");
    let out = home.run(&["config", "init"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains(path.to_str().expect("utf-8")));
    assert!(stderr(&out).contains("already exists"), "{}", stderr(&out));
    assert_eq!(
        std::fs::read_to_string(&path).expect("read"),
        "interval_ms = 2000\n"
    );
}

#[test]
fn config_check_counts_hosts_or_names_file_line_and_key() {
    let home = Home::new();
    let good = home.write(
        "good.toml",
        "[[hosts]]\nname = \"a\"\nssh = \"root@10.0.0.1\"\n\n[[hosts]]\nname = \"b\"\nssh = \"gpu-b\"\n",
    );
    let out = home.run(&["config", "check", "--config", &good]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stdout(&out).starts_with("ok: 2 hosts"), "{}", stdout(&out));

    let bad = home.write(
        "bad.toml",
        "interval_ms = 1000\n\n[[hosts]]\nname = \"a\"\nssh = \"root@10.0.0.1\"\nprice_per_hour = -3.0\n",
    );
    let out = home.run(&["config", "check", "--config", &bad]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stdout(&out).is_empty(), "{}", stdout(&out));
    assert!(
        stderr(&out).contains(&format!(
            "{bad}:6: hosts[0].price_per_hour: must be 0 or more"
        )),
        "{}",
        stderr(&out)
    );

    // Nothing at the default path: one line saying so and what writes one.
    let out = home.run(&["config", "check"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("gpufleet config init"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_first_run_without_a_config_says_so_once() {
    let home = Home::new();
    let out = home.run(&["snapshot"]);
    if out.status.code() == Some(0) {
        // This machine has GPUs and NVML: without a config gpufleet watches them.
        eprintln!("skipped: NVML found local GPUs, so a run without a config is not refused");
        return;
    }
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    let path = home.config_path();
    assert_eq!(
        err.matches(path.to_str().expect("utf-8")).count(),
        1,
        "{err}"
    );
    assert_eq!(err.matches("gpufleet config init").count(), 1, "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
}
