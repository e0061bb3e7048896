//! A reading of a host the screen does not show asks for no frame of its own (a thousand-host
//! fleet shows forty rows; drawing for the other 960 is what cost the console its CPU); it
//! still reaches the screen within the second, and a host on screen is drawn at once.

use ratatui::Terminal;
use ratatui::backend::TestBackend;

use gpufleet::app::model::ModelOptions;
use gpufleet::app::{Event, Model, View, update};
use gpufleet::fleet::HostEvent;
use gpufleet::telemetry::GpuSample;
use gpufleet::theme::Theme;

const START_MS: u64 = 1_000_000;

fn sample(util: f64) -> GpuSample {
    GpuSample {
        index: 0,
        uuid: "GPU-0".into(),
        name: "NVIDIA H200".into(),
        memory_total_mib: Some(143_771),
        memory_used_mib: Some(1_000),
        utilization_gpu_pct: Some(util),
        temperature_c: Some(40.0),
        power_draw_w: Some(120.0),
        power_limit_w: Some(700.0),
        ..GpuSample::default()
    }
}

fn reading(host: usize, at_ms: u64, util: f64) -> Event {
    Event::Host {
        host,
        event: HostEvent::Sample {
            at_ms,
            gpu: sample(util),
        },
    }
}

/// Draws a frame as the console's loop does (the frame, then where it put things), if one is
/// asked for; true when one was drawn.
fn frame(terminal: &mut Terminal<TestBackend>, model: &mut Model, theme: &Theme) -> bool {
    if !model.take_dirty() {
        return false;
    }
    let area = terminal
        .draw(|f| gpufleet::ui::draw(f, model, theme))
        .expect("draw")
        .area;
    model.screen.regions = gpufleet::ui::regions::of(model, theme, area);
    model.take_undrawn_sample_ms();
    true
}

fn fleet_of(hosts: usize) -> Model {
    let names = (0..hosts).map(|i| format!("h{i:03}")).collect();
    let mut model = Model::new(names, ModelOptions::default(), START_MS);
    for host in 0..hosts {
        update(&mut model, reading(host, START_MS, 10.0));
    }
    model
}

#[test]
fn an_off_screen_hosts_reading_waits_for_the_tick_and_an_on_screen_one_is_drawn_at_once() {
    let theme = Theme::default_theme();
    let mut terminal = Terminal::new(TestBackend::new(80, 24)).expect("terminal");
    let mut model = fleet_of(100);
    assert!(frame(&mut terminal, &mut model, &theme));
    let shown = model
        .screen
        .regions
        .shown_hosts
        .clone()
        .expect("the frame says which hosts it showed");
    assert!(shown.contains(&0), "the first host is on screen: {shown:?}");
    assert!(!shown.contains(&99), "80x24 cannot show 100 rows");

    // The last host, off screen: no frame, and no sample counted as waiting for one.
    update(&mut model, reading(99, START_MS + 100, 95.0));
    assert!(!frame(&mut terminal, &mut model, &theme));
    assert_eq!(model.undrawn_sample_ms(), None);
    // ... but the fleet holds it, and the next tick draws it (totals, order).
    assert_eq!(
        model.fleet.hosts[99].gpus[0].latest.utilization_gpu_pct,
        Some(95.0)
    );
    update(
        &mut model,
        Event::Tick {
            now_ms: START_MS + 200,
        },
    );
    assert!(frame(&mut terminal, &mut model, &theme));
    // Once drawn, a tick asks for nothing more.
    update(
        &mut model,
        Event::Tick {
            now_ms: START_MS + 300,
        },
    );
    assert!(!frame(&mut terminal, &mut model, &theme));

    // The first host, on screen: drawn at once, its sample's wait measured.
    update(&mut model, reading(0, START_MS + 400, 55.0));
    assert_eq!(model.undrawn_sample_ms(), Some(START_MS + 400));
    assert!(frame(&mut terminal, &mut model, &theme));

    // A host off screen that stops answering is not a reading: drawn at once.
    update(
        &mut model,
        Event::Host {
            host: 98,
            event: HostEvent::Unresponsive {
                at_ms: START_MS + 500,
                silent_ms: 5_000,
            },
        },
    );
    assert!(frame(&mut terminal, &mut model, &theme));
}

