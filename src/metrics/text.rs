//! The Prometheus text exposition format 0.0.4, written by hand because its names must stay
//! byte for byte as dcgm-exporter spells them (a client library would add `_total` to counters
//! or speak OpenMetrics): `# HELP`, `# TYPE`, then the family's samples together, label values
//! escaped, a value that is not known never written as 0 (the caller leaves the sample out).

use std::fmt::Write;

/// The `Content-Type` of the format; Prometheus 3 fails a scrape without one.
pub const CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Gauge,
    Counter,
}

impl Kind {
    fn word(self) -> &'static str {
        match self {
            Kind::Gauge => "gauge",
            Kind::Counter => "counter",
        }
    }
}

/// The labels of one sample, in order.
pub type Labels<'a> = &'a [(&'a str, &'a str)];

/// A page being written: families in the order they are started.
#[derive(Debug, Default)]
pub struct Page {
    out: String,
}

impl Page {
    pub fn with_capacity(bytes: usize) -> Self {
        Self {
            out: String::with_capacity(bytes),
        }
    }

    /// Starts a family: its HELP and TYPE lines. Every sample of the family must follow before
    /// the next family starts.
    pub fn family(&mut self, name: &str, help: &str, kind: Kind) {
        let _ = write!(self.out, "# HELP {name} ");
        escape_help(&mut self.out, help);
        let _ = writeln!(self.out, "\n# TYPE {name} {}", kind.word());
    }

    /// One sample of the family just started.
    pub fn sample(&mut self, name: &str, labels: Labels<'_>, value: f64) {
        self.out.push_str(name);
        if !labels.is_empty() {
            self.out.push('{');
            for (i, (key, value)) in labels.iter().enumerate() {
                if i > 0 {
                    self.out.push(',');
                }
                self.out.push_str(key);
                self.out.push_str("=\"");
                escape_label(&mut self.out, value);
                self.out.push('"');
            }
            self.out.push('}');
        }
        self.out.push(' ');
        push_value(&mut self.out, value);
        self.out.push('\n');
    }

    pub fn finish(self) -> String {
        self.out
    }
}

/// Label values escape `\`, `"` and line feeds.
fn escape_label(out: &mut String, value: &str) {
    for c in value.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
}

/// HELP text escapes `\` and line feeds.
fn escape_help(out: &mut String, help: &str) {
    for c in help.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
}

/// Go-style floats: whole numbers without a fraction, `NaN`, `+Inf`, `-Inf`.
fn push_value(out: &mut String, value: f64) {
    if value.is_nan() {
        out.push_str("NaN");
    } else if value.is_infinite() {
        out.push_str(if value > 0.0 { "+Inf" } else { "-Inf" });
    } else if value.fract() == 0.0 && value.abs() < 1e15 {
        let _ = write!(out, "{}", value as i64);
    } else {
        let _ = write!(out, "{value}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_family_has_help_type_and_escaped_samples() {
        let mut page = Page::default();
        page.family(
            "DCGM_FI_DEV_GPU_TEMP",
            "GPU temperature (in C).",
            Kind::Gauge,
        );
        page.sample(
            "DCGM_FI_DEV_GPU_TEMP",
            &[("gpu", "0"), ("modelName", "NVIDIA \"H200\"\\x\ny")],
            36.0,
        );
        page.sample("DCGM_FI_DEV_GPU_TEMP", &[("gpu", "1")], 36.5);
        assert_eq!(
            page.finish(),
            "# HELP DCGM_FI_DEV_GPU_TEMP GPU temperature (in C).\n\
             # TYPE DCGM_FI_DEV_GPU_TEMP gauge\n\
             DCGM_FI_DEV_GPU_TEMP{gpu=\"0\",modelName=\"NVIDIA \\\"H200\\\"\\\\x\\ny\"} 36\n\
             DCGM_FI_DEV_GPU_TEMP{gpu=\"1\"} 36.5\n"
        );
    }

    #[test]
    fn special_values_are_spelled_as_prometheus_reads_them() {
        let mut out = String::new();
        for v in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY, -3.0, 0.25, 1e20] {
            push_value(&mut out, v);
            out.push(' ');
        }
        assert_eq!(out, "NaN +Inf -Inf -3 0.25 100000000000000000000 ");
    }
}
