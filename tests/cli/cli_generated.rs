//! What is generated from the CLI definition: shell completions, the man page, `--version`.

use crate::cli;

use cli::{Home, stderr, stdout};

#[test]
fn completions_for_every_shell_know_the_subcommands() {
    let home = Home::new();
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let out = home.run(&["completions", shell]);
        assert_eq!(out.status.code(), Some(0), "{shell}: {}", stderr(&out));
        let script = stdout(&out);
        for word in ["snapshot", "diagnose", "runbook", "interval-ms"] {
            assert!(script.contains(word), "{shell} completions lack {word}");
        }
    }
    let out = home.run(&["completions", "tcsh"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("bash"), "{}", stderr(&out));
}

#[test]
fn the_man_page_is_roff_that_man_reads() {
    let home = Home::new();
    let out = home.run(&["man"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let page = stdout(&out);
    assert!(
        page.lines().any(|l| l.starts_with(".TH gpufleet 1")),
        "{page}"
    );
    assert!(page.contains("snapshot"), "{page}");
    let file = home.write("gpufleet.1", &page);
    match std::process::Command::new("man")
        .args(["-l", &file])
        .env("MANPAGER", "cat")
        .env("PAGER", "cat")
        .env("MANWIDTH", "80")
        .output()
    {
        Ok(rendered) => {
            assert_eq!(rendered.status.code(), Some(0), "{}", stderr(&rendered));
            let text = stdout(&rendered);
            assert!(text.contains("NAME") && text.contains("gpufleet"), "{text}");
        }
        Err(e) => eprintln!("skipped rendering with man -l: man is not installed ({e})"),
    }
}

#[test]
fn version_names_the_commit() {
    let home = Home::new();
    let out = home.run(&["--version"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    let commit = text
        .trim_end()
        .strip_prefix(concat!("gpufleet ", env!("CARGO_PKG_VERSION"), " (commit "))
        .and_then(|rest| rest.strip_suffix(')'))
        .unwrap_or_else(|| panic!("no commit in {text:?}"));
    assert!(
        commit == "unknown" || (commit.len() >= 4 && commit.chars().all(|c| c.is_ascii_hexdigit())),
        "{text:?}"
    );
}
