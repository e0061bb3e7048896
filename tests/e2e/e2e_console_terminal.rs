//! The console in a real terminal (tmux) as a user meets it: the findings pane at 80x24
//! scrolled with keys and the mouse wheel, a click selecting and a second click opening a host,
//! colours as deep as the environment says (`NO_COLOR`, `COLORTERM`, `TERM`), and mouse
//! reporting switched off again on the way out, SIGTERM included.
//!
//! Mouse input: tmux has no command that makes up a mouse event for a pane, so the tests type
//! what a terminal sends for one, an SGR report (`ESC [ < button ; column ; row M`, xterm mode
//! 1006), with `send-keys -H`. tmux's `#{mouse_standard_flag}` and `#{mouse_sgr_flag}` say
//! which mouse modes the program in the pane has switched on.

use crate::tmux;

use std::time::Duration;

use tmux::{Tmux, binary};

const WAIT: Duration = Duration::from_secs(20);

/// The demo at 20x speed under `env`, in a `width` x `height` pane; the shell reports the exit
/// status and stays so the screen after the console can be read.
fn console(env: &str, width: u16, height: u16) -> Option<Tmux> {
    let command = format!(
        "env -u COLORTERM -u NO_COLOR {env} {} --demo --speed 20; echo EXIT=$?; sleep 60",
        binary().display()
    );
    Tmux::start(&command, width, height)
}

/// What a terminal sends for a mouse press (`button` 0: left; 64 / 65: wheel up / down) at a
/// cell counted from 0.
fn sgr_mouse(button: u8, column: usize, row: usize) -> Vec<u8> {
    format!("\x1b[<{button};{};{}M", column + 1, row + 1).into_bytes()
}

/// The row (from 0) of the first screen line containing `needle`.
fn row_of(screen: &str, needle: &str) -> usize {
    screen
        .lines()
        .position(|l| l.contains(needle))
        .unwrap_or_else(|| panic!("{needle:?} not on screen:\n{screen}"))
}

fn mouse_reporting(tmux: &Tmux) -> String {
    tmux.format("#{mouse_standard_flag}#{mouse_button_flag}#{mouse_any_flag}#{mouse_sgr_flag}")
}

/// The colour parameters of every SGR escape in `captured` (38/48 and the 16-colour codes).
fn colour_params(captured: &str) -> Vec<String> {
    let mut found = Vec::new();
    for sequence in captured.split("\x1b[").skip(1) {
        let Some(end) = sequence.find(|c: char| c.is_ascii_alphabetic()) else {
            continue;
        };
        if !sequence[end..].starts_with('m') {
            continue;
        }
        let params = &sequence[..end];
        let colour = params.split(';').any(|p| {
            matches!(
                p.parse::<u16>(),
                Ok(30..=38 | 40..=48 | 90..=97 | 100..=107)
            )
        });
        if colour {
            found.push(params.to_string());
        }
    }
    found
}

#[test]
fn findings_at_80x24_scroll_with_the_wheel_and_keys() {
    let Some(tmux) = console("TERM=xterm-256color", 80, 24) else {
        return;
    };
    tmux.wait_for("GPU lost", WAIT);
    tmux.keys(&["/", "f", "l", "a", "k", "y", "Enter", "Enter"]);
    let screen = tmux.wait_for("Findings 1-", WAIT);
    assert!(screen.contains(" of "), "a scroll position: {screen}");
    assert_eq!(
        mouse_reporting(&tmux),
        "1011",
        "clicks and wheel, SGR reports"
    );

    // One notch down with the pointer inside the findings pane: its rows move up by one.
    let title = row_of(&screen, "Findings 1-");
    let row = |screen: &str, n: usize| screen.lines().nth(title + n).unwrap_or("").to_string();
    let (first, second) = (row(&screen, 1), row(&screen, 2));
    assert_ne!(first, second, "{screen}");
    tmux.send_bytes(&sgr_mouse(65, 20, title + 2));
    tmux.wait_until("the second row on top", WAIT, |s| row(s, 1) == second);
    // The wheel gave the pane the focus: the keys scroll it back.
    tmux.keys(&["k"]);
    tmux.wait_until("the first row back on top", WAIT, |s| row(s, 1) == first);
    tmux.keys(&["j"]);
    tmux.wait_until("the second row on top again", WAIT, |s| row(s, 1) == second);

    tmux.keys(&["q"]);
    let after = tmux.wait_for("EXIT=", WAIT);
    assert!(after.contains("EXIT=0"), "{after}");
    assert_eq!(mouse_reporting(&tmux), "0000", "mouse reporting off again");
}

