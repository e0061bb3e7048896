//! The provider inventory's part of `gpufleet cost`: the accounts synced first when their last
//! sync is older than their `sync_interval_s` (a failure leaves the cached inventory, said with
//! its age), then the money nobody watches (`providers::unwatched`) as red lines: stopped
//! instances whose storage still bills, running instances that are no host, recent price
//! changes. Only when the config has `[[providers]]`.

use std::io::Write;

use rust_i18n::t;
use serde_json::json;

use crate::config::Config;
use crate::providers::{InventoryStore, Stored, store, sync_all, unwatched};
use crate::release::SendOptions;

/// The cost report (`text`, exit `code`) with the inventory's section added; notes about the
/// sync go to `err`.
pub fn extend(
    config: &Config,
    text: String,
    code: u8,
    json: bool,
    now_ms: &dyn Fn() -> u64,
    err: &mut dyn Write,
) -> (String, u8) {
    if config.providers.is_empty() {
        return (text, code);
    }
    let stored = match InventoryStore::open_default() {
        Ok(store) => refreshed(config, &store, "cost", now_ms, err),
        Err(e) => {
            let _ = writeln!(
                err,
                "{}",
                t!("cli_cost.inventory_error", who = "cost", why = e)
            );
            return (text, code);
        }
    };
    let now = now_ms();
    let found = unwatched::in_fleet(config, &stored, now);
    let code = if found.is_empty() { code } else { code.max(1) };
    let accounts: Vec<serde_json::Value> = config
        .providers
        .iter()
        .filter_map(|a| stored.accounts.get(a.display_name()).map(|r| (a, r)))
        .map(|(a, r)| {
            json!({
                "account": a.display_name(),
                "provider": r.provider,
                "synced_ms": r.synced_ms,
                "age_s": r.synced_ms.map(|at| now.saturating_sub(at) / 1000),
                "error": r.error,
            })
        })
        .collect();
    if json {
        let Ok(mut value) = serde_json::from_str::<serde_json::Value>(&text) else {
            return (text, code);
        };
        value["inventory"] = json!({"accounts": accounts, "unwatched": found});
        let mut out = serde_json::to_string_pretty(&value).unwrap_or(text);
        out.push('\n');
        return (out, code);
    }
    let mut out = text;
    out.push('\n');
    out.push_str(&t!("cli_cost.accounts"));
    out.push('\n');
    for account in &accounts {
        let age = sync_age(account["age_s"].as_u64());
        let failed = account["error"]
            .as_str()
            .map(|e| t!("cli_cost.last_sync_failed", why = e).into_owned())
            .unwrap_or_default();
        out.push_str(&t!(
            "cli_cost.account_line",
            provider = account["provider"].as_str().unwrap_or_default(),
            account = account["account"].as_str().unwrap_or_default(),
            age = age,
            failed = failed
        ));
        out.push('\n');
    }
    let lines = unwatched::render_text(&found, now);
    if lines.is_empty() {
        out.push_str(&t!("cli_cost.nothing_unwatched"));
        out.push('\n');
    }
    for line in lines.lines() {
        out.push_str(&format!("  {line}\n"));
    }
    (out, code)
}

/// The stored inventory, after syncing the accounts whose last attempt is older than their
/// interval; on any failure, what is stored. Notes go to `err` as `gpufleet WHO: ...`, a
/// failed account's with the age of the inventory it leaves.
pub fn refreshed(
    config: &Config,
    inventory: &InventoryStore,
    who: &str,
    now_ms: &dyn Fn() -> u64,
    err: &mut dyn Write,
) -> Stored {
    let stored = match inventory.load() {
        Ok(stored) => stored,
        Err(e) => {
            let _ = writeln!(
                err,
                "{}",
                t!("cli_cost.inventory_error", who = who, why = e)
            );
            return Stored::default();
        }
    };
    let now = now_ms();
    let stale: Vec<_> = config
        .providers
        .iter()
        .filter(|a| {
            stored.accounts.get(a.display_name()).is_none_or(|r| {
                now.saturating_sub(r.attempted_ms) >= a.sync_interval_s.saturating_mul(1000)
            })
        })
        .cloned()
        .collect();
    if stale.is_empty() {
        return stored;
    }
    let env = |name: &str| std::env::var(name).ok();
    let results = sync_all(&stale, &env, &SendOptions::default());
    for (account, result) in stale.iter().zip(&results) {
        let Err(e) = result else { continue };
        let age = sync_age(
            stored
                .accounts
                .get(account.display_name())
                .and_then(|r| r.synced_ms)
                .map(|at| now.saturating_sub(at) / 1000),
        );
        let _ = writeln!(
            err,
            "{}",
            t!("cli_cost.sync_failed", who = who, why = e, age = age)
        );
    }
    let at = now_ms();
    match inventory.update(|s| store::record_results(s, &stale, &results, at)) {
        Ok(updated) => updated,
        Err(e) => {
            let _ = writeln!(err, "{}", t!("cli_cost.not_stored", who = who, why = e));
            stored
        }
    }
}

/// How long ago an account was last synced: `synced 12 s ago`, or `never synced`.
fn sync_age(age_s: Option<u64>) -> String {
    match age_s {
        Some(s) => t!("cli_cost.synced_ago", s = s).into_owned(),
        None => t!("cli_cost.never_synced").into_owned(),
    }
}
