//! Delivery to a sink that hangs, against a real HTTP server on loopback that accepts and never
//! answers (for one alert, or for all): the alerts queued after a hanging one are still tried
//! and delivered, a sink that keeps hanging is marked down, its queue is bounded with a count of
//! what was dropped, and at the end the alerts never delivered are named.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use gpufleet::alerts::{
    Alert, AlertState, DeliveryEvent, DeliveryOptions, Dispatcher, Money, Reporter, Sink,
};
use gpufleet::config::Config;
use gpufleet::diagnose::Severity;

/// A webhook on loopback: requests whose body holds `hang_on` (every request when empty) are
/// read and never answered; others get 204. The sockets it holds stay open while it lives.
struct Webhook {
    url: String,
    held: Arc<Mutex<Vec<TcpStream>>>,
}

impl Webhook {
    fn start(hang_on: &'static str) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let url = format!("http://{}/hook", listener.local_addr().expect("addr"));
        let held: Arc<Mutex<Vec<TcpStream>>> = Arc::default();
        let keep = Arc::clone(&held);
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let keep = Arc::clone(&keep);
                std::thread::spawn(move || serve(stream, hang_on, &keep));
            }
        });
        Self { url, held }
    }
}

impl Drop for Webhook {
    fn drop(&mut self) {
        if let Ok(mut held) = self.held.lock() {
            held.clear();
        }
    }
}

fn serve(mut stream: TcpStream, hang_on: &str, held: &Mutex<Vec<TcpStream>>) {
    let mut request = Vec::new();
    let mut buf = [0u8; 4096];
    // Headers, then the body its Content-Length says.
    loop {
        let Ok(n) = stream.read(&mut buf) else { return };
        if n == 0 {
            return;
        }
        request.extend_from_slice(&buf[..n]);
        let text = String::from_utf8_lossy(&request).to_string();
        if let Some(end) = text.find("\r\n\r\n") {
            let length = text[..end]
                .lines()
                .find_map(|l| {
                    l.to_ascii_lowercase()
                        .strip_prefix("content-length:")
                        .map(|v| v.trim().parse::<usize>().unwrap_or(0))
                })
                .unwrap_or(0);
            if request.len() >= end + 4 + length {
                break;
            }
        }
    }
    let text = String::from_utf8_lossy(&request);
    if hang_on.is_empty() || text.contains(hang_on) {
        held.lock().expect("held").push(stream);
        return;
    }
    let _ = stream.write_all(b"HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n");
}

fn sink(url: &str) -> Sink {
    let config: Config =
        toml::from_str("[[alerts]]\nname = \"hook\"\nkind = \"webhook\"\nurl_env = \"HOOK\"\n")
            .expect("config");
    let url = url.to_string();
    Sink::load(&config.alerts[0], &move |_| Some(url.clone())).expect("sink")
}

fn alert(host: &str, label: &str) -> Alert {
    Alert {
        host: host.to_string(),
        gpu: Some(0),
        label: label.to_string(),
        severity: Severity::Critical,
        summary: format!("{label} on {host}"),
        runbook: None,
        money: Money::default(),
        state: AlertState::Firing,
        at_ms: 1_700_000_000_000,
    }
}

fn dispatcher(url: &str, queue_len: usize) -> (Dispatcher, mpsc::Receiver<DeliveryEvent>) {
    let (tx, rx) = mpsc::channel();
    let tx = Mutex::new(tx);
    let reporter: Reporter = Arc::new(move |event| {
        let _ = tx.lock().expect("tx").send(event);
    });
    let options = DeliveryOptions {
        queue_len,
        ..DeliveryOptions::default()
    };
    let dispatcher = Dispatcher::start(vec![sink(url)], options, || 1_700_000_000_000, reporter);
    (dispatcher, rx)
}

/// Events until `until` matches one, or `within` passes (then panics with what came).
fn wait_for(
    rx: &mpsc::Receiver<DeliveryEvent>,
    within: Duration,
    until: impl Fn(&DeliveryEvent) -> bool,
) -> Vec<DeliveryEvent> {
    let deadline = Instant::now() + within;
    let mut seen = Vec::new();
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok(event) => {
                let done = until(&event);
                seen.push(event);
                if done {
                    return seen;
                }
            }
            Err(_) => panic!("not within {within:?}; events: {seen:?}"),
        }
    }
}

