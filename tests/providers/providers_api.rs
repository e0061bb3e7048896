//! Each provider's instance list against a loopback server that checks every request as the
//! provider documents it (method, path, the Authorization header's exact form, query and body)
//! and answers with bodies shaped as documented (each provider's API reference: pagination cursors,
//! field names, units), plus the failures: 401, 404, 429 with and without Retry-After, 500, an HTML
//! page, JSON cut short, a command that fails or prints too much.

use crate::provider_api as server;

use std::path::Path;
use std::time::Duration;

use gpufleet::config::{self, ProviderAccount};
use gpufleet::providers::{
    InstanceState, Listing, SshRoute, SyncError, SyncFailure, fetch::FetchError, sync_account,
};
use gpufleet::release::SendOptions;
use server::{Reply, Seen, Server, json, typed};

const TOKEN: &str = "tok-7Q2x-SECRET-9f";

fn account(kind: &str, base_url: &str) -> ProviderAccount {
    let text = format!(
        "[[providers]]\nkind = \"{kind}\"\nname = \"team\"\ntoken_env = \"API_TOKEN\"\n\
         base_url = \"{base_url}\"\n"
    );
    config::parse(&text, Path::new("c.toml")).unwrap().providers[0].clone()
}

fn env(name: &str) -> Option<String> {
    (name == "API_TOKEN").then(|| TOKEN.to_string())
}

fn fast() -> SendOptions {
    SendOptions {
        connect_timeout_ms: 2_000,
        total_timeout_ms: 5_000,
    }
}

fn sync(kind: &str, server: &Server) -> Result<Listing, SyncError> {
    sync_account(&account(kind, &server.base_url), &env, &fast())
}

fn no_token_in(text: &str) {
    assert!(!text.contains(TOKEN), "the token leaked: {text}");
    assert!(!text.contains("SECRET"), "the token leaked: {text}");
}

const VAST_RUNNING: &str = r#"{"id": 4242001, "label": "train-a", "actual_status": "running",
  "intended_status": "running", "cur_state": "running", "gpu_name": "RTX 4090", "num_gpus": 2,
  "gpu_ram": 24576, "ssh_host": "ssh5.vast.ai", "ssh_port": 10600, "ssh_idx": "5",
  "public_ipaddr": "203.0.113.7", "ports": {"22/tcp": [{"HostIp": "0.0.0.0", "HostPort": "41022"}]},
  "start_date": 1764633600.5, "dph_base": 0.6, "dph_total": 0.712, "storage_cost": 0.15,
  "storage_total_cost": 0.0021, "disk_space": 40.0, "image_runtype": "ssh"}"#;
const VAST_STOPPED: &str = r#"{"id": 4242002, "label": null, "actual_status": "stopped",
  "intended_status": "stopped", "cur_state": "stopped", "gpu_name": "A100 SXM4", "num_gpus": 1,
  "ssh_host": "ssh7.vast.ai", "ssh_port": 20400, "public_ipaddr": "203.0.113.9",
  "start_date": 1764547200, "dph_total": 0.0042, "storage_total_cost": 0.0042, "disk_space": 100,
  "image_runtype": "ssh"}"#;

fn vast_page(rows: &[&str], next: Option<&str>) -> String {
    let next = next.map_or("null".to_string(), |n| format!("\"{n}\""));
    format!(
        r#"{{"success": true, "instances_found": {}, "total_instances": 2, "label_counts": {{}},
            "next_token": {next}, "instances": [{}]}}"#,
        rows.len(),
        rows.join(",")
    )
}

