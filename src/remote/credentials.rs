//! How a link asks for what it cannot decide alone: trusting an unknown host key, a key's
//! passphrase, a password. Answers stay in memory only and are wiped when dropped; a key's
//! passphrase is asked for once per process.

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, RecvTimeoutError, Sender};
use std::sync::{Condvar, Mutex, PoisonError};
use std::time::{Duration, Instant};

use crate::fleet::HostId;
use crate::telemetry::source::StopFlag;

/// A passphrase or password; never printed, zeroed on drop.
pub struct Secret(String);

impl Secret {
    pub fn new(text: impl Into<String>) -> Self {
        Self(text.into())
    }

    pub fn expose(&self) -> &str {
        &self.0
    }

    fn duplicate(&self) -> Self {
        Self(self.0.clone())
    }
}

impl Drop for Secret {
    fn drop(&mut self) {
        let mut bytes = std::mem::take(&mut self.0).into_bytes();
        bytes.iter_mut().for_each(|b| *b = 0);
        // Keeps the zeroing from being optimised away as a dead store.
        std::hint::black_box(&bytes);
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret(***)")
    }
}

/// Which host is asking; `cancelled()` turns true when the link is being stopped, and a prompt
/// still waiting for the user should then give up.
#[derive(Debug, Clone)]
pub struct PromptContext {
    pub host_id: HostId,
    pub host_name: String,
    /// `user@host:port`.
    pub target: String,
    stop: StopFlag,
}

impl PromptContext {
    pub(crate) fn new(host_id: HostId, host_name: &str, target: String, stop: StopFlag) -> Self {
        Self {
            host_id,
            host_name: host_name.to_string(),
            target,
            stop,
        }
    }

    /// The same link asking about one of its jump hosts (`target` is the jump host's).
    pub(crate) fn for_hop(&self, target: String) -> Self {
        Self {
            target,
            ..self.clone()
        }
    }

    pub fn cancelled(&self) -> bool {
        self.stop.is_set()
    }
}

/// An unknown host key, as OpenSSH would show it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostKeyPrompt {
    /// The name the key is filed under in known_hosts: `host` or `[host]:port`.
    pub known_as: String,
    pub key_type: String,
    /// `SHA256:...`, as `ssh-keygen -lf` prints it.
    pub fingerprint: String,
    /// Key types known_hosts already holds for this host (a new type appearing is worth a look).
    pub other_types_known: Vec<String>,
}

impl HostKeyPrompt {
    /// The notice that this key was added to known_hosts (`unchecked` under
    /// `StrictHostKeyChecking no`).
    pub(crate) fn added_words(&self, unchecked: bool) -> crate::words::Words {
        let key_name = if unchecked {
            "link_notice.key_added_unchecked"
        } else {
            "link_notice.key_added"
        };
        crate::words::Words::new(key_name)
            .put("key_type", self.key_type.as_str())
            .put("fingerprint", self.fingerprint.as_str())
            .put("known_as", self.known_as.as_str())
    }
}

/// Answers questions for links. Called on the host's own worker thread, which waits for the
/// answer; the UI thread must never block on it. Return `false` / `None` to decline.
pub trait Prompter: Send + Sync {
    /// Trust an unknown host key? `true` appends it to known_hosts.
    fn confirm_host_key(&self, ctx: &PromptContext, key: &HostKeyPrompt) -> bool;
    /// The passphrase of an encrypted private key.
    fn passphrase(&self, ctx: &PromptContext, key_file: &Path) -> Option<Secret>;
    /// The login password of `ctx.target`.
    fn password(&self, ctx: &PromptContext) -> Option<Secret>;
}

/// A question for the UI, with the channel to answer on. Dropping the request declines it.
#[derive(Debug)]
pub enum PromptRequest {
    HostKey {
        host: HostId,
        target: String,
        key: HostKeyPrompt,
        reply: Sender<bool>,
    },
    Passphrase {
        host: HostId,
        target: String,
        key_file: PathBuf,
        reply: Sender<Option<Secret>>,
    },
    Password {
        host: HostId,
        target: String,
        reply: Sender<Option<Secret>>,
    },
}

/// A [`Prompter`] that forwards each question to the UI as a [`PromptRequest`] and waits for
/// the reply, giving up when the link stops or after `timeout`.
#[derive(Debug, Clone)]
pub struct ChannelPrompter {
    to_ui: Sender<PromptRequest>,
    timeout: Duration,
}

impl ChannelPrompter {
    pub fn new(to_ui: Sender<PromptRequest>, timeout: Duration) -> Self {
        Self { to_ui, timeout }
    }

    fn ask<T>(
        &self,
        ctx: &PromptContext,
        build: impl FnOnce(Sender<T>) -> PromptRequest,
    ) -> Option<T> {
        let (tx, rx) = mpsc::channel();
        self.to_ui.send(build(tx)).ok()?;
        let deadline = Instant::now() + self.timeout;
        loop {
            if ctx.cancelled() {
                return None;
            }
            let left = deadline.checked_duration_since(Instant::now())?;
            match rx.recv_timeout(left.min(Duration::from_millis(200))) {
                Ok(answer) => return Some(answer),
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => return None,
            }
        }
    }
}

