//! The last errors that were English only, through the real binary: a recording `replay` and
//! `report` cannot read, and a runbook id defined twice. In Chinese with `--lang zh-CN` (the
//! file and line as written, the sentence translated); in English byte for byte as before.

use crate::cli;

use cli::{Home, stderr};

/// `gpufleet ARGS...` with the locale variables removed, so only `--lang` chooses.
fn run(home: &Home, args: &[&str]) -> std::process::Output {
    home.run_unlocalized(args)
}

const HEADER: &str = r#"{"format":"gpufleet-recording","version":1,"gpufleet":"0.1.0","started_ms":1,"started":"x","hosts":["a"]}"#;

#[test]
fn an_empty_recording_is_refused_in_chinese_and_in_the_same_english() {
    let home = Home::new();
    let empty = home.write("empty.ndjson", "");
    let out = run(&home, &["--lang", "zh-CN", "replay", &empty]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert_eq!(
        stderr(&out),
        format!("gpufleet replay: {empty}: 空文件：不是 gpufleet 录制\n")
    );
    let out = run(&home, &["--lang", "en", "replay", &empty]);
    assert_eq!(
        stderr(&out),
        format!("gpufleet replay: {empty}: empty: not a gpufleet recording\n")
    );
}

#[test]
fn a_foreign_or_newer_file_is_refused_in_chinese_by_replay_and_report() {
    let home = Home::new();
    let foreign = home.write("foreign.txt", "hello world\n");
    let newer = home.write(
        "newer.ndjson",
        &(HEADER.replace("\"version\":1", "\"version\":99") + "\n"),
    );
    let reads = gpufleet::recording::wire::FORMAT_VERSION;
    let cases = [
        (
            &foreign,
            ":1: 不是 gpufleet 录制：第一行不是它的 JSON 文件头".to_string(),
            ":1: not a gpufleet recording: the first line is not its JSON header".to_string(),
        ),
        (
            &newer,
            format!(
                ":1: 录制格式版本 99 比这个 gpufleet 能读取的更新（它读取版本 {reads}）；这份录制由 gpufleet 0.1.0 写入：请用该版本或更新的版本回放"
            ),
            format!(
                ":1: recording format version 99 is newer than this gpufleet reads (version {reads}); it was written by gpufleet 0.1.0: replay it with that version or newer"
            ),
        ),
    ];
    for (path, chinese, english) in cases {
        for args in [vec!["replay", path], vec!["report", "a", "--from", path]] {
            let mut zh = vec!["--lang", "zh-CN"];
            zh.extend(&args);
            let out = run(&home, &zh);
            assert_eq!(out.status.code(), Some(2), "{zh:?}: {}", stderr(&out));
            let said = stderr(&out);
            assert!(
                said.contains(&format!("{path}{chinese}\n")),
                "{zh:?}: {said}"
            );
            let mut en = vec!["--lang", "en"];
            en.extend(&args);
            let said = stderr(&run(&home, &en));
            assert!(
                said.contains(&format!("{path}{english}\n")),
                "{en:?}: {said}"
            );
        }
    }
}

#[test]
fn a_runbook_id_defined_twice_is_refused_in_chinese_and_in_the_same_english() {
    let home = Home::new();
    // The user's runbook takes the id of a curated one.
    let mine = home.write(
        "xdg-config/gpufleet/runbooks/mine.toml",
        r#"
id = "gpu-lost"
title = "My runbook"
summary = "Reads the GPUs."

[[steps]]
id = "read"
title = "Read"
why = "To know."
danger = "read"
command = ["nvidia-smi"]
"#,
    );
    let out = run(&home, &["--lang", "zh-CN", "playbook", "list"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert_eq!(
        stderr(&out),
        format!("gpufleet: {mine}: 运维手册 id \"gpu-lost\" 已由 embedded:gpu-lost.toml 定义\n")
    );
    let out = run(&home, &["--lang", "en", "playbook", "list"]);
    assert_eq!(
        stderr(&out),
        format!(
            "gpufleet: {mine}: runbook id \"gpu-lost\" is already defined by embedded:gpu-lost.toml\n"
        )
    );
}

#[test]
fn an_unknown_runbook_is_refused_in_chinese_and_in_the_same_english() {
    let home = Home::new();
    let known = "power-limit, gpu-lost, driver-lost, cuda-mismatch, throttle, ecc-remap";
    let out = run(&home, &["--lang", "zh-CN", "playbook", "show", "nosuch"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert_eq!(
        stderr(&out),
        format!("gpufleet: 没有运维手册 \"nosuch\"（已知：{known}）\n")
    );
    let out = run(&home, &["--lang", "en", "playbook", "show", "nosuch"]);
    assert_eq!(
        stderr(&out),
        format!("gpufleet: no runbook \"nosuch\" (known: {known})\n")
    );
}

/// The demo's simulated shell answers a command it does not simulate in the user's language,
/// as a line of the step's output (the command as typed).
#[test]
fn the_demo_hosts_shell_says_what_it_does_not_simulate_in_chinese() {
    let home = Home::new();
    let args = [
        "playbook",
        "run",
        "driver-lost",
        "--host",
        "flaky-h200",
        "--demo",
        "--yes",
    ];
    let zh = run(&home, &[&["--lang", "zh-CN"][..], &args[..]].concat());
    let text = format!("{}{}", cli::stdout(&zh), stderr(&zh));
    assert!(
        text.contains("lsmod：演示主机 flaky-h200 上没有模拟此命令"),
        "{text}"
    );
    assert!(!text.contains("not simulated"), "{text}");
    let en = run(&home, &[&["--lang", "en"][..], &args[..]].concat());
    let text = format!("{}{}", cli::stdout(&en), stderr(&en));
    assert!(
        text.contains("lsmod: not simulated on the demo host flaky-h200"),
        "{text}"
    );
}

/// Waiting out a reboot says what it waits for in the user's language (the demo's flaky H200
/// reboots in its `gpu-lost` runbook).
#[test]
fn waiting_out_a_reboot_is_said_in_chinese() {
    let home = Home::new();
    let args = [
        "--lang",
        "zh-CN",
        "playbook",
        "run",
        "gpu-lost",
        "--host",
        "flaky-h200",
        "--demo",
        "--yes",
    ];
    let out = run(&home, &args);
    let text = format!("{}{}", cli::stdout(&out), stderr(&out));
    assert!(text.contains("正在等待 flaky-h200 关机"), "{text}");
    assert!(text.contains("flaky-h200 已回来，boot id 已更新"), "{text}");
    assert!(!text.contains("back with a new boot id"), "{text}");
}

/// The prompt before a change asks in the user's language; `n` (or nothing) declines, and
/// nothing changes.
#[test]
fn the_prompt_before_a_change_asks_in_chinese() {
    use std::io::Write;
    let home = Home::new();
    let mut child = home
        .command(&[
            "--lang",
            "zh-CN",
            "playbook",
            "run",
            "power-limit",
            "--host",
            "train-h100x8",
            "--demo",
            "--param",
            "watts=500",
            "--gpu",
            "0",
        ])
        .env_remove("LC_ALL")
        .env_remove("LC_MESSAGES")
        .env_remove("LANG")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run gpufleet");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(b"n\n")
        .expect("answer");
    let out = child.wait_with_output().expect("gpufleet");
    let text = format!("{}{}", cli::stdout(&out), stderr(&out));
    assert!(
        text.contains("train-h100x8 上的变更步骤：设置 GPU 的功耗上限"),
        "{text}"
    );
    assert!(text.contains("运行：nvidia-smi -i 0 -pl 500"), "{text}");
    assert!(text.contains("运行吗？[y/N]"), "{text}");
    assert!(!text.contains("Run it?"), "{text}");
}

/// The demo's check on a host whose card the replayed captures are not of says so in the
/// user's language.
#[test]
fn the_demos_check_on_another_card_says_why_in_chinese() {
    let home = Home::new();
    let out = run(
        &home,
        &[
            "--lang",
            "zh-CN",
            "check",
            "--demo",
            "train-h100x8",
            "--speed",
            "1000",
        ],
    );
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("train-h100x8 是一台模拟的 NVIDIA H100 80GB HBM3 x8"),
        "{}",
        stderr(&out)
    );
}

/// With no config, no host named and no NVIDIA driver (CI's machines, and any without a GPU),
/// `snapshot` says there is nothing to watch, and why, in the user's language.
#[test]
fn nothing_to_watch_is_said_in_chinese() {
    let home = Home::new();
    let en = run(&home, &["--lang", "en", "snapshot"]);
    if !stderr(&en).contains("nothing to watch") {
        // This machine has a GPU the snapshot reads: not the case under test.
        assert!(std::env::var_os("CI").is_none(), "{}", stderr(&en));
        return;
    }
    assert!(
        stderr(&en).contains("no local GPU (no NVIDIA driver on this machine"),
        "{}",
        stderr(&en)
    );
    let zh = run(&home, &["--lang", "zh-CN", "snapshot"]);
    assert!(
        stderr(&zh).contains("没有可监视的对象："),
        "{}",
        stderr(&zh)
    );
    assert!(
        stderr(&zh).contains("本机也没有 GPU（这台机器上没有 NVIDIA 驱动"),
        "{}",
        stderr(&zh)
    );
}

/// `home`'s state directory, made, with `name` written into it.
fn state_file(home: &Home, name: &str, text: &str) -> String {
    let dir = home.path().join("state");
    std::fs::create_dir_all(&dir).expect("state dir");
    let path = dir.join(name);
    std::fs::write(&path, text).expect("write state file");
    path.display().to_string()
}

#[test]
fn a_damaged_or_newer_ledger_is_refused_in_chinese_and_in_the_same_english() {
    let home = Home::new();
    let config = home.write(
        "config.toml",
        "[[hosts]]\nname = \"a\"\nssh = \"root@127.0.0.1\"\n",
    );
    let ledger = state_file(&home, "ledger.json", "{bad");
    let cost = |lang: &str| run(&home, &["--lang", lang, "--config", &config, "cost"]);
    let out = cost("zh-CN");
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let why = "key must be a string at line 1 column 2";
    assert_eq!(
        stderr(&out),
        format!("gpufleet: 账本 {ledger} 不是账本文件（{why}）；把它移走即可开始新账本\n")
    );
    assert_eq!(
        stderr(&cost("en")),
        format!(
            "gpufleet: ledger {ledger} is not a ledger file ({why}); move it aside to start a new one\n"
        )
    );
    state_file(&home, "ledger.json", "{\"version\":99,\"hosts\":{}}");
    assert_eq!(
        stderr(&cost("zh-CN")),
        format!("gpufleet: 账本 {ledger} 由更新版本的 gpufleet 写入（格式 99）\n")
    );
    assert_eq!(
        stderr(&cost("en")),
        format!("gpufleet: ledger {ledger} was written by a newer gpufleet (format 99)\n")
    );
}

#[test]
fn a_damaged_audit_log_is_refused_in_chinese_and_in_the_same_english() {
    let home = Home::new();
    // A torn last line is forgiven (a write cut short); a bad line before it is not.
    let log = state_file(&home, "audit.jsonl", "garbage\n{\"x\":1}\n");
    let out = run(&home, &["--lang", "zh-CN", "audit"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let why = "expected value at line 1 column 1";
    assert_eq!(
        stderr(&out),
        format!("gpufleet audit：审计日志 {log}:1：{why}\n")
    );
    assert_eq!(
        stderr(&run(&home, &["--lang", "en", "audit"])),
        format!("gpufleet audit: audit log {log}:1: {why}\n")
    );
}

#[test]
fn config_check_refuses_a_theme_the_console_could_not_load_in_both_languages() {
    let home = Home::new();
    let config = home.write(
        "config.toml",
        "theme = \"nosuch\"\n[[hosts]]\nname = \"a\"\nssh = \"root@127.0.0.1\"\n",
    );
    let themes = home.path().join("xdg-config/gpufleet/themes");
    let check = |lang: &str| {
        run(
            &home,
            &["--lang", lang, "--config", &config, "config", "check"],
        )
    };
    let out = check("zh-CN");
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let bundled = "dark, light, high-contrast, ansi16";
    assert_eq!(
        stderr(&out),
        format!(
            "gpufleet config check: {config}：theme：未知主题 \"nosuch\"：内置主题有 {bundled}，{} 中也没有同名的 .toml 文件\n",
            themes.display()
        )
    );
    assert_eq!(
        stderr(&check("en")),
        format!(
            "gpufleet config check: {config}: theme: unknown theme \"nosuch\": the bundled themes are {bundled}, and there is no such .toml file in {}\n",
            themes.display()
        )
    );
    // A user theme that extends no bundled theme is named with its file and line.
    let file = home.write(
        "xdg-config/gpufleet/themes/mine.toml",
        "extends = \"other\"\n",
    );
    let config = home.write(
        "config.toml",
        "theme = \"mine\"\n[[hosts]]\nname = \"a\"\nssh = \"root@127.0.0.1\"\n",
    );
    assert_eq!(
        stderr(&check("zh-CN")),
        format!(
            "gpufleet config check: {config}：theme：{file}:1: extends: \"other\" 不是内置主题；应为以下之一：{bundled}\n"
        )
    );
    let out = check("en");
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        stderr(&out),
        format!(
            "gpufleet config check: {config}: theme: {file}:1: extends: \"other\" is not a bundled theme; expected one of: {bundled}\n"
        )
    );
}

#[test]
fn a_provider_commands_bad_inventory_is_said_in_chinese_and_in_the_same_english() {
    let home = Home::new();
    let script = home.write(
        "inventory.sh",
        "#!/bin/sh\necho '{\"gpufleet_inventory\": 1, \"instances\": [{\"id\": \"a\", \"state\": \"running\", \"currency\": \"usd\"}]}'\n",
    );
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    }
    let config = home.write(
        "config.toml",
        &format!("[[providers]]\nkind = \"command\"\nname = \"ali\"\ncommand = [\"{script}\"]\n"),
    );
    let sync = |lang: &str| {
        run(
            &home,
            &["--lang", lang, "--config", &config, "providers", "sync"],
        )
    };
    let out = sync("zh-CN");
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert_eq!(
        stderr(&out),
        format!(
            "gpufleet providers sync：command 账户 \"ali\"：{script} 输出的不是 gpufleet 实例清单 JSON：instances[0]：\"currency\" 必须是 3 个大写字母的货币代码，例如 CNY\n"
        )
    );
    assert_eq!(
        stderr(&sync("en")),
        format!(
            "gpufleet providers sync: command account \"ali\": {script} did not print gpufleet inventory JSON: instances[0]: \"currency\" must be a 3-letter code in capitals such as CNY\n"
        )
    );
}

#[test]
fn a_check_that_cannot_reach_or_name_its_host_says_why_in_chinese_and_in_the_same_english() {
    let home = Home::new();
    let ssh_config = home.write(
        "ssh_config",
        "Host behind\n  HostName 127.0.0.1\n  ProxyJump root@127.0.0.1:1\n",
    );
    let check = |lang: &str, host: &str| {
        run(
            &home,
            &["--lang", lang, "--ssh-config", &ssh_config, "check", host],
        )
    };
    // The jump host refuses: the SSH layer's reason in the reader's language too.
    let out = check("zh-CN", "behind");
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert!(
        stderr(&out).ends_with(
            "gpufleet check: 无法在主机上运行验卡：跳板机 root@127.0.0.1:1：无法连接 127.0.0.1:1：Connection refused (os error 111)\n"
        ),
        "{}",
        stderr(&out)
    );
    let out = check("en", "behind");
    assert!(
        stderr(&out).ends_with(
            "gpufleet check: cannot run the check on the host: jump host root@127.0.0.1:1: cannot connect to 127.0.0.1:1: Connection refused (os error 111)\n"
        ),
        "{}",
        stderr(&out)
    );
    // A target that cannot be one.
    let out = check("zh-CN", "root@bad:99999");
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert_eq!(
        stderr(&out),
        "gpufleet check: 主机 root@bad:99999：无效的 ssh 目标 \"root@bad:99999\"：端口 \"99999\" 不是 1 到 65535 之间的数字\n"
    );
    let out = check("en", "root@bad:99999");
    assert_eq!(
        stderr(&out),
        "gpufleet check: host root@bad:99999: invalid ssh target \"root@bad:99999\": port \"99999\" is not a number from 1 to 65535\n"
    );
}
