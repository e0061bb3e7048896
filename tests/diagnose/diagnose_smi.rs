//! The nvidia-smi report readers (table, CSV with and without header, `-q` text, `-q -x` XML)
//! on the real healthy H200 captures, and on copies with one field edited to show that a bad
//! value is found. The edit is the only invented part of each text, and it is made here, in
//! the test, next to its purpose.

use gpufleet::diagnose::{Finding, diagnose_text};

fn capture(name: &str) -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/diagnose/healthy")
        .join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn run(text: &str) -> Vec<Finding> {
    diagnose_text(text)
}

fn labels(findings: &[Finding]) -> Vec<&str> {
    findings.iter().map(|f| f.label.as_str()).collect()
}

/// Replaces the first `from` after `anchor`.
fn edit_after(text: &str, anchor: &str, from: &str, to: &str) -> String {
    let at = text.find(anchor).expect("anchor") + anchor.len();
    let (head, tail) = text.split_at(at);
    assert!(tail.contains(from), "{from}");
    format!("{head}{}", tail.replacen(from, to, 1))
}

#[test]
fn csv_with_header_and_units_is_read() {
    let text = capture("query_load.txt");
    assert!(run(&text).is_empty());
    let low = text.replace("692.02 W", "250.00 W");
    let findings = run(&low);
    assert_eq!(labels(&findings), vec!["power_throttle"]);
    assert_eq!(findings[0].gpu, Some(0));
}

#[test]
fn headerless_stream_is_judged_over_all_its_lines() {
    let text = capture("stream_load.txt");
    let with_draw = |draw_for: &dyn Fn(usize) -> bool| {
        text.lines()
            .enumerate()
            .map(|(i, line)| {
                let mut cols: Vec<&str> = line.split(", ").collect();
                if draw_for(i) {
                    cols[12] = "250.00";
                }
                cols.join(", ")
            })
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert!(run(&with_draw(&|i| i == 0)).is_empty(), "one line in 24");
    assert_eq!(labels(&run(&with_draw(&|_| true))), vec!["power_throttle"]);
}

#[test]
fn q_text_sections_are_read() {
    let text = capture("smi_q.txt");
    let brake = edit_after(&text, "HW Power Brake Slowdown", "Not Active", "Active");
    assert_eq!(labels(&run(&brake)), vec!["power_brake"]);
    let pending = edit_after(&text, "Remapped Rows", ": No", ": Yes");
    assert_eq!(labels(&run(&pending)), vec!["row_remap_pending"]);
    let volatile = edit_after(
        &text,
        "Volatile",
        "DRAM Uncorrectable                         : 0",
        "DRAM Uncorrectable                         : 3",
    );
    let findings = run(&volatile);
    assert_eq!(labels(&findings), vec!["ecc_uncorrectable"]);
    assert!(findings[0].evidence[0].contains("GPU 00000000:00:06.0"));
    let aggregate = edit_after(
        &text,
        "Aggregate",
        "DRAM Uncorrectable                         : 0",
        "DRAM Uncorrectable                         : 3",
    );
    assert!(
        run(&aggregate).is_empty(),
        "lifetime counts are history, not a fault"
    );
    let hot = edit_after(&text, "GPU T.Limit Temp", "49 C", "-3 C");
    assert_eq!(labels(&run(&hot)), vec!["thermal_throttle"]);
}

#[test]
fn xml_report_is_read() {
    let text = capture("smi_qx.txt");
    assert!(run(&text).is_empty());
    let pending = text.replace(
        "<remapped_row_pending>No</remapped_row_pending>",
        "<remapped_row_pending>Yes</remapped_row_pending>",
    );
    assert_eq!(labels(&run(&pending)), vec!["row_remap_pending"]);
}

#[test]
fn table_ecc_cell() {
    let text = capture("smi.txt");
    let bad = text.replace(
        "Off |                    0 |",
        "Off |                    2 |",
    );
    let findings = run(&bad);
    assert_eq!(labels(&findings), vec!["ecc_uncorrectable"]);
    assert_eq!(findings[0].gpu, Some(0));
}
