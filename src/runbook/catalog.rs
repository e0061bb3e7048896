//! The runbooks gpufleet knows: the curated set embedded in the binary, plus the user's own from
//! `<config dir>/runbooks/*.toml`, each parsed strictly and validated when loaded.

use std::path::{Path, PathBuf};

use rust_i18n::t;
use thiserror::Error;

use crate::runbook::model::Runbook;
use crate::runbook::validate::validate;

/// The curated runbooks, as (file name, text).
pub const CURATED: [(&str, &str); 6] = [
    (
        "power-limit.toml",
        include_str!("../../runbooks/power-limit.toml"),
    ),
    (
        "gpu-lost.toml",
        include_str!("../../runbooks/gpu-lost.toml"),
    ),
    (
        "driver-lost.toml",
        include_str!("../../runbooks/driver-lost.toml"),
    ),
    (
        "cuda-mismatch.toml",
        include_str!("../../runbooks/cuda-mismatch.toml"),
    ),
    (
        "throttle.toml",
        include_str!("../../runbooks/throttle.toml"),
    ),
    (
        "ecc-remap.toml",
        include_str!("../../runbooks/ecc-remap.toml"),
    ),
];

#[derive(Debug, Error)]
pub enum CatalogError {
    /// The file is not valid TOML for a runbook (the message carries line and column).
    #[error("{source_name}: {message}")]
    Parse {
        source_name: String,
        message: String,
    },
    #[error("{source_name}: {message}")]
    Invalid {
        source_name: String,
        message: String,
    },
    /// In the interface's language: the file as written, then `catalog_error.duplicate`.
    #[error("{source_name}: {}", duplicate_words(.id, .first))]
    Duplicate {
        source_name: String,
        id: String,
        first: String,
    },
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// A runbook id loaded twice: the id and the file (or `embedded:NAME`) that defined it first.
impl CatalogError {
    /// The error as the console's notice says it: `runbooks: …`, in the interface's language.
    pub fn console_words(&self) -> String {
        t!("catalog_error.in_console", why = self.to_string()).into_owned()
    }
}

fn duplicate_words(id: &str, first: &str) -> String {
    t!("catalog_error.duplicate", id = id : {:?}, first = first).into_owned()
}

/// A loaded runbook and where it came from (`embedded:power-limit.toml` or a path).
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    pub runbook: Runbook,
    pub origin: String,
}

/// Every runbook available, curated ones first, then the user's in file-name order.
#[derive(Debug, Clone, Default)]
pub struct Catalog {
    entries: Vec<Entry>,
}

/// Parses and validates one runbook; `source_name` is used in error messages.
pub fn parse_runbook(text: &str, source_name: &str) -> Result<Runbook, CatalogError> {
    let book: Runbook = toml::from_str(text).map_err(|e| CatalogError::Parse {
        source_name: source_name.to_string(),
        message: e.to_string().trim_end().to_string(),
    })?;
    validate(&book).map_err(|message| CatalogError::Invalid {
        source_name: source_name.to_string(),
        message,
    })?;
    Ok(book)
}

/// `<config dir>/runbooks`, where users keep their own runbooks.
pub fn user_dir() -> Option<PathBuf> {
    crate::config::config_dir().map(|dir| dir.join("runbooks"))
}

impl Catalog {
    /// Only the embedded runbooks, their texts in the interface's language.
    pub fn curated() -> Result<Self, CatalogError> {
        let mut catalog = Catalog::default();
        for (name, text) in CURATED {
            let origin = format!("embedded:{name}");
            let runbook = crate::runbook::localize::localized(parse_runbook(text, &origin)?);
            catalog.add(Entry { runbook, origin })?;
        }
        Ok(catalog)
    }

    /// The embedded runbooks plus the user's from `dir` (a missing directory adds none).
    pub fn load(dir: Option<&Path>) -> Result<Self, CatalogError> {
        let mut catalog = Self::curated()?;
        let Some(dir) = dir else {
            return Ok(catalog);
        };
        let read = match std::fs::read_dir(dir) {
            Ok(read) => read,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(catalog),
            Err(source) => {
                return Err(CatalogError::Io {
                    path: dir.to_path_buf(),
                    source,
                });
            }
        };
        let mut paths: Vec<PathBuf> = read
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "toml"))
            .collect();
        paths.sort();
        for path in paths {
            let text = std::fs::read_to_string(&path).map_err(|source| CatalogError::Io {
                path: path.clone(),
                source,
            })?;
            let origin = path.display().to_string();
            let runbook = parse_runbook(&text, &origin)?;
            catalog.add(Entry { runbook, origin })?;
        }
        Ok(catalog)
    }

    /// The curated set and the user's runbooks from [`user_dir`].
    pub fn load_default() -> Result<Self, CatalogError> {
        Self::load(user_dir().as_deref())
    }

    fn add(&mut self, entry: Entry) -> Result<(), CatalogError> {
        if let Some(first) = self
            .entries
            .iter()
            .find(|e| e.runbook.id == entry.runbook.id)
        {
            return Err(CatalogError::Duplicate {
                source_name: entry.origin,
                id: entry.runbook.id,
                first: first.origin.clone(),
            });
        }
        self.entries.push(entry);
        Ok(())
    }

    pub fn entries(&self) -> &[Entry] {
        &self.entries
    }

    pub fn get(&self, id: &str) -> Option<&Runbook> {
        self.entries.iter().map(|e| &e.runbook).find(|r| r.id == id)
    }

    /// Runbooks that address a finding label, in catalog order.
    pub fn for_label(&self, label: &str) -> Vec<&Runbook> {
        self.entries
            .iter()
            .map(|e| &e.runbook)
            .filter(|r| r.when.iter().any(|w| w == label))
            .collect()
    }
}
