//! Command-line arguments.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

#[derive(Debug, Parser)]
#[command(
    name = "gpufleet",
    version,
    about = "Watch, triage and pay for rented GPUs from one terminal"
)]
pub struct Cli {
    #[command(flatten)]
    pub global: GlobalArgs,

    /// Hosts to watch: `user@host:port`, an `~/.ssh/config` alias, or a host name from the
    /// config. Without any, every host of the config.
    #[arg(value_name = "HOST")]
    pub hosts: Vec<String>,

    #[command(subcommand)]
    pub command: Option<CliCommand>,
}

/// Flags accepted before or after a subcommand.
#[derive(Debug, Args, Clone, Default)]
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

    /// Refuse every action that changes a host.
    #[arg(long, global = true)]
    pub read_only: bool,

    /// Simulator clock speed (with --demo): 10 runs ten simulated seconds per second.
    #[arg(long, global = true, default_value_t = 1.0, value_name = "N")]
    pub speed: f64,

    /// Seed of the simulated fleet (with --demo).
    #[arg(long, global = true, default_value_t = 7, value_name = "N")]
    pub seed: u64,

    /// Sample interval in milliseconds (overrides the config).
    #[arg(long, global = true, value_name = "MS")]
    pub interval_ms: Option<u64>,

    /// Trust and record the keys of hosts not yet in known_hosts without asking (a changed key
    /// is still refused).
    #[arg(long, global = true)]
    pub accept_new_host_keys: bool,

    /// known_hosts file (default ~/.ssh/known_hosts).
    #[arg(long, global = true, value_name = "FILE")]
    pub known_hosts: Option<PathBuf>,

    /// ssh config file for aliases (default ~/.ssh/config).
    #[arg(long, global = true, value_name = "FILE")]
    pub ssh_config: Option<PathBuf>,
}

#[derive(Debug, Subcommand)]
pub enum CliCommand {
    /// Findings from pasted text: nvidia-smi output, dmesg/journal lines, Python tracebacks.
    /// Exit 0 healthy, 1 something found, 2 bad input.
    Diagnose {
        /// The file to read; `-` or nothing reads standard input.
        #[arg(value_name = "FILE")]
        file: Option<PathBuf>,
        /// Print JSON (`{"findings":[...]}`) instead of text.
        #[arg(long)]
        json: bool,
    },
    /// What each host cost, how long it was busy or idle while billed, and red lines crossed.
    Cost {
        #[arg(long)]
        json: bool,
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
        /// Skip the typed confirmation (for scripts).
        #[arg(long)]
        yes: bool,
        /// Release even though the backup failed.
        #[arg(long)]
        override_failed_backup: bool,
    },
    /// Read every host once, print a table (or JSON) and exit; non-zero if a host could not be read.
    Snapshot {
        /// Print JSON (schema in the README) instead of a table.
        #[arg(long)]
        json: bool,
    },
}
