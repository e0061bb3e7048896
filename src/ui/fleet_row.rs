//! One host's row of the fleet table, as text first (so the columns can be sized to their
//! widest value), then as cells for the columns the width leaves room for. A host that is not
//! streaming shows why and since when in place of its figures, never figures that look live.

use std::cell::RefCell;

use ratatui::style::Style;
use ratatui::text::{Line, Span};

use crate::app::badges::{Badge, BadgeLevel, host_badges};
use crate::cost::{HostCost, format_duration_ms};
use crate::fleet::host::{HostState, HostStatus};
use crate::fleet::outage::Outage;
use crate::theme::{Level, Theme};
use crate::ui::cost_cells::{eff_cell, money_cell, price_cell};
use crate::ui::fleet_columns::Column;
use crate::ui::format::{clean, fit, fit_pieces, gib, opt_c, opt_pct, whole, width_of};
use crate::ui::grid::{Cell, KeptLine};
use crate::ui::outage_text;
use crate::ui::trail::level_char;

/// At most this many GPUs get a bar of their own in the row; more end in `+`.
pub const MAX_BARS: usize = 16;

/// What the figure columns show.
pub enum Figures {
    Numbers {
        util: (String, Style),
        bars: Vec<Span<'static>>,
        vram: (String, Style),
        hot: (String, Style),
        power: (String, Style),
    },
    /// The host is not streaming: why, since when, and when it retries, across the figure
    /// columns.
    Outage(Vec<crate::ui::format::Piece>),
}

/// Everything one host's row may show.
pub struct HostRow {
    pub name: String,
    pub status: (String, Style),
    pub gpus: String,
    pub figures: Figures,
    /// $/h, spent, idle, effective utilization.
    pub money: [(String, Style); 4],
    pub badges: Vec<Badge>,
    /// Why the host floods, after the badges.
    pub note: Option<String>,
    /// The row as last drawn, and the columns and widths it was drawn for.
    pub kept: RefCell<KeptLine<RowLayout>>,
    /// What its texts take on screen, measured once: the columns are sized every frame by the
    /// widest of the rows shown.
    widths: Widths,
}

/// The columns of numbers, in the order [`Widths::numbers`] holds them.
const NUMBER_COLUMNS: [Column; 9] = [
    Column::Price,
    Column::Spent,
    Column::Idle,
    Column::Eff,
    Column::Util,
    Column::Bars,
    Column::Vram,
    Column::Hot,
    Column::Power,
];

/// A row's texts' widths, in columns of the terminal.
#[derive(Default)]
struct Widths {
    name: usize,
    status: usize,
    gpus: usize,
    outage: usize,
    numbers: [usize; NUMBER_COLUMNS.len()],
}

/// What a row's cells are laid out by: the columns shown with their widths, and whether the
/// view is wide.
pub type RowLayout = (Vec<(Column, u16)>, bool);

/// What a row is built from.
pub struct RowInput<'a> {
    pub host: &'a HostState,
    pub status: &'a HostStatus,
    pub outage: Option<Outage>,
    pub cost: Option<&'a HostCost>,
    pub released: bool,
}

fn status_style(status: &HostStatus, theme: &Theme) -> Style {
    match status {
        HostStatus::Live => theme.ok(),
        HostStatus::Connecting { .. } => theme.dim(),
        HostStatus::Stale { .. } => theme.stale(),
        HostStatus::Flooding { .. } => theme.warning(),
        HostStatus::Unreachable { .. } | HostStatus::Lost { .. } => theme.critical(),
    }
}

