//! `Match` lines of the ssh config (criteria ANDed, each negatable with `!`, pattern lists
//! matched as OpenSSH's `match_pattern_list`), and the file globs of `Include`.

use crate::words::Words;
use std::path::{Path, PathBuf};

use crate::remote::host_pattern::{ListMatch, match_host_list, match_pattern};

/// One criterion of a `Match` line.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Criterion {
    negated: bool,
    /// Lowercased: `all`, `canonical`, `final`, `host`, `originalhost`, `user`, `localuser`,
    /// `tagged`, `exec`, `localnetwork`, ...
    name: String,
    arg: Option<String>,
}

/// The criteria of one `Match` line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Criteria(Vec<Criterion>);

/// What the criteria are evaluated against.
pub(crate) struct Facts {
    /// `HostName` so far, else the name given.
    pub host: String,
    pub original: String,
    /// `User` so far, else the local user.
    pub user: String,
    pub local_user: String,
    pub tag: String,
    pub final_pass: bool,
}

/// Whether a `Match` block applies.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Outcome {
    Yes,
    No,
    /// It depends on a criterion gpufleet does not evaluate (named).
    Unevaluated(String),
}

/// Criteria without an argument.
const BARE: [&str; 3] = ["all", "canonical", "final"];
/// Criteria gpufleet recognises but does not evaluate.
const NOT_EVALUATED: [&str; 4] = ["exec", "localnetwork", "version", "sessiontype"];
const WITH_ARG: [&str; 5] = ["host", "originalhost", "user", "localuser", "tagged"];

impl Criteria {
    pub(crate) fn parse(args: &[String]) -> Result<Self, Words> {
        if args.is_empty() {
            return Err(Words::new("config_words.match_needs_criterion"));
        }
        let mut out = Vec::new();
        let mut words = args.iter();
        while let Some(word) = words.next() {
            let (negated, name) = match word.strip_prefix('!') {
                Some(rest) => (true, rest.to_ascii_lowercase()),
                None => (false, word.to_ascii_lowercase()),
            };
            let arg = if BARE.contains(&name.as_str()) {
                None
            } else if WITH_ARG.contains(&name.as_str())
                || NOT_EVALUATED.contains(&name.as_str())
                || name == "command"
            {
                match words.next() {
                    Some(arg) => Some(arg.clone()),
                    None => {
                        return Err(Words::new("config_words.match_needs_arg").put("name", name));
                    }
                }
            } else {
                return Err(
                    Words::new("config_words.match_unsupported").put("name", format!("{name:?}"))
                );
            };
            out.push(Criterion { negated, name, arg });
        }
        let all = out.iter().any(|c| c.name == "all");
        if all && out.iter().any(|c| !BARE.contains(&c.name.as_str())) {
            return Err(Words::new("config_words.match_all"));
        }
        Ok(Criteria(out))
    }

    pub(crate) fn has_final(&self) -> bool {
        self.0.iter().any(|c| c.name == "final")
    }

    /// All criteria must hold; one that fails decides, whatever could not be evaluated.
    pub(crate) fn evaluate(&self, facts: &Facts) -> Outcome {
        let mut unevaluated = None;
        for criterion in &self.0 {
            let arg = criterion.arg.as_deref().unwrap_or_default();
            let holds = match criterion.name.as_str() {
                "all" => true,
                "canonical" => false,
                "final" => facts.final_pass,
                "host" => match_host_list(&facts.host, arg) == ListMatch::Yes,
                "originalhost" => match_host_list(&facts.original, arg) == ListMatch::Yes,
                "user" => match_list(&facts.user, arg),
                "localuser" => match_list(&facts.local_user, arg),
                "tagged" => match_list(&facts.tag, arg),
                other => {
                    unevaluated.get_or_insert_with(|| other.to_string());
                    continue;
                }
            };
            if holds == criterion.negated {
                return Outcome::No;
            }
        }
        match unevaluated {
            Some(name) => Outcome::Unevaluated(name),
            None => Outcome::Yes,
        }
    }
}

/// A case-sensitive pattern list (user names), with `!` negation.
fn match_list(name: &str, list: &str) -> bool {
    let mut matched = false;
    for item in list.split(',') {
        let (negated, pattern) = match item.strip_prefix('!') {
            Some(rest) => (true, rest),
            None => (false, item),
        };
        if match_pattern(name, pattern) {
            if negated {
                return false;
            }
            matched = true;
        }
    }
    matched
}

