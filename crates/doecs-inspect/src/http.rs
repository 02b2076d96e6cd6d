//! The HTTP side: hyper on a one-thread tokio runtime that checks each
//! request, serves the page's embedded files itself, and hands API
//! requests to the simulation through a channel.
//!
//! # Design
//!
//! The server is one thread of its own (`doecs-inspect`) running a
//! current-thread tokio runtime: an accept loop and one task per
//! connection, so a thousand idle connections cost a thousand small tasks,
//! not threads, and no connection can hold up another. Nothing on that
//! thread blocks: for an API request a connection's task sends a `Pending`
//! (the parsed request and a oneshot reply channel) to the simulation
//! thread, which answers it between frames (`Inspector::serve_pending`),
//! and awaits the answer up to the reply timeout (then 503). The world is
//! never touched off the simulation thread; the JSON is turned into text
//! on the server's thread, off the frame. Dropping the server signals the
//! loop to stop and joins the thread; the runtime's connections go with
//! it.
//!
//! Every connection's bytes go through a wire (the `wire` module) that reads
//! and checks each request head before hyper sees it, so every malformed
//! request gets a 4xx JSON answer (`{"error", "status"}`), never hyper's
//! empty one nor a silent close. The limits, each a constant below:
//! - at most [`MAX_CONNECTIONS`] connections are open; one more is answered
//!   503 (JSON) and closed at once;
//! - a request head must arrive within [`HEADER_READ_TIMEOUT`] of its first
//!   byte (408), its first line at most [`MAX_REQUEST_LINE_BYTES`] (414),
//!   all of it at most [`MAX_HEAD_BYTES`] in at most [`MAX_HEADERS`]
//!   headers (431), and only ASCII (400);
//! - a body must arrive within [`BODY_READ_TIMEOUT`] (408) and be at most
//!   [`MAX_BODY_BYTES`] (413; a longer body is not read);
//! - a connection idle between requests for [`KEEP_ALIVE_TIMEOUT`] is
//!   closed, and one whose client stops reading our answer for
//!   [`WRITE_TIMEOUT`] is dropped.
//!
//! Checks of each request, before anything is parsed or queued:
//! - the request target is at most [`MAX_TARGET_BYTES`] (414);
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
use crate::wire::{ConnState, Wire};
use bytes::Bytes;
use http::header::{self, HeaderValue};
use http::{Request, Response, StatusCode};
use http_body_util::{BodyExt, Full, LengthLimitError, Limited};
use hyper::body::{Body, Incoming};
use hyper_util::rt::{TokioIo, TokioTimer};
use serde_json::Value;
use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::pin::{pin, Pin};
use std::sync::{mpsc, Arc};
use std::task::Poll;
use std::thread::JoinHandle;
use std::time::Duration;
use tokio::sync::{oneshot, Semaphore};

/// The largest request body accepted, in bytes.
pub const MAX_BODY_BYTES: usize = 64 * 1024;
/// The longest request line (method, target, version): the longest target
/// and room for the rest.
pub const MAX_REQUEST_LINE_BYTES: usize = MAX_TARGET_BYTES + 64;
/// The longest request head, request line and headers together.
pub const MAX_HEAD_BYTES: usize = 16 * 1024;
/// The most headers a request may have.
pub const MAX_HEADERS: usize = 64;
/// How long a request head may take to arrive, from its first byte.
pub const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(3);
/// How long a request body may take to arrive, once its head has.
pub const BODY_READ_TIMEOUT: Duration = Duration::from_secs(5);
/// How long a connection may stay open with no request on it.
pub const KEEP_ALIVE_TIMEOUT: Duration = Duration::from_secs(5);
/// How long a client may leave our answer unread before it is dropped.
pub const WRITE_TIMEOUT: Duration = Duration::from_secs(5);
/// The most connections open at once; one more is answered 503.
pub const MAX_CONNECTIONS: usize = 256;
/// The most connections over [`MAX_CONNECTIONS`] lingering after their
/// 503 at once; more are closed as soon as the 503 is written.
pub const MAX_REFUSING: usize = 64;
/// How long closing a connection waits for the client to stop sending.
pub const LINGER_TIME: Duration = Duration::from_secs(1);
/// How much a closing connection reads (and drops) at most meanwhile.
pub const LINGER_BYTES: usize = 4 * 1024 * 1024;
/// Hyper's own buffer and header-timeout limits: above the wire's, which
/// are met first; a backstop.
const HYPER_MAX_BUF: usize = 2 * MAX_HEAD_BYTES;
const HYPER_HEADER_TIMEOUT: Duration = Duration::from_secs(30);
/// How long the accept loop rests after the listener fails (out of file
/// descriptors, say).
const ACCEPT_BACKOFF: Duration = Duration::from_millis(50);
/// Everything the page loads comes from this server.
const CSP: &str = "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'";
const JSON: &str = "application/json; charset=utf-8";

