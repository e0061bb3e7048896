//! The synced instances joining the fleet: the config's hosts plus every running instance of
//! the stored inventory that has an SSH endpoint (named from its label, else `provider-id`,
//! made safe and unique), priced, started and released from what its account's API said. A
//! `[[hosts]]` entry naming the same provider and instance id is the user's word: it stays as
//! written, and only the fields it leaves out are filled from the inventory. An instance that
//! disappeared from its account (`gone_ms`) is kept as a host marked gone, never dropped
//! silently. Stopped instances have no endpoint and are not hosts: they stay inventory. Pure:
//! the caller loads the inventory.

use std::collections::HashSet;

use crate::config::{
    Config, HostConfig, Provider, ProviderAccount, ProviderKind, ReleaseConfig, Rfc3339,
    parse_ssh_target,
};

use super::model::InstanceState;
use super::store::{Stored, StoredInstance};

/// A host whose instance disappeared from its account.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GoneHost {
    /// The host's name in the fleet.
    pub name: String,
    pub provider: String,
    pub account: String,
    pub instance_id: String,
    /// When a sync first found it missing.
    pub gone_ms: u64,
}

impl GoneHost {
    /// What the fleet says about it, in place of a connection.
    pub fn reason(&self) -> String {
        self.reason_words().english()
    }

    /// [`GoneHost::reason`] in catalogue words, for the console to say in the user's language.
    pub fn reason_words(&self) -> crate::words::Words {
        crate::words::Words::new("quiet_words.gone_reason")
            .put("instance", self.instance_id.as_str())
            .put("provider", self.provider.as_str())
            .put("account", self.account.as_str())
            .put("since", crate::utc::rfc3339(self.gone_ms))
    }
}

/// The config with the synced hosts joined.
#[derive(Debug, Clone)]
pub struct Joined {
    pub config: Config,
    /// The hosts added from the inventory (the gone ones included).
    pub added: Vec<String>,
    pub gone: Vec<GoneHost>,
}

/// The config's hosts with the inventory's joined (see the module's doc).
pub fn join(config: &Config, stored: &Stored) -> Joined {
    let mut joined = config.clone();
    let mut names: HashSet<String> = config.hosts.iter().map(|h| h.name.clone()).collect();
    let targets: HashSet<String> = config.hosts.iter().map(|h| h.ssh.to_string()).collect();
    let mut added = Vec::new();
    let mut gone = Vec::new();
    for account in &config.providers {
        let Some(record) = stored.accounts.get(account.display_name()) else {
            continue;
        };
        if record.provider != account.kind.as_str() {
            continue;
        }
        for entry in &record.instances {
            let i = &entry.instance;
            let gone_host = |name: &str, gone_ms: u64| GoneHost {
                name: name.to_string(),
                provider: record.provider.clone(),
                account: account.display_name().to_string(),
                instance_id: i.id.clone(),
                gone_ms,
            };
            if let Some(host) = joined
                .hosts
                .iter_mut()
                .find(|h| is_instance(h, account, &i.id))
            {
                fill(host, account, entry);
                if let Some(at) = entry.gone_ms {
                    gone.push(gone_host(&host.name, at));
                }
                continue;
            }
            let Some(ssh) = &i.ssh else { continue };
            // A stopped instance (or one starting) is inventory; one gone was a host while
            // it ran.
            if i.state != InstanceState::Running || targets.contains(&ssh.target()) {
                continue;
            }
            let Ok(target) = parse_ssh_target(&ssh.target()) else {
                continue;
            };
            let name = unique_name(&mut names, account, entry);
            let mut host = HostConfig {
                name: name.clone(),
                ssh: target,
                identity_file: None,
                password_env: None,
                price_per_hour: None,
                currency: None,
                billing_started: None,
                backup: None,
                auto_release: false,
                countdown_s: None,
                max_spend: None,
                max_hours: None,
                max_run_hours: None,
                prices: None,
                expect: None,
                release: None,
                jobs: Vec::new(),
                dead_man: None,
                price_since_ms: None,
            };
            fill(&mut host, account, entry);
            if let Some(at) = entry.gone_ms {
                gone.push(gone_host(&name, at));
            }
            joined.hosts.push(host);
            added.push(name);
        }
    }
    Joined {
        config: joined,
        added,
        gone,
    }
}