fn check_vast_request(seen: &Seen) {
    assert_eq!(seen.method, "GET");
    assert_eq!(seen.path, "/api/v1/instances/");
    assert_eq!(
        seen.header("authorization"),
        Some(format!("Bearer {TOKEN}").as_str())
    );
    assert_eq!(seen.query("limit"), Some("25"));
    assert_eq!(
        seen.query("order_by"),
        Some(r#"[{"col":"id","dir":"asc"}]"#)
    );
    assert_eq!(
        seen.query("api_key"),
        None,
        "the key goes in the header only"
    );
}

#[test]
fn vast_follows_next_token_and_maps_fields_and_units() {
    let server = Server::start(|seen, n| {
        check_vast_request(seen);
        match n {
            0 => {
                assert_eq!(seen.query("after_token"), None);
                json(
                    200,
                    &vast_page(&[VAST_RUNNING], Some("eyJpZCI6NDI0MjAwMX0")),
                )
            }
            _ => {
                assert_eq!(seen.query("after_token"), Some("eyJpZCI6NDI0MjAwMX0"));
                json(200, &vast_page(&[VAST_STOPPED], None))
            }
        }
    });
    let listing = sync("vast", &server).unwrap();
    assert_eq!(server.seen().len(), 2);
    let [running, stopped] = &listing.instances[..] else {
        panic!("two instances: {listing:?}")
    };
    assert_eq!(running.id, "4242001");
    assert_eq!(running.label.as_deref(), Some("train-a"));
    assert_eq!(running.state, InstanceState::Running);
    assert_eq!(
        (running.gpu_model.as_deref(), running.gpu_count),
        (Some("RTX 4090"), Some(2))
    );
    let ssh = running.ssh.as_ref().unwrap();
    assert_eq!(
        (ssh.target().as_str(), ssh.route),
        ("root@203.0.113.7:41022", SshRoute::Direct)
    );
    assert_eq!(running.price_per_hour, Some(0.712));
    assert_eq!(running.currency.as_deref(), Some("USD"));
    assert_eq!(running.started_ms, Some(1_764_633_600_500));
    assert_eq!(running.disk_gb, Some(40.0));
    assert_eq!(stopped.state, InstanceState::Stopped);
    assert_eq!(stopped.stopped_storage_per_hour, Some(0.0042));
    // No published port: the proxy, as the vast CLI connects.
    let ssh = stopped.ssh.as_ref().unwrap();
    assert_eq!(
        (ssh.target().as_str(), ssh.route),
        ("root@ssh7.vast.ai:20400", SshRoute::Proxy)
    );
    // Paced: vast allows about one call a second.
    let seen = server.seen();
    assert!(seen[1].at - seen[0].at >= Duration::from_millis(950));
}

#[test]
fn vast_429_without_retry_after_backs_off_then_succeeds() {
    let server = Server::start(|seen, n| {
        check_vast_request(seen);
        match n {
            0 => typed(
                429,
                "text/plain",
                "API requests too frequent endpoint threshold=1.0",
            ),
            _ => json(200, &vast_page(&[VAST_RUNNING], None)),
        }
    });
    let listing = sync("vast", &server).unwrap();
    assert_eq!(listing.instances.len(), 1);
    let seen = server.seen();
    assert_eq!(seen.len(), 2);
    assert!(
        seen[1].at - seen[0].at >= Duration::from_millis(950),
        "backed off"
    );
}

#[test]
fn vast_429_that_persists_ends_the_sync_naming_provider_and_account() {
    let server = Server::start(|_, _| typed(429, "text/plain", "API requests too frequent"));
    let err = sync("vast", &server).unwrap_err();
    assert!(matches!(
        err.failure,
        SyncFailure::Fetch(FetchError::RateLimited { tries: 3, .. })
    ));
    let text = err.to_string();
    assert!(text.starts_with("vast account \"team\": "), "{text}");
    assert_eq!(server.seen().len(), 3);
}

const RUNPOD_PODS: &str = r#"{"pods": [
 {"id": "7h9k2m4n6p", "name": "pytorch-training", "image": "runpod/pytorch:1.0.2", "args": "",
  "disk": 50, "ports": ["8888/http", "22/tcp"], "env": {}, "registry": null, "status": "RUNNING",
  "actions": ["stop", "restart", "terminate"], "mounts": {"persistent": {"size": 20, "path": "/workspace"}},
  "gpu": {"id": "NVIDIA GeForce RTX 4090", "count": 1}, "cloud": "SECURE", "dataCenterId": "US-KS-2",
  "cudaVersion": "12.8", "ssh": {"proxy": {"host": "ssh.runpod.io", "port": 22,
  "username": "7h9k2m4n6p-64411eb2", "command": "ssh 7h9k2m4n6p-64411eb2@ssh.runpod.io"},
  "direct": {"host": "195.26.233.3", "port": 34446, "username": "root",
  "command": "ssh root@195.26.233.3 -p 34446"}}, "template": "9x4m2p7v", "cost": 0.44,
  "locked": false, "globalNetworking": {"enabled": false},
  "runtime": {"uptime": 3600, "ports": [{"private": 22, "public": 34446, "type": "tcp", "ip": "195.26.233.3"}]},
  "createdAt": "2026-06-01T12:00:00Z", "startedAt": "2026-06-01T12:02:00Z"},
 {"id": "proxyonly01", "name": "notebook", "status": "RUNNING", "gpu": {"id": "NVIDIA A40", "count": 2},
  "ssh": {"proxy": {"host": "ssh.runpod.io", "port": 22, "username": "proxyonly01-1a2b",
  "command": "ssh proxyonly01-1a2b@ssh.runpod.io"}, "direct": null}, "cost": 0.88,
  "mounts": {}, "runtime": null, "createdAt": "2026-06-02T08:00:00Z", "startedAt": "2026-06-02T08:01:00.250Z"},
 {"id": "exited0001", "name": "paused", "status": "EXITED", "gpu": {"id": "NVIDIA A100 80GB PCIe", "count": 1},
  "ssh": {"proxy": null, "direct": null}, "cost": 0.0, "mounts": {"persistent": {"size": 100, "path": "/workspace"}},
  "runtime": null, "createdAt": "2026-05-30T08:00:00Z", "startedAt": null}
]}"#;

