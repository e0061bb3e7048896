//! Reading `~/.ssh/config` for one host as OpenSSH's `ssh` does: lines in order, `Host` and
//! `Match` blocks deciding which lines apply, `Include` (globs, relative to `~/.ssh`), and the
//! first value obtained for an option winning (`IdentityFile` and `CertificateFile` add up).
//!
//! `Match` criteria are evaluated with what the lines before them set (`host` is the
//! `HostName` so far, `user` the `User` so far); a `Match final` makes a second pass as OpenSSH
//! does. `Match exec` and `Match localnetwork` are not evaluated (gpufleet runs no command and
//! reads no interface while reading the config): such a block is recorded, with the options it
//! would set, for the caller to warn about or refuse.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::paths::expand_tilde;
use crate::remote::error::RemoteError;
use crate::remote::ssh_config_match::{Criteria, Facts, Outcome, include_paths};
use crate::words::Words;

/// Nested `Include`s beyond this are taken for a loop (OpenSSH's limit is 16).
const MAX_INCLUDE_DEPTH: usize = 16;
/// Options whose every value counts, in order.
const CUMULATIVE: [&str; 2] = ["identityfile", "certificatefile"];

/// One option line that applies.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Setting {
    /// The arguments, unquoted.
    pub args: Vec<String>,
    /// The text after the keyword, as written (`ProxyCommand` runs it as is).
    pub rest: String,
    pub file: PathBuf,
    pub line: usize,
    /// Its place in reading order, to tell which of two options came first.
    pub order: usize,
}

/// A block whose `Match` gpufleet cannot evaluate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Unevaluated {
    /// `exec` or `localnetwork`.
    pub criterion: String,
    pub file: PathBuf,
    pub line: usize,
    /// The options (lowercased) the block sets.
    pub options: Vec<String>,
}

/// What the config says about one host.
#[derive(Debug, Clone, Default)]
pub(crate) struct HostOptions {
    first: HashMap<String, Setting>,
    every: HashMap<String, Vec<Setting>>,
    pub unevaluated: Vec<Unevaluated>,
    /// A `Host` line other than the catch-all `*` matched the host: it is an alias.
    pub named_by_a_block: bool,
    /// The `Host` patterns written without wildcards or negation, in reading order.
    pub literal_hosts: Vec<String>,
}

impl HostOptions {
    /// The first value obtained for `key` (lowercase).
    pub(crate) fn setting(&self, key: &str) -> Option<&Setting> {
        self.first.get(key)
    }

    /// The arguments of the first value obtained for `key` (lowercase).
    pub(crate) fn get(&self, key: &str) -> Option<&[String]> {
        self.first.get(key).map(|s| s.args.as_slice())
    }

    /// Every value of a cumulative option, in order.
    pub(crate) fn all(&self, key: &str) -> &[Setting] {
        self.every.get(key).map_or(&[], Vec::as_slice)
    }

    /// Every option that applies (lowercased), each once.
    pub(crate) fn keys(&self) -> impl Iterator<Item = &String> {
        self.first.keys()
    }

    fn set(&mut self, key: &str, setting: Setting) {
        if CUMULATIVE.contains(&key) {
            // A file named twice (or read again by a `Match final` pass) counts once.
            let every = self.every.entry(key.to_string()).or_default();
            if !every.iter().any(|s| s.args == setting.args) {
                every.push(setting.clone());
            }
        }
        self.first.entry(key.to_string()).or_insert(setting);
    }
}

/// Whether the lines that follow apply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Block {
    Active,
    Inactive,
    /// Under a `Match` not evaluated: index into `unevaluated`.
    Unknown(usize),
}

struct Reader<'a> {
    /// The directory relative `Include`s are resolved in (`~/.ssh`).
    include_dir: Option<PathBuf>,
    home: Option<&'a Path>,
    original: &'a str,
    local_user: &'a str,
    final_pass: bool,
    wants_final: bool,
    order: usize,
    options: HostOptions,
}

