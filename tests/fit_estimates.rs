//! Issue 19, "Choose the card before paying": `gpufleet fit`'s estimates against published
//! figures (sources in docs/FIT.md), and the command as a user runs it.

#[path = "support/cli.rs"]
mod cli;

use gpufleet::job::fit::{
    CardFit, FitInput, GB, Method, Optimizer, Precision, estimate, optimizer_bytes_per_param,
};

fn input(params: f64, method: Method, precision: Precision, optimizer: Optimizer) -> FitInput {
    FitInput {
        params,
        method,
        precision,
        optimizer,
        seq: None,
        batch: None,
    }
}

fn full_adam(params: f64, precision: Precision) -> f64 {
    estimate(input(params, Method::Full, precision, Optimizer::Adamw)).static_bytes()
}

#[test]
fn zero_paper_sixteen_bytes_per_parameter() {
    // ZeRO §3.1: 2Ψ + 2Ψ + 12Ψ; a 1.5B GPT-2 needs at least 24 GB, and Figure 1's 7.5B model
    // 120 GB.
    assert!((full_adam(1.5e9, Precision::Fp16) - 24.0 * GB).abs() < 1e6);
    assert!((full_adam(7.5e9, Precision::Bf16) - 120.0 * GB).abs() < 1e6);
    // fp32 Adam: 4 + 4 + 8, the same 16 bytes.
    assert!((full_adam(7.5e9, Precision::Fp32) - 120.0 * GB).abs() < 1e6);
    let e = estimate(input(
        7.5e9,
        Method::Full,
        Precision::Bf16,
        Optimizer::Adamw,
    ));
    assert!((e.weights_bytes - 15.0 * GB).abs() < 1e6);
    assert!((e.gradients_bytes - 15.0 * GB).abs() < 1e6);
    assert!((e.optimizer_bytes - 90.0 * GB).abs() < 1e6);
}

#[test]
fn qlora_paper_sixty_five_billion() {
    // QLoRA abstract: 16-bit fine-tuning of a 65B model needs more than 780 GB; QLoRA less
    // than 48 GB.
    assert!(full_adam(65e9, Precision::Bf16) > 780.0 * GB);
    let q = estimate(input(
        65e9,
        Method::Qlora,
        Precision::Bf16,
        Optimizer::Adamw,
    ));
    assert!(q.static_bytes() < 48.0 * GB, "{}", q.static_bytes() / GB);
    // The 4-bit base with double quantization's 0.127 bits per parameter.
    let base = q.weights_bytes - q.trainable_params * 2.0;
    assert!((base - 65e9 * 4.127 / 8.0).abs() < 1e6);
    // LoRA on the same model keeps a 16-bit base: far above a 48 GB card.
    let l = estimate(input(65e9, Method::Lora, Precision::Bf16, Optimizer::Adamw));
    assert_eq!(l.verdict(48.0), CardFit::TooSmall);
    assert!(l.static_bytes() > 130.0 * GB);
}

#[test]
fn optimizer_states_as_hugging_face_counts_them() {
    // "GPU memory usage": AdamW 8 bytes/param, 8-bit AdamW 2, SGD with momentum 4; in fp32
    // there is no master copy, so these are the whole optimizer cost.
    assert_eq!(
        optimizer_bytes_per_param(Optimizer::Adamw, Precision::Fp32),
        8.0
    );
    assert_eq!(
        optimizer_bytes_per_param(Optimizer::Adamw8bit, Precision::Fp32),
        2.0
    );
    assert_eq!(
        optimizer_bytes_per_param(Optimizer::Sgd, Precision::Fp32),
        4.0
    );
    // Mixed precision adds the fp32 master copy of the weights.
    assert_eq!(
        optimizer_bytes_per_param(Optimizer::Adamw, Precision::Bf16),
        12.0
    );
}

#[test]
fn activations_of_a_gpt3_shaped_model() {
    // Korthikanti et al.: 34·s·b·h per layer without the attention scores; GPT-3 175B has 96
    // layers of 12288.
    let mut i = input(175e9, Method::Full, Precision::Bf16, Optimizer::Adamw);
    i.seq = Some(2048);
    i.batch = Some(1);
    let e = estimate(i);
    let published = 34.0 * 2048.0 * 12288.0 * 96.0;
    let ours = e.activations_bytes.expect("activations");
    assert!(
        (ours / published - 1.0).abs() < 0.02,
        "{} vs {}",
        ours / GB,
        published / GB
    );
}

#[test]
fn the_seventy_percent_rule_picks_the_card() {
    // 7B LoRA in bf16: 14 GB base + 0.07B adapters at 16 bytes ≈ 15.1 GB of model states.
    let e = estimate(input(7e9, Method::Lora, Precision::Bf16, Optimizer::Adamw));
    assert!((e.static_bytes() / GB - 15.12).abs() < 0.01);
    assert_eq!(e.verdict(24.0), CardFit::Fits, "63 % of a 24 GB card");
    assert_eq!(e.verdict(16.0), CardFit::Tight);
    assert_eq!(e.verdict(12.0), CardFit::TooSmall);
    assert!((e.min_vram_gb() - 15.12 / 0.7).abs() < 0.02);
}

#[test]
fn fit_command_text_json_and_the_fleet_marked() {
    let home = cli::Home::new();
    let config = home.write(
        "config.toml",
        "[[hosts]]\nname = \"big\"\nssh = \"root@10.0.0.1\"\nprice_per_hour = 3.5\n\
         currency = \"USD\"\n[hosts.expect]\ngpu = \"NVIDIA H100 80GB HBM3\"\n",
    );
    let out = home.run(&[
        "--config", &config, "fit", "--params", "7B", "--method", "full", "--seq", "2048",
        "--batch", "1",
    ]);
    let text = cli::stdout(&out);
    assert_eq!(out.status.code(), Some(0), "{}", cli::stderr(&out));
    assert!(text.contains("weights"), "{text}");
    assert!(text.contains("optimizer    "), "{text}");
    assert!(text.contains("activations"), "{text}");
    // 7B full AdamW: 112 GB of states, so 160 GB by the 70 % rule.
    assert!(text.contains("smallest card: 160 GB"), "{text}");
    let h100 = text
        .lines()
        .find(|l| l.starts_with("H100 SXM"))
        .expect("H100 row");
    assert!(h100.contains("too small"), "{h100}");
    assert!(h100.contains("big (3.50 USD/h)"), "{h100}");

    let out = home.run(&[
        "--config", &config, "fit", "--params", "7B", "--method", "qlora", "--json",
    ]);
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    let rows = json["gpus"].as_array().expect("gpus");
    let l4 = rows.iter().find(|r| r["model"] == "L4").expect("L4");
    assert_eq!(l4["fit"], "fits");
    assert!(
        l4["source"]
            .as_str()
            .expect("source")
            .starts_with("https://")
    );
    let h100 = rows
        .iter()
        .find(|r| r["model"] == "H100 SXM")
        .expect("H100");
    assert_eq!(h100["hosts"][0]["name"], "big");

    let bad = home.run(&["fit", "--params", "seven"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(cli::stderr(&bad).contains("not a parameter count"));
    let half = home.run(&["fit", "--params", "7B", "--seq", "512"]);
    assert_eq!(half.status.code(), Some(2));
}
