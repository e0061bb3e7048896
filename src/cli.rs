//! Command-line arguments.

use crate::remote::SshSettings;
use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

/// `gpufleet --version`: the package version and the git commit it was built from.
pub const VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (commit ",
    env!("GPUFLEET_GIT_COMMIT"),
    ")"
);

/// The error of a command that reached the console's dispatch after being handled before it (a
/// bug: said in the user's words all the same).
pub fn dispatched_twice() -> String {
    rust_i18n::t!("main_words.dispatched_twice").into_owned()
}

#[derive(Debug, Parser)]
#[command(
    name = "gpufleet",
    version = VERSION,
    about = "Watch, triage and pay for rented GPUs from one terminal",
    subcommand_precedence_over_arg = true
)]
pub struct Cli {
    #[command(flatten)]
    pub global: GlobalArgs,

    /// Hosts to watch: `user@host:port`, an `~/.ssh/config` alias, or a host name from the
    /// config. Without any, every host of the config. A subcommand's name is never a host.
    #[arg(value_name = "HOST")]
    pub hosts: Vec<String>,

    /// Record every host event of this console session to FILE (NDJSON; `gpufleet replay FILE`
    /// plays it back). The file is private (0600) and appended to.
    #[arg(long, value_name = "FILE")]
    pub record: Option<PathBuf>,

    #[command(subcommand)]
    pub command: Option<CliCommand>,
}

/// Flags accepted before or after a subcommand; each subcommand's help lists its own options
/// first and these under their own heading.
#[derive(Debug, Args, Clone, Default)]
#[command(next_help_heading = "Global options")]
pub struct GlobalArgs {
    /// A simulated fleet; needs no hosts and no GPU.
    #[arg(long, global = true, conflicts_with = "local")]
    pub demo: bool,

    /// Watch the GPUs of this machine through NVML.
    #[arg(long, global = true)]
    pub local: bool,

    /// Config file (default: the XDG config path, e.g. ~/.config/gpufleet/config.toml).
    #[arg(long, global = true, value_name = "FILE")]
    pub config: Option<PathBuf>,

    /// Colour theme: dark, light, high-contrast, ansi16, or a user theme name.
    #[arg(long, global = true, value_name = "NAME")]
    pub theme: Option<String>,

    /// Language of the interface: en or zh-CN (default: `language` in the config, else the
    /// locale, LC_ALL / LC_MESSAGES / LANG; English when neither says).
    #[arg(long, global = true, value_name = "LANG", value_parser = crate::config::lang::parse_flag)]
    pub lang: Option<crate::config::lang::Lang>,

    /// Refuse every action that changes a host.
    #[arg(long, global = true)]
    pub read_only: bool,

    /// Simulator clock speed (with --demo) or replay speed (with `replay`): 10 runs ten simulated seconds per second.
    #[arg(long, global = true, default_value_t = 1.0, value_name = "N",
          value_parser = crate::cli_values::speed, allow_negative_numbers = true)]
    pub speed: f64,

    /// Seed of the simulated fleet (with --demo).
    #[arg(long, global = true, default_value_t = 7, value_name = "N")]
    pub seed: u64,

    /// Sample interval in milliseconds (overrides the config).
    #[arg(long, global = true, value_name = "MS", value_parser = crate::cli_values::interval_ms)]
    pub interval_ms: Option<u64>,

    /// Trust and record the keys of hosts not yet in known_hosts without asking (a changed key
    /// is still refused).
    #[arg(long, global = true)]
    pub accept_new_host_keys: bool,

    /// Honour `StrictHostKeyChecking no` in the ssh config as OpenSSH does (new host keys added
    /// unchecked, a changed key let through with a warning and passwords turned off); without
    /// this flag such a host is refused.
    #[arg(long, global = true)]
    pub allow_strict_host_key_checking_no: bool,

    /// known_hosts file (default: the ssh config's UserKnownHostsFile, else
    /// ~/.ssh/known_hosts).
    #[arg(long, global = true, value_name = "FILE")]
    pub known_hosts: Option<PathBuf>,

    /// ssh config file for aliases (default ~/.ssh/config).
    #[arg(long, global = true, value_name = "FILE")]
    pub ssh_config: Option<PathBuf>,

    /// More log detail: -v adds debug lines (deliveries, kernel lines), -vv everything. The
    /// console logs to gpufleet.log in the state directory; `watch` logs on stderr.
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    pub verbose: u8,
}

