//! `gpufleet check NAME | --local`: the acceptance check of one host (or this machine) from the
//! command line, its progress on stderr and its report on stdout, exit 0/1/2/3.

use std::process::ExitCode;

use crate::check;
use crate::cli::GlobalArgs;
use crate::commands::setup::no_host_named;
use crate::config::Config;
use crate::remote::{link_options, resolve_named};
use crate::telemetry::source::StopFlag;
use crate::words::Words;

/// Runs the check: progress on stderr, the report on stdout, exit 0/1/2/3.
pub fn run_check(
    args: &GlobalArgs,
    config: &Config,
    interval_ms: u64,
    name: Option<&str>,
    flags: &check::ExpectFlags,
    sustain_s: f64,
    json: bool,
) -> ExitCode {
    let could_not_run = |message: String| {
        eprintln!("gpufleet check: {message}");
        ExitCode::from(check::EXIT_COULD_NOT_RUN)
    };
    let (target, base) = match name {
        Some(name) if !args.local => {
            let remote = match resolve_named(&args.ssh_settings(), &[name.to_string()], config) {
                Ok(mut hosts) => match hosts.pop() {
                    Some(h) => h,
                    None => return could_not_run(no_host_named(name).localized()),
                },
                Err(e) => return could_not_run(e.localized()),
            };
            let base = config.host(name).and_then(|h| h.expect.clone());
            (
                check::CheckTarget::Remote(remote, link_options(&args.ssh_settings(), interval_ms)),
                base,
            )
        }
        _ => (check::CheckTarget::Local, None),
    };
    let expect = match check::expect_from_flags(flags, base.as_ref()) {
        Ok(expect) => expect,
        Err(e) => return could_not_run(e.to_string()),
    };
    let opts = check::CheckOptions {
        sustain_s,
        ..check::CheckOptions::default()
    };
    let mut progress = |p: check::CheckProgress| {
        eprintln!("{}", p.line());
    };
    let report = match check::run_check(target, &expect, &opts, &mut progress, &StopFlag::default())
    {
        Ok(report) => report,
        Err(e) => return could_not_run(e.words().localized()),
    };
    // The last report kept under the name this one is saved under.
    let previous = check::storage::load_latest(&report.host).ok().flatten();
    if let Err(e) = check::storage::save(&report) {
        eprintln!(
            "gpufleet check: {}",
            report_not_kept(&e.to_string()).localized()
        );
    }
    if json {
        crate::outln!("{}", check::render_json(&report));
    } else {
        crate::out!("{}", check::render_text(&report, previous.as_ref()));
    }
    ExitCode::from(check::exit_code(&report))
}

/// `gpufleet check [NAME]`: on a simulated host with `--demo`, else as [`run_check`].
pub fn command(
    args: &GlobalArgs,
    config: &Config,
    interval_ms: u64,
    name: Option<&str>,
    flags: &check::ExpectFlags,
    sustain_s: f64,
    json: bool,
) -> ExitCode {
    if args.demo {
        let code = crate::commands::demo::check(args, name, flags, sustain_s, json);
        return ExitCode::from(code);
    }
    run_check(args, config, interval_ms, name, flags, sustain_s, json)
}

/// A check report that ran but could not be stored: `why`.
fn report_not_kept(why: &str) -> Words {
    Words::new("cli.report_not_kept").put("why", why)
}
