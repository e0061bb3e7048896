//! Colour themes: every file in `themes/` loads strictly and is bundled, mistakes are reported
//! with source, line and key, and a user theme overrides a bundled one.

use std::path::{Path, PathBuf};

use gpufleet::theme::{self, Level, Series, Theme, ThemeError};
use ratatui::style::Color;

fn theme_files() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("themes");
    let entries = match std::fs::read_dir(&dir) {
        Ok(entries) => entries,
        Err(error) => panic!("{}: {error}", dir.display()),
    };
    let mut files: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "toml"))
        .collect();
    files.sort();
    files
}

fn stem(path: &Path) -> String {
    path.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
}

fn parse_file(path: &Path) -> Theme {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(error) => panic!("{}: {error}", path.display()),
    };
    // Bundled themes must stand alone: `extends` would hide a style left out by mistake.
    let table: toml::Table = match toml::from_str(&text) {
        Ok(table) => table,
        Err(error) => panic!("{}: {error}", path.display()),
    };
    assert!(
        !table.contains_key("extends"),
        "{}: bundled themes must set every style",
        path.display()
    );
    match Theme::parse(&text, &path.display().to_string()) {
        Ok(theme) => theme,
        Err(error) => panic!("{error}"),
    }
}

fn parse_error(text: &str) -> ThemeError {
    match Theme::parse(text, "mine.toml") {
        Ok(theme) => panic!("expected an error, got {theme:?}"),
        Err(error) => error,
    }
}

#[test]
fn every_theme_file_parses_strictly_and_is_bundled() {
    let files = theme_files();
    assert!(
        files.len() >= 4,
        "expected the four bundled themes, found {files:?}"
    );
    let mut stems = Vec::new();
    for path in &files {
        let parsed = parse_file(path);
        let name = stem(path);
        assert_eq!(
            parsed.name(),
            name,
            "{}: name must match the file name",
            path.display()
        );
        let bundled = Theme::load_named(&name, None);
        assert!(
            matches!(&bundled, Ok(theme) if *theme == parsed),
            "{name} is in themes/ but not embedded (or differs from the file): {bundled:?}"
        );
        stems.push(name);
    }
    let mut bundled: Vec<String> = Theme::bundled_names()
        .iter()
        .map(|s| s.to_string())
        .collect();
    bundled.sort();
    stems.sort();
    assert_eq!(
        bundled, stems,
        "bundled_names() and themes/ must list the same themes"
    );
}

#[test]
fn the_default_theme_is_the_dark_file() {
    let dark = parse_file(&Path::new(env!("CARGO_MANIFEST_DIR")).join("themes/dark.toml"));
    assert_eq!(Theme::default_theme(), dark);
    assert_eq!(Theme::default(), dark);
    assert_eq!(theme::DEFAULT_THEME, "dark");
}

#[test]
fn semantic_styles_differ_where_they_must() {
    for name in Theme::bundled_names() {
        let Ok(theme) = Theme::load_named(name, None) else {
            panic!("{name} does not load")
        };
        let levels = [Level::Ok, Level::Warning, Level::Critical];
        for (i, a) in levels.iter().enumerate() {
            for b in &levels[i + 1..] {
                assert_ne!(
                    theme.gauge(*a),
                    theme.gauge(*b),
                    "{name}: gauge {a:?} = {b:?}"
                );
                assert_ne!(
                    theme.level(*a),
                    theme.level(*b),
                    "{name}: level {a:?} = {b:?}"
                );
            }
        }
        let series = [
            Series::Utilization,
            Series::Memory,
            Series::Temperature,
            Series::Power,
        ];
        for (i, a) in series.iter().enumerate() {
            for b in &series[i + 1..] {
                assert_ne!(
                    theme.chart(*a),
                    theme.chart(*b),
                    "{name}: chart {a:?} = {b:?}"
                );
            }
        }
        assert_ne!(theme.border(), theme.border_focused(), "{name}");
        assert_ne!(theme.selected(), theme.base(), "{name}");
        assert_ne!(theme.badge_critical(), theme.badge_warning(), "{name}");
    }
}

#[test]
fn ansi16_uses_only_the_sixteen_named_colours() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("themes/ansi16.toml");
    let theme = parse_file(&path);
    for (slot, style) in theme.entries() {
        for color in [style.fg, style.bg].into_iter().flatten() {
            assert!(
                !matches!(color, Color::Rgb(..) | Color::Indexed(_)),
                "ansi16: {slot} uses {color:?}"
            );
        }
    }
}

