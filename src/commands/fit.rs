//! `gpufleet fit`: the VRAM a fine-tuning run needs per GPU, part by part (on one GPU or
//! sharded over several, with or without gradient checkpointing), and which GPU models hold it
//! by the 70 % rule, each row saying which share of the card decided it, with the fleet's own
//! hosts (and their prices) marked. The arithmetic is [`crate::job::fit`]; the
//! models are [`crate::job::gpus`].

use std::fmt::Write as _;

use rust_i18n::t;
use serde::Serialize;

use crate::cells;
use crate::config::Config;
use crate::job::fit::{
    CardFit, DecidedBy, Estimate, FitInput, GB, Judgement, LORA_TRAINABLE_SHARE, MAX_GPUS, Method,
    Optimizer, Precision, STATIC_SHARE, estimate, optimizer_bytes_per_param, parse_params,
};
use crate::job::gpus::{GPU_MODELS, GpuModel, model_for};

/// Printed; every model was judged.
pub const EXIT_OK: u8 = 0;
/// A flag could not be read.
pub const EXIT_USAGE: u8 = 2;

/// The flags, as given.
#[derive(Debug, Clone)]
pub struct FitArgs {
    pub params: String,
    pub method: Method,
    pub precision: Precision,
    pub optimizer: Optimizer,
    pub seq: Option<u64>,
    pub batch: Option<u64>,
    pub gradient_checkpointing: bool,
    pub gpus: u32,
    pub json: bool,
}

/// A configured host whose GPU is one of the models.
#[derive(Debug, Clone, Serialize)]
struct FleetHost {
    name: String,
    price_per_hour: Option<f64>,
    currency: Option<String>,
}

#[derive(Debug, Serialize)]
struct Row {
    model: &'static str,
    vram_gb: f64,
    bf16: bool,
    bf16_tflops: Option<f64>,
    bandwidth_gb_s: f64,
    fit: CardFit,
    /// Weights + gradients + optimizer state as a share of the card's VRAM (the 70 % rule's).
    static_share: f64,
    /// Everything, activations included, as a share of the card's VRAM.
    total_share: f64,
    /// Which of the two shares decided `fit`.
    decided_by: DecidedBy,
    #[serde(skip)]
    judgement: Judgement,
    hosts: Vec<FleetHost>,
    source: &'static str,
}

#[derive(Serialize)]
struct Output<'a> {
    estimate: &'a Estimate,
    static_bytes: f64,
    total_bytes: f64,
    min_vram_gb: f64,
    static_share_limit: f64,
    gpus: &'a [Row],
}

fn hosts_with(model: &GpuModel, config: &Config) -> Vec<FleetHost> {
    config
        .hosts
        .iter()
        .filter(|h| {
            h.expect
                .as_ref()
                .and_then(|e| e.gpu.as_deref())
                .and_then(model_for)
                .is_some_and(|m| m.name == model.name)
        })
        .map(|h| FleetHost {
            name: h.name.clone(),
            price_per_hour: h.price_per_hour,
            currency: h.currency.clone(),
        })
        .collect()
}

fn rows(e: &Estimate, config: &Config) -> Vec<Row> {
    GPU_MODELS
        .iter()
        .map(|m| {
            let judgement = e.judge(m.vram_gb);
            Row {
                model: m.name,
                vram_gb: m.vram_gb,
                bf16: m.bf16,
                bf16_tflops: m.bf16_tflops,
                bandwidth_gb_s: m.bandwidth_gb_s,
                fit: judgement.fit,
                static_share: judgement.static_share,
                total_share: judgement.total_share,
                decided_by: judgement.decided_by,
                judgement,
                hosts: hosts_with(m, config),
                source: m.source,
            }
        })
        .collect()
}

fn method_words(e: &Estimate) -> String {
    let share = format!("{:.0}", LORA_TRAINABLE_SHARE * 100.0);
    match e.input.method {
        Method::Full => t!("cli_fit.method_full"),
        Method::Lora => t!("cli_fit.method_lora", share = share),
        Method::Qlora => t!("cli_fit.method_qlora", share = share),
    }
    .into_owned()
}

/// The optimizer as the reader says it: AdamW is a name in every language.
fn optimizer_words(optimizer: Optimizer) -> String {
    match optimizer {
        Optimizer::Sgd => t!("cli_fit.optimizer_sgd").into_owned(),
        other => other.word().to_string(),
    }
}

