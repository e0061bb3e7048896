//! Where a frame puts what the mouse can point at, worked out with the same layout functions the
//! drawing uses, so that a click lands on what was drawn. The runtime stores the result in the
//! model after each frame ([`Screen::regions`](crate::app::screen::Screen)).

use ratatui::layout::Rect;

use crate::app::keymap::InputMode;
use crate::app::model::{Model, View};
use crate::app::screen::{ListArea, Regions, ScrollArea};
use crate::theme::Theme;
use crate::ui::{findings, help, host, scroll};

/// The regions of a frame of `area` drawn from `model`.
pub fn of(model: &Model, theme: &Theme, area: Rect) -> Regions {
    let [_, _, body, _] = crate::ui::areas(area, model, theme);
    let mut regions = Regions::default();
    if model.mode == InputMode::Help {
        regions.help = Some(help::placement(body));
    }
    match model.view {
        View::Fleet => regions.fleet_rows = Some(fleet_rows(body, model)),
        View::Host(id) => {
            let Some(state) = model.fleet.hosts.get(id) else {
                return regions;
            };
            let areas = host::layout(body, model, state, theme);
            regions.cards = host::card_rects(&areas, model, state);
            regions.findings = areas.findings.map(|pane| ScrollArea {
                area: pane,
                max_scroll: findings::max_scroll(pane, state, theme),
            });
            regions.processes = areas.processes.map(|pane| {
                let (rows, first) = host::process_rows(pane, model, state);
                ListArea { rows, first }
            });
        }
    }
    regions
}

/// The fleet table's host rows: inside its frame, under the header line, scrolled as
/// `ui::fleet` scrolls them (the cursor's host on screen, from the top or on the last row).
fn fleet_rows(body: Rect, model: &Model) -> ListArea {
    let rows = Rect {
        x: body.x + 1,
        y: body.y + 2,
        width: body.width.saturating_sub(2),
        height: body.height.saturating_sub(3),
    };
    let visible = model.visible_hosts().len();
    let cursor = model.fleet_cursor.min(visible.saturating_sub(1));
    ListArea {
        rows,
        first: scroll::window_start(cursor, usize::from(rows.height)),
    }
}
