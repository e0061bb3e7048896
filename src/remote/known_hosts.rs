//! Host-key checking against OpenSSH known_hosts files, matched as OpenSSH matches them
//! (patterns with `*`, `?` and `!negation`, `[host]:port` names, hashed `|1|` entries,
//! `@revoked` keys, `@cert-authority` lines refusing the hosts they cover: libssh2 cannot
//! check certificates), and appending a key the user accepted.
//!
//! libssh2 compares a presented key against entries of any type, so a host known only by its
//! ecdsa key would read as "changed" when ed25519 gets negotiated: the key types already on
//! file for the host are therefore the only ones offered in the handshake.

use std::fs::OpenOptions;
use std::io::Write;
use std::path::{Path, PathBuf};

use ssh2::{MethodType, Session};

use crate::remote::credentials::HostKeyPrompt;
use crate::remote::digest::{base64_decode, base64_encode, fingerprint, hmac_sha1};
use crate::remote::error::RemoteError;
use crate::remote::host_pattern::{ListMatch, match_host_list, names_exactly};
use crate::remote::ssh_config_file::os_said;
use crate::words::Words;
use crate::words::joined;

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

/// How a line names its hosts.
#[derive(Debug, Clone, PartialEq, Eq)]
enum HostField {
    /// A comma-separated pattern list (`h`, `[h]:2222`, `*.example`, `!bad`).
    Patterns(String),
    /// `|1|salt|hash`: HMAC-SHA1 of the name, keyed with the salt.
    Hashed { salt: Vec<u8>, hash: Vec<u8> },
}

impl HostField {
    fn parse(text: &str) -> Option<Self> {
        match text.strip_prefix("|1|") {
            Some(rest) => {
                let (salt, hash) = rest.split_once('|')?;
                Some(HostField::Hashed {
                    salt: base64_decode(salt)?,
                    hash: base64_decode(hash)?,
                })
            }
            None if text.starts_with('|') => None,
            None => Some(HostField::Patterns(text.to_string())),
        }
    }

    /// Whether the line is about `name` (already lowercased), as OpenSSH decides it.
    fn names(&self, name: &str) -> bool {
        match self {
            HostField::Patterns(list) => match_host_list(name, list) == ListMatch::Yes,
            HostField::Hashed { salt, hash } => hmac_sha1(salt, name.as_bytes()) == hash[..],
        }
    }