#[test]
fn runpod_v2_pods_direct_preferred_proxy_else_and_a_stopped_pod_without_ssh() {
    let server = Server::start(|seen, _| {
        assert_eq!(
            (seen.method.as_str(), seen.path.as_str()),
            ("GET", "/v2/pods")
        );
        assert_eq!(
            seen.header("authorization"),
            Some(format!("Bearer {TOKEN}").as_str())
        );
        json(200, RUNPOD_PODS)
    });
    let listing = sync("runpod", &server).unwrap();
    let [direct, proxy, exited] = &listing.instances[..] else {
        panic!("three pods: {listing:?}")
    };
    assert_eq!(
        direct.ssh.as_ref().map(|s| s.target()).as_deref(),
        Some("root@195.26.233.3:34446")
    );
    assert_eq!(direct.price_per_hour, Some(0.44));
    assert_eq!(direct.started_ms, Some(1_780_315_320_000));
    assert_eq!(direct.disk_gb, Some(20.0));
    assert_eq!(direct.label.as_deref(), Some("pytorch-training"));
    let via_proxy = proxy.ssh.as_ref().unwrap();
    assert_eq!(via_proxy.route, SshRoute::Proxy);
    assert_eq!(via_proxy.user, "proxyonly01-1a2b");
    assert_eq!(
        (proxy.gpu_model.as_deref(), proxy.gpu_count),
        (Some("NVIDIA A40"), Some(2))
    );
    assert_eq!(exited.state, InstanceState::Stopped);
    assert_eq!(exited.ssh, None);
    // The volume disk bills $0.20/GB-month while stopped, which `cost` (0.0) hides.
    let storage = exited.stopped_storage_per_hour.unwrap();
    assert!((storage - 100.0 * 0.20 / 730.0).abs() < 1e-9, "{storage}");
}

