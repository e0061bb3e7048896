//! AMD `rocm-smi --json` (as with `--showallinfo`): an object of `cardN` objects whose values
//! are all strings, plus a `system` object with the driver version.
//!
//! Key names vary by ROCm release (`Card series` in 6.0.2, `Card Series` in 6.1.2; `GPU memory
//! use (%)` before `GPU Memory Allocated (VRAM%)`), so each metric lists the spellings seen in
//! the fixtures. `rocm-smi` prints no version in its JSON, so errors carry none.

use serde_json::{Map, Value};

use super::{AccelError, AccelReading, Vendor, count_cell, mhz, number_cell};
use crate::remote::sanitize;

const TOOL: &str = "rocm-smi";
const MIB_BYTES: u64 = 1024 * 1024;

/// The flags telegraf's rocm_smi input runs, which printed the fixtures; the remote link and
/// the local source both run `rocm-smi` with exactly these.
pub const ROCM_SMI_ARGS: [&str; 33] = [
    "-o",
    "-l",
    "-m",
    "-M",
    "-g",
    "-c",
    "-t",
    "-u",
    "-i",
    "-f",
    "-p",
    "-P",
    "-s",
    "-S",
    "-v",
    "--showreplaycount",
    "--showpids",
    "--showdriverversion",
    "--showmemvendor",
    "--showfwinfo",
    "--showproductname",
    "--showserial",
    "--showuniqueid",
    "--showbus",
    "--showpendingpages",
    "--showpagesinfo",
    "--showmeminfo",
    "all",
    "--showretiredpages",
    "--showunreservablepages",
    "--showmemuse",
    "--showvoltage",
    "--json",
];

/// Parses the JSON into one reading per `cardN`, ordered by N.
pub fn parse_json(text: &str) -> Result<Vec<AccelReading>, AccelError> {
    let unsupported = |reason: String| AccelError::unsupported(TOOL, None, reason, text);
    let root: Value =
        serde_json::from_str(text).map_err(|e| unsupported(format!("not JSON ({e})")))?;
    let Value::Object(root) = root else {
        return Err(unsupported(
            "the JSON is not an object of cards".to_string(),
        ));
    };
    let driver = root
        .get("system")
        .and_then(|s| s.get("Driver version"))
        .and_then(Value::as_str)
        .map(sanitize);

    let mut readings = Vec::new();
    for (key, card) in &root {
        let Some(index) = key.strip_prefix("card").and_then(|n| n.parse::<u32>().ok()) else {
            continue;
        };
        let Value::Object(card) = card else {
            return Err(unsupported(format!("`{key}` is not an object")));
        };
        let mut reading = read_card(index, card)
            .map_err(|field| unsupported(format!("`{key}` has an unreadable `{field}`")))?;
        reading.driver_version = driver.clone();
        readings.push(reading);
    }
    if readings.is_empty() {
        return Err(unsupported("no `cardN` objects".to_string()));
    }
    readings.sort_by_key(|r| r.index);
    Ok(readings)
}

