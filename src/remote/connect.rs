//! Opening an authenticated session: TCP (no Nagle delay), a proxy command (`proxy.rs`) or a
//! jump host's channel (`bridge.rs`), a capped number of concurrent handshakes, host-key verification against known_hosts, then authentication.
//!
//! A direct host's TCP connection and its wait for a handshake slot can be done first, on the
//! links' runtime without a thread ([`open_direct`]): a fleet connecting at once then has a
//! thread only for each handshake under way, not one for each host waiting its turn.

use std::os::fd::OwnedFd;
use std::path::PathBuf;
use std::sync::{Condvar, Mutex, PoisonError};
use std::time::Duration;

use ssh2::{ErrorCode, MethodType, Session};

use crate::remote::LinkOptions;
use crate::remote::auth::{AuthInput, authenticate};
use crate::remote::bridge::bridge;
use crate::remote::credentials::{CredentialCache, HostKeyPrompt, PromptContext, Prompter, Secret};
use crate::remote::error::RemoteError;
use crate::remote::host::{Proxy, RemoteHost};
use crate::remote::host_key_check::{KeyCheck, check_host_key};
use crate::remote::known_hosts::{KnownHostsFile, known_as};
use crate::remote::proxy::{open_command, open_tcp, open_tcp_async};
use crate::remote::ssh_options::StrictHostKeys;
use crate::remote::target::home_dir;
use crate::remote::transport::{Connection, Keeper, Transport};
use crate::words::Words;

/// sshd's default `MaxStartups 10:30:100` starts dropping a client's connections beyond ~10
/// unauthenticated at once; staying under that keeps a large fleet from tripping it.
pub const MAX_CONCURRENT_HANDSHAKES: usize = 8;
/// Handshake failures that a crowded sshd produces (no banner, connection dropped) are retried.
const HANDSHAKE_TRIES: u32 = 3;
const RETRYABLE_HANDSHAKE: [i32; 5] = [-2, -3, -7, -13, -43];

struct Gate {
    in_use: Mutex<usize>,
    /// Wakes one thread waiting in [`Gate::acquire`] when a slot is given back.
    freed: Condvar,
    /// Wakes the tasks waiting in [`Gate::acquire_async`] when a slot is given back.
    freed_async: tokio::sync::Notify,
}

static HANDSHAKES: Gate = Gate {
    in_use: Mutex::new(0),
    freed: Condvar::new(),
    freed_async: tokio::sync::Notify::const_new(),
};

/// A slot among the concurrent handshakes; given back on drop.
pub(crate) struct Permit;

impl Gate {
    /// A slot if one is free now.
    fn try_acquire(&'static self) -> Option<Permit> {
        let mut in_use = self.in_use.lock().unwrap_or_else(PoisonError::into_inner);
        (*in_use < MAX_CONCURRENT_HANDSHAKES).then(|| {
            *in_use += 1;
            Permit
        })
    }

    /// A slot, waited for without holding a thread.
    async fn acquire_async(&'static self) -> Permit {
        loop {
            // Listening before looking, so a slot given back in between is not missed.
            let freed = self.freed_async.notified();
            let mut freed = std::pin::pin!(freed);
            freed.as_mut().enable();
            if let Some(permit) = self.try_acquire() {
                return permit;
            }
            freed.await;
        }
    }

