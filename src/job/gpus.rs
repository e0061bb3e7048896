//! GPU models a renter meets (the clouds' and marketplaces' usual cards, China's export
//! variants among them), as data: memory, dense BF16 tensor throughput and memory bandwidth,
//! each row with the datasheet it comes from. NVIDIA's datasheets print tensor figures "with
//! sparsity" (marked `*`); the dense figure, half of it, is the one kept here because training
//! does not use 2:4 sparsity. Memory is in GB (10^9 bytes) as the datasheets print it. Where
//! NVIDIA publishes no figure, the row says so instead of guessing one.

/// One GPU model.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GpuModel {
    pub name: &'static str,
    /// Lower-case pieces of the name nvidia-smi (or a config's `expect.gpu`) gives it; the
    /// first row whose piece a name contains is its model.
    pub needles: &'static [&'static str],
    pub vram_gb: f64,
    /// Whether the card has BF16 tensor cores (Volta's V100 has FP16 ones only).
    pub bf16: bool,
    /// Dense BF16 tensor-core TFLOP/s (FP32 accumulate on GeForce cards); `None` where the card
    /// has no BF16 or its datasheet gives no figure.
    pub bf16_tflops: Option<f64>,
    pub bandwidth_gb_s: f64,
    /// Where the figures come from.
    pub source: &'static str,
}

const H100_PAGE: &str = "https://www.nvidia.com/en-us/data-center/h100/";
const A100_SHEET: &str = "https://www.nvidia.com/content/dam/en-zz/Solutions/Data-Center/a100/pdf/nvidia-a100-datasheet-us-nvidia-1758950-r4-web.pdf";
/// NVIDIA's export variants for China keep the memory and tensor cores of the card they cut
/// down (NVLink to 400 GB/s) and have no datasheet of their own on NVIDIA's site.
const H800_SOURCE: &str = "https://www.nvidia.com/en-us/data-center/h100/ (the H800 is the H100 with NVLink cut to 400 GB/s; no separate datasheet)";
const A800_SOURCE: &str = "https://www.nvidia.com/content/dam/en-zz/Solutions/Data-Center/a100/pdf/nvidia-a100-datasheet-us-nvidia-1758950-r4-web.pdf (the A800 is the A100 80GB with NVLink cut to 400 GB/s; no separate datasheet)";
const V100_SHEET: &str = "https://images.nvidia.com/content/technologies/volta/pdf/volta-v100-datasheet-update-us-1165301-r5.pdf (32/16 GB HBM2 at 900 GB/s; FP16 tensor cores only, no BF16)";

