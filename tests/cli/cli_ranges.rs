//! Out-of-range numbers on the command line are refused while parsing, with the allowed range,
//! before anything runs: exit 2, nothing on stdout.

use crate::cli;

use cli::{Home, stderr, stdout};

fn refused(home: &Home, args: &[&str], range: &str) {
    let out = home.run(args);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
    assert!(stdout(&out).is_empty(), "{args:?}: {}", stdout(&out));
    assert!(stderr(&out).contains(range), "{args:?}: {}", stderr(&out));
}

#[test]
fn the_sample_interval_is_refused_outside_the_configs_range() {
    let home = Home::new();
    for value in ["0", "99", "60001"] {
        refused(
            &home,
            &["snapshot", "--demo", "--json", "--interval-ms", value],
            "must be from 100 to 60000 milliseconds",
        );
    }
    // The same range as the config file's.
    let config = home.write("c.toml", "interval_ms = 50\n");
    let out = home.run(&["--config", &config, "snapshot", "--demo", "--json"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("must be from 100 to 60000 milliseconds, found 50"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn the_demo_speed_is_refused_outside_its_range() {
    let home = Home::new();
    for value in ["0", "-2", "5000", "nan"] {
        refused(
            &home,
            &["--demo", "--speed", value, "snapshot", "--json"],
            "must be more than 0 and at most 1000",
        );
    }
}

#[test]
fn the_sustained_load_length_is_refused_below_zero() {
    let home = Home::new();
    refused(
        &home,
        &["check", "--local", "--sustain-s", "-5"],
        "must be 0 or more seconds",
    );
}
