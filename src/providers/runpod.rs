//! RunPod REST v2: `GET /v2/pods` on `https://api.runpod.io` answers `{"pods":[…]}` in one
//! piece (no pagination is documented); `Authorization: Bearer KEY`. `cost` is USD/h (0.0 when
//! EXITED), `startedAt` RFC 3339, `mounts.persistent.size` the volume disk in GB. SSH: the
//! direct endpoint when there is one (the full SSH feature set), else the proxy, which carries
//! an interactive shell only (RunPod's REST v2 reference,
//! <https://docs.runpod.io/api-reference-v2/pods/list-pods>). A 429 carries `Retry-After`,
//! honoured.
//!
//! The balance: RunPod's GraphQL API (`POST /graphql`, the same key), `myself { clientBalance
//! currentSpendPerHr }`, the fields `runpodctl user` prints (its reference,
//! <https://docs.runpod.io/runpodctl/reference/runpodctl-user>): the credit left in USD and what
//! the account spends an hour now, by RunPod's own count.

use serde_json::Value;

use super::Listing;
use super::fetch::{FetchError, Fetcher, Method, Pace, no_list};
use super::fields;
use super::model::{Balance, Instance, InstanceState, SshEndpoint, SshRoute};

pub const BASE_URL: &str = "https://api.runpod.io";
const PATH: &str = "/v2/pods";
const GRAPHQL_PATH: &str = "/graphql";
const BALANCE_QUERY: &str = "query Balance { myself { clientBalance currentSpendPerHr } }";
/// A stopped pod's volume disk: $0.20 per GB-month (runpod.io pricing), per hour over the
/// 730 hours of an average month.
const STOPPED_VOLUME_USD_PER_GB_MONTH: f64 = 0.20;
const HOURS_PER_MONTH: f64 = 730.0;

/// The documented example policy is 60 a minute; one call a second keeps under it.
pub const PACE: Pace = Pace {
    min_gap_ms: 1_000,
    backoff_ms: 1_000,
    retries: 2,
    max_retry_after_s: 30,
};

pub fn list(fetcher: &mut Fetcher<'_>) -> Result<Listing, FetchError> {
    let url = fetcher.url(PATH, &[]);
    let answer = fetcher.json(&Method::Get, &url)?;
    let pods = answer
        .get("pods")
        .and_then(Value::as_array)
        .ok_or_else(|| no_list("pods"))?;
    let mut listing = Listing::default();
    for pod in pods {
        match parse(pod) {
            Some(instance) => listing.instances.push(instance),
            None => listing.skipped += 1,
        }
    }
    Ok(listing)
}

/// The account's balance and RunPod's own spend per hour.
pub fn balance(fetcher: &mut Fetcher<'_>) -> Result<Balance, FetchError> {
    let url = fetcher.url(GRAPHQL_PATH, &[]);
    let body = serde_json::json!({"query": BALANCE_QUERY});
    let answer = fetcher.json(&Method::Post(body), &url)?;
    if let Some(first) = answer
        .get("errors")
        .and_then(Value::as_array)
        .and_then(|e| e.first())
    {
        let text = fields::text(first, "message").unwrap_or_else(|| "errors".to_string());
        return Err(FetchError::Refused { text });
    }
    let myself = answer
        .get("data")
        .and_then(|d| d.get("myself"))
        .filter(|m| !m.is_null())
        .ok_or_else(|| super::fetch::no_field("data.myself"))?;
    let amount = fields::number(myself, "clientBalance")
        .ok_or_else(|| super::fetch::no_field("clientBalance"))?;
    Ok(Balance {
        amount,
        currency: "USD".to_string(),
        spend_per_hour: fields::amount(myself, "currentSpendPerHr"),
    })
}

/// One pod; `None` without an id.
pub fn parse(pod: &Value) -> Option<Instance> {
    let id = fields::text(pod, "id")?;
    let status = fields::text(pod, "status").unwrap_or_else(|| "UNKNOWN".into());
    let state = match status.as_str() {
        "RUNNING" => InstanceState::Running,
        "EXITED" => InstanceState::Stopped,
        _ => InstanceState::Other,
    };
    let mut instance = Instance::new(id, state, status);
    instance.label = fields::text(pod, "name");
    if let Some(gpu) = pod.get("gpu") {
        instance.gpu_model = fields::text(gpu, "id");
        instance.gpu_count = fields::count(gpu, "count");
    }
    instance.ssh = ssh(pod);
    instance.price_per_hour = fields::amount(pod, "cost");
    instance.currency = Some("USD".to_string());
    instance.started_ms = fields::rfc3339_ms(pod, "startedAt");
    instance.disk_gb = pod
        .get("mounts")
        .and_then(|m| m.get("persistent"))
        .and_then(|p| fields::amount(p, "size"));
    instance.stopped_storage_per_hour = instance
        .disk_gb
        .map(|gb| gb * STOPPED_VOLUME_USD_PER_GB_MONTH / HOURS_PER_MONTH);
    Some(instance)
}

fn ssh(pod: &Value) -> Option<SshEndpoint> {
    let ssh = pod.get("ssh")?;
    let endpoint = |key: &str, route: SshRoute| {
        let e = ssh.get(key).filter(|e| !e.is_null())?;
        Some(SshEndpoint {
            user: fields::text(e, "username")?,
            host: fields::host(e, "host")?,
            port: fields::port(e, "port")?,
            route,
        })
    };
    endpoint("direct", SshRoute::Direct).or_else(|| endpoint("proxy", SshRoute::Proxy))
}
