//! A passphrase-protected key over real sshd: asked for once per process and kept in memory,
//! for the link and for the one-command sessions of playbooks, checks and releases alike, even
//! when several connections want it at once.

use crate::common;

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::sshd::{Sshd, keygen};
use common::{channel, is_sample, test_options};
use gpufleet::remote::{
    ExecRequest, HostKeyPrompt, PromptContext, Prompter, Secret, exec, spawn_link,
};
use gpufleet::telemetry::source::StopFlag;

/// Answers passphrase questions slowly (as a person would) and counts them.
struct SlowTypist {
    passphrase: String,
    asked: Mutex<usize>,
}

impl Prompter for SlowTypist {
    fn confirm_host_key(&self, _ctx: &PromptContext, _key: &HostKeyPrompt) -> bool {
        false
    }
    fn passphrase(&self, _ctx: &PromptContext, _key: &Path) -> Option<Secret> {
        *self.asked.lock().expect("lock") += 1;
        std::thread::sleep(Duration::from_millis(300));
        Some(Secret::new(self.passphrase.clone()))
    }
    fn password(&self, _ctx: &PromptContext) -> Option<Secret> {
        None
    }
}

#[test]
fn a_key_passphrase_is_asked_once_for_links_and_exec_sessions() {
    let Some(sshd) = Sshd::start() else { return };
    let locked = sshd.dir().join("locked_ed25519");
    keygen(&locked, "ed25519", "correct horse");
    let public = std::fs::read_to_string(locked.with_extension("pub")).expect("pub");
    std::fs::write(sshd.dir().join("authorized_keys"), public).expect("authorized_keys");
    let mut host = sshd.remote_host("enc");
    host.identity_files = vec![locked];
    let typist = Arc::new(SlowTypist {
        passphrase: "correct horse".to_string(),
        asked: Mutex::new(0),
    });
    let mut opts = test_options(&sshd.trusted_known_hosts());
    opts.prompter = Some(typist.clone());

    // Two links and a command session start at once: one question between them.
    let run_exec = |host: &gpufleet::remote::RemoteHost| {
        let argv = vec!["true".to_string()];
        exec(
            host,
            &opts,
            &ExecRequest {
                argv: &argv,
                stdin: None,
                timeout: Duration::from_secs(10),
            },
            &StopFlag::default(),
            &mut |_| {},
        )
        .expect("exec")
    };
    let (sink, mut events) = channel();
    let first = spawn_link(host.clone(), 0, sink.clone(), opts.clone()).expect("spawn");
    let second = spawn_link(host.clone(), 1, sink, opts.clone()).expect("spawn");
    assert_eq!(run_exec(&host).exit_status, Some(0));
    for id in [0, 1] {
        events.expect(Duration::from_secs(10), "Sample", |h, e| {
            h == id && is_sample(e)
        });
    }
    first.stop_and_join();
    second.stop_and_join();
    // A playbook step, a check or a release later in the same run: not asked again.
    assert_eq!(run_exec(&host).exit_status, Some(0));
    assert_eq!(*typist.asked.lock().expect("lock"), 1);
}