#[test]
fn in_a_hosts_view_only_that_host_asks_for_frames() {
    let theme = Theme::default_theme();
    let mut terminal = Terminal::new(TestBackend::new(160, 48)).expect("terminal");
    let mut model = fleet_of(3);
    model.view = View::Host(1);
    assert!(frame(&mut terminal, &mut model, &theme));
    update(&mut model, reading(0, START_MS + 100, 80.0));
    assert!(!frame(&mut terminal, &mut model, &theme));
    update(&mut model, reading(1, START_MS + 200, 80.0));
    assert!(frame(&mut terminal, &mut model, &theme));
}

#[test]
fn a_jobs_log_asks_for_a_frame_only_in_its_hosts_view() {
    let theme = Theme::default_theme();
    let mut terminal = Terminal::new(TestBackend::new(160, 48)).expect("terminal");
    let mut model = fleet_of(3);
    assert!(frame(&mut terminal, &mut model, &theme));
    let log = |at_ms: u64| Event::Host {
        host: 1,
        event: HostEvent::JobLog {
            at_ms,
            pid: 4242,
            restart: false,
            text: "{'loss': 2.5, 'epoch': 0.1}\n".to_string(),
        },
    };
    // The fleet's rows show nothing of a job's log.
    update(&mut model, log(START_MS + 100));
    assert!(!frame(&mut terminal, &mut model, &theme));
    // The host's own view shows the job: drawn at once.
    model.view = View::Host(1);
    model.mark_dirty();
    assert!(frame(&mut terminal, &mut model, &theme));
    update(&mut model, log(START_MS + 200));
    assert!(frame(&mut terminal, &mut model, &theme));
}

/// A run that stopped learning says since when and what it cost since, so its finding's words
/// change as its log grows; the fleet's rows show which findings a host has (its badges), not
/// their words. Worded anew, they ask for a frame only in their host's view; a finding that
/// comes or goes asks for one everywhere. (Fifty followed logs re-worded a finding somewhere
/// nearly every second, and each time the whole fleet was drawn again.)
#[test]
fn a_findings_new_words_are_drawn_only_in_its_hosts_view_a_new_finding_everywhere() {
    use gpufleet::fleet::job::JobProcess;
    let theme = Theme::default_theme();
    let mut terminal = Terminal::new(TestBackend::new(160, 48)).expect("terminal");
    let mut model = fleet_of(3);
    assert!(frame(&mut terminal, &mut model, &theme));
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/training-logs/hf_plateau.log");
    let text = std::fs::read_to_string(path).expect("hf_plateau.log");
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let mut at_ms = START_MS;
    update(
        &mut model,
        Event::Host {
            host: 1,
            event: HostEvent::Jobs {
                at_ms,
                jobs: vec![JobProcess {
                    pid: 4242,
                    elapsed_s: Some(60),
                    command: "python3 train.py".into(),
                    ..JobProcess::default()
                }],
            },
        },
    );
    // A job listed shows in its host's view (the job line), not in the fleet's rows.
    assert!(!frame(&mut terminal, &mut model, &theme));
    let kinds = |model: &Model| -> Vec<String> {
        model.fleet.hosts[1]
            .findings
            .iter()
            .map(|f| f.label.clone())
            .collect()
    };
    let (mut reworded_in_fleet, mut reworded_in_view, mut reshaped) = (0, 0, 0);
    for chunk in lines.chunks(4) {
        // The fleet's view until the plateau's words changed twice, then the host's own.
        let in_view = reworded_in_fleet >= 2;
        if in_view && model.view == View::Fleet {
            model.view = View::Host(1);
            model.mark_dirty();
            assert!(frame(&mut terminal, &mut model, &theme));
        }
        at_ms += 10;
        update(
            &mut model,
            Event::Host {
                host: 1,
                event: HostEvent::JobLog {
                    at_ms,
                    pid: 4242,
                    restart: false,
                    text: chunk.concat(),
                },
            },
        );
        if !in_view {
            assert!(
                !frame(&mut terminal, &mut model, &theme),
                "a log read draws nothing in the fleet view"
            );
        } else {
            frame(&mut terminal, &mut model, &theme);
        }
        let (kinds_before, before) = (kinds(&model), model.fleet.hosts[1].findings.clone());
        at_ms += 10;
        update(&mut model, Event::Tick { now_ms: at_ms });
        let after = model.fleet.hosts[1].findings.clone();
        let drawn = frame(&mut terminal, &mut model, &theme);
        if kinds(&model) != kinds_before {
            reshaped += 1;
            assert!(
                drawn,
                "a finding that came or went is drawn: {:?}",
                kinds(&model)
            );
        } else if after != before {
            if in_view {
                reworded_in_view += 1;
            } else {
                reworded_in_fleet += 1;
            }
            assert_eq!(
                drawn, in_view,
                "new words of the same findings are drawn only in the host's view"
            );
        }
    }
    assert!(reshaped >= 1, "the plateau was found");
    assert!(
        reworded_in_fleet >= 2 && reworded_in_view >= 1,
        "the plateau's words changed as the log grew ({reworded_in_fleet} times in the \
         fleet's view, {reworded_in_view} in the host's)"
    );
}

