//! `/metrics` over HTTP: hyper's HTTP/1 server on a tokio runtime of its own thread. The page
//! is rendered by the driver that owns the fleet, on request: a scrape asks for a fresh page
//! and waits for it (at most [`RENDER_WAIT`]), so nothing is rendered between scrapes.
//!
//! The server cannot be worn down by connections: at most [`MAX_CONNECTIONS`] are kept (a new
//! one closes the idlest beyond that), a connection is closed after [`IDLE_TIMEOUT`] without a
//! byte either way (while no request of it is being answered) and after [`HEADER_TIMEOUT`] of sending a request's headers, and a failed
//! accept (no descriptor left) is logged and tried again rather than ending the listener. Off
//! loopback it answers only a bearer token unless told to serve anyone ([`Access`]).
//!
//! The connection handling and the bearer check are shared: the watcher's event stream for
//! attached consoles (`crate::watch::serve`) listens through [`MetricsServer::listen`] with answers of
//! its own, and checks its tokens with [`bearer_matches`].

use rust_i18n::t;
use std::collections::HashMap;
use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full};
use hyper::body::{Bytes, Incoming};
use hyper::{Method, Request, Response, StatusCode, header};
use subtle::ConstantTimeEq;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio::sync::{Notify, watch};

use super::text::CONTENT_TYPE;

/// How long a scrape waits for the driver to render a fresh page before it gets the last one.
pub const RENDER_WAIT: Duration = Duration::from_millis(1_500);
/// Connections kept at once; a new one beyond closes the idlest.
pub const MAX_CONNECTIONS: usize = 64;
/// A connection with no byte read or written for this long is closed.
pub const IDLE_TIMEOUT: Duration = Duration::from_secs(10);
/// A request's headers must have arrived this long after they began.
pub const HEADER_TIMEOUT: Duration = Duration::from_secs(5);
/// How long the accept loop rests after a failed accept (no descriptor left, say).
const ACCEPT_PAUSE: Duration = Duration::from_millis(100);
/// A failed accept is logged at most this often.
const ACCEPT_LOG_EVERY: Duration = Duration::from_secs(10);

#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error("{}", t!("metrics_error.serve", addr = .addr, message = .message))]
    Bind { addr: String, message: String },
    #[error("{}", t!("metrics_error.thread", error = .0))]
    Thread(#[from] std::io::Error),
    /// A listener off loopback with neither a token nor `allow_unauthenticated`.
    #[error("{}", t!("metrics_access.open_off_loopback", addr = .0))]
    OpenOffLoopback(String),
    /// `token_env` names a variable that is not set (or not Unicode).
    #[error("{}", t!("metrics_access.token_unset", name = .0))]
    TokenUnset(String),
    #[error("{}", t!("metrics_access.token_empty", name = .0))]
    TokenEmpty(String),
}

/// Who may read `/metrics`.
#[derive(Clone, PartialEq, Eq)]
pub enum Access {
    /// Anyone who can reach the address.
    Open,
    /// Only a request with `Authorization: Bearer <token>`.
    Bearer(Vec<u8>),
}

impl std::fmt::Debug for Access {
    // The token never reaches a log or a panic message.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Open => f.write_str("Open"),
            Self::Bearer(_) => f.write_str("Bearer(..)"),
        }
    }
}

impl Access {
    /// The access for a listener on `listen`: the token read from the variable `token_env`
    /// names, if any; with none, loopback is open and any other address needs
    /// `allow_unauthenticated`.
    pub fn for_listen(
        listen: &SocketAddr,
        token_env: Option<&str>,
        allow_unauthenticated: bool,
    ) -> Result<Self, ServeError> {
        if let Some(name) = token_env {
            let token = std::env::var(name).map_err(|_| ServeError::TokenUnset(name.into()))?;
            let token = token.trim();
            if token.is_empty() {
                return Err(ServeError::TokenEmpty(name.into()));
            }
            return Ok(Self::Bearer(token.as_bytes().to_vec()));
        }
        if listen.ip().is_loopback() || allow_unauthenticated {
            Ok(Self::Open)
        } else {
            Err(ServeError::OpenOffLoopback(listen.to_string()))
        }
    }

    /// Whether a request with this `Authorization` header may be answered; the token is
    /// compared in constant time.
    fn admits(&self, authorization: Option<&[u8]>) -> bool {
        match self {
            Self::Open => true,
            Self::Bearer(token) => bearer_matches(authorization, token),
        }
    }
}

