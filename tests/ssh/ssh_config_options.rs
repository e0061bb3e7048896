//! The ssh config read as OpenSSH reads it, over real sshd: `Match` blocks (evaluated with the
//! `HostName` and `User` set before them) and `Include` decide where a host is; `HostName %h`;
//! `ServerAliveInterval`/`CountMax` decide when a silent link is dead; options gpufleet does
//! not implement are warned about once per process, or refuse the host when ignoring them
//! would be less safe; `CertificateFile` and `Match exec` refusals name their reason.

use crate::common;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use common::sshd::Sshd;
use common::{channel, is_sample, test_options};
use gpufleet::fleet::HostEvent;
use gpufleet::remote::{Agent, RemoteHost, resolve, spawn_link};

const WAIT: Duration = Duration::from_secs(10);

fn write(path: &Path, text: &str) -> PathBuf {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).expect("mkdir");
    }
    std::fs::write(path, text).expect("write");
    path.to_path_buf()
}

/// Streams until a sample; returns the notices seen on the way.
fn notices_while_streaming(host: RemoteHost, known_hosts: &Path) -> Vec<String> {
    let (sink, mut events) = channel();
    let link = spawn_link(host, 0, sink, test_options(known_hosts)).expect("spawn");
    events.expect(WAIT, "Sample", |_, e| is_sample(e));
    link.stop_and_join();
    events
        .seen
        .iter()
        .filter_map(|(_, e, _)| match e {
            HostEvent::Notice { text, .. } => Some(text.english()),
            _ => None,
        })
        .collect()
}

#[test]
fn match_blocks_and_includes_decide_where_the_host_is() {
    let Some(sshd) = Sshd::start() else { return };
    let ssh_dir = sshd.dir().join("home/.ssh");
    // `Match host` sees the HostName set before it, `user` the User (here the local user, as
    // nothing set one), `originalhost` the name given. The decoy blocks would send the host
    // elsewhere if they applied, and `Match all`'s Port comes too late to count.
    write(
        &ssh_dir.join("conf.d/10-gpus.conf"),
        &format!(
            "Match host 127.0.0.* user {user} !originalhost other\n    Port {port}\n\
             Match originalhost other\n    Port 1\n\
             Match user root-never-used\n    Port 2\n",
            user = sshd.user,
            port = sshd.port
        ),
    );
    let config = write(
        &ssh_dir.join("config"),
        "Host one\n    HostName 127.0.0.1\nHost *\n    Include conf.d/*.conf\n\
         Match all\n    IdentityFile ~/.ssh/key\n    Port 3\n",
    );
    std::fs::copy(sshd.client_key(), ssh_dir.join("key")).expect("key");
    let host = resolve("gpu", "one", None, None, Some(&config)).expect("resolves");
    assert_eq!(
        (host.target.host.as_str(), host.target.port),
        ("127.0.0.1", sshd.port)
    );
    assert_eq!(host.target.user, sshd.user);
    assert_eq!(host.identity_files, vec![ssh_dir.join("key")]);
    notices_while_streaming(host, &sshd.trusted_known_hosts());

    // HostName takes %h (the name given) and %%, as OpenSSH expands them.
    let config = write(
        &sshd.dir().join("tokens"),
        "Host rented-*\n    HostName %h.gpus.example\nHost bad\n    HostName %h:%p\n",
    );
    let host = resolve("gpu", "rented-7", None, None, Some(&config)).expect("resolves");
    assert_eq!(host.target.host, "rented-7.gpus.example");
    let err = resolve("gpu", "bad", None, None, Some(&config)).expect_err("refused");
    assert!(err.to_string().contains("%p"), "{err}");
}

