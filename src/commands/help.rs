//! `--help` in the reader's language. clap's derive fixes the help's texts at build time, in
//! English; for Chinese the command is built at run time and every text it shows (each
//! command's about, each argument's help, the headings, clap's own words for usage, `-h`, `-V`,
//! defaults and possible values) is taken from the catalogue under `cli_help`. English help is
//! the derive's command untouched.
//!
//! The command line is parsed with the English command first; only when that ends in help
//! (`-h`, `--help`, `help`, or a command that needs a subcommand) is the language chosen, from
//! `--lang` anywhere before `--`, else `language` in the config (`--config FILE` or the default
//! path), else the locale, and the help asked for rendered again in Chinese. A command line
//! clap refuses is said again the same way ([`parse_error`]); `--lang` after `help`
//! (`gpufleet help release --lang zh-CN`) is taken out before the help is rendered.

use std::ffi::OsString;
use std::path::PathBuf;

use clap::builder::StyledStr;
use clap::error::ErrorKind;
use clap::{Arg, ArgAction, ArgMatches, Command, CommandFactory};
use rust_i18n::t;

use crate::cli::Cli;
use crate::commands::parse_error::{self, Refusal};
use crate::config::lang::Lang;

/// A text of the help that gpufleet defines: its catalogue key and the derive's English.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HelpText {
    pub key: String,
    pub english: String,
}

/// The name clap gives its own help subcommand; gpufleet has no subcommand of that name.
const HELP_SUBCOMMAND: &str = "help";

/// The derive's command, built (global arguments copied into every subcommand, clap's own
/// `-h`, `-V` and `help` added), so that every text can be reached.
fn built() -> Command {
    let mut cmd = Cli::command();
    cmd.build();
    cmd
}

/// The catalogue key of a command's about: `cli_help.gpufleet.about`,
/// `cli_help.runbook_run.about`.
fn about_key(path: &[String]) -> String {
    format!("cli_help.{}.about", table(path))
}

fn table(path: &[String]) -> String {
    if path.is_empty() {
        "gpufleet".to_string()
    } else {
        path.join("_")
    }
}

/// The catalogue key of an argument's help: a global one's is the same in every command.
fn arg_key(path: &[String], arg: &Arg) -> String {
    if arg.is_global_set() {
        format!("cli_help.global.{}", arg.get_id())
    } else {
        format!("cli_help.{}.{}", table(path), arg.get_id())
    }
}

/// The catalogue key of a heading the definitions give (`Global options`).
fn heading_key(heading: &str) -> String {
    format!(
        "cli_help.heading.{}",
        heading.to_lowercase().replace(' ', "_")
    )
}

/// clap's own `-h` / `-V`, which the definitions do not write.
fn is_builtin(arg: &Arg) -> bool {
    matches!(arg.get_action(), ArgAction::Help | ArgAction::Version)
}

/// Every text of the help that the definitions write, each once, in the order met.
pub fn texts() -> Vec<HelpText> {
    let mut out = Vec::new();
    collect(&built(), &mut Vec::new(), &mut out);
    out
}

fn collect(cmd: &Command, path: &mut Vec<String>, out: &mut Vec<HelpText>) {
    let mut push = |key: String, english: Option<String>| {
        if let Some(english) = english
            && !out.iter().any(|t: &HelpText| t.key == key)
        {
            out.push(HelpText { key, english });
        }
    };
    let text = |styled: Option<&StyledStr>| styled.map(ToString::to_string);
    push(about_key(path), text(cmd.get_about()));
    if cmd.get_long_about().is_some() {
        push(about_key(path) + "_long", text(cmd.get_long_about()));
    }
    for arg in cmd.get_arguments().filter(|a| !is_builtin(a)) {
        push(arg_key(path, arg), text(arg.get_help()));
        if arg.get_long_help().is_some() {
            push(arg_key(path, arg) + "_long", text(arg.get_long_help()));
        }
        if let Some(heading) = arg.get_help_heading() {
            push(heading_key(heading), Some(heading.to_string()));
        }
    }
    for sub in cmd.get_subcommands() {
        if sub.get_name() == HELP_SUBCOMMAND {
            continue;
        }
        path.push(sub.get_name().to_string());
        collect(sub, path, out);
        path.pop();
    }
}