/// The verdict with the share that decided it and the limit it met or broke:
/// `fits (states 63 % ≤ 70 %)`, `too small (total 104 % > 100 %)`.
fn fit_words(j: &Judgement) -> String {
    let share = format!("{:.0}", j.decisive_percent());
    match j.fit {
        CardFit::Fits => t!("cli_fit.row_fits", share = share),
        CardFit::Tight => t!("cli_fit.row_tight", share = share),
        CardFit::TooSmall => t!("cli_fit.row_too_small", share = share),
    }
    .into_owned()
}

/// The BF16 column: the dense figure, `—` where the card has no BF16, `?` where its datasheet
/// gives none.
fn bf16_words(row: &Row) -> String {
    match (row.bf16, row.bf16_tflops) {
        (_, Some(tflops)) => format!("{tflops:.0}"),
        (false, None) => "—".to_string(),
        (true, None) => "?".to_string(),
    }
}

/// Display cells of the fit column (`too small (total 104 % > 100 %)` and its Chinese).
const FIT_CELLS: usize = 30;

fn gb(bytes: f64) -> String {
    format!("{:.1} GB", bytes / GB)
}

/// One line of the memory breakdown: `  weights      {figure:>10}{note}`, the label padded to
/// 13 display cells.
fn part_line(out: &mut String, key: &str, figure: &str, note: &str) {
    let label = t!(key);
    let _ = writeln!(out, "  {}{figure:>10}{note}", cells::pad(&label, 13));
}

fn render_text(e: &Estimate, rows: &[Row]) -> String {
    let mut out = String::new();
    let i = &e.input;
    let params = format!("{:.2}", i.params / 1e9);
    let _ = writeln!(
        out,
        "{}",
        t!(
            "cli_fit.summary",
            params = params,
            method = method_words(e),
            precision = i.precision.word(),
            optimizer = optimizer_words(i.optimizer)
        )
    );
    if i.gpus > 1 {
        let _ = writeln!(out, "{}", t!("cli_fit.sharded", gpus = i.gpus));
    }
    part_line(&mut out, "cli_fit.weights", &gb(e.weights_bytes), "");
    part_line(&mut out, "cli_fit.gradients", &gb(e.gradients_bytes), "");
    let bytes = format!("{:.0}", optimizer_bytes_per_param(i.optimizer, i.precision));
    let note = t!("cli_fit.optimizer_note", bytes = bytes);
    part_line(
        &mut out,
        "cli_fit.optimizer",
        &gb(e.optimizer_bytes),
        &format!("   {note}"),
    );
    match e.activations_bytes {
        Some(a) => {
            let (layers, hidden) = (format!("{:.0}", e.layers), format!("{:.0}", e.hidden));
            let key = if i.gradient_checkpointing {
                "cli_fit.activations_note_checkpointed"
            } else {
                "cli_fit.activations_note"
            };
            let note = t!(
                key,
                seq = i.seq.unwrap_or(0),
                batch = i.batch.unwrap_or(0),
                layers = layers,
                hidden = hidden
            );
            part_line(
                &mut out,
                "cli_fit.activations",
                &gb(a),
                &format!("   {note}"),
            );
        }
        None => {
            let label = t!("cli_fit.activations");
            let none = t!("cli_fit.activations_none");
            let _ = writeln!(out, "  {}{none}", cells::pad(&label, 13));
        }
    }
    part_line(&mut out, "cli_fit.total", &gb(e.total_bytes()), "");
    let smallest = format!("{:.0}", e.min_vram_gb().ceil());
    let key = if i.gpus > 1 {
        "cli_fit.smallest_per_gpu"
    } else {
        "cli_fit.smallest"
    };
    let _ = writeln!(
        out,
        "{}\n",
        t!(key, gb = smallest, part = gb(e.static_bytes()))
    );
    let titles = t!("cli_fit.header");
    let titles: Vec<&str> = titles.split('|').collect();
    let title = |n: usize| titles.get(n).copied().unwrap_or_default();
    let _ = writeln!(
        out,
        "{} {} {} {} {}  {}",
        cells::pad(title(0), 16),
        cells::pad_left(title(1), 6),
        cells::pad_left(title(2), 12),
        cells::pad_left(title(3), 10),
        cells::pad_left(title(4), FIT_CELLS),
        title(5)
    );
    for r in rows {
        let hosts: Vec<String> = r
            .hosts
            .iter()
            .map(|h| match h.price_per_hour {
                Some(p) => format!(
                    "{} ({p:.2}{}/h)",
                    h.name,
                    h.currency
                        .as_deref()
                        .map(|c| format!(" {c}"))
                        .unwrap_or_default()
                ),
                None => h.name.clone(),
            })
            .collect();
        let line = format!(
            "{:<16} {:>3} GB {:>12} {:>5.0} GB/s {}  {}",
            r.model,
            r.vram_gb,
            bf16_words(r),
            r.bandwidth_gb_s,
            cells::pad_left(&fit_words(&r.judgement), FIT_CELLS),
            hosts.join(", ")
        );
        let _ = writeln!(out, "{}", line.trim_end());
    }
    let setup = if i.gpus > 1 {
        t!("cli_fit.setup_sharded", gpus = i.gpus)
    } else {
        t!("cli_fit.setup_one")
    };
    let _ = writeln!(out, "\n{}", t!("cli_fit.footer", setup = setup));
    out
}

