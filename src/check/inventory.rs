//! What the check reads without loading the GPUs: `nvidia-smi -q -x`, one `--query-gpu`
//! reading and the kernel log, gathered into one view per GPU.

use std::time::Duration;

use rust_i18n::t;

use crate::check::CheckError;
use crate::check::runner::{Runner, capture};
use crate::check::vendor::{VendorInventory, collect_vendor};
use crate::diagnose::kernel::{KernelEvent, parse_line};
use crate::telemetry::GpuSample;
use crate::telemetry::smi_csv::{
    FieldLayout, QUERY_FIELDS, classify_failure, parse_gpu_line, query_gpu_args,
};
use crate::telemetry::smi_xml::{SmiReport, parse_report};
use crate::telemetry::source::StopFlag;

/// nvidia-smi's answers, or why there are none.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Inventory {
    pub xml: Option<SmiReport>,
    pub csv: Vec<GpuSample>,
    /// Set when neither query gave a GPU: what nvidia-smi said instead (or, on a host of
    /// another vendor, why its tool could not be read).
    pub failure: Option<String>,
    /// The vendor tool read instead of nvidia-smi, on a host whose accelerators are not
    /// NVIDIA's; its cards are then in `csv`.
    pub vendor: Option<VendorInventory>,
}

/// The kernel log's Xid and GPU-lost lines, or why it could not be read.
#[derive(Debug, Clone, PartialEq)]
pub enum KernelLog {
    Read(Vec<(KernelEvent, String)>),
    Unreadable(String),
    NotRead,
}

/// One GPU as nvidia-smi describes it at rest.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct GpuStatic {
    pub index: u32,
    pub name: String,
    pub uuid: String,
    pub bus_id: String,
    pub memory_total_mib: Option<u64>,
    pub memory_used_mib: Option<u64>,
    pub power_enforced_w: Option<f64>,
    pub power_default_w: Option<f64>,
    pub power_max_w: Option<f64>,
    pub ecc_enabled: Option<bool>,
    pub ecc_volatile: Option<u64>,
    pub ecc_aggregate: Option<u64>,
    pub remap_pending: Option<bool>,
    pub remap_failure: Option<bool>,
    pub retired_pending: Option<bool>,
    pub persistence: Option<bool>,
    pub pcie_gen: Option<u32>,
    pub pcie_gen_max: Option<u32>,
    pub pcie_width: Option<u32>,
    pub pcie_width_max: Option<u32>,
}

const SMI_TIMEOUT: Duration = Duration::from_secs(60);
const DMESG_TIMEOUT: Duration = Duration::from_secs(20);

/// Runs the two nvidia-smi queries. A query that fails is not an error of the check: the
/// failure text becomes the verdict.
pub fn collect_inventory(
    runner: &mut dyn Runner,
    nvidia_smi: &str,
    stop: &StopFlag,
) -> Result<Inventory, CheckError> {
    let xml_argv = vec![nvidia_smi.to_string(), "-q".to_string(), "-x".to_string()];
    let (xml_text, xml_end) = capture(runner, &xml_argv, SMI_TIMEOUT, stop)?;
    let xml = parse_report(&xml_text).ok().filter(|r| !r.gpus.is_empty());

    let mut csv_argv = vec![nvidia_smi.to_string()];
    csv_argv.extend(query_gpu_args(QUERY_FIELDS, None));
    let (csv_text, csv_end) = capture(runner, &csv_argv, SMI_TIMEOUT, stop)?;
    let layout = FieldLayout::new(QUERY_FIELDS);
    let csv: Vec<GpuSample> = csv_text
        .lines()
        .filter_map(|line| parse_gpu_line(&layout, line).ok())
        .collect();

    if xml.is_none()
        && csv.is_empty()
        && let Some(vendor) = collect_vendor(runner, nvidia_smi, stop)?
    {
        return Ok(Inventory {
            xml,
            csv: vendor.samples.clone(),
            failure: vendor.failure.clone(),
            vendor: Some(vendor),
        });
    }
    let failure = if xml.is_none() && csv.is_empty() {
        Some(
            describe_failure(nvidia_smi, &xml_text, xml_end.missing, xml_end.exit_status)
                .or_else(|| {
                    describe_failure(nvidia_smi, &csv_text, csv_end.missing, csv_end.exit_status)
                })
                .unwrap_or_else(|| t!("check_failure.no_gpus", program = nvidia_smi).into_owned()),
        )
    } else {
        None
    };
    Ok(Inventory {
        xml,
        csv,
        failure,
        vendor: None,
    })
}

