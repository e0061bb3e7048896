//! Commands "run" on a simulated demo host: each argv gets the answer the simulated host would
//! give at its current scenario time (a lost GPU's nvidia-smi error, the Xid lines in dmesg, a
//! new boot id after a reboot). Nothing runs anywhere; runbooks, checks and releases of the demo
//! fleet come here instead of to a shell.

use rust_i18n::t;

use super::Simulator;
use super::gpu::SimGpu;
use super::host::SimHost;
use crate::telemetry::GpuSample;

/// nvidia-smi's exit status when the GPU is lost (its man page, RETURN VALUE 15).
const SMI_GPU_LOST: i32 = 15;
/// nvidia-smi's exit status for a bad argument, such as an unknown field (RETURN VALUE 2).
const SMI_INVALID_ARGUMENT: i32 = 2;
/// nvidia-smi's exit status when the GPU asked for does not exist (RETURN VALUE 6).
const SMI_NOT_FOUND: i32 = 6;
/// What POSIX shells exit with for a command they cannot find.
const NOT_FOUND: i32 = 127;

/// What a simulated command printed (stdout and stderr merged) and how it ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SimAnswer {
    pub lines: Vec<String>,
    /// `None` when the connection dropped (a reboot).
    pub exit_status: Option<i32>,
}

impl SimAnswer {
    fn ok(lines: Vec<String>) -> Self {
        Self {
            lines,
            exit_status: Some(0),
        }
    }

    fn failed(status: i32, line: String) -> Self {
        Self {
            lines: vec![line],
            exit_status: Some(status),
        }
    }
}

/// What a simulated host is, for a caller that replays a real capture of the same card.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SimHostFacts {
    /// nvidia-smi's name of its first GPU.
    pub card: String,
    /// Its UUID (`GPU-...`).
    pub uuid: String,
    pub gpu_count: usize,
    pub gpu_lost: bool,
}

impl Simulator {
    /// The host's card and state now; `Err` as for [`Simulator::run_command`].
    pub fn host_facts(&self, host: &str) -> Result<SimHostFacts, String> {
        let host = self
            .hosts
            .iter()
            .find(|h| h.name == host)
            .ok_or_else(|| t!("demo_shell.not_a_host", host = host).into_owned())?;
        host.reachable()?;
        let first = host.gpus.first();
        Ok(SimHostFacts {
            card: first.map(|g| g.spec.name.to_string()).unwrap_or_default(),
            uuid: first.map(|g| g.uuid.clone()).unwrap_or_default(),
            gpu_count: host.gpus.len(),
            gpu_lost: host.gpu_lost(),
        })
    }

    /// Runs `argv` on the simulated host `host` at the scenario's current time. `Err` is why
    /// the host could not be reached (no such demo host, or one that never answers).
    pub fn run_command(&mut self, host: &str, argv: &[String]) -> Result<SimAnswer, String> {
        let host = self
            .hosts
            .iter_mut()
            .find(|h| h.name == host)
            .ok_or_else(|| t!("demo_shell.not_a_host", host = host).into_owned())?;
        host.reachable()?;
        let argv = match argv {
            // The demo hosts log in as root; `sudo -n` changes nothing there.
            [sudo, flag, rest @ ..] if sudo == "sudo" && flag == "-n" => rest,
            _ => argv,
        };
        let words: Vec<&str> = argv.iter().map(String::as_str).collect();
        Ok(match words.as_slice() {
            ["id", "-u"] => SimAnswer::ok(vec!["0".to_string()]),
            ["cat", "/proc/sys/kernel/random/boot_id"] => SimAnswer::ok(vec![host.boot_id()]),
            ["dmesg", ..] => SimAnswer::ok(dmesg(host)),
            ["reboot"] => {
                host.reboot();
                SimAnswer {
                    lines: Vec::new(),
                    exit_status: None,
                }
            }
            // The demo's backup before a release (what the demo config gives as `backup`).
            ["tar", "-czf", ..] => SimAnswer::ok(Vec::new()),
            ["nvidia-bug-report.sh"] => SimAnswer::ok(vec![
                "nvidia-bug-report.sh will now collect information about your system and \
                 create the file 'nvidia-bug-report.log.gz' in the current directory."
                    .to_string(),
            ]),
            ["nvidia-smi", args @ ..] => nvidia_smi(host, args),
            [program, ..] => SimAnswer::failed(
                NOT_FOUND,
                t!(
                    "demo_shell.not_simulated",
                    program = program,
                    host = host.name
                )
                .into_owned(),
            ),
            [] => SimAnswer::failed(NOT_FOUND, t!("demo_shell.empty_command").into_owned()),
        })
    }
}

