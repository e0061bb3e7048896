//! Host keys over real sshd: unknown keys (headless refusal, a prompt, accept-new), a changed
//! key refused with both fingerprints, and known_hosts forms libssh2 alone gets wrong.

use crate::common;

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::sshd::{Sshd, fingerprint_of, keygen};
use common::{channel, is_sample, test_options};
use gpufleet::fleet::HostEvent;
use gpufleet::remote::{AskAgain, HostKeyPrompt, PromptContext, Prompter, Secret, spawn_link};

const WAIT: Duration = Duration::from_secs(10);

/// Answers host-key prompts with a fixed verdict and remembers what it was shown.
#[derive(Default)]
struct KeyAnswer {
    accept: bool,
    shown: Mutex<Vec<HostKeyPrompt>>,
}

impl Prompter for KeyAnswer {
    fn confirm_host_key(&self, _ctx: &PromptContext, key: &HostKeyPrompt) -> bool {
        self.shown.lock().expect("lock").push(key.clone());
        self.accept
    }
    fn passphrase(&self, _ctx: &PromptContext, _key: &Path) -> Option<Secret> {
        None
    }
    fn password(&self, _ctx: &PromptContext) -> Option<Secret> {
        None
    }
}

fn reason_of(event: HostEvent) -> String {
    match event {
        HostEvent::Disconnected { reason, .. } => reason,
        other => panic!("not a Disconnected: {other:?}"),
    }
}

#[test]
fn unknown_key_without_a_prompter_is_refused_with_its_fingerprint() {
    let Some(sshd) = Sshd::start() else { return };
    let known_hosts = sshd.dir().join("empty_known_hosts");
    let (sink, mut events) = channel();
    let link =
        spawn_link(sshd.remote_host("new"), 0, sink, test_options(&known_hosts)).expect("spawn");
    let reason = reason_of(events.expect(WAIT, "Disconnected", |_, e| {
        matches!(e, HostEvent::Disconnected { .. })
    }));
    let expected = fingerprint_of(&sshd.host_key_pub("ed25519"));
    assert!(
        reason.contains("is not known") && reason.contains(&expected),
        "{reason}"
    );
    assert!(reason.contains("--accept-new-host-keys"), "{reason}");
    // Permanent: the link gives up instead of looping.
    events.drain_for(Duration::from_millis(1_000));
    link.stop_and_join();
    assert_eq!(
        events.count(|_, e| matches!(e, HostEvent::Connecting { .. })),
        1
    );
    assert!(!known_hosts.exists());
    assert!(
        !sshd.log().contains("Accepted publickey"),
        "never logged in"
    );
}

#[test]
fn a_prompt_decides_and_acceptance_appends_to_known_hosts() {
    let Some(sshd) = Sshd::start() else { return };
    let known_hosts = sshd.dir().join("kh");
    let answer = Arc::new(KeyAnswer {
        accept: true,
        ..KeyAnswer::default()
    });
    let mut opts = test_options(&known_hosts);
    opts.prompter = Some(answer.clone());
    let (sink, mut events) = channel();
    let link = spawn_link(sshd.remote_host("new"), 0, sink, opts).expect("spawn");
    events.expect(WAIT, "Sample", |_, e| is_sample(e));
    link.stop_and_join();
    let shown = answer.shown.lock().expect("lock").clone();
    assert_eq!(shown.len(), 1);
    assert_eq!(
        shown[0].fingerprint,
        fingerprint_of(&sshd.host_key_pub("ed25519"))
    );
    assert_eq!(shown[0].key_type, "ssh-ed25519");
    assert_eq!(shown[0].known_as, format!("[127.0.0.1]:{}", sshd.port));
    let written = std::fs::read_to_string(&known_hosts).expect("known_hosts written");
    assert_eq!(written, sshd.known_hosts_line("ed25519"));

    // Declining refuses.
    let decline = Arc::new(KeyAnswer::default());
    let mut opts = test_options(&sshd.dir().join("kh2"));
    opts.prompter = Some(decline);
    let (sink, mut events) = channel();
    let link = spawn_link(sshd.remote_host("new"), 0, sink, opts).expect("spawn");
    let reason = reason_of(events.expect(WAIT, "Disconnected", |_, e| {
        matches!(e, HostEvent::Disconnected { .. })
    }));
    link.stop_and_join();
    assert!(reason.contains("was not accepted"), "{reason}");
}

