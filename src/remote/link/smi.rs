//! The remote commands a link runs (nvidia-smi stream and queries, the kernel log), the field
//! lists they ask for, and the small checks on their non-CSV output.

use crate::remote::quote::{CommandError, RemoteCommand};
use crate::telemetry::boot_id::BOOT_ID_PATH;
use crate::telemetry::smi_csv::{COMPUTE_APPS_FIELDS, FieldLayout, query_gpu_args};

/// A `--query-gpu` field list and the layout its lines are read with; it shrinks when a host's
/// driver rejects a field.
pub(crate) struct FieldList {
    names: Vec<String>,
    layout: FieldLayout,
}

impl FieldList {
    pub(crate) fn new(fields: &[&str]) -> Self {
        Self {
            names: fields.iter().map(|f| f.to_string()).collect(),
            layout: FieldLayout::new(fields),
        }
    }

    pub(crate) fn names(&self) -> &[String] {
        &self.names
    }

    pub(crate) fn layout(&self) -> &FieldLayout {
        &self.layout
    }

    /// Drops `field`; true when the list had it.
    pub(crate) fn remove(&mut self, field: &str) -> bool {
        let before = self.names.len();
        self.names.retain(|f| f != field);
        if self.names.len() == before {
            return false;
        }
        let names: Vec<&str> = self.names.iter().map(String::as_str).collect();
        self.layout = FieldLayout::new(&names);
        true
    }
}

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
    RemoteCommand::new(nvidia_smi).args(apps_args()).to_shell()
}

/// nvidia-smi's arguments for the compute processes (fixed words).
pub(crate) fn apps_args() -> [String; 2] {
    [
        format!("--query-compute-apps={}", COMPUTE_APPS_FIELDS.join(",")),
        "--format=csv,noheader,nounits".to_string(),
    ]
}

/// Plain `nvidia-smi`: its table header is the one place that names the CUDA version.
pub(crate) fn versions_command(nvidia_smi: &str) -> Result<String, CommandError> {
    RemoteCommand::new(nvidia_smi).to_shell()
}

/// `cat /proc/sys/kernel/random/boot_id`: the boot id, read once at connect.
pub(crate) fn boot_id_command() -> Result<String, CommandError> {
    RemoteCommand::new("cat").arg(BOOT_ID_PATH).to_shell()
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
/// fallen off the bus`, `NVRM: ... RmInitAdapter failed!`), NVSwitch `SXid`s, lines the kernel
/// prints for the `nvidia` device and nouveau, AMD's amdgpu driver lines, Moore Threads' `mtgpu` driver, and PCIe AER lines (the triage decides which of
/// them are about a GPU).
pub(crate) fn is_gpu_kernel_line(line: &str) -> bool {
    [
        "NVRM",
        "Xid",
        "nvidia",
        "nouveau",
        "AER:",
        "PCIe Bus Error",
        "MTGPU",
        "[mtgpu]",
        "amdgpu",
    ]
    .iter()
    .any(|word| line.contains(word))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_removed_field_leaves_the_list_and_its_layout() {
        let mut list = FieldList::new(&["index", "temperature.gpu.tlimit", "power.draw"]);
        assert!(list.remove("temperature.gpu.tlimit"));
        assert!(!list.remove("temperature.gpu.tlimit"));
        assert_eq!(list.names(), ["index", "power.draw"]);
        assert_eq!(list.layout(), &FieldLayout::new(&["index", "power.draw"]));
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
        // Moore Threads' driver (tests/fixtures/accel/mthreads-kernel-dmesg-01.txt).
        assert!(is_gpu_kernel_line(
            "[234620.922971] MTGPU:  550: ------------[ MTGPU DBG: END ]------------"
        ));
        assert!(is_gpu_kernel_line(
            "[234620.923027] WARNING: CPU: 25 PID: 550 at /var/lib/dkms/mtgpu/1.0.0/build/src/pvr/osfunc.c:1191 OSWarnOn+0xf/0x20 [mtgpu]"
        ));
        // AER lines of the GPU and of its root port (https://github.com/rwth-i6/returnn/issues/1486,
        // https://github.com/rwth-i6/returnn/issues/1500).
        assert!(is_gpu_kernel_line(
            "[  +0.000844] nvidia 0000:03:00.0: AER: can't recover (no error_detected callback)"
        ));
        assert!(is_gpu_kernel_line(
            "[  +0.000316] pcieport 0000:00:03.0: AER: Corrected error received: 0000:00:03.0"
        ));
        assert!(rejected_option("dmesg: unrecognized option '--follow-new'"));
        assert!(!rejected_option(
            "dmesg: read kernel buffer failed: Operation not permitted"
        ));
    }
}
