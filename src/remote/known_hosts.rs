//! Host-key checking against an OpenSSH known_hosts file (plain and hashed entries), and
//! appending a key the user accepted.
//!
//! libssh2 compares a presented key against entries of any type, so a host known only by its
//! ecdsa key would read as "changed" when ed25519 gets negotiated: the key types already on
//! file for the host are therefore the only ones offered in the handshake.

use std::fs::OpenOptions;
use std::io::Write;
use std::path::{Path, PathBuf};

use ssh2::{CheckResult, KnownHostFileKind, KnownHosts, MethodType, Session};

use crate::remote::credentials::HostKeyPrompt;
use crate::remote::digest::{base64_decode, base64_encode, fingerprint};
use crate::remote::error::RemoteError;

/// Host-key algorithms in OpenSSH's order of preference, by the key type that carries them.
const ALGORITHMS: [(&str, &str); 8] = [
    ("ssh-ed25519", "ssh-ed25519"),
    ("ecdsa-sha2-nistp256", "ecdsa-sha2-nistp256"),
    ("ecdsa-sha2-nistp384", "ecdsa-sha2-nistp384"),
    ("ecdsa-sha2-nistp521", "ecdsa-sha2-nistp521"),
    ("ssh-rsa", "rsa-sha2-512"),
    ("ssh-rsa", "rsa-sha2-256"),
    ("ssh-rsa", "ssh-rsa"),
    ("ssh-dss", "ssh-dss"),
];

#[derive(Debug, Clone, PartialEq, Eq)]
struct Entry {
    line_no: usize,
    revoked: bool,
    text: String,
    key_type: String,
    blob: Vec<u8>,
}

/// The parsed file; a missing file is an empty one.
#[derive(Debug, Clone)]
pub(crate) struct KnownHostsFile {
    path: PathBuf,
    entries: Vec<Entry>,
}

/// The outcome of checking the key a server presented.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Verdict {
    Trusted,
    Unknown {
        prompt: HostKeyPrompt,
        blob: Vec<u8>,
    },
}

/// The name a key is filed under: `host` on port 22, `[host]:port` elsewhere.
pub(crate) fn known_as(host: &str, port: u16) -> String {
    if port == 22 {
        host.to_string()
    } else {
        format!("[{host}]:{port}")
    }
}

/// The key type an SSH public key blob declares in its first field.
pub(crate) fn blob_key_type(blob: &[u8]) -> Option<String> {
    let len = u32::from_be_bytes(blob.get(..4)?.try_into().ok()?) as usize;
    let name = blob.get(4..4usize.checked_add(len)?)?;
    String::from_utf8(name.to_vec()).ok()
}

