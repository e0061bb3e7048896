//! `ProxyJump` and `ProxyCommand` over real sshd: a chain of two jump hosts, each hop's host
//! key checked against known_hosts and named when it fails, and a `ProxyCommand` running the
//! real OpenSSH client (`ssh -W %h:%p jumphost`) that is killed and reaped when the link stops.

use crate::common;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use common::sshd::Sshd;
use common::{channel, is_sample, test_options};
use gpufleet::fleet::HostEvent;
use gpufleet::remote::{LinkOptions, Proxy, RemoteHost, resolve, spawn_link};

const WAIT: Duration = Duration::from_secs(15);

/// A `Host` block that reaches `sshd` with its own client key, plus `extra` lines.
fn block(name: &str, sshd: &Sshd, extra: &str) -> String {
    format!(
        "Host {name}\n    HostName 127.0.0.1\n    Port {}\n    User {}\n    IdentityFile {}\n{extra}\n",
        sshd.port,
        sshd.user,
        sshd.client_key().display()
    )
}

fn write(path: &Path, text: &str) -> PathBuf {
    std::fs::write(path, text).expect("write");
    path.to_path_buf()
}

fn streams(host: RemoteHost, opts: LinkOptions) {
    let (sink, mut events) = channel();
    let link = spawn_link(host, 0, sink, opts).expect("spawn");
    events.expect(WAIT, "Sample", |_, e| is_sample(e));
    link.stop_and_join();
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

fn logins(sshd: &Sshd) -> usize {
    sshd.log().matches("Accepted publickey").count()
}

/// Waits until `sshd` serves no connection any more.
fn sessions_end(sshd: &Sshd) -> bool {
    let deadline = Instant::now() + Duration::from_secs(5);
    while Instant::now() < deadline {
        if sshd.session_pids().is_empty() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    false
}

#[test]
fn a_two_hop_jump_chain_reaches_the_host_and_checks_every_hop_key() {
    let (Some(a), Some(b), Some(c)) = (Sshd::start(), Sshd::start(), Sshd::start()) else {
        return;
    };
    let dir = tempfile::tempdir().expect("temp");
    // jump-b's own ProxyJump is not used: as a later hop of the chain it is reached through
    // jump-a (as `ssh -J jump-a,jump-b` does), so the unresolvable name is never tried.
    let config = write(
        &dir.path().join("ssh_config"),
        &[
            block("target", &c, "    ProxyJump jump-a,jump-b"),
            block("jump-a", &a, ""),
            block("jump-b", &b, "    ProxyJump nowhere.invalid"),
        ]
        .concat(),
    );
    let host = resolve("gpu", "target", None, None, Some(&config)).expect("resolves");
    let Proxy::Jump(last) = &host.proxy else {
        panic!("reached through a jump host: {:?}", host.proxy)
    };
    assert_eq!(last.spec, "jump-b");
    assert_eq!(last.host.target.port, b.port);

    let known_hosts = write(
        &dir.path().join("known_hosts"),
        &[
            a.known_hosts_line("ed25519"),
            b.known_hosts_line("ed25519"),
            c.known_hosts_line("ed25519"),
        ]
        .concat(),
    );
    streams(host.clone(), test_options(&known_hosts));
    assert_eq!(
        (logins(&a), logins(&b), logins(&c)),
        (1, 1, 1),
        "one login per hop and on the host"
    );
    // Stopping the link ends the jump hosts' sessions too.
    assert!(
        sessions_end(&a),
        "jump-a still serves: {:?}",
        a.session_pids()
    );
    assert!(
        sessions_end(&b),
        "jump-b still serves: {:?}",
        b.session_pids()
    );

    // jump-b's key is not on file: refused, named by hop, and the host is never reached.
    let without_b = write(
        &dir.path().join("known_hosts_without_b"),
        &[a.known_hosts_line("ed25519"), c.known_hosts_line("ed25519")].concat(),
    );
    let reason = disconnect_reason(host.clone(), test_options(&without_b));
    assert!(
        reason.contains(&format!(
            "jump host jump-b: host key of [127.0.0.1]:{} is not known",
            b.port
        )),
        "{reason}"
    );
    assert_eq!(logins(&c), 1, "the host was not logged into again");

    // A changed key on jump-a is refused as loudly as on the host itself.
    let wrong_a = write(
        &dir.path().join("known_hosts_wrong_a"),
        &[
            // jump-a's name with jump-b's key.
            b.known_hosts_line("ed25519")
                .replace(&format!("]:{} ", b.port), &format!("]:{} ", a.port)),
            b.known_hosts_line("ed25519"),
            c.known_hosts_line("ed25519"),
        ]
        .concat(),
    );
    let a_logins = logins(&a);
    let reason = disconnect_reason(host, test_options(&wrong_a));
    assert!(
        reason.contains("jump host jump-a: HOST KEY CHANGED"),
        "{reason}"
    );
    assert_eq!(logins(&a), a_logins, "jump-a was not logged into again");
}

#[test]
fn proxy_jump_none_wins_when_it_comes_first_and_loops_are_refused() {
    let dir = tempfile::tempdir().expect("temp");
    let config = write(
        &dir.path().join("ssh_config"),
        "Host direct\n    ProxyJump none\n\nHost bastion\n    HostName 10.0.0.1\n\n\
         Host * !bastion\n    ProxyJump admin@bastion:2222\n",
    );
    let host = resolve("d", "direct", None, None, Some(&config)).expect("resolves");
    assert_eq!(host.proxy, Proxy::Direct);
    let host = resolve("o", "other", None, None, Some(&config)).expect("resolves");
    let Proxy::Jump(jump) = &host.proxy else {
        panic!("{:?}", host.proxy)
    };
    assert_eq!(jump.spec, "admin@bastion:2222");
    assert_eq!(jump.host.target.to_string(), "admin@10.0.0.1:2222");
    assert_eq!(jump.host.proxy, Proxy::Direct);

    // Without `!bastion` the jump host would jump through itself forever.
    let looping = write(
        &dir.path().join("looping"),
        "Host *\n    ProxyJump bastion\n",
    );
    let err = resolve("o", "other", None, None, Some(&looping)).expect_err("refused");
    let text = err.to_string();
    assert!(text.contains("jump host bastion"), "{text}");
    assert!(text.contains("Host * !bastion"), "{text}");
}

/// This process's children running (or left unreaped as) the OpenSSH client.
fn ssh_children() -> Vec<(u32, String)> {
    let me = std::process::id();
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        let Some((head, rest)) = stat.rsplit_once(')') else {
            continue;
        };
        let comm = head.split_once('(').map(|(_, c)| c).unwrap_or_default();
        let mut fields = rest.split_whitespace();
        let state = fields.next().unwrap_or_default().to_string();
        let ppid = fields.next().and_then(|p| p.parse::<u32>().ok());
        if ppid == Some(me) && comm == "ssh" {
            let pid = entry.file_name().to_string_lossy().parse().unwrap_or(0);
            found.push((pid, state));
        }
    }
    found
}

#[test]
fn a_proxy_command_through_the_openssh_client_carries_the_session_and_ends_with_it() {
    let (Some(jump), Some(gpu)) = (Sshd::start(), Sshd::start()) else {
        return;
    };
    let dir = tempfile::tempdir().expect("temp");
    let known_hosts = write(
        &dir.path().join("known_hosts"),
        &[
            jump.known_hosts_line("ed25519"),
            gpu.known_hosts_line("ed25519"),
        ]
        .concat(),
    );
    let config_path = dir.path().join("ssh_config");
    let jump_settings = format!(
        "    UserKnownHostsFile {}\n    GlobalKnownHostsFile /dev/null\n    \
         StrictHostKeyChecking yes\n    BatchMode yes\n",
        known_hosts.display()
    );
    let proxy = format!(
        "    ProxyCommand ssh -F {} -o BatchMode=yes -W %h:%p jump-a\n",
        config_path.display()
    );
    let config = write(
        &config_path,
        &[
            block("target", &gpu, &proxy),
            block("jump-a", &jump, &jump_settings),
        ]
        .concat(),
    );
    let host = resolve("gpu", "target", None, None, Some(&config)).expect("resolves");
    assert!(matches!(host.proxy, Proxy::Command(_)), "{:?}", host.proxy);

    let (sink, mut events) = channel();
    let link = spawn_link(host.clone(), 0, sink, test_options(&known_hosts)).expect("spawn");
    events.expect(WAIT, "Sample", |_, e| is_sample(e));
    let running = ssh_children();
    assert_eq!(running.len(), 1, "the proxy command runs: {running:?}");
    assert_eq!(logins(&jump), 1, "ssh -W logged into the jump host");
    assert_eq!(logins(&gpu), 1);
    link.stop_and_join();
    assert_eq!(
        ssh_children(),
        vec![],
        "the proxy command was killed and reaped"
    );
    assert!(sessions_end(&jump), "{:?}", jump.session_pids());

    // The jump host's key unknown to the OpenSSH client: its own words reach the message.
    write(&known_hosts, &gpu.known_hosts_line("ed25519"));
    let reason = disconnect_reason(host, test_options(&known_hosts));
    assert!(reason.contains("through its ProxyCommand"), "{reason}");
    assert!(reason.contains("Host key verification failed"), "{reason}");
    assert!(!reason.contains("-W"), "the command is not shown: {reason}");
    assert_eq!(
        ssh_children(),
        vec![],
        "the failed proxy command was reaped"
    );
}
