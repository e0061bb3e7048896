//! Tests of the `npu-smi` parsers on the real outputs in tests/fixtures/accelerators/npu-smi.

use super::*;

const INFO_910B1: &str = include_str!(
    "../../../tests/fixtures/accelerators/npu-smi/info_23.0.rc2_910B1_arthurchiao.txt"
);
const INFO_310B1: &str = include_str!(
    "../../../tests/fixtures/accelerators/npu-smi/info_23.0.rc3_310B1_ascend_yolo.txt"
);
const COMMON_910B1: &str = include_str!(
    "../../../tests/fixtures/accelerators/npu-smi/info_t_common_23.0.rc2_910B1_arthurchiao.txt"
);
const USAGES_910B1: &str = include_str!(
    "../../../tests/fixtures/accelerators/npu-smi/info_t_usages_23.0.rc2_910B1_arthurchiao.txt"
);

#[test]
fn info_910b1_reads_every_card_with_hbm_as_memory() {
    let readings = parse_info(INFO_910B1).unwrap();
    let indexes: Vec<u32> = readings.iter().map(|r| r.index).collect();
    // The author elided cards 2-6 with `...`; the three printed ones are read.
    assert_eq!(indexes, [0, 1, 7]);
    let first = &readings[0];
    assert_eq!(first.vendor, Vendor::Huawei);
    assert_eq!(first.name.as_deref(), Some("910B1"));
    assert_eq!(first.chip, Some(0));
    assert_eq!(first.health, Some(Health::Ok));
    assert_eq!(first.power_draw_w, Some(88.4));
    assert_eq!(first.temperature_c, Some(46.0));
    assert_eq!(first.bus_id.as_deref(), Some("0000:C1:00.0"));
    assert_eq!(first.utilization_pct, Some(0.0));
    assert_eq!(first.memory_used_mib, Some(4175));
    assert_eq!(first.memory_total_mib, Some(65536));
    assert_eq!(first.driver_version.as_deref(), Some("23.0.rc2"));
    let last = &readings[2];
    assert_eq!(last.power_draw_w, Some(92.7));
    assert_eq!(last.temperature_c, Some(48.0));
    assert_eq!(last.bus_id.as_deref(), Some("0000:42:00.0"));
    assert_eq!(last.memory_used_mib, Some(4174));
    // What the table does not print stays unknown.
    assert_eq!(first.clock_core_mhz, None);
    assert_eq!(first.power_limit_w, None);
    assert_eq!(first.temperature_memory_c, None);
}

#[test]
fn info_310b1_without_hbm_column_reads_the_memory_pool() {
    let readings = parse_info(INFO_310B1).unwrap();
    assert_eq!(readings.len(), 1);
    let r = &readings[0];
    assert_eq!(r.name.as_deref(), Some("310B1"));
    assert_eq!(r.power_draw_w, Some(9.2));
    assert_eq!(r.temperature_c, Some(53.0));
    // `NA` in the Bus-Id column is not a bus id.
    assert_eq!(r.bus_id, None);
    assert_eq!(r.memory_used_mib, Some(3841));
    assert_eq!(r.memory_total_mib, Some(11577));
    assert_eq!(r.driver_version.as_deref(), Some("23.0.rc3"));
}

#[test]
fn common_report_reads_the_compute_chip_not_the_mcu() {
    let r = parse_key_values(COMMON_910B1).unwrap();
    assert_eq!((r.index, r.chip), (1, Some(0)));
    assert_eq!(r.utilization_pct, Some(0.0));
    assert_eq!(r.clock_core_mhz, Some(800));
    // 46, the chip's; the MCU's 38 comes after `Chip Name : mcu`.
    assert_eq!(r.temperature_c, Some(46.0));
    assert_eq!(r.power_draw_w, Some(93.4));
    assert_eq!(r.memory_total_mib, None);
}

#[test]
fn usages_report_reads_hbm_capacity() {
    let r = parse_key_values(USAGES_910B1).unwrap();
    assert_eq!((r.index, r.chip), (0, Some(0)));
    assert_eq!(r.memory_total_mib, Some(65536));
    assert_eq!(r.utilization_pct, Some(0.0));
    assert_eq!(r.memory_used_mib, None);
    assert_eq!(r.temperature_c, None);
}

#[test]
fn unknown_version_header_layout_is_refused_with_the_version() {
    // A table whose third column grew a field this parser does not know.
    let text = INFO_310B1.replace(
        "AICore(%)    Memory-Usage(MB)                       ",
        "AICore(%)    Memory-Usage(MB)       Widgets(MB)     ",
    );
    let text = text.replace("23.0.rc3", "99.9.rc9");
    let err = parse_info(&text).unwrap_err();
    let message = err.to_string();
    assert!(
        message.starts_with("unsupported output from npu-smi 99.9.rc9: unknown table header"),
        "{message}"
    );
    assert!(message.contains("npu-smi 99.9.rc9"));
}

#[test]
fn output_without_title_is_refused() {
    let err = parse_info("npu-smi: command not found\n").unwrap_err();
    assert!(err.to_string().contains("no `npu-smi VERSION` title line"));
    assert!(err.to_string().contains("npu-smi: command not found"));
}

#[test]
fn truncated_table_is_refused_not_half_read() {
    // Cut after the first card row: its chip row (bus, memory) never arrived.
    let cut: String = INFO_910B1
        .lines()
        .take(7)
        .map(|l| format!("{l}\n"))
        .collect();
    let err = parse_info(&cut).unwrap_err();
    assert!(err.to_string().contains("ends between a card row"), "{err}");
}

#[test]
fn garbage_in_a_number_cell_is_refused() {
    let text = INFO_910B1.replacen("88.4", "8x.4", 1);
    assert!(parse_info(&text).is_err());
}

#[test]
fn hostile_bytes_in_name_and_health_are_removed() {
    let text = INFO_310B1
        .replacen(
            "310B1                ",
            "3\u{1b}]0;own\u{7}10B1\u{202e}      ",
            1,
        )
        .replacen("| OK              |", "| Al\u{1b}[2Jarm         |", 1);
    let r = &parse_info(&text).unwrap()[0];
    assert_eq!(r.name.as_deref(), Some("310B1"));
    assert_eq!(r.health, Some(Health::Alarm));
}

#[test]
fn health_words_map_to_states() {
    let text = INFO_310B1.replacen("| OK              |", "| Warning         |", 1);
    assert_eq!(parse_info(&text).unwrap()[0].health, Some(Health::Warning));
}
