//! Colour themes: every colour on screen comes from here, and widgets ask for a meaning
//! (`critical`, `gauge(level)`) rather than a colour. Themes are TOML, bundled ones embedded.

use std::path::{Path, PathBuf};

use ratatui::style::{Color, Modifier, Style};
use serde::Deserialize;
use thiserror::Error;

use crate::config::locate::{Document, KeyPath, Located};

pub mod depth;

pub use depth::ColorDepth;

mod spec;
use spec::StyleSpec;

/// The theme used when none is configured.
pub const DEFAULT_THEME: &str = "dark";

const BUNDLED_NAMES: &[&str] = &["dark", "light", "high-contrast", "ansi16"];

const BUNDLED: &[(&str, &str)] = &[
    ("dark", include_str!("../themes/dark.toml")),
    ("light", include_str!("../themes/light.toml")),
    (
        "high-contrast",
        include_str!("../themes/high-contrast.toml"),
    ),
    ("ansi16", include_str!("../themes/ansi16.toml")),
];

/// How far a reading is from fine; drives gauges and the colour of temperatures, power and VRAM.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Level {
    Ok,
    Warning,
    Critical,
}

/// The lines of the history charts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Series {
    Utilization,
    Memory,
    Temperature,
    Power,
}

/// Places `value` against two thresholds. When `critical_at` is below `warn_at` the scale runs
/// the other way (lower is worse), as for free memory. A NaN reading is `Ok`: an unknown value
/// is shown as stale, not as an alarm.
pub fn level_for(value: f64, warn_at: f64, critical_at: f64) -> Level {
    let reached = |threshold: f64| {
        if critical_at >= warn_at {
            value >= threshold
        } else {
            value <= threshold
        }
    };
    if reached(critical_at) {
        Level::Critical
    } else if reached(warn_at) {
        Level::Warning
    } else {
        Level::Ok
    }
}

#[derive(Debug, Error)]
pub enum ThemeError {
    #[error("{}: {source}", .path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{source_name}:{line}: {}{message}", key_prefix(.key))]
    Parse {
        source_name: String,
        line: usize,
        key: String,
        message: String,
    },
    #[error("{}", unknown_text(.name, .searched.as_deref()))]
    Unknown {
        name: String,
        /// The user theme directory that was looked in, if any.
        searched: Option<PathBuf>,
    },
}

fn key_prefix(key: &str) -> String {
    if key.is_empty() {
        String::new()
    } else {
        format!("{key}: ")
    }
}

fn unknown_text(name: &str, searched: Option<&Path>) -> String {
    let name = format!("{name:?}");
    let bundled = BUNDLED_NAMES.join(", ");
    match searched {
        None => rust_i18n::t!("theme_error.unknown", name = name, bundled = bundled),
        Some(dir) => rust_i18n::t!(
            "theme_error.unknown_searched",
            name = name,
            bundled = bundled,
            dir = dir.display()
        ),
    }
    .into_owned()
}

/// Declares the style slots once, so the file schema, the resolved styles and the list of names
/// cannot drift apart.
macro_rules! style_slots {
    ($($name:ident),* $(,)?) => {
        #[derive(Debug, Default, Deserialize)]
        #[serde(deny_unknown_fields)]
        struct StyleTable {
            $($name: Option<StyleSpec>,)*
        }

        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        struct Styles {
            $($name: Style,)*
        }

        const STYLE_NAMES: &[&str] = &[$(stringify!($name)),*];

        impl Styles {
            /// Fills each slot from the table, else from `base`; lists the slots neither has.
            fn resolve(table: StyleTable, base: Option<&Styles>) -> Result<Styles, Vec<&'static str>> {
                let mut missing = Vec::new();
                $(
                    let $name = match (table.$name, base) {
                        (Some(spec), _) => spec.to_style(),
                        (None, Some(base)) => base.$name,
                        (None, None) => {
                            missing.push(stringify!($name));
                            Style::default()
                        }
                    };
                )*
                if missing.is_empty() {
                    Ok(Styles { $($name),* })
                } else {
                    Err(missing)
                }
            }

            fn entries(&self) -> Vec<(&'static str, Style)> {
                vec![$((stringify!($name), self.$name)),*]
            }

            /// Every slot passed through `f` (given the slot's name).
            fn map(&self, f: impl Fn(&'static str, Style) -> Style) -> Styles {
                Styles { $($name: f(stringify!($name), self.$name)),* }
            }
        }
    };
}

style_slots!(
    base,
    title,
    border,
    border_focused,
    header,
    selected,
    dim,
    ok,
    warning,
    critical,
    stale,
    badge_critical,
    badge_warning,
    gauge_ok,
    gauge_warning,
    gauge_critical,
    chart_utilization,
    chart_memory,
    chart_temperature,
    chart_power,
    help_key,
    filter,
    dialog,
    danger,
);

