//! The release flow, for any UI: plan, backup, typed confirmation, send, then close the host's
//! ledger and write the audit line. Each step refuses to run out of order, so no caller can send
//! a release that was not confirmed or whose backup failed without an explicit override.

use rust_i18n::t;

use crate::audit::{AuditEntry, AuditError, AuditKind, AuditLog};
use crate::config::{Config, Provider};
use crate::cost::{
    HostCost, LedgerSettings, LedgerStore, StoreError, billing_started_ms, format_duration_ms,
    format_money,
};
use crate::remote::sanitize as clean;
use crate::remote::shell_quote;
use crate::telemetry::TimestampMs;
use crate::words::Words;

use super::execute::{HostRunner, SendError, SendFailure, SendOptions, StepAnswer, send};
use super::record::{Closing, Unrecorded};
use super::request::{BuildError, ReleaseAction, ReleaseRequest};
use super::request::{action_words, effect, effect_words};
use super::secret::load_token;
use super::simulated;

#[derive(Debug, thiserror::Error)]
pub enum FlowError {
    ReadOnly,
    UnknownHost(String),
    NoReleaseConfig(String),
    Build(#[from] BuildError),
    /// The token could not be loaded: `problem` in catalogue words (the plan shows them in
    /// the reader's language, the log in English).
    Token {
        problem: Words,
    },
    BackupNotRun,
    BackupFailed(String),
    Cancelled,
    WrongName {
        typed: String,
        host: String,
    },
    NotConfirmed,
    AlreadySent,
    Send {
        failure: SendFailure,
        /// Why the audit line could not be written, if it could not.
        audit: Option<String>,
    },
    Audit(#[from] AuditError),
    /// Checked before the provider is asked: a release the ledger could not record is money
    /// the renter could no longer account for. Not a `source`: the text already says it.
    Unrecordable(StoreError),
}

/// What the dialog shows before anything happens.
#[derive(Debug, Clone)]
pub struct ReleasePlan {
    pub host: String,
    pub provider: Provider,
    pub action: ReleaseAction,
    pub instance_id: Option<String>,
    /// What the action does to the instance and its data.
    pub effect: String,
    /// Spent so far, formatted with its currency; `None` without a price or a ledger.
    pub spent: Option<String>,
    pub billed_ms: u64,
    pub current_idle_ms: u64,
    /// The argv run on the host before the release.
    pub backup: Option<Vec<String>>,
    pub request: ReleaseRequest,
    /// Things to know that do not stop the release (a token file open to others).
    pub warnings: Vec<String>,
    /// Why the token could not be loaded; sending is refused while this is set.
    pub token_problem: Option<String>,
    /// A demo host: the simulated provider answers, nothing is sent or run anywhere.
    pub simulated: bool,
    settings: LedgerSettings,
    billing_started_ms: Option<TimestampMs>,
}

/// How the backup went.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BackupOutcome {
    NotConfigured,
    Succeeded,
    Failed(String),
}

/// Why a release goes out without a typed name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unattended {
    /// `--yes` on the command line.
    YesFlag,
    /// The auto-release countdown ran out.
    AutoRelease,
}

/// What a sent release got back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReleaseReport {
    pub answers: Vec<StepAnswer>,
    /// The release went out, but closing the ledger or writing the audit line failed.
    pub problems: Vec<String>,
    /// The release went out but the ledger could not record it: what to add by hand.
    pub unrecorded: Option<Unrecorded>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Confirmation {
    Pending,
    Typed,
    Unattended(Unattended),
}

/// One release, from plan to answer.
#[derive(Debug)]
pub struct ReleaseFlow {
    plan: ReleasePlan,
    backup: Option<BackupOutcome>,
    backup_overridden: bool,
    confirmation: Confirmation,
    sent: bool,
    /// Send even when the ledger cannot record the release (`--force`).
    unrecorded_allowed: bool,
    /// Why the token could not be loaded, in catalogue words (the plan holds the reader's).
    token_words: Option<Words>,
}

