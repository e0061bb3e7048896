//! The check report: one verdict per check with what was measured and expected, each GPU's key
//! figures for later comparison, and the exit code they add up to. Its JSON form is documented
//! in `SCHEMA.md`.

use serde::{Deserialize, Serialize};

/// The version of the JSON layout below; bumped when a field changes meaning.
pub const SCHEMA_VERSION: u32 = 1;

/// Exit codes of `gpufleet check`.
pub const EXIT_PASS: u8 = 0;
pub const EXIT_WARN: u8 = 1;
pub const EXIT_FAIL: u8 = 2;
/// The check could not run at all (host unreachable, login refused).
pub const EXIT_COULD_NOT_RUN: u8 = 3;

/// A verdict. Ordered from best to worst, so the overall verdict is the `max`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Pass,
    /// Not measured (no PyTorch, kernel log unreadable, ...); the reason is in the message.
    Skip,
    Warn,
    Fail,
}

impl Status {
    pub fn word(self) -> &'static str {
        match self {
            Status::Pass => "pass",
            Status::Skip => "skip",
            Status::Warn => "warn",
            Status::Fail => "fail",
        }
    }
}

/// What a check is about; also the order of sections in the text report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Category {
    Identity,
    Health,
    Power,
    Pcie,
    Vram,
    Throughput,
    Sustained,
}

impl Category {
    pub const ALL: [Category; 7] = [
        Category::Identity,
        Category::Health,
        Category::Power,
        Category::Pcie,
        Category::Vram,
        Category::Throughput,
        Category::Sustained,
    ];

    pub fn title(self) -> String {
        match self {
            Category::Identity => rust_i18n::t!("check_report.category_identity"),
            Category::Health => rust_i18n::t!("check_report.category_health"),
            Category::Power => rust_i18n::t!("check_report.category_power"),
            Category::Pcie => rust_i18n::t!("check_report.category_pcie"),
            Category::Vram => rust_i18n::t!("check_report.category_vram"),
            Category::Throughput => rust_i18n::t!("check_report.category_throughput"),
            Category::Sustained => rust_i18n::t!("check_report.category_sustained"),
        }
        .into_owned()
    }
}

/// One verdict.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CheckResult {
    /// Stable machine name, `category.what` (see SCHEMA.md for the list).
    pub id: String,
    pub category: Category,
    /// The nvidia-smi index of the GPU it concerns; `None` for host-wide checks.
    pub gpu: Option<u32>,
    pub status: Status,
    /// What was measured, with units, for people.
    pub measured: String,
    /// What it was held against, with units; empty when nothing was expected.
    pub expected: String,
    /// One sentence on what the verdict means.
    pub message: String,
}

impl CheckResult {
    pub fn new(id: &str, category: Category, gpu: Option<u32>, status: Status) -> Self {
        Self {
            id: id.to_string(),
            category,
            gpu,
            status,
            measured: String::new(),
            expected: String::new(),
            message: String::new(),
        }
    }

    pub fn measured(mut self, text: impl Into<String>) -> Self {
        self.measured = text.into();
        self
    }

    pub fn expected(mut self, text: impl Into<String>) -> Self {
        self.expected = text.into();
        self
    }

    pub fn message(mut self, text: impl Into<String>) -> Self {
        self.message = text.into();
        self
    }

    pub fn with_status(mut self, status: Status) -> Self {
        self.status = status;
        self
    }
}

/// The numbers of one GPU worth comparing between two checks of a host.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct GpuFigures {
    pub index: u32,
    pub uuid: String,
    pub name: String,
    pub bus_id: String,
    /// The reference-table model the card was matched to.
    pub reference_model: Option<String>,
    pub memory_total_mib: Option<u64>,
    pub power_limit_w: Option<f64>,
    pub power_default_limit_w: Option<f64>,
    pub power_max_limit_w: Option<f64>,
    pub pcie_gen: Option<u32>,
    pub pcie_gen_max: Option<u32>,
    pub pcie_width: Option<u32>,
    pub pcie_width_max: Option<u32>,
    /// Whether the PCIe figures were read while the GPU was loaded.
    pub pcie_under_load: bool,
    pub usable_vram_gib: Option<f64>,
    /// `bf16` or `fp16`.
    pub matmul_dtype: Option<String>,
    /// With all-ones inputs (what reference figures compare with).
    pub matmul_tflops: Option<f64>,
    /// With random inputs, under the power limit.
    pub matmul_random_tflops: Option<f64>,
    pub matmul_reference_tflops: Option<f64>,
    /// Device-to-device copy, bytes read plus bytes written, in GB/s (10^9 bytes).
    pub copy_gb_per_s: Option<f64>,
    pub copy_reference_gb_per_s: Option<f64>,
    /// Mean throughput over the sustained load.
    pub sustained_tflops: Option<f64>,
    pub load_temperature_max_c: Option<f64>,
    pub load_sm_clock_mean_mhz: Option<f64>,
    pub load_power_mean_w: Option<f64>,
}