/// The table, largest memory first; more specific names come before names they contain
/// (`h200` before `h20`, `l40s` before `l40` before `l4`, `a100` before `a10`,
/// `rtx 4090 d` before `rtx 4090`, `h800 pcie` before `h800`).
pub const GPU_MODELS: &[GpuModel] = &[
    GpuModel {
        name: "H200 SXM",
        needles: &["h200"],
        vram_gb: 141.0,
        bf16: true,
        bf16_tflops: Some(989.0),
        bandwidth_gb_s: 4800.0,
        source: "https://www.nvidia.com/en-us/data-center/h200/ (BFLOAT16 1,979 TFLOPS with sparsity)",
    },
    GpuModel {
        name: "H20",
        needles: &["h20"],
        vram_gb: 96.0,
        bf16: true,
        bf16_tflops: Some(148.0),
        bandwidth_gb_s: 4000.0,
        source: "https://huggingface.co/hardware/h20 (NVIDIA publishes no H20 datasheet; 96 GB HBM3, 4.0 TB/s and 148 dense FP16/BF16 TFLOPS as the clouds renting it list them)",
    },
    GpuModel {
        name: "H100 SXM",
        needles: &["h100 80gb hbm3", "h100 sxm", "h100-sxm"],
        vram_gb: 80.0,
        bf16: true,
        bf16_tflops: Some(989.0),
        bandwidth_gb_s: 3350.0,
        source: H100_PAGE,
    },
    GpuModel {
        name: "H100 PCIe",
        needles: &["h100 pcie", "h100-pcie", "h100"],
        vram_gb: 80.0,
        bf16: true,
        bf16_tflops: Some(756.0),
        bandwidth_gb_s: 2000.0,
        source: H100_PAGE,
    },
    GpuModel {
        name: "H800 PCIe",
        needles: &["h800 pcie", "h800-pcie"],
        vram_gb: 80.0,
        bf16: true,
        bf16_tflops: Some(756.0),
        bandwidth_gb_s: 2000.0,
        source: H800_SOURCE,
    },
    GpuModel {
        name: "H800 SXM",
        needles: &["h800"],
        vram_gb: 80.0,
        bf16: true,
        bf16_tflops: Some(989.0),
        bandwidth_gb_s: 3350.0,
        source: H800_SOURCE,
    },
    GpuModel {
        name: "A100 80GB SXM",
        needles: &["a100-sxm4-80gb", "a100 80gb", "a100-80gb", "a100 sxm"],
        vram_gb: 80.0,
        bf16: true,
        bf16_tflops: Some(312.0),
        bandwidth_gb_s: 2039.0,
        source: A100_SHEET,
    },
    GpuModel {
        name: "A800 80GB PCIe",
        needles: &["a800 80gb pcie", "a800-pcie"],
        vram_gb: 80.0,
        bf16: true,
        bf16_tflops: Some(312.0),
        bandwidth_gb_s: 1935.0,
        source: A800_SOURCE,
    },
    GpuModel {
        name: "A800 80GB SXM",
        needles: &["a800"],
        vram_gb: 80.0,
        bf16: true,
        bf16_tflops: Some(312.0),
        bandwidth_gb_s: 2039.0,
        source: A800_SOURCE,
    },
    GpuModel {
        name: "L40S",
        needles: &["l40s"],
        vram_gb: 48.0,
        bf16: true,
        bf16_tflops: Some(362.05),
        bandwidth_gb_s: 864.0,
        source: "https://www.nvidia.com/en-us/data-center/l40s/ (BF16 733 TFLOPS with sparsity)",
    },
    GpuModel {
        name: "L40",
        needles: &["l40"],
        vram_gb: 48.0,
        bf16: true,
        bf16_tflops: Some(181.05),
        bandwidth_gb_s: 864.0,
        source: "https://www.nvidia.com/en-us/data-center/l40/ (BF16 362.1 TFLOPS with sparsity)",
    },
    GpuModel {
        name: "L20",
        needles: &["l20"],
        vram_gb: 48.0,
        bf16: true,
        bf16_tflops: None,
        bandwidth_gb_s: 864.0,
        source: "https://huggingface.co/hardware/l20 (NVIDIA publishes no L20 datasheet: 48 GB GDDR6 on a 384-bit bus at 864 GB/s; no tensor figure published)",
    },
    GpuModel {
        name: "RTX A6000",
        needles: &["a6000"],
        vram_gb: 48.0,
        bf16: true,
        bf16_tflops: Some(154.85),
        bandwidth_gb_s: 768.0,
        source: "https://www.nvidia.com/en-us/design-visualization/rtx-a6000/ (48 GB GDDR6, 768 GB/s; tensor performance 309.7 TFLOPS with sparsity)",
    },
    GpuModel {
        name: "A100 40GB PCIe",
        needles: &["a100-pcie-40gb", "a100 40gb", "a100"],
        vram_gb: 40.0,
        bf16: true,
        bf16_tflops: Some(312.0),
        bandwidth_gb_s: 1555.0,
        source: A100_SHEET,
    },
    GpuModel {
        name: "RTX 5090",
        needles: &["rtx 5090"],
        vram_gb: 32.0,
        bf16: true,
        bf16_tflops: Some(209.5),
        bandwidth_gb_s: 1792.0,
        source: "https://images.nvidia.com/aem-dam/Solutions/geforce/blackwell/nvidia-rtx-blackwell-gpu-architecture.pdf (Appendix A, 32 GB GDDR7 at 1,792 GB/s, BF16 with FP32 accumulate)",
    },
    GpuModel {
        name: "V100 32GB",
        needles: &[
            "v100-sxm2-32gb",
            "v100-pcie-32gb",
            "v100s",
            "v100-32gb",
            "v100 32gb",
        ],
        vram_gb: 32.0,
        bf16: false,
        bf16_tflops: None,
        bandwidth_gb_s: 900.0,
        source: V100_SHEET,
    },
    GpuModel {
        name: "RTX 4090 D",
        needles: &["rtx 4090 d", "rtx 4090d"],
        vram_gb: 24.0,
        bf16: true,
        bf16_tflops: Some(147.1),
        bandwidth_gb_s: 1008.0,
        source: "https://www.nvidia.cn/geforce/graphics-cards/40-series/rtx-4090-d/ (24 GB GDDR6X, 114 of the RTX 4090's 128 SMs at the same 2.52 GHz boost and 21 Gbps memory: the Ada whitepaper's 165.2 BF16 TFLOPS scaled by 114/128)",
    },
    GpuModel {
        name: "RTX 4090",
        needles: &["rtx 4090"],
        vram_gb: 24.0,
        bf16: true,
        bf16_tflops: Some(165.2),
        bandwidth_gb_s: 1008.0,
        source: "https://images.nvidia.com/aem-dam/Solutions/geforce/ada/nvidia-ada-gpu-architecture.pdf (Appendix A, BF16 with FP32 accumulate)",
    },
    GpuModel {
        name: "RTX 3090",
        needles: &["rtx 3090"],
        vram_gb: 24.0,
        bf16: true,
        bf16_tflops: Some(71.0),
        bandwidth_gb_s: 936.0,
        source: "https://www.nvidia.com/content/PDF/nvidia-ampere-ga-102-gpu-architecture-whitepaper-v2.pdf (Table 9, BF16 with FP32 accumulate)",
    },
    GpuModel {
        name: "A10",
        needles: &["a10"],
        vram_gb: 24.0,
        bf16: true,
        bf16_tflops: Some(125.0),
        bandwidth_gb_s: 600.0,
        source: "https://www.nvidia.com/en-us/data-center/products/a10-gpu/ (BF16 250 TFLOPS with sparsity)",
    },
    GpuModel {
        name: "L4",
        needles: &["l4"],
        vram_gb: 24.0,
        bf16: true,
        bf16_tflops: Some(121.0),
        bandwidth_gb_s: 300.0,
        source: "https://www.nvidia.com/en-us/data-center/l4/ (BF16 242 TFLOPS with sparsity)",
    },
    GpuModel {
        name: "V100 16GB",
        needles: &["v100"],
        vram_gb: 16.0,
        bf16: false,
        bf16_tflops: None,
        bandwidth_gb_s: 900.0,
        source: V100_SHEET,
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
            // Names as nvidia-smi / torch print them on the rental cards (public logs).
            ("NVIDIA GeForce RTX 4090 D", "RTX 4090 D"),
            ("NVIDIA GeForce RTX 5090", "RTX 5090"),
            ("NVIDIA GeForce RTX 3090", "RTX 3090"),
            ("NVIDIA RTX A6000", "RTX A6000"),
            ("NVIDIA A800-SXM4-80GB", "A800 80GB SXM"),
            ("NVIDIA H800 80GB HBM3", "H800 SXM"),
            ("NVIDIA H20", "H20"),
            ("NVIDIA L20", "L20"),
            ("NVIDIA L40", "L40"),
            ("Tesla V100-SXM2-32GB", "V100 32GB"),
            ("Tesla V100-PCIE-32GB", "V100 32GB"),
            ("Tesla V100S-PCIE-32GB", "V100 32GB"),
            ("Tesla V100-SXM2-16GB", "V100 16GB"),
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
            assert!(m.vram_gb > 0.0 && m.bandwidth_gb_s > 0.0, "{}", m.name);
            assert!(m.bf16_tflops.is_none_or(|t| t > 0.0), "{}", m.name);
            // A figure for BF16 only where the card has it.
            assert!(m.bf16 || m.bf16_tflops.is_none(), "{}", m.name);
        }
    }

    #[test]
    fn the_rental_cards_are_in_the_table_with_their_memory() {
        // What AutoDL, vast.ai, RunPod and the Chinese clouds rent, with the datasheets' sizes.
        let want = [
            ("RTX 3090", 24.0),
            ("RTX 4090 D", 24.0),
            ("RTX 5090", 32.0),
            ("RTX A6000", 48.0),
            ("A800 80GB SXM", 80.0),
            ("A800 80GB PCIe", 80.0),
            ("H800 SXM", 80.0),
            ("H800 PCIe", 80.0),
            ("H20", 96.0),
            ("L20", 48.0),
            ("L40", 48.0),
            ("A10", 24.0),
            ("V100 16GB", 16.0),
            ("V100 32GB", 32.0),
        ];
        for (name, gb) in want {
            let m = GPU_MODELS.iter().find(|m| m.name == name);
            assert_eq!(m.map(|m| m.vram_gb), Some(gb), "{name}");
        }
        // Largest memory first.
        assert!(GPU_MODELS.windows(2).all(|w| w[0].vram_gb >= w[1].vram_gb));
    }
}
