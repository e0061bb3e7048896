//! One host as the console knows it: link state, latest GPU samples with history, processes.

use std::collections::VecDeque;

use crate::diagnose::Finding;
use crate::fleet::HostEvent;
use crate::fleet::fault_end::{EarlierFinding, FaultEnds};
use crate::fleet::history::{History, HistoryPoint, HistoryShape};
use crate::fleet::notice::DownWords;
use crate::fleet::revision::Revision;
use crate::telemetry::{GpuProcess, GpuSample, HostInfo, LostReason, TimestampMs};
use crate::words::Words;

/// How many kernel lines a host keeps for the triage views.
const KERNEL_LINES_KEPT: usize = 200;
/// How many different notices a host keeps, the newest: a link that runs for weeks may say
/// ever new things (each reconnect's reason, say), and the host's view shows a few.
pub const NOTICES_KEPT: usize = 32;
/// A connection attempt says how long it has taken from this long on ("connecting 12s"): a
/// silent port keeps it connecting until the handshake times out.
pub const CONNECTING_SAID_FROM_MS: u64 = 1_000;

/// The link to a host, as the source last reported it.
#[derive(Debug, Clone, PartialEq)]
pub enum Link {
    /// An attempt under way since `since_ms` (when its source said so).
    Connecting {
        attempt: u32,
        since_ms: Option<TimestampMs>,
    },
    Up,
    Down {
        since_ms: TimestampMs,
        reason: String,
        /// A few words of `reason` (`connection refused`).
        summary: String,
        attempts: u32,
        /// When the latest attempt failed.
        last_attempt_ms: TimestampMs,
        retry: Retry,
        /// `reason` and `summary` in catalogue words, when the source gave them.
        words: Option<DownWords>,
    },
    Lost {
        since_ms: TimestampMs,
        reason: LostReason,
        raw: String,
    },
    /// Connected, but nothing has come from the host since `since_ms` although the stream
    /// should have spoken.
    Silent {
        since_ms: TimestampMs,
    },
}

/// When a link that is down tries again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Retry {
    /// The next attempt is due then.
    At(TimestampMs),
    /// An attempt is under way.
    Trying,
    /// The source gave up (a host key, a login, a config that retrying cannot fix).
    Never,
}

/// What the fleet view shows in the status column, derived from the link and the clock.
#[derive(Debug, Clone, PartialEq)]
pub enum HostStatus {
    /// `for_ms`: how long the attempt has taken so far, when known.
    Connecting {
        attempt: u32,
        for_ms: Option<u64>,
    },
    Live,
    Stale {
        age_ms: u64,
    },
    Unreachable {
        reason: String,
        /// `reason` in catalogue words, when there are some.
        words: Option<Words>,
    },
    Lost {
        reason: LostReason,
    },
    /// The host sends far more than its interval allows; `detail` says what.
    Flooding {
        detail: String,
        /// `detail` in catalogue words, when there are some.
        words: Option<Words>,
    },
}

impl HostStatus {
    /// The words the status column shows (`live`, `stale 12s`, `GPU lost`, ...).
    pub fn text(&self) -> String {
        match self {
            HostStatus::Connecting { attempt, for_ms } => {
                let mut text = if *attempt <= 1 {
                    "connecting".to_string()
                } else {
                    format!("connecting #{attempt}")
                };
                if let Some(took) = for_ms.filter(|&ms| ms >= CONNECTING_SAID_FROM_MS) {
                    text.push(' ');
                    text.push_str(&format_age(took));
                }
                text
            }
            HostStatus::Live => "live".to_string(),
            HostStatus::Stale { age_ms } => format!("stale {}", format_age(*age_ms)),
            HostStatus::Unreachable { .. } => "unreachable".to_string(),
            HostStatus::Lost { reason } => reason.label().to_string(),
            HostStatus::Flooding { .. } => "flooding".to_string(),
        }
    }

