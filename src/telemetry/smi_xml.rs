//! The `nvidia-smi -q -x` report parser: per-GPU limits, ECC, row remapping and PCIe link
//! details that the CSV stream does not carry.

use quick_xml::Reader;
use quick_xml::events::{BytesStart, Event};
use serde::Serialize;
use thiserror::Error;

use crate::telemetry::model::{GpuProcess, GpuSample};

/// What one `<gpu>` element of the report says, with units in the names. `None` means the
/// report printed `N/A` (or nothing) for that value.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct GpuDetail {
    pub bus_id: String,
    pub product_name: String,
    pub uuid: String,
    pub temperature_c: Option<f64>,
    /// Absolute thresholds, printed by drivers that report them (`gpu_temp_slow_threshold`,
    /// `gpu_temp_max_threshold`, `gpu_temp_max_gpu_threshold`). Driver 580 on an H200 prints
    /// none of them, only the T.Limit margins below.
    pub temperature_slowdown_c: Option<f64>,
    pub temperature_shutdown_c: Option<f64>,
    pub temperature_max_operating_c: Option<f64>,
    /// `gpu_temp_tlimit`: how many degrees the GPU is below its max operating temperature.
    pub temperature_tlimit_margin_c: Option<f64>,
    /// `gpu_temp_slow_tlimit_threshold`: the T.Limit margin at which HW slowdown starts.
    pub temperature_slowdown_tlimit_c: Option<f64>,
    /// `gpu_temp_max_tlimit_threshold`: the T.Limit margin at which the GPU may shut down.
    pub temperature_shutdown_tlimit_c: Option<f64>,
    /// `gpu_temp_max_gpu_tlimit_threshold`: the T.Limit margin at which SW slowdown starts.
    pub temperature_max_operating_tlimit_c: Option<f64>,
    /// The limit the card is held to now (`current_power_limit` / old `enforced_power_limit`,
    /// falling back to the requested limit).
    pub power_limit_enforced_w: Option<f64>,
    pub power_limit_default_w: Option<f64>,
    pub power_limit_min_w: Option<f64>,
    pub power_limit_max_w: Option<f64>,
    pub ecc_mode_enabled: Option<bool>,
    /// Uncorrectable ECC errors since the driver loaded (DRAM plus SRAM).
    pub ecc_uncorrected_volatile: Option<u64>,
    /// Uncorrectable ECC errors over the card's lifetime (DRAM plus SRAM).
    pub ecc_uncorrected_aggregate: Option<u64>,
    pub remapped_rows_pending: Option<bool>,
    pub remapped_rows_failure: Option<bool>,
    pub pcie_gen_current: Option<u32>,
    pub pcie_gen_max: Option<u32>,
    pub pcie_width_current: Option<u32>,
    pub pcie_width_max: Option<u32>,
    pub persistence_mode: Option<bool>,
    pub memory_total_mib: Option<u64>,
    /// Compute and graphics processes listed under `<processes>`.
    pub processes: Vec<GpuProcess>,
}

impl GpuDetail {
    /// Temperature at which HW slowdown starts: the absolute threshold when the driver prints
    /// one, otherwise derived from the T.Limit margins.
    ///
    /// The derivation reads the max operating temperature as current temperature plus the
    /// current margin (both H200 captures give 87 C: 38 + 49 idle, 60 + 27 under load), then
    /// moves by the slowdown margin (-2 C gives 89 C, which is what older drivers print as
    /// `GPU Slowdown Temp` on an H100 SXM). The shutdown threshold is not derived this way: the
    /// same arithmetic does not match the absolute value older drivers print for that card.
    pub fn effective_slowdown_c(&self) -> Option<f64> {
        self.temperature_slowdown_c
            .or_else(|| Some(self.derived_max_operating_c()? - self.temperature_slowdown_tlimit_c?))
    }

