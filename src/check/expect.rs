//! What the host was rented as: expectations from `--expect-*` flags (over the config's
//! `expect` table), checked with messages that name the flag and the value.

use thiserror::Error;

use crate::check::reference::name_tokens;
use crate::config::{CudaVersion, Expect};
use crate::words::Words;

/// A bad expectation, naming the flag or config key it came from. Its `Display` is in the
/// interface's language; [`ExpectError::said`] words it in a given one.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum ExpectError {
    #[error("{}", self.words().localized())]
    EmptyGpu { flag: &'static str },
    #[error("{}", self.words().localized())]
    Count { flag: &'static str, value: String },
    #[error("{}", self.words().localized())]
    Memory { flag: &'static str, value: String },
    #[error("{flag}: {message}")]
    Cuda { flag: &'static str, message: String },
}

impl ExpectError {
    /// The error in words; the flag and the value as typed.
    pub fn words(&self) -> Words {
        match self {
            Self::EmptyGpu { flag } => {
                Words::new("check_expect.empty_gpu").put("flag", flag.to_string())
            }
            Self::Count { flag, value } => Words::new("check_expect.count")
                .put("flag", flag.to_string())
                .put("value", format!("{value:?}")),
            Self::Memory { flag, value } => Words::new("check_expect.memory")
                .put("flag", flag.to_string())
                .put("value", format!("{value:?}")),
            Self::Cuda { flag, message } => Words::verbatim(format!("{flag}: {message}")),
        }
    }
}

pub const FLAG_GPU: &str = "--expect-gpu";
pub const FLAG_COUNT: &str = "--expect-count";
pub const FLAG_MEMORY: &str = "--expect-memory-gib";
pub const FLAG_MIN_CUDA: &str = "--min-cuda";

/// The expectation flags as typed on the command line; `None` for a flag not given.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ExpectFlags {
    pub gpu: Option<String>,
    pub count: Option<String>,
    pub memory_gib: Option<String>,
    pub min_cuda: Option<String>,
}

/// Reads the flags into an [`Expect`]; each one given replaces the same key of `base` (the
/// host's config), the others keep the config's value.
pub fn expect_from_flags(
    flags: &ExpectFlags,
    base: Option<&Expect>,
) -> Result<Expect, ExpectError> {
    let mut expect = base.cloned().unwrap_or(Expect {
        gpu: None,
        count: None,
        memory_gib: None,
        min_cuda: None,
    });
    if let Some(gpu) = &flags.gpu {
        expect.gpu = Some(gpu.trim().to_string());
    }
    if let Some(text) = &flags.count {
        expect.count = Some(parse_count(text, FLAG_COUNT)?);
    }
    if let Some(text) = &flags.memory_gib {
        expect.memory_gib = Some(parse_memory(text, FLAG_MEMORY)?);
    }
    if let Some(text) = &flags.min_cuda {
        let version = CudaVersion::parse(text.trim()).map_err(|message| ExpectError::Cuda {
            flag: FLAG_MIN_CUDA,
            message,
        })?;
        expect.min_cuda = Some(version);
    }
    validate(&expect)?;
    Ok(expect)
}

/// Checks an expectation however it was built (the config validates its own on load; this
/// covers one assembled in code or from flags). Errors name the flag.
pub fn validate(expect: &Expect) -> Result<(), ExpectError> {
    if expect
        .gpu
        .as_ref()
        .is_some_and(|g| name_tokens(g).is_empty())
    {
        return Err(ExpectError::EmptyGpu { flag: FLAG_GPU });
    }
    if let Some(count) = expect.count
        && !(1..=4096).contains(&count)
    {
        return Err(ExpectError::Count {
            flag: FLAG_COUNT,
            value: count.to_string(),
        });
    }
    if let Some(memory) = expect.memory_gib
        && !(memory.is_finite() && memory > 0.0 && memory <= 4096.0)
    {
        return Err(ExpectError::Memory {
            flag: FLAG_MEMORY,
            value: memory.to_string(),
        });
    }
    Ok(())
}

fn parse_count(text: &str, flag: &'static str) -> Result<u32, ExpectError> {
    let bad = || ExpectError::Count {
        flag,
        value: text.to_string(),
    };
    let value: u32 = text.trim().parse().map_err(|_| bad())?;
    if (1..=4096).contains(&value) {
        Ok(value)
    } else {
        Err(bad())
    }
}

fn parse_memory(text: &str, flag: &'static str) -> Result<f64, ExpectError> {
    let bad = || ExpectError::Memory {
        flag,
        value: text.to_string(),
    };
    // Accept what people copy from a listing: `24`, `24GiB`, `24 GB`.
    let trimmed = text.trim();
    let number = trimmed
        .strip_suffix("GiB")
        .or_else(|| trimmed.strip_suffix("GB"))
        .or_else(|| trimmed.strip_suffix("G"))
        .unwrap_or(trimmed)
        .trim();
    let value: f64 = number.parse().map_err(|_| bad())?;
    if value.is_finite() && value > 0.0 && value <= 4096.0 {
        Ok(value)
    } else {
        Err(bad())
    }
}

/// Whether the GPU `name` (as nvidia-smi prints it) is the model `expected` names.
///
/// The expected words must appear in the name, consecutively and in order, ignoring case,
/// dashes and the `NVIDIA` / `GeForce` / `Tesla` words: `RTX 4090` matches
/// `NVIDIA GeForce RTX 4090`; words that are apart in the name (`A100 80GB` in
/// `NVIDIA A100-SXM4-80GB`) match when each is present. A variant word right after the match (`RTX 4090 D`,
/// `RTX 3090 Ti`, `... Laptop GPU`) makes it a different card unless it was expected too.
pub fn model_matches(expected: &str, name: &str) -> bool {
    let want = name_tokens(expected);
    let have = name_tokens(name);
    if want.is_empty() {
        return false;
    }
    if let Some(at) = have.windows(want.len()).position(|w| w == want.as_slice()) {
        let next = have.get(at + want.len()).map(String::as_str);
        return !matches!(
            next,
            Some("D" | "TI" | "SUPER" | "LAPTOP" | "MOBILE" | "MAX")
        );
    }
    // Words apart (`A100 80GB` in `A100 SXM4 80GB`): every word present, none a variant.
    let variant = have
        .iter()
        .any(|w| matches!(w.as_str(), "D" | "TI" | "SUPER" | "LAPTOP" | "MOBILE"));
    !variant && want.iter().all(|w| have.contains(w))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flags(gpu: &str, count: &str, memory: &str, cuda: &str) -> ExpectFlags {
        let some = |s: &str| (!s.is_empty()).then(|| s.to_string());
        ExpectFlags {
            gpu: some(gpu),
            count: some(count),
            memory_gib: some(memory),
            min_cuda: some(cuda),
        }
    }

    #[test]
    fn all_four_flags_parse() {
        let e = expect_from_flags(&flags("RTX 4090", "1", "24", "12.1"), None).expect("valid");
        assert_eq!(e.gpu.as_deref(), Some("RTX 4090"));
        assert_eq!(e.count, Some(1));
        assert_eq!(e.memory_gib, Some(24.0));
        assert_eq!(
            e.min_cuda,
            Some(CudaVersion {
                major: 12,
                minor: 1
            })
        );
        let e = expect_from_flags(&flags("", "", "141 GB", ""), None).expect("valid");
        assert_eq!(e.memory_gib, Some(141.0));
    }

    #[test]
    fn flags_override_the_config_key_by_key() {
        let base = Expect {
            gpu: Some("H100".to_string()),
            count: Some(8),
            memory_gib: Some(80.0),
            min_cuda: None,
        };
        let e = expect_from_flags(&flags("H200", "", "141", ""), Some(&base)).expect("valid");
        assert_eq!(e.gpu.as_deref(), Some("H200"));
        assert_eq!(e.count, Some(8));
        assert_eq!(e.memory_gib, Some(141.0));
    }

    #[test]
    fn bad_flags_name_the_flag_and_the_value() {
        let err = |f: ExpectFlags| match expect_from_flags(&f, None) {
            Ok(e) => panic!("accepted {e:?}"),
            Err(e) => e.to_string(),
        };
        assert_eq!(
            err(flags("", "0", "", "")),
            "--expect-count: expected a whole number of GPUs from 1 to 4096, found \"0\""
        );
        assert!(err(flags("", "two", "", "")).starts_with("--expect-count:"));
        assert!(err(flags("", "-1", "", "")).contains("\"-1\""));
        assert_eq!(
            err(flags("", "", "lots", "")),
            "--expect-memory-gib: expected the memory of one GPU in GiB, above 0 and at most \
             4096, found \"lots\""
        );
        assert!(err(flags("", "", "0", "")).starts_with("--expect-memory-gib:"));
        assert!(err(flags("", "", "nan", "")).starts_with("--expect-memory-gib:"));
        assert_eq!(
            err(flags("", "", "", "12.x")),
            "--min-cuda: \"12.x\" is not a CUDA version like \"12.1\""
        );
        assert!(err(flags("  ", "", "", "")).starts_with("--expect-gpu:"));
        assert!(err(flags("NVIDIA", "", "", "")).starts_with("--expect-gpu:"));
    }

    /// `gpufleet check --lang zh-CN` names a bad flag in Chinese: the flag and the value as
    /// typed, the rest in the reader's words.
    #[test]
    fn bad_flags_are_said_in_the_readers_language() {
        let count = ExpectError::Count {
            flag: FLAG_COUNT,
            value: "0".into(),
        };
        assert_eq!(
            count.words().render("zh-CN"),
            "--expect-count：应为 1 到 4096 之间的整数卡数，实际为 \"0\""
        );
        let memory = ExpectError::Memory {
            flag: FLAG_MEMORY,
            value: "lots".into(),
        };
        assert_eq!(
            memory.words().render("zh-CN"),
            "--expect-memory-gib：应为单卡显存（GiB），大于 0 且不超过 4096，实际为 \"lots\""
        );
        let gpu = ExpectError::EmptyGpu { flag: FLAG_GPU };
        assert_eq!(
            gpu.words().render("en"),
            "--expect-gpu: must name a GPU model such as \"RTX 4090\" or \"H100\", found an \
             empty value"
        );
        assert_eq!(
            gpu.words().render("zh-CN"),
            "--expect-gpu：需要写明卡型，例如 \"RTX 4090\" 或 \"H100\"，实际为空"
        );
    }

    #[test]
    fn model_names_match_as_people_write_them() {
        assert!(model_matches("RTX 4090", "NVIDIA GeForce RTX 4090"));
        assert!(!model_matches("rtx4090", "NVIDIA GeForce RTX 4090"));
        assert!(model_matches("H200", "NVIDIA H200"));
        assert!(model_matches("h100", "NVIDIA H100 80GB HBM3"));
        assert!(model_matches("A100 80GB", "NVIDIA A100-SXM4-80GB"));
        assert!(model_matches("A100-SXM4-80GB", "NVIDIA A100-SXM4-80GB"));
        assert!(model_matches("T4", "Tesla T4"));
        assert!(model_matches("RTX 4090 D", "NVIDIA GeForce RTX 4090 D"));
    }

    #[test]
    fn other_models_and_variants_do_not_match() {
        assert!(!model_matches("RTX 4090", "NVIDIA H200"));
        assert!(!model_matches("A10", "NVIDIA A100-PCIE-40GB"));
        assert!(!model_matches("RTX 4090", "NVIDIA GeForce RTX 4090 D"));
        assert!(!model_matches("RTX 3090", "NVIDIA GeForce RTX 3090 Ti"));
        assert!(!model_matches(
            "RTX 4090",
            "NVIDIA GeForce RTX 4090 Laptop GPU"
        ));
        assert!(!model_matches("A100 80GB", "NVIDIA A100-SXM4-40GB"));
        assert!(!model_matches("H200", "NVIDIA H100 80GB HBM3"));
    }
}