impl ReleaseFlow {
    /// Plans the release of `host`. Read-only mode (the flag or the config's `read_only`)
    /// refuses here, before anything runs. `action` defaults to stop; `cost` is the host's
    /// ledger as the caller knows it; `env` looks up the token's environment variable.
    pub fn start(
        config: &Config,
        host: &str,
        action: Option<ReleaseAction>,
        read_only: bool,
        cost: Option<&HostCost>,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Self, FlowError> {
        if read_only || config.read_only {
            return Err(FlowError::ReadOnly);
        }
        let host_config = config
            .host(host)
            .ok_or_else(|| FlowError::UnknownHost(host.to_string()))?;
        let release = host_config
            .release
            .as_ref()
            .ok_or_else(|| FlowError::NoReleaseConfig(host.to_string()))?;
        let action = action.unwrap_or(ReleaseAction::Stop);
        let (token, warnings, token_problem, token_words) = if release.provider.uses_api() {
            match load_token(release, env) {
                Ok(loaded) => (Some(loaded.secret), loaded.warnings, None, None),
                Err(e) => (
                    None,
                    Vec::new(),
                    Some(e.words().localized()),
                    Some(e.words()),
                ),
            }
        } else {
            (None, Vec::new(), None, None)
        };
        let request = ReleaseRequest::build(host, release, action, token)?;
        let mut warnings = warnings;
        // How long the provider keeps a stopped instance, where its effect does not say.
        if (release.provider, action) == (Provider::AutoDl, ReleaseAction::Stop) {
            warnings.push(t!("restart.stopped_autodl").into_owned());
        }
        let plan = ReleasePlan {
            host: host.to_string(),
            provider: release.provider,
            action,
            instance_id: release.instance_id.clone(),
            effect: effect(release.provider, action),
            spent: cost.and_then(|c| Some(format_money(c.spent()?, c.currency()?))),
            billed_ms: cost.map_or(0, |c| c.totals.billed_ms),
            current_idle_ms: cost.map_or(0, |c| c.totals.current_idle_ms),
            // Only a release runs the backup; a restart or start keeps the instance.
            backup: host_config.backup.clone().filter(|_| action.releases()),
            request,
            warnings,
            token_problem,
            simulated: false,
            settings: LedgerSettings::from_config(config),
            billing_started_ms: billing_started_ms(host_config),
        };
        Ok(Self {
            plan,
            backup: None,
            backup_overridden: false,
            confirmation: Confirmation::Pending,
            sent: false,
            unrecorded_allowed: false,
            token_words,
        })
    }

    pub fn plan(&self) -> &ReleasePlan {
        &self.plan
    }

    /// Marks the release as one of a simulated demo host: the plan says so, and
    /// [`ReleaseFlow::send`] asks the simulated provider, in-process, instead of the real one.
    pub fn simulate(&mut self) {
        self.plan.simulated = true;
        let note = rust_i18n::t!("release_plan.simulated_note").into_owned();
        self.plan.warnings.insert(0, note);
    }

    pub fn backup_outcome(&self) -> Option<&BackupOutcome> {
        self.backup.as_ref()
    }

    /// Everything a real release would show, with nothing run or sent; the audit log records
    /// that a dry run was made.
    pub fn dry_run(&self, audit: &AuditLog, now_ms: TimestampMs) -> Result<Vec<String>, FlowError> {
        let mut lines = self.plan.lines();
        lines.push(rust_i18n::t!("release_plan.dry_run").into_owned());
        audit.append(&self.entry(
            AuditKind::Release,
            now_ms,
            self.plan.request.summary(),
            "dry_run",
            None,
            true,
        ))?;
        Ok(lines)
    }

    /// Runs the configured backup on the host, handing each (sanitized) output line to
    /// `on_line`, and records it in the audit log.
    pub fn run_backup(
        &mut self,
        runner: &dyn HostRunner,
        audit: &AuditLog,
        now_ms: TimestampMs,
        on_line: &mut dyn FnMut(&str),
    ) -> Result<&BackupOutcome, FlowError> {
        self.check_token()?;
        let outcome = match &self.plan.backup {
            None => BackupOutcome::NotConfigured,
            Some(argv) => {
                let result = runner.run(&self.plan.host, argv, &mut |line| on_line(&clean(line)));
                let (outcome, status) = match result {
                    Ok(Some(0)) => (BackupOutcome::Succeeded, Some(0)),
                    Ok(Some(code)) => (
                        BackupOutcome::Failed(
                            super::execute::CommandStatus::Exit(code)
                                .words()
                                .localized(),
                        ),
                        Some(code),
                    ),
                    Ok(None) => (
                        BackupOutcome::Failed(
                            rust_i18n::t!("release_error.backup_no_status").into_owned(),
                        ),
                        None,
                    ),
                    Err(why) => (BackupOutcome::Failed(clean(&why)), None),
                };
                let word = if outcome == BackupOutcome::Succeeded {
                    "ok"
                } else {
                    "failed"
                };
                audit.append(&self.entry(
                    AuditKind::Backup,
                    now_ms,
                    quoted(argv),
                    word,
                    status,
                    false,
                ))?;
                outcome
            }
        };
        Ok(self.backup.insert(outcome))
    }

    /// The user chose to release although the backup failed.
    pub fn override_failed_backup(&mut self) {
        self.backup_overridden = true;
    }

    /// Checks what the user typed: the host name confirms; empty input is the default, Cancel.
    pub fn confirm(&mut self, typed: &str) -> Result<(), FlowError> {
        self.check_token()?;
        let typed = typed.trim();
        if typed.is_empty() {
            return Err(FlowError::Cancelled);
        }
        if typed != self.plan.host {
            return Err(FlowError::WrongName {
                typed: clean(typed),
                host: self.plan.host.clone(),
            });
        }
        self.confirmation = Confirmation::Typed;
        Ok(())
    }

    /// Sends even when the ledger cannot record the release; the entry to add by hand is then
    /// in the report.
    pub fn allow_unrecorded(&mut self) {
        self.unrecorded_allowed = true;
    }

    /// Confirms without a typed name (`--yes`, or the auto-release countdown ran out).
    pub fn confirm_unattended(&mut self, why: Unattended) {
        self.confirmation = Confirmation::Unattended(why);
    }

    /// Sends the release, then closes the host's stored ledger and writes the audit line.
    pub fn send(
        &mut self,
        runner: &dyn HostRunner,
        options: &SendOptions,
        store: &LedgerStore,
        audit: &AuditLog,
        now_ms: TimestampMs,
    ) -> Result<ReleaseReport, FlowError> {
        if self.sent {
            return Err(FlowError::AlreadySent);
        }
        self.check_token()?;
        if self.confirmation == Confirmation::Pending {
            return Err(FlowError::NotConfirmed);
        }
        match (&self.plan.backup, &self.backup) {
            (Some(_), None) => return Err(FlowError::BackupNotRun),
            (_, Some(BackupOutcome::Failed(why))) if !self.backup_overridden => {
                return Err(FlowError::BackupFailed(why.clone()));
            }
            _ => {}
        }
        let releases = self.plan.action.releases();
        if releases && !self.unrecorded_allowed {
            store.check_recordable().map_err(FlowError::Unrecordable)?;
        }
        self.sent = true;
        let kind = match self.confirmation {
            Confirmation::Unattended(Unattended::AutoRelease) => AuditKind::AutoRelease,
            _ => AuditKind::Release,
        };
        let summary = self.plan.request.summary();
        let sent = if self.plan.simulated {
            simulated::send(&self.plan.request, &self.plan.host, runner)
        } else {
            send(&self.plan.request, &self.plan.host, runner, options)
        };
        match sent {
            Ok(answers) => {
                let mut problems = Vec::new();
                // A restart or start bills on: the host's ledger stays open.
                let unrecorded = if releases {
                    self.closing(now_ms).record(store).err()
                } else {
                    None
                };
                if let Some(failed) = &unrecorded {
                    problems.push(
                        rust_i18n::t!("release_words.unrecorded", why = failed.error.to_string())
                            .into_owned(),
                    );
                }
                let status = answers.last().and_then(|answer| answer.status);
                let entry = self.entry(kind, now_ms, summary, "ok", status, false);
                if let Err(e) = audit.append(&entry) {
                    problems.push(
                        rust_i18n::t!("release_words.audit_unwritten", why = e.to_string())
                            .into_owned(),
                    );
                }
                Ok(ReleaseReport {
                    answers,
                    problems,
                    unrecorded,
                })
            }
            Err(failure) => {
                let (word, status) = outcome_word(&failure.error);
                let entry = self.entry(kind, now_ms, summary, word, status, false);
                let audit = audit.append(&entry).err().map(|e| e.to_string());
                Err(FlowError::Send { failure, audit })
            }
        }
    }

    fn check_token(&self) -> Result<(), FlowError> {
        match &self.plan.token_problem {
            Some(problem) => Err(FlowError::Token {
                problem: self
                    .token_words
                    .clone()
                    .unwrap_or_else(|| Words::verbatim(problem.as_str())),
            }),
            None => Ok(()),
        }
    }

    fn closing(&self, at_ms: TimestampMs) -> Closing<'_> {
        let plan = &self.plan;
        Closing {
            host: &plan.host,
            settings: plan.settings,
            billing_started_ms: plan.billing_started_ms,
            action: plan.action.as_str(),
            provider: plan.provider.as_str(),
            at_ms,
        }
    }

