//! `ProxyCommand` and `ProxyJump` from the ssh config, as OpenSSH reads them: whichever
//! comes first wins (`none` included), and a `ProxyCommand` runs as written.
//!
//! `ProxyJump a,b` reaches the host through `b`, which is reached through `a`: each jump host
//! is resolved through the same config (its own `HostName`, `User`, `Port`, keys and host-key
//! settings); the first one's own `ProxyJump`/`ProxyCommand` applies to it, the later ones are
//! reached through the hop before them whatever their config says (as `ssh -J` does). `none`
//! for either option means a direct connection. A `ProxyCommand` takes the tokens `%%`, `%h`,
//! `%n`, `%p` and `%r` and runs with the user's shell.

use crate::config::parse_ssh_target;
use crate::remote::error::RemoteError;
use crate::remote::host::{JumpHost, Proxy, ProxyCommand, RemoteHost};
use crate::remote::ssh_config_file::{HostOptions, expand_tokens};
use crate::remote::ssh_options::{Source, Tokens, is_none};
use crate::words::Words;

/// The most jump hosts one connection goes through; more is taken for a loop in the config.
pub(crate) const MAX_HOPS: usize = 8;

/// Resolves the jump hosts of a `ProxyJump` through the same config as the host (`target.rs`).
pub(crate) trait HopResolver {
    /// The jump host `spec` (`[user@]host[:port]`, as written), reached through `through`
    /// whatever its config says when it is not the first hop; `depth` counts the hops so far.
    fn resolve_hop(
        &self,
        spec: &str,
        through: Option<Proxy>,
        depth: usize,
    ) -> Result<RemoteHost, RemoteError>;
}

/// How the host of `params` is reached.
pub(crate) fn proxy_of(
    resolver: &dyn HopResolver,
    params: &HostOptions,
    source: &Source<'_>,
    tokens: &Tokens<'_>,
    depth: usize,
) -> Result<Proxy, RemoteError> {
    // Whichever of the two comes first wins, `none` included, as in OpenSSH.
    let jump = params.setting("proxyjump");
    let command = params.setting("proxycommand");
    let jump_first = match (jump, command) {
        (Some(j), Some(c)) => j.order < c.order,
        (Some(_), None) => true,
        _ => false,
    };
    if jump_first {
        let args = jump.map(|j| j.args.as_slice()).unwrap_or_default();
        if is_none(args) {
            return Ok(Proxy::Direct);
        }
        let jumps: Vec<String> = args
            .iter()
            .flat_map(|a| a.split(','))
            .filter(|a| !a.is_empty())
            .map(String::from)
            .collect();
        return jump_chain(resolver, &jumps, source, tokens, depth);
    }
    if let Some(command) = command.filter(|c| !is_none(&c.args)) {
        let text =
            expand(&command.rest, tokens).map_err(|why| source.refuse("ProxyCommand", why))?;
        return Ok(Proxy::Command(ProxyCommand(text)));
    }
    Ok(Proxy::Direct)
}

/// `a,b,c`: `c` reached through `b`, reached through `a`.
fn jump_chain(
    resolver: &dyn HopResolver,
    jumps: &[String],
    source: &Source<'_>,
    tokens: &Tokens<'_>,
    depth: usize,
) -> Result<Proxy, RemoteError> {
    if let Some(last) = jumps.last() {
        refuse_self_jump(last, source, tokens)?;
    }
    if depth + jumps.len() > MAX_HOPS {
        return Err(source.refuse(
            "ProxyJump",
            Words::new("option_words.jump_hops").put("hops", MAX_HOPS.to_string()),
        ));
    }
    let mut through: Option<Proxy> = None;
    for (i, spec) in jumps.iter().enumerate() {
        let spec = spec.trim();
        let target = spec.strip_prefix("ssh://").unwrap_or(spec);
        if target.is_empty() || target.contains('/') {
            return Err(source.refuse(
                "ProxyJump",
                Words::new("option_words.not_jump_host").put("spec", format!("{spec:?}")),
            ));
        }
        let host = resolver
            .resolve_hop(target, through.take(), depth + i + 1)
            .map_err(|e| match e {
                // A loop says so once, not once per turn.
                RemoteError::JumpHost { ref host, .. } if host == spec => e,
                other => RemoteError::JumpHost {
                    host: spec.to_string(),
                    source: Box::new(other),
                },
            })?;
        through = Some(Proxy::Jump(Box::new(JumpHost {
            spec: spec.to_string(),
            host,
        })));
    }
    Ok(through.unwrap_or_default())
}

/// OpenSSH's "jumphost loop": the host's last jump host is the host itself (same name, port
/// and user, a jump host's port and user defaulting to 22 and the host's user).
fn refuse_self_jump(
    spec: &str,
    source: &Source<'_>,
    tokens: &Tokens<'_>,
) -> Result<(), RemoteError> {
    let text = spec.trim();
    let Ok(jump) = parse_ssh_target(text.strip_prefix("ssh://").unwrap_or(text)) else {
        return Ok(());
    };
    let same = jump.host.eq_ignore_ascii_case(tokens.original)
        && jump.port.unwrap_or(22) == tokens.port
        && jump.user.as_deref().unwrap_or(tokens.user) == tokens.user;
    if same {
        return Err(source.refuse(
            "ProxyJump",
            Words::new("option_words.jump_self")
                .put("text", text)
                .put("host", jump.host.as_str()),
        ));
    }
    Ok(())
}

/// The `%` tokens OpenSSH expands in a `ProxyCommand`.
fn expand(command: &str, tokens: &Tokens<'_>) -> Result<String, Words> {
    expand_tokens(command, |token| match token {
        'h' => Some(tokens.host.to_string()),
        'n' => Some(tokens.original.to_string()),
        'p' => Some(tokens.port.to_string()),
        'r' => Some(tokens.user.to_string()),
        _ => None,
    })
    .map_err(|token| Words::new("option_words.proxy_token").put("token", format!("%{token}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proxy_command_tokens_expand_and_unknown_ones_are_named() {
        let tokens = Tokens {
            original: "my-h200",
            host: "10.0.0.7",
            port: 2222,
            user: "ubuntu",
            local_user: "me",
            home: None,
        };
        assert_eq!(
            expand("ssh -W %h:%p -l %r bastion # %n 100%%", &tokens).expect("expands"),
            "ssh -W 10.0.0.7:2222 -l ubuntu bastion # my-h200 100%"
        );
        let err = expand("nc %h %k", &tokens).expect_err("refused");
        assert!(err.english().contains("%k"), "{err}");
        assert!(expand("nc %", &tokens).is_err());
    }
}
