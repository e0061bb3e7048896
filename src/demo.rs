//! The demo fleet's money and operations: what each simulated host costs and how it is
//! released, the simulated clock one-shot commands run forward, and where a demo's release and
//! runbook records go (a private temporary directory, never the user's state directory).
//!
//! Prices, mixed currencies as renters pay them: the 8x H100 at Lambda's $2.99 per GPU-hour,
//! the A100 and T4 at marketplace rates, the 4090 and the unreachable box on AutoDL in yuan.
//! Red lines: train-h100x8 has a deliberately small budget of $0.25, crossed 38 simulated
//! seconds in (4 s of wall time at `--speed 10`); idle-a100 sits idle and billing from the
//! start and crosses the idle red line after the configured `idle_minutes` (10 by default: a
//! minute at `--speed 10`).
//!
//! Billing modes (`cost --advice --demo`): every demo host also sells by the day, week and month,
//! in the shape of AutoDL's offers: 10 %, 20 % and 35 % under the hourly rate ([`PERIOD_SHARES`]).

use std::path::Path;

use crate::audit::AuditLog;
use crate::config::{BillingPrices, Config, HostConfig, Provider, ReleaseConfig, SshTarget};
use crate::cost::LedgerStore;
use crate::fleet::Fleet;
use crate::fleet::money::MoneyOptions;
use crate::release::HostRunner;
use crate::telemetry::TimestampMs;
use crate::telemetry::sim::{self, SharedSim};

/// The environment variable the demo's release sections name for their token; only the demo's
/// own lookup ([`demo_env`]) answers it, never the process environment.
pub const DEMO_TOKEN_ENV: &str = "GPUFLEET_DEMO_TOKEN";
/// The token the simulated provider is "sent" (it is shown redacted like any other).
const DEMO_TOKEN: &str = "simulated-demo-token";

/// How far one-shot demo commands (`cost`, `release`, `runbook`) run the scenario before they
/// answer: past flaky-h200 falling off the bus (at 60 s) and train-h100x8's red line (38 s).
pub const PREVIEW_MS: u64 = 90_000;

/// The host `check --demo` checks when none is named: the demo's H200, whose real captures the
/// simulated check replays.
pub const CHECK_HOST: &str = "flaky-h200";

/// What a day, a week and a month cost on a demo host, as shares of the hourly rate for as
/// long.
pub const PERIOD_SHARES: [f64; 3] = [0.90, 0.80, 0.65];

/// The demo host's day, week and month prices, rounded to cents.
fn period_prices(price_per_hour: f64) -> BillingPrices {
    let price =
        |hours: f64, share: f64| Some((price_per_hour * hours * share * 100.0).round() / 100.0);
    BillingPrices {
        daily: price(24.0, PERIOD_SHARES[0]),
        weekly: price(168.0, PERIOD_SHARES[1]),
        monthly: price(720.0, PERIOD_SHARES[2]),
    }
}

/// One demo host's money and release settings.
struct DemoHost {
    name: &'static str,
    price_per_hour: f64,
    currency: &'static str,
    max_spend: Option<f64>,
    provider: Provider,
    instance_id: &'static str,
    backup: Option<&'static [&'static str]>,
}

const HOSTS: [DemoHost; 11] = [
    DemoHost {
        name: "train-h100x8",
        price_per_hour: 23.92,
        currency: "USD",
        max_spend: Some(0.25),
        provider: Provider::Lambda,
        instance_id: "0920582c7ff041399e34823a0be62549",
        backup: None,
    },
    DemoHost {
        name: "idle-a100",
        price_per_hour: 1.10,
        currency: "USD",
        max_spend: None,
        provider: Provider::Vast,
        instance_id: "14523871",
        backup: None,
    },
    DemoHost {
        name: "hot-4090",
        price_per_hour: 1.98,
        currency: "CNY",
        max_spend: None,
        provider: Provider::AutoDl,
        instance_id: "b3a1c2d4e5-9f8e7d6c",
        backup: None,
    },
    DemoHost {
        name: "leaky-t4",
        price_per_hour: 0.35,
        currency: "USD",
        max_spend: None,
        provider: Provider::RunPod,
        instance_id: "x7k2m9q4r1a6bc",
        backup: None,
    },
    DemoHost {
        name: "flaky-h200",
        price_per_hour: 3.99,
        currency: "USD",
        max_spend: None,
        provider: Provider::RunPod,
        instance_id: "h2q8w3e5r7t9yu",
        backup: Some(&[
            "tar",
            "-czf",
            "/workspace/checkpoints.tar.gz",
            "/workspace/checkpoints",
        ]),
    },
    DemoHost {
        name: "unreachable-box",
        price_per_hour: 4.58,
        currency: "CNY",
        max_spend: None,
        provider: Provider::AutoDl,
        instance_id: "5c6d7e8f9a-1b2c3d4e",
        backup: None,
    },
    DemoHost {
        name: "ascend-910b",
        price_per_hour: 62.0,
        currency: "CNY",
        max_spend: None,
        provider: Provider::AutoDl,
        instance_id: "7a8b9c0d1e-2f3a4b5c",
        backup: None,
    },
    DemoHost {
        name: "xpu-flex170",
        price_per_hour: 9.8,
        currency: "CNY",
        max_spend: None,
        provider: Provider::AutoDl,
        instance_id: "3e4f5a6b7c-8d9e0f1a",
        backup: None,
    },
    DemoHost {
        name: "mthreads-s80",
        price_per_hour: 1.2,
        currency: "CNY",
        max_spend: None,
        provider: Provider::AutoDl,
        instance_id: "4f5a6b7c8d-9e0f1a2b",
        backup: None,
    },
    DemoHost {
        name: "cambricon-mlu",
        price_per_hour: 9.8,
        currency: "CNY",
        max_spend: None,
        provider: Provider::AutoDl,
        instance_id: "9c0d1e2f3a-4b5c6d7e",
        backup: None,
    },
    DemoHost {
        name: "mi300x-amd",
        price_per_hour: 2.49,
        currency: "USD",
        max_spend: None,
        provider: Provider::RunPod,
        instance_id: "m3x0a7d9r2k4pz",
        backup: None,
    },
];