impl KnownHostsFile {
    pub(crate) fn load(path: &Path) -> Result<Self, RemoteError> {
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
            Err(e) => {
                return Err(RemoteError::KnownHosts {
                    path: path.to_path_buf(),
                    message: e.to_string(),
                });
            }
        };
        let entries = text
            .lines()
            .enumerate()
            .filter_map(|(i, line)| parse_line(i + 1, line))
            .collect();
        Ok(Self {
            path: path.to_path_buf(),
            entries,
        })
    }

    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// libssh2's view of the plain entries; lines it cannot read (key types it does not know)
    /// are left out instead of ending the load, as `read_file` would.
    fn collection(&self, session: &Session) -> Result<KnownHosts, RemoteError> {
        let mut hosts = session
            .known_hosts()
            .map_err(|e| RemoteError::ssh("known_hosts", &e))?;
        for entry in self.entries.iter().filter(|e| !e.revoked) {
            let _ = hosts.read_str(&entry.text, KnownHostFileKind::OpenSSH);
        }
        Ok(hosts)
    }

    /// The entries that name this host (hashed names included).
    fn entries_for(&self, hosts: &KnownHosts, host: &str, port: u16) -> Vec<&Entry> {
        self.entries
            .iter()
            .filter(|e| {
                !e.revoked && matches!(hosts.check_port(host, port, &e.blob), CheckResult::Match)
            })
            .collect()
    }

    /// The host-key algorithms to offer, from the key types on file for the host; `None`
    /// when the host is not on file (any type may then be negotiated and prompted for).
    pub(crate) fn algorithm_prefs(
        &self,
        session: &Session,
        host: &str,
        port: u16,
    ) -> Result<Option<String>, RemoteError> {
        let hosts = self.collection(session)?;
        let types: Vec<String> = self
            .entries_for(&hosts, host, port)
            .iter()
            .map(|e| e.key_type.clone())
            .collect();
        let supported = session
            .supported_algs(MethodType::HostKey)
            .unwrap_or_default();
        let prefs: Vec<&str> = ALGORITHMS
            .iter()
            .filter(|(key_type, alg)| {
                types.iter().any(|t| t == key_type) && supported.contains(alg)
            })
            .map(|(_, alg)| *alg)
            .collect();
        Ok((!prefs.is_empty()).then(|| prefs.join(",")))
    }

    /// Checks the key the server presented during the handshake just done on `session`.
    pub(crate) fn verify(
        &self,
        session: &Session,
        host: &str,
        port: u16,
    ) -> Result<Verdict, RemoteError> {
        let known_as = known_as(host, port);
        let Some((blob, _)) = session.host_key() else {
            return Err(RemoteError::Handshake {
                addr: known_as,
                message: "the server presented no host key".to_string(),
            });
        };
        let blob = blob.to_vec();
        let key_type = blob_key_type(&blob).unwrap_or_else(|| "unknown".to_string());
        let presented = fingerprint(&blob);
        if self.entries.iter().any(|e| e.revoked && e.blob == blob) {
            return Err(RemoteError::HostKeyRevoked {
                known_as,
                known_hosts: self.path.display().to_string(),
                fingerprint: presented,
            });
        }
        let hosts = self.collection(session)?;
        let on_file = self.entries_for(&hosts, host, port);
        match hosts.check_port(host, port, &blob) {
            CheckResult::Match => Ok(Verdict::Trusted),
            CheckResult::Mismatch if on_file.iter().any(|e| e.key_type == key_type) => {
                let expected = on_file
                    .iter()
                    .filter(|e| e.key_type == key_type)
                    .map(|e| {
                        format!(
                            "{} {} (line {})",
                            e.key_type,
                            fingerprint(&e.blob),
                            e.line_no
                        )
                    })
                    .collect::<Vec<_>>()
                    .join(", ");
                Err(RemoteError::HostKeyChanged {
                    known_as,
                    known_hosts: self.path.display().to_string(),
                    key_type,
                    presented,
                    expected,
                })
            }
            CheckResult::Mismatch | CheckResult::NotFound => {
                let mut other_types_known: Vec<String> =
                    on_file.iter().map(|e| e.key_type.clone()).collect();
                other_types_known.sort();
                other_types_known.dedup();
                Ok(Verdict::Unknown {
                    prompt: HostKeyPrompt {
                        known_as,
                        key_type,
                        fingerprint: presented,
                        other_types_known,
                    },
                    blob,
                })
            }
            CheckResult::Failure => Err(RemoteError::KnownHosts {
                path: self.path.clone(),
                message: format!("libssh2 could not check the key of {known_as}"),
            }),
        }
    }
}

/// One `hosts keytype base64 [comment]` line; comments, blank lines, `@cert-authority` lines
/// (not honoured) and unreadable keys are skipped.
fn parse_line(line_no: usize, line: &str) -> Option<Entry> {
    let trimmed = line.trim();
    if trimmed.is_empty() || trimmed.starts_with('#') {
        return None;
    }
    let mut words = trimmed.split_whitespace();
    let mut first = words.next()?;
    let mut revoked = false;
    if let Some(marker) = first.strip_prefix('@') {
        if marker != "revoked" {
            return None;
        }
        revoked = true;
        first = words.next()?;
    }
    let key_type = words.next()?.to_string();
    let key = words.next()?;
    let blob = base64_decode(key)?;
    Some(Entry {
        line_no,
        revoked,
        text: format!("{first} {key_type} {key}"),
        key_type,
        blob,
    })
}

