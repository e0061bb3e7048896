//! Tests of the recording format, the reader and the black box's bounds.

use super::blackbox::{BlackBox, BlackBoxOptions, segments};
use super::read::RecordingReader;
use super::wire::{Event, FORMAT_VERSION, Header, Line};
use crate::fleet::HostEvent;
use crate::paths::host_dir_name;
use crate::telemetry::{ClockEventReasons, GpuProcess, GpuSample, HostInfo, LostReason};

fn every_event() -> Vec<HostEvent> {
    let gpu = GpuSample {
        index: 3,
        uuid: "GPU-1".into(),
        name: "NVIDIA H200".into(),
        bus_id: "00000000:1B:00.0".into(),
        memory_total_mib: Some(143_771),
        utilization_gpu_pct: Some(97.5),
        pstate: Some("P0".into()),
        clock_event_reasons: Some(ClockEventReasons(0x24)),
        retired_pages_pending: Some(false),
        driver_version: Some("570.86.15".into()),
        ..GpuSample::default()
    };
    vec![
        HostEvent::Connecting {
            attempt: 2,
            at_ms: Some(1_000),
        },
        HostEvent::Connected(HostInfo {
            driver_version: Some("570.86.15".into()),
            cuda_version: None,
            source: "ssh root@h:22".into(),
        }),
        HostEvent::Sample { at_ms: 5, gpu },
        HostEvent::Processes {
            at_ms: 6,
            processes: vec![
                GpuProcess {
                    gpu_index: None,
                    pid: 7,
                    name: "python".into(),
                    gpu_uuid: "GPU-1".into(),
                    used_memory_mib: None,
                },
                // A vendor tool's process, tied to its card by index (no UUID printed).
                GpuProcess {
                    gpu_index: Some(3),
                    pid: 37643,
                    name: "hlt_host_devmm_".into(),
                    gpu_uuid: String::new(),
                    used_memory_mib: Some(686),
                },
            ],
        },
        HostEvent::Kernel {
            at_ms: 8,
            line: "NVRM: Xid (PCI:0000:1b:00): 79".into(),
        },
        HostEvent::Lost {
            at_ms: 9,
            reason: LostReason::GpuLost,
            raw: "GPU is lost".into(),
        },
        HostEvent::Disconnected {
            at_ms: 10,
            reason: "refused".into(),
            summary: "connection refused".into(),
            retry_at_ms: Some(4_010),
            words: None,
        },
        HostEvent::Disconnected {
            at_ms: 10,
            reason: "cannot connect to 127.0.0.1:9: connection refused".into(),
            summary: "connection refused".into(),
            retry_at_ms: Some(4_010),
            words: Some(crate::fleet::DownWords {
                reason: crate::words::Words::new("link_error.connect")
                    .put("addr", "127.0.0.1:9")
                    .put("source", "connection refused"),
                summary: crate::words::Words::new("link_summary.refused"),
            }),
        },
        HostEvent::Unresponsive {
            at_ms: 11,
            silent_ms: 30_000,
        },
        HostEvent::Responsive { at_ms: 12 },
        HostEvent::Flooding {
            at_ms: 13,
            detail: None,
            words: None,
        },
        HostEvent::Flooding {
            at_ms: 13,
            detail: Some(
                "over budget: 9 lines, 1 KiB in 1 s from the kernel log (budget 4 lines, 4 KiB); \
                 output past that is dropped"
                    .into(),
            ),
            words: Some(
                crate::words::Words::new("flood_words.over_budget")
                    .put("lines", "9")
                    .put("kib", "1")
                    .put("within", "1 s")
                    .put_words("what", crate::words::Words::new("flood_words.kernel"))
                    .put("budget_lines", "4")
                    .put("budget_kib", "4"),
            ),
        },
        HostEvent::Notice {
            at_ms: 14,
            text: crate::words::Words::verbatim("kernel log not readable"),
        },
        HostEvent::Notice {
            at_ms: 14,
            text: crate::words::Words::new("link_notice.detail_failed")
                .put_words(
                    "why",
                    crate::words::Words::new("link_notice.exit_status").put("code", "9"),
                )
                .put("output", "Unknown Error"),
        },
        HostEvent::Evidence {
            at_ms: 15,
            command: "nvidia-smi -q".into(),
            output: "==============NVSMI LOG==============\n[exit 0]\n".into(),
        },
        HostEvent::Jobs {
            at_ms: 16,
            jobs: vec![crate::fleet::job::JobProcess {
                pid: 7,
                user: Some("root".into()),
                elapsed_s: Some(15),
                cpu_s: Some(14),
                command: "python3 hf_long.py".into(),
                log: Some("stdout: /root/run/hf_long.log".into()),
                found: crate::fleet::job_found::JobFound::Device,
                devices: vec![0],
                gpus: vec!["GPU-67e6a1fd-a60b-985c-12e3-e9316c8ff001".into()],
            }],
        },
        HostEvent::JobLog {
            at_ms: 17,
            pid: 7,
            restart: true,
            text: "{'loss': '5.012', 'epoch': '0.07'}\n\r 20/600 [00:01<00:30]\n".into(),
        },
        HostEvent::Disk {
            at_ms: 18,
            uses: vec![
                crate::telemetry::df::DiskUse {
                    path: crate::telemetry::df::DiskPath::Root,
                    fs: crate::telemetry::df::FsUsage {
                        filesystem: "overlay".into(),
                        mount: "/".into(),
                        total_kib: 204_800,
                        used_kib: 198_000,
                        avail_kib: 6_800,
                    },
                },
                crate::telemetry::df::DiskUse {
                    path: crate::telemetry::df::DiskPath::JobCwd { pid: 7 },
                    fs: crate::telemetry::df::FsUsage {
                        filesystem: "/dev/vda1".into(),
                        mount: "/workspace data".into(),
                        total_kib: 1,
                        used_kib: 0,
                        avail_kib: 1,
                    },
                },
            ],
            loader_workers: 3,
        },
        HostEvent::Lost {
            at_ms: 19,
            reason: LostReason::SmiMissing,
            raw: "sh: 1: nvidia-smi: not found\nnvidia-smi exited with status 127".into(),
        },
    ]
}

