//! Maps byte positions in a TOML document to 1-based lines and dotted key paths, so that every
//! config and theme error can say `file:line: key: message`.

use std::fmt;

use rust_i18n::t;
use serde::Deserialize;
use toml::Spanned;
use toml::de::{DeTable, DeValue};

/// One step of a key path: a table key or an array index.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Segment {
    Key(String),
    Index(usize),
}

/// A path such as `hosts[1].release.provider`; indexes are 0-based, as in the file's arrays.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct KeyPath(Vec<Segment>);

impl KeyPath {
    pub(crate) fn root() -> Self {
        Self::default()
    }

    pub(crate) fn key(&self, key: &str) -> Self {
        let mut segments = self.0.clone();
        segments.push(Segment::Key(key.to_owned()));
        Self(segments)
    }

    pub(crate) fn index(&self, index: usize) -> Self {
        let mut segments = self.0.clone();
        segments.push(Segment::Index(index));
        Self(segments)
    }

    /// The name of the last key, ignoring array indexes after it.
    pub(crate) fn last_key(&self) -> Option<&str> {
        self.0.iter().rev().find_map(|segment| match segment {
            Segment::Key(key) => Some(key.as_str()),
            Segment::Index(_) => None,
        })
    }
}

impl fmt::Display for KeyPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, segment) in self.0.iter().enumerate() {
            match segment {
                Segment::Index(index) => write!(f, "[{index}]")?,
                Segment::Key(key) => {
                    if i > 0 {
                        f.write_str(".")?;
                    }
                    let bare = !key.is_empty()
                        && key
                            .chars()
                            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
                    if bare {
                        f.write_str(key)?;
                    } else {
                        write!(f, "{key:?}")?;
                    }
                }
            }
        }
        Ok(())
    }
}

/// Where a problem is and what it is, before the caller adds the file name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Located {
    pub(crate) line: usize,
    pub(crate) key: String,
    pub(crate) message: String,
}

/// A parsed TOML document that keeps the spans of every key and value.
pub(crate) struct Document<'i> {
    text: &'i str,
    root: Spanned<DeTable<'i>>,
}

impl<'i> Document<'i> {
    /// Parses the syntax only; a syntax error is placed on the key it interrupts when there is one.
    pub(crate) fn parse(text: &'i str) -> Result<Self, Located> {
        // The recovering parser still returns the keys around the error, which is what lets a
        // syntax error name a key.
        let (root, errors) = DeTable::parse_recoverable(text);
        let doc = Self { text, root };
        match errors.first() {
            None => Ok(doc),
            Some(error) => Err(doc.locate_syntax(error)),
        }
    }

