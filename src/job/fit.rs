//! How much GPU memory a fine-tuning run needs, before renting the card: weights, gradients,
//! optimizer state and activations, per GPU (on one GPU, or on several with ZeRO-3 / FSDP full
//! sharding), with or without gradient checkpointing, and the renter's rule that weights +
//! gradients + optimizer state stay within 70 % of the card's memory. The formulas and the
//! published figures they are checked against are in docs/FIT.md.

use serde::Serialize;
use thiserror::Error;

/// Bytes in a GB, as GPU datasheets count them.
pub const GB: f64 = 1e9;

/// The renter's rule: weights + gradients + optimizer state at most this share of VRAM.
pub const STATIC_SHARE: f64 = 0.70;

/// Share of the parameters a LoRA adapter trains, when nothing else is known (rank 16 on every
/// projection of a 7B Llama-shaped model is about 0.6 %; this rounds up).
pub const LORA_TRAINABLE_SHARE: f64 = 0.01;

/// QLoRA's NF4 weights with double quantization: 4 bits plus 0.127 bits of constants per
/// parameter (Dettmers et al. 2023, section 3, "Double Quantization").
pub const NF4_BITS: f64 = 4.127;

/// Activation bytes per layer per token per hidden unit in 16-bit training without
/// recomputation, leaving out the attention-score term that FlashAttention / PyTorch SDPA do
/// not store (Korthikanti et al. 2022, eq. 1: `sbh(34 + 5as/h)`).
pub const ACTIVATION_BYTES: f64 = 34.0;

/// With gradient checkpointing at every layer, bytes per token per hidden unit of the one
/// 16-bit input each layer keeps (Korthikanti et al. 2022: "full activation recomputation"
/// stores only each layer's input, `2sbhL`; Chen et al. 2016 keep one tensor per segment).
pub const CHECKPOINT_BYTES: f64 = 2.0;

/// The most GPUs `--gpus` takes.
pub const MAX_GPUS: u32 = 65_536;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Method {
    Full,
    Lora,
    Qlora,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Precision {
    Bf16,
    Fp16,
    Fp32,
}

impl Precision {
    pub fn word(self) -> &'static str {
        match self {
            Precision::Bf16 => "bf16",
            Precision::Fp16 => "fp16",
            Precision::Fp32 => "fp32",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Optimizer {
    Adamw,
    Adamw8bit,
    /// SGD with momentum (one state per parameter).
    Sgd,
}

impl Optimizer {
    /// The optimizer's name, the same in every language (`AdamW`, `8-bit AdamW`, `SGD`); the
    /// reader's words for SGD with momentum are the catalogue's (`cli_fit.optimizer_sgd`).
    pub fn word(self) -> &'static str {
        match self {
            Optimizer::Adamw => "AdamW",
            Optimizer::Adamw8bit => "8-bit AdamW",
            Optimizer::Sgd => "SGD",
        }
    }
}

/// Why a `--params` value was refused.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ParamsError {
    #[error("{}", rust_i18n::t!("cli_fit.params_invalid", value = .0))]
    Invalid(String),
    #[error("{}", rust_i18n::t!("cli_fit.params_range", value = .0))]
    OutOfRange(String),
}

/// `7B`, `1.5b`, `350M`, `7000000000`: a parameter count.
pub fn parse_params(text: &str) -> Result<f64, ParamsError> {
    let t = text.trim();
    let (number, scale) = match t.char_indices().last() {
        Some((i, 'B' | 'b')) => (&t[..i], 1e9),
        Some((i, 'M' | 'm')) => (&t[..i], 1e6),
        Some((i, 'K' | 'k')) => (&t[..i], 1e3),
        Some((i, 'T' | 't')) => (&t[..i], 1e12),
        _ => (t, 1.0),
    };
    let value: f64 = number
        .trim()
        .parse()
        .map_err(|_| ParamsError::Invalid(text.to_string()))?;
    let params = value * scale;
    if !(1.0..=1e14).contains(&params) {
        return Err(ParamsError::OutOfRange(text.to_string()));
    }
    Ok(params)
}

/// What the estimate is for.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct FitInput {
    pub params: f64,
    pub method: Method,
    pub precision: Precision,
    pub optimizer: Optimizer,
    /// Sequence length and micro-batch size (per GPU), for the activations.
    pub seq: Option<u64>,
    pub batch: Option<u64>,
    /// Activations recomputed in the backward pass: each layer keeps only its input.
    pub gradient_checkpointing: bool,
    /// GPUs the run is spread over with ZeRO-3 / FSDP full sharding (1: one GPU, no sharding).
    pub gpus: u32,
}

