//! On real hardware: every capture in `$GPUFLEET_DIAGNOSE_DIR` (nvidia-smi outputs, dmesg,
//! taken on a healthy GPU host) must diagnose as healthy. Ignored by default because it needs
//! such a host; run with `cargo test --test diagnose diagnose_device -- --ignored`.

use gpufleet::diagnose::{decode_input, diagnose, render_text};

#[test]
#[ignore = "needs GPUFLEET_DIAGNOSE_DIR with captures from a healthy GPU host"]
fn captures_from_a_healthy_host_give_no_findings() {
    let dir = std::env::var("GPUFLEET_DIAGNOSE_DIR").expect("GPUFLEET_DIAGNOSE_DIR");
    let mut read = 0;
    let mut failures = Vec::new();
    for entry in std::fs::read_dir(&dir).expect("capture dir") {
        let path = entry.expect("entry").path();
        let bytes = std::fs::read(&path).expect("readable capture");
        let Ok(text) = decode_input(&bytes) else {
            continue;
        };
        read += 1;
        let d = diagnose(&text);
        println!("{}: {}", path.display(), render_text(&d).trim_end());
        if !d.findings.is_empty() {
            failures.push(path.display().to_string());
        }
    }
    assert!(read > 0, "no captures in {dir}");
    assert!(failures.is_empty(), "findings in {failures:?}");
}
