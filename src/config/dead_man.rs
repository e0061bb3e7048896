//! `[hosts.dead_man]`: a switch left on the host that stops the instance when no gpufleet has
//! pushed its deadline back for `after_minutes`, so a laptop that sleeps or a watcher that died
//! does not leave the meter running.
//!
//! The stop command is the table's `command` (an argv run on the host), else the documented way
//! the host's provider (`[hosts.release] provider`) stops an instance from inside it:
//! RunPod's `runpodctl stop pod $RUNPOD_POD_ID`, and `shutdown -h now` for a machine released
//! over SSH. A provider without such a documented way (vast.ai, AutoDL, Lambda, a release
//! command) and a host without a release table need a `command`: the file is refused without
//! one. The switch only ever stops; it never destroys.

use rust_i18n::t;
use serde::Deserialize;

use super::locate::KeyPath;
use super::problem::{Problem, problem};
use super::{HostConfig, Provider};

/// One `[hosts.dead_man]` table, as written.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DeadManConfig {
    /// How long the host may go without a gpufleet pushing its deadline before it stops.
    pub after_minutes: u32,
    /// The argv run on the host to stop it; the provider's way when absent.
    pub command: Option<Vec<String>>,
}

/// What a host's switch does, resolved from its table and its provider.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeadManPlan {
    pub after_minutes: u32,
    /// The argv run on the host once the deadline passes.
    pub command: Vec<String>,
}

impl DeadManPlan {
    /// `after_minutes` in seconds.
    pub fn after_s(&self) -> u64 {
        u64::from(self.after_minutes) * 60
    }

    /// How often a watching gpufleet pushes the deadline: a third of `after_minutes`, at least
    /// every 20 s, so two pushes may fail before the switch fires.
    pub fn push_every_s(&self) -> u64 {
        (self.after_s() / 3).max(20)
    }
}

/// The longest `after_minutes`: a week.
pub const MAX_AFTER_MINUTES: u32 = 7 * 24 * 60;

/// RunPod's stop from inside a pod, with the pod's variables (its id, its API key) read from
/// where RunPod's images keep them for shells that are not interactive logins.
const RUNPOD_STOP: &str =
    "[ -r /etc/rp_environment ] && . /etc/rp_environment; runpodctl stop pod \"$RUNPOD_POD_ID\"";

/// The documented way to stop an instance of `provider` from inside it, when there is one.
pub fn provider_stop_command(provider: Provider) -> Option<Vec<String>> {
    let argv: &[&str] = match provider {
        // docs.runpod.io, "Manage Pods": `runpodctl stop pod $RUNPOD_POD_ID`. The pod's
        // variables reach a login shell through /etc/rp_environment (RunPod's images write them
        // there and source it from .bashrc), not a command run over SSH: read it first.
        Provider::RunPod => &["sh", "-c", RUNPOD_STOP],
        // The machine itself is shut down, as the `ssh` release does.
        Provider::Ssh => &["shutdown", "-h", "now"],
        Provider::Vast | Provider::AutoDl | Provider::Lambda | Provider::Command => return None,
    };
    Some(argv.iter().map(|s| (*s).to_string()).collect())
}

impl HostConfig {
    /// The host's switch, when it has a `[hosts.dead_man]` table and a stop command.
    pub fn dead_man_plan(&self) -> Option<DeadManPlan> {
        let table = self.dead_man.as_ref()?;
        let command = match &table.command {
            Some(argv) => argv.clone(),
            None => provider_stop_command(self.release.as_ref()?.provider)?,
        };
        Some(DeadManPlan {
            after_minutes: table.after_minutes,
            command,
        })
    }
}

