//! The kernel's boot id (`/proc/sys/kernel/random/boot_id`): a random UUID the kernel draws at
//! every boot, so two readings that differ mean the host booted in between. What a host prints
//! there is untrusted: only the kernel's form, a hyphenated UUID, is taken.

use std::fmt;

use rust_i18n::t;
use uuid::Uuid;

/// Where Linux keeps the boot id.
pub const BOOT_ID_PATH: &str = "/proc/sys/kernel/random/boot_id";

/// Why a text is not a boot id.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BootIdError {
    #[error("{}", t!("boot_id.empty"))]
    Empty,
    #[error("{}", t!("boot_id.not_uuid", text = .0))]
    NotUuid(String),
}

/// One boot of one host.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct BootId(Uuid);

/// Longest text quoted back in an error: a hostile host may print anything.
const QUOTED_CHARS: usize = 40;

impl BootId {
    /// Reads the kernel's form, `0c7d2f3e-5b1a-4d1e-9c1a-7f00e2b3c4d5`, surrounding spaces and
    /// the newline allowed; anything else is refused.
    pub fn parse(text: &str) -> Result<Self, BootIdError> {
        let text = text.trim();
        if text.is_empty() {
            return Err(BootIdError::Empty);
        }
        let refused = || {
            let quoted: String = text
                .chars()
                .take(QUOTED_CHARS)
                .filter(|c| !c.is_control())
                .collect();
            BootIdError::NotUuid(quoted)
        };
        // `Uuid::try_parse` also takes the simple, braced and URN forms; the kernel prints
        // only the hyphenated one.
        let hyphens_at = [8, 13, 18, 23];
        let hyphenated = text.len() == 36
            && text
                .char_indices()
                .all(|(i, c)| (c == '-') == hyphens_at.contains(&i));
        if !hyphenated {
            return Err(refused());
        }
        Uuid::try_parse(text).map(Self).map_err(|_| refused())
    }
}

impl fmt::Display for BootId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0.hyphenated())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_kernels_form_is_read_and_anything_else_refused() {
        // As `cat /proc/sys/kernel/random/boot_id` prints it, newline and all.
        let id = BootId::parse("6f1c3b0e-2a4d-4c8e-9b7a-1d2e3f405162\n").expect("a boot id");
        assert_eq!(id.to_string(), "6f1c3b0e-2a4d-4c8e-9b7a-1d2e3f405162");
        assert_eq!(
            BootId::parse("6F1C3B0E-2A4D-4C8E-9B7A-1D2E3F405162"),
            Ok(id),
            "the same id in capitals"
        );
        assert_ne!(
            BootId::parse("6f1c3b0e-2a4d-4c8e-9b7a-1d2e3f405163"),
            Ok(id)
        );
        assert_eq!(BootId::parse(" \n"), Err(BootIdError::Empty));
        for bad in [
            "6f1c3b0e2a4d4c8e9b7a1d2e3f405162",
            "{6f1c3b0e-2a4d-4c8e-9b7a-1d2e3f405162}",
            "urn:uuid:6f1c3b0e-2a4d-4c8e-9b7a-1d2e3f405162",
            "6f1c3b0e-2a4d-4c8e-9b7a-1d2e3f40516g",
            "6f1c3b0e-2a4d-4c8e-9b7a1-d2e3f405162",
            "cat: /proc/sys/kernel/random/boot_id: No such file or directory",
            "\u{1b}]0;pwned\u{7}",
        ] {
            let err = BootId::parse(bad).expect_err(bad);
            assert!(
                matches!(&err, BootIdError::NotUuid(quoted) if !quoted.contains('\u{1b}')),
                "{bad}: {err:?}"
            );
        }
    }
}
