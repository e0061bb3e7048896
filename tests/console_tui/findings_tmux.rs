//! The findings pane in a real terminal (tmux): the demo's H200 falls off the bus, the renter
//! opens flaky-h200 at 100x30 and at 80x24, in English and in Chinese, Tabs to the findings
//! and scrolls (↓, then PgDn) until the pane's last row is in view; both findings' actions
//! (what to do, in the words of the message catalogue) have been shown whole on the way.

use crate::tmux;

use std::time::Duration;

use tmux::{Tmux, binary};

const WAIT: Duration = Duration::from_secs(20);

fn demo(width: u16, height: u16, lang: &str) -> Option<Tmux> {
    let flag = if lang == "en" { "" } else { "--lang zh-CN" };
    let command = format!(
        "{bin} --demo --speed 10 {flag}; echo EXIT=$?; sleep 30",
        bin = binary().display(),
    );
    Tmux::start(&command, width, height)
}

/// The catalogue's text at `path` (dotted, tables then key) in `lang`.
fn catalogue(lang: &str, path: &str) -> String {
    let file = format!("{}/locales/{lang}.toml", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&file).expect("catalogue");
    let table: toml::Table = text.parse().expect("catalogue is TOML");
    let mut value = &toml::Value::Table(table);
    for part in path.split('.') {
        value = value
            .get(part)
            .unwrap_or_else(|| panic!("{path} in {file}"));
    }
    value.as_str().expect("a text").to_string()
}

/// The findings pane's rows (inside its frame) and whether its bottom edge says more are below.
fn pane(screen: &str, label: &str) -> Option<(Vec<String>, bool)> {
    let lines: Vec<&str> = screen.lines().collect();
    let top = lines
        .iter()
        .position(|l| l.starts_with(&format!("┌ {label}")))?;
    let rows: Vec<String> = lines[top + 1..]
        .iter()
        .take_while(|l| l.starts_with('│'))
        .map(|l| {
            let inside = l.trim_start_matches('│').trim_end();
            inside.strip_suffix('│').unwrap_or(inside).to_string()
        })
        .collect();
    let bottom = lines.get(top + 1 + rows.len())?;
    Some((rows, bottom.contains('↓')))
}

/// Presses `key` until the pane's last row is in view, gathering every row shown on the way.
fn read_down(tmux: &Tmux, key: &str, label: &str) -> Vec<String> {
    let screen = tmux.screen();
    let (mut rows, mut more) = pane(&screen, label).expect("the findings pane");
    let mut seen = rows.clone();
    for _ in 0..40 {
        if !more {
            return seen;
        }
        let before = rows.clone();
        tmux.keys(&[key]);
        let screen = tmux.wait_until(&format!("{key} to scroll the findings"), WAIT, |s| {
            pane(s, label).is_some_and(|(now, _)| now != before)
        });
        (rows, more) = pane(&screen, label).expect("the findings pane");
        let overlap = (0..=rows.len().min(seen.len()))
            .rev()
            .find(|&n| seen[seen.len() - n..] == rows[..n])
            .unwrap_or(0);
        seen.extend(rows[overlap..].iter().cloned());
    }
    panic!("the findings pane never reached its last row");
}

fn squeezed(text: &str) -> String {
    text.chars().filter(|c| !c.is_whitespace()).collect()
}

fn read_both_actions(width: u16, height: u16, lang: &str) {
    let Some(tmux) = demo(width, height, lang) else {
        return;
    };
    let (lost, label, critical) = if lang == "en" {
        ("GPU lost", "Findings", "CRIT")
    } else {
        ("掉卡", "发现", "严重")
    };
    tmux.wait_for(lost, WAIT);
    tmux.keys(&["/", "flaky", "Enter", "Enter"]);
    tmux.wait_for(&format!("┌ {label}"), WAIT);
    // Tab twice: the GPUs, the processes, then the findings have the keys.
    tmux.keys(&["Tab", "Tab"]);
    let top = tmux.screen();
    let actions = [
        catalogue(lang, "finding_text.gpu_lost.action"),
        catalogue(lang, "xid_text.x79.action"),
    ];
    let name = format!("{width}x{height} {lang}");

    // The warnings above the view may gain a line meanwhile (a budget crossed), which moves
    // the rows: what is checked is that each action was shown whole, whatever the rows.
    let shown_whole = |rows: &[String], how: &str| {
        let shown = squeezed(&rows.join(""));
        for action in &actions {
            assert!(
                shown.contains(&squeezed(action)),
                "{name}: {action:?} shown whole by {how}:\n{}",
                rows.join("\n")
            );
        }
    };
    // The top: the first finding's first row (its severity first) under the pane's title.
    let at_top = |s: &str| {
        let title = s.lines().find(|l| l.starts_with(&format!("┌ {label}")));
        let first =
            title.is_some_and(|t| t.contains(" (2) ") || t.contains(&format!("{label} 1-")));
        first && pane(s, label).is_some_and(|(rows, _)| rows[0].trim_start().starts_with(critical))
    };
    assert!(at_top(&top), "{name}: the first finding on top:\n{top}");
    shown_whole(&read_down(&tmux, "Down", label), "↓");
    // From the top again (g), a page at a time.
    tmux.keys(&["g"]);
    tmux.wait_until("the top of the findings", WAIT, at_top);
    shown_whole(&read_down(&tmux, "PageDown", label), "PgDn");
    tmux.keys(&["PageUp"; 8]);
    tmux.wait_until("PgUp back to the top", WAIT, at_top);

    tmux.keys(&["q"]);
    let after = tmux.wait_for("EXIT=", WAIT);
    assert!(after.contains("EXIT=0"), "{after}");
}

#[test]
fn english_findings_read_whole_at_100x30() {
    read_both_actions(100, 30, "en");
}

#[test]
fn english_findings_read_whole_at_80x24() {
    read_both_actions(80, 24, "en");
}

#[test]
fn chinese_findings_read_whole_at_100x30() {
    read_both_actions(100, 30, "zh-CN");
}

#[test]
fn chinese_findings_read_whole_at_80x24() {
    read_both_actions(80, 24, "zh-CN");
}
