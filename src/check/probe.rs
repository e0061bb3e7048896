//! The compute probe: the embedded Python script, the arguments it runs with, and the reader
//! that turns its JSON lines into results (see the protocol comment atop `probe.py`).

use rust_i18n::t;
use serde::Deserialize;

use crate::telemetry::GpuSample;
use crate::telemetry::smi_csv::{FieldLayout, parse_gpu_line};

/// The script, sent on the standard input of `python3 -`.
pub const PROBE_SCRIPT: &str = include_str!("probe.py");

/// The protocol version the reader understands (`hello.protocol`).
pub const PROTOCOL: u32 = 1;

/// What the script samples with `nvidia-smi --query-gpu ... -lms` while it loads the GPUs.
/// PCIe link state is only meaningful under load: links train down when idle.
pub const SAMPLE_FIELDS: &[&str] = &[
    "index",
    "uuid",
    "utilization.gpu",
    "memory.used",
    "temperature.gpu",
    "power.draw",
    "enforced.power.limit",
    "clocks.sm",
    "clocks.max.sm",
    "clocks_event_reasons.active",
    "pcie.link.gen.current",
    "pcie.link.gen.max",
    "pcie.link.width.current",
    "pcie.link.width.max",
];

/// How the probe is sized; the defaults are what a real check uses.
#[derive(Debug, Clone, PartialEq)]
pub struct ProbeSettings {
    pub sustain_s: f64,
    pub bench_s: f64,
    pub matmul_n: u32,
    pub vram_fraction: f64,
    pub window_s: f64,
    pub sample_interval_ms: u32,
}

/// The argv that runs the script from standard input.
pub fn probe_argv(python: &str, nvidia_smi: &str, s: &ProbeSettings) -> Vec<String> {
    let mut argv: Vec<String> = vec![python.to_string(), "-".to_string()];
    let mut pair = |flag: &str, value: String| {
        argv.push(flag.to_string());
        argv.push(value);
    };
    pair("--sustain-s", s.sustain_s.to_string());
    pair("--bench-s", s.bench_s.to_string());
    pair("--matmul-n", s.matmul_n.to_string());
    pair("--vram-fraction", s.vram_fraction.to_string());
    pair("--window-s", s.window_s.to_string());
    pair("--sample-ms", s.sample_interval_ms.to_string());
    pair("--sample-fields", SAMPLE_FIELDS.join(","));
    pair("--nvidia-smi", nvidia_smi.to_string());
    argv
}

#[derive(Debug, Deserialize)]
#[serde(tag = "t", rename_all = "lowercase")]
enum Line {
    Hello {
        protocol: u32,
    },
    Skip {
        reason: String,
        /// `no_torch` or `no_gpu`, with the fields below; absent from an older script.
        #[serde(default)]
        kind: Option<String>,
        #[serde(default)]
        executable: Option<String>,
        #[serde(default)]
        error: Option<String>,
        #[serde(default)]
        version: Option<String>,
        #[serde(default)]
        cuda: Option<String>,
    },
    Torch {
        version: Option<String>,
        cuda: Option<String>,
    },
    Device(ProbeDevice),
    Sampler {
        fields: Option<Vec<String>>,
        error: Option<String>,
    },
    Sample {
        phase: String,
        elapsed_s: f64,
        csv: String,
    },
    Phase {
        phase: String,
        gpu: Option<u32>,
        elapsed_s: f64,
    },
    Matmul(MatmulResult),
    Copy(CopyResult),
    Vram(VramResult),
    Window(Window),
    Error(StageError),
    Done {},
    #[serde(other)]
    Unknown,
}