    /// Max operating temperature (SW thermal slowdown): absolute when printed, otherwise the
    /// current temperature plus the current T.Limit margin.
    pub fn effective_max_operating_c(&self) -> Option<f64> {
        self.temperature_max_operating_c
            .or_else(|| self.derived_max_operating_c())
    }

    fn derived_max_operating_c(&self) -> Option<f64> {
        let reference = self.temperature_c? + self.temperature_tlimit_margin_c?;
        Some(reference - self.temperature_max_operating_tlimit_c.unwrap_or(0.0))
    }

    /// Fills what the CSV stream cannot know (slowdown and shutdown temperatures) and, where
    /// the sample has no value (a reduced field list on an old driver), power limits, total
    /// memory, persistence mode and the volatile ECC count.
    pub fn apply_to(&self, sample: &mut GpuSample) {
        if let Some(c) = self.effective_slowdown_c() {
            sample.temperature_slowdown_c = Some(c);
        }
        if let Some(c) = self.temperature_shutdown_c {
            sample.temperature_shutdown_c = Some(c);
        }
        fill_missing(&mut sample.power_limit_w, self.power_limit_enforced_w);
        fill_missing(
            &mut sample.power_default_limit_w,
            self.power_limit_default_w,
        );
        fill_missing(&mut sample.power_min_limit_w, self.power_limit_min_w);
        fill_missing(&mut sample.power_max_limit_w, self.power_limit_max_w);
        fill_missing(&mut sample.memory_total_mib, self.memory_total_mib);
        fill_missing(&mut sample.persistence_mode, self.persistence_mode);
        fill_missing(
            &mut sample.ecc_uncorrected_volatile,
            self.ecc_uncorrected_volatile,
        );
    }
}

fn fill_missing<T>(slot: &mut Option<T>, value: Option<T>) {
    if slot.is_none() {
        *slot = value;
    }
}

/// One `nvidia-smi -q -x` report.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct SmiReport {
    pub driver_version: Option<String>,
    pub cuda_version: Option<String>,
    pub gpus: Vec<GpuDetail>,
}

impl SmiReport {
    /// The detail for the GPU a CSV sample came from: by UUID, else by PCI bus id.
    pub fn detail_for(&self, sample: &GpuSample) -> Option<&GpuDetail> {
        let by_uuid = (!sample.uuid.is_empty())
            .then(|| self.gpus.iter().find(|g| *g.uuid == *sample.uuid))
            .flatten();
        by_uuid.or_else(|| {
            (!sample.bus_id.is_empty())
                .then(|| {
                    self.gpus
                        .iter()
                        .find(|g| g.bus_id.eq_ignore_ascii_case(&sample.bus_id))
                })
                .flatten()
        })
    }
}

/// Why a report could not be read.
#[derive(Debug, Error)]
pub enum XmlError {
    #[error("{}", rust_i18n::t!("telemetry_xml_error.malformed", position = .position, error = .source))]
    Malformed {
        position: u64,
        #[source]
        source: quick_xml::Error,
    },
    #[error("{}", rust_i18n::t!("telemetry_xml_error.root", found = .found))]
    UnexpectedRoot { found: String },
    #[error("{}", rust_i18n::t!("telemetry_xml_error.no_report"))]
    NoReport,
    #[error("{}", rust_i18n::t!("telemetry_xml_error.truncated"))]
    Truncated,
}

const ROOT: &str = "nvidia_smi_log";
const GPU_PATH: &str = "/nvidia_smi_log/gpu";

