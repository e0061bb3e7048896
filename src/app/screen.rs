//! What the console keeps of the screen itself: how far the findings pane and the help are
//! scrolled, and where the last frame put what a mouse can point at (so a click means what the
//! user saw). The draw code fills [`Regions`] after each frame; `update` only reads them. The
//! fleet table's rows are kept here too, so a frame rebuilds only the rows that changed.

use ratatui::layout::{Position, Rect};

/// Scroll positions and the last frame's regions.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Screen {
    /// The first row shown in the host view's findings pane (its findings' text, wrapped).
    pub findings_scroll: usize,
    /// The first line shown in the help overlay.
    pub help_scroll: usize,
    /// Where the last frame drew what can be clicked or scrolled.
    pub regions: Regions,
    /// The fleet table's rows the last frame built, for the next to reuse.
    pub fleet_rows: crate::ui::row_cache::RowCache,
}

/// A list drawn one item per row: `rows` is the area of the item rows (no header, no border),
/// `first` the index of the item on its top row.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ListArea {
    pub rows: Rect,
    pub first: usize,
    /// Lines each item takes (the fleet table gives a host two when there is room).
    pub lines_per_item: u16,
}

impl ListArea {
    /// The index of the item on the row at `at`, if `at` is on one of the rows.
    pub fn item_at(&self, at: Position) -> Option<usize> {
        self.rows
            .contains(at)
            .then(|| self.first + usize::from((at.y - self.rows.y) / self.lines_per_item.max(1)))
    }
}

/// A pane that scrolls: where it is, and how far it can scroll (the last frame knew how many
/// rows its text takes at its width).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ScrollArea {
    pub area: Rect,
    pub max_scroll: usize,
}

/// What the last frame drew where.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Regions {
    /// The fleet table's host rows (positions in the visible list).
    pub fleet_rows: Option<ListArea>,
    /// The host view's GPU cards and the GPU each shows.
    pub cards: Vec<(Rect, usize)>,
    /// The host view's findings pane.
    pub findings: Option<ScrollArea>,
    /// The host view's process rows.
    pub processes: Option<ListArea>,
    /// The help overlay.
    pub help: Option<ScrollArea>,
    /// The hosts whose readings the frame showed (the fleet rows that fit, or the open host),
    /// sorted; `None` before the first frame, when every host counts as shown.
    pub shown_hosts: Option<Vec<usize>>,
}

impl Regions {
    /// Whether `host`'s readings were on the last frame: a sample of a host off screen (a
    /// thousand-host fleet shows forty) asks for no frame of its own.
    pub fn shows_host(&self, host: usize) -> bool {
        self.shown_hosts
            .as_ref()
            .is_none_or(|shown| shown.binary_search(&host).is_ok())
    }
}

impl Screen {
    /// Scrolls the findings pane by `delta` rows, within what the last frame allows (no
    /// frame, no pane: nothing to scroll).
    pub fn scroll_findings(&mut self, delta: i64) {
        let max = self.regions.findings.map_or(0, |pane| pane.max_scroll);
        self.findings_scroll = clamp_step(self.findings_scroll, delta, max);
    }

    /// The rows a page key moves the findings pane the last frame drew, if it drew one.
    pub fn findings_page(&self) -> Option<usize> {
        self.regions
            .findings
            .map(|pane| crate::ui::findings::page_rows(pane.area))
    }

    /// Scrolls the help by `delta` lines, within what the last frame allows.
    pub fn scroll_help(&mut self, delta: i64, lines: usize) {
        let max = self
            .regions
            .help
            .map_or(lines.saturating_sub(1), |pane| pane.max_scroll);
        self.help_scroll = clamp_step(self.help_scroll, delta, max);
    }
}

/// `at + delta` within `0..=max`.
fn clamp_step(at: usize, delta: i64, max: usize) -> usize {
    crate::app::cursor::step(at.min(max), delta, max.saturating_add(1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scrolling_stops_where_the_last_frame_said() {
        let mut screen = Screen::default();
        screen.scroll_findings(10);
        assert_eq!(screen.findings_scroll, 0, "no frame yet: nothing to scroll");
        assert_eq!(screen.findings_page(), None);
        screen.regions.findings = Some(ScrollArea {
            area: Rect::new(0, 0, 10, 7),
            max_scroll: 2,
        });
        screen.scroll_findings(1);
        screen.scroll_findings(5);
        assert_eq!(screen.findings_scroll, 2);
        screen.scroll_findings(-1);
        assert_eq!(screen.findings_scroll, 1, "one step up shows at once");
        assert_eq!(
            screen.findings_page(),
            Some(4),
            "five rows inside, one kept"
        );
        let list = ListArea {
            rows: Rect::new(1, 3, 20, 4),
            first: 7,
            lines_per_item: 1,
        };
        assert_eq!(list.item_at(Position::new(5, 3)), Some(7));
        assert_eq!(list.item_at(Position::new(5, 6)), Some(10));
        assert_eq!(list.item_at(Position::new(5, 7)), None);
        assert_eq!(list.item_at(Position::new(0, 4)), None);
    }
}