/// The command whose help is in `lang`: the derive's for English, else every text from the
/// catalogue of the language set with [`Lang::apply`].
pub fn command(lang: Lang) -> Command {
    match lang {
        Lang::En => Cli::command(),
        Lang::ZhCn => localize(built(), &[], &mut Headings::default()),
    }
}

/// The headings in the catalogue's words. clap takes a heading only as a `&'static str` (its
/// `string` feature is off), so each distinct one is leaked, once: a few short strings, made
/// only on the way to printing help and exiting.
#[derive(Default)]
struct Headings {
    known: Vec<(String, &'static str)>,
}

impl Headings {
    /// The heading of `key`, made by `text` the first time.
    fn get(&mut self, key: &str, text: impl FnOnce() -> String) -> &'static str {
        if let Some((_, known)) = self.known.iter().find(|(k, _)| k == key) {
            return known;
        }
        let leaked: &'static str = Box::leak(text().into_boxed_str());
        self.known.push((key.to_string(), leaked));
        leaked
    }

    /// A heading clap writes itself (`Options`), from `cli_help.clap`.
    fn clap(&mut self, key: &str) -> &'static str {
        self.get(key, || t!(key).into_owned())
    }

    /// A heading the definitions write (`Global options`), as it is when the catalogue has none.
    fn defined(&mut self, heading: &str) -> &'static str {
        let key = heading_key(heading);
        self.get(&key, || found(&key).unwrap_or_else(|| heading.to_string()))
    }
}

/// The help's layout, with clap's `Usage:` in the catalogue's words and style.
fn template() -> String {
    let style = clap::builder::Styles::default();
    let usage = style.get_usage();
    format!(
        "{{before-help}}{{about-with-newline}}\n{}{}{} {{usage}}\n\n{{all-args}}{{after-help}}",
        usage.render(),
        t!("cli_help.clap.usage"),
        usage.render_reset()
    )
}

/// The catalogue's text for `key`; `None` when it has none (`t!` gives the key back).
fn found(key: &str) -> Option<String> {
    let text = t!(key);
    (text != key).then(|| text.into_owned())
}

fn localize(cmd: Command, path: &[String], headings: &mut Headings) -> Command {
    let is_help = path.last().is_some_and(|name| name == HELP_SUBCOMMAND);
    let mut cmd = cmd
        .help_template(template())
        .subcommand_help_heading(headings.clap("cli_help.clap.commands"));
    let about = if is_help {
        Some(t!("cli_help.clap.help_command").into_owned())
    } else {
        found(&about_key(path))
    };
    if let Some(about) = about {
        cmd = cmd.about(about);
    }
    if cmd.get_long_about().is_some()
        && let Some(long) = found(&(about_key(path) + "_long"))
    {
        cmd = cmd.long_about(long);
    }
    cmd = cmd.mut_args(|arg| localize_arg(arg, path, is_help, headings));
    if is_help {
        // The help subcommand's copies of the commands are only read by completions.
        return cmd;
    }
    cmd.mut_subcommands(|sub| {
        let mut at = path.to_vec();
        at.push(sub.get_name().to_string());
        localize(sub, &at, headings)
    })
}

