//! The account balance and its red line, and when a stopped instance's data goes: each
//! provider's balance read against a loopback server that checks the request as the provider
//! documents it and answers with its documented body (vast.ai's "show user", RunPod's
//! `myself { clientBalance currentSpendPerHr }` as `runpodctl user` prints it, AutoDL's
//! `wallet/balance` in 1/1000 CNY); Lambda offers none. `gpufleet cost` (text, `--json`, and in
//! Chinese) says how many hours the balance lasts, the red line crossed, and the date an AutoDL
//! instance shut down loses its data; `/metrics` carries the balance and the time it lasts, checked
//! by the real `promtool`; and `gpufleet watch` alerts a balance under its red line once, to a
//! loopback webhook, and resolves it when the balance is back above. The console's cost panel
//! (`$`) shows the balance line and the deletion date, in English and Chinese, wide and at
//! 80x24.

use crate::cli as support;
use crate::common;
use crate::provider_api as server;
use crate::release_server as hook;
use crate::tmux;

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use gpufleet::config::{self, ProviderAccount};
use gpufleet::providers::{Listing, Stored, store, sync_account};
use gpufleet::release::SendOptions;
use server::{Server, json};
use support::{Home, stdout};

const TOKEN: &str = "tok-balance-SECRET-31";
const DAY_MS: u64 = 24 * 3600 * 1000;

fn account(kind: &str, base_url: &str, red_line: bool) -> ProviderAccount {
    let line = if red_line {
        "min_balance_hours = 24\n"
    } else {
        ""
    };
    let text = format!(
        "[[providers]]\nkind = \"{kind}\"\nname = \"team\"\ntoken_env = \"API_TOKEN\"\n\
         base_url = \"{base_url}\"\n{line}"
    );
    config::parse(&text, Path::new("c.toml")).unwrap().providers[0].clone()
}

fn sync(kind: &str, server: &Server, red_line: bool) -> Listing {
    let env = |name: &str| (name == "API_TOKEN").then(|| TOKEN.to_string());
    let options = SendOptions {
        connect_timeout_ms: 2_000,
        total_timeout_ms: 5_000,
    };
    sync_account(&account(kind, &server.base_url, red_line), &env, &options).unwrap()
}

/// vast.ai's "show user" example body (its API reference), the balance 12.5.
const VAST_USER: &str = r#"{"id": 123, "key_id": 123, "email": "me@example.com", "balance": 12.5,
  "ssh_key": "ssh-ed25519 AAAAC3Nza me", "sid": "s-1"}"#;
const VAST_EMPTY: &str = r#"{"success": true, "next_token": null, "instances": []}"#;

#[test]
fn vast_reads_the_current_user_only_for_an_account_with_a_red_line() {
    let server = Server::start(|seen, _| {
        assert_eq!(seen.method, "GET");
        assert_eq!(
            seen.header("authorization"),
            Some(format!("Bearer {TOKEN}").as_str())
        );
        match seen.path.as_str() {
            "/api/v1/instances/" => json(200, VAST_EMPTY),
            "/api/v0/users/current/" => json(200, VAST_USER),
            other => panic!("unexpected path {other}"),
        }
    });
    let listing = sync("vast", &server, true);
    let balance = listing.balance.expect("a balance");
    assert_eq!((balance.amount, balance.currency.as_str()), (12.5, "USD"));
    assert_eq!(balance.spend_per_hour, None);
    assert_eq!(server.seen().len(), 2);
    // Without `min_balance_hours`, one request: the instances.
    let quiet = Server::start(|_, _| json(200, VAST_EMPTY));
    assert_eq!(sync("vast", &quiet, false).balance, None);
    assert_eq!(quiet.seen().len(), 1);
}

