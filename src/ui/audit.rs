//! The audit-log view: the newest entries first, one row each: when (UTC), host, kind,
//! runbook/step, the exact command, and how it ended.

use rust_i18n::t;

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Style;
use ratatui::text::Line;
use ratatui::widgets::{Cell, Paragraph, Row, Table};

use crate::app::panel::AuditView;
use crate::audit::{AuditEntry, AuditKind};
use crate::theme::Theme;
use crate::ui::format::clean;
use crate::ui::panel::{self, key_hint};

/// From this width the kind column is shown too.
const WIDE_FROM: u16 = 120;

/// `2027-01-15 08:00:00` (UTC) for a Unix time in milliseconds.
pub fn utc_time(unix_ms: u64) -> String {
    let (year, month, day, hour, minute, second, _) = crate::utc::utc_parts(unix_ms);
    format!("{year:04}-{month:02}-{day:02} {hour:02}:{minute:02}:{second:02}")
}

fn kind_word(kind: AuditKind) -> String {
    match kind {
        AuditKind::RunbookStep => t!("audit.kind_playbook"),
        AuditKind::Backup => t!("audit.kind_backup"),
        AuditKind::Release => t!("audit.kind_release"),
        AuditKind::AutoRelease => t!("audit.kind_auto_release"),
        AuditKind::AutoReleaseHold => t!("audit.kind_hold"),
        AuditKind::HostKeyAccepted => t!("audit.kind_host_key"),
        AuditKind::StopJob => t!("job_action.audit_kind"),
        AuditKind::DeadMan => t!("dead_man_stray.audit_kind"),
        AuditKind::Check => t!("watcher_actions.audit_check"),
    }
    .into_owned()
}

fn outcome_style(entry: &AuditEntry, theme: &Theme) -> Style {
    match entry.outcome.as_str() {
        "ok" => theme.ok(),
        "dry_run" | "cancelled" => theme.dim(),
        "refused" => theme.warning(),
        _ if entry.exit_status.is_some_and(|s| s != 0) => theme.critical(),
        "failed" | "timeout" => theme.critical(),
        _ => theme.dialog(),
    }
}

pub fn draw(f: &mut Frame, area: Rect, view: &AuditView, theme: &Theme) {
    let title = t!("audit.title", n = view.entries.len()).into_owned();
    let inner = panel::frame(f, area, title, theme.border_focused(), theme);
    let [body, foot] = Layout::vertical([Constraint::Min(1), Constraint::Length(1)]).areas(inner);
    f.render_widget(
        Paragraph::new(key_hint(
            &[
                ("↑↓ PgUp PgDn", t!("keyhint.scroll")),
                ("Esc / a", t!("keyhint.close")),
            ],
            theme,
        )),
        foot,
    );
    if view.loading || view.error.is_some() || view.entries.is_empty() {
        let (text, style) = match &view.error {
            Some(why) => (
                t!("audit.unreadable", why = clean(why)).into_owned(),
                theme.critical(),
            ),
            None if view.loading => (t!("audit.reading").into_owned(), theme.dim()),
            None => (t!("audit.empty").into_owned(), theme.dim()),
        };
        f.render_widget(Paragraph::new(Line::styled(text, style)), body);
        return;
    }
    let wide = area.width >= WIDE_FROM;
    let mut widths = if wide {
        vec![Constraint::Length(19), Constraint::Length(14)]
    } else {
        vec![Constraint::Length(11), Constraint::Length(10)]
    };
    let titles = if wide {
        t!("audit.header_wide")
    } else {
        t!("audit.header")
    };
    let titles: Vec<String> = titles.split('|').map(str::to_string).collect();
    if wide {
        widths.push(Constraint::Length(12));
    }
    widths.extend([
        Constraint::Length(if wide { 28 } else { 18 }),
        Constraint::Min(10),
        Constraint::Length(if wide { 14 } else { 10 }),
    ]);
    let header =
        Row::new(titles.into_iter().map(Cell::from).collect::<Vec<_>>()).style(theme.header());
    let rows = view.entries.iter().skip(view.scroll).map(|e| {
        let what = match (&e.runbook, &e.step) {
            (Some(book), Some(step)) => format!("{book}/{step}"),
            (Some(book), None) => book.clone(),
            (None, Some(step)) => step.clone(),
            (None, None) => "-".to_string(),
        };
        let mut outcome = e.outcome.clone();
        if let Some(status) = e.exit_status.filter(|&s| s != 0) {
            outcome.push_str(&format!(" ({status})"));
        }
        if e.dry_run && e.outcome != "dry_run" {
            outcome.push_str(&t!("audit.dry"));
        }
        let time = utc_time(e.at_ms);
        // Narrow: `01-15 08:01`.
        let time = if wide {
            time
        } else {
            time.get(5..16).unwrap_or(&time).to_string()
        };
        let mut cells = vec![Cell::from(time), Cell::from(clean(&e.host))];
        if wide {
            cells.push(Cell::from(kind_word(e.kind)));
        }
        cells.extend([
            Cell::from(clean(&what)),
            Cell::from(clean(&e.command)),
            Cell::from(clean(&outcome)).style(outcome_style(e, theme)),
        ]);
        Row::new(cells).style(theme.dialog())
    });
    f.render_widget(Table::new(rows, widths).header(header), body);
}

#[cfg(test)]
mod tests {
    use super::utc_time;

    #[test]
    fn utc_times_match_known_instants() {
        assert_eq!(utc_time(0), "1970-01-01 00:00:00");
        assert_eq!(utc_time(1_800_000_000_000), "2027-01-15 08:00:00");
        assert_eq!(utc_time(951_782_400_000), "2000-02-29 00:00:00");
    }
}