    /// Deserializes the document into `T`, turning serde's messages into located ones.
    pub(crate) fn deserialize<T: Deserialize<'i>>(&self) -> Result<T, Located> {
        T::deserialize(toml::de::Deserializer::from(self.root.clone()))
            .map_err(|error| self.locate_value_error(&error))
    }

    /// The line of the deepest part of `path` present in the file (1 when none is).
    pub(crate) fn line_of(&self, path: &KeyPath) -> usize {
        let mut pos = None;
        let mut table = Some(self.root.get_ref());
        let mut value: Option<&DeValue<'i>> = None;
        for segment in &path.0 {
            match segment {
                Segment::Key(key) => {
                    let Some(entry) =
                        table.and_then(|t| t.iter().find(|(k, _)| k.get_ref() == key))
                    else {
                        break;
                    };
                    pos = Some(entry.0.span().start);
                    value = Some(entry.1.get_ref());
                }
                Segment::Index(index) => {
                    let Some(item) = value
                        .and_then(DeValue::as_array)
                        .and_then(|items| items.get(*index))
                    else {
                        break;
                    };
                    pos = Some(item.span().start);
                    value = Some(item.get_ref());
                }
            }
            table = value.and_then(DeValue::as_table);
        }
        pos.map_or(1, |pos| self.line_at(pos))
    }

    /// Every key in the document with the position of the key itself, in file order.
    pub(crate) fn keys(&self) -> Vec<(KeyPath, usize)> {
        let mut out = Vec::new();
        collect_keys(self.root.get_ref(), &KeyPath::root(), &mut out);
        out.sort_by_key(|(_, pos)| *pos);
        out
    }

    pub(crate) fn line_at(&self, pos: usize) -> usize {
        let end = pos.min(self.text.len());
        self.text.as_bytes()[..end]
            .iter()
            .filter(|b| **b == b'\n')
            .count()
            + 1
    }

    fn locate_syntax(&self, error: &toml::de::Error) -> Located {
        let message = t!("config_error.invalid_toml", why = error.message()).into_owned();
        let Some(pos) = error.span().map(|span| span.start) else {
            return Located {
                line: 1,
                key: String::new(),
                message,
            };
        };
        let line = self.line_at(pos);
        // A duplicate key is reported at the second spelling, which the tree does not hold;
        // the first one, with the same name, gives the full path.
        let duplicate_of = (error.message() == "duplicate key")
            .then(|| error.span().and_then(|span| self.text.get(span)))
            .flatten()
            .map(|key| key.trim_matches(['"', '\'']));
        let key = match self.find(pos) {
            Some((path, _)) => path.to_string(),
            None => self
                .keys()
                .into_iter()
                .rev()
                .find(|(path, key_pos)| match duplicate_of {
                    Some(name) => path.last_key() == Some(name),
                    None => *key_pos <= pos && self.line_at(*key_pos) == line,
                })
                .map(|(path, _)| path.to_string())
                .unwrap_or_default(),
        };
        Located { line, key, message }
    }

    fn locate_value_error(&self, error: &toml::de::Error) -> Located {
        let raw = error.message();
        let Some(pos) = error.span().map(|span| span.start) else {
            return Located {
                line: 1,
                key: String::new(),
                message: raw.to_owned(),
            };
        };
        let line = self.line_at(pos);
        let found = self.find(pos);
        let found_type = found.as_ref().map(|(_, value)| value.type_str());
        let mut path = found.map(|(path, _)| path).unwrap_or_default();

        let message = if let Some(rest) = raw.strip_prefix("missing field `") {
            if let Some(field) = rest.strip_suffix('`') {
                path = path.key(field);
            }
            t!("config_error.missing").into_owned()
        } else if raw.starts_with("unknown field `") {
            unknown_key_message(raw)
        } else if let Some(rest) = raw.strip_prefix("unknown variant `") {
            let value = rest.split('`').next().unwrap_or_default();
            t!(
                "config_error.unknown_value",
                value = value,
                allowed = quoted_after_expected(raw).join(", ")
            )
            .into_owned()
        } else if let Some(rest) = raw.strip_prefix("invalid type: ") {
            let message = type_message(rest, found_type);
            let array_wanted = rest
                .rsplit_once(", expected ")
                .is_some_and(|(_, expected)| expected == "a sequence");
            if found_type == Some("table") && array_wanted {
                t!(
                    "config_error.array_of_tables",
                    message = message,
                    path = path
                )
                .into_owned()
            } else {
                message
            }
        } else if let Some(rest) = raw.strip_prefix("invalid value: ") {
            type_message(rest, None)
        } else {
            raw.to_owned()
        };
        Located {
            line,
            key: path.to_string(),
            message,
        }
    }

    /// The deepest key or array item whose key or value covers `pos`.
    fn find(&self, pos: usize) -> Option<(KeyPath, &DeValue<'i>)> {
        find_in_table(self.root.get_ref(), &KeyPath::root(), pos)
    }
}

fn covers(span: &std::ops::Range<usize>, pos: usize) -> bool {
    span.contains(&pos) || (span.is_empty() && span.start == pos)
}

// Children are searched before their parent because a table header's span covers only the
// header, not the keys below it.
fn find_in_table<'a, 'i>(
    table: &'a DeTable<'i>,
    path: &KeyPath,
    pos: usize,
) -> Option<(KeyPath, &'a DeValue<'i>)> {
    for (key, value) in table.iter() {
        let here = path.key(key.get_ref());
        if let Some(found) = find_in_value(value.get_ref(), &here, pos) {
            return Some(found);
        }
        if covers(&key.span(), pos) || covers(&value.span(), pos) {
            return Some((here, value.get_ref()));
        }
    }
    None
}

fn find_in_value<'a, 'i>(
    value: &'a DeValue<'i>,
    path: &KeyPath,
    pos: usize,
) -> Option<(KeyPath, &'a DeValue<'i>)> {
    match value {
        DeValue::Table(table) => find_in_table(table, path, pos),
        DeValue::Array(items) => items.iter().enumerate().find_map(|(i, item)| {
            let here = path.index(i);
            find_in_value(item.get_ref(), &here, pos)
                .or_else(|| covers(&item.span(), pos).then(|| (here, item.get_ref())))
        }),
        _ => None,
    }
}

fn collect_keys(table: &DeTable<'_>, path: &KeyPath, out: &mut Vec<(KeyPath, usize)>) {
    for (key, value) in table.iter() {
        let here = path.key(key.get_ref());
        out.push((here.clone(), key.span().start));
        collect_value_keys(value.get_ref(), &here, out);
    }
}

