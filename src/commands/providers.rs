//! `gpufleet providers sync [--json]`: every `[[providers]]` account synced at once, the
//! inventory stored in the state directory (locked, atomic, private), then shown as a table or
//! JSON. An account that fails keeps its last good inventory, shown with its age and the reason;
//! the exit code says so.

use std::io::Write;

use rust_i18n::t;
use serde_json::json;

use crate::cells;
use crate::config::Config;
use crate::providers::{
    AccountRecord, InstanceState, InventoryStore, SshRoute, Stored, StoredInstance, store, sync_all,
};
use crate::release::SendOptions;

/// `gpufleet providers ...`.
#[derive(Debug, clap::Subcommand)]
pub enum ProvidersAction {
    /// Sync every account now, store the inventory and print it.
    Sync {
        /// Print JSON (schema in docs/INVENTORY.md) instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// The running instances of the last synced inventory that are not hosts yet, as
    /// `[[hosts]]` tables (a diff); `--write` appends them to the config file, keeping its
    /// comments and layout (never a token).
    Import {
        /// Append the hosts shown to the config file.
        #[arg(long)]
        write: bool,
    },
}

/// Every account synced.
pub const EXIT_OK: u8 = 0;
/// At least one account failed; its last good inventory is shown, marked with its age.
pub const EXIT_ACCOUNT_FAILED: u8 = 1;
/// Nothing to sync, or the stored inventory cannot be read or written.
pub const EXIT_SETUP: u8 = 2;

/// What a sync needs from outside: environment variables (tokens), the clock, the store.
pub struct SyncEnv<'a> {
    pub env: &'a (dyn Fn(&str) -> Option<String> + Sync),
    pub now_ms: &'a dyn Fn() -> u64,
    pub store: &'a InventoryStore,
    pub options: SendOptions,
}

/// Syncs, stores and prints; returns the exit code.
pub fn sync(
    config: &Config,
    json: bool,
    setup: &SyncEnv<'_>,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> u8 {
    if config.providers.is_empty() {
        let _ = writeln!(err, "{}", t!("cli_providers.no_accounts"));
        return EXIT_SETUP;
    }
    let results = sync_all(&config.providers, setup.env, &setup.options);
    let now_ms = (setup.now_ms)();
    let mut failed = false;
    let stored = setup
        .store
        .update(|stored| store::record_results(stored, &config.providers, &results, now_ms));
    let stored = match stored {
        Ok(stored) => stored,
        Err(e) => {
            let _ = writeln!(err, "{}", t!("cli_providers.not_stored", why = e));
            return EXIT_SETUP;
        }
    };
    for result in &results {
        match result {
            Ok(listing) => {
                for note in &listing.notes {
                    let _ = writeln!(err, "{}", t!("cli_providers.note", note = note));
                }
                if listing.skipped > 0 {
                    let _ = writeln!(
                        err,
                        "{}",
                        crate::words::Words::counted(
                            "cli_providers.skipped",
                            listing.skipped as u64
                        )
                        .localized()
                    );
                }
            }
            Err(e) => {
                failed = true;
                let _ = writeln!(err, "{}", t!("cli_providers.sync_error", why = e));
            }
        }
    }
    let names: Vec<&str> = config.providers.iter().map(|a| a.display_name()).collect();
    if json {
        // One write, not one a line: formatting straight into a line-buffered stdout costs a
        // system call per line (14,500 for 500 instances, most of the sync's CPU time).
        let text = format!("{:#}\n", render_json(&stored, &names, now_ms));
        let _ = out.write_all(text.as_bytes());
    } else {
        let _ = write!(out, "{}", render_table(&stored, &names, now_ms));
        let money = crate::providers::unwatched::balance_text_of(config, &stored, now_ms);
        let _ = write!(out, "{money}");
    }
    if failed { EXIT_ACCOUNT_FAILED } else { EXIT_OK }
}

/// The stored accounts named, in that order, as JSON (docs/INVENTORY.md).
pub fn render_json(stored: &Stored, names: &[&str], now_ms: u64) -> serde_json::Value {
    let accounts: Vec<serde_json::Value> = names
        .iter()
        .filter_map(|name| stored.accounts.get(*name).map(|r| (name, r)))
        .map(|(name, record)| {
            json!({
                "account": name,
                "provider": record.provider,
                "ok": record.error.is_none(),
                "error": record.error,
                "synced_ms": record.synced_ms,
                "age_s": record.synced_ms.map(|at| now_ms.saturating_sub(at) / 1000),
                "instances": record.instances,
                "balance": record.balance,
            })
        })
        .collect();
    json!({"version": store::STORE_VERSION, "now_ms": now_ms, "accounts": accounts})
}

const WIDTHS: [usize; 9] = [8, 12, 16, 18, 8, 20, 46, 14, 17];

