//! The check on a host whose accelerators are not NVIDIA's: the same fixed probe the live
//! link runs picks the vendor tool (`remote::Tool`), one reading of it gives each card's model
//! and memory, and every check that needs nvidia-smi, CUDA or PyTorch is listed as skipped with
//! its reason. Commands are built in code from the tool list; remote text only selects one.

use std::time::Duration;

use rust_i18n::t;

use crate::check::CheckError;
use crate::check::report::{Category, CheckResult, Status};
use crate::check::runner::{Runner, capture};
use crate::remote::{Probed, Tool, probe_answer, probe_argv};
use crate::telemetry::GpuSample;
use crate::telemetry::accel::sample::{apply_facts, to_samples};
use crate::telemetry::accel::{TOOLS, Vendor};
use crate::telemetry::source::StopFlag;

const PROBE_TIMEOUT: Duration = Duration::from_secs(20);
const TOOL_TIMEOUT: Duration = Duration::from_secs(60);
/// The cadence a one-shot reading is asked at, where a tool takes one (`xpu-smi dump -i`).
const ONE_SHOT_INTERVAL_MS: u32 = 1_000;

/// What a vendor tool said about the host's accelerators.
#[derive(Debug, Clone, PartialEq)]
pub struct VendorInventory {
    /// The tool that was read (`npu-smi`, `rocm-smi`, ...).
    pub tool: &'static str,
    pub vendor: Vendor,
    /// One sample per accelerator; empty when `failure` says why.
    pub samples: Vec<GpuSample>,
    /// The tool's output could not be read: the unsupported-output text, never numbers.
    pub failure: Option<String>,
}

/// Probes which tool the host has, after nvidia-smi gave nothing; `None` when the host has
/// nvidia-smi or none of the vendor tools (nvidia-smi's own failure then stands).
pub fn collect_vendor(
    runner: &mut dyn Runner,
    nvidia_smi: &str,
    stop: &StopFlag,
) -> Result<Option<VendorInventory>, CheckError> {
    let (answer, _) = capture(runner, &probe_argv(nvidia_smi), PROBE_TIMEOUT, stop)?;
    let lines: Vec<String> = answer.lines().map(str::to_string).collect();
    let Some(Probed::Tool(tool)) = probe_answer(&lines) else {
        return Ok(None);
    };
    let vendor = TOOLS
        .iter()
        .find(|(name, _)| *name == tool.name())
        .map_or(Vendor::Nvidia, |(_, v)| *v);
    let mut inventory = VendorInventory {
        tool: tool.name(),
        vendor,
        samples: Vec::new(),
        failure: None,
    };
    let parsed = match tool.first_command(ONE_SHOT_INTERVAL_MS, false, true) {
        Some(command) => {
            let (text, end) = capture(runner, &command.argv(), TOOL_TIMEOUT, stop)?;
            match (tool.parse(&text), end.exit_status) {
                (Ok(mut readings), _) => {
                    apply_facts(&mut readings, &tool.facts(&text).unwrap_or_default());
                    Ok(readings)
                }
                (Err(e), Some(0)) => Err(e.to_string()),
                (Err(_), status) => Err(tool_failed(tool, status, &text)),
            }
        }
        None => tool.parse("").map_err(|e| e.to_string()),
    };
    match parsed {
        Ok(readings) if !readings.is_empty() => inventory.samples = to_samples(&readings),
        Ok(_) => {
            inventory.failure = Some(t!("check_vendor.none_listed", tool = tool.name()).into())
        }
        Err(why) => inventory.failure = Some(why),
    }
    Ok(Some(inventory))
}

fn tool_failed(tool: Tool, status: Option<i32>, text: &str) -> String {
    let first = text.lines().map(str::trim).find(|l| !l.is_empty());
    let status = status.map_or_else(
        || t!("check_failure.a_signal").into_owned(),
        |s| t!("check_failure.exit_status", status = s).into_owned(),
    );
    t!(
        "check_vendor.tool_failed",
        tool = tool.name(),
        status = status,
        first = first.unwrap_or_default()
    )
    .into_owned()
}

/// An identity field the vendor tool's reading may lack (`xpu-smi dump` prints no model name
/// and no memory size).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unreported {
    Model,
    Memory,
}

/// `field` of card `gpu`, which the vendor tool's reading does not report: skipped with the
/// reason, never passed on nothing.
pub fn not_reported(inv: &VendorInventory, field: Unreported, gpu: u32) -> CheckResult {
    let result = match field {
        Unreported::Model => CheckResult::new(
            "identity.model",
            Category::Identity,
            Some(gpu),
            Status::Skip,
        ),
        Unreported::Memory => CheckResult::new(
            "identity.memory",
            Category::Identity,
            Some(gpu),
            Status::Skip,
        ),
    };
    result.measured(t!("check_vendor.not_checked")).message(t!(
        "check_vendor.not_reported",
        vendor = inv.vendor.label(),
        tool = inv.tool
    ))
}

/// The checks the check cannot make on `inv`'s vendor, each `skip` with its reason.
pub fn skipped_checks(inv: &VendorInventory) -> Vec<CheckResult> {
    let vendor = inv.vendor.label();
    let tool = inv.tool;
    let no_probe = t!("check_vendor.no_probe", vendor = vendor).into_owned();
    let no_kernel = t!("check_vendor.no_kernel", vendor = vendor).into_owned();
    let no_reading = t!("check_vendor.no_reading", vendor = vendor, tool = tool).into_owned();
    [
        ("identity.cuda", Category::Identity, &no_probe),
        ("identity.torch", Category::Identity, &no_probe),
        ("health.xid", Category::Health, &no_kernel),
        ("health.ecc", Category::Health, &no_reading),
        ("health.retirement", Category::Health, &no_reading),
        ("health.persistence", Category::Health, &no_reading),
        ("power.limit", Category::Power, &no_reading),
        ("pcie.link", Category::Pcie, &no_reading),
        ("vram.usable", Category::Vram, &no_probe),
        ("throughput.matmul", Category::Throughput, &no_probe),
        ("throughput.copy", Category::Throughput, &no_probe),
        ("sustained.load", Category::Sustained, &no_probe),
    ]
    .into_iter()
    .map(|(id, category, why)| {
        CheckResult::new(id, category, None, Status::Skip)
            .measured(t!("check_vendor.not_checked"))
            .message(why.clone())
    })
    .collect()
}