/// Parses the output of `nvidia-smi -q -x` (the XML declaration and DOCTYPE are skipped).
pub fn parse_report(xml: &str) -> Result<SmiReport, XmlError> {
    let mut reader = Reader::from_str(xml);
    let mut report = SmiReport::default();
    // The element path as `/a/b/c`, and where each level starts, so leaving an element is a
    // truncate rather than an allocation.
    let mut path = String::new();
    let mut starts: Vec<usize> = Vec::new();
    let mut text = String::new();
    let mut gpu: Option<GpuBuilder> = None;
    let mut seen_root = false;
    let mut closed_root = false;

    loop {
        let event = reader.read_event().map_err(|source| XmlError::Malformed {
            position: reader.error_position(),
            source,
        })?;
        match event {
            Event::Start(start) => {
                let name = start.name().into_inner();
                if starts.is_empty() {
                    if name != ROOT {
                        return Err(XmlError::UnexpectedRoot {
                            found: name.to_string(),
                        });
                    }
                    seen_root = true;
                }
                starts.push(path.len());
                path.push('/');
                path.push_str(name);
                text.clear();
                if path == GPU_PATH {
                    gpu = Some(GpuBuilder::new(gpu_id(&start)));
                }
            }
            Event::End(_) => {
                let value = text.trim();
                if let Some(builder) = gpu.as_mut() {
                    if let Some(rel) = path
                        .strip_prefix(GPU_PATH)
                        .and_then(|p| p.strip_prefix('/'))
                    {
                        builder.leaf(rel, value);
                    }
                } else {
                    match path.as_str() {
                        "/nvidia_smi_log/driver_version" => {
                            report.driver_version = text_value(value);
                        }
                        "/nvidia_smi_log/cuda_version" => report.cuda_version = text_value(value),
                        _ => {}
                    }
                }
                if path == GPU_PATH
                    && let Some(builder) = gpu.take()
                {
                    report.gpus.push(builder.finish());
                }
                text.clear();
                if let Some(len) = starts.pop() {
                    path.truncate(len);
                }
                if starts.is_empty() {
                    closed_root = true;
                    break;
                }
            }
            Event::Text(t) => text.push_str(&t),
            Event::CData(t) => text.push_str(&t),
            Event::GeneralRef(r) => {
                if let Ok(Some(c)) = r.resolve_char_ref() {
                    text.push(c);
                } else if let Some(s) = quick_xml::escape::resolve_predefined_entity(&r) {
                    text.push_str(s);
                }
            }
            Event::Empty(start) if starts.is_empty() && start.name().into_inner() != ROOT => {
                return Err(XmlError::UnexpectedRoot {
                    found: start.name().into_inner().to_string(),
                });
            }
            Event::Empty(_)
            | Event::Decl(_)
            | Event::DocType(_)
            | Event::Comment(_)
            | Event::PI(_) => {}
            Event::Eof => break,
        }
    }
    match (seen_root, closed_root) {
        (false, _) => Err(XmlError::NoReport),
        (true, false) => Err(XmlError::Truncated),
        (true, true) => Ok(report),
    }
}

fn gpu_id(start: &BytesStart<'_>) -> String {
    start
        .try_get_attribute("id")
        .ok()
        .flatten()
        .map(|a| a.value.trim().to_string())
        .unwrap_or_default()
}

/// A `<gpu>` being read: the detail plus parts that are combined when the element closes.
#[derive(Default)]
struct GpuBuilder {
    detail: GpuDetail,
    bus_id_from_pci: Option<String>,
    requested_limit_w: Option<f64>,
    volatile: EccParts,
    aggregate: EccParts,
    process: ProcessParts,
}

/// Uncorrectable counts under `<volatile>` or `<aggregate>`, in the layouts drivers have used:
/// pre-Ampere `double_bit/total`; Ampere `sram_uncorrectable` + `dram_uncorrectable`; R580
/// `sram_uncorrectable_parity` + `sram_uncorrectable_secded` (some drivers print both the
/// split and the combined SRAM count, so the combined one wins to avoid counting twice).
#[derive(Default)]
struct EccParts {
    sram_combined: Option<u64>,
    sram_parity: Option<u64>,
    sram_secded: Option<u64>,
    dram: Option<u64>,
    double_bit_total: Option<u64>,
}

impl EccParts {
    fn leaf(&mut self, name: &str, value: &str) {
        let slot = match name {
            "sram_uncorrectable" => &mut self.sram_combined,
            "sram_uncorrectable_parity" => &mut self.sram_parity,
            "sram_uncorrectable_secded" => &mut self.sram_secded,
            "dram_uncorrectable" => &mut self.dram,
            "double_bit/total" => &mut self.double_bit_total,
            _ => return,
        };
        *slot = parse_u64(value);
    }

