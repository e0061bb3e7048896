//! `~/.ssh/config` over real sshd: an alias reached through `Include` resolves and connects;
//! the options on proxies and host keys are honoured (StrictHostKeyChecking, UserKnownHostsFile,
//! HostKeyAlias) or refused before anything connects (an algorithm restriction gpufleet does
//! not implement), never ignored.

use crate::common;
use crate::tmux;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use common::sshd::{Sshd, fingerprint_of, keygen};
use common::{channel, is_sample, test_options};
use gpufleet::fleet::HostEvent;
use gpufleet::remote::{LinkOptions, RemoteHost, resolve, spawn_link};

const WAIT: Duration = Duration::from_secs(10);

#[test]
fn an_alias_from_an_included_file_connects() {
    let Some(sshd) = Sshd::start() else { return };
    let home = sshd.dir().join("home");
    let ssh_dir = home.join(".ssh");
    std::fs::create_dir_all(ssh_dir.join("config.d")).expect("mkdir");
    std::fs::write(
        ssh_dir.join("config"),
        "Include config.d/*.conf\n\nHost *\n    ServerAliveInterval 30\n",
    )
    .expect("config");
    std::fs::copy(sshd.client_key(), ssh_dir.join("rented_key")).expect("key");
    std::fs::write(
        ssh_dir.join("config.d/rented.conf"),
        format!(
            "Host my-h200 other-alias\n    HostName 127.0.0.1\n    Port {}\n    User {}\n    \
             IdentityFile ~/.ssh/rented_key\n",
            sshd.port, sshd.user
        ),
    )
    .expect("include");

    let host = resolve(
        "rented",
        "my-h200",
        None,
        None,
        Some(&ssh_dir.join("config")),
    )
    .expect("alias resolves");
    assert_eq!(host.target.host, "127.0.0.1");
    assert_eq!(host.target.port, sshd.port);
    assert_eq!(host.identity_files, vec![ssh_dir.join("rented_key")]);

    let (sink, mut events) = channel();
    let link = spawn_link(host, 0, sink, test_options(&sshd.trusted_known_hosts())).expect("spawn");
    let connected = events.expect(Duration::from_secs(10), "Connected", |_, e| {
        matches!(e, HostEvent::Connected(_))
    });
    events.expect(Duration::from_secs(10), "Sample", |_, e| is_sample(e));
    link.stop_and_join();
    let HostEvent::Connected(info) = connected else {
        unreachable!()
    };
    assert_eq!(
        info.source,
        format!("ssh {}@127.0.0.1:{}", sshd.user, sshd.port)
    );
}

/// An ssh config whose `my-h200` reaches the test sshd, with `extra` lines in its block.
fn ssh_config(sshd: &Sshd, extra: &str) -> PathBuf {
    let path = sshd.dir().join("ssh_config");
    std::fs::write(
        &path,
        format!(
            "Host my-h200\n    HostName 127.0.0.1\n    Port {}\n    User {}\n    IdentityFile {}\n{extra}",
            sshd.port,
            sshd.user,
            sshd.client_key().display()
        ),
    )
    .expect("ssh config");
    path
}

fn my_h200(config: &Path) -> RemoteHost {
    resolve("rented", "my-h200", None, None, Some(config)).expect("resolves")
}

/// Test options that read the known_hosts files the ssh config names (no `--known-hosts`).
fn options_without_known_hosts() -> LinkOptions {
    LinkOptions {
        known_hosts: None,
        ..test_options(Path::new("unused"))
    }
}

fn disconnect_reason(host: RemoteHost, opts: LinkOptions) -> String {
    let (sink, mut events) = channel();
    let link = spawn_link(host, 0, sink, opts).expect("spawn");
    let event = events.expect(WAIT, "Disconnected", |_, e| {
        matches!(e, HostEvent::Disconnected { .. })
    });
    link.stop_and_join();
    match event {
        HostEvent::Disconnected { reason, .. } => reason,
        other => panic!("{other:?}"),
    }
}

fn streams(host: RemoteHost, opts: LinkOptions) {
    let (sink, mut events) = channel();
    let link = spawn_link(host, 0, sink, opts).expect("spawn");
    events.expect(WAIT, "Sample", |_, e| is_sample(e));
    link.stop_and_join();
}

