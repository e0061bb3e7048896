//! Host-key settings of the ssh config and known_hosts markers over real sshd: a host known
//! only through `@cert-authority` refused (never offered for trust), a `@revoked` key refused,
//! `GlobalKnownHostsFile` honoured, and `StrictHostKeyChecking no` refused unless gpufleet is
//! told to honour it, then letting a changed key through with a warning.

use crate::common;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::Mutex;
use std::time::Duration;

use common::sshd::{Sshd, keygen};
use common::{channel, is_sample, test_options};
use gpufleet::fleet::HostEvent;
use gpufleet::remote::{
    HostKeyPrompt, LinkOptions, PromptContext, Prompter, RemoteHost, Secret, resolve, spawn_link,
};

const WAIT: Duration = Duration::from_secs(10);

/// Accepts every host key it is asked about, and remembers being asked.
#[derive(Default)]
struct AcceptAll {
    asked: Mutex<Vec<HostKeyPrompt>>,
}

impl Prompter for AcceptAll {
    fn confirm_host_key(&self, _ctx: &PromptContext, key: &HostKeyPrompt) -> bool {
        self.asked.lock().expect("lock").push(key.clone());
        true
    }
    fn passphrase(&self, _ctx: &PromptContext, _key: &Path) -> Option<Secret> {
        None
    }
    fn password(&self, _ctx: &PromptContext) -> Option<Secret> {
        None
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

/// Streams until a sample; returns the notices seen on the way.
fn notices_while_streaming(host: RemoteHost, opts: LinkOptions) -> Vec<String> {
    let (sink, mut events) = channel();
    let link = spawn_link(host, 0, sink, opts).expect("spawn");
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

fn logins(sshd: &Sshd) -> usize {
    sshd.log().matches("Accepted publickey").count()
}

/// The public half of a fresh ed25519 key, as `type base64`.
fn other_key(sshd: &Sshd, name: &str) -> String {
    let path = sshd.dir().join(name);
    keygen(&path, "ed25519", "");
    let text = std::fs::read_to_string(path.with_extension("pub")).expect("pub");
    text.split_whitespace()
        .take(2)
        .collect::<Vec<_>>()
        .join(" ")
}

#[test]
fn a_host_known_only_through_a_certificate_authority_is_refused_not_offered() {
    let Some(sshd) = Sshd::start() else { return };
    let known_hosts = sshd.dir().join("kh");
    let ca_line = format!("@cert-authority [127.0.0.1]:* {}\n", other_key(&sshd, "ca"));
    std::fs::write(&known_hosts, &ca_line).expect("kh");
    let prompter = Arc::new(AcceptAll::default());
    let mut opts = test_options(&known_hosts);
    opts.accept_new_host_keys = true;
    opts.prompter = Some(prompter.clone());
    let reason = disconnect_reason(sshd.remote_host("ca"), opts);
    assert!(reason.contains("certificate authority"), "{reason}");
    assert!(
        reason.contains("libssh2 cannot verify certificate host keys"),
        "{reason}"
    );
    assert!(
        reason.contains(&format!("{} line 1", known_hosts.display())),
        "{reason}"
    );
    assert!(
        prompter.asked.lock().expect("lock").is_empty(),
        "never offered"
    );
    assert_eq!(std::fs::read_to_string(&known_hosts).expect("kh"), ca_line);
    assert_eq!(logins(&sshd), 0);
}

#[test]
fn a_revoked_key_is_refused_even_when_also_trusted() {
    let Some(sshd) = Sshd::start() else { return };
    let known_hosts = sshd.dir().join("kh");
    let line = sshd.known_hosts_line("ed25519");
    let key = line
        .split_whitespace()
        .skip(1)
        .collect::<Vec<_>>()
        .join(" ");
    std::fs::write(&known_hosts, format!("{line}@revoked * {key}\n")).expect("kh");
    let reason = disconnect_reason(sshd.remote_host("revoked"), test_options(&known_hosts));
    assert!(reason.contains("@revoked"), "{reason}");
    assert!(
        reason.contains(&format!("{} line 2", known_hosts.display())),
        "{reason}"
    );
    assert_eq!(logins(&sshd), 0);
}

/// An ssh config whose `gpu` reaches `sshd`, with `extra` lines.
fn ssh_config(sshd: &Sshd, extra: &str) -> PathBuf {
    let path = sshd.dir().join("ssh_config");
    std::fs::write(
        &path,
        format!(
            "Host gpu\n    HostName 127.0.0.1\n    Port {}\n    User {}\n    IdentityFile {}\n{extra}",
            sshd.port,
            sshd.user,
            sshd.client_key().display()
        ),
    )
    .expect("ssh config");
    path
}

fn gpu(config: &Path) -> RemoteHost {
    resolve("gpu", "gpu", None, None, Some(config)).expect("resolves")
}

/// Options that read the files the ssh config names (no `--known-hosts`).
fn config_options() -> LinkOptions {
    LinkOptions {
        known_hosts: None,
        ..test_options(Path::new("unused"))
    }
}

#[test]
fn global_known_hosts_files_are_read_and_never_written() {
    let Some(sshd) = Sshd::start() else { return };
    let user_file = sshd.dir().join("user_kh");
    let global = sshd.dir().join("global_kh");
    std::fs::write(&global, sshd.known_hosts_line("ed25519")).expect("global");
    let config = ssh_config(
        &sshd,
        &format!(
            "    UserKnownHostsFile {}\n    GlobalKnownHostsFile /nonexistent/kh {}\n",
            user_file.display(),
            global.display()
        ),
    );
    let notices = notices_while_streaming(gpu(&config), config_options());
    assert!(!user_file.exists(), "nothing added: {notices:?}");

    // A changed key in the global file is a changed key.
    std::fs::write(
        &global,
        format!(
            "[127.0.0.1]:{} {}\n",
            sshd.port,
            other_key(&sshd, "impostor")
        ),
    )
    .expect("global");
    let reason = disconnect_reason(gpu(&config), config_options());
    assert!(reason.contains("HOST KEY CHANGED"), "{reason}");
    assert!(
        reason.contains(&format!("{} line 1", global.display())),
        "{reason}"
    );
}

#[test]
fn strict_host_key_checking_no_needs_the_flag_and_then_warns() {
    let Some(sshd) = Sshd::start() else { return };
    let known_hosts = sshd.dir().join("kh");
    std::fs::write(
        &known_hosts,
        format!(
            "[127.0.0.1]:{} {}\n",
            sshd.port,
            other_key(&sshd, "impostor")
        ),
    )
    .expect("kh");
    let config = ssh_config(&sshd, "    StrictHostKeyChecking no\n");
    let reason = disconnect_reason(gpu(&config), test_options(&known_hosts));
    assert!(
        reason.contains("--allow-strict-host-key-checking-no"),
        "{reason}"
    );
    assert_eq!(logins(&sshd), 0, "refused before connecting");

    let mut opts = test_options(&known_hosts);
    opts.allow_strict_host_key_checking_no = true;
    let notices = notices_while_streaming(gpu(&config), opts);
    assert!(
        notices
            .iter()
            .any(|n| n.contains("HOST KEY CHANGED") && n.contains("password logins turned off")),
        "{notices:?}"
    );
    assert_eq!(logins(&sshd), 1);

    // A trusted key under `no` still says `no` is in effect.
    std::fs::write(&known_hosts, sshd.known_hosts_line("ed25519")).expect("kh");
    let other_host = gpu(&config);
    let mut opts = test_options(&known_hosts);
    opts.allow_strict_host_key_checking_no = true;
    let notices = notices_while_streaming(other_host, opts);
    assert!(
        notices
            .iter()
            .any(|n| n.contains("StrictHostKeyChecking no is in effect")),
        "{notices:?}"
    );
}