impl HostRow {
    pub fn new(input: RowInput<'_>, theme: &Theme) -> Self {
        let RowInput {
            host,
            status,
            outage,
            cost,
            released,
        } = input;
        // A released host no longer bills; whatever its link says matters less.
        let status_cell = if released {
            (
                crate::words::Words::new("status.released").localized(),
                theme.dim(),
            )
        } else {
            (status.words().localized(), status_style(status, theme))
        };
        // The outage's summary is the engine's English words; it is left out where the status
        // column already says them.
        let figures = match &outage {
            Some(outage) => Figures::Outage(if released {
                outage_text::last_reading_piece(outage, theme)
                    .into_iter()
                    .collect()
            } else {
                outage_text::row_pieces(outage, &status.text(), theme)
            }),
            None => numbers(host, theme),
        };
        let observed = host.last_sample_ms.is_some();
        let money = match cost {
            Some(cost) => [
                (price_cell(cost), theme.base()),
                (money_cell(cost.spent(), cost), theme.base()),
                if observed {
                    (
                        format_duration_ms(cost.totals.idle_ms),
                        if cost.totals.idle_ms > 0 {
                            theme.warning()
                        } else {
                            theme.base()
                        },
                    )
                } else {
                    ("-".to_string(), theme.dim())
                },
                if observed {
                    (eff_cell(&cost.totals), theme.base())
                } else {
                    ("-".to_string(), theme.dim())
                },
            ],
            None => std::array::from_fn(|_| ("-".to_string(), theme.dim())),
        };
        let note = status
            .reason_words()
            .map(|w| w.localized())
            .filter(|_| !released && outage.is_none())
            .or_else(|| {
                let armed = host.dead_man.as_ref().and_then(|d| d.row_words());
                armed.map(|w| w.localized()).filter(|_| !released)
            });
        Self {
            name: clean(&host.name),
            status: status_cell,
            gpus: clean(&host.gpu_model_summary()),
            figures,
            money,
            badges: host_badges(host, status),
            note: note.as_deref().map(clean),
            kept: RefCell::default(),
            widths: Widths::default(),
        }
        .measured()
    }

    /// The row with its texts' widths measured.
    fn measured(mut self) -> Self {
        self.widths = Widths {
            name: width_of(&self.name),
            status: width_of(&self.status.0),
            gpus: width_of(&self.gpus),
            outage: self.measure_outage(),
            numbers: NUMBER_COLUMNS.map(|c| self.measure_column(c)),
        };
        self
    }

    /// The width of this row's value in a column of numbers (0 when it shows none there).
    pub fn column_width(&self, column: Column) -> usize {
        NUMBER_COLUMNS
            .iter()
            .position(|c| *c == column)
            .map_or(0, |i| self.widths.numbers[i])
    }

    /// The widths of the name, the status and the GPUs' models.
    pub fn text_widths(&self) -> (usize, usize, usize) {
        (self.widths.name, self.widths.status, self.widths.gpus)
    }

    /// The width this row's outage text wants across the figure columns (0 while it streams).
    pub fn outage_width(&self) -> usize {
        self.widths.outage
    }

    fn measure_column(&self, column: Column) -> usize {
        let money = |i: usize| width_of(&self.money[i].0);
        match (&self.figures, column) {
            (_, Column::Price) => money(0),
            (_, Column::Spent) => money(1),
            (_, Column::Idle) => money(2),
            (_, Column::Eff) => money(3),
            (Figures::Numbers { util, .. }, Column::Util) => width_of(&util.0),
            (Figures::Numbers { bars, .. }, Column::Bars) => bars.len(),
            (Figures::Numbers { vram, .. }, Column::Vram) => width_of(&vram.0),
            (Figures::Numbers { hot, .. }, Column::Hot) => width_of(&hot.0),
            (Figures::Numbers { power, .. }, Column::Power) => width_of(&power.0),
            _ => 0,
        }
    }

    fn measure_outage(&self) -> usize {
        match &self.figures {
            Figures::Outage(pieces) => {
                let text: usize = pieces.iter().map(|p| width_of(&p.text)).sum();
                text + 3 * pieces.len().saturating_sub(1)
            }
            Figures::Numbers { .. } => 0,
        }
    }

