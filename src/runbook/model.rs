//! The runbook file format: what a TOML runbook may say, read strictly (unknown keys are errors)
//! and checked further by `validate` before anything can run.

use std::fmt;

use serde::{Deserialize, Serialize};

/// How much a step can hurt: reads run freely, anything else asks first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Danger {
    /// Looks only; safe to run at any time.
    Read,
    /// Changes the host's state (a power limit), reversibly.
    Change,
    /// Interrupts work on the host (GPU reset, module reload, reboot).
    Disruptive,
}

impl Danger {
    pub fn word(self) -> &'static str {
        match self {
            Danger::Read => "read",
            Danger::Change => "change",
            Danger::Disruptive => "disruptive",
        }
    }

    /// The level in the reader's words (`change`, `变更`), as a step's heading and the
    /// confirmation say it.
    pub fn said(self) -> String {
        match self {
            Danger::Read => rust_i18n::t!("confirm_text.read"),
            Danger::Change => rust_i18n::t!("confirm_text.change"),
            Danger::Disruptive => rust_i18n::t!("confirm_text.disruptive"),
        }
        .into_owned()
    }

    /// The level as a run's step line tags it (`read`, `CHANGE`, `DISRUPTIVE`).
    pub fn tag(self) -> String {
        match self {
            Danger::Read => rust_i18n::t!("run.danger_read"),
            Danger::Change => rust_i18n::t!("run.danger_change"),
            Danger::Disruptive => rust_i18n::t!("run.danger_disruptive"),
        }
        .into_owned()
    }
}

impl fmt::Display for Danger {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.word())
    }
}

/// One runbook, as written in its file.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Runbook {
    pub id: String,
    pub title: String,
    /// What the runbook does and when to use it, in plain words.
    pub summary: String,
    /// Finding labels (`gpu_lost`, `xid_79`, ...) this runbook addresses.
    #[serde(default)]
    pub when: Vec<String>,
    #[serde(default)]
    pub params: Vec<Param>,
    pub steps: Vec<Step>,
    /// Explanations that apply to every step's output.
    #[serde(default)]
    pub explain: Vec<Explain>,
    /// Said at the end when the audit log shows an earlier run of this runbook already had to
    /// change or disrupt this host: the fault came back.
    #[serde(default)]
    pub recurred: Option<String>,
}

/// The kinds of parameter a runbook can take; each is parsed and range-checked before any
/// command is built from it, so no free text ever reaches a command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ParamKind {
    /// A GPU index, checked against the GPUs an earlier step listed.
    Gpu,
    /// A power in watts, checked against the card's range read by an earlier step.
    Watts,
    /// One of a fixed list of words.
    Choice,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Param {
    pub name: String,
    pub kind: ParamKind,
    pub help: String,
    /// `watts`: the facts holding the card's smallest and largest allowed value.
    #[serde(default)]
    pub min: Option<String>,
    #[serde(default)]
    pub max: Option<String>,
    /// The fact whose value is proposed when the parameter is not given.
    #[serde(default)]
    pub suggest: Option<String>,
    /// Why the proposal is a good one; may name facts as `{fact}`.
    #[serde(default)]
    pub suggest_reason: Option<String>,
    /// `choice`: the allowed words.
    #[serde(default)]
    pub choices: Vec<String>,
    /// A literal default (a `choice` word).
    #[serde(default)]
    pub default: Option<String>,
}