/// Whether an `Authorization` header carries `Bearer <token>`, compared in constant time.
pub fn bearer_matches(authorization: Option<&[u8]>, token: &[u8]) -> bool {
    authorization
        .and_then(|value| value.strip_prefix(b"Bearer "))
        .is_some_and(|given| bool::from(given.ct_eq(token)))
}

/// A response's body: whole (a page) or streamed (the event stream).
pub type Body = BoxBody<Bytes, Infallible>;

/// How a server answers each request that reaches it.
pub type Answer = Arc<
    dyn Fn(Request<Incoming>) -> Pin<Box<dyn Future<Output = Response<Body>> + Send>> + Send + Sync,
>;

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

/// Where `/metrics` is served and to whom.
#[derive(Debug, Clone)]
pub struct Endpoint {
    /// `ADDRESS:PORT`.
    pub listen: String,
    pub access: Access,
}

/// What every `/metrics` request is answered with.
struct Answerer {
    bridge: MetricsBridge,
    wake: Arc<dyn Fn() + Send + Sync>,
    access: Access,
}

/// The running server; dropping it does not stop it, [`Self::stop`] does.
pub struct MetricsServer {
    stop: watch::Sender<bool>,
    thread: Option<std::thread::JoinHandle<()>>,
    pub addr: SocketAddr,
}

impl MetricsServer {
    /// Listens on `addr`, answering as `access` says; `wake` nudges the driver when a scrape
    /// waits. A listener off loopback is logged as a warning, with a token or without.
    pub fn start(
        addr: &str,
        access: Access,
        bridge: MetricsBridge,
        wake: Arc<dyn Fn() + Send + Sync>,
    ) -> Result<Self, ServeError> {
        let answerer = Arc::new(Answerer {
            bridge,
            wake,
            access: access.clone(),
        });
        let answer: Answer = Arc::new(move |request| {
            let answerer = Arc::clone(&answerer);
            Box::pin(answer(request, answerer))
        });
        let server = Self::listen(addr, "metrics", answer)?;
        if !server.addr.ip().is_loopback() {
            match access {
                Access::Bearer(_) => {
                    tracing::warn!(addr = %server.addr, "serving /metrics off loopback, to a bearer token")
                }
                Access::Open => {
                    tracing::warn!(addr = %server.addr, "serving /metrics off loopback WITHOUT authentication (allow_unauthenticated)")
                }
            }
        }
        Ok(server)
    }

    /// Listens on `addr` on a thread named `what`, answering every request with `answer`; the
    /// connections bounded and timed out as for `/metrics`.
    pub fn listen(addr: &str, what: &'static str, answer: Answer) -> Result<Self, ServeError> {
        Self::listen_tls(addr, what, answer, None)
    }

    /// As [`Self::listen`], each connection first taken through a TLS handshake with `tls`
    /// when given (one not done within [`HEADER_TIMEOUT`] is closed).
    pub fn listen_tls(
        addr: &str,
        what: &'static str,
        answer: Answer,
        tls: Option<tokio_rustls::TlsAcceptor>,
    ) -> Result<Self, ServeError> {
        let bind_error = |message: String| ServeError::Bind {
            addr: addr.to_string(),
            message,
        };
        let listener = std::net::TcpListener::bind(addr).map_err(|e| bind_error(e.to_string()))?;
        let bound = listener
            .local_addr()
            .map_err(|e| bind_error(e.to_string()))?;
        listener
            .set_nonblocking(true)
            .map_err(|e| bind_error(e.to_string()))?;
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .max_blocking_threads(8)
            .build()?;
        let (stop, stopped) = watch::channel(false);
        let thread = std::thread::Builder::new()
            .name(what.to_string())
            .spawn(move || {
                runtime.block_on(async move {
                    match tokio::net::TcpListener::from_std(listener) {
                        Ok(listener) => accept_loop(listener, answer, tls, stopped, what).await,
                        Err(e) => tracing::error!(error = %e, server = what, "cannot listen"),
                    }
                });
            })?;
        Ok(Self {
            stop,
            thread: Some(thread),
            addr: bound,
        })
    }

    /// Whether the server still runs (its thread has not ended).
    pub fn alive(&self) -> bool {
        self.thread.as_ref().is_some_and(|t| !t.is_finished())
    }

    /// Ends the server as a crash would, keeping the handle (for the watcher's tests).
    #[cfg(test)]
    pub(crate) fn end_thread(&mut self) {
        let _ = self.stop.send(true);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }

