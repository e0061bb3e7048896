//! The findings pane of the host view: what is wrong, how sure, and what to do about it.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph, Wrap};

use crate::diagnose::Severity;
use crate::fleet::host::HostState;
use crate::theme::Theme;
use crate::ui::format::clean;

pub fn draw(frame: &mut Frame, area: Rect, host: &HostState, theme: &Theme) {
    let mut lines = Vec::new();
    for f in &host.findings {
        let (tag, style) = match f.severity {
            Severity::Critical => ("CRIT", theme.badge_critical()),
            Severity::Warning => ("WARN", theme.badge_warning()),
            Severity::Info => ("INFO", theme.dim()),
        };
        let gpu = f.gpu.map(|g| format!(" GPU {g}")).unwrap_or_default();
        lines.push(Line::from(vec![
            Span::styled(format!(" {tag} "), style),
            Span::styled(format!(" {}{gpu}: ", f.label), theme.title()),
            Span::styled(clean(&f.summary), theme.base()),
        ]));
        let mut action = vec![
            Span::styled("   → ", theme.dim()),
            Span::styled(clean(&f.action), theme.base()),
        ];
        if let Some(runbook) = &f.runbook {
            action.push(Span::styled(format!("  [p: {runbook}]"), theme.help_key()));
        }
        lines.push(Line::from(action));
    }
    let title = format!(" Findings ({}) ", host.findings.len());
    frame.render_widget(
        Paragraph::new(lines).wrap(Wrap { trim: true }).block(
            Block::default()
                .borders(Borders::ALL)
                .border_style(theme.border())
                .title(Span::styled(title, theme.title())),
        ),
        area,
    );
}