    fn entry(
        &self,
        kind: AuditKind,
        at_ms: TimestampMs,
        command: String,
        outcome: &str,
        exit_status: Option<i32>,
        dry_run: bool,
    ) -> AuditEntry {
        AuditEntry {
            at_ms,
            host: self.plan.host.clone(),
            kind,
            command,
            outcome: outcome.to_string(),
            exit_status,
            runbook: None,
            step: Some(self.plan.action.as_str().to_string()),
            dry_run,
            simulated: self.plan.simulated,
        }
    }
}

/// The audit log's word for a failed send, and the status that came with it.
fn outcome_word(error: &SendError) -> (&'static str, Option<i32>) {
    match error {
        SendError::TokenRejected { status, .. } => ("token_rejected", Some(i32::from(*status))),
        SendError::NotFound { .. } => ("not_found", Some(404)),
        SendError::ServerError { status, .. } => ("server_error", Some(i32::from(*status))),
        SendError::Unexpected { status, .. } => ("failed", Some(i32::from(*status))),
        SendError::Refused { .. } => ("refused", None),
        SendError::Timeout { .. } | SendError::CommandTimeout { .. } => ("timeout", None),
        _ => ("failed", None),
    }
}

pub(super) fn quoted(argv: &[String]) -> String {
    argv.iter()
        .map(|word| shell_quote(word))
        .collect::<Vec<_>>()
        .join(" ")
}

