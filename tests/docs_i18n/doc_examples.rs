//! What the repository's text says holds. The config examples in the documents are configs
//! gpufleet accepts: every ```toml block of README.md and docs/*.md goes through the config
//! parser, as `gpufleet config check` reads a file. A block that shows only part of a config (a
//! host's `[hosts.release]`, an `[[alerts]]` sink for a named host) is read after one
//! `[[hosts]]` table named `a100-1`, the host the documents' examples name. And no tracked file
//! speaks of how the work on gpufleet was organised, which a reader of a clone cannot follow.

use std::path::{Path, PathBuf};
use std::process::Command;

use gpufleet::config;
use regex::Regex;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// README.md and every Markdown file under docs/, in a fixed order.
fn documents() -> Vec<PathBuf> {
    let mut docs: Vec<PathBuf> = std::fs::read_dir(Path::new(ROOT).join("docs"))
        .expect("docs/")
        .map(|entry| entry.expect("docs/ entry").path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "md"))
        .collect();
    docs.sort();
    docs.insert(0, Path::new(ROOT).join("README.md"));
    docs
}

/// Each ```toml block of `text`, with the line its first line is on.
fn toml_blocks(text: &str) -> Vec<(usize, String)> {
    let mut blocks = Vec::new();
    let mut open: Option<(usize, String)> = None;
    for (index, line) in text.lines().enumerate() {
        match open.take() {
            None if line.trim_start() == "```toml" => open = Some((index + 2, String::new())),
            None => {}
            Some(block) if line.trim_start().starts_with("```") => blocks.push(block),
            Some((first, mut body)) => {
                body.push_str(line);
                body.push('\n');
                open = Some((first, body));
            }
        }
    }
    blocks
}

/// The block as a whole config: a part of one gets the host the examples name first.
fn as_config(block: &str) -> String {
    let whole = block.lines().any(|line| line.trim() == "[[hosts]]")
        || !block.trim_start().starts_with('[');
    if whole {
        block.to_owned()
    } else {
        format!("[[hosts]]\nname = \"a100-1\"\nssh = \"root@connect.example.com:38291\"\n{block}")
    }
}

#[test]
fn every_toml_example_in_the_documents_is_a_config_gpufleet_accepts() {
    let mut checked = 0;
    let mut refused = Vec::new();
    for doc in documents() {
        let text = std::fs::read_to_string(&doc).expect("document");
        for (line, block) in toml_blocks(&text) {
            checked += 1;
            if let Err(error) = config::parse(&as_config(&block), &doc) {
                refused.push(format!(
                    "{}: the example at line {line}: {error}",
                    doc.display()
                ));
            }
        }
    }
    assert!(
        refused.is_empty(),
        "config examples gpufleet refuses:\n{}",
        refused.join("\n")
    );
    // The README's first hosts, a release, a provider account and an alert sink at least.
    assert!(checked >= 6, "only {checked} toml examples found");
}

#[test]
fn the_readme_shows_an_autodl_and_a_vast_host_near_its_top() {
    let text = std::fs::read_to_string(Path::new(ROOT).join("README.md")).expect("README.md");
    let blocks = toml_blocks(&text);
    let near_top: Vec<&String> = blocks
        .iter()
        .filter(|(line, _)| *line <= 120)
        .map(|(_, block)| block)
        .collect();
    for host in ["connect.westb.seetacloud.com:", "ssh4.vast.ai:"] {
        assert!(
            near_top
                .iter()
                .any(|block| block.contains("[[hosts]]") && block.contains(host)),
            "no [[hosts]] example for {host} in the README's first 120 lines"
        );
    }
}

