//! Lambda Cloud: `GET /api/v1/instances` answers `{"data":[Instance]}` (no pagination is
//! documented); `Authorization: Bearer KEY`. The price is `instance_type.price_cents_per_hour`,
//! US cents; the GPU count `instance_type.specs.gpus`; SSH is `ubuntu@ip:22` (SkyPilot's
//! template). The API gives no start time: the first time gpufleet saw the instance stands in.
//! Lambda has no stop, so nothing of it bills while stopped (its API reference,
//! <https://docs-api.lambda.ai/api/cloud>, has launch, restart and terminate only).

use serde_json::Value;

use super::Listing;
use super::fetch::{FetchError, Fetcher, Method, Pace, no_list};
use super::fields;
use super::model::{Instance, InstanceState, SshEndpoint, SshRoute};

pub const BASE_URL: &str = crate::release::LAMBDA_BASE_URL;
const PATH: &str = "/api/v1/instances";

/// About one request a second (spec 1.9.3, secondary); SkyPilot waits 10 s after a 429.
pub const PACE: Pace = Pace {
    min_gap_ms: 1_000,
    backoff_ms: 10_000,
    retries: 1,
    max_retry_after_s: 30,
};

pub fn list(fetcher: &mut Fetcher<'_>) -> Result<Listing, FetchError> {
    let url = fetcher.url(PATH, &[]);
    let answer = fetcher.json(&Method::Get, &url)?;
    let rows = answer
        .get("data")
        .and_then(Value::as_array)
        .ok_or_else(|| no_list("data"))?;
    let mut listing = Listing::default();
    for row in rows {
        match parse(row) {
            Some(instance) => listing.instances.push(instance),
            None => listing.skipped += 1,
        }
    }
    Ok(listing)
}

/// One instance; `None` without an id.
pub fn parse(row: &Value) -> Option<Instance> {
    let id = fields::text(row, "id")?;
    let status = fields::text(row, "status").unwrap_or_else(|| "unknown".into());
    let state = match status.as_str() {
        "active" | "unhealthy" => InstanceState::Running,
        _ => InstanceState::Other,
    };
    let mut instance = Instance::new(id, state, status);
    instance.label = fields::text(row, "name");
    if let Some(kind) = row.get("instance_type") {
        instance.gpu_model = fields::text(kind, "gpu_description");
        instance.price_per_hour =
            fields::scaled(fields::amount(kind, "price_cents_per_hour"), 100.0);
        if let Some(specs) = kind.get("specs") {
            instance.gpu_count = fields::count(specs, "gpus");
            instance.disk_gb = fields::amount(specs, "storage_gib");
        }
    }
    instance.currency = Some("USD".to_string());
    instance.ssh = fields::host(row, "ip").map(|host| SshEndpoint {
        user: "ubuntu".to_string(),
        host,
        port: 22,
        route: SshRoute::Direct,
    });
    Some(instance)
}
