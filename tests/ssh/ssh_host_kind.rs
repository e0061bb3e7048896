//! A host says on connect whether it is a container or a machine: over a real sshd on this
//! machine, the link runs its one probe after the boot id, and what this machine really is
//! (its `/.dockerenv`, or `systemd-detect-virt -c`) reaches the engine and `snapshot --json`.

use crate::common;

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use common::sshd::Sshd;
use common::{channel, test_options};
use gpufleet::fleet::{Fleet, FleetOptions, HostEvent};
use gpufleet::remote::{HostKind, spawn_link};
use gpufleet::snapshot::Snapshot;

const WAIT: Duration = Duration::from_secs(10);

/// What this machine is, read without gpufleet: a container marker, else systemd's answer.
fn this_machine() -> Option<HostKind> {
    if Path::new("/.dockerenv").exists() || Path::new("/run/.containerenv").exists() {
        return Some(HostKind::Container);
    }
    let out = Command::new("systemd-detect-virt")
        .arg("-c")
        .output()
        .ok()?;
    match String::from_utf8_lossy(&out.stdout).trim() {
        "" => None,
        "none" => Some(HostKind::Machine),
        _ => Some(HostKind::Container),
    }
}

#[test]
fn the_host_says_what_it_is_and_the_snapshot_carries_it() {
    let Some(expected) = this_machine() else {
        eprintln!("skipping: neither a container marker nor systemd-detect-virt here");
        return;
    };
    let Some(sshd) = Sshd::start() else {
        return;
    };
    let (sink, mut events) = channel();
    let opts = test_options(&sshd.trusted_known_hosts());
    let link = spawn_link(sshd.remote_host("kind"), 0, sink, opts).expect("spawn");
    let said = events.expect(WAIT, "HostKind", |_, e| {
        matches!(e, HostEvent::HostKind { .. })
    });
    link.stop_and_join();
    let HostEvent::HostKind { kind, .. } = said.clone() else {
        unreachable!()
    };
    assert_eq!(kind, expected);
    assert_eq!(
        events.count(|_, e| matches!(e, HostEvent::HostKind { .. })),
        1,
        "read once per connection: {:#?}",
        events.kinds()
    );

    let mut fleet = Fleet::new(vec!["kind".to_string()], FleetOptions::default(), 0);
    fleet.apply(0, said);
    assert_eq!(fleet.hosts[0].kind, Some(expected));
    let json = serde_json::to_value(Snapshot::from_fleet(&fleet)).unwrap();
    assert_eq!(json["hosts"][0]["kind"], expected.as_str());
}

/// Without the host's answer, a host of a provider that rents containers is one; a host of
/// neither is `null`, never a guess.
#[test]
fn without_an_answer_the_provider_tells_or_nothing_does() {
    let fleet = Fleet::new(vec!["h".to_string()], FleetOptions::default(), 0);
    let json = serde_json::to_value(Snapshot::from_fleet(&fleet)).unwrap();
    assert!(json["hosts"][0]["kind"].is_null(), "{json}");
    use gpufleet::config::Provider;
    assert_eq!(
        HostKind::known(None, Some(Provider::AutoDl)),
        Some(HostKind::Container)
    );
    assert_eq!(
        HostKind::known(Some(HostKind::Machine), Some(Provider::Vast)),
        Some(HostKind::Machine),
        "the host's own answer wins"
    );
    assert_eq!(HostKind::known(None, Some(Provider::Ssh)), None);
}