/// One card; the error is the key whose value is present but unreadable.
fn read_card(index: u32, card: &Map<String, Value>) -> Result<AccelReading, String> {
    let text = |keys: &[&str]| {
        keys.iter()
            .find_map(|k| card.get(*k).and_then(Value::as_str))
            .map(str::trim)
            .filter(|v| !matches!(*v, "" | "N/A"))
            .map(sanitize)
    };
    let number = |keys: &[&str]| -> Result<Option<f64>, String> {
        match keys
            .iter()
            .find_map(|k| Some((*k, card.get(*k)?.as_str()?)))
        {
            None => Ok(None),
            Some((key, value)) => number_cell(value).map_err(|()| key.to_string()),
        }
    };
    let count = |key: &str| -> Result<Option<u64>, String> {
        match card.get(key).and_then(Value::as_str) {
            None => Ok(None),
            Some(value) => count_cell(value).map_err(|()| key.to_string()),
        }
    };
    let clock = |key: &str| -> Result<Option<u32>, String> {
        // `"(1402Mhz)"`
        match card.get(key).and_then(Value::as_str) {
            None => Ok(None),
            Some(value) => {
                let inner = value
                    .trim()
                    .strip_prefix('(')
                    .and_then(|v| v.strip_suffix("Mhz)"))
                    .ok_or_else(|| key.to_string())?;
                Ok(number_cell(inner)
                    .map_err(|()| key.to_string())?
                    .and_then(mhz))
            }
        }
    };

    let mut r = AccelReading::new(Vendor::Amd, index);
    // ROCm 4.3.0 printed the PCI vendor id (`0x1002`) as `Card series`: an id is not a name.
    r.name = text(&["Card Series", "Card series", "Device Name"]).filter(|n| !is_hex_id(n));
    r.bus_id = text(&["PCI Bus"]);
    r.utilization_pct = number(&["GPU use (%)"])?;
    r.utilization_memory_pct = number(&["GPU Memory Read/Write Activity (%)"])?;
    r.memory_total_mib = count("VRAM Total Memory (B)")?.map(bytes_to_mib);
    r.memory_used_mib = count("VRAM Total Used Memory (B)")?.map(bytes_to_mib);
    let edge = number(&["Temperature (Sensor edge) (C)"])?;
    let junction = number(&["Temperature (Sensor junction) (C)"])?;
    r.temperature_c = edge.or(junction);
    r.temperature_hotspot_c = junction;
    r.temperature_memory_c = number(&["Temperature (Sensor memory) (C)"])?;
    r.power_draw_w = number(&[
        "Average Graphics Package Power (W)",
        "Current Socket Graphics Package Power (W)",
    ])?;
    r.power_limit_w = number(&["Max Graphics Package Power (W)"])?;
    r.clock_core_mhz = clock("sclk clock speed:")?;
    r.clock_mem_mhz = clock("mclk clock speed:")?;
    r.fan_speed_pct = number(&["Fan speed (%)"])?;
    r.pcie_replay_count = count("PCIe Replay Count")?;
    Ok(r)
}

/// `0x1002`-style identifiers.
fn is_hex_id(text: &str) -> bool {
    text.strip_prefix("0x")
        .is_some_and(|hex| !hex.is_empty() && hex.chars().all(|c| c.is_ascii_hexdigit()))
}

/// Bytes to MiB, rounded to the nearest MiB.
fn bytes_to_mib(bytes: u64) -> u64 {
    bytes.saturating_add(MIB_BYTES / 2) / MIB_BYTES
}

#[cfg(test)]
mod tests {
    use super::*;

    const MI100_ROCM602: &str =
        include_str!("../../../tests/fixtures/accelerators/rocm-smi/mi100_rocm602.json");
    const RX6700XT_ROCM430: &str =
        include_str!("../../../tests/fixtures/accelerators/rocm-smi/rx6700xt_rocm430.json");
    const VEGA20_MI50: &str =
        include_str!("../../../tests/fixtures/accelerators/rocm-smi/vega-20-WKS-GL-XE.json");
    const RX6700XT_ROCM612: &str =
        include_str!("../../../tests/fixtures/accelerators/rocm-smi/rx6700xt_rocm612.json");

    #[test]
    fn mi100_rocm602_reads_four_cards() {
        let readings = parse_json(MI100_ROCM602).unwrap();
        assert_eq!(readings.len(), 4);
        let first = &readings[0];
        assert_eq!(first.vendor, Vendor::Amd);
        assert_eq!(first.index, 0);
        assert_eq!(
            first.name.as_deref(),
            Some("Arcturus GL-XL [Instinct MI100]")
        );
        assert_eq!(first.bus_id.as_deref(), Some("0000:83:00.0"));
        assert_eq!(first.temperature_c, Some(53.0));
        assert_eq!(first.temperature_hotspot_c, Some(55.0));
        assert_eq!(first.temperature_memory_c, Some(53.0));
        assert_eq!(first.power_draw_w, Some(36.0));
        assert_eq!(first.power_limit_w, Some(290.0));
        assert_eq!(first.utilization_pct, Some(0.0));
        assert_eq!(first.memory_total_mib, Some(32752));
        assert_eq!(first.memory_used_mib, Some(6));
        assert_eq!(first.clock_core_mhz, Some(300));
        assert_eq!(first.clock_mem_mhz, Some(1200));
        assert_eq!(first.pcie_replay_count, Some(0));
        assert_eq!(first.driver_version.as_deref(), Some("6.3.6"));
        // 6.0.2 has no read/write activity key: unknown, not 0.
        assert_eq!(first.utilization_memory_pct, None);
        assert_eq!(first.health, None);
        // Passively cooled MI100s print no fan key.
        assert_eq!(first.fan_speed_pct, None);
        let last = &readings[3];
        assert_eq!(last.index, 3);
        assert_eq!(last.bus_id.as_deref(), Some("0000:E3:00.0"));
        assert_eq!(last.power_draw_w, Some(39.0));
        assert_eq!(last.temperature_c, Some(51.0));
    }