#[test]
fn a_click_selects_a_host_and_a_second_click_opens_it() {
    let Some(tmux) = console("TERM=xterm-256color", 100, 30) else {
        return;
    };
    let fleet = tmux.wait_for("idle-a100", WAIT);
    let row = row_of(&fleet, "idle-a100");
    tmux.send_bytes(&sgr_mouse(0, 3, row));
    std::thread::sleep(Duration::from_millis(300));
    let selected = tmux.screen();
    assert!(
        selected.contains("Fleet ·"),
        "one click only selects:\n{selected}"
    );
    tmux.send_bytes(&sgr_mouse(0, 3, row));
    let host = tmux.wait_for("Processes", WAIT);
    assert!(
        host.contains(" idle-a100 "),
        "the clicked host opened:\n{host}"
    );
    assert!(host.contains("A100"), "{host}");
    tmux.keys(&["q"]);
    tmux.wait_for("EXIT=0", WAIT);
}

#[test]
fn no_color_means_no_colour_escapes_and_the_selection_stays_visible() {
    let Some(tmux) = console(
        "NO_COLOR=1 TERM=xterm-256color COLORTERM=truecolor",
        100,
        30,
    ) else {
        return;
    };
    tmux.wait_for("unreachable-box", WAIT);
    std::thread::sleep(Duration::from_millis(500));
    let captured = tmux.screen_with_escapes();
    assert_eq!(colour_params(&captured), Vec::<String>::new(), "{captured}");
    // The selected row (the first host) is reversed, with its name on it.
    let line = captured
        .lines()
        .find(|l| l.contains("train-h100x8"))
        .unwrap_or_else(|| panic!("{captured}"));
    assert!(line.contains("\x1b[7m") || line.contains(";7m"), "{line:?}");
    tmux.keys(&["q"]);
    tmux.wait_for("EXIT=0", WAIT);
}

/// The palette indices of `38;5;N` / `48;5;N` colours, and whether any 24-bit colour was used.
fn indexed_and_rgb(params: &[String]) -> (Vec<u8>, bool) {
    let mut indices = Vec::new();
    let mut rgb = false;
    for p in params {
        let parts: Vec<&str> = p.split(';').collect();
        for (k, part) in parts.iter().enumerate() {
            if matches!(*part, "38" | "48") {
                match parts.get(k + 1) {
                    Some(&"5") => {
                        indices.extend(parts.get(k + 2).and_then(|n| n.parse::<u8>().ok()))
                    }
                    Some(&"2") => rgb = true,
                    _ => {}
                }
            }
        }
    }
    (indices, rgb)
}

#[test]
fn colours_follow_the_terminal_depth() {
    // (environment, 24-bit colour expected, the highest palette index allowed)
    let cases = [
        ("TERM=xterm-256color COLORTERM=truecolor", true, 255u8),
        ("TERM=xterm-256color", false, 255),
        ("TERM=xterm", false, 15),
    ];
    for (env, want_rgb, highest) in cases {
        let Some(tmux) = console(env, 100, 30) else {
            return;
        };
        tmux.wait_for("unreachable-box", WAIT);
        std::thread::sleep(Duration::from_millis(500));
        let captured = tmux.screen_with_escapes();
        let params = colour_params(&captured);
        let (indices, rgb) = indexed_and_rgb(&params);
        assert_eq!(rgb, want_rgb, "{env}: 24-bit colour in {params:?}");
        if !want_rgb {
            assert!(!indices.is_empty(), "{env}: palette colours in {params:?}");
            assert!(indices.iter().all(|&i| i <= highest), "{env}: {indices:?}");
        }
        if env == "TERM=xterm-256color" {
            // The theme's own shades, from the cube and the grey ramp, not only the 16 names.
            assert!(indices.iter().any(|&i| i >= 16), "{env}: {indices:?}");
        }
        tmux.keys(&["q"]);
        tmux.wait_for("EXIT=0", WAIT);
    }
}

#[test]
fn sigterm_quits_cleanly_and_gives_the_terminal_back() {
    let Some(tmux) = console("TERM=xterm-256color", 100, 30) else {
        return;
    };
    tmux.wait_for("train-h100x8", WAIT);
    assert_eq!(mouse_reporting(&tmux), "1011");
    let shell = tmux.format("#{pane_pid}");
    let children = std::process::Command::new("pgrep")
        .args(["-P", &shell])
        .output()
        .expect("pgrep");
    let pid = String::from_utf8_lossy(&children.stdout)
        .lines()
        .next()
        .map(str::to_string)
        .expect("the console runs under the pane's shell");
    let status = std::process::Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .expect("kill");
    assert!(status.success());
    let after = tmux.wait_for("EXIT=", WAIT);
    assert!(after.contains("EXIT=0"), "{after}");
    assert!(
        !after.contains("Fleet ·"),
        "alternate screen left:\n{after}"
    );
    assert_eq!(mouse_reporting(&tmux), "0000", "mouse reporting off again");
}
