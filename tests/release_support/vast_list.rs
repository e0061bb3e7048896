//! vast.ai's answer to `GET /api/v1/instances/`, in the shape of the captured answers the
//! provider tests read: one page holding instance 12345 (labelled `h1`) in a given state.

/// The one-page list with instance 12345 whose `actual_status` is `status`.
pub fn one_instance(status: &str) -> String {
    format!(
        r#"{{"success": true, "next_token": null, "instances": [
 {{"id": 12345, "label": "h1", "actual_status": "{status}", "gpu_name": "H100 SXM", "num_gpus": 1,
  "ssh_host": "ssh5.vast.ai", "ssh_port": 10600, "start_date": 1764633600, "dph_total": 2.4}}]}}"#
    )
}
