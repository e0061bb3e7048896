//! `gpufleet providers import [--write]`: the running instances of the last synced inventory
//! that have an SSH endpoint and no `[[hosts]]` entry yet (same provider and instance id, or
//! the same ssh target), as `[[hosts]]` tables: name from the label (else `provider-id`), ssh,
//! price, billing start and, for API accounts, a `[hosts.release]` naming the account's
//! token_env / token_file (never a token). The change is shown as a diff; `--write` appends it
//! to the config file with a format-preserving editor (comments and layout kept), checked to
//! load before it replaces the file atomically, with its own mode.

use std::collections::HashSet;
use std::io::Write;
use std::path::Path;

use rust_i18n::t;

use crate::words::Words;
use toml_edit::{ArrayOfTables, DocumentMut, Item, Table, value};

use crate::config::{Config, ProviderAccount, ProviderKind};
use crate::providers::fleet_hosts::unique_name;
use crate::providers::{InstanceState, InventoryStore, StoredInstance};

/// Nothing to add, or the hosts were added (or shown, without `--write`).
pub const EXIT_OK: u8 = 0;
/// The inventory or the config cannot be read, or the new config would not load.
pub const EXIT_ERROR: u8 = 2;

/// One host to add.
struct NewHost<'a> {
    name: String,
    account: &'a ProviderAccount,
    instance: &'a StoredInstance,
}

/// Shows (and with `write`, appends) the hosts the inventory has that the config lacks.
pub fn run(
    config: &Config,
    config_path: Option<&Path>,
    store: &InventoryStore,
    write: bool,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> u8 {
    let fail = |err: &mut dyn Write, message: String| {
        let _ = writeln!(err, "{}", t!("cli_import.error", why = message));
        EXIT_ERROR
    };
    let Some(path) = config_path else {
        return fail(err, t!("cli_import.no_config").into_owned());
    };
    let stored = match store.load() {
        Ok(stored) => stored,
        Err(e) => return fail(err, e.to_string()),
    };
    let new_hosts = discover(config, &stored);
    if new_hosts.is_empty() {
        let _ = writeln!(out, "{}", t!("cli_import.nothing"));
        return EXIT_OK;
    }
    let old = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) => return fail(err, format!("{}: {e}", path.display())),
    };
    let new = match appended(&old, &new_hosts) {
        Ok(text) => text,
        Err(why) => return fail(err, format!("{}: {why}", path.display())),
    };
    if let Err(e) = crate::config::parse(&new, path) {
        return fail(err, t!("cli_import.would_not_load", why = e).into_owned());
    }
    let _ = write!(out, "{}", diff(&old, &new, path));
    if !write {
        let _ = writeln!(out);
        let _ = writeln!(
            out,
            "{}",
            Words::counted("cli_import.to_add", new_hosts.len() as u64).localized()
        );
        return EXIT_OK;
    }
    if let Err(e) = replace_keeping_mode(path, &old, &new) {
        let file = path.display();
        return fail(
            err,
            t!("cli_import.not_written", file = file, why = e).into_owned(),
        );
    }
    let _ = writeln!(out);
    let file = path.display();
    let _ = writeln!(
        out,
        "{}",
        Words::counted("cli_import.added", new_hosts.len() as u64)
            .put("file", file.to_string())
            .localized()
    );
    EXIT_OK
}

fn discover<'a>(config: &'a Config, stored: &'a crate::providers::Stored) -> Vec<NewHost<'a>> {
    let known: HashSet<(String, String)> = config
        .hosts
        .iter()
        .filter_map(|h| {
            let release = h.release.as_ref()?;
            Some((
                release.provider.as_str().to_string(),
                release.instance_id.clone()?,
            ))
        })
        .collect();
    let targets: HashSet<String> = config.hosts.iter().map(|h| h.ssh.to_string()).collect();
    let mut names: HashSet<String> = config.hosts.iter().map(|h| h.name.clone()).collect();
    let mut found = Vec::new();
    for account in &config.providers {
        let Some(record) = stored.accounts.get(account.display_name()) else {
            continue;
        };
        for instance in &record.instances {
            let i = &instance.instance;
            let Some(ssh) = &i.ssh else { continue };
            let configured = known.contains(&(account.kind.as_str().to_string(), i.id.clone()))
                || targets.contains(&ssh.target());
            if instance.gone_ms.is_some() || i.state != InstanceState::Running || configured {
                continue;
            }
            let name = unique_name(&mut names, account, instance);
            found.push(NewHost {
                name,
                account,
                instance,
            });
        }
    }
    found
}

