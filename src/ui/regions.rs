//! Where a frame puts what the mouse can point at, worked out with the same layout functions the
//! drawing uses, so that a click lands on what was drawn. The runtime stores the result in the
//! model after each frame ([`Screen::regions`](crate::app::screen::Screen)).

use ratatui::layout::Rect;

use crate::app::keymap::InputMode;
use crate::app::model::{Model, View};
use crate::app::screen::{ListArea, Regions, ScrollArea};
use crate::theme::Theme;
use crate::ui::{findings, help, host};

/// The regions of a frame of `area` drawn from `model`.
pub fn of(model: &Model, theme: &Theme, area: Rect) -> Regions {
    let [_, _, body, _] = crate::ui::areas(area, model, theme);
    let mut regions = Regions::default();
    if model.mode == InputMode::Help {
        regions.help = Some(help::placement(body));
    }
    match model.view {
        View::Fleet => {
            let visible = model.visible_hosts();
            let rows = crate::ui::fleet::host_rows(body, model, visible.len());
            let count = usize::from(rows.rows.height / rows.lines_per_item.max(1));
            let mut shown: Vec<usize> = visible
                .iter()
                .skip(rows.first)
                .take(count)
                .copied()
                .collect();
            shown.sort_unstable();
            regions.shown_hosts = Some(shown);
            regions.fleet_rows = Some(rows);
        }
        View::Host(id) => {
            regions.shown_hosts = Some(vec![id]);
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
                ListArea {
                    rows,
                    first,
                    lines_per_item: 1,
                }
            });
        }
    }
    regions
}