impl ReleasePlan {
    /// The plan as lines of text, the request included (token redacted).
    pub fn lines(&self) -> Vec<String> {
        let instance = self
            .instance_id
            .as_deref()
            .map(|id| t!("release_plan.instance", id = clean(id)).into_owned())
            .unwrap_or_default();
        let mut lines = Vec::new();
        if self.simulated {
            lines.push(t!("release_plan.simulated").into_owned());
        }
        let spent = match self.spent.as_deref() {
            Some(spent) => spent.to_string(),
            None => t!("release_plan.spent_unknown").into_owned(),
        };
        lines.extend([
            t!(
                "release_plan.head",
                action = action_words(self.action),
                host = self.host,
                provider = self.provider.as_str(),
                instance = instance
            )
            .into_owned(),
            t!(
                "release_plan.effect",
                effect = effect_words(self.provider, self.action).localized()
            )
            .into_owned(),
            t!(
                "release_plan.spent",
                spent = spent,
                billed = format_duration_ms(self.billed_ms),
                idle = format_duration_ms(self.current_idle_ms)
            )
            .into_owned(),
        ]);
        // A restart or start runs no backup: nothing to say about one.
        match &self.backup {
            Some(argv) => lines.push(
                t!(
                    "release_plan.backup",
                    host = self.host,
                    command = quoted(argv)
                )
                .into_owned(),
            ),
            None if self.action.releases() => {
                lines.push(t!("release_plan.no_backup").into_owned());
            }
            None => {}
        }
        lines.push(t!("release_plan.request").into_owned());
        lines.extend(
            self.request
                .shown(&self.host)
                .into_iter()
                .map(|line| format!("    {line}")),
        );
        for warning in &self.warnings {
            lines.push(t!("release_plan.warning", text = warning).into_owned());
        }
        if let Some(problem) = &self.token_problem {
            lines.push(t!("release_plan.token", problem = problem).into_owned());
        }
        lines
    }
}