#[test]
fn server_alive_settings_decide_when_a_silent_link_is_dead() {
    let Some(sshd) = Sshd::start() else { return };
    let config = write(
        &sshd.dir().join("ssh_config"),
        &format!(
            "Host gpu\n    HostName 127.0.0.1\n    Port {}\n    User {}\n    IdentityFile {}\n    \
             ServerAliveInterval 1\n    ServerAliveCountMax 2\n    ConnectTimeout 1m\n",
            sshd.port,
            sshd.user,
            sshd.client_key().display()
        ),
    );
    let host = resolve("gpu", "gpu", None, None, Some(&config)).expect("resolves");
    assert_eq!(host.settings.connect_timeout_ms, Some(60_000));
    let mut opts = test_options(&sshd.trusted_known_hosts());
    opts.dead_after_ms = 60_000;
    let (sink, mut events) = channel();
    let link = spawn_link(host, 0, sink, opts).expect("spawn");
    events.expect(WAIT, "Sample", |_, e| is_sample(e));
    let frozen = sshd.freeze_sessions();
    let since = Instant::now();
    let event = events.expect(WAIT, "Disconnected", |_, e| {
        matches!(e, HostEvent::Disconnected { .. })
    });
    let took = since.elapsed();
    link.stop_and_join();
    sshd.thaw(&frozen);
    let HostEvent::Disconnected { reason, .. } = event else {
        unreachable!()
    };
    assert!(reason.contains("no data from the host for 2 s"), "{reason}");
    assert!(
        took < Duration::from_secs(8),
        "dead after {took:?}, not 60 s"
    );
}

#[test]
fn an_unimplemented_option_is_warned_about_once_per_process() {
    let Some(sshd) = Sshd::start() else { return };
    let config = write(
        &sshd.dir().join("ssh_config"),
        &format!(
            "Host gpu\n    HostName 127.0.0.1\n    Port {}\n    User {}\n    IdentityFile {}\n\
             Host *\n    VisualHostKey yes\n    HostKeyAlgorithms +ssh-rsa\n    IgnoreUnknown Foo*\n    \
             FooBar 1\n",
            sshd.port,
            sshd.user,
            sshd.client_key().display()
        ),
    );
    let host = resolve("gpu", "gpu", None, None, Some(&config)).expect("resolves");
    let known_hosts = sshd.trusted_known_hosts();
    let first = notices_while_streaming(host.clone(), &known_hosts);
    let about = |notices: &[String], option: &str| {
        notices
            .iter()
            .filter(|n| n.contains(option) && n.starts_with("gpu:"))
            .count()
    };
    assert_eq!(about(&first, "visualhostkey"), 1, "{first:?}");
    assert_eq!(about(&first, "hostkeyalgorithms"), 1, "{first:?}");
    assert_eq!(about(&first, "foobar"), 0, "IgnoreUnknown: {first:?}");
    let again = notices_while_streaming(host, &known_hosts);
    assert_eq!(
        about(&again, "visualhostkey"),
        0,
        "once per process: {again:?}"
    );
}

#[test]
fn login_settings_are_read_and_unsafe_ones_refused() {
    let dir = tempfile::tempdir().expect("temp");
    let config = write(
        &dir.path().join("config"),
        "Host agentless\n    IdentityAgent none\n    IdentitiesOnly yes\n    \
         PreferredAuthentications publickey\n    PubkeyAuthentication host-bound\n\
         Host sock\n    IdentityAgent ~/agent.sock\n\
         Host cert\n    CertificateFile ~/.ssh/id_ed25519-cert.pub\n\
         Host exec\n    HostName 10.0.0.1\n\
         Match exec \"test -e /tmp\" originalhost exec\n    ProxyJump bastion\n\
         Host hostkey\n    VerifyHostKeyDNS yes\n",
    );
    let host = resolve("a", "agentless", None, None, Some(&config)).expect("resolves");
    assert_eq!(host.settings.agent, Agent::Off);
    assert!(host.settings.identities_only);
    assert!(host.settings.pubkey_auth && !host.settings.password_auth);
    let host = resolve("s", "sock", None, None, Some(&config)).expect("resolves");
    assert!(
        matches!(&host.settings.agent, Agent::Socket(p) if p.ends_with("agent.sock")),
        "{:?}",
        host.settings.agent
    );
    let err = resolve("c", "cert", None, None, Some(&config)).expect_err("refused");
    assert!(err.to_string().contains("CertificateFile"), "{err}");
    assert!(err.to_string().contains("libssh2"), "{err}");
    let err = resolve("e", "exec", None, None, Some(&config)).expect_err("refused");
    let text = err.to_string();
    assert!(
        text.contains("Match exec") && text.contains("proxyjump"),
        "{text}"
    );
    let err = resolve("h", "hostkey", None, None, Some(&config)).expect_err("refused");
    assert!(err.to_string().contains("verifyhostkeydns"), "{err}");
}