#[test]
fn a_version_1_recording_still_reads() {
    let dir = tempfile::tempdir().expect("temp");
    let header = serde_json::to_string(&Header::new(1, vec!["h".into()]))
        .expect("header")
        .replace(&format!("\"version\":{FORMAT_VERSION}"), "\"version\":1");
    let good = r#"{"t_ms":2,"host":"h","event":{"kind":"responsive","at_ms":2}}"#;
    let path = write_recording(dir.path(), &format!("{header}\n{good}\n"));
    let lines: Vec<_> = RecordingReader::open(&path)
        .expect("open")
        .map(|l| l.expect("line"))
        .collect();
    assert_eq!(lines.len(), 1);
}

#[test]
fn a_connecting_line_without_its_time_still_reads() {
    let dir = tempfile::tempdir().expect("temp");
    let header = serde_json::to_string(&Header::new(1, vec!["h".into()]))
        .expect("header")
        .replace(&format!("\"version\":{FORMAT_VERSION}"), "\"version\":4");
    let old = r#"{"t_ms":2,"host":"h","event":{"kind":"connecting","attempt":3}}"#;
    let path = write_recording(dir.path(), &format!("{header}\n{old}\n"));
    let lines: Vec<Line> = RecordingReader::open(&path)
        .expect("open")
        .map(|l| l.expect("line"))
        .collect();
    assert_eq!(
        HostEvent::from(lines[0].event.clone()),
        HostEvent::Connecting {
            attempt: 3,
            at_ms: None
        }
    );
}

#[test]
fn every_host_event_survives_a_trip_through_a_recording_line() {
    for event in every_event() {
        let line = Line {
            t_ms: 1,
            host: "h".into(),
            event: Event::from(&event),
        };
        let text = serde_json::to_string(&line).expect("serialize");
        let back: Line = serde_json::from_str(&text).expect("parse");
        assert_eq!(HostEvent::from(back.event), event, "{text}");
    }
}