#[test]
fn runpod_429_with_retry_after_is_honoured() {
    let server = Server::start(|_, n| match n {
        0 => json(
            429,
            r#"{"title": "Too Many Requests", "status": 429, "detail": "slow down"}"#,
        )
        .with_header("Retry-After", "2"),
        _ => json(200, RUNPOD_PODS),
    });
    let listing = sync("runpod", &server).unwrap();
    assert_eq!(listing.instances.len(), 3);
    let seen = server.seen();
    assert!(
        seen[1].at - seen[0].at >= Duration::from_millis(1_950),
        "waited Retry-After"
    );
}

#[test]
fn runpod_retry_after_beyond_what_is_worth_waiting_ends_the_sync_with_it() {
    let server = Server::start(|_, _| json(429, "{}").with_header("Retry-After", "3600"));
    let err = sync("runpod", &server).unwrap_err().to_string();
    assert!(err.contains("3600 s"), "{err}");
    assert_eq!(server.seen().len(), 1);
}

const LAMBDA_INSTANCES: &str = r#"{"data": [
 {"id": "0920582c7ff041399e34823a0be62549", "name": "lambda-a", "ip": "198.51.100.4",
  "private_ip": "10.0.0.2", "status": "active", "ssh_key_names": ["laptop"], "file_system_names": [],
  "region": {"name": "us-tx-3", "description": "Texas, USA"},
  "instance_type": {"name": "gpu_8x_h100_sxm5", "description": "8x H100 (80 GB SXM5)",
   "gpu_description": "H100 (80 GB SXM5)", "price_cents_per_hour": 2392,
   "specs": {"vcpus": 208, "memory_gib": 1800, "storage_gib": 24780, "gpus": 8}},
  "hostname": "198-51-100-4.cloud.lambdalabs.com", "jupyter_token": "j", "jupyter_url": "https://j", "is_reserved": false},
 {"id": "1a2b3c4d5e6f", "name": null, "status": "booting", "ssh_key_names": ["laptop"],
  "region": {"name": "us-east-1", "description": "Virginia, USA"},
  "instance_type": {"name": "gpu_1x_a10", "description": "1x A10 (24 GB PCIe)",
   "gpu_description": "A10 (24 GB PCIe)", "price_cents_per_hour": 75,
   "specs": {"vcpus": 30, "memory_gib": 200, "storage_gib": 1400, "gpus": 1}}}
]}"#;

#[test]
fn lambda_prices_in_cents_become_dollars_and_ssh_is_ubuntu_on_22() {
    let server = Server::start(|seen, _| {
        assert_eq!(
            (seen.method.as_str(), seen.path.as_str()),
            ("GET", "/api/v1/instances")
        );
        assert_eq!(
            seen.header("authorization"),
            Some(format!("Bearer {TOKEN}").as_str())
        );
        json(200, LAMBDA_INSTANCES)
    });
    let listing = sync("lambda", &server).unwrap();
    let [active, booting] = &listing.instances[..] else {
        panic!("two instances: {listing:?}")
    };
    assert_eq!(active.price_per_hour, Some(23.92));
    assert_eq!(
        (active.gpu_model.as_deref(), active.gpu_count),
        (Some("H100 (80 GB SXM5)"), Some(8))
    );
    assert_eq!(
        active.ssh.as_ref().map(|s| s.target()).as_deref(),
        Some("ubuntu@198.51.100.4:22")
    );
    assert_eq!(active.started_ms, None, "Lambda gives no start time");
    assert_eq!(booting.ssh, None, "no ip yet, no SSH");
    assert_eq!(booting.state, InstanceState::Other);
}

fn autodl_item(uuid: &str, status: &str) -> String {
    format!(
        r#"{{"uuid": "{uuid}", "name": "exp-{uuid}", "status": "{status}", "sub_status": "",
           "status_at": "2026-12-01T10:05:00+08:00", "created_at": "2026-12-01T10:00:00+08:00",
           "start_mode": "gpu", "charge_type": "payg", "req_gpu_amount": 2, "gpu_spec_uuid": "v-48g",
           "region_sign": "westDC2", "region_name": "西北B区", "machine_id": "m-1",
           "started_at": {{"Time": "2026-12-01T10:05:00+08:00", "Valid": {}}},
           "stopped_at": {{"Time": "0001-01-01T00:00:00Z", "Valid": false}}}}"#,
        status == "running"
    )
}

