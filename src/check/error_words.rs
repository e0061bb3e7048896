//! Why a check could not run ([`CheckError`]), in the reader's language: what
//! `gpufleet check: ...` says before it exits 3. The causes underneath (the SSH layer's error,
//! the operating system's, an expectation's) keep their own words.

use rust_i18n::t;

use crate::check::CheckError;

/// The sentence for `error`, from the catalogue under `check_error`.
pub fn check_error_words(error: &CheckError) -> String {
    match error {
        CheckError::Remote(why) => t!("check_error.remote", why = why.localized()),
        CheckError::Spawn { program, source } => t!(
            "check_error.spawn",
            program = program,
            why = source.to_string()
        ),
        CheckError::EmptyCommand => t!("check_error.empty_command"),
        CheckError::Options { message } => t!("check_error.options", why = message),
        CheckError::Expect(why) => t!("check_error.expect", why = why.to_string()),
        CheckError::Stopped => t!("check_error.stopped"),
        CheckError::Simulated(said) => return said.clone(),
    }
    .into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_error_reads_as_its_display_in_english() {
        for error in [
            CheckError::EmptyCommand,
            CheckError::Stopped,
            CheckError::Options {
                message: "bad".into(),
            },
            CheckError::Spawn {
                program: "python3".into(),
                source: std::io::Error::from(std::io::ErrorKind::NotFound),
            },
        ] {
            assert_eq!(check_error_words(&error), error.to_string());
        }
    }
}
