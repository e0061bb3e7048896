//! Built-in advice steps: conclusions drawn from facts rather than from a command. The one so
//! far matches the driver's CUDA version and the GPU's compute capability against PyTorch's
//! build and prints the exact install command that fixes a mismatch.

use rust_i18n::t;

use crate::runbook::facts::Facts;

/// A PyTorch wheel index: its tag, the CUDA it is built for, and the architectures it carries.
struct Wheel {
    tag: &'static str,
    cuda: (u32, u32),
    archs: &'static [(u32, u32)],
}

/// The PyTorch 2.9 wheels' architecture lists, newest first, as quoted in
/// <https://github.com/Comfy-Org/ComfyUI/issues/16438>.
const WHEELS: [Wheel; 3] = [
    Wheel {
        tag: "cu130",
        cuda: (13, 0),
        archs: &[(7, 5), (8, 0), (8, 6), (9, 0), (10, 0), (12, 0)],
    },
    Wheel {
        tag: "cu128",
        cuda: (12, 8),
        archs: &[(7, 0), (7, 5), (8, 0), (8, 6), (9, 0), (10, 0), (12, 0)],
    },
    Wheel {
        tag: "cu126",
        cuda: (12, 6),
        archs: &[(5, 0), (6, 0), (7, 0), (7, 5), (8, 0), (8, 6), (9, 0)],
    },
];

/// Minimum Linux driver per CUDA toolkit (CUDA Toolkit release notes, table 3,
/// <https://docs.nvidia.com/cuda/cuda-toolkit-release-notes/index.html>).
const MIN_DRIVER: [((u32, u32), &str); 3] = [
    ((13, 0), "580.65.06"),
    ((12, 8), "570.26"),
    ((12, 6), "560.28.03"),
];

const INDEX_URL: &str = "https://download.pytorch.org/whl";

fn major_minor(text: &str) -> Option<(u32, u32)> {
    let text = text.trim().trim_start_matches("sm_");
    if let Some((major, minor)) = text.split_once('.') {
        let minor = minor.split('.').next()?;
        return Some((major.parse().ok()?, minor.parse().ok()?));
    }
    // `sm_90` style: the last digit is the minor version.
    if text.len() >= 2 && text.chars().all(|c| c.is_ascii_digit()) {
        let (major, minor) = text.split_at(text.len() - 1);
        return Some((major.parse().ok()?, minor.parse().ok()?));
    }
    None
}

/// Code built for `arch` runs on `device` when the major versions match and the device is not
/// older (NVIDIA GPUs are backward compatible within a major version).
fn runs_on(arch: (u32, u32), device: (u32, u32)) -> bool {
    arch.0 == device.0 && arch.1 <= device.1
}

fn shown((major, minor): (u32, u32)) -> String {
    format!("{major}.{minor}")
}

