//! Render cost per frame: the fleet view of 50 and 256 hosts and the host view of 8 GPUs with
//! ten minutes of history (goal: under 2 ms each); one second of a 50-host fleet through
//! `update`; and one wall second of `gpufleet replay --speed 100` of a 50-host recording
//! (decoding a hundred seconds of NDJSON lines, and feeding them through `update`).

use criterion::{Criterion, criterion_group, criterion_main};
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::Terminal;
use ratatui::backend::TestBackend;

use gpufleet::app::model::ModelOptions;
use gpufleet::app::{Event, Model, update};
use gpufleet::fleet::HostEvent;
use gpufleet::recording::Line;
use gpufleet::recording::wire::Event as WireEvent;
use gpufleet::telemetry::sim::{self, Simulator};
use gpufleet::theme::Theme;

const WALL_START_MS: u64 = 1_800_000_000_000;

fn run(mut sim: Simulator, seconds: u64) -> Model {
    let mut model = Model::new(sim.host_names(), ModelOptions::default(), WALL_START_MS);
    feed(&mut model, &mut sim, 0, seconds * 1000);
    model
}

/// Feeds the simulator's events from scenario time `from_ms` through `to_ms` into `model`, as
/// the runtime does; returns the next time to feed from.
fn feed(model: &mut Model, sim: &mut Simulator, from_ms: u64, to_ms: u64) -> u64 {
    let mut t = from_ms;
    while t <= to_ms {
        for (host, event) in sim.advance(t, WALL_START_MS + t) {
            update(model, Event::Host { host, event });
        }
        t += sim.interval_ms();
    }
    t
}

fn bench_render(c: &mut Criterion) {
    let theme = Theme::default_theme();
    let mut terminal = Terminal::new(TestBackend::new(160, 48)).expect("backend");
    // 50 hosts: the SSH fleet benchmark's screen, every host on it; 256: more than fit.
    for hosts in [50, 256] {
        let fleet = run(sim::fleet(7, hosts), 30);
        c.bench_function(&format!("fleet_{hosts}_hosts_160x48"), |b| {
            b.iter(|| {
                terminal
                    .draw(|f| gpufleet::ui::draw(f, &fleet, &theme))
                    .expect("draw");
            })
        });
    }

    let mut host = run(Simulator::demo(7), 600);
    update(
        &mut host,
        Event::Key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE)),
    );
    c.bench_function("host_8_gpus_10min_history_160x48", |b| {
        b.iter(|| {
            terminal
                .draw(|f| gpufleet::ui::draw(f, &host, &theme))
                .expect("draw");
        })
    });
}

/// The loop's other work: one second of a 50-host, 8-GPU fleet's events fed through `update`
/// (samples, then the clock tick that refreshes findings and ledgers), on ten minutes of
/// history.
fn bench_update(c: &mut Criterion) {
    let mut sim = sim::fleet(7, 50);
    let mut model = Model::new(sim.host_names(), ModelOptions::default(), WALL_START_MS);
    let mut t = feed(&mut model, &mut sim, 0, 600_000);
    c.bench_function("update_50_hosts_one_second", |b| {
        b.iter(|| {
            t = feed(&mut model, &mut sim, t, t + 999);
            update(
                &mut model,
                Event::Tick {
                    now_ms: WALL_START_MS + t,
                },
            );
        })
    });
}

/// `gpufleet replay --speed 100` of a 50-host, 8-GPU recording: each wall second the replay
/// thread decodes a hundred seconds of recorded lines and the loop feeds them through `update`
/// (then its one tick). Measured apart, as they run on two threads.
fn bench_replay(c: &mut Criterion) {
    let mut sim = sim::fleet(7, 50);
    let names = sim.host_names();
    let mut model = Model::new(names.clone(), ModelOptions::default(), WALL_START_MS);
    let t = feed(&mut model, &mut sim, 0, 600_000);
    // A hundred seconds of the fleet, as `--record` writes it.
    let mut lines = Vec::new();
    let mut at = t;
    while at < t + 100_000 {
        for (host, event) in sim.advance(at, WALL_START_MS + at) {
            let line = Line {
                t_ms: WALL_START_MS + at,
                host: names[host].clone(),
                event: WireEvent::from(&event),
            };
            lines.push(serde_json::to_string(&line).expect("encode"));
        }
        at += sim.interval_ms();
    }
    let by_name = |name: &str| names.iter().position(|n| n == name).expect("host");
    c.bench_function("replay_50_hosts_100x_decode_one_wall_second", |b| {
        b.iter(|| {
            let decoded: Vec<Line> = lines
                .iter()
                .map(|l| serde_json::from_str(l).expect("decode"))
                .collect();
            std::hint::black_box(decoded)
        })
    });
    let decoded: Vec<(usize, Line)> = lines
        .iter()
        .map(|l| {
            let line: Line = serde_json::from_str(l).expect("decode");
            (by_name(&line.host), line)
        })
        .collect();
    let mut now = WALL_START_MS + t;
    c.bench_function("replay_50_hosts_100x_update_one_wall_second", |b| {
        b.iter(|| {
            // Replayed events are stamped with the time they play: a hundred seconds of the
            // recording within this one.
            for (host, line) in &decoded {
                let offset = line.t_ms - (WALL_START_MS + t);
                let event = HostEvent::from(line.event.clone().restamped(now + offset / 100));
                update(&mut model, Event::Host { host: *host, event });
            }
            now += 1_000;
            update(&mut model, Event::Tick { now_ms: now });
        })
    });
}

criterion_group!(benches, bench_render, bench_update, bench_replay);
criterion_main!(benches);