fn collect_value_keys(value: &DeValue<'_>, path: &KeyPath, out: &mut Vec<(KeyPath, usize)>) {
    match value {
        DeValue::Table(table) => collect_keys(table, path, out),
        DeValue::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                collect_value_keys(item.get_ref(), &path.index(i), out);
            }
        }
        _ => {}
    }
}

/// The backquoted names serde lists after "expected" (`one of `a`, `b``, `` `a` or `b` ``).
fn quoted_after_expected(message: &str) -> Vec<&str> {
    let Some((_, expected)) = message.split_once("expected") else {
        return Vec::new();
    };
    expected.split('`').skip(1).step_by(2).collect()
}

fn unknown_key_message(raw: &str) -> String {
    let unknown = raw
        .strip_prefix("unknown field `")
        .and_then(|rest| rest.split('`').next())
        .unwrap_or_default();
    let allowed = quoted_after_expected(raw);
    if allowed.is_empty() {
        return t!("config_error.unknown_key_no_keys").into_owned();
    }
    let closest = allowed
        .iter()
        .map(|name| (edit_distance(unknown, name), *name))
        .min()
        .filter(|(distance, name)| *distance <= 2.max(name.len() / 4));
    match closest {
        Some((_, name)) => t!("config_error.unknown_key_did_you_mean", name = name),
        None => t!(
            "config_error.unknown_key_expected",
            allowed = allowed.join(", ")
        ),
    }
    .into_owned()
}

/// The Levenshtein distance between `a` and `b`, in characters (for "did you mean").
pub(crate) fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut current = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            let substitution = previous[j] + usize::from(ca != *cb);
            current[j + 1] = substitution.min(previous[j + 1] + 1).min(current[j] + 1);
        }
        previous = current;
    }
    previous[b.len()]
}

/// Rewrites serde's `<unexpected>, expected <type>` in the words a config author uses.
fn type_message(rest: &str, found_type: Option<&str>) -> String {
    let Some((unexpected, expected)) = rest.rsplit_once(", expected ") else {
        return rest.to_owned();
    };
    let integer_wanted = matches!(
        expected,
        "u8" | "u16" | "u32" | "u64" | "usize" | "i8" | "i16" | "i32" | "i64" | "isize"
    );
    let found = match found_type {
        // An integer too large for the field arrives as "invalid type"; say what it is.
        Some("integer") if integer_wanted => literal_of(unexpected),
        Some(kind) => with_article(kind),
        None if integer_wanted && unexpected.starts_with("integer") => literal_of(unexpected),
        None => unexpected_words(unexpected),
    };
    let expected = expected_words(expected);
    t!(
        "config_error.type_mismatch",
        expected = expected,
        found = found
    )
    .into_owned()
}

/// serde's name of the type a field wants (`u32`, `a sequence`), in the config author's words;
/// a visitor's own `expecting` text comes through as it is.
fn expected_words(expected: &str) -> String {
    let range = |max: u64| t!("config_error.kind_whole_number_to", max = max);
    match expected {
        "f64" | "f32" => t!("config_error.kind_number"),
        "u8" => range(u8::MAX.into()),
        "u16" => range(u16::MAX.into()),
        "u32" => range(u32::MAX.into()),
        "u64" | "usize" => range(u64::MAX),
        "i8" | "i16" | "i32" | "i64" | "isize" => t!("config_error.kind_whole_number"),
        "a borrowed string" | "a str" | "a string" => t!("config_error.kind_string"),
        "a boolean" => t!("config_error.kind_true_false"),
        "a sequence" => t!("config_error.kind_array"),
        "a map" => t!("config_error.kind_table"),
        other if other.starts_with("struct ") => t!("config_error.kind_table"),
        other => return other.to_owned(),
    }
    .into_owned()
}

/// A TOML value's type (`toml`'s `type_str`) with its article, as "found ..." says it.
fn with_article(kind: &str) -> String {
    match kind {
        "string" => t!("config_error.kind_string"),
        "integer" => t!("config_error.kind_integer"),
        "float" => t!("config_error.kind_float"),
        "boolean" => t!("config_error.kind_boolean"),
        "datetime" => t!("config_error.kind_datetime"),
        "array" => t!("config_error.kind_array"),
        _ => t!("config_error.kind_table"),
    }
    .into_owned()
}

/// The literal inside serde's "integer `-1`" (dropping a trailing "as i128").
fn literal_of(unexpected: &str) -> String {
    unexpected
        .split('`')
        .nth(1)
        .map_or_else(|| unexpected.to_owned(), str::to_owned)
}