/// The user's settings (idle thresholds, read-only) with the demo's hosts in place of the
/// configured ones; no fleet budget, since the user's would be in another fleet's money.
pub fn demo_config(config: &Config) -> Config {
    Config {
        hosts: HOSTS.iter().map(host_config).collect(),
        budget: None,
        ..config.clone()
    }
}

fn host_config(host: &DemoHost) -> HostConfig {
    HostConfig {
        name: host.name.to_string(),
        // Never dialled: the demo's hosts are simulated, and nothing resolves this name.
        ssh: SshTarget {
            user: Some("root".to_string()),
            host: format!("{}.demo.invalid", host.name),
            port: None,
        },
        identity_file: None,
        password_env: None,
        price_per_hour: Some(host.price_per_hour),
        currency: Some(host.currency.to_string()),
        billing_started: None,
        backup: host
            .backup
            .map(|argv| argv.iter().map(|w| w.to_string()).collect()),
        auto_release: false,
        countdown_s: None,
        max_spend: host.max_spend,
        max_hours: None,
        max_run_hours: None,
        prices: Some(period_prices(host.price_per_hour)),
        price_since_ms: None,
        expect: None,
        jobs: Vec::new(),
        dead_man: None,
        release: Some(ReleaseConfig {
            provider: host.provider,
            instance_id: Some(host.instance_id.to_string()),
            token_env: Some(DEMO_TOKEN_ENV.to_string()),
            token_file: None,
            base_url: None,
            command: None,
            restart_command: None,
            start_command: None,
            restart: None,
        }),
    }
}

/// The demo fleet's money: its prices and red lines, every ledger billing from `started_ms`
/// (the demo's start, on the simulated clock), nothing stored.
pub fn money_options(config: &Config, started_ms: TimestampMs) -> MoneyOptions {
    let mut options = MoneyOptions::from_config(&demo_config(config));
    for host in &mut options.hosts {
        host.billing_started_ms = Some(started_ms);
    }
    options.persist = false;
    options
}

/// The token lookup of demo releases: the demo's own variable only.
pub fn demo_env(name: &str) -> Option<String> {
    (name == DEMO_TOKEN_ENV).then(|| DEMO_TOKEN.to_string())
}

/// Plays the scenario from its start to `scenario_ms` into `fleet`, one tick at a time, with the
/// findings and the money ticked every simulated second as the console ticks them: what the
/// console would show that far into the demo, without waiting for it.
pub fn run_forward(sim: &SharedSim, fleet: &mut Fleet, started_ms: TimestampMs, scenario_ms: u64) {
    let mut sim = sim::lock(sim);
    let step_ms = sim.interval_ms().max(1);
    let mut at_ms = sim.scenario_ms();
    while at_ms <= scenario_ms {
        sim.run_to(at_ms, started_ms, &mut |host, event| {
            fleet.apply(host, event);
        });
        fleet.advance_clock(started_ms + at_ms);
        fleet.refresh_findings();
        // Saves and auto-releases are the console's; the demo stores and arms none.
        let _ = fleet.money_tick();
        at_ms += step_ms;
    }
}

/// Runs a release's backup (and the `ssh` provider's shutdown) on a simulated host.
pub struct SimHostRunner {
    pub sim: SharedSim,
}

impl HostRunner for SimHostRunner {
    fn run(
        &self,
        host: &str,
        argv: &[String],
        on_line: &mut dyn FnMut(&str),
    ) -> Result<Option<i32>, String> {
        let answer = sim::lock(&self.sim).run_command(host, argv)?;
        answer.lines.iter().for_each(|line| on_line(line));
        Ok(answer.exit_status)
    }
}

/// Where a demo's ledger and audit log live: a private temporary directory, removed when the
/// process ends, so a demo never writes to (or reads from) the user's state directory.
pub struct Scratch {
    dir: tempfile::TempDir,
}

impl Scratch {
    pub fn new() -> std::io::Result<Self> {
        Ok(Self {
            dir: tempfile::Builder::new()
                .prefix("gpufleet-demo-")
                .tempdir()?,
        })
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    pub fn store(&self) -> LedgerStore {
        LedgerStore::at(self.dir.path().join(crate::cost::LEDGER_FILE))
    }

    pub fn audit(&self) -> AuditLog {
        AuditLog::at(self.dir.path().join(crate::audit::AUDIT_FILE))
    }
}
