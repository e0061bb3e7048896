//! The config file: the shipped example parses, and every kind of mistake is reported as
//! `file:line: key: message` with the right line and key.

use std::path::{Path, PathBuf};

use gpufleet::config::{self, ConfigError, CudaVersion, Provider, SshTarget};

const PATH: &str = "/home/u/.config/gpufleet/config.toml";

fn error_of(text: &str) -> ConfigError {
    match config::parse(text, Path::new(PATH)) {
        Ok(parsed) => panic!("expected an error, got {parsed:#?}"),
        Err(error) => error,
    }
}

/// The whole message, which is what the user sees.
fn message_of(text: &str) -> String {
    error_of(text).to_string()
}

fn host(name: &str, extra: &str) -> String {
    format!("[[hosts]]\nname = \"{name}\"\nssh = \"root@h.example.com:22\"\n{extra}")
}

#[test]
fn the_example_config_parses() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("config.example.toml");
    let config = match config::load(&path) {
        Ok(config) => config,
        Err(error) => panic!("{error}"),
    };
    assert_eq!(config.theme.as_deref(), Some("dark"));
    assert_eq!(config.interval_ms, 1000);
    assert_eq!(config.hosts.len(), 2);
    let first = &config.hosts[0];
    assert_eq!(
        first.ssh,
        SshTarget {
            user: Some("root".into()),
            host: "connect.example.com".into(),
            port: Some(38291),
        }
    );
    assert_eq!(first.price_per_hour, Some(30.0));
    let expect = first.expect.as_ref().and_then(|e| e.min_cuda);
    assert_eq!(
        expect,
        Some(CudaVersion {
            major: 12,
            minor: 1
        })
    );
    let release = first.release.as_ref().map(|r| r.provider);
    assert_eq!(release, Some(Provider::Vast));
    assert_eq!(config.hosts[1].ssh.host, "gpu-lab");
    assert_eq!(
        config.budget.as_ref().and_then(|b| b.max_spend),
        Some(500.0)
    );
}

#[test]
fn the_default_config_is_valid_and_has_no_hosts() {
    let config = config::Config::default();
    assert!(config.hosts.is_empty());
    assert_eq!(config.interval_ms, 1000);
    assert!(config::parse("", Path::new(PATH)).is_ok());
}

#[test]
fn a_type_error_names_file_line_and_key() {
    let text = format!(
        "interval_ms = 1000\n\n{}\n{}",
        host("a", ""),
        host("b", "price_per_hour = \"30\"\n")
    );
    let error = error_of(&text);
    assert_eq!(
        error.to_string(),
        format!("{PATH}:10: hosts[1].price_per_hour: expected a number, found a string")
    );
    assert!(matches!(error, ConfigError::Parse { line: 10, .. }));
}

#[test]
fn an_integer_where_a_whole_number_is_wanted_is_reported_with_its_range() {
    assert_eq!(
        message_of("history_minutes = 15.5\n"),
        format!(
            "{PATH}:1: history_minutes: expected a whole number from 0 to {}, found a float",
            u32::MAX
        )
    );
}

#[test]
fn an_unknown_top_level_key_suggests_the_right_one() {
    assert_eq!(
        message_of("theme = \"dark\"\nintervall_ms = 500\n"),
        format!("{PATH}:2: intervall_ms: unknown key; did you mean `interval_ms`?")
    );
}

#[test]
fn an_unknown_nested_key_gets_the_full_path() {
    let text = host(
        "a",
        "\n[hosts.release]\nprovider = \"ssh\"\nregion = \"eu\"\n",
    );
    let error = error_of(&text);
    assert!(
        matches!(&error, ConfigError::Parse { line: 7, key, .. } if key == "hosts[0].release.region"),
        "{error}"
    );
}

#[test]
fn a_missing_required_key_points_at_its_table() {
    let text = "interval_ms = 1000\n[[hosts]]\nname = \"a\"\n";
    assert_eq!(
        message_of(text),
        format!("{PATH}:2: hosts[0].ssh: missing, and it is required")
    );
}

#[test]
fn duplicate_host_names_point_at_the_second_one() {
    let text = format!("{}\n{}", host("a100-1", ""), host("a100-1", ""));
    let error = error_of(&text);
    assert_eq!(
        error.to_string(),
        format!(
            "{PATH}:6: hosts[1].name: duplicate host name \"a100-1\", already used by hosts[0]"
        )
    );
    assert!(matches!(error, ConfigError::Invalid { .. }));
}

#[test]
fn a_bad_port_names_the_ssh_key() {
    let text = "[[hosts]]\nname = \"a\"\nssh = \"root@h.example.com:99999\"\n";
    assert_eq!(
        message_of(text),
        format!("{PATH}:3: hosts[0].ssh: port \"99999\" is not a number from 1 to 65535")
    );
}

#[test]
fn a_pasted_ssh_command_is_rejected_with_the_right_spelling() {
    let text = "[[hosts]]\nname = \"a\"\nssh = \"ssh -p 38291 root@region-x.provider.com\"\n";
    assert_eq!(
        message_of(text),
        format!(
            "{PATH}:3: hosts[0].ssh: looks like an ssh command line; write \
             \"root@region-x.provider.com:38291\" instead"
        )
    );
}

