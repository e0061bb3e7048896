//! The message catalogues (`locales/en.toml`, `locales/zh-CN.toml`) checked for what can go
//! wrong with them: a text missing from one language, an empty text, a `%{value}` one language
//! puts in and the other does not, a plural table without the forms its language's rules ask
//! for, a key the source names that the catalogue lacks, a text no code says any more, and a
//! text that does not render: each is said once in each language with every value filled, and
//! must then show no `%{` and never the key itself, and the Chinese must not be the English
//! (bar the few texts listed in [`SAME_IN_BOTH`] with their reason).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use gpufleet::words::{WordArg, Words, plural_category};

/// The CLDR plural categories a key of a plural table ends with.
const CATEGORIES: [&str; 6] = ["zero", "one", "two", "few", "many", "other"];

/// Where the source builds keys from a prefix and a name it holds (not a literal key), and the
/// file that builds them: a key under the prefix counts as named while that file still builds
/// it (`format!("prefix.`).
const BUILT_KEYS: &[(&str, &str, &str)] = &[
    (
        "runbook_text.",
        "src/runbook/localize.rs",
        "the curated runbooks' texts, by runbook id and step (checked against the runbook files below)",
    ),
    (
        "cli_help.",
        "src/commands/help.rs",
        "the help of each command and flag, by its clap path (checked against the derive below)",
    ),
];

/// Texts that read the same in both languages, with the reason.
const SAME_IN_BOTH: &[(&str, &str)] = &[
    (
        "alert_answer.http",
        "an HTTP status and the service's own words",
    ),
    ("badge.ecc", "ECC is the name of the memory feature"),
    (
        "list_words.space",
        "two texts of their own with a space between",
    ),
    (
        "check_phase.line_alone",
        "a percentage and a phase that is a text of its own",
    ),
    ("check_report.category_pcie", "PCIe is the bus's name"),
    ("check_report.row_pcie", "PCIe is the bus's name"),
    ("column.price", "a unit: dollars per hour"),
    ("config_words.os", "what the OS said, as it said it"),
    ("diagnose_text.rank", "a training rank, as PyTorch names it"),
    ("hint.gpu", "GPU is the device's name"),
    ("link_error.command", "the command's own error"),
    ("link_error.proxy", "a host and what its proxy said"),
    ("link_error.ssh", "where, and what libssh2 said"),
    (
        "link_error.ssh_config",
        "a path and what is wrong there, a text of its own",
    ),
    ("live_evidence.size_gib", "a size and its unit"),
    ("live_evidence.size_mib", "a size and its unit"),
    (
        "release.then",
        "two texts of their own, one after the other",
    ),
    ("remote_words.peer", "an address"),
    (
        "xid_text.name",
        "Xid is NVIDIA's name for the error and the code is a number",
    ),
];

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A catalogue as flat `key -> text`, nested tables joined with dots as rust-i18n reads them.
fn catalogue(lang: &str) -> BTreeMap<String, String> {
    let path = root().join("locales").join(format!("{lang}.toml"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let table: toml::Table =
        toml::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut out = BTreeMap::new();
    flatten("", &toml::Value::Table(table), &mut out, &path);
    out
}

fn flatten(prefix: &str, value: &toml::Value, out: &mut BTreeMap<String, String>, path: &Path) {
    match value {
        toml::Value::Table(table) => {
            for (k, v) in table {
                let key = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}.{k}")
                };
                flatten(&key, v, out, path);
            }
        }
        toml::Value::String(s) => {
            out.insert(prefix.to_string(), s.clone());
        }
        other => panic!("{}: {prefix} is not text: {other:?}", path.display()),
    }
}

/// `(message, form)`: `count.host.one` is the form `one` of the plural table `count.host`, a
/// table that holds `other` and only plural categories; any other key is its own message.
fn message_of<'a>(key: &'a str, texts: &BTreeMap<String, String>) -> (&'a str, Option<&'a str>) {
    if let Some((message, form)) = key.rsplit_once('.')
        && CATEGORIES.contains(&form)
        && texts.contains_key(&format!("{message}.other"))
    {
        let table = format!("{message}.");
        let only_forms = texts
            .range(table.clone()..)
            .take_while(|(k, _)| k.starts_with(&table))
            .all(|(k, _)| CATEGORIES.contains(&&k[table.len()..]));
        if only_forms {
            return (message, Some(form));
        }
    }
    (key, None)
}

