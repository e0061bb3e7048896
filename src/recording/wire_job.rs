//! A job ([`JobProcess`]) as a recording writes it (`jobs` lines, format version 3).

use serde::{Deserialize, Serialize};

use crate::fleet::job::JobProcess;
use crate::fleet::job_found::JobFound;

/// [`JobProcess`] as written.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Job {
    pub pid: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub elapsed_s: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_s: Option<u64>,
    pub command: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub log: Option<String>,
    #[serde(default, skip_serializing_if = "JobFound::is_default")]
    pub found: JobFound,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub devices: Vec<u32>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub gpus: Vec<String>,
}

impl From<&JobProcess> for Job {
    fn from(j: &JobProcess) -> Self {
        Self {
            pid: j.pid,
            user: j.user.clone(),
            elapsed_s: j.elapsed_s,
            cpu_s: j.cpu_s,
            command: j.command.clone(),
            log: j.log.clone(),
            found: j.found,
            devices: j.devices.clone(),
            gpus: j.gpus.clone(),
        }
    }
}

impl From<Job> for JobProcess {
    fn from(j: Job) -> Self {
        Self {
            pid: j.pid,
            user: j.user,
            elapsed_s: j.elapsed_s,
            cpu_s: j.cpu_s,
            command: j.command,
            log: j.log,
            found: j.found,
            devices: j.devices,
            gpus: j.gpus,
        }
    }
}