/// Runs `gpufleet fit`; what it prints goes to `out`, errors to `err`.
pub fn run(
    args: &FitArgs,
    config: &Config,
    out: &mut dyn std::io::Write,
    err: &mut dyn std::io::Write,
) -> u8 {
    let params = match parse_params(&args.params) {
        Ok(p) => p,
        Err(e) => {
            let _ = writeln!(err, "{}", t!("cli_fit.error", why = e));
            return EXIT_USAGE;
        }
    };
    if !(1..=MAX_GPUS).contains(&args.gpus) {
        let why = t!("cli_fit.gpus_range", value = args.gpus, max = MAX_GPUS);
        let _ = writeln!(err, "{}", t!("cli_fit.error", why = why));
        return EXIT_USAGE;
    }
    if args.seq.is_some() != args.batch.is_some() {
        let _ = writeln!(err, "{}", t!("cli_fit.seq_and_batch"));
        return EXIT_USAGE;
    }
    let e = estimate(FitInput {
        params,
        method: args.method,
        precision: args.precision,
        optimizer: args.optimizer,
        seq: args.seq,
        batch: args.batch,
        gradient_checkpointing: args.gradient_checkpointing,
        gpus: args.gpus,
    });
    let rows = rows(&e, config);
    let text = if args.json {
        let output = Output {
            estimate: &e,
            static_bytes: e.static_bytes(),
            total_bytes: e.total_bytes(),
            min_vram_gb: e.min_vram_gb(),
            static_share_limit: STATIC_SHARE,
            gpus: &rows,
        };
        match serde_json::to_string(&output) {
            Ok(json) => format!("{json}\n"),
            Err(e) => {
                let why = t!("cli_cost.writing_json", why = e);
                let _ = writeln!(err, "{}", t!("cli_fit.error", why = why));
                return EXIT_USAGE;
            }
        }
    } else {
        render_text(&e, &rows)
    };
    let _ = out.write_all(text.as_bytes());
    EXIT_OK
}

/// The flags of `gpufleet fit` as the command line gives them (clap has checked each word).
#[allow(clippy::too_many_arguments)]
pub fn args_from_words(
    params: &str,
    method: &str,
    precision: &str,
    optimizer: &str,
    seq: Option<u64>,
    batch: Option<u64>,
    gradient_checkpointing: bool,
    gpus: u32,
    json: bool,
) -> FitArgs {
    FitArgs {
        params: params.to_string(),
        method: match method {
            "lora" => Method::Lora,
            "qlora" => Method::Qlora,
            _ => Method::Full,
        },
        precision: match precision {
            "fp16" => Precision::Fp16,
            "fp32" => Precision::Fp32,
            _ => Precision::Bf16,
        },
        optimizer: match optimizer {
            "adamw8bit" => Optimizer::Adamw8bit,
            "sgd" => Optimizer::Sgd,
            _ => Optimizer::Adamw,
        },
        seq,
        batch,
        gradient_checkpointing,
        gpus,
        json,
    }
}