/// What was expected, as given (config or flags).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ExpectSummary {
    pub gpu: Option<String>,
    pub count: Option<u32>,
    pub memory_gib: Option<f64>,
    pub min_cuda: Option<String>,
}

/// The durations and sizes the check ran with, so reports taken differently are not confused.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct RunSettings {
    pub sustain_s: f64,
    pub bench_s: f64,
    pub matmul_n: u32,
    pub vram_fraction: f64,
}

/// Everything one `gpufleet check` found.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CheckReport {
    pub schema: u32,
    /// The host's name in the config, `local` for `--local`, or the `user@host:port` given.
    pub host: String,
    /// `local` or `ssh user@host:port`.
    pub target: String,
    pub started_at_ms: u64,
    pub duration_ms: u64,
    pub gpufleet_version: String,
    #[serde(default)]
    pub expect: ExpectSummary,
    #[serde(default)]
    pub settings: RunSettings,
    #[serde(default)]
    pub driver_version: Option<String>,
    /// The newest CUDA the driver supports (nvidia-smi's "CUDA Version").
    #[serde(default)]
    pub cuda_version: Option<String>,
    #[serde(default)]
    pub torch_version: Option<String>,
    /// The CUDA version PyTorch was built for.
    #[serde(default)]
    pub torch_cuda: Option<String>,
    #[serde(default)]
    pub gpus: Vec<GpuFigures>,
    pub checks: Vec<CheckResult>,
    /// The worst verdict of all checks.
    pub status: Status,
    pub exit_code: u8,
}

impl CheckReport {
    /// The overall verdict and exit code, from the checks.
    pub fn finish(&mut self) {
        self.status = worst(&self.checks);
        self.exit_code = exit_code_of(self.status);
    }

    /// The figures of the GPU `other` describes: same UUID, else same index.
    pub fn figures_matching(&self, other: &GpuFigures) -> Option<&GpuFigures> {
        let by_uuid = (!other.uuid.is_empty())
            .then(|| self.gpus.iter().find(|g| g.uuid == other.uuid))
            .flatten();
        by_uuid.or_else(|| self.gpus.iter().find(|g| g.index == other.index))
    }
}

/// The worst status among `checks`; `Pass` when there are none.
pub fn worst(checks: &[CheckResult]) -> Status {
    checks
        .iter()
        .map(|c| c.status)
        .max()
        .unwrap_or(Status::Pass)
}

/// 0 when everything passed or was skipped, 1 for any warning, 2 for any failure.
pub fn exit_code_of(status: Status) -> u8 {
    match status {
        Status::Pass | Status::Skip => EXIT_PASS,
        Status::Warn => EXIT_WARN,
        Status::Fail => EXIT_FAIL,
    }
}

/// The exit code `gpufleet check` ends with for `report` (recomputed from its checks, so a
/// hand-edited or old report cannot disagree with itself).
pub fn exit_code(report: &CheckReport) -> u8 {
    exit_code_of(worst(&report.checks))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(status: Status) -> CheckResult {
        CheckResult::new("x.y", Category::Health, None, status)
    }

    #[test]
    fn the_worst_status_decides_the_exit_code() {
        assert_eq!(exit_code_of(worst(&[])), 0);
        assert_eq!(
            exit_code_of(worst(&[check(Status::Pass), check(Status::Skip)])),
            0
        );
        assert_eq!(
            exit_code_of(worst(&[check(Status::Skip), check(Status::Warn)])),
            1
        );
        assert_eq!(
            exit_code_of(worst(&[check(Status::Fail), check(Status::Warn)])),
            2
        );
    }

    #[test]
    fn status_words_are_the_json_spelling() {
        for s in [Status::Pass, Status::Skip, Status::Warn, Status::Fail] {
            let json = serde_json::to_string(&s).expect("serializes");
            assert_eq!(json, format!("\"{}\"", s.word()));
        }
    }
}
