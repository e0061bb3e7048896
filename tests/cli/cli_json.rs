//! JSON on the read commands: `playbook list/show --json`, `audit --json`, and
//! `release --dry-run --json`, each a document a script can rely on (docs/CLI.md).

use crate::cli;

use serde_json::Value;

use cli::{Home, stderr, stdout};

fn json_of(out: &std::process::Output) -> Value {
    assert_eq!(out.status.code(), Some(0), "{}", stderr(out));
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", stdout(out)))
}

#[test]
fn playbook_list_and_show_as_json() {
    let home = Home::new();
    let list = json_of(&home.run(&["playbook", "list", "--json"]));
    let runbooks = list["runbooks"].as_array().expect("runbooks");
    // The same runbooks, in the same order, as the text list.
    let text = stdout(&home.run(&["playbook", "list"]));
    let text_ids: Vec<&str> = text
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    let json_ids: Vec<&str> = runbooks
        .iter()
        .map(|r| r["id"].as_str().expect("id"))
        .collect();
    assert_eq!(json_ids, text_ids);
    let power = runbooks
        .iter()
        .find(|r| r["id"] == "power-limit")
        .expect("power-limit");
    assert_eq!(power["when"][0], "power_throttle");
    assert!(
        power["origin"]
            .as_str()
            .is_some_and(|o| o.starts_with("embedded:"))
    );

    let show = json_of(&home.run(&["playbook", "show", "power-limit", "--json"]));
    assert_eq!(show["id"], "power-limit");
    let steps = show["steps"].as_array().expect("steps");
    assert!(!steps.is_empty());
    for step in steps {
        let danger = step["danger"].as_str().expect("danger");
        assert!(["read", "change", "disruptive"].contains(&danger), "{step}");
        assert!(
            step["command"].is_array() || step["command"].is_null(),
            "{step}"
        );
    }
    assert!(
        steps
            .iter()
            .any(|s| s["danger"] == "change" && s["undo"].is_array()),
        "the power change carries its undo: {show:#}"
    );
    let missing = home.run(&["playbook", "show", "no-such-book", "--json"]);
    assert_eq!(missing.status.code(), Some(2), "{}", stderr(&missing));
    assert!(missing.stdout.is_empty());
}

fn config_with_vast_host(home: &Home) -> String {
    home.write(
        "config.toml",
        "[[hosts]]\nname = \"a100-1\"\nssh = \"root@127.0.0.1:1\"\nprice_per_hour = 30.0\ncurrency = \"CNY\"\n\
         [hosts.release]\nprovider = \"vast\"\ninstance_id = \"12345\"\ntoken_env = \"GPUFLEET_TEST_TOKEN\"\nbase_url = \"http://127.0.0.1:9\"\n",
    )
}

#[test]
fn a_release_dry_run_as_json_and_the_audit_log_that_records_it() {
    let home = Home::new();
    let config = config_with_vast_host(&home);
    let empty = json_of(&home.run(&["audit", "--json"]));
    assert_eq!(empty["total"], 0);
    assert_eq!(empty["entries"], Value::Array(Vec::new()));

    let out = home
        .command(&[
            "release",
            "a100-1",
            "--dry-run",
            "--json",
            "--config",
            &config,
        ])
        .env("GPUFLEET_TEST_TOKEN", "tok-very-secret")
        .stdin(std::process::Stdio::null())
        .output()
        .expect("run");
    assert!(
        !stdout(&out).contains("tok-very-secret"),
        "{}",
        stdout(&out)
    );
    let plan = json_of(&out);
    assert_eq!(plan["dry_run"], true);
    assert_eq!(plan["host"], "a100-1");
    assert_eq!(plan["provider"], "vast");
    assert_eq!(plan["action"], "stop");
    assert_eq!(plan["instance_id"], "12345");
    let step = &plan["steps"][0];
    assert_eq!(step["kind"], "http");
    assert_eq!(step["method"], "PUT");
    assert!(
        step["url"]
            .as_str()
            .is_some_and(|u| u.starts_with("http://127.0.0.1:9/")),
        "{plan:#}"
    );
    assert_eq!(plan["token_problem"], Value::Null);

    // --json is for the dry run only.
    let out = home.run(&["release", "a100-1", "--json", "--config", &config]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));

    // The dry run is in the audit log, as JSON and as text.
    let audit = json_of(&home.run(&["audit", "--json"]));
    assert_eq!(audit["total"], 1);
    let entry = &audit["entries"][0];
    assert_eq!(entry["host"], "a100-1");
    assert_eq!(entry["kind"], "release");
    assert_eq!(entry["dry_run"], true);
    assert!(entry["at_ms"].is_u64(), "{entry}");
    let text = stdout(&home.run(&["audit"]));
    assert!(text.contains("a100-1  release  dry_run"), "{text}");

    let limited = json_of(&home.run(&["audit", "--json", "--limit", "1"]));
    assert_eq!(limited["entries"].as_array().map(Vec::len), Some(1));
    let out = home.run(&["audit", "--limit", "0"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
}

#[test]
fn runbook_is_the_command_and_playbook_still_runs_it() {
    let home = Home::new();
    let now = home.run(&["runbook", "list", "--json"]);
    assert_eq!(now.status.code(), Some(0), "{}", stderr(&now));
    let list = json_of(&now);
    assert!(
        !list["runbooks"].as_array().expect("runbooks").is_empty(),
        "{list}"
    );
    // Scripts written for the former name get the same answer.
    assert_eq!(json_of(&home.run(&["playbook", "list", "--json"])), list);
    let help = home.run(&["runbook", "--help"]);
    assert!(
        stdout(&help).contains("gpufleet runbook"),
        "{}",
        stdout(&help)
    );
}