    fn total(&self) -> Option<u64> {
        let sram = self
            .sram_combined
            .or_else(|| sum(self.sram_parity, self.sram_secded));
        sum(sram, self.dram).or(self.double_bit_total)
    }
}

/// The sum of the known parts, `None` when none is known.
fn sum(a: Option<u64>, b: Option<u64>) -> Option<u64> {
    match (a, b) {
        (None, None) => None,
        _ => Some(a.unwrap_or(0).saturating_add(b.unwrap_or(0))),
    }
}

#[derive(Default)]
struct ProcessParts {
    pid: Option<u32>,
    name: String,
    used_memory_mib: Option<u64>,
}

impl GpuBuilder {
    fn new(bus_id: String) -> Self {
        Self {
            detail: GpuDetail {
                bus_id,
                ..GpuDetail::default()
            },
            ..Self::default()
        }
    }

    /// Takes the text of one closed element at `rel`, the path below `<gpu>`.
    fn leaf(&mut self, rel: &str, value: &str) {
        let d = &mut self.detail;
        if let Some(name) = rel.strip_prefix("ecc_errors/volatile/") {
            return self.volatile.leaf(name, value);
        }
        if let Some(name) = rel.strip_prefix("ecc_errors/aggregate/") {
            return self.aggregate.leaf(name, value);
        }
        if let Some(name) = rel
            .strip_prefix("gpu_power_readings/")
            .or_else(|| rel.strip_prefix("power_readings/"))
        {
            match name {
                "current_power_limit" | "enforced_power_limit" => {
                    d.power_limit_enforced_w = parse_f64(value);
                }
                "requested_power_limit" | "power_limit" => {
                    self.requested_limit_w = parse_f64(value);
                }
                "default_power_limit" => d.power_limit_default_w = parse_f64(value),
                "min_power_limit" => d.power_limit_min_w = parse_f64(value),
                "max_power_limit" => d.power_limit_max_w = parse_f64(value),
                _ => {}
            }
            return;
        }
        if let Some(name) = rel.strip_prefix("processes/process_info") {
            return self.process_leaf(name, value);
        }
        match rel {
            "product_name" => d.product_name = text_value(value).unwrap_or_default(),
            "uuid" => d.uuid = text_value(value).unwrap_or_default(),
            "persistence_mode" => d.persistence_mode = parse_enabled(value),
            "pci/pci_bus_id" => self.bus_id_from_pci = text_value(value),
            "pci/pci_gpu_link_info/pcie_gen/current_link_gen" => {
                d.pcie_gen_current = parse_u32(value);
            }
            "pci/pci_gpu_link_info/pcie_gen/max_link_gen" => d.pcie_gen_max = parse_u32(value),
            "pci/pci_gpu_link_info/link_widths/current_link_width" => {
                d.pcie_width_current = parse_u32(value);
            }
            "pci/pci_gpu_link_info/link_widths/max_link_width" => {
                d.pcie_width_max = parse_u32(value);
            }
            "fb_memory_usage/total" => d.memory_total_mib = parse_u64(value),
            "ecc_mode/current_ecc" => d.ecc_mode_enabled = parse_enabled(value),
            "remapped_rows/remapped_row_pending" => d.remapped_rows_pending = parse_yes_no(value),
            "remapped_rows/remapped_row_failure" => d.remapped_rows_failure = parse_yes_no(value),
            "temperature/gpu_temp" => d.temperature_c = parse_f64(value),
            "temperature/gpu_temp_slow_threshold" => d.temperature_slowdown_c = parse_f64(value),
            "temperature/gpu_temp_max_threshold" => d.temperature_shutdown_c = parse_f64(value),
            "temperature/gpu_temp_max_gpu_threshold" => {
                d.temperature_max_operating_c = parse_f64(value);
            }
            "temperature/gpu_temp_tlimit" => d.temperature_tlimit_margin_c = parse_f64(value),
            "temperature/gpu_temp_slow_tlimit_threshold" => {
                d.temperature_slowdown_tlimit_c = parse_f64(value);
            }
            "temperature/gpu_temp_max_tlimit_threshold" => {
                d.temperature_shutdown_tlimit_c = parse_f64(value);
            }
            "temperature/gpu_temp_max_gpu_tlimit_threshold" => {
                d.temperature_max_operating_tlimit_c = parse_f64(value);
            }
            _ => {}
        }
    }