    /// The status column's words (`live`, `stale 12s`, `GPU lost`), whose English is
    /// [`HostStatus::text`]; the console says them in the user's language.
    pub fn words(&self) -> Words {
        match self {
            HostStatus::Connecting { attempt, for_ms } => {
                let took = for_ms
                    .filter(|&ms| ms >= CONNECTING_SAID_FROM_MS)
                    .map(format_age);
                match (*attempt <= 1, took) {
                    (true, None) => Words::new("status.connecting"),
                    (false, None) => {
                        Words::new("status.connecting_again").put("attempt", attempt.to_string())
                    }
                    (true, Some(took)) => Words::new("status.connecting_for").put("took", took),
                    (false, Some(took)) => Words::new("status.connecting_again_for")
                        .put("attempt", attempt.to_string())
                        .put("took", took),
                }
            }
            HostStatus::Live => Words::new("status.live"),
            HostStatus::Stale { age_ms } => {
                Words::new("status.stale").put("age", format_age(*age_ms))
            }
            HostStatus::Unreachable { .. } => Words::new("status.unreachable"),
            HostStatus::Lost { reason } => reason.words(),
            HostStatus::Flooding { .. } => Words::new("status.flooding"),
        }
    }

    /// Why the host is in this state, for the states that have a reason.
    pub fn reason(&self) -> Option<&str> {
        match self {
            HostStatus::Unreachable { reason, .. } => Some(reason),
            HostStatus::Flooding { detail, .. } => Some(detail),
            _ => None,
        }
    }

    /// [`HostStatus::reason`] as words, catalogue words where it has them (a reason from a
    /// recording written before reasons had keys is said as it was written).
    pub fn reason_words(&self) -> Option<Words> {
        match self {
            HostStatus::Unreachable {
                words: Some(words), ..
            }
            | HostStatus::Flooding {
                words: Some(words), ..
            } => Some(words.clone()),
            _ => self.reason().map(Words::verbatim),
        }
    }

    /// Lower sorts first when sorting by status: the rows that need eyes come up top.
    pub fn severity_rank(&self) -> u8 {
        match self {
            HostStatus::Lost { .. } => 0,
            HostStatus::Unreachable { .. } => 1,
            HostStatus::Flooding { .. } => 2,
            HostStatus::Stale { .. } => 3,
            HostStatus::Connecting { .. } => 4,
            HostStatus::Live => 5,
        }
    }
}

/// One GPU: its newest sample and its history.
#[derive(Debug, Clone, PartialEq)]
pub struct GpuState {
    pub latest: GpuSample,
    pub at_ms: TimestampMs,
    pub history: History,
}

#[derive(Debug, Clone, PartialEq)]
pub struct HostState {
    pub name: String,
    pub link: Link,
    pub info: HostInfo,
    /// Ordered by GPU index.
    pub gpus: Vec<GpuState>,
    pub processes: Vec<GpuProcess>,
    /// When the process list was last reported; `None` until the first report.
    pub processes_at_ms: Option<TimestampMs>,
    pub last_sample_ms: Option<TimestampMs>,
    pub kernel_lines: VecDeque<(TimestampMs, String)>,
    pub notices: Vec<Words>,
    /// The live findings, most severe first, recomputed once a second.
    pub findings: Vec<Finding>,
    /// Its boots and lost GPUs, and the findings of its faults that ended.
    pub faults: FaultEnds,
    /// What the host floods with, while it does.
    pub flooding: Option<String>,
    /// `flooding` in catalogue words, when its source gave them.
    pub flooding_words: Option<Words>,
    /// The jobs on its GPUs and what their logs say.
    pub jobs: crate::fleet::job::HostJobs,
    /// Its disks (`/`, `/dev/shm`, the jobs' directories) as `df` last read them.
    pub disks: crate::fleet::disk::HostDisks,
    /// Its dead-man switch as the last run of it said; `None` where it has none.
    pub dead_man: Option<crate::fleet::dead_man::DeadManState>,
    /// No longer watched (gone from a reloaded config); kept so host ids stay stable.
    pub retired: bool,
    /// A container or a machine, as the host said on connect; `None` until it tells.
    pub kind: Option<crate::remote::HostKind>,
    history: HistoryShape,
    /// Counts the changes made through the methods below.
    revision: Revision,
}

impl HostState {
    pub fn new(name: impl Into<String>, history: HistoryShape) -> Self {
        Self {
            name: name.into(),
            link: Link::Connecting {
                attempt: 1,
                since_ms: None,
            },
            info: HostInfo::default(),
            gpus: Vec::new(),
            processes: Vec::new(),
            processes_at_ms: None,
            last_sample_ms: None,
            kernel_lines: VecDeque::new(),
            notices: Vec::new(),
            findings: Vec::new(),
            faults: FaultEnds::default(),
            flooding: None,
            flooding_words: None,
            jobs: Default::default(),
            disks: Default::default(),
            dead_man: None,
            retired: false,
            kind: None,
            history,
            revision: Revision::default(),
        }
    }