fn write_recording(dir: &std::path::Path, body: &str) -> std::path::PathBuf {
    let path = dir.join("r.ndjson");
    let header = serde_json::to_string(&Header::new(1, vec!["h".into()])).expect("header");
    std::fs::write(&path, format!("{header}\n{body}")).expect("write");
    path
}

#[test]
fn a_last_line_cut_short_ends_the_recording_but_a_bad_line_inside_is_named() {
    let dir = tempfile::tempdir().expect("temp");
    let good = r#"{"t_ms":2,"host":"h","event":{"kind":"responsive","at_ms":2}}"#;
    let path = write_recording(dir.path(), &format!("{good}\n{{\"t_ms\":3,\"ho"));
    let lines: Vec<_> = RecordingReader::open(&path).expect("open").collect();
    assert_eq!(lines.len(), 1);
    assert!(lines[0].is_ok());
    let path = write_recording(dir.path(), &format!("{good}\n{{\"t_ms\":3,\"ho\n{good}\n"));
    let err = RecordingReader::open(&path)
        .expect("open")
        .find_map(Result::err)
        .expect("an error")
        .to_string();
    assert!(err.contains("r.ndjson:3: not a recorded event"), "{err}");
}

fn options(dir: &std::path::Path, max_bytes: u64) -> BlackBoxOptions {
    BlackBoxOptions {
        dir: dir.to_path_buf(),
        keep_ms: 24 * 3_600_000,
        max_bytes,
        sample_every_ms: 10_000,
        who: "test".into(),
    }
}

fn kernel_line(t_ms: u64) -> Vec<u8> {
    let line = Line {
        t_ms,
        host: "h".into(),
        event: Event::Kernel {
            at_ms: t_ms,
            line: format!("NVRM: Xid 79 at {t_ms} {}", "x".repeat(200)),
        },
    };
    let mut bytes = serde_json::to_vec(&line).expect("json");
    bytes.push(b'\n');
    bytes
}

#[test]
fn the_black_box_stays_under_its_cap_and_keeps_the_newest_events() {
    let dir = tempfile::tempdir().expect("temp");
    let cap = 64 << 10;
    let mut bb = BlackBox::new(options(dir.path(), cap));
    let mut t = 1_000_000;
    for _ in 0..2_000 {
        t += 1_000;
        bb.write("h", t, &kernel_line(t));
    }
    bb.flush();
    assert!(bb.error.is_none(), "{:?}", bb.error);
    let segs = segments(dir.path(), "h").expect("segments");
    let total: u64 = segs.iter().map(|(_, len)| len).sum();
    assert!(total <= cap, "{total} bytes kept over a cap of {cap}");
    assert!(segs.len() > 2, "rotated into segments: {segs:?}");
    let newest = RecordingReader::open(&segs.last().expect("one").0)
        .expect("open")
        .last()
        .expect("a line")
        .expect("parses");
    assert_eq!(newest.t_ms, t, "the newest event is kept");
}

#[test]
fn the_black_box_forgets_what_is_older_than_it_keeps_and_survives_a_restart() {
    let dir = tempfile::tempdir().expect("temp");
    let mut opts = options(dir.path(), 64 << 20);
    opts.keep_ms = 3_600_000;
    let mut bb = BlackBox::new(opts.clone());
    bb.write("h", 1_000, &kernel_line(1_000));
    bb.flush();
    drop(bb);
    // A restart an hour and a half later: a new segment, the old one still there...
    let mut bb = BlackBox::new(opts.clone());
    let later = 1_000 + 90 * 60_000;
    bb.write("h", later, &kernel_line(later));
    bb.flush();
    drop(bb);
    assert_eq!(segments(dir.path(), "h").expect("segments").len(), 2);
    // ...until the next one starts after it passed out of the hour kept.
    let mut bb = BlackBox::new(opts);
    let much_later = later + 2 * 3_600_000 + 1;
    bb.write("h", much_later, &kernel_line(much_later));
    bb.flush();
    let segs = segments(dir.path(), "h").expect("segments");
    let starts: Vec<String> = segs
        .iter()
        .map(|(p, _)| p.file_name().expect("name").to_string_lossy().into_owned())
        .collect();
    assert_eq!(starts.len(), 2, "{starts:?}");
    assert!(
        !starts.iter().any(|s| s.starts_with("00000000000000001000")),
        "the first run's segment is gone: {starts:?}"
    );
}

