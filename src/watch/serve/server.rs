//! `GET /v1/events` over HTTP (beside `GET /v1/report` and `POST /v1/actions`): the watcher's
//! fleet as a chunked NDJSON stream in the recording format (the header line with its version
//! first, then the state, then live lines), to a bearer token only; on the connection handling `/metrics` uses (bounded connections, idle and
//! header timeouts). A blank line goes out when nothing else has for [`HEARTBEAT`], so a quiet
//! fleet's stream is neither closed as idle nor mistaken by the console for a gone watcher.

use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::path::Path;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use http_body_util::{BodyExt, Full, Limited};
use hyper::body::{Bytes, Frame, Incoming};
use hyper::{Method, Request, Response, StatusCode, header};
use tokio::sync::mpsc;
use tokio::time::{Interval, MissedTickBehavior};

use crate::metrics::{Answer, Body, IDLE_TIMEOUT, MetricsServer, plain, unauthorized};

use super::actions::{self, Actions, Hands};
use super::hub::Hub;
use super::report::{self, Reports};
use super::tokens::{ServeTokens, SetupError, Tokens};

/// A blank line is sent after this long without a line.
pub const HEARTBEAT: Duration = Duration::from_secs(IDLE_TIMEOUT.as_secs() / 4);
/// The stream's content type.
pub const CONTENT_TYPE: &str = "application/x-ndjson";
/// The response header giving how many state lines follow the header line (what a one-shot
/// reader such as `snapshot --from` reads before it stops).
pub const STATE_LINES_HEADER: &str = "x-gpufleet-state-lines";
/// Bytes of waiting lines sent as one chunk at most.
const CHUNK_BYTES: usize = 64 << 10;
/// After a chunk, the lines that come within this long go out together in the next one: hosts
/// read at their own phases would otherwise each cost the watcher a write and a wake-up (200 a
/// second at 200 hosts), and the console draws telemetry at most every 100 ms anyway.
const GATHER: Duration = Duration::from_millis(50);

/// Where the stream is served and to whom, checked before anything connects.
#[derive(Clone)]
pub struct ServeEndpoint {
    pub listen: String,
    /// Replaced by a reload: a token taken out of the config is refused from then on.
    pub tokens: ServeTokens,
    /// HTTPS with the config's certificate and key; plain HTTP when `None`.
    pub tls: Option<tokio_rustls::TlsAcceptor>,
}

impl std::fmt::Debug for ServeEndpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServeEndpoint")
            .field("listen", &self.listen)
            .field("tokens", &self.tokens)
            .field("tls", &self.tls.is_some())
            .finish()
    }
}

impl ServeEndpoint {
    /// `listen` checked (an address off loopback only with TLS or `allow_plaintext`), the TLS
    /// certificate and key loaded and the tokens read.
    pub fn new(
        listen: &str,
        config: Option<&crate::config::ServeConfig>,
    ) -> Result<Self, SetupError> {
        let addr: SocketAddr = listen
            .parse()
            .map_err(|_| SetupError::BadAddress(listen.to_string()))?;
        let tls = match config.map(|c| (&c.tls_cert, &c.tls_key)) {
            Some((Some(cert), Some(key))) => Some(tls_acceptor(cert, key)?),
            Some((None, None)) | None => None,
            Some(_) => return Err(SetupError::TlsHalf),
        };
        let plaintext = config.is_some_and(|c| c.allow_plaintext);
        if !addr.ip().is_loopback() && tls.is_none() && !plaintext {
            return Err(SetupError::PlaintextOffLoopback(listen.to_string()));
        }
        let tokens = ServeTokens::new(Tokens::load(config)?);
        Ok(Self {
            listen: listen.to_string(),
            tokens,
            tls,
        })
    }
}

