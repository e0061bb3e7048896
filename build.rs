//! Build script: records the git commit the binary was built from, for `gpufleet --version`
//! (without git or outside a repository, a source tarball, the commit is "unknown"), and
//! compiles the catalogues in `locales/` into static tables (`src/catalogue.rs` reads them): a
//! catalogue that does not parse fails the build.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;
use std::process::Command;

/// The catalogues, by locale, as `src/catalogue.rs` names their tables.
const CATALOGUES: [(&str, &str); 2] = [("en", "EN"), ("zh-CN", "ZH_CN")];

/// Every `table.key = "text"` of a catalogue, keys joined with dots as `t!` names them.
fn flatten(prefix: &str, table: &toml::Table, out: &mut BTreeMap<String, String>) {
    for (key, value) in table {
        let name = if prefix.is_empty() {
            key.clone()
        } else {
            format!("{prefix}.{key}")
        };
        match value {
            toml::Value::Table(inner) => flatten(&name, inner, out),
            toml::Value::String(text) => {
                out.insert(name, text.clone());
            }
            other => panic!("locales: {name} is not text: {other}"),
        }
    }
}

/// One catalogue as a text and an index of `[key start, text start, text end]` (a key ends
/// where its text starts) sorted by key: no pointers, so the tables need no relocation at start and only the pages a
/// lookup reads become resident.
fn catalogue(locale: &str, table_name: &str, out: &mut String) {
    let path = Path::new("locales").join(format!("{locale}.toml"));
    println!("cargo:rerun-if-changed={}", path.display());
    let source =
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let table: toml::Table = source
        .parse()
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut entries = BTreeMap::new();
    flatten("", &table, &mut entries);
    let mut text = String::new();
    let mut index = String::new();
    for (key, value) in &entries {
        let key_start = text.len();
        text.push_str(key);
        let value_start = text.len();
        text.push_str(value);
        let _ = write!(index, "[{key_start}, {value_start}, {}], ", text.len());
    }
    let _ = writeln!(out, "pub(crate) static {table_name}_TEXT: &str = {text:?};");
    let _ = writeln!(
        out,
        "pub(crate) static {table_name}_INDEX: &[[u32; 3]] = &[{index}];"
    );
}

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    if !out.status.success() {
        return None;
    }
    let text = String::from_utf8(out.stdout).ok()?;
    let text = text.trim();
    (!text.is_empty()).then(|| text.to_string())
}

fn main() {
    let commit = git(&["rev-parse", "--short", "HEAD"])
        .filter(|c| c.chars().all(|ch| ch.is_ascii_hexdigit()))
        .unwrap_or_else(|| "unknown".to_string());
    println!("cargo:rustc-env=GPUFLEET_GIT_COMMIT={commit}");
    let mut tables = String::new();
    for (locale, name) in CATALOGUES {
        catalogue(locale, name, &mut tables);
    }
    let out_dir = std::env::var("OUT_DIR").unwrap_or_else(|e| panic!("OUT_DIR: {e}"));
    let generated = Path::new(&out_dir).join("catalogue_tables.rs");
    std::fs::write(&generated, tables).unwrap_or_else(|e| panic!("{}: {e}", generated.display()));
    // Run again when HEAD moves (a commit, a checkout); without git, only when this file changes.
    println!("cargo:rerun-if-changed=build.rs");
    if let Some(dir) = git(&["rev-parse", "--absolute-git-dir"]) {
        let dir = std::path::Path::new(&dir);
        for name in ["HEAD", "logs/HEAD"] {
            let path = dir.join(name);
            if path.exists() {
                println!("cargo:rerun-if-changed={}", path.display());
            }
        }
    }
}
