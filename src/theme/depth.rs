//! Colour depth: how many colours the terminal shows (millions, 256, 16 or none), read from
//! the environment as other terminal programs read it, and a style's colours brought down to
//! that depth. `NO_COLOR` (any non-empty value, <https://no-color.org>) means no colour at all;
//! bold, reverse and the other modifiers stay, so the selection is still visible.

use ratatui::style::{Color, Modifier, Style};

/// What the terminal can show.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ColorDepth {
    /// 24-bit colour: `COLORTERM=truecolor` or `24bit`, or a `-direct` terminfo entry.
    TrueColor,
    /// The xterm 256-colour palette: `TERM` names a `256color` entry.
    Indexed256,
    /// The 16 ANSI colours, whose shades the terminal's palette decides: any other `TERM`.
    Ansi16,
    /// No colour escapes at all: `NO_COLOR` is set, or `TERM=dumb`.
    None,
}

impl ColorDepth {
    /// The depth the process's environment asks for.
    pub fn from_env() -> ColorDepth {
        ColorDepth::from_vars(|name| std::env::var(name).ok())
    }

    /// The depth for the variables `var` returns (`NO_COLOR`, `COLORTERM`, `TERM`).
    pub fn from_vars(var: impl Fn(&str) -> Option<String>) -> ColorDepth {
        let set = |name: &str| var(name).filter(|value| !value.is_empty());
        if set("NO_COLOR").is_some() {
            return ColorDepth::None;
        }
        let term = set("TERM").unwrap_or_default().to_ascii_lowercase();
        if term == "dumb" {
            return ColorDepth::None;
        }
        let colorterm = set("COLORTERM").unwrap_or_default().to_ascii_lowercase();
        if colorterm == "truecolor" || colorterm == "24bit" || term.ends_with("-direct") {
            ColorDepth::TrueColor
        } else if term.contains("256") {
            ColorDepth::Indexed256
        } else {
            ColorDepth::Ansi16
        }
    }

    /// `style` as this depth can show it. Without colour, a style whose background set it apart
    /// (`reverse_when_colourless`: the selection, badges) is drawn reversed instead.
    pub fn reduce(self, style: Style, reverse_when_colourless: bool) -> Style {
        let mut out = style;
        match self {
            ColorDepth::TrueColor => {}
            ColorDepth::Indexed256 => {
                out.fg = style.fg.map(to_256);
                out.bg = style.bg.map(to_256);
            }
            ColorDepth::Ansi16 => {
                out.fg = style.fg.map(to_16);
                out.bg = style.bg.map(to_16);
            }
            ColorDepth::None => {
                out.fg = None;
                out.bg = None;
                let had_background = style.bg.is_some_and(|bg| bg != Color::Reset);
                if reverse_when_colourless && had_background {
                    out = out.add_modifier(Modifier::REVERSED);
                }
            }
        }
        out
    }
}

/// The six levels of each channel in the xterm colour cube (indices 16 to 231).
const CUBE_LEVELS: [u8; 6] = [0, 95, 135, 175, 215, 255];

/// A colour as an xterm-256 index; the first 16 entries are left alone, as are the names, since
/// the terminal's palette decides what they look like.
pub fn to_256(color: Color) -> Color {
    match color {
        Color::Rgb(r, g, b) => Color::Indexed(nearest_256(r, g, b)),
        other => other,
    }
}

/// The nearest entry of the cube or the grey ramp (indices 16 to 255).
fn nearest_256(r: u8, g: u8, b: u8) -> u8 {
    let level = |value: u8| -> usize {
        (0..CUBE_LEVELS.len())
            .min_by_key(|&i| CUBE_LEVELS[i].abs_diff(value))
            .unwrap_or(0)
    };
    let (ri, gi, bi) = (level(r), level(g), level(b));
    let cube = (CUBE_LEVELS[ri], CUBE_LEVELS[gi], CUBE_LEVELS[bi]);
    let cube_index = 16 + 36 * ri + 6 * gi + bi;
    // The grey ramp: 24 steps from 8 to 238.
    let mean = (u16::from(r) + u16::from(g) + u16::from(b)) / 3;
    let grey_step = (mean.saturating_sub(3) / 10).min(23) as u8;
    let grey = 8 + 10 * grey_step;
    let grey_index = 232 + usize::from(grey_step);
    if distance((r, g, b), (grey, grey, grey)) < distance((r, g, b), cube) {
        grey_index as u8
    } else {
        cube_index as u8
    }
}

/// The 16 ANSI names, normal and bright, by hue: red, yellow, green, cyan, blue, magenta.
const HUES: [(Color, Color); 6] = [
    (Color::Red, Color::LightRed),
    (Color::Yellow, Color::LightYellow),
    (Color::Green, Color::LightGreen),
    (Color::Cyan, Color::LightCyan),
    (Color::Blue, Color::LightBlue),
    (Color::Magenta, Color::LightMagenta),
];

