//! Cambricon `cnmon`: the default table.
//!
//! Two published layouts (tests/fixtures/accel/README.md): CNMON v4 (`Inited  Driver` in the
//! middle cell, `vMemory-Usage` on the right, no driver in the title) and CNMON v5
//! (`Bus-Id`, `SR-IOV  Compute-Mode`, `Driver vX` in the title). Each card is two rows between
//! `+---+` rules. The header is checked before any number is read; a table with other columns
//! is refused, and so is a table that ends before its `Processes:` section (a cut-off output
//! would hide cards).
//!
//! The samples show `N/A` in every Ecc-Error cell and no process row, so neither is read: ECC
//! counts and processes stay unknown (no published sample).

use super::{AccelError, AccelReading, Vendor, count_cell, number_cell};
use crate::remote::sanitize;

const TOOL: &str = "cnmon";

/// What the middle and right cells hold, by the header rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Layout {
    /// CNMON v4: `Inited  Driver` / `vMemory-Usage`.
    V4,
    /// CNMON v5: `Bus-Id` / `SR-IOV  Compute-Mode`.
    V5,
}

/// Parses `cnmon`: one reading per card, in table order.
pub fn parse_table(text: &str) -> Result<Vec<AccelReading>, AccelError> {
    let (version, title_driver) = title(text).unzip();
    let unsupported =
        |reason: &str| AccelError::unsupported(TOOL, version.as_deref(), reason, text);
    if version.is_none() {
        return Err(unsupported("no `CNMON vVERSION` title line"));
    }
    let title_driver = title_driver.flatten();
    let lines: Vec<&str> = text.lines().map(str::trim).collect();
    let layout = lines
        .windows(2)
        .find_map(|pair| header_layout(pair[0], pair[1]))
        .ok_or_else(|| unsupported("unknown table header"))?;
    let start = lines
        .iter()
        .position(|l| l.starts_with("|=") && l.contains('+'))
        .ok_or_else(|| unsupported("no `|===+===|` line under the header"))?;

    let mut readings = Vec::new();
    let mut pending: Option<AccelReading> = None;
    let mut closed = false;
    for &line in &lines[start + 1..] {
        if line.starts_with('+') {
            if pending.is_some() {
                return Err(unsupported(&format!("a card has one row before `{line}`")));
            }
            continue;
        }
        if line.is_empty() || line.contains("Processes:") {
            closed = line.contains("Processes:") || closed;
            if closed {
                break;
            }
            continue;
        }
        let cells =
            row_cells(line).ok_or_else(|| unsupported(&format!("unexpected line `{line}`")))?;
        match pending.take() {
            None => {
                let mut reading = card_row(&cells, layout)
                    .ok_or_else(|| unsupported(&format!("unreadable card row `{line}`")))?;
                if reading.driver_version.is_none() {
                    reading.driver_version = title_driver.clone();
                }
                pending = Some(reading);
            }
            Some(mut reading) => {
                usage_row(&cells, &mut reading)
                    .ok_or_else(|| unsupported(&format!("unreadable usage row `{line}`")))?;
                readings.push(reading);
            }
        }
    }
    if !closed || pending.is_some() {
        return Err(unsupported(&format!(
            "the table is cut off after {} card(s): no `Processes:` section",
            readings.len()
        )));
    }
    if readings.is_empty() {
        return Err(unsupported("no card rows"));
    }
    Ok(readings)
}

/// `| CNMON v5.10.10      Driver v5.10.10 |` → (`v5.10.10`, `Some("v5.10.10")`).
fn title(text: &str) -> Option<(String, Option<String>)> {
    text.lines().take(6).find_map(|line| {
        let inner = line.trim().strip_prefix('|')?.strip_suffix('|')?;
        let mut words = inner.split_whitespace();
        if words.next()? != "CNMON" {
            return None;
        }
        let version = plain(words.next()?)?;
        let driver = match (words.next(), words.next()) {
            (Some("Driver"), Some(driver)) => Some(plain(driver)?),
            (None, _) => None,
            _ => return None,
        };
        Some((version, driver))
    })
}

/// A version word (`v5.10.10`), sanitized; `None` for anything else.
fn plain(word: &str) -> Option<String> {
    word.chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_'))
        .then(|| sanitize(word))
}

/// The cells of `| a | b | c |`, each cell's words joined by single spaces.
fn row_cells(line: &str) -> Option<Vec<String>> {
    let inner = line.strip_prefix('|')?.strip_suffix('|')?;
    Some(
        inner
            .split('|')
            .map(|c| c.split_whitespace().collect::<Vec<_>>().join(" "))
            .collect(),
    )
}

fn header_layout(first: &str, second: &str) -> Option<Layout> {
    let first = row_cells(first)?;
    let second = row_cells(second)?;
    let [name, middle, right] = first.as_slice() else {
        return None;
    };
    let [fan, memory, bottom_right] = second.as_slice() else {
        return None;
    };
    if name != "Card VF Name Firmware"
        || right != "Util Ecc-Error"
        || fan != "Fan Temp Pwr:Usage/Cap"
        || memory != "Memory-Usage"
    {
        return None;
    }
    match (middle.as_str(), bottom_right.as_str()) {
        ("Inited Driver", "vMemory-Usage") => Some(Layout::V4),
        ("Bus-Id", "SR-IOV Compute-Mode") => Some(Layout::V5),
        _ => None,
    }
}

