//! What a Chinese reader gets outside the console, through the real binary with `--lang zh-CN`:
//! an alert's body as a real HTTP server on loopback receives it (identifiers and JSON keys
//! English, the human-readable text Chinese), the acceptance check's report on the demo's
//! simulated H200, a curated runbook as `playbook show` prints it, `diagnose` on real logs
//! (text and JSON), and the alert `gpufleet watch` sends when a real sshd host loses its GPU. Each is compared with
//! the same command in English, so a text left untranslated shows.

use crate::cli;
use crate::common;
use crate::provider_api;
use crate::release_server as server;
use crate::watcher;

use std::time::Duration;

use cli::{Home, stderr, stdout};
use common::sshd::Sshd;
use server::{Server, answer};
use watcher::Watcher;

/// `gpufleet alert test --lang LANG` against one `kind` sink on a loopback server: the body
/// the server received and the command's stdout.
fn alert_test(kind: &str, lang: &str) -> (server::Recorded, String) {
    let home = Home::new();
    let server = Server::start(vec![answer(200, "ok")]);
    let config = home.write(
        "config.toml",
        &format!("[[alerts]]\nkind = \"{kind}\"\nurl_env = \"ALERT_URL\"\n"),
    );
    let out = home
        .command(&["alert", "test", "--lang", lang, "--config", &config])
        .env("ALERT_URL", format!("{}/hook", server.base_url))
        .stdin(std::process::Stdio::null())
        .output()
        .expect("run gpufleet");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        stdout(&out),
        stderr(&out)
    );
    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    (requests[0].clone(), stdout(&out))
}

