//! Messages of `check` and `playbook run` that only the binary shows, in Chinese with
//! `--lang zh-CN` (flags, values and runbook titles as written, the sentence translated) and in
//! English byte for byte as before. Nothing here runs a command on this machine: a bad flag is
//! refused before the check starts, and `--read-only` refuses the runbook before its first step.

use crate::cli;

use cli::{Home, stderr, stdout};

/// `gpufleet ARGS...` with the locale variables removed, so only `--lang` chooses.
fn run(home: &Home, args: &[&str]) -> std::process::Output {
    home.run_unlocalized(args)
}

#[test]
fn a_bad_expect_flag_is_refused_in_chinese_and_in_the_same_english() {
    let home = Home::new();
    let args = ["check", "--local", "--expect-count", "0"];
    let zh = run(&home, &[&["--lang", "zh-CN"], &args[..]].concat());
    assert_eq!(zh.status.code(), Some(3), "{}", stderr(&zh));
    assert_eq!(
        stderr(&zh),
        "gpufleet check: --expect-count：应为 1 到 4096 之间的整数卡数，实际为 \"0\"\n"
    );
    let en = run(&home, &[&["--lang", "en"], &args[..]].concat());
    assert_eq!(en.status.code(), Some(3), "{}", stderr(&en));
    assert_eq!(
        stderr(&en),
        "gpufleet check: --expect-count: expected a whole number of GPUs from 1 to 4096, found \"0\"\n"
    );
}

#[test]
fn a_read_only_run_of_a_runbook_that_always_changes_is_refused_in_chinese() {
    let home = Home::new();
    let args = ["--read-only", "--local", "playbook", "run", "power-limit"];
    let refused = |out: &std::process::Output| {
        stdout(out)
            .lines()
            .find(|l| l.starts_with("== ") && l.contains("--read-only"))
            .unwrap_or_default()
            .to_string()
    };
    let zh = run(&home, &[&["--lang", "zh-CN"], &args[..]].concat());
    assert_eq!(zh.status.code(), Some(3), "{}", stdout(&zh));
    assert_eq!(
        refused(&zh),
        "== 拒绝 apply：--read-only：这个运维手册必定会运行一个变更步骤（设置 GPU 的功耗上限），\
         所以什么都没有运行（可以先用 --dry-run 看看）"
    );
    let en = run(&home, &[&["--lang", "en"], &args[..]].concat());
    assert_eq!(en.status.code(), Some(3), "{}", stdout(&en));
    assert_eq!(
        refused(&en),
        "== refused apply: --read-only: this runbook always runs a change step (Set the GPU's \
         power limit); nothing was run (try --dry-run to see it)"
    );
}