    fn acquire(&'static self, ctx: &PromptContext) -> Result<Permit, RemoteError> {
        let mut in_use = self.in_use.lock().unwrap_or_else(PoisonError::into_inner);
        while *in_use >= MAX_CONCURRENT_HANDSHAKES {
            if ctx.cancelled() {
                return Err(RemoteError::Stopped);
            }
            in_use = self
                .freed
                .wait_timeout(in_use, Duration::from_millis(100))
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
        *in_use += 1;
        Ok(Permit)
    }
}

impl Drop for Permit {
    fn drop(&mut self) {
        let mut in_use = HANDSHAKES
            .in_use
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        *in_use = in_use.saturating_sub(1);
        HANDSHAKES.freed.notify_one();
        // Every waiting task looks again; all but one find the slot taken and wait on.
        HANDSHAKES.freed_async.notify_waiters();
    }
}

/// A direct host's TCP connection and its handshake slot, both taken before the connection
/// attempt's thread starts.
pub(crate) struct Opening {
    transport: Transport,
    permit: Permit,
}

/// For a host reached directly: connects TCP and then waits for a handshake slot, both without
/// a thread of their own. `Ok(None)` for a host behind a proxy command or a jump host, and for
/// one whose settings `connect` refuses before connecting: `connect` does all of it there.
pub(crate) async fn open_direct(
    host: &RemoteHost,
    opts: &LinkOptions,
) -> Result<Option<Opening>, RemoteError> {
    let refused =
        host.host_keys.strict == StrictHostKeys::No && !opts.allow_strict_host_key_checking_no;
    if !matches!(host.proxy, Proxy::Direct) || refused || known_hosts_paths(host, opts).is_err() {
        return Ok(None);
    }
    let transport = open_tcp_async(
        &host.target.host,
        host.target.port,
        connect_timeout(host, opts),
    )
    .await?;
    let permit = HANDSHAKES.acquire_async().await;
    Ok(Some(Opening { transport, permit }))
}

/// The TCP connect timeout for `host`: its `ConnectTimeout`, else the links' default.
fn connect_timeout(host: &RemoteHost, opts: &LinkOptions) -> Duration {
    Duration::from_millis(
        host.settings
            .connect_timeout_ms
            .unwrap_or(opts.connect_timeout_ms),
    )
}

/// A prompter that first gives back the handshake slot: a user taking a minute to answer
/// must not hold up every other host's connection.
struct ReleasingPrompter<'a> {
    inner: &'a dyn Prompter,
    permit: Mutex<Option<Permit>>,
}

impl ReleasingPrompter<'_> {
    fn release(&self) {
        self.permit
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
    }
}

impl Prompter for ReleasingPrompter<'_> {
    fn confirm_host_key(&self, ctx: &PromptContext, key: &HostKeyPrompt) -> bool {
        self.release();
        self.inner.confirm_host_key(ctx, key)
    }

    fn passphrase(&self, ctx: &PromptContext, key_file: &std::path::Path) -> Option<Secret> {
        self.release();
        self.inner.passphrase(ctx, key_file)
    }

    fn password(&self, ctx: &PromptContext) -> Option<Secret> {
        self.release();
        self.inner.password(ctx)
    }
}

/// OpenSSH's `GlobalKnownHostsFile` when the config names none.
const GLOBAL_KNOWN_HOSTS: [&str; 2] = ["/etc/ssh/ssh_known_hosts", "/etc/ssh/ssh_known_hosts2"];

/// The known_hosts files a link checks, new keys going to the first: `--known-hosts` (which
/// wins, as `ssh -o` would), else the ssh config's `UserKnownHostsFile`, else
/// `~/.ssh/known_hosts` and `~/.ssh/known_hosts2`; then the `GlobalKnownHostsFile`s (default
/// `/etc/ssh/ssh_known_hosts` and `ssh_known_hosts2`), read but never written.
pub(crate) fn known_hosts_paths(
    host: &RemoteHost,
    opts: &LinkOptions,
) -> Result<Vec<PathBuf>, RemoteError> {
    let mut paths = if let Some(path) = &opts.known_hosts {
        vec![path.clone()]
    } else if !host.host_keys.known_hosts_files.is_empty() {
        host.host_keys.known_hosts_files.clone()
    } else {
        match home_dir() {
            Some(home) => vec![
                home.join(".ssh").join("known_hosts"),
                home.join(".ssh").join("known_hosts2"),
            ],
            None => {
                return Err(RemoteError::KnownHosts {
                    path: PathBuf::from("~/.ssh/known_hosts"),
                    message: Box::new(Words::new("remote_words.no_home")),
                });
            }
        }
    };
    match &host.host_keys.global_known_hosts_files {
        Some(files) => paths.extend(files.iter().cloned()),
        None => paths.extend(GLOBAL_KNOWN_HOSTS.iter().map(PathBuf::from)),
    }
    Ok(paths)
}