/// Reads `path` for `host` (the name as given); `include_dir` is where relative `Include`s
/// are looked for.
pub(crate) fn read_host(
    path: &Path,
    include_dir: Option<&Path>,
    home: Option<&Path>,
    host: &str,
    local_user: &str,
) -> Result<HostOptions, RemoteError> {
    let text = std::fs::read_to_string(path).map_err(|e| RemoteError::SshConfig {
        path: path.to_path_buf(),
        message: Box::new(os_said(&e)),
    })?;
    let mut reader = Reader {
        include_dir: include_dir.map(Path::to_path_buf),
        home,
        original: host,
        local_user,
        final_pass: false,
        wants_final: false,
        order: 0,
        options: HostOptions::default(),
    };
    reader.read_text(path, &text, Block::Active, 0)?;
    if reader.wants_final {
        reader.final_pass = true;
        reader.options.unevaluated.clear();
        reader.read_text(path, &text, Block::Active, 0)?;
    }
    Ok(reader.options)
}

impl Reader<'_> {
    fn fail(path: &Path, line: usize, message: Words) -> RemoteError {
        RemoteError::SshConfig {
            path: path.to_path_buf(),
            message: Box::new(
                Words::new("config_words.at_line")
                    .put("line", line.to_string())
                    .put_words("message", message),
            ),
        }
    }

    fn read_text(
        &mut self,
        path: &Path,
        text: &str,
        start: Block,
        depth: usize,
    ) -> Result<(), RemoteError> {
        let mut block = start;
        for (i, line) in text.lines().enumerate() {
            let line_no = i + 1;
            let Some((keyword, rest)) = split_keyword(line) else {
                continue;
            };
            let args = split_args(rest).map_err(|why| Self::fail(path, line_no, why))?;
            let key = keyword.to_ascii_lowercase();
            match key.as_str() {
                "host" => block = self.host_block(&args, path, line_no)?,
                "match" => block = self.match_block(&args, path, line_no)?,
                "include" => {
                    if block != Block::Inactive {
                        self.include(&args, path, line_no, depth, block)?;
                    }
                }
                _ => match block {
                    Block::Inactive => {}
                    Block::Unknown(at) => {
                        if let Some(u) = self.options.unevaluated.get_mut(at)
                            && !u.options.contains(&key)
                        {
                            u.options.push(key);
                        }
                    }
                    Block::Active => {
                        if args.is_empty() {
                            return Err(Self::fail(
                                path,
                                line_no,
                                Words::new("config_words.needs_value").put("keyword", keyword),
                            ));
                        }
                        self.order += 1;
                        let setting = Setting {
                            args,
                            rest: rest.trim().to_string(),
                            file: path.to_path_buf(),
                            line: line_no,
                            order: self.order,
                        };
                        self.options.set(&key, setting);
                    }
                },
            }
        }
        Ok(())
    }

    fn host_block(
        &mut self,
        args: &[String],
        path: &Path,
        line: usize,
    ) -> Result<Block, RemoteError> {
        if args.is_empty() {
            return Err(Self::fail(
                path,
                line,
                Words::new("config_words.host_needs_pattern"),
            ));
        }
        let name = self.original.to_ascii_lowercase();
        let mut matched = false;
        self.options.literal_hosts.extend(
            args.iter()
                .filter(|p| !p.starts_with('!') && !p.contains(['*', '?']))
                .cloned(),
        );
        for pattern in args {
            let (negated, pattern) = match pattern.strip_prefix('!') {
                Some(rest) => (true, rest),
                None => (false, pattern.as_str()),
            };
            if crate::remote::host_pattern::match_pattern(&name, &pattern.to_ascii_lowercase()) {
                if negated {
                    return Ok(Block::Inactive);
                }
                matched = true;
            }
        }
        if matched && args.iter().any(|p| p != "*") {
            self.options.named_by_a_block = true;
        }
        Ok(if matched {
            Block::Active
        } else {
            Block::Inactive
        })
    }

    fn match_block(
        &mut self,
        args: &[String],
        path: &Path,
        line: usize,
    ) -> Result<Block, RemoteError> {
        let criteria = Criteria::parse(args).map_err(|why| Self::fail(path, line, why))?;
        if criteria.has_final() {
            self.wants_final = true;
        }
        let facts = Facts {
            host: self
                .current_host()
                .map_err(|why| Self::fail(path, line, why))?,
            original: self.original.to_string(),
            user: self
                .options
                .get("user")
                .and_then(|a| a.first().cloned())
                .unwrap_or_else(|| self.local_user.to_string()),
            local_user: self.local_user.to_string(),
            tag: self
                .options
                .get("tag")
                .and_then(|a| a.first().cloned())
                .unwrap_or_default(),
            final_pass: self.final_pass,
        };
        Ok(match criteria.evaluate(&facts) {
            Outcome::Yes => Block::Active,
            Outcome::No => Block::Inactive,
            Outcome::Unevaluated(criterion) => {
                self.options.unevaluated.push(Unevaluated {
                    criterion,
                    file: path.to_path_buf(),
                    line,
                    options: Vec::new(),
                });
                Block::Unknown(self.options.unevaluated.len() - 1)
            }
        })
    }

    /// The host `Match host` sees: `HostName` so far (`%h` expanded), else the name given.
    fn current_host(&self) -> Result<String, Words> {
        match self.options.get("hostname").and_then(|a| a.first()) {
            Some(name) => expand_host_name(name, self.original),
            None => Ok(self.original.to_string()),
        }
    }

    fn include(
        &mut self,
        args: &[String],
        path: &Path,
        line: usize,
        depth: usize,
        block: Block,
    ) -> Result<(), RemoteError> {
        if depth >= MAX_INCLUDE_DEPTH {
            return Err(Self::fail(
                path,
                line,
                Words::new("config_words.include_depth")
                    .put("depth", MAX_INCLUDE_DEPTH.to_string()),
            ));
        }
        for arg in args {
            let expanded = expand_tilde(Path::new(arg), self.home);
            let pattern = if expanded.is_absolute() {
                expanded
            } else {
                match &self.include_dir {
                    Some(dir) => dir.join(expanded),
                    None => continue,
                }
            };
            for file in include_paths(&pattern) {
                let text = match std::fs::read_to_string(&file) {
                    Ok(text) => text,
                    Err(e) if file.is_dir() => {
                        return Err(Self::fail(
                            path,
                            line,
                            Words::new("config_words.file_error")
                                .put("file", file.display().to_string())
                                .put("error", e.to_string()),
                        ));
                    }
                    Err(e) => {
                        return Err(RemoteError::SshConfig {
                            path: file,
                            message: Box::new(os_said(&e)),
                        });
                    }
                };
                self.read_text(&file, &text, block, depth + 1)?;
            }
        }
        Ok(())
    }
}