fn appended(old: &str, hosts: &[NewHost<'_>]) -> Result<String, String> {
    let mut doc: DocumentMut = old.parse().map_err(|e| format!("{e}"))?;
    if doc.get("hosts").is_none() {
        doc.insert("hosts", Item::ArrayOfTables(ArrayOfTables::new()));
    }
    let array = doc
        .get_mut("hosts")
        .and_then(Item::as_array_of_tables_mut)
        .ok_or_else(|| t!("cli_import.not_a_list").into_owned())?;
    for host in hosts {
        array.push(table(host));
    }
    Ok(doc.to_string())
}

fn table(host: &NewHost<'_>) -> Table {
    let i = &host.instance.instance;
    let mut t = Table::new();
    t["name"] = value(host.name.as_str());
    if let Some(ssh) = &i.ssh {
        t["ssh"] = value(ssh.target());
    }
    if let Some(price) = i.price_per_hour {
        t["price_per_hour"] = value(price);
    }
    if let Some(currency) = &i.currency {
        t["currency"] = value(currency.as_str());
    }
    if let Some(started) = i.started_ms {
        t["billing_started"] = value(crate::utc::rfc3339(started));
    }
    let account = host.account;
    if account.kind != ProviderKind::Command {
        let mut release = Table::new();
        release["provider"] = value(account.kind.as_str());
        release["instance_id"] = value(i.id.as_str());
        if let Some(env) = &account.token_env {
            release["token_env"] = value(env.as_str());
        }
        if let Some(file) = &account.token_file {
            release["token_file"] = value(file.to_string_lossy().as_ref());
        }
        // RunPod's inventory (REST v2) and its release (REST v1) live at different roots.
        if let (Some(url), true) = (&account.base_url, account.kind != ProviderKind::RunPod) {
            release["base_url"] = value(url.as_str());
        }
        t["release"] = Item::Table(release);
    }
    t
}

/// The lines that change between `old` and `new`, as `-`/`+` lines after a header.
fn diff(old: &str, new: &str, path: &Path) -> String {
    let a: Vec<&str> = old.lines().collect();
    let b: Vec<&str> = new.lines().collect();
    let head = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let tail = a[head..]
        .iter()
        .rev()
        .zip(b[head..].iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    let file = path.display();
    let mut text = format!("--- {file}\n");
    text.push_str(&t!("cli_import.diff_new", file = file));
    text.push('\n');
    text.push_str(&t!("cli_import.diff_at", line = head));
    text.push('\n');
    for line in &a[head..a.len() - tail] {
        text.push_str(&format!("-{line}\n"));
    }
    for line in &b[head..b.len() - tail] {
        text.push_str(&format!("+{line}\n"));
    }
    text
}

/// Replaces the config atomically (a temporary file beside it, synced, renamed over it) with
/// the file's own mode, and only if nobody changed it since it was read. Not the state-file
/// writer: the config's directory and mode are the user's, not gpufleet's to tighten.
fn replace_keeping_mode(path: &Path, read: &str, text: &str) -> std::io::Result<()> {
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    let permissions = std::fs::metadata(path)?.permissions();
    let mut temp = tempfile::NamedTempFile::new_in(dir)?;
    temp.write_all(text.as_bytes())?;
    temp.as_file().set_permissions(permissions)?;
    temp.as_file().sync_all()?;
    if std::fs::read_to_string(path)? != read {
        return Err(std::io::Error::other(
            t!("cli_import.file_changed").into_owned(),
        ));
    }
    temp.persist(path).map_err(|e| e.error)?;
    Ok(())
}
