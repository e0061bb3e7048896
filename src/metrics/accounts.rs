//! The provider accounts' balances as `gpufleet_account_*` series: the balance and how long it
//! lasts at the account's current burn (in seconds, Prometheus's base unit: promtool's linter
//! refuses hours), labelled by `account`, `provider` and `currency` (the figures the cost
//! panel's balance lines carry). An account whose burn is nil has no time-left sample.

use crate::fleet::Fleet;
use crate::fleet::unwatched::UnwatchedKind;
use crate::metrics::text::{Kind, Page};

pub fn account_series(page: &mut Page, fleet: &Fleet) {
    let balances: Vec<_> = fleet
        .unwatched
        .iter()
        .filter_map(|line| match &line.kind {
            UnwatchedKind::Balance {
                provider,
                account,
                currency,
                amount,
                hours_left,
                ..
            } => Some((
                provider.as_str(),
                account.as_str(),
                currency.as_str(),
                *amount,
                *hours_left,
            )),
            _ => None,
        })
        .collect();
    page.family(
        "gpufleet_account_balance",
        "The provider account's balance, in its currency (negative: owed).",
        Kind::Gauge,
    );
    for (provider, account, currency, amount, _) in &balances {
        page.sample(
            "gpufleet_account_balance",
            &[
                ("account", *account),
                ("provider", *provider),
                ("currency", *currency),
            ],
            *amount,
        );
    }
    page.family(
        "gpufleet_account_time_left_seconds",
        "Seconds the account's balance lasts at its current burn.",
        Kind::Gauge,
    );
    for (provider, account, currency, _, hours_left) in &balances {
        if let Some(hours) = hours_left {
            page.sample(
                "gpufleet_account_time_left_seconds",
                &[
                    ("account", *account),
                    ("provider", *provider),
                    ("currency", *currency),
                ],
                *hours * 3600.0,
            );
        }
    }
}