impl FlowError {
    /// Why a release was refused or failed; in English, the error's `Display` (the log's
    /// text), except that a token's problem is said in the language it was loaded in.
    pub fn words(&self) -> Words {
        match self {
            FlowError::ReadOnly => Words::new("release.read_only"),
            FlowError::UnknownHost(host) => {
                Words::new("release_error.unknown_host").put("host", format!("{host:?}"))
            }
            FlowError::NoReleaseConfig(host) => {
                Words::new("release.no_table").put("host", host.to_string())
            }
            FlowError::Build(e) => e.words(),
            FlowError::Token { problem } => {
                Words::new("release.no_token").put_words("problem", problem.clone())
            }
            FlowError::BackupNotRun => Words::new("release_error.backup_not_run"),
            FlowError::BackupFailed(why) => {
                Words::new("release_error.backup_failed").put("why", why.to_string())
            }
            FlowError::Cancelled => Words::new("release.cancelled"),
            FlowError::WrongName { typed, host } => Words::new("release_error.wrong_name")
                .put("typed", format!("{typed:?}"))
                .put("host", format!("{host:?}")),
            FlowError::NotConfirmed => Words::new("release_error.not_confirmed"),
            FlowError::AlreadySent => Words::new("release_error.already_sent"),
            FlowError::Send { failure, audit } => {
                let note = match audit {
                    Some(why) => Words::new("release.audit_unwritten").put("why", why.to_string()),
                    None => Words::verbatim(""),
                };
                Words::new("release.then")
                    .put_words("first", failure.error.words())
                    .put_words("then", note)
            }
            FlowError::Audit(e) => Words::verbatim(e.to_string()),
            FlowError::Unrecordable(e) => {
                Words::new("release_error.unrecordable").put("why", e.to_string())
            }
        }
    }
}

