//! A provider's API on loopback (tiny_http): every request is recorded (method, path, query,
//! headers, body) and answered by the test's handler with a status, headers and a body, so a
//! test can check each request against the provider's documentation and answer as the
//! provider does, failures included.

// Each test file uses a different part of the server.
#![allow(dead_code)]

use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Instant;

#[derive(Debug, Clone)]
pub struct Seen {
    pub method: String,
    /// The path without the query.
    pub path: String,
    /// The query pairs, decoded.
    pub query: Vec<(String, String)>,
    pub headers: Vec<(String, String)>,
    pub body: String,
    pub at: Instant,
}

impl Seen {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    pub fn query(&self, key: &str) -> Option<&str> {
        self.query
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.body).unwrap_or(serde_json::Value::Null)
    }
}

#[derive(Debug, Clone)]
pub struct Reply {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

/// `status` with a JSON body.
pub fn json(status: u16, body: &str) -> Reply {
    Reply {
        status,
        headers: vec![("Content-Type".into(), "application/json".into())],
        body: body.to_string(),
    }
}

/// `status` with a body of another type (`text/html`, `text/plain`).
pub fn typed(status: u16, content_type: &str, body: &str) -> Reply {
    Reply {
        status,
        headers: vec![("Content-Type".into(), content_type.into())],
        body: body.to_string(),
    }
}

impl Reply {
    pub fn with_header(mut self, key: &str, value: &str) -> Self {
        self.headers.push((key.into(), value.into()));
        self
    }
}

type Handler = dyn Fn(&Seen, usize) -> Reply + Send + Sync;

pub struct Server {
    pub base_url: String,
    seen: Arc<Mutex<Vec<Seen>>>,
}

impl Server {
    /// Answers the n-th request (from 0) with `handler(request, n)`.
    pub fn start(handler: impl Fn(&Seen, usize) -> Reply + Send + Sync + 'static) -> Self {
        let server = tiny_http::Server::http("127.0.0.1:0").unwrap();
        let base_url = format!("http://{}", server.server_addr().to_ip().unwrap());
        let seen = Arc::new(Mutex::new(Vec::new()));
        let log = Arc::clone(&seen);
        let handler: Arc<Handler> = Arc::new(handler);
        thread::spawn(move || {
            for mut request in server.incoming_requests() {
                let mut body = String::new();
                let _ = request.as_reader().read_to_string(&mut body);
                let url = request.url().to_string();
                let (path, query) = url.split_once('?').unwrap_or((url.as_str(), ""));
                let query = reqwest_like_pairs(query);
                let seen = Seen {
                    method: request.method().as_str().to_string(),
                    path: path.to_string(),
                    query,
                    headers: request
                        .headers()
                        .iter()
                        .map(|h| {
                            (
                                h.field.as_str().as_str().to_string(),
                                h.value.as_str().to_string(),
                            )
                        })
                        .collect(),
                    body,
                    at: Instant::now(),
                };
                let index = {
                    let mut log = log.lock().unwrap();
                    log.push(seen.clone());
                    log.len() - 1
                };
                let reply = handler(&seen, index);
                let mut response =
                    tiny_http::Response::from_string(reply.body).with_status_code(reply.status);
                for (key, value) in reply.headers {
                    let header =
                        tiny_http::Header::from_bytes(key.as_bytes(), value.as_bytes()).unwrap();
                    response.add_header(header);
                }
                let _ = request.respond(response);
            }
        });
        Self { base_url, seen }
    }

    pub fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }
}

/// `a=1&b=%22x%22` decoded (`+` is a space, `%XX` a byte).
fn reqwest_like_pairs(query: &str) -> Vec<(String, String)> {
    query
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|pair| {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            (decode(k), decode(v))
        })
        .collect()
}

fn decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < bytes.len() => {
                let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).unwrap_or("");
                match u8::from_str_radix(hex, 16) {
                    Ok(b) => {
                        out.push(b);
                        i += 2;
                    }
                    Err(_) => out.push(b'%'),
                }
            }
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}