/// Appends an accepted key, creating the file (0600) and its directory (0700) when missing.
pub(crate) fn append(path: &Path, known_as: &str, blob: &[u8]) -> Result<(), RemoteError> {
    let fail = |e: std::io::Error| RemoteError::KnownHosts {
        path: path.to_path_buf(),
        message: e.to_string(),
    };
    let key_type = blob_key_type(blob).ok_or_else(|| RemoteError::KnownHosts {
        path: path.to_path_buf(),
        message: "the host key blob has no key type".to_string(),
    })?;
    if let Some(dir) = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty() && !d.exists())
    {
        let mut builder = std::fs::DirBuilder::new();
        builder.recursive(true);
        #[cfg(unix)]
        std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
        builder.create(dir).map_err(fail)?;
    }
    let needs_newline = std::fs::read(path)
        .map(|bytes| bytes.last().is_some_and(|&b| b != b'\n'))
        .unwrap_or(false);
    let mut options = OpenOptions::new();
    options.create(true).append(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut file = options.open(path).map_err(fail)?;
    let line = format!(
        "{}{known_as} {key_type} {}\n",
        if needs_newline { "\n" } else { "" },
        base64_encode(blob, true)
    );
    file.write_all(line.as_bytes()).map_err(fail)
}

#[cfg(test)]
mod tests {
    use super::*;

    // A real ed25519 public key (from `ssh-keygen -t ed25519`), its fingerprint as
    // `ssh-keygen -lf` printed it.
    const ED25519: &str = "AAAAC3NzaC1lZDI1NTE5AAAAIIUpBwYODpUF1i6Z8Df3w2MnbI5ihHQz1DvLzp1mBtKI";
    const ED25519_FP: &str = "SHA256:ohEXDRaYsuOMDkQY5STT/OBOfwTmFETIYINmCXR+Nkk";

    #[test]
    fn parses_lines_and_markers() {
        let e = parse_line(3, &format!("[h]:2222 ssh-ed25519 {ED25519} c")).expect("entry");
        assert_eq!(e.key_type, "ssh-ed25519");
        assert_eq!(blob_key_type(&e.blob).as_deref(), Some("ssh-ed25519"));
        assert_eq!(fingerprint(&e.blob), ED25519_FP);
        assert!(!e.revoked);
        let r = parse_line(1, &format!("@revoked * ssh-ed25519 {ED25519}")).expect("entry");
        assert!(r.revoked);
        assert_eq!(parse_line(1, "# comment"), None);
        assert_eq!(
            parse_line(1, &format!("@cert-authority * ssh-ed25519 {ED25519}")),
            None
        );
        assert_eq!(parse_line(1, "h ssh-ed25519 not*base64"), None);
    }

    #[test]
    fn known_as_brackets_other_ports() {
        assert_eq!(known_as("h.example", 22), "h.example");
        assert_eq!(known_as("127.0.0.1", 2222), "[127.0.0.1]:2222");
    }

    #[test]
    fn append_writes_an_openssh_line() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("sub/known_hosts");
        let blob = base64_decode(ED25519).expect("b64");
        append(&path, "[h]:2222", &blob).expect("append");
        std::fs::write(
            &path,
            std::fs::read_to_string(&path).expect("read").trim_end(),
        )
        .expect("strip newline");
        append(&path, "other", &blob).expect("append");
        let text = std::fs::read_to_string(&path).expect("read");
        assert_eq!(
            text,
            format!("[h]:2222 ssh-ed25519 {ED25519}\nother ssh-ed25519 {ED25519}\n")
        );
        let file = KnownHostsFile::load(&path).expect("load");
        assert_eq!(file.entries.len(), 2);
    }
}
