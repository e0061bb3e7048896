//! The money nobody watches, as the cost panel shows it: plain lines the entry layer builds
//! from the synced provider inventory (stopped instances whose storage bills, running
//! instances that are no host of the fleet, recent price changes), amounts already written as
//! money. The console only keeps and draws them; and what joining the synced inventory again
//! changed in the fleet, which it says in a notice.

pub use crate::fleet::unwatched::{UnwatchedKind, UnwatchedLine};

/// What joining the synced inventory to the fleet again changed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct JoinedHosts {
    /// Hosts watched from now on (new instances, or hosts restarted: reached or priced
    /// differently).
    pub joined: Vec<String>,
    /// Hosts whose instance left its account: marked gone, their ledger closed.
    pub gone: Vec<String>,
    /// Hosts no longer in the fleet (an instance stopped).
    pub left: Vec<String>,
}

/// The notices for `joined`, each with whether it is a warning.
pub fn notices(joined: &JoinedHosts) -> Vec<(String, bool)> {
    use rust_i18n::t;
    let mut notices = Vec::new();
    if !joined.joined.is_empty() {
        let hosts = joined.joined.join(", ");
        notices.push((t!("inventory.joined", hosts = hosts).into_owned(), false));
    }
    if !joined.left.is_empty() {
        let hosts = joined.left.join(", ");
        notices.push((t!("inventory.left", hosts = hosts).into_owned(), false));
    }
    if !joined.gone.is_empty() {
        let hosts = joined.gone.join(", ");
        notices.push((t!("inventory.gone", hosts = hosts).into_owned(), true));
    }
    notices
}
