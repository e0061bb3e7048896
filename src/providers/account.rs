//! Syncing one account: its token loaded (as release loads one), its provider asked through a
//! paced [`Fetcher`] or its command run, and a failure named by provider and account. Every
//! account of the config is synced at once, each on its own thread.

use std::thread;

use crate::config::{ProviderAccount, ProviderKind};
use reqwest::blocking::Client;

use crate::release::{
    AuthScheme, SecretSource, SendError, SendOptions, TokenError, http_client, load_secret,
};

use super::Listing;
use super::command::{self, CommandError};
use super::fetch::{FetchError, Fetcher, Pace};
use super::{autodl, lambda, runpod, vast};

/// Why one account could not be synced.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SyncFailure {
    #[error("{0}")]
    Token(String),
    #[error("{0}")]
    Fetch(#[from] FetchError),
    #[error("{0}")]
    Command(#[from] CommandError),
}

/// A failed sync, naming the provider and the account (never the token).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", rust_i18n::t!("provider_sync.account_failed", provider = .provider, account = format!("{:?}", .account), failure = .failure))]
pub struct SyncError {
    pub provider: &'static str,
    pub account: String,
    pub failure: SyncFailure,
}

/// The provider's address for an account: its `base_url`, else the provider's own.
pub fn base_url(account: &ProviderAccount) -> Option<&str> {
    account.base_url.as_deref().or(match account.kind {
        ProviderKind::Vast => Some(vast::BASE_URL),
        ProviderKind::RunPod => Some(runpod::BASE_URL),
        ProviderKind::Lambda => Some(lambda::BASE_URL),
        ProviderKind::AutoDl => Some(autodl::BASE_URL),
        ProviderKind::Command => None,
    })
}

/// How fast a provider may be asked.
pub fn pace(kind: ProviderKind) -> Pace {
    match kind {
        ProviderKind::Vast => vast::PACE,
        ProviderKind::RunPod => runpod::PACE,
        ProviderKind::Lambda => lambda::PACE,
        ProviderKind::AutoDl | ProviderKind::Command => autodl::PACE,
    }
}

/// Lists one account's instances. `env` looks up environment variables (the process
/// environment in the binary).
pub fn sync_account(
    account: &ProviderAccount,
    env: &dyn Fn(&str) -> Option<String>,
    options: &SendOptions,
) -> Result<Listing, SyncError> {
    list_with(account, env, options, &http_client(options))
}

/// [`sync_account`] with a client made once for every account: building one loads the
/// system's CA certificates, which cost more CPU than parsing 500 instances.
fn list_with(
    account: &ProviderAccount,
    env: &dyn Fn(&str) -> Option<String>,
    options: &SendOptions,
    client: &Result<Client, SendError>,
) -> Result<Listing, SyncError> {
    let fail = |failure: SyncFailure| SyncError {
        provider: account.kind.as_str(),
        account: account.display_name().to_string(),
        failure,
    };
    if account.kind == ProviderKind::Command {
        let argv = account.command.as_deref().unwrap_or_default();
        return command::list(argv).map_err(|e| fail(e.into()));
    }
    let source = SecretSource {
        what: "token",
        env: account.token_env.as_deref(),
        file: account.token_file.as_deref(),
        env_key: "token_env",
        file_key: "token_file",
        table: "[[providers]]",
    };
    let loaded = load_secret(&source, env)
        .map_err(|e: TokenError| fail(SyncFailure::Token(e.to_string())))?;
    let client = client
        .as_ref()
        .map_err(|e| fail(FetchError::Send(e.clone()).into()))?;
    let auth = match account.kind {
        ProviderKind::AutoDl => AuthScheme::Bare,
        _ => AuthScheme::Bearer,
    };
    let base = base_url(account).unwrap_or_default();
    let mut fetcher = Fetcher::new(
        client,
        &loaded.secret,
        auth,
        pace(account.kind),
        base,
        options.total_timeout_ms,
    )
    .map_err(|e| fail(e.into()))?;
    let listed = match account.kind {
        ProviderKind::Vast => vast::list(&mut fetcher),
        ProviderKind::RunPod => runpod::list(&mut fetcher),
        ProviderKind::Lambda => lambda::list(&mut fetcher),
        ProviderKind::AutoDl => autodl::list(&mut fetcher),
        // Handled above: a command is not a web API.
        ProviderKind::Command => Err(FetchError::Shape {
            what: rust_i18n::t!("provider_sync.command_has_no_api").into_owned(),
        }),
    };
    let mut listing = listed.map_err(|e| fail(e.into()))?;
    if account.min_balance_hours.is_some() {
        let read = match account.kind {
            ProviderKind::Vast => Some(vast::balance(&mut fetcher)),
            ProviderKind::RunPod => Some(runpod::balance(&mut fetcher)),
            ProviderKind::AutoDl => Some(autodl::balance(&mut fetcher)),
            ProviderKind::Lambda | ProviderKind::Command => None,
        };
        match read {
            Some(Ok(balance)) => listing.balance = Some(balance),
            // The instances are good: a balance that could not be read is a note.
            Some(Err(e)) => listing
                .notes
                .push(rust_i18n::t!("balance.not_read", error = e).into_owned()),
            None => {}
        }
    }
    listing.requests = fetcher.sent;
    listing.notes.extend(loaded.warnings);
    Ok(listing)
}

/// Syncs every account at once (one thread each, so one slow provider does not hold up the
/// others); the answers come back in the config's order.
pub fn sync_all(
    accounts: &[ProviderAccount],
    env: &(dyn Fn(&str) -> Option<String> + Sync),
    options: &SendOptions,
) -> Vec<Result<Listing, SyncError>> {
    let client = http_client(options);
    let client = &client;
    thread::scope(|scope| {
        let handles: Vec<_> = accounts
            .iter()
            .map(|account| scope.spawn(move || list_with(account, env, options, client)))
            .collect();
        handles
            .into_iter()
            .zip(accounts)
            .map(|(handle, account)| {
                handle.join().unwrap_or_else(|_| {
                    Err(SyncError {
                        provider: account.kind.as_str(),
                        account: account.display_name().to_string(),
                        failure: SyncFailure::Token(
                            rust_i18n::t!("provider_sync.thread_panicked").into_owned(),
                        ),
                    })
                })
            })
            .collect()
    })
}