/// A colour as one of the 16 ANSI names; names and `reset` are kept. The terminal decides
/// what the names look like, so the choice goes by what the colour is (a grey, or a hue and
/// whether it is bright) rather than by the nearest of some palette's shades: the soft green
/// of a theme stays green instead of becoming the grey that is numerically nearer.
pub fn to_16(color: Color) -> Color {
    let (r, g, b) = match color {
        Color::Rgb(r, g, b) => (r, g, b),
        Color::Indexed(i) if i < 16 => return INDEXED16[usize::from(i)],
        Color::Indexed(i) => indexed_rgb(i),
        other => return other,
    };
    let max = r.max(g).max(b);
    let min = r.min(g).min(b);
    let chroma = f64::from(max - min);
    let lightness = (f64::from(max) + f64::from(min)) / 2.0 / 255.0;
    let saturation = chroma / 255.0 / (1.0 - (2.0 * lightness - 1.0).abs()).max(f64::EPSILON);
    if chroma < 40.0 || saturation < 0.2 {
        let mean = (u16::from(r) + u16::from(g) + u16::from(b)) / 3;
        return match mean {
            0..48 => Color::Black,
            48..150 => Color::DarkGray,
            150..230 => Color::Gray,
            _ => Color::White,
        };
    }
    let (r, g, b) = (f64::from(r), f64::from(g), f64::from(b));
    let sector = if max == min {
        0.0
    } else if r >= g && r >= b {
        ((g - b) / chroma).rem_euclid(6.0)
    } else if g >= b {
        (b - r) / chroma + 2.0
    } else {
        (r - g) / chroma + 4.0
    };
    let hue = sector * 60.0;
    let index = match hue {
        h if !(25.0..330.0).contains(&h) => 0,
        h if h < 75.0 => 1,
        h if h < 160.0 => 2,
        h if h < 200.0 => 3,
        h if h < 265.0 => 4,
        _ => 5,
    };
    let (normal, bright) = HUES[index];
    if max >= 217 { bright } else { normal }
}

/// Indices 0 to 15 are the 16 names.
const INDEXED16: [Color; 16] = [
    Color::Black,
    Color::Red,
    Color::Green,
    Color::Yellow,
    Color::Blue,
    Color::Magenta,
    Color::Cyan,
    Color::Gray,
    Color::DarkGray,
    Color::LightRed,
    Color::LightGreen,
    Color::LightYellow,
    Color::LightBlue,
    Color::LightMagenta,
    Color::LightCyan,
    Color::White,
];

/// What an xterm-256 index from 16 up looks like.
fn indexed_rgb(index: u8) -> (u8, u8, u8) {
    if index >= 232 {
        let grey = 8 + 10 * (index - 232);
        return (grey, grey, grey);
    }
    let i = usize::from(index.saturating_sub(16));
    (
        CUBE_LEVELS[(i / 36) % 6],
        CUBE_LEVELS[(i / 6) % 6],
        CUBE_LEVELS[i % 6],
    )
}

