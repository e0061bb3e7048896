//! Where gpufleet keeps state (ledger, audit log, check reports): the XDG state directory, or
//! `GPUFLEET_STATE_DIR` when set (tests and users who keep state elsewhere).

use std::path::{Path, PathBuf};

/// The environment variable that overrides the state directory.
pub const STATE_DIR_ENV: &str = "GPUFLEET_STATE_DIR";

/// `$GPUFLEET_STATE_DIR`, else `$XDG_STATE_HOME/gpufleet` (usually `~/.local/state/gpufleet`).
pub fn state_dir() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os(STATE_DIR_ENV).filter(|d| !d.is_empty()) {
        return Some(PathBuf::from(dir));
    }
    let dirs = directories::ProjectDirs::from("", "", "gpufleet")?;
    dirs.state_dir()
        .map(|d| d.to_owned())
        .or_else(|| Some(dirs.data_local_dir().to_owned()))
}

/// `~/x` -> `<home>/x`; config files keep `~` so they stay portable between machines.
pub fn expand_tilde(path: &Path, home: Option<&Path>) -> PathBuf {
    match (path.strip_prefix("~"), home) {
        (Ok(rest), Some(home)) => home.join(rest),
        _ => path.to_path_buf(),
    }
}

/// Folder names at most this long are the host's name escaped; a longer one is cut and ends
/// in `%%` and a digest of the whole name.
const MAX_DIR_NAME_BYTES: usize = 200;

/// The folder name of `host`'s box, one per exact name: letters, digits, `.`, `_`, `-` and `@`
/// stay, every other byte is written `%XX` (so `a/b` is `a%2Fb` and `a_b` stays `a_b`), and
/// `.`, `..` and the empty name are escaped whole. The escape is reversible, so two names never
/// share a folder; a name too long for one (past [`MAX_DIR_NAME_BYTES`]) is cut and ends in
/// `%%` and the SHA-256 of the whole name, which no escaped name can end in.
pub fn host_dir_name(host: &str) -> String {
    let mut name = String::with_capacity(host.len());
    for byte in host.bytes() {
        let c = char::from(byte);
        if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | '@') {
            name.push(c);
        } else {
            name.push_str(&format!("%{byte:02X}"));
        }
    }
    let name = match name.as_str() {
        "" => "%".to_string(),
        // Not a folder's name: each dot escaped too.
        "." | ".." => host.bytes().map(|b| format!("%{b:02X}")).collect(),
        _ => name,
    };
    if name.len() <= MAX_DIR_NAME_BYTES {
        return name;
    }
    let digest: String = <sha2::Sha256 as sha2::Digest>::digest(host.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    // All ASCII: any byte is a boundary. No escaped name holds `%%`.
    let cut = MAX_DIR_NAME_BYTES - digest.len() - 2;
    format!("{}%%{digest}", &name[..cut])
}

/// The folder name an older gpufleet gave `host` (the black box's and the check reports'):
/// every character but letters, digits, `.`, `_`, `-` and `@` written `_`, so `a/b` and `a_b`
/// shared one. `None` when it is the same as [`host_dir_name`]. Still read, never written.
pub fn legacy_host_dir_name(host: &str) -> Option<String> {
    let legacy = lossy_host_name(host);
    (legacy != host_dir_name(host)).then_some(legacy)
}

/// `host` as one safe, readable path segment: every character but letters, digits, `.`, `_`,
/// `-` and `@` written `_` (so `user@host:22` is `user@host_22`), and `.`, `..` and the empty
/// name prefixed by `_`. Lossy: two names may give the same, so it only names what is made
/// unique otherwise (a report bundle, by its time); a host's own folder is [`host_dir_name`].
pub fn lossy_host_name(host: &str) -> String {
    let name: String = host
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | '@') {
                c
            } else {
                '_'
            }
        })
        .collect();
    match name.as_str() {
        "" | "." | ".." => format!("_{name}"),
        _ => name,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lossy_host_name_is_one_safe_segment() {
        assert_eq!(lossy_host_name("h200-a"), "h200-a");
        assert_eq!(lossy_host_name("root@1.2.3.4:2222"), "root@1.2.3.4_2222");
        assert_eq!(lossy_host_name("../etc"), ".._etc");
        assert_eq!(lossy_host_name(".."), "_..");
        assert_eq!(lossy_host_name(""), "_");
    }

    #[test]
    fn the_old_folder_name_is_given_only_where_it_differs() {
        assert_eq!(legacy_host_dir_name("h200-a"), None);
        assert_eq!(legacy_host_dir_name("a/b").as_deref(), Some("a_b"));
        assert_eq!(host_dir_name("a/b"), "a%2Fb");
    }
}
