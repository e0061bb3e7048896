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
