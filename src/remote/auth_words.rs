//! The login attempts an authentication failure names, in catalogue words: `key ~/.ssh/id_rsa
//! was not accepted by the server`, `the password typed was rejected`. Paths, variable names and
//! what libssh2 said are values, as they came. The error's English (the log) is their English.

use crate::words::Words;

/// The attempts, joined by `; ` (said in the notice's language): one text of ours, nested.
pub(crate) fn joined(tried: &[Words]) -> Words {
    crate::words::joined(tried, "list_words.semicolon")
        .unwrap_or_else(|| Words::new("auth_words.nothing"))
}

/// The login method an attempt tried (`agent`, `key`, `password`), by its words' key; `None`
/// for one that tried nothing (`nothing to try`, a password variable not set).
pub(crate) fn method(attempt: &Words) -> Option<&'static str> {
    let name = attempt.key()?.strip_prefix("auth_words.")?;
    if name.starts_with("agent") {
        Some("link_summary.method_agent")
    } else if name.starts_with("key_") {
        Some("link_summary.method_key")
    } else if name.starts_with("password") {
        Some("link_summary.method_password")
    } else {
        None
    }
}

/// `ssh-agent: …` as libssh2 said it.
pub(crate) fn agent_error(message: &str) -> Words {
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
pub(crate) fn key(what: &'static str, key: &str) -> Words {
    Words::new(what).put("key", key)
}

/// `key … : cannot read it (…)`, `key …: cannot be read (…)`: what the OS or libssh2 said.
pub(crate) fn key_error(what: &'static str, key: &str, error: &str) -> Words {
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

    #[test]
    fn the_attempts_read_in_chinese_with_paths_as_they_came_and_the_english_unchanged() {
        let tried = vec![
            agent_none(2, true),
            key("auth_words.key_rejected", "/k/id_rsa"),
            password_env("auth_words.password_env_rejected", "PW"),
            password_typed(3),
        ];
        assert_eq!(
            joined(&tried).english(),
            "ssh-agent: none of its 2 key(s) was accepted (IdentitiesOnly: only the identity \
             files' keys); key /k/id_rsa was not accepted by the server; the password in $PW \
             was rejected; the password typed was rejected (3 tries)"
        );
        let zh = joined(&tried).render("zh-CN");
        assert!(zh.contains("/k/id_rsa") && zh.contains("$PW"), "{zh}");
        assert!(
            !zh.contains("was not accepted") && !zh.contains("rejected"),
            "{zh}"
        );
        let methods: Vec<_> = tried.iter().filter_map(method).collect();
        assert_eq!(
            methods,
            [
                "link_summary.method_agent",
                "link_summary.method_key",
                "link_summary.method_password",
                "link_summary.method_password"
            ]
        );
        assert_eq!(method(&Words::new("auth_words.nothing")), None);
        assert_eq!(
            method(&password_env("auth_words.env_unset", "PW")),
            None,
            "a variable not set tried no password"
        );
    }
}