#[test]
fn only_one_process_writes_a_hosts_black_box() {
    let dir = tempfile::tempdir().expect("temp");
    let mut first = BlackBox::new(options(dir.path(), 64 << 20));
    first.write("h", 1_000, &kernel_line(1_000));
    let mut second = BlackBox::new(options(dir.path(), 64 << 20));
    second.write("h", 2_000, &kernel_line(2_000));
    first.flush();
    second.flush();
    assert_eq!(segments(dir.path(), "h").expect("segments").len(), 1);
}

#[test]
fn the_black_box_thins_samples_and_process_lists_but_keeps_a_change_at_once() {
    let dir = tempfile::tempdir().expect("temp");
    let mut bb = BlackBox::new(options(dir.path(), 64 << 20));
    let sample = |ecc| HostEvent::Sample {
        at_ms: 0,
        gpu: GpuSample {
            ecc_uncorrected_volatile: Some(ecc),
            ..GpuSample::default()
        },
    };
    assert!(bb.wants("h", 0, &sample(0)));
    assert!(!bb.wants("h", 1_000, &sample(0)));
    assert!(bb.wants("h", 2_000, &sample(1)), "a new ECC error is kept");
    assert!(!bb.wants("h", 3_000, &sample(1)));
    assert!(bb.wants("h", 12_000, &sample(1)), "ten seconds on");
    let processes = |pid| HostEvent::Processes {
        at_ms: 0,
        processes: vec![GpuProcess {
            gpu_index: None,
            pid,
            name: "python".into(),
            gpu_uuid: "GPU-1".into(),
            used_memory_mib: Some(1),
        }],
    };
    assert!(bb.wants("h", 0, &processes(7)));
    assert!(!bb.wants("h", 5_000, &processes(7)));
    assert!(bb.wants("h", 6_000, &processes(8)), "a new process is kept");
    assert!(bb.wants("h", 16_000, &processes(8)), "ten seconds on");
}

#[test]
fn a_file_recorded_into_twice_reads_as_two_sessions_and_a_newer_one_is_refused() {
    let dir = tempfile::tempdir().expect("temp");
    let good = r#"{"t_ms":2,"host":"h","event":{"kind":"responsive","at_ms":2}}"#;
    let second = serde_json::to_string(&Header::new(9, vec!["g".into()])).expect("header");
    let path = write_recording(dir.path(), &format!("{good}\n{second}\n{good}\n"));
    let mut reader = RecordingReader::open(&path).expect("open");
    let lines: Vec<_> = reader.by_ref().map(|l| l.expect("line")).collect();
    assert_eq!(lines.len(), 2);
    assert_eq!(reader.sessions, 2);
    assert_eq!(reader.header.hosts, ["h", "g"]);
    let newer = second.replace(
        &format!("\"version\":{FORMAT_VERSION}"),
        &format!("\"version\":{}", FORMAT_VERSION + 1),
    );
    let path = write_recording(dir.path(), &format!("{good}\n{newer}\n{good}\n"));
    let err = RecordingReader::open(&path)
        .expect("open")
        .find_map(Result::err)
        .expect("an error")
        .to_string();
    assert!(
        err.contains(&format!(
            "r.ndjson:3: recording format version {} is newer",
            FORMAT_VERSION + 1
        )),
        "{err}"
    );
}