/// What `connect` achieved besides the session: a host key it added to known_hosts, and
/// what the user must be warned about.
pub(crate) struct Connected {
    pub connection: Connection,
    pub accepted_key: Option<HostKeyPrompt>,
    pub warnings: Vec<crate::words::Words>,
}

/// Connects (directly or through the host's proxy), verifies the host key and logs in;
/// blocking, on the link's own thread. `opened` is the first attempt's transport and slot
/// where [`open_direct`] took them already.
pub(crate) fn connect(
    host: &RemoteHost,
    opts: &LinkOptions,
    ctx: &PromptContext,
    cache: &mut CredentialCache,
    mut opened: Option<Opening>,
) -> Result<Connected, RemoteError> {
    let target = &host.target;
    if host.host_keys.strict == StrictHostKeys::No && !opts.allow_strict_host_key_checking_no {
        return Err(RemoteError::StrictNoRefused {
            target: target.to_string(),
        });
    }
    let known_hosts_paths = known_hosts_paths(host, opts)?;
    let known_as = match &host.host_keys.alias {
        Some(alias) => alias.clone(),
        None => known_as(&target.host, target.port),
    };
    let mut attempt = 1;
    let (session, socket, keeper, known_hosts, permit) = loop {
        if ctx.cancelled() {
            return Err(RemoteError::Stopped);
        }
        // A jump host is connected (taking and giving back a slot of its own) before this
        // host's slot is taken, so links waiting for slots never wait on each other.
        let (transport, permit) = match opened.take() {
            Some(Opening { transport, permit }) => (transport, permit),
            None => {
                let transport = open_transport(host, opts, ctx)?;
                (transport, HANDSHAKES.acquire(ctx)?)
            }
        };
        match handshake(transport, &known_as, target.port, opts, &known_hosts_paths) {
            Ok((session, socket, keeper, known_hosts)) => {
                break (session, socket, keeper, known_hosts, permit);
            }
            Err(HandshakeFailure {
                retryable: true, ..
            }) if attempt < HANDSHAKE_TRIES => {
                drop(permit);
                std::thread::sleep(Duration::from_millis(250 * u64::from(attempt)));
                attempt += 1;
            }
            Err(failure) => return Err(*failure.error),
        }
    };
    // The slot is held until logged in (sshd counts a connection as a startup until then),
    // unless a question for the user comes first.
    let mut permit = Some(permit);
    // `BatchMode yes`: nothing is asked for this host.
    let asks = opts
        .prompter
        .as_deref()
        .filter(|_| !host.settings.batch_mode);
    let prompter = asks.map(|inner| ReleasingPrompter {
        inner,
        permit: Mutex::new(permit.take()),
    });
    let prompter_ref: Option<&dyn Prompter> = prompter.as_ref().map(|p| p as &dyn Prompter);

    let checked = check_host_key(
        &KeyCheck {
            host,
            opts,
            ctx,
            prompter: prompter_ref,
            known_as: &known_as,
        },
        &session,
        &known_hosts,
    )?;
    let input = AuthInput {
        user: &target.user,
        identity_files: &host.identity_files,
        password_env: host.password_env.as_deref(),
        use_agent: opts.use_agent,
        settings: &host.settings,
        passwords: !checked.passwords_off,
        prompter: prompter_ref,
        ctx,
    };
    authenticate(&session, &input, cache)?;
    drop(permit);
    Ok(Connected {
        connection: Connection {
            session,
            socket,
            keeper,
        },
        accepted_key: checked.accepted_key,
        warnings: checked.warnings,
    })
}

/// A failed handshake and whether trying again may help.
struct HandshakeFailure {
    error: Box<RemoteError>,
    retryable: bool,
}

fn fatal(error: RemoteError) -> HandshakeFailure {
    HandshakeFailure {
        error: Box::new(error),
        retryable: false,
    }
}

type HandshakeResult = Result<(Session, OwnedFd, Keeper, KnownHostsFile), HandshakeFailure>;