/// A TLS server for the certificate chain in `cert` and the private key in `key` (PEM files),
/// on rustls' ring provider with its safe default protocol versions.
fn tls_acceptor(cert: &Path, key: &Path) -> Result<tokio_rustls::TlsAcceptor, SetupError> {
    use rustls::pki_types::pem::PemObject;
    use rustls::pki_types::{CertificateDer, PrivateKeyDer};
    let bad = |path: &Path, error: String| SetupError::Tls {
        path: path.to_path_buf(),
        error,
    };
    let chain = CertificateDer::pem_file_iter(cert)
        .and_then(|certs| certs.collect::<Result<Vec<_>, _>>())
        .map_err(|e| bad(cert, e.to_string()))?;
    if chain.is_empty() {
        return Err(bad(cert, "no certificate in the file".to_string()));
    }
    let private = PrivateKeyDer::from_pem_file(key).map_err(|e| bad(key, e.to_string()))?;
    // ring, not aws-lc (whose C build the project does without); rustls marks ring's provider
    // deprecated only because it offers no post-quantum key exchange.
    #[allow(deprecated)]
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| bad(cert, e.to_string()))?
        .with_no_client_auth()
        .with_single_cert(chain, private)
        .map_err(|e| bad(key, e.to_string()))?;
    Ok(tokio_rustls::TlsAcceptor::from(Arc::new(config)))
}

/// Starts serving `hub` as `endpoint` says, running what consoles ask on hosts with `hands`;
/// the server's address with it.
pub fn start(
    endpoint: &ServeEndpoint,
    hub: Hub,
    hands: Option<Arc<dyn Hands>>,
    reports: Reports,
) -> Result<MetricsServer, SetupError> {
    let tokens = endpoint.tokens.clone();
    let actions = Actions::new(hands);
    let answer: Answer = Arc::new(move |request| {
        let tokens = tokens.current();
        let hub = hub.clone();
        let actions = actions.clone();
        let reports = reports.clone();
        Box::pin(async move { answer(request, &tokens, &hub, &actions, &reports).await })
    });
    let server =
        MetricsServer::listen_tls(&endpoint.listen, "serve", answer, endpoint.tls.clone())?;
    if !server.addr.ip().is_loopback() && endpoint.tls.is_none() {
        tracing::warn!(addr = %server.addr, "serving the fleet off loopback in PLAIN HTTP (allow_plaintext): tokens and the fleet cross the network unencrypted");
    }
    tracing::info!(addr = %server.addr, "serving the fleet to attached consoles");
    Ok(server)
}