/// The files an `Include` pattern names, sorted as glob(3) sorts them: `*` and `?` in any
/// path component; a pattern without wildcards names its file if it exists.
pub(crate) fn include_paths(pattern: &Path) -> Vec<PathBuf> {
    let mut found = vec![PathBuf::from("/")];
    let components: Vec<String> = pattern
        .components()
        .filter_map(|c| match c {
            std::path::Component::Normal(s) => Some(s.to_string_lossy().into_owned()),
            _ => None,
        })
        .collect();
    let base = if pattern.is_absolute() {
        PathBuf::from("/")
    } else {
        PathBuf::new()
    };
    found[0] = base;
    for part in components {
        let mut next = Vec::new();
        for dir in &found {
            if part.contains(['*', '?']) {
                let Ok(entries) = std::fs::read_dir(if dir.as_os_str().is_empty() {
                    Path::new(".")
                } else {
                    dir
                }) else {
                    continue;
                };
                let mut names: Vec<String> = entries
                    .flatten()
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    // As glob(3), a leading dot is matched only by a leading dot.
                    .filter(|n| !n.starts_with('.') || part.starts_with('.'))
                    .filter(|n| match_pattern(n, &part))
                    .collect();
                names.sort();
                next.extend(names.into_iter().map(|n| dir.join(n)));
            } else {
                next.push(dir.join(&part));
            }
        }
        found = next;
    }
    found.into_iter().filter(|p| p.exists()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts() -> Facts {
        Facts {
            host: "10.0.0.5".into(),
            original: "gpu-7".into(),
            user: "ubuntu".into(),
            local_user: "me".into(),
            tag: String::new(),
            final_pass: false,
        }
    }

    fn eval(line: &str) -> Outcome {
        let args: Vec<String> = line.split_whitespace().map(String::from).collect();
        Criteria::parse(&args).expect("parses").evaluate(&facts())
    }

    #[test]
    fn criteria_are_anded_negated_and_matched_as_openssh_does() {
        assert_eq!(eval("all"), Outcome::Yes);
        assert_eq!(eval("host 10.0.0.*"), Outcome::Yes);
        assert_eq!(eval("host gpu-7"), Outcome::No, "host is the HostName");
        assert_eq!(eval("originalhost gpu-*"), Outcome::Yes);
        assert_eq!(eval("originalhost gpu-*,!gpu-7"), Outcome::No);
        assert_eq!(eval("!originalhost bastion user ubuntu"), Outcome::Yes);
        assert_eq!(eval("user root"), Outcome::No);
        assert_eq!(eval("localuser me host 10.*"), Outcome::Yes);
        assert_eq!(eval("canonical all"), Outcome::No);
        assert_eq!(eval("final all"), Outcome::No);
        assert_eq!(eval("exec true"), Outcome::Unevaluated("exec".into()));
        assert_eq!(
            eval("user root exec true"),
            Outcome::No,
            "a failed criterion decides"
        );
        assert!(Criteria::parse(&["all".into(), "host".into(), "x".into()]).is_err());
        assert!(Criteria::parse(&["host".into()]).is_err());
        assert!(Criteria::parse(&["colour".into(), "x".into()]).is_err());
    }

    #[test]
    fn include_globs_sort_and_skip_dotfiles() {
        let dir = tempfile::tempdir().expect("tempdir");
        let d = dir.path();
        std::fs::create_dir_all(d.join("conf.d/sub")).expect("mkdir");
        for name in ["b.conf", "a.conf", ".hidden.conf", "c.txt", "sub/x.conf"] {
            std::fs::write(d.join("conf.d").join(name), "").expect("write");
        }
        assert_eq!(
            include_paths(&d.join("conf.d/*.conf")),
            vec![d.join("conf.d/a.conf"), d.join("conf.d/b.conf")]
        );
        assert_eq!(
            include_paths(&d.join("*/sub/?.conf")),
            vec![d.join("conf.d/sub/x.conf")]
        );
        assert_eq!(
            include_paths(&d.join("conf.d/a.conf")),
            vec![d.join("conf.d/a.conf")]
        );
        assert!(include_paths(&d.join("nothing/*")).is_empty());
    }
}
