//! Unit tests of `smi_xml`, kept apart so the module reads as code.
use super::*;

/// A trimmed report in the older layout (absolute thresholds, `power_readings`, Ampere ECC).
const OLD_LAYOUT: &str = r#"<?xml version="1.0" ?>
<!DOCTYPE nvidia_smi_log SYSTEM "nvsmi_device_v11.dtd">
<nvidia_smi_log>
  <driver_version>535.129.03</driver_version>
  <cuda_version>12.2</cuda_version>
  <gpu id="00000000:19:00.0">
<product_name>NVIDIA A100-SXM4-80GB &amp; friends</product_name>
<persistence_mode>Disabled</persistence_mode>
<uuid>GPU-aaaa</uuid>
<fb_memory_usage><total>81920 MiB</total></fb_memory_usage>
<ecc_mode><current_ecc>Enabled</current_ecc></ecc_mode>
<ecc_errors>
  <volatile>
    <sram_correctable>4</sram_correctable>
    <sram_uncorrectable>1</sram_uncorrectable>
    <sram_uncorrectable_parity>1</sram_uncorrectable_parity>
    <sram_uncorrectable_secded>0</sram_uncorrectable_secded>
    <dram_correctable>9</dram_correctable>
    <dram_uncorrectable>2</dram_uncorrectable>
  </volatile>
  <aggregate>
    <single_bit><total>5</total></single_bit>
    <double_bit><total>7</total></double_bit>
  </aggregate>
</ecc_errors>
<remapped_rows>N/A</remapped_rows>
<temperature>
  <gpu_temp>56 C</gpu_temp>
  <gpu_temp_max_threshold>92 C</gpu_temp_max_threshold>
  <gpu_temp_slow_threshold>89 C</gpu_temp_slow_threshold>
  <gpu_temp_max_gpu_threshold>87 C</gpu_temp_max_gpu_threshold>
</temperature>
<power_readings>
  <power_limit>400.00 W</power_limit>
  <enforced_power_limit>N/A</enforced_power_limit>
  <default_power_limit>400.00 W</default_power_limit>
  <min_power_limit>100.00 W</min_power_limit>
  <max_power_limit>400.00 W</max_power_limit>
</power_readings>
<processes><process_info><pid>77</pid><process_name>a.out</process_name><used_memory>N/A</used_memory></process_info></processes>
  </gpu>
</nvidia_smi_log>
"#;

#[test]
fn reads_the_older_layout() {
    let report = parse_report(OLD_LAYOUT).expect("parses");
    assert_eq!(report.driver_version.as_deref(), Some("535.129.03"));
    assert_eq!(report.cuda_version.as_deref(), Some("12.2"));
    let g = &report.gpus[0];
    assert_eq!(g.bus_id, "00000000:19:00.0");
    assert_eq!(g.product_name, "NVIDIA A100-SXM4-80GB & friends");
    assert_eq!(g.persistence_mode, Some(false));
    assert_eq!(g.memory_total_mib, Some(81920));
    assert_eq!(g.ecc_mode_enabled, Some(true));
    assert_eq!(g.ecc_uncorrected_volatile, Some(3), "combined sram + dram");
    assert_eq!(
        g.ecc_uncorrected_aggregate,
        Some(7),
        "pre-Ampere double_bit"
    );
    assert_eq!(g.remapped_rows_pending, None);
    assert_eq!(g.temperature_slowdown_c, Some(89.0));
    assert_eq!(g.temperature_shutdown_c, Some(92.0));
    assert_eq!(g.temperature_max_operating_c, Some(87.0));
    assert_eq!(g.effective_slowdown_c(), Some(89.0));
    assert_eq!(
        g.power_limit_enforced_w,
        Some(400.0),
        "requested as fallback"
    );
    assert_eq!(g.power_limit_min_w, Some(100.0));
    assert_eq!(
        g.processes,
        vec![GpuProcess {
            pid: 77,
            name: "a.out".to_string(),
            gpu_uuid: "GPU-aaaa".to_string(),
            used_memory_mib: None,
        }]
    );
}

