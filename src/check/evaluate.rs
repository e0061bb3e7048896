//! From what was observed to the report's checks and per-GPU figures: ties PyTorch's device
//! numbers to nvidia-smi's, picks each GPU's samples, and runs every verdict.

use rust_i18n::t;

use crate::check::inventory::{GpuStatic, Inventory, KernelLog};
use crate::check::load::{self, RAMP_S};
use crate::check::probe::{LoadSample, ProbeData};
use crate::check::reference;
use crate::check::report::{Category, CheckResult, GpuFigures, Status};
use crate::check::vendor::{Unreported, not_reported, skipped_checks};
use crate::check::verdict;
use crate::config::Expect;

/// Everything gathered on the host.
#[derive(Debug, Clone, PartialEq)]
pub struct Observed {
    pub inventory: Inventory,
    pub kernel: KernelLog,
    pub probe: ProbeData,
}

/// The checks and figures for `observed`; `sustain_s` is how long the load was asked to run.
pub fn evaluate(
    observed: &Observed,
    expect: &Expect,
    sustain_s: f64,
) -> (Vec<CheckResult>, Vec<GpuFigures>) {
    let inv = &observed.inventory;
    let probe = &observed.probe;
    let gpus = inv.gpus();
    let mut checks = Vec::new();
    if let Some(failure) = &inv.failure {
        checks.push(
            CheckResult::new("identity.count", Category::Identity, None, Status::Fail)
                .measured(t!("check_value.no_gpu_readable"))
                .expected(expect.count.map(|c| c.to_string()).unwrap_or_default())
                .message(t!("check_msg.nothing_else", failure = failure)),
        );
        checks.push(verdict::xid_lines(&observed.kernel));
        return (checks, Vec::new());
    }
    if let Some(vendor) = &inv.vendor {
        // Another vendor's cards: identity from its tool's reading; the rest is listed as
        // skipped with the reason.
        checks.push(verdict::count(&gpus, expect));
        let mut figures = Vec::new();
        for g in &gpus {
            checks.push(match g.name.is_empty() {
                true => not_reported(vendor, Unreported::Model, g.index),
                false => verdict::model(g, expect),
            });
            checks.push(match g.memory_total_mib {
                None => not_reported(vendor, Unreported::Memory, g.index),
                Some(_) => verdict::memory(g, expect),
            });
            figures.push(GpuFigures {
                index: g.index,
                name: g.name.clone(),
                bus_id: g.bus_id.clone(),
                memory_total_mib: g.memory_total_mib,
                ..GpuFigures::default()
            });
        }
        checks.extend(skipped_checks(vendor));
        return (checks, figures);
    }
    let driver = inv.driver_version();
    let cuda = inv.cuda_version();
    checks.push(verdict::count(&gpus, expect));
    checks.push(verdict::cuda(driver.as_deref(), cuda.as_deref(), expect));
    checks.push(verdict::torch(probe, cuda.as_deref()));
    checks.push(verdict::xid_lines(&observed.kernel));

    let mut figures = Vec::new();
    for g in &gpus {
        let reference = reference::lookup(&g.name);
        let t = torch_index(g, &gpus, probe);
        let bench = bench_samples(probe, g.index, t);
        let sustained = sustain_samples(probe, g.index);

        checks.push(verdict::model(g, expect));
        checks.push(verdict::memory(g, expect));
        checks.push(verdict::ecc(g, reference));
        checks.push(verdict::retirement(g));
        checks.push(verdict::persistence(g));
        checks.push(verdict::power(g));
        let (pcie, link) = verdict::pcie(g, &bench);
        checks.push(pcie);
        let (vram, usable_gib) = load::vram(g.index, t, probe);
        checks.push(vram);
        let (mm, mm_tflops, dtype) = load::matmul(g.index, t, probe, reference);
        checks.push(mm);
        let (cp, copy_gbps) = load::copy(g.index, t, probe, reference);
        checks.push(cp);
        let (sus, load_fig) = load::sustained(g.index, t, probe, &sustained, sustain_s);
        checks.push(sus);

        figures.push(GpuFigures {
            index: g.index,
            uuid: g.uuid.clone(),
            name: g.name.clone(),
            bus_id: g.bus_id.clone(),
            reference_model: reference.map(|r| r.model.to_string()),
            memory_total_mib: g.memory_total_mib,
            power_limit_w: g.power_enforced_w,
            power_default_limit_w: g.power_default_w,
            power_max_limit_w: g.power_max_w,
            pcie_gen: link.generation,
            pcie_gen_max: link.gen_max,
            pcie_width: link.width,
            pcie_width_max: link.width_max,
            pcie_under_load: link.under_load,
            usable_vram_gib: usable_gib,
            matmul_dtype: dtype,
            matmul_tflops: mm_tflops,
            matmul_random_tflops: t
                .and_then(|t| probe.matmul.iter().find(|m| m.gpu == t))
                .and_then(|m| m.tflops_random),
            matmul_reference_tflops: reference.map(|r| r.expected_tflops()),
            copy_gb_per_s: copy_gbps,
            copy_reference_gb_per_s: reference.map(|r| r.expected_copy_gb_per_s()),
            sustained_tflops: load_fig.tflops_mean,
            load_temperature_max_c: load_fig.temperature_max_c,
            load_sm_clock_mean_mhz: load_fig.sm_clock_mean_mhz,
            load_power_mean_w: load_fig.power_mean_w,
        });
    }
    (checks, figures)
}

/// The PyTorch device number of an nvidia-smi GPU: by UUID (PyTorch prints it without the
/// `GPU-` prefix); else, when PyTorch sees as many GPUs as nvidia-smi, by position (the probe
/// asks CUDA for PCI order, which is nvidia-smi's).
pub fn torch_index(g: &GpuStatic, all: &[GpuStatic], probe: &ProbeData) -> Option<u32> {
    let bare = |u: &str| u.trim().trim_start_matches("GPU-").to_ascii_lowercase();
    if !g.uuid.is_empty()
        && let Some(d) = probe
            .devices
            .iter()
            .find(|d| d.uuid.as_deref().is_some_and(|u| bare(u) == bare(&g.uuid)))
    {
        return Some(d.index);
    }
    let any_uuid = probe.devices.iter().any(|d| d.uuid.is_some());
    if any_uuid || probe.devices.len() != all.len() {
        return None;
    }
    let position = all.iter().position(|x| x.index == g.index)? as u32;
    probe
        .devices
        .iter()
        .find(|d| d.index == position)
        .map(|d| d.index)
}

/// Samples of GPU `index` taken while it was loaded: its own benchmarks and the sustained
/// load. These are what the PCIe verdict reads.
fn bench_samples(probe: &ProbeData, index: u32, torch_gpu: Option<u32>) -> Vec<&LoadSample> {
    let own = torch_gpu.map(|t| [format!("matmul:{t}"), format!("copy:{t}")]);
    probe
        .samples
        .iter()
        .filter(|s| s.gpu.index == index)
        .filter(|s| s.phase == "sustain" || own.as_ref().is_some_and(|o| o.contains(&s.phase)))
        .collect()
}

/// Samples of GPU `index` from the sustained load, after its ramp.
fn sustain_samples(probe: &ProbeData, index: u32) -> Vec<&LoadSample> {
    let from = probe.sustain_started_s.unwrap_or(0.0) + RAMP_S;
    probe
        .samples
        .iter()
        .filter(|s| s.gpu.index == index && s.phase == "sustain" && s.elapsed_s >= from)
        .collect()
}