    /// How many changes the host has had: equal counts mean nothing changed in between.
    pub fn revision(&self) -> u64 {
        self.revision.get()
    }

    /// Replaces the live findings (a change only when they differ).
    pub fn set_findings(&mut self, findings: Vec<Finding>) {
        if findings != self.findings {
            self.findings = findings;
            self.revision.bump();
        }
    }

    /// Whether the host has findings to show: live ones, or earlier ones whose fault ended.
    pub fn has_any_findings(&self) -> bool {
        !self.findings.is_empty() || self.faults.earlier().len() > 0
    }

    /// Keeps the findings of a fault that ended (told apart by the refresh), dropping its
    /// kernel lines from those the live findings read; `lost_gpu` when a GPU was lost in it.
    pub fn fault_ended(
        &mut self,
        ended_lines: &[(TimestampMs, String)],
        findings: Vec<EarlierFinding>,
        lost_gpu: bool,
    ) {
        self.kernel_lines.retain(|line| !ended_lines.contains(line));
        self.faults.ended(findings, lost_gpu);
        self.revision.bump();
    }

    /// Sets the price the jobs' findings are priced at.
    pub fn set_job_price(&mut self, price: Option<crate::cost::Price>) {
        self.jobs.set_price(price);
        self.revision.bump();
    }

    /// Marks the host as no longer watched.
    pub fn retire(&mut self) {
        self.retired = true;
        self.revision.bump();
    }

    /// Folds one source event into the host.
    pub fn apply(&mut self, event: HostEvent) {
        self.revision.bump();
        match event {
            HostEvent::Connecting { attempt, at_ms } => {
                if !matches!(self.link, Link::Down { .. } | Link::Lost { .. }) {
                    self.link = Link::Connecting {
                        attempt,
                        since_ms: at_ms,
                    };
                } else if let Link::Down {
                    attempts, retry, ..
                } = &mut self.link
                {
                    *attempts = attempt;
                    *retry = Retry::Trying;
                }
            }
            HostEvent::Connected(info) => {
                self.info = info;
                self.link = Link::Up;
            }
            HostEvent::Boot { at_ms, boot_id } => {
                self.faults.booted(at_ms, boot_id);
            }
            HostEvent::HostKind { kind, .. } => self.kind = Some(kind),
            HostEvent::Sample { at_ms, gpu } => self.apply_sample(at_ms, gpu),
            HostEvent::Processes { at_ms, processes } => {
                self.processes = processes;
                self.processes_at_ms = Some(at_ms);
            }
            HostEvent::Kernel { at_ms, line } => {
                if self.kernel_lines.len() == KERNEL_LINES_KEPT {
                    self.kernel_lines.pop_front();
                }
                self.kernel_lines.push_back((at_ms, line));
            }
            HostEvent::Lost { at_ms, reason, raw } => {
                self.faults.lost(at_ms, reason, &raw);
                self.link = Link::Lost {
                    since_ms: at_ms,
                    reason,
                    raw,
                };
            }
            HostEvent::Disconnected {
                at_ms,
                reason,
                summary,
                retry_at_ms,
                words,
            } => {
                let (since_ms, attempts) = match &self.link {
                    Link::Down {
                        since_ms, attempts, ..
                    } => (*since_ms, *attempts),
                    Link::Connecting { attempt, .. } => (at_ms, *attempt),
                    _ => (at_ms, 1),
                };
                if !matches!(self.link, Link::Lost { .. }) {
                    self.link = Link::Down {
                        since_ms,
                        reason,
                        summary,
                        attempts,
                        last_attempt_ms: at_ms,
                        retry: retry_at_ms.map_or(Retry::Never, Retry::At),
                        words,
                    };
                }
            }
            HostEvent::Unresponsive { at_ms, silent_ms } => {
                if self.link == Link::Up {
                    self.link = Link::Silent {
                        since_ms: at_ms.saturating_sub(silent_ms),
                    };
                }
            }
            HostEvent::Responsive { .. } => {
                if let Link::Silent { .. } = self.link {
                    self.link = Link::Up;
                }
            }
            HostEvent::Flooding { detail, words, .. } => {
                self.flooding_words = words.filter(|_| detail.is_some());
                self.flooding = detail;
            }
            HostEvent::Notice { text, .. } => {
                if !self.notices.contains(&text) {
                    if self.notices.len() == NOTICES_KEPT {
                        self.notices.remove(0);
                    }
                    self.notices.push(text);
                }
            }
            // For the incident report (recordings keep it); nothing on screen changes.
            HostEvent::Evidence { .. } => {}
            HostEvent::Jobs { at_ms, jobs } => self.jobs.listed(at_ms, jobs),
            HostEvent::JobLog {
                at_ms,
                pid,
                restart,
                text,
            } => self.jobs.log_at(pid, restart, &text, at_ms),
            HostEvent::Disk {
                at_ms,
                uses,
                loader_workers,
            } => self.disks.read(at_ms, uses, loader_workers),
            HostEvent::DeadMan { state, .. } => self.dead_man = Some(state),
        }
    }

