//! One GPU as a card: VRAM, utilization and power bars, temperature against the card's own
//! slowdown threshold, SM clock against max, clock-event reasons in words, a utilization trail.

use rust_i18n::t;

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph, Sparkline};

use crate::app::badges::{BadgeLevel, gpu_badges};
use crate::fleet::host::{GpuState, short_gpu_name};
use crate::telemetry::{ClockEventReasons, TimestampMs};
use crate::theme::{Level, Theme, level_for};
use crate::ui::format::{clean, clock, fit, gib, whole};
use crate::ui::trail::utilization_slices;

/// Rows a card takes, borders included.
pub const CARD_HEIGHT: u16 = 8;
/// Narrowest card that still shows every line legibly.
pub const CARD_MIN_WIDTH: u16 = 38;
/// The trail under the bars covers this much time.
const TRAIL_WINDOW_MS: u64 = 10 * 60 * 1000;

/// Temperature level against the card's own slowdown threshold when known, else generic limits.
pub fn temperature_level(temperature_c: f64, slowdown_c: Option<f64>) -> Level {
    match slowdown_c {
        Some(slow) => level_for(temperature_c, slow - 10.0, slow - 2.0),
        None => level_for(temperature_c, 80.0, 87.0),
    }
}

/// How a card is drawn: where it sits in the grid and whether its numbers are current.
#[derive(Debug, Clone, Copy)]
pub struct CardContext {
    pub selected: bool,
    /// The host is not live: the numbers are the last ones read and are drawn dimmed.
    pub last_known: bool,
    pub now_ms: TimestampMs,
}

pub fn draw(frame: &mut Frame, area: Rect, gpu: &GpuState, ctx: CardContext, theme: &Theme) {
    let s = &gpu.latest;
    let mut title = vec![Span::styled(
        format!(" {} · {} ", s.index, clean(short_gpu_name(&s.name))),
        theme.title(),
    )];
    if ctx.last_known {
        // The numbers below are this old: they must not pass for live ones.
        title.push(Span::styled(
            t!("card.last_reading", time = clock(gpu.at_ms)),
            theme.stale(),
        ));
    }
    for b in gpu_badges(s).into_iter().take(2) {
        let style = match b.level {
            BadgeLevel::Critical => theme.badge_critical(),
            BadgeLevel::Warning => theme.badge_warning(),
        };
        title.push(Span::styled(format!(" {} ", b.text), style));
    }
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(if ctx.selected {
            theme.border_focused()
        } else {
            theme.border()
        })
        .title(Line::from(title));
    let inner = block.inner(area);
    frame.render_widget(block, area);
    if inner.height == 0 || inner.width < 10 {
        return;
    }
    let bar_width = inner.width.saturating_sub(19) as usize;

    let memory_line = match (s.memory_used_mib, s.memory_total_mib) {
        (Some(used), Some(total)) if total > 0 => {
            let pct = used as f64 * 100.0 / total as f64;
            bar_line(
                &t!("card.vram"),
                pct / 100.0,
                format!("{}/{} GiB", gib(used), gib(total)),
                bar_width,
                theme.gauge(level_for(pct, 90.0, 97.0)),
                theme,
            )
        }
        _ => unknown_line(&t!("card.vram"), theme),
    };
    let util_line = match s.utilization_gpu_pct {
        Some(u) => bar_line(
            &t!("card.util"),
            u / 100.0,
            format!("{}%", whole(u)),
            bar_width,
            theme.gauge(Level::Ok),
            theme,
        ),
        None => unknown_line(&t!("card.util"), theme),
    };
    let brake = s
        .clock_event_reasons
        .is_some_and(|r| r.contains(ClockEventReasons::HW_POWER_BRAKE));
    let power_line = match (s.power_draw_w, s.power_limit_w) {
        (Some(draw), Some(limit)) if limit > 0.0 => bar_line(
            &t!("card.power"),
            draw / limit,
            format!("{}/{} W", whole(draw), whole(limit)),
            bar_width,
            theme.gauge(if brake { Level::Critical } else { Level::Ok }),
            theme,
        ),
        (Some(draw), _) => Line::from(vec![
            Span::styled(format!("{} ", t!("card.power")), theme.dim()),
            Span::styled(t!("card.limit_unknown", draw = whole(draw)), theme.base()),
        ]),
        _ => unknown_line(&t!("card.power"), theme),
    };
    let lines = vec![
        memory_line,
        util_line,
        power_line,
        temperature_clock_line(gpu, theme),
        reasons_line(s.clock_event_reasons, inner.width as usize, theme),
    ];
    let text_height = (lines.len() as u16).min(inner.height);
    let lines: Vec<Line> = if ctx.last_known {
        lines
            .into_iter()
            .map(|l| {
                Line::from(
                    l.spans
                        .into_iter()
                        .map(|sp| sp.style(theme.dim()))
                        .collect::<Vec<_>>(),
                )
            })
            .collect()
    } else {
        lines
    };
    frame.render_widget(
        Paragraph::new(lines).style(theme.base()),
        Rect {
            height: text_height,
            ..inner
        },
    );
    if inner.height > text_height {
        let trail_area = Rect {
            y: inner.y + text_height,
            height: 1,
            ..inner
        };
        draw_trail(frame, trail_area, gpu, ctx.now_ms, theme);
    }
}

