//! vast.ai: `GET /api/v1/instances/` in pages of at most 25, followed by `next_token`
//! (`after_token` on the next request) as the vast CLI does; `Authorization: Bearer KEY`.
//! Fields and units (vast.ai's API reference, <https://docs.vast.ai/api-reference>): `dph_total`
//! $/h, `start_date` Unix seconds, `disk_space` GB, `storage_total_cost` $/h for the disk. SSH as
//! the CLI chooses it: direct (`public_ipaddr` and `ports["22/tcp"][0].HostPort`) when the port is
//! published, else the proxy (`ssh_host`:`ssh_port`, plus one for jupyter images); the user is
//! always `root`.
//!
//! The balance: `GET /api/v0/users/current/` (vast.ai's API reference, "show user",
//! <https://docs.vast.ai/api-reference/accounts/show-user>), in USD: its `credit` (the prepaid
//! credit `vastai show user` prints as "Credit") where the answer has one, else the documented
//! `balance`.

use serde_json::Value;

use super::Listing;
use super::fetch::{FetchError, Fetcher, Method, Pace, no_list};
use super::fields;
use super::model::{Balance, Instance, InstanceState, SshEndpoint, SshRoute};

pub const BASE_URL: &str = crate::release::VAST_BASE_URL;
const PATH: &str = "/api/v1/instances/";
const USER_PATH: &str = "/api/v0/users/current/";
/// The API caps a page at 25.
const PAGE_SIZE: &str = "25";
/// The CLI's order, so pages do not shift under us.
const ORDER_BY: &str = r#"[{"col":"id","dir":"asc"}]"#;
/// 10 000 instances; a provider that never stops paging is not followed for ever.
const MAX_PAGES: usize = 400;

/// vast limits each endpoint to about one call a second per key (`x-rate-limit threshold: 1.0`)
/// and sends no `Retry-After` with a 429: back off ourselves, 1 s then 2 s (the CLI tries
/// three times too).
pub const PACE: Pace = Pace {
    min_gap_ms: 1_000,
    backoff_ms: 1_000,
    retries: 2,
    max_retry_after_s: 30,
};

pub fn list(fetcher: &mut Fetcher<'_>) -> Result<Listing, FetchError> {
    let mut listing = Listing::default();
    let mut after: Option<String> = None;
    for _ in 0..MAX_PAGES {
        let mut query = vec![("limit", PAGE_SIZE), ("order_by", ORDER_BY)];
        if let Some(token) = &after {
            query.push(("after_token", token.as_str()));
        }
        let url = fetcher.url(PATH, &query);
        let page = fetcher.json(&Method::Get, &url)?;
        if page.get("success") == Some(&Value::Bool(false)) {
            let text = fields::text(&page, "msg")
                .or_else(|| fields::text(&page, "error"))
                .unwrap_or_else(|| "success: false".to_string());
            return Err(FetchError::Refused { text });
        }
        let rows = page
            .get("instances")
            .and_then(Value::as_array)
            .ok_or_else(|| no_list("instances"))?;
        for row in rows {
            match parse(row) {
                Some(instance) => listing.instances.push(instance),
                None => listing.skipped += 1,
            }
        }
        match page.get("next_token").and_then(Value::as_str) {
            Some(next) if !next.is_empty() && after.as_deref() != Some(next) => {
                after = Some(next.to_string());
            }
            _ => return Ok(listing),
        }
    }
    Err(FetchError::Shape {
        what: rust_i18n::t!("provider_shape.still_paging", pages = MAX_PAGES).into_owned(),
    })
}

/// The account's balance, from the current user.
pub fn balance(fetcher: &mut Fetcher<'_>) -> Result<Balance, FetchError> {
    let url = fetcher.url(USER_PATH, &[]);
    let user = fetcher.json(&Method::Get, &url)?;
    let amount = fields::number(&user, "credit")
        .or_else(|| fields::number(&user, "balance"))
        .ok_or_else(|| super::fetch::no_field("balance"))?;
    Ok(Balance {
        amount,
        currency: "USD".to_string(),
        spend_per_hour: None,
    })
}

/// One row of `instances[]`; `None` without an id.
pub fn parse(row: &Value) -> Option<Instance> {
    let id = fields::text(row, "id")?;
    let status = fields::text(row, "actual_status").unwrap_or_else(|| "provisioning".into());
    let state = match status.as_str() {
        "running" => InstanceState::Running,
        "stopped" | "exited" => InstanceState::Stopped,
        _ => InstanceState::Other,
    };
    let mut instance = Instance::new(id, state, status);
    instance.label = fields::text(row, "label");
    instance.gpu_model = fields::text(row, "gpu_name");
    instance.gpu_count = fields::count(row, "num_gpus");
    instance.ssh = ssh(row);
    instance.price_per_hour = fields::amount(row, "dph_total");
    instance.currency = Some("USD".to_string());
    instance.started_ms = fields::unix_s_ms(row, "start_date");
    instance.disk_gb = fields::amount(row, "disk_space");
    instance.stopped_storage_per_hour = fields::amount(row, "storage_total_cost");
    Some(instance)
}

fn ssh(row: &Value) -> Option<SshEndpoint> {
    let direct_port = row
        .get("ports")
        .and_then(|ports| ports.get("22/tcp"))
        .and_then(|mappings| mappings.get(0))
        .and_then(|mapping| fields::port(mapping, "HostPort"));
    if let (Some(port), Some(host)) = (direct_port, fields::host(row, "public_ipaddr")) {
        return Some(SshEndpoint {
            user: "root".to_string(),
            host,
            port,
            route: SshRoute::Direct,
        });
    }
    let host = fields::host(row, "ssh_host")?;
    let mut port = fields::port(row, "ssh_port")?;
    if fields::text(row, "image_runtype").as_deref() == Some("jupyter") {
        port = port.checked_add(1)?;
    }
    Some(SshEndpoint {
        user: "root".to_string(),
        host,
        port,
        route: SshRoute::Proxy,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_published_port_is_direct_else_the_proxy_with_jupyter_one_up() {
        let direct = json!({"id": 1, "public_ipaddr": "1.2.3.4", "ports": {"22/tcp": [{"HostIp": "0.0.0.0", "HostPort": "41022"}]}, "ssh_host": "ssh5.vast.ai", "ssh_port": 10600});
        let ssh = parse(&direct).and_then(|i| i.ssh).map(|s| s.target());
        assert_eq!(ssh.as_deref(), Some("root@1.2.3.4:41022"));
        let jupyter = json!({"id": 2, "ssh_host": "ssh5.vast.ai", "ssh_port": 10600, "image_runtype": "jupyter"});
        let ssh = parse(&jupyter).and_then(|i| i.ssh).map(|s| s.target());
        assert_eq!(ssh.as_deref(), Some("root@ssh5.vast.ai:10601"));
    }
}