#[test]
fn an_alert_the_sink_hangs_on_does_not_hold_back_the_alerts_after_it() {
    let hook = Webhook::start("hangs-here");
    let (dispatcher, rx) = dispatcher(&hook.url, 64);
    let started = Instant::now();
    dispatcher.send(&alert("hangs-here", "gpu_lost"));
    std::thread::sleep(Duration::from_millis(100));
    dispatcher.send(&alert("answers", "xid_79"));
    // The first try of the hanging alert ends at the sink's 10 s timeout; the next alert is
    // tried then, not after all of the first one's retries.
    let seen = wait_for(
        &rx,
        Duration::from_secs(20),
        |e| matches!(e, DeliveryEvent::Delivered { alert, .. } if alert.contains("answers")),
    );
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "{:?}",
        started.elapsed()
    );
    // Why, in words a reader can act on: the sink gave no answer within its timeout.
    assert!(
        seen.iter().any(|e| matches!(
            e,
            DeliveryEvent::Retrying { alert, why, .. }
                if alert.contains("hangs-here") && why == "no answer within 10 s"
        )),
        "{seen:?}"
    );
    let (statuses, _) = dispatcher.finish(Duration::from_millis(300));
    assert_eq!(statuses[0].1.delivered, 1);
    assert!(
        statuses[0]
            .1
            .undelivered
            .iter()
            .any(|t| t.contains("hangs-here")),
        "{statuses:?}"
    );
}

#[test]
fn a_sink_that_never_answers_is_marked_down_its_queue_bounded_and_the_rest_named_at_the_end() {
    let hook = Webhook::start("");
    let (dispatcher, rx) = dispatcher(&hook.url, 3);
    for host in ["h1", "h2", "h3", "h4", "h5"] {
        dispatcher.send(&alert(host, "gpu_lost"));
    }
    let seen = wait_for(&rx, Duration::from_secs(30), |e| {
        matches!(e, DeliveryEvent::Down { .. })
    });
    let dropped = seen
        .iter()
        .filter(|e| matches!(e, DeliveryEvent::Dropped { .. }))
        .count();
    assert_eq!(dropped, 2, "{seen:?}");
    // The three queued alerts wait, each counted once (the one being tried again included).
    assert!(
        seen.iter()
            .any(|e| matches!(e, DeliveryEvent::Down { waiting: 3, .. })),
        "{seen:?}"
    );
    let down = dispatcher.statuses();
    assert!(down[0].1.down_since_ms.is_some(), "{down:?}");
    assert_eq!(down[0].1.dropped, 2);
    // Each queued alert had its own try before any was tried again.
    let tried: Vec<&str> = seen
        .iter()
        .filter_map(|e| match e {
            DeliveryEvent::Retrying { alert, .. } => Some(alert.as_str()),
            _ => None,
        })
        .collect();
    assert!(
        tried.len() >= 2 && tried[0].contains("h1") && tried[1].contains("h2"),
        "{tried:?}"
    );
    let (statuses, _) = dispatcher.finish(Duration::from_millis(300));
    let undelivered = &statuses[0].1.undelivered;
    assert_eq!(undelivered.len(), 3, "{undelivered:?}");
    for host in ["h1", "h2", "h3"] {
        assert!(
            undelivered.iter().any(|t| t.contains(host)),
            "{host}: {undelivered:?}"
        );
    }
}

#[test]
fn a_sink_nothing_listens_on_says_it_could_not_connect() {
    // A loopback port just freed: nothing listens there, so each connection is refused.
    let port = TcpListener::bind("127.0.0.1:0")
        .expect("bind")
        .local_addr()
        .expect("addr")
        .port();
    let (dispatcher, rx) = dispatcher(&format!("http://127.0.0.1:{port}/hook"), 64);
    dispatcher.send(&alert("h1", "gpu_lost"));
    let seen = wait_for(&rx, Duration::from_secs(20), |e| {
        matches!(e, DeliveryEvent::Retrying { .. })
    });
    assert!(
        matches!(seen.last(), Some(DeliveryEvent::Retrying { why, .. }) if why == "could not connect"),
        "{seen:?}"
    );
    let _ = dispatcher.finish(Duration::from_millis(100));
}
