//! What a watched host's engine state holds once its history is full, measured: `--history-bytes`
//! feeds `hosts` hosts of `gpus` GPUs each the real H200 stream (one reading a GPU a second)
//! for 20 minutes through `HostState::apply`, as a link does, and reads the heap in use
//! (glibc's `mallinfo2`) before and after. No sshd, no links: only the engine's own state.
//!
//! [`fill`] does the same feeding for the fleet benchmark's `--full-history`: every host of the
//! console's model starts with the history it would hold after watching for 20 minutes, so a
//! short run measures the console at its full size.

use gpufleet::fleet::host::HostState;
use gpufleet::fleet::{FleetOptions, HostEvent};
use gpufleet::telemetry::smi_csv::{FieldLayout, QUERY_FIELDS, parse_gpu_line};
use gpufleet::telemetry::{GpuSample, SharedText};

/// Past the 15-minute history (and the idle trail's 11 minutes).
const FED_S: u64 = 20 * 60;

/// Heap bytes in use, all arenas and mmapped blocks.
fn heap_in_use() -> u64 {
    // SAFETY: mallinfo2 only reads the allocator's statistics.
    let info = unsafe { libc::mallinfo2() };
    (info.uordblks + info.hblkhd) as u64
}

/// The real H200 stream, compiled in: the bench binary also runs without its checkout.
const STREAM: &str = include_str!("../../tests/fixtures/diagnose/healthy/stream_load.txt");

fn stream() -> Vec<GpuSample> {
    let layout = FieldLayout::new(QUERY_FIELDS);
    STREAM
        .lines()
        .map(|l| parse_gpu_line(&layout, l).expect("stream line"))
        .collect()
}

/// Every GPU of a host shares its name and driver; each its own UUID and bus ID, made once
/// as a link's readings share them.
fn gpu_ids(gpus: usize) -> Vec<(SharedText, SharedText)> {
    (0..gpus)
        .map(|g| {
            (
                SharedText::from(format!("GPU-00000000-0000-0000-0000-{g:012}").as_str()),
                SharedText::from(format!("00000000:{:02X}:00.0", g + 1).as_str()),
            )
        })
        .collect()
}

/// Feeds `states` 20 minutes of the real stream (`gpus` GPUs each, a reading a GPU a second)
/// through `HostState::apply`, the last reading a second before `end_ms`.
fn feed(states: &mut [HostState], gpus: usize, end_ms: u64) {
    let samples = stream();
    let ids = gpu_ids(gpus);
    let t0 = end_ms.saturating_sub(FED_S * 1000);
    for s in 0..FED_S {
        let base = &samples[(s as usize) % samples.len()];
        for state in states.iter_mut() {
            for (g, (uuid, bus)) in ids.iter().enumerate() {
                let mut gpu = base.clone();
                gpu.index = g as u32;
                gpu.uuid = uuid.clone();
                gpu.bus_id = bus.clone();
                state.apply(HostEvent::Sample {
                    at_ms: t0 + s * 1000 + g as u64,
                    gpu,
                });
            }
        }
    }
}

/// Gives every host in `states` a full history (20 minutes fed) ending just before `end_ms`.
pub fn fill(states: &mut [HostState], gpus: usize, end_ms: u64) {
    feed(states, gpus, end_ms);
}

/// The report's lines: the heap a host's state takes once full.
pub fn measure(hosts: usize, gpus: usize) -> String {
    let shape = FleetOptions::default().history_shape();
    let before = heap_in_use();
    let mut states: Vec<HostState> = (0..hosts)
        .map(|h| HostState::new(format!("h{h}"), shape))
        .collect();
    feed(&mut states, gpus, 1_800_000_000_000 + FED_S * 1000);
    let after = heap_in_use();
    let per_host = after.saturating_sub(before) as f64 / hosts as f64;
    let points: usize = states
        .iter()
        .flat_map(|h| &h.gpus)
        .map(|g| g.history.len())
        .sum();
    drop(states);
    format!(
        "engine state of a host of {gpus} GPUs once its history is full ({} s fed, {} hosts): \
         {:.1} KB a host on the heap ({} points a GPU)\n",
        FED_S,
        hosts,
        per_host / 1000.0,
        points / (hosts * gpus).max(1),
    )
}