    fn apply_sample(&mut self, at_ms: TimestampMs, gpu: GpuSample) {
        // A sample proves the link is up and the GPUs readable again (after a reconnect or a
        // recovered GPU).
        self.link = Link::Up;
        self.faults.streamed(at_ms, gpu.index);
        self.last_sample_ms = Some(self.last_sample_ms.map_or(at_ms, |t| t.max(at_ms)));
        if self.info.driver_version.is_none() {
            self.info.driver_version = gpu.driver_version.as_deref().map(str::to_string);
        }
        let point = HistoryPoint::from_sample(at_ms, &gpu);
        match self
            .gpus
            .binary_search_by_key(&gpu.index, |g| g.latest.index)
        {
            Ok(pos) => {
                let state = &mut self.gpus[pos];
                state.history.push(point);
                state.latest = gpu;
                state.at_ms = at_ms;
            }
            Err(pos) => {
                let mut history = History::new(self.history);
                history.push(point);
                self.gpus.insert(
                    pos,
                    GpuState {
                        latest: gpu,
                        at_ms,
                        history,
                    },
                );
            }
        }
    }

    /// The status shown for this host at `now_ms`, given the expected sample interval: data older
    /// than two intervals is stale. A host whose link is down, or that has stopped answering,
    /// is unreachable, whatever figures it last sent (those stay on screen, dimmed).
    pub fn status(&self, now_ms: TimestampMs, interval_ms: u64) -> HostStatus {
        match &self.link {
            Link::Lost { reason, .. } => HostStatus::Lost { reason: *reason },
            Link::Down { reason, words, .. } => HostStatus::Unreachable {
                reason: reason.clone(),
                words: words.as_ref().map(|w| w.reason.clone()),
            },
            Link::Silent { since_ms } => {
                let words = host_silent(now_ms.saturating_sub(*since_ms));
                HostStatus::Unreachable {
                    reason: words.english(),
                    words: Some(words),
                }
            }
            Link::Up if self.flooding.is_some() => HostStatus::Flooding {
                detail: self.flooding.clone().unwrap_or_default(),
                words: self.flooding_words.clone(),
            },
            Link::Connecting { attempt, since_ms } => match self.last_sample_ms {
                Some(at) => HostStatus::Stale {
                    age_ms: now_ms.saturating_sub(at),
                },
                None => HostStatus::Connecting {
                    attempt: *attempt,
                    for_ms: since_ms.map(|since| now_ms.saturating_sub(since)),
                },
            },
            Link::Up => match self.last_sample_ms {
                Some(at) if now_ms.saturating_sub(at) > 2 * interval_ms => HostStatus::Stale {
                    age_ms: now_ms.saturating_sub(at),
                },
                _ => HostStatus::Live,
            },
        }
    }

    pub fn gpu_model_summary(&self) -> String {
        let Some(first) = self.gpus.first() else {
            return "-".to_string();
        };
        // `xpu-smi dump` names no model: the maker then, rather than nothing.
        let name = match &*first.latest.name {
            "" => first.latest.vendor.label(),
            named => short_gpu_name(named),
        };
        // The count comes first so a narrow column cuts the model name, not the count.
        if self.gpus.iter().all(|g| g.latest.name == first.latest.name) {
            format!("{}x {name}", self.gpus.len())
        } else {
            format!("{}x {name}+", self.gpus.len())
        }
    }

    pub fn mean_utilization_pct(&self) -> Option<f64> {
        mean(
            self.gpus
                .iter()
                .filter_map(|g| g.latest.utilization_gpu_pct),
        )
    }

