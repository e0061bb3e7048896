//! `gpufleet fit`: the VRAM a fine-tuning run needs, part by part, and which GPU models hold it
//! by the guide's 70 % rule, with the fleet's own hosts (and their prices) marked. The
//! arithmetic is [`crate::job::fit`]; the models are [`crate::job::gpus`].

use std::fmt::Write as _;

use serde::Serialize;

use crate::config::Config;
use crate::job::fit::{
    CardFit, Estimate, FitInput, GB, LORA_TRAINABLE_SHARE, Method, Optimizer, Precision,
    STATIC_SHARE, estimate, optimizer_bytes_per_param, parse_params,
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
    match e.input.method {
        Method::Full => "full fine-tuning".to_string(),
        Method::Lora => format!(
            "LoRA (adapters assumed {:.0} % of the parameters)",
            LORA_TRAINABLE_SHARE * 100.0
        ),
        Method::Qlora => format!(
            "QLoRA (4-bit NF4 base, adapters assumed {:.0} % of the parameters)",
            LORA_TRAINABLE_SHARE * 100.0
        ),
    }
}

fn gb(bytes: f64) -> String {
    format!("{:.1} GB", bytes / GB)
}

fn render_text(e: &Estimate, rows: &[Row]) -> String {
    let mut out = String::new();
    let i = &e.input;
    let _ = writeln!(
        out,
        "{:.2}B parameters, {}, {}, {}",
        i.params / 1e9,
        method_words(e),
        i.precision.word(),
        i.optimizer.word()
    );
    let _ = writeln!(out, "  weights      {:>10}", gb(e.weights_bytes));
    let _ = writeln!(out, "  gradients    {:>10}", gb(e.gradients_bytes));
    let _ = writeln!(
        out,
        "  optimizer    {:>10}   ({:.0} bytes per trained parameter)",
        gb(e.optimizer_bytes),
        optimizer_bytes_per_param(i.optimizer, i.precision)
    );
    match e.activations_bytes {
        Some(a) => {
            let _ = writeln!(
                out,
                "  activations  {:>10}   (seq {} x batch {}, ~{:.0} layers x {:.0} hidden, no \
                 recomputation)",
                gb(a),
                i.seq.unwrap_or(0),
                i.batch.unwrap_or(0),
                e.layers,
                e.hidden
            );
        }
        None => {
            let _ = writeln!(out, "  activations  not estimated (give --seq and --batch)");
        }
    }
    let _ = writeln!(out, "  total        {:>10}", gb(e.total_bytes()));
    let _ = writeln!(
        out,
        "smallest card: {:.0} GB (weights + gradients + optimizer, {}, within 70 % of it; the \
         total within all of it)\n",
        e.min_vram_gb().ceil(),
        gb(e.static_bytes())
    );
    let _ = writeln!(
        out,
        "{:<16} {:>6} {:>12} {:>10} {:>16}  your hosts",
        "GPU", "VRAM", "bf16 TFLOP/s", "bandwidth", "fit"
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
        let fit = format!("{} ({:.0} %)", r.fit.word(), r.static_share * 100.0);
        let _ = writeln!(
            out,
            "{:<16} {:>3} GB {:>12.0} {:>5.0} GB/s {:>16}  {}",
            r.model,
            r.vram_gb,
            r.bf16_tflops,
            r.bandwidth_gb_s,
            fit,
            hosts.join(", ")
        );
    }
    let _ = writeln!(
        out,
        "\nOne GPU, no sharding or offload; (x %) is weights + gradients + optimizer as a share \
         of the card. Formulas and sources: docs/FIT.md."
    );
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
            let _ = writeln!(err, "gpufleet fit: {e}");
            return EXIT_USAGE;
        }
    };
    if args.seq.is_some() != args.batch.is_some() {
        let _ = writeln!(err, "gpufleet fit: give --seq and --batch together");
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
                let _ = writeln!(err, "gpufleet fit: writing JSON: {e}");
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
