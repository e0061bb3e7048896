//! Writing the bundle: a private folder (`0700`) of private files (`0600`), each scrubbed of
//! known secrets on the way out, named after the host and the time it was written.

use std::io::Write;
use std::path::{Path, PathBuf};

use rust_i18n::t;

use crate::recording::wire::Event;
use crate::recording::{Header, Line};

use super::analyse::{KIND_DISCONNECTED, KIND_KERNEL, KIND_LOST, KIND_NOTICE, SMI_Q_FILE};
use super::{Gathered, Report, markdown, secrets};

/// The files of a bundle.
pub const FILES: [&str; 7] = [
    "report.md",
    "report.json",
    "samples.csv",
    "kernel.log",
    "failure.txt",
    SMI_Q_FILE,
    "recording.ndjson",
];

#[derive(Debug, thiserror::Error)]
#[error("{}: {source}", .path.display())]
pub struct BundleError {
    pub path: PathBuf,
    #[source]
    pub source: std::io::Error,
}

/// A bundle's files, each named as in [`FILES`] and already scrubbed of known secrets.
pub type Files = Vec<(&'static str, String)>;

/// Writes the bundle of `report` under `out`; returns its folder.
pub fn write(
    report: &Report,
    gathered: &Gathered,
    out: &Path,
    known_secrets: &[String],
) -> Result<PathBuf, BundleError> {
    write_files(&report.host, &render(report, gathered, known_secrets), out)
}

/// The files of the bundle of `report`, scrubbed of `known_secrets`.
pub fn render(report: &Report, gathered: &Gathered, known_secrets: &[String]) -> Files {
    let json = serde_json::to_string_pretty(report).unwrap_or_default();
    let files: [(&'static str, String); 7] = [
        ("report.md", markdown::render(report)),
        ("report.json", json + "\n"),
        ("samples.csv", samples_csv(&gathered.lines)),
        ("kernel.log", evidence_text(report, &[KIND_KERNEL])),
        (
            "failure.txt",
            evidence_text(report, &[KIND_LOST, KIND_DISCONNECTED, KIND_NOTICE]),
        ),
        (SMI_Q_FILE, smi_q_text(&gathered.lines)),
        ("recording.ndjson", recording(report, gathered)),
    ];
    files
        .into_iter()
        .map(|(name, text)| (name, secrets::clean(&text, known_secrets)))
        .collect()
}

/// The name of a file of the bundle, as [`FILES`] has it; `None` for any other name (what a
/// watcher sends is checked before anything is written).
pub fn file_name(name: &str) -> Option<&'static str> {
    FILES.iter().copied().find(|known| *known == name)
}

/// Writes `files` into a new private folder under `out`, named after `host` and the time:
/// `gpufleet-report-HOST-20261206T231500Z` (`-2`, `-3`… when that one exists). Returns it.
pub fn write_files(host: &str, files: &Files, out: &Path) -> Result<PathBuf, BundleError> {
    let (y, mo, d, h, mi, s, _) = crate::utc::utc_parts(crate::telemetry::source::now_ms());
    let name = format!(
        "gpufleet-report-{}-{y:04}{mo:02}{d:02}T{h:02}{mi:02}{s:02}Z",
        crate::paths::lossy_host_name(host)
    );
    let mut dir = out.join(&name);
    let mut n = 1;
    while dir.exists() {
        n += 1;
        dir = out.join(format!("{name}-{n}"));
    }
    let fail = |path: &Path| {
        let path = path.to_path_buf();
        move |source| BundleError { path, source }
    };
    crate::state_file::create_private_dir(&dir).map_err(fail(&dir))?;
    for (file, text) in files {
        let path = dir.join(file);
        write_private(&path, text.as_bytes()).map_err(fail(&path))?;
    }
    Ok(dir)
}

fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut file = options.open(path)?;
    file.write_all(bytes)?;
    file.sync_all()
}

/// `samples.csv`'s columns: identifiers, English in every language.
const SAMPLES_COLUMNS: &str = "time_utc,at_ms,gpu,uuid,bus_id,name,utilization_gpu_pct,\
    memory_used_mib,memory_total_mib,temperature_c,temperature_memory_c,power_draw_w,\
    power_limit_w,clock_sm_mhz,clock_mem_mhz,pstate,fan_speed_pct,ecc_uncorrected_volatile,\
    retired_pages_pending,clock_event_reasons";

/// `time_utc,gpu,...`: every recorded sample of the window, one row each.
pub fn samples_csv(lines: &[Line]) -> String {
    let mut out = format!("{SAMPLES_COLUMNS}\n");
    for line in lines {
        let Event::Sample { at_ms, gpu: g } = &line.event else {
            continue;
        };
        let reasons = g
            .clock_event_reasons
            .map(|r| crate::telemetry::ClockEventReasons(r).words().join(" "));
        let row = [
            crate::utc::rfc3339(*at_ms),
            at_ms.to_string(),
            g.index.to_string(),
            csv(&g.uuid),
            csv(&g.bus_id),
            csv(&g.name),
            opt(g.utilization_gpu_pct),
            opt(g.memory_used_mib),
            opt(g.memory_total_mib),
            opt(g.temperature_c),
            opt(g.temperature_memory_c),
            opt(g.power_draw_w),
            opt(g.power_limit_w),
            opt(g.clock_sm_mhz),
            opt(g.clock_mem_mhz),
            g.pstate.as_deref().map(csv).unwrap_or_default(),
            opt(g.fan_speed_pct),
            opt(g.ecc_uncorrected_volatile),
            opt(g.retired_pages_pending),
            reasons.map(|r| csv(&r)).unwrap_or_default(),
        ];
        out.push_str(&row.join(","));
        out.push('\n');
    }
    out
}

fn opt<T: ToString>(value: Option<T>) -> String {
    value.map(|v| v.to_string()).unwrap_or_default()
}

/// A CSV field, quoted when it must be.
fn csv(text: &str) -> String {
    if text.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text.to_string()
    }
}

/// Each `nvidia-smi -q` of the window, headed by when it was taken; a line saying why there is
/// none otherwise.
pub fn smi_q_text(lines: &[Line]) -> String {
    let mut out = String::new();
    for line in lines {
        if let Event::Evidence {
            at_ms,
            command,
            output,
        } = &line.event
            && command == crate::fleet::event::SMI_QUERY_ALL
        {
            let head = t!(
                "report_words.smi_q_taken",
                command = command,
                host = line.host,
                at = crate::utc::rfc3339(*at_ms)
            );
            out.push_str(&format!("# {head}\n"));
            out.push_str(output);
            out.push('\n');
        }
    }
    if out.is_empty() {
        out.push_str(&format!("# {}\n", no_smi_q()));
    }
    out
}

/// Why a bundle may have no `nvidia-smi -q`, in the reader's language.
pub fn no_smi_q() -> String {
    t!("report_words.no_smi_q").into_owned()
}

fn evidence_text(report: &Report, kinds: &[&str]) -> String {
    let mut out = String::new();
    for e in &report.analysis.evidence {
        if kinds.contains(&e.kind) {
            out.push_str(&format!("{} {}\n", e.at, e.text));
        }
    }
    out
}

/// The window's recording: a header naming only this host, then its lines.
fn recording(report: &Report, gathered: &Gathered) -> String {
    let header = Header::new(gathered.from_ms, vec![report.host.clone()]);
    let mut out = serde_json::to_string(&header).unwrap_or_default();
    out.push('\n');
    for line in &gathered.lines {
        if let Ok(text) = serde_json::to_string(line) {
            out.push_str(&text);
            out.push('\n');
        }
    }
    out
}