const AUTODL_SNAPSHOT: &str = r#"{"code": "Success", "msg": "", "request_id": "r-2", "data": {
  "ssh_command": "ssh -p 34222 root@connect.westb.seetacloud.com",
  "proxy_host": "connect.westb.seetacloud.com", "ssh_port": 34222, "root_password": "ROOTPW-SECRET-42",
  "payg_price": 1970, "origin_pay_price": 3030, "snapshot_gpu_alias_name": "NVIDIA RTX PRO 6000",
  "chip_corp": "nvidia", "jupyter_token": "jt", "jupyter_domain": "https://j.example",
  "usage_info": {"cpu_usage_percent": 3, "mem_usage": 1000, "mem_limit": 2000}}}"#;

#[test]
fn autodl_pages_the_list_with_a_bare_token_and_reads_running_snapshots() {
    let server = Server::start(|seen, _| {
        assert_eq!(
            seen.header("authorization"),
            Some(TOKEN),
            "no Bearer for AutoDL"
        );
        match (seen.method.as_str(), seen.path.as_str()) {
            ("POST", "/api/v1/dev/instance/pro/list") => {
                let page = seen.json()["page_index"].as_u64().unwrap();
                assert_eq!(seen.json()["page_size"], 50);
                let item = if page == 1 {
                    autodl_item("pro-a1", "running")
                } else {
                    autodl_item("pro-b2", "shutdown")
                };
                json(
                    200,
                    &format!(
                        r#"{{"code": "Success", "msg": "", "request_id": "r-1", "data": {{"page_index": {page},
                       "page_size": 50, "max_page": 2, "result_total": 2, "list": [{item}]}}}}"#
                    ),
                )
            }
            ("GET", "/api/v1/dev/instance/pro/snapshot") => {
                assert_eq!(
                    seen.query("instance_uuid"),
                    Some("pro-a1"),
                    "running ones only"
                );
                json(200, AUTODL_SNAPSHOT)
            }
            other => panic!("undocumented request {other:?}"),
        }
    });
    let listing = sync("autodl", &server).unwrap();
    assert_eq!(server.seen().len(), 3);
    let [running, off] = &listing.instances[..] else {
        panic!("two instances: {listing:?}")
    };
    assert_eq!(
        running.ssh.as_ref().map(|s| s.target()).as_deref(),
        Some("root@connect.westb.seetacloud.com:34222")
    );
    assert_eq!(running.price_per_hour, Some(1.97));
    assert_eq!(running.currency.as_deref(), Some("CNY"));
    assert_eq!(running.gpu_count, Some(2));
    assert_eq!(running.started_ms, Some(1_796_090_700_000));
    assert_eq!(off.state, InstanceState::Stopped);
    assert_eq!((off.ssh.as_ref(), off.started_ms), (None, None));
    assert!(
        !format!("{listing:?}").contains("ROOTPW"),
        "the root password is never kept"
    );
}

#[test]
fn autodl_refusal_in_the_envelope_is_an_error() {
    let server = Server::start(|_, _| {
        json(
            200,
            r#"{"code": "AuthFailed", "msg": "token invalid", "data": null}"#,
        )
    });
    let err = sync("autodl", &server).unwrap_err().to_string();
    assert!(
        err.contains("autodl account \"team\"") && err.contains("AuthFailed: token invalid"),
        "{err}"
    );
}

fn failing(kind: &str, reply: Reply) -> String {
    let server = Server::start(move |_, _| reply.clone());
    let err = sync(kind, &server).unwrap_err().to_string();
    no_token_in(&err);
    assert!(
        err.starts_with(&format!("{kind} account \"team\": ")),
        "{err}"
    );
    err
}

