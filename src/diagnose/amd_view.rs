//! A pasted amd-smi default view (`amd-smi` with no command): its GPU lines are positive
//! evidence of working AMD GPUs, as an nvidia-smi table is of NVIDIA ones, so a paste of it with
//! no finding reads healthy rather than unrecognised.
//!
//! Read a line at a time: from the view's `| AMD-SMI ` title, the table's lines are kept (a
//! bounded number) and parsed at the end by the amd-smi reader of `telemetry::accel`.

use crate::telemetry::accel::amd_smi_report::{DEFAULT_VIEW_TITLE, parse_default};

/// How many lines of one view are kept: a view is two lines per GPU and a few more.
const MAX_VIEW_LINES: usize = 1_024;

/// The lines of the last amd-smi default view in the paste.
#[derive(Default)]
pub struct Collector {
    lines: Vec<String>,
    inside: bool,
}

impl Collector {
    pub fn line(&mut self, line: &str) {
        let trimmed = line.trim();
        if trimmed.starts_with(DEFAULT_VIEW_TITLE) {
            self.lines.clear();
            self.inside = true;
        }
        if !self.inside {
            return;
        }
        if (trimmed.starts_with('|') || trimmed.starts_with('+'))
            && self.lines.len() < MAX_VIEW_LINES
        {
            self.lines.push(trimmed.to_string());
        } else if !trimmed.is_empty() {
            self.inside = false;
        }
    }

    /// How many GPUs the view shows; 0 without a readable view.
    pub fn gpus(&self) -> usize {
        if self.lines.is_empty() {
            return 0;
        }
        parse_default(&self.lines.join("\n")).map_or(0, |gpus| gpus.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_view_among_other_lines_counts_its_gpus() {
        let root = env!("CARGO_MANIFEST_DIR");
        let view = std::fs::read_to_string(format!(
            "{root}/tests/fixtures/accel/amd-amd-smi-default-01.txt"
        ))
        .expect("fixture");
        let mut c = Collector::default();
        c.line("$ amd-smi");
        for line in view.lines() {
            c.line(line);
        }
        c.line("$ echo done");
        assert_eq!(c.gpus(), 4);
        assert_eq!(Collector::default().gpus(), 0);
    }
}
