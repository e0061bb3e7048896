//! Watchers on two sites, aggregated for the team as docs/TEAM.md says: each site's real
//! Prometheus (Debian's `prometheus`) scrapes its watcher's `/metrics`, and a team Prometheus
//! run on `contrib/prometheus-federate.yml` (its targets pointed at the two sites) federates
//! them through `/federate` with `match[]`; one query on the team Prometheus returns both
//! watchers' hosts.

use crate::common;
use crate::tmux;

use std::net::TcpListener;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::sshd::Sshd;
use tmux::binary;

const WAIT: Duration = Duration::from_secs(60);

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .expect("bind")
        .local_addr()
        .expect("addr")
        .port()
}

/// A child process killed on drop.
struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// `prometheus` on `config`, in `dir`; its address.
fn prometheus(dir: &Path, name: &str, config: &str) -> (Running, String) {
    let path = dir.join(format!("{name}.yml"));
    std::fs::write(&path, config).expect("prometheus config");
    let port = free_port();
    let child = Command::new("prometheus")
        .arg(format!("--config.file={}", path.display()))
        .arg(format!(
            "--storage.tsdb.path={}",
            dir.join(format!("{name}-tsdb")).display()
        ))
        .arg(format!("--web.listen-address=127.0.0.1:{port}"))
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(dir.join(format!("{name}.log"))).expect("log"))
        .spawn()
        .expect("start prometheus");
    (Running(child), format!("127.0.0.1:{port}"))
}

/// A site: one host behind sshd, its watcher serving `/metrics`, its Prometheus scraping it.
fn site(dir: &Path, name: &str, host: &str, sshd: &Sshd) -> (Running, Running, String) {
    let site = dir.join(name);
    std::fs::create_dir_all(&site).expect("site dir");
    let known_hosts = site.join("known_hosts");
    std::fs::write(&known_hosts, sshd.known_hosts_line("ed25519")).expect("known_hosts");
    let config = site.join("config.toml");
    std::fs::write(
        &config,
        format!(
            "interval_ms = 500\n\n[[hosts]]\nname = \"{host}\"\nssh = \"{}@127.0.0.1:{}\"\nidentity_file = \"{}\"\n",
            sshd.user,
            sshd.port,
            sshd.client_key().display()
        ),
    )
    .expect("config");
    let metrics = format!("127.0.0.1:{}", free_port());
    let watcher = Command::new(binary())
        .args(["watch", "--metrics", &metrics, "--known-hosts"])
        .arg(&known_hosts)
        .arg("--config")
        .arg(&config)
        .env("GPUFLEET_STATE_DIR", site.join("state"))
        .env("SSH_AUTH_SOCK", "")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(site.join("watch.log")).expect("log"))
        .spawn()
        .expect("spawn gpufleet watch");
    let (prom, addr) = prometheus(
        &site,
        "prometheus",
        &format!(
            "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\nscrape_configs:\n  - job_name: gpufleet\n    honor_labels: true\n    static_configs:\n      - targets: [\"{metrics}\"]\n"
        ),
    );
    (Running(watcher), prom, addr)
}

#[test]
fn a_team_prometheus_federating_two_sites_answers_for_both_watchers_hosts() {
    if Command::new("prometheus")
        .arg("--version")
        .output()
        .is_err()
    {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "prometheus is missing (apt-get install prometheus)"
        );
        eprintln!("skipping: prometheus is missing");
        return;
    }
    let Some(east) = Sshd::start() else { return };
    let Some(west) = Sshd::start() else { return };
    let dir = tempfile::tempdir().expect("temp");
    let (_east_watch, _east_prom, east_addr) = site(dir.path(), "east", "gpu-east", &east);
    let (_west_watch, _west_prom, west_addr) = site(dir.path(), "west", "gpu-west", &west);

    // The contrib config as shipped, its two example sites replaced by these, scraping faster.
    let shipped = std::fs::read_to_string("contrib/prometheus-federate.yml").expect("contrib");
    assert!(shipped.contains("metrics_path: /federate") && shipped.contains("match[]"));
    let team_config = shipped
        .replace("prometheus-site-a.internal:9090", &east_addr)
        .replace("prometheus-site-b.internal:9090", &west_addr)
        .replace("scrape_interval: 15s", "scrape_interval: 1s");
    let team_config = format!("global:\n  scrape_timeout: 1s\n{team_config}");
    let (_team, team_addr) = prometheus(dir.path(), "team", &team_config);

    let client = reqwest::blocking::Client::new();
    let deadline = Instant::now() + WAIT;
    let mut last = String::new();
    loop {
        let mut url =
            reqwest::Url::parse(&format!("http://{team_addr}/api/v1/query")).expect("url");
        url.query_pairs_mut()
            .append_pair("query", "gpufleet_host_streaming{job=\"gpufleet\"}");
        if let Ok(doc) = client
            .get(url)
            .send()
            .and_then(|r| r.json::<serde_json::Value>())
        {
            let instances: Vec<String> = doc["data"]["result"]
                .as_array()
                .map(|series| {
                    series
                        .iter()
                        .filter_map(|s| s["metric"]["instance"].as_str().map(str::to_string))
                        .collect()
                })
                .unwrap_or_default();
            if instances.iter().any(|i| i == "gpu-east")
                && instances.iter().any(|i| i == "gpu-west")
            {
                return;
            }
            last = doc.to_string();
        }
        assert!(
            Instant::now() < deadline,
            "the team Prometheus never had both watchers' hosts; last answer: {last}"
        );
        std::thread::sleep(Duration::from_millis(500));
    }
}