    /// `name` is what follows `processes/process_info`: empty when the element itself closes.
    fn process_leaf(&mut self, name: &str, value: &str) {
        match name {
            "" => {
                let parts = std::mem::take(&mut self.process);
                if let Some(pid) = parts.pid {
                    self.detail.processes.push(GpuProcess {
                        gpu_index: None,
                        pid,
                        name: parts.name,
                        gpu_uuid: String::new(),
                        used_memory_mib: parts.used_memory_mib,
                    });
                }
            }
            "/pid" => self.process.pid = parse_u32(value),
            "/process_name" => self.process.name = text_value(value).unwrap_or_default(),
            "/used_memory" => self.process.used_memory_mib = parse_u64(value),
            _ => {}
        }
    }

    fn finish(mut self) -> GpuDetail {
        let mut d = self.detail;
        if d.bus_id.is_empty()
            && let Some(bus_id) = self.bus_id_from_pci.take()
        {
            d.bus_id = bus_id;
        }
        fill_missing(&mut d.power_limit_enforced_w, self.requested_limit_w);
        d.ecc_uncorrected_volatile = self.volatile.total();
        d.ecc_uncorrected_aggregate = self.aggregate.total();
        // The uuid element comes before the process list, but only the whole GPU knows both.
        for p in &mut d.processes {
            p.gpu_uuid.clone_from(&d.uuid);
        }
        d
    }
}

/// Text values, with the report's placeholders (`N/A`, deprecation notes) as `None`.
fn text_value(value: &str) -> Option<String> {
    match value {
        "" | "N/A" | "Requested functionality has been deprecated" => None,
        v if v.starts_with('[') => None,
        v => Some(v.to_string()),
    }
}

/// The number in `700.00 W`, `143771 MiB`, `87 C`, `-2 C`, `16x`.
fn number_token(value: &str) -> &str {
    let token = value.split_ascii_whitespace().next().unwrap_or("");
    token.strip_suffix('x').unwrap_or(token)
}

fn parse_f64(value: &str) -> Option<f64> {
    number_token(value)
        .parse::<f64>()
        .ok()
        .filter(|v| v.is_finite())
}

fn parse_u64(value: &str) -> Option<u64> {
    number_token(value).parse::<u64>().ok()
}

fn parse_u32(value: &str) -> Option<u32> {
    number_token(value).parse::<u32>().ok()
}

fn parse_enabled(value: &str) -> Option<bool> {
    match value {
        "Enabled" => Some(true),
        "Disabled" => Some(false),
        _ => None,
    }
}

