//! A theme file's styles as written: colours (the 16 ANSI names, `#rrggbb`, a 256-colour
//! index) and modifiers, checked as they are read.

use ratatui::style::{Color, Modifier, Style};
use serde::Deserialize;

/// One style as written: colours plus modifiers. An entry replaces the inherited one whole, so
/// what a style looks like can be read from one line.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct StyleSpec {
    fg: Option<ColorSpec>,
    bg: Option<ColorSpec>,
    #[serde(default)]
    bold: bool,
    #[serde(default)]
    dim: bool,
    #[serde(default)]
    italic: bool,
    #[serde(default)]
    underlined: bool,
    #[serde(default)]
    reversed: bool,
    #[serde(default)]
    crossed_out: bool,
}

impl StyleSpec {
    pub(super) fn to_style(&self) -> Style {
        let flags = [
            (self.bold, Modifier::BOLD),
            (self.dim, Modifier::DIM),
            (self.italic, Modifier::ITALIC),
            (self.underlined, Modifier::UNDERLINED),
            (self.reversed, Modifier::REVERSED),
            (self.crossed_out, Modifier::CROSSED_OUT),
        ];
        let modifiers = flags
            .iter()
            .filter(|(on, _)| *on)
            .fold(Modifier::empty(), |acc, (_, modifier)| acc | *modifier);
        let mut style = Style::default().add_modifier(modifiers);
        if let Some(ColorSpec(fg)) = self.fg {
            style = style.fg(fg);
        }
        if let Some(ColorSpec(bg)) = self.bg {
            style = style.bg(bg);
        }
        style
    }
}

#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(try_from = "String")]
struct ColorSpec(Color);

impl TryFrom<String> for ColorSpec {
    type Error = String;

    fn try_from(text: String) -> Result<Self, String> {
        parse_color(&text).map(ColorSpec).ok_or_else(|| {
            let named = NAMED_COLORS
                .iter()
                .map(|(name, _)| *name)
                .collect::<Vec<_>>()
                .join(", ");
            let text = format!("{text:?}");
            rust_i18n::t!("theme_error.colour", text = text, named = named).into_owned()
        })
    }
}

/// The 16 ANSI colours plus the terminal's own default; the only names a theme may use.
const NAMED_COLORS: &[(&str, Color)] = &[
    ("reset", Color::Reset),
    ("black", Color::Black),
    ("red", Color::Red),
    ("green", Color::Green),
    ("yellow", Color::Yellow),
    ("blue", Color::Blue),
    ("magenta", Color::Magenta),
    ("cyan", Color::Cyan),
    ("gray", Color::Gray),
    ("darkgray", Color::DarkGray),
    ("lightred", Color::LightRed),
    ("lightgreen", Color::LightGreen),
    ("lightyellow", Color::LightYellow),
    ("lightblue", Color::LightBlue),
    ("lightmagenta", Color::LightMagenta),
    ("lightcyan", Color::LightCyan),
    ("white", Color::White),
];

pub(super) fn parse_color(text: &str) -> Option<Color> {
    if let Some((_, color)) = NAMED_COLORS.iter().find(|(name, _)| *name == text) {
        return Some(*color);
    }
    if let Some(hex) = text.strip_prefix('#') {
        if hex.len() != 6 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
            return None;
        }
        let channel = |at: usize| u8::from_str_radix(&hex[at..at + 2], 16).ok();
        return Some(Color::Rgb(channel(0)?, channel(2)?, channel(4)?));
    }
    if !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()) {
        return text.parse::<u8>().ok().map(Color::Indexed);
    }
    None
}
