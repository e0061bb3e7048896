//! Datasheet and measured figures for the card models the simulator can play.

use crate::telemetry::accel::Vendor;

/// What a card model reports and how it behaves idle and under load.
///
/// Limits and memory come from NVIDIA datasheets; the H200 idle/load figures from a real capture
/// (`tests/fixtures/nvidia-smi/h200-driver-580`, driver 580.159.04, 2026-11-29); the rest are
/// typical readings for the model.
#[derive(Debug)]
pub(super) struct CardSpec {
    /// Who makes the card: what the demo's readings of it leave out follows from it
    /// (`sim/accel.rs`).
    pub vendor: Vendor,
    /// `name` exactly as nvidia-smi (or the vendor's tool) prints it.
    pub name: &'static str,
    /// Short model tag for generated host names (`h100`, `4090`).
    pub short: &'static str,
    pub memory_total_mib: u64,
    pub power_max_w: f64,
    pub power_min_w: f64,
    pub power_default_w: f64,
    pub clock_sm_max_mhz: u32,
    pub clock_sm_idle_mhz: u32,
    /// Typical SM clock when the card is held at its power cap by a dense workload.
    pub clock_sm_capped_mhz: u32,
    pub clock_mem_load_mhz: u32,
    pub clock_mem_idle_mhz: u32,
    /// HBM datacenter parts stay in P0 when idle (the H200 capture shows P0 at 345 MHz);
    /// GDDR parts drop to P8.
    pub pstate_idle: &'static str,
    /// GeForce cards run CUDA work in P2, datacenter cards in P0.
    pub pstate_load: &'static str,
    pub power_idle_w: f64,
    pub temp_idle_c: f64,
    pub temp_load_c: f64,
    /// HBM temperature relative to the GPU temperature under load; `None` where the card has no
    /// memory sensor in nvidia-smi (GDDR parts print `[N/A]`).
    pub temp_memory_delta_c: Option<f64>,
    pub temp_slowdown_c: f64,
    pub temp_shutdown_c: f64,
    /// Typical `utilization.memory` (memory-controller busy time) under a dense workload.
    pub util_memory_load_pct: f64,
    /// Whether `fan.speed` reads (passively cooled server cards print `[N/A]`).
    pub has_fan: bool,
    /// Whether ECC is on (GeForce: off, so the ECC counter is `[N/A]`).
    pub ecc: bool,
    /// Pre-Ampere cards retire pages; Ampere and newer datacenter cards remap rows and print
    /// `[N/A]` for `retired_pages.pending`.
    pub retires_pages: bool,
    /// Persistence mode as rented machines usually have it.
    pub persistence: bool,
}

/// H100 SXM5 80 GB. Slowdown 89 C / shutdown 92 C as in the H100 product brief.
pub(super) const H100_SXM: CardSpec = CardSpec {
    vendor: Vendor::Nvidia,
    name: "NVIDIA H100 80GB HBM3",
    short: "h100",
    memory_total_mib: 81_559,
    power_max_w: 700.0,
    power_min_w: 200.0,
    power_default_w: 700.0,
    clock_sm_max_mhz: 1980,
    clock_sm_idle_mhz: 345,
    clock_sm_capped_mhz: 1650,
    clock_mem_load_mhz: 2619,
    clock_mem_idle_mhz: 2619,
    pstate_idle: "P0",
    pstate_load: "P0",
    power_idle_w: 71.0,
    temp_idle_c: 31.0,
    temp_load_c: 62.0,
    temp_memory_delta_c: Some(4.0),
    temp_slowdown_c: 89.0,
    temp_shutdown_c: 92.0,
    util_memory_load_pct: 38.0,
    has_fan: false,
    ecc: true,
    retires_pages: false,
    persistence: true,
};

