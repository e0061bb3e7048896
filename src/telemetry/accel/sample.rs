//! Vendor-neutral readings as the fleet's [`GpuSample`]s: what a tool reports fills the
//! matching field, what it does not stays `None` (shown `-`), never `0`.

use super::{AccelProcess, AccelReading};
use crate::telemetry::{GpuProcess, GpuSample, SharedText};

/// The samples of one reading of a host, one per accelerator, in the tool's order. A tool's
/// own device numbers are kept when they are unique (`npu-smi`'s NPU ID, `rocm-smi`'s `cardN`);
/// a card with several chips gives each chip the next number in table order instead, so no two
/// samples share an index.
pub fn to_samples(readings: &[AccelReading]) -> Vec<GpuSample> {
    readings
        .iter()
        .zip(sample_indexes(readings))
        .map(|(r, index)| to_sample(index, r))
        .collect()
}

/// The index [`to_samples`] gives each reading, in order.
fn sample_indexes(readings: &[AccelReading]) -> Vec<u32> {
    let mut seen = std::collections::HashSet::new();
    let unique = readings.iter().all(|r| seen.insert(r.index));
    readings
        .iter()
        .enumerate()
        .map(|(position, r)| {
            if unique {
                r.index
            } else {
                u32::try_from(position).unwrap_or(u32::MAX)
            }
        })
        .collect()
}

/// The fleet's processes from a tool's process rows, each tied to the sample of its card and
/// chip (`gpu_index`, the sample's `index`); a row whose card the readings do not hold keeps no
/// index rather than a guessed one. Name and memory are as printed; an unprinted memory stays
/// `None`.
pub fn to_processes(readings: &[AccelReading], processes: &[AccelProcess]) -> Vec<GpuProcess> {
    let indexes = sample_indexes(readings);
    processes
        .iter()
        .map(|p| GpuProcess {
            pid: p.pid,
            name: p.name.clone(),
            gpu_uuid: String::new(),
            gpu_index: readings
                .iter()
                .position(|r| r.index == p.index && r.chip == p.chip)
                .and_then(|position| indexes.get(position).copied()),
            used_memory_mib: p.memory_mib,
        })
        .collect()
}

/// Fills what each reading leaves unknown of its identity (model, bus id, memory size, driver
/// version) from the facts a tool states once for the same device and chip (`amd-smi
/// static`); a value the reading has is kept.
pub fn apply_facts(readings: &mut [AccelReading], facts: &[AccelReading]) {
    for r in readings {
        let Some(f) = facts
            .iter()
            .find(|f| f.index == r.index && f.chip == r.chip)
        else {
            continue;
        };
        r.name = r.name.take().or_else(|| f.name.clone());
        r.bus_id = r.bus_id.take().or_else(|| f.bus_id.clone());
        r.memory_total_mib = r.memory_total_mib.or(f.memory_total_mib);
        r.driver_version = r.driver_version.take().or_else(|| f.driver_version.clone());
        r.health = r.health.take().or_else(|| f.health.clone());
    }
}

fn to_sample(index: u32, r: &AccelReading) -> GpuSample {
    GpuSample {
        index,
        vendor: r.vendor,
        uuid: SharedText::default(),
        name: r.name.as_deref().unwrap_or_default().into(),
        bus_id: r.bus_id.as_deref().unwrap_or_default().into(),
        memory_total_mib: r.memory_total_mib,
        memory_used_mib: r.memory_used_mib,
        utilization_gpu_pct: r.utilization_pct,
        utilization_memory_pct: r.utilization_memory_pct,
        temperature_c: r.temperature_c,
        temperature_memory_c: r.temperature_memory_c,
        power_draw_w: r.power_draw_w,
        power_limit_w: r.power_limit_w,
        clock_sm_mhz: r.clock_core_mhz,
        clock_mem_mhz: r.clock_mem_mhz,
        fan_speed_pct: r.fan_speed_pct,
        health: r.health.clone(),
        ecc_uncorrected_volatile: r.ecc_uncorrected,
        driver_version: r.driver_version.as_deref().map(SharedText::from),
        ..GpuSample::default()
    }
}