/// The top level of a theme file.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ThemeFile {
    name: Option<String>,
    /// A bundled theme that supplies every style this file leaves out.
    extends: Option<String>,
    #[serde(default)]
    styles: StyleTable,
}

/// A resolved theme: one `Style` per meaning.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Theme {
    name: String,
    styles: Styles,
}

impl Default for Theme {
    fn default() -> Self {
        Self::default_theme()
    }
}

fn bundled(name: &str) -> Option<Theme> {
    let (_, text) = BUNDLED.iter().find(|(bundled, _)| *bundled == name)?;
    Theme::parse(text, &format!("themes/{name}.toml (built in)")).ok()
}

impl Theme {
    /// The embedded dark theme. Never fails: should the embedded file ever stop parsing, an
    /// identical hard-coded copy is used (a test keeps the two equal).
    pub fn default_theme() -> Theme {
        bundled(DEFAULT_THEME).unwrap_or_else(|| Theme {
            name: DEFAULT_THEME.to_owned(),
            styles: builtin_dark(),
        })
    }

    /// The names `load_named` finds without a user theme directory.
    pub fn bundled_names() -> &'static [&'static str] {
        BUNDLED_NAMES
    }

    /// A user file `<extra_dir>/<name>.toml` if there is one, else the bundled theme `name`.
    pub fn load_named(name: &str, extra_dir: Option<&Path>) -> Result<Theme, ThemeError> {
        // The name becomes part of a path; anything path-like can only be an unknown theme.
        let file_name_safe = !name.is_empty()
            && !name.starts_with('.')
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
        if let Some(dir) = extra_dir.filter(|_| file_name_safe) {
            let path = dir.join(format!("{name}.toml"));
            match std::fs::read_to_string(&path) {
                Ok(text) => return Theme::parse(&text, &path.display().to_string()),
                Err(source) if source.kind() == std::io::ErrorKind::NotFound => {}
                Err(source) => return Err(ThemeError::Io { path, source }),
            }
        }
        bundled(name).ok_or_else(|| ThemeError::Unknown {
            name: name.to_owned(),
            searched: extra_dir.map(Path::to_owned),
        })
    }

    /// Reads a theme strictly: unknown keys and bad colours are errors naming `source_name`,
    /// the line and the key. Every style must be set unless `extends` names a bundled theme.
    pub fn parse(text: &str, source_name: &str) -> Result<Theme, ThemeError> {
        let located = |located: Located| ThemeError::Parse {
            source_name: source_name.to_owned(),
            line: located.line,
            key: located.key,
            message: located.message,
        };
        let doc = Document::parse(text).map_err(located)?;
        let file: ThemeFile = doc.deserialize().map_err(located)?;
        let at = |path: KeyPath, message: String| ThemeError::Parse {
            source_name: source_name.to_owned(),
            line: doc.line_of(&path),
            key: path.to_string(),
            message,
        };
        let base = match &file.extends {
            None => None,
            Some(parent) => match bundled(parent) {
                Some(theme) => Some(theme.styles),
                None => {
                    return Err(at(
                        KeyPath::root().key("extends"),
                        rust_i18n::t!(
                            "theme_error.extends",
                            parent = format!("{parent:?}"),
                            bundled = BUNDLED_NAMES.join(", ")
                        )
                        .into_owned(),
                    ));
                }
            },
        };
        let styles = Styles::resolve(file.styles, base.as_ref()).map_err(|missing| {
            at(
                KeyPath::root().key("styles"),
                rust_i18n::t!("theme_error.missing", missing = missing.join(", ")).into_owned(),
            )
        })?;
        let name = file.name.unwrap_or_else(|| {
            Path::new(source_name)
                .file_stem()
                .map(|stem| stem.to_string_lossy().into_owned())
                .unwrap_or_default()
        });
        Ok(Theme { name, styles })
    }

    /// This theme as a terminal of `depth` can show it: true colour unchanged, `#rrggbb` to the
    /// nearest xterm-256 entry, everything to the 16 names, or no colour at all (the selection
    /// and the badges, set apart by their background, are then drawn reversed).
    pub fn for_depth(&self, depth: ColorDepth) -> Theme {
        Theme {
            name: self.name.clone(),
            styles: self.styles.map(|slot, style| {
                let marked_by_background =
                    matches!(slot, "selected" | "badge_critical" | "badge_warning");
                depth.reduce(style, marked_by_background)
            }),
        }
    }

    /// The name the theme file gives itself, else its file name without `.toml`.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The slot names of the `[styles]` table, in schema order.
    pub fn style_names() -> &'static [&'static str] {
        STYLE_NAMES
    }

    /// Every slot and its style, for previews and for checking a theme's palette.
    pub fn entries(&self) -> Vec<(&'static str, Style)> {
        self.styles.entries()
    }

    /// Ordinary text and the background of the whole screen.
    pub fn base(&self) -> Style {
        self.styles.base
    }

    /// Block and screen titles.
    pub fn title(&self) -> Style {
        self.styles.title
    }

    pub fn border(&self) -> Style {
        self.styles.border
    }

    /// The border of the pane that receives keys.
    pub fn border_focused(&self) -> Style {
        self.styles.border_focused
    }

    /// Table column headers.
    pub fn header(&self) -> Style {
        self.styles.header
    }

    /// The selected table row.
    pub fn selected(&self) -> Style {
        self.styles.selected
    }

    /// Secondary text: units, hints, labels.
    pub fn dim(&self) -> Style {
        self.styles.dim
    }

    pub fn ok(&self) -> Style {
        self.styles.ok
    }

    pub fn warning(&self) -> Style {
        self.styles.warning
    }

    pub fn critical(&self) -> Style {
        self.styles.critical
    }

    /// Values too old to trust (a host that stopped reporting).
    pub fn stale(&self) -> Style {
        self.styles.stale
    }

    pub fn badge_critical(&self) -> Style {
        self.styles.badge_critical
    }

    pub fn badge_warning(&self) -> Style {
        self.styles.badge_warning
    }

    /// Text coloured by how bad a reading is (temperature, power, VRAM).
    pub fn level(&self, level: Level) -> Style {
        match level {
            Level::Ok => self.styles.ok,
            Level::Warning => self.styles.warning,
            Level::Critical => self.styles.critical,
        }
    }

    /// A gauge: the foreground fills, the background is the empty track.
    pub fn gauge(&self, level: Level) -> Style {
        match level {
            Level::Ok => self.styles.gauge_ok,
            Level::Warning => self.styles.gauge_warning,
            Level::Critical => self.styles.gauge_critical,
        }
    }

    pub fn chart(&self, series: Series) -> Style {
        match series {
            Series::Utilization => self.styles.chart_utilization,
            Series::Memory => self.styles.chart_memory,
            Series::Temperature => self.styles.chart_temperature,
            Series::Power => self.styles.chart_power,
        }
    }

    /// Key names in the help screen and the footer.
    pub fn help_key(&self) -> Style {
        self.styles.help_key
    }

    /// The filter input line.
    pub fn filter(&self) -> Style {
        self.styles.filter
    }

    /// The body of a modal dialog.
    pub fn dialog(&self) -> Style {
        self.styles.dialog
    }

    /// Labels of actions that can lose work or money (release, reset, reboot).
    pub fn danger(&self) -> Style {
        self.styles.danger
    }
}

