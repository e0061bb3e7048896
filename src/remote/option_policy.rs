//! Every other ssh_config option that applies to a host: one gpufleet does not implement gets
//! a warning naming it and the host (shown once per process); one whose being ignored would
//! make the connection less safe than the config asks (a host-key, algorithm or login setting)
//! refuses the host. A `Match exec`/`localnetwork` block, which gpufleet does not evaluate, is
//! refused when it sets an option that decides how the host is reached, checked or logged
//! into, and warned about otherwise.

use std::collections::HashSet;
use std::sync::{Mutex, PoisonError};

use crate::remote::error::RemoteError;
use crate::remote::host_pattern::match_pattern;
use crate::remote::ssh_config_file::{self, HostOptions};
use crate::remote::ssh_options::Source;
use crate::words::Words;

/// Options gpufleet honours (or refuses itself, with its own reason).
const HONOURED: &[&str] = &[
    "hostname",
    "user",
    "port",
    "identityfile",
    "identitiesonly",
    "identityagent",
    "certificatefile",
    "proxycommand",
    "proxyjump",
    "stricthostkeychecking",
    "userknownhostsfile",
    "globalknownhostsfile",
    "hostkeyalias",
    "knownhostscommand",
    "revokedhostkeys",
    "connecttimeout",
    "serveraliveinterval",
    "serveralivecountmax",
    "batchmode",
    "pubkeyauthentication",
    "passwordauthentication",
    "kbdinteractiveauthentication",
    "challengeresponseauthentication",
    "preferredauthentications",
    "hashknownhosts",
    "ignoreunknown",
    "tag",
    // Never done by gpufleet, so asking for them not to be done is honoured.
    "forwardagent",
    "forwardx11",
    "forwardx11trusted",
    "gssapidelegatecredentials",
    "clearallforwardings",
];

/// Algorithm lists: ignoring a restriction would allow what the config forbids; a list that
/// only adds to the defaults (`+...`) is safe to ignore.
const ALGORITHMS: &[&str] = &[
    "ciphers",
    "macs",
    "kexalgorithms",
    "hostkeyalgorithms",
    "pubkeyacceptedalgorithms",
    "pubkeyacceptedkeytypes",
    "hostbasedacceptedalgorithms",
    "hostbasedkeytypes",
    "casignaturealgorithms",
];

/// Host-key and login settings, with the one value that asks for nothing gpufleet would skip.
const SECURITY: &[(&str, &str)] = &[
    ("verifyhostkeydns", "no"),
    ("checkhostip", "no"),
    ("nohostauthenticationforlocalhost", "no"),
    ("hostbasedauthentication", "no"),
    ("pkcs11provider", "none"),
    ("securitykeyprovider", "internal"),
    ("requiredrsasize", "1024"),
];

/// OpenSSH options that change nothing safety-wise when ignored (a warning each).
const IGNORED: &[&str] = &[
    "addkeystoagent",
    "addressfamily",
    "bindaddress",
    "bindinterface",
    "canonicaldomains",
    "canonicalizefallbacklocal",
    "canonicalizehostname",
    "canonicalizemaxdots",
    "canonicalizepermittedcnames",
    "channeltimeout",
    "compression",
    "connectionattempts",
    "controlmaster",
    "controlpath",
    "controlpersist",
    "dynamicforward",
    "enableescapecommandline",
    "enablesshkeysign",
    "escapechar",
    "exitonforwardfailure",
    "fingerprinthash",
    "forkafterauthentication",
    "forwardx11timeout",
    "gatewayports",
    "gssapiauthentication",
    "ipqos",
    "kbdinteractivedevices",
    "localcommand",
    "localforward",
    "loglevel",
    "logverbose",
    "numberofpasswordprompts",
    "obscurekeystroketiming",
    "permitlocalcommand",
    "permitremoteopen",
    "proxyusefdpass",
    "rekeylimit",
    "remotecommand",
    "remoteforward",
    "requesttty",
    "sendenv",
    "sessiontype",
    "setenv",
    "stdinnull",
    "streamlocalbindmask",
    "streamlocalbindunlink",
    "syslogfacility",
    "tcpkeepalive",
    "tunnel",
    "tunneldevice",
    "updatehostkeys",
    "usekeychain",
    "visualhostkey",
];