    /// The cells for the columns of `plan`, in its order.
    pub fn cells(&self, plan: &[(Column, u16)], theme: &Theme, wide: bool) -> Vec<Cell<'static>> {
        let has_money = plan.iter().any(|(c, _)| is_money(*c));
        let mut cells = Vec::with_capacity(plan.len());
        let mut i = 0;
        let mut outage = match &self.figures {
            Figures::Outage(pieces) => Some(pieces),
            Figures::Numbers { .. } => None,
        };
        while let Some(&(column, width)) = plan.get(i) {
            let width = usize::from(width);
            if let (Some(pieces), true) = (outage, is_figure(column) || column == Column::Badges) {
                // One cell across the figure columns, and the badges too when no money
                // column comes between (or in the badges alone, when no figure column fits).
                let mut span = 0;
                let mut span_width = 0;
                while let Some(&(c, w)) = plan.get(i + span) {
                    let badges = c == Column::Badges && (!has_money || span == 0);
                    if !(is_figure(c) || badges) {
                        break;
                    }
                    span_width += usize::from(w) + usize::from(span > 0);
                    span += 1;
                }
                let takes_badges = plan
                    .get(i + span - 1)
                    .is_some_and(|(c, _)| *c == Column::Badges);
                let mut pieces = pieces.clone();
                if takes_badges {
                    // Not the badge that only repeats the status column (`UNREACHABLE`).
                    let status = self.status.0.to_uppercase();
                    let badges = self.badges.iter().filter(|b| b.text != status);
                    pieces.extend(badges.enumerate().map(|(n, b)| {
                        crate::ui::format::Piece::text(
                            b.text.clone(),
                            badge_style(b, theme),
                            4u8.saturating_sub(n as u8),
                        )
                    }));
                }
                let spans = fit_pieces(pieces, " · ", theme.dim(), span_width);
                cells.push(Cell::spanning(Line::from(spans), span));
                outage = None;
                i += span;
                continue;
            }
            let cell: Cell = match column {
                Column::Host => Line::raw(fit(&self.name, width)).into(),
                Column::Status => Line::styled(fit(&self.status.0, width), self.status.1).into(),
                Column::Gpus => Line::raw(fit(&self.gpus, width)).into(),
                Column::Price | Column::Spent | Column::Idle | Column::Eff => {
                    let (text, style) = &self.money[money_index(column)];
                    Line::styled(text.clone(), *style).into()
                }
                Column::Badges => Line::from(badge_spans(
                    &self.badges,
                    self.note.as_deref(),
                    width,
                    wide,
                    theme,
                ))
                .into(),
                figure => self.figure_cell(figure),
            };
            cells.push(cell);
            i += 1;
        }
        cells
    }

    fn figure_cell(&self, column: Column) -> Cell<'static> {
        let Figures::Numbers {
            util,
            bars,
            vram,
            hot,
            power,
        } = &self.figures
        else {
            return Line::raw("").into();
        };
        let styled = |(text, style): &(String, Style)| Line::styled(text.clone(), *style).into();
        match column {
            Column::Util => styled(util),
            Column::Bars => Line::from(bars.clone()).into(),
            Column::Vram => styled(vram),
            Column::Hot => styled(hot),
            Column::Power => styled(power),
            _ => Line::raw("").into(),
        }
    }
}

fn is_figure(column: Column) -> bool {
    matches!(
        column,
        Column::Util | Column::Bars | Column::Vram | Column::Hot | Column::Power
    )
}

fn is_money(column: Column) -> bool {
    matches!(
        column,
        Column::Price | Column::Spent | Column::Idle | Column::Eff
    )
}

fn money_index(column: Column) -> usize {
    match column {
        Column::Price => 0,
        Column::Spent => 1,
        Column::Idle => 2,
        _ => 3,
    }
}

fn badge_style(badge: &Badge, theme: &Theme) -> Style {
    match badge.level {
        BadgeLevel::Critical => theme.badge_critical(),
        BadgeLevel::Warning => theme.badge_warning(),
    }
}