/// serde's words for the value it found (`string "abc"`, `floating point 1.5`), as "found ..."
/// says them.
fn unexpected_words(unexpected: &str) -> String {
    let kind = unexpected.split(' ').next().unwrap_or_default();
    match kind {
        "string" => t!("config_error.kind_string"),
        "integer" => t!("config_error.kind_integer"),
        "floating" => t!("config_error.kind_float"),
        "boolean" => t!("config_error.kind_boolean"),
        "sequence" => t!("config_error.kind_array"),
        "map" => t!("config_error.kind_table"),
        _ => return unexpected.to_owned(),
    }
    .into_owned()
}

#[cfg(test)]
mod tests {
    //! Tests of `locate`: config errors that say the line and the key path.

    use super::*;

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Item {
        name: String,
        size: Option<u32>,
    }

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Doc {
        #[serde(default)]
        items: Vec<Item>,
        ratio: Option<f64>,
    }

    fn error_of(text: &str) -> Located {
        let doc = match Document::parse(text) {
            Ok(doc) => doc,
            Err(located) => return located,
        };
        match doc.deserialize::<Doc>() {
            Ok(parsed) => panic!("expected an error, parsed {parsed:?}"),
            Err(located) => located,
        }
    }

    #[test]
    fn key_paths_quote_keys_that_are_not_bare() {
        let path = KeyPath::root().key("hosts").index(2).key("a b");
        assert_eq!(path.to_string(), "hosts[2].\"a b\"");
    }

    #[test]
    fn type_error_in_second_array_table() {
        let text = "[[items]]\nname = \"a\"\n\n[[items]]\nname = \"b\"\nsize = \"big\"\n";
        let located = error_of(text);
        assert_eq!(located.line, 6);
        assert_eq!(located.key, "items[1].size");
        assert_eq!(
            located.message,
            "expected a whole number from 0 to 4294967295, found a string"
        );
    }

    #[test]
    fn negative_and_huge_integers_say_the_range() {
        let located = error_of("[[items]]\nname = \"a\"\nsize = -1\n");
        assert_eq!(located.key, "items[0].size");
        assert!(located.message.ends_with("found -1"), "{}", located.message);
        let located = error_of("[[items]]\nname = \"a\"\nsize = 99999999999999999999\n");
        assert!(
            located.message.ends_with("found 99999999999999999999"),
            "{}",
            located.message
        );
    }

    #[test]
    fn float_for_a_number_field() {
        let located = error_of("ratio = true\n");
        assert_eq!(located.message, "expected a number, found a boolean");
    }

    #[test]
    fn unknown_key_suggests_the_close_one() {
        let located = error_of("ratio = 1.0\n[[items]]\nname = \"a\"\nszie = 3\n");
        assert_eq!((located.line, located.key.as_str()), (4, "items[0].szie"));
        assert_eq!(located.message, "unknown key; did you mean `size`?");
    }

    #[test]
    fn unknown_key_lists_the_allowed_ones_when_nothing_is_close() {
        let located = error_of("colour = 1\n");
        assert_eq!(located.key, "colour");
        assert_eq!(
            located.message,
            "unknown key; expected one of: items, ratio"
        );
    }

    #[test]
    fn missing_field_names_the_field_on_the_header_line() {
        let located = error_of("ratio = 1.0\n\n[[items]]\nsize = 3\n");
        assert_eq!((located.line, located.key.as_str()), (3, "items[0].name"));
    }

    #[test]
    fn syntax_error_names_the_key_on_its_line() {
        let located = error_of("ratio = 1.0\nname = = 3\n");
        assert_eq!(located.line, 2);
        assert_eq!(located.key, "name");
        assert!(
            located.message.starts_with("invalid TOML: "),
            "{}",
            located.message
        );
    }

    #[test]
    fn duplicate_key_names_the_full_path() {
        let located = error_of("[[items]]\nname = \"a\"\nname = \"b\"\n");
        assert_eq!((located.line, located.key.as_str()), (3, "items[0].name"));
    }

    #[test]
    fn a_table_where_an_array_of_tables_belongs_gets_a_hint() {
        let located = error_of("[items]\nname = \"a\"\n");
        assert_eq!(
            located.message,
            "expected an array, found a table; each entry of an array of tables starts with [[items]]"
        );
    }

    #[test]
    fn line_of_walks_as_far_as_the_file_goes() {
        let text = "ratio = 1.0\n[[items]]\nname = \"a\"\n[[items]]\nname = \"b\"\n";
        let doc = match Document::parse(text) {
            Ok(doc) => doc,
            Err(located) => panic!("{located:?}"),
        };
        let items = KeyPath::root().key("items");
        assert_eq!(doc.line_of(&items.index(1).key("name")), 5);
        assert_eq!(doc.line_of(&items.index(1).key("size")), 4);
        assert_eq!(doc.line_of(&KeyPath::root().key("nowhere")), 1);
    }
}