/// English, as the log and the audit log keep it: the catalogue's English of
/// [`FlowError::words`], the token's problem in English too.
impl std::fmt::Display for FlowError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.words().fmt(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::release::TokenError;
    use crate::release::execute::CommandStatus;

    /// The English the log and the audit log keep, as it read when it was written in the
    /// source (users grep it); in Chinese our words are Chinese, the command and what it said
    /// as they came.
    #[test]
    fn the_english_is_as_before_and_chinese_is_chinese() {
        let failed = SendError::CommandFailed {
            command: "sh -c 'exit 3'".into(),
            status: CommandStatus::Exit(3),
            text: "no quota".into(),
        };
        let cases: [(String, &str); 8] = [
            (
                failed.to_string(),
                "sh -c 'exit 3' failed (exit 3): no quota",
            ),
            (
                SendError::CommandFailed {
                    command: "p".into(),
                    status: CommandStatus::Signal,
                    text: String::new(),
                }
                .to_string(),
                "p failed (killed by a signal)",
            ),
            (
                SendError::ReadAnswer {
                    url: "https://a".into(),
                    message: "reset".into(),
                }
                .to_string(),
                "could not reach https://a: reading the answer: reset",
            ),
            (
                SendError::EmptyCommand.to_string(),
                "could not start : the command is empty",
            ),
            (
                BuildError::NoStop { provider: "lambda" }.to_string(),
                "lambda has no stop, only terminate, which deletes the instance's local disk \
                 (persistent filesystems survive); use --terminate",
            ),
            (
                FlowError::Token {
                    problem: Words::verbatim("no token"),
                }
                .to_string(),
                "cannot release without the API token: no token",
            ),
            (
                FlowError::Send {
                    failure: super::super::SendFailure {
                        done: Vec::new(),
                        error: SendError::NoToken,
                    },
                    audit: Some("disk full".into()),
                }
                .to_string(),
                "no API token: none was loaded (and the audit log could not be written: disk full)",
            ),
            (
                FlowError::WrongName {
                    typed: "x".into(),
                    host: "h".into(),
                }
                .to_string(),
                "\"x\" is not the host name \"h\"; cancelled",
            ),
        ];
        for (said, expected) in cases {
            assert_eq!(said, expected);
        }
        let zh = failed.words().render("zh-CN");
        assert_eq!(zh, "sh -c 'exit 3' 失败（退出码 3）：no quota");
        let zh = SendError::EmptyCommand.words().render("zh-CN");
        assert!(!zh.contains("empty"), "{zh}");
    }

    /// In English every word is the error's own text, so the terminal and the log agree.
    #[test]
    fn english_words_are_the_errors_own_text() {
        let sends = [
            SendError::Client("tls".into()),
            SendError::NoToken,
            SendError::BadToken,
            SendError::TokenRejected {
                status: 401,
                text: "bad key".into(),
            },
            SendError::NotFound {
                text: String::new(),
            },
            SendError::ServerError {
                status: 502,
                text: "x".into(),
            },
            SendError::Unexpected {
                status: 418,
                text: String::new(),
            },
            SendError::Refused { text: "no".into() },
            SendError::Timeout {
                url: "https://a/b".into(),
                timeout_ms: 30_000,
            },
            SendError::Unreachable {
                url: "https://a".into(),
                message: "refused".into(),
            },
            SendError::Spawn {
                program: "p".into(),
                message: "not found".into(),
            },
            SendError::CommandTimeout {
                program: "p".into(),
                timeout_ms: 5,
            },
            SendError::CommandFailed {
                command: "p a".into(),
                status: CommandStatus::Exit(3),
                text: "said".into(),
            },
            SendError::CommandFailed {
                command: "p".into(),
                status: CommandStatus::Signal,
                text: String::new(),
            },
            SendError::ReadAnswer {
                url: "https://a".into(),
                message: "reset".into(),
            },
            SendError::EmptyCommand,
            SendError::Remote {
                message: "gone".into(),
            },
        ];
        for e in &sends {
            assert_eq!(e.words().localized(), e.to_string());
        }
        let builds = [
            BuildError::NoStop { provider: "lambda" },
            BuildError::NoTerminate,
            BuildError::MissingInstanceId { provider: "vast" },
            BuildError::MissingCommand,
            BuildError::BadBaseUrl {
                url: "ftp://x".into(),
            },
        ];
        for e in &builds {
            assert_eq!(e.words().localized(), e.to_string());
        }
        let flows = [
            FlowError::ReadOnly,
            FlowError::UnknownHost("h".into()),
            FlowError::NoReleaseConfig("h".into()),
            FlowError::Token {
                problem: Words::verbatim("no token"),
            },
            FlowError::BackupNotRun,
            FlowError::BackupFailed("exit 1".into()),
            FlowError::Cancelled,
            FlowError::WrongName {
                typed: "x".into(),
                host: "h".into(),
            },
            FlowError::NotConfirmed,
            FlowError::AlreadySent,
            FlowError::Send {
                failure: super::super::SendFailure {
                    done: Vec::new(),
                    error: SendError::BadToken,
                },
                audit: Some("disk full".into()),
            },
        ];
        for e in &flows {
            assert_eq!(e.words().localized(), e.to_string());
        }
        let tokens = [
            TokenError::NotConfigured {
                what: "token",
                env_key: "token_env",
                file_key: "token_file",
                table: "[hosts.release]",
            },
            TokenError::EnvMissing {
                name: "K".into(),
                key: "token_env",
            },
            TokenError::EnvEmpty {
                name: "K".into(),
                key: "token_env",
            },
            TokenError::FileEmpty {
                path: "/t".into(),
                key: "token_file",
            },
            TokenError::Malformed {
                what: "token",
                from: "$K".into(),
            },
        ];
        for e in &tokens {
            assert_eq!(e.words().localized(), e.to_string());
        }
    }
}
