//! The example programs in contrib/providers/ run as `kind = "command"` accounts: stand-ins
//! for `aliyun` and `tccli` on PATH print DescribeInstances answers shaped as Alibaba and
//! Tencent document them (pages included), and `gpufleet providers sync --json` must read the
//! inventory the scripts make of them. The release templates must be a valid config.

use crate::cli as support;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use serde_json::Value;
use support::{Home, stderr, stdout};

fn contrib(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("contrib/providers")
        .join(name)
        .to_string_lossy()
        .into_owned()
}

fn fake_cli(home: &Home, name: &str, script: &str) -> PathBuf {
    let dir = home.path().join("bin");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, script).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    dir
}

fn sync_json(home: &Home, bin: &Path, config: &str) -> Value {
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let out = home
        .command(&["--config", config, "providers", "sync", "--json"])
        .env("PATH", path)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    serde_json::from_str(&stdout(&out)).unwrap()
}

// DescribeInstances (2014-05-26) as the aliyun CLI prints it: Instances.Instance[], NextToken.
const ALIYUN: &str = r#"#!/bin/sh
case "$*" in
  *"--NextToken tok-2"*) cat <<'JSON'
{"Instances": {"Instance": [{"InstanceId": "i-bp1stopped", "InstanceName": "idle-a10",
  "Status": "Stopped", "GPUSpec": "NVIDIA A10", "GPUAmount": 1, "StoppedMode": "StopCharging",
  "PublicIpAddress": {"IpAddress": []}, "EipAddress": {"IpAddress": ""},
  "StartTime": "2026-11-30T02:00Z", "InstanceChargeType": "PostPaid"}]},
 "NextToken": "", "RequestId": "r-2"}
JSON
  ;;
  *"ecs DescribeInstances --RegionId cn-hangzhou --MaxResults 100") cat <<'JSON'
{"Instances": {"Instance": [{"InstanceId": "i-bp1running", "InstanceName": "train-a10",
  "Status": "Running", "GPUSpec": "NVIDIA A10", "GPUAmount": 2, "StoppedMode": "Not-applicable",
  "PublicIpAddress": {"IpAddress": ["47.96.1.2"]}, "EipAddress": {"IpAddress": ""},
  "StartTime": "2026-12-01T08:00Z", "InstanceChargeType": "PostPaid"}]},
 "NextToken": "tok-2", "RequestId": "r-1"}
JSON
  ;;
  *) echo "unexpected: $*" >&2; exit 9 ;;
esac
"#;

#[test]
fn the_aliyun_example_maps_describe_instances_to_the_inventory() {
    let home = Home::new();
    let bin = fake_cli(&home, "aliyun", ALIYUN);
    let config = home.write(
        "c.toml",
        &format!(
            "[[providers]]\nkind = \"command\"\nname = \"ali\"\ncommand = [\"{}\", \"cn-hangzhou\"]\n",
            contrib("aliyun-ecs-inventory")
        ),
    );
    let doc = sync_json(&home, &bin, &config);
    let instances = doc["accounts"][0]["instances"].as_array().unwrap();
    assert_eq!(instances.len(), 2, "both pages");
    let running = &instances[0];
    assert_eq!(running["id"], "i-bp1running");
    assert_eq!(running["label"], "train-a10");
    assert_eq!(
        (running["gpu_model"].as_str(), running["gpu_count"].as_u64()),
        (Some("NVIDIA A10"), Some(2))
    );
    assert_eq!(running["ssh"]["host"], "47.96.1.2");
    assert_eq!(running["started_ms"], 1_796_112_000_000u64);
    let stopped = &instances[1];
    assert_eq!(
        (stopped["state"].as_str(), stopped["ssh"].is_null()),
        (Some("stopped"), true)
    );
}

// DescribeInstances (2017-03-12) as tccli prints it: TotalCount, InstanceSet[], Offset/Limit.
const TCCLI: &str = r#"#!/bin/sh
case "$*" in
  "cvm DescribeInstances --region ap-guangzhou --Offset 0 --Limit 100") cat <<'JSON'
{"TotalCount": 1, "InstanceSet": [{"InstanceId": "ins-r8hr2upy", "InstanceName": "t4-infer",
  "InstanceState": "RUNNING", "InstanceType": "GN7.2XLARGE32", "CPU": 8, "Memory": 32,
  "GPUInfo": {"GPUCount": 1, "GPUId": ["gpu-1"], "GPUType": "NVIDIA T4"},
  "PublicIpAddresses": ["119.29.0.10"], "PrivateIpAddresses": ["10.0.0.5"],
  "DefaultLoginUser": "ubuntu", "DefaultLoginPort": 22, "StopChargingMode": "NOT_APPLICABLE",
  "CreatedTime": "2026-12-01T08:00:00Z", "InstanceChargeType": "POSTPAID_BY_HOUR"}],
 "RequestId": "r-1"}
JSON
  ;;
  *) echo "unexpected: $*" >&2; exit 9 ;;
esac
"#;

#[test]
fn the_tencent_example_maps_describe_instances_to_the_inventory() {
    let home = Home::new();
    let bin = fake_cli(&home, "tccli", TCCLI);
    let config = home.write(
        "c.toml",
        &format!(
            "[[providers]]\nkind = \"command\"\nname = \"tx\"\ncommand = [\"{}\", \"ap-guangzhou\"]\n",
            contrib("tencent-cvm-inventory")
        ),
    );
    let doc = sync_json(&home, &bin, &config);
    let one = &doc["accounts"][0]["instances"][0];
    assert_eq!(one["id"], "ins-r8hr2upy");
    assert_eq!(one["ssh"]["user"], "ubuntu");
    assert_eq!(one["ssh"]["host"], "119.29.0.10");
    assert_eq!(
        (one["gpu_model"].as_str(), one["gpu_count"].as_u64()),
        (Some("NVIDIA T4"), Some(1))
    );
}

#[test]
fn the_release_templates_are_a_valid_config_using_the_stop_charging_modes() {
    let path = contrib("release-templates.toml");
    let text = std::fs::read_to_string(&path).unwrap();
    let config = gpufleet::config::parse(&text, Path::new(&path)).unwrap();
    let commands: Vec<String> = config
        .hosts
        .iter()
        .filter_map(|h| h.release.as_ref()?.command.as_ref()?.first().cloned())
        .collect();
    assert_eq!(commands.len(), 2);
    let ali = std::fs::read_to_string(contrib("aliyun-ecs-release")).unwrap();
    assert!(ali.contains(r#""--StoppedMode", "StopCharging""#));
    let tx = std::fs::read_to_string(contrib("tencent-cvm-release")).unwrap();
    assert!(tx.contains(r#""--StoppedMode", "STOP_CHARGING""#));
}