/// A status and a JSON body.
pub(crate) type Reply = (u16, Value);

/// An API request waiting for the simulation, and where to send the answer.
pub(crate) struct Pending {
    pub request: ApiRequest,
    pub reply: oneshot::Sender<Reply>,
}

/// The running server: its address and its thread, stopped on drop.
pub(crate) struct HttpServer {
    addr: SocketAddr,
    stop: Option<oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for HttpServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpServer")
            .field("addr", &self.addr)
            .finish()
    }
}

/// What every connection shares.
struct Shared {
    requests: mpsc::Sender<Pending>,
    addr: SocketAddr,
    reply_timeout: Duration,
}

impl HttpServer {
    /// Binds `addr` and starts the server's thread, which sends API
    /// requests to `requests`.
    pub fn start(
        addr: SocketAddr,
        requests: mpsc::Sender<Pending>,
        reply_timeout: Duration,
    ) -> Result<Self, InspectError> {
        let bind_error = |e: std::io::Error| InspectError::Bind {
            addr: addr.to_string(),
            message: e.to_string(),
        };
        let listener = std::net::TcpListener::bind(addr).map_err(bind_error)?;
        let bound = listener.local_addr().map_err(bind_error)?;
        listener.set_nonblocking(true).map_err(bind_error)?;
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_io()
            .enable_time()
            .build()
            .map_err(InspectError::Thread)?;
        let listener = {
            let _entered = runtime.enter();
            tokio::net::TcpListener::from_std(listener).map_err(bind_error)?
        };
        let shared = Arc::new(Shared {
            requests,
            addr: bound,
            reply_timeout,
        });
        let (stop, stopped) = oneshot::channel();
        let thread = std::thread::Builder::new()
            .name("doecs-inspect".into())
            .spawn(move || runtime.block_on(serve(listener, shared, stopped)))
            .map_err(InspectError::Thread)?;
        Ok(HttpServer {
            addr: bound,
            stop: Some(stop),
            thread: Some(thread),
        })
    }