#[test]
fn apply_to_fills_thresholds_and_only_missing_values() {
    let report = parse_report(OLD_LAYOUT).expect("parses");
    let mut sample = GpuSample {
        uuid: "GPU-aaaa".into(),
        power_limit_w: Some(250.0),
        ..GpuSample::default()
    };
    let detail = report.detail_for(&sample).expect("matched by uuid");
    detail.apply_to(&mut sample);
    assert_eq!(sample.temperature_slowdown_c, Some(89.0));
    assert_eq!(sample.temperature_shutdown_c, Some(92.0));
    assert_eq!(
        sample.power_limit_w,
        Some(250.0),
        "the stream's value stays"
    );
    assert_eq!(sample.power_max_limit_w, Some(400.0));
    assert_eq!(sample.memory_total_mib, Some(81920));
    assert_eq!(sample.ecc_uncorrected_volatile, Some(3));

    let by_bus = GpuSample {
        bus_id: "00000000:19:00.0".into(),
        ..GpuSample::default()
    };
    assert!(report.detail_for(&by_bus).is_some());
    assert!(report.detail_for(&GpuSample::default()).is_none());
}

#[test]
fn tlimit_margins_are_not_read_as_temperatures() {
    let xml = "<nvidia_smi_log><gpu id=\"0\"><temperature>\
        <gpu_temp>60 C</gpu_temp><gpu_temp_tlimit>27 C</gpu_temp_tlimit>\
        <gpu_temp_max_tlimit_threshold>-8 C</gpu_temp_max_tlimit_threshold>\
        <gpu_temp_slow_tlimit_threshold>-2 C</gpu_temp_slow_tlimit_threshold>\
        <gpu_temp_max_gpu_tlimit_threshold>0 C</gpu_temp_max_gpu_tlimit_threshold>\
        </temperature></gpu></nvidia_smi_log>";
    let g = &parse_report(xml).expect("parses").gpus[0];
    assert_eq!(g.temperature_slowdown_c, None);
    assert_eq!(g.temperature_shutdown_c, None);
    assert_eq!(g.temperature_slowdown_tlimit_c, Some(-2.0));
    assert_eq!(g.temperature_shutdown_tlimit_c, Some(-8.0));
    assert_eq!(g.effective_max_operating_c(), Some(87.0));
    assert_eq!(g.effective_slowdown_c(), Some(89.0));
    let mut sample = GpuSample::default();
    g.apply_to(&mut sample);
    assert_eq!(sample.temperature_slowdown_c, Some(89.0));
    assert_eq!(sample.temperature_shutdown_c, None, "not derived");
}

#[test]
fn no_margin_means_no_derived_threshold() {
    let xml = "<nvidia_smi_log><gpu id=\"0\"><temperature><gpu_temp>60 C</gpu_temp>\
        <gpu_temp_tlimit>N/A</gpu_temp_tlimit>\
        <gpu_temp_slow_tlimit_threshold>-2 C</gpu_temp_slow_tlimit_threshold>\
        </temperature></gpu></nvidia_smi_log>";
    let g = &parse_report(xml).expect("parses").gpus[0];
    assert_eq!(g.effective_slowdown_c(), None);
}

#[test]
fn errors() {
    assert!(matches!(parse_report(""), Err(XmlError::NoReport)));
    assert!(matches!(
        parse_report("<html><body/></html>"),
        Err(XmlError::UnexpectedRoot { found }) if found == "html"
    ));
    assert!(matches!(
        parse_report("<nvidia_smi_log><gpu id=\"0\"><uuid>GPU-a</uuid>"),
        Err(XmlError::Truncated)
    ));
    assert!(matches!(
        parse_report("<nvidia_smi_log><gpu></nvidia_smi_log>"),
        Err(XmlError::Malformed { .. })
    ));
    let e = parse_report("<html/>").expect_err("wrong root");
    assert!(e.to_string().contains("expected <nvidia_smi_log>"), "{e}");
}

#[test]
fn value_parsing() {
    assert_eq!(parse_f64("700.00 W"), Some(700.0));
    assert_eq!(parse_f64("-8 C"), Some(-8.0));
    assert_eq!(parse_f64("N/A"), None);
    assert_eq!(parse_u32("16x"), Some(16));
    assert_eq!(parse_u64("143771 MiB"), Some(143771));
    assert_eq!(
        text_value("Requested functionality has been deprecated"),
        None
    );
    assert_eq!(sum(None, Some(2)), Some(2));
    assert_eq!(sum(None, None), None);
}
