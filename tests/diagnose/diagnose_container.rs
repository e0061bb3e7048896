//! Rented containers: the failures renters paste most (shared memory, a full disk, which GPU
//! the process sees, the NVIDIA container runtime, CUDA forward compatibility, cuBLAS, other
//! frameworks' out-of-memory texts, a diverged training run), on real texts from public reports
//! (sources in `tests/fixtures/diagnose/README.md`), and the clean kernel log that is healthy.

use std::path::{Path, PathBuf};

use gpufleet::diagnose::{Diagnosis, Verdict, diagnose};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/diagnose")
}

fn read(rel: &str) -> String {
    let path = fixtures().join(rel);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn labels(d: &Diagnosis) -> Vec<&str> {
    d.findings.iter().map(|f| f.label.as_str()).collect()
}

/// `rel` gives findings with exactly these labels, in this order, and never "healthy".
fn expect(rel: &str, want: &[&str]) -> Diagnosis {
    let d = diagnose(&read(rel));
    assert_eq!(labels(&d), want, "{rel}: {:#?}", d.findings);
    assert_eq!(d.verdict, Verdict::Findings, "{rel}");
    d
}

#[test]
fn data_loader_bus_errors_are_shared_memory() {
    let d = expect("container/shm_bus_error_workers.txt", &["shm_too_small"]);
    let f = &d.findings[0];
    // The three "Unexpected bus error" lines are one line repeated; the killed worker is kept.
    assert!(
        f.evidence
            .iter()
            .any(|e| e.contains("killed by signal: Bus error")),
        "{:#?}",
        f.evidence
    );
    assert!(f.action.contains("set_sharing_strategy('file_system')"));
    assert!(f.action.contains("num_workers"));
    assert!(f.summary.contains("64 MB"));
    expect("container/shm_killed_bus_error.txt", &["shm_too_small"]);
}

#[test]
fn no_space_left_is_the_disk_and_says_where_to_write() {
    for rel in [
        "container/disk_full_safetensors.txt",
        "container/disk_full_errno28.txt",
        "container/disk_full_torch_save.txt",
    ] {
        let d = expect(rel, &["disk_full"]);
        assert!(d.findings[0].action.contains("/root/autodl-tmp"), "{rel}");
    }
}

#[test]
fn no_space_left_in_dev_shm_is_shared_memory() {
    // The same errno on a path under /dev/shm: a different fix. The disk text above with the
    // path the safetensors writer had been given moved under /dev/shm.
    let line = read("container/disk_full_errno28.txt");
    let d = diagnose(&format!("{}: '/dev/shm/tmp0001'", line.trim_end()));
    assert_eq!(labels(&d), ["shm_too_small"], "{:#?}", d.findings);
}

#[test]
fn which_gpu_the_process_sees() {
    expect(
        "container/invalid_device_ordinal.txt",
        &["invalid_device_ordinal"],
    );
    expect(
        "container/invalid_device_ordinal_thc.txt",
        &["invalid_device_ordinal"],
    );
    let d = expect("container/no_cuda_gpus.txt", &["no_cuda_gpus"]);
    assert!(d.findings[0].action.contains("nvidia-smi"));
    expect(
        "container/cuda_unknown_error_zero_devices.txt",
        &["no_cuda_gpus"],
    );
}

#[test]
fn the_container_runtime_and_forward_compatibility() {
    let d = expect(
        "container/container_cli_libnvidia_ml.txt",
        &["container_no_gpu_runtime"],
    );
    assert!(d.findings[0].summary.contains("libnvidia-ml"));
    for rel in [
        "container/compat_804_faster_whisper.txt",
        "container/compat_804_cupy.txt",
    ] {
        let d = expect(rel, &["driver_too_old_compat"]);
        assert_eq!(d.findings[0].runbook.as_deref(), Some("cuda-mismatch"));
    }
}

#[test]
fn cublas_not_initialized_says_memory_and_runtime() {
    for rel in [
        "container/cublas_not_initialized.txt",
        "container/cublas_tf_handle.txt",
    ] {
        let d = expect(rel, &["cublas_init_failed"]);
        let f = &d.findings[0];
        assert!(f.summary.contains("out of memory"), "{}", f.summary);
        assert!(f.summary.contains("runtime"), "{}", f.summary);
    }
}

#[test]
fn out_of_memory_in_tensorflow_and_vllm() {
    expect("container/tf_oom_bfc.txt", &["oom"]);
    let d = expect("container/vllm_no_cache_blocks.txt", &["oom"]);
    assert!(d.findings[0].action.contains("gpu_memory_utilization"));
    assert!(d.findings[0].action.contains("max_model_len"));
}

#[test]
fn the_kernels_api_mismatch_is_a_driver_library_mismatch() {
    expect("container/nvrm_api_mismatch.txt", &["driver_lib_mismatch"]);
    expect(
        "container/nvrm_api_mismatch_client_name.txt",
        &["driver_lib_mismatch"],
    );
}

#[test]
fn an_nccl_info_line_with_a_socket_error_is_a_network_fault() {
    let text = read("container/nccl_info_socket_retry.txt");
    let info = text
        .lines()
        .find(|l| l.contains("NCCL INFO"))
        .expect("an INFO line");
    let d = diagnose(info);
    assert_eq!(labels(&d), ["nccl_network"], "{:#?}", d.findings);
    assert_ne!(d.verdict, Verdict::Healthy);
}

#[test]
fn a_diverged_run_is_a_fault_never_healthy() {
    let d = expect("container/loss_scale_underflow.txt", &["loss_nan"]);
    assert_eq!(d.findings[0].evidence.len(), 5);
    expect("container/loss_is_nan.txt", &["loss_nan"]);
    // A step print whose loss is `nan` (padded): read from the training log itself.
    let d = expect("container/loss_nan_steps.txt", &["loss_nan"]);
    assert!(
        d.findings[0].evidence.iter().any(|e| e.contains("1,655")),
        "{:#?}",
        d.findings[0].evidence
    );
    // One overflow at a large scale is how dynamic loss scaling works: no finding.
    let d = diagnose(&read("container/loss_scale_normal.txt"));
    assert!(d.findings.is_empty(), "{:#?}", d.findings);
}

#[test]
fn a_clean_kernel_log_is_healthy() {
    let d = diagnose(&read("healthy/dmesg_nvidia_h200.txt"));
    assert_eq!(d.verdict, Verdict::Healthy, "{:#?}", d.findings);
    let d = diagnose(&read("healthy/dmesg_nvrm_570_vgpu.txt"));
    assert_eq!(d.verdict, Verdict::Healthy, "{:#?}", d.findings);
    // The kernel's "module verification failed … tainting kernel" is benign.
    let text = read("healthy/dmesg_module_unsigned_525.txt");
    assert!(text.contains("module verification failed"));
    let d = diagnose(&text);
    assert_eq!(d.verdict, Verdict::Healthy, "{:#?}", d.findings);
}

#[test]
fn the_newer_nvidia_smi_header_is_healthy() {
    // Driver 610's header says "KMD Version" and "CUDA UMD Version".
    for rel in [
        "healthy/smi_kmd_umd_610_rtx3080.txt",
        "healthy/smi_kmd_umd_610_b200.txt",
    ] {
        let text = read(rel);
        assert!(text.contains("KMD Version"), "{rel}");
        let d = diagnose(&text);
        assert_eq!(d.verdict, Verdict::Healthy, "{rel}: {:#?}", d.findings);
    }
}

#[test]
fn a_run_that_is_still_learning_is_healthy() {
    // Lightning's tqdm bar with the loss in its postfix, falling from 10.47 to 9.85.
    let d = diagnose(&read("healthy/lightning_tqdm_learning.txt"));
    assert_eq!(d.verdict, Verdict::Healthy, "{:#?}", d.findings);
    let report = d.training.as_ref().expect("read as a training log");
    let loss = report.loss.expect("the loss");
    assert_eq!((loss.step, loss.value), (5, 9.847));
    // nanoGPT's evaluation lines (and the loops that copied them), validation loss falling.
    let d = diagnose(&read("healthy/nanogpt_style_eval_learning.txt"));
    assert_eq!(d.verdict, Verdict::Healthy, "{:#?}", d.findings);
    let report = d.training.as_ref().expect("read as a training log");
    let best = report.best_eval_loss.expect("evaluations");
    assert_eq!((best.step, best.value), (31000, 1.870024));
}

#[test]
fn nanogpt_prints_give_the_loss_the_evaluations_and_the_checkpoint() {
    // `saving checkpoint to …` follows the evaluation it saves.
    let d = diagnose(&read("healthy/nanogpt_iter_eval_checkpoint.txt"));
    let report = d.training.as_ref().expect("read as a training log");
    assert_eq!(report.checkpoints, [800]);
    let eval = report.eval_loss.expect("evaluations");
    assert_eq!((eval.step, eval.value), (1000, 3.8986));
    let loss = report.loss.expect("the loss");
    assert_eq!((loss.step, loss.value), (999, 0.3390));
}

#[test]
fn an_overfitting_run_names_the_best_checkpoint_that_exists() {
    // The Trainer evaluated best at step 40 and saved only every 300 steps.
    let d = diagnose(&read("../training-logs/hf_overfit.log"));
    assert_eq!(labels(&d), ["training_overfit"], "{:#?}", d.findings);
    let report = d.training.as_ref().expect("read as a training log");
    let best = report.best_eval_loss.expect("evaluations");
    assert_eq!((best.step, best.value), (40, 2.684));
    // Each save once, though one `Saving model checkpoint` line shares its row with the bar.
    assert_eq!(report.checkpoints, [300, 600, 900, 1200]);
    let action = &d.findings[0].action;
    assert!(action.contains("step 300"), "{action}");
    assert!(
        action.contains("3.2720"),
        "the checkpoint's own eval loss: {action}"
    );
    assert!(
        !action.contains("as it was at step 40"),
        "no checkpoint exists at step 40: {action}"
    );
    assert!(action.contains("load_best_model_at_end"), "{action}");
    assert!(action.contains("ModelCheckpoint(monitor="), "{action}");
}
