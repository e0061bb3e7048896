//! Asking before a step changes or disrupts a host. The answer defaults to Cancel: only an
//! explicit yes runs the step. The CLI asks on the terminal or takes `--yes`; the TUI brings
//! its own [`Confirmer`].

use std::io::{BufRead, Write};

use rust_i18n::t;

use crate::runbook::model::Danger;

/// What is about to run, for the question.
#[derive(Debug, Clone, PartialEq)]
pub struct ConfirmRequest<'a> {
    pub runbook: &'a str,
    pub host: &'a str,
    pub step: &'a str,
    pub title: &'a str,
    pub why: &'a str,
    pub danger: Danger,
    /// The exact command, quoted as it will be sent.
    pub command: &'a str,
}

/// Decides whether a step that needs confirmation runs.
pub trait Confirmer {
    /// True only for an explicit yes.
    fn confirm(&mut self, request: &ConfirmRequest<'_>) -> bool;
}

/// `--yes`: every step is confirmed without asking.
#[derive(Debug, Clone, Copy, Default)]
pub struct AssumeYes;

impl Confirmer for AssumeYes {
    fn confirm(&mut self, _request: &ConfirmRequest<'_>) -> bool {
        true
    }
}

/// Asks on `prompt` (usually stderr) and reads `y`/`yes` from `answers` (usually stdin);
/// anything else, an empty line or end of input cancels.
pub struct PromptConfirmer<R, W> {
    answers: R,
    prompt: W,
}

impl<R: BufRead, W: Write> PromptConfirmer<R, W> {
    pub fn new(answers: R, prompt: W) -> Self {
        Self { answers, prompt }
    }
}

impl<R: BufRead, W: Write> Confirmer for PromptConfirmer<R, W> {
    fn confirm(&mut self, request: &ConfirmRequest<'_>) -> bool {
        let danger = request.danger.said();
        let asked = writeln!(
            self.prompt,
            "\n{}",
            t!(
                "confirm_text.asked",
                danger = danger,
                host = request.host,
                title = request.title,
                why = request.why,
                command = request.command
            )
        )
        .and_then(|_| write!(self.prompt, "{}", t!("confirm_text.question")))
        .and_then(|_| self.prompt.flush());
        if asked.is_err() {
            return false;
        }
        let mut answer = String::new();
        match self.answers.read_line(&mut answer) {
            Ok(0) | Err(_) => false,
            Ok(_) => matches!(answer.trim().to_ascii_lowercase().as_str(), "y" | "yes"),
        }
    }
}

/// The CLI's confirmer: `--yes` confirms everything, otherwise the terminal is asked.
pub fn cli_confirmer(yes: bool) -> Box<dyn Confirmer> {
    if yes {
        Box::new(AssumeYes)
    } else {
        Box::new(PromptConfirmer::new(
            std::io::stdin().lock(),
            std::io::stderr(),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request() -> ConfirmRequest<'static> {
        ConfirmRequest {
            runbook: "power-limit",
            host: "h",
            step: "apply",
            title: "Apply",
            why: "because",
            danger: Danger::Change,
            command: "nvidia-smi -i 0 -pl 250",
        }
    }

    #[test]
    fn only_an_explicit_yes_confirms() {
        for (input, want) in [
            ("y\n", true),
            ("YES\n", true),
            ("\n", false),
            ("n\n", false),
            ("", false),
            ("sure\n", false),
        ] {
            let mut shown = Vec::new();
            let mut c = PromptConfirmer::new(input.as_bytes(), &mut shown);
            assert_eq!(c.confirm(&request()), want, "{input:?}");
            let text = String::from_utf8(shown).unwrap();
            assert!(text.contains("nvidia-smi -i 0 -pl 250"), "{text}");
            assert!(text.contains("[y/N]"), "{text}");
        }
    }
}
