//! The playbook runner's own words in Simplified Chinese: a step whose program is
//! missing, shown to a user who chose `zh-CN`, is explained in Chinese, and so is the PyTorch
//! install advice; the audit log keeps its
//! outcome word (`failed`), an identifier its readers match. The language is the process's:
//! the test holds the binary's language lock.

use gpufleet::audit::AuditLog;
use gpufleet::config::lang::Lang;
use gpufleet::runbook::{
    AssumeYes, LocalExecutor, RunOptions, RunOutcome, TextObserver, Tools, UndoStore,
    parse_runbook, run,
};
use gpufleet::telemetry::source::StopFlag;

#[test]
fn a_missing_program_and_the_lines_a_filter_hid_are_explained_in_chinese() {
    let _language = crate::language();
    Lang::ZhCn.apply();
    let tmp = tempfile::tempdir().expect("temp");
    let mut exec = LocalExecutor::new("local");
    let audit = AuditLog::at(tmp.path().join("state/audit.jsonl"));
    let undo = UndoStore::beside(audit.path());
    let book = parse_runbook(
        r#"
id = "missing"
title = "Missing"
summary = "Runs a tool that is not there, then one whose lines a filter hides."
[[steps]]
id = "hidden"
title = "Print"
why = "To see."
danger = "read"
command = ["printf", "a\nb\nc\n"]
show = ["zzz"]
[[steps]]
id = "run"
title = "Run it"
why = "To see."
danger = "read"
command = ["gpufleet-no-such-tool"]
"#,
        "test",
    )
    .expect("runbook");
    let mut observer = TextObserver::new(Vec::new());
    let report = run(
        &book,
        &[],
        &RunOptions::default(),
        Tools {
            exec: &mut exec,
            confirmer: &mut AssumeYes,
            observer: &mut observer,
            audit: &audit,
            undo: &undo,
            stop: &StopFlag::default(),
        },
    );
    let text = String::from_utf8(observer.into_inner()).expect("utf-8");
    assert!(
        matches!(report.outcome, RunOutcome::Failed { .. }),
        "{text}"
    );
    assert!(text.contains("另有 3 行未显示"), "{text}");
    assert!(
        text.contains("local 上没有安装 gpufleet-no-such-tool（退出码 127）"),
        "{text}"
    );
    assert!(!text.contains("is not installed"), "{text}");
    // The run as text: its heading, each step's end and the run's end.
    assert!(text.contains("== missing · local：Missing"), "{text}");
    assert!(text.contains("失败（退出码 127，"), "{text}");
    assert!(text.contains("== 在 run 失败："), "{text}");
    assert!(!text.contains("FAILED"), "{text}");
    // Why its check failed.
    assert!(text.contains("期望的退出状态为 0"), "{text}");
    assert!(!text.contains("expected exit status"), "{text}");
    let outcomes: Vec<String> = audit
        .read_all()
        .expect("audit")
        .into_iter()
        .map(|e| e.outcome)
        .collect();
    assert_eq!(outcomes, ["ok", "failed"]);

    // The `torch-install` advice: the sentences in Chinese, the command to run as it is.
    let mut facts = gpufleet::runbook::facts::Facts::default();
    for (name, value) in [
        ("driver_cuda", "12.8"),
        ("torch_capability", "9.0"),
        ("torch_version", "2.11.0+cu130"),
        ("torch_cuda", "13.0"),
        ("torch_archs", "sm_75 sm_80 sm_86 sm_90 sm_100 sm_120"),
    ] {
        facts.set(name, value);
    }
    let advice = gpufleet::runbook::advice::torch_install(&facts, None).join("\n");
    assert!(advice.contains("驱动最高支持 CUDA 12.8"), "{advice}");
    assert!(
        advice.contains("请安装为 CUDA 12.8 构建、带有 sm_90 内核的版本"),
        "{advice}"
    );
    assert!(
        advice.contains(
            "python3 -m pip install --upgrade torch --index-url https://download.pytorch.org/whl/cu128"
        ),
        "{advice}"
    );
}