impl GlobalArgs {
    /// The config file this run reads: `--config`, else the default path when that file
    /// exists.
    pub fn config_path(&self) -> Option<std::path::PathBuf> {
        self.config
            .clone()
            .or_else(|| crate::config::default_path().filter(|path| path.exists()))
    }

    /// The SSH settings every connection of this run uses.
    pub fn ssh_settings(&self) -> SshSettings {
        SshSettings {
            ssh_config: self.ssh_config.clone(),
            known_hosts: self.known_hosts.clone(),
            accept_new_host_keys: self.accept_new_host_keys,
            allow_strict_host_key_checking_no: self.allow_strict_host_key_checking_no,
        }
    }
}

#[derive(Debug, Subcommand)]
pub enum CliCommand {
    /// Is this the card I paid for? Identity, health, power, PCIe, usable VRAM, throughput and a
    /// sustained load, on a host (`check NAME`) or this machine (`check --local`).
    /// Exit 0 all pass, 1 a warning, 2 a failure, 3 could not run.
    Check {
        /// A host of the config (or an ssh target / alias); omit with --local. With --demo,
        /// a demo host (default flaky-h200).
        #[arg(value_name = "NAME", required_unless_present_any = ["local", "demo"])]
        name: Option<String>,
        /// Print the report as JSON (schema in the README).
        #[arg(long)]
        json: bool,
        /// Expected GPU model (a substring such as "RTX 4090"); overrides the config's expect.
        #[arg(long, value_name = "MODEL")]
        expect_gpu: Option<String>,
        /// Expected number of GPUs.
        #[arg(long, value_name = "N")]
        expect_count: Option<String>,
        /// Expected VRAM per GPU, GiB.
        #[arg(long, value_name = "GIB")]
        expect_memory_gib: Option<String>,
        /// Lowest acceptable CUDA version of the driver, e.g. 12.1.
        #[arg(long, value_name = "X.Y")]
        min_cuda: Option<String>,
        /// Length of the sustained-load phase in seconds.
        #[arg(long, value_name = "S", default_value_t = 60.0,
              value_parser = crate::cli_values::sustain_s, allow_negative_numbers = true)]
        sustain_s: f64,
    },
    /// Curated runbooks that walk a fix, every command shown before it runs.
    // `playbook`, the former name, still works for existing scripts.
    #[command(alias = "playbook")]
    Runbook {
        #[command(subcommand)]
        action: RunbookAction,
    },
    /// Findings from pasted text: nvidia-smi output, dmesg/journal lines, Python tracebacks.
    /// Read as a stream (bytes that are not UTF-8 become U+FFFD; only the first 64 KiB of a line
    /// and the first 1 GiB of input are read, and the report says so).
    /// Says healthy (only with evidence of working GPUs: an nvidia-smi report, `nvidia-smi -L`),
    /// findings (most severe and root causes first), or nothing recognised (with a hint of what
    /// to paste). Exit 0 healthy, 1 findings, 2 bad input (empty or unreadable), 3 nothing
    /// recognised.
    Diagnose {
        /// The file to read; `-` or nothing reads standard input.
        #[arg(value_name = "FILE")]
        file: Option<PathBuf>,
        /// Print JSON (`{"verdict":"healthy"|"findings"|"unrecognised","findings":[...]}`)
        /// instead of text.
        #[arg(long)]
        json: bool,
    },
    /// What each host cost, how long it was busy or idle while billed, and red lines crossed.
    Cost {
        #[arg(long)]
        json: bool,
        /// Which billing mode (hourly, daily, weekly, monthly) would have been cheapest over
        /// the last 30 days, and the break-even hours per month of each.
        #[arg(long)]
        advice: bool,
    },
    /// Release a host at its provider (stop keeps the disk; terminate deletes it), after its
    /// backup and a typed confirmation.
    Release {
        /// The host's name in the config.
        name: String,
        /// Stop the instance (keeps the disk; the default).
        #[arg(long, conflicts_with = "terminate")]
        stop: bool,
        /// Terminate / release the instance (deletes its disk).
        #[arg(long)]
        terminate: bool,
        /// Show the backup command and the request; run and send nothing.
        #[arg(long)]
        dry_run: bool,
        /// With --dry-run: print the plan as JSON (schema in docs/CLI.md).
        #[arg(long, requires = "dry_run")]
        json: bool,
        /// Skip the typed confirmation (for scripts).
        #[arg(long)]
        yes: bool,
        /// Release even though the backup failed.
        #[arg(long)]
        override_failed_backup: bool,
        /// Release even when the ledger cannot record it (damaged, locked or unwritable); the
        /// entry to add by hand is printed.
        #[arg(long)]
        force: bool,
    },
    /// Restart a host's instance through its provider's API (in a container, `reboot` restarts
    /// nothing), after a typed confirmation; the request is shown first.
    Restart {
        /// The host's name in the config.
        name: String,
        /// Show the request; send nothing.
        #[arg(long)]
        dry_run: bool,
        /// With --dry-run: print the plan as JSON (schema in docs/CLI.md).
        #[arg(long, requires = "dry_run")]
        json: bool,
        /// Skip the typed confirmation (for scripts).
        #[arg(long)]
        yes: bool,
        /// After the provider accepted it, wait until the host went away and answers over SSH
        /// again (3 minutes to go, 15 to come back).
        #[arg(long)]
        wait: bool,
    },
    /// Start a host's stopped instance through its provider's API, after a typed confirmation;
    /// the request is shown first (stopping is `release --stop`).
    Start {
        /// The host's name in the config.
        name: String,
        /// Show the request; send nothing.
        #[arg(long)]
        dry_run: bool,
        /// With --dry-run: print the plan as JSON (schema in docs/CLI.md).
        #[arg(long, requires = "dry_run")]
        json: bool,
        /// Skip the typed confirmation (for scripts).
        #[arg(long)]
        yes: bool,
        /// After the provider accepted it, wait until the host went away and answers over SSH
        /// again (3 minutes to go, 15 to come back).
        #[arg(long)]
        wait: bool,
    },
    /// Alerts: `gpufleet alert test [SINK]` sends a test message to every `[[alerts]]` sink
    /// (or the one named) and says which got through. Exit 0 all delivered, 1 not, 2 setup.
    Alert {
        #[command(subcommand)]
        action: AlertAction,
    },
    /// Cancel HOST's auto-release countdown, from any shell (the console or watcher counting it
    /// down takes the hold within a second; recorded in the audit log), and push its dead-man
    /// switch back by --hours.
    Hold {
        /// The host's name in the config.
        name: String,
        /// Push the host's dead-man switch ([hosts.dead_man]) this many hours ahead.
        #[arg(long, value_name = "N", default_value_t = 2,
              value_parser = clap::value_parser!(u32).range(1..=168))]
        hours: u32,
        /// Disarm the host's dead-man switch: its process is stopped and its files removed.
        #[arg(long, conflicts_with = "hours")]
        disarm: bool,
    },
    /// Watch every configured host with nobody at a terminal: the console's findings, ledgers
    /// and red lines, alerts to the `[[alerts]]` sinks, `/metrics` for Prometheus; structured
    /// log lines on stderr. SIGTERM stops it (exit 0); Ctrl-C (SIGINT) too, with exit 130.
    Watch {
        /// Serve /metrics on ADDRESS:PORT, e.g. 127.0.0.1:9400 (overrides [metrics] listen).
        #[arg(long, value_name = "ADDR")]
        metrics: Option<String>,
        /// Only warnings and errors in the log.
        #[arg(short, long, conflicts_with = "verbose")]
        quiet: bool,
        /// Hosts to watch instead of the config's (as for the console).
        #[arg(value_name = "HOST")]
        hosts: Vec<String>,
        /// Record every host event to FILE (NDJSON, private, appended; see `replay`).
        #[arg(long, value_name = "FILE")]
        record: Option<PathBuf>,
        /// Serve the fleet to consoles (`gpufleet attach`) on ADDRESS:PORT, e.g. 127.0.0.1:9410, to a bearer token (overrides [serve] listen).
        #[arg(long, value_name = "ADDR")]
        serve: Option<String>,
    },
    /// Open the console on the fleet of one or more watchers (`gpufleet watch --serve`): no SSH
    /// session from here, and the watcher keeps the duties (automatic releases, alerts). The
    /// token is read from GPUFLEET_TOKEN or --token-file. Several URLs show their fleets as one.
    Attach {
        /// The watchers' URLs, e.g. http://127.0.0.1:9410.
        #[arg(value_name = "URL", required = true)]
        urls: Vec<String>,
        /// Read the token from FILE (its first line) instead of GPUFLEET_TOKEN.
        #[arg(long, value_name = "FILE")]
        token_file: Option<PathBuf>,
    },
    /// Play a recording (`--record FILE`, or a black-box segment) in the console, read-only:
    /// nothing is sent to any host. `--speed N` plays N times faster. A file that is not a
    /// recording, is damaged or is of a newer format is refused with its file and line (exit 2).
    Replay {
        /// The recording to play.
        #[arg(value_name = "FILE")]
        file: PathBuf,
        /// Record what is played to another FILE (as `--record`).
        #[arg(long, value_name = "FILE")]
        record: Option<PathBuf>,
    },
    /// Write an incident bundle for HOST: a Markdown report (what happened and when, which GPU,
    /// the evidence lines, the last acceptance check, runbook steps from the audit log, hours
    /// and money billed while broken, a ticket text in English and Simplified Chinese), its
    /// JSON twin, the samples as CSV, the kernel lines, `nvidia-smi -q` as taken at the first
    /// fault, and the recording of the window. Read
    /// from the black box (what the console and `watch` kept), from a `--record` file with
    /// `--from FILE`, or made by a watcher from what it kept with `--from URL` (its token from
    /// GPUFLEET_TOKEN or `--token-file`). Exit 0 written, 1 nothing recorded for HOST in the
    /// window, 2 an error.
    Report {
        /// The host's name (as in the config or the console).
        #[arg(value_name = "HOST")]
        name: String,
        /// How far back from the newest event recorded: `90m`, `2h`, `1d`, `45s`.
        #[arg(long, value_name = "DURATION", default_value = "2h",
              value_parser = crate::cli_values::duration_ms)]
        since: u64,
        /// Where to write the bundle's folder (default: the current directory).
        #[arg(long, value_name = "DIR")]
        out: Option<PathBuf>,
        /// Read this recording instead of the black box; or, given a watcher's URL
        /// (`http://…`, `https://…`), have that watcher make the bundle from what it recorded
        /// (repeat for several: the first that serves HOST makes it).
        #[arg(long, value_name = "FILE|URL")]
        from: Vec<String>,
        /// With --from URL: read the token from FILE instead of GPUFLEET_TOKEN.
        #[arg(long, value_name = "FILE", requires = "from")]
        token_file: Option<PathBuf>,
    },
    /// The config file: `config init` writes a commented one at the XDG path (never over an
    /// existing file), `config path` prints where it is, `config check` validates it.
    Config {
        #[command(subcommand)]
        action: ConfigAction,
    },
    /// The audit log: every action taken on a host (runbook steps, backups, releases, holds,
    /// host keys accepted), oldest first. Exit 0, or 2 when the log cannot be read.
    Audit {
        /// Print JSON (schema in docs/CLI.md) instead of text.
        #[arg(long)]
        json: bool,
        /// Only the newest N entries.
        #[arg(long, value_name = "N", value_parser = crate::cli_values::at_least_one)]
        limit: Option<usize>,
    },
    /// Print a shell completion script: `gpufleet completions bash > /etc/bash_completion.d/gpufleet`.
    Completions {
        /// bash, zsh, fish, elvish or powershell.
        #[arg(value_name = "SHELL")]
        shell: clap_complete::Shell,
    },
    /// Print the man page (roff): `gpufleet man > gpufleet.1`, or `gpufleet man | man -l -`.
    Man,
    /// Provider accounts (`[[providers]]` in the config): `providers sync` lists every
    /// account's instances (state, GPUs, SSH, price, start) and keeps them in the state
    /// directory (exit 0 all synced, 1 an account failed: its last inventory shown with its
    /// age, 2 nothing to sync or the inventory cannot be stored); `providers import [--write]`
    /// shows (and appends to the config) the running instances that are not hosts yet.
    Providers {
        #[command(subcommand)]
        action: crate::commands::providers::ProvidersAction,
    },
    /// The VRAM a fine-tuning run needs per GPU (weights, gradients, optimizer state,
    /// activations) and which GPU models hold it by the 70 % rule (weights + gradients +
    /// optimizer ≤ 70 % of VRAM), with the config's hosts and prices marked. Formulas and
    /// sources: docs/FIT.md. Exit 0, or 2 for a value that cannot be read.
    Fit {
        /// Parameter count: 7B, 1.5B, 350M or a plain number.
        #[arg(long, value_name = "N")]
        params: String,
        /// full, lora or qlora.
        #[arg(long, default_value = "full",
              value_parser = clap::builder::PossibleValuesParser::new(["full", "lora", "qlora"]))]
        method: String,
        /// bf16, fp16 or fp32.
        #[arg(long, default_value = "bf16",
              value_parser = clap::builder::PossibleValuesParser::new(["bf16", "fp16", "fp32"]))]
        precision: String,
        /// adamw, adamw8bit or sgd (with momentum).
        #[arg(long, default_value = "adamw",
              value_parser = clap::builder::PossibleValuesParser::new(["adamw", "adamw8bit", "sgd"]))]
        optimizer: String,
        /// Sequence length, for the activations (with --batch).
        #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=10_000_000))]
        seq: Option<u64>,
        /// Micro-batch size per GPU, for the activations (with --seq).
        #[arg(long, value_name = "B", value_parser = clap::value_parser!(u64).range(1..=100_000))]
        batch: Option<u64>,
        /// Gradient (activation) checkpointing at every layer: each layer keeps only its input
        /// and one layer is recomputed at a time.
        #[arg(long)]
        gradient_checkpointing: bool,
        /// GPUs the run is spread over with ZeRO-3 / FSDP full sharding of weights, gradients
        /// and optimizer state; the figures are per GPU.
        #[arg(long, value_name = "N", default_value_t = 1,
              value_parser = clap::value_parser!(u32).range(1..=65_536))]
        gpus: u32,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Read every host once, print a table (or JSON) and exit; non-zero if a host could not be read.
    Snapshot {
        /// Print JSON (schema in the README) instead of a table.
        #[arg(long)]
        json: bool,
        /// Hosts to read instead of the config's (as for the console).
        #[arg(value_name = "HOST")]
        hosts: Vec<String>,
        /// Read the fleet of the watcher at URL (`watch --serve`) instead; repeat for several.
        #[arg(long, value_name = "URL", conflicts_with = "hosts")]
        from: Vec<String>,
        /// With --from: read the token from FILE instead of GPUFLEET_TOKEN.
        #[arg(long, value_name = "FILE", requires = "from")]
        token_file: Option<PathBuf>,
    },
}