#[test]
fn runpod_asks_graphql_for_the_balance_and_its_own_spend_per_hour() {
    let server = Server::start(|seen, _| {
        assert_eq!(
            seen.header("authorization"),
            Some(format!("Bearer {TOKEN}").as_str())
        );
        match (seen.method.as_str(), seen.path.as_str()) {
            ("GET", "/v2/pods") => json(200, r#"{"pods": []}"#),
            ("POST", "/graphql") => {
                let query = seen.json()["query"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string();
                assert!(
                    query.contains("myself")
                        && query.contains("clientBalance")
                        && query.contains("currentSpendPerHr"),
                    "{query}"
                );
                // The figures of `runpodctl user`'s documented example output.
                json(
                    200,
                    r#"{"data": {"myself": {"clientBalance": 435.85, "currentSpendPerHr": 0.001}}}"#,
                )
            }
            other => panic!("unexpected request {other:?}"),
        }
    });
    let balance = sync("runpod", &server, true).balance.expect("a balance");
    assert_eq!(balance.amount, 435.85);
    assert_eq!(balance.currency, "USD");
    assert_eq!(balance.spend_per_hour, Some(0.001));
}

#[test]
fn autodl_reads_its_wallet_in_thousandths_of_a_yuan_with_a_bare_token() {
    let server = Server::start(|seen, _| {
        assert_eq!(seen.method, "POST");
        assert_eq!(seen.header("authorization"), Some(TOKEN), "no Bearer");
        match seen.path.as_str() {
            "/api/v1/dev/instance/pro/list" => json(
                200,
                r#"{"code": "Success", "msg": "", "data": {"list": [], "page_index": 1,
                    "page_size": 50, "max_page": 1}}"#,
            ),
            "/api/v1/dev/wallet/balance" => json(
                200,
                r#"{"code": "Success", "msg": "", "data": {"assets": 24570, "accumulate": 1000000,
                    "voucher_balance": 5000}}"#,
            ),
            other => panic!("unexpected path {other}"),
        }
    });
    let balance = sync("autodl", &server, true).balance.expect("a balance");
    assert_eq!((balance.amount, balance.currency.as_str()), (24.57, "CNY"));
}

#[test]
fn a_balance_that_cannot_be_read_leaves_the_instances_and_says_why() {
    let server = Server::start(|seen, _| match seen.path.as_str() {
        "/api/v1/instances/" => json(200, VAST_EMPTY),
        _ => json(500, r#"{"error": "down"}"#),
    });
    let listing = sync("vast", &server, true);
    assert_eq!(listing.balance, None);
    assert!(
        listing
            .notes
            .iter()
            .any(|n| n.contains("the balance could not be read") && n.contains("500")),
        "{:?}",
        listing.notes
    );
}

/// An AutoDL account: one instance running (1.97 CNY/h), one shut down 13 days ago (its data
/// goes in two days), the balance 1.00 CNY (half an hour left).
fn autodl_server(stopped_ms: u64) -> Server {
    let stopped_at = gpufleet::utc::rfc3339(stopped_ms);
    Server::start(move |seen, _| match seen.path.as_str() {
        "/api/v1/dev/instance/pro/list" => json(
            200,
            &format!(
                r#"{{"code": "Success", "msg": "", "data": {{"page_index": 1, "page_size": 50,
  "max_page": 1, "list": [
  {{"uuid": "run-1", "name": "train", "status": "running", "req_gpu_amount": 1,
   "started_at": {{"Time": "2026-12-01T10:05:00+08:00", "Valid": true}},
   "stopped_at": {{"Time": "0001-01-01T00:00:00Z", "Valid": false}}}},
  {{"uuid": "off-2", "name": "data", "status": "shutdown", "req_gpu_amount": 1,
   "started_at": {{"Time": "2026-11-01T10:05:00+08:00", "Valid": true}},
   "stopped_at": {{"Time": "{stopped_at}", "Valid": true}}}}]}}}}"#
            ),
        ),
        "/api/v1/dev/instance/pro/snapshot" => json(
            200,
            r#"{"code": "Success", "msg": "", "data": {"proxy_host": "connect.westb.seetacloud.com",
  "ssh_port": 34222, "root_password": "ROOTPW-SECRET-42", "payg_price": 1970,
  "snapshot_gpu_alias_name": "RTX 4090"}}"#,
        ),
        "/api/v1/dev/wallet/balance" => json(
            200,
            r#"{"code": "Success", "msg": "", "data": {"assets": 1000, "accumulate": 0, "voucher_balance": 0}}"#,
        ),
        other => panic!("unexpected path {other}"),
    })
}

/// A time as the deletion line writes it: `2026-12-08 17:43 UTC`.
fn minute(ms: u64) -> String {
    let at = gpufleet::utc::rfc3339(ms);
    format!("{} {} UTC", &at[..10], &at[11..16])
}

fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64
}

