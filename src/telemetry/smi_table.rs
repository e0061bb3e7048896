//! The plain `nvidia-smi` table: only its header is read, for the driver and CUDA versions.

/// Driver and CUDA versions from the table header, e.g.
/// `| NVIDIA-SMI 580.159.04   Driver Version: 580.159.04   CUDA Version: 13.0   |`; newer
/// drivers label them `KMD Version` and `CUDA UMD Version`.
pub fn parse_versions<'a>(
    lines: impl IntoIterator<Item = &'a str>,
) -> (Option<String>, Option<String>) {
    let mut driver = None;
    let mut cuda = None;
    for line in lines {
        driver = driver.or_else(|| value_after(line, &["Driver Version:", "KMD Version:"]));
        cuda = cuda.or_else(|| value_after(line, &["CUDA UMD Version:", "CUDA Version:"]));
        if driver.is_some() && cuda.is_some() {
            break;
        }
    }
    (driver, cuda)
}

fn value_after(line: &str, labels: &[&str]) -> Option<String> {
    labels.iter().find_map(|label| {
        let rest = &line[line.find(label)? + label.len()..];
        let value = rest.split_whitespace().next()?;
        let ok = value
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '-');
        (ok && !value.is_empty()).then(|| value.to_string())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_real_h200_header() {
        let text = include_str!("../../tests/fixtures/nvidia-smi/h200-driver-580/smi.txt");
        let (driver, cuda) = parse_versions(text.lines());
        assert_eq!(driver.as_deref(), Some("580.159.04"));
        assert_eq!(cuda.as_deref(), Some("13.0"));
    }

    #[test]
    fn reads_the_newer_kmd_umd_labels() {
        // Header quoted from a 610.43.03 report,
        // https://github.com/projectbluefin/finpilot/issues/160.
        let line = "| NVIDIA-SMI 610.43.03              KMD Version: 610.43.03     CUDA UMD Version: 13.3     |";
        let (driver, cuda) = parse_versions([line]);
        assert_eq!(driver.as_deref(), Some("610.43.03"));
        assert_eq!(cuda.as_deref(), Some("13.3"));
    }

    #[test]
    fn a_failure_text_has_no_versions() {
        let text = "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.";
        assert_eq!(parse_versions([text]), (None, None));
    }
}