#[test]
fn an_unimplemented_security_option_is_refused_before_anything_connects() {
    let Some(sshd) = Sshd::start() else { return };
    let config = ssh_config(&sshd, "    Ciphers aes256-gcm@openssh.com\n");
    let dir = tempfile::tempdir().expect("temp");
    let fleet = dir.path().join("config.toml");
    std::fs::write(&fleet, "[[hosts]]\nname = \"rented\"\nssh = \"my-h200\"\n").expect("config");
    // The harness's own readiness probe shows in the log; wait for it to be written.
    let connections = || sshd.log().matches("Connection from").count();
    let deadline = std::time::Instant::now() + WAIT;
    while !sshd.log().contains("Connection closed") && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    let before = connections();
    let out = Command::new(tmux::binary())
        .env("SSH_AUTH_SOCK", "")
        .env("GPUFLEET_STATE_DIR", dir.path())
        .args(["snapshot", "--accept-new-host-keys", "--config"])
        .arg(&fleet)
        .arg("--ssh-config")
        .arg(&config)
        .arg("--known-hosts")
        .arg(dir.path().join("known_hosts"))
        .output()
        .expect("snapshot");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(stderr.contains("sets ciphers"), "{stderr}");
    assert!(
        stderr.contains("does not restrict the algorithms"),
        "{stderr}"
    );
    assert!(stderr.contains(&config.display().to_string()), "{stderr}");
    std::thread::sleep(Duration::from_millis(200));
    assert_eq!(connections(), before, "nothing connected: {}", sshd.log());
    assert!(!dir.path().join("known_hosts").exists());
}

#[test]
fn strict_host_key_checking_yes_outranks_accept_new() {
    let Some(sshd) = Sshd::start() else { return };
    let config = ssh_config(&sshd, "    StrictHostKeyChecking yes\n");
    let known_hosts = sshd.dir().join("kh");
    let mut opts = test_options(&known_hosts);
    opts.accept_new_host_keys = true;
    let reason = disconnect_reason(my_h200(&config), opts);
    assert!(reason.contains("is not known"), "{reason}");
    assert!(reason.contains("StrictHostKeyChecking yes"), "{reason}");
    assert!(!known_hosts.exists(), "nothing added");
    assert!(!sshd.log().contains("Accepted publickey"));
}

#[test]
fn accept_new_in_the_config_adds_the_key_without_the_flag() {
    let Some(sshd) = Sshd::start() else { return };
    let config = ssh_config(&sshd, "    StrictHostKeyChecking accept-new\n");
    let known_hosts = sshd.dir().join("kh");
    streams(my_h200(&config), test_options(&known_hosts));
    assert_eq!(
        std::fs::read_to_string(&known_hosts).expect("written"),
        sshd.known_hosts_line("ed25519")
    );
}

#[test]
fn user_known_hosts_file_and_host_key_alias_are_used() {
    let Some(sshd) = Sshd::start() else { return };
    let key = std::fs::read_to_string(sshd.host_key_pub("ed25519")).expect("key");
    let key: Vec<&str> = key.split_whitespace().take(2).collect();
    let pinned = sshd.dir().join("fleet_known_hosts");
    std::fs::write(&pinned, format!("# fleet\nrented-h200 {}\n", key.join(" "))).expect("kh");
    let extra = format!(
        "    HostKeyAlias Rented-H200\n    UserKnownHostsFile {}/first_known_hosts {}\n",
        sshd.dir().display(),
        pinned.display()
    );
    let config = ssh_config(&sshd, &extra);
    // The key is on file under the alias, in the second file: trusted, headless.
    streams(my_h200(&config), options_without_known_hosts());
    assert!(!sshd.dir().join("first_known_hosts").exists());

    // Another key under the alias is a changed key, named by file and line.
    let impostor = sshd.dir().join("other_ed25519");
    keygen(&impostor, "ed25519", "");
    let other = std::fs::read_to_string(impostor.with_extension("pub")).expect("pub");
    let other: Vec<&str> = other.split_whitespace().take(2).collect();
    std::fs::write(
        &pinned,
        format!("# fleet\nrented-h200 {}\n", other.join(" ")),
    )
    .expect("kh");
    let reason = disconnect_reason(my_h200(&config), options_without_known_hosts());
    assert!(
        reason.contains("HOST KEY CHANGED for rented-h200"),
        "{reason}"
    );
    assert!(
        reason.contains(&format!("{} line 2", pinned.display())),
        "{reason}"
    );
    assert!(
        reason.contains(&fingerprint_of(&impostor.with_extension("pub"))),
        "{reason}"
    );

    // Nothing on file: an accepted key goes to the first file, under the alias.
    std::fs::write(&pinned, "").expect("empty");
    let mut opts = options_without_known_hosts();
    opts.accept_new_host_keys = true;
    streams(my_h200(&config), opts);
    assert_eq!(
        std::fs::read_to_string(sshd.dir().join("first_known_hosts")).expect("written"),
        format!("rented-h200 {}\n", key.join(" "))
    );
}
