//! Deciding on the key a host presented, by its `StrictHostKeyChecking`: trusted keys pass; an
//! unknown key is asked about, added (`accept-new`, `--accept-new-host-keys`) or refused
//! (`yes`); a changed, revoked or CA-vouched key is refused. `StrictHostKeyChecking no`, only
//! honoured with `--allow-strict-host-key-checking-no`, does what OpenSSH does: new keys are
//! added, and a changed key is let through with a warning and password logins turned off.

use ssh2::Session;

use crate::remote::LinkOptions;
use crate::remote::credentials::{HostKeyPrompt, PromptContext, Prompter};
use crate::remote::error::RemoteError;
use crate::remote::host::RemoteHost;
use crate::remote::known_hosts::{KnownHostsFile, Verdict, append};
use crate::remote::ssh_options::StrictHostKeys;
use crate::words::Words;

/// Who is being checked, and who can be asked.
pub(crate) struct KeyCheck<'a> {
    pub host: &'a RemoteHost,
    pub opts: &'a LinkOptions,
    pub ctx: &'a PromptContext,
    pub prompter: Option<&'a dyn Prompter>,
    /// The name keys are filed under.
    pub known_as: &'a str,
}

/// What the check decided besides letting the connection go on.
#[derive(Debug, Default)]
pub(crate) struct Checked {
    /// A key added to known_hosts.
    pub accepted_key: Option<HostKeyPrompt>,
    pub warnings: Vec<Words>,
    /// The key changed and `StrictHostKeyChecking no` let it through: no password may be
    /// sent to what may be an impostor.
    pub passwords_off: bool,
}

/// Checks the key presented on `session` against `known_hosts`.
pub(crate) fn check_host_key(
    check: &KeyCheck<'_>,
    session: &Session,
    known_hosts: &KnownHostsFile,
) -> Result<Checked, RemoteError> {
    let strict = check.host.host_keys.strict;
    let verdict = match known_hosts.verify(session, check.known_as) {
        Err(RemoteError::HostKeyChanged {
            known_as,
            key_type,
            presented,
            expected,
            remedy,
        }) if strict == StrictHostKeys::No => {
            return Ok(Checked {
                warnings: vec![key_changed_let_through(
                    &known_as, &key_type, &presented, &expected, &remedy,
                )],
                passwords_off: true,
                ..Checked::default()
            });
        }
        other => other?,
    };
    let in_effect = || strict_no_in_effect(check.known_as);
    let (prompt, blob) = match verdict {
        Verdict::Trusted if strict == StrictHostKeys::No => {
            return Ok(Checked {
                warnings: vec![in_effect()],
                ..Checked::default()
            });
        }
        Verdict::Trusted => return Ok(Checked::default()),
        Verdict::Unknown { prompt, blob } => (prompt, blob),
    };
    // `StrictHostKeyChecking yes` in the host's ssh config outranks the global flag and the
    // console: nothing is added for that host.
    let accept_new = match strict {
        StrictHostKeys::Yes => false,
        StrictHostKeys::AcceptNew | StrictHostKeys::No => true,
        StrictHostKeys::Ask => check.opts.accept_new_host_keys,
    };
    let asker = check.prompter.filter(|_| strict != StrictHostKeys::Yes);
    let headless_ok =
        accept_new && (prompt.other_types_known.is_empty() || strict == StrictHostKeys::No);
    let accepted = headless_ok || asker.is_some_and(|p| p.confirm_host_key(check.ctx, &prompt));
    if accepted {
        append(
            known_hosts.path(),
            &prompt.known_as,
            &blob,
            check.host.settings.hash_known_hosts,
        )?;
        let warnings = if strict == StrictHostKeys::No {
            vec![prompt.added_words(true)]
        } else {
            Vec::new()
        };
        return Ok(Checked {
            accepted_key: Some(prompt),
            warnings,
            passwords_off: false,
        });
    }
    if check.ctx.cancelled() {
        return Err(RemoteError::Stopped);
    }
    if asker.is_some() {
        return Err(RemoteError::HostKeyDeclined {
            known_as: prompt.known_as,
            key_type: prompt.key_type,
            fingerprint: prompt.fingerprint,
        });
    }
    let hint = if strict == StrictHostKeys::Yes {
        Words::new("link_error.hint_strict_yes")
            .put("path", known_hosts.path().display().to_string())
    } else if prompt.other_types_known.is_empty() {
        Words::new("link_error.hint_accept")
    } else {
        Words::new("link_error.hint_other_types").put("types", prompt.other_types_known.join(", "))
    };
    Err(RemoteError::HostKeyUnknown {
        known_as: prompt.known_as,
        key_type: prompt.key_type,
        fingerprint: prompt.fingerprint,
        hint: Box::new(hint),
    })
}

/// `StrictHostKeyChecking no` is honoured for `known_as`.
fn strict_no_in_effect(known_as: &str) -> Words {
    Words::new("link_notice.strict_no_in_effect").put("known_as", known_as)
}

/// A changed key let through under `StrictHostKeyChecking no`: what changed, then why the
/// link connects anyway, and `remedy`, how to clear the old key.
fn key_changed_let_through(
    known_as: &str,
    key_type: &str,
    presented: &str,
    expected: &Words,
    remedy: &Words,
) -> Words {
    Words::new("link_notice.key_changed_let_through")
        .put("known_as", known_as)
        .put("key_type", key_type)
        .put("presented", presented)
        .put_words("expected", expected.clone())
        .put_words("remedy", remedy.clone())
}
