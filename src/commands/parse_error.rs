//! clap's refusals of a command line (an unknown argument, a missing or invalid value, a missing
//! subcommand, ...) in the reader's language. English is clap's own error, untouched; for another
//! language the refusal is said again from the catalogue under `cli_error`, naming the argument
//! and value as clap reports them, with the usage and the `--help` hint, and exits 2 as clap's
//! errors do. A kind this file does not know stays clap's.

use clap::error::{ContextKind, ContextValue, ErrorKind};
use rust_i18n::t;

/// A command line parse that ended without matches: clap's error (help, version, or a refusal
/// in English), or a refusal already said in another language.
#[derive(Debug)]
pub enum Refusal {
    Clap(clap::Error),
    Said(String),
}

impl Refusal {
    /// Prints the refusal as clap would (help on stdout, errors on stderr) and exits: 0 for help
    /// and version, 2 for a refusal.
    pub fn exit(self) -> ! {
        match self {
            Refusal::Clap(e) => e.exit(),
            Refusal::Said(text) => {
                eprint!("{text}");
                std::process::exit(i32::from(crate::exit_codes::USAGE))
            }
        }
    }
}

/// The text of `ContextKind` `kind` when clap gave one string.
fn one(e: &clap::Error, kind: ContextKind) -> Option<String> {
    match e.get(kind) {
        Some(ContextValue::String(s)) => Some(s.clone()),
        Some(ContextValue::Strings(list)) if !list.is_empty() => Some(list.join(", ")),
        Some(ContextValue::StyledStr(s)) => Some(s.to_string()),
        _ => None,
    }
}

/// The texts of `ContextKind` `kind`, whether clap gave one or several.
fn many(e: &clap::Error, kind: ContextKind) -> Vec<String> {
    match e.get(kind) {
        Some(ContextValue::String(s)) => vec![s.clone()],
        Some(ContextValue::Strings(list)) => list.clone(),
        _ => Vec::new(),
    }
}

fn number(e: &clap::Error, kind: ContextKind) -> Option<isize> {
    match e.get(kind) {
        Some(ContextValue::Number(n)) => Some(*n),
        _ => None,
    }
}

/// `'a', 'b'`: values as a list in the catalogue's quotes.
fn quoted(values: &[String]) -> String {
    values
        .iter()
        .map(|v| t!("cli_error.quoted", value = v).into_owned())
        .collect::<Vec<_>>()
        .join(t!("cli_error.separator").as_ref())
}

/// The first line of the refusal, `None` for a kind (or a context) this file does not know.
fn headline(e: &clap::Error) -> Option<String> {
    let arg = || one(e, ContextKind::InvalidArg);
    let value = || one(e, ContextKind::InvalidValue);
    let text = match e.kind() {
        ErrorKind::UnknownArgument => t!("cli_error.unknown_argument", arg = arg()?),
        ErrorKind::InvalidValue => match value()? {
            v if v.is_empty() => t!("cli_error.value_missing", arg = arg()?),
            v => t!("cli_error.invalid_value", arg = arg()?, value = v),
        },
        ErrorKind::ValueValidation => {
            let why = std::error::Error::source(e).map(ToString::to_string);
            t!(
                "cli_error.value_refused",
                arg = arg()?,
                value = value()?,
                why = why.unwrap_or_default()
            )
        }
        ErrorKind::MissingRequiredArgument => {
            let list = many(e, ContextKind::InvalidArg);
            if list.is_empty() {
                return None;
            }
            t!("cli_error.missing_arguments", args = list.join(" "))
        }
        ErrorKind::MissingSubcommand => t!(
            "cli_error.missing_subcommand",
            command = one(e, ContextKind::InvalidSubcommand)?
        ),
        ErrorKind::InvalidSubcommand => t!(
            "cli_error.unknown_subcommand",
            word = one(e, ContextKind::InvalidSubcommand)?
        ),
        ErrorKind::NoEquals => t!("cli_error.no_equals", arg = arg()?),
        ErrorKind::TooManyValues => t!("cli_error.too_many", arg = arg()?, value = value()?),
        ErrorKind::TooFewValues => t!(
            "cli_error.too_few",
            arg = arg()?,
            wanted = number(e, ContextKind::MinValues)?,
            given = number(e, ContextKind::ActualNumValues)?
        ),
        ErrorKind::WrongNumberOfValues => t!(
            "cli_error.wrong_number",
            arg = arg()?,
            wanted = number(e, ContextKind::ExpectedNumValues)?,
            given = number(e, ContextKind::ActualNumValues)?
        ),
        ErrorKind::ArgumentConflict => {
            let arg = arg()?;
            let prior = many(e, ContextKind::PriorArg);
            if prior.is_empty() || prior == [arg.clone()] {
                t!("cli_error.used_twice", arg = arg)
            } else {
                t!("cli_error.conflict", arg = arg, others = quoted(&prior))
            }
        }
        ErrorKind::InvalidUtf8 => t!("cli_error.not_utf8"),
        _ => return None,
    };
    Some(text.into_owned())
}

