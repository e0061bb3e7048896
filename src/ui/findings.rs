//! The findings pane of the host view: what is wrong, how sure, and what to do about it. The
//! text is wrapped here ([`crate::ui::wrap`], continuation rows indented) so the pane knows how
//! many rows each finding takes: it scrolls a row at a time, so every row of every finding's
//! action can be brought into view, and says which findings are in view.

use rust_i18n::t;

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph};

use crate::diagnose::Severity;
use crate::diagnose::live_earlier::end_words;
use crate::fleet::fault_end::EarlierFinding;
use crate::fleet::host::HostState;
use crate::theme::Theme;
use crate::ui::format::{clean, clock};
use crate::ui::scroll;
use crate::ui::wrap::{self, Piece};

/// Each finding's rows at `width` columns, in order: the live ones, then the earlier ones
/// (their fault ended), newest first.
fn finding_rows(host: &HostState, width: usize, theme: &Theme) -> Vec<Vec<Line<'static>>> {
    let earlier = host
        .faults
        .earlier()
        .rev()
        .map(|e| earlier_rows(e, width, theme));
    host.findings
        .iter()
        .map(|f| {
            let (tag, tag_style) = match f.severity {
                Severity::Critical => (t!("finding.crit"), theme.badge_critical()),
                Severity::Warning => (t!("finding.warn"), theme.badge_warning()),
                Severity::Info => (t!("finding.info"), theme.dim()),
            };
            let gpu = f.gpu.map(|g| format!(" GPU {g}")).unwrap_or_default();
            let head = [
                Piece::new(format!("{}{gpu}:", clean(&f.label)), theme.title()),
                Piece::new(clean(&f.summary), theme.base()),
            ];
            let mut rows = wrap::lines(Span::styled(format!(" {tag} "), tag_style), &head, width);
            let mut action = vec![Piece::new(clean(&f.action), theme.base())];
            if let Some(runbook) = &f.runbook {
                action.push(Piece::whole(
                    format!("[p: {}]", clean(runbook)),
                    theme.help_key(),
                ));
            }
            rows.extend(wrap::lines(
                Span::styled("   →", theme.dim()),
                &action,
                width,
            ));
            rows
        })
        .chain(earlier)
        .collect()
}

/// A finding whose fault ended, dimmed: when it showed, what it was, when and why it ended.
fn earlier_rows(e: &EarlierFinding, width: usize, theme: &Theme) -> Vec<Line<'static>> {
    let f = &e.finding;
    let gpu = f.gpu.map(|g| format!(" GPU {g}")).unwrap_or_default();
    let ended = t!(
        "finding.earlier_ended",
        time = clock(e.ended_ms),
        why = end_words(e.cause)
    );
    let pieces = [
        Piece::new(clock(e.at_ms), theme.dim()),
        Piece::new(format!("{}{gpu}:", clean(&f.label)), theme.dim()),
        Piece::new(clean(&f.summary), theme.dim()),
        Piece::new(ended.into_owned(), theme.dim()),
    ];
    let tag = t!("finding.earlier");
    wrap::lines(
        Span::styled(format!(" {tag} "), theme.dim()),
        &pieces,
        width,
    )
}

/// The inside of the pane's frame.
fn inner(area: Rect) -> Rect {
    Block::default().borders(Borders::ALL).inner(area)
}

/// The rows the pane takes to show every finding at `width` columns, its frame included.
pub fn height_wanted(host: &HostState, width: u16, theme: &Theme) -> u16 {
    let inside = usize::from(width.saturating_sub(2));
    let rows: usize = finding_rows(host, inside, theme).iter().map(Vec::len).sum();
    u16::try_from(rows + 2).unwrap_or(u16::MAX)
}

/// The furthest the pane scrolls, in rows: the last row of the last finding at the bottom.
pub fn max_scroll(area: Rect, host: &HostState, theme: &Theme) -> usize {
    let inside = inner(area);
    let rows: usize = finding_rows(host, usize::from(inside.width), theme)
        .iter()
        .map(Vec::len)
        .sum();
    rows.saturating_sub(usize::from(inside.height))
}

/// The rows a page key (PgUp, PgDn) moves the pane: all it shows but one, which stays in view.
pub fn page_rows(area: Rect) -> usize {
    usize::from(inner(area).height).saturating_sub(1).max(1)
}

/// Draws the findings from their `scroll`th row on; `focused` when keys scroll it. The title
/// says which findings are in view, whole or in part; the bottom edge how many rows are below.
pub fn draw(
    frame: &mut Frame,
    area: Rect,
    host: &HostState,
    (scroll, focused): (usize, bool),
    theme: &Theme,
) {
    let inside = inner(area);
    let room = usize::from(inside.height);
    let mut lines = Vec::new();
    // The finding each row belongs to.
    let mut owner = Vec::new();
    let all = finding_rows(host, usize::from(inside.width), theme);
    // Live findings and earlier ones alike count in the title.
    let total = all.len();
    for (i, rows) in all.into_iter().enumerate() {
        owner.extend(std::iter::repeat_n(i, rows.len()));
        lines.extend(rows);
    }
    let first = scroll.min(lines.len().saturating_sub(room));
    let end = (first + room).min(lines.len());
    let (from, shown) = match (
        owner.get(first),
        end.checked_sub(1).and_then(|e| owner.get(e)),
    ) {
        (Some(&top), Some(&bottom)) => (top, bottom + 1 - top),
        _ => (0, 0),
    };
    let title = scroll::title(&t!("pane.findings"), from, shown, total);
    let below = lines.len() - end;
    let border = if focused {
        theme.border_focused()
    } else {
        theme.border()
    };
    let mut block = Block::default()
        .borders(Borders::ALL)
        .border_style(border)
        .title(Span::styled(title, theme.title()));
    if below > 0 {
        let more = crate::words::Words::counted("scroll.below", below as u64).localized();
        block = block.title_bottom(Line::from(Span::styled(more, theme.title())).right_aligned());
    }
    let shown_lines: Vec<Line> = lines.drain(first..end).collect();
    frame.render_widget(Paragraph::new(shown_lines).block(block), area);
}
