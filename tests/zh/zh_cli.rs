//! The command line in Chinese through the real binary: `--help` of every command (chosen by
//! `--lang`, the config or the locale; English byte for byte the derive's), `release`'s plan
//! and its failures (a real HTTP server on loopback refusing the token), `fit`'s `--params`
//! error, and the progress lines `check` prints while it runs.

use crate::cli;
use crate::release_server as server;

use clap::CommandFactory;
use cli::{Home, stderr, stdout};
use server::{Server, answer};

/// Every command's path: `[]`, `["check"]`, `["runbook", "run"]`, ... (not clap's `help`).
fn command_paths() -> Vec<Vec<String>> {
    fn walk(cmd: &clap::Command, at: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
        out.push(at.clone());
        for sub in cmd.get_subcommands().filter(|s| s.get_name() != "help") {
            at.push(sub.get_name().to_string());
            walk(sub, at, out);
            at.pop();
        }
    }
    let mut cmd = gpufleet::cli::Cli::command();
    cmd.build();
    let mut out = Vec::new();
    walk(&cmd, &mut Vec::new(), &mut out);
    out
}

/// `gpufleet PATH... FLAG EXTRA...` with no locale variables set.
fn help(home: &Home, path: &[String], flag: &str, extra: &[&str]) -> std::process::Output {
    let mut words: Vec<&str> = path.iter().map(String::as_str).collect();
    words.push(flag);
    words.extend(extra);
    home.command(&words)
        .env_remove("LC_ALL")
        .env_remove("LC_MESSAGES")
        .env_remove("LANG")
        .output()
        .expect("run gpufleet")
}

#[test]
fn english_help_is_the_derives_byte_for_byte() {
    let home = Home::new();
    for path in command_paths() {
        for flag in ["--help", "-h"] {
            let mut argv = vec!["gpufleet".to_string()];
            argv.extend(path.iter().cloned());
            argv.push(flag.to_string());
            let expected = match gpufleet::cli::Cli::command().try_get_matches_from(&argv) {
                Err(e) => e.render().to_string(),
                Ok(_) => panic!("{argv:?} did not ask for help"),
            };
            let out = help(&home, &path, flag, &[]);
            assert_eq!(out.status.code(), Some(0), "{argv:?}");
            assert_eq!(stdout(&out), expected, "{argv:?}");
        }
    }
}

/// What English help shows that Chinese help must not.
const CLAP_ENGLISH: [&str; 8] = [
    "Usage:",
    "\nOptions:",
    "\nArguments:",
    "\nCommands:",
    "Global options",
    "Print help",
    "[default:",
    "[possible values:",
];

#[test]
fn every_commands_help_in_chinese() {
    let home = Home::new();
    let paths = command_paths();
    assert!(paths.len() > 20, "{paths:?}");
    for path in &paths {
        let out = help(&home, path, "--help", &["--lang", "zh-CN"]);
        let text = stdout(&out);
        assert_eq!(out.status.code(), Some(0), "{path:?}: {}", stderr(&out));
        let usage = format!("用法: gpufleet {}", path.join(" "));
        assert!(text.contains(usage.trim_end()), "{path:?}:\n{text}");
        assert!(text.contains("\n全局选项:\n"), "{path:?}:\n{text}");
        assert!(text.contains("打印帮助"), "{path:?}:\n{text}");
        for english in CLAP_ENGLISH {
            assert!(!text.contains(english), "{english:?} in {path:?}:\n{text}");
        }
        // Its first line, the command's about, is Chinese.
        let about = text.lines().next().unwrap_or_default();
        assert!(
            about
                .chars()
                .any(|c| ('\u{4e00}'..='\u{9fff}').contains(&c)),
            "{path:?}: {about}"
        );
    }
    // Flags, value names, units and values stay as they are.
    let fit = stdout(&help(
        &home,
        &["fit".to_string()],
        "-h",
        &["--lang", "zh-CN"],
    ));
    for needle in [
        "      --params <N>              参数量：7B、1.5B、350M 或一个普通数字\n",
        "full、lora 或 qlora [默认: full] [可选值: full, lora, qlora]\n",
        "  -h, --help                    打印帮助\n",
        "      --gradient-checkpointing  在每一层做梯度（激活）检查点：每层只保留输入，每次重算一层\n",
        "模拟器时钟倍速（配合 --demo）或回放倍速（配合 `replay`）：10 表示每秒运行十个模拟秒 [默认: 1]\n",
    ] {
        assert!(fit.contains(needle), "{needle:?} missing:\n{fit}");
    }
    let top = stdout(&help(&home, &[], "--help", &["--lang=zh-CN"]));
    assert!(
        top.starts_with("在一个终端里监控、分诊并管理租用 GPU 的花费\n\n用法: gpufleet [OPTIONS] [HOST]... [COMMAND]\n\n命令:\n"),
        "{top}"
    );
    assert!(
        top.contains("\n  help         打印本帮助，或指定子命令的帮助\n"),
        "{top}"
    );
    assert!(top.contains("  -V, --version  打印版本\n"), "{top}");
}

