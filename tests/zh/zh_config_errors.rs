//! A broken config file (and a runbook parameter given wrong) through the real binary, in
//! Chinese and in English: the error still names the file, the line and the key as they are
//! written, and says what is wrong in the language of `--lang` or the locale. The config's own `language` does not choose the language
//! of an error in that same file (the file is what could not be read), so a Chinese config with
//! a mistake is reported in the flag's or the locale's language.

use crate::cli;

use cli::{Home, stderr};

/// `gpufleet ARGS...` with the locale variables removed, then `LANG` set when given.
fn run(home: &Home, args: &[&str], lang: Option<&str>) -> std::process::Output {
    let mut command = home.command(args);
    command
        .env_remove("LC_ALL")
        .env_remove("LC_MESSAGES")
        .env_remove("LANG")
        .stdin(std::process::Stdio::null());
    if let Some(lang) = lang {
        command.env("LANG", lang);
    }
    command.output().expect("run gpufleet")
}

const NEGATIVE_PRICE: &str = "interval_ms = 1000\n\n[[hosts]]\nname = \"a\"\nssh = \"root@10.0.0.1\"\nprice_per_hour = -3.0\n";

#[test]
fn config_check_in_chinese_names_file_line_and_key() {
    let home = Home::new();
    let bad = home.write("bad.toml", NEGATIVE_PRICE);
    let out = run(
        &home,
        &["--lang", "zh-CN", "config", "check", "--config", &bad],
        None,
    );
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert_eq!(
        stderr(&out),
        format!(
            "gpufleet config check: {bad}:6: hosts[0].price_per_hour: 必须大于或等于 0，当前为 -3\n"
        )
    );
}

#[test]
fn english_is_unchanged_byte_for_byte() {
    let home = Home::new();
    let bad = home.write("bad.toml", NEGATIVE_PRICE);
    let out = run(&home, &["config", "check", "--config", &bad], None);
    assert_eq!(
        stderr(&out),
        format!(
            "gpufleet config check: {bad}:6: hosts[0].price_per_hour: must be 0 or more, found -3\n"
        )
    );
    let out = run(
        &home,
        &["--lang", "en", "config", "check", "--config", &bad],
        Some("zh_CN.UTF-8"),
    );
    assert_eq!(
        stderr(&out),
        format!(
            "gpufleet config check: {bad}:6: hosts[0].price_per_hour: must be 0 or more, found -3\n"
        )
    );
}

#[test]
fn a_command_that_loads_the_config_says_it_in_the_locales_language() {
    let home = Home::new();
    let bad = home.write(
        "bad.toml",
        "[[hosts]]\nname = \"a\"\nssh = \"root@10.0.0.1\"\n\n[hosts.release]\nprovider = \"vast\"\ninstance_id = \"1\"\ntoken_env = \"TOKEN\"\ntoken_file = \"/t\"\n",
    );
    let out = run(
        &home,
        &["check", "a", "--config", &bad],
        Some("zh_CN.UTF-8"),
    );
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert_eq!(
        stderr(&out),
        format!(
            "gpufleet: {bad}:9: hosts[0].release.token_file: token_env 和 token_file 只能写一个，不能都写\n"
        )
    );
    let out = run(&home, &["check", "a", "--config", &bad], Some("C"));
    assert_eq!(
        stderr(&out),
        format!(
            "gpufleet: {bad}:9: hosts[0].release.token_file: give either token_env or token_file, \
             not both\n"
        )
    );
}

#[test]
fn parse_errors_are_chinese_too_with_identifiers_kept() {
    let home = Home::new();
    // An unknown key, with the close one suggested.
    let typo = home.write("typo.toml", "interval_ms = 1000\nintervall_ms = 500\n");
    let out = run(
        &home,
        &["--lang", "zh-CN", "config", "check", "--config", &typo],
        None,
    );
    assert_eq!(
        stderr(&out),
        format!(
            "gpufleet config check: {typo}:2: intervall_ms: 未知的键；你是想写 `interval_ms` 吗？\n"
        )
    );
    // A value of the wrong type: the range is said with the same numbers.
    let typed = home.write("typed.toml", "\nhistory_minutes = \"ten\"\n");
    let out = run(
        &home,
        &["--lang", "zh-CN", "config", "check", "--config", &typed],
        None,
    );
    assert_eq!(
        stderr(&out),
        format!(
            "gpufleet config check: {typed}:2: history_minutes: 应为从 0 到 4294967295 的整数，实际为字符串\n"
        )
    );
    // A table where an array of tables belongs keeps its hint, with the key as written.
    let table = home.write("table.toml", "[hosts]\nname = \"a\"\nssh = \"h\"\n");
    let out = run(
        &home,
        &["--lang", "zh-CN", "config", "check", "--config", &table],
        None,
    );
    assert_eq!(
        stderr(&out),
        format!(
            "gpufleet config check: {table}:1: hosts: 应为数组，实际为表；表数组的每一项都以 [[hosts]] 开头\n"
        )
    );
}