#[test]
fn accept_new_host_keys_appends_headless_and_is_used_next_time() {
    let Some(sshd) = Sshd::start() else { return };
    let known_hosts = sshd.dir().join("ssh/known_hosts");
    let mut opts = test_options(&known_hosts);
    opts.accept_new_host_keys = true;
    let (sink, mut events) = channel();
    let link = spawn_link(sshd.remote_host("new"), 0, sink, opts).expect("spawn");
    let notice = events.expect(WAIT, "Notice", |_, e| matches!(e, HostEvent::Notice { .. }));
    events.expect(WAIT, "Sample", |_, e| is_sample(e));
    link.stop_and_join();
    let HostEvent::Notice { text, .. } = notice else {
        unreachable!()
    };
    let text = text.english();
    assert!(
        text.contains(&fingerprint_of(&sshd.host_key_pub("ed25519"))),
        "{text}"
    );
    assert_eq!(
        std::fs::read_to_string(&known_hosts).expect("written"),
        sshd.known_hosts_line("ed25519")
    );

    // Strict again: the recorded key is now simply trusted.
    let (sink, mut events) = channel();
    let link = spawn_link(
        sshd.remote_host("again"),
        0,
        sink,
        test_options(&known_hosts),
    )
    .expect("spawn");
    events.expect(WAIT, "Sample", |_, e| is_sample(e));
    link.stop_and_join();
}

#[test]
fn a_changed_key_is_refused_with_both_fingerprints_and_never_logs_in() {
    let Some(sshd) = Sshd::start() else { return };
    let impostor = sshd.dir().join("other_ed25519");
    keygen(&impostor, "ed25519", "");
    let other_pub = impostor.with_extension("pub");
    let other = std::fs::read_to_string(&other_pub).expect("pub");
    let blob = other.split_whitespace().nth(1).expect("blob");
    let known_hosts = sshd.dir().join("kh");
    let original = format!("# mine\n[127.0.0.1]:{} ssh-ed25519 {blob}\n", sshd.port);
    std::fs::write(&known_hosts, &original).expect("write");
    let mut opts = test_options(&known_hosts);
    opts.accept_new_host_keys = true;
    let (sink, mut events) = channel();
    let link = spawn_link(sshd.remote_host("mitm"), 0, sink, opts).expect("spawn");
    let reason = reason_of(events.expect(WAIT, "Disconnected", |_, e| {
        matches!(e, HostEvent::Disconnected { .. })
    }));
    events.drain_for(Duration::from_millis(500));
    link.stop_and_join();
    assert!(reason.contains("HOST KEY CHANGED"), "{reason}");
    assert!(
        reason.contains(&fingerprint_of(&other_pub)),
        "expected key: {reason}"
    );
    assert!(
        reason.contains(&fingerprint_of(&sshd.host_key_pub("ed25519"))),
        "presented key: {reason}"
    );
    assert!(reason.contains("line 2"), "{reason}");
    assert_eq!(
        std::fs::read_to_string(&known_hosts).expect("read"),
        original
    );
    assert_eq!(events.count(|_, e| is_sample(e)), 0);
    assert_eq!(
        events.count(|_, e| matches!(e, HostEvent::Connecting { .. })),
        1
    );
    assert!(
        !sshd.log().contains("Accepted publickey"),
        "never logged in"
    );
}

#[test]
fn a_hashed_ecdsa_only_entry_is_a_match_not_a_false_alarm() {
    let Some(sshd) = Sshd::start() else { return };
    let known_hosts = sshd.dir().join("kh");
    std::fs::write(&known_hosts, sshd.known_hosts_line("ecdsa")).expect("write");
    let hashed = std::process::Command::new("ssh-keygen")
        .arg("-H")
        .arg("-f")
        .arg(&known_hosts)
        .output()
        .expect("ssh-keygen -H");
    assert!(hashed.status.success());
    let text = std::fs::read_to_string(&known_hosts).expect("read");
    assert!(
        text.starts_with("|1|") && !text.contains("127.0.0.1"),
        "{text}"
    );
    let (sink, mut events) = channel();
    let link = spawn_link(
        sshd.remote_host("ecdsa"),
        0,
        sink,
        test_options(&known_hosts),
    )
    .expect("spawn");
    events.expect(WAIT, "Sample", |_, e| is_sample(e));
    link.stop_and_join();
}

/// A known_hosts line for another ed25519 key under `hosts`, and that key's public file.
fn pinned_elsewhere(sshd: &Sshd, hosts: &str) -> (String, std::path::PathBuf) {
    let impostor = sshd.dir().join("pinned_ed25519");
    keygen(&impostor, "ed25519", "");
    let other_pub = impostor.with_extension("pub");
    let other = std::fs::read_to_string(&other_pub).expect("pub");
    let blob = other.split_whitespace().nth(1).expect("blob");
    (format!("{hosts} ssh-ed25519 {blob}\n"), other_pub)
}