#[test]
fn an_unknown_key_is_rejected_with_the_key_named() {
    let text =
        "extends = \"dark\"\n[styles]\ncritical = { fg = \"red\" }\ncritcal = { fg = \"red\" }\n";
    let error = parse_error(text);
    assert_eq!(
        error.to_string(),
        "mine.toml:4: styles.critcal: unknown key; did you mean `critical`?"
    );
    let error = parse_error("extends = \"dark\"\n[styles]\nok = { fg = \"red\", blink = true }\n");
    assert!(
        matches!(&error, ThemeError::Parse { line: 3, key, .. } if key == "styles.ok.blink"),
        "{error}"
    );
    let error = parse_error("nmae = \"x\"\nextends = \"dark\"\n");
    assert!(
        matches!(&error, ThemeError::Parse { line: 1, key, .. } if key == "nmae"),
        "{error}"
    );
}

#[test]
fn a_bad_colour_is_rejected_with_its_line() {
    let text = "name = \"mine\"\nextends = \"dark\"\n\n[styles]\nbase = { fg = \"#c0c5ce\" }\nwarning = { fg = \"#ebcb8\" }\n";
    let error = parse_error(text);
    let message = error.to_string();
    assert!(
        message.starts_with("mine.toml:6: styles.warning.fg: invalid colour \"#ebcb8\""),
        "{message}"
    );
    assert!(matches!(error, ThemeError::Parse { line: 6, .. }));
    for bad in ["\"orange\"", "\"300\"", "12"] {
        let text = format!("extends = \"dark\"\n[styles]\nok = {{ fg = {bad} }}\n");
        assert!(
            matches!(parse_error(&text), ThemeError::Parse { line: 3, .. }),
            "{bad}"
        );
    }
}

#[test]
fn a_user_theme_overrides_the_bundled_one() {
    let Ok(dir) = tempfile::tempdir() else {
        panic!("no temp dir")
    };
    let user = "extends = \"dark\"\n[styles]\ncritical = { fg = \"#123456\", bold = true }\n";
    assert!(std::fs::write(dir.path().join("dark.toml"), user).is_ok());

    let Ok(theme) = Theme::load_named("dark", Some(dir.path())) else {
        panic!("the user theme did not load")
    };
    assert_eq!(theme.critical().fg, Some(Color::Rgb(0x12, 0x34, 0x56)));
    assert_eq!(theme.ok(), Theme::default_theme().ok());
    assert_eq!(theme.name(), "dark");
    assert_ne!(theme, Theme::default_theme());

    // Names without a user file still come from the bundle.
    let light = Theme::load_named("light", Some(dir.path()));
    assert!(matches!(light, Ok(t) if t.name() == "light"));
}

#[test]
fn a_broken_user_theme_names_its_file() {
    let Ok(dir) = tempfile::tempdir() else {
        panic!("no temp dir")
    };
    let path = dir.path().join("mine.toml");
    assert!(
        std::fs::write(
            &path,
            "extends = \"dark\"\n[styles]\nok = { fg = \"nope\" }\n"
        )
        .is_ok()
    );
    let error = match Theme::load_named("mine", Some(dir.path())) {
        Ok(theme) => panic!("loaded a broken theme: {theme:?}"),
        Err(error) => error,
    };
    assert!(
        error
            .to_string()
            .starts_with(&format!("{}:3: styles.ok.fg: ", path.display())),
        "{error}"
    );
}

#[test]
fn an_unknown_theme_lists_the_bundled_ones() {
    let error = match Theme::load_named("solarized", None) {
        Ok(theme) => panic!("found {theme:?}"),
        Err(error) => error,
    };
    let message = error.to_string();
    assert!(matches!(error, ThemeError::Unknown { .. }));
    for name in Theme::bundled_names() {
        assert!(message.contains(name), "{message}");
    }
}

#[test]
fn level_for_places_readings() {
    assert_eq!(theme::level_for(60.0, 80.0, 90.0), Level::Ok);
    assert_eq!(theme::level_for(85.0, 80.0, 90.0), Level::Warning);
    assert_eq!(theme::level_for(90.0, 80.0, 90.0), Level::Critical);
}