#[test]
fn a_burst_of_readings_is_one_update_and_its_row_is_drawn_anew() {
    let theme = Theme::default_theme();
    let mut terminal = Terminal::new(TestBackend::new(160, 48)).expect("terminal");
    let mut model = fleet_of(3);
    assert!(frame(&mut terminal, &mut model, &theme));
    let screen = |terminal: &Terminal<TestBackend>| {
        let buffer = terminal.backend().buffer();
        buffer
            .content()
            .chunks(usize::from(buffer.area.width))
            .map(|row| row.iter().map(|c| c.symbol()).collect::<String>())
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert!(!screen(&terminal).contains("77%"));
    // Two GPUs of host 1 in one burst: both are folded in, in order, and the frame shows them.
    let gpu = |index: u32, util: f64| HostEvent::Sample {
        at_ms: START_MS + 100,
        gpu: GpuSample {
            index,
            ..sample(util)
        },
    };
    update(
        &mut model,
        Event::Hosts {
            host: 1,
            events: vec![gpu(0, 70.0), gpu(1, 84.0)],
        },
    );
    assert_eq!(model.fleet.hosts[1].gpus.len(), 2);
    assert_eq!(model.undrawn_sample_ms(), Some(START_MS + 100));
    assert!(frame(&mut terminal, &mut model, &theme));
    assert!(
        screen(&terminal).contains("77%"),
        "the mean of 70 and 84 is on screen:\n{}",
        screen(&terminal)
    );
}

/// The fleet's rows are kept between frames and drawn again as they were: the screen is cell
/// for cell what a console drawing it for the first time shows, after a reading (its row
/// changes, the others are kept), after the cursor moves (its highlight leaves a kept row) and
/// at another size (other columns, so no kept row fits).
#[test]
fn kept_rows_draw_what_a_console_drawing_them_for_the_first_time_draws() {
    let theme = Theme::default_theme();
    let fresh = |model: &Model, width: u16, height: u16| {
        // A copy of the model keeps no rows: everything is laid out anew.
        let copy = model.clone();
        let mut terminal = Terminal::new(TestBackend::new(width, height)).expect("terminal");
        terminal
            .draw(|f| gpufleet::ui::draw(f, &copy, &theme))
            .expect("draw");
        terminal.backend().buffer().clone()
    };
    let mut terminal = Terminal::new(TestBackend::new(160, 48)).expect("terminal");
    let mut model = fleet_of(12);
    assert!(frame(&mut terminal, &mut model, &theme));
    assert_eq!(terminal.backend().buffer(), &fresh(&model, 160, 48));

    update(&mut model, reading(2, START_MS + 100, 93.0));
    assert!(frame(&mut terminal, &mut model, &theme));
    assert_eq!(terminal.backend().buffer(), &fresh(&model, 160, 48));

    // A wider figure widens its column: the other rows are laid out anew, not drawn as kept.
    update(
        &mut model,
        Event::Host {
            host: 3,
            event: HostEvent::Sample {
                at_ms: START_MS + 200,
                gpu: GpuSample {
                    memory_used_mib: Some(140_000),
                    power_draw_w: Some(1_234.5),
                    ..sample(100.0)
                },
            },
        },
    );
    assert!(frame(&mut terminal, &mut model, &theme));
    assert_eq!(terminal.backend().buffer(), &fresh(&model, 160, 48));

    model.fleet_cursor = 5;
    model.mark_dirty();
    assert!(frame(&mut terminal, &mut model, &theme));
    assert_eq!(terminal.backend().buffer(), &fresh(&model, 160, 48));

    terminal.backend_mut().resize(90, 20);
    terminal
        .resize(ratatui::layout::Rect::new(0, 0, 90, 20))
        .expect("resize");
    model.mark_dirty();
    assert!(frame(&mut terminal, &mut model, &theme));
    assert_eq!(terminal.backend().buffer(), &fresh(&model, 90, 20));
}
