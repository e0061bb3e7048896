//! GPU models a renter meets, as data: memory, dense BF16 tensor throughput and memory
//! bandwidth, each row with the datasheet it comes from. NVIDIA's datasheets print tensor
//! figures "with sparsity" (marked `*`); the dense figure, half of it, is the one kept here
//! because training does not use 2:4 sparsity. Memory is in GB (10^9 bytes) as the datasheets
//! print it.

/// One GPU model.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GpuModel {
    pub name: &'static str,
    /// Lower-case pieces of the name nvidia-smi (or a config's `expect.gpu`) gives it; the
    /// first row whose piece a name contains is its model.
    pub needles: &'static [&'static str],
    pub vram_gb: f64,
    /// Dense BF16 tensor-core TFLOP/s (FP32 accumulate on GeForce cards).
    pub bf16_tflops: f64,
    pub bandwidth_gb_s: f64,
    /// Where the figures come from.
    pub source: &'static str,
}

const H100_PAGE: &str = "https://www.nvidia.com/en-us/data-center/h100/";
const A100_SHEET: &str = "https://www.nvidia.com/content/dam/en-zz/Solutions/Data-Center/a100/pdf/nvidia-a100-datasheet-us-nvidia-1758950-r4-web.pdf";

/// The table, largest memory first; more specific names come before names they contain
/// (`l40s` before `l4`, `a100` before `a10`).
pub const GPU_MODELS: &[GpuModel] = &[
    GpuModel {
        name: "H200 SXM",
        needles: &["h200"],
        vram_gb: 141.0,
        bf16_tflops: 989.0,
        bandwidth_gb_s: 4800.0,
        source: "https://www.nvidia.com/en-us/data-center/h200/ (BFLOAT16 1,979 TFLOPS with sparsity)",
    },
    GpuModel {
        name: "H100 SXM",
        needles: &["h100 80gb hbm3", "h100 sxm", "h100-sxm"],
        vram_gb: 80.0,
        bf16_tflops: 989.0,
        bandwidth_gb_s: 3350.0,
        source: H100_PAGE,
    },
    GpuModel {
        name: "H100 PCIe",
        needles: &["h100 pcie", "h100-pcie", "h100"],
        vram_gb: 80.0,
        bf16_tflops: 756.0,
        bandwidth_gb_s: 2000.0,
        source: H100_PAGE,
    },
    GpuModel {
        name: "A100 80GB SXM",
        needles: &["a100-sxm4-80gb", "a100 80gb", "a100-80gb", "a100 sxm"],
        vram_gb: 80.0,
        bf16_tflops: 312.0,
        bandwidth_gb_s: 2039.0,
        source: A100_SHEET,
    },
    GpuModel {
        name: "A100 40GB PCIe",
        needles: &["a100-pcie-40gb", "a100 40gb", "a100"],
        vram_gb: 40.0,
        bf16_tflops: 312.0,
        bandwidth_gb_s: 1555.0,
        source: A100_SHEET,
    },
    GpuModel {
        name: "L40S",
        needles: &["l40s"],
        vram_gb: 48.0,
        bf16_tflops: 362.05,
        bandwidth_gb_s: 864.0,
        source: "https://www.nvidia.com/en-us/data-center/l40s/ (BF16 733 TFLOPS with sparsity)",
    },
    GpuModel {
        name: "RTX 4090",
        needles: &["rtx 4090"],
        vram_gb: 24.0,
        bf16_tflops: 165.2,
        bandwidth_gb_s: 1008.0,
        source: "https://images.nvidia.com/aem-dam/Solutions/geforce/ada/nvidia-ada-gpu-architecture.pdf (Appendix A, BF16 with FP32 accumulate)",
    },
    GpuModel {
        name: "RTX 3090",
        needles: &["rtx 3090"],
        vram_gb: 24.0,
        bf16_tflops: 71.0,
        bandwidth_gb_s: 936.0,
        source: "https://www.nvidia.com/content/PDF/nvidia-ampere-ga-102-gpu-architecture-whitepaper-v2.pdf (Table 9, BF16 with FP32 accumulate)",
    },
    GpuModel {
        name: "A10",
        needles: &["a10"],
        vram_gb: 24.0,
        bf16_tflops: 125.0,
        bandwidth_gb_s: 600.0,
        source: "https://www.nvidia.com/en-us/data-center/products/a10-gpu/ (BF16 250 TFLOPS with sparsity)",
    },
    GpuModel {
        name: "L4",
        needles: &["l4"],
        vram_gb: 24.0,
        bf16_tflops: 121.0,
        bandwidth_gb_s: 300.0,
        source: "https://www.nvidia.com/en-us/data-center/l4/ (BF16 242 TFLOPS with sparsity)",
    },
];

/// The model a GPU name (`NVIDIA H100 80GB HBM3`, `RTX 4090`) belongs to.
pub fn model_for(name: &str) -> Option<&'static GpuModel> {
    let lower = name.to_ascii_lowercase();
    GPU_MODELS
        .iter()
        .find(|m| m.needles.iter().any(|n| lower.contains(n)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nvidia_smi_names_find_their_model() {
        // Names as nvidia-smi prints them (the H200 one from the fixtures' capture).
        let cases = [
            ("NVIDIA H200", "H200 SXM"),
            ("NVIDIA H100 80GB HBM3", "H100 SXM"),
            ("NVIDIA H100 PCIe", "H100 PCIe"),
            ("NVIDIA A100-SXM4-80GB", "A100 80GB SXM"),
            ("NVIDIA A100-PCIE-40GB", "A100 40GB PCIe"),
            ("NVIDIA L40S", "L40S"),
            ("NVIDIA L4", "L4"),
            ("NVIDIA A10", "A10"),
            ("NVIDIA GeForce RTX 4090", "RTX 4090"),
        ];
        for (name, want) in cases {
            assert_eq!(model_for(name).map(|m| m.name), Some(want), "{name}");
        }
        assert_eq!(model_for("Tesla T4"), None);
    }

    #[test]
    fn every_row_has_a_source_and_sane_figures() {
        for m in GPU_MODELS {
            assert!(m.source.starts_with("https://"), "{}", m.name);
            assert!(m.vram_gb > 0.0 && m.bf16_tflops > 0.0 && m.bandwidth_gb_s > 0.0);
        }
    }
}
