//! Unit tests of `theme`, kept apart so the module reads as code.
use super::spec::parse_color;
use super::*;

fn parse_ok(text: &str) -> Theme {
    match Theme::parse(text, "t.toml") {
        Ok(theme) => theme,
        Err(error) => panic!("{error}"),
    }
}

#[test]
fn embedded_dark_parses_and_matches_the_hard_coded_copy() {
    let embedded = parse_ok(BUNDLED[0].1);
    assert_eq!(embedded.name(), "dark");
    assert_eq!(embedded.styles, builtin_dark());
    assert_eq!(Theme::default_theme(), embedded);
}

#[test]
fn every_bundled_theme_is_embedded_and_parses() {
    let embedded: Vec<&str> = BUNDLED.iter().map(|(name, _)| *name).collect();
    assert_eq!(embedded, Theme::bundled_names());
    for name in Theme::bundled_names() {
        let theme = bundled(name);
        assert_eq!(theme.map(|t| t.name().to_owned()), Some((*name).to_owned()));
    }
}

#[test]
fn colours_in_all_three_notations() {
    assert_eq!(parse_color("lightred"), Some(Color::LightRed));
    assert_eq!(parse_color("reset"), Some(Color::Reset));
    assert_eq!(parse_color("#ff5F00"), Some(Color::Rgb(255, 95, 0)));
    assert_eq!(parse_color("123"), Some(Color::Indexed(123)));
    for bad in ["#ff5f0", "#gg0000", "256", "", "Red", "light red", "-1"] {
        assert_eq!(parse_color(bad), None, "{bad}");
    }
}

#[test]
fn modifiers_and_colours_build_the_style() {
    let theme = parse_ok(
        "extends = \"dark\"\n[styles]\ncritical = { fg = \"red\", bg = \"1\", bold = true, reversed = true }\n",
    );
    let expected = Style::default()
        .fg(Color::Red)
        .bg(Color::Indexed(1))
        .add_modifier(Modifier::BOLD | Modifier::REVERSED);
    assert_eq!(theme.critical(), expected);
    assert_eq!(theme.level(Level::Critical), expected);
    assert_eq!(theme.ok(), Theme::default_theme().ok());
}

#[test]
fn missing_styles_are_listed_without_extends() {
    let error = Theme::parse("[styles]\nbase = { fg = \"red\" }\n", "t.toml")
        .map(|_| ())
        .map_err(|e| e.to_string());
    let Err(message) = error else {
        panic!("a partial theme without extends must fail")
    };
    assert!(
        message.starts_with("t.toml:1: styles: missing title, border,"),
        "{message}"
    );
}

#[test]
fn extends_must_name_a_bundled_theme() {
    let error = Theme::parse("name = \"x\"\nextends = \"mine\"\n", "t.toml")
        .map(|_| ())
        .map_err(|e| e.to_string());
    assert!(
        matches!(&error, Err(m) if m.starts_with("t.toml:2: extends: \"mine\" is not a bundled theme")),
        "{error:?}"
    );
}

#[test]
fn level_thresholds_both_ways() {
    assert_eq!(level_for(50.0, 80.0, 90.0), Level::Ok);
    assert_eq!(level_for(80.0, 80.0, 90.0), Level::Warning);
    assert_eq!(level_for(95.0, 80.0, 90.0), Level::Critical);
    assert_eq!(level_for(f64::NAN, 80.0, 90.0), Level::Ok);
    assert_eq!(level_for(30.0, 20.0, 10.0), Level::Ok);
    assert_eq!(level_for(15.0, 20.0, 10.0), Level::Warning);
    assert_eq!(level_for(10.0, 20.0, 10.0), Level::Critical);
}

#[test]
fn unsafe_names_never_touch_the_file_system() {
    let dir = Path::new("/nonexistent-theme-dir");
    for name in ["../etc/passwd", "", ".hidden", "a/b"] {
        assert!(
            matches!(
                Theme::load_named(name, Some(dir)),
                Err(ThemeError::Unknown { .. })
            ),
            "{name}"
        );
    }
}

#[test]
fn every_bundled_theme_reduces_to_each_depth() {
    for name in Theme::bundled_names() {
        let Some(theme) = bundled(name) else {
            panic!("{name} is bundled");
        };
        for (slot, style) in theme.for_depth(ColorDepth::None).entries() {
            assert_eq!((style.fg, style.bg), (None, None), "{name}.{slot}");
        }
        for (slot, style) in theme.for_depth(ColorDepth::Indexed256).entries() {
            for color in [style.fg, style.bg].into_iter().flatten() {
                assert!(!matches!(color, Color::Rgb(..)), "{name}.{slot}: {color:?}");
            }
        }
        for (slot, style) in theme.for_depth(ColorDepth::Ansi16).entries() {
            for color in [style.fg, style.bg].into_iter().flatten() {
                let indexed = matches!(color, Color::Rgb(..) | Color::Indexed(_));
                assert!(!indexed, "{name}.{slot}: {color:?}");
            }
        }
        assert_eq!(theme.for_depth(ColorDepth::TrueColor), theme);
    }
    // Without colour the selected row stays visible: bold and reversed.
    let selected = Theme::default_theme()
        .for_depth(ColorDepth::None)
        .selected();
    assert!(
        selected
            .add_modifier
            .contains(Modifier::REVERSED | Modifier::BOLD)
    );
}