/// H200 SXM 141 GB. The capture reports thresholds as T.Limit margins: at 37 C the margin is
/// 50 C (max operating 87 C), slowdown -2 C and shutdown -8 C, hence 89 C and 95 C.
pub(super) const H200_SXM: CardSpec = CardSpec {
    vendor: Vendor::Nvidia,
    name: "NVIDIA H200",
    short: "h200",
    memory_total_mib: 143_771,
    power_max_w: 700.0,
    power_min_w: 200.0,
    power_default_w: 700.0,
    clock_sm_max_mhz: 1980,
    clock_sm_idle_mhz: 345,
    clock_sm_capped_mhz: 1440,
    clock_mem_load_mhz: 3201,
    clock_mem_idle_mhz: 3201,
    pstate_idle: "P0",
    pstate_load: "P0",
    power_idle_w: 92.6,
    temp_idle_c: 37.0,
    temp_load_c: 60.0,
    temp_memory_delta_c: Some(-9.0),
    temp_slowdown_c: 89.0,
    temp_shutdown_c: 95.0,
    util_memory_load_pct: 25.0,
    has_fan: false,
    ecc: true,
    retires_pages: false,
    persistence: true,
};

/// A100 SXM4 80 GB. Slowdown 89 C / shutdown 92 C as an 8x A100 `-q -d TEMPERATURE` reads.
pub(super) const A100_SXM_80GB: CardSpec = CardSpec {
    vendor: Vendor::Nvidia,
    name: "NVIDIA A100-SXM4-80GB",
    short: "a100",
    memory_total_mib: 81_920,
    power_max_w: 400.0,
    power_min_w: 100.0,
    power_default_w: 400.0,
    clock_sm_max_mhz: 1410,
    clock_sm_idle_mhz: 210,
    clock_sm_capped_mhz: 1335,
    clock_mem_load_mhz: 1593,
    clock_mem_idle_mhz: 1593,
    pstate_idle: "P0",
    pstate_load: "P0",
    power_idle_w: 61.0,
    temp_idle_c: 31.0,
    temp_load_c: 64.0,
    temp_memory_delta_c: Some(5.0),
    temp_slowdown_c: 89.0,
    temp_shutdown_c: 92.0,
    util_memory_load_pct: 45.0,
    has_fan: false,
    ecc: true,
    retires_pages: false,
    persistence: true,
};

/// GeForce RTX 4090. Max SM clock is the 2520 MHz boost of the datasheet (nvidia-smi's own
/// "max" for this card is higher). Slowdown 92 C / shutdown 95 C: a 550.54.14 GeForce reading
/// with max operating 90 C, which is the 4090's published maximum GPU temperature.
pub(super) const RTX_4090: CardSpec = CardSpec {
    vendor: Vendor::Nvidia,
    name: "NVIDIA GeForce RTX 4090",
    short: "4090",
    memory_total_mib: 24_564,
    power_max_w: 450.0,
    power_min_w: 150.0,
    power_default_w: 450.0,
    clock_sm_max_mhz: 2520,
    clock_sm_idle_mhz: 210,
    clock_sm_capped_mhz: 2430,
    clock_mem_load_mhz: 10_251,
    clock_mem_idle_mhz: 405,
    pstate_idle: "P8",
    pstate_load: "P2",
    power_idle_w: 22.0,
    temp_idle_c: 36.0,
    temp_load_c: 71.0,
    temp_memory_delta_c: None,
    temp_slowdown_c: 92.0,
    temp_shutdown_c: 95.0,
    util_memory_load_pct: 52.0,
    has_fan: true,
    ecc: false,
    retires_pages: false,
    persistence: false,
};

/// Moore Threads MTT S80 as `mthreads-gmi` 2.0.0 shows one idle on a desktop
/// (tests/fixtures/accel/mthreads-mthreads-gmi-table-02.txt): 16384 MiB, 41 C at 0 %.
/// mthreads-gmi prints no power, clock, limit or fan, so the demo's readings leave them out;
/// the figures below only keep the simulator's arithmetic whole.
pub(super) const MTT_S80: CardSpec = CardSpec {
    vendor: Vendor::Mthreads,
    name: "MTT S80",
    short: "s80",
    memory_total_mib: 16_384,
    power_max_w: 255.0,
    power_min_w: 255.0,
    power_default_w: 255.0,
    clock_sm_max_mhz: 0,
    clock_sm_idle_mhz: 0,
    clock_sm_capped_mhz: 0,
    clock_mem_load_mhz: 0,
    clock_mem_idle_mhz: 0,
    pstate_idle: "",
    pstate_load: "",
    power_idle_w: 20.0,
    temp_idle_c: 40.0,
    temp_load_c: 40.0,
    temp_memory_delta_c: None,
    temp_slowdown_c: 100.0,
    temp_shutdown_c: 105.0,
    util_memory_load_pct: 0.0,
    has_fan: false,
    ecc: false,
    retires_pages: false,
    persistence: false,
};