#[test]
fn a_chinese_config_with_a_mistake_is_reported_in_the_flags_or_locales_language() {
    let home = Home::new();
    let bad = home.write("bad.toml", "language = \"zh-CN\"\nhistory_minutes = 5\n");
    let out = run(&home, &["config", "check", "--config", &bad], None);
    assert_eq!(
        stderr(&out),
        format!("gpufleet config check: {bad}:2: history_minutes: must be at least 10, found 5\n")
    );
    let out = run(
        &home,
        &["config", "check", "--config", &bad],
        Some("zh_CN.UTF-8"),
    );
    assert_eq!(
        stderr(&out),
        format!("gpufleet config check: {bad}:2: history_minutes: 不能小于 10，当前为 5\n")
    );
}

#[test]
fn an_inline_secret_is_refused_in_chinese_without_echoing_it() {
    let home = Home::new();
    let bad = home.write(
        "bad.toml",
        "[[hosts]]\nname = \"a\"\nssh = \"root@10.0.0.1\"\npassword = \"hunter2-s3cret\"\n",
    );
    let out = run(
        &home,
        &["--lang", "zh-CN", "config", "check", "--config", &bad],
        None,
    );
    let err = stderr(&out);
    assert!(
        err.contains(&format!(
            "{bad}:4: hosts[0].password: 不要把密码写进配置文件；请把它放进环境变量，再用 password_env 写明该变量的名字"
        )),
        "{err}"
    );
    assert!(!err.contains("hunter2"), "{err}");
}

#[test]
fn a_runbooks_bad_parameter_is_refused_in_chinese_before_anything_runs() {
    let home = Home::new();
    let refused = |lang: &str, param: &str| {
        let out = run(
            &home,
            &[
                "--lang",
                lang,
                "playbook",
                "run",
                "power-limit",
                "--local",
                "--param",
                param,
            ],
            None,
        );
        assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
        format!("{}{}", cli::stdout(&out), stderr(&out))
    };
    let text = refused("zh-CN", "wats=250");
    assert!(
        text.contains("power-limit 没有参数 \"wats\"（它接受：gpu, watts）"),
        "{text}"
    );
    let text = refused("zh-CN", "watts=lots");
    assert!(
        text.contains("watts=\"lots\"：watts 是正数，例如 250 或 262.5"),
        "{text}"
    );
    let text = refused("zh-CN", "watts");
    assert!(
        text.contains("gpufleet: --param \"watts\"：请写成 NAME=VALUE，例如 watts=250"),
        "{text}"
    );
    let text = refused("en", "wats=250");
    assert!(
        text.contains("power-limit has no parameter \"wats\" (it takes: gpu, watts)"),
        "{text}"
    );
}

#[test]
fn a_users_broken_runbook_is_refused_in_chinese_with_its_place() {
    let home = Home::new();
    let file = home.write(
        "xdg-config/gpufleet/runbooks/mine.toml",
        "id = \"mine\"\ntitle = \"My runbook\"\nsummary = \"Reads the GPUs.\"\n\n\
         [[steps]]\nid = \"read\"\ntitle = \"Read\"\nwhy = \"To know.\"\ndanger = \"read\"\n\
         command = [\"nvidia-smi\"]\n\n\
         [[steps]]\nid = \"two\"\ntitle = \"T\"\nwhy = \"w\"\ncommand = [\"reboot\"]\n\
         danger = \"change\"\nreboot = true\n",
    );
    let out = run(&home, &["--lang", "zh-CN", "playbook", "list"], None);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert_eq!(
        stderr(&out),
        format!("gpufleet: {file}: steps[1] (two): 重启步骤必须是中断性的\n")
    );
    let out = run(&home, &["playbook", "list"], None);
    assert_eq!(
        stderr(&out),
        format!("gpufleet: {file}: steps[1] (two): a reboot step must be disruptive\n")
    );
}

#[test]
fn playbook_show_reads_in_chinese_with_ids_and_commands_kept() {
    let home = Home::new();
    let out = run(
        &home,
        &["--lang", "zh-CN", "playbook", "show", "power-limit"],
        None,
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = cli::stdout(&out);
    for part in [
        "\n适用的发现：power_throttle\n",
        "\n参数：\n  gpu（GPU 编号）：",
        "\n步骤：\n  1. ",
        "[change，需要 root]（apply，超时 30 s）",
        "\n     $ nvidia-smi -i '{gpu}' -pl '{watts}'\n",
        "\n     撤销：nvidia-smi -i '{gpu}' -pl '{enforced_w}'\n",
    ] {
        assert!(text.contains(part), "{part:?} in\n{text}");
    }
    let out = run(&home, &["playbook", "show", "power-limit"], None);
    let text = cli::stdout(&out);
    for part in [
        "\nfor findings: power_throttle\n",
        "\nparameters:\n  gpu (GPU index): ",
        "[change, needs root] (apply, timeout 30 s)",
        "\n     undo: nvidia-smi -i '{gpu}' -pl '{enforced_w}'\n",
    ] {
        assert!(text.contains(part), "{part:?} in\n{text}");
    }
}

#[test]
fn a_bad_ssh_value_is_explained_in_chinese() {
    let home = Home::new();
    let bad = home.write(
        "bad.toml",
        "[[hosts]]\nname = \"a\"\nssh = \"root@h.example.com:99999\"\n",
    );
    let out = run(
        &home,
        &["--lang", "zh-CN", "config", "check", "--config", &bad],
        None,
    );
    assert_eq!(
        stderr(&out),
        format!(
            "gpufleet config check: {bad}:3: hosts[0].ssh: 端口 \"99999\" 不是 1 到 65535 之间的数字\n"
        )
    );
}
