//! Whether a host is a container or a machine of its own, read once on connect: a container's
//! `reboot` restarts nothing, so its runbooks restart it through the provider instead. One
//! small command prints what it finds (the `/.dockerenv` and `/run/.containerenv` markers,
//! `systemd-detect-virt -c` where it is installed, PID 1's `/proc/1/cgroup`); the host's answer
//! is untrusted text, read by the pure [`parse`].

use serde::{Deserialize, Serialize};

use crate::config::Provider;
use crate::remote::quote::{CommandError, RemoteCommand};

/// What a host is, as far as restarting it goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HostKind {
    /// A container (Docker, Podman, LXC, Kubernetes): `reboot` inside restarts nothing.
    Container,
    /// A machine of its own (bare metal or a VM): `reboot` restarts it.
    Machine,
}

impl HostKind {
    /// `container` or `machine`, as `snapshot --json` writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Container => "container",
            Self::Machine => "machine",
        }
    }

    /// What an instance of `provider` is: vast.ai, RunPod and AutoDL rent containers, Lambda
    /// virtual machines; a `command` or `ssh` host could be either.
    pub fn of_provider(provider: Provider) -> Option<Self> {
        match provider {
            Provider::Vast | Provider::RunPod | Provider::AutoDl => Some(Self::Container),
            Provider::Lambda => Some(Self::Machine),
            Provider::Command | Provider::Ssh => None,
        }
    }

    /// What a host is: its own answer on connect, else what its provider rents.
    pub fn known(probed: Option<Self>, provider: Option<Provider>) -> Option<Self> {
        probed.or_else(|| provider.and_then(Self::of_provider))
    }

    /// `container` / `容器`, `machine` / `整机`, for the host view's header.
    pub fn words(self) -> crate::words::Words {
        match self {
            Self::Container => crate::words::Words::new("host_kind.container"),
            Self::Machine => crate::words::Words::new("host_kind.machine"),
        }
    }
}

/// The most of PID 1's cgroup file read: a few lines on any host.
const CGROUP_BYTES: u32 = 4096;

/// The probe's script: one `marker PATH` line per container marker present, `virt WORD` with
/// `systemd-detect-virt -c`'s answer where it is installed, then PID 1's cgroup lines, each
/// after `cgroup `.
const SCRIPT: &str = "for f in /.dockerenv /run/.containerenv; do [ -e \"$f\" ] && echo \"marker $f\"; done; \
if command -v systemd-detect-virt >/dev/null 2>&1; then echo \"virt $(systemd-detect-virt -c 2>/dev/null)\"; fi; \
head -c BYTES /proc/1/cgroup 2>/dev/null | sed 's/^/cgroup /'; true";

/// The probe as one quoted shell command.
pub(crate) fn command() -> Result<String, CommandError> {
    RemoteCommand::new("sh")
        .arg("-c")
        .arg(SCRIPT.replace("BYTES", &CGROUP_BYTES.to_string()))
        .to_shell()
}

/// The probe's argv, for a runner that starts programs itself (no shell of its own).
pub fn argv() -> Vec<String> {
    vec![
        "sh".to_string(),
        "-c".to_string(),
        SCRIPT.replace("BYTES", &CGROUP_BYTES.to_string()),
    ]
}

/// Runs a program: its argv and where each line goes; true when it exited well.
pub type RunProgram<'a> = dyn FnMut(&[String], &mut dyn FnMut(&str)) -> bool + 'a;

/// Runs the probe through `run` and reads what it printed.
pub fn probe(run: &mut RunProgram<'_>) -> Option<HostKind> {
    let mut lines = Vec::new();
    let ok = run(&argv(), &mut |line| lines.push(line.to_string()));
    ok.then(|| parse(&lines.join("\n"))).flatten()
}

/// Words in a cgroup path that only a container runtime puts there (Docker's `/docker/ID` and
/// `docker-ID.scope`, Kubernetes' `kubepods`, CRI-O's `crio-ID.scope`, containerd, Podman's
/// `libpod`, LXC's `lxc/NAME` and `lxc.payload.NAME`).
const RUNTIME_WORDS: [&str; 6] = ["docker", "kubepods", "crio-", "containerd", "libpod", "lxc"];

/// What the probe printed, read: `None` when nothing in it tells. A container marker or a
/// runtime's cgroup path says container; `systemd-detect-virt -c` says either (`none` is a
/// machine). A cgroup namespace shows PID 1 at `/` in a container and on a machine alike, so a
/// cgroup path alone never says machine.
pub fn parse(output: &str) -> Option<HostKind> {
    let mut kind = None;
    for line in output.lines() {
        let line = line.trim_end();
        if let Some(path) = line.strip_prefix("marker ") {
            if matches!(path, "/.dockerenv" | "/run/.containerenv") {
                return Some(HostKind::Container);
            }
        } else if let Some(word) = line.strip_prefix("virt ") {
            match word.trim() {
                "" => {}
                "none" => kind = kind.or(Some(HostKind::Machine)),
                _ => return Some(HostKind::Container),
            }
        } else if let Some(entry) = line.strip_prefix("cgroup ")
            && runtime_cgroup(entry)
        {
            return Some(HostKind::Container);
        }
    }
    kind
}