#[test]
fn a_rejected_token_says_so_without_the_token_even_when_echoed() {
    let echoed = format!(r#"{{"message": "invalid key Bearer {TOKEN}"}}"#);
    let err = failing("runpod", json(401, &echoed));
    assert!(err.contains("token was rejected (HTTP 401)"), "{err}");
    assert!(err.contains("<redacted>"), "{err}");
}

#[test]
fn not_found_names_the_address() {
    let err = failing(
        "lambda",
        json(
            404,
            r#"{"error": {"code": "global/not-found", "message": "Not found"}}"#,
        ),
    );
    assert!(
        err.contains("/api/v1/instances was not found (HTTP 404)"),
        "{err}"
    );
}

#[test]
fn a_server_error_is_said() {
    let err = failing(
        "vast",
        json(
            500,
            r#"{"success": false, "error": "server_error", "msg": "oops"}"#,
        ),
    );
    assert!(err.contains("server failed (HTTP 500)"), "{err}");
}

#[test]
fn an_html_error_page_is_named_by_its_title() {
    let page = "<!DOCTYPE html><html><head><title>502 Bad Gateway</title></head><body>cloudflare</body></html>";
    let err = failing("vast", typed(200, "text/html; charset=utf-8", page));
    assert!(
        err.contains("HTML page") && err.contains("502 Bad Gateway"),
        "{err}"
    );
    let err = failing("runpod", typed(502, "text/html", page));
    assert!(
        err.contains("HTTP 502") && err.contains("502 Bad Gateway"),
        "{err}"
    );
}

#[test]
fn json_cut_short_is_refused_whole() {
    let cut = &RUNPOD_PODS[..RUNPOD_PODS.len() / 2];
    let err = failing("runpod", json(200, cut));
    assert!(
        err.contains("not complete JSON") && err.contains("ends early"),
        "{err}"
    );
}

fn command_account(argv: &[&str]) -> ProviderAccount {
    let argv: Vec<String> = argv.iter().map(|a| format!("{a:?}")).collect();
    let text = format!(
        "[[providers]]\nkind = \"command\"\nname = \"ali\"\ncommand = [{}]\n",
        argv.join(", ")
    );
    config::parse(&text, Path::new("c.toml")).unwrap().providers[0].clone()
}

#[test]
fn a_command_prints_inventory_json() {
    let doc = r#"{"gpufleet_inventory": 1, "instances": [{"id": "i-bp1abc", "label": "a10-train",
      "state": "running", "status": "Running", "gpu_model": "NVIDIA A10", "gpu_count": 1,
      "ssh": {"user": "root", "host": "47.96.1.2", "port": 22}, "started_at": "2026-12-01T08:00:00Z",
      "price_per_hour": 12.5, "currency": "CNY"}]}"#;
    let account = command_account(&["printf", "%s", doc]);
    let listing = sync_account(&account, &env, &fast()).unwrap();
    let one = &listing.instances[0];
    assert_eq!(
        one.ssh.as_ref().map(|s| s.target()).as_deref(),
        Some("root@47.96.1.2:22")
    );
    assert_eq!(one.started_ms, Some(1_796_112_000_000));
}

#[test]
fn a_failing_command_or_one_that_prints_too_much_is_refused() {
    let account = command_account(&["sh", "-c", "echo 'aliyun: InvalidAccessKeyId' >&2; exit 3"]);
    let err = sync_account(&account, &env, &fast())
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with("command account \"ali\": sh failed (exit 3): aliyun: InvalidAccessKeyId"),
        "{err}"
    );
    let account = command_account(&["head", "-c", "9000000", "/dev/zero"]);
    let err = sync_account(&account, &env, &fast())
        .unwrap_err()
        .to_string();
    assert!(err.contains("printed more than 8 MiB"), "{err}");
}