/// The estimate in bytes per GPU, and the assumptions behind each part.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Estimate {
    pub input: FitInput,
    pub trainable_params: f64,
    /// Weights, gradients and optimizer state each GPU holds: the whole model's divided by
    /// `input.gpus` (ZeRO-3 partitions all three).
    pub weights_bytes: f64,
    pub gradients_bytes: f64,
    pub optimizer_bytes: f64,
    /// `None` without `seq` and `batch`; one GPU's micro-batch (sharding does not split them).
    pub activations_bytes: Option<f64>,
    /// The model shape assumed for the activations (Llama-like: hidden = 128 × layers).
    pub layers: f64,
    pub hidden: f64,
}

impl Estimate {
    /// Weights + gradients + optimizer state: what the 70 % rule is about.
    pub fn static_bytes(&self) -> f64 {
        self.weights_bytes + self.gradients_bytes + self.optimizer_bytes
    }

    pub fn total_bytes(&self) -> f64 {
        self.static_bytes() + self.activations_bytes.unwrap_or(0.0)
    }

    /// The smallest VRAM (GB) that holds the run by the 70 % rule and in total.
    pub fn min_vram_gb(&self) -> f64 {
        (self.static_bytes() / STATIC_SHARE).max(self.total_bytes()) / GB
    }

    /// How a card of `vram_gb` holds the run.
    pub fn verdict(&self, vram_gb: f64) -> CardFit {
        self.judge(vram_gb).fit
    }

    /// How a card of `vram_gb` holds the run, with the share that decided it: the total's
    /// share of the card for a card too small (above 100 %), else the share of weights +
    /// gradients + optimizer state the 70 % rule reads.
    pub fn judge(&self, vram_gb: f64) -> Judgement {
        let vram = vram_gb * GB;
        let static_share = self.static_bytes() / vram;
        let total_share = self.total_bytes() / vram;
        let (fit, decided_by) = if total_share > 1.0 {
            (CardFit::TooSmall, DecidedBy::TotalShare)
        } else if static_share > STATIC_SHARE {
            (CardFit::Tight, DecidedBy::StaticShare)
        } else {
            (CardFit::Fits, DecidedBy::StaticShare)
        };
        Judgement {
            fit,
            static_share,
            total_share,
            decided_by,
        }
    }
}

/// Which share of the card a verdict reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DecidedBy {
    /// Weights + gradients + optimizer state against the 70 % rule (fits or tight).
    StaticShare,
    /// Everything, activations included, against the whole card (too small).
    TotalShare,
}

/// A card judged: the verdict and both shares, and which of them decided.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Judgement {
    pub fit: CardFit,
    pub static_share: f64,
    pub total_share: f64,
    pub decided_by: DecidedBy,
}

impl Judgement {
    /// The share that decided the verdict.
    pub fn decisive_share(&self) -> f64 {
        match self.decided_by {
            DecidedBy::StaticShare => self.static_share,
            DecidedBy::TotalShare => self.total_share,
        }
    }

    /// The decisive share in whole percent, rounded so that it never reads as if it met the
    /// limit it broke (70.2 % over the rule is 71, 100.1 % of the card is 101) nor as if it
    /// broke the limit it met.
    pub fn decisive_percent(&self) -> f64 {
        let pct = self.decisive_share() * 100.0;
        match self.fit {
            CardFit::Fits => pct.round().min(STATIC_SHARE * 100.0),
            CardFit::Tight | CardFit::TooSmall => pct.ceil(),
        }
    }
}

/// A card against the estimate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CardFit {
    /// Within the 70 % rule, activations included in the total.
    Fits,
    /// Fits in memory, but weights + gradients + optimizer take more than 70 %: little room
    /// for activations, fragmentation and the CUDA context.
    Tight,
    TooSmall,
}

