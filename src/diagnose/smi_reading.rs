//! What the nvidia-smi readers of a paste share: the phrases a line may hold, one reading of a
//! GPU's clock-event state, and the readings per GPU judged once the whole paste is read.

use std::collections::BTreeMap;

use crate::diagnose::finding::{Finding, Findings, push_evidence};
use crate::diagnose::{labels, rules};

/// GPUs whose readings a paste can hold; readings of GPUs past this many are not judged.
const MAX_GPUS: usize = 1024;

/// Which phrases a line may hold, from a case-blind scan of it: `false` means the phrase is
/// certainly absent and its case-sensitive search is skipped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LineHints {
    /// "Volatile Uncorr. ECC"
    pub table_header: bool,
    /// "--query-"
    pub query_flag: bool,
    /// "<nvidia_smi_log"
    pub xml_start: bool,
    /// "</nvidia_smi_log>"
    pub xml_end: bool,
}

/// One reading of one GPU's clock-event state, wherever it came from.
pub(crate) struct Reading {
    pub key: String,
    pub gpu: Option<u32>,
    pub mask: Option<u64>,
    pub temperature_c: Option<f64>,
    pub slowdown_c: Option<f64>,
    pub draw_w: Option<f64>,
    pub limit_w: Option<f64>,
    pub default_w: Option<f64>,
}

/// How many readings showed a condition, and the first evidence lines of them.
#[derive(Default)]
struct Hits {
    count: usize,
    evidence: Vec<String>,
}

impl Hits {
    fn add(&mut self, line: &str) {
        self.count += 1;
        push_evidence(&mut self.evidence, line);
    }
}

#[derive(Default)]
struct GpuReadings {
    gpu: Option<u32>,
    total: usize,
    thermal: Hits,
    hw_thermal: bool,
    brake: Hits,
    capped: Hits,
}

/// Readings per GPU, judged once all of the paste has been read.
#[derive(Default)]
pub(crate) struct Snapshot {
    gpus: BTreeMap<String, GpuReadings>,
}

impl Snapshot {
    pub(crate) fn add(&mut self, r: Reading) {
        if self.gpus.len() >= MAX_GPUS && !self.gpus.contains_key(&r.key) {
            return;
        }
        let g = self.gpus.entry(r.key.clone()).or_default();
        g.gpu = r.gpu;
        g.total += 1;
        if rules::thermal(r.mask, r.temperature_c, r.slowdown_c) {
            let temp = r
                .temperature_c
                .map(|t| {
                    let t = format!("{t:.0}");
                    rust_i18n::t!("live_evidence.at_temperature", t = t).into_owned()
                })
                .unwrap_or_default();
            let who = &r.key;
            let line = rust_i18n::t!("live_evidence.thermal_active", who = who, temp = temp);
            g.thermal.add(&line);
            g.hw_thermal |= rules::hw_thermal(r.mask);
        }
        if rules::power_brake(r.mask) {
            let who = &r.key;
            g.brake
                .add(&rust_i18n::t!("live_evidence.brake_active", who = who));
        }
        if let Some(cap) = rules::power_capped(r.mask, r.draw_w, r.limit_w, r.default_w) {
            g.capped.add(&format!("{}: {}", r.key, cap.describe()));
        }
    }

    pub(crate) fn finish(self, out: &mut Findings) {
        for g in self.gpus.into_values() {
            let judge = |hits: &Hits, finding: Finding, out: &mut Findings| {
                if hits.count > 0 && hits.count * 2 >= g.total {
                    let mut f = finding.on_gpu(g.gpu);
                    for line in &hits.evidence {
                        f.add_evidence(line);
                    }
                    out.push(f);
                }
            };
            judge(&g.thermal, labels::thermal_throttle(g.hw_thermal), out);
            judge(&g.brake, labels::power_brake(), out);
            judge(&g.capped, labels::power_throttle(), out);
        }
    }
}

pub(crate) fn is_yes(value: &str) -> bool {
    value.trim().eq_ignore_ascii_case("yes")
}