/// One CUDA device as PyTorch numbers it.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct ProbeDevice {
    pub index: u32,
    pub name: String,
    /// Without the `GPU-` prefix nvidia-smi prints; absent on old PyTorch.
    pub uuid: Option<String>,
    pub capability: Vec<u32>,
    pub total_bytes: u64,
    pub bf16: bool,
    /// Whether this PyTorch build has kernels for the device; `None` when it could not tell.
    pub arch_ok: Option<bool>,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct MatmulResult {
    pub gpu: u32,
    pub dtype: String,
    pub n: u32,
    /// With all-ones inputs: the silicon's throughput, below the power limit on big cards.
    pub tflops: Option<f64>,
    /// With random inputs: what real data gets under the power limit.
    #[serde(default)]
    pub tflops_random: Option<f64>,
    /// Whether the all-ones product came out right (every element equals `n`).
    #[serde(default)]
    pub correct: Option<bool>,
    /// Whether the random product is free of NaN and infinities.
    #[serde(default)]
    pub finite: Option<bool>,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct CopyResult {
    pub gpu: u32,
    pub bytes: u64,
    pub gb_per_s: Option<f64>,
    pub verified: bool,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct VramResult {
    pub gpu: u32,
    pub free_bytes: u64,
    pub total_bytes: u64,
    pub target_bytes: u64,
    pub allocated_bytes: u64,
    pub oom: Option<String>,
    pub verify_error: Option<String>,
    #[serde(default)]
    pub checked_elements: u64,
    #[serde(default)]
    pub mismatched_elements: u64,
}

/// One window of the sustained load on one device.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Window {
    pub gpu: u32,
    pub elapsed_s: f64,
    pub tflops: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct StageError {
    pub stage: String,
    pub gpu: Option<u32>,
    pub message: String,
}

/// PCIe link state in one sample.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PcieReading {
    pub gen_current: Option<u32>,
    pub gen_max: Option<u32>,
    pub width_current: Option<u32>,
    pub width_max: Option<u32>,
}

/// One nvidia-smi reading taken while the probe ran.
#[derive(Debug, Clone, PartialEq)]
pub struct LoadSample {
    /// `start`, `matmul:<torch index>`, `copy:<i>`, `vram:<i>`, `sustain` or `end`.
    pub phase: String,
    pub elapsed_s: f64,
    pub gpu: GpuSample,
    pub pcie: PcieReading,
}

/// What a line changed, for progress reports.
#[derive(Debug, Clone, PartialEq)]
pub enum ProbeUpdate {
    Started,
    Phase { phase: String, gpu: Option<u32> },
    Sample,
    Window(Window),
    Other,
}

/// Everything the script printed, gathered.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ProbeData {
    pub protocol: Option<u32>,
    /// Why the compute checks could not run, from the script or from running it.
    pub skip: Option<String>,
    pub torch_version: Option<String>,
    pub torch_cuda: Option<String>,
    pub devices: Vec<ProbeDevice>,
    pub sampler_error: Option<String>,
    pub samples: Vec<LoadSample>,
    pub matmul: Vec<MatmulResult>,
    pub copy: Vec<CopyResult>,
    pub vram: Vec<VramResult>,
    pub windows: Vec<Window>,
    pub errors: Vec<StageError>,
    /// Seconds since the script started when the sustained load began.
    pub sustain_started_s: Option<f64>,
    pub done: bool,
    /// Why the script ended early (crash, timeout), when it did.
    pub failure: Option<String>,
    /// The last lines that were not JSON (warnings, a traceback), for the failure message.
    pub noise: Vec<String>,
    pub(crate) layout: Option<SampleLayout>,
}

const NOISE_LINES: usize = 12;

impl ProbeData {
    /// A probe that did not run, for `reason`.
    pub fn skipped(reason: impl Into<String>) -> Self {
        Self {
            skip: Some(reason.into()),
            ..Self::default()
        }
    }

    /// Takes one line of the script's output.
    pub fn feed(&mut self, line: &str) -> ProbeUpdate {
        let trimmed = line.trim();
        let parsed = trimmed
            .starts_with('{')
            .then(|| serde_json::from_str::<Line>(trimmed).ok())
            .flatten();
        let Some(parsed) = parsed else {
            if !trimmed.is_empty() {
                if self.noise.len() == NOISE_LINES {
                    self.noise.remove(0);
                }
                self.noise.push(trimmed.chars().take(400).collect());
            }
            return ProbeUpdate::Other;
        };
        match parsed {
            Line::Hello { protocol } => {
                self.protocol = Some(protocol);
                return ProbeUpdate::Started;
            }
            Line::Skip {
                reason,
                kind,
                executable,
                error,
                version,
                cuda,
            } => {
                let said = match (kind.as_deref(), executable, version, cuda) {
                    (Some("no_torch"), Some(executable), _, _) => Some(
                        t!(
                            "check_probe_skip.no_torch",
                            executable = executable,
                            error = error.unwrap_or_default()
                        )
                        .into_owned(),
                    ),
                    (Some("no_gpu"), _, Some(version), Some(cuda)) => {
                        let why = error
                            .unwrap_or_else(|| t!("check_probe_skip.not_available").into_owned());
                        Some(
                            t!(
                                "check_probe_skip.no_gpu",
                                version = version,
                                cuda = cuda,
                                why = why
                            )
                            .into_owned(),
                        )
                    }
                    // An older or newer script: its own (English) words.
                    _ => None,
                };
                self.skip = Some(said.unwrap_or(reason));
            }
            Line::Torch { version, cuda } => {
                self.torch_version = version.or(self.torch_version.take());
                self.torch_cuda = cuda.or(self.torch_cuda.take());
            }
            Line::Device(d) => self.devices.push(d),
            Line::Sampler { fields, error } => match fields {
                Some(fields) => self.layout = Some(SampleLayout::new(&fields)),
                None => {
                    self.sampler_error = error
                        .or_else(|| Some(rust_i18n::t!("check_probe.sampling_failed").into_owned()))
                }
            },
            Line::Sample {
                phase,
                elapsed_s,
                csv,
            } => {
                if let Some(sample) = self
                    .layout
                    .as_ref()
                    .and_then(|l| l.parse(&phase, elapsed_s, &csv))
                {
                    self.samples.push(sample);
                    return ProbeUpdate::Sample;
                }
            }
            Line::Phase {
                phase,
                gpu,
                elapsed_s,
            } => {
                if phase == "sustain" {
                    self.sustain_started_s = Some(elapsed_s);
                }
                return ProbeUpdate::Phase { phase, gpu };
            }
            Line::Matmul(m) => self.matmul.push(m),
            Line::Copy(c) => self.copy.push(c),
            Line::Vram(v) => self.vram.push(v),
            Line::Window(w) => {
                self.windows.push(w.clone());
                return ProbeUpdate::Window(w);
            }
            Line::Error(e) => self.errors.push(e),
            Line::Done {} => self.done = true,
            Line::Unknown => {}
        }
        ProbeUpdate::Other
    }