#[derive(Debug, Subcommand)]
pub enum ConfigAction {
    /// Write a commented config (directory 0700, file 0600). Exit 0 written, 1 a file is
    /// already there (left as it is), 2 could not write.
    Init,
    /// Print the config file's path (`--config`, else the XDG path), whether or not it exists.
    Path,
    /// Load and validate the config: `ok: N hosts`, exit 0; else the file, line and key of the
    /// problem, exit 2.
    Check,
}

#[derive(Debug, Subcommand)]
pub enum AlertAction {
    /// Send a test alert to every sink, or to the sink named.
    Test {
        /// A sink's `name` (or its `kind` when it has no name).
        sink: Option<String>,
    },
}

#[derive(Debug, Subcommand)]
pub enum RunbookAction {
    /// The runbooks there are, and which findings each fixes.
    List {
        /// Print JSON (schema in docs/CLI.md) instead of text.
        #[arg(long)]
        json: bool,
    },
    /// One runbook's steps, commands, danger levels and checks.
    Show {
        id: String,
        /// Print JSON (schema in docs/CLI.md) instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Run a runbook on a host (`--host NAME`) or on this machine (`--local`).
    Run {
        id: String,
        #[arg(long, value_name = "NAME", conflicts_with = "local")]
        host: Option<String>,
        /// A parameter, e.g. `--param watts=250` (repeatable).
        #[arg(long, value_name = "KEY=VALUE")]
        param: Vec<String>,
        /// The GPU index to act on.
        #[arg(long, value_name = "N")]
        gpu: Option<u32>,
        /// Show every step and command; run only the reads before the first change.
        #[arg(long)]
        dry_run: bool,
        /// Confirm change and disruptive steps without asking.
        #[arg(long)]
        yes: bool,
    },
    /// Restore the newest change a runbook made on a host (e.g. the previous power limit).
    Undo {
        #[arg(long, value_name = "NAME", conflicts_with = "local")]
        host: Option<String>,
        #[arg(long)]
        dry_run: bool,
        #[arg(long)]
        yes: bool,
    },
}