#[test]
fn the_help_follows_the_flag_then_the_config_then_the_locale() {
    let home = Home::new();
    let zh_head = "在平台上释放一台主机";
    let en_head = "Release a host at its provider";
    let with_locale = |args: &[&str], lang: &str| {
        let mut words = vec!["release"];
        words.extend(args);
        let out = home
            .command(&words)
            .env_remove("LC_ALL")
            .env_remove("LC_MESSAGES")
            .env("LANG", lang)
            .output()
            .expect("run gpufleet");
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        stdout(&out)
    };
    assert!(with_locale(&["-h"], "zh_CN.UTF-8").starts_with(zh_head));
    assert!(with_locale(&["-h", "--lang", "en"], "zh_CN.UTF-8").starts_with(en_head));
    assert!(with_locale(&["-h"], "zh_TW.UTF-8").starts_with(en_head));
    // The config's language, with the flag above it and the locale below.
    let config = home.write("c.toml", "language = \"zh-CN\"\n");
    assert!(with_locale(&["--help", "--config", &config], "C").starts_with(zh_head));
    assert!(
        with_locale(&["--help", "--config", &config, "--lang", "en"], "C").starts_with(en_head)
    );
    // `help SUBCOMMAND` and a command that needs a subcommand (help on stderr, exit 2).
    let out = help(&home, &[], "--lang", &["zh-CN", "help", "release"]);
    assert!(stdout(&out).starts_with(zh_head), "{}", stdout(&out));
    let out = home
        .command(&["runbook"])
        .env_remove("LC_ALL")
        .env("LC_MESSAGES", "zh_CN.UTF-8")
        .env("LANG", "en_US.UTF-8")
        .output()
        .expect("run gpufleet");
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).starts_with("精选的运维手册"),
        "{}",
        stderr(&out)
    );
    // A mistyped subcommand is still refused with its suggestion.
    let out = help(&home, &[], "--lang", &["zh-CN", "relase"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("你是不是想输入 `release`"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_release_plan_in_chinese_keeps_its_request_and_figures() {
    let home = Home::new();
    let plan = |lang: &str| {
        let out = home.run(&[
            "release",
            "--demo",
            "idle-a100",
            "--dry-run",
            "--lang",
            lang,
        ]);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        stdout(&out)
    };
    let (zh, en) = (plan("zh-CN"), plan("en"));
    for needle in [
        "[模拟] 演示主机：由进程内的模拟平台应答\n",
        "\n关机 idle-a100（vast，实例 14523871）\n",
        "\n  此操作将实例关机，数据盘保留（存储仍在计费），能否再开机取决于这台机器是否空闲\n",
        "\n  已花费：",
        "\n  未配置备份\n  请求：\n    PUT https://console.vast.ai/api/v0/instances/14523871/\n",
        "\n  警告：模拟：演示主机；由进程内的模拟平台应答，不会发送任何请求\n",
        "\n演练：没有运行任何命令，也没有发送任何请求\n",
    ] {
        assert!(zh.contains(needle), "{needle:?} missing:\n{zh}");
    }
    for english in [
        "spent so far",
        "request:",
        "warning",
        "dry run",
        "this stops",
    ] {
        assert!(!zh.contains(english), "{english:?} in:\n{zh}");
    }
    for needle in [
        "\nstop idle-a100 (vast, instance 14523871)\n",
        "\n  spent so far: ",
        "\n  no backup configured\n  request:\n",
        "\ndry run: nothing was run or sent\n",
    ] {
        assert!(en.contains(needle), "{needle:?} missing:\n{en}");
    }
    // The request and the money are the same in both.
    let request = |text: &str| {
        text.lines()
            .filter(|l| l.starts_with("    "))
            .map(str::to_string)
            .collect::<Vec<_>>()
    };
    assert_eq!(request(&zh), request(&en));
    assert!(zh.contains(" USD，计费时长 "), "{zh}");

    // Sent (to the demo's simulated provider): the answer and the outcome.
    let out = home.run(&["release", "--demo", "idle-a100", "--yes", "--lang", "zh-CN"]);
    let said = stdout(&out);
    assert_eq!(out.status.code(), Some(0), "{said}{}", stderr(&out));
    assert!(
        said.contains("\n  PUT https://console.vast.ai/api/v0/instances/14523871/（模拟）：200 {\"success\": true}\n"),
        "{said}"
    );
    assert!(
        said.contains("\nidle-a100：关机请求已发送并被接受\n"),
        "{said}"
    );
    let english = stdout(&home.run(&["release", "--demo", "idle-a100", "--yes", "--lang", "en"]));
    assert!(
        english.contains("\n  PUT https://console.vast.ai/api/v0/instances/14523871/ (simulated): 200 {\"success\": true}\n"),
        "{english}"
    );

    // A wrong name typed at the confirmation.
    let out = home
        .command(&["release", "--demo", "flaky-h200", "--lang", "zh-CN"])
        .stdin(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut child| {
            use std::io::Write;
            if let Some(mut input) = child.stdin.take() {
                input.write_all(b"flaky\n")?;
            }
            child.wait_with_output()
        })
        .expect("run gpufleet");
    let said = stdout(&out);
    assert!(said.contains("先在 flaky-h200 上备份：tar -czf "), "{said}");
    assert!(
        said.contains("\"flaky\" 不是主机名 \"flaky-h200\"；已取消；没有发送任何请求"),
        "{said}"
    );
}

fn vast_host(home: &Home, base_url: &str) -> String {
    home.write(
        "config.toml",
        &format!(
            "[[hosts]]\nname = \"a100-1\"\nssh = \"root@127.0.0.1:1\"\n\
             [hosts.release]\nprovider = \"vast\"\ninstance_id = \"12345\"\n\
             token_env = \"GPUFLEET_TEST_TOKEN\"\nbase_url = \"{base_url}\"\n"
        ),
    )
}

#[test]
fn release_failures_in_chinese() {
    let home = Home::new();
    // The provider refuses the token: a real HTTP server on loopback answers 401.
    let server = Server::start(vec![answer(401, r#"{"error": "bad key"}"#)]);
    let config = vast_host(&home, &server.base_url);
    let out = home
        .command(&[
            "release", "a100-1", "--yes", "--lang", "zh-CN", "--config", &config,
        ])
        .env("GPUFLEET_TEST_TOKEN", "tok-zh-31415")
        .output()
        .expect("run gpufleet");
    let said = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "{said}{}", stderr(&out));
    assert!(
        said.contains(
            "gpufleet release：a100-1：平台拒绝了令牌（HTTP 401）：{\"error\": \"bad key\"}"
        ),
        "{said}"
    );
    assert!(!said.contains("tok-zh-31415"), "{said}");

    // No token: the plan says why, and the release is refused.
    let out = home
        .command(&["release", "a100-1", "--lang", "zh-CN", "--config", &config])
        .env_remove("GPUFLEET_TEST_TOKEN")
        .output()
        .expect("run gpufleet");
    let said = stdout(&out);
    assert_eq!(out.status.code(), Some(2), "{said}{}", stderr(&out));
    assert!(
        said.contains("\n  令牌：环境变量 GPUFLEET_TEST_TOKEN（token_env）未设置\n"),
        "{said}"
    );
    assert!(
        said.contains("gpufleet release：没有 API 令牌无法释放：环境变量 GPUFLEET_TEST_TOKEN"),
        "{said}"
    );

    // A host the config lacks, and one with no way to release it.
    let out = home.run(&["release", "nosuch", "--lang", "zh-CN", "--config", &config]);
    assert_eq!(
        stdout(&out),
        "gpufleet release：配置中没有名为 \"nosuch\" 的主机\n"
    );
    let english = home.run(&["release", "nosuch", "--lang", "en", "--config", &config]);
    assert_eq!(
        stdout(&english),
        "gpufleet release: no host named \"nosuch\" in the config\n"
    );
}

#[test]
fn fits_params_error_in_chinese() {
    let home = Home::new();
    let out = home.run(&["fit", "--params", "7X", "--lang", "zh-CN"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        stderr(&out),
        "gpufleet fit：`7X` 不是参数量：请写成 7B、1.5B、350M 或 7000000000\n"
    );
    let out = home.run(&["fit", "--params", "0", "--lang", "zh-CN"]);
    assert_eq!(
        stderr(&out),
        "gpufleet fit：`0`：参数量必须大于零且不超过 100T\n"
    );
    let out = home.run(&["fit", "--params", "7X", "--lang", "en"]);
    assert_eq!(
        stderr(&out),
        "gpufleet fit: `7X` is not a parameter count: write 7B, 1.5B, 350M or 7000000000\n"
    );
}

#[test]
fn the_checks_progress_in_chinese() {
    let home = Home::new();
    let progress = |lang: &str| {
        let out = home.run(&["check", "--demo", "--speed", "1000", "--lang", lang]);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        stderr(&out)
            .lines()
            .filter(|l| l.starts_with('[') && l.contains("%]"))
            .map(str::to_string)
            .collect::<Vec<_>>()
    };
    let (zh, en) = (progress("zh-CN"), progress("en"));
    for line in [
        "[  0%] 读取 nvidia-smi",
        "[  3%] 读取内核日志",
        "[  5%] 启动 PyTorch",
        "[100%] 完成：flaky-h200：通过",
    ] {
        assert!(zh.iter().any(|l| l == line), "{line:?} missing:\n{zh:#?}");
    }
    for phase in [
        "GPU 0：矩阵乘法",
        "GPU 0：显存拷贝",
        "GPU 0：填充显存",
        "持续负载",
    ] {
        assert!(zh.iter().any(|l| l.contains(phase)), "{phase}:\n{zh:#?}");
    }
    let joined = zh.join("\n");
    for english in ["reading", "starting", "matrix", "sustained", "done", "pass"] {
        assert!(!joined.contains(english), "{english:?} in:\n{joined}");
    }
    assert!(
        en.iter().any(|l| l == "[100%] done: flaky-h200: pass"),
        "{en:#?}"
    );
    assert!(en.iter().any(|l| l == "[  0%] reading nvidia-smi"));
    // A phase is said once when its message only repeats it.
    for line in zh.iter().chain(&en) {
        let rest = line.split_once("] ").map_or("", |(_, rest)| rest);
        let doubled = [": ", "："].iter().any(|sep| {
            rest.match_indices(sep)
                .any(|(at, _)| rest[..at] == rest[at + sep.len()..])
        });
        assert!(!doubled, "{line}");
    }
    // The same steps at the same percentages in both.
    let pcts = |lines: &[String]| {
        lines
            .iter()
            .map(|l| l.split(']').next().unwrap_or_default().to_string())
            .collect::<Vec<_>>()
    };
    assert_eq!(pcts(&zh), pcts(&en));

    // `check --local` (its own printer in main): on a machine without nvidia-smi the check
    // still reads, says so and ends.
    let out = home.run(&["check", "--local", "--sustain-s", "0", "--lang", "zh-CN"]);
    let said = stderr(&out);
    assert!(said.starts_with("[  0%] 读取 nvidia-smi\n"), "{said}");
    assert!(said.contains("\n[  3%] 读取内核日志\n"), "{said}");
}

/// `gpufleet WORDS...` with no locale variables set, its exit code and stderr.
fn refused(home: &Home, words: &[&str]) -> (Option<i32>, String) {
    let out = help(home, &[], words[0], &words[1..]);
    (out.status.code(), stderr(&out))
}

#[test]
fn clap_refusals_in_chinese_name_the_argument_and_english_stays_claps() {
    let home = Home::new();
    let cases: &[(&[&str], &[&str])] = &[
        (
            &["--bogus", "--lang", "zh-CN"],
            &["gpufleet: 无法识别的参数 `--bogus`\n", "`-- --bogus`"],
        ),
        (
            &["release", "--lang", "zh-CN"],
            &["gpufleet: 缺少必需的参数：<NAME>\n"],
        ),
        (
            &["fit", "--params", "7B", "--method", "dora", "--lang=zh-CN"],
            &[
                "gpufleet: `--method <METHOD>` 的值 `dora` 无效\n",
                "[可选值: full, lora, qlora]",
            ],
        ),
        (
            &["runbook", "--lang", "zh-CN"],
            &[
                "gpufleet: `gpufleet runbook` 需要一个子命令，但没有给出\n",
                "[子命令: list, show, run, undo, help]",
            ],
        ),
        (
            &["--demo", "--local", "--lang", "zh-CN"],
            &["gpufleet: 参数 `--demo` 不能与 `--local` 同时使用\n"],
        ),
        (
            &[
                "fit", "--params", "7B", "--methd", "lora", "--lang", "zh-CN",
            ],
            &[
                "gpufleet: 无法识别的参数 `--methd`\n",
                "\n  提示：有相近的参数 `--method`\n",
            ],
        ),
        (
            &["--interval-ms", "5", "--lang", "zh-CN"],
            &[
                "gpufleet: `--interval-ms <MS>` 的值 `5` 无效：必须在 100 到 60000 毫秒之间，实际为 5\n",
            ],
        ),
        (
            &["--lang", "zh-CN", "runbook", "relase"],
            &["gpufleet: 无法识别的子命令 `relase`\n"],
        ),
    ];
    for (words, said) in cases {
        let (code, text) = refused(&home, words);
        assert_eq!(code, Some(2), "{words:?}: {text}");
        for part in *said {
            assert!(text.contains(part), "{words:?}: {part:?} missing:\n{text}");
        }
        // clap gives no usage with a refused value.
        let has_usage = !words.contains(&"--method") && !words.contains(&"--interval-ms");
        assert_eq!(text.contains("\n用法: gpufleet "), has_usage, "{text}");
        assert!(
            text.ends_with("\n\n更多信息请加 `--help` 查看。\n"),
            "{text}"
        );
        for english in [
            "error",
            "Usage",
            "For more",
            "tip",
            "unexpected",
            "required",
        ] {
            assert!(!text.contains(english), "{english:?} in {words:?}:\n{text}");
        }
    }
    // A flag missing its value, with the language from the locale.
    let out = home
        .command(&["release", "--lang"])
        .env_remove("LC_ALL")
        .env_remove("LC_MESSAGES")
        .env("LANG", "zh_CN.UTF-8")
        .output()
        .expect("run gpufleet");
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        stderr(&out),
        "gpufleet: `--lang <LANG>` 需要一个值，但没有给出\n\n更多信息请加 `--help` 查看。\n"
    );
    // English is clap's own, byte for byte.
    let (code, text) = refused(&home, &["--bogus", "--lang", "en"]);
    assert_eq!(code, Some(2));
    assert_eq!(
        text,
        "error: unexpected argument '--bogus' found\n\n  tip: to pass '--bogus' as a value, \
         use '-- --bogus'\n\nUsage: gpufleet [OPTIONS] [HOST]... [COMMAND]\n\n\
         For more information, try '--help'.\n"
    );
    let (_, text) = refused(&home, &["--interval-ms", "5", "--lang", "en"]);
    assert_eq!(
        text,
        "error: invalid value '5' for '--interval-ms <MS>': must be from 100 to 60000 \
         milliseconds, found 5\n\nFor more information, try '--help'.\n"
    );
    let (_, text) = refused(&home, &["runbook", "--lang", "en"]);
    assert!(
        text.starts_with(
            "error: 'gpufleet runbook' requires a subcommand but one was not provided\n"
        ),
        "{text}"
    );
}

#[test]
fn help_for_a_subcommand_takes_the_language_flag_after_it() {
    let home = Home::new();
    for flag in [&["--lang", "zh-CN"][..], &["--lang=zh-CN"][..]] {
        let mut words = vec!["release"];
        words.extend(flag);
        let out = help(&home, &[], "help", &words);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        assert!(
            stdout(&out).starts_with("在平台上释放一台主机"),
            "{}",
            stdout(&out)
        );
    }
    let out = help(&home, &[], "help", &["release", "--lang", "en"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let english = help(&home, &["release".to_string()], "--help", &[]);
    assert_eq!(stdout(&out), stdout(&english));
    let out = help(&home, &[], "runbook", &["help", "run", "--lang", "zh-CN"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stdout(&out).contains("用法: gpufleet runbook run"));
}

#[test]
fn a_check_that_cannot_run_or_read_nvidia_smi_says_why_in_chinese() {
    let home = Home::new();
    // A host that refuses the connection: the check cannot run (exit 3).
    let could_not_run = |lang: &str| {
        let out = home.run(&[
            "check",
            "root@127.0.0.1:1",
            "--sustain-s",
            "0",
            "--lang",
            lang,
        ]);
        assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
        stderr(&out)
            .lines()
            .find(|l| l.starts_with("gpufleet check"))
            .unwrap_or_default()
            .to_string()
    };
    let zh = could_not_run("zh-CN");
    assert!(
        zh.starts_with("gpufleet check: 无法在主机上运行验卡：无法连接 127.0.0.1:1"),
        "{zh}"
    );
    let en = could_not_run("en");
    assert!(
        en.starts_with(
            "gpufleet check: cannot run the check on the host: cannot connect to 127.0.0.1:1"
        ),
        "{en}"
    );
    // No nvidia-smi on this machine (the harness's PATH has none): the report says so.
    let report = |lang: &str| {
        let out = home
            .command(&["check", "--local", "--sustain-s", "0", "--lang", lang])
            .env("PATH", "/nonexistent")
            .output()
            .expect("run gpufleet");
        assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
        stdout(&out)
    };
    let zh = report("zh-CN");
    assert!(
        zh.contains("nvidia-smi 未安装或不在 PATH 中（没有 NVIDIA 驱动？）。"),
        "{zh}"
    );
    assert!(!zh.contains("is not installed"), "{zh}");
    let en = report("en");
    assert!(
        en.contains("nvidia-smi is not installed or not on the PATH (no NVIDIA driver?). "),
        "{en}"
    );
}