/// Whether `[[hosts]]` entry `host` releases instance `id` of `account`'s platform.
fn is_instance(host: &HostConfig, account: &ProviderAccount, id: &str) -> bool {
    host.release.as_ref().is_some_and(|r| {
        r.provider.as_str() == account.kind.as_str() && r.instance_id.as_deref() == Some(id)
    })
}

/// Fills what `host` leaves out from the instance: price, currency, billing start, and for an
/// API account the release (provider, instance id, the account's token source, base_url).
fn fill(host: &mut HostConfig, account: &ProviderAccount, entry: &StoredInstance) {
    let i = &entry.instance;
    if host.price_per_hour.is_none() {
        host.price_per_hour = i.price_per_hour;
        host.price_since_ms = entry.prices.last().map(|p| p.from_ms);
    }
    if host.currency.is_none() {
        host.currency = i.currency.clone();
    }
    if host.billing_started.is_none() {
        let (started_ms, _) = entry.started_or_first_seen_ms();
        host.billing_started = Rfc3339::parse(&crate::utc::rfc3339(started_ms)).ok();
    }
    let Some(provider) = release_provider(account.kind) else {
        return;
    };
    let release = host.release.get_or_insert_with(|| ReleaseConfig {
        provider,
        instance_id: Some(i.id.clone()),
        token_env: None,
        token_file: None,
        base_url: None,
        command: None,
        restart_command: None,
        start_command: None,
        restart: None,
    });
    if release.provider != provider {
        return;
    }
    release.instance_id.get_or_insert_with(|| i.id.clone());
    if release.token_env.is_none() && release.token_file.is_none() {
        release.token_env = account.token_env.clone();
        release.token_file = account.token_file.clone();
    }
    // RunPod's inventory (REST v2) and its release (REST v1) live at different roots.
    if release.base_url.is_none() && account.kind != ProviderKind::RunPod {
        release.base_url = account.base_url.clone();
    }
}

/// The release provider of an API account; a `command` account has no release to fill.
fn release_provider(kind: ProviderKind) -> Option<Provider> {
    match kind {
        ProviderKind::Vast => Some(Provider::Vast),
        ProviderKind::RunPod => Some(Provider::RunPod),
        ProviderKind::Lambda => Some(Provider::Lambda),
        ProviderKind::AutoDl => Some(Provider::AutoDl),
        ProviderKind::Command => None,
    }
}

/// The label made safe, else `provider-id`; `-2`, `-3`, ... until no host has it. The fleet's
/// synced hosts and `providers import` name instances alike.
pub fn unique_name(
    names: &mut HashSet<String>,
    account: &ProviderAccount,
    entry: &StoredInstance,
) -> String {
    let i = &entry.instance;
    let base = i
        .label
        .as_deref()
        .map(host_name)
        .filter(|n| !n.is_empty())
        .unwrap_or_else(|| host_name(&format!("{}-{}", account.kind.as_str(), i.id)));
    let mut name = base.clone();
    let mut n = 2;
    while !names.insert(name.clone()) {
        name = format!("{base}-{n}");
        n += 1;
    }
    name
}