/// Cambricon MLU370-X8 as `cnmon` v5.10.13 shows two idle
/// (tests/fixtures/accel/cambricon-cnmon-table-03.txt): 23374 MiB, 106 W of a 250 W cap,
/// 32-39 C at 0 %, fan 0 %. cnmon prints no clock, so the demo's readings leave it out.
pub(super) const MLU370_X8: CardSpec = CardSpec {
    vendor: Vendor::Cambricon,
    name: "MLU370-X8",
    short: "mlu370",
    memory_total_mib: 23_374,
    power_max_w: 250.0,
    power_min_w: 250.0,
    power_default_w: 250.0,
    clock_sm_max_mhz: 0,
    clock_sm_idle_mhz: 0,
    clock_sm_capped_mhz: 0,
    clock_mem_load_mhz: 0,
    clock_mem_idle_mhz: 0,
    pstate_idle: "",
    pstate_load: "",
    power_idle_w: 106.0,
    temp_idle_c: 35.0,
    temp_load_c: 35.0,
    temp_memory_delta_c: None,
    temp_slowdown_c: 100.0,
    temp_shutdown_c: 105.0,
    util_memory_load_pct: 0.0,
    has_fan: false,
    ecc: false,
    retires_pages: false,
    persistence: false,
};

/// Tesla T4. Slowdown 93 C / shutdown 96 C as T4 cloud instances commonly report.
pub(super) const T4: CardSpec = CardSpec {
    vendor: Vendor::Nvidia,
    name: "Tesla T4",
    short: "t4",
    memory_total_mib: 15_360,
    power_max_w: 70.0,
    power_min_w: 60.0,
    power_default_w: 70.0,
    clock_sm_max_mhz: 1590,
    clock_sm_idle_mhz: 300,
    clock_sm_capped_mhz: 1245,
    clock_mem_load_mhz: 5000,
    clock_mem_idle_mhz: 405,
    pstate_idle: "P8",
    pstate_load: "P0",
    power_idle_w: 9.8,
    temp_idle_c: 38.0,
    temp_load_c: 66.0,
    temp_memory_delta_c: None,
    temp_slowdown_c: 93.0,
    temp_shutdown_c: 96.0,
    util_memory_load_pct: 40.0,
    has_fan: false,
    ecc: true,
    retires_pages: true,
    persistence: false,
};

/// Card models a benchmark fleet cycles through, with the GPU counts such hosts come in.
pub(super) const FLEET_MODELS: [(&CardSpec, &[u32]); 5] = [
    (&H100_SXM, &[1, 2, 4, 8]),
    (&A100_SXM_80GB, &[1, 2, 4, 8]),
    (&RTX_4090, &[1, 2, 4]),
    (&T4, &[1, 2, 4]),
    (&H200_SXM, &[1, 2, 4, 8]),
];

/// PCI buses of the eight SXM slots of an HGX/DGX baseboard.
pub(super) const HGX_BUSES: [u8; 8] = [0x1B, 0x43, 0x52, 0x61, 0x9D, 0xC3, 0xD1, 0xDF];

/// PCI buses of a workstation or PCIe server with up to eight cards.
pub(super) const PCIE_BUSES: [u8; 8] = [0x01, 0x21, 0x41, 0x61, 0x81, 0xA1, 0xC1, 0xE1];

/// `00000000:1B:00.0`, the form nvidia-smi prints.
pub(super) fn bus_id(bus: u8, device: u8) -> String {
    format!("00000000:{bus:02X}:{device:02X}.0")
}