/// `HostName` with its tokens: `%h` (the name given) and `%%`, as OpenSSH expands it.
pub(crate) fn expand_host_name(value: &str, original: &str) -> Result<String, Words> {
    expand_tokens(value, |token| (token == 'h').then(|| original.to_string())).map_err(|token| {
        Words::new("option_words.host_name_token")
            .put("value", format!("{value:?}"))
            .put("token", format!("%{token}"))
    })
}

/// What the OS said about a file, as it said it.
pub(crate) fn os_said(e: &std::io::Error) -> Words {
    Words::new("config_words.os").put("error", e.to_string())
}

/// Expands OpenSSH's `%` tokens in `text`: `%%` is `%`, `%x` is `value_of('x')`. `Err` with the
/// token (empty for a `%` at the end) that `value_of` does not know.
pub(crate) fn expand_tokens(
    text: &str,
    value_of: impl Fn(char) -> Option<String>,
) -> Result<String, String> {
    let mut out = String::new();
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('%') => out.push('%'),
            Some(token) => match value_of(token) {
                Some(value) => out.push_str(&value),
                None => return Err(token.to_string()),
            },
            None => return Err(String::new()),
        }
    }
    Ok(out)
}

/// The keyword and the rest of a line; `None` for blank lines and comments. The keyword ends
/// at whitespace or `=` (`Port=22`, `Port = 22`).
fn split_keyword(line: &str) -> Option<(&str, &str)> {
    let line = line.trim_start();
    if line.is_empty() || line.starts_with('#') {
        return None;
    }
    let end = line
        .find(|c: char| c.is_whitespace() || c == '=')
        .unwrap_or(line.len());
    let (keyword, rest) = line.split_at(end);
    let rest = rest.trim_start();
    let rest = rest.strip_prefix('=').unwrap_or(rest).trim_start();
    (!keyword.is_empty()).then_some((keyword, rest.trim_end()))
}