/// The catalogue by message: each message's texts, by plural form (`None` for a plain text).
fn messages(
    texts: &BTreeMap<String, String>,
) -> BTreeMap<String, BTreeMap<Option<String>, String>> {
    let mut out: BTreeMap<String, BTreeMap<Option<String>, String>> = BTreeMap::new();
    for (key, text) in texts {
        let (message, form) = message_of(key, texts);
        out.entry(message.to_string())
            .or_default()
            .insert(form.map(str::to_string), text.clone());
    }
    out
}

/// The plural categories `lang`'s rules give the counts 0 to 1000.
fn categories_of(lang: &str) -> BTreeSet<String> {
    (0..=1000)
        .filter_map(|n| plural_category(lang, &n.to_string()))
        .map(str::to_string)
        .collect()
}

/// The `%{name}` placeholders of a catalogue text.
fn placeholders(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut rest = text;
    while let Some(at) = rest.find("%{") {
        let after = &rest[at + 2..];
        match after.find('}') {
            Some(end) => {
                out.insert(after[..end].to_string());
                rest = &after[end + 1..];
            }
            None => break,
        }
    }
    out
}

/// What is wrong with the two catalogues as such (empty when nothing is).
fn catalogue_problems(en: &BTreeMap<String, String>, zh: &BTreeMap<String, String>) -> Vec<String> {
    let mut problems = Vec::new();
    let (en_messages, zh_messages) = (messages(en), messages(zh));
    for (lang, mine, other) in [
        ("zh-CN", &en_messages, &zh_messages),
        ("en", &zh_messages, &en_messages),
    ] {
        for message in mine.keys().filter(|m| !other.contains_key(*m)) {
            problems.push(format!("{message}: missing from {lang}.toml"));
        }
    }
    for (lang, texts) in [("en", en), ("zh-CN", zh)] {
        for (key, text) in texts {
            if text.trim().is_empty() {
                problems.push(format!("{lang}.toml {key}: empty"));
            }
            // Texts with choices (`VRAM GiB|VRAM|GiB`, longest first) have no empty choice.
            if text.contains('|') && text.split('|').any(|choice| choice.trim().is_empty()) {
                problems.push(format!("{lang}.toml {key}: an empty choice in {text:?}"));
            }
        }
    }
    for (lang, messages) in [("en", &en_messages), ("zh-CN", &zh_messages)] {
        let wanted = categories_of(lang);
        for (message, forms) in messages.iter().filter(|(_, f)| !f.contains_key(&None)) {
            let have: BTreeSet<String> = forms.keys().flatten().cloned().collect();
            if have != wanted {
                problems.push(format!(
                    "{lang}.toml {message}: plural forms {have:?}, the language's rules use {wanted:?}"
                ));
            }
        }
    }
    for (message, forms) in &en_messages {
        let Some(zh_forms) = zh_messages.get(message) else {
            continue;
        };
        let mut sets = forms
            .values()
            .chain(zh_forms.values())
            .map(|t| placeholders(t));
        let first = sets.next().unwrap_or_default();
        if sets.any(|set| set != first) {
            problems.push(format!(
                "{message}: the languages (or forms) put in different values"
            ));
        }
    }
    problems
}

/// The source's code, a file at a time: every `.rs` file under `src/` but the test files, each
/// up to its `#[cfg(test)] mod tests`, without its `//` comment lines.
fn source_code() -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut stack = vec![root().join("src")];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            if path.extension().is_none_or(|e| e != "rs") {
                continue;
            }
            let name = path
                .strip_prefix(root())
                .map(|p| p.to_string_lossy().into_owned())
                .unwrap_or_default();
            if name.ends_with("_tests.rs") || name.ends_with("/tests.rs") {
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap_or_default();
            let code = text
                .split("#[cfg(test)]\nmod tests")
                .next()
                .unwrap_or_default();
            let code: Vec<&str> = code
                .lines()
                .filter(|line| !line.trim_start().starts_with("//"))
                .collect();
            out.push((name, code.join("\n")));
        }
    }
    out.sort();
    out
}

