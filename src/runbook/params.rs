//! Runbook parameters: parsed and typed when given, checked against what the host reported
//! (GPU indexes, a card's power range) before any command uses them, and substituted into
//! commands only as whole arguments.

use std::collections::BTreeMap;

use rust_i18n::t;
use thiserror::Error;

use crate::runbook::facts::{Facts, as_argument, number};
use crate::runbook::model::{Param, ParamKind, Runbook};
use crate::runbook::validate::placeholder;

/// Why a parameter cannot be used; said in the reader's language ([`ParamError::words`]).
#[derive(Debug, Clone, PartialEq, Error)]
#[error("{}", self.words())]
pub enum ParamError {
    Malformed {
        text: String,
    },
    Unknown {
        runbook: String,
        name: String,
        /// The names it takes, joined; `None` when it takes none.
        known: Option<String>,
    },
    Twice {
        name: String,
    },
    Invalid {
        name: String,
        value: String,
        reason: InvalidValue,
    },
    OutOfRange {
        name: String,
        value: String,
        gpu: u32,
        min: String,
        max: String,
    },
    NoSuchGpu {
        gpu: u32,
        have: String,
    },
    ChooseGpu {
        have: String,
    },
    NoGpuList,
    Missing {
        name: String,
    },
    /// `min`/`max`: the fact as the host reported it, `None` when it reported none.
    NoRange {
        name: String,
        gpu: u32,
        min: Option<String>,
        max: Option<String>,
    },
    NoFact {
        name: String,
    },
    UnsafeFact {
        name: String,
        value: String,
    },
}

/// What a given value is not.
#[derive(Debug, Clone, PartialEq)]
pub enum InvalidValue {
    GpuIndex,
    Watts,
    /// One of these choices, joined.
    Choice(String),
}

impl ParamError {
    /// The sentence, from the catalogue under `param_error`.
    pub fn words(&self) -> String {
        let unknown = || t!("param_error.unknown").into_owned();
        match self {
            Self::Malformed { text } => t!("param_error.malformed", text = text : {:?}),
            Self::Unknown {
                runbook,
                name,
                known,
            } => {
                let known = known
                    .clone()
                    .unwrap_or_else(|| t!("param_error.takes_nothing").into_owned());
                t!(
                    "param_error.unknown_param",
                    runbook = runbook,
                    name = name : {:?},
                    known = known
                )
            }
            Self::Twice { name } => t!("param_error.twice", name = name),
            Self::Invalid {
                name,
                value,
                reason,
            } => {
                let reason = match reason {
                    InvalidValue::GpuIndex => t!("param_error.gpu_index"),
                    InvalidValue::Watts => t!("param_error.watts"),
                    InvalidValue::Choice(choices) => {
                        t!("param_error.choose_one", choices = choices)
                    }
                };
                t!(
                    "param_error.invalid",
                    name = name,
                    value = value : {:?},
                    reason = reason
                )
            }
            Self::OutOfRange {
                name,
                value,
                gpu,
                min,
                max,
            } => t!(
                "param_error.out_of_range",
                name = name,
                value = value,
                gpu = gpu,
                min = min,
                max = max
            ),
            Self::NoSuchGpu { gpu, have } => t!("param_error.no_such_gpu", gpu = gpu, have = have),
            Self::ChooseGpu { have } => t!("param_error.choose_gpu", have = have),
            Self::NoGpuList => t!("param_error.no_gpu_list"),
            Self::Missing { name } => t!("param_error.missing", name = name),
            Self::NoRange {
                name,
                gpu,
                min,
                max,
            } => {
                let min = min.clone().unwrap_or_else(unknown);
                let max = max.clone().unwrap_or_else(unknown);
                t!(
                    "param_error.no_range",
                    name = name,
                    gpu = gpu,
                    min = min,
                    max = max
                )
            }
            Self::NoFact { name } => t!("param_error.no_fact", name = name),
            Self::UnsafeFact { name, value } => {
                t!("param_error.unsafe_fact", name = name, value = value : {:?})
            }
        }
        .into_owned()
    }
}

/// A resolved parameter value, and the reason when gpufleet proposed it.
#[derive(Debug, Clone, PartialEq)]
pub struct Resolved {
    pub value: String,
    pub proposed: Option<String>,
}

/// The parameters of one run.
#[derive(Debug, Clone)]
pub struct Params {
    runbook: String,
    specs: Vec<Param>,
    given: BTreeMap<String, String>,
}