#[test]
fn a_wildcard_line_pinning_another_key_is_refused_even_with_accept_new() {
    let Some(sshd) = Sshd::start() else { return };
    let (line, other_pub) = pinned_elsewhere(&sshd, "[127.0.0.1]:*");
    let known_hosts = sshd.dir().join("kh");
    let original = format!("# every port of this address\n{line}");
    std::fs::write(&known_hosts, &original).expect("write");
    let mut opts = test_options(&known_hosts);
    opts.accept_new_host_keys = true;
    let (sink, mut events) = channel();
    let link = spawn_link(sshd.remote_host("pinned"), 0, sink, opts).expect("spawn");
    let reason = reason_of(events.expect(WAIT, "Disconnected", |_, e| {
        matches!(e, HostEvent::Disconnected { .. })
    }));
    events.drain_for(Duration::from_millis(500));
    link.stop_and_join();
    assert!(reason.contains("HOST KEY CHANGED"), "{reason}");
    assert!(
        reason.contains(&format!("{} line 2", known_hosts.display())),
        "file and line named: {reason}"
    );
    assert!(reason.contains(&fingerprint_of(&other_pub)), "{reason}");
    assert!(
        reason.contains(&fingerprint_of(&sshd.host_key_pub("ed25519"))),
        "{reason}"
    );
    assert_eq!(
        std::fs::read_to_string(&known_hosts).expect("read"),
        original,
        "nothing added"
    );
    assert_eq!(events.count(|_, e| is_sample(e)), 0);
    assert!(
        !sshd.log().contains("Accepted publickey"),
        "never logged in"
    );
}

#[test]
fn a_negated_pattern_leaves_the_host_to_accept_new() {
    let Some(sshd) = Sshd::start() else { return };
    // The line pins every port of the address but this server's: it says nothing about it.
    let (line, _) = pinned_elsewhere(&sshd, &format!("[127.0.0.1]:*,![127.0.0.1]:{}", sshd.port));
    let known_hosts = sshd.dir().join("kh");
    std::fs::write(&known_hosts, &line).expect("write");
    let mut opts = test_options(&known_hosts);
    opts.accept_new_host_keys = true;
    let (sink, mut events) = channel();
    let link = spawn_link(sshd.remote_host("negated"), 0, sink, opts).expect("spawn");
    events.expect(WAIT, "Sample", |_, e| is_sample(e));
    link.stop_and_join();
    assert_eq!(
        std::fs::read_to_string(&known_hosts).expect("read"),
        format!("{line}{}", sshd.known_hosts_line("ed25519"))
    );
}

/// Declines the first host-key question and accepts every later one.
#[derive(Default)]
struct DeclineThenAccept {
    asked: Mutex<u32>,
}

impl Prompter for DeclineThenAccept {
    fn confirm_host_key(&self, _ctx: &PromptContext, _key: &HostKeyPrompt) -> bool {
        let mut asked = self.asked.lock().expect("lock");
        *asked += 1;
        *asked > 1
    }
    fn passphrase(&self, _ctx: &PromptContext, _key: &Path) -> Option<Secret> {
        None
    }
    fn password(&self, _ctx: &PromptContext) -> Option<Secret> {
        None
    }
}

#[test]
fn a_declined_key_waits_until_asked_again_then_the_question_comes_back() {
    let Some(sshd) = Sshd::start() else { return };
    let known_hosts = sshd.dir().join("kh");
    let answer = Arc::new(DeclineThenAccept::default());
    let ask_again = AskAgain::default();
    let mut opts = test_options(&known_hosts);
    opts.prompter = Some(answer.clone());
    opts.ask_again = Some(ask_again.clone());
    let (sink, mut events) = channel();
    let link = spawn_link(sshd.remote_host("declined"), 4, sink, opts).expect("spawn");
    let down = events.expect(WAIT, "Disconnected", |_, e| {
        matches!(e, HostEvent::Disconnected { .. })
    });
    let HostEvent::Disconnected {
        reason,
        retry_at_ms,
        ..
    } = down
    else {
        unreachable!()
    };
    assert!(reason.contains("was not accepted"), "{reason}");
    assert!(
        !reason.contains("not retrying"),
        "it waits to be asked: {reason}"
    );
    assert_eq!(retry_at_ms, None, "no retry of its own");
    // It waits: no new attempt, no second question, however long.
    events.drain_for(Duration::from_millis(1_500));
    assert_eq!(
        events.count(|_, e| matches!(e, HostEvent::Connecting { .. })),
        1
    );
    assert_eq!(*answer.asked.lock().expect("lock"), 1);
    // Another host asked again: this one still waits.
    ask_again.ask(5);
    events.drain_for(Duration::from_millis(500));
    assert_eq!(*answer.asked.lock().expect("lock"), 1);
    // Asked again: it connects, the question comes back, and yes this time reads the GPUs.
    ask_again.ask(4);
    events.expect(WAIT, "Sample", |_, e| is_sample(e));
    link.stop_and_join();
    assert_eq!(*answer.asked.lock().expect("lock"), 2);
    assert_eq!(
        std::fs::read_to_string(&known_hosts).expect("known_hosts written"),
        sshd.known_hosts_line("ed25519")
    );
}