/// A copy of `themes/dark.toml` for the case where the embedded file cannot be read.
fn builtin_dark() -> Styles {
    let rgb = |hex: u32| {
        let [_, r, g, b] = hex.to_be_bytes();
        Color::Rgb(r, g, b)
    };
    let fg = |hex: u32| Style::default().fg(rgb(hex));
    let on = |fg_hex: u32, bg_hex: u32| fg(fg_hex).bg(rgb(bg_hex));
    let bold = Modifier::BOLD;
    Styles {
        base: fg(0xc0c5ce).bg(Color::Reset),
        title: fg(0xe5e9f0).add_modifier(bold),
        border: fg(0x4f5b66),
        border_focused: fg(0x61afef).add_modifier(bold),
        header: fg(0x8fa1b3).add_modifier(bold),
        selected: on(0xeff1f5, 0x343d46).add_modifier(bold),
        dim: fg(0x65737e),
        ok: fg(0xa3be8c),
        warning: fg(0xebcb8b),
        critical: fg(0xff5f5f).add_modifier(bold),
        stale: fg(0x65737e).add_modifier(Modifier::ITALIC),
        badge_critical: on(0x1b1d23, 0xff5f5f).add_modifier(bold),
        badge_warning: on(0x1b1d23, 0xebcb8b).add_modifier(bold),
        gauge_ok: on(0xa3be8c, 0x2b303b),
        gauge_warning: on(0xebcb8b, 0x2b303b),
        gauge_critical: on(0xff5f5f, 0x2b303b),
        chart_utilization: fg(0x61afef),
        chart_memory: fg(0xc678dd),
        chart_temperature: fg(0xd19a66),
        chart_power: fg(0x56b6c2),
        help_key: fg(0x61afef).add_modifier(bold),
        filter: fg(0xebcb8b).add_modifier(bold),
        dialog: on(0xc0c5ce, 0x1f2329),
        danger: fg(0xff5f5f).add_modifier(bold | Modifier::UNDERLINED),
    }
}

#[cfg(test)]
mod tests {
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
}