    /// The address the server is bound to (the real port when asked for 0).
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// `future`'s output, or `None` once `stop` fires (or its sender is gone).
async fn unless_stopped<F: Future>(
    stop: &mut oneshot::Receiver<()>,
    future: F,
) -> Option<F::Output> {
    let mut future = pin!(future);
    std::future::poll_fn(|cx| {
        if Pin::new(&mut *stop).poll(cx).is_ready() {
            return Poll::Ready(None);
        }
        future.as_mut().poll(cx).map(Some)
    })
    .await
}

/// The accept loop, until stopped.
async fn serve(
    listener: tokio::net::TcpListener,
    shared: Arc<Shared>,
    mut stop: oneshot::Receiver<()>,
) {
    let open = Arc::new(Semaphore::new(MAX_CONNECTIONS));
    let refusing = Arc::new(Semaphore::new(MAX_REFUSING));
    let refusal: Bytes = refusal().into();
    let mut hyper = hyper::server::conn::http1::Builder::new();
    hyper
        .timer(TokioTimer::new())
        .header_read_timeout(HYPER_HEADER_TIMEOUT)
        // The wire decides when a client has gone; a client that has
        // finished sending still gets its answer.
        .half_close(true)
        .max_buf_size(HYPER_MAX_BUF)
        .max_headers(MAX_HEADERS);
    loop {
        let Some(accepted) = unless_stopped(&mut stop, listener.accept()).await else {
            return;
        };
        let stream = match accepted {
            Ok((stream, _)) => stream,
            Err(_) => {
                // Out of file descriptors, say: rest rather than spin.
                if unless_stopped(&mut stop, tokio::time::sleep(ACCEPT_BACKOFF))
                    .await
                    .is_none()
                {
                    return;
                }
                continue;
            }
        };
        let _ = stream.set_nodelay(true);
        let Ok(permit) = open.clone().try_acquire_owned() else {
            refuse(stream, &refusal, &refusing);
            continue;
        };
        let conn = Arc::new(ConnState::default());
        let io = TokioIo::new(Wire::new(stream, conn.clone()));
        let shared = shared.clone();
        let service = hyper::service::service_fn(move |request| {
            // Taken now, while hyper has read no further (see ConnState).
            let rejected = conn.take_rejection();
            let in_flight = conn.begin();
            let shared = shared.clone();
            async move {
                let response = match rejected {
                    Some(e) => error(&e, true),
                    None => answer(request, &shared).await,
                };
                drop(in_flight);
                Ok::<_, Infallible>(response)
            }
        });
        let connection = hyper.serve_connection(io, service);
        tokio::spawn(async move {
            // A connection's errors (a reset, a timeout) end only it.
            let _ = connection.await;
            drop(permit);
        });
    }
}

/// The answer to a connection over [`MAX_CONNECTIONS`].
fn refusal() -> Vec<u8> {
    let e = ApiError::unavailable(format!(
        "the inspector has {MAX_CONNECTIONS} connections open; try again later"
    ));
    let body = serde_json::to_vec(&e.to_json()).unwrap_or_default();
    let mut out = format!(
        "HTTP/1.1 503 Service Unavailable\r\ncontent-type: {JSON}\r\ncache-control: no-store\r\n\
         x-content-type-options: nosniff\r\nretry-after: 1\r\nconnection: close\r\n\
         content-length: {}\r\n\r\n",
        body.len()
    )
    .into_bytes();
    out.extend_from_slice(&body);
    out
}

/// Answers a connection over the cap with `refusal` and closes it,
/// without reading a request. The answer fits an empty socket buffer, so
/// it is written at once; closing then lingers (see the `wire` module) in
/// a task of its own while fewer than [`MAX_REFUSING`] do, and is
/// immediate otherwise.
fn refuse(stream: tokio::net::TcpStream, refusal: &Bytes, refusing: &Arc<Semaphore>) {
    match stream.try_write(refusal) {
        Ok(n) if n == refusal.len() => {}
        // The rest would have to wait: not worth a task.
        _ => return,
    }
    let Ok(permit) = refusing.clone().try_acquire_owned() else {
        return;
    };
    tokio::spawn(async move {
        use tokio::io::AsyncWrite;
        let mut wire = Wire::new(stream, Arc::default());
        let _ = std::future::poll_fn(|cx| Pin::new(&mut wire).poll_shutdown(cx)).await;
        drop(permit);
    });
}

type HttpResponse = Response<Full<Bytes>>;

/// `body` with `status` and `content_type`, and the headers every answer
/// carries; with `Connection: close` when `close`.
fn respond(status: u16, content_type: &'static str, body: Bytes, close: bool) -> HttpResponse {
    let mut response = Response::new(Full::new(body));
    *response.status_mut() =
        StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CSP),
    );
    if close {
        headers.insert(header::CONNECTION, HeaderValue::from_static("close"));
    }
    response
}

fn json((status, body): Reply, close: bool) -> HttpResponse {
    let text = serde_json::to_vec(&body).unwrap_or_else(|_| b"{}".to_vec());
    respond(status, JSON, text.into(), close)
}

/// The error's JSON answer; `close` when the rest of the connection cannot
/// be trusted (a body left unread, a broken request).
fn error(e: &ApiError, close: bool) -> HttpResponse {
    json((e.status, e.to_json()), close)
}

