//! AutoDL 容器实例 Pro (the only AutoDL instances with an API): `POST
//! /api/v1/dev/instance/pro/list` with `{"page_index":N,"page_size":M}` for pages up to
//! `data.max_page`, then `GET /api/v1/dev/instance/pro/snapshot?instance_uuid=…` for each
//! running instance (SSH: `proxy_host`:`ssh_port` as `root`; price: `payg_price`). The header
//! is `Authorization: TOKEN` with no `Bearer`; answers are wrapped as `{"code":"Success",
//! "data":…}`. The snapshot also carries the root password: it is never read, kept or shown.
//!
//! `payg_price`'s unit is not documented; it matches 1/1000 CNY per hour (the example value
//! 1970 on the 容器实例 Pro API page, <https://www.autodl.com/docs/instance_pro_api/>), which is
//! how it is read here.
//!
//! The balance: `POST /api/v1/dev/wallet/balance` (AutoDL's common API page,
//! <https://www.autodl.com/docs/common_api/>), `data.assets` in 1/1000 CNY; vouchers
//! (`voucher_balance`) are left out. A list item's `stopped_at` (a Go nullable time, like
//! `started_at`) is when it was shut down.

use serde_json::{Value, json};

use super::Listing;
use super::fetch::{FetchError, Fetcher, Method, Pace, no_field};
use super::fields;
use super::model::{Balance, Instance, InstanceState, SshEndpoint, SshRoute};

pub const BASE_URL: &str = crate::release::AUTODL_BASE_URL;
const LIST_PATH: &str = "/api/v1/dev/instance/pro/list";
const SNAPSHOT_PATH: &str = "/api/v1/dev/instance/pro/snapshot";
const BALANCE_PATH: &str = "/api/v1/dev/wallet/balance";
const PAGE_SIZE: u64 = 50;
const MAX_PAGES: u64 = 200;
/// `payg_price` per 1 CNY.
const PRICE_PER_CNY: f64 = 1000.0;

/// AutoDL documents no rate limit: ten requests a second at most, to be gentle.
pub const PACE: Pace = Pace {
    min_gap_ms: 100,
    backoff_ms: 1_000,
    retries: 2,
    max_retry_after_s: 30,
};

pub fn list(fetcher: &mut Fetcher<'_>) -> Result<Listing, FetchError> {
    let mut listing = Listing::default();
    let mut page_index = 1;
    loop {
        let url = fetcher.url(LIST_PATH, &[]);
        let body = json!({"page_index": page_index, "page_size": PAGE_SIZE});
        let data = unwrap(fetcher.json(&Method::Post(body), &url)?)?;
        let rows = data
            .get("list")
            .and_then(Value::as_array)
            .ok_or_else(|| no_field("data.list"))?;
        for row in rows {
            match parse(row) {
                Some(instance) => listing.instances.push(instance),
                None => listing.skipped += 1,
            }
        }
        let max_page = fields::number(&data, "max_page").unwrap_or(1.0);
        if rows.is_empty() || (page_index as f64) >= max_page || page_index >= MAX_PAGES {
            break;
        }
        page_index += 1;
    }
    for instance in &mut listing.instances {
        if instance.state != InstanceState::Running {
            continue;
        }
        let url = fetcher.url(SNAPSHOT_PATH, &[("instance_uuid", instance.id.as_str())]);
        match fetcher.json(&Method::Get, &url).and_then(unwrap) {
            Ok(snapshot) => apply_snapshot(instance, &snapshot),
            // The account's own troubles end the sync; one snapshot refused does not.
            Err(e @ (FetchError::TokenRejected { .. } | FetchError::RateLimited { .. })) => {
                return Err(e);
            }
            Err(e) => listing.notes.push(
                rust_i18n::t!("provider_shape.no_details", id = instance.id, error = e)
                    .into_owned(),
            ),
        }
    }
    Ok(listing)
}

/// The account's balance (vouchers left out).
pub fn balance(fetcher: &mut Fetcher<'_>) -> Result<Balance, FetchError> {
    let url = fetcher.url(BALANCE_PATH, &[]);
    let data = unwrap(fetcher.json(&Method::Post(json!({})), &url)?)?;
    let assets = fields::number(&data, "assets").ok_or_else(|| no_field("data.assets"))?;
    Ok(Balance {
        amount: assets / PRICE_PER_CNY,
        currency: "CNY".to_string(),
        spend_per_hour: None,
    })
}

/// `data` of an answer whose `code` is `Success`.
fn unwrap(answer: Value) -> Result<Value, FetchError> {
    match answer.get("code").and_then(Value::as_str) {
        Some("Success") => answer.get("data").cloned().ok_or_else(|| no_field("data")),
        Some(_) => {
            let code = fields::text(&answer, "code").unwrap_or_default();
            let text = match fields::text(&answer, "msg") {
                Some(msg) => format!("{code}: {msg}"),
                None => code,
            };
            Err(FetchError::Refused { text })
        }
        None => Err(no_field("code")),
    }
}

/// One item of `data.list`; `None` without a `uuid`.
pub fn parse(row: &Value) -> Option<Instance> {
    let id = fields::text(row, "uuid")?;
    let status = fields::text(row, "status").unwrap_or_else(|| "unknown".into());
    let state = match status.as_str() {
        "running" => InstanceState::Running,
        "shutdown" => InstanceState::Stopped,
        _ => InstanceState::Other,
    };
    let mut instance = Instance::new(id, state, status);
    instance.label = fields::text(row, "name");
    instance.gpu_count = fields::count(row, "req_gpu_amount");
    instance.currency = Some("CNY".to_string());
    // A Go nullable time: `{"Time": "…", "Valid": bool}`.
    instance.started_ms = row
        .get("started_at")
        .filter(|t| t.get("Valid") == Some(&Value::Bool(true)))
        .and_then(|t| fields::rfc3339_ms(t, "Time"));
    instance.stopped_ms = row
        .get("stopped_at")
        .filter(|t| t.get("Valid") == Some(&Value::Bool(true)))
        .and_then(|t| fields::rfc3339_ms(t, "Time"));
    Some(instance)
}

fn apply_snapshot(instance: &mut Instance, snapshot: &Value) {
    instance.gpu_model = fields::text(snapshot, "snapshot_gpu_alias_name");
    instance.price_per_hour = fields::scaled(fields::amount(snapshot, "payg_price"), PRICE_PER_CNY);
    instance.ssh = match (
        fields::host(snapshot, "proxy_host"),
        fields::port(snapshot, "ssh_port"),
    ) {
        (Some(host), Some(port)) => Some(SshEndpoint {
            user: "root".to_string(),
            host,
            port,
            route: SshRoute::Proxy,
        }),
        _ => None,
    };
}
