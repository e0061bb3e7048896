//! The `gpufleet` binary: parse the command line, load config and theme, run the console or a
//! one-shot command.

use std::process::ExitCode;
use std::sync::mpsc;
use std::time::Duration;

use clap::Parser;

use gpufleet::app::model::ModelOptions;
use gpufleet::app::{Model, runtime};
use gpufleet::cli::{Cli, CliCommand};
use gpufleet::config::{self, Config};
use gpufleet::launch::Plan;
use gpufleet::snapshot::{Snapshot, render_table};
use gpufleet::telemetry::source::now_ms;
use gpufleet::theme::Theme;

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("gpufleet: {e:#}");
            ExitCode::from(2)
        }
    }
}

fn load_config(cli: &Cli) -> anyhow::Result<Config> {
    match &cli.global.config {
        Some(path) => Ok(config::load(path)?),
        None => match config::default_path() {
            Some(path) => Ok(config::load_optional(&path)?.unwrap_or_default()),
            None => Ok(Config::default()),
        },
    }
}

fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    let config = load_config(&cli)?;
    let options = ModelOptions {
        interval_ms: cli.global.interval_ms.unwrap_or(config.interval_ms),
        history_minutes: config.history_minutes,
        read_only: cli.global.read_only || config.read_only,
    };
    let plan = match Plan::choose(&cli.global, &cli.hosts, &config, options.interval_ms) {
        Ok(plan) => plan,
        Err(e) => {
            eprintln!("gpufleet: {e}");
            return Ok(ExitCode::from(1));
        }
    };
    match cli.command {
        Some(CliCommand::Snapshot { json }) => {
            let model = plan.read_once(options);
            let snapshot = Snapshot::from_model(&model);
            if json {
                println!("{}", serde_json::to_string_pretty(&snapshot)?);
            } else {
                print!("{}", render_table(&snapshot));
            }
            Ok(if snapshot.all_read() {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(1)
            })
        }
        None => {
            let theme_name = cli
                .global
                .theme
                .clone()
                .or_else(|| config.theme.clone())
                .unwrap_or_else(|| "dark".to_string());
            let theme = Theme::load_named(&theme_name, config::themes_dir().as_deref())?;
            let interval = Duration::from_millis(options.interval_ms);
            let model = Model::new(plan.host_names(), options, now_ms());
            let (sink, events) = mpsc::channel();
            let (sources, prompts) = plan.start(sink.clone(), interval)?;
            runtime::run(model, &theme, events, sink, sources, prompts)?;
            Ok(ExitCode::SUCCESS)
        }
    }
}