#[test]
fn cost_says_the_hours_left_the_red_line_and_when_stopped_data_goes() {
    let stopped_ms = (now_ms() - 13 * DAY_MS) / 1000 * 1000;
    let server = autodl_server(stopped_ms);
    let home = Home::new();
    let config = home.write(
        "c.toml",
        &format!(
            "[[providers]]\nkind = \"autodl\"\ntoken_env = \"AUTODL_TOKEN\"\nbase_url = \"{}\"\n\
             min_balance_hours = 24\n",
            server.base_url
        ),
    );
    let run = |args: &[&str]| {
        let out = home
            .command(args)
            .env("AUTODL_TOKEN", TOKEN)
            .env_remove("LC_ALL")
            .env_remove("LC_MESSAGES")
            .env_remove("LANG")
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let text = format!("{}{}", stdout(&out), support::stderr(&out));
        assert!(!text.contains(TOKEN) && !text.contains("ROOTPW"), "{text}");
        out
    };
    // The inventory listing names the date too, and keeps the balance read.
    let out = run(&["--config", &config, "providers", "sync"]);
    let text = stdout(&out);
    assert!(
        text.contains(&format!(
            "data deleted {} (in 2 days): autodl autodl off-2 (data)",
            minute(stopped_ms + 15 * DAY_MS)
        )),
        "{text}"
    );
    let out = run(&["--config", &config, "providers", "sync", "--json"]);
    let listed: serde_json::Value = serde_json::from_str(&stdout(&out)).expect("json");
    let account = &listed["accounts"][0];
    assert_eq!(account["balance"]["amount"], 1.0, "{account:#}");
    assert_eq!(account["balance"]["currency"], "CNY");
    assert_eq!(account["instances"][1]["stopped_ms"], stopped_ms);

    let out = run(&["--config", &config, "cost"]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "a red line: exit 1\n{text}");
    assert!(
        text.contains(
            "balance: autodl autodl: 1.00 CNY, 0.5 h left at 1.97 CNY/h (the instances' prices), \
             under the red line of 24 h"
        ),
        "{text}"
    );
    let deletes = minute(stopped_ms + 15 * DAY_MS);
    assert!(
        text.contains(&format!(
            "data deleted {deletes} (in 2 days): autodl autodl off-2 (data), shut down {}",
            minute(stopped_ms)
        )),
        "{text}"
    );

    let out = run(&["--config", &config, "cost", "--json"]);
    let value: serde_json::Value = serde_json::from_str(&stdout(&out)).expect("json");
    let unwatched = &value["inventory"]["unwatched"];
    let balance = &unwatched["balances"][0];
    assert_eq!(balance["account"], "autodl", "{balance:#}");
    assert_eq!(balance["amount"], 1.0);
    assert_eq!(balance["currency"], "CNY");
    assert_eq!(balance["burn_per_hour"], 1.97);
    assert_eq!(balance["burn_source"], "inventory");
    assert_eq!(balance["min_hours"], 24.0);
    assert_eq!(balance["below"], true);
    let deletion = &unwatched["data_deletions"][0];
    assert_eq!(deletion["instance_id"], "off-2", "{deletion:#}");
    assert_eq!(deletion["deletes_ms"], stopped_ms + 15 * DAY_MS);
    assert_eq!(deletion["soon"], true);

    let text = stdout(&run(&["--config", &config, "--lang", "zh-CN", "cost"]));
    assert!(
        text.contains("余额：autodl autodl：1.00 CNY，按每小时 1.97 CNY 还能用 0.5 h（按实例价格计算），低于红线 24 h"),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "数据将于 {deletes} 删除（还剩 2 天）：autodl autodl off-2 (data)，{} 关机",
            minute(stopped_ms)
        )),
        "{text}"
    );
}

