//! `gpufleet release NAME`: stop paying for a host, on the demo fleet's simulated provider with
//! `--demo`, else through its provider with the backup run over SSH.

use std::process::ExitCode;

use crate::cli::GlobalArgs;
use crate::commands::money::{self, MoneyEnv, ReleaseArgs};
use crate::commands::{demo, stdout::Stdout};
use crate::config::Config;
use crate::host_runner::SshRunner;
use crate::telemetry::source::now_ms;

/// Runs the release flow and returns its exit code.
pub fn run(
    args: &GlobalArgs,
    config: &Config,
    interval_ms: u64,
    release: &ReleaseArgs,
) -> anyhow::Result<ExitCode> {
    if args.demo {
        let code = demo::release(
            config,
            args,
            release,
            &mut std::io::stdin().lock(),
            &mut Stdout,
        )?;
        return Ok(ExitCode::from(code));
    }
    let ssh = args.ssh_settings();
    let runner = SshRunner {
        ssh: &ssh,
        config,
        interval_ms,
    };
    let env = MoneyEnv::from_state_dir(&runner, &now_ms)?;
    let code = money::release_command(
        config,
        release,
        &env,
        &mut std::io::stdin().lock(),
        &mut Stdout,
    );
    Ok(ExitCode::from(code))
}
