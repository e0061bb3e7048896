//! What a matched line says besides its phrase: the GPU's PCI address, NCCL's rank, host and
//! peer, and which device a PCIe AER line is about.

use crate::diagnose::pci::normalize_pci;

/// The PCI address in `... GPU 0000:98:00.0: ...` (nvidia-smi and the kernel driver both write
/// it so), or after `GPU` with no space (`GPU0000:03:00.0`, older nvidia-smi).
pub fn gpu_pci(line: &str) -> Option<String> {
    let mut rest = line;
    while let Some(at) = rest.find("GPU") {
        let after = rest[at + 3..].trim_start();
        let after = after.strip_prefix("at ").unwrap_or(after);
        let token = after
            .split(|c: char| c.is_whitespace() || c == ',')
            .next()
            .unwrap_or("");
        if let Some(pci) = normalize_pci(token.trim_end_matches(':')) {
            return Some(pci);
        }
        rest = &rest[at + 3..];
    }
    None
}

/// The device of an amdgpu driver line: `amdgpu 0000:68:00.0: ...` -> `0000:68:00`.
pub fn amdgpu_pci(line: &str) -> Option<String> {
    let at = line.find("amdgpu ")?;
    let token = line[at + "amdgpu ".len()..].split_whitespace().next()?;
    normalize_pci(token)
}

/// [`gpu_pci`], or the address of a kernel line's `(PCI:0000:02:00)`.
pub fn any_pci(line: &str) -> Option<String> {
    gpu_pci(line).or_else(|| {
        let at = line.find("PCI:")?;
        let token = line[at..]
            .split(|c: char| c.is_whitespace() || c == ')')
            .next()?;
        normalize_pci(token)
    })
}

/// The rank, host and peer an NCCL or PyTorch distributed line names.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct NcclWho {
    pub rank: Option<u32>,
    pub host: Option<String>,
    pub peer: Option<String>,
}

/// Reads `[Rank 4]`, `[rank4]:`, `... from rank 9`, the `host:pid:tid [dev] NCCL ...` prefix and
/// `... remote peer node2<42830>` / `... from peer 10.0.35.1<49189>`.
pub fn nccl(line: &str) -> NcclWho {
    let lower = line.to_ascii_lowercase();
    let rank = ["[rank ", "[rank", "from rank "].iter().find_map(|marker| {
        let at = lower.find(marker)?;
        let digits: String = lower[at + marker.len()..]
            .chars()
            .take_while(char::is_ascii_digit)
            .collect();
        digits.parse().ok()
    });
    let host = lower.find(" nccl ").and_then(|at| {
        // `gpu004:2200689:2200706 [3] misc/socket.cc:49 NCCL WARN ...`: the first word before
        // the device bracket, up to its first colon.
        let head = &line[..at];
        let word = head
            .split_whitespace()
            .find(|w| w.matches(':').count() >= 2)?;
        let host = word.split(':').next()?.trim_start_matches('[');
        (!host.is_empty() && host.chars().all(is_host_char)).then(|| host.to_string())
    });
    let peer = ["remote peer ", "from peer ", "call to recv from "]
        .iter()
        .find_map(|marker| {
            let at = lower.find(marker)?;
            let token = line[at + marker.len()..].split_whitespace().next()?;
            let name = token.split('<').next()?;
            (!name.is_empty() && name.chars().all(is_host_char)).then(|| name.to_string())
        });
    NcclWho { rank, host, peer }
}

/// Whether a lower-case "no space left" line is about shared memory rather than the disk:
/// `/dev/shm`, PyTorch's shared-memory files (`</torch_...>`), or the words "shared memory".
pub fn is_shared_memory(lower: &str) -> bool {
    lower.contains("/dev/shm") || lower.contains("</torch_") || lower.contains("shared memory")
}

/// Whether a lower-case loss-scaler line reduces the scale to 1 or less: apex's
/// `... reducing loss scale to 3.1895023843512216e-204`, DeepSpeed's `Attempted loss scale: 1,
/// reducing to 1`. The last number on the line is the new scale.
pub fn loss_scale_at_floor(lower: &str) -> bool {
    let last = lower
        .split(|c: char| !(c.is_ascii_digit() || matches!(c, '.' | 'e' | '-' | '+')))
        .filter(|w| w.starts_with(|c: char| c.is_ascii_digit()))
        .filter_map(|w| w.trim_end_matches('.').parse::<f64>().ok())
        .next_back();
    last.is_some_and(|scale| scale <= 1.0)
}