/// Arguments as OpenSSH splits them: whitespace between, `"` and `'` quoting, `\` escaping a
/// quote, a backslash or (unquoted) a space; an unquoted `#` starting a word ends the line.
fn split_args(rest: &str) -> Result<Vec<String>, Words> {
    let mut args = Vec::new();
    let mut current = String::new();
    let mut in_word = false;
    let mut quote: Option<char> = None;
    let mut chars = rest.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, quote) {
            ('\\', _)
                if matches!(chars.peek(), Some('\'' | '"' | '\\'))
                    || (quote.is_none() && chars.peek() == Some(&' ')) =>
            {
                if let Some(next) = chars.next() {
                    current.push(next);
                }
                in_word = true;
            }
            ('"' | '\'', None) => {
                quote = Some(c);
                in_word = true;
            }
            (c, Some(q)) if c == q => quote = None,
            (c, None) if c.is_whitespace() => {
                if in_word {
                    args.push(std::mem::take(&mut current));
                    in_word = false;
                }
            }
            ('#', None) if !in_word => break,
            (c, _) => {
                current.push(c);
                in_word = true;
            }
        }
    }
    if quote.is_some() {
        return Err(Words::new("config_words.quote_open"));
    }
    if in_word {
        args.push(current);
    }
    Ok(args)
}

/// `FILE line N` of the ssh config.
pub(crate) fn place(file: &std::path::Path, line: usize) -> Words {
    Words::new("link_notice.place")
        .put("file", file.display().to_string())
        .put("line", line.to_string())
}

#[cfg(test)]
mod tests {
    //! The reader against OpenSSH's rules: first value wins, `Host` negation, `Match` evaluated in
    //! order with what came before, `Match final`, `Include`, quoting.

    use std::path::Path;

    use super::*;

    fn read(dir: &Path, text: &str, host: &str) -> HostOptions {
        let path = dir.join("config");
        std::fs::write(&path, text).expect("write");
        read_host(&path, Some(dir), None, host, "me").expect("reads")
    }

    fn first(options: &HostOptions, key: &str) -> Option<String> {
        options.get(key).and_then(|a| a.first()).cloned()
    }

    #[test]
    fn the_first_value_wins_and_negation_excludes() {
        let dir = tempfile::tempdir().expect("tempdir");
        let text = "User=early\nHost gpu-* !gpu-bad\n  User gpu\n  Port 2222\nHost *\n  User late\n  \
                Port = 22\n  IdentityFile ~/a\n  IdentityFile \"/b c\"\n";
        let o = read(dir.path(), text, "gpu-1");
        assert_eq!(first(&o, "user").as_deref(), Some("early"));
        assert_eq!(first(&o, "port").as_deref(), Some("2222"));
        let files: Vec<&str> = o
            .all("identityfile")
            .iter()
            .map(|s| s.args[0].as_str())
            .collect();
        assert_eq!(files, ["~/a", "/b c"], "IdentityFile adds up");
        let o = read(dir.path(), text, "GPU-BAD");
        assert_eq!(
            first(&o, "port").as_deref(),
            Some("22"),
            "negated: the block is skipped"
        );
    }

    #[test]
    fn match_sees_what_came_before_and_final_runs_a_second_pass() {
        let dir = tempfile::tempdir().expect("tempdir");
        let text = "Host short\n  HostName 10.1.2.3\n  User ubuntu\n\
                Match host 10.1.* user ubuntu\n  Port 40022\n\
                Match originalhost short !user root\n  IdentityFile ~/k\n\
                Match final host 10.1.*\n  ConnectTimeout 7\n\
                Match host short\n  ServerAliveInterval 9\n";
        let o = read(dir.path(), text, "short");
        assert_eq!(first(&o, "port").as_deref(), Some("40022"));
        assert_eq!(o.all("identityfile").len(), 1);
        assert_eq!(first(&o, "connecttimeout").as_deref(), Some("7"));
        assert_eq!(
            first(&o, "serveraliveinterval"),
            None,
            "host is the HostName"
        );
        // A Match before the HostName sees the name given.
        let o = read(
            dir.path(),
            "Match host short\n  Port 1\nHost short\n  HostName 10.1.2.3\n",
            "short",
        );
        assert_eq!(first(&o, "port").as_deref(), Some("1"));
    }