/// Whether one `/proc/1/cgroup` line (`hierarchy-ID:controllers:path`, cgroups(7)) puts PID 1
/// in a container runtime's cgroup.
fn runtime_cgroup(entry: &str) -> bool {
    let Some(path) = entry.splitn(3, ':').nth(2) else {
        return false;
    };
    path.split('/').any(|segment| {
        let lower = segment.to_ascii_lowercase();
        RUNTIME_WORDS.iter().any(|word| lower.starts_with(word))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `/proc/1/cgroup` text as the probe prints it: each line after `cgroup `.
    fn cgroup(text: &str) -> String {
        text.lines()
            .map(|line| format!("cgroup {line}\n"))
            .collect()
    }

    const PROBE_DOCKER: &str =
        include_str!("../../../tests/fixtures/host-kind/probe-docker-cgroupns.txt");
    const PROC1_DOCKER: &str =
        include_str!("../../../tests/fixtures/host-kind/proc1-cgroup-docker-cgroupns.txt");
    const V2_KERNEL_DOC: &str =
        include_str!("../../../tests/fixtures/host-kind/cgroup-v2-no-cgroupns-kernel-doc.txt");
    const V2_CGROUPNS: &str =
        include_str!("../../../tests/fixtures/host-kind/cgroup-v2-cgroupns-kernel-doc.txt");
    const V2_CRIO: &str =
        include_str!("../../../tests/fixtures/host-kind/cgroup-v2-crio-kubepods.txt");
    const V1_DOCKER: &str =
        include_str!("../../../tests/fixtures/host-kind/cgroup-v1-docker-docs.txt");

    /// A Docker container with a cgroup namespace: its cgroup paths are all `/`, so only the
    /// `/.dockerenv` marker and systemd-detect-virt tell.
    #[test]
    fn a_docker_container_is_told_by_its_marker_not_its_cgroups() {
        assert_eq!(parse(PROBE_DOCKER), Some(HostKind::Container));
        assert_eq!(parse(&cgroup(PROC1_DOCKER)), None);
        let without_marker: String = PROBE_DOCKER
            .lines()
            .filter(|line| !line.starts_with("marker "))
            .map(|line| format!("{line}\n"))
            .collect();
        assert_eq!(parse(&without_marker), Some(HostKind::Container));
    }

    /// A runtime's cgroup path says container; a path that names none, or a namespace's `/`,
    /// says nothing.
    #[test]
    fn cgroup_paths_of_container_runtimes_say_container() {
        assert_eq!(parse(&cgroup(V1_DOCKER)), Some(HostKind::Container));
        assert_eq!(parse(&cgroup(V2_CRIO)), Some(HostKind::Container));
        assert_eq!(parse(&cgroup(V2_KERNEL_DOC)), None);
        assert_eq!(parse(&cgroup(V2_CGROUPNS)), None);
    }

    /// systemd-detect-virt's `none` is a machine; its container words outrank it, and a marker
    /// outranks everything.
    #[test]
    fn systemd_detect_virt_none_is_a_machine() {
        let machine = format!("virt none\n{}", cgroup(V2_CGROUPNS));
        assert_eq!(parse(&machine), Some(HostKind::Machine));
        assert_eq!(parse("virt lxc\n"), Some(HostKind::Container));
        assert_eq!(parse("virt \n"), None);
        assert_eq!(
            parse("virt none\nmarker /run/.containerenv\n"),
            Some(HostKind::Container)
        );
        assert_eq!(parse(""), None);
    }

    /// Anything else a host prints is ignored: a marker line for another path, a line that is
    /// not the probe's, escape sequences.
    #[test]
    fn other_text_is_ignored() {
        assert_eq!(parse("marker /etc/passwd\n\u{1b}[31mvirtual\n"), None);
        assert_eq!(parse("cgroup docker\n"), None);
    }

    /// The probe is one quoted `sh -c` command reading the three places.
    #[test]
    fn the_probe_is_one_quoted_command() {
        let command = command().unwrap();
        assert!(command.starts_with("sh -c '"), "{command}");
        for part in ["/.dockerenv", "systemd-detect-virt -c", "/proc/1/cgroup"] {
            assert!(command.contains(part), "{command}");
        }
    }
}