#[test]
fn an_alert_in_chinese_keeps_its_identifiers_and_json_keys_english() {
    let (request, said) = alert_test("webhook", "zh-CN");
    let body = request.json();
    assert_eq!(
        body["summary"], "来自 `gpufleet alert test` 的测试告警：此接收端工作正常",
        "{body}"
    );
    assert_eq!(body["label"], "test", "{body}");
    assert_eq!(body["state"], "firing", "{body}");
    assert_eq!(body["severity"], "info", "{body}");
    assert!(said.contains("webhook：已投递"), "{said}");

    // A chat service gets the whole text: state and severity in Chinese, label as it is.
    let (request, _) = alert_test("slack", "zh-CN");
    let text = request.json()["text"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(text.starts_with("[触发中 提示] gpufleet：test\n"), "{text}");
    assert!(text.contains("\n时间 "), "{text}");

    let (request, said) = alert_test("slack", "en");
    let text = request.json()["text"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(text.starts_with("[FIRING info] gpufleet: test\n"), "{text}");
    assert!(text.contains("this sink works\nat "), "{text}");
    assert!(said.contains("slack: delivered"), "{said}");
}

#[test]
fn the_check_report_in_chinese() {
    let home = Home::new();
    let out = home.run(&["check", "--demo", "--speed", "1000", "--lang", "zh-CN"]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(0), "{text}\n{}", stderr(&out));
    for needle in [
        "gpufleet 验卡：flaky-h200",
        "— 通过（退出码 0）",
        "\n身份\n",
        "\n健康\n",
        "\n可用显存\n",
        "  通过  ",
        "未指定卡数；这是主机实际的卡。",
        "几乎全部显存都能分配，且写入的内容能正确保存。",
        "达到健康 H200 的 ",
        "结果：通过 — ",
        " 项通过，",
        "驱动 ",
    ] {
        assert!(text.contains(needle), "{needle:?} missing:\n{text}");
    }
    for english in [
        "Identity",
        "Health",
        "Result:",
        "Expected:",
        "of what a healthy",
        "Almost all",
        " pass ",
        "driver ",
    ] {
        assert!(!text.contains(english), "{english:?} left in:\n{text}");
    }
    // Figures are written as in English.
    assert!(text.contains(" GiB"), "{text}");

    let english = stdout(&home.run(&["check", "--demo", "--speed", "1000", "--lang", "en"]));
    for needle in [
        "\nIdentity\n",
        "Result: PASS — ",
        "No GPU count was expected; this is what the host has.",
    ] {
        assert!(english.contains(needle), "{needle:?} missing:\n{english}");
    }
}

#[test]
fn a_runbook_in_chinese_keeps_its_id_and_commands() {
    let home = Home::new();
    let out = home.run(&["playbook", "show", "gpu-lost", "--lang", "zh-CN"]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(0), "{text}\n{}", stderr(&out));
    for needle in [
        "gpu-lost",
        "找回掉卡：先取证，能重置就重置，否则重启并复查",
        "读取内核中的 GPU 日志行",
        "重启实例",
        "nvidia-smi",
    ] {
        assert!(text.contains(needle), "{needle:?} missing:\n{text}");
    }
    for english in [
        "Recover a lost GPU",
        "Reboot the instance",
        "Read the kernel's GPU lines",
    ] {
        assert!(!text.contains(english), "{english:?} left in:\n{text}");
    }
    let english = stdout(&home.run(&["playbook", "show", "gpu-lost", "--lang", "en"]));
    assert!(english.contains("Recover a lost GPU"), "{english}");
}

#[test]
fn the_snapshot_table_header_in_chinese_lines_up_with_its_rows() {
    let home = Home::new();
    let table = |lang: &str| {
        let out = home.run(&["snapshot", "--demo", "--lang", lang]);
        // 1: a demo host is not live, as the demo fleet has it.
        assert!(matches!(out.status.code(), Some(0 | 1)), "{}", stderr(&out));
        stdout(&out)
    };
    let zh = table("zh-CN");
    let en = table("en");
    let header = zh.lines().next().unwrap_or_default();
    for title in [
        "主机",
        "状态",
        "卡型",
        "利用",
        "显存 GiB",
        "温度",
        "功耗 W",
        "时钟事件",
    ] {
        assert!(header.contains(title), "{title} missing: {header}");
    }
    // The same columns in display cells as the English header: each title ends where it does.
    let english = en.lines().next().unwrap_or_default();
    let ends = |line: &str| -> Vec<usize> {
        let mut at = 0;
        let mut out = Vec::new();
        for word in line.split_inclusive(' ') {
            at += gpufleet::cells::width(word);
            if !word.trim().is_empty() {
                out.push(at - (word.len() - word.trim_end().len()));
            }
        }
        out
    };
    let (zh_ends, en_ends) = (ends(header), ends(english));
    // Right-aligned columns (GPU, UTIL, VRAM GiB, TEMP, POWER W, SM MHz) end at the same cells.
    for end in [35, 64, 80, 87, 101, 112] {
        assert!(
            en_ends.contains(&end),
            "english {end}: {en_ends:?}\n{english}"
        );
        assert!(
            zh_ends.contains(&end),
            "chinese {end}: {zh_ends:?}\n{header}"
        );
    }
    // The rows are the same in both languages.
    assert_eq!(zh.lines().nth(1), en.lines().nth(1));
}

/// A real kernel log of a GPU that fell off the bus (an AER error, then Xid 79).
const XID_79: &str = "tests/fixtures/diagnose/kernel/aer_port_then_xid79.txt";

fn fixture(path: &str) -> String {
    format!("{}/{path}", env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn diagnose_in_chinese_gives_the_meaning_and_action_in_chinese_with_english_labels() {
    let home = Home::new();
    let file = fixture(XID_79);
    let out = home.run(&["--lang", "zh-CN", "diagnose", &file]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "{text}\n{}", stderr(&out));
    for needle in [
        "发现：2 条\n",
        "严重 xid_79 (GPU 0000:02:00",
        "Xid 79（ROBUST_CHANNEL_GPU_HAS_FALLEN_OFF_THE_BUS）：GPU 从总线上掉了（掉卡）",
        "NVIDIA 的即时处理建议：RESTART_BM。",
        "\n  处理：重启实例（重置 GPU 救不回来）",
        "严重 gpu_lost (GPU 0000:02:00",
        "\n  运维手册：gpu-lost\n",
        "\n  证据：\n    [74889.644138] NVRM: Xid (PCI:0000:02:00): 79, GPU has fallen off the bus.",
    ] {
        assert!(text.contains(needle), "{needle:?} missing:\n{text}");
    }
    for english in [
        "findings:",
        "action:",
        "Reboot the instance",
        "CRITICAL",
        "runbook:",
    ] {
        assert!(!text.contains(english), "{english:?} left in:\n{text}");
    }
    // English is as it always was.
    let english = stdout(&home.run(&["--lang", "en", "diagnose", &file]));
    assert!(english.starts_with("findings: 2\n"), "{english}");
    assert!(
        english.contains(
            "\n  action: Reboot the instance (a GPU reset cannot bring it back). If it falls off \
             again on this host, release the host and rent another, and give the provider the \
             Xid lines.\n"
        ),
        "{english}"
    );
}

#[test]
fn diagnose_json_in_chinese_keeps_its_keys_and_identifiers_english() {
    let home = Home::new();
    let file = fixture(XID_79);
    let json = |lang: &str| -> serde_json::Value {
        let out = home.run(&["--lang", lang, "diagnose", "--json", &file]);
        serde_json::from_str(&stdout(&out)).expect("JSON")
    };
    let (zh, en) = (json("zh-CN"), json("en"));
    assert_eq!(zh["verdict"], "findings", "{zh}");
    let (zh_findings, en_findings) = (
        zh["findings"].as_array().expect("findings"),
        en["findings"].as_array().expect("findings"),
    );
    assert_eq!(zh_findings.len(), en_findings.len());
    for (z, e) in zh_findings.iter().zip(en_findings) {
        let keys = |v: &serde_json::Value| -> Vec<String> {
            v.as_object().expect("object").keys().cloned().collect()
        };
        assert_eq!(keys(z), keys(e), "{z}");
        for identifier in ["label", "severity", "runbook", "pci", "uuid", "evidence"] {
            assert_eq!(z[identifier], e[identifier], "{identifier}: {z}");
        }
        assert_ne!(z["summary"], e["summary"], "{z}");
        assert_ne!(z["action"], e["action"], "{z}");
    }
    let gpu_lost = zh_findings
        .iter()
        .find(|f| f["label"] == "gpu_lost")
        .expect("gpu_lost");
    assert!(
        gpu_lost["summary"]
            .as_str()
            .is_some_and(|s| s.starts_with("掉卡：")),
        "{gpu_lost}"
    );
    assert!(
        gpu_lost["action"]
            .as_str()
            .is_some_and(|s| s.contains("释放")),
        "{gpu_lost}"
    );
}

#[test]
fn diagnose_speaks_the_configs_language_and_keeps_figures_as_they_are() {
    let home = Home::new();
    let config = home.write("config.toml", "language = \"zh-CN\"\n");
    let file = fixture("tests/fixtures/training-logs/hf_plateau.log");
    let run = |extra: &[&str]| {
        let mut args = vec!["--config", config.as_str()];
        args.extend_from_slice(extra);
        args.extend(["diagnose", file.as_str()]);
        let out = home
            .command(&args)
            .env("LANG", "C.UTF-8")
            .env_remove("LC_ALL")
            .env_remove("LC_MESSAGES")
            .output()
            .expect("run gpufleet");
        stdout(&out)
    };
    let zh = run(&[]);
    let en = run(&["--lang", "en"]);
    assert!(zh.contains("训练日志（"), "{zh}");
    assert!(zh.contains("training_plateau"), "{zh}");
    assert!(zh.contains("再跑下去多半不值这个钱"), "{zh}");
    assert!(en.contains("training log ("), "{en}");
    assert!(
        en.contains("More steps are unlikely to pay for themselves"),
        "{en}"
    );
    // Every figure of the English report is in the Chinese one, written the same way.
    let figures = |text: &str| -> Vec<String> {
        text.split(|c: char| !(c.is_ascii_digit() || c == '.' || c == ','))
            .map(|w| w.trim_matches(|c| c == '.' || c == ','))
            .filter(|w| w.chars().any(|c| c.is_ascii_digit()))
            .map(str::to_string)
            .collect()
    };
    let zh_figures = figures(&zh);
    for figure in figures(&en) {
        assert!(zh_figures.contains(&figure), "{figure} missing:\n{zh}");
    }
}

/// `gpufleet watch` on a config that says `language = "zh-CN"`, with a real sshd host whose
/// GPU falls off the bus: the webhook's alert carries the finding's meaning and action in
/// Chinese, its label, severity and keys as in English.
#[test]
fn a_lost_gpus_alert_from_the_watcher_follows_the_configs_language() {
    let Some(sshd) = Sshd::start() else { return };
    sshd.set_scenario("gpu-lost");
    let home = Home::new();
    let known_hosts = home.write("known_hosts", &sshd.known_hosts_line("ed25519"));
    let hook = Server::start(vec![answer(200, "{}")]);
    let config = home.write(
        "config.toml",
        &format!(
            "language = \"zh-CN\"\ninterval_ms = 500\n\n[[hosts]]\nname = \"h200-lost\"\n\
             ssh = \"{}@127.0.0.1:{}\"\nidentity_file = \"{}\"\n\n\
             [[alerts]]\nkind = \"webhook\"\nurl = \"{}/hook\"\n",
            sshd.user,
            sshd.port,
            sshd.client_key().display(),
            hook.base_url
        ),
    );
    let log = home.path().join("watch.log");
    let watching = Watcher::start(
        &cli::binary(),
        std::path::Path::new(&config),
        std::path::Path::new(&known_hosts),
        &home.path().join("state"),
        &log,
    );
    let alert = || {
        hook.requests()
            .into_iter()
            .map(|r| r.json())
            .find(|a| a["label"] == "gpu_lost")
    };
    watcher::wait_until(
        "a gpu_lost alert",
        Duration::from_secs(40),
        &|| watching.log(),
        || alert().is_some(),
    );
    let body = alert().unwrap_or_default();
    assert_eq!(body["host"], "h200-lost", "{body}");
    assert_eq!(body["severity"], "critical", "{body}");
    assert_eq!(body["state"], "firing", "{body}");
    assert_eq!(body["runbook"], "gpu-lost", "{body}");
    let summary = body["summary"].as_str().unwrap_or_default();
    assert!(summary.starts_with("掉卡："), "{body}");
    assert!(!summary.contains("fallen off the bus"), "{body}");
}

#[test]
fn the_checks_measured_figures_in_chinese_keep_their_numbers() {
    let home = Home::new();
    let run = |lang: &str| {
        let out = home.run(&["check", "--demo", "--speed", "1000", "--lang", lang]);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        stdout(&out)
    };
    let (zh, en) = (run("zh-CN"), run("en"));
    for needle in [
        " GiB 已被占用（含探针的 CUDA 上下文）",
        "≥ 卡的 85%，读回内容无误",
        "全 1 矩阵",
        "GiB 缓冲区，读 + 写",
        "SM 平均 ",
        "无过热降频、无硬件降频、无功耗制动",
    ] {
        assert!(zh.contains(needle), "{needle:?} missing:\n{zh}");
    }
    for english in [
        "already in use",
        "read back intact",
        "of ones",
        "buffers, read + write",
        " MHz mean",
        "no power brake",
        "datasheet",
    ] {
        assert!(!zh.contains(english), "{english:?} left in:\n{zh}");
    }
    for needle in [
        "already in use (incl. the probe's CUDA context)",
        " MHz mean",
    ] {
        assert!(en.contains(needle), "{needle:?} missing:\n{en}");
    }
}

#[test]
fn a_crossed_budget_red_line_in_chinese_keeps_its_money_figures() {
    let home = Home::new();
    let red_line = |lang: &str| {
        let out = home.run(&["cost", "--demo", "--lang", lang]);
        stdout(&out)
            .lines()
            .find(|l| l.starts_with("! train-h100x8"))
            .unwrap_or_default()
            .to_string()
    };
    let (zh, en) = (red_line("zh-CN"), red_line("en"));
    assert!(en.contains(": spent "), "{en}");
    assert!(zh.contains("：已花费 "), "{zh}");
    assert!(zh.contains("，超过预算 "), "{zh}");
    let money = |line: &str| -> Vec<String> {
        line.split(|c: char| !(c.is_ascii_digit() || c == '.'))
            .filter(|w| w.contains('.'))
            .map(str::to_string)
            .collect()
    };
    assert_eq!(money(&zh), money(&en), "{zh}\n{en}");
    assert_eq!(zh.matches(" USD").count(), 2, "{zh}");
}

#[test]
fn command_line_errors_and_config_check_in_chinese() {
    let home = Home::new();
    // A mistyped subcommand: the refusal and its suggestion, the words as typed.
    let out = home.run(&["--lang", "zh-CN", "snapshott"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let said = stderr(&out);
    assert!(said.contains("`snapshott` 既不是子命令"), "{said}");
    assert!(said.contains("你是不是想输入 `snapshot`"), "{said}");
    let english = stderr(&home.run(&["--lang", "en", "snapshott"]));
    assert!(
        english.contains("`snapshott` is not a subcommand"),
        "{english}"
    );
    assert!(english.contains("did you mean `snapshot`?"), "{english}");

    // `config check` runs before the config is loaded, yet speaks the config's language.
    let config = home.write(
        "config.toml",
        "language = \"zh-CN\"\n\n[[hosts]]\nname = \"a100\"\nssh = \"root@127.0.0.1:22\"\n",
    );
    let out = home
        .command(&["config", "check", "--config", &config])
        .env("LANG", "C.UTF-8")
        .env_remove("LC_ALL")
        .env_remove("LC_MESSAGES")
        .output()
        .expect("run gpufleet");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out), format!("正常：1 台主机（{config}）\n"));

    // `hold` on a host the config lacks.
    let out = home.run(&["--lang", "zh-CN", "--config", &config, "hold", "nosuch"]);
    assert_eq!(out.status.code(), Some(2), "{}", stdout(&out));
    let said = format!("{}{}", stdout(&out), stderr(&out));
    assert!(
        said.contains("gpufleet hold: 配置中没有名为 \"nosuch\" 的主机"),
        "{said}"
    );
}

/// Where each word of `line` ends, in display cells (a CJK character takes two).
fn word_ends(line: &str) -> Vec<usize> {
    let mut at = 0;
    let mut out = Vec::new();
    for word in line.split_inclusive(' ') {
        at += gpufleet::cells::width(word);
        if !word.trim().is_empty() {
            out.push(at - (word.len() - word.trim_end().len()));
        }
    }
    out
}

#[test]
fn the_cost_table_in_chinese_lines_up_and_keeps_its_figures() {
    let home = Home::new();
    let report = |lang: &str| stdout(&home.run(&["cost", "--demo", "--lang", lang]));
    let (zh, en) = (report("zh-CN"), report("en"));
    let zh_lines: Vec<&str> = zh.lines().collect();
    let en_lines: Vec<&str> = en.lines().collect();
    assert_eq!(zh_lines.len(), en_lines.len(), "{zh}\n{en}");
    assert!(zh_lines[0].starts_with("[模拟] 演示机群开始后 "), "{zh}");
    assert!(zh_lines[0].ends_with("；不产生任何计费"), "{zh}");
    let header = zh_lines[1];
    let titles: Vec<&str> = header.split_whitespace().collect();
    assert_eq!(
        titles,
        [
            "主机",
            "单价/h",
            "计费时长",
            "忙碌",
            "空闲",
            "占显存",
            "有效",
            "花费",
            "空闲花费",
            "当前"
        ],
        "{header}"
    );
    // Each right-aligned title (price to idle spent) ends, in display cells, where the money
    // and the times of every host's row end.
    let title_ends = word_ends(header);
    for row in &zh_lines[2..8] {
        let row_ends = word_ends(row);
        for end in &title_ends[1..9] {
            assert!(row_ends.contains(end), "{end}: {header}\n{row}");
        }
    }
    // The same figures in both languages, line by line: money, times, percentages.
    let figures = |line: &str| -> Vec<String> {
        line.split(|c: char| c.is_whitespace() || ":,：，()（）".contains(c))
            .filter(|w| w.chars().any(|c| c.is_ascii_digit()))
            .map(str::to_string)
            .collect()
    };
    for (z, e) in zh_lines.iter().zip(&en_lines).skip(1) {
        assert_eq!(figures(z), figures(e), "{z}\n{e}");
    }
    for (z, e) in zh_lines.iter().zip(&en_lines).skip(2) {
        assert_eq!(e.contains("  idle "), z.contains("  空闲 "), "{z}\n{e}");
    }
    assert!(zh.contains("\n机群 "), "{zh}");
}

#[test]
fn the_fit_table_in_chinese_lines_up_and_keeps_its_figures() {
    let home = Home::new();
    let args = [
        "--params", "7B", "--method", "qlora", "--seq", "2048", "--batch", "4",
    ];
    let report = |lang: &str| {
        let mut words = vec!["fit", "--lang", lang];
        words.extend(args);
        let out = home.run(&words);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        stdout(&out)
    };
    let (zh, en) = (report("zh-CN"), report("en"));
    let zh_lines: Vec<&str> = zh.lines().collect();
    let en_lines: Vec<&str> = en.lines().collect();
    assert_eq!(zh_lines.len(), en_lines.len(), "{zh}\n{en}");
    assert!(zh_lines[0].contains(" 参数，QLoRA（"), "{zh}");
    assert!(zh_lines[1].starts_with("  权重 "), "{zh}");
    assert!(zh.contains("\n  激活值 "), "{zh}");
    assert!(zh.contains("\n最小的卡："), "{zh}");
    // The breakdown's figures end in the same display cell in both languages.
    for (z, e) in zh_lines.iter().zip(&en_lines).take(6).skip(1) {
        let end = |line: &str| {
            let at = line.find(" GB").unwrap_or_default() + 3;
            gpufleet::cells::width(&line[..at])
        };
        assert_eq!(end(z), end(e), "{z}\n{e}");
    }
    let header_at = zh_lines
        .iter()
        .position(|l| l.starts_with("GPU "))
        .unwrap_or_default();
    let header = zh_lines[header_at];
    for title in ["显存", "bf16 TFLOP/s", "带宽", "能否放下", "你的主机"] {
        assert!(header.contains(title), "{title}: {header}");
    }
    // The right-aligned titles (VRAM, TFLOP/s, bandwidth, fit) end where each row's figures do.
    let title_ends = word_ends(header);
    let rows = &zh_lines[header_at + 1..];
    let row_count = rows.iter().take_while(|l| !l.is_empty()).count();
    assert!(row_count >= 5, "{zh}");
    for row in &rows[..row_count] {
        // Where the cells end: `(3` is inside the fit cell `fits (3 %)`, not its end.
        let row_ends: Vec<usize> = word_ends(row)
            .into_iter()
            .zip(row.split_whitespace())
            .filter(|(_, word)| !word.starts_with('('))
            .map(|(end, _)| end)
            .collect();
        for title in ["显存", "TFLOP/s", "带宽", "能否放下"] {
            let before = header.find(title).unwrap_or_default() + title.len();
            let end = gpufleet::cells::width(&header[..before]);
            assert!(title_ends.contains(&end), "{title}: {header}");
            assert!(row_ends.contains(&end), "{title} at {end}: {header}\n{row}");
        }
    }
    // The rows' figures are the English rows' figures.
    let figures = |line: &str| -> Vec<String> {
        line.split(|c: char| c.is_whitespace() || "()（）".contains(c))
            .filter(|w| w.chars().any(|c| c.is_ascii_digit()))
            .map(str::to_string)
            .collect()
    };
    for (z, e) in zh_lines.iter().zip(&en_lines).skip(header_at + 1) {
        assert_eq!(figures(z), figures(e), "{z}\n{e}");
    }
}

/// A vast.ai account on a loopback server with two instances, one running with SSH, one
/// stopped; `gpufleet providers sync` and `cost` in both languages on it.
#[test]
fn the_providers_table_and_the_cost_accounts_in_chinese() {
    let server = provider_api::Server::start(|_, _| {
        provider_api::json(
            200,
            r#"{"success": true, "next_token": null, "instances": [
 {"id": 101, "label": "train", "actual_status": "running", "ssh_host": "ssh5.vast.ai",
  "ssh_port": 10600, "dph_total": 0.712},
 {"id": 102, "label": "parked", "actual_status": "stopped", "ssh_host": "ssh7.vast.ai",
  "ssh_port": 20400, "dph_total": 0.002}]}"#,
        )
    });
    let home = Home::new();
    let config = home.write(
        "c.toml",
        &format!(
            "[[providers]]\nkind = \"vast\"\ntoken_env = \"VAST_KEY\"\nbase_url = \"{}\"\n",
            server.base_url
        ),
    );
    let run = |args: &[&str]| {
        let mut words = vec!["--config", config.as_str()];
        words.extend(args);
        home.command(&words)
            .env("VAST_KEY", "vk-zh-2718")
            .output()
            .expect("run gpufleet")
    };
    let sync = |lang: &str| {
        let out = run(&["providers", "sync", "--lang", lang]);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        stdout(&out)
    };
    let (zh, en) = (sync("zh-CN"), sync("en"));
    let (zh_lines, en_lines): (Vec<&str>, Vec<&str>) = (zh.lines().collect(), en.lines().collect());
    assert_eq!(zh_lines.len(), en_lines.len(), "{zh}\n{en}");
    // The titles start in the same display cells as the English ones: the columns line up.
    let starts = |line: &str| -> Vec<usize> {
        let mut at = 0;
        let mut out = Vec::new();
        let mut prev = ' ';
        for c in line.chars() {
            if prev == ' ' && c != ' ' {
                out.push(at);
            }
            at += gpufleet::cells::char_width(c);
            prev = c;
        }
        out
    };
    for title in [
        "平台",
        "账户",
        "实例",
        "标签",
        "状态",
        "卡",
        "SSH",
        "单价",
        "开始时间",
    ] {
        assert!(zh_lines[0].contains(title), "{title}: {}", zh_lines[0]);
    }
    assert_eq!(starts(zh_lines[0]), starts(en_lines[0]), "{zh}\n{en}");
    // The instances' rows are the same in both languages (ids, states, prices, times), but
    // for the word saying the SSH route goes through the provider's proxy.
    for (z, e) in zh_lines[1..3].iter().zip(&en_lines[1..3]) {
        assert!(z.contains("（代理）"), "{z}");
        assert_eq!(z.replace("（代理）", " (proxy)"), **e, "{zh}\n{en}");
    }
    let account = zh_lines.last().copied().unwrap_or_default();
    assert_eq!(account, "vast 账户 vast：已同步，2 个实例", "{zh}");
    assert_eq!(
        en_lines.last().copied().unwrap_or_default(),
        "vast account vast: synced, 2 instances"
    );

    // `cost` names the account and how fresh its inventory is, in Chinese.
    let out = run(&["cost", "--lang", "zh-CN"]);
    let said = stdout(&out);
    assert!(said.contains("\n平台账户：\n  vast vast："), "{said}");
    assert!(said.contains(" s 前同步"), "{said}");
    // The stopped instance, whose disk may still bill, in Chinese with its name as it is.
    assert!(
        said.contains("\n  已关机：vast vast 102 (parked)："),
        "{said}"
    );
    assert_eq!(out.status.code(), Some(1), "{said}");
}
