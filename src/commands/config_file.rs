//! `gpufleet config init | path | check`: write a commented config where gpufleet looks for it,
//! say where that is, and load and validate one without starting anything.

use rust_i18n::t;

use crate::words::Words;
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::config;
use crate::state_file::create_private_dir;

/// `config init` wrote the file; `config check` found it valid; `config path` printed it.
pub const EXIT_OK: u8 = 0;
/// `config init`: a file is already there (it is left as it was).
pub const EXIT_EXISTS: u8 = 1;
/// The file could not be written, read or validated, or there is no home directory.
pub const EXIT_FAILED: u8 = 2;

/// The example config, as shipped in the source tree.
const EXAMPLE: &str = include_str!("../../config.example.toml");

const HEADER: &str = "\
# gpufleet config, written by `gpufleet config init`.
# Every setting below the top-level ones is commented out: uncomment a [[hosts]] block, fill it
# in, then run `gpufleet config check` to validate the file.

";

/// The config `config init` writes: the example with every table commented out, so the file is
/// valid as written, watches no example host and sends no release anywhere.
pub fn template() -> String {
    let mut out = String::from(HEADER);
    let mut in_tables = false;
    for line in EXAMPLE.lines() {
        let trimmed = line.trim_start();
        in_tables |= trimmed.starts_with('[');
        if in_tables && !trimmed.is_empty() && !trimmed.starts_with('#') {
            out.push_str("# ");
        }
        out.push_str(line);
        out.push('\n');
    }
    out
}

/// Where the config is: `--config`, else the XDG path.
fn target(explicit: Option<&Path>) -> Result<PathBuf, String> {
    explicit
        .map(Path::to_path_buf)
        .or_else(config::default_path)
        .ok_or_else(|| t!("cli.config_no_home").into_owned())
}

/// `config init`: writes [`template`] at the path (directory `0700`, file `0600`), never over
/// an existing file.
pub fn init(explicit: Option<&Path>, out: &mut dyn Write, err: &mut dyn Write) -> u8 {
    let path = match target(explicit) {
        Ok(path) => path,
        Err(e) => return fail(err, "config init", &e),
    };
    if path.exists() {
        let path = path.display().to_string();
        let _ = writeln!(
            err,
            "gpufleet config init: {}",
            t!("cli.config_exists_check", path = path)
        );
        return EXIT_EXISTS;
    }
    match write_new(&path, &template()) {
        Ok(()) => {
            let path = path.display().to_string();
            let _ = writeln!(out, "{}", t!("cli.config_wrote", path = path));
            let _ = writeln!(out, "{}", t!("cli.config_next"));
            EXIT_OK
        }
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            let path = path.display().to_string();
            let _ = writeln!(
                err,
                "gpufleet config init: {}",
                t!("cli.config_exists", path = path)
            );
            EXIT_EXISTS
        }
        Err(e) => fail(err, "config init", &format!("{}: {e}", path.display())),
    }
}

fn write_new(path: &Path, text: &str) -> std::io::Result<()> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        create_private_dir(dir)?;
    }
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut file = options.open(path)?;
    file.write_all(text.as_bytes())?;
    file.sync_all()
}

/// `config path`: the file this run would read, whether or not it exists.
pub fn path(explicit: Option<&Path>, out: &mut dyn Write, err: &mut dyn Write) -> u8 {
    match target(explicit) {
        Ok(path) => {
            let _ = writeln!(out, "{}", path.display());
            EXIT_OK
        }
        Err(e) => fail(err, "config path", &e),
    }
}

/// `config check`: loads and validates the file; `ok: N hosts`, or the error with its file, line
/// and key.
pub fn check(explicit: Option<&Path>, out: &mut dyn Write, err: &mut dyn Write) -> u8 {
    let path = match target(explicit) {
        Ok(path) => path,
        Err(e) => return fail(err, "config check", &e),
    };
    if explicit.is_none() && !path.exists() {
        let path = path.display().to_string();
        let message = t!("cli.config_none_at", path = path);
        return fail(err, "config check", &message);
    }
    match config::load(&path) {
        Ok(config) => {
            // The console refuses a theme it cannot load; so does the check, before it is run.
            if let Some(name) = &config.theme
                && let Err(e) =
                    crate::theme::Theme::load_named(name, config::themes_dir().as_deref())
            {
                let message = t!(
                    "config_check_words.theme",
                    path = path.display(),
                    error = crate::error_text::chain(&e)
                );
                return fail(err, "config check", &message);
            }
            let count = config.hosts.len();
            let path = path.display().to_string();
            let line = Words::counted("cli.config_ok", count as u64)
                .put("path", path)
                .localized();
            let _ = writeln!(out, "{line}");
            EXIT_OK
        }
        Err(e) => fail(err, "config check", &e.to_string()),
    }
}

fn fail(err: &mut dyn Write, command: &str, message: &str) -> u8 {
    let _ = writeln!(err, "gpufleet {command}: {message}");
    EXIT_FAILED
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_template_is_a_valid_config_with_no_hosts() {
        let text = template();
        let parsed = config::parse(&text, Path::new("config.toml")).map_err(|e| e.to_string());
        assert_eq!(parsed.map(|c| c.hosts.len()), Ok(0));
        assert!(text.contains("# [[hosts]]"), "{text}");
        assert!(text.contains("# name = \"a100-1\""), "{text}");
    }

    #[test]
    fn the_example_uncommented_is_the_shipped_example() {
        // Uncommenting is all a user has to do: the hosts in the example parse.
        let parsed = config::parse(EXAMPLE, Path::new("config.example.toml"));
        assert!(parsed.is_ok_and(|c| !c.hosts.is_empty()));
    }
}
