//! What each common rental GPU should deliver: datasheet peaks (source named per entry),
//! figures measured on real cards where we have them, and the throughput a healthy card of the
//! model is expected to reach in the probe's benchmarks.

/// The fraction of the datasheet's dense tensor peak that a PyTorch 8192³ GEMM is assumed to
/// sustain when no measurement of the model is on file. The one measured card (H200: 790 of
/// 989.5 TFLOP/s) reached 0.80; a lower assumption keeps healthy cards of unmeasured models
/// from warning.
pub const MATMUL_EFFICIENCY: f64 = 0.7;
/// The same for a device-to-device copy against the datasheet memory bandwidth (H200: 4.3 of
/// 4.8 TB/s, 0.90).
pub const COPY_EFFICIENCY: f64 = 0.8;

/// One GPU model.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Reference {
    /// The name reports use, e.g. `H100 SXM`.
    pub model: &'static str,
    /// Words that must all appear in nvidia-smi's name (upper case, `-` read as a space).
    tokens: &'static [&'static str],
    /// The memory on the label, in GB as marketed.
    pub memory_label_gb: f64,
    /// `bf16`, or `fp16` for cards without bf16 tensor cores.
    pub dtype: &'static str,
    /// Datasheet dense (no sparsity) tensor throughput for `dtype` with FP32 accumulation.
    pub datasheet_tflops: f64,
    /// Datasheet memory bandwidth.
    pub datasheet_memory_gb_per_s: f64,
    /// Measured on a real card of this model by the probe's method, when on file.
    pub measured_tflops: Option<f64>,
    /// Measured device-to-device copy (bytes read plus written), when on file.
    pub measured_copy_gb_per_s: Option<f64>,
    /// Overrides [`MATMUL_EFFICIENCY`] for models that cannot hold their boost clock.
    matmul_efficiency: Option<f64>,
    /// Whether the model has ECC memory that is normally enabled.
    pub ecc: bool,
}

impl Reference {
    /// The matrix-multiply throughput a healthy card should reach.
    pub fn expected_tflops(&self) -> f64 {
        self.measured_tflops.unwrap_or_else(|| {
            self.datasheet_tflops * self.matmul_efficiency.unwrap_or(MATMUL_EFFICIENCY)
        })
    }

    /// The copy bandwidth a healthy card should reach.
    pub fn expected_copy_gb_per_s(&self) -> f64 {
        self.measured_copy_gb_per_s
            .unwrap_or(self.datasheet_memory_gb_per_s * COPY_EFFICIENCY)
    }

    /// Whether the expected figures come from a measurement rather than the datasheet.
    pub fn is_measured(&self) -> bool {
        self.measured_tflops.is_some()
    }
}

const fn entry(
    model: &'static str,
    tokens: &'static [&'static str],
    memory_label_gb: f64,
    dtype: &'static str,
    datasheet_tflops: f64,
    datasheet_memory_gb_per_s: f64,
    ecc: bool,
) -> Reference {
    Reference {
        model,
        tokens,
        memory_label_gb,
        dtype,
        datasheet_tflops,
        datasheet_memory_gb_per_s,
        measured_tflops: None,
        measured_copy_gb_per_s: None,
        matmul_efficiency: None,
        ecc,
    }
}