fn bar_line(
    label: &str,
    ratio: f64,
    value: String,
    width: usize,
    style: Style,
    theme: &Theme,
) -> Line<'static> {
    let ratio = if ratio.is_finite() {
        ratio.clamp(0.0, 1.0)
    } else {
        0.0
    };
    let filled = (ratio * width as f64).round() as usize;
    Line::from(vec![
        Span::styled(format!("{label} "), theme.dim()),
        Span::styled("█".repeat(filled), style),
        Span::styled("░".repeat(width - filled), theme.dim()),
        Span::styled(format!(" {value:>13}"), theme.base()),
    ])
}

fn unknown_line(label: &str, theme: &Theme) -> Line<'static> {
    Line::from(vec![
        Span::styled(format!("{label} "), theme.dim()),
        Span::styled(t!("card.na"), theme.dim()),
    ])
}

fn temperature_clock_line(gpu: &GpuState, theme: &Theme) -> Line<'static> {
    let s = &gpu.latest;
    let mut spans = vec![Span::styled(format!("{} ", t!("card.temp")), theme.dim())];
    match s.temperature_c {
        Some(t) => {
            spans.push(Span::styled(
                format!("{}°C", whole(t)),
                theme.gauge(temperature_level(t, s.temperature_slowdown_c)),
            ));
            if let Some(slow) = s.temperature_slowdown_c {
                spans.push(Span::styled(format!("/{}", whole(slow)), theme.dim()));
            }
        }
        None => spans.push(Span::styled(t!("card.na"), theme.dim())),
    }
    spans.push(Span::styled("  SM ", theme.dim()));
    let clock = match (s.clock_sm_mhz, s.clock_sm_max_mhz) {
        (Some(c), Some(m)) => format!("{c}/{m} MHz"),
        (Some(c), None) => format!("{c} MHz"),
        _ => t!("card.na").into_owned(),
    };
    spans.push(Span::styled(clock, theme.base()));
    if let Some(p) = &s.pstate {
        spans.push(Span::styled(format!("  {}", clean(p)), theme.dim()));
    }
    Line::from(spans)
}

fn reasons_line(reasons: Option<ClockEventReasons>, width: usize, theme: &Theme) -> Line<'static> {
    let Some(reasons) = reasons else {
        return Line::from(Span::styled(t!("card.clocks_unknown"), theme.dim()));
    };
    let labels: Vec<String> = reasons
        .label_words()
        .iter()
        .map(crate::words::Words::localized)
        .collect();
    if labels.is_empty() {
        return Line::from(Span::styled(t!("card.clocks_full"), theme.ok()));
    }
    let style = if reasons.is_hardware_slowdown() || reasons.is_thermal() {
        theme.critical()
    } else {
        theme.base()
    };
    let prefix = t!("card.clocks");
    let room = width.saturating_sub(crate::cells::width(&prefix));
    Line::from(vec![
        Span::styled(prefix, theme.dim()),
        Span::styled(fit(&labels.join(", "), room), style),
    ])
}

/// A one-row utilization trail over the last ten minutes, one column per time slice.
fn draw_trail(frame: &mut Frame, area: Rect, gpu: &GpuState, now_ms: TimestampMs, theme: &Theme) {
    let columns = area.width.saturating_sub(5) as usize;
    if columns == 0 {
        return;
    }
    let slices = utilization_slices(
        std::iter::once(&gpu.history),
        now_ms,
        TRAIL_WINDOW_MS,
        columns,
    );
    let data: Vec<u64> = slices
        .iter()
        .map(|v| v.map_or(0, |v| v.round() as u64))
        .collect();
    frame.render_widget(
        Paragraph::new(Span::styled("10m ", theme.dim())),
        Rect { width: 4, ..area },
    );
    frame.render_widget(
        Sparkline::default()
            .data(data)
            .max(100)
            .style(theme.chart(crate::theme::Series::Utilization)),
        Rect {
            x: area.x + 5,
            width: area.width - 5,
            ..area
        },
    );
}
