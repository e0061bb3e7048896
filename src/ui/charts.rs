//! History charts of the selected GPU: utilization, VRAM, temperature and power over 10 minutes.

use rust_i18n::t;

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::symbols::Marker;
use ratatui::text::Span;
use ratatui::widgets::{Axis, Block, Borders, Chart, Dataset, GraphType};

use crate::fleet::history::Metric;
use crate::fleet::host::GpuState;
use crate::telemetry::TimestampMs;
use crate::theme::{Series, Theme};
use crate::ui::format::whole;

pub const WINDOW_MS: u64 = 10 * 60 * 1000;

/// Draws the four charts side by side.
pub fn draw(frame: &mut Frame, area: Rect, gpu: &GpuState, now_ms: TimestampMs, theme: &Theme) {
    let cells = Layout::horizontal([Constraint::Ratio(1, 4); 4]).split(area);
    for (metric, cell) in Metric::ALL.into_iter().zip(cells.iter()) {
        draw_one(frame, *cell, gpu, metric, now_ms, theme);
    }
}

fn draw_one(
    frame: &mut Frame,
    area: Rect,
    gpu: &GpuState,
    metric: Metric,
    now_ms: TimestampMs,
    theme: &Theme,
) {
    let s = &gpu.latest;
    let (title, series, y_max, unit) = match metric {
        Metric::Utilization => (t!("chart.util"), Series::Utilization, 100.0, "%"),
        Metric::Memory => (t!("chart.vram"), Series::Memory, 100.0, "%"),
        Metric::Temperature => {
            let top = s
                .temperature_shutdown_c
                .or(s.temperature_slowdown_c.map(|t| t + 5.0))
                .unwrap_or(100.0);
            (t!("chart.temp"), Series::Temperature, top, "°C")
        }
        Metric::Power => {
            let top = s.power_max_limit_w.or(s.power_limit_w).unwrap_or(100.0);
            (t!("chart.power"), Series::Power, top, "W")
        }
    };
    let data = gpu.history.series(metric, now_ms, WINDOW_MS);
    let y_max = data.iter().fold(y_max, |m, &(_, y)| m.max(y));
    let last = data.last().map_or_else(
        || t!("card.na").into_owned(),
        |&(_, y)| format!("{}{unit}", whole(y)),
    );
    let dataset = Dataset::default()
        .marker(Marker::Braille)
        .graph_type(GraphType::Line)
        .style(theme.chart(series))
        .data(&data);
    let tall = area.height >= 10;
    let window_s = (WINDOW_MS / 1000) as f64;
    let mut x_axis = Axis::default().bounds([-window_s, 0.0]).style(theme.dim());
    let mut y_axis = Axis::default().bounds([0.0, y_max]).style(theme.dim());
    if tall {
        x_axis = x_axis.labels([
            "-10m".to_string(),
            "-5m".to_string(),
            t!("chart.now").into_owned(),
        ]);
        y_axis = y_axis.labels(["0".to_string(), whole(y_max)]);
    }
    let chart = Chart::new(vec![dataset])
        .block(
            Block::default()
                .borders(Borders::ALL)
                .border_style(theme.border())
                .title(Span::styled(
                    format!(" {title} {last} · 10m "),
                    theme.title(),
                )),
        )
        .x_axis(x_axis)
        .y_axis(y_axis);
    frame.render_widget(chart, area);
}
