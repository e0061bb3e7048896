//! `gpufleet fit`: the VRAM a fine-tuning run needs, part by part, and which GPU models hold it
//! by the guide's 70 % rule, with the fleet's own hosts (and their prices) marked. The
//! arithmetic is [`crate::job::fit`]; the models are [`crate::job::gpus`].

use std::fmt::Write as _;

use rust_i18n::t;
use serde::Serialize;

use crate::cells;
use crate::config::Config;
use crate::job::fit::{
    CardFit, Estimate, FitInput, GB, LORA_TRAINABLE_SHARE, Method, Optimizer, ParamsError,
    Precision, STATIC_SHARE, estimate, optimizer_bytes_per_param, parse_params,
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
    bf16_tflops: f64,
    bandwidth_gb_s: f64,
    fit: CardFit,
    /// Weights + gradients + optimizer state as a share of the card's VRAM.
    static_share: f64,
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
        .map(|m| Row {
            model: m.name,
            vram_gb: m.vram_gb,
            bf16_tflops: m.bf16_tflops,
            bandwidth_gb_s: m.bandwidth_gb_s,
            fit: e.verdict(m.vram_gb),
            static_share: e.static_bytes() / (m.vram_gb * GB),
            hosts: hosts_with(m, config),
            source: m.source,
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

fn fit_words(fit: CardFit) -> String {
    match fit {
        CardFit::Fits => t!("cli_fit.fits"),
        CardFit::Tight => t!("cli_fit.tight"),
        CardFit::TooSmall => t!("cli_fit.too_small"),
    }
    .into_owned()
}

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
            let note = t!(
                "cli_fit.activations_note",
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
    let _ = writeln!(
        out,
        "{}\n",
        t!(
            "cli_fit.smallest",
            gb = smallest,
            part = gb(e.static_bytes())
        )
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
        cells::pad_left(title(4), 16),
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
        let fit = format!("{} ({:.0} %)", fit_words(r.fit), r.static_share * 100.0);
        let _ = writeln!(
            out,
            "{:<16} {:>3} GB {:>12.0} {:>5.0} GB/s {}  {}",
            r.model,
            r.vram_gb,
            r.bf16_tflops,
            r.bandwidth_gb_s,
            cells::pad_left(&fit, 16),
            hosts.join(", ")
        );
    }
    let _ = writeln!(out, "\n{}", t!("cli_fit.footer"));
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
            let _ = writeln!(err, "{}", t!("cli_fit.error", why = params_words(&e)));
            return EXIT_USAGE;
        }
    };
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

/// Why `--params` was refused, in the reader's language (the error's own text is English).
fn params_words(e: &ParamsError) -> String {
    match e {
        ParamsError::Invalid(value) => t!("cli_fit.params_invalid", value = value),
        ParamsError::OutOfRange(value) => t!("cli_fit.params_range", value = value),
    }
    .into_owned()
}

/// The flags of `gpufleet fit` as the command line gives them (clap has checked each word).
pub fn args_from_words(
    params: &str,
    method: &str,
    precision: &str,
    optimizer: &str,
    seq: Option<u64>,
    batch: Option<u64>,
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
        json,
    }
}