    /// Stops listening, closes the connections and waits for the thread.
    pub fn stop(mut self) {
        let _ = self.stop.send(true);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// One open connection, as the accept loop sees it.
struct Open {
    /// When a byte last went either way, in ms since the server started.
    last: Arc<AtomicU64>,
    close: Arc<Notify>,
}

type Registry = Arc<Mutex<HashMap<u64, Open>>>;

async fn accept_loop(
    listener: tokio::net::TcpListener,
    answer: Answer,
    tls: Option<tokio_rustls::TlsAcceptor>,
    mut stopped: watch::Receiver<bool>,
    what: &'static str,
) {
    let epoch = Instant::now();
    let registry: Registry = Arc::default();
    let mut next_id = 0u64;
    let mut last_logged: Option<Instant> = None;
    loop {
        let accepted = tokio::select! {
            biased;
            _ = stopped.changed() => return,
            accepted = listener.accept() => accepted,
        };
        let stream = match accepted {
            Ok((stream, _)) => stream,
            Err(e) => {
                // Out of descriptors (or another passing failure): the connections' own
                // timeouts free them; the listener stays.
                if last_logged.is_none_or(|at| at.elapsed() >= ACCEPT_LOG_EVERY) {
                    tracing::warn!(error = %e, server = what, "cannot accept a connection now");
                    last_logged = Some(Instant::now());
                }
                tokio::time::sleep(ACCEPT_PAUSE).await;
                continue;
            }
        };
        next_id += 1;
        let id = next_id;
        let last = Arc::new(AtomicU64::new(millis_since(epoch)));
        let close = Arc::new(Notify::new());
        if let Ok(mut open) = registry.lock() {
            while open.len() >= MAX_CONNECTIONS {
                let idlest = open
                    .iter()
                    .min_by_key(|(_, c)| c.last.load(Ordering::Relaxed))
                    .map(|(id, _)| *id);
                let Some(idlest) = idlest else { break };
                if let Some(conn) = open.remove(&idlest) {
                    conn.close.notify_one();
                }
            }
            open.insert(
                id,
                Open {
                    last: Arc::clone(&last),
                    close: Arc::clone(&close),
                },
            );
        }
        let answer = Arc::clone(&answer);
        let stopped = stopped.clone();
        let registry = Arc::clone(&registry);
        let Some(tls) = tls.clone() else {
            let io = Activity {
                inner: stream,
                last,
                epoch,
            };
            tokio::spawn(serve_connection(io, answer, close, stopped, registry, id));
            continue;
        };
        tokio::spawn(async move {
            match tokio::time::timeout(HEADER_TIMEOUT, tls.accept(stream)).await {
                Ok(Ok(stream)) => {
                    let io = Activity {
                        inner: stream,
                        last,
                        epoch,
                    };
                    serve_connection(io, answer, close, stopped, registry, id).await;
                }
                // A failed or slow handshake: the connection is closed, nothing answered.
                _ => {
                    if let Ok(mut open) = registry.lock() {
                        open.remove(&id);
                    }
                }
            }
        });
    }
}

async fn serve_connection<S>(
    io: Activity<S>,
    answer: Answer,
    close: Arc<Notify>,
    mut stopped: watch::Receiver<bool>,
    registry: Registry,
    id: u64,
) where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let last = Arc::clone(&io.last);
    let epoch = io.epoch;
    // A request being answered (an action the watcher runs for a minute) is not idleness.
    let answering = Arc::new(AtomicU64::new(0));
    let busy = Arc::clone(&answering);
    let service = hyper::service::service_fn(move |request| {
        let answered = answer(request);
        let busy = Arc::clone(&busy);
        async move {
            busy.fetch_add(1, Ordering::Relaxed);
            let response = answered.await;
            busy.fetch_sub(1, Ordering::Relaxed);
            Ok::<_, Infallible>(response)
        }
    });
    let connection = hyper::server::conn::http1::Builder::new()
        .timer(hyper_util::rt::TokioTimer::new())
        .header_read_timeout(HEADER_TIMEOUT)
        .serve_connection(hyper_util::rt::TokioIo::new(io), service);
    tokio::pin!(connection);
    let mut check = tokio::time::interval(Duration::from_secs(1));
    loop {
        tokio::select! {
            _ = connection.as_mut() => break,
            () = close.notified() => break,
            _ = stopped.changed() => break,
            _ = check.tick() => {
                let idle = millis_since(epoch).saturating_sub(last.load(Ordering::Relaxed));
                if idle >= IDLE_TIMEOUT.as_millis() as u64
                    && answering.load(Ordering::Relaxed) == 0
                {
                    break;
                }
            }
        }
    }
    if let Ok(mut open) = registry.lock() {
        open.remove(&id);
    }
}

async fn answer(request: Request<Incoming>, answerer: Arc<Answerer>) -> Response<Body> {
    let authorization = request
        .headers()
        .get(header::AUTHORIZATION)
        .map(|v| v.as_bytes());
    if !answerer.access.admits(authorization) {
        return unauthorized();
    }
    let get = matches!(*request.method(), Method::GET | Method::HEAD);
    match (get, request.uri().path()) {
        (true, "/metrics") => {
            let bridge = answerer.bridge.clone();
            let wake = Arc::clone(&answerer.wake);
            let page = tokio::task::spawn_blocking(move || bridge.fetch(&*wake))
                .await
                .unwrap_or_default();
            let mut response = Response::new(Full::new(Bytes::from(page)).boxed());
            response.headers_mut().insert(
                header::CONTENT_TYPE,
                header::HeaderValue::from_static(CONTENT_TYPE),
            );
            response
        }
        (true, "/health") => plain(StatusCode::OK, "ok\n"),
        (true, _) => plain(StatusCode::NOT_FOUND, "not found\n"),
        (false, _) => plain(StatusCode::METHOD_NOT_ALLOWED, "GET only\n"),
    }
}

/// 401: the status and the scheme to use, nothing else.
pub fn unauthorized() -> Response<Body> {
    let mut response = Response::new(Full::new(Bytes::new()).boxed());
    *response.status_mut() = StatusCode::UNAUTHORIZED;
    response.headers_mut().insert(
        header::WWW_AUTHENTICATE,
        header::HeaderValue::from_static("Bearer"),
    );
    response
}

/// A short plain-text answer.
pub fn plain(status: StatusCode, body: &'static str) -> Response<Body> {
    let mut response = Response::new(Full::new(Bytes::from_static(body.as_bytes())).boxed());
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    response
}

fn millis_since(epoch: Instant) -> u64 {
    epoch.elapsed().as_millis() as u64
}

/// A connection's socket (or TLS stream over it) that notes when a byte last went either way.
struct Activity<S = TcpStream> {
    inner: S,
    last: Arc<AtomicU64>,
    epoch: Instant,
}

impl<S> Activity<S> {
    fn touch(&self) {
        self.last.store(millis_since(self.epoch), Ordering::Relaxed);
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for Activity<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.inner).poll_read(cx, buf);
        if matches!(polled, Poll::Ready(Ok(()))) && buf.filled().len() > before {
            self.touch();
        }
        polled
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for Activity<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        let polled = Pin::new(&mut self.inner).poll_write(cx, data);
        if matches!(polled, Poll::Ready(Ok(n)) if n > 0) {
            self.touch();
        }
        polled
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bearer_token_admits_only_itself() {
        let access = Access::Bearer(b"s3cret".to_vec());
        assert!(access.admits(Some(b"Bearer s3cret")));
        assert!(!access.admits(Some(b"Bearer s3cre")));
        assert!(!access.admits(Some(b"Bearer s3cretx")));
        assert!(!access.admits(Some(b"Basic s3cret")));
        assert!(!access.admits(None));
        assert!(Access::Open.admits(None));
        assert_eq!(format!("{access:?}"), "Bearer(..)");
    }

    #[test]
    fn off_loopback_needs_a_token_or_a_word_that_anyone_may_read() {
        let wide: SocketAddr = "0.0.0.0:9400".parse().expect("addr");
        let local: SocketAddr = "127.0.0.1:9400".parse().expect("addr");
        assert!(matches!(
            Access::for_listen(&wide, None, false),
            Err(ServeError::OpenOffLoopback(_))
        ));
        assert_eq!(
            Access::for_listen(&wide, None, true).ok(),
            Some(Access::Open)
        );
        assert_eq!(
            Access::for_listen(&local, None, false).ok(),
            Some(Access::Open)
        );
        assert!(matches!(
            Access::for_listen(&local, Some("GPUFLEET_TEST_SURELY_UNSET_VAR"), false),
            Err(ServeError::TokenUnset(_))
        ));
    }
}