fn parse_yes_no(value: &str) -> Option<bool> {
    match value {
        "Yes" => Some(true),
        "No" => Some(false),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    //! Unit tests of `smi_xml`, kept apart so the module reads as code.
    use super::*;

    /// A trimmed report in the older layout (absolute thresholds, `power_readings`, Ampere ECC).
    const OLD_LAYOUT: &str = r#"<?xml version="1.0" ?>
<!DOCTYPE nvidia_smi_log SYSTEM "nvsmi_device_v11.dtd">
<nvidia_smi_log>
  <driver_version>535.129.03</driver_version>
  <cuda_version>12.2</cuda_version>
  <gpu id="00000000:19:00.0">
<product_name>NVIDIA A100-SXM4-80GB &amp; friends</product_name>
<persistence_mode>Disabled</persistence_mode>
<uuid>GPU-aaaa</uuid>
<fb_memory_usage><total>81920 MiB</total></fb_memory_usage>
<ecc_mode><current_ecc>Enabled</current_ecc></ecc_mode>
<ecc_errors>
  <volatile>
    <sram_correctable>4</sram_correctable>
    <sram_uncorrectable>1</sram_uncorrectable>
    <sram_uncorrectable_parity>1</sram_uncorrectable_parity>
    <sram_uncorrectable_secded>0</sram_uncorrectable_secded>
    <dram_correctable>9</dram_correctable>
    <dram_uncorrectable>2</dram_uncorrectable>
  </volatile>
  <aggregate>
    <single_bit><total>5</total></single_bit>
    <double_bit><total>7</total></double_bit>
  </aggregate>
</ecc_errors>
<remapped_rows>N/A</remapped_rows>
<temperature>
  <gpu_temp>56 C</gpu_temp>
  <gpu_temp_max_threshold>92 C</gpu_temp_max_threshold>
  <gpu_temp_slow_threshold>89 C</gpu_temp_slow_threshold>
  <gpu_temp_max_gpu_threshold>87 C</gpu_temp_max_gpu_threshold>
</temperature>
<power_readings>
  <power_limit>400.00 W</power_limit>
  <enforced_power_limit>N/A</enforced_power_limit>
  <default_power_limit>400.00 W</default_power_limit>
  <min_power_limit>100.00 W</min_power_limit>
  <max_power_limit>400.00 W</max_power_limit>
</power_readings>
<processes><process_info><pid>77</pid><process_name>a.out</process_name><used_memory>N/A</used_memory></process_info></processes>
  </gpu>
</nvidia_smi_log>
"#;

    #[test]
    fn reads_the_older_layout() {
        let report = parse_report(OLD_LAYOUT).expect("parses");
        assert_eq!(report.driver_version.as_deref(), Some("535.129.03"));
        assert_eq!(report.cuda_version.as_deref(), Some("12.2"));
        let g = &report.gpus[0];
        assert_eq!(g.bus_id, "00000000:19:00.0");
        assert_eq!(g.product_name, "NVIDIA A100-SXM4-80GB & friends");
        assert_eq!(g.persistence_mode, Some(false));
        assert_eq!(g.memory_total_mib, Some(81920));
        assert_eq!(g.ecc_mode_enabled, Some(true));
        assert_eq!(g.ecc_uncorrected_volatile, Some(3), "combined sram + dram");
        assert_eq!(
            g.ecc_uncorrected_aggregate,
            Some(7),
            "pre-Ampere double_bit"
        );
        assert_eq!(g.remapped_rows_pending, None);
        assert_eq!(g.temperature_slowdown_c, Some(89.0));
        assert_eq!(g.temperature_shutdown_c, Some(92.0));
        assert_eq!(g.temperature_max_operating_c, Some(87.0));
        assert_eq!(g.effective_slowdown_c(), Some(89.0));
        assert_eq!(
            g.power_limit_enforced_w,
            Some(400.0),
            "requested as fallback"
        );
        assert_eq!(g.power_limit_min_w, Some(100.0));
        assert_eq!(
            g.processes,
            vec![GpuProcess {
                gpu_index: None,
                pid: 77,
                name: "a.out".to_string(),
                gpu_uuid: "GPU-aaaa".to_string(),
                used_memory_mib: None,
            }]
        );
    }

    #[test]
    fn apply_to_fills_thresholds_and_only_missing_values() {
        let report = parse_report(OLD_LAYOUT).expect("parses");
        let mut sample = GpuSample {
            uuid: "GPU-aaaa".into(),
            power_limit_w: Some(250.0),
            ..GpuSample::default()
        };
        let detail = report.detail_for(&sample).expect("matched by uuid");
        detail.apply_to(&mut sample);
        assert_eq!(sample.temperature_slowdown_c, Some(89.0));
        assert_eq!(sample.temperature_shutdown_c, Some(92.0));
        assert_eq!(
            sample.power_limit_w,
            Some(250.0),
            "the stream's value stays"
        );
        assert_eq!(sample.power_max_limit_w, Some(400.0));
        assert_eq!(sample.memory_total_mib, Some(81920));
        assert_eq!(sample.ecc_uncorrected_volatile, Some(3));

        let by_bus = GpuSample {
            bus_id: "00000000:19:00.0".into(),
            ..GpuSample::default()
        };
        assert!(report.detail_for(&by_bus).is_some());
        assert!(report.detail_for(&GpuSample::default()).is_none());
    }

    #[test]
    fn tlimit_margins_are_not_read_as_temperatures() {
        let xml = "<nvidia_smi_log><gpu id=\"0\"><temperature>\
        <gpu_temp>60 C</gpu_temp><gpu_temp_tlimit>27 C</gpu_temp_tlimit>\
        <gpu_temp_max_tlimit_threshold>-8 C</gpu_temp_max_tlimit_threshold>\
        <gpu_temp_slow_tlimit_threshold>-2 C</gpu_temp_slow_tlimit_threshold>\
        <gpu_temp_max_gpu_tlimit_threshold>0 C</gpu_temp_max_gpu_tlimit_threshold>\
        </temperature></gpu></nvidia_smi_log>";
        let g = &parse_report(xml).expect("parses").gpus[0];
        assert_eq!(g.temperature_slowdown_c, None);
        assert_eq!(g.temperature_shutdown_c, None);
        assert_eq!(g.temperature_slowdown_tlimit_c, Some(-2.0));
        assert_eq!(g.temperature_shutdown_tlimit_c, Some(-8.0));
        assert_eq!(g.effective_max_operating_c(), Some(87.0));
        assert_eq!(g.effective_slowdown_c(), Some(89.0));
        let mut sample = GpuSample::default();
        g.apply_to(&mut sample);
        assert_eq!(sample.temperature_slowdown_c, Some(89.0));
        assert_eq!(sample.temperature_shutdown_c, None, "not derived");
    }

    #[test]
    fn no_margin_means_no_derived_threshold() {
        let xml = "<nvidia_smi_log><gpu id=\"0\"><temperature><gpu_temp>60 C</gpu_temp>\
        <gpu_temp_tlimit>N/A</gpu_temp_tlimit>\
        <gpu_temp_slow_tlimit_threshold>-2 C</gpu_temp_slow_tlimit_threshold>\
        </temperature></gpu></nvidia_smi_log>";
        let g = &parse_report(xml).expect("parses").gpus[0];
        assert_eq!(g.effective_slowdown_c(), None);
    }

    #[test]
    fn errors() {
        assert!(matches!(parse_report(""), Err(XmlError::NoReport)));
        assert!(matches!(
            parse_report("<html><body/></html>"),
            Err(XmlError::UnexpectedRoot { found }) if found == "html"
        ));
        assert!(matches!(
            parse_report("<nvidia_smi_log><gpu id=\"0\"><uuid>GPU-a</uuid>"),
            Err(XmlError::Truncated)
        ));
        assert!(matches!(
            parse_report("<nvidia_smi_log><gpu></nvidia_smi_log>"),
            Err(XmlError::Malformed { .. })
        ));
        let e = parse_report("<html/>").expect_err("wrong root");
        assert!(e.to_string().contains("expected <nvidia_smi_log>"), "{e}");
    }

    #[test]
    fn value_parsing() {
        assert_eq!(parse_f64("700.00 W"), Some(700.0));
        assert_eq!(parse_f64("-8 C"), Some(-8.0));
        assert_eq!(parse_f64("N/A"), None);
        assert_eq!(parse_u32("16x"), Some(16));
        assert_eq!(parse_u64("143771 MiB"), Some(143771));
        assert_eq!(
            text_value("Requested functionality has been deprecated"),
            None
        );
        assert_eq!(sum(None, Some(2)), Some(2));
        assert_eq!(sum(None, None), None);
    }
}
