//! The fleet's total line under the table: GPUs and their mean load, what the fleet costs per
//! hour (per currency, never summed across currencies), what it has spent and how long it sat
//! idle. The same money the cost panel (`$`) shows.

use rust_i18n::t;

use ratatui::text::Line;

use crate::app::model::Model;
use crate::cost::{format_duration_ms, format_money};
use crate::fleet::outage::outage;
use crate::theme::Theme;
use crate::ui::format::{Noun, Piece, count, fit_pieces, whole};

/// `30.00 CNY + 3.79 USD`: amounts per currency, in currency order.
fn per_currency(amounts: &[(String, f64)], suffix: &str) -> String {
    amounts
        .iter()
        .map(|(currency, amount)| format!("{}{suffix}", format_money(*amount, currency)))
        .collect::<Vec<_>>()
        .join(" + ")
}

/// The price per hour of every host still billing, summed per currency.
fn rates(model: &Model) -> Vec<(String, f64)> {
    let money = &model.fleet.money;
    let mut out: Vec<(String, f64)> = Vec::new();
    for (id, host) in money.hosts.iter().enumerate() {
        let Some(price) = &host.config.price else {
            continue;
        };
        if money.is_released(id) {
            continue;
        }
        match out.iter_mut().find(|(c, _)| *c == price.currency) {
            Some((_, sum)) => *sum += price.price_per_hour,
            None => out.push((price.currency.clone(), price.price_per_hour)),
        }
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

/// The total line, fitted to `width`: whole pieces are left out when short of room, least
/// needed first (the GPU count, then idle, spent, and the hourly rate last).
pub fn line(model: &Model, theme: &Theme, width: usize) -> Line<'static> {
    let fleet = &model.fleet;
    let mut gpus = 0;
    let (mut util_sum, mut util_n) = (0.0, 0usize);
    for host in fleet.hosts.iter().filter(|h| !h.retired) {
        gpus += host.gpus.len();
        if outage(host, fleet.now_ms, fleet.options.interval_ms).is_none() {
            for u in host
                .gpus
                .iter()
                .filter_map(|g| g.latest.utilization_gpu_pct)
            {
                util_sum += u;
                util_n += 1;
            }
        }
    }
    let cost = &fleet.money.fleet;
    let mut pieces = vec![
        Piece::new(t!("totals.total"), theme.title(), 10),
        Piece::new(count(gpus, Noun::Gpu), theme.base(), 2),
    ];
    if util_n > 0 {
        pieces.push(Piece::new(
            t!("totals.util", pct = whole(util_sum / util_n as f64)),
            theme.base(),
            3,
        ));
    }
    let rates = rates(model);
    if rates.is_empty() {
        pieces.push(Piece::text(t!("totals.no_prices"), theme.dim(), 1));
    } else {
        pieces.push(Piece::new(per_currency(&rates, "/h"), theme.base(), 8));
    }
    if !cost.by_currency.is_empty() {
        let spent: Vec<(String, f64)> = cost
            .by_currency
            .iter()
            .map(|c| (c.currency.clone(), c.spent))
            .collect();
        pieces.push(Piece::new(
            t!("totals.spent", money = per_currency(&spent, "")),
            theme.base(),
            7,
        ));
    }
    let idle_money: Vec<(String, f64)> = cost
        .by_currency
        .iter()
        .filter(|c| c.spent_idle > 0.0)
        .map(|c| (c.currency.clone(), c.spent_idle))
        .collect();
    let idle = if idle_money.is_empty() {
        t!("totals.idle", time = format_duration_ms(cost.idle_ms))
    } else {
        t!(
            "totals.idle_money",
            time = format_duration_ms(cost.idle_ms),
            money = per_currency(&idle_money, "")
        )
    };
    let idle_style = if cost.idle_ms > 0 {
        theme.warning()
    } else {
        theme.base()
    };
    pieces.push(Piece::new(idle, idle_style, 6));
    Line::from(fit_pieces(pieces, " · ", theme.dim(), width))
}