/// The end-of-run line about a recording the disk could not keep up with: the console prints
/// it in the reader's language, the count as it is.
#[test]
fn dropped_events_are_said_in_the_readers_language() {
    use super::writer::dropped_words;
    assert_eq!(
        dropped_words(12).render("en"),
        "recording: 12 events were left out (the disk fell behind)"
    );
    assert_eq!(
        dropped_words(12).render("zh-CN"),
        "录制：有 12 个事件未录入（磁盘写入跟不上）"
    );
}

/// Every line of `host`'s segments that names it exactly.
fn lines_of_host(dir: &std::path::Path, host: &str) -> Vec<Line> {
    let mut out = Vec::new();
    for (path, _) in segments(dir, host).expect("segments") {
        for line in RecordingReader::open(&path).expect("segment") {
            let line = line.expect("line");
            if line.host == host {
                out.push(line);
            }
        }
    }
    out
}

#[test]
fn two_hosts_whose_names_sanitize_alike_each_keep_their_own_black_box() {
    let dir = tempfile::tempdir().expect("temp");
    let mut bb = BlackBox::new(options(dir.path(), 64 << 20));
    for host in ["a/b", "a_b"] {
        let mut line = kernel_line(2_000);
        // The line names its host, as the recorder writes it.
        let mut value: serde_json::Value = serde_json::from_slice(&line).expect("json");
        value["host"] = host.into();
        line = serde_json::to_vec(&value).expect("json");
        line.push(b'\n');
        bb.write(host, 2_000, &line);
    }
    bb.flush();
    assert!(bb.error.is_none(), "{:?}", bb.error);
    for host in ["a/b", "a_b"] {
        let lines = lines_of_host(dir.path(), host);
        assert_eq!(lines.len(), 1, "{host}: {lines:?}");
    }
    assert_ne!(host_dir_name("a/b"), host_dir_name("a_b"));
    // Names that an escape could confuse, each its own folder, every one a single plain path
    // segment.
    let long = "x".repeat(300);
    let names = [
        "a/b".to_string(),
        "a_b".to_string(),
        "a%2Fb".to_string(),
        "a:b".to_string(),
        String::new(),
        ".".to_string(),
        "..".to_string(),
        "%".to_string(),
        "%2E".to_string(),
        "主机".to_string(),
        format!("{long}1"),
        format!("{long}2"),
    ];
    let folders: std::collections::HashSet<String> =
        names.iter().map(|n| host_dir_name(n)).collect();
    assert_eq!(folders.len(), names.len(), "{folders:?}");
    for folder in &folders {
        assert!(
            !folder.is_empty()
                && folder != "."
                && folder != ".."
                && !folder.contains('/')
                && folder.len() <= 255,
            "{folder}"
        );
    }
}

#[test]
fn a_black_box_an_older_version_kept_under_the_former_folder_name_is_still_read() {
    let dir = tempfile::tempdir().expect("temp");
    let host = "root@10.0.0.7:2222";
    // What an older gpufleet wrote: the `:` as `_`.
    let former = dir.path().join("root@10.0.0.7_2222");
    std::fs::create_dir_all(&former).expect("former folder");
    let header = serde_json::to_string(&Header::new(1_000, vec![host.to_string()])).expect("h");
    let mut value: serde_json::Value = serde_json::from_slice(&kernel_line(1_000)).expect("json");
    value["host"] = host.into();
    std::fs::write(
        former.join("00000000000000001000.ndjson"),
        format!("{header}\n{value}\n"),
    )
    .expect("segment");
    let mut bb = BlackBox::new(options(dir.path(), 64 << 20));
    let mut line = serde_json::to_vec(&{
        let mut v: serde_json::Value = serde_json::from_slice(&kernel_line(5_000)).expect("json");
        v["host"] = host.into();
        v
    })
    .expect("json");
    line.push(b'\n');
    bb.write(host, 5_000, &line);
    bb.flush();
    let lines = lines_of_host(dir.path(), host);
    assert_eq!(
        lines.iter().map(|l| l.t_ms).collect::<Vec<_>>(),
        [1_000, 5_000],
        "the former folder's line, then the new one"
    );
    assert!(dir.path().join(host_dir_name(host)).is_dir());
}