#[test]
fn a_balance_red_line_on_lambda_says_it_is_not_offered_and_a_bad_line_is_named() {
    let server = Server::start(|_, _| json(200, r#"{"data": []}"#));
    let home = Home::new();
    let config = home.write(
        "c.toml",
        &format!(
            "[[providers]]\nkind = \"lambda\"\ntoken_env = \"LAMBDA_KEY\"\nbase_url = \"{}\"\n\
             min_balance_hours = 12\n",
            server.base_url
        ),
    );
    let out = home
        .command(&["--config", &config, "--lang", "en", "cost"])
        .env("LAMBDA_KEY", TOKEN)
        .output()
        .unwrap();
    assert!(
        stdout(&out).contains("balance not offered by lambda (lambda)"),
        "{}",
        stdout(&out)
    );
    assert_eq!(server.seen().len(), 1, "no balance request to Lambda");

    let bad = home.write(
        "bad.toml",
        "[[providers]]\nkind = \"vast\"\ntoken_env = \"K\"\nmin_balance_hours = 0\n",
    );
    let out = home.run(&["--config", &bad, "--lang", "en", "cost"]);
    assert_eq!(out.status.code(), Some(2));
    let err = support::stderr(&out);
    assert!(
        err.contains("bad.toml:4: providers[0].min_balance_hours:")
            && err.contains("must be a number of hours above 0"),
        "{err}"
    );
}

fn promtool(page: &str) -> (bool, String) {
    let mut child = Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("promtool (Debian package prometheus)");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(page.as_bytes())
        .expect("write");
    let out = child.wait_with_output().expect("promtool");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

#[test]
fn metrics_carry_the_balance_and_the_time_it_lasts_and_promtool_accepts_them() {
    let server = Server::start(|seen, _| match seen.path.as_str() {
        "/v2/pods" => json(200, r#"{"pods": []}"#),
        _ => json(
            200,
            r#"{"data": {"myself": {"clientBalance": 12.5, "currentSpendPerHr": 2.5}}}"#,
        ),
    });
    let account = account("runpod", &server.base_url, true);
    let results = vec![Ok(sync("runpod", &server, true))];
    let now = now_ms();
    let mut stored = Stored::default();
    store::record_results(&mut stored, std::slice::from_ref(&account), &results, now);
    let config = config::Config {
        providers: vec![account],
        ..Default::default()
    };
    let lines = gpufleet::commands::fleet_inventory::unwatched_lines(&config, &stored, now);
    let mut fleet = gpufleet::fleet::Fleet::new(Vec::new(), Default::default(), now);
    fleet.unwatched = lines;
    let page = gpufleet::metrics::render(&fleet);
    assert!(
        page.contains(
            r#"gpufleet_account_balance{account="team",provider="runpod",currency="USD"} 12.5"#
        ),
        "{page}"
    );
    assert!(
        page.contains(
            r#"gpufleet_account_time_left_seconds{account="team",provider="runpod",currency="USD"} 18000"#
        ),
        "{page}"
    );
    let (ok, said) = promtool(&page);
    assert!(ok, "promtool check metrics: {said}\n{page}");
}

#[test]
fn the_watcher_alerts_a_balance_under_its_red_line_and_resolves_it_when_topped_up() {
    let Some(sshd) = common::sshd::Sshd::start() else {
        return;
    };
    let topped_up = Arc::new(AtomicUsize::new(0));
    let seen = Arc::clone(&topped_up);
    // One running instance without SSH at 1 USD/h; credit 2 (2 h), then 100 (100 h).
    let vast = Server::start(move |request, _| match request.path.as_str() {
        "/api/v0/users/current/" => {
            let credit = if seen.load(Ordering::SeqCst) == 0 {
                2.0
            } else {
                100.0
            };
            json(
                200,
                &format!(r#"{{"id": 1, "balance": 0, "credit": {credit}}}"#),
            )
        }
        _ => json(
            200,
            r#"{"success": true, "next_token": null, "instances": [
 {"id": 301, "label": "job", "actual_status": "running", "dph_total": 1.0}]}"#,
        ),
    });
    let webhook = hook::Server::start(vec![hook::answer(200, "{}")]);
    let home = Home::new();
    let config = home.write(
        "c.toml",
        &format!(
            "interval_ms = 500\n\n[[hosts]]\nname = \"h1\"\nssh = \"{}@127.0.0.1:{}\"\n\
             identity_file = \"{}\"\n\n[[providers]]\nkind = \"vast\"\ntoken_env = \"VAST_KEY\"\n\
             base_url = \"{}\"\nmin_balance_hours = 10\nsync_interval_s = 60\n\n\
             [[alerts]]\nkind = \"webhook\"\nurl = \"{}/hook\"\n",
            sshd.user,
            sshd.port,
            sshd.client_key().display(),
            vast.base_url,
            webhook.base_url
        ),
    );
    let log = home.path().join("watch.log");
    let known = sshd.trusted_known_hosts();
    let mut watcher = home
        .command(&[
            "watch",
            "--lang",
            "en",
            "--config",
            &config,
            "--known-hosts",
            known.to_str().expect("utf-8"),
        ])
        .env("VAST_KEY", TOKEN)
        .env("SSH_AUTH_SOCK", "")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&log).expect("log"))
        .spawn()
        .expect("watch");
    let alerts = || -> Vec<serde_json::Value> {
        webhook
            .requests()
            .iter()
            .map(hook::Recorded::json)
            .filter(|a| a["label"] == "balance_low")
            .collect()
    };
    let wait_for = |count: usize, within: Duration| {
        let deadline = Instant::now() + within;
        while alerts().len() < count {
            assert!(
                Instant::now() < deadline,
                "{} balance_low alerts, wanted {count}:\n{}",
                alerts().len(),
                std::fs::read_to_string(&log).unwrap_or_default()
            );
            std::thread::sleep(Duration::from_millis(200));
        }
    };
    wait_for(1, Duration::from_secs(40));
    topped_up.store(1, Ordering::SeqCst);
    // The next sync is a minute after the first.
    wait_for(2, Duration::from_secs(90));
    std::thread::sleep(Duration::from_secs(1));
    let _ = Command::new("kill")
        .args(["-TERM", &watcher.id().to_string()])
        .status();
    let _ = watcher.wait();
    let found = alerts();
    assert_eq!(
        found.len(),
        2,
        "once on crossing, once resolved: {found:#?}"
    );
    assert_eq!(found[0]["state"], "firing", "{:#}", found[0]);
    assert_eq!(found[0]["host"], "vast vast");
    assert_eq!(
        found[0]["summary"],
        "balance: vast vast: 2.00 USD, 2.0 h left at 1.00 USD/h (the instances' prices), \
         under the red line of 10 h"
    );
    assert_eq!(found[1]["state"], "resolved", "{:#}", found[1]);
    let text = std::fs::read_to_string(&log).unwrap_or_default();
    assert!(!text.contains(TOKEN), "token leaked: {text}");
}

#[test]
fn the_cost_panel_shows_the_balance_and_when_stopped_data_goes() {
    let Some(sshd) = common::sshd::Sshd::start() else {
        return;
    };
    let stopped_ms = (now_ms() - 13 * DAY_MS) / 1000 * 1000;
    let server = autodl_server(stopped_ms);
    let dir = tempfile::tempdir().expect("temp");
    let config = dir.path().join("config.toml");
    std::fs::write(
        &config,
        format!(
            "interval_ms = 500\n\n[[hosts]]\nname = \"h200-test\"\nssh = \"{}@127.0.0.1:{}\"\n\
             identity_file = \"{}\"\n\n[[providers]]\nkind = \"autodl\"\n\
             token_env = \"AUTODL_TOKEN\"\nbase_url = \"{}\"\nmin_balance_hours = 24\n",
            sshd.user,
            sshd.port,
            sshd.client_key().display(),
            server.base_url
        ),
    )
    .expect("config");
    let cases: [(&str, u16, u16, &[&str]); 3] = [
        (
            "en",
            200,
            40,
            &[
                "balance: autodl autodl: 1.00 CNY, 0.5 h left at 1.97 CNY/h (the instances' \
                 prices), under the red line of 24 h",
                "(in 2 days): autodl autodl off-2 (data), shut down",
            ],
        ),
        (
            "zh-CN",
            200,
            40,
            &[
                "余额：autodl autodl：1.00 CNY，按每小时 1.97 CNY 还能用 0.5 h（按实例价格计算），低于红线 24 h",
                "（还剩 2 天）：autodl autodl off-2 (data)，",
            ],
        ),
        (
            "en",
            80,
            24,
            &["balance: autodl autodl: 1.00 CNY", "data deleted 20"],
        ),
    ];
    for (lang, width, height, wanted) in cases {
        let command = format!(
            "SSH_AUTH_SOCK= GPUFLEET_STATE_DIR={} AUTODL_TOKEN={TOKEN} {} --lang {lang} \
             --config {} --known-hosts {}; sleep 30",
            dir.path().join("state").display(),
            tmux::binary().display(),
            config.display(),
            sshd.trusted_known_hosts().display()
        );
        let Some(tmux) = tmux::Tmux::start(&command, width, height) else {
            return;
        };
        tmux.wait_for("h200-test", Duration::from_secs(20));
        tmux.keys(&["$"]);
        for needle in wanted {
            let panel = tmux.wait_for(needle, Duration::from_secs(20));
            assert!(!panel.contains("SECRET"), "{panel}");
        }
        tmux.keys(&["q"]);
    }
}