/// Letters, digits, `.`, `_` and `-`; anything else becomes `-` (64 characters at most).
pub fn host_name(text: &str) -> String {
    let name: String = text
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '-'
            }
        })
        .take(64)
        .collect();
    name.trim_matches('-').to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::providers::model::{Instance, SshEndpoint, SshRoute};
    use crate::providers::store::merge_success;

    fn running(id: &str, label: Option<&str>, port: u16, price: f64) -> Instance {
        let mut i = Instance::new(id, InstanceState::Running, "running");
        i.label = label.map(str::to_string);
        i.ssh = Some(SshEndpoint {
            user: "root".into(),
            host: "ssh5.vast.ai".into(),
            port,
            route: SshRoute::Proxy,
        });
        i.price_per_hour = Some(price);
        i.currency = Some("USD".into());
        i.started_ms = Some(1_764_633_600_000);
        i
    }

    fn config(extra: &str) -> Config {
        let text = format!(
            "{extra}\n[[providers]]\nkind = \"vast\"\ntoken_env = \"VAST_KEY\"\n\
             base_url = \"http://127.0.0.1:9\"\n"
        );
        crate::config::parse(&text, std::path::Path::new("c.toml")).unwrap()
    }

    fn stored(listed: Vec<Instance>) -> Stored {
        let mut stored = Stored::default();
        stored
            .accounts
            .insert("vast".into(), merge_success(None, "vast", listed, 1_000));
        stored
    }

    #[test]
    fn running_instances_join_and_the_users_entry_wins_field_by_field() {
        let config = config(
            "[[hosts]]\nname = \"mine\"\nssh = \"me@10.0.0.1:22\"\nprice_per_hour = 9.0\n\
             [hosts.release]\nprovider = \"vast\"\ninstance_id = \"2\"\ntoken_env = \"MY_KEY\"\n",
        );
        let mut stopped = running("3", Some("off"), 3, 1.0);
        stopped.state = InstanceState::Stopped;
        stopped.ssh = None;
        let joined = join(
            &config,
            &stored(vec![
                running("1", Some("train a/b"), 10600, 0.7),
                running("2", Some("other"), 2, 1.5),
                stopped,
                running("4", None, 4, 0.2),
            ]),
        );
        let names: Vec<&str> = joined
            .config
            .hosts
            .iter()
            .map(|h| h.name.as_str())
            .collect();
        assert_eq!(names, ["mine", "train-a-b", "vast-4"]);
        let mine = &joined.config.hosts[0];
        assert_eq!(mine.ssh.to_string(), "me@10.0.0.1:22");
        assert_eq!(mine.price_per_hour, Some(9.0));
        assert_eq!(mine.currency.as_deref(), Some("USD"));
        let release = mine.release.as_ref().unwrap();
        assert_eq!(
            release.token_env.as_deref(),
            Some("MY_KEY"),
            "the user's word"
        );
        assert_eq!(release.base_url.as_deref(), Some("http://127.0.0.1:9"));
        let synced = &joined.config.hosts[1];
        assert_eq!(synced.ssh.to_string(), "root@ssh5.vast.ai:10600");
        assert_eq!(synced.price_per_hour, Some(0.7));
        assert_eq!(
            synced.billing_started.as_ref().map(Rfc3339::unix_ms),
            Some(1_764_633_600_000)
        );
        assert_eq!(
            synced.release.as_ref().unwrap().base_url.as_deref(),
            Some("http://127.0.0.1:9")
        );
        assert!(joined.gone.is_empty());
    }

    #[test]
    fn an_instance_that_disappeared_is_a_host_marked_gone() {
        let config = config("");
        let first = stored(vec![running("1", Some("a"), 1, 0.5)]);
        let mut later = Stored::default();
        later.accounts.insert(
            "vast".into(),
            merge_success(first.accounts.get("vast"), "vast", Vec::new(), 5_000),
        );
        let joined = join(&config, &later);
        assert_eq!(joined.config.hosts.len(), 1);
        assert_eq!(
            joined.gone,
            vec![GoneHost {
                name: "a".into(),
                provider: "vast".into(),
                account: "vast".into(),
                instance_id: "1".into(),
                gone_ms: 5_000,
            }]
        );
    }

    #[test]
    fn a_gone_hosts_reason_keeps_the_english_and_reads_in_chinese() {
        let gone = GoneHost {
            name: "a".into(),
            provider: "vast".into(),
            account: "main".into(),
            instance_id: "123".into(),
            gone_ms: 1_767_323_045_000,
        };
        assert_eq!(
            gone.reason(),
            "instance 123 is gone from the vast account main (since 2026-01-02T03:04:05.000Z)"
        );
        let zh = gone.reason_words().render("zh-CN");
        assert!(
            zh.contains("123") && zh.contains("main") && zh.contains("已"),
            "{zh}"
        );
        assert!(!zh.contains("is gone"), "{zh}");
    }
}
