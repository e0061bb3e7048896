//! `gpufleet release --dry-run --json`: the plan as a JSON document (schema in docs/CLI.md), with
//! what the text shows and nothing more: URLs redacted, the token never, its problem in words.

use serde_json::{Value, json};

use crate::release::flow::ReleasePlan;
use crate::release::request::{AuthScheme, ReleaseStep};

impl ReleasePlan {
    /// The plan as JSON; `dry_run` is always true here (nothing was run or sent).
    pub fn to_json(&self) -> Value {
        let steps: Vec<Value> = self
            .request
            .steps
            .iter()
            .map(|step| match step {
                ReleaseStep::Http(http) => json!({
                    "kind": "http",
                    "method": http.method.as_str(),
                    "url": crate::redact::url(&http.url),
                    "auth": match http.auth {
                        AuthScheme::Bearer => "bearer",
                        AuthScheme::Bare => "bare",
                    },
                    "body": http.body,
                }),
                ReleaseStep::Local { argv } => json!({ "kind": "local", "argv": argv }),
                ReleaseStep::OnHost { argv } => json!({ "kind": "on_host", "argv": argv }),
            })
            .collect();
        json!({
            "dry_run": true,
            "host": self.host,
            "provider": self.provider.as_str(),
            "action": self.action.as_str(),
            "instance_id": self.instance_id,
            "effect": self.effect,
            "spent": self.spent,
            "billed_ms": self.billed_ms,
            "current_idle_ms": self.current_idle_ms,
            "backup": self.backup,
            "steps": steps,
            "warnings": self.warnings,
            "token_problem": self.token_problem,
            "simulated": self.simulated,
        })
    }
}