fn localize_arg(arg: Arg, path: &[String], in_help: bool, headings: &mut Headings) -> Arg {
    let mut arg = match arg.get_action() {
        ArgAction::Help => {
            let text = t!("cli_help.clap.help").into_owned();
            let long = arg.get_long_help().is_some();
            let arg = arg.help(text.clone());
            if long { arg.long_help(text) } else { arg }
        }
        ArgAction::Version => arg.help(t!("cli_help.clap.version").into_owned()),
        _ if in_help => arg.help(t!("cli_help.clap.help_subcommand").into_owned()),
        _ => {
            let key = arg_key(path, &arg);
            let mut arg = arg;
            if arg.get_help().is_some()
                && let Some(text) = found(&key)
            {
                arg = arg.help(text);
            }
            if arg.get_long_help().is_some()
                && let Some(text) = found(&(key + "_long"))
            {
                arg = arg.long_help(text);
            }
            arg
        }
    };
    let heading = match arg.get_help_heading() {
        Some(heading) => headings.defined(heading),
        None if arg.is_positional() => headings.clap("cli_help.clap.arguments"),
        None => headings.clap("cli_help.clap.options"),
    };
    arg = arg.help_heading(heading);
    // clap writes `[default: ..]` and `[possible values: ..]` itself, in English: they are
    // hidden and written into the help instead, as clap lays them out.
    let mut specs = Vec::new();
    let takes_value = arg.get_action().takes_values();
    if takes_value && !arg.is_hide_default_value_set() && !arg.get_default_values().is_empty() {
        let values: Vec<String> = arg
            .get_default_values()
            .iter()
            .map(|v| v.to_string_lossy().into_owned())
            .collect();
        specs.push(t!("cli_help.clap.default", values = values.join(" ")).into_owned());
        arg = arg.hide_default_value(true);
    }
    if !arg.is_hide_possible_values_set() {
        let values: Vec<String> = arg
            .get_possible_values()
            .iter()
            .filter(|v| !v.is_hide_set())
            .map(|v| v.get_name().to_string())
            .collect();
        if !values.is_empty() {
            specs.push(t!("cli_help.clap.possible", values = values.join(", ")).into_owned());
            arg = arg.hide_possible_values(true);
        }
    }
    if specs.is_empty() {
        return arg;
    }
    let help = arg.get_help().map(ToString::to_string).unwrap_or_default();
    let joined = specs.join(" ");
    arg.help(if help.is_empty() {
        joined
    } else {
        format!("{help} {joined}")
    })
}

/// Whether clap stopped parsing to show help.
fn is_help(kind: ErrorKind) -> bool {
    matches!(
        kind,
        ErrorKind::DisplayHelp | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
    )
}

/// The value of `--NAME VALUE` or `--NAME=VALUE` in `args` (the program's name first),
/// looked for before `--`.
fn flag_value(args: &[OsString], name: &str) -> Option<String> {
    let long = format!("--{name}");
    let with_value = format!("--{name}=");
    let mut words = args.iter().skip(1).map(|a| a.to_string_lossy());
    while let Some(word) = words.next() {
        if word == "--" {
            return None;
        }
        if word == long {
            return words.next().map(|v| v.into_owned());
        }
        if let Some(value) = word.strip_prefix(&with_value) {
            return Some(value.to_string());
        }
    }
    None
}

/// The language of the help: `--lang` in `args`, else the config's `language` (the config
/// named by `--config`, else the default one; a config that cannot be read says nothing),
/// else the locale.
pub fn help_lang(args: &[OsString], env: impl Fn(&str) -> Option<String>) -> Lang {
    let flag = flag_value(args, "lang").and_then(|tag| Lang::from_tag(&tag));
    let config = || {
        let path = flag_value(args, "config")
            .map(PathBuf::from)
            .or_else(|| crate::config::default_path().filter(|p| p.exists()))?;
        crate::config::load(&path).ok()?.lang()
    };
    match flag {
        Some(lang) => lang,
        None => Lang::choose(None, config(), env),
    }
}

