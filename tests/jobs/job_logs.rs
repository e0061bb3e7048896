//! Reading a job's progress and saying when it stopped paying off: the real training logs
//! of `tests/fixtures/training-logs/` (captured on an H200 with transformers 5.17, peft 0.21,
//! lightning 2.6.6, tqdm 4.70.1; see its README) read by `gpufleet::job`, and the verdict
//! `gpufleet diagnose` gives each. Only transformers 5 was captured, so only its string-valued
//! `Trainer` dicts are tested here.

use crate::cli;

use std::path::{Path, PathBuf};

use gpufleet::diagnose::{Verdict, diagnose, diagnose_reader, render_json, render_text};
use gpufleet::job::{Format, JobLog, JobOptions, JobReport, JobState, StepValue, read_log};
use sha2::{Digest, Sha256};

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/training-logs")
}

fn bytes(name: &str) -> Vec<u8> {
    let path = dir().join(name);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn report(name: &str) -> JobReport {
    read_log(&bytes(name), JobOptions::default())
}

fn labels(name: &str) -> (Verdict, Vec<String>) {
    let d = diagnose(&String::from_utf8_lossy(&bytes(name)));
    (
        d.verdict,
        d.findings.into_iter().map(|f| f.label).collect::<Vec<_>>(),
    )
}

fn sv(step: u64, value: f64) -> StepValue {
    StepValue { step, value }
}

/// The logs are the bytes the libraries printed: each matches its checksum as captured
/// (`SHA256SUMS`, in `sha256sum`'s format), so an edit to a fixture shows.
#[test]
fn the_fixtures_are_the_captured_bytes() {
    let sums = std::fs::read_to_string(dir().join("SHA256SUMS")).expect("SHA256SUMS");
    let mut checked = Vec::new();
    for line in sums.lines() {
        let (sum, name) = line.split_once("  ").expect("a `SUM  NAME` line");
        let hex: String = Sha256::digest(bytes(name))
            .iter()
            .map(|byte| format!("{byte:02x}"))
            .collect();
        assert_eq!(hex, sum, "{name} differs from the captured log");
        checked.push(name);
    }
    for name in [
        "hf_full.log",
        "hf_lora.log",
        "hf_plateau.log",
        "lightning.log",
        "plain.log",
        "oom.log",
        "slowdata.log",
    ] {
        assert!(checked.contains(&name), "{name} has no checksum");
    }
}

#[test]
fn hugging_face_trainer_full_run() {
    let r = report("hf_full.log");
    assert!(r.formats.contains(&Format::HfTrainer));
    assert!(r.formats.contains(&Format::Tqdm));
    assert_eq!((r.step, r.total), (Some(600), Some(600)));
    assert_eq!(r.state, JobState::Completed);
    // logging_steps=20: 30 loss dicts, each at the step the bar was redrawn at after it.
    assert_eq!(r.loss_series.len(), 30);
    assert!(r.loss_series.iter().all(|p| p.step % 20 == 0));
    assert_eq!(r.loss_series[0], sv(20, 5.012));
    assert_eq!(r.loss, Some(sv(600, 0.01673)));
    // eval every 200 steps, falling: healthy.
    assert_eq!(
        r.eval_series,
        vec![sv(200, 0.02902), sv(400, 0.0105), sv(600, 0.008076)]
    );
    assert_eq!(r.best_eval_loss, Some(sv(600, 0.008076)));
    // save_steps=200: "Writing model shards" at each save.
    assert_eq!(r.checkpoints, vec![200, 400, 600]);
    assert_eq!(r.judgement, Default::default());
    assert!(r.rate_per_s.is_some_and(|v| v > 50.0));
}

#[test]
fn hugging_face_lora_run_falls_slowly_and_is_healthy() {
    let r = report("hf_lora.log");
    assert_eq!((r.step, r.total), (Some(150), Some(150)));
    assert_eq!(r.loss_series.first(), Some(&sv(10, 6.258)));
    assert_eq!(r.loss, Some(sv(150, 6.12)));
    assert!(r.eval_series.is_empty());
    assert_eq!(r.state, JobState::Completed);
    assert_eq!(r.judgement.plateau, None, "6.26 → 6.12 is still falling");
    assert_eq!(labels("hf_lora.log"), (Verdict::Healthy, vec![]));
}

#[test]
fn plateau_run_is_found_at_the_evaluation_that_makes_it_three() {
    let r = report("hf_plateau.log");
    assert_eq!((r.step, r.total), (Some(3000), Some(3000)));
    // Eval every 250 steps: 4.84 → 4.40 (README), never rising.
    assert_eq!(r.eval_series.len(), 12);
    assert_eq!(r.eval_series[0], sv(250, 4.841));
    assert_eq!(r.best_eval_loss, Some(sv(3000, 4.401)));
    assert_eq!(r.checkpoints, vec![1000, 2000, 3000]);
    assert_eq!(r.judgement.overfit, None, "eval loss never rose");
    let p = r.judgement.plateau.clone().expect("plateau");
    assert!(p.by_eval);
    // 4.444 → 4.427 at step 1750 was the last gain of 0.2 % or more; 2000, 2250, 2500 each
    // gained less.
    assert_eq!(p.since_step, 1750);
    // Streamed, the finding appears with the evaluation at step 2,500, not before.
    let log = bytes("hf_plateau.log");
    let mut job = JobLog::new(JobOptions::default());
    let mut first = None;
    for chunk in log.chunks(512) {
        job.feed(chunk);
        let now = job.report();
        if first.is_none() && now.judgement.plateau.is_some() {
            first = now.eval_loss.map(|e| e.step);
        }
    }
    assert_eq!(first, Some(2500));
    let (verdict, found) = labels("hf_plateau.log");
    assert_eq!(verdict, Verdict::Findings);
    assert_eq!(found, vec!["training_plateau"]);
}

#[test]
fn lightning_rich_bar() {
    let r = report("lightning.log");
    assert!(r.formats.contains(&Format::Lightning));
    // `Epoch 5/5 … 64/64`: 6 epochs of 64 batches.
    assert_eq!((r.step, r.total), (Some(384), Some(384)));
    assert_eq!(r.loss, Some(sv(384, 0.006)));
    assert_eq!(r.eval_loss, Some(sv(384, 0.006)));
    assert_eq!(r.state, JobState::Completed);
    assert_eq!(labels("lightning.log"), (Verdict::Healthy, vec![]));
}

#[test]
fn plain_prints_between_tqdm_bars() {
    let r = report("plain.log");
    assert!(r.formats.contains(&Format::Plain));
    assert_eq!(r.loss_series.len(), 12);
    assert_eq!(r.loss_series[0], sv(20, 3.6064));
    assert_eq!(r.loss, Some(sv(240, 0.0130)));
    // The bars count batches of one epoch (n/64); the run's total is not in the log.
    assert_eq!((r.step, r.total), (Some(240), None));
    assert_eq!(r.state, JobState::Running);
    assert_eq!(labels("plain.log"), (Verdict::Healthy, vec![]));
}

#[test]
fn slow_data_run_progress_eta_and_a_loss_that_does_not_fall() {
    let r = report("slowdata.log");
    assert_eq!((r.step, r.total), (Some(120), Some(1563)));
    // The last bar: `120/1563 [00:32<06:33,  3.66it/s]`.
    assert_eq!(r.eta_s, Some(393.0));
    assert_eq!(r.rate_per_s, Some(3.66));
    // Labels are `i % 10` of random images: the loss stays at ln(10) ≈ 2.30.
    let p = r.judgement.plateau.clone().expect("plateau");
    assert!(!p.by_eval);
    assert!(p.improvement < 0.0025);
    assert_eq!(labels("slowdata.log").1, vec!["training_plateau"]);
}

#[test]
fn out_of_memory_traceback_is_classified_by_triage() {
    let r = report("oom.log");
    assert_eq!(r.state, JobState::Crashed);
    let crash = r.crash.clone().expect("crash");
    assert!(
        crash
            .exception
            .starts_with("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 69.64 GiB"),
        "{}",
        crash.exception
    );
    // Alone, the traceback is what it always was for diagnose: an out-of-memory error.
    assert!(!r.is_training_log());
    assert_eq!(
        labels("oom.log"),
        (Verdict::Findings, vec!["oom".to_string()])
    );
}

#[test]
fn a_run_that_dies_mid_training_is_job_finished_with_the_triage_label() {
    // The first 200 steps of hf_full.log, then the real OOM traceback of oom.log: a run that
    // ran out of memory at its first evaluation.
    let full = bytes("hf_full.log");
    let text = String::from_utf8_lossy(&full);
    let cut = text.find("{'eval_loss'").expect("first eval");
    let log = format!(
        "{}\n{}",
        &text[..cut],
        String::from_utf8_lossy(&bytes("oom.log"))
    );
    let d = diagnose(&log);
    let found: Vec<&str> = d.findings.iter().map(|f| f.label.as_str()).collect();
    assert_eq!(found, vec!["oom", "job_finished"], "root cause first");
    let finished = &d.findings[1];
    assert!(
        finished.summary.contains("at step 200"),
        "{}",
        finished.summary
    );
    assert!(
        finished.summary.contains("triage: oom"),
        "{}",
        finished.summary
    );
    assert!(
        finished.action.contains("oom finding"),
        "{}",
        finished.action
    );
    assert!(finished.evidence[0].starts_with("torch.OutOfMemoryError"));
    let job = d.training.expect("a training log");
    assert_eq!(job.state, JobState::Crashed);
}

#[test]
fn streamed_and_whole_text_agree_and_render() {
    for name in [
        "hf_full.log",
        "hf_plateau.log",
        "plain.log",
        "lightning.log",
    ] {
        let b = bytes(name);
        let whole = diagnose(&String::from_utf8_lossy(&b));
        let streamed = diagnose_reader(b.as_slice(), &Default::default()).expect("read");
        assert_eq!(streamed.diagnosis(), whole, "{name}");
        let text = render_text(&whole);
        assert!(text.contains("training log ("), "{name}: {text}");
        let json: serde_json::Value =
            serde_json::from_str(&render_json(&whole, &[])).expect("json");
        assert!(json["training"]["step"].is_u64(), "{name}: {json}");
    }
    let text = render_text(&diagnose(&String::from_utf8_lossy(&bytes("hf_full.log"))));
    assert!(text.starts_with("healthy: the training run"), "{text}");
    assert!(text.contains("step 600 of 600 (100 %)"), "{text}");
    assert!(
        text.contains("checkpoints written at steps 200, 400, 600"),
        "{text}"
    );
}

#[test]
fn any_chunking_gives_the_same_report() {
    let log = bytes("hf_full.log");
    let whole = read_log(&log, JobOptions::default());
    for size in [1, 7, 333, 4096] {
        let mut job = JobLog::new(JobOptions::default());
        for chunk in log.chunks(size) {
            job.feed(chunk);
        }
        job.finish();
        assert_eq!(job.report(), whole, "chunks of {size}");
    }
    // Line by line, decoded, as `diagnose` hands lines over: the same report for every log.
    for name in [
        "hf_full.log",
        "hf_plateau.log",
        "lightning.log",
        "plain.log",
        "oom.log",
    ] {
        let b = bytes(name);
        let text = String::from_utf8_lossy(&b);
        let mut job = JobLog::new(JobOptions::default());
        for line in text.lines() {
            job.feed_text_line(line);
        }
        job.finish();
        assert_eq!(job.report(), read_log(&b, JobOptions::default()), "{name}");
    }
}

#[test]
fn diagnose_command_on_training_logs() {
    let home = cli::Home::new();
    let path = |name: &str| dir().join(name).to_string_lossy().into_owned();
    let out = home.run(&["diagnose", &path("hf_lora.log")]);
    assert_eq!(out.status.code(), Some(0), "{}", cli::stderr(&out));
    let text = cli::stdout(&out);
    assert!(text.starts_with("healthy: the training run"), "{text}");
    assert!(text.contains("step 150 of 150 (100 %)"), "{text}");

    let out = home.run(&["diagnose", "--json", &path("hf_plateau.log")]);
    assert_eq!(out.status.code(), Some(1));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(json["verdict"], "findings");
    assert_eq!(json["findings"][0]["label"], "training_plateau");
    assert_eq!(json["training"]["judgement"]["plateau"]["since_step"], 1750);
    assert_eq!(json["training"]["best_eval_loss"]["step"], 3000);
    assert_eq!(json["training"]["state"], "completed");
    assert_eq!(
        json["training"]["checkpoints"],
        serde_json::json!([1000, 2000, 3000])
    );

    // From standard input, as pasted.
    let mut child = home
        .command(&["diagnose", "-"])
        .stdin(std::process::Stdio::piped())
        .spawn()
        .expect("spawn");
    {
        use std::io::Write as _;
        let mut stdin = child.stdin.take().expect("stdin");
        stdin.write_all(&bytes("plain.log")).expect("write");
    }
    let out = child.wait_with_output().expect("wait");
    assert_eq!(out.status.code(), Some(0), "{}", cli::stdout(&out));
}

#[test]
fn a_user_pattern_reads_steps_and_losses() {
    // plain.log's own lines, read through a pattern instead of the built-in reader: the same
    // steps and losses.
    let pattern =
        gpufleet::job::UserPattern::new(r"step (?P<step>\d+) loss (?P<loss>[0-9.]+)").expect("ok");
    let r = read_log(
        &bytes("plain.log"),
        JobOptions {
            pattern: Some(pattern),
            ..Default::default()
        },
    );
    assert!(r.formats.contains(&Format::UserPattern));
    assert_eq!(r.loss, Some(sv(240, 0.0130)));
}

#[test]
fn memory_stays_bounded_and_hostile_bytes_do_not_panic() {
    // plain.log's step prints, a hundred thousand times over (the same real line format).
    let mut job = JobLog::new(JobOptions::default());
    for step in 0..100_000u64 {
        job.feed(format!("step {step} loss {:.4}\n", 3.0 / (step + 1) as f64).as_bytes());
    }
    job.finish();
    let r = job.report();
    assert!(r.loss_series.len() <= gpufleet::job::log::SERIES_POINTS);
    assert_eq!(r.loss.map(|p| p.step), Some(99_999));
    assert!(job.tail().count() <= gpufleet::job::log::TAIL_LINES);
    // Bytes that are no format at all, and numbers meant to overflow.
    let mut job = JobLog::new(JobOptions::default());
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    for _ in 0..200_000 {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        job.feed(&state.to_le_bytes());
    }
    job.feed("Epoch 18446744073709551615/18446744073709551615 ━ 18446744073709551615/18446744073709551615 0:00 • 0:00 1it/s\n".as_bytes());
    job.feed(b"\x1b[999999999999999999A\x1b]0;\x07 1/18446744073709551615 [00:00<00:00, 1it/s]\n");
    job.finish();
    let _ = job.report();
}