async fn answer(
    request: Request<Incoming>,
    tokens: &Tokens,
    hub: &Hub,
    actions: &Actions,
    reports: &Reports,
) -> Response<Body> {
    let authorization = request
        .headers()
        .get(header::AUTHORIZATION)
        .map(|v| v.as_bytes());
    let Some(grant) = tokens.who(authorization) else {
        return unauthorized();
    };
    if request.uri().path() == "/v1/actions" && request.method() == Method::POST {
        if !grant.actions {
            return plain(
                StatusCode::FORBIDDEN,
                "this token may watch, not act (actions = false)\n",
            );
        }
        let who = grant.name.clone();
        let body = match Limited::new(request.into_body(), actions::MAX_BODY_BYTES)
            .collect()
            .await
        {
            Ok(body) => body.to_bytes(),
            Err(_) => return plain(StatusCode::BAD_REQUEST, "the request body is too long\n"),
        };
        let asked = match actions::parse(&body) {
            Ok(asked) => asked,
            Err(e) => return bad_request(&e),
        };
        let known = hub.knows(&asked.host);
        let actions = actions.clone();
        let outcome = tokio::task::spawn_blocking(move || actions.run(&who, &asked, known)).await;
        return match outcome {
            Ok(outcome) => json(
                StatusCode::from_u16(outcome.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
                &outcome,
            ),
            Err(_) => plain(
                StatusCode::INTERNAL_SERVER_ERROR,
                "the action did not finish\n",
            ),
        };
    }
    let get = matches!(*request.method(), Method::GET);
    match (get, request.uri().path()) {
        (true, "/v1/events") => {
            let subscription = hub.subscribe(&grant.name);
            let stream = EventStream {
                first: Some(subscription.first),
                live: subscription.live,
                beat: None,
                gather: None,
            };
            let mut response = Response::new(stream.boxed());
            let headers = response.headers_mut();
            headers.insert(
                header::CONTENT_TYPE,
                header::HeaderValue::from_static(CONTENT_TYPE),
            );
            headers.insert(
                STATE_LINES_HEADER,
                header::HeaderValue::from(subscription.state_lines),
            );
            response
        }
        (true, "/v1/report") => {
            let asked = match report::parse_query(request.uri().query().unwrap_or_default()) {
                Ok(asked) => asked,
                Err(e) => return bad_request(&e),
            };
            let known = hub.knows(&asked.host);
            if known {
                tracing::info!(host = ?asked.host, who = %grant.name, "a report asked for");
            }
            let answer = reports.answer(asked, known).await;
            json(
                StatusCode::from_u16(answer.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
                &answer,
            )
        }
        (true, "/health") => plain(StatusCode::OK, "ok\n"),
        (true, _) => plain(StatusCode::NOT_FOUND, "not found\n"),
        (false, _) => plain(StatusCode::METHOD_NOT_ALLOWED, "GET, or POST /v1/actions\n"),
    }
}

/// A request refused before anything is done: 400, and why.
fn bad_request(why: &impl std::fmt::Display) -> Response<Body> {
    json(
        StatusCode::BAD_REQUEST,
        &serde_json::json!({ "error": why.to_string() }),
    )
}

/// A JSON answer.
fn json(status: StatusCode, value: &impl serde::Serialize) -> Response<Body> {
    let mut text = serde_json::to_vec(value).unwrap_or_default();
    text.push(b'\n');
    let mut response = Response::new(Full::new(Bytes::from(text)).boxed());
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static("application/json"),
    );
    response
}

/// One console's stream: the first block, then its queue's lines as they come, a blank line
/// when none has come for [`HEARTBEAT`]; it ends when the hub drops the console.
struct EventStream {
    first: Option<Bytes>,
    live: mpsc::Receiver<Bytes>,
    /// Made on the first poll, inside the server's runtime.
    beat: Option<Interval>,
    /// Until when lines wait to go out together after the last chunk ([`GATHER`]).
    gather: Option<Pin<Box<tokio::time::Sleep>>>,
}

impl hyper::body::Body for EventStream {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        let this = &mut *self;
        if let Some(first) = this.first.take() {
            return Poll::Ready(Some(Ok(Frame::data(first))));
        }
        if let Some(gather) = &mut this.gather {
            if gather.as_mut().poll(cx).is_pending() {
                return Poll::Pending;
            }
            this.gather = None;
        }
        let beat = this.beat.get_or_insert_with(|| {
            let mut beat =
                tokio::time::interval_at(tokio::time::Instant::now() + HEARTBEAT, HEARTBEAT);
            beat.set_missed_tick_behavior(MissedTickBehavior::Delay);
            beat
        });
        match this.live.poll_recv(cx) {
            Poll::Ready(Some(lines)) => {
                beat.reset();
                if lines.len() >= CHUNK_BYTES {
                    this.gather = Some(Box::pin(tokio::time::sleep(GATHER)));
                    return Poll::Ready(Some(Ok(Frame::data(lines))));
                }
                // What else waits goes in the same chunk.
                let mut chunk = lines.to_vec();
                while chunk.len() < CHUNK_BYTES {
                    match this.live.try_recv() {
                        Ok(more) => chunk.extend_from_slice(&more),
                        Err(_) => break,
                    }
                }
                this.gather = Some(Box::pin(tokio::time::sleep(GATHER)));
                Poll::Ready(Some(Ok(Frame::data(Bytes::from(chunk)))))
            }
            Poll::Ready(None) => Poll::Ready(None),
            Poll::Pending => match beat.poll_tick(cx) {
                Poll::Ready(_) => Poll::Ready(Some(Ok(Frame::data(Bytes::from_static(b"\n"))))),
                Poll::Pending => Poll::Pending,
            },
        }
    }
}