/// The table: one line per instance, then one line per account saying how fresh it is.
pub fn render_table(stored: &Stored, names: &[&str], now_ms: u64) -> String {
    let mut text = String::new();
    let titles = t!("cli_providers.header");
    let mut header: [String; 9] = Default::default();
    for (cell, title) in header.iter_mut().zip(titles.split('|')) {
        *cell = title.to_string();
    }
    push_row(&mut text, &header);
    for name in names {
        let Some(record) = stored.accounts.get(*name) else {
            continue;
        };
        for instance in &record.instances {
            push_row(&mut text, &row(record, name, instance));
        }
    }
    text.push('\n');
    for name in names {
        if let Some(record) = stored.accounts.get(*name) {
            text.push_str(&account_line(record, name, now_ms));
            text.push('\n');
        }
    }
    text
}

fn push_row(text: &mut String, cells: &[String; 9]) {
    let line: Vec<String> = cells
        .iter()
        .zip(WIDTHS)
        .map(|(cell, width)| cells::pad(&cells::fit(cell, width), width))
        .collect();
    text.push_str(line.join(" ").trim_end());
    text.push('\n');
}

fn row(record: &AccountRecord, name: &str, stored: &StoredInstance) -> [String; 9] {
    let i = &stored.instance;
    let state = match stored.gone_ms {
        Some(at) => {
            let at = short_time(at);
            t!("cli_providers.gone", at = at).into_owned()
        }
        None => match i.state {
            InstanceState::Other => i.status.to_lowercase(),
            state => state.as_str().to_string(),
        },
    };
    let gpus = match (i.gpu_count, &i.gpu_model) {
        (Some(n), Some(model)) => format!("{n}× {model}"),
        (None, Some(model)) => model.clone(),
        (Some(n), None) => format!("{n}× ?"),
        (None, None) => "-".to_string(),
    };
    let ssh = match &i.ssh {
        Some(ssh) if ssh.route == SshRoute::Proxy => {
            t!("cli_providers.proxy", target = ssh.target()).into_owned()
        }
        Some(ssh) => ssh.target(),
        None => "-".to_string(),
    };
    let price = match i.price_per_hour {
        Some(p) => format!("{p:.3} {}/h", i.currency.as_deref().unwrap_or("")),
        None => "-".to_string(),
    };
    let (started_ms, from_api) = stored.started_or_first_seen_ms();
    let started = if from_api {
        short_time(started_ms)
    } else {
        format!("~{}", short_time(started_ms))
    };
    [
        record.provider.clone(),
        name.to_string(),
        i.id.clone(),
        i.label.clone().unwrap_or_else(|| "-".to_string()),
        state,
        gpus,
        ssh,
        price,
        started,
    ]
}

fn account_line(record: &AccountRecord, name: &str, now_ms: u64) -> String {
    let count = record
        .instances
        .iter()
        .filter(|i| i.gone_ms.is_none())
        .count();
    let provider = record.provider.as_str();
    match (&record.error, record.synced_ms) {
        (None, _) => {
            return crate::words::Words::counted("cli_providers.account_synced", count as u64)
                .put("provider", provider)
                .put("name", name.to_string())
                .localized();
        }
        (Some(why), Some(at)) => {
            let age = age(now_ms.saturating_sub(at));
            t!(
                "cli_providers.account_failed",
                provider = provider,
                name = name,
                why = why,
                age = age
            )
        }
        (Some(why), None) => t!(
            "cli_providers.account_never",
            provider = provider,
            name = name,
            why = why
        ),
    }
    .into_owned()
}

/// `2026-12-02 04:12` (UTC).
fn short_time(ms: u64) -> String {
    let (y, mo, d, h, mi, _, _) = crate::utc::utc_parts(ms);
    format!("{y:04}-{mo:02}-{d:02} {h:02}:{mi:02}")
}

/// `45 s`, `12 min`, `3 h`, `2 d`.
fn age(ms: u64) -> String {
    let s = ms / 1000;
    match s {
        0..=119 => format!("{s} s"),
        120..=7_199 => format!("{} min", s / 60),
        7_200..=172_799 => format!("{} h", s / 3600),
        _ => format!("{} d", s / 86_400),
    }
}

/// `gpufleet providers ACTION` as the binary runs it: the process environment, the wall
/// clock, the state directory's store, stdout and stderr.
pub fn run(
    action: &ProvidersAction,
    config: &Config,
    config_path: Option<&std::path::Path>,
    demo: bool,
) -> u8 {
    let mut err = std::io::stderr();
    if demo {
        let _ = writeln!(err, "{}", t!("cli_providers.no_demo"));
        return crate::exit_codes::USAGE;
    }
    let store = match InventoryStore::open_default() {
        Ok(store) => store,
        Err(e) => {
            let _ = writeln!(err, "{}", t!("cli_providers.store_error", why = e));
            return EXIT_SETUP;
        }
    };
    let json = match action {
        ProvidersAction::Sync { json } => json,
        ProvidersAction::Import { write } => {
            let mut out = crate::commands::stdout::Stdout;
            return super::providers_import::run(
                config,
                config_path,
                &store,
                *write,
                &mut out,
                &mut err,
            );
        }
    };
    let env = |name: &str| std::env::var(name).ok();
    let setup = SyncEnv {
        env: &env,
        now_ms: &crate::telemetry::source::now_ms,
        store: &store,
        options: SendOptions::default(),
    };
    sync(
        config,
        *json,
        &setup,
        &mut crate::commands::stdout::Stdout,
        &mut err,
    )
}