fn describe_failure(
    program: &str,
    text: &str,
    missing: bool,
    status: Option<i32>,
) -> Option<String> {
    if missing {
        return Some(t!("check_failure.not_installed", program = program).into_owned());
    }
    let first = text.lines().map(str::trim).find(|l| !l.is_empty())?;
    let kind = classify_failure(text)
        .map(|r| t!("check_failure.kind", label = r.label()).into_owned())
        .unwrap_or_default();
    let status = status
        .map(|s| t!("check_failure.exit", status = s).into_owned())
        .unwrap_or_default();
    Some(
        t!(
            "check_failure.failed",
            program = program,
            kind = kind,
            status = status,
            first = first
        )
        .into_owned(),
    )
}

/// Reads the kernel log with `dmesg` (no follow), keeping the NVIDIA driver's GPU lines.
pub fn read_kernel_log(
    runner: &mut dyn Runner,
    dmesg: &str,
    stop: &StopFlag,
) -> Result<KernelLog, CheckError> {
    if dmesg.is_empty() {
        return Ok(KernelLog::NotRead);
    }
    let mut events = Vec::new();
    let mut first_line = None;
    let end = runner.run(
        &[dmesg.to_string()],
        None,
        DMESG_TIMEOUT,
        stop,
        &mut |line| {
            if first_line.is_none() {
                first_line = Some(line.to_string());
            }
            if let Some(event) = parse_line(line) {
                events.push((event, line.chars().take(300).collect()));
            }
        },
    )?;
    if end.succeeded() {
        return Ok(KernelLog::Read(events));
    }
    let why = if end.missing {
        t!("check_failure.dmesg_missing", program = dmesg).into_owned()
    } else if end.timed_out {
        t!("check_failure.dmesg_timeout", program = dmesg).into_owned()
    } else {
        first_line.unwrap_or_else(|| t!("check_failure.dmesg_failed", program = dmesg).into_owned())
    };
    Ok(KernelLog::Unreadable(why))
}

impl Inventory {
    /// One entry per GPU, in nvidia-smi's order: the XML report's details, with the CSV
    /// reading filling what the report lacks (retired pages) or standing in when the report
    /// could not be read.
    pub fn gpus(&self) -> Vec<GpuStatic> {
        let Some(xml) = &self.xml else {
            return self.csv.iter().map(from_sample).collect();
        };
        xml.gpus
            .iter()
            .enumerate()
            .map(|(i, d)| {
                let sample = self.csv.iter().find(|s| {
                    (!s.uuid.is_empty() && *s.uuid == *d.uuid)
                        || (!s.bus_id.is_empty() && s.bus_id.eq_ignore_ascii_case(&d.bus_id))
                });
                let mut g = sample.map(from_sample).unwrap_or_default();
                g.index = sample.map_or(i as u32, |s| s.index);
                g.name = d.product_name.clone();
                g.uuid = d.uuid.clone();
                g.bus_id = d.bus_id.clone();
                g.memory_total_mib = d.memory_total_mib.or(g.memory_total_mib);
                g.power_enforced_w = d.power_limit_enforced_w.or(g.power_enforced_w);
                g.power_default_w = d.power_limit_default_w.or(g.power_default_w);
                g.power_max_w = d.power_limit_max_w.or(g.power_max_w);
                g.ecc_enabled = d.ecc_mode_enabled;
                g.ecc_volatile = d.ecc_uncorrected_volatile.or(g.ecc_volatile);
                g.ecc_aggregate = d.ecc_uncorrected_aggregate;
                g.remap_pending = d.remapped_rows_pending;
                g.remap_failure = d.remapped_rows_failure;
                g.persistence = d.persistence_mode.or(g.persistence);
                g.pcie_gen = d.pcie_gen_current;
                g.pcie_gen_max = d.pcie_gen_max;
                g.pcie_width = d.pcie_width_current;
                g.pcie_width_max = d.pcie_width_max;
                g
            })
            .collect()
    }