/// `250`, `250.5`: numbers without noise, so commands and logs read naturally.
fn canonical_number(value: f64) -> String {
    let text = format!("{value:.2}");
    text.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// Splits `watts=250` into its name and value.
pub fn split_assignment(text: &str) -> Result<(String, String), ParamError> {
    match text.split_once('=') {
        Some((name, value)) if !name.trim().is_empty() => {
            Ok((name.trim().to_string(), value.trim().to_string()))
        }
        _ => Err(ParamError::Malformed {
            text: text.to_string(),
        }),
    }
}

impl Params {
    /// Checks the given values' names and types; ranges wait for the facts they depend on.
    pub fn parse(book: &Runbook, given: &[(String, String)]) -> Result<Self, ParamError> {
        let mut map = BTreeMap::new();
        for (name, value) in given {
            let Some(spec) = book.params.iter().find(|p| &p.name == name) else {
                let known: Vec<&str> = book.params.iter().map(|p| p.name.as_str()).collect();
                return Err(ParamError::Unknown {
                    runbook: book.id.clone(),
                    name: name.clone(),
                    known: (!known.is_empty()).then(|| known.join(", ")),
                });
            };
            let typed = parse_value(spec, value)?;
            if map.insert(name.clone(), typed).is_some() {
                return Err(ParamError::Twice { name: name.clone() });
            }
        }
        Ok(Self {
            runbook: book.id.clone(),
            specs: book.params.clone(),
            given: map,
        })
    }

    pub fn runbook(&self) -> &str {
        &self.runbook
    }

    fn spec(&self, name: &str) -> Option<&Param> {
        self.specs.iter().find(|p| p.name == name)
    }

    pub fn is_param(&self, name: &str) -> bool {
        self.spec(name).is_some()
    }

    /// The GPU the run is about, when the runbook has a `gpu` parameter.
    pub fn gpu(&self, facts: &Facts) -> Result<Option<u32>, ParamError> {
        if self.spec("gpu").is_none() {
            return Ok(None);
        }
        let have = facts.gpu_indexes();
        let list = || {
            have.iter()
                .map(u32::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        };
        match self.given.get("gpu") {
            Some(text) => {
                let gpu = text.parse::<u32>().map_err(|_| ParamError::Missing {
                    name: "gpu".to_string(),
                })?;
                if have.is_empty() {
                    return Err(ParamError::NoGpuList);
                }
                if !have.contains(&gpu) {
                    return Err(ParamError::NoSuchGpu { gpu, have: list() });
                }
                Ok(Some(gpu))
            }
            None => match have.as_slice() {
                [] => Err(ParamError::NoGpuList),
                [only] => Ok(Some(*only)),
                _ => Err(ParamError::ChooseGpu { have: list() }),
            },
        }
    }

    /// The value of parameter `name`, checked against the facts it depends on.
    pub fn resolve(&self, name: &str, facts: &Facts) -> Result<Resolved, ParamError> {
        let Some(spec) = self.spec(name) else {
            return Err(ParamError::NoFact {
                name: name.to_string(),
            });
        };
        match spec.kind {
            ParamKind::Gpu => {
                let gpu = self.gpu(facts)?.ok_or(ParamError::NoGpuList)?;
                Ok(Resolved {
                    value: gpu.to_string(),
                    proposed: None,
                })
            }
            ParamKind::Choice => match self.given.get(name).or(spec.default.as_ref()) {
                Some(value) => Ok(Resolved {
                    value: value.clone(),
                    proposed: None,
                }),
                None => Err(ParamError::Missing {
                    name: name.to_string(),
                }),
            },
            ParamKind::Watts => self.resolve_watts(spec, facts),
        }
    }

    fn resolve_watts(&self, spec: &Param, facts: &Facts) -> Result<Resolved, ParamError> {
        let gpu = self.gpu(facts)?;
        let fact = |name: &Option<String>| {
            name.as_deref()
                .and_then(|n| facts.get(n, gpu))
                .map(str::to_string)
        };
        let (value, proposed) = match self.given.get(&spec.name) {
            Some(value) => (value.clone(), None),
            None => {
                let suggested = fact(&spec.suggest).and_then(|v| number(&v));
                let Some(suggested) = suggested else {
                    return Err(ParamError::Missing {
                        name: spec.name.clone(),
                    });
                };
                let reason = spec.suggest_reason.clone().unwrap_or_default();
                (canonical_number(suggested), Some(reason))
            }
        };
        let (min_text, max_text) = (fact(&spec.min), fact(&spec.max));
        let gpu_index = gpu.unwrap_or(0);
        let (Some(min), Some(max)) = (
            min_text.as_deref().and_then(number),
            max_text.as_deref().and_then(number),
        ) else {
            return Err(ParamError::NoRange {
                name: spec.name.clone(),
                gpu: gpu_index,
                min: min_text,
                max: max_text,
            });
        };
        let watts = number(&value).unwrap_or(f64::NAN);
        if !(min..=max).contains(&watts) {
            return Err(ParamError::OutOfRange {
                name: spec.name.clone(),
                value,
                gpu: gpu_index,
                min: canonical_number(min),
                max: canonical_number(max),
            });
        }
        Ok(Resolved { value, proposed })
    }

    /// Checks every given parameter whose facts are now known, so a bad value is refused as
    /// soon as the host has said what is allowed, before any later step runs.
    pub fn check_ready(&self, facts: &Facts) -> Result<(), ParamError> {
        if facts.gpu_indexes().is_empty() {
            return Ok(());
        }
        for spec in &self.specs {
            if !self.given.contains_key(&spec.name) {
                continue;
            }
            let ready = match spec.kind {
                ParamKind::Gpu => true,
                ParamKind::Watts => [&spec.min, &spec.max]
                    .into_iter()
                    .flatten()
                    .all(|f| facts.is_per_gpu(f) || facts.get(f, None).is_some()),
                ParamKind::Choice => false,
            };
            if ready {
                self.resolve(&spec.name, facts)?;
            }
        }
        Ok(())
    }

    /// A template word with its placeholder filled; literal words come back as they are.
    pub fn fill(&self, word: &str, facts: &Facts) -> Result<String, ParamError> {
        let Some(name) = placeholder(word) else {
            return Ok(word.to_string());
        };
        if self.is_param(name) {
            return Ok(self.resolve(name, facts)?.value);
        }
        let gpu = if facts.is_per_gpu(name) {
            self.gpu(facts)?
        } else {
            None
        };
        let value = facts.get(name, gpu).ok_or_else(|| ParamError::NoFact {
            name: name.to_string(),
        })?;
        as_argument(value)
            .map(str::to_string)
            .ok_or_else(|| ParamError::UnsafeFact {
                name: name.to_string(),
                value: value.to_string(),
            })
    }

    /// Every word of a command template filled.
    pub fn fill_all(&self, words: &[String], facts: &Facts) -> Result<Vec<String>, ParamError> {
        words.iter().map(|w| self.fill(w, facts)).collect()
    }

    /// A value for display text (`{name}` in a message): parameters, then facts.
    pub fn lookup(&self, name: &str, facts: &Facts) -> Option<String> {
        if self.is_param(name) {
            return self.resolve(name, facts).ok().map(|r| r.value);
        }
        let gpu = self.gpu(facts).ok().flatten();
        facts.get(name, gpu).map(str::to_string)
    }
}

fn parse_value(spec: &Param, value: &str) -> Result<String, ParamError> {
    let invalid = |reason: InvalidValue| ParamError::Invalid {
        name: spec.name.clone(),
        value: value.to_string(),
        reason,
    };
    match spec.kind {
        ParamKind::Gpu => value
            .parse::<u32>()
            .map(|g| g.to_string())
            .map_err(|_| invalid(InvalidValue::GpuIndex)),
        ParamKind::Watts => match number(value) {
            Some(w) if w > 0.0 && w < 100_000.0 => Ok(canonical_number(w)),
            _ => Err(invalid(InvalidValue::Watts)),
        },
        ParamKind::Choice => {
            if spec.choices.iter().any(|c| c == value) {
                Ok(value.to_string())
            } else {
                Err(invalid(InvalidValue::Choice(spec.choices.join(", "))))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_read_naturally() {
        assert_eq!(canonical_number(250.0), "250");
        assert_eq!(canonical_number(262.5), "262.5");
        assert_eq!(canonical_number(700.004), "700");
    }

    #[test]
    fn assignments_need_a_name() {
        assert_eq!(
            split_assignment("watts=250").ok(),
            Some(("watts".into(), "250".into()))
        );
        assert!(split_assignment("=3").is_err());
        assert!(split_assignment("watts").is_err());
    }
}
