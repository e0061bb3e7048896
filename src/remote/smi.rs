//! The remote commands a link runs (nvidia-smi stream and queries, the kernel log) and the
//! small parsers for their non-CSV output.

use crate::remote::quote::{CommandError, RemoteCommand};
use crate::telemetry::smi_csv::{COMPUTE_APPS_FIELDS, query_gpu_args};

/// `nvidia-smi --query-gpu=<fields> --format=csv,noheader,nounits [-lms <interval>]`.
pub(crate) fn query_command(
    nvidia_smi: &str,
    fields: &[String],
    interval_ms: Option<u32>,
) -> Result<String, CommandError> {
    let fields: Vec<&str> = fields.iter().map(String::as_str).collect();
    RemoteCommand::new(nvidia_smi)
        .args(query_gpu_args(&fields, interval_ms))
        .to_shell()
}

/// The compute processes on every GPU, in the form `parse_compute_app_line` reads.
pub(crate) fn apps_command(nvidia_smi: &str) -> Result<String, CommandError> {
    RemoteCommand::new(nvidia_smi)
        .arg(format!(
            "--query-compute-apps={}",
            COMPUTE_APPS_FIELDS.join(",")
        ))
        .arg("--format=csv,noheader,nounits")
        .to_shell()
}

/// Plain `nvidia-smi`: its table header is the one place that names the CUDA version.
pub(crate) fn versions_command(nvidia_smi: &str) -> Result<String, CommandError> {
    RemoteCommand::new(nvidia_smi).to_shell()
}

/// Ways to follow the kernel log, tried in order: `dmesg --follow-new` (no replay of old lines
/// on every reconnect), and `journalctl -kf` where dmesg is too old to know that option.
pub(crate) fn kernel_command(stage: usize) -> Option<String> {
    let command = match stage {
        0 => RemoteCommand::new("dmesg").arg("--follow-new"),
        1 => RemoteCommand::new("journalctl").args(["-k", "-f", "-n", "0", "-q"]),
        _ => return None,
    };
    command.to_shell().ok()
}

/// Whether a failed kernel-log command failed for its option rather than for permission.
pub(crate) fn rejected_option(output: &str) -> bool {
    output.contains("unrecognized option") || output.contains("invalid option")
}

/// Kernel lines worth forwarding: the NVIDIA driver's (`NVRM: Xid ...`, `NVRM: GPU ... has
/// fallen off the bus`) and NVSwitch `SXid`s.
pub(crate) fn is_gpu_kernel_line(line: &str) -> bool {
    line.contains("NVRM") || line.contains("Xid")
}

/// Driver and CUDA versions from the `nvidia-smi` table header, e.g.
/// `| NVIDIA-SMI 580.159.04   Driver Version: 580.159.04   CUDA Version: 13.0   |`; newer
/// drivers say `KMD Version` and `CUDA UMD Version`.
pub(crate) fn parse_versions(lines: &[String]) -> (Option<String>, Option<String>) {
    let mut driver = None;
    let mut cuda = None;
    for line in lines {
        driver = driver.or_else(|| value_after(line, &["Driver Version:", "KMD Version:"]));
        cuda = cuda.or_else(|| value_after(line, &["CUDA UMD Version:", "CUDA Version:"]));
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
    fn versions_from_real_headers() {
        let h200 = vec![
            "+-----------------------------------------------------------------------------------------+".to_string(),
            "| NVIDIA-SMI 580.159.04             Driver Version: 580.159.04     CUDA Version: 13.0     |".to_string(),
        ];
        assert_eq!(
            parse_versions(&h200),
            (Some("580.159.04".into()), Some("13.0".into()))
        );
        let r610 = vec![
            "| NVIDIA-SMI 610.43.03              KMD Version: 610.43.03     CUDA UMD Version: 13.3     |"
                .to_string(),
        ];
        assert_eq!(
            parse_versions(&r610),
            (Some("610.43.03".into()), Some("13.3".into()))
        );
        let failed = vec!["NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the latest NVIDIA driver is installed and running.".to_string()];
        assert_eq!(parse_versions(&failed), (None, None));
    }

    #[test]
    fn commands_are_quoted_words() {
        let fields = vec!["index".to_string(), "uuid".to_string()];
        assert_eq!(
            query_command("nvidia-smi", &fields, Some(500)).as_deref(),
            Ok("nvidia-smi --query-gpu=index,uuid --format=csv,noheader,nounits -lms 500")
        );
        assert_eq!(
            apps_command("/opt/my dir/nvidia-smi").as_deref(),
            Ok(
                "'/opt/my dir/nvidia-smi' --query-compute-apps=pid,process_name,used_memory,gpu_uuid --format=csv,noheader,nounits"
            )
        );
        assert_eq!(kernel_command(0).as_deref(), Some("dmesg --follow-new"));
        assert!(kernel_command(2).is_none());
    }

    #[test]
    fn kernel_lines_and_option_errors() {
        assert!(is_gpu_kernel_line(
            "[ 1234.5] NVRM: Xid (PCI:0000:5a:00): 79, GPU has fallen off the bus."
        ));
        assert!(!is_gpu_kernel_line("[ 1.0] usb 1-1: new device"));
        assert!(rejected_option("dmesg: unrecognized option '--follow-new'"));
        assert!(!rejected_option(
            "dmesg: read kernel buffer failed: Operation not permitted"
        ));
    }
}
