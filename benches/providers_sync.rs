//! `gpufleet providers sync --json` of 500 instances across 4 accounts (vast 200 in 8 pages,
//! RunPod 150, Lambda 100, AutoDL 50 running ones, each with its snapshot), against loopback
//! servers answering pre-rendered bodies shaped as each provider documents them. Measures the
//! CPU time (user + system) of the gpufleet process alone, through `getrusage(RUSAGE_CHILDREN)`:
//! the goal is at most 0.5 s. The wall time is mostly the pacing to the providers' rate limits
//! (vast's eight pages at one a second), which costs no CPU.
//!
//! `cargo bench --bench providers_sync` (one run; no statistics needed for a budget check).
//! Under `cargo test` the same run checks that every instance syncs and prints the CPU time of
//! the debug build without judging it.

use std::process::Command;
use std::sync::Arc;
use std::thread;
use std::time::Instant;

const TOKEN: &str = "bench-token-0000";

fn serve(route: impl Fn(&str, &str, &str) -> String + Send + Sync + 'static) -> String {
    let server = tiny_http::Server::http("127.0.0.1:0").expect("bind");
    let base = format!("http://{}", server.server_addr().to_ip().expect("ip"));
    let route = Arc::new(route);
    thread::spawn(move || {
        for mut request in server.incoming_requests() {
            let mut body = String::new();
            let _ = request.as_reader().read_to_string(&mut body);
            let url = request.url().to_string();
            let answer = route(request.method().as_str(), &url, &body);
            let header =
                tiny_http::Header::from_bytes(&b"Content-Type"[..], &b"application/json"[..])
                    .expect("header");
            let _ = request.respond(tiny_http::Response::from_string(answer).with_header(header));
        }
    });
    base
}

fn vast_pages() -> Vec<String> {
    (0..8)
        .map(|page| {
            let rows: Vec<String> = (0..25)
                .map(|i| {
                    let id = 5_000_000 + page * 25 + i;
                    format!(
                        r#"{{"id": {id}, "label": "job-{id}", "actual_status": "running", "intended_status": "running",
                           "cur_state": "running", "gpu_name": "RTX 4090", "num_gpus": 2, "gpu_ram": 24576,
                           "ssh_host": "ssh5.vast.ai", "ssh_port": {port}, "public_ipaddr": "203.0.113.7",
                           "ports": {{"22/tcp": [{{"HostIp": "0.0.0.0", "HostPort": "{port}"}}]}},
                           "start_date": 1764633600.5, "dph_base": 0.6, "dph_total": 0.712, "storage_cost": 0.15,
                           "storage_total_cost": 0.0021, "disk_space": 40.0, "image_runtype": "ssh",
                           "machine_id": 1234, "host_id": 99, "geolocation": "Sweden, SE", "reliability2": 0.99}}"#,
                        port = 20_000 + i
                    )
                })
                .collect();
            let next = if page < 7 {
                format!("\"p{}\"", page + 1)
            } else {
                "null".to_string()
            };
            format!(
                r#"{{"success": true, "instances_found": 25, "total_instances": 200, "label_counts": {{}},
                   "next_token": {next}, "instances": [{}]}}"#,
                rows.join(",")
            )
        })
        .collect()
}

fn runpod_body() -> String {
    let pods: Vec<String> = (0..150)
        .map(|i| {
            format!(
                r#"{{"id": "pod{i:07}", "name": "trainer-{i}", "image": "runpod/pytorch:1.0.2", "args": "", "disk": 50,
                   "ports": ["8888/http", "22/tcp"], "env": {{}}, "registry": null, "status": "RUNNING",
                   "actions": ["stop", "restart", "terminate"], "mounts": {{"persistent": {{"size": 20, "path": "/workspace"}}}},
                   "gpu": {{"id": "NVIDIA GeForce RTX 4090", "count": 1}}, "cloud": "SECURE", "dataCenterId": "US-KS-2",
                   "cudaVersion": "12.8", "ssh": {{"proxy": {{"host": "ssh.runpod.io", "port": 22, "username": "pod{i:07}-64411eb2",
                   "command": "ssh pod{i:07}-64411eb2@ssh.runpod.io"}}, "direct": {{"host": "195.26.233.3", "port": {port},
                   "username": "root", "command": "ssh root@195.26.233.3 -p {port}"}}}}, "template": null, "cost": 0.44,
                   "locked": false, "globalNetworking": {{"enabled": false}}, "runtime": {{"uptime": 3600, "ports": []}},
                   "createdAt": "2026-06-01T12:00:00Z", "startedAt": "2026-06-01T12:02:00Z"}}"#,
                port = 30_000 + i
            )
        })
        .collect();
    format!(r#"{{"pods": [{}]}}"#, pods.join(","))
}