/// `args` without `--lang VALUE` / `--lang=VALUE` (before `--`), when that leaves a request
/// for help that `args` is not: clap reads `gpufleet help release --lang zh-CN` as help for a
/// subcommand named `--lang`, so the flag is taken out for the help path only.
fn help_without_lang(args: &[OsString]) -> Option<(clap::Error, Vec<OsString>)> {
    let mut kept = Vec::with_capacity(args.len());
    let mut words = args.iter();
    let mut taken = false;
    while let Some(word) = words.next() {
        let text = word.to_string_lossy();
        if text == "--" {
            kept.push(word.clone());
            kept.extend(words.by_ref().cloned());
            break;
        }
        if text == "--lang" {
            taken = true;
            words.next();
            continue;
        }
        if text.starts_with("--lang=") {
            taken = true;
            continue;
        }
        kept.push(word.clone());
    }
    let asks_for_help = kept.iter().any(|w| w == HELP_SUBCOMMAND);
    if !taken || !asks_for_help {
        return None;
    }
    match Cli::command().try_get_matches_from(kept.clone()) {
        Err(e) if e.kind() == ErrorKind::DisplayHelp => Some((e, kept)),
        _ => None,
    }
}

/// clap's refusal `e` of `args`: as it is in English (and for `--version`), else said again
/// in the language of [`help_lang`] (with a value parser's reason in that language too).
fn refusal(e: clap::Error, args: &[OsString]) -> Refusal {
    if e.kind() == ErrorKind::DisplayVersion {
        return Refusal::Clap(e);
    }
    let lang = help_lang(args, |name| std::env::var(name).ok());
    if lang == Lang::En {
        return Refusal::Clap(e);
    }
    lang.apply();
    // A value parser's reason was written in English during the first parse: parse again.
    let e = match Cli::command().try_get_matches_from(args) {
        Err(again) if e.kind() == ErrorKind::ValueValidation && again.kind() == e.kind() => again,
        _ => e,
    };
    match parse_error::said(&e) {
        Some(text) => Refusal::Said(text),
        None => Refusal::Clap(e),
    }
}

/// Parses the command line `args`. Help asked for comes back as the error to print (through
/// [`Refusal::exit`]), in the language of [`help_lang`]; so does a command line clap refuses.
pub fn matches(args: Vec<OsString>) -> Result<ArgMatches, Refusal> {
    let (english, help_args) = match Cli::command().try_get_matches_from(args.clone()) {
        Ok(matches) => return Ok(matches),
        Err(e) if is_help(e.kind()) => (e, args.clone()),
        Err(e) => match help_without_lang(&args) {
            Some(found) => found,
            None => return Err(refusal(e, &args)),
        },
    };
    let lang = help_lang(&args, |name| std::env::var(name).ok());
    if lang == Lang::En {
        return Err(Refusal::Clap(english));
    }
    lang.apply();
    match command(lang).try_get_matches_from(help_args) {
        Err(help) if is_help(help.kind()) => Err(Refusal::Clap(help)),
        _ => Err(Refusal::Clap(english)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(line: &str) -> Vec<OsString> {
        line.split_whitespace().map(OsString::from).collect()
    }

    #[test]
    fn the_flag_is_found_anywhere_before_the_end_of_options() {
        let none = |_: &str| None;
        let lang = |line: &str| help_lang(&words(line), none);
        assert_eq!(lang("gpufleet release --help --lang zh-CN"), Lang::ZhCn);
        assert_eq!(lang("gpufleet --lang=zh-CN fit -h"), Lang::ZhCn);
        assert_eq!(lang("gpufleet fit -h -- --lang zh-CN"), Lang::En);
        let zh = |name: &str| (name == "LANG").then(|| "zh_CN.UTF-8".to_string());
        assert_eq!(help_lang(&words("gpufleet -h"), zh), Lang::ZhCn);
        assert_eq!(help_lang(&words("gpufleet -h --lang en"), zh), Lang::En);
    }

    #[test]
    fn every_command_and_argument_with_help_has_a_key_once() {
        let texts = texts();
        assert!(texts.len() > 80, "{}", texts.len());
        assert!(texts.iter().any(|t| t.key == "cli_help.global.lang"));
        assert!(texts.iter().any(|t| t.key == "cli_help.runbook_run.param"));
        assert!(
            texts
                .iter()
                .any(|t| t.key == "cli_help.heading.global_options")
        );
    }
}
