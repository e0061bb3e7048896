//! `gpufleet providers import [--write]`: after a sync against a loopback vast server, the
//! running instance with SSH becomes a `[[hosts]]` table (name from its label, ssh, price,
//! billing start, a release naming the token's variable, never the token), shown as a diff and
//! appended only with `--write`, the file's comments and layout kept; stopped instances and
//! instances already configured are not added, and a second import adds nothing.

use crate::cli as support;
use crate::provider_api as server;

use server::{Server, json};
use support::{Home, stderr, stdout};

const TOKEN: &str = "vast-KEY-import-4242";

const ROWS: &str = r#"{"success": true, "next_token": null, "instances": [
 {"id": 101, "label": "train a", "actual_status": "running", "gpu_name": "RTX 4090", "num_gpus": 1,
  "ssh_host": "ssh5.vast.ai", "ssh_port": 10600, "start_date": 1764633600, "dph_total": 0.712},
 {"id": 102, "label": "idle", "actual_status": "stopped", "ssh_host": "ssh7.vast.ai", "ssh_port": 20400,
  "dph_total": 0.004},
 {"id": 103, "label": "known", "actual_status": "running", "ssh_host": "ssh8.vast.ai", "ssh_port": 30000,
  "dph_total": 1.5}]}"#;

#[test]
fn import_shows_then_appends_new_running_hosts_keeping_the_file() {
    let server = Server::start(|_, _| json(200, ROWS));
    let home = Home::new();
    let original = format!(
        "# my fleet, by hand\ninterval_ms = 1000  # once a second\n\n\
         [[hosts]]\nname = \"known\"   # already here\nssh = \"root@ssh8.vast.ai:30000\"\n\n\
         [[providers]]\nkind = \"vast\"\ntoken_env = \"VAST_KEY\"\nbase_url = \"{}\"\n",
        server.base_url
    );
    let config = home.write("c.toml", &original);
    let run = |args: &[&str]| {
        let mut all = vec!["--config", config.as_str(), "providers"];
        all.extend_from_slice(args);
        let out = home.command(&all).env("VAST_KEY", TOKEN).output().unwrap();
        assert!(!stdout(&out).contains(TOKEN) && !stderr(&out).contains(TOKEN));
        out
    };
    assert_eq!(run(&["sync"]).status.code(), Some(0));

    let shown = run(&["import"]);
    assert_eq!(shown.status.code(), Some(0), "{}", stderr(&shown));
    let diff = stdout(&shown);
    assert!(diff.contains("+name = \"train-a\""), "{diff}");
    assert!(
        diff.contains("+ssh = \"root@ssh5.vast.ai:10600\""),
        "{diff}"
    );
    assert!(diff.contains("run with --write"), "{diff}");
    let removed = diff
        .lines()
        .filter(|l| l.starts_with('-') && !l.starts_with("---"));
    assert_eq!(removed.count(), 0, "an import only adds: {diff}");
    assert!(
        !diff.contains("idle") && !diff.contains("ssh8"),
        "stopped and known stay out: {diff}"
    );
    assert_eq!(
        std::fs::read_to_string(&config).unwrap(),
        original,
        "nothing written without --write"
    );

    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&config, std::fs::Permissions::from_mode(0o640)).unwrap();
    let written = run(&["import", "--write"]);
    assert_eq!(written.status.code(), Some(0), "{}", stderr(&written));
    let text = std::fs::read_to_string(&config).unwrap();
    // Only lines added: every line of the original is still there, comments and all, in order.
    let mut kept = text.lines();
    for line in original.lines() {
        assert!(kept.any(|l| l == line), "lost {line:?}:\n{text}");
    }
    assert!(!text.contains(TOKEN));
    let mode = std::fs::metadata(&config).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o640, "the file keeps its mode");
    let parsed = gpufleet::config::parse(&text, std::path::Path::new(&config)).unwrap();
    let host = parsed.host("train-a").expect("the imported host");
    assert_eq!(host.ssh.to_string(), "root@ssh5.vast.ai:10600");
    assert_eq!(
        (host.price_per_hour, host.currency.as_deref()),
        (Some(0.712), Some("USD"))
    );
    assert_eq!(
        host.billing_started.as_ref().map(|t| t.unix_ms()),
        Some(1_764_633_600_000)
    );
    let release = host.release.as_ref().unwrap();
    assert_eq!(release.instance_id.as_deref(), Some("101"));
    assert_eq!(release.token_env.as_deref(), Some("VAST_KEY"));

    let again = run(&["import", "--write"]);
    assert!(
        stdout(&again).contains("nothing to import"),
        "{}",
        stdout(&again)
    );
    assert_eq!(std::fs::read_to_string(&config).unwrap(), text);
}
