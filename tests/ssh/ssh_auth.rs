//! Logging in over real sshd: a wrong key, a wrong password, an encrypted key with and without
//! a way to ask for its passphrase.

use crate::common;

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::sshd::{Sshd, SshdOptions, keygen};
use common::{channel, is_sample, test_options};
use gpufleet::fleet::HostEvent;
use gpufleet::remote::{HostKeyPrompt, PromptContext, Prompter, Secret, spawn_link};

const WAIT: Duration = Duration::from_secs(10);

/// Gives fixed answers and counts the questions.
#[derive(Default)]
struct Answers {
    passphrase: Option<String>,
    password: Option<String>,
    asked: Mutex<Vec<String>>,
}

impl Prompter for Answers {
    fn confirm_host_key(&self, _ctx: &PromptContext, _key: &HostKeyPrompt) -> bool {
        false
    }
    fn passphrase(&self, ctx: &PromptContext, key: &Path) -> Option<Secret> {
        self.asked.lock().expect("lock").push(format!(
            "passphrase {} {}",
            ctx.target,
            key.display()
        ));
        self.passphrase.clone().map(Secret::new)
    }
    fn password(&self, ctx: &PromptContext) -> Option<Secret> {
        self.asked
            .lock()
            .expect("lock")
            .push(format!("password {}", ctx.target));
        self.password.clone().map(Secret::new)
    }
}

fn disconnect_reason(events: &mut common::Events) -> String {
    match events.expect(WAIT, "Disconnected", |_, e| {
        matches!(e, HostEvent::Disconnected { .. })
    }) {
        HostEvent::Disconnected { reason, .. } => reason,
        _ => unreachable!(),
    }
}

#[test]
fn a_key_the_server_does_not_know_is_named_in_the_error() {
    let Some(sshd) = Sshd::start() else { return };
    let stranger = sshd.dir().join("stranger_ed25519");
    keygen(&stranger, "ed25519", "");
    let mut host = sshd.remote_host("wrongkey");
    host.identity_files = vec![stranger.clone()];
    let (sink, mut events) = channel();
    let link = spawn_link(host, 0, sink, test_options(&sshd.trusted_known_hosts())).expect("spawn");
    let reason = disconnect_reason(&mut events);
    events.drain_for(Duration::from_millis(500));
    link.stop_and_join();
    assert!(reason.starts_with("authentication failed for "), "{reason}");
    assert!(
        reason.contains(&format!("key {} was not accepted", stranger.display())),
        "{reason}"
    );
    assert!(reason.contains("server accepts: publickey"), "{reason}");
    assert_eq!(
        events.count(|_, e| matches!(e, HostEvent::Connecting { .. })),
        1,
        "no retry loop"
    );
}

#[test]
fn a_wrong_password_is_reported_clearly() {
    let Some(sshd) = Sshd::start_with(&SshdOptions {
        password_auth: true,
        ..SshdOptions::default()
    }) else {
        return;
    };
    let answers = Arc::new(Answers {
        password: Some("not-the-password".to_string()),
        ..Answers::default()
    });
    let mut host = sshd.remote_host("pw");
    host.identity_files.clear();
    host.password_env = Some("GPUFLEET_TEST_UNSET_PASSWORD_VAR".to_string());
    let mut opts = test_options(&sshd.trusted_known_hosts());
    opts.prompter = Some(answers.clone());
    let (sink, mut events) = channel();
    let link = spawn_link(host, 0, sink, opts).expect("spawn");
    let reason = disconnect_reason(&mut events);
    link.stop_and_join();
    assert!(
        reason.contains("$GPUFLEET_TEST_UNSET_PASSWORD_VAR is not set"),
        "{reason}"
    );
    assert!(
        reason.contains("the password typed was rejected"),
        "{reason}"
    );
    assert!(reason.contains("password"), "{reason}");
    let asked = answers.asked.lock().expect("lock").clone();
    assert!(
        !asked.is_empty() && asked.iter().all(|a| a.starts_with("password ")),
        "{asked:?}"
    );
}

#[test]
fn an_encrypted_key_is_named_when_headless_and_unlocked_when_asked() {
    let Some(sshd) = Sshd::start() else { return };
    let locked = sshd.dir().join("locked_ed25519");
    keygen(&locked, "ed25519", "correct horse");
    let public = std::fs::read_to_string(locked.with_extension("pub")).expect("pub");
    std::fs::write(sshd.dir().join("authorized_keys"), public).expect("authorized_keys");
    let mut host = sshd.remote_host("enc");
    host.identity_files = vec![locked.clone()];

    let (sink, mut events) = channel();
    let link = spawn_link(
        host.clone(),
        0,
        sink,
        test_options(&sshd.trusted_known_hosts()),
    )
    .expect("spawn");
    let reason = disconnect_reason(&mut events);
    link.stop_and_join();
    assert!(
        reason.contains(&format!("key {} is encrypted", locked.display())),
        "{reason}"
    );
    assert!(reason.contains("ssh-add"), "{reason}");

    let answers = Arc::new(Answers {
        passphrase: Some("correct horse".to_string()),
        ..Answers::default()
    });
    let mut opts = test_options(&sshd.trusted_known_hosts());
    opts.prompter = Some(answers.clone());
    let (sink, mut events) = channel();
    let link = spawn_link(host, 0, sink, opts).expect("spawn");
    events.expect(WAIT, "Sample", |_, e| is_sample(e));
    link.stop_and_join();
    assert_eq!(answers.asked.lock().expect("lock").len(), 1);
}