#[test]
fn an_inline_token_is_refused_with_advice() {
    let text = host(
        "a",
        "\n[hosts.release]\nprovider = \"vast\"\ninstance_id = \"1\"\ntoken = \"abc123\"\n",
    );
    let error = error_of(&text);
    let message = error.to_string();
    assert!(
        message.starts_with(&format!("{PATH}:8: hosts[0].release.token: ")),
        "{message}"
    );
    assert!(
        message.contains("token_env") && message.contains("token_file"),
        "{message}"
    );
}

#[test]
fn an_inline_password_is_refused_with_advice() {
    let message = message_of(&host("a", "password = \"hunter2\"\n"));
    assert!(
        message.starts_with(&format!("{PATH}:4: hosts[0].password: ")),
        "{message}"
    );
    assert!(message.contains("password_env"), "{message}");
}

#[test]
fn a_secret_in_an_env_name_field_is_caught() {
    let message = message_of(&host("a", "password_env = \"hunter2\"\n"));
    assert!(
        message.starts_with(&format!(
            "{PATH}:4: hosts[0].password_env: must be the NAME"
        )),
        "{message}"
    );
}

#[test]
fn an_unknown_provider_lists_the_known_ones() {
    let text = host("a", "[hosts.release]\nprovider = \"vastai\"\n");
    assert_eq!(
        message_of(&text),
        format!(
            "{PATH}:5: hosts[0].release.provider: unknown value \"vastai\"; expected one of: \
             vast, runpod, lambda, autodl, command, ssh"
        )
    );
}

#[test]
fn interval_out_of_range() {
    for (value, line) in [("50", 2), ("60001", 2)] {
        let error = error_of(&format!("theme = \"dark\"\ninterval_ms = {value}\n"));
        assert_eq!(
            error.to_string(),
            format!(
                "{PATH}:{line}: interval_ms: must be from 100 to 60000 milliseconds, found {value}"
            )
        );
        assert!(matches!(error, ConfigError::Invalid { .. }));
    }
}

#[test]
fn release_rules() {
    let both = host(
        "a",
        "[hosts.release]\nprovider = \"vast\"\ninstance_id = \"1\"\ntoken_env = \"K\"\ntoken_file = \"~/k\"\n",
    );
    assert_eq!(
        message_of(&both),
        format!(
            "{PATH}:8: hosts[0].release.token_file: give either token_env or token_file, not both"
        )
    );
    let no_id = host(
        "a",
        "[hosts.release]\nprovider = \"runpod\"\ntoken_env = \"K\"\n",
    );
    assert_eq!(
        message_of(&no_id),
        format!("{PATH}:4: hosts[0].release.instance_id: is required with provider = \"runpod\"")
    );
    let stray_command = host(
        "a",
        "[hosts.release]\nprovider = \"ssh\"\ncommand = [\"x\"]\n",
    );
    assert_eq!(
        message_of(&stray_command),
        format!(
            "{PATH}:6: hosts[0].release.command: is only used with provider = \"command\", not \"ssh\""
        )
    );
    let auto_without_release = host("a", "auto_release = true\n");
    assert_eq!(
        message_of(&auto_without_release),
        format!(
            "{PATH}:4: hosts[0].auto_release: needs a [hosts.release] table saying how to release this host"
        )
    );
}

#[test]
fn host_value_rules() {
    let cases = [
        ("price_per_hour = -1\n", "hosts[0].price_per_hour"),
        ("currency = \"usd\"\n", "hosts[0].currency"),
        ("backup = []\n", "hosts[0].backup"),
        (
            "billing_started = \"2026-11-29 08:00\"\n",
            "hosts[0].billing_started",
        ),
        ("expect = { count = 0 }\n", "hosts[0].expect.count"),
        ("expect = { min_cuda = 12.1 }\n", "hosts[0].expect.min_cuda"),
    ];
    for (extra, key) in cases {
        let error = error_of(&host("a", extra));
        let message = error.to_string();
        assert!(
            message.starts_with(&format!("{PATH}:4: {key}: ")),
            "{extra}: {message}"
        );
    }
}

#[test]
fn a_syntax_error_names_the_line() {
    let error = error_of("theme = \"dark\"\ninterval_ms = = 5\n");
    assert!(
        matches!(&error, ConfigError::Parse { line: 2, key, .. } if key == "interval_ms"),
        "{error}"
    );
}

#[test]
fn a_theme_name_must_not_be_a_path() {
    let message = message_of("theme = \"../../etc/x\"\n");
    assert!(
        message.starts_with(&format!("{PATH}:1: theme: ")),
        "{message}"
    );
}