    /// The error the script reported for `stage` on torch device `gpu`, if any.
    pub fn error_for(&self, stage: &str, gpu: u32) -> Option<&StageError> {
        self.errors
            .iter()
            .find(|e| e.stage == stage && e.gpu == Some(gpu))
    }

    /// The last line of the noise, usually the exception of a traceback.
    pub fn last_noise(&self) -> Option<&str> {
        self.noise.last().map(String::as_str)
    }
}

/// The layout of the sampled CSV lines, from the fields the script announced (it renames or
/// drops fields an old driver rejects).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct SampleLayout {
    layout: FieldLayout,
    columns: usize,
    gen_current: Option<usize>,
    gen_max: Option<usize>,
    width_current: Option<usize>,
    width_max: Option<usize>,
}

impl SampleLayout {
    fn new(fields: &[String]) -> Self {
        let names: Vec<&str> = fields.iter().map(String::as_str).collect();
        let at = |name: &str| names.iter().position(|f| *f == name);
        Self {
            layout: FieldLayout::new(&names),
            columns: names.len(),
            gen_current: at("pcie.link.gen.current"),
            gen_max: at("pcie.link.gen.max"),
            width_current: at("pcie.link.width.current"),
            width_max: at("pcie.link.width.max"),
        }
    }

    fn parse(&self, phase: &str, elapsed_s: f64, csv: &str) -> Option<LoadSample> {
        let gpu = parse_gpu_line(&self.layout, csv).ok()?;
        // The PCIe columns are not part of the telemetry model, so they are read here; no
        // sampled field's value can hold a comma.
        let values: Vec<&str> = csv.split(',').map(str::trim).collect();
        if values.len() != self.columns {
            return None;
        }
        let number = |i: Option<usize>| i.and_then(|i| values.get(i)?.parse::<u32>().ok());
        Some(LoadSample {
            phase: phase.to_string(),
            elapsed_s,
            gpu,
            pcie: PcieReading {
                gen_current: number(self.gen_current),
                gen_max: number(self.gen_max),
                width_current: number(self.width_current),
                width_max: number(self.width_max),
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings() -> ProbeSettings {
        ProbeSettings {
            sustain_s: 60.0,
            bench_s: 2.0,
            matmul_n: 8192,
            vram_fraction: 0.95,
            window_s: 2.0,
            sample_interval_ms: 500,
        }
    }

    #[test]
    fn the_script_is_embedded_and_reads_its_arguments() {
        assert!(PROBE_SCRIPT.starts_with("# gpufleet-check-probe"));
        let argv = probe_argv("python3", "nvidia-smi", &settings());
        assert_eq!(argv[..2], ["python3", "-"]);
        for flag in [
            "--sustain-s",
            "--bench-s",
            "--matmul-n",
            "--vram-fraction",
            "--window-s",
            "--sample-ms",
            "--sample-fields",
            "--nvidia-smi",
        ] {
            assert!(argv.iter().any(|a| a == flag), "{flag} passed");
            assert!(
                PROBE_SCRIPT.contains(&format!("\"{flag}\"")),
                "{flag} parsed"
            );
        }
        assert!(!PROBE_SCRIPT.contains("-pl"), "never sets a power limit");
        assert!(!PROBE_SCRIPT.contains("--lock-gpu-clocks"));
    }

    #[test]
    fn lines_are_gathered_and_noise_kept() {
        let mut data = ProbeData::default();
        let fields = SAMPLE_FIELDS.join("\",\"");
        let lines = [
            r#"{"t":"hello","protocol":1,"python":"3.11.7","pid":9}"#.to_string(),
            r#"{"t":"torch","version":"2.5.1","cuda":"12.4","arch_list":["sm_90"]}"#.to_string(),
            format!(r#"{{"t":"sampler","fields":["{fields}"],"interval_ms":500}}"#),
            r#"{"t":"sample","phase":"matmul:0","elapsed_s":3.5,"csv":"0, GPU-67e6a1fd, 100, 58361, 59, 692.43, 700.00, 1485, 1980, 0x0000000000000004, 5, 5, 16, 16"}"#.to_string(),
            r#"{"t":"matmul","gpu":0,"dtype":"bf16","n":8192,"iterations":1400,"tflops":790.3,"tflops_random":665.1,"correct":true,"finite":true}"#.to_string(),
            "/usr/lib/python3/torch/cuda/__init__.py:1: UserWarning: something".to_string(),
            r#"{"t":"window","gpu":0,"elapsed_s":20.0,"seconds":2.0,"tflops":781.0}"#.to_string(),
            r#"{"t":"future_kind","x":1}"#.to_string(),
            r#"{"t":"done","elapsed_s":80.1}"#.to_string(),
        ];
        let updates: Vec<ProbeUpdate> = lines.iter().map(|l| data.feed(l)).collect();
        assert_eq!(updates[0], ProbeUpdate::Started);
        assert_eq!(updates[3], ProbeUpdate::Sample);
        assert!(matches!(updates[6], ProbeUpdate::Window(_)));
        assert_eq!(data.torch_version.as_deref(), Some("2.5.1"));
        assert_eq!(data.matmul[0].tflops, Some(790.3));
        let s = &data.samples[0];
        assert_eq!(s.gpu.power_draw_w, Some(692.43));
        assert_eq!(s.gpu.clock_sm_max_mhz, Some(1980));
        assert_eq!(
            s.pcie,
            PcieReading {
                gen_current: Some(5),
                gen_max: Some(5),
                width_current: Some(16),
                width_max: Some(16)
            }
        );
        assert!(data.done);
        assert_eq!(
            data.last_noise(),
            Some("/usr/lib/python3/torch/cuda/__init__.py:1: UserWarning: something")
        );
    }

    #[test]
    fn samples_before_the_field_list_or_malformed_are_dropped() {
        let mut data = ProbeData::default();
        data.feed(r#"{"t":"sample","phase":"start","elapsed_s":1,"csv":"0, 1"}"#);
        data.feed(r#"{"t":"sampler","fields":["index","pcie.link.width.current"]}"#);
        data.feed(r#"{"t":"sample","phase":"start","elapsed_s":1,"csv":"0, 8, 9"}"#);
        assert!(data.samples.is_empty());
        data.feed(r#"{"t":"sample","phase":"start","elapsed_s":1,"csv":"0, 8"}"#);
        assert_eq!(data.samples[0].pcie.width_current, Some(8));
        data.feed(r#"{"t":"sampler","error":"cannot run nvidia-smi"}"#);
        assert_eq!(data.sampler_error.as_deref(), Some("cannot run nvidia-smi"));
    }

    /// A skip with its kind is said from the catalogue, in the same English as the script's
    /// own reason; a skip without one (an older script) keeps the script's words.
    #[test]
    fn a_skip_is_said_from_its_kind_and_an_older_one_keeps_its_reason() {
        let mut data = ProbeData::default();
        data.feed(
            r#"{"t":"skip","kind":"no_gpu","version":"2.5.1","cuda":"12.4","error":null,"reason":"PyTorch 2.5.1 (built for CUDA 12.4) cannot use a GPU: torch.cuda.is_available() is False"}"#,
        );
        assert_eq!(
            data.skip.as_deref(),
            Some(
                "PyTorch 2.5.1 (built for CUDA 12.4) cannot use a GPU: torch.cuda.is_available() is False"
            )
        );
        let mut data = ProbeData::default();
        data.feed(
            r#"{"t":"skip","kind":"no_gpu","version":"2.5.1","cuda":"None","error":"RuntimeError: no driver","reason":"x"}"#,
        );
        assert_eq!(
            data.skip.as_deref(),
            Some("PyTorch 2.5.1 (built for CUDA None) cannot use a GPU: RuntimeError: no driver")
        );
        let mut data = ProbeData::default();
        data.feed(r#"{"t":"skip","reason":"an older script's words"}"#);
        assert_eq!(data.skip.as_deref(), Some("an older script's words"));
        let zh = t!(
            "check_probe_skip.no_torch",
            locale = "zh-CN",
            executable = "/usr/bin/python3",
            error = "ModuleNotFoundError: No module named 'torch'"
        );
        assert_eq!(
            zh,
            "/usr/bin/python3 无法导入 PyTorch（ModuleNotFoundError: No module named 'torch'）"
        );
    }
}
