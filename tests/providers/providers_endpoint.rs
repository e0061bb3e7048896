//! A synced host's endpoint moves while it is down (AutoDL gives a restarted instance a new
//! port): the link re-reads the stored inventory before each reconnect attempt and connects
//! on the new port, a real sshd on 127.0.0.1. The pod is shaped as RunPod REST v2's `/v2/pods`
//! answers (as in providers_api.rs), stored the way a sync stores it.

use crate::common;

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use common::sshd::Sshd;
use common::{channel, test_options};
use gpufleet::fleet::HostEvent;
use gpufleet::providers::store::merge_success;
use gpufleet::providers::{InventoryEndpoints, InventoryStore, runpod};
use gpufleet::remote::spawn_link;

const WAIT: Duration = Duration::from_secs(20);

/// The running pod as RunPod lists it, its direct SSH endpoint on `port`.
fn pod(user: &str, port: u16) -> serde_json::Value {
    let text = format!(
        r#"{{"id": "pod1", "name": "gpu train", "status": "RUNNING", "gpu": {{"id": "NVIDIA H200", "count": 1}},
  "ssh": {{"proxy": null, "direct": {{"host": "127.0.0.1", "port": {port}, "username": "{user}",
  "command": "ssh {user}@127.0.0.1 -p {port}"}}}}, "cost": 0.44, "mounts": {{}},
  "createdAt": "2026-06-01T12:00:00Z", "startedAt": "2026-06-01T12:02:00Z"}}"#
    );
    serde_json::from_str(&text).expect("pod json")
}

/// Stores what a sync of the account would after listing the pod on `port`.
fn synced(store: &InventoryStore, user: &str, port: u16, now_ms: u64) {
    let instance = runpod::parse(&pod(user, port)).expect("pod");
    store
        .update(|stored| {
            let record = merge_success(stored.accounts.get("rp"), "runpod", vec![instance], now_ms);
            stored.accounts.insert("rp".to_string(), record);
        })
        .expect("store");
}

/// A port nothing listens on.
fn closed_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    listener.local_addr().expect("addr").port()
}

#[test]
fn a_synced_host_whose_port_changed_while_down_reconnects_on_the_new_port() {
    let Some(sshd) = Sshd::start() else { return };
    let dir = tempfile::tempdir().expect("state");
    let store = InventoryStore::in_dir(dir.path());
    let old_port = closed_port();
    synced(&store, &sshd.user, old_port, 1_000);
    let config = gpufleet::config::parse(
        "[[providers]]\nname = \"rp\"\nkind = \"runpod\"\ntoken_env = \"RUNPOD_KEY\"\n",
        Path::new("c.toml"),
    )
    .expect("config");
    let lookup = InventoryEndpoints::new(config, store.clone());

    let mut host = sshd.remote_host("gpu-train");
    host.target.port = old_port;
    let mut opts = test_options(&sshd.trusted_known_hosts());
    opts.reconnect_base_ms = 200;
    opts.reconnect_cap_ms = 400;
    opts.endpoints = Some(Arc::new(lookup));
    let (sink, mut events) = channel();
    let link = spawn_link(host, 0, sink, opts).expect("spawn");
    events.expect(WAIT, "the old port refused", |_, e| {
        matches!(e, HostEvent::Disconnected { .. })
    });

    // The instance restarted on the sshd's port; the next sync stored it.
    synced(&store, &sshd.user, sshd.port, 2_000);
    let notice = events.expect(WAIT, "the move", |_, e| {
        matches!(e, HostEvent::Notice { .. })
    });
    events.expect(WAIT, "connected on the new port", |_, e| {
        matches!(e, HostEvent::Connected(_))
    });
    link.stop_and_join();
    let HostEvent::Notice { text, .. } = notice else {
        panic!("{notice:?}");
    };
    assert_eq!(text.key(), Some("endpoint_moved.notice"));
    let english = text.english();
    assert!(
        english.contains(&format!(":{old_port}")) && english.contains(&format!(":{}", sshd.port)),
        "{english}"
    );
}