#[test]
fn a_missing_file_names_the_path() {
    let dir = tempfile::tempdir().map_err(|e| e.to_string());
    let Ok(dir) = dir else { panic!("no temp dir") };
    let path: PathBuf = dir.path().join("nope.toml");
    let error = match config::load(&path) {
        Ok(_) => panic!("loaded a missing file"),
        Err(error) => error,
    };
    assert!(
        matches!(&error, ConfigError::Io { path: p, .. } if *p == path),
        "{error}"
    );
    assert!(error.to_string().starts_with(&path.display().to_string()));
    assert!(matches!(config::load_optional(&path), Ok(None)));
}

#[test]
fn a_file_on_disk_is_loaded_and_errors_name_it() {
    let Ok(dir) = tempfile::tempdir() else {
        panic!("no temp dir")
    };
    let path = dir.path().join("config.toml");
    let written = std::fs::write(&path, "interval_ms = 10\n");
    assert!(written.is_ok());
    let message = match config::load(&path) {
        Ok(_) => panic!("accepted interval_ms = 10"),
        Err(error) => error.to_string(),
    };
    assert!(
        message.starts_with(&format!("{}:1: interval_ms: ", path.display())),
        "{message}"
    );
}

#[test]
fn the_default_path_ends_in_gpufleet_config_toml() {
    if let Some(path) = config::default_path() {
        assert!(path.ends_with("gpufleet/config.toml"), "{}", path.display());
    }
}

#[test]
fn job_table_rules_name_file_line_and_key() {
    let job = |body: &str| host("a", &format!("\n[[hosts.jobs]]\n{body}"));
    let cases = [
        (
            "log = \"run/*.log\"\n",
            6,
            "hosts[0].jobs[0].log",
            "must be an absolute path",
        ),
        (
            "log = \"/run/a\\nb.log\"\n",
            6,
            "hosts[0].jobs[0].log",
            "control characters",
        ),
        (
            "pattern = \"step (\\\\d+)\"\n",
            6,
            "hosts[0].jobs[0].pattern",
            "names none of the groups",
        ),
        (
            "pattern = \"(?P<step>\"\n",
            6,
            "hosts[0].jobs[0].pattern",
            "not a valid regular expression",
        ),
        (
            "patience = 0\n",
            6,
            "hosts[0].jobs[0].patience",
            "must be at least 1",
        ),
        (
            "min_delta = 1.5\n",
            6,
            "hosts[0].jobs[0].min_delta",
            "must be from 0 to below 1",
        ),
        ("logs = \"/x\"\n", 6, "hosts[0].jobs[0].logs", ""),
        (
            "on_plateau = \"stop\"\n",
            6,
            "hosts[0].jobs[0].on_plateau",
            "unknown value \"stop\"; expected one of: alert, stop-job, release",
        ),
        (
            "on_plateau = \"release\"\n",
            6,
            "hosts[0].jobs[0].on_plateau",
            "needs a [hosts.release] table",
        ),
        (
            "stop_grace_s = 0\n",
            6,
            "hosts[0].jobs[0].stop_grace_s",
            "must be from 1 to 3600 seconds",
        ),
        (
            "max_run_hours = 0\n",
            6,
            "hosts[0].jobs[0].max_run_hours",
            "must be more than 0",
        ),
    ];
    for (body, line, key, words) in cases {
        let message = message_of(&job(body));
        assert!(
            message.starts_with(&format!("{PATH}:{line}: {key}: ")) && message.contains(words),
            "{body}: {message}"
        );
    }
    let two = host(
        "a",
        "\n[[hosts.jobs]]\nlog = \"/a.log\"\n\n[[hosts.jobs]]\nlog = \"/b.log\"\n",
    );
    let message = message_of(&two);
    assert!(message.contains("hosts[0].jobs[1]"), "{message}");
    let fine = job(
        "log = \"/root/run/*.log\"\npattern = 'it (?P<step>\\d+)/(?P<total>\\d+) l=(?P<loss>[\\d.]+)'\npatience = 5\nmin_delta = 0.001\n",
    );
    let parsed = config::parse(&fine, Path::new(PATH)).expect("a valid job table");
    let jobs = &parsed.hosts[0].jobs;
    assert_eq!(jobs[0].log.as_deref(), Some("/root/run/*.log"));
    assert_eq!(jobs[0].patience, Some(5));
    let acting = job("on_plateau = \"stop-job\"\nstop_grace_s = 30\nmax_run_hours = 12\n");
    let parsed = config::parse(&acting, Path::new(PATH)).expect("a valid job table");
    let jobs = &parsed.hosts[0].jobs;
    assert_eq!(jobs[0].on_plateau, Some(config::OnPlateau::StopJob));
    assert_eq!(jobs[0].stop_grace_s, Some(30));
    assert_eq!(jobs[0].max_run_hours, Some(12.0));
}

#[test]
fn job_window_out_of_range() {
    for value in ["5", "3601"] {
        let error = error_of(&format!("theme = \"dark\"\njob_window_s = {value}\n"));
        assert_eq!(
            error.to_string(),
            format!("{PATH}:2: job_window_s: must be from 10 to 3600 seconds, found {value}")
        );
    }
    let parsed = config::parse("job_window_s = 300\n", Path::new(PATH)).expect("valid");
    assert_eq!(parsed.job_window_s, 300);
}
