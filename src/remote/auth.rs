//! Logging in, in OpenSSH's order: ssh-agent, key files, then a password (from the named
//! environment variable, else asked for). Every failed step is named in the final error, in
//! catalogue words (`auth_words.*`: `key ~/.ssh/id_rsa was not accepted by the server`, `the
//! password typed was rejected`); paths, variable names and what libssh2 said are values, as
//! they came. The error's English (the log) is their English.

use std::borrow::Cow;
use std::path::{Path, PathBuf};

use ssh2::{ErrorCode, KeyboardInteractivePrompt, Prompt, Session};

use crate::remote::credentials::{
    CredentialCache, PassphraseTurn, PromptContext, Prompter, Secret, forget_passphrase,
    passphrase_turn, remember_passphrase,
};
use crate::remote::digest::base64_decode;
use crate::remote::error::RemoteError;
use crate::remote::host_settings::{Agent, HostSettings};
use crate::words::Words;

/// libssh2 reports a key it cannot decrypt or parse as a file error.
const LIBSSH2_ERROR_FILE: i32 = -16;
/// How many times the user is asked again after a wrong passphrase or password.
const PROMPT_TRIES: usize = 3;

pub(crate) struct AuthInput<'a> {
    pub user: &'a str,
    pub identity_files: &'a [PathBuf],
    pub password_env: Option<&'a str>,
    pub use_agent: bool,
    /// The ssh config's login settings for the host.
    pub settings: &'a HostSettings,
    /// Passwords and keyboard-interactive may be tried (not to a host whose key changed).
    pub passwords: bool,
    pub prompter: Option<&'a dyn Prompter>,
    pub ctx: &'a PromptContext,
}

/// Authenticates `session` (blocking mode, handshake done) or explains every attempt.
pub(crate) fn authenticate(
    session: &Session,
    input: &AuthInput<'_>,
    cache: &mut CredentialCache,
) -> Result<(), RemoteError> {
    let offered = match session.auth_methods(input.user) {
        Ok(methods) => methods.to_string(),
        Err(_) if session.authenticated() => return Ok(()),
        Err(e) => return Err(RemoteError::ssh("ssh_context.auth_methods", &e)),
    };
    let offers = |m: &str| offered.split(',').any(|o| o == m);
    let mut tried = Vec::new();
    let settings = input.settings;
    if offers("publickey") && settings.pubkey_auth {
        let agent = match &settings.agent {
            _ if !input.use_agent => None,
            Agent::Off => None,
            Agent::FromEnvironment => std::env::var_os("SSH_AUTH_SOCK").map(|_| None),
            Agent::Socket(path) => Some(Some(path.as_path())),
        };
        if let Some(socket) = agent {
            match try_agent(session, input, socket) {
                Ok(()) => return Ok(()),
                Err(why) => tried.push(why),
            }
        }
        for key in input.identity_files {
            if try_key(session, input, key, &mut tried) {
                return Ok(());
            }
        }
    }
    // Only the password methods the ssh config allows.
    let password_methods = offered
        .split(',')
        .filter(|m| {
            (*m == "password" && settings.password_auth)
                || (*m == "keyboard-interactive" && settings.kbd_interactive_auth)
        })
        .collect::<Vec<_>>()
        .join(",");
    if input.passwords
        && !password_methods.is_empty()
        && try_passwords(session, input, cache, &password_methods, &mut tried)
    {
        return Ok(());
    }
    if tried.is_empty() {
        tried.push(Words::new("auth_words.nothing"));
    }
    Err(RemoteError::Auth {
        target: input.ctx.target.clone(),
        offered,
        tried,
    })
}

/// Tries the agent's keys (at `socket`, else `$SSH_AUTH_SOCK`); with `IdentitiesOnly`, only
/// those whose public half is one of the identity files' `.pub`.
fn try_agent(session: &Session, input: &AuthInput<'_>, socket: Option<&Path>) -> Result<(), Words> {
    let fail = |e: ssh2::Error| agent_error(e.message());
    let mut agent = session.agent().map_err(fail)?;
    if let Some(path) = socket {
        agent.set_identity_path(path).map_err(fail)?;
    }
    agent.connect().map_err(fail)?;
    agent.list_identities().map_err(fail)?;
    let mut identities = agent.identities().map_err(fail)?;
    if input.settings.identities_only {
        let allowed: Vec<Vec<u8>> = input
            .identity_files
            .iter()
            .filter_map(|key| public_blob(key))
            .collect();
        identities.retain(|id| allowed.iter().any(|blob| blob == id.blob()));
    }
    for identity in &identities {
        if agent.userauth(input.user, identity).is_ok() {
            return Ok(());
        }
    }
    let _ = agent.disconnect();
    Err(agent_none(identities.len(), input.settings.identities_only))
}