/// `dmesg`: the NVIDIA kernel lines with their seconds since boot, as dmesg prints them.
fn dmesg(host: &SimHost) -> Vec<String> {
    host.kernel_lines()
        .into_iter()
        .map(|(at_s, line)| format!("[{at_s:>12.6}] {line}"))
        .collect()
}

fn nvidia_smi(host: &mut SimHost, args: &[&str]) -> SimAnswer {
    if host.gpu_lost() {
        return SimAnswer::failed(SMI_GPU_LOST, host.lost_text());
    }
    let mut only: Option<u32> = None;
    let mut query_gpu = None;
    let mut query_apps = None;
    let mut format = "csv";
    let mut reset = false;
    let mut rest = args.iter();
    while let Some(arg) = rest.next() {
        match *arg {
            "-i" | "--id" => only = rest.next().and_then(|i| i.parse().ok()),
            "-r" | "--gpu-reset" => reset = true,
            a if a.starts_with("--query-gpu=") => query_gpu = a.get(12..),
            a if a.starts_with("--query-compute-apps=") => query_apps = a.get(21..),
            a if a.starts_with("--format=") => format = a.get(9..).unwrap_or("csv"),
            other => {
                return SimAnswer::failed(
                    SMI_INVALID_ARGUMENT,
                    t!(
                        "demo_shell.smi_argument",
                        argument = other,
                        host = host.name
                    )
                    .into_owned(),
                );
            }
        }
    }
    let gpus: Vec<&SimGpu> = host
        .gpus
        .iter()
        .filter(|g| only.is_none_or(|i| g.index == i))
        .collect();
    if gpus.is_empty() {
        return SimAnswer::failed(SMI_NOT_FOUND, "No devices were found".to_string());
    }
    let units = !format.split(',').any(|f| f == "nounits");
    if reset {
        let gpu = gpus[0];
        return if gpus.iter().any(|g| g.process().is_some()) {
            SimAnswer::failed(
                255,
                t!("demo_shell.reset_in_use", bus_id = gpu.bus_id).into_owned(),
            )
        } else {
            SimAnswer::ok(vec![
                format!("GPU {} was successfully reset.", gpu.bus_id),
                "All done.".to_string(),
            ])
        };
    }
    if let Some(fields) = query_apps {
        let rows = gpus
            .iter()
            .filter_map(|g| g.process())
            .map(|p| {
                fields
                    .split(',')
                    .map(|f| match f.trim() {
                        "pid" => Some(p.pid.to_string()),
                        "process_name" | "name" => Some(p.name.clone()),
                        "gpu_uuid" => Some(p.gpu_uuid.clone()),
                        "used_memory" | "used_gpu_memory" => p.used_memory_mib.map(|m| {
                            if units {
                                format!("{m} MiB")
                            } else {
                                m.to_string()
                            }
                        }),
                        _ => None,
                    })
                    .collect::<Option<Vec<_>>>()
                    .map(|cells| cells.join(", "))
            })
            .collect::<Option<Vec<_>>>();
        return match rows {
            Some(rows) => SimAnswer::ok(rows),
            None => invalid_field(fields),
        };
    }
    let Some(fields) = query_gpu else {
        return SimAnswer::failed(
            SMI_INVALID_ARGUMENT,
            t!("demo_shell.smi_without_query", host = host.name).into_owned(),
        );
    };
    let driver = host.driver_version();
    let mut rows = Vec::new();
    for gpu in gpus {
        // A copy, so answering a query does not move the GPU's own readings on.
        let sample = gpu.clone().sample();
        let cells: Option<Vec<String>> = fields
            .split(',')
            .map(|f| field(&sample, driver, f.trim(), units))
            .collect();
        match cells {
            Some(cells) => rows.push(cells.join(", ")),
            None => return invalid_field(fields),
        }
    }
    SimAnswer::ok(rows)
}

fn invalid_field(fields: &str) -> SimAnswer {
    SimAnswer::failed(
        SMI_INVALID_ARGUMENT,
        format!("Field \"{fields}\" is not a valid field to query."),
    )
}