fn lambda_body() -> String {
    let rows: Vec<String> = (0..100)
        .map(|i| {
            format!(
                r#"{{"id": "{i:032x}", "name": "lambda-{i}", "ip": "198.51.100.{o}", "private_ip": "10.0.0.{o}",
                   "status": "active", "ssh_key_names": ["laptop"], "file_system_names": [],
                   "region": {{"name": "us-tx-3", "description": "Texas, USA"}},
                   "instance_type": {{"name": "gpu_1x_h100_pcie", "description": "1x H100 (80 GB PCIe)",
                   "gpu_description": "H100 (80 GB PCIe)", "price_cents_per_hour": 249,
                   "specs": {{"vcpus": 26, "memory_gib": 200, "storage_gib": 1024, "gpus": 1}}}},
                   "hostname": "h{i}.cloud.lambdalabs.com", "is_reserved": false}}"#,
                o = i % 250 + 1
            )
        })
        .collect();
    format!(r#"{{"data": [{}]}}"#, rows.join(","))
}

fn autodl_list() -> String {
    let rows: Vec<String> = (0..50)
        .map(|i| {
            format!(
                r#"{{"uuid": "pro-{i:06}", "name": "exp-{i}", "status": "running", "sub_status": "",
                   "status_at": "2026-12-01T10:05:00+08:00", "created_at": "2026-12-01T10:00:00+08:00",
                   "start_mode": "gpu", "charge_type": "payg", "req_gpu_amount": 2, "gpu_spec_uuid": "v-48g",
                   "region_sign": "westDC2", "region_name": "西北B区", "machine_id": "m-{i}",
                   "started_at": {{"Time": "2026-12-01T10:05:00+08:00", "Valid": true}},
                   "stopped_at": {{"Time": "0001-01-01T00:00:00Z", "Valid": false}}}}"#
            )
        })
        .collect();
    format!(
        r#"{{"code": "Success", "msg": "", "request_id": "r", "data": {{"page_index": 1, "page_size": 50,
           "max_page": 1, "result_total": 50, "list": [{}]}}}}"#,
        rows.join(",")
    )
}

const AUTODL_SNAPSHOT: &str = r#"{"code": "Success", "msg": "", "request_id": "r", "data": {
  "ssh_command": "ssh -p 34222 root@connect.westb.seetacloud.com", "proxy_host": "connect.westb.seetacloud.com",
  "ssh_port": 34222, "root_password": "pw", "payg_price": 1970, "origin_pay_price": 3030,
  "snapshot_gpu_alias_name": "NVIDIA RTX PRO 6000", "chip_corp": "nvidia"}}"#;

fn children_cpu_s() -> f64 {
    // SAFETY: getrusage only writes the struct it is given.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut usage) };
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    secs(usage.ru_utime) + secs(usage.ru_stime)
}

fn main() {
    let pages = Arc::new(vast_pages());
    let vast = serve(move |_, url, _| {
        let page = url
            .split("after_token=p")
            .nth(1)
            .and_then(|rest| rest.split('&').next())
            .and_then(|n| n.parse::<usize>().ok())
            .unwrap_or(0);
        pages[page].clone()
    });
    let runpod_answer = runpod_body();
    let runpod = serve(move |_, _, _| runpod_answer.clone());
    let lambda_answer = lambda_body();
    let lambda = serve(move |_, _, _| lambda_answer.clone());
    let list = autodl_list();
    let autodl = serve(move |_, url, _| {
        if url.contains("snapshot") {
            AUTODL_SNAPSHOT.to_string()
        } else {
            list.clone()
        }
    });
    let dir = tempfile::tempdir().expect("temp dir");
    let config = dir.path().join("c.toml");
    let mut text = String::new();
    for (kind, base) in [
        ("vast", &vast),
        ("runpod", &runpod),
        ("lambda", &lambda),
        ("autodl", &autodl),
    ] {
        text.push_str(&format!(
            "[[providers]]\nkind = \"{kind}\"\ntoken_env = \"BENCH_TOKEN\"\nbase_url = \"{base}\"\n\n"
        ));
    }
    std::fs::write(&config, text).expect("config");
    let before = children_cpu_s();
    let started = Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_gpufleet"))
        .arg("--config")
        .arg(&config)
        .args(["providers", "sync", "--json"])
        .env("BENCH_TOKEN", TOKEN)
        .env("GPUFLEET_STATE_DIR", dir.path().join("state"))
        .env("HOME", dir.path())
        .output()
        .expect("run gpufleet");
    let wall_s = started.elapsed().as_secs_f64();
    let cpu_s = children_cpu_s() - before;
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
    let synced: usize = doc["accounts"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|acc| acc["instances"].as_array().map_or(0, Vec::len))
                .sum()
        })
        .unwrap_or(0);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(synced, 500, "every instance synced");
    println!(
        "providers sync: {synced} instances, 4 accounts: {cpu_s:.3} s CPU (goal <= 0.5 s), \
         {wall_s:.1} s wall (pacing)"
    );
    // `cargo bench` passes `--bench` and builds with the release profile: the budget holds
    // there. `cargo test` (CI) runs this same file as a smoke test on a debug build, where the
    // figure is only printed: a debug build's CPU time says nothing about the goal.
    let measured_build = std::env::args().any(|a| a == "--bench");
    if measured_build && cpu_s > 0.5 {
        println!("over the CPU goal");
        std::process::exit(1);
    }
}
