//! `/metrics` over HTTP (the `tiny_http` crate) on a thread of its own. The page is rendered by
//! the driver that owns the fleet, on request: a scrape asks for a fresh page and waits for it
//! (at most [`RENDER_WAIT`]), so nothing is rendered between scrapes.

use rust_i18n::t;
use std::net::SocketAddr;
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use super::text::CONTENT_TYPE;

/// How long a scrape waits for the driver to render a fresh page before it gets the last one.
pub const RENDER_WAIT: Duration = Duration::from_millis(1_500);

#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error("{}", t!("metrics_error.serve", addr = .addr, message = .message))]
    Bind { addr: String, message: String },
    #[error("{}", t!("metrics_error.thread", error = .0))]
    Thread(#[from] std::io::Error),
}

#[derive(Debug, Default)]
struct Shared {
    /// Scrapes waiting for a page newer than `rendered`.
    wanted: u64,
    rendered: u64,
    page: String,
}

/// What the driver and the HTTP thread share: scrape requests one way, pages the other.
#[derive(Debug, Clone, Default)]
pub struct MetricsBridge {
    inner: Arc<(Mutex<Shared>, Condvar)>,
}

impl MetricsBridge {
    /// Whether a scrape is waiting for a page (the driver then calls [`Self::publish`]).
    pub fn wanted(&self) -> bool {
        let (lock, _) = &*self.inner;
        lock.lock()
            .map(|shared| shared.wanted > shared.rendered)
            .unwrap_or(false)
    }

    /// Hands a freshly rendered page to the waiting scrapes.
    pub fn publish(&self, page: String) {
        let (lock, cond) = &*self.inner;
        if let Ok(mut shared) = lock.lock() {
            shared.rendered = shared.wanted;
            shared.page = page;
            cond.notify_all();
        }
    }

    /// Asks for a page and waits for it; the last page when the driver is slow.
    fn fetch(&self, wake: &dyn Fn()) -> String {
        let (lock, cond) = &*self.inner;
        let Ok(mut shared) = lock.lock() else {
            return String::new();
        };
        shared.wanted += 1;
        let ticket = shared.wanted;
        drop(shared);
        wake();
        let Ok(shared) = lock.lock() else {
            return String::new();
        };
        let waited = cond.wait_timeout_while(shared, RENDER_WAIT, |s| s.rendered < ticket);
        match waited {
            Ok((shared, _)) => shared.page.clone(),
            Err(_) => String::new(),
        }
    }
}

/// The running server; dropping it does not stop it, [`Self::stop`] does.
pub struct MetricsServer {
    server: Arc<tiny_http::Server>,
    thread: Option<std::thread::JoinHandle<()>>,
    pub addr: SocketAddr,
}

impl MetricsServer {
    /// Listens on `addr`; `wake` nudges the driver when a scrape waits.
    pub fn start(
        addr: &str,
        bridge: MetricsBridge,
        wake: Arc<dyn Fn() + Send + Sync>,
    ) -> Result<Self, ServeError> {
        let server = tiny_http::Server::http(addr).map_err(|e| ServeError::Bind {
            addr: addr.to_string(),
            message: e.to_string(),
        })?;
        let bound = server
            .server_addr()
            .to_ip()
            .ok_or_else(|| ServeError::Bind {
                addr: addr.to_string(),
                message: t!("metrics_error.not_an_ip").into_owned(),
            })?;
        let server = Arc::new(server);
        let serving = Arc::clone(&server);
        let thread = std::thread::Builder::new()
            .name("metrics".to_string())
            .spawn(move || {
                for request in serving.incoming_requests() {
                    answer(request, &bridge, &*wake);
                }
            })?;
        Ok(Self {
            server,
            thread: Some(thread),
            addr: bound,
        })
    }

    /// Stops listening and waits for the thread.
    pub fn stop(mut self) {
        self.server.unblock();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn answer(request: tiny_http::Request, bridge: &MetricsBridge, wake: &dyn Fn()) {
    let path = request
        .url()
        .split('?')
        .next()
        .unwrap_or_default()
        .to_string();
    let get = matches!(
        request.method(),
        tiny_http::Method::Get | tiny_http::Method::Head
    );
    let (status, content_type, body) = match (get, path.as_str()) {
        (true, "/metrics") => (200, CONTENT_TYPE, bridge.fetch(wake)),
        (true, "/health") => (200, "text/plain; charset=utf-8", "ok\n".to_string()),
        (true, _) => (404, "text/plain; charset=utf-8", "not found\n".to_string()),
        (false, _) => (405, "text/plain; charset=utf-8", "GET only\n".to_string()),
    };
    let mut response = tiny_http::Response::from_string(body).with_status_code(status);
    if let Ok(header) = tiny_http::Header::from_bytes("Content-Type", content_type) {
        response.add_header(header);
    }
    // A scraper that hung up is not an error worth reporting.
    let _ = request.respond(response);
}