/// The byte stream to `host`: TCP, its proxy command, or a channel of its jump host's
/// session (connected here, with its own host-key check and login).
fn open_transport(
    host: &RemoteHost,
    opts: &LinkOptions,
    ctx: &PromptContext,
) -> Result<Transport, RemoteError> {
    let target = &host.target;
    match &host.proxy {
        Proxy::Direct => open_tcp(&target.host, target.port, connect_timeout(host, opts)),
        Proxy::Command(command) => open_command(command, &target.to_string()),
        Proxy::Jump(jump) => {
            let named = |source: RemoteError| RemoteError::JumpHost {
                host: jump.spec.clone(),
                source: Box::new(source),
            };
            // A jump host's password is its own: it is never offered to the next host.
            let mut hop_cache = CredentialCache::default();
            let hop_ctx = ctx.for_hop(jump.host.target.to_string());
            let hop =
                connect(&jump.host, opts, &hop_ctx, &mut hop_cache, None).map_err(|e| match e {
                    RemoteError::Stopped => e,
                    other => named(other),
                })?;
            let (stream, bridge) = bridge(
                hop.connection,
                &target.host,
                target.port,
                opts.keepalive_interval_s,
            )
            .map_err(named)?;
            Ok(Transport {
                stream,
                peer: Words::new("remote_words.through_jump_host")
                    .put("target", target.to_string())
                    .put("jump", jump.spec.as_str()),
                keeper: Keeper::Bridge { _running: bridge },
            })
        }
    }
}

/// The SSH handshake over `transport`, offering the host-key types on file for the host.
fn handshake(
    transport: Transport,
    known_as: &str,
    port: u16,
    opts: &LinkOptions,
    known_hosts_paths: &[PathBuf],
) -> HandshakeResult {
    let Transport {
        stream,
        peer,
        mut keeper,
    } = transport;
    let socket = stream.try_clone().map_err(|source| {
        fatal(RemoteError::ssh_said(
            Words::new("remote_words.socket_copy").put_words("peer", peer.clone()),
            source,
        ))
    })?;
    let mut session =
        Session::new().map_err(|e| fatal(RemoteError::ssh("ssh_context.libssh2", &e)))?;
    super::session_pages::release_cleared_pages(&session);
    session.set_timeout(u32::try_from(opts.handshake_timeout_ms).unwrap_or(u32::MAX));
    let known_hosts = KnownHostsFile::load(known_hosts_paths).map_err(fatal)?;
    if let Some(prefs) = known_hosts.algorithm_prefs(&session, known_as) {
        session
            .method_pref(MethodType::HostKey, &prefs)
            .map_err(|e| fatal(RemoteError::ssh("ssh_context.host_key_algorithms", &e)))?;
    }
    session.set_tcp_stream(stream);
    match session.handshake() {
        Ok(()) => Ok((session, socket, keeper, known_hosts)),
        Err(e) => {
            // libssh2 reads lines until one starts `SSH-`, keeping the last: a line kept that
            // does not is what another kind of server said. Trying again changes nothing.
            if let Some(said) = session.banner_bytes().and_then(not_ssh_line) {
                return Err(fatal(RemoteError::NotSsh {
                    addr: Box::new(peer),
                    port,
                    said,
                }));
            }
            let retryable =
                matches!(e.code(), ErrorCode::Session(c) if RETRYABLE_HANDSHAKE.contains(&c));
            let libssh2_said = Words::new("config_words.os").put("error", e.message());
            let message = match keeper.proxy_said() {
                Some(said) => Words::new("remote_words.proxy_said")
                    .put_words("message", libssh2_said)
                    .put("said", said),
                None => libssh2_said,
            };
            Err(HandshakeFailure {
                error: Box::new(RemoteError::Handshake {
                    addr: Box::new(peer),
                    message: Box::new(message),
                }),
                retryable,
            })
        }
    }
}

/// Characters of a non-SSH server's line kept in the message.
const SAID_CHARS: usize = 60;

/// `line`, cut short and made printable, when it is not an SSH version line (`SSH-2.0-...`).
fn not_ssh_line(line: &[u8]) -> Option<String> {
    if line.starts_with(b"SSH-") {
        return None;
    }
    let text = String::from_utf8_lossy(line);
    let mut said: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .take(SAID_CHARS)
        .collect();
    if text.chars().count() > SAID_CHARS {
        said.push('…');
    }
    let said = said.trim().to_string();
    (!said.is_empty()).then_some(said)
}