/// The key blob of `<key>.pub`, when it can be read.
fn public_blob(key: &Path) -> Option<Vec<u8>> {
    let mut name = key.as_os_str().to_owned();
    name.push(".pub");
    let text = std::fs::read_to_string(name).ok()?;
    base64_decode(text.split_whitespace().nth(1)?)
}

/// Tries one key file; true when logged in. Encrypted keys use the passphrase remembered by
/// this process, else ask the prompter (once for the process), else are named as needing one.
fn try_key(session: &Session, input: &AuthInput<'_>, key: &Path, tried: &mut Vec<Words>) -> bool {
    let shown = key.display().to_string();
    let text = match std::fs::read_to_string(key) {
        Ok(t) => t,
        Err(e) => {
            tried.push(key_error(
                "auth_words.key_unreadable",
                &shown,
                &e.to_string(),
            ));
            return false;
        }
    };
    if !key_is_encrypted(&text) {
        return match session.userauth_pubkey_file(input.user, None, key, None) {
            Ok(()) => true,
            Err(e) => {
                tried.push(key_failure(&shown, &e));
                false
            }
        };
    }
    let turn = loop {
        match passphrase_turn(key, input.ctx) {
            None => {
                tried.push(key_attempt("auth_words.key_stopped", &shown));
                return false;
            }
            Some(PassphraseTurn::Known(secret)) => {
                match session.userauth_pubkey_file(input.user, None, key, Some(secret.expose())) {
                    Ok(()) => return true,
                    // The key file changed since: ask again.
                    Err(e) if e.code() == ErrorCode::Session(LIBSSH2_ERROR_FILE) => {
                        forget_passphrase(key);
                    }
                    Err(e) => {
                        tried.push(key_failure(&shown, &e));
                        return false;
                    }
                }
            }
            Some(PassphraseTurn::Ask(turn)) => break turn,
        }
    };
    let Some(prompter) = input.prompter else {
        tried.push(key_attempt("auth_words.key_no_prompt", &shown));
        return false;
    };
    for _ in 0..PROMPT_TRIES {
        let Some(secret) = prompter.passphrase(input.ctx, key) else {
            tried.push(key_attempt("auth_words.key_no_passphrase", &shown));
            return false;
        };
        match session.userauth_pubkey_file(input.user, None, key, Some(secret.expose())) {
            Ok(()) => {
                remember_passphrase(key, &secret);
                drop(turn);
                return true;
            }
            Err(e) if e.code() == ErrorCode::Session(LIBSSH2_ERROR_FILE) => {}
            Err(e) => {
                // The key was decrypted (a wrong passphrase is a file error): keep it for the
                // hosts that do accept the key.
                remember_passphrase(key, &secret);
                tried.push(key_failure(&shown, &e));
                return false;
            }
        }
    }
    tried.push(key_attempt("auth_words.key_wrong_passphrase", &shown));
    false
}

fn key_failure(shown: &str, e: &ssh2::Error) -> Words {
    if e.code() == ErrorCode::Session(LIBSSH2_ERROR_FILE) {
        key_error("auth_words.key_bad_file", shown, e.message())
    } else {
        key_attempt("auth_words.key_rejected", shown)
    }
}

fn try_passwords(
    session: &Session,
    input: &AuthInput<'_>,
    cache: &mut CredentialCache,
    offered: &str,
    tried: &mut Vec<Words>,
) -> bool {
    if let Some(var) = input.password_env {
        match std::env::var(var) {
            Ok(text) => {
                let secret = Secret::new(text);
                if send_password(session, input.user, offered, &secret) {
                    return true;
                }
                tried.push(password_env("auth_words.password_env_rejected", var));
            }
            Err(_) => tried.push(password_env("auth_words.env_unset", var)),
        }
    }
    if let Some(secret) = cache.password() {
        if send_password(session, input.user, offered, &secret) {
            return true;
        }
        cache.forget_password();
    }
    let Some(prompter) = input.prompter else {
        return false;
    };
    let mut rejected = 0;
    for _ in 0..PROMPT_TRIES {
        let Some(secret) = prompter.password(input.ctx) else {
            break;
        };
        if send_password(session, input.user, offered, &secret) {
            cache.remember_password(&secret);
            return true;
        }
        rejected += 1;
    }
    tried.push(password_typed(rejected));
    false
}

fn send_password(session: &Session, user: &str, offered: &str, secret: &Secret) -> bool {
    let offers = |m: &str| offered.split(',').any(|o| o == m);
    if offers("password") && session.userauth_password(user, secret.expose()).is_ok() {
        return true;
    }
    if offers("keyboard-interactive") {
        let mut responder = PasswordResponder(secret.expose());
        return session
            .userauth_keyboard_interactive(user, &mut responder)
            .is_ok();
    }
    false
}