/// Huawei Ascend 910B1 as `npu-smi info` 23.0.rc2 shows eight of them idle
/// (tests/fixtures/accelerators/npu-smi/info_23.0.rc2_910B1_arthurchiao.txt): 64 GiB of HBM
/// (`65536` MB), 88-93 W and 46-48 C at 0 % AI Core. The demo only idles it, as published; the
/// load, clock and limit figures below are never shown (npu-smi prints none of them, so the
/// demo's readings leave them out) and only keep the simulator's arithmetic whole.
pub(super) const ASCEND_910B1: CardSpec = CardSpec {
    vendor: Vendor::Huawei,
    name: "910B1",
    short: "910b1",
    memory_total_mib: 65_536,
    power_max_w: 90.0,
    power_min_w: 90.0,
    power_default_w: 90.0,
    clock_sm_max_mhz: 0,
    clock_sm_idle_mhz: 0,
    clock_sm_capped_mhz: 0,
    clock_mem_load_mhz: 0,
    clock_mem_idle_mhz: 0,
    pstate_idle: "",
    pstate_load: "",
    power_idle_w: 90.0,
    temp_idle_c: 45.0,
    temp_load_c: 45.0,
    temp_memory_delta_c: None,
    temp_slowdown_c: 100.0,
    temp_shutdown_c: 105.0,
    util_memory_load_pct: 0.0,
    has_fan: false,
    ecc: false,
    retires_pages: false,
    persistence: false,
};

/// Intel Data Center GPU Flex 170 as `xpu-smi dump -d 0 -m 0,1,2,3` prints it
/// (tests/fixtures/accel/intel-xpu-smi-dump-01.txt): 43.70-43.74 W at 2050 MHz, with the
/// utilization and temperature cells blank; `xpu-smi discovery` names the device
/// `Intel(R) Graphics [0x56c0]` (intel-xpu-smi-discovery-03.txt). The demo only idles it, as
/// published; the dump prints no memory, limit, fan or load figure, so the demo's readings leave
/// them out (`sim/accel.rs`) and the figures below only keep the simulator's arithmetic whole.
pub(super) const INTEL_FLEX_170: CardSpec = CardSpec {
    vendor: Vendor::Intel,
    name: "Intel(R) Graphics [0x56c0]",
    short: "flex170",
    // Intel's 16 GB; never shown (the dump prints no memory size).
    memory_total_mib: 16_384,
    power_max_w: 43.72,
    power_min_w: 43.72,
    power_default_w: 43.72,
    clock_sm_max_mhz: 2050,
    clock_sm_idle_mhz: 2050,
    clock_sm_capped_mhz: 2050,
    clock_mem_load_mhz: 0,
    clock_mem_idle_mhz: 0,
    pstate_idle: "",
    pstate_load: "",
    power_idle_w: 43.72,
    temp_idle_c: 45.0,
    temp_load_c: 45.0,
    temp_memory_delta_c: None,
    temp_slowdown_c: 100.0,
    temp_shutdown_c: 105.0,
    util_memory_load_pct: 0.0,
    has_fan: false,
    ecc: false,
    retires_pages: false,
    persistence: false,
};

/// AMD Instinct MI300X as `amd-smi monitor` (amd-smi 25.3.0) shows one busy
/// (tests/fixtures/accel/amd-amd-smi-monitor-05.txt): 305 W, 49 C die and 43 C memory,
/// 2106 MHz, 97 % GFX and 1 % memory activity, 3.0 of 191.7 GB. The limit, idle and
/// slowdown figures below are never shown (the monitor table prints none of them, so the
/// demo's readings leave them out) and only keep the simulator's arithmetic whole; the
/// power "limit" is set so the capped draw lands on the published 305 W.
pub(super) const MI300X: CardSpec = CardSpec {
    vendor: Vendor::Amd,
    name: "",
    short: "mi300x",
    memory_total_mib: 196_301,
    power_max_w: 308.0,
    power_min_w: 308.0,
    power_default_w: 308.0,
    clock_sm_max_mhz: 2_200,
    clock_sm_idle_mhz: 0,
    clock_sm_capped_mhz: 2_106,
    clock_mem_load_mhz: 0,
    clock_mem_idle_mhz: 0,
    pstate_idle: "",
    pstate_load: "",
    power_idle_w: 120.0,
    temp_idle_c: 40.0,
    temp_load_c: 49.0,
    temp_memory_delta_c: Some(-6.0),
    temp_slowdown_c: 100.0,
    temp_shutdown_c: 105.0,
    util_memory_load_pct: 1.0,
    has_fan: false,
    ecc: false,
    retires_pages: false,
    persistence: false,
};
