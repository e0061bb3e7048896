//! The `/metrics` endpoint over real HTTP: a scrape gets the page the driver renders for it,
//! with the text format's content type; another path is 404; a port in use is a clear error.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use gpufleet::metrics::{Access, CONTENT_TYPE, MetricsBridge, MetricsServer};

#[test]
fn a_scrape_gets_a_freshly_rendered_page() {
    let bridge = MetricsBridge::default();
    let stop = Arc::new(AtomicBool::new(false));
    let renders = Arc::new(std::sync::atomic::AtomicU64::new(0));
    let driver = {
        let bridge = bridge.clone();
        let stop = Arc::clone(&stop);
        let renders = Arc::clone(&renders);
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                if bridge.wanted() {
                    let n = renders.fetch_add(1, Ordering::Relaxed) + 1;
                    bridge.publish(format!("# HELP x x\n# TYPE x gauge\nx {n}\n"));
                }
                std::thread::sleep(Duration::from_millis(5));
            }
        })
    };
    let server =
        MetricsServer::start("127.0.0.1:0", Access::Open, bridge, Arc::new(|| {})).expect("listen");
    let url = format!("http://{}", server.addr);
    let client = reqwest::blocking::Client::new();
    for expected in 1..=2 {
        let response = client.get(format!("{url}/metrics")).send().expect("scrape");
        assert_eq!(response.status().as_u16(), 200);
        assert_eq!(
            response.headers()["content-type"].to_str().expect("ascii"),
            CONTENT_TYPE
        );
        assert_eq!(
            response.text().expect("body"),
            format!("# HELP x x\n# TYPE x gauge\nx {expected}\n"),
            "each scrape is rendered afresh"
        );
    }
    let missing = client.get(format!("{url}/nope")).send().expect("get");
    assert_eq!(missing.status().as_u16(), 404);
    assert_eq!(
        renders.load(Ordering::Relaxed),
        2,
        "nothing is rendered without a scrape"
    );

    let taken = MetricsServer::start(
        &server.addr.to_string(),
        Access::Open,
        MetricsBridge::default(),
        Arc::new(|| {}),
    );
    let err = taken.err().expect("the port is in use");
    assert!(err.to_string().contains(&server.addr.to_string()), "{err}");

    server.stop();
    stop.store(true, Ordering::Relaxed);
    driver.join().expect("driver");
}