    pub fn driver_version(&self) -> Option<String> {
        self.xml
            .as_ref()
            .and_then(|x| x.driver_version.clone())
            .or_else(|| {
                self.csv
                    .iter()
                    .find_map(|s| s.driver_version.as_deref().map(str::to_string))
            })
    }

    pub fn cuda_version(&self) -> Option<String> {
        self.xml.as_ref().and_then(|x| x.cuda_version.clone())
    }
}

fn from_sample(s: &GpuSample) -> GpuStatic {
    GpuStatic {
        index: s.index,
        name: s.name.to_string(),
        uuid: s.uuid.to_string(),
        bus_id: s.bus_id.to_string(),
        memory_total_mib: s.memory_total_mib,
        memory_used_mib: s.memory_used_mib,
        power_enforced_w: s.power_limit_w,
        power_default_w: s.power_default_limit_w,
        power_max_w: s.power_max_limit_w,
        ecc_volatile: s.ecc_uncorrected_volatile,
        retired_pending: s.retired_pages_pending,
        persistence: s.persistence_mode,
        ..GpuStatic::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const QX: &str = include_str!("../../tests/fixtures/nvidia-smi/h200-driver-580/smi_qx.txt");
    const CSV: &str =
        include_str!("../../tests/fixtures/nvidia-smi/h200-driver-580/query_idle_nounits.txt");

    fn body(capture: &str) -> String {
        let lines: Vec<&str> = capture.lines().collect();
        lines[1..lines.len() - 1].join("\n")
    }

    #[test]
    fn the_h200_capture_gives_one_complete_gpu() {
        let layout = FieldLayout::new(QUERY_FIELDS);
        let inv = Inventory {
            xml: parse_report(&body(QX)).ok(),
            csv: body(CSV)
                .lines()
                .filter_map(|l| parse_gpu_line(&layout, l).ok())
                .collect(),
            failure: None,
            vendor: None,
        };
        let gpus = inv.gpus();
        assert_eq!(gpus.len(), 1);
        let g = &gpus[0];
        assert_eq!(g.name, "NVIDIA H200");
        assert_eq!(g.memory_total_mib, Some(143771));
        assert_eq!(g.memory_used_mib, Some(0));
        assert_eq!(g.power_enforced_w, Some(700.0));
        assert_eq!(g.power_default_w, Some(700.0));
        assert_eq!((g.pcie_gen, g.pcie_gen_max), (Some(5), Some(5)));
        assert_eq!((g.pcie_width, g.pcie_width_max), (Some(16), Some(16)));
        assert_eq!(g.ecc_enabled, Some(true));
        assert_eq!((g.ecc_volatile, g.ecc_aggregate), (Some(0), Some(0)));
        assert_eq!(
            (g.remap_pending, g.remap_failure),
            (Some(false), Some(false))
        );
        assert_eq!(g.persistence, Some(true));
        assert_eq!(inv.driver_version().as_deref(), Some("580.159.04"));
        assert_eq!(inv.cuda_version().as_deref(), Some("13.0"));
    }

    #[test]
    fn failure_texts_are_classified() {
        let text = "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. \
                    Make sure that the latest NVIDIA driver is installed and running.\n";
        let why = describe_failure("nvidia-smi", text, false, Some(9)).expect("a failure");
        assert!(
            why.starts_with("nvidia-smi failed (driver not loaded), exit 9: NVIDIA-SMI has failed")
        );
        let why = describe_failure("nvidia-smi", "", true, None).expect("missing");
        assert!(why.contains("not installed"));
    }
}