    #[test]
    fn match_exec_is_recorded_with_what_it_would_set() {
        let dir = tempfile::tempdir().expect("tempdir");
        let o = read(
            dir.path(),
            "Match exec \"test -f /x\" host gpu\n  ProxyJump b\n  Compression yes\nHost *\n  Port 7\n",
            "gpu",
        );
        assert_eq!(first(&o, "proxyjump"), None);
        assert_eq!(first(&o, "port").as_deref(), Some("7"));
        assert_eq!(o.unevaluated.len(), 1);
        assert_eq!(o.unevaluated[0].criterion, "exec");
        assert_eq!(o.unevaluated[0].line, 1);
        assert_eq!(o.unevaluated[0].options, ["proxyjump", "compression"]);
        // A criterion that fails settles it: nothing unknown.
        let o = read(dir.path(), "Match host other exec true\n  Port 1\n", "gpu");
        assert!(o.unevaluated.is_empty());
    }

    #[test]
    fn includes_are_relative_globbed_and_follow_their_block() {
        let dir = tempfile::tempdir().expect("tempdir");
        let d = dir.path();
        std::fs::create_dir_all(d.join("conf.d")).expect("mkdir");
        std::fs::write(d.join("conf.d/b.conf"), "Host gpu\n  User from-b\n").expect("write");
        std::fs::write(d.join("conf.d/a.conf"), "Host gpu\n  Port 2200\n").expect("write");
        std::fs::write(d.join("only-other"), "Port 9\n").expect("write");
        let o = read(
            d,
            "Host other\n  Include only-other\nHost *\n  Include conf.d/*.conf\n  User last\n",
            "gpu",
        );
        assert_eq!(first(&o, "port").as_deref(), Some("2200"));
        assert_eq!(first(&o, "user").as_deref(), Some("from-b"));
        let place = o.setting("user").expect("user");
        assert_eq!(
            (place.file.clone(), place.line),
            (d.join("conf.d/b.conf"), 2)
        );
        // A loop is an error, not a hang.
        std::fs::write(d.join("self"), "Include self\n").expect("write");
        let path = d.join("config");
        std::fs::write(&path, "Include self\n").expect("write");
        assert!(read_host(&path, Some(d), None, "gpu", "me").is_err());
    }

    #[test]
    fn lines_split_as_openssh_splits_them() {
        assert_eq!(split_keyword("  Port=22"), Some(("Port", "22")));
        assert_eq!(split_keyword("Port = 22 "), Some(("Port", "22")));
        assert_eq!(split_keyword("# c"), None);
        assert_eq!(split_keyword("   "), None);
        assert_eq!(
            split_args(r#"a "b c" 'd e' f\ g "h\"i" # comment"#).expect("splits"),
            ["a", "b c", "d e", "f g", "h\"i"]
        );
        assert!(split_args("\"open").is_err());
        assert_eq!(
            expand_host_name("%h.example", "gpu").as_deref(),
            Ok("gpu.example")
        );
        assert_eq!(expand_host_name("100%%", "gpu").as_deref(), Ok("100%"));
        assert!(expand_host_name("%p", "gpu").is_err());
    }

    #[test]
    fn a_host_block_names_an_alias_and_the_catch_all_does_not() {
        let dir = tempfile::tempdir().expect("temp");
        let text = "Host *\n  User everyone\nHost gpu-a gpu-b\n  HostName 10.0.0.1\nHost !bad *.corp\n  Port 2222\n";
        let alias = read(dir.path(), text, "gpu-a");
        assert!(alias.named_by_a_block);
        assert_eq!(alias.literal_hosts, vec!["gpu-a", "gpu-b"]);
        assert!(
            read(dir.path(), text, "x.corp").named_by_a_block,
            "a wildcard block names it too"
        );
        assert!(
            !read(dir.path(), text, "somewhere").named_by_a_block,
            "only `Host *` matched"
        );
    }
}