/// The advice lines for `torch-install`, from facts `driver_cuda`, `compute_cap` (per GPU) or
/// `torch_capability`, `torch_version`, `torch_cuda` and `torch_archs`.
pub fn torch_install(facts: &Facts, gpu: Option<u32>) -> Vec<String> {
    let gpu = gpu.or_else(|| facts.gpu_indexes().first().copied());
    let driver = facts.get("driver_cuda", None).and_then(major_minor);
    let device = facts
        .get("compute_cap", gpu)
        .and_then(major_minor)
        .or_else(|| facts.get("torch_capability", None).and_then(major_minor));
    let torch_cuda = facts.get("torch_cuda", None).and_then(major_minor);
    let archs: Vec<(u32, u32)> = facts
        .get("torch_archs", None)
        .unwrap_or("")
        .split_whitespace()
        .filter_map(major_minor)
        .collect();
    let missing = t!("torch_advice.version_not_found");
    let version = facts.get("torch_version", None).unwrap_or(&missing);
    let mut out = Vec::new();
    let (Some(driver), Some(device)) = (driver, device) else {
        out.push(t!("torch_advice.unreadable").into_owned());
        return out;
    };
    let sm = format!("{}{}", device.0, device.1);
    out.push(
        t!(
            "torch_advice.driver",
            driver = shown(driver),
            sm = sm,
            capability = shown(device)
        )
        .into_owned(),
    );
    match torch_cuda {
        Some(built) => {
            let kernels = if archs.is_empty() {
                String::new()
            } else {
                let list: Vec<String> =
                    archs.iter().map(|a| format!("sm_{}{}", a.0, a.1)).collect();
                t!("torch_advice.with_kernels", list = list.join(" ")).into_owned()
            };
            out.push(
                t!(
                    "torch_advice.built_for",
                    version = version,
                    cuda = shown(built),
                    kernels = kernels
                )
                .into_owned(),
            )
        }
        None => out.push(t!("torch_advice.no_cuda_build", version = version).into_owned()),
    }
    let too_new = torch_cuda.is_some_and(|built| built > driver);
    let arch_missing = !archs.is_empty() && !archs.iter().any(|a| runs_on(*a, device));
    if torch_cuda.is_some() && !too_new && !arch_missing {
        out.push(t!("torch_advice.they_match").into_owned());
        return out;
    }
    if too_new {
        out.push(t!("torch_advice.driver_too_old").into_owned());
    }
    if arch_missing {
        out.push(t!("torch_advice.no_kernel_image", sm = sm).into_owned());
    }
    let carries = |w: &&Wheel| w.archs.iter().any(|a| runs_on(*a, device));
    let fitting = WHEELS.iter().filter(carries).find(|w| w.cuda <= driver);
    match fitting {
        Some(wheel) => {
            out.push(t!("torch_advice.install", cuda = shown(wheel.cuda), sm = sm).into_owned());
            out.push(format!(
                "  python3 -m pip install --upgrade torch --index-url {INDEX_URL}/{}",
                wheel.tag
            ));
            out.push(t!("torch_advice.same_index").into_owned());
        }
        None => match WHEELS.iter().find(carries) {
            Some(wheel) => {
                let newer = t!("torch_advice.newer_driver");
                let min = MIN_DRIVER
                    .iter()
                    .find(|(c, _)| *c == wheel.cuda)
                    .map_or(&*newer, |(_, d)| d);
                out.push(
                    t!(
                        "torch_advice.no_build_for_driver",
                        cuda = shown(wheel.cuda),
                        tag = wheel.tag,
                        min = min
                    )
                    .into_owned(),
                );
            }
            None => out.push(t!("torch_advice.gpu_too_old", sm = sm).into_owned()),
        },
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts(pairs: &[(&str, &str)]) -> Facts {
        let mut f = Facts::default();
        for (k, v) in pairs {
            f.set(k, *v);
        }
        f
    }

    #[test]
    fn the_h200_build_matches() {
        // The H200's own answers: driver CUDA 13.0, torch 2.11.0+cu130, capability 9.0.
        let f = facts(&[
            ("driver_cuda", "13.0"),
            ("torch_capability", "9.0"),
            ("torch_version", "2.11.0+cu130"),
            ("torch_cuda", "13.0"),
            ("torch_archs", "sm_75 sm_80 sm_86 sm_90 sm_100 sm_120"),
        ]);
        let text = torch_install(&f, None).join("\n");
        assert!(text.contains("no reinstall needed"), "{text}");
    }

    #[test]
    fn a_build_newer_than_the_driver_gets_an_older_wheel() {
        let f = facts(&[
            ("driver_cuda", "12.8"),
            ("torch_capability", "9.0"),
            ("torch_version", "2.11.0+cu130"),
            ("torch_cuda", "13.0"),
        ]);
        let text = torch_install(&f, None).join("\n");
        assert!(text.contains("too old"), "{text}");
        assert!(text.contains("whl/cu128"), "{text}");
    }

    #[test]
    fn a_missing_arch_is_not_fixed_by_a_driver() {
        // A P100 (sm_60) on a build for sm_70 and newer, as Kaggle's P100s met the 2.9 wheels.
        let f = facts(&[
            ("driver_cuda", "12.8"),
            ("torch_capability", "6.0"),
            ("torch_cuda", "12.8"),
            ("torch_archs", "sm_70 sm_75 sm_80 sm_86 sm_90 sm_100 sm_120"),
        ]);
        let text = torch_install(&f, None).join("\n");
        assert!(text.contains("no kernel image"), "{text}");
        assert!(text.contains("whl/cu126"), "{text}");
    }
}
