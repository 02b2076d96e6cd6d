//! The HTTP side: `tiny_http` worker threads that check each request, serve
//! the page's embedded files themselves, and hand API requests to the
//! simulation through a channel.
//!
//! The workers never touch the world. For an API request a worker sends a
//! `Pending` (the parsed request and a reply channel) to the simulation
//! thread, which answers it between frames (`Inspector::serve_pending`),
//! and waits for the answer up to a timeout (then 503). The JSON is turned
//! into text on the worker, off the frame.
//!
//! Checks, before anything is parsed or queued:
//! - the request target is at most [`MAX_TARGET_BYTES`], the body at most
//!   [`MAX_BODY_BYTES`] (413; a longer body is not read);
//! - when the server is bound to loopback, the `Host` header must name a
//!   loopback host (`127.0.0.1`, `localhost`, `[::1]`), so a page on
//!   another site cannot reach it through DNS rebinding;
//! - a request that changes something (any method but GET/HEAD) with an
//!   `Origin` header must come from the inspector's own origin, so another
//!   site's page cannot pause or edit the world (403).

use crate::assets;
use crate::error::{ApiError, InspectError};
use crate::parse::{parse_target, MAX_TARGET_BYTES};
use crate::route::{ApiRequest, Method};
use serde_json::Value;
use std::io::Read;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

/// The largest request body accepted, in bytes.
pub const MAX_BODY_BYTES: usize = 64 * 1024;
/// Worker threads accepting requests.
const WORKERS: usize = 2;
/// How often an idle worker checks whether the server is stopping.
const POLL: Duration = Duration::from_millis(200);

/// A status and a JSON body.
pub(crate) type Reply = (u16, Value);

/// An API request waiting for the simulation, and where to send the answer.
pub(crate) struct Pending {
    pub request: ApiRequest,
    pub reply: mpsc::SyncSender<Reply>,
}

/// The running server: its address and its workers, stopped on drop.
pub(crate) struct HttpServer {
    server: Arc<tiny_http::Server>,
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    workers: Vec<JoinHandle<()>>,
}

impl std::fmt::Debug for HttpServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpServer")
            .field("addr", &self.addr)
            .finish()
    }
}

/// What every worker shares.
struct Shared {
    requests: mpsc::Sender<Pending>,
    addr: SocketAddr,
    reply_timeout: Duration,
}

impl HttpServer {
    /// Binds `addr` and starts the workers, which send API requests to
    /// `requests`.
    pub fn start(
        addr: SocketAddr,
        requests: mpsc::Sender<Pending>,
        reply_timeout: Duration,
    ) -> Result<Self, InspectError> {
        let server = tiny_http::Server::http(addr).map_err(|e| InspectError::Bind {
            addr: addr.to_string(),
            message: e.to_string(),
        })?;
        let bound = server
            .server_addr()
            .to_ip()
            .ok_or_else(|| InspectError::Bind {
                addr: addr.to_string(),
                message: "not an IP socket".into(),
            })?;
        let server = Arc::new(server);
        let stop = Arc::new(AtomicBool::new(false));
        let shared = Arc::new(Shared {
            requests,
            addr: bound,
            reply_timeout,
        });
        let mut workers = Vec::with_capacity(WORKERS);
        for i in 0..WORKERS {
            let (srv, halt, sh) = (server.clone(), stop.clone(), shared.clone());
            let worker = std::thread::Builder::new()
                .name(format!("doecs-inspect-{i}"))
                .spawn(move || work(&srv, &halt, &sh));
            match worker {
                Ok(w) => workers.push(w),
                Err(e) => {
                    let partial = HttpServer {
                        server,
                        addr: bound,
                        stop,
                        workers,
                    };
                    drop(partial);
                    return Err(InspectError::Thread(e));
                }
            }
        }
        Ok(HttpServer {
            server,
            addr: bound,
            stop,
            workers,
        })
    }

    /// The address the server is bound to (the real port when asked for 0).
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Release);
        for _ in &self.workers {
            self.server.unblock();
        }
        for w in self.workers.drain(..) {
            let _ = w.join();
        }
    }
}

/// A worker: accept, answer, repeat until stopped.
fn work(server: &tiny_http::Server, stop: &AtomicBool, shared: &Shared) {
    while !stop.load(Ordering::Acquire) {
        match server.recv_timeout(POLL) {
            Ok(Some(request)) => answer(request, shared),
            Ok(None) => {}
            // The listener failed; nothing more will arrive.
            Err(_) => return,
        }
    }
}

fn header(name: &str, value: &str) -> Option<tiny_http::Header> {
    tiny_http::Header::from_bytes(name.as_bytes(), value.as_bytes()).ok()
}

/// Sends `body` with `status` and `content_type`, and the headers every
/// answer carries.
fn send(request: tiny_http::Request, status: u16, content_type: &str, body: Vec<u8>) {
    let mut response = tiny_http::Response::from_data(body).with_status_code(status);
    for h in [
        header("Content-Type", content_type),
        header("Cache-Control", "no-store"),
        header("X-Content-Type-Options", "nosniff"),
        // Everything the page loads comes from this server.
        header(
            "Content-Security-Policy",
            "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'",
        ),
    ]
    .into_iter()
    .flatten()
    {
        response.add_header(h);
    }
    // The client may have gone; nothing to do about it.
    let _ = request.respond(response);
}

fn send_json(request: tiny_http::Request, (status, body): Reply) {
    let text = serde_json::to_vec(&body).unwrap_or_else(|_| b"{}".to_vec());
    send(request, status, "application/json; charset=utf-8", text);
}