/// The table, most specific names first (an `H200 NVL` must not be read as an `H200`).
/// Datasheet throughput is dense; NVIDIA's datasheets print the sparse figure with an asterisk,
/// which is twice these.
pub const TABLE: &[Reference] = &[
    // NVIDIA H200 NVL datasheet (nvidia.com/h200, 2024): BF16 1,671 TFLOPS sparse, 141 GB,
    // 4.8 TB/s.
    entry(
        "H200 NVL",
        &["H200", "NVL"],
        141.0,
        "bf16",
        835.5,
        4800.0,
        true,
    ),
    // NVIDIA H200 SXM datasheet (nvidia.com/h200, 2024): BF16 1,979 TFLOPS sparse, 141 GB,
    // 4.8 TB/s. Measured in 2026-11 on one H200 SXM with driver 580.159.04: bf16
    // 8192³ matmul about 790 TFLOP/s, device-to-device copy about 4.3 TB/s read+write.
    Reference {
        measured_tflops: Some(790.0),
        measured_copy_gb_per_s: Some(4300.0),
        ..entry("H200", &["H200"], 141.0, "bf16", 989.5, 4800.0, true)
    },
    // NVIDIA H100 Tensor Core GPU datasheet (2023): NVL BF16 1,671 sparse, 94 GB, 3.9 TB/s;
    // PCIe BF16 1,513 sparse, 80 GB, 2 TB/s; SXM BF16 1,979 sparse, 80 GB, 3.35 TB/s.
    entry(
        "H100 NVL",
        &["H100", "NVL"],
        94.0,
        "bf16",
        835.5,
        3900.0,
        true,
    ),
    entry(
        "H100 PCIe",
        &["H100", "PCIE"],
        80.0,
        "bf16",
        756.5,
        2000.0,
        true,
    ),
    entry("H100 SXM", &["H100"], 80.0, "bf16", 989.5, 3350.0, true),
    // NVIDIA A100 Tensor Core GPU datasheet (2021): BF16 312 TFLOPS dense; 40 GB 1,555 GB/s;
    // 80 GB PCIe 1,935 GB/s; 80 GB SXM 2,039 GB/s.
    entry(
        "A100 80GB PCIe",
        &["A100", "80GB", "PCIE"],
        80.0,
        "bf16",
        312.0,
        1935.0,
        true,
    ),
    entry(
        "A100 80GB",
        &["A100", "80GB"],
        80.0,
        "bf16",
        312.0,
        2039.0,
        true,
    ),
    entry("A100 40GB", &["A100"], 40.0, "bf16", 312.0, 1555.0, true),
    // NVIDIA L40S datasheet (2023): BF16 362.05 TFLOPS dense, 48 GB GDDR6 with ECC, 864 GB/s.
    entry("L40S", &["L40S"], 48.0, "bf16", 362.05, 864.0, true),
    // NVIDIA L4 datasheet (2023): FP16/BF16 242 TFLOPS sparse, 24 GB, 300 GB/s.
    entry("L4", &["L4"], 24.0, "bf16", 121.0, 300.0, true),
    // NVIDIA A10 datasheet (2021): BF16 125 TFLOPS dense, 24 GB GDDR6, 600 GB/s.
    entry("A10", &["A10"], 24.0, "bf16", 125.0, 600.0, true),
    // NVIDIA T4 datasheet (2019): mixed precision FP16/FP32 65 TFLOPS, 16 GB, 320 GB/s. Turing
    // has no bf16 tensor cores, so the probe runs fp16. The card's 70 W limit keeps it well
    // below boost clock under dense tensor load, hence the lower assumed efficiency.
    Reference {
        matmul_efficiency: Some(0.5),
        ..entry("T4", &["T4"], 16.0, "fp16", 65.0, 320.0, true)
    },
    // NVIDIA Ada Lovelace GPU Architecture whitepaper v1.1 (2022), RTX 4090: peak BF16 tensor
    // with FP32 accumulate 165.2 TFLOPS dense, 24 GB GDDR6X, 1,008 GB/s.
    entry(
        "RTX 4090",
        &["RTX", "4090"],
        24.0,
        "bf16",
        165.2,
        1008.0,
        false,
    ),
    // NVIDIA Ampere GA102 GPU Architecture whitepaper v2 (2021), RTX 3090: peak BF16 tensor
    // with FP32 accumulate 71 TFLOPS dense, 24 GB GDDR6X, 936 GB/s.
    entry(
        "RTX 3090",
        &["RTX", "3090"],
        24.0,
        "bf16",
        71.0,
        936.0,
        false,
    ),
];

/// Name words that make a different card of the same number (RTX 4090 D, RTX 3090 Ti,
/// laptop parts): a name carrying one matches no entry rather than the wrong one.
const VARIANT_WORDS: &[&str] = &["D", "TI", "SUPER", "LAPTOP", "MOBILE", "MAX", "MAXQ"];

/// The words of a GPU name, upper case, without the vendor and brand words.
pub fn name_tokens(name: &str) -> Vec<String> {
    name.to_ascii_uppercase()
        .replace(['-', '_', '/', '(', ')', ','], " ")
        .split_whitespace()
        .filter(|w| !matches!(*w, "NVIDIA" | "GEFORCE" | "TESLA" | "GPU"))
        .map(str::to_string)
        .collect()
}

