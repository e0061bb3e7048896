//! The demo's provider: answers a release in-process, as the provider's API accepts one, with
//! no socket, no DNS and no HTTP client. Only flows marked simulated ([`super::ReleaseFlow::
//! simulate`]) come here; their requests are built and shown exactly as real ones.

use super::execute::{HostRunner, SendError, SendFailure, StepAnswer, shown_text};
use super::request::{ReleaseRequest, ReleaseStep};
use crate::config::Provider;

/// What each step answers: the status and body the provider's API gives an accepted request
/// (the shapes of its documentation, as `tests/money/release_providers.rs` serves them), or
/// what a program on the host printed through `runner` (the demo's simulated hosts).
pub fn send(
    request: &ReleaseRequest,
    host: &str,
    runner: &dyn HostRunner,
) -> Result<Vec<StepAnswer>, SendFailure> {
    let mut done = Vec::new();
    for step in &request.steps {
        let answer = match step {
            ReleaseStep::Http(http) => StepAnswer {
                step: simulated_step(&http.shown_line()),
                status: Some(200),
                text: accepted_body(request.provider, request.instance_id.as_deref()),
            },
            ReleaseStep::Local { .. } => StepAnswer {
                step: simulated_step(&step.summary()),
                status: Some(0),
                text: rust_i18n::t!("release_plan.answer_no_program").into_owned(),
            },
            ReleaseStep::OnHost { argv } => {
                let mut lines = Vec::new();
                match runner.run(host, argv, &mut |line| lines.push(line.to_string())) {
                    Ok(status @ (Some(0) | None)) => StepAnswer {
                        step: simulated_step(&step.summary()),
                        status,
                        text: shown_text(&lines.join(" "), None),
                    },
                    Ok(Some(code)) => {
                        return Err(SendFailure {
                            done,
                            error: SendError::CommandFailed {
                                command: step.summary(),
                                status: super::execute::CommandStatus::Exit(code),
                                text: shown_text(&lines.join(" "), None),
                            },
                        });
                    }
                    Err(message) => {
                        return Err(SendFailure {
                            done,
                            error: SendError::Remote { message },
                        });
                    }
                }
            }
        };
        done.push(answer);
    }
    Ok(done)
}

/// The body an accepted request gets back from `provider`.
fn accepted_body(provider: Provider, instance_id: Option<&str>) -> String {
    match provider {
        Provider::Vast => r#"{"success": true}"#.to_string(),
        Provider::Lambda => format!(
            r#"{{"data": {{"terminated_instances": [{{"id": "{}", "status": "terminating"}}]}}}}"#,
            instance_id.unwrap_or_default()
        ),
        Provider::AutoDl => r#"{"code": "Success", "msg": "", "data": null}"#.to_string(),
        Provider::RunPod | Provider::Command | Provider::Ssh => "{}".to_string(),
    }
}

/// A step as the simulated provider answered it: `PUT https://... (simulated)`.
fn simulated_step(step: &str) -> String {
    rust_i18n::t!("release_plan.answer_simulated", step = step).into_owned()
}