fn send_error(request: tiny_http::Request, e: &ApiError) {
    send_json(request, (e.status, e.to_json()));
}

/// The value of header `name`.
fn header_value<'r>(request: &'r tiny_http::Request, name: &str) -> Option<&'r str> {
    request
        .headers()
        .iter()
        .find(|h| h.field.as_str().as_str().eq_ignore_ascii_case(name))
        .map(|h| h.value.as_str())
}

/// Whether `host` (a `Host` header) names a loopback host.
pub(crate) fn is_loopback_host(host: &str) -> bool {
    let name = if let Some(rest) = host.strip_prefix('[') {
        rest.split(']').next().unwrap_or("")
    } else {
        host.rsplit_once(':').map_or(host, |(h, _)| h)
    };
    name.eq_ignore_ascii_case("localhost")
        || name
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// Whether `origin` (an `Origin` header) is the inspector's own, given the
/// request's `host`.
pub(crate) fn same_origin(origin: &str, host: &str) -> bool {
    origin
        .strip_prefix("http://")
        .is_some_and(|o| o.eq_ignore_ascii_case(host))
}

/// The checks of the module docs; `Err` is the answer to send instead.
fn check(request: &tiny_http::Request, shared: &Shared) -> Result<Method, ApiError> {
    if request.url().len() > MAX_TARGET_BYTES {
        return Err(ApiError::new(
            414,
            format!("the request target is longer than {MAX_TARGET_BYTES} bytes"),
        ));
    }
    let host = header_value(request, "Host").unwrap_or("");
    if shared.addr.ip().is_loopback() && !is_loopback_host(host) {
        return Err(ApiError::forbidden(
            "the inspector answers only requests addressed to a loopback host (127.0.0.1, localhost)",
        ));
    }
    let method = match request.method() {
        tiny_http::Method::Get | tiny_http::Method::Head => Method::Get,
        tiny_http::Method::Post => Method::Post,
        tiny_http::Method::Put => Method::Put,
        tiny_http::Method::Delete => Method::Delete,
        _ => Method::Other,
    };
    if method != Method::Get {
        if let Some(origin) = header_value(request, "Origin") {
            if !same_origin(origin, host) {
                return Err(ApiError::forbidden(
                    "cross-origin requests may only read; this one came from another origin",
                ));
            }
        }
    }
    if request.body_length().unwrap_or(0) > MAX_BODY_BYTES {
        return Err(ApiError::too_large(format!(
            "the body is longer than {MAX_BODY_BYTES} bytes"
        )));
    }
    Ok(method)
}

/// Reads the body, at most [`MAX_BODY_BYTES`] of it.
fn read_body(request: &mut tiny_http::Request) -> Result<Vec<u8>, ApiError> {
    let mut body = Vec::new();
    request
        .as_reader()
        .take(MAX_BODY_BYTES as u64 + 1)
        .read_to_end(&mut body)
        .map_err(|e| ApiError::bad_request(format!("cannot read the body: {e}")))?;
    if body.len() > MAX_BODY_BYTES {
        return Err(ApiError::too_large(format!(
            "the body is longer than {MAX_BODY_BYTES} bytes"
        )));
    }
    Ok(body)
}

/// Answers one request: a file of the page, or an API answer from the
/// simulation, or an error.
fn answer(mut request: tiny_http::Request, shared: &Shared) {
    let method = match check(&request, shared) {
        Ok(m) => m,
        Err(e) => return send_error(request, &e),
    };
    let target = match parse_target(request.url()) {
        Ok(t) => t,
        Err(e) => return send_error(request, &e.into()),
    };
    if target.path.first().map(String::as_str) != Some("api") {
        if method != Method::Get {
            return send_error(
                request,
                &ApiError::method_not_allowed(method.as_str(), "a page file"),
            );
        }
        return match assets::find(&target.path) {
            Some(asset) => send(request, 200, asset.content_type, asset.bytes.to_vec()),
            None => send_error(request, &ApiError::not_found("no such page file")),
        };
    }
    let body = match read_body(&mut request) {
        Ok(b) => b,
        Err(e) => return send_error(request, &e),
    };
    let (reply, answer) = mpsc::sync_channel(1);
    let pending = Pending {
        request: ApiRequest {
            method,
            target,
            body,
        },
        reply,
    };
    if shared.requests.send(pending).is_err() {
        return send_error(
            request,
            &ApiError::unavailable("the simulation has stopped"),
        );
    }
    match answer.recv_timeout(shared.reply_timeout) {
        Ok(reply) => send_json(request, reply),
        Err(_) => send_error(
            request,
            &ApiError::unavailable(
                "the simulation did not answer in time (is the program between frames?)",
            ),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_hosts() {
        for h in [
            "127.0.0.1:8080",
            "localhost:1",
            "LOCALHOST",
            "[::1]:80",
            "127.1.2.3",
        ] {
            assert!(is_loopback_host(h), "{h}");
        }
        for h in [
            "",
            "evil.example:8080",
            "10.0.0.1:80",
            "[::2]:80",
            "localhost.evil:1",
        ] {
            assert!(!is_loopback_host(h), "{h}");
        }
    }

    #[test]
    fn origins() {
        assert!(same_origin("http://127.0.0.1:80", "127.0.0.1:80"));
        assert!(!same_origin("http://evil.example", "127.0.0.1:80"));
        assert!(!same_origin("null", "127.0.0.1:80"));
    }
}
