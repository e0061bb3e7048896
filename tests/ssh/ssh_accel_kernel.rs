//! A Moore Threads host over a real sshd (stand-ins from tests/fixtures/fake-accel/mthreads):
//! the link reads its GPUs with `mthreads-gmi` and follows its kernel log as on an NVIDIA
//! host, forwarding the mtgpu driver's published fault lines.

use crate::common;

use std::path::Path;
use std::time::Duration;

use common::sshd::{Sshd, SshdOptions};
use common::{channel, test_options};
use gpufleet::fleet::HostEvent;
use gpufleet::remote::spawn_link;
use gpufleet::telemetry::accel::Vendor;

const WAIT: Duration = Duration::from_secs(10);

#[test]
fn a_moore_threads_host_forwards_its_mtgpu_kernel_lines() {
    if ["/usr/local/bin", "/usr/bin", "/bin"]
        .iter()
        .any(|d| Path::new(d).join("nvidia-smi").exists())
    {
        eprintln!("skipping: a real nvidia-smi is on the remote PATH");
        return;
    }
    let fakes = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/fake-accel/mthreads");
    let Some(sshd) = Sshd::start_with(&SshdOptions {
        bin_dir: Some(fakes),
        ..SshdOptions::default()
    }) else {
        return;
    };
    sshd.set_scenario("table-01");
    let (sink, mut events) = channel();
    let opts = test_options(&sshd.trusted_known_hosts());
    let link = spawn_link(sshd.remote_host("s80"), 0, sink, opts).expect("spawn");
    let warning = events.expect(
        WAIT,
        "the mtgpu WARNING",
        |_, e| matches!(e, HostEvent::Kernel { line, .. } if line.contains("[mtgpu]")),
    );
    // Samples come every interval, before or after the kernel lines.
    let sample = events.expect(
        WAIT,
        "Sample",
        |_, e| matches!(e, HostEvent::Sample { gpu, .. } if gpu.vendor == Vendor::Mthreads),
    );
    link.stop_and_join();
    let HostEvent::Sample { gpu, .. } = sample else {
        unreachable!()
    };
    assert_eq!(gpu.name.as_ref(), "MTT S80");
    let HostEvent::Kernel { line, .. } = warning else {
        unreachable!()
    };
    assert!(line.contains("WARNING: CPU: 25 PID: 550"), "{line}");
    assert!(
        events.count(
            |_, e| matches!(e, HostEvent::Kernel { line, .. } if line.contains("MTGPU DBG: END"))
        ) == 1,
        "{:#?}",
        events.kinds()
    );
    assert_eq!(sshd.calls("dmesg"), ["--follow-new"]);
}