    /// Whether `ssh-keygen -R name` removes this line (an exact or hashed name, no pattern).
    fn removable_by_name(&self, name: &str) -> bool {
        match self {
            HostField::Patterns(list) => names_exactly(name, list),
            HostField::Hashed { .. } => true,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Entry {
    /// Index into the files the entry was read from.
    file: usize,
    line_no: usize,
    revoked: bool,
    /// `@cert-authority`: a CA that signs host certificates, which libssh2 cannot check.
    cert_authority: bool,
    hosts: HostField,
    key_type: String,
    blob: Vec<u8>,
}

/// The parsed files (a missing file is an empty one); new keys go to the first.
#[derive(Debug, Clone)]
pub(crate) struct KnownHostsFile {
    /// Where accepted keys are appended: the first of `paths`.
    write_to: PathBuf,
    paths: Vec<PathBuf>,
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

/// The name a key is filed under: `host` on port 22, `[host]:port` elsewhere, lowercased as
/// OpenSSH looks names up and writes them.
pub(crate) fn known_as(host: &str, port: u16) -> String {
    let host = host.to_ascii_lowercase();
    if port == 22 {
        host
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
    /// Reads every file of `paths` (at least one: the first is where accepted keys go).
    pub(crate) fn load(paths: &[PathBuf]) -> Result<Self, RemoteError> {
        let Some(write_to) = paths.first().cloned() else {
            return Err(RemoteError::KnownHosts {
                path: PathBuf::from("known_hosts"),
                message: Box::new(Words::new("remote_words.no_known_hosts_file")),
            });
        };
        let mut entries = Vec::new();
        for (file, path) in paths.iter().enumerate() {
            let text = match std::fs::read_to_string(path) {
                Ok(t) => t,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(e) => {
                    return Err(RemoteError::KnownHosts {
                        path: path.clone(),
                        message: Box::new(os_said(&e)),
                    });
                }
            };
            entries.extend(
                text.lines()
                    .enumerate()
                    .filter_map(|(i, line)| parse_line(file, i + 1, line)),
            );
        }
        Ok(Self {
            write_to,
            paths: paths.to_vec(),
            entries,
        })
    }

    /// The file accepted keys are appended to.
    pub(crate) fn path(&self) -> &Path {
        &self.write_to
    }

    fn place(&self, entry: &Entry) -> Words {
        let path = self.paths.get(entry.file).unwrap_or(&self.write_to);
        crate::remote::ssh_config_file::place(path, entry.line_no)
    }

    /// The host keys on file for `known_as` (hashed names, patterns and negations included;
    /// `@revoked` and `@cert-authority` lines are not host keys).
    fn entries_for(&self, known_as: &str) -> Vec<&Entry> {
        let name = known_as.to_ascii_lowercase();
        self.entries
            .iter()
            .filter(|e| !e.revoked && !e.cert_authority && e.hosts.names(&name))
            .collect()
    }

    /// The host-key algorithms to offer, from the key types on file for the host; `None`
    /// when the host is not on file (any type may then be negotiated and prompted for).
    pub(crate) fn algorithm_prefs(&self, session: &Session, known_as: &str) -> Option<String> {
        let types: Vec<&str> = self
            .entries_for(known_as)
            .iter()
            .map(|e| e.key_type.as_str())
            .collect();
        let supported = session
            .supported_algs(MethodType::HostKey)
            .unwrap_or_default();
        let prefs: Vec<&str> = ALGORITHMS
            .iter()
            .filter(|(key_type, alg)| types.contains(key_type) && supported.contains(alg))
            .map(|(_, alg)| *alg)
            .collect();
        (!prefs.is_empty()).then(|| prefs.join(","))
    }

    /// Checks the key the server presented during the handshake just done on `session`.
    pub(crate) fn verify(&self, session: &Session, known_as: &str) -> Result<Verdict, RemoteError> {
        let Some((blob, _)) = session.host_key() else {
            return Err(RemoteError::Handshake {
                addr: Box::new(Words::new("remote_words.peer").put("addr", known_as)),
                message: Box::new(Words::new("remote_words.no_host_key")),
            });
        };
        self.check(known_as, blob)
    }

    /// Trusted when a line for the host holds this key; refused when the key is revoked, or
    /// when a line for the host (a pattern such as `[h]:*` or `*.example` as much as the
    /// exact name) holds another key of its type; otherwise unknown.
    pub(crate) fn check(&self, known_as: &str, blob: &[u8]) -> Result<Verdict, RemoteError> {
        let known_as = known_as.to_ascii_lowercase();
        let key_type = blob_key_type(blob).unwrap_or_else(|| "unknown".to_string());
        let presented = fingerprint(blob);
        if let Some(line) = self.entries.iter().find(|e| e.revoked && e.blob == blob) {
            return Err(RemoteError::HostKeyRevoked {
                known_as,
                known_hosts: Box::new(self.place(line)),
                fingerprint: presented,
            });
        }
        let on_file = self.entries_for(&known_as);
        if on_file.iter().any(|e| e.blob == blob) {
            return Ok(Verdict::Trusted);
        }
        let same_type: Vec<&&Entry> = on_file.iter().filter(|e| e.key_type == key_type).collect();
        let expected: Vec<Words> = same_type
            .iter()
            .map(|e| {
                Words::new("known_hosts_words.expected")
                    .put("key_type", e.key_type.as_str())
                    .put("fingerprint", fingerprint(&e.blob))
                    .put_words("place", self.place(e))
            })
            .collect();
        if let Some(expected) = joined(&expected, "list_words.comma") {
            let remedy = self.remedy(&known_as, &same_type);
            return Err(RemoteError::HostKeyChanged {
                known_as,
                key_type,
                presented,
                expected: Box::new(expected),
                remedy: Box::new(remedy),
            });
        }
        // A host vouched for by a CA is known, not new: offering its plain key for trust would
        // bypass the CA the user set up.
        if let Some(ca) = self
            .entries
            .iter()
            .find(|e| e.cert_authority && e.hosts.names(&known_as))
        {
            return Err(RemoteError::HostKeyCertOnly {
                known_as,
                known_hosts: Box::new(self.place(ca)),
                fingerprint: presented,
            });
        }
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
            blob: blob.to_vec(),
        })
    }

    /// What to do if the host really was re-installed: `ssh-keygen -R` for lines naming it,
    /// editing by hand for pattern lines (which may cover other hosts too).
    fn remedy(&self, known_as: &str, lines: &[&&Entry]) -> Words {
        let (exact, patterns): (Vec<&&Entry>, Vec<&&Entry>) = lines
            .iter()
            .partition(|e| e.hosts.removable_by_name(known_as));
        let mut steps = Vec::new();
        let mut files: Vec<usize> = exact.iter().map(|e| e.file).collect();
        files.dedup();
        for file in files {
            if let Some(path) = self.paths.get(file) {
                steps.push(
                    Words::new("known_hosts_words.remove_key")
                        .put("known_as", known_as)
                        .put("path", path.display().to_string()),
                );
            }
        }
        for line in patterns {
            steps.push(
                Words::new("known_hosts_words.edit_by_hand").put_words("place", self.place(line)),
            );
        }
        let remedy = Words::new("known_hosts_words.remedy");
        match joined(&steps, "list_words.semicolon") {
            Some(steps) => remedy.put_words("steps", steps),
            None => remedy.put("steps", ""),
        }
    }
}

/// One `[@marker] hosts keytype base64 [comment]` line (markers `@revoked` and
/// `@cert-authority`); comments, blank lines, other markers and unreadable lines are skipped,
/// as OpenSSH skips them.
fn parse_line(file: usize, line_no: usize, line: &str) -> Option<Entry> {
    let trimmed = line.trim();
    if trimmed.is_empty() || trimmed.starts_with('#') {
        return None;
    }
    let mut words = trimmed.split_whitespace();
    let mut first = words.next()?;
    let (mut revoked, mut cert_authority) = (false, false);
    if let Some(marker) = first.strip_prefix('@') {
        match marker {
            "revoked" => revoked = true,
            "cert-authority" => cert_authority = true,
            _ => return None,
        }
        first = words.next()?;
    }
    let hosts = HostField::parse(first)?;
    let key_type = words.next()?.to_string();
    let blob = base64_decode(words.next()?)?;
    Some(Entry {
        file,
        line_no,
        revoked,
        cert_authority,
        hosts,
        key_type,
        blob,
    })
}

/// `|1|salt|hash` of a name, as `HashKnownHosts yes` files it: HMAC-SHA1 keyed with a random
/// 20-byte salt.
fn hashed_name(known_as: &str) -> std::io::Result<String> {
    let mut salt = [0u8; 20];
    std::io::Read::read_exact(&mut std::fs::File::open("/dev/urandom")?, &mut salt)?;
    let hash = hmac_sha1(&salt, known_as.as_bytes());
    Ok(format!(
        "|1|{}|{}",
        base64_encode(&salt, true),
        base64_encode(&hash, true)
    ))
}

/// Appends an accepted key (under a hashed name when `hashed`), creating the file (0600) and
/// its directory (0700) when missing.
pub(crate) fn append(
    path: &Path,
    known_as: &str,
    blob: &[u8],
    hashed: bool,
) -> Result<(), RemoteError> {
    let fail = |e: std::io::Error| RemoteError::KnownHosts {
        path: path.to_path_buf(),
        message: Box::new(os_said(&e)),
    };
    let key_type = blob_key_type(blob).ok_or_else(|| RemoteError::KnownHosts {
        path: path.to_path_buf(),
        message: Box::new(Words::new("remote_words.blob_no_key_type")),
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
    let name = if hashed {
        hashed_name(known_as).map_err(fail)?
    } else {
        known_as.to_string()
    };
    let line = format!(
        "{}{name} {key_type} {}\n",
        if needs_newline { "\n" } else { "" },
        base64_encode(blob, true)
    );
    file.write_all(line.as_bytes()).map_err(fail)
}

#[cfg(test)]
mod tests {
    //! known_hosts lines read and matched as OpenSSH does; every verdict is one `ssh-keygen -F`
    //! agrees with on the same file.

    use super::*;

    // Real public keys (from `ssh-keygen`), their fingerprints as `ssh-keygen -lf` printed them.
    const ED25519: &str = "AAAAC3NzaC1lZDI1NTE5AAAAIIUpBwYODpUF1i6Z8Df3w2MnbI5ihHQz1DvLzp1mBtKI";
    const ED25519_FP: &str = "SHA256:ohEXDRaYsuOMDkQY5STT/OBOfwTmFETIYINmCXR+Nkk";
    const OTHER_ED25519: &str =
        "AAAAC3NzaC1lZDI1NTE5AAAAIIlwZ+wSp1FJdxitpnYjCicTEbrBDrHhqN2tBnwAAoT/";
    const OTHER_FP: &str = "SHA256:bDekEORjCzsFAd0Om6+diBkmgEqydRbg2LwVHZO2q9g";
    const ECDSA: &str = "AAAAE2VjZHNhLXNoYTItbmlzdHAyNTYAAAAIbmlzdHAyNTYAAABBBP7e92N8425wqrwZzFaVtRpz/9Jtol6Qc9HtR89aVWy2KQtIuJ4YJwBA3TG/HfU9NS/akmQl7Xii73VmJQNKg7k=";
    // `ssh-keygen -H` of `[gpu.example]:2222 ssh-ed25519 OTHER_ED25519`.
    const HASHED: &str = "|1|a3T6h3/oSZ6Mpk6iAHrU0GF+u6c=|0BF1DE26nNDahcAp5zCKJ5RBfEo=";

    fn blob(b64: &str) -> Vec<u8> {
        base64_decode(b64).expect("b64")
    }

    /// A known_hosts file with `text`, loaded.
    fn file_with(dir: &Path, text: &str) -> KnownHostsFile {
        let path = dir.join("known_hosts");
        std::fs::write(&path, text).expect("write");
        KnownHostsFile::load(&[path]).expect("load")
    }

    fn changed(result: Result<Verdict, RemoteError>) -> String {
        match result {
            Err(e @ RemoteError::HostKeyChanged { .. }) => e.to_string(),
            other => panic!("not a changed key: {other:?}"),
        }
    }

    #[test]
    fn parses_lines_and_markers() {
        let e = parse_line(0, 3, &format!("[h]:2222 ssh-ed25519 {ED25519} c")).expect("entry");
        assert_eq!(e.key_type, "ssh-ed25519");
        assert_eq!(blob_key_type(&e.blob).as_deref(), Some("ssh-ed25519"));
        assert_eq!(fingerprint(&e.blob), ED25519_FP);
        assert_eq!(e.hosts, HostField::Patterns("[h]:2222".into()));
        assert!(!e.revoked);
        let r = parse_line(0, 1, &format!("@revoked * ssh-ed25519 {ED25519}")).expect("entry");
        assert!(r.revoked);
        assert_eq!(parse_line(0, 1, "# comment"), None);
        let ca = parse_line(0, 1, &format!("@cert-authority * ssh-ed25519 {ED25519}")).expect("ca");
        assert!(ca.cert_authority && !ca.revoked);
        assert_eq!(
            parse_line(0, 1, &format!("@other * ssh-ed25519 {ED25519}")),
            None
        );
        assert_eq!(parse_line(0, 1, "h ssh-ed25519 not*base64"), None);
        assert_eq!(
            parse_line(0, 1, &format!("|2|x|y ssh-ed25519 {ED25519}")),
            None
        );
    }

    #[test]
    fn known_as_brackets_other_ports_and_lowercases() {
        assert_eq!(known_as("h.example", 22), "h.example");
        assert_eq!(known_as("127.0.0.1", 2222), "[127.0.0.1]:2222");
        assert_eq!(known_as("GPU.Example", 2222), "[gpu.example]:2222");
    }

    #[test]
    fn a_wildcard_port_line_with_another_key_is_a_changed_key() {
        let dir = tempfile::tempdir().expect("tempdir");
        let kh = file_with(
            dir.path(),
            &format!("# pinned\n[127.0.0.1]:* ssh-ed25519 {OTHER_ED25519}\n"),
        );
        let text = changed(kh.check("[127.0.0.1]:2222", &blob(ED25519)));
        assert!(
            text.contains(OTHER_FP) && text.contains(ED25519_FP),
            "{text}"
        );
        assert!(
            text.contains(&format!(
                "{} line 2",
                dir.path().join("known_hosts").display()
            )),
            "{text}"
        );
        assert!(
            text.contains("edit") && !text.contains("ssh-keygen -R"),
            "{text}"
        );
        // The pinned key itself is trusted on any port but 22 (filed as the bare address).
        assert_eq!(
            kh.check("[127.0.0.1]:40022", &blob(OTHER_ED25519)).ok(),
            Some(Verdict::Trusted)
        );
        assert!(matches!(
            kh.check("127.0.0.1", &blob(ED25519)),
            Ok(Verdict::Unknown { .. })
        ));
    }

    #[test]
    fn domain_patterns_and_negations() {
        let dir = tempfile::tempdir().expect("tempdir");
        let kh = file_with(
            dir.path(),
            &format!("*.EXAMPLE,!bad.example ssh-ed25519 {OTHER_ED25519}\n"),
        );
        let presented = blob(ED25519);
        changed(kh.check("a.example", &presented));
        changed(kh.check("x.a.example", &presented));
        changed(kh.check("A.Example", &presented));
        // Negated: the line says nothing about bad.example, so its key is merely unknown.
        assert!(matches!(
            kh.check("bad.example", &presented),
            Ok(Verdict::Unknown { .. })
        ));
        assert!(matches!(
            kh.check("example", &presented),
            Ok(Verdict::Unknown { .. })
        ));
        assert!(matches!(
            kh.check("a.example.org", &presented),
            Ok(Verdict::Unknown { .. })
        ));
    }

    #[test]
    fn an_exact_line_suggests_ssh_keygen_r() {
        let dir = tempfile::tempdir().expect("tempdir");
        let kh = file_with(
            dir.path(),
            &format!("[h]:2222 ssh-ed25519 {OTHER_ED25519}\n"),
        );
        let text = changed(kh.check("[H]:2222", &blob(ED25519)));
        assert!(text.contains("ssh-keygen -R '[h]:2222'"), "{text}");
        assert!(text.contains("line 1"), "{text}");
    }

    #[test]
    fn hashed_names_match_the_lowercased_name() {
        let dir = tempfile::tempdir().expect("tempdir");
        let kh = file_with(
            dir.path(),
            &format!("{HASHED} ssh-ed25519 {OTHER_ED25519}\n"),
        );
        assert_eq!(
            kh.check("[gpu.example]:2222", &blob(OTHER_ED25519)).ok(),
            Some(Verdict::Trusted)
        );
        assert_eq!(
            kh.check("[GPU.example]:2222", &blob(OTHER_ED25519)).ok(),
            Some(Verdict::Trusted)
        );
        changed(kh.check("[gpu.example]:2222", &blob(ED25519)));
        assert!(matches!(
            kh.check("[gpu.example]:2223", &blob(ED25519)),
            Ok(Verdict::Unknown { .. })
        ));
    }

    #[test]
    fn other_key_types_and_revocations() {
        let dir = tempfile::tempdir().expect("tempdir");
        let kh = file_with(
            dir.path(),
            &format!(
                "*.example ecdsa-sha2-nistp256 {ECDSA}\n@revoked nothing-matches ssh-ed25519 {OTHER_ED25519}\n"
            ),
        );
        // Only an ecdsa key on file: an ed25519 key is new, with the known type listed.
        match kh.check("a.example", &blob(ED25519)) {
            Ok(Verdict::Unknown { prompt, .. }) => {
                assert_eq!(prompt.other_types_known, vec!["ecdsa-sha2-nistp256"]);
                assert_eq!(prompt.known_as, "a.example");
            }
            other => panic!("{other:?}"),
        }
        // A revoked key is refused whatever host its line names, and the line is named.
        match kh.check("a.example", &blob(OTHER_ED25519)) {
            Err(e @ RemoteError::HostKeyRevoked { .. }) => {
                assert!(e.to_string().contains("line 2"), "{e}");
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn several_files_are_read_and_the_first_is_written() {
        let dir = tempfile::tempdir().expect("tempdir");
        let first = dir.path().join("missing_yet");
        let second = dir.path().join("second");
        std::fs::write(&second, format!("\n\nh ssh-ed25519 {OTHER_ED25519}\n")).expect("write");
        let kh = KnownHostsFile::load(&[first.clone(), second.clone()]).expect("load");
        assert_eq!(kh.path(), first.as_path());
        let text = changed(kh.check("h", &blob(ED25519)));
        assert!(
            text.contains(&format!("{} line 3", second.display())),
            "{text}"
        );
        assert!(KnownHostsFile::load(&[]).is_err());
    }

    #[test]
    fn append_writes_an_openssh_line() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("sub/known_hosts");
        let blob = blob(ED25519);
        append(&path, "[h]:2222", &blob, false).expect("append");
        std::fs::write(
            &path,
            std::fs::read_to_string(&path).expect("read").trim_end(),
        )
        .expect("strip newline");
        append(&path, "other", &blob, false).expect("append");
        let text = std::fs::read_to_string(&path).expect("read");
        assert_eq!(
            text,
            format!("[h]:2222 ssh-ed25519 {ED25519}\nother ssh-ed25519 {ED25519}\n")
        );
        let file = KnownHostsFile::load(&[path]).expect("load");
        assert_eq!(file.entries.len(), 2);
    }

    #[test]
    fn a_host_known_only_through_a_ca_is_refused_and_a_plain_key_still_wins() {
        let dir = tempfile::tempdir().expect("tempdir");
        let file = file_with(
            dir.path(),
            &format!("@cert-authority *.example ssh-ed25519 {OTHER_ED25519}\n"),
        );
        match file.check("gpu.example", &blob(ED25519)) {
            Err(e @ RemoteError::HostKeyCertOnly { .. }) => {
                assert!(e.to_string().contains("line 1"), "{e}");
            }
            other => panic!("not refused: {other:?}"),
        }
        // A host the CA line does not cover is merely unknown.
        assert!(matches!(
            file.check("other.org", &blob(ED25519)),
            Ok(Verdict::Unknown { .. })
        ));
        // The host's own key on file is trusted whatever the CA line says.
        let file = file_with(
            dir.path(),
            &format!(
                "@cert-authority *.example ssh-ed25519 {OTHER_ED25519}\ngpu.example ssh-ed25519 {ED25519}\n"
            ),
        );
        assert_eq!(
            file.check("gpu.example", &blob(ED25519)).expect("trusted"),
            Verdict::Trusted
        );
    }

    #[test]
    fn hash_known_hosts_files_a_hashed_name_that_matches_only_the_host() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("known_hosts");
        append(&path, "[gpu.example]:2222", &blob(ED25519), true).expect("append");
        append(&path, "[gpu.example]:2222", &blob(ED25519), true).expect("append");
        let text = std::fs::read_to_string(&path).expect("read");
        assert!(
            text.starts_with("|1|") && !text.contains("gpu.example"),
            "{text}"
        );
        let lines: Vec<&str> = text.lines().collect();
        assert_ne!(lines[0], lines[1], "a fresh salt each time");
        let file = KnownHostsFile::load(&[path]).expect("load");
        assert_eq!(
            file.check("[gpu.example]:2222", &blob(ED25519))
                .expect("trusted"),
            Verdict::Trusted
        );
        assert!(matches!(
            file.check("[gpu.example]:22", &blob(ED25519)),
            Ok(Verdict::Unknown { .. })
        ));
    }
}