/// Options that decide how a host is reached, checked or logged into: a `Match exec` block
/// setting one of them cannot be skipped quietly.
fn decides_security(key: &str) -> bool {
    const REACH: &[&str] = &["hostname", "port", "user"];
    (HONOURED.contains(&key) && !["ignoreunknown", "tag"].contains(&key))
        || ALGORITHMS.contains(&key)
        || SECURITY.iter().any(|(k, _)| *k == key)
        || REACH.contains(&key)
}

/// Refuses what cannot be ignored safely; returns the warnings for the rest.
pub(crate) fn review(params: &HostOptions, source: &Source<'_>) -> Result<Vec<Words>, RemoteError> {
    let mut warnings = Vec::new();
    for block in &params.unevaluated {
        if let Some(key) = block.options.iter().find(|k| decides_security(k)) {
            return Err(RemoteError::UnevaluatedMatch {
                host: source.host.to_string(),
                place: Box::new(ssh_config_file::place(&block.file, block.line)),
                criterion: block.criterion.clone(),
                option: key.clone(),
            });
        }
        if !block.options.is_empty() {
            warnings.push(match_not_evaluated(
                source.host,
                &block.criterion,
                ssh_config_file::place(&block.file, block.line),
                &block.options,
            ));
        }
    }
    let ignore_unknown: Vec<String> = params.get("ignoreunknown").unwrap_or_default().to_vec();
    let mut keys: Vec<&String> = params.keys().collect();
    keys.sort();
    for key in keys {
        let Some(setting) = params.setting(key) else {
            continue;
        };
        let value = setting.args.first().map(String::as_str).unwrap_or_default();
        let place = || ssh_config_file::place(&setting.file, setting.line);
        if HONOURED.contains(&key.as_str()) {
            continue;
        }
        if ALGORITHMS.contains(&key.as_str()) {
            if value.starts_with('+') {
                warnings.push(ignored(source, key, place(), Ignored::AddsOnly));
                continue;
            }
            return Err(source.refuse_named(key, Words::new("option_words.algorithms")));
        }
        if let Some((_, safe)) = SECURITY.iter().find(|(k, _)| *k == key.as_str()) {
            if value.eq_ignore_ascii_case(safe) {
                continue;
            }
            return Err(
                source.refuse_named(key, Words::new("option_words.security").put("safe", *safe))
            );
        }
        if IGNORED.contains(&key.as_str()) {
            warnings.push(ignored(source, key, place(), Ignored::NotImplemented));
        } else if !ignore_unknown
            .iter()
            .flat_map(|list| list.split(','))
            .any(|p| match_pattern(key, &p.to_ascii_lowercase()))
        {
            warnings.push(ignored(source, key, place(), Ignored::Unknown));
        }
    }
    Ok(warnings)
}

fn ignored(source: &Source<'_>, key: &str, place: Words, why: Ignored) -> Words {
    option_ignored(source.host, key, place, why)
}

static SHOWN: Mutex<Option<HashSet<String>>> = Mutex::new(None);

/// Whether `warning` is new to this process (and now shown).
pub(crate) fn first_time(warning: &str) -> bool {
    let mut shown = SHOWN.lock().unwrap_or_else(PoisonError::into_inner);
    shown
        .get_or_insert_with(HashSet::new)
        .insert(warning.to_string())
}

/// A `Match exec`/`localnetwork` block setting only options that may be ignored.
fn match_not_evaluated(host: &str, criterion: &str, place: Words, options: &[String]) -> Words {
    Words::new("link_notice.match_not_evaluated")
        .put("host", host)
        .put("criterion", criterion)
        .put_words("place", place)
        .put("options", options.join(", "))
}

/// Why an ssh config option is ignored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ignored {
    /// An algorithm list that only adds to the defaults (`+...`).
    AddsOnly,
    /// An OpenSSH option gpufleet does not implement.
    NotImplemented,
    /// Not an option gpufleet knows.
    Unknown,
}

/// `HOST: ssh config option KEY (FILE line N) is ignored: WHY`.
fn option_ignored(host: &str, option: &str, place: Words, why: Ignored) -> Words {
    let why = Words::new(match why {
        Ignored::AddsOnly => "link_notice.ignored_adds_only",
        Ignored::NotImplemented => "link_notice.ignored_not_implemented",
        Ignored::Unknown => "link_notice.ignored_unknown",
    });
    Words::new("link_notice.option_ignored")
        .put("host", host)
        .put("option", option)
        .put_words("place", place)
        .put_words("why", why)
}