    #[test]
    fn rx6700xt_rocm612_reads_the_newer_keys() {
        let readings = parse_json(RX6700XT_ROCM612).unwrap();
        assert_eq!(readings.len(), 1);
        let r = &readings[0];
        assert_eq!(
            r.name.as_deref(),
            Some("Navi 22 [Radeon RX 6700/6700 XT / 6800M]")
        );
        assert_eq!(r.bus_id.as_deref(), Some("0000:07:00.0"));
        assert_eq!(r.temperature_c, Some(45.0));
        assert_eq!(r.power_draw_w, Some(6.0));
        assert_eq!(r.power_limit_w, Some(211.0));
        assert_eq!(r.memory_total_mib, Some(12272));
        // 1572745216 B is 1499.9 MiB.
        assert_eq!(r.memory_used_mib, Some(1500));
        assert_eq!(r.utilization_memory_pct, Some(0.0));
        assert_eq!(r.clock_core_mhz, Some(0));
        assert_eq!(r.clock_mem_mhz, Some(96));
    }

    #[test]
    fn rocm430_vendor_id_in_card_series_is_not_taken_for_a_name() {
        let readings = parse_json(RX6700XT_ROCM430).unwrap();
        let r = &readings[0];
        assert_eq!(r.name, None);
        assert_eq!(r.clock_core_mhz, Some(500));
        assert_eq!(r.memory_used_mib, Some(1548));
        assert_eq!(r.memory_total_mib, Some(12272));
        assert_eq!(r.temperature_c, Some(45.0));
        assert_eq!(r.utilization_memory_pct, None);
    }

    #[test]
    fn vega20_reads_fan_and_its_driver() {
        let readings = parse_json(VEGA20_MI50).unwrap();
        assert_eq!(readings.len(), 1);
        let r = &readings[0];
        assert_eq!(r.name.as_deref(), Some("Radeon Instinct MI50 32GB"));
        assert_eq!(r.bus_id.as_deref(), Some("0000:63:00.0"));
        assert_eq!(r.fan_speed_pct, Some(0.0));
        assert_eq!(
            (r.clock_core_mhz, r.clock_mem_mhz),
            (Some(1725), Some(1000))
        );
        assert_eq!((r.power_draw_w, r.power_limit_w), (Some(26.0), Some(225.0)));
        assert_eq!(
            (r.memory_used_mib, r.memory_total_mib),
            (Some(10), Some(32752))
        );
        assert_eq!(r.temperature_c, Some(36.0));
        assert_eq!(r.driver_version.as_deref(), Some("5.9.17"));
    }

    #[test]
    fn truncated_json_is_refused() {
        let cut = &RX6700XT_ROCM612[..RX6700XT_ROCM612.len() / 2];
        let err = parse_json(cut).unwrap_err().to_string();
        assert!(
            err.starts_with("unsupported output from rocm-smi: not JSON"),
            "{err}"
        );
    }

    #[test]
    fn json_of_another_shape_is_refused() {
        // amd-smi's shape, a list of GPUs, is not rocm-smi's.
        let err = parse_json(r#"[{"gpu": 0}]"#).unwrap_err().to_string();
        assert!(err.contains("not an object of cards"), "{err}");
        let err = parse_json(r#"{"system": {"Driver version": "6.3.6"}}"#).unwrap_err();
        assert!(err.to_string().contains("no `cardN` objects"));
    }

    #[test]
    fn unreadable_value_is_refused_not_zeroed() {
        let text = RX6700XT_ROCM612.replace("\"GPU use (%)\": \"0\"", "\"GPU use (%)\": \"lots\"");
        let err = parse_json(&text).unwrap_err().to_string();
        assert!(
            err.contains("`card0` has an unreadable `GPU use (%)`"),
            "{err}"
        );
    }

    #[test]
    fn hostile_escape_bytes_are_removed_from_names() {
        let text = RX6700XT_ROCM612.replace(
            "\"Card Series\": \"Navi 22",
            "\"Card Series\": \"\\u001b]0;owned\\u0007Navi\\u202e 22",
        );
        let r = &parse_json(&text).unwrap()[0];
        assert_eq!(
            r.name.as_deref(),
            Some("Navi 22 [Radeon RX 6700/6700 XT / 6800M]")
        );
    }
}
