//! The warning banner under the top bar: running auto-release countdowns first (any key cancels
//! them), then, in a host's view, why that host is not streaming, then held or waiting
//! auto-releases, then the red lines crossed.

use rust_i18n::t;

use crate::words::Words;

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use crate::app::model::{Model, View};
use crate::cost::{AutoDecision, RedLine};
use crate::fleet::outage::outage;
use crate::theme::Theme;
use crate::ui::format::{clean, fit};
use crate::ui::outage_text;

/// The banner never takes more rows than this; the last one then says how many are left out.
pub const MAX_ROWS: usize = 3;

/// `4:59`.
fn clock(ms: u64) -> String {
    let seconds = ms.div_ceil(1000);
    format!("{}:{:02}", seconds / 60, seconds % 60)
}

/// The banner's lines, most urgent first, each with its style.
pub fn lines(model: &Model, theme: &Theme) -> Vec<(String, Style)> {
    let money = &model.fleet.money;
    let mut out = Vec::new();
    for host in &money.hosts {
        if let AutoDecision::CountingDown { remaining_ms } = host.auto_decision {
            let why = match &host.plateau {
                Some(act) => Some(act.message()),
                None => money
                    .red_lines
                    .iter()
                    .find(|line| line.host() == Some(host.config.name.as_str()))
                    .map(|line| line.message()),
            }
            .map(|why| format!(" ({})", clean(&why)))
            .unwrap_or_default();
            let key = match host.plateau.map(|act| act.action) {
                Some(crate::config::OnPlateau::StopJob) => "job_action.banner_stop",
                _ => "banner.countdown",
            };
            out.push((
                t!(
                    key,
                    host = clean(&host.config.name),
                    time = clock(remaining_ms),
                    why = why
                )
                .into_owned(),
                theme.badge_critical(),
            ));
        }
    }
    if let Some(line) = host_line(model, theme) {
        out.push(line);
    }
    for host in &money.hosts {
        if host.auto_decision == AutoDecision::Held {
            out.push((
                t!("banner.held", host = clean(&host.config.name)).into_owned(),
                theme.warning(),
            ));
        }
    }
    for &host in &model.pending_auto {
        if let Some(name) = money.hosts.get(host).map(|h| clean(&h.config.name)) {
            out.push((
                t!("banner.waits", host = name).into_owned(),
                theme.warning(),
            ));
        }
    }
    for line in &money.red_lines {
        let style = match line {
            RedLine::HostIdle { .. } => theme.warning(),
            _ => theme.critical(),
        };
        out.push((format!(" ▲ {}", clean(&line.message())), style));
    }
    out
}

/// In a host's view, why that host is not streaming, in full: ` ▲ NAME: connection refused ·
/// tried … (attempt 4) · retry … · the whole message`.
fn host_line(model: &Model, theme: &Theme) -> Option<(String, Style)> {
    let View::Host(id) = model.view else {
        return None;
    };
    let fleet = &model.fleet;
    let host = fleet.hosts.get(id)?;
    if fleet.money.is_released(id) {
        return None;
    }
    let down = outage(host, fleet.now_ms, fleet.options.interval_ms)?;
    let text = outage_text::full_pieces(&down, theme)
        .into_iter()
        .map(|p| p.text)
        .collect::<Vec<_>>()
        .join(" · ");
    Some((
        format!(" ▲ {}: {text}", clean(&host.name)),
        outage_text::style(&down, theme),
    ))
}

/// How many rows the banner needs.
pub fn height(model: &Model, theme: &Theme) -> u16 {
    lines(model, theme).len().min(MAX_ROWS) as u16
}

pub fn draw(frame: &mut Frame, area: Rect, model: &Model, theme: &Theme) {
    let all = lines(model, theme);
    let rows = area.height as usize;
    let width = area.width as usize;
    let mut shown: Vec<Line> = Vec::new();
    for (i, (text, style)) in all.iter().enumerate() {
        if shown.len() == rows {
            break;
        }
        if shown.len() + 1 == rows && all.len() > i + 1 {
            shown.push(Line::from(Span::styled(
                fit(
                    &Words::counted("banner.more", (all.len() - i) as u64).localized(),
                    width,
                ),
                theme.warning(),
            )));
            break;
        }
        shown.push(Line::from(Span::styled(fit(text, width), *style)));
    }
    frame.render_widget(Paragraph::new(shown), area);
}
