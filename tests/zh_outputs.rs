//! What a Chinese reader gets outside the console, through the real binary with `--lang zh-CN`:
//! an alert's body as a real HTTP server on loopback receives it (identifiers and JSON keys
//! English, the human-readable text Chinese), the acceptance check's report on the demo's
//! simulated H200, and a curated runbook as `playbook show` prints it. Each is compared with
//! the same command in English, so a text left untranslated shows.

#[path = "support/cli.rs"]
mod cli;
#[path = "release_support/server.rs"]
mod server;

use cli::{Home, stderr, stdout};
use server::{Server, answer};

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