    /// Summed (used, total) VRAM over the GPUs that reported both.
    pub fn memory_mib(&self) -> Option<(u64, u64)> {
        let mut any = false;
        let (mut used, mut total) = (0u64, 0u64);
        for g in &self.gpus {
            if let (Some(u), Some(t)) = (g.latest.memory_used_mib, g.latest.memory_total_mib) {
                any = true;
                used += u;
                total += t;
            }
        }
        any.then_some((used, total))
    }

    pub fn hottest_c(&self) -> Option<f64> {
        self.gpus
            .iter()
            .filter_map(|g| g.latest.temperature_c)
            .fold(None, |acc: Option<f64>, t| {
                Some(acc.map_or(t, |a| a.max(t)))
            })
    }

    /// Summed (draw, enforced limit) over the GPUs that reported both.
    pub fn power_w(&self) -> Option<(f64, f64)> {
        let mut any = false;
        let (mut draw, mut limit) = (0.0, 0.0);
        for g in &self.gpus {
            if let (Some(d), Some(l)) = (g.latest.power_draw_w, g.latest.power_limit_w) {
                any = true;
                draw += d;
                limit += l;
            }
        }
        any.then_some((draw, limit))
    }

    /// Why the link is down: catalogue words when its source gave them, else the English it
    /// sent, as it came; `None` while the link is not down.
    pub fn down_reason(&self) -> Option<Words> {
        match &self.link {
            Link::Down {
                words: Some(words), ..
            } => Some(words.reason.clone()),
            Link::Down { reason, .. } => Some(Words::verbatim(reason.clone())),
            _ => None,
        }
    }

    pub fn lost_raw(&self) -> Option<&str> {
        match &self.link {
            Link::Lost { raw, .. } => Some(raw),
            _ => None,
        }
    }
}

pub use crate::units::format_age;

fn mean(values: impl Iterator<Item = f64>) -> Option<f64> {
    let (sum, n) = values.fold((0.0, 0usize), |(s, n), v| (s + v, n + 1));
    (n > 0).then(|| sum / n as f64)
}

/// "NVIDIA H100 80GB HBM3" -> "H100 80GB HBM3"; "NVIDIA GeForce RTX 4090" -> "RTX 4090".
pub fn short_gpu_name(name: &str) -> &str {
    let name = name.strip_prefix("NVIDIA ").unwrap_or(name);
    name.strip_prefix("GeForce ").unwrap_or(name)
}

