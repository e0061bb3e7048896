//! `gpufleet cost [--advice] [--json]`: the ledger per host and for the fleet (with the
//! providers' inventory's own lines), or advice on what the fleet costs; on the demo fleet, its
//! simulated ledger.

use std::process::ExitCode;

use crate::cli::GlobalArgs;
use crate::commands::{cost_advice, cost_inventory, demo, money};
use crate::config::Config;
use crate::telemetry::source::now_ms;

/// Prints the ledger or the advice; `user_config` is the config before the inventory joined it.
pub fn run(
    args: &GlobalArgs,
    config: &Config,
    user_config: &Config,
    json: bool,
    advice: bool,
) -> anyhow::Result<ExitCode> {
    let (text, code) = if advice && args.demo {
        demo::cost_advice(config, args, json)?
    } else if advice {
        cost_advice::advice_command(config, json, now_ms())?
    } else if args.demo {
        demo::cost(config, args, json)?
    } else {
        let (text, code) = money::cost_command(config, json, now_ms())?;
        cost_inventory::extend(
            user_config,
            text,
            code,
            json,
            &now_ms,
            &mut std::io::stderr(),
        )
    };
    crate::out!("{text}");
    Ok(ExitCode::from(code))
}