impl Prompter for ChannelPrompter {
    fn confirm_host_key(&self, ctx: &PromptContext, key: &HostKeyPrompt) -> bool {
        self.ask(ctx, |reply| PromptRequest::HostKey {
            host: ctx.host_id,
            target: ctx.target.clone(),
            key: key.clone(),
            reply,
        })
        .unwrap_or(false)
    }

    fn passphrase(&self, ctx: &PromptContext, key_file: &Path) -> Option<Secret> {
        self.ask(ctx, |reply| PromptRequest::Passphrase {
            host: ctx.host_id,
            target: ctx.target.clone(),
            key_file: key_file.to_path_buf(),
            reply,
        })
        .flatten()
    }

    fn password(&self, ctx: &PromptContext) -> Option<Secret> {
        self.ask(ctx, |reply| PromptRequest::Password {
            host: ctx.host_id,
            target: ctx.target.clone(),
            reply,
        })
        .flatten()
    }
}

/// Key passphrases that worked, kept for the whole process (every link, runbook, check and
/// release connection), and the keys whose passphrase is being asked for right now.
struct Passphrases {
    known: HashMap<PathBuf, Secret>,
    asking: HashSet<PathBuf>,
}

static PASSPHRASES: Mutex<Option<Passphrases>> = Mutex::new(None);
static ANSWERED: Condvar = Condvar::new();

/// What to do about a key's passphrase.
pub(crate) enum PassphraseTurn {
    /// Remembered from an earlier answer.
    Known(Secret),
    /// Nobody knows it: this caller asks, others wanting it wait until the turn ends.
    Ask(AskingGuard),
}

/// Held while one caller asks for a key's passphrase; dropping it lets the others look again.
pub(crate) struct AskingGuard(PathBuf);

impl Drop for AskingGuard {
    fn drop(&mut self) {
        with_passphrases(|p| p.asking.remove(&self.0));
        ANSWERED.notify_all();
    }
}

fn with_passphrases<T>(f: impl FnOnce(&mut Passphrases) -> T) -> T {
    let mut guard = PASSPHRASES.lock().unwrap_or_else(PoisonError::into_inner);
    f(guard.get_or_insert_with(|| Passphrases {
        known: HashMap::new(),
        asking: HashSet::new(),
    }))
}

/// The passphrase of `key_file` if known, else the turn to ask for it: while another caller
/// asks, this one waits (so the user is asked once), giving up when `ctx` is cancelled.
pub(crate) fn passphrase_turn(key_file: &Path, ctx: &PromptContext) -> Option<PassphraseTurn> {
    let mut guard = PASSPHRASES.lock().unwrap_or_else(PoisonError::into_inner);
    loop {
        let store = guard.get_or_insert_with(|| Passphrases {
            known: HashMap::new(),
            asking: HashSet::new(),
        });
        if let Some(secret) = store.known.get(key_file) {
            return Some(PassphraseTurn::Known(secret.duplicate()));
        }
        if store.asking.insert(key_file.to_path_buf()) {
            return Some(PassphraseTurn::Ask(AskingGuard(key_file.to_path_buf())));
        }
        if ctx.cancelled() {
            return None;
        }
        guard = ANSWERED
            .wait_timeout(guard, Duration::from_millis(100))
            .unwrap_or_else(PoisonError::into_inner)
            .0;
    }
}

pub(crate) fn remember_passphrase(key_file: &Path, secret: &Secret) {
    with_passphrases(|p| p.known.insert(key_file.to_path_buf(), secret.duplicate()));
}

pub(crate) fn forget_passphrase(key_file: &Path) {
    with_passphrases(|p| p.known.remove(key_file));
}

/// A password that worked, kept by one link (passwords are per host) so a reconnect does not
/// ask the user again.
#[derive(Debug, Default)]
pub(crate) struct CredentialCache {
    password: Option<Secret>,
}

impl CredentialCache {
    pub(crate) fn password(&self) -> Option<Secret> {
        self.password.as_ref().map(Secret::duplicate)
    }

    pub(crate) fn remember_password(&mut self, secret: &Secret) {
        self.password = Some(secret.duplicate());
    }

    pub(crate) fn forget_password(&mut self) {
        self.password = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_do_not_print() {
        let s = Secret::new("hunter2");
        assert_eq!(format!("{s:?}"), "Secret(***)");
        assert_eq!(s.expose(), "hunter2");
    }

    #[test]
    fn channel_prompter_round_trip_and_cancel() {
        let (tx, rx) = mpsc::channel();
        let prompter = ChannelPrompter::new(tx, Duration::from_secs(5));
        let stop = StopFlag::default();
        let ctx = PromptContext::new(3, "box", "root@h:22".into(), stop.clone());
        let ui = std::thread::spawn(move || {
            if let Ok(PromptRequest::Password { host, reply, .. }) = rx.recv() {
                assert_eq!(host, 3);
                let _ = reply.send(Some(Secret::new("pw")));
            }
            rx
        });
        let answer = prompter.password(&ctx);
        assert_eq!(answer.as_ref().map(Secret::expose), Some("pw"));
        let _rx = ui.join().expect("ui thread");
        stop.set();
        let key = HostKeyPrompt {
            known_as: "h".into(),
            key_type: "ssh-ed25519".into(),
            fingerprint: "SHA256:x".into(),
            other_types_known: vec![],
        };
        assert!(
            !prompter.confirm_host_key(&ctx, &key),
            "cancelled link declines"
        );
    }
}
