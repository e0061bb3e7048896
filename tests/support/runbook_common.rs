//! Shared by the runbook tests (included with `#[path]`): the fake programs of
//! `tests/fixtures/playbook`, scripted confirmations, and reading back the audit log.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use gpufleet::audit::{AuditEntry, AuditLog};
use gpufleet::runbook::{ConfirmRequest, Confirmer};

/// Copies the playbook fakes into `bin` with their exec bits set (a checkout may lose them).
pub fn install_fakes(bin: &Path) {
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/playbook");
    std::fs::create_dir_all(bin).expect("bin dir");
    for entry in std::fs::read_dir(&source).expect("fixtures").flatten() {
        let target = bin.join(entry.file_name());
        std::fs::copy(entry.path(), &target).expect("copy fake");
        let name = entry.file_name().to_string_lossy().to_string();
        if !name.ends_with(".txt") && !name.ends_with(".md") {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o755))
                .expect("chmod");
        }
    }
}

/// A fake host's state directory: where the fakes log calls and keep their state.
pub struct FakeDir {
    pub dir: PathBuf,
}

impl FakeDir {
    pub fn at(dir: &Path) -> Self {
        Self {
            dir: dir.to_path_buf(),
        }
    }

    pub fn set_scenario(&self, word: &str) {
        std::fs::write(self.dir.join("scenario"), word).expect("scenario");
    }

    pub fn calls(&self, program: &str) -> Vec<String> {
        std::fs::read_to_string(self.dir.join(format!("{program}.calls")))
            .unwrap_or_default()
            .lines()
            .map(str::to_string)
            .collect()
    }

    /// The power limit the fake nvidia-smi holds now (700.00 until something sets it).
    pub fn power_limit(&self) -> String {
        std::fs::read_to_string(self.dir.join("power_limit_w"))
            .map(|s| s.trim().to_string())
            .unwrap_or_else(|_| "700.00".to_string())
    }
}

/// Answers by step id; a step not listed is declined, as the real prompt's default is.
pub struct Scripted {
    pub answers: BTreeMap<String, bool>,
    pub asked: Vec<String>,
}

impl Scripted {
    pub fn new(answers: &[(&str, bool)]) -> Self {
        Self {
            answers: answers.iter().map(|(k, v)| (k.to_string(), *v)).collect(),
            asked: Vec::new(),
        }
    }
}

impl Confirmer for Scripted {
    fn confirm(&mut self, request: &ConfirmRequest<'_>) -> bool {
        self.asked.push(request.step.to_string());
        self.answers.get(request.step).copied().unwrap_or(false)
    }
}

/// The audit log's entries, as (step, outcome) pairs, in order.
pub fn audit_steps(log: &AuditLog) -> Vec<(String, String)> {
    log.read_all()
        .expect("audit log")
        .into_iter()
        .map(|e: AuditEntry| (e.step.unwrap_or_default(), e.outcome))
        .collect()
}

pub fn steps(list: &[(&str, &str)]) -> Vec<(String, String)> {
    list.iter()
        .map(|(s, o)| (s.to_string(), o.to_string()))
        .collect()
}