pub(super) fn check_dead_man(host: &HostConfig, path: &KeyPath) -> Result<(), Problem> {
    let Some(table) = &host.dead_man else {
        return Ok(());
    };
    if table.after_minutes == 0 {
        problem(path.key("after_minutes"), t!("config_error.at_least_1"))?;
    }
    if table.after_minutes > MAX_AFTER_MINUTES {
        problem(
            path.key("after_minutes"),
            t!(
                "dead_man.config_at_most",
                max = MAX_AFTER_MINUTES,
                found = table.after_minutes
            ),
        )?;
    }
    match &table.command {
        Some(argv) => {
            if argv.first().is_none_or(|program| program.trim().is_empty()) {
                problem(path.key("command"), t!("config_error.argv"))?;
            }
            if argv.iter().any(|arg| arg.contains('\0')) {
                problem(path.key("command"), t!("config_error.no_control"))?;
            }
        }
        None => {
            let provider = host.release.as_ref().map(|r| r.provider);
            if provider.and_then(provider_stop_command).is_none() {
                let message = match provider {
                    Some(p) => t!("dead_man.config_no_default", provider = p.as_str()),
                    None => t!("dead_man.config_no_release"),
                };
                problem(path.clone(), message)?;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use crate::config::parse;

    fn host(extra: &str) -> String {
        format!("[[hosts]]\nname = \"a\"\nssh = \"root@10.0.0.1\"\n{extra}")
    }

    fn error(text: &str) -> String {
        match parse(text, Path::new("c.toml")) {
            Ok(_) => panic!("accepted: {text}"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn a_runpod_host_stops_with_runpodctl_and_pushes_every_third() {
        let text = host(
            "[hosts.release]\nprovider = \"runpod\"\ninstance_id = \"p1\"\ntoken_env = \"RP\"\n\
             [hosts.dead_man]\nafter_minutes = 30\n",
        );
        let config = parse(&text, Path::new("c.toml")).expect("valid");
        let plan = config.hosts[0].dead_man_plan().expect("plan");
        assert_eq!(plan.command, vec!["sh", "-c", super::RUNPOD_STOP]);
        assert_eq!(plan.push_every_s(), 600);
        let one = crate::config::DeadManPlan {
            after_minutes: 1,
            command: vec!["true".into()],
        };
        assert_eq!(one.push_every_s(), 20);
    }

    #[test]
    fn a_command_of_its_own_needs_no_provider() {
        let text = host("[hosts.dead_man]\nafter_minutes = 1\ncommand = [\"touch\", \"/tmp/x\"]\n");
        let config = parse(&text, Path::new("c.toml")).expect("valid");
        let plan = config.hosts[0].dead_man_plan().expect("plan");
        assert_eq!(plan.command, vec!["touch", "/tmp/x"]);
        assert_eq!(plan.after_minutes, 1);
    }

    #[test]
    fn no_documented_stop_and_no_command_is_refused_with_its_line() {
        let message = error(&host(
            "[hosts.release]\nprovider = \"vast\"\ninstance_id = \"1\"\ntoken_env = \"V\"\n\
             \n[hosts.dead_man]\nafter_minutes = 5\n",
        ));
        assert!(
            message.starts_with("c.toml:9: hosts[0].dead_man: "),
            "{message}"
        );
        assert!(
            message.contains("vast") && message.contains("command"),
            "{message}"
        );
        let message = error(&host("[hosts.dead_man]\nafter_minutes = 5\n"));
        assert!(message.contains("hosts[0].dead_man"), "{message}");
        assert!(message.contains("[hosts.release]"), "{message}");
    }

    #[test]
    fn minutes_must_be_a_whole_number_from_one() {
        let zero = error(&host(
            "[hosts.dead_man]\nafter_minutes = 0\ncommand = [\"true\"]\n",
        ));
        assert!(
            zero.contains("c.toml:5: hosts[0].dead_man.after_minutes: must be at least 1"),
            "{zero}"
        );
        let negative = error(&host(
            "[hosts.dead_man]\nafter_minutes = -3\ncommand = [\"true\"]\n",
        ));
        assert!(negative.contains("c.toml:5"), "{negative}");
        assert!(negative.contains("after_minutes"), "{negative}");
        let empty = error(&host("[hosts.dead_man]\nafter_minutes = 2\ncommand = []\n"));
        assert!(empty.contains("hosts[0].dead_man.command"), "{empty}");
        let unknown = error(&host("[hosts.dead_man]\nafter_minute = 2\n"));
        assert!(unknown.contains("after_minute"), "{unknown}");
    }
}