/// The string literals of `code` that read like a catalogue key: `section.name`, lower case.
fn key_literals(code: &str) -> BTreeSet<String> {
    let key = regex::Regex::new(r#""([a-z0-9_]+(?:\.[a-z0-9_]+)+)""#).expect("a pattern");
    key.captures_iter(code).map(|c| c[1].to_string()).collect()
}

/// The keys `code` says with a catalogue call: `t!("...")`, `Words::new("...")`,
/// `Words::counted("...")`.
fn called_keys(code: &str) -> BTreeSet<String> {
    let call = regex::Regex::new(r#"(?:\bt!\(|Words::new\(|Words::counted\()\s*"([^"]+)""#)
        .expect("a pattern");
    call.captures_iter(code).map(|c| c[1].to_string()).collect()
}

/// The catalogue's keys no source names (empty when every one is named).
fn unused(en: &BTreeMap<String, String>, code: &[(String, String)]) -> Vec<String> {
    let mut named: BTreeSet<String> = code.iter().flat_map(|(_, c)| key_literals(c)).collect();
    let built: Vec<&str> = BUILT_KEYS
        .iter()
        .filter(|(prefix, file, _)| {
            code.iter()
                .any(|(name, c)| name == file && c.contains(&format!("format!(\"{prefix}")))
        })
        .map(|(prefix, _, _)| *prefix)
        .collect();
    named.extend(
        en.keys()
            .filter(|k| built.iter().any(|prefix| k.starts_with(prefix)))
            .cloned(),
    );
    en.keys()
        .filter(|key| {
            let (message, _) = message_of(key, en);
            !named.contains(*key) && !named.contains(message)
        })
        .cloned()
        .collect()
}

/// The keys the source names in a catalogue call that the catalogue lacks.
fn missing(en: &BTreeMap<String, String>, code: &[(String, String)]) -> Vec<String> {
    let messages = messages(en);
    code.iter()
        .flat_map(|(name, c)| called_keys(c).into_iter().map(move |k| (name.clone(), k)))
        .filter(|(_, key)| !messages.contains_key(key))
        .map(|(name, key)| format!("{name}: {key}"))
        .collect()
}

/// `message` said in `lang` with each of its values filled (`n` with `count`, the others with
/// `⟨name⟩`); the problems it shows.
fn render_problems(message: &str, template: &str, lang: &str, count: u64) -> (String, Vec<String>) {
    let names = placeholders(template);
    let args: Vec<(String, WordArg)> = names
        .iter()
        .map(|name| {
            let value = if name == "n" {
                count.to_string()
            } else {
                format!("⟨{name}⟩")
            };
            (name.clone(), WordArg::Verbatim(value))
        })
        .collect();
    let said = Words::from_parts(message.to_string(), args).render(lang);
    let mut problems = Vec::new();
    if said.contains("%{") {
        problems.push(format!(
            "{lang} {message}: a value left unfilled in {said:?}"
        ));
    }
    if said == message {
        problems.push(format!("{lang} {message}: says its key"));
    }
    for name in names.iter().filter(|n| *n != "n") {
        if !said.contains(&format!("⟨{name}⟩")) {
            problems.push(format!(
                "{lang} {message}: %{{{name}}} not shown in {said:?}"
            ));
        }
    }
    (said, problems)
}

#[test]
fn both_catalogues_hold_the_same_messages_none_empty_with_the_same_values() {
    let en = catalogue("en");
    let zh = catalogue("zh-CN");
    assert!(
        en.len() > 100,
        "the English catalogue holds {} texts",
        en.len()
    );
    let problems = catalogue_problems(&en, &zh);
    assert!(problems.is_empty(), "{problems:#?}");
}

#[test]
fn every_key_the_source_names_is_in_the_catalogue_and_every_text_is_named() {
    let en = catalogue("en");
    let code = source_code();
    assert!(code.len() > 100, "{} source files", code.len());
    let missing = missing(&en, &code);
    assert!(missing.is_empty(), "keys with no text: {missing:#?}");
    let unused = unused(&en, &code);
    assert!(unused.is_empty(), "texts no code names: {unused:#?}");
}

/// Every text rendered once in each language: every value shown, no `%{` left, never the key,
/// the Chinese not the English; a plural table says the count in each of its forms.
#[test]
fn every_text_renders_in_both_languages() {
    let en = catalogue("en");
    let mut problems = Vec::new();
    let mut same = BTreeSet::new();
    for (message, forms) in messages(&en) {
        let template = forms.values().next().cloned().unwrap_or_default();
        let counts: &[u64] = if forms.contains_key(&None) {
            &[2]
        } else {
            &[1, 2, 0]
        };
        for &count in counts {
            let (en_said, mut found) = render_problems(&message, &template, "en", count);
            let (zh_said, zh_found) = render_problems(&message, &template, "zh-CN", count);
            found.extend(zh_found);
            if !forms.contains_key(&None) && !en_said.contains(&count.to_string()) {
                found.push(format!(
                    "en {message}: the count {count} not said in {en_said:?}"
                ));
            }
            if en_said == zh_said {
                same.insert(message.clone());
            }
            problems.extend(found);
        }
    }
    let listed: BTreeSet<String> = SAME_IN_BOTH.iter().map(|(k, _)| k.to_string()).collect();
    let unlisted: Vec<&String> = same.difference(&listed).collect();
    let stale: Vec<&String> = listed.difference(&same).collect();
    assert!(problems.is_empty(), "{problems:#?}");
    assert!(
        unlisted.is_empty(),
        "the Chinese is the English: {unlisted:#?}"
    );
    assert!(
        stale.is_empty(),
        "listed as the same, but translated: {stale:#?}"
    );
}

/// The checks above catch what they are for: a text missing in Chinese, an unused text, a
/// renamed value, a plural table without its language's forms, an unknown key.
#[test]
fn the_checks_catch_a_broken_catalogue() {
    let en = catalogue("en");
    let zh = catalogue("zh-CN");
    let mut no_zh = zh.clone();
    no_zh.remove("fleet.title");
    assert!(
        catalogue_problems(&en, &no_zh)
            .iter()
            .any(|p| p.contains("fleet.title"))
    );
    let mut renamed = zh.clone();
    renamed.insert(
        "cli.config_ok.other".into(),
        "正常：%{count} 台主机（%{path}）".into(),
    );
    assert!(
        catalogue_problems(&en, &renamed)
            .iter()
            .any(|p| p.contains("cli.config_ok"))
    );
    let mut one_form = en.clone();
    one_form.remove("count.host.one");
    assert!(
        catalogue_problems(&one_form, &zh)
            .iter()
            .any(|p| p.contains("count.host"))
    );
    let mut extra = en.clone();
    extra.insert("fleet.never_said".into(), "never said".into());
    assert_eq!(
        unused(&extra, &source_code()),
        vec!["fleet.never_said".to_string()]
    );
    let code = vec![(
        "src/x.rs".to_string(),
        r#"let a = t!("fleet.no_such");"#.to_string(),
    )];
    assert_eq!(
        missing(&en, &code),
        vec!["src/x.rs: fleet.no_such".to_string()]
    );
    let (_, found) = render_problems("fleet.no_such", "", "en", 2);
    assert!(!found.is_empty(), "an unknown key says its key");
}

/// The things the console and the commands count, as English says more than one of them.
const COUNTED: &[&str] = &[
    "hosts",
    "GPUs",
    "lines",
    "line",
    "instances",
    "warnings",
    "times",
    "entries",
    "events",
    "samples",
];

/// The English texts that put a count (`%{n}`, `%{count}`) before a counted noun outside a
/// plural table: each would say "1 hosts".
fn counts_outside_plural_tables(en: &BTreeMap<String, String>) -> Vec<String> {
    let count =
        regex::Regex::new(r"%\{(?:n|count)\}\s+(?:more\s+)?([A-Za-z]+)").expect("a pattern");
    en.iter()
        .filter(|(key, _)| message_of(key, en).1.is_none())
        .filter(|(_, text)| count.captures_iter(text).any(|c| COUNTED.contains(&&c[1])))
        .map(|(key, text)| format!("{key}: {text:?}"))
        .collect()
}

/// A count is said with its language's plural forms, so nothing says "1 hosts": a count before
/// a counted noun is a plural table, and said with 1 its English has no plural noun.
#[test]
fn counts_are_plural_tables_and_one_is_singular() {
    let en = catalogue("en");
    let loose = counts_outside_plural_tables(&en);
    assert!(
        loose.is_empty(),
        "counts outside a plural table: {loose:#?}"
    );
    let tables: Vec<String> = messages(&en)
        .into_iter()
        .filter(|(_, forms)| !forms.contains_key(&None))
        .map(|(message, _)| message)
        .collect();
    assert!(tables.len() >= 5, "{tables:?}");
    for message in &tables {
        let template = &en[&format!("{message}.other")];
        let (one, _) = render_problems(message, template, "en", 1);
        for noun in COUNTED.iter().filter(|n| n.ends_with('s')) {
            assert!(
                !one.contains(&format!("1 {noun}")) && !one.contains(&format!("1 more {noun}")),
                "{message} with 1: {one:?}"
            );
        }
    }
}

#[test]
fn the_help_close_hint_is_the_catalogues_english() {
    assert_eq!(
        catalogue("en")["help.close_hint"],
        gpufleet::app::keymap::HELP_CLOSE_HINT
    );
}

#[test]
fn every_help_binding_names_a_catalogue_text() {
    let en = catalogue("en");
    for (keys, what) in gpufleet::app::keymap::BINDINGS {
        assert!(en.contains_key(*what), "{keys}: no text {what}");
    }
}

/// The readable texts of the curated runbooks as their files write them, by catalogue key.
fn curated_runbook_texts() -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for (name, text) in gpufleet::runbook::catalog::CURATED {
        let book = gpufleet::runbook::parse_runbook(text, name).expect("a curated runbook");
        for t in gpufleet::runbook::localize::texts(&book) {
            out.insert(t.key, t.text.to_string());
        }
    }
    out
}

/// The runbook files stay the English source: the catalogue's English of each runbook text is
/// the file's text, and every runbook text of the catalogue belongs to a curated runbook.
#[test]
fn the_runbooks_english_in_the_catalogue_is_the_runbook_files_text() {
    let en = catalogue("en");
    let zh = catalogue("zh-CN");
    let files = curated_runbook_texts();
    assert!(files.len() > 100, "{} runbook texts", files.len());
    for (key, text) in &files {
        assert_eq!(en.get(key), Some(text), "en.toml {key}");
        let facts = |t: &str| -> BTreeSet<String> {
            t.split('{')
                .skip(1)
                .filter_map(|rest| rest.split_once('}').map(|(name, _)| name.to_string()))
                .collect()
        };
        assert_eq!(
            facts(&zh[key]),
            facts(text),
            "zh-CN.toml {key}: facts named"
        );
    }
    let stray: Vec<&String> = en
        .keys()
        .filter(|k| k.starts_with("runbook_text.") && !files.contains_key(*k))
        .collect();
    assert!(stray.is_empty(), "runbook texts of no runbook: {stray:?}");
}

/// The help's English in the catalogue is the derive's text (src/cli.rs's doc comments), so the
/// English help and the catalogue never drift apart; every text has its Chinese.
#[test]
fn the_helps_english_in_the_catalogue_is_the_derives_text() {
    let en = catalogue("en");
    let zh = catalogue("zh-CN");
    let texts = gpufleet::commands::help::texts();
    assert!(texts.len() > 80, "{} help texts", texts.len());
    for text in &texts {
        assert_eq!(
            en.get(&text.key),
            Some(&text.english),
            "en.toml {}",
            text.key
        );
        assert!(zh.contains_key(&text.key), "zh-CN.toml {}", text.key);
    }
    let stray: Vec<&String> = en
        .keys()
        .filter(|k| {
            k.starts_with("cli_help.")
                && !k.starts_with("cli_help.clap.")
                && !texts.iter().any(|t| &t.key == *k)
        })
        .collect();
    assert!(stray.is_empty(), "help texts of no command: {stray:?}");
}

/// The Chinese runbook texts read as the console shows them (their line breaks, made for the
/// terminal, joined by a space) have no space between two Chinese characters or after Chinese
/// punctuation (`没有 进程`, `、 nvidia-smi`): Chinese puts none there.
#[test]
fn chinese_runbook_texts_have_no_space_between_chinese_characters() {
    let zh = catalogue("zh-CN");
    let wide = |c: char| !c.is_ascii();
    let mut stray = Vec::new();
    for (key, text) in zh.iter().filter(|(k, _)| k.starts_with("runbook_text.")) {
        let joined: Vec<char> = text
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
            .chars()
            .collect();
        for at in joined.windows(3) {
            if at[1] == ' ' && wide(at[0]) && (wide(at[2]) || "、，。；：".contains(at[0])) {
                stray.push(format!("{key}: {}", at.iter().collect::<String>()));
            }
        }
    }
    assert!(stray.is_empty(), "{stray:#?}");
}
