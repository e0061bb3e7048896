//! Subcommands and host words on the command line, as a user types them: a subcommand's name is
//! never a host, hosts may follow `snapshot` and `watch`, and a word that names nothing is
//! refused with "did you mean" before anything connects.

use crate::cli;

use cli::{Home, stderr, stdout};

/// Port 1 on loopback refuses at once: a host that is read (and fails) without waiting.
const REFUSING: &str = "root@127.0.0.1:1";

fn snapshot_names(out: &std::process::Output) -> Vec<String> {
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("JSON on stdout ({e}): {}{}", stdout(out), stderr(out)));
    doc["hosts"]
        .as_array()
        .expect("hosts")
        .iter()
        .map(|h| h["name"].as_str().expect("name").to_string())
        .collect()
}

#[test]
fn hosts_after_snapshot_are_read() {
    let home = Home::new();
    let out = home.run(&["snapshot", REFUSING, "--json"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert_eq!(snapshot_names(&out), [REFUSING]);
}

#[test]
fn a_host_before_snapshot_is_not_a_second_host() {
    let home = Home::new();
    let out = home.run(&[REFUSING, "snapshot", "--json"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert_eq!(snapshot_names(&out), [REFUSING]);
}

#[test]
fn a_mistyped_subcommand_gets_did_you_mean() {
    let home = Home::new();
    for (typed, meant) in [
        ("snapsht", "snapshot"),
        ("diagnsoe", "diagnose"),
        ("wacth", "watch"),
    ] {
        let out = home.run(&[typed]);
        assert_eq!(out.status.code(), Some(2), "{typed}: {}", stderr(&out));
        assert!(stdout(&out).is_empty(), "{typed}: {}", stdout(&out));
        let err = stderr(&out);
        assert!(
            err.contains(&format!("`{typed}` is not a subcommand"))
                && err.contains(&format!("did you mean `{meant}`?")),
            "{typed}: {err}"
        );
        assert_eq!(err.lines().count(), 1, "{err}");
    }
}

#[test]
fn a_mistyped_config_host_gets_did_you_mean() {
    let home = Home::new();
    let config = home.write(
        "c.toml",
        "[[hosts]]\nname = \"a100-1\"\nssh = \"root@127.0.0.1:1\"\n",
    );
    let out = home.run(&["--config", &config, "snapshot", "a100-l", "--json"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("did you mean `a100-1`?"),
        "{}",
        stderr(&out)
    );
    // The host's real name is read.
    let out = home.run(&["--config", &config, "snapshot", "a100-1", "--json"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert_eq!(snapshot_names(&out), ["a100-1"]);
}

#[test]
fn an_ssh_config_alias_is_a_host() {
    let home = Home::new();
    let ssh_config = home.write(
        ".ssh/config",
        "Host gpu-lab\n  HostName 127.0.0.1\n  Port 1\n  User root\n",
    );
    // Through --ssh-config and through ~/.ssh/config.
    for args in [
        vec!["snapshot", "gpu-lab", "--json", "--ssh-config", &ssh_config],
        vec!["snapshot", "gpu-lab", "--json"],
    ] {
        let out = home.run(&args);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {}", stderr(&out));
        assert_eq!(snapshot_names(&out), ["gpu-lab"]);
    }
    let out = home.run(&["snapshot", "gpu-lb", "--json"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("did you mean `gpu-lab`?"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn hosts_before_a_subcommand_that_takes_none_are_refused() {
    let home = Home::new();
    let out = home.run(&[REFUSING, "cost", "--json"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stdout(&out).is_empty(), "{}", stdout(&out));
    assert!(
        stderr(&out).contains("`cost` takes no hosts"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn an_unusable_ssh_config_is_reported_by_connecting_not_as_an_unknown_word() {
    let home = Home::new();
    let missing = home.path().join("no-such-config");
    let out = home.run(&[
        "snapshot",
        "gpu-lab",
        "--json",
        "--ssh-config",
        missing.to_str().expect("utf-8"),
    ]);
    let err = stderr(&out);
    assert!(!err.contains("is not a subcommand"), "{err}");
    assert!(err.contains("no-such-config"), "{err}");
}