/// Squared distance, with green weighted most and blue least, as the eye sees them.
fn distance(a: (u8, u8, u8), b: (u8, u8, u8)) -> u32 {
    let d = |x: u8, y: u8| u32::from(x.abs_diff(y)).pow(2);
    3 * d(a.0, b.0) + 4 * d(a.1, b.1) + 2 * d(a.2, b.2)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(pairs: &[(&str, &str)]) -> ColorDepth {
        let owned: Vec<(String, String)> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        ColorDepth::from_vars(|name| {
            owned
                .iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.clone())
        })
    }

    #[test]
    fn depth_from_the_environment() {
        let truecolor = [("TERM", "xterm-256color"), ("COLORTERM", "truecolor")];
        assert_eq!(vars(&truecolor), ColorDepth::TrueColor);
        assert_eq!(
            vars(&[("TERM", "xterm"), ("COLORTERM", "24bit")]),
            ColorDepth::TrueColor
        );
        assert_eq!(vars(&[("TERM", "xterm-direct")]), ColorDepth::TrueColor);
        assert_eq!(vars(&[("TERM", "xterm-256color")]), ColorDepth::Indexed256);
        assert_eq!(
            vars(&[("TERM", "tmux-256color"), ("COLORTERM", "")]),
            ColorDepth::Indexed256
        );
        assert_eq!(vars(&[("TERM", "xterm")]), ColorDepth::Ansi16);
        assert_eq!(vars(&[("TERM", "linux")]), ColorDepth::Ansi16);
        assert_eq!(vars(&[]), ColorDepth::Ansi16);
        assert_eq!(vars(&[("TERM", "dumb")]), ColorDepth::None);
        // Any non-empty NO_COLOR wins over everything; an empty one is ignored.
        let no_color = [("NO_COLOR", "0"), ("COLORTERM", "truecolor")];
        assert_eq!(vars(&no_color), ColorDepth::None);
        let empty = [("NO_COLOR", ""), ("TERM", "xterm-256color")];
        assert_eq!(vars(&empty), ColorDepth::Indexed256);
    }

    #[test]
    fn rgb_to_the_nearest_xterm_256_entry() {
        // Exact cube and grey entries map to themselves.
        assert_eq!(to_256(Color::Rgb(255, 0, 0)), Color::Indexed(196));
        assert_eq!(to_256(Color::Rgb(0, 0, 0)), Color::Indexed(16));
        assert_eq!(to_256(Color::Rgb(95, 135, 175)), Color::Indexed(67));
        assert_eq!(to_256(Color::Rgb(238, 238, 238)), Color::Indexed(255));
        assert_eq!(to_256(Color::Rgb(128, 128, 128)), Color::Indexed(244));
        // The dark theme's red and its dim grey.
        assert_eq!(to_256(Color::Rgb(0xff, 0x5f, 0x5f)), Color::Indexed(203));
        assert_eq!(to_256(Color::Rgb(0x65, 0x73, 0x7e)), Color::Indexed(243));
        // Names and indices are what the theme asked for.
        assert_eq!(to_256(Color::Red), Color::Red);
        assert_eq!(to_256(Color::Indexed(42)), Color::Indexed(42));
        assert_eq!(to_256(Color::Reset), Color::Reset);
    }

    #[test]
    fn every_cube_and_grey_entry_comes_back_to_itself() {
        for index in 16..=255u8 {
            let (r, g, b) = indexed_rgb(index);
            assert_eq!(nearest_256(r, g, b), index, "{index}");
        }
    }

    #[test]
    fn rgb_and_indices_to_the_16_names() {
        // The dark theme: critical red, ok green, badge text, focused border, chart colours.
        assert_eq!(to_16(Color::Rgb(0xff, 0x5f, 0x5f)), Color::LightRed);
        assert_eq!(to_16(Color::Rgb(0xa3, 0xbe, 0x8c)), Color::Green);
        assert_eq!(to_16(Color::Rgb(0xeb, 0xcb, 0x8b)), Color::LightYellow);
        assert_eq!(to_16(Color::Rgb(0xd1, 0x9a, 0x66)), Color::Yellow);
        assert_eq!(to_16(Color::Rgb(0xc6, 0x78, 0xdd)), Color::LightMagenta);
        assert_eq!(to_16(Color::Rgb(0x56, 0xb6, 0xc2)), Color::Cyan);
        // Its greys: text, dim, white titles.
        assert_eq!(to_16(Color::Rgb(0xc0, 0xc5, 0xce)), Color::Gray);
        assert_eq!(to_16(Color::Rgb(0x65, 0x73, 0x7e)), Color::DarkGray);
        assert_eq!(to_16(Color::Rgb(0xef, 0xf1, 0xf5)), Color::White);
        assert_eq!(to_16(Color::Rgb(0, 190, 0)), Color::Green);
        assert_eq!(to_16(Color::Rgb(0x1b, 0x1d, 0x23)), Color::Black);
        assert_eq!(to_16(Color::Rgb(0x61, 0xaf, 0xef)), Color::LightBlue);
        assert_eq!(to_16(Color::Indexed(1)), Color::Red);
        assert_eq!(to_16(Color::Indexed(196)), Color::LightRed);
        assert_eq!(to_16(Color::Indexed(28)), Color::Green);
        assert_eq!(to_16(Color::Indexed(244)), Color::DarkGray);
        assert_eq!(to_16(Color::Yellow), Color::Yellow);
        assert_eq!(to_16(Color::Reset), Color::Reset);
    }

    #[test]
    fn without_colour_only_modifiers_remain() {
        let selected = Style::default()
            .fg(Color::Rgb(1, 2, 3))
            .bg(Color::Rgb(4, 5, 6))
            .add_modifier(Modifier::BOLD);
        let plain = ColorDepth::None.reduce(selected, true);
        assert_eq!(plain.fg, None);
        assert_eq!(plain.bg, None);
        assert!(plain.add_modifier.contains(Modifier::BOLD));
        assert!(plain.add_modifier.contains(Modifier::REVERSED));
        // A style without a background, or one whose background is not what sets it apart,
        // is not reversed.
        let text = Style::default().fg(Color::Red).bg(Color::Reset);
        assert_eq!(ColorDepth::None.reduce(text, true), Style::default());
        let dialog = Style::default().fg(Color::White).bg(Color::Blue);
        assert_eq!(ColorDepth::None.reduce(dialog, false), Style::default());
        // True colour changes nothing.
        assert_eq!(ColorDepth::TrueColor.reduce(selected, true), selected);
    }
}