/// Whether a failed step ends the run or the runbook carries on (evidence gathering).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OnFail {
    #[default]
    Stop,
    Continue,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Step {
    /// Stable name used by conditions, the audit log and `rerun`.
    pub id: String,
    pub title: String,
    pub why: String,
    pub danger: Danger,
    /// Program and arguments; `{name}` placeholders stand for whole arguments only.
    #[serde(default)]
    pub command: Vec<String>,
    #[serde(default = "default_timeout_s")]
    pub timeout_s: u64,
    /// Needs root: when the login is not root (fact `uid`), the command runs as `sudo -n ...`.
    #[serde(default)]
    pub root: bool,
    #[serde(default)]
    pub check: Check,
    #[serde(default)]
    pub capture: Vec<Capture>,
    #[serde(default)]
    pub explain: Vec<Explain>,
    #[serde(default)]
    pub on_fail: OnFail,
    /// Every condition must hold for the step to run.
    #[serde(default)]
    pub only_if: Vec<Condition>,
    /// At least one condition must hold (when any are given).
    #[serde(default)]
    pub only_if_any: Vec<Condition>,
    /// How to reverse a `change` step; recorded when the step succeeds.
    #[serde(default)]
    pub undo: Option<Undo>,
    /// The step reboots the host: the runner waits for it to go down and come back.
    #[serde(default)]
    pub reboot: bool,
    /// Read steps to run again once a rebooted host is back; they must pass.
    #[serde(default)]
    pub rerun: Vec<String>,
    /// A read step that still asks first (slow or optional evidence).
    #[serde(default)]
    pub ask: bool,
    /// Advice computed from facts instead of a command (`torch-install`).
    #[serde(default)]
    pub advice: Option<String>,
    /// A conclusion to tell the user instead of running a command; may name facts as `{fact}`.
    #[serde(default)]
    pub say: Option<String>,
    /// Show (and keep) only output lines containing one of these; for long logs.
    #[serde(default)]
    pub show: Vec<String>,
}

fn default_timeout_s() -> u64 {
    60
}

/// What a successful outcome looks like; an empty check means exit status 0.
#[derive(Debug, Clone, PartialEq, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Check {
    /// Exit statuses that count as success; empty means `[0]`.
    #[serde(default)]
    pub exit: Vec<i32>,
    /// Texts the output must contain (whitespace runs compared as one space).
    #[serde(default)]
    pub contains: Vec<String>,
    /// Texts the output must not contain; some tools report failure and still exit 0.
    #[serde(default)]
    pub not_contains: Vec<String>,
    /// The first output line must equal this (numbers compared as numbers); may be `{name}`.
    #[serde(default)]
    pub equals: Option<String>,
}

/// Where a captured fact comes from in a step's output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    /// The first non-empty line, trimmed.
    FirstLine,
    /// How many non-empty lines there are.
    LineCount,
    /// How many lines start with `text`.
    LinesStarting,
    /// How many lines contain `text`.
    LinesContaining,
    /// The first version-like token (`580.159.04`, `13.0`) after `text` (anywhere if empty).
    VersionAfter,
    /// Whitespace-separated word `index` (from 0) of the first line starting with `text` (of
    /// the first non-empty line when there is no text).
    Word,
    /// The rest of the first line starting with `text`, trimmed.
    After,
}

/// One fact taken from a step's output: either per-GPU columns (`csv`) or a single value.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Capture {
    /// Column names of `nvidia-smi --format=csv,noheader` rows; a column named `gpu` keys the
    /// rows, otherwise rows are GPUs in order.
    #[serde(default)]
    pub csv: Option<Vec<String>>,
    #[serde(default)]
    pub fact: Option<String>,
    #[serde(default)]
    pub from: Option<Source>,
    #[serde(default)]
    pub text: Option<String>,
    #[serde(default)]
    pub index: Option<usize>,
}

/// A plain-words explanation shown when a step's output or exit status matches.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Explain {
    /// Matches when the output contains this text.
    #[serde(default)]
    pub output: Option<String>,
    /// Matches when the step exited with this status.
    #[serde(default)]
    pub exit: Option<i32>,
    /// Matches only when the step failed its check.
    #[serde(default)]
    pub failed: bool,
    /// What it means and what to do; may name facts as `{fact}`.
    pub say: String,
    /// End the run here: nothing later in the runbook can work.
    #[serde(default)]
    pub stop: bool,
}

/// What a step's state can be when a later step asks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StepIs {
    Ok,
    Failed,
    Skipped,
    /// Failed or skipped.
    NotOk,
}

/// One condition on facts or on an earlier step's outcome.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Condition {
    #[serde(default)]
    pub fact: Option<String>,
    #[serde(default)]
    pub equals: Option<String>,
    #[serde(default)]
    pub not_equals: Option<String>,
    #[serde(default)]
    pub at_least: Option<f64>,
    #[serde(default)]
    pub step: Option<String>,
    #[serde(default)]
    pub is: Option<StepIs>,
}

/// How to reverse a change: a command, and how to read back that it took.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Undo {
    /// Shown when the undo is offered; may name facts as `{fact}`.
    pub title: String,
    pub command: Vec<String>,
    #[serde(default)]
    pub verify: Vec<String>,
    /// What the first line of `verify`'s output must be; may be `{name}`.
    #[serde(default)]
    pub expect: Option<String>,
}