/// The live figures of a streaming host.
fn numbers(host: &HostState, theme: &Theme) -> Figures {
    let hot_level = host
        .gpus
        .iter()
        .filter_map(|g| {
            let t = g.latest.temperature_c?;
            Some(crate::ui::gpu_card::temperature_level(
                t,
                g.latest.temperature_slowdown_c,
            ))
        })
        .max()
        .unwrap_or(Level::Ok);
    let memory = host.memory_mib();
    let memory_level = memory.map_or(Level::Ok, |(u, t)| {
        crate::theme::level_for(u as f64 * 100.0 / t.max(1) as f64, 90.0, 97.0)
    });
    let bar_style = theme.chart(crate::theme::Series::Utilization);
    let mut bars: Vec<Span<'static>> = host
        .gpus
        .iter()
        .take(if host.gpus.len() > MAX_BARS {
            MAX_BARS - 1
        } else {
            MAX_BARS
        })
        .map(|g| match g.latest.utilization_gpu_pct {
            Some(u) => Span::styled(level_char(u).to_string(), bar_style),
            None => Span::styled("·", theme.dim()),
        })
        .collect();
    if host.gpus.len() > MAX_BARS {
        bars.push(Span::styled("+", theme.dim()));
    }
    Figures::Numbers {
        util: (opt_pct(host.mean_utilization_pct()), theme.base()),
        bars,
        vram: (
            memory.map_or_else(
                || "-".to_string(),
                |(u, t)| format!("{}/{}", gib(u), gib(t)),
            ),
            theme.gauge(memory_level),
        ),
        hot: (opt_c(host.hottest_c()), theme.gauge(hot_level)),
        power: (
            host.power_w().map_or_else(
                || draw_only(host),
                |(d, l)| format!("{}/{}", whole(d), whole(l)),
            ),
            theme.base(),
        ),
    }
}

/// Badges that fit in `width`, whole while they fit; the first is cut with an ellipsis when not
/// even it fits; `+N` counts those left out; the note follows in what room is left.
pub fn badge_spans(
    badges: &[Badge],
    note: Option<&str>,
    width: usize,
    wide: bool,
    theme: &Theme,
) -> Vec<Span<'static>> {
    let label = |b: &Badge| {
        if wide {
            format!(" {} ", b.text)
        } else {
            b.text.clone()
        }
    };
    let more_text = |n: usize| format!(" +{n}");
    let mut spans = Vec::new();
    let mut used = 0;
    let mut shown = 0;
    for (i, badge) in badges.iter().enumerate() {
        let text = label(badge);
        let gap = usize::from(i > 0);
        let left_after = badges.len() - i - 1;
        let reserve = if left_after > 0 {
            width_of(&more_text(left_after))
        } else {
            0
        };
        if used + gap + width_of(&text) + reserve > width {
            break;
        }
        if gap > 0 {
            spans.push(Span::raw(" "));
        }
        used += gap + width_of(&text);
        spans.push(Span::styled(text, badge_style(badge, theme)));
        shown += 1;
    }
    if shown == 0
        && let Some(first) = badges.first()
    {
        let reserve = if badges.len() > 1 {
            width_of(&more_text(badges.len() - 1))
        } else {
            0
        };
        let room = width.saturating_sub(reserve);
        if room >= 2 {
            let text = fit(&label(first), room);
            used += width_of(&text);
            spans.push(Span::styled(text, badge_style(first, theme)));
            shown = 1;
        }
    }
    if shown < badges.len() {
        let more = more_text(badges.len() - shown);
        if used + width_of(&more) <= width {
            used += width_of(&more);
            spans.push(Span::styled(more, theme.dim()));
        }
    }
    if let Some(note) = note {
        let gap = usize::from(used > 0);
        let room = width.saturating_sub(used + gap);
        if room >= 4 {
            if gap > 0 {
                spans.push(Span::raw(" "));
            }
            spans.push(Span::styled(fit(note, room), theme.dim()));
        }
    }
    spans
}

/// The summed draw of a host whose cards report no power limit (`npu-smi` prints none): the
/// draw alone rather than nothing; `-` when no card reports a draw either.
fn draw_only(host: &HostState) -> String {
    let mut draws = host
        .gpus
        .iter()
        .filter_map(|g| g.latest.power_draw_w)
        .peekable();
    if draws.peek().is_none() {
        return "-".to_string();
    }
    whole(draws.sum())
}

#[cfg(test)]
mod tests {
    //! Tests of `fleet_row`: outage cells and badge fitting.
    use super::*;

    fn text(spans: &[Span]) -> String {
        spans.iter().map(|s| s.content.as_ref()).collect()
    }

    fn badge(text: &str) -> Badge {
        Badge {
            level: BadgeLevel::Critical,
            text: text.into(),
        }
    }

    fn outage_row(theme: &Theme) -> HostRow {
        HostRow {
            name: "far".into(),
            status: ("unreachable".into(), theme.critical()),
            gpus: "-".into(),
            figures: Figures::Outage(vec![crate::ui::format::Piece::text(
                "connection refused",
                theme.critical(),
                9,
            )]),
            money: std::array::from_fn(|_| ("-".to_string(), theme.dim())),
            badges: vec![badge("UNREACHABLE"), badge("XID 79")],
            note: None,
            kept: RefCell::default(),
            widths: Widths::default(),
        }
        .measured()
    }