/// An ssh-agent of this test's own on `socket`, killed (by PID) on drop.
struct TestAgent {
    pid: u32,
}

impl TestAgent {
    fn start(socket: &Path, key: &Path) -> Option<TestAgent> {
        let out = std::process::Command::new("ssh-agent")
            .arg("-a")
            .arg(socket)
            .arg("-s")
            .output()
            .ok()?;
        let text = String::from_utf8_lossy(&out.stdout).to_string();
        let pid = text
            .split("SSH_AGENT_PID=")
            .nth(1)?
            .split(';')
            .next()?
            .parse()
            .ok()?;
        let agent = TestAgent { pid };
        let added = std::process::Command::new("ssh-add")
            .arg(key)
            .env("SSH_AUTH_SOCK", socket)
            .stdin(std::process::Stdio::null())
            .output()
            .ok()?;
        added.status.success().then_some(agent)
    }
}

impl Drop for TestAgent {
    fn drop(&mut self) {
        let _ = std::process::Command::new("kill")
            .arg(self.pid.to_string())
            .status();
    }
}

#[test]
fn identity_agent_and_identities_only_pick_the_agent_keys() {
    let Some(sshd) = Sshd::start() else { return };
    let socket = sshd.dir().join("agent.sock");
    let Some(_agent) = TestAgent::start(&socket, &sshd.client_key()) else {
        eprintln!("skipping: ssh-agent could not be started");
        return;
    };
    let other = sshd.dir().join("other_ed25519");
    common::sshd::keygen(&other, "ed25519", "");
    let config = write(
        &sshd.dir().join("ssh_config"),
        &format!(
            // The first value obtained wins: the specific blocks come first.
            "Host only-other\n    IdentitiesOnly yes\n    IdentityFile {other}\n\
             Host no-agent\n    IdentityAgent none\n    IdentityFile /nonexistent/key\n\
             Host *\n    HostName 127.0.0.1\n    Port {port}\n    User {user}\n    \
             IdentityAgent {sock}\n",
            port = sshd.port,
            user = sshd.user,
            sock = socket.display(),
            other = other.display()
        ),
    );
    let mut opts = test_options(&sshd.trusted_known_hosts());
    opts.use_agent = true;
    let connect = |name: &str| {
        let host = resolve(name, name, None, None, Some(&config)).expect("resolves");
        let (sink, mut events) = channel();
        let link = spawn_link(host, 0, sink, opts.clone()).expect("spawn");
        let event = events.expect(WAIT, "Sample or Disconnected", |_, e| {
            is_sample(e) || matches!(e, HostEvent::Disconnected { .. })
        });
        link.stop_and_join();
        match event {
            HostEvent::Disconnected { reason, .. } => Err(reason),
            _ => Ok(()),
        }
    };
    // The agent at IdentityAgent holds the authorized key: logged in with it alone.
    connect("via-agent").expect("logged in through the agent");
    // IdentitiesOnly: the agent's key is not one of the identity files, so it is not offered.
    let reason = connect("only-other").expect_err("refused");
    assert!(reason.contains("IdentitiesOnly"), "{reason}");
    assert!(reason.contains("none of its 0 key(s)"), "{reason}");
    // IdentityAgent none: the agent is not asked.
    let reason = connect("no-agent").expect_err("refused");
    assert!(!reason.contains("ssh-agent"), "{reason}");
}