/// `no data from the host for 5s`: an unresponsive host's reason.
fn host_silent(age_ms: u64) -> Words {
    Words::new("quiet_words.host_silent").put("age", format_age(age_ms))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn streaming() -> HostState {
        let mut h = HostState::new("h", crate::fleet::FleetOptions::default().history_shape());
        h.apply(HostEvent::Connected(HostInfo::default()));
        h.apply(HostEvent::Sample {
            at_ms: 10_000,
            gpu: GpuSample::default(),
        });
        h
    }

    #[test]
    fn a_host_keeps_its_newest_notices_each_once_and_a_bounded_number() {
        let mut h = streaming();
        let notice = |i: usize| HostEvent::Notice {
            at_ms: 10_000 + i as u64,
            text: crate::words::Words::verbatim(format!("reconnected after error {i}")),
        };
        for i in 0..NOTICES_KEPT * 3 {
            h.apply(notice(i));
            h.apply(notice(i));
        }
        assert_eq!(h.notices.len(), NOTICES_KEPT);
        let oldest_kept = NOTICES_KEPT * 2;
        assert_eq!(
            h.notices.first(),
            Some(&crate::words::Words::verbatim(format!(
                "reconnected after error {oldest_kept}"
            )))
        );
        assert_eq!(
            h.notices.last(),
            Some(&crate::words::Words::verbatim(format!(
                "reconnected after error {}",
                NOTICES_KEPT * 3 - 1
            )))
        );
    }

    #[test]
    fn a_host_whose_link_dropped_is_unreachable_and_keeps_its_last_figures() {
        let mut h = streaming();
        h.apply(HostEvent::Disconnected {
            at_ms: 10_500,
            reason: "connection reset".into(),
            summary: "connection reset".into(),
            retry_at_ms: Some(12_000),
            words: None,
        });
        let unreachable = HostStatus::Unreachable {
            reason: "connection reset".into(),
            words: None,
        };
        assert_eq!(h.status(11_000, 1_000), unreachable);
        assert_eq!(h.gpus.len(), 1, "the last figures stay");
        // Retrying changes nothing until a sample comes.
        h.apply(HostEvent::Connecting {
            attempt: 2,
            at_ms: Some(11_500),
        });
        assert_eq!(h.status(30_000, 1_000), unreachable);
        h.apply(HostEvent::Sample {
            at_ms: 31_000,
            gpu: GpuSample::default(),
        });
        assert_eq!(h.status(31_000, 1_000), HostStatus::Live);
    }

    #[test]
    fn a_silent_host_is_unreachable_until_it_answers_again() {
        let mut h = streaming();
        h.apply(HostEvent::Unresponsive {
            at_ms: 12_000,
            silent_ms: 2_000,
        });
        assert_eq!(
            h.status(13_000, 1_000),
            HostStatus::Unreachable {
                reason: "no data from the host for 3s".into(),
                words: Some(host_silent(3_000)),
            }
        );
        // It answers, but its stream has said nothing new: stale, not unreachable.
        h.apply(HostEvent::Responsive { at_ms: 13_500 });
        assert_eq!(h.status(13_500, 1_000), HostStatus::Stale { age_ms: 3_500 });
        h.apply(HostEvent::Unresponsive {
            at_ms: 16_000,
            silent_ms: 2_000,
        });
        h.apply(HostEvent::Sample {
            at_ms: 17_000,
            gpu: GpuSample::default(),
        });
        assert_eq!(h.status(17_000, 1_000), HostStatus::Live);
    }

    #[test]
    fn a_flooding_host_says_so_with_the_reason_until_it_calms() {
        let mut h = streaming();
        h.apply(HostEvent::Flooding {
            at_ms: 10_100,
            detail: Some("over budget: 33 lines".into()),
            words: None,
        });
        let status = h.status(10_200, 1_000);
        assert_eq!(status.text(), "flooding");
        assert_eq!(status.reason(), Some("over budget: 33 lines"));
        // Unreachable still comes first.
        h.apply(HostEvent::Disconnected {
            at_ms: 10_300,
            reason: "reset".into(),
            summary: "reset".into(),
            retry_at_ms: None,
            words: None,
        });
        assert_eq!(h.status(10_300, 1_000).text(), "unreachable");
        h.apply(HostEvent::Sample {
            at_ms: 11_000,
            gpu: GpuSample::default(),
        });
        assert_eq!(h.status(11_000, 1_000).text(), "flooding");
        h.apply(HostEvent::Flooding {
            at_ms: 16_000,
            detail: None,
            words: None,
        });
        assert_eq!(h.status(11_000, 1_000), HostStatus::Live);
    }

    /// The status column's English words are the engine's own, so the screen and `snapshot`
    /// agree.
    #[test]
    fn english_status_words_are_the_engines() {
        for s in [
            HostStatus::Connecting {
                attempt: 1,
                for_ms: None,
            },
            HostStatus::Connecting {
                attempt: 3,
                for_ms: None,
            },
            HostStatus::Connecting {
                attempt: 1,
                for_ms: Some(12_000),
            },
            HostStatus::Connecting {
                attempt: 3,
                for_ms: Some(400),
            },
            HostStatus::Live,
            HostStatus::Stale { age_ms: 12_000 },
            HostStatus::Unreachable {
                reason: "refused".into(),
                words: None,
            },
            HostStatus::Flooding {
                detail: "x".into(),
                words: None,
            },
            HostStatus::Lost {
                reason: LostReason::GpuLost,
            },
            HostStatus::Lost {
                reason: LostReason::DriverNotLoaded,
            },
            HostStatus::Lost {
                reason: LostReason::DriverLibraryMismatch,
            },
            HostStatus::Lost {
                reason: LostReason::NoDevices,
            },
            HostStatus::Lost {
                reason: LostReason::SmiMissing,
            },
            HostStatus::Lost {
                reason: LostReason::Other,
            },
        ] {
            assert_eq!(s.words().english(), s.text());
        }
    }

    #[test]
    fn a_silent_hosts_words_keep_the_english_and_read_in_chinese() {
        let words = host_silent(3_000);
        assert_eq!(words.english(), "no data from the host for 3s");
        let zh = words.render("zh-CN");
        assert!(zh.contains("3s"), "{zh}");
        assert!(
            !zh.replace("3s", "").chars().any(|c| c.is_ascii_lowercase()),
            "English left in {zh:?}"
        );
    }
}