fn bytes_per_value(precision: Precision) -> f64 {
    match precision {
        Precision::Bf16 | Precision::Fp16 => 2.0,
        Precision::Fp32 => 4.0,
    }
}

/// Optimizer bytes per trained parameter: the states, plus the fp32 master copy of the weights
/// that mixed-precision training keeps next to the 16-bit ones.
pub fn optimizer_bytes_per_param(optimizer: Optimizer, precision: Precision) -> f64 {
    let states = match optimizer {
        Optimizer::Adamw => 8.0,
        Optimizer::Adamw8bit => 2.0,
        Optimizer::Sgd => 4.0,
    };
    let master = match precision {
        Precision::Bf16 | Precision::Fp16 => 4.0,
        Precision::Fp32 => 0.0,
    };
    states + master
}

/// The estimate for `input`.
pub fn estimate(input: FitInput) -> Estimate {
    let p = input.params;
    // ZeRO-3 / FSDP full sharding: each GPU keeps 1/N of the weights, gradients and optimizer
    // state, (2 + 2 + K)·Ψ / N_d in the ZeRO paper's notation.
    let shards = f64::from(input.gpus.max(1));
    let value = bytes_per_value(input.precision);
    let (trainable, frozen_bytes) = match input.method {
        Method::Full => (p, 0.0),
        Method::Lora => (p * LORA_TRAINABLE_SHARE, p * value),
        Method::Qlora => (p * LORA_TRAINABLE_SHARE, p * NF4_BITS / 8.0),
    };
    let weights_bytes = (frozen_bytes + trainable * value) / shards;
    let gradients_bytes = trainable * value / shards;
    let optimizer_bytes =
        trainable * optimizer_bytes_per_param(input.optimizer, input.precision) / shards;
    // Llama-shaped: parameters ≈ 12 · layers · hidden², hidden = 128 · layers.
    let layers = (p / (12.0 * 128.0 * 128.0)).cbrt();
    let hidden = 128.0 * layers;
    let activation_scale = match input.precision {
        Precision::Fp32 => 2.0,
        _ => 1.0,
    };
    // Per token and hidden unit: every layer's 34 bytes, or with checkpointing each layer's
    // kept input (2 bytes) plus the one layer being recomputed (34).
    let per_token_unit = if input.gradient_checkpointing {
        layers * CHECKPOINT_BYTES + ACTIVATION_BYTES
    } else {
        layers * ACTIVATION_BYTES
    };
    let activations_bytes = match (input.seq, input.batch) {
        (Some(s), Some(b)) => {
            Some(s as f64 * b as f64 * hidden * per_token_unit * activation_scale)
        }
        _ => None,
    };
    Estimate {
        input,
        trainable_params: trainable,
        weights_bytes,
        gradients_bytes,
        optimizer_bytes,
        activations_bytes,
        layers,
        hidden,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parameter_counts() {
        assert_eq!(parse_params("7B"), Ok(7e9));
        assert_eq!(parse_params("1.5b"), Ok(1.5e9));
        assert_eq!(parse_params("350M"), Ok(350e6));
        assert_eq!(parse_params("7000000000"), Ok(7e9));
        assert!(matches!(
            parse_params("seven"),
            Err(ParamsError::Invalid(_))
        ));
        assert!(matches!(
            parse_params("0B"),
            Err(ParamsError::OutOfRange(_))
        ));
        assert!(matches!(
            parse_params("-1B"),
            Err(ParamsError::OutOfRange(_))
        ));
        assert!(matches!(
            parse_params("1e9T"),
            Err(ParamsError::OutOfRange(_))
        ));
    }

    #[test]
    fn model_shape_of_a_7b_model_is_llama_like() {
        let e = estimate(FitInput {
            params: 6.7e9,
            method: Method::Full,
            precision: Precision::Bf16,
            optimizer: Optimizer::Adamw,
            seq: None,
            batch: None,
            gradient_checkpointing: false,
            gpus: 1,
        });
        // Llama 7B: 32 layers, hidden 4096.
        assert!((e.layers - 32.0).abs() < 1.5, "{}", e.layers);
        assert!((e.hidden - 4096.0).abs() < 200.0, "{}", e.hidden);
        assert_eq!(e.activations_bytes, None);
    }
}