/// The lines under the headline: the valid values or subcommands, and clap's suggestions.
fn details(e: &clap::Error, arg: Option<&str>) -> Vec<String> {
    let mut lines = Vec::new();
    let valid = many(e, ContextKind::ValidValue);
    if !valid.is_empty() {
        lines.push(t!("cli_error.possible_values", values = valid.join(", ")).into_owned());
    }
    let subcommands = many(e, ContextKind::ValidSubcommand);
    if !subcommands.is_empty() {
        lines.push(t!("cli_error.subcommands", names = subcommands.join(", ")).into_owned());
    }
    let tips = [
        (
            ContextKind::SuggestedSubcommand,
            "cli_error.similar_subcommand",
        ),
        (ContextKind::SuggestedArg, "cli_error.similar_argument"),
        (ContextKind::SuggestedValue, "cli_error.similar_value"),
    ];
    for (kind, key) in tips {
        let names = many(e, kind);
        if !names.is_empty() {
            lines.push(t!(key, names = quoted(&names)).into_owned());
        }
    }
    // clap's free-form tip for a word that looks like a flag: say how to pass it as a value.
    if e.get(ContextKind::Suggested).is_some()
        && let Some(arg) = arg.filter(|a| a.starts_with('-'))
    {
        lines.push(t!("cli_error.as_a_value", arg = arg).into_owned());
    }
    lines
}

/// The refusal `e` in the language set with [`crate::config::lang::Lang::apply`], laid out as
/// clap lays out its own: the headline, the details, the usage and the `--help` hint.
/// `None` for a kind this file does not know.
pub fn said(e: &clap::Error) -> Option<String> {
    let mut text = format!("gpufleet: {}\n", headline(e)?);
    let arg = one(e, ContextKind::InvalidArg);
    let details = details(e, arg.as_deref());
    if !details.is_empty() {
        text.push('\n');
        for line in details {
            text.push_str(&format!("  {line}\n"));
        }
    }
    if let Some(ContextValue::StyledStr(usage)) = e.get(ContextKind::Usage) {
        let usage = usage.to_string();
        let rest = usage.strip_prefix("Usage:").unwrap_or(&usage);
        text.push_str(&format!("\n{}{rest}\n", t!("cli_help.clap.usage")));
    }
    text.push_str(&format!("\n{}\n", t!("cli_error.try_help")));
    Some(text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    fn refusal(line: &str) -> clap::Error {
        match crate::cli::Cli::command().try_get_matches_from(line.split_whitespace()) {
            Err(e) => e,
            Ok(_) => panic!("{line} parsed"),
        }
    }

    #[test]
    fn every_refusal_kind_of_a_bad_command_line_is_said_with_its_argument() {
        for (line, named) in [
            ("gpufleet --bogus", "--bogus"),
            ("gpufleet release", "<NAME>"),
            ("gpufleet release --lang", "--lang <LANG>"),
            ("gpufleet runbook --lang en", "gpufleet runbook"),
            ("gpufleet runbook relase", "relase"),
            ("gpufleet playbook relase", "relase"),
            ("gpufleet fit --params 7B --method dora", "dora"),
        ] {
            let text = said(&refusal(line)).unwrap_or_else(|| panic!("{line}: not said"));
            assert!(text.starts_with("gpufleet: "), "{text}");
            assert!(text.contains(named), "{line}: {text}");
        }
    }
}
