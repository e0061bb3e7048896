//! The fleet table's rows kept from one frame to the next. Formatting a row is most of a
//! frame's cost, and a frame comes every ~70 ms while each host changes about once a second, so
//! a row is built again only when something it shows may have changed: the host itself (its
//! revision), its status or outage (which age with the clock), its cost, whether it was
//! released, the language or the theme. Only the rows of the last frame are kept.

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use crate::cost::HostCost;
use crate::fleet::HostId;
use crate::fleet::host::HostStatus;
use crate::fleet::outage::Outage;
use crate::theme::Theme;
use crate::ui::fleet_row::{HostRow, RowInput};

/// The rows drawn by the last frame, with what each was built from.
#[derive(Default)]
pub struct RowCache {
    kept: RefCell<Kept>,
}

#[derive(Default)]
struct Kept {
    /// The theme and language the rows were built in; a change of either drops them all.
    theme: Option<Theme>,
    locale: String,
    rows: HashMap<HostId, Entry>,
    /// The map the next frame's rows go into, emptied but keeping its room, so that a frame
    /// allocates nothing for the map itself.
    spare: HashMap<HostId, Entry>,
}

/// One row and the inputs it was built from (besides the theme and language).
struct Entry {
    revision: u64,
    status: HostStatus,
    outage: Option<Outage>,
    cost: Option<HostCost>,
    released: bool,
    row: Rc<HostRow>,
}

impl Entry {
    fn serves(&self, revision: u64, input: &RowInput<'_>) -> bool {
        self.revision == revision
            && self.released == input.released
            && self.status == *input.status
            && self.outage == input.outage
            && self.cost.as_ref() == input.cost
    }
}

impl RowCache {
    /// The rows of `inputs` in their order: kept ones where nothing they show changed, new ones
    /// for the rest. Rows of hosts not in `inputs` are dropped.
    pub fn rows<'a>(
        &self,
        inputs: impl IntoIterator<Item = (HostId, RowInput<'a>)>,
        theme: &Theme,
    ) -> Vec<Rc<HostRow>> {
        let mut kept = self.kept.borrow_mut();
        let locale = rust_i18n::locale();
        if kept.theme.as_ref() != Some(theme) || kept.locale != *locale {
            kept.rows.clear();
            kept.theme = Some(theme.clone());
            kept.locale = locale.to_string();
        }
        let spare = std::mem::take(&mut kept.spare);
        let mut old = std::mem::replace(&mut kept.rows, spare);
        let mut out = Vec::new();
        for (id, input) in inputs {
            let revision = input.host.revision();
            let entry = match old.remove(&id) {
                Some(entry) if entry.serves(revision, &input) => entry,
                _ => Entry {
                    revision,
                    status: input.status.clone(),
                    outage: input.outage.clone(),
                    cost: input.cost.cloned(),
                    released: input.released,
                    row: Rc::new(HostRow::new(input, theme)),
                },
            };
            out.push(Rc::clone(&entry.row));
            kept.rows.insert(id, entry);
        }
        old.clear();
        kept.spare = old;
        out
    }

    /// How many rows are kept (the last frame's).
    pub fn len(&self) -> usize {
        self.kept.borrow().rows.len()
    }

    /// Whether no row is kept.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl Clone for RowCache {
    /// A copy starts empty: the rows are rebuilt on its first frame.
    fn clone(&self) -> Self {
        Self::default()
    }
}

impl PartialEq for RowCache {
    /// Always equal: what a frame kept is not part of what the screen is.
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl Eq for RowCache {}

impl std::fmt::Debug for RowCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "RowCache({} rows)", self.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fleet::HostEvent;
    use crate::fleet::host::HostState;
    use crate::telemetry::GpuSample;
    use crate::ui::fleet_row::Figures;

    fn host_at(util_pct: f64, at_ms: u64) -> HostState {
        let shape = crate::fleet::FleetOptions::default().history_shape();
        let mut host = HostState::new("h", shape);
        sample(&mut host, util_pct, at_ms);
        host
    }

    fn sample(host: &mut HostState, util_pct: f64, at_ms: u64) {
        host.apply(HostEvent::Sample {
            at_ms,
            gpu: GpuSample {
                utilization_gpu_pct: Some(util_pct),
                ..GpuSample::default()
            },
        });
    }

    fn util(row: &HostRow) -> String {
        match &row.figures {
            Figures::Numbers { util, .. } => util.0.clone(),
            Figures::Outage(_) => "outage".into(),
        }
    }

    fn rows(cache: &RowCache, host: &HostState, now_ms: u64, theme: &Theme) -> Rc<HostRow> {
        let status = host.status(now_ms, 1000);
        let input = RowInput {
            host,
            status: &status,
            outage: crate::fleet::outage::outage(host, now_ms, 1000),
            cost: None,
            released: false,
        };
        cache.rows([(0, input)], theme).remove(0)
    }

    #[test]
    fn an_unchanged_host_keeps_its_row_and_a_new_reading_rebuilds_it() {
        let theme = Theme::default_theme();
        let cache = RowCache::default();
        let mut host = host_at(40.0, 1_000);
        let first = rows(&cache, &host, 1_100, &theme);
        assert_eq!(util(&first), "40%");
        let again = rows(&cache, &host, 1_200, &theme);
        assert!(
            Rc::ptr_eq(&first, &again),
            "nothing changed: the row is reused"
        );

        sample(&mut host, 90.0, 2_000);
        let after = rows(&cache, &host, 2_100, &theme);
        assert_eq!(
            util(&after),
            "90%",
            "the new reading is shown, not the kept row"
        );
    }

    #[test]
    fn a_host_that_goes_quiet_is_rebuilt_though_nothing_came_from_it() {
        let theme = Theme::default_theme();
        let cache = RowCache::default();
        let host = host_at(40.0, 1_000);
        let live = rows(&cache, &host, 1_100, &theme);
        // Nothing arrives for a minute: only the clock moved, and the row says so.
        let quiet = rows(&cache, &host, 61_000, &theme);
        assert!(!Rc::ptr_eq(&live, &quiet));
        assert_ne!(live.status.0, quiet.status.0);
    }

    #[test]
    fn another_theme_rebuilds_every_row_and_only_shown_rows_are_kept() {
        let cache = RowCache::default();
        let host = host_at(40.0, 1_000);
        let plain = rows(&cache, &host, 1_100, &Theme::default_theme());
        let other = Theme::default_theme().for_depth(crate::theme::ColorDepth::None);
        let recoloured = rows(&cache, &host, 1_100, &other);
        assert!(!Rc::ptr_eq(&plain, &recoloured));
        assert_eq!(cache.len(), 1);
        let none: [(HostId, RowInput<'_>); 0] = [];
        assert!(cache.rows(none, &other).is_empty());
        assert!(cache.is_empty(), "a host no longer shown is not kept");
    }
}