fn is_host_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '-' || c == '.' || c == '_'
}

/// One PCIe AER line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AerLine {
    /// The device the kernel printed the line for (`nvidia 0000:07:00.0: ...`).
    pub device: Option<String>,
    /// Whether that device is bound to the `nvidia` driver, i.e. is a GPU.
    pub nvidia: bool,
    /// The device a root port says sent the error (`... error received: 0000:03:00.0`).
    pub source: Option<String>,
    /// Uncorrected (fatal or not), or a recovery that failed.
    pub fatal: bool,
}

/// Reads an AER line; `None` when it names no device.
pub fn aer(line: &str) -> Option<AerLine> {
    let lower = line.to_ascii_lowercase();
    let mut device = None;
    let mut nvidia = false;
    let words: Vec<&str> = line.split_whitespace().collect();
    for pair in words.windows(2) {
        if let Some(pci) = normalize_pci(pair[1].trim_end_matches(':'))
            && pair[1].ends_with(':')
        {
            nvidia = pair[0] == "nvidia";
            device = Some(pci);
            break;
        }
    }
    let source = ["received: ", "received from "].iter().find_map(|marker| {
        let at = lower.find(marker)?;
        normalize_pci(line[at + marker.len()..].split_whitespace().next()?)
    });
    let fatal = lower.contains("uncorrect") || lower.contains("can't recover");
    (device.is_some() || source.is_some()).then_some(AerLine {
        device,
        nvidia,
        source,
        fatal,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_gpu_addresses_in_both_spellings() {
        assert_eq!(
            gpu_pci("NVRM: GPU 0000:98:00.0: RmInitAdapter failed! (0x62:0x65:1792)").as_deref(),
            Some("0000:98:00")
        );
        assert_eq!(
            gpu_pci("Unable to determine the device handle for GPU0000:03:00.0: Unknown Error")
                .as_deref(),
            Some("0000:03:00")
        );
        assert_eq!(gpu_pci("NVRM: GPU6 RmInitAdapter: Cannot initialize"), None);
    }

    #[test]
    fn reads_nccl_ranks_hosts_and_peers() {
        let who = nccl(
            "gpu004:2200689:2200706 [3] misc/socket.cc:49 NCCL WARN socketProgress: Connection \
             closed by remote peer gpu004.ds-a4-r02.abc.com<55693>",
        );
        assert_eq!(who.host.as_deref(), Some("gpu004"));
        assert_eq!(who.peer.as_deref(), Some("gpu004.ds-a4-r02.abc.com"));
        let who = nccl(
            "[rank4]:[E1016 03:31:38.928463388 ProcessGroupNCCL.cpp:607] [Rank 4] Watchdog caught",
        );
        assert_eq!(who.rank, Some(4));
    }

    #[test]
    fn reads_the_loss_scale_a_scaler_reduces_to() {
        let apex = "gradient overflow. skipping step, loss scaler 0 reducing loss scale to ";
        assert!(loss_scale_at_floor(&format!(
            "{apex}5.103203814961955e-203"
        )));
        assert!(!loss_scale_at_floor(&format!("{apex}32768.0")));
        assert!(loss_scale_at_floor(
            "[deepspeed] overflow! rank 0 skipping step. attempted loss scale: 1, reducing to 1"
        ));
        assert!(!loss_scale_at_floor(
            "[deepspeed] overflow! rank 0 skipping step. attempted loss scale: 65536, reducing \
             to 32768"
        ));
    }

    #[test]
    fn reads_which_device_an_aer_line_is_about() {
        let line = "[68185.875295] nvidia 0000:07:00.0: PCIe Bus Error: severity=Correctable, \
                    type=Data Link Layer, (Transmitter ID)";
        let aer = aer(line).expect("aer");
        assert!(aer.nvidia && !aer.fatal);
        assert_eq!(aer.device.as_deref(), Some("0000:07:00"));
        let line =
            "[  +0.000316] pcieport 0000:00:03.0: AER: Corrected error received: 0000:00:03.0";
        let aer = super::aer(line).expect("aer");
        assert!(!aer.nvidia);
        assert_eq!(aer.source.as_deref(), Some("0000:00:03"));
    }
}
