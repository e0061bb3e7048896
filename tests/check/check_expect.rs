//! Expectations for `gpufleet check`: from the config's `expect` table and from the
//! `--expect-*` flags, with clear errors for bad values wherever they come from.

use std::path::Path;

use gpufleet::check::{
    CheckError, CheckOptions, CheckTarget, ExpectError, ExpectFlags, expect_from_flags, run_check,
};
use gpufleet::config::{self, CudaVersion, Expect};
use gpufleet::telemetry::source::StopFlag;

const PATH: &str = "/home/u/.config/gpufleet/config.toml";

fn host_with(expect: &str) -> String {
    format!("[[hosts]]\nname = \"a\"\nssh = \"root@h.example.com:22\"\nexpect = {expect}\n")
}

fn config_error(expect: &str) -> String {
    match config::parse(&host_with(expect), Path::new(PATH)) {
        Ok(parsed) => panic!("accepted {parsed:#?}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn the_config_expectation_is_read_and_flags_override_it() {
    let text = host_with("{ gpu = \"RTX 4090\", count = 1, memory_gib = 24, min_cuda = \"12.1\" }");
    let config = config::parse(&text, Path::new(PATH)).expect("valid");
    let base = config.hosts[0].expect.clone();
    let flags = ExpectFlags {
        count: Some("2".to_string()),
        ..ExpectFlags::default()
    };
    let expect = expect_from_flags(&flags, base.as_ref()).expect("valid");
    assert_eq!(
        expect,
        Expect {
            gpu: Some("RTX 4090".to_string()),
            count: Some(2),
            memory_gib: Some(24.0),
            min_cuda: Some(CudaVersion {
                major: 12,
                minor: 1
            }),
        }
    );
}

#[test]
fn bad_expectations_in_the_config_name_the_line_and_key() {
    for (expect, key, says) in [
        (
            "{ min_cuda = \"twelve\" }",
            "hosts[0].expect.min_cuda",
            "not a CUDA version",
        ),
        (
            "{ min_cuda = 12.1 }",
            "hosts[0].expect.min_cuda",
            "as a string",
        ),
        ("{ count = 0 }", "hosts[0].expect.count", "at least 1"),
        (
            "{ memory_gib = -24 }",
            "hosts[0].expect.memory_gib",
            "above 0",
        ),
        ("{ gpu = \"\" }", "hosts[0].expect.gpu", "must not be empty"),
        ("{ gpus = \"H100\" }", "hosts[0].expect", "gpus"),
    ] {
        let message = config_error(expect);
        assert!(
            message.starts_with(&format!("{PATH}:4: {key}")),
            "{expect}: {message}"
        );
        assert!(message.contains(says), "{expect}: {message}");
    }
}

#[test]
fn bad_flags_say_which_flag_and_what_was_given() {
    let cases = [
        (
            ExpectFlags {
                count: Some("one".to_string()),
                ..ExpectFlags::default()
            },
            "--expect-count: expected a whole number of GPUs from 1 to 4096, found \"one\"",
        ),
        (
            ExpectFlags {
                memory_gib: Some("24TB".to_string()),
                ..ExpectFlags::default()
            },
            "--expect-memory-gib: expected the memory of one GPU in GiB, above 0 and at most \
             4096, found \"24TB\"",
        ),
        (
            ExpectFlags {
                min_cuda: Some("12.1.0".to_string()),
                ..ExpectFlags::default()
            },
            "--min-cuda: \"12.1.0\" is not a CUDA version like \"12.1\"",
        ),
        (
            ExpectFlags {
                gpu: Some(" ".to_string()),
                ..ExpectFlags::default()
            },
            "--expect-gpu: must name a GPU model such as \"RTX 4090\" or \"H100\", found an \
             empty value",
        ),
    ];
    for (flags, want) in cases {
        match expect_from_flags(&flags, None) {
            Ok(e) => panic!("accepted {e:?}"),
            Err(e) => assert_eq!(e.to_string(), want),
        }
    }
}

#[test]
fn an_invalid_expectation_stops_the_check_before_it_starts() {
    let expect = Expect {
        gpu: None,
        count: Some(0),
        memory_gib: None,
        min_cuda: None,
    };
    let opts = CheckOptions {
        nvidia_smi: "/nonexistent/nvidia-smi".to_string(),
        ..CheckOptions::default()
    };
    let err = run_check(
        CheckTarget::Local,
        &expect,
        &opts,
        &mut |_| panic!("no progress before validation"),
        &StopFlag::default(),
    )
    .expect_err("refused");
    assert!(
        matches!(err, CheckError::Expect(ExpectError::Count { .. })),
        "{err}"
    );
    assert_eq!(
        err.to_string(),
        "invalid expectation: --expect-count: expected a whole number of GPUs from 1 to 4096, \
         found \"0\""
    );
}