/// Answers keyboard-interactive logins (common on password-only rented hosts) with the password.
struct PasswordResponder<'a>(&'a str);

impl KeyboardInteractivePrompt for PasswordResponder<'_> {
    fn prompt<'b>(
        &mut self,
        _user: &str,
        _instructions: &str,
        prompts: &[Prompt<'b>],
    ) -> Vec<String> {
        prompts.iter().map(|_| self.0.to_string()).collect()
    }
}

/// Whether a private key file needs a passphrase: PEM keys say `ENCRYPTED`; OpenSSH-format keys
/// name their cipher inside the base64 body (`none` when unencrypted, with the `bcrypt` KDF
/// otherwise).
pub(crate) fn key_is_encrypted(text: &str) -> bool {
    if text.contains("ENCRYPTED") {
        return true;
    }
    let body: String = text
        .lines()
        .skip_while(|l| !l.starts_with("-----BEGIN OPENSSH PRIVATE KEY-----"))
        .skip(1)
        .take_while(|l| !l.starts_with("-----END"))
        .map(str::trim)
        .collect();
    let Some(bytes) = (!body.is_empty()).then(|| base64_decode(&body)).flatten() else {
        return false;
    };
    const MAGIC: &[u8] = b"openssh-key-v1\0";
    let Some(rest) = bytes.strip_prefix(MAGIC) else {
        return false;
    };
    let cipher = rest
        .get(..4)
        .and_then(|len| len.try_into().ok())
        .map(|len: [u8; 4]| u32::from_be_bytes(len) as usize)
        .and_then(|len| rest.get(4..4 + len))
        .map(String::from_utf8_lossy)
        .unwrap_or(Cow::Borrowed("none"));
    cipher != "none"
}

// The attempts, in catalogue words.

/// `ssh-agent: …` as libssh2 said it.
fn agent_error(message: &str) -> Words {
    Words::new("auth_words.agent_error").put("message", message)
}

/// `ssh-agent: none of its 2 key(s) was accepted`, naming IdentitiesOnly when it applied.
pub(crate) fn agent_none(keys: usize, identities_only: bool) -> Words {
    let key = if identities_only {
        "auth_words.agent_none_identities_only"
    } else {
        "auth_words.agent_none"
    };
    Words::new(key).put("n", keys.to_string())
}

/// An attempt with the key file at `key` (shown as a path), as `what` says: one of
/// `auth_words.key_*`.
pub(crate) fn key_attempt(what: &'static str, key: &str) -> Words {
    Words::new(what).put("key", key)
}

/// `key … : cannot read it (…)`, `key …: cannot be read (…)`: what the OS or libssh2 said.
fn key_error(what: &'static str, key: &str, error: &str) -> Words {
    Words::new(what).put("key", key).put("error", error)
}

/// An attempt with a password from the environment variable `var`.
pub(crate) fn password_env(what: &'static str, var: &str) -> Words {
    Words::new(what).put("var", var)
}

/// The passwords typed: none given, or rejected `rejected` times.
pub(crate) fn password_typed(rejected: usize) -> Words {
    match rejected {
        0 => Words::new("auth_words.password_none_given"),
        1 => Words::new("auth_words.password_rejected"),
        n => Words::new("auth_words.password_rejected_n").put("n", n.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keygen(dir: &Path, name: &str, args: &[&str]) -> Option<String> {
        let path = dir.join(name);
        let status = std::process::Command::new("ssh-keygen")
            .args(["-q", "-f"])
            .arg(&path)
            .args(args)
            .status()
            .ok()?;
        status
            .success()
            .then(|| std::fs::read_to_string(&path).ok())?
    }

    #[test]
    fn detects_encrypted_keys_of_every_format() {
        let dir = tempfile::tempdir().expect("tempdir");
        let cases = [
            ("plain_ed", vec!["-t", "ed25519", "-N", ""], false),
            ("enc_ed", vec!["-t", "ed25519", "-N", "passphrase"], true),
            ("enc_ecdsa", vec!["-t", "ecdsa", "-N", "passphrase"], true),
            (
                "plain_pem",
                vec!["-t", "rsa", "-b", "1024", "-m", "PEM", "-N", ""],
                false,
            ),
            (
                "enc_pem",
                vec!["-t", "rsa", "-b", "1024", "-m", "PEM", "-N", "passphrase"],
                true,
            ),
        ];
        for (name, args, want) in cases {
            let Some(text) = keygen(dir.path(), name, &args) else {
                eprintln!("ssh-keygen unavailable; skipping {name}");
                continue;
            };
            assert_eq!(key_is_encrypted(&text), want, "{name}");
        }
        assert!(!key_is_encrypted("not a key"));
    }
}