    fn cell_texts(cells: &[Cell]) -> Vec<(String, usize)> {
        cells
            .iter()
            .map(|c| (text(&c.line.spans), c.span))
            .collect()
    }

    #[test]
    fn an_outage_spans_the_figure_columns_and_says_why_instead_of_figures() {
        let theme = Theme::default_theme();
        let plan = [
            (Column::Host, 3),
            (Column::Status, 11),
            (Column::Util, 4),
            (Column::Vram, 9),
            (Column::Power, 9),
            (Column::Badges, 10),
        ];
        let cells = outage_row(&theme).cells(&plan, &theme, false);
        assert_eq!(
            cell_texts(&cells),
            [
                ("far".to_string(), 1),
                ("unreachable".to_string(), 1),
                // 4 + 9 + 9 + 10 and three gaps; the status's own badge is not repeated.
                ("connection refused · XID 79".to_string(), 4),
            ]
        );
        // No figure column fits: the words go in the badges' place.
        let narrow = [
            (Column::Host, 3),
            (Column::Status, 11),
            (Column::Badges, 12),
        ];
        let cells = outage_row(&theme).cells(&narrow, &theme, false);
        assert_eq!(cell_texts(&cells)[2], ("connection …".to_string(), 1));
    }

    #[test]
    fn a_cut_badge_ends_in_an_ellipsis_and_left_out_ones_are_counted() {
        let theme = Theme::default_theme();
        let lost = [badge("GPU LOST")];
        assert_eq!(text(&badge_spans(&lost, None, 7, false, &theme)), "GPU LO…");
        assert_eq!(
            text(&badge_spans(&lost, None, 8, false, &theme)),
            "GPU LOST"
        );
        let two = [badge("XID 79"), badge("ECC")];
        assert_eq!(
            text(&badge_spans(&two, None, 10, false, &theme)),
            "XID 79 ECC"
        );
        assert_eq!(
            text(&badge_spans(&two, None, 9, false, &theme)),
            "XID 79 +1"
        );
        assert_eq!(text(&badge_spans(&two, None, 7, false, &theme)), "XID… +1");
        let note = badge_spans(&[], Some("over budget: 33 lines"), 12, false, &theme);
        assert_eq!(text(&note), "over budget…");
    }

    /// A host whose switch is armed says when it fires after its badges; one that ought to be
    /// armed and is not has a warning badge saying so, and no time.
    #[test]
    fn the_row_says_when_the_dead_man_switch_fires_or_that_it_is_not_armed() {
        use crate::fleet::dead_man::{DeadManState, NotArmed};
        let theme = Theme::default_theme();
        let shape = crate::fleet::FleetOptions::default().history_shape();
        let mut host = HostState::new("h", shape);
        let row = |host: &HostState| {
            HostRow::new(
                RowInput {
                    host,
                    status: &HostStatus::Live,
                    outage: None,
                    cost: None,
                    released: false,
                },
                &theme,
            )
        };
        assert_eq!(row(&host).note, None);
        // 2026-12-06T14:05:00Z
        host.dead_man = Some(DeadManState::armed(30, 1_796_565_900_000));
        let armed = row(&host);
        assert_eq!(armed.note.as_deref(), Some("dead-man 14:05"));
        assert!(armed.badges.is_empty(), "{:?}", armed.badges);
        host.dead_man = Some(DeadManState::not_armed(30, NotArmed::NoDetach));
        let not_armed = row(&host);
        assert_eq!(not_armed.note, None);
        let texts: Vec<&str> = not_armed.badges.iter().map(|b| b.text.as_str()).collect();
        assert_eq!(texts, ["dead-man NOT armed"]);
        assert_eq!(not_armed.badges[0].level, BadgeLevel::Warning);
        // Disarmed on purpose: nothing to warn about.
        host.dead_man = Some(DeadManState::not_armed(30, NotArmed::DisarmedByHand));
        assert!(row(&host).badges.is_empty());
    }
}