/// The value of header `name`, if it is text.
fn header_value(request: &Request<Incoming>, name: header::HeaderName) -> Option<&str> {
    request.headers().get(name).and_then(|v| v.to_str().ok())
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

/// The request's target as sent (path and query).
fn target_of(request: &Request<Incoming>) -> &str {
    request.uri().path_and_query().map_or("/", |p| p.as_str())
}

/// The checks of the module docs; `Err` is the answer to send instead.
fn check(request: &Request<Incoming>, shared: &Shared) -> Result<Method, ApiError> {
    if target_of(request).len() > MAX_TARGET_BYTES {
        return Err(ApiError::new(
            414,
            format!("the request target is longer than {MAX_TARGET_BYTES} bytes"),
        ));
    }
    let host = header_value(request, header::HOST).unwrap_or("");
    if shared.addr.ip().is_loopback() && !is_loopback_host(host) {
        return Err(ApiError::forbidden(
            "the inspector answers only requests addressed to a loopback host (127.0.0.1, localhost)",
        ));
    }
    let method = match *request.method() {
        http::Method::GET | http::Method::HEAD => Method::Get,
        http::Method::POST => Method::Post,
        http::Method::PUT => Method::Put,
        http::Method::DELETE => Method::Delete,
        _ => Method::Other,
    };
    if method != Method::Get {
        if let Some(origin) = request.headers().get(header::ORIGIN) {
            if !origin.to_str().is_ok_and(|o| same_origin(o, host)) {
                return Err(ApiError::forbidden(
                    "cross-origin requests may only read; this one came from another origin",
                ));
            }
        }
    }
    if request.body().size_hint().lower() > MAX_BODY_BYTES as u64 {
        return Err(too_large());
    }
    Ok(method)
}

fn too_large() -> ApiError {
    ApiError::too_large(format!("the body is longer than {MAX_BODY_BYTES} bytes"))
}

/// Reads the body: at most [`MAX_BODY_BYTES`], within
/// [`BODY_READ_TIMEOUT`].
async fn read_body(body: Incoming) -> Result<Vec<u8>, ApiError> {
    let collected = tokio::time::timeout(
        BODY_READ_TIMEOUT,
        Limited::new(body, MAX_BODY_BYTES).collect(),
    )
    .await;
    match collected {
        Ok(Ok(body)) => Ok(body.to_bytes().to_vec()),
        Ok(Err(e)) if e.downcast_ref::<LengthLimitError>().is_some() => Err(too_large()),
        Ok(Err(e)) => Err(ApiError::bad_request(format!("cannot read the body: {e}"))),
        Err(_) => Err(ApiError::new(
            408,
            format!(
                "the body did not arrive within {} s",
                BODY_READ_TIMEOUT.as_secs_f32()
            ),
        )),
    }
}

/// Answers one request: a file of the page, or an API answer from the
/// simulation, or an error.
async fn answer(request: Request<Incoming>, shared: &Shared) -> HttpResponse {
    let method = match check(&request, shared) {
        Ok(m) => m,
        // The body, if any, is left unread.
        Err(e) => return error(&e, true),
    };
    let target = match parse_target(target_of(&request)) {
        Ok(t) => t,
        Err(e) => return error(&e.into(), false),
    };
    if target.path.first().map(String::as_str) != Some("api") {
        if method != Method::Get {
            return error(
                &ApiError::method_not_allowed(method.as_str(), "a page file"),
                false,
            );
        }
        return match assets::find(&target.path) {
            Some(asset) => respond(
                200,
                asset.content_type,
                Bytes::from_static(asset.bytes),
                false,
            ),
            None => error(&ApiError::not_found("no such page file"), false),
        };
    }
    let body = match read_body(request.into_body()).await {
        Ok(b) => b,
        Err(e) => return error(&e, true),
    };
    let (reply, answered) = oneshot::channel();
    let pending = Pending {
        request: ApiRequest {
            method,
            target,
            body,
        },
        reply,
    };
    if shared.requests.send(pending).is_err() {
        return error(&ApiError::unavailable("the simulation has stopped"), false);
    }
    match tokio::time::timeout(shared.reply_timeout, answered).await {
        Ok(Ok(reply)) => json(reply, false),
        Ok(Err(_)) => error(&ApiError::unavailable("the simulation has stopped"), false),
        Err(_) => error(
            &ApiError::unavailable(
                "the simulation did not answer in time (is the program between frames?)",
            ),
            false,
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

    #[test]
    fn the_refusal_is_a_whole_json_answer() {
        let text = String::from_utf8(refusal()).unwrap();
        let (head, body) = text.split_once("\r\n\r\n").unwrap();
        assert!(head.starts_with("HTTP/1.1 503 "), "{head}");
        assert!(head.contains(&format!("content-length: {}", body.len())));
        let v: Value = serde_json::from_str(body).unwrap();
        assert_eq!(v["status"], 503);
    }

    #[test]
    #[cfg_attr(miri, ignore)] // sockets
    fn a_port_in_use_is_a_bind_error_and_drop_stops_the_thread() {
        let (tx, _rx) = mpsc::channel();
        let any = SocketAddr::from(([127, 0, 0, 1], 0));
        let first = HttpServer::start(any, tx.clone(), Duration::from_secs(1)).unwrap();
        let err = HttpServer::start(first.addr(), tx, Duration::from_secs(1)).unwrap_err();
        assert!(matches!(err, InspectError::Bind { .. }), "{err}");
        // An open connection does not hold the server up, and is closed.
        let mut open = std::net::TcpStream::connect(first.addr()).unwrap();
        std::thread::sleep(Duration::from_millis(50));
        let start = std::time::Instant::now();
        drop(first);
        let stopped = start.elapsed();
        assert!(stopped < Duration::from_secs(1), "{stopped:?}");
        open.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
        let mut byte = [0u8; 1];
        let read = std::io::Read::read(&mut open, &mut byte);
        assert!(matches!(read, Ok(0)), "{read:?}");
    }
}