/// The reference entry for a name as nvidia-smi or PyTorch prints it
/// (`NVIDIA A100-SXM4-80GB`, `NVIDIA GeForce RTX 4090`, `Tesla T4`).
pub fn lookup(name: &str) -> Option<&'static Reference> {
    let words = name_tokens(name);
    if words.iter().any(|w| VARIANT_WORDS.contains(&w.as_str())) {
        return None;
    }
    TABLE
        .iter()
        .find(|r| r.tokens.iter().all(|t| words.iter().any(|w| w == t)))
}

/// How a measured figure compares with what a healthy card reaches: at least 85% passes, at
/// least 60% warns, less fails.
pub fn grade(measured: f64, expected: f64) -> super::report::Status {
    use super::report::Status;
    if expected <= 0.0 || !measured.is_finite() {
        return Status::Warn;
    }
    let ratio = measured / expected;
    if ratio >= 0.85 {
        Status::Pass
    } else if ratio >= 0.6 {
        Status::Warn
    } else {
        Status::Fail
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::report::Status;

    fn model(name: &str) -> Option<&'static str> {
        lookup(name).map(|r| r.model)
    }

    #[test]
    fn real_nvidia_smi_names_find_their_entry() {
        assert_eq!(model("NVIDIA H200"), Some("H200"));
        assert_eq!(model("NVIDIA H200 NVL"), Some("H200 NVL"));
        assert_eq!(model("NVIDIA H100 80GB HBM3"), Some("H100 SXM"));
        assert_eq!(model("NVIDIA H100 PCIe"), Some("H100 PCIe"));
        assert_eq!(model("NVIDIA H100 NVL"), Some("H100 NVL"));
        assert_eq!(model("NVIDIA A100-SXM4-80GB"), Some("A100 80GB"));
        assert_eq!(model("NVIDIA A100 80GB PCIe"), Some("A100 80GB PCIe"));
        assert_eq!(model("NVIDIA A100-SXM4-40GB"), Some("A100 40GB"));
        assert_eq!(model("NVIDIA A100-PCIE-40GB"), Some("A100 40GB"));
        assert_eq!(model("NVIDIA L40S"), Some("L40S"));
        assert_eq!(model("NVIDIA L4"), Some("L4"));
        assert_eq!(model("NVIDIA A10"), Some("A10"));
        assert_eq!(model("Tesla T4"), Some("T4"));
        assert_eq!(model("NVIDIA GeForce RTX 4090"), Some("RTX 4090"));
        assert_eq!(model("NVIDIA GeForce RTX 3090"), Some("RTX 3090"));
    }

    #[test]
    fn near_names_do_not_borrow_another_cards_figures() {
        assert_eq!(model("NVIDIA A10G"), None);
        assert_eq!(model("NVIDIA GeForce RTX 4090 D"), None);
        assert_eq!(model("NVIDIA GeForce RTX 3090 Ti"), None);
        assert_eq!(model("NVIDIA GeForce RTX 4090 Laptop GPU"), None);
        assert_eq!(model("NVIDIA L40"), None);
        assert_eq!(model("NVIDIA GH200 480GB"), None);
    }

    #[test]
    fn the_h200_expects_its_measured_figures() {
        let h200 = lookup("NVIDIA H200").expect("in table");
        assert!(h200.is_measured());
        assert_eq!(h200.expected_tflops(), 790.0);
        assert_eq!(h200.expected_copy_gb_per_s(), 4300.0);
        let a10 = lookup("NVIDIA A10").expect("in table");
        assert!((a10.expected_tflops() - 87.5).abs() < 1e-9);
        assert!((a10.expected_copy_gb_per_s() - 480.0).abs() < 1e-9);
    }

    #[test]
    fn within_fifteen_percent_passes() {
        assert_eq!(grade(790.0 * 0.86, 790.0), Status::Pass);
        assert_eq!(grade(790.0 * 0.84, 790.0), Status::Warn);
        assert_eq!(grade(790.0 * 0.59, 790.0), Status::Fail);
        assert_eq!(grade(f64::NAN, 790.0), Status::Warn);
    }
}