/// Words about how the work was organised rather than about the product, each with what it is.
/// A reader of a clone can follow none of them: the project tracker's issue numbers and work
/// sessions (a date or a version says when; an upstream project's issue is cited by its URL),
/// machines lent for a while, and paths or notes outside the repository. The patterns are
/// written so that they do not match themselves.
const PROCESS_TALK: [(&str, &str); 7] = [
    (
        r"(?i)\bsessions? \d+[a-z]?(\b[^.\d]|$)",
        "a numbered work session",
    ),
    (
        r"(?i)\b(issues?|pr|pull requests?)( #?| ?#)\d+",
        "an issue or pull request by number, not by URL",
    ),
    (
        r"(?i)\blent (machines?|hosts?|gpus?|cards?|h100|h200)\b",
        "a machine lent for a while",
    ),
    (r"(?i)\bsub-?agents?\b|\bCEO\b", "who did the work"),
    (
        r"\.\./shared\b|\bshared/(fixtures|research|tools|GUIDE|DESIGN)",
        "a path outside the repository",
    ),
    (
        r"\b(faults|integrations|peers|rust-deps)\.md\b",
        "a note kept outside the repository",
    ),
    (
        r"(?i)\bresearch[ ]notes?\b",
        "a note kept outside the repository",
    ),
];

/// The files git tracks, relative to the repository's root.
fn tracked_files() -> Vec<PathBuf> {
    let out = Command::new("git")
        .args(["ls-files", "-z"])
        .current_dir(ROOT)
        .output()
        .expect("git ls-files (the check reads the files git tracks)");
    assert!(
        out.status.success(),
        "git ls-files failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
        .split(|byte| *byte == 0)
        .filter(|name| !name.is_empty())
        .map(|name| PathBuf::from(String::from_utf8_lossy(name).into_owned()))
        .collect()
}

#[test]
fn no_tracked_file_speaks_of_how_the_work_was_organised() {
    let patterns: Vec<(Regex, &str)> = PROCESS_TALK
        .iter()
        .map(|(pattern, what)| (Regex::new(pattern).expect("pattern"), *what))
        .collect();
    let files = tracked_files();
    let mut read = 0;
    let mut found = Vec::new();
    for file in &files {
        // Binary files (not UTF-8) hold no prose.
        let Ok(text) = std::fs::read_to_string(Path::new(ROOT).join(file)) else {
            continue;
        };
        read += 1;
        for (index, line) in text.lines().enumerate() {
            for (pattern, what) in &patterns {
                if let Some(hit) = pattern.find(line) {
                    found.push(format!(
                        "{}:{}: {what}: {:?}",
                        file.display(),
                        index + 1,
                        hit.as_str()
                    ));
                }
            }
        }
    }
    // The sources, tests, locales and documents at least.
    assert!(read >= 300, "only {read} of {} files read", files.len());
    assert!(
        found.is_empty(),
        "{} lines speak of how the work was organised (say what the thing is or does, with a \
         date or version where it matters, and cite an upstream issue by its URL):\n{}",
        found.len(),
        found.join("\n")
    );
}

/// The README is a user's guide and docs/ is reference: the guide stays short enough to read
/// first, PERFORMANCE.md holds the current figures (no run diary), and docs/ holds documents,
/// not the raw outputs of runs.
#[test]
fn the_guide_is_short_and_docs_hold_only_reference() {
    let lines = |name: &str| {
        std::fs::read_to_string(Path::new(ROOT).join(name))
            .unwrap_or_else(|e| panic!("{name}: {e}"))
            .lines()
            .count()
    };
    assert!(
        lines("README.md") <= 450,
        "README.md: {} lines",
        lines("README.md")
    );
    assert!(
        lines("docs/PERFORMANCE.md") <= 500,
        "docs/PERFORMANCE.md: {} lines",
        lines("docs/PERFORMANCE.md")
    );
    let not_documents: Vec<PathBuf> = tracked_files()
        .into_iter()
        .filter(|path| path.starts_with("docs"))
        .filter(|path| path.extension().is_none_or(|ext| ext != "md"))
        .collect();
    assert!(
        not_documents.is_empty(),
        "docs/ holds only documents; move these out: {not_documents:?}"
    );
}
