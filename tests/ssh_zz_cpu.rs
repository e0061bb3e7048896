mod common;
use std::time::Duration;
use common::sshd::Sshd;
use common::{channel, is_sample, test_options};
use gpufleet::remote::spawn_link;
fn cpu_ticks() -> u64 {
    let s = std::fs::read_to_string("/proc/self/stat").unwrap();
    let rest = s.rsplit_once(')').unwrap().1;
    let f: Vec<&str> = rest.split_whitespace().collect();
    f[11].parse::<u64>().unwrap() + f[12].parse::<u64>().unwrap()
}
#[test]
fn cpu() {
    let sshd = Sshd::start().unwrap();
    let (sink, mut events) = channel();
    let mut opts = test_options(&sshd.trusted_known_hosts());
    opts.interval_ms = 1000; opts.processes_interval_ms = 5000; opts.keepalive_interval_s = 5; opts.dead_after_ms = 15000;
    let t0 = std::time::Instant::now();
    let links: Vec<_> = (0..50).map(|i| spawn_link(sshd.remote_host("x"), i, sink.clone(), opts.clone()).unwrap()).collect();
    let mut seen = std::collections::HashSet::new();
    events.wait_for(Duration::from_secs(10), |h, e| { if is_sample(e) { seen.insert(h); } seen.len() == 50 });
    eprintln!("all 50 streaming after {:?}", t0.elapsed());
    let c0 = cpu_ticks();
    eprintln!("PID {}", std::process::id()); events.drain_for(Duration::from_secs(10));
    let c1 = cpu_ticks();
    eprintln!("cpu over 10 s for 50 links: {} ticks ({}%)", c1 - c0, (c1 - c0) as f64 / 10.0);
    eprintln!("samples {}", events.count(|_, e| is_sample(e)));
    eprintln!("{}", std::fs::read_to_string("/proc/self/status").unwrap().lines().find(|l| l.starts_with("VmRSS")).unwrap());
    let t = std::time::Instant::now(); drop(links); eprintln!("dropped in {:?}", t.elapsed());
}