/// One `--query-gpu` column as nvidia-smi prints it; `None` for a field the simulator lacks.
fn field(s: &GpuSample, driver: &str, name: &str, units: bool) -> Option<String> {
    let unit = |value: String, unit: &str| {
        if units {
            format!("{value} {unit}")
        } else {
            value
        }
    };
    let na = || "[N/A]".to_string();
    let watts = |w: Option<f64>| w.map_or_else(na, |w| unit(format!("{w:.2}"), "W"));
    let mib = |m: Option<u64>| m.map_or_else(na, |m| unit(m.to_string(), "MiB"));
    let mhz = |m: Option<u32>| m.map_or_else(na, |m| unit(m.to_string(), "MHz"));
    Some(match name {
        "index" => s.index.to_string(),
        "uuid" | "gpu_uuid" => s.uuid.to_string(),
        "name" | "gpu_name" => s.name.to_string(),
        "pci.bus_id" | "gpu_bus_id" => s.bus_id.to_string(),
        "driver_version" => driver.to_string(),
        "memory.total" => mib(s.memory_total_mib),
        "memory.used" => mib(s.memory_used_mib),
        "utilization.gpu" => s
            .utilization_gpu_pct
            .map_or_else(na, |u| unit(format!("{u:.0}"), "%")),
        "temperature.gpu" => s.temperature_c.map_or_else(na, |t| format!("{t:.0}")),
        "power.draw" => watts(s.power_draw_w),
        "power.limit" | "enforced.power.limit" => watts(s.power_limit_w),
        "power.default_limit" => watts(s.power_default_limit_w),
        "power.min_limit" => watts(s.power_min_limit_w),
        "power.max_limit" => watts(s.power_max_limit_w),
        "clocks.sm" | "clocks.current.sm" => mhz(s.clock_sm_mhz),
        "clocks.max.sm" => mhz(s.clock_sm_max_mhz),
        "pstate" => s.pstate.as_deref().map_or_else(na, str::to_string),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fleet::HostEvent;

    fn argv(words: &[&str]) -> Vec<String> {
        words.iter().map(|w| w.to_string()).collect()
    }

    #[test]
    fn the_lost_gpu_answers_as_lost_until_a_reboot_brings_it_back() {
        let mut sim = Simulator::demo(7);
        let smi = argv(&[
            "nvidia-smi",
            "--query-gpu=index,pci.bus_id,name",
            "--format=csv,noheader",
        ]);
        let before = sim.run_command("flaky-h200", &smi).expect("reachable");
        assert_eq!(before.lines, ["0, 00000000:00:06.0, NVIDIA H200"]);
        sim.advance(90_000, 90_000);
        let lost = sim.run_command("flaky-h200", &smi).expect("reachable");
        assert_eq!(lost.exit_status, Some(SMI_GPU_LOST));
        assert!(lost.lines[0].contains("GPU is lost"), "{lost:?}");
        let dmesg = sim
            .run_command("flaky-h200", &argv(&["dmesg"]))
            .expect("dmesg");
        assert!(
            dmesg
                .lines
                .iter()
                .any(|l| l.starts_with("[   60.000000] NVRM: Xid")),
            "{dmesg:?}"
        );
        let boot = argv(&["cat", "/proc/sys/kernel/random/boot_id"]);
        let boot_before = sim.run_command("flaky-h200", &boot).expect("boot id");
        let reboot = sim.run_command("flaky-h200", &argv(&["sudo", "-n", "reboot"]));
        assert_eq!(reboot.expect("reboot").exit_status, None);
        assert_ne!(
            sim.run_command("flaky-h200", &boot).expect("boot id"),
            boot_before
        );
        let back = sim.run_command("flaky-h200", &smi).expect("reachable");
        assert_eq!(back.lines, ["0, 00000000:00:06.0, NVIDIA H200"]);
        // The live fleet sees the host reconnect with its GPU reporting again.
        let events = sim.advance(92_000, 92_000);
        assert!(
            events
                .iter()
                .any(|(host, e)| *host == 4 && matches!(e, HostEvent::Sample { .. })),
            "{events:?}"
        );
    }

    #[test]
    fn unknown_and_unreachable_hosts_and_programs_are_said_so() {
        let mut sim = Simulator::demo(7);
        let id = argv(&["id", "-u"]);
        assert!(sim.run_command("nosuch", &id).is_err());
        let why = sim
            .run_command("unreachable-box", &id)
            .expect_err("unreachable");
        assert!(why.contains("Connection timed out"), "{why}");
        let other = sim
            .run_command("idle-a100", &argv(&["rm", "-rf", "/"]))
            .expect("reachable");
        assert_eq!(other.exit_status, Some(NOT_FOUND));
        assert!(other.lines[0].contains("not simulated"), "{other:?}");
        let field = sim
            .run_command(
                "idle-a100",
                &argv(&["nvidia-smi", "--query-gpu=bogus", "--format=csv"]),
            )
            .expect("reachable");
        assert_eq!(field.exit_status, Some(SMI_INVALID_ARGUMENT));
    }
}