/// The newest reading of each device of a stream that repeats every device each interval
/// (`xpu-smi dump`), in device order.
pub fn newest_per_device(readings: Vec<AccelReading>) -> Vec<AccelReading> {
    let mut newest = std::collections::BTreeMap::new();
    for r in readings {
        newest.insert((r.index, r.chip), r);
    }
    newest.into_values().collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::telemetry::accel::AccelProcess;
    use crate::telemetry::accel::{Health, Vendor, npu_smi};

    fn fixture(path: &str) -> String {
        let root = env!("CARGO_MANIFEST_DIR");
        std::fs::read_to_string(format!("{root}/tests/fixtures/accelerators/{path}"))
            .expect("fixture")
    }

    #[test]
    fn an_ascend_table_becomes_huawei_samples_with_absent_metrics_left_unknown() {
        let text = fixture("npu-smi/info_23.0.rc2_910B1_arthurchiao.txt");
        let samples = to_samples(&npu_smi::parse_info(&text).expect("parse"));
        assert_eq!(samples.len(), 3);
        let first = &samples[0];
        assert_eq!(first.vendor, Vendor::Huawei);
        assert_eq!((first.index, first.name.as_ref()), (0, "910B1"));
        assert_eq!(first.memory_used_mib, Some(4175));
        assert_eq!(first.memory_total_mib, Some(65536));
        assert_eq!(first.power_draw_w, Some(88.4));
        assert_eq!(first.health, Some(Health::Ok));
        // npu-smi prints no power limit, clock, fan or clock-event reasons: unknown, not 0.
        assert_eq!(first.power_limit_w, None);
        assert_eq!(first.clock_sm_mhz, None);
        assert_eq!(first.fan_speed_pct, None);
        assert_eq!(first.clock_event_reasons, None);
        assert_eq!(samples[2].index, 7);
    }

    #[test]
    fn chips_sharing_a_card_number_get_distinct_indexes() {
        let mut a = AccelReading::new(Vendor::Huawei, 0);
        a.chip = Some(0);
        let mut b = AccelReading::new(Vendor::Huawei, 0);
        b.chip = Some(1);
        let indexes: Vec<u32> = to_samples(&[a, b]).iter().map(|s| s.index).collect();
        assert_eq!(indexes, [0, 1]);
    }

    #[test]
    fn npu_processes_name_the_sample_of_their_npu() {
        let text = std::fs::read_to_string(format!(
            "{}/tests/fixtures/accel/huawei-npu-smi-info-03.txt",
            env!("CARGO_MANIFEST_DIR")
        ))
        .expect("fixture");
        let readings = npu_smi::parse_info(&text).expect("parse");
        let listed = npu_smi::listed_processes(&text).expect("listed");
        let processes = to_processes(&readings, &listed);
        let samples = to_samples(&readings);
        assert_eq!(processes.len(), 32);
        let on_npu_3: Vec<u32> = processes
            .iter()
            .filter(|p| p.runs_on(&samples[3]))
            .map(|p| p.pid)
            .collect();
        assert_eq!(on_npu_3, [37643, 37651, 37659, 37667]);
        assert!(processes.iter().all(|p| p.gpu_uuid.is_empty()));
        assert_eq!(processes[0].used_memory_mib, Some(686));
    }

    #[test]
    fn processes_of_a_two_chip_card_follow_their_chip() {
        let chip = |c| {
            let mut r = AccelReading::new(Vendor::Huawei, 0);
            r.chip = Some(c);
            r
        };
        let on = |index, chip| AccelProcess {
            index,
            chip,
            pid: 7,
            name: "python".to_string(),
            memory_mib: None,
        };
        let readings = [chip(0), chip(1)];
        let processes = to_processes(&readings, &[on(0, Some(1)), on(3, Some(0))]);
        // Chip 1 of NPU 0 is the second sample; a card the table lacks keeps no index.
        assert_eq!(processes[0].gpu_index, Some(1));
        assert_eq!(processes[1].gpu_index, None);
        assert_eq!(processes[0].used_memory_mib, None);
    }

    #[test]
    fn facts_fill_only_what_a_reading_leaves_unknown() {
        let mut live = AccelReading::new(Vendor::Amd, 1);
        live.memory_total_mib = Some(196301);
        let other = AccelReading::new(Vendor::Amd, 2);
        let mut fact = AccelReading::new(Vendor::Amd, 1);
        fact.name = Some("MI300X".to_string());
        fact.memory_total_mib = Some(196592);
        let mut readings = [live, other];
        apply_facts(&mut readings, &[fact]);
        assert_eq!(readings[0].name.as_deref(), Some("MI300X"));
        assert_eq!(readings[0].memory_total_mib, Some(196301));
        assert_eq!(readings[1].name, None);
    }

    #[test]
    fn a_dump_keeps_the_newest_line_of_each_device() {
        let mut old = AccelReading::new(Vendor::Intel, 1);
        old.power_draw_w = Some(1.0);
        let mut new = AccelReading::new(Vendor::Intel, 1);
        new.power_draw_w = Some(2.0);
        let zero = AccelReading::new(Vendor::Intel, 0);
        let kept = newest_per_device(vec![old, zero, new]);
        assert_eq!(kept.len(), 2);
        assert_eq!((kept[0].index, kept[1].power_draw_w), (0, Some(2.0)));
    }
}