/// `0     /   MLU370-X4    v1.1.6 | On          v4.20.11 | 0%          N/A`, or with the
/// Bus-Id in the middle.
fn card_row(cells: &[String], layout: Layout) -> Option<AccelReading> {
    let [name_cell, middle, right] = cells else {
        return None;
    };
    let words: Vec<&str> = name_cell.split_whitespace().collect();
    let [card, _vf, name @ .., _firmware] = words.as_slice() else {
        return None;
    };
    if name.is_empty() {
        return None;
    }
    let mut reading = AccelReading::new(Vendor::Cambricon, card.parse().ok()?);
    reading.name = Some(sanitize(&name.join(" ")));
    match layout {
        Layout::V4 => {
            let [_inited, driver] = middle.split_whitespace().collect::<Vec<_>>()[..] else {
                return None;
            };
            reading.driver_version = Some(plain(driver)?);
        }
        Layout::V5 => reading.bus_id = Some(sanitize(middle)).filter(|b| !b.is_empty()),
    }
    let util = right.split_whitespace().next()?;
    reading.utilization_pct = number_cell(util.strip_suffix('%')?).ok()?;
    Some(reading)
}

/// `0%   32C         30 W/ 150 W |     0 MiB/ 23308 MiB | ...`.
fn usage_row(cells: &[String], reading: &mut AccelReading) -> Option<()> {
    let [power_cell, memory, _right] = cells else {
        return None;
    };
    let words: Vec<&str> = power_cell.split_whitespace().collect();
    let [fan, temp, draw, "W/", limit, "W"] = words.as_slice() else {
        return None;
    };
    reading.fan_speed_pct = number_cell(fan.strip_suffix('%')?).ok()?;
    reading.temperature_c = number_cell(temp.strip_suffix('C')?).ok()?;
    reading.power_draw_w = number_cell(draw).ok()?;
    reading.power_limit_w = number_cell(limit).ok()?;
    let words: Vec<&str> = memory.split_whitespace().collect();
    let [used, "MiB/", total, "MiB"] = words.as_slice() else {
        return None;
    };
    reading.memory_used_mib = count_cell(used).ok()?;
    reading.memory_total_mib = count_cell(total).ok()?;
    Some(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> String {
        let root = env!("CARGO_MANIFEST_DIR");
        std::fs::read_to_string(format!("{root}/tests/fixtures/accel/{name}")).expect("fixture")
    }

    #[test]
    fn v4_table_reads_three_cards_with_the_driver_from_the_row() {
        let readings = parse_table(&fixture("cambricon-cnmon-table-01.txt")).expect("parse");
        assert_eq!(readings.len(), 3);
        let r = &readings[1];
        assert_eq!((r.vendor, r.index), (Vendor::Cambricon, 1));
        assert_eq!(r.name.as_deref(), Some("MLU370-X4"));
        assert_eq!(r.driver_version.as_deref(), Some("v4.20.11"));
        assert_eq!(r.temperature_c, Some(33.0));
        assert_eq!((r.power_draw_w, r.power_limit_w), (Some(25.0), Some(150.0)));
        assert_eq!(
            (r.memory_used_mib, r.memory_total_mib),
            (Some(0), Some(23308))
        );
        assert_eq!((r.utilization_pct, r.fan_speed_pct), (Some(0.0), Some(0.0)));
        // The v4 table has no Bus-Id; no health word, no clocks.
        assert_eq!(
            (r.bus_id.clone(), r.health.clone(), r.clock_core_mhz),
            (None, None, None)
        );
        assert_eq!(readings[2].power_draw_w, Some(26.0));
    }

    #[test]
    fn v5_tables_read_the_bus_id_and_the_title_driver() {
        let readings = parse_table(&fixture("cambricon-cnmon-table-02.txt")).expect("parse");
        assert_eq!(readings.len(), 2);
        // Card 1's misaligned `N/A  |` cell reads as the same N/A.
        assert_eq!(readings[1].bus_id.as_deref(), Some("0000:36:00.0"));
        assert_eq!(readings[1].driver_version.as_deref(), Some("v5.10.10"));
        assert_eq!(readings[0].temperature_c, Some(41.0));
        let readings = parse_table(&fixture("cambricon-cnmon-table-03.txt")).expect("parse");
        let r = &readings[1];
        assert_eq!(r.name.as_deref(), Some("MLU370-X8"));
        assert_eq!(r.bus_id.as_deref(), Some("0000:3D:00.0"));
        assert_eq!(
            (r.power_draw_w, r.power_limit_w),
            (Some(106.0), Some(250.0))
        );
        assert_eq!(r.memory_total_mib, Some(23374));
        assert_eq!(r.temperature_c, Some(39.0));
    }

    #[test]
    fn a_cut_off_table_is_refused_not_half_read() {
        let text = fixture("cambricon-cnmon-table-02.txt");
        let cut: String = text.lines().take(10).map(|l| format!("{l}\n")).collect();
        let err = parse_table(&cut).unwrap_err().to_string();
        assert!(
            err.starts_with(
                "unsupported output from cnmon v5.10.10: the table is cut off after 1 card(s)"
            ),
            "{err}"
        );
        let cut: String = text.lines().take(9).map(|l| format!("{l}\n")).collect();
        assert!(parse_table(&cut).is_err());
    }

    #[test]
    fn an_unknown_header_is_refused_with_the_version() {
        let text = fixture("cambricon-cnmon-table-03.txt").replace("Bus-Id", "Bus-No");
        let err = parse_table(&text).unwrap_err().to_string();
        assert!(
            err.starts_with("unsupported output from cnmon v5.10.13: unknown table header"),
            "{err}"
        );
        let err = parse_table("cnmon: command not found\n")
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("unsupported output from cnmon: no `CNMON"),
            "{err}"
        );
    }
}
