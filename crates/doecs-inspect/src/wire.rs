//! One connection's bytes, between the socket and hyper: every request
//! head is read, bounded and checked here before hyper sees a byte of it.
//!
//! [`Wire`] is the connection's I/O as hyper sees it. It hands hyper one
//! request at a time: it collects a request head (at most
//! [`MAX_HEAD_BYTES`], its first line at most [`MAX_REQUEST_LINE_BYTES`],
//! at most [`MAX_HEADERS`] headers, within [`HEADER_READ_TIMEOUT`] of its
//! first byte), checks it ([`examine`]: ASCII only, well-formed, a valid
//! target and body framing), passes it on with exactly its body (by
//! `Content-Length`, or by following the chunked framing), and holds back
//! whatever the client sent after it until hyper asks for the next head.
//!
//! A head that fails a check never reaches hyper. Hyper would answer some
//! of those itself with an empty 400 or 431 and close others silently, so
//! instead hyper is handed a stand-in request (`GET /`, `Connection:
//! close`) and the service, finding the error this wire left in
//! [`ConnState`], answers it with the error's JSON. Being a request like
//! any other, its answer goes out after the answers to any requests before
//! it on the connection, and then the connection closes.
//!
//! Also here: a connection idle between requests for [`KEEP_ALIVE_TIMEOUT`]
//! is closed (hyper sees the end of the stream), a client that stops
//! reading our answer for [`WRITE_TIMEOUT`] is dropped, and closing lingers
//! (at most [`LINGER_TIME`] and [`LINGER_BYTES`]) to read what the client
//! is still sending, so that an answer sent before the request was all
//! read is not lost to a connection reset.

use crate::error::ApiError;
use crate::http::{
    HEADER_READ_TIMEOUT, KEEP_ALIVE_TIMEOUT, LINGER_BYTES, LINGER_TIME, MAX_HEADERS,
    MAX_HEAD_BYTES, MAX_REQUEST_LINE_BYTES, WRITE_TIMEOUT,
};
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{ready, Context, Poll};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio::time::Sleep;

/// How much is read from the socket at a time while passing a body on.
const READ_CHUNK: usize = 16 * 1024;

/// The request hyper is handed in place of one that failed a check.
const STAND_IN: &[u8] = b"GET / HTTP/1.1\r\nconnection: close\r\n\r\n";

/// What a connection's [`Wire`] and its service share.
#[derive(Debug, Default)]
pub(crate) struct ConnState {
    /// Requests the service is answering.
    in_flight: AtomicUsize,
    /// The error for the stand-in request the wire handed hyper.
    rejection: Mutex<Option<ApiError>>,
}

impl ConnState {
    /// The error to answer instead of the request just received, if the
    /// wire handed hyper a stand-in. Call it when the service is called:
    /// hyper calls the service for each head before it reads past it, so
    /// the stand-in's error is taken by the stand-in's call.
    pub fn take_rejection(&self) -> Option<ApiError> {
        self.rejection
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
    }

    /// Marks a request as being answered until the guard is dropped: no
    /// keep-alive timer runs meanwhile.
    pub fn begin(self: &Arc<Self>) -> InFlight {
        self.in_flight.fetch_add(1, Ordering::Relaxed);
        InFlight(self.clone())
    }

    fn busy(&self) -> bool {
        self.in_flight.load(Ordering::Relaxed) > 0
    }

    fn reject(&self, e: ApiError) {
        *self
            .rejection
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Some(e);
    }
}

/// A request being answered (see [`ConnState::begin`]).
#[derive(Debug)]
pub(crate) struct InFlight(Arc<ConnState>);

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.in_flight.fetch_sub(1, Ordering::Relaxed);
    }
}

/// How a request's body ends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Framing {
    /// After this many more bytes.
    Length(u64),
    /// Where its chunked framing says.
    Chunked(Chunked),
}

impl Framing {
    fn done(&self) -> bool {
        match self {
            Framing::Length(left) => *left == 0,
            Framing::Chunked(c) => c.done(),
        }
    }
}

/// What [`examine`] makes of the start of a connection's unread bytes.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// Not a whole head yet, and nothing wrong so far.
    Partial,
    /// A good head of `len` bytes, its body framed by `body`.
    Complete {
        /// The head's length, its closing empty line included.
        len: usize,
        /// Where the body ends.
        body: Framing,
    },
    /// The answer to send instead.
    Reject(ApiError),
}

/// Whether `b` may appear in a request head: visible ASCII, space, tab,
/// and line ends.
fn head_byte(b: u8) -> bool {
    matches!(b, b'\t' | b'\r' | b'\n' | 0x20..=0x7e)
}

/// Checks the head at the start of `bytes` (what the client has sent so
/// far, leading empty lines dropped): the limits of the module docs, the
/// bytes, the syntax, and what hyper would refuse (the target, method,
/// and body framing), each with the JSON answer hyper would not give.
pub(crate) fn examine(bytes: &[u8]) -> Verdict {
    let line = bytes
        .iter()
        .position(|&b| b == b'\n')
        .unwrap_or(bytes.len());
    if line > MAX_REQUEST_LINE_BYTES {
        return Verdict::Reject(ApiError::new(
            414,
            format!("the request line is longer than {MAX_REQUEST_LINE_BYTES} bytes"),
        ));
    }
    let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut request = httparse::Request::new(&mut headers);
    let parsed = request.parse(bytes);
    let end = match parsed {
        Ok(httparse::Status::Complete(len)) => len,
        _ => bytes.len(),
    };
    if let Some(&b) = bytes[..end].iter().find(|&&b| !head_byte(b)) {
        let what = if b.is_ascii() {
            "a control byte"
        } else {
            "a byte that is not ASCII"
        };
        return Verdict::Reject(ApiError::bad_request(format!(
            "the request line or a header has {what} (0x{b:02x})"
        )));
    }
    let too_large = || {
        Verdict::Reject(ApiError::new(
            431,
            format!(
                "the request head is longer than {MAX_HEAD_BYTES} bytes or has more than \
                 {MAX_HEADERS} headers"
            ),
        ))
    };
    match parsed {
        Ok(httparse::Status::Partial) if bytes.len() > MAX_HEAD_BYTES => too_large(),
        Ok(httparse::Status::Partial) => Verdict::Partial,
        Ok(httparse::Status::Complete(len)) if len > MAX_HEAD_BYTES => too_large(),
        Ok(httparse::Status::Complete(len)) => match framing(&request) {
            Ok(body) => Verdict::Complete { len, body },
            Err(e) => Verdict::Reject(e),
        },
        Err(httparse::Error::TooManyHeaders) => too_large(),
        Err(httparse::Error::Version) => Verdict::Reject(ApiError::bad_request(
            "the request is not HTTP/1.0 or HTTP/1.1",
        )),
        Err(e) => Verdict::Reject(ApiError::bad_request(format!(
            "the request head is malformed ({e})"
        ))),
    }
}

/// The checks hyper makes of a parsed head, and where its body ends.
fn framing(request: &httparse::Request<'_, '_>) -> Result<Framing, ApiError> {
    let method = request.method.unwrap_or("");
    if method.eq_ignore_ascii_case("CONNECT") {
        return Err(ApiError::method_not_allowed("CONNECT", "this server"));
    }
    if http::Uri::try_from(request.path.unwrap_or("")).is_err() {
        return Err(ApiError::bad_request(
            "the request target is not a valid URI",
        ));
    }
    let mut length: Option<u64> = None;
    let mut chunked = None;
    for h in request.headers.iter() {
        if http::HeaderName::from_bytes(h.name.as_bytes()).is_err()
            || http::HeaderValue::from_bytes(h.value).is_err()
        {
            return Err(ApiError::bad_request(format!(
                "the header {:?} is malformed",
                h.name
            )));
        }
        if h.name.eq_ignore_ascii_case("content-length") {
            let n = decimal(h.value)
                .ok_or_else(|| ApiError::bad_request("the Content-Length is not a number"))?;
            if length.is_some_and(|l| l != n) {
                return Err(ApiError::bad_request(
                    "the request has two different Content-Length headers",
                ));
            }
            length = Some(n);
        } else if h.name.eq_ignore_ascii_case("transfer-encoding") {
            // The last encoding of the last such header is the one that
            // frames the body, as for hyper.
            let last = h.value.rsplit(|&b| b == b',').next().unwrap_or(b"");
            chunked = Some(last.trim_ascii().eq_ignore_ascii_case(b"chunked"));
        }
    }
    match (chunked, length) {
        (None, length) => Ok(Framing::Length(length.unwrap_or(0))),
        (Some(_), _) if request.version == Some(0) => Err(ApiError::bad_request(
            "an HTTP/1.0 request cannot have a Transfer-Encoding",
        )),
        (Some(_), Some(_)) => Err(ApiError::bad_request(
            "the request has both a Content-Length and a Transfer-Encoding",
        )),
        (Some(false), None) => Err(ApiError::bad_request(
            "the only Transfer-Encoding understood is chunked",
        )),
        (Some(true), None) => Ok(Framing::Chunked(Chunked::default())),
    }
}

/// A `Content-Length` value: decimal digits only.
fn decimal(value: &[u8]) -> Option<u64> {
    if value.is_empty() {
        return None;
    }
    value.iter().try_fold(0u64, |n, &b| {
        let digit = (b as char).to_digit(10)?;
        n.checked_mul(10)?.checked_add(u64::from(digit))
    })
}

/// Follows a chunked body's framing (hyper's grammar) to find its end.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Chunked {
    state: ChunkState,
    size: u64,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
enum ChunkState {
    #[default]
    Start,
    Size,
    SizeSpace,
    Extension,
    SizeLf,
    Data,
    DataCr,
    DataLf,
    EndCr,
    Trailer,
    TrailerLf,
    EndLf,
    Done,
}

impl Chunked {
    fn done(&self) -> bool {
        self.state == ChunkState::Done
    }

    /// Takes bytes of the body until its end; returns how many of `bytes`
    /// belong to it, or `Err` where the framing is broken.
    pub(crate) fn feed(&mut self, bytes: &[u8]) -> Result<usize, ()> {
        use ChunkState::*;
        let mut i = 0;
        while i < bytes.len() && self.state != Done {
            if self.state == Data {
                let take = usize::try_from(self.size)
                    .unwrap_or(usize::MAX)
                    .min(bytes.len() - i);
                i += take;
                self.size -= take as u64;
                if self.size == 0 {
                    self.state = DataCr;
                }
                continue;
            }
            let b = bytes[i];
            i += 1;
            self.state = match (self.state, b) {
                (Start | Size, _) if b.is_ascii_hexdigit() => {
                    let digit = u64::from((b as char).to_digit(16).unwrap_or(0));
                    self.size = self
                        .size
                        .checked_mul(16)
                        .and_then(|s| s.checked_add(digit))
                        .ok_or(())?;
                    Size
                }
                (Size | SizeSpace, b' ' | b'\t') => SizeSpace,
                (Size | SizeSpace, b';') => Extension,
                (Size | SizeSpace | Extension, b'\r') => SizeLf,
                (Extension, b'\n') => return Err(()),
                (Extension, _) => Extension,
                (SizeLf, b'\n') if self.size == 0 => EndCr,
                (SizeLf, b'\n') => Data,
                (DataCr, b'\r') => DataLf,
                (DataLf, b'\n') => Start,
                (EndCr, b'\r') => EndLf,
                (Trailer, b'\r') => TrailerLf,
                (EndCr | Trailer, _) => Trailer,
                (TrailerLf, b'\n') => EndCr,
                (EndLf, b'\n') => Done,
                _ => return Err(()),
            };
        }
        Ok(i)
    }
}

/// Where a connection is in its stream of requests.
#[derive(Debug)]
enum Phase {
    /// Collecting the next request head.
    Head,
    /// Passing a checked request on: `head` bytes of head, then the body.
    Message { head: usize, body: Framing },
    /// Passing the stand-in request on; `sent` bytes of it so far.
    StandIn { sent: usize },
    /// Nothing more is read: hyper sees the end of the stream.
    Ended,
}

/// Which read timeout runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Wait {
    /// Between requests.
    Idle,
    /// In the middle of a head.
    Head,
}

/// A connection's socket as hyper sees it (see the module docs).
pub(crate) struct Wire {
    stream: TcpStream,
    conn: Arc<ConnState>,
    /// Bytes read from the socket; those from `start` on are not yet
    /// handed on.
    buf: Vec<u8>,
    start: usize,
    /// Whether the head so far should be examined again (a line ended, or
    /// a limit was passed).
    recheck: bool,
    phase: Phase,
    /// The client has closed its side.
    eof: bool,
    read_timer: Option<(Wait, Pin<Box<Sleep>>)>,
    write_timer: Option<Pin<Box<Sleep>>>,
    write_closed: bool,
    linger_timer: Option<Pin<Box<Sleep>>>,
    drained: usize,
}

impl Wire {
    /// Wraps an accepted connection.
    pub fn new(stream: TcpStream, conn: Arc<ConnState>) -> Self {
        Wire {
            stream,
            conn,
            buf: Vec::new(),
            start: 0,
            recheck: false,
            phase: Phase::Head,
            eof: false,
            read_timer: None,
            write_timer: None,
            write_closed: false,
            linger_timer: None,
            drained: 0,
        }
    }

    fn unread(&self) -> &[u8] {
        &self.buf[self.start..]
    }

    /// Reads at most `max` more bytes from the socket into `buf`.
    fn fill(&mut self, cx: &mut Context<'_>, max: usize) -> Poll<io::Result<()>> {
        self.buf.drain(..self.start);
        self.start = 0;
        let len = self.buf.len();
        self.buf.resize(len + max, 0);
        let mut read = ReadBuf::new(&mut self.buf[len..]);
        let polled = Pin::new(&mut self.stream).poll_read(cx, &mut read);
        let n = read.filled().len();
        self.buf.truncate(len + n);
        match polled {
            Poll::Ready(Ok(())) => {
                if n == 0 {
                    self.eof = true;
                }
                if self.buf[len..].contains(&b'\n')
                    || self.buf.len() > MAX_HEAD_BYTES
                    || (self.buf.len() > MAX_REQUEST_LINE_BYTES && !self.buf.contains(&b'\n'))
                {
                    self.recheck = true;
                }
                Poll::Ready(Ok(()))
            }
            other => other,
        }
    }

    /// Hands hyper the stand-in request; the service will answer `e`.
    fn reject(&mut self, e: ApiError) {
        self.conn.reject(e);
        self.phase = Phase::StandIn { sent: 0 };
        self.read_timer = None;
        self.buf = Vec::new();
        self.start = 0;
    }

    /// Whether the running read timer (started for `wait` if it is not
    /// running) has run out.
    fn timed_out(&mut self, cx: &mut Context<'_>, wait: Wait) -> bool {
        let limit = match wait {
            Wait::Idle => KEEP_ALIVE_TIMEOUT,
            Wait::Head => HEADER_READ_TIMEOUT,
        };
        let running = matches!(&self.read_timer, Some((w, _)) if *w == wait);
        if !running {
            self.read_timer = Some((wait, Box::pin(tokio::time::sleep(limit))));
        }
        match &mut self.read_timer {
            Some((_, timer)) => timer.as_mut().poll(cx).is_ready(),
            None => false,
        }
    }

    /// The head phase: collects and examines the next head. `Ready` when
    /// the phase has changed.
    fn poll_head(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        loop {
            // Empty lines before a request are ignored (RFC 9112, 2.2).
            while self
                .unread()
                .first()
                .is_some_and(|&b| b == b'\r' || b == b'\n')
            {
                self.start += 1;
            }
            let pending = self.unread().len();
            if pending > 0 && self.recheck {
                self.recheck = false;
                match examine(self.unread()) {
                    Verdict::Partial => {}
                    Verdict::Complete { len, body } => {
                        self.read_timer = None;
                        self.phase = Phase::Message { head: len, body };
                        return Poll::Ready(Ok(()));
                    }
                    Verdict::Reject(e) => {
                        self.reject(e);
                        return Poll::Ready(Ok(()));
                    }
                }
            }
            if self.eof {
                if pending == 0 {
                    self.phase = Phase::Ended;
                } else {
                    self.reject(ApiError::bad_request(
                        "the client closed the connection in the middle of a request head",
                    ));
                }
                return Poll::Ready(Ok(()));
            }
            if self.conn.busy() {
                self.read_timer = None;
            } else if pending == 0 {
                if self.timed_out(cx, Wait::Idle) {
                    self.phase = Phase::Ended;
                    return Poll::Ready(Ok(()));
                }
            } else if self.timed_out(cx, Wait::Head) {
                self.reject(ApiError::new(
                    408,
                    format!(
                        "the request head did not arrive within {} s",
                        HEADER_READ_TIMEOUT.as_secs_f32()
                    ),
                ));
                return Poll::Ready(Ok(()));
            }
            let room = (MAX_HEAD_BYTES + 1).saturating_sub(pending).max(1);
            ready!(self.fill(cx, room))?;
        }
    }

    /// Copies the next bytes of the message being passed on into `out`.
    /// `Ready` with nothing copied when the phase has changed.
    fn poll_message(
        &mut self,
        cx: &mut Context<'_>,
        out: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let Phase::Message { head, body } = &mut self.phase else {
            return Poll::Ready(Ok(()));
        };
        if *head == 0 && body.done() {
            // What is left was sent after this request: the next head.
            self.phase = Phase::Head;
            self.recheck = true;
            return Poll::Ready(Ok(()));
        }
        if self.start == self.buf.len() {
            if self.eof {
                // Hyper sees the body cut short.
                self.phase = Phase::Ended;
                return Poll::Ready(Ok(()));
            }
            return self.fill(cx, READ_CHUNK);
        }
        let unread = &self.buf[self.start..];
        let mut n = unread.len().min(out.remaining());
        if *head > 0 {
            n = n.min(*head);
            *head -= n;
        } else {
            match body {
                Framing::Length(left) => {
                    n = n.min(usize::try_from(*left).unwrap_or(usize::MAX));
                    *left -= n as u64;
                }
                Framing::Chunked(chunked) => match chunked.feed(&unread[..n]) {
                    Ok(k) => n = k,
                    Err(()) => {
                        // Hyper finds the same fault, and the service
                        // answers it; nothing after it is read.
                        n = unread.len().min(out.remaining());
                        out.put_slice(&unread[..n]);
                        self.start += n;
                        self.phase = Phase::Ended;
                        return Poll::Ready(Ok(()));
                    }
                },
            }
        }
        out.put_slice(&unread[..n]);
        self.start += n;
        Poll::Ready(Ok(()))
    }

    /// Runs the write timer while the socket will not take more.
    fn watch_write<T>(
        &mut self,
        cx: &mut Context<'_>,
        polled: Poll<io::Result<T>>,
    ) -> Poll<io::Result<T>> {
        if polled.is_ready() {
            self.write_timer = None;
            return polled;
        }
        let timer = self
            .write_timer
            .get_or_insert_with(|| Box::pin(tokio::time::sleep(WRITE_TIMEOUT)));
        if timer.as_mut().poll(cx).is_ready() {
            self.write_timer = None;
            return Poll::Ready(Err(io::Error::new(
                io::ErrorKind::TimedOut,
                "the client stopped reading the answer",
            )));
        }
        Poll::Pending
    }
}

impl AsyncRead for Wire {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        out: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if out.remaining() == 0 {
            return Poll::Ready(Ok(()));
        }
        loop {
            match &mut this.phase {
                Phase::Ended => return Poll::Ready(Ok(())),
                Phase::StandIn { sent } => {
                    let rest = &STAND_IN[*sent..];
                    let n = rest.len().min(out.remaining());
                    out.put_slice(&rest[..n]);
                    *sent += n;
                    if *sent == STAND_IN.len() {
                        // Nothing after it is read.
                        this.phase = Phase::Ended;
                    }
                    return Poll::Ready(Ok(()));
                }
                Phase::Head => ready!(this.poll_head(cx))?,
                Phase::Message { .. } => {
                    let before = out.filled().len();
                    ready!(this.poll_message(cx, out))?;
                    if out.filled().len() > before {
                        return Poll::Ready(Ok(()));
                    }
                }
            }
        }
    }
}

impl AsyncWrite for Wire {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let polled = Pin::new(&mut this.stream).poll_write(cx, buf);
        this.watch_write(cx, polled)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let polled = Pin::new(&mut this.stream).poll_write_vectored(cx, bufs);
        this.watch_write(cx, polled)
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let polled = Pin::new(&mut this.stream).poll_flush(cx);
        this.watch_write(cx, polled)
    }

    /// Closes our side, then reads and drops what the client still sends,
    /// for at most [`LINGER_TIME`] and [`LINGER_BYTES`], so that closing
    /// with unread bytes does not reset the connection before the client
    /// has read the answer.
    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if !this.write_closed {
            let polled = Pin::new(&mut this.stream).poll_shutdown(cx);
            if let Err(e) = ready!(this.watch_write(cx, polled)) {
                return Poll::Ready(Err(e));
            }
            this.write_closed = true;
        }
        let timer = this
            .linger_timer
            .get_or_insert_with(|| Box::pin(tokio::time::sleep(LINGER_TIME)));
        let mut scratch = [0u8; 8192];
        loop {
            if this.eof || this.drained >= LINGER_BYTES || timer.as_mut().poll(cx).is_ready() {
                return Poll::Ready(Ok(()));
            }
            let mut read = ReadBuf::new(&mut scratch);
            match Pin::new(&mut this.stream).poll_read(cx, &mut read) {
                Poll::Ready(Ok(())) if read.filled().is_empty() => this.eof = true,
                Poll::Ready(Ok(())) => this.drained += read.filled().len(),
                Poll::Ready(Err(_)) => return Poll::Ready(Ok(())),
                Poll::Pending => return Poll::Pending,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn complete(bytes: &[u8]) -> (usize, Framing) {
        match examine(bytes) {
            Verdict::Complete { len, body } => (len, body),
            other => panic!("{other:?}"),
        }
    }

    fn rejected(bytes: &[u8]) -> u16 {
        match examine(bytes) {
            Verdict::Reject(e) => e.status,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn good_heads_and_their_bodies() {
        let head = b"GET /api/world HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
        assert_eq!(complete(head), (head.len(), Framing::Length(0)));
        let mut with_body = b"PUT /x HTTP/1.1\r\nContent-Length: 5\r\n\r\n".to_vec();
        let len = with_body.len();
        with_body.extend_from_slice(b"hello\xff\x00GET");
        assert_eq!(complete(&with_body), (len, Framing::Length(5)));
        let chunked = b"POST /x HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n";
        assert!(matches!(complete(chunked).1, Framing::Chunked(_)));
        assert_eq!(examine(b"GET /api/world HTTP/1.1\r\nHo"), Verdict::Partial);
    }

    #[test]
    fn bad_heads_get_their_status() {
        assert_eq!(rejected(b"GET /w\xc3\xb6rld HTTP/1.1\r\n\r\n"), 400);
        assert_eq!(rejected(b"GET / HTTP/1.1\r\nX: caf\xc3\xa9\r\n\r\n"), 400);
        assert_eq!(rejected(b"GET / HTTP/1.1\r\nX: a\x01b\r\n\r\n"), 400);
        assert_eq!(rejected(b"GET / HTTP/1.1\r\nX: caf\xc3"), 400, "partial");
        assert_eq!(rejected(b"\x00\x01\x02 not http at all\r\n\r\n"), 400);
        assert_eq!(rejected(b"GET\r\n\r\n"), 400);
        assert_eq!(rejected(b"GET / HTTP/2.0\r\n\r\n"), 400);
        assert_eq!(rejected(b"CONNECT a:1 HTTP/1.1\r\n\r\n"), 405);
        assert_eq!(
            rejected(b"GET / HTTP/1.1\r\nContent-Length: x\r\n\r\n"),
            400
        );
        assert_eq!(
            rejected(b"GET / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n"),
            400
        );
        assert_eq!(
            rejected(b"GET / HTTP/1.1\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n"),
            400
        );
        assert_eq!(
            rejected(b"GET / HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n"),
            400
        );
        assert_eq!(
            rejected(b"GET / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n"),
            400
        );
        let long_line = format!(
            "GET /{} HTTP/1.1\r\n\r\n",
            "a".repeat(MAX_REQUEST_LINE_BYTES)
        );
        assert_eq!(rejected(long_line.as_bytes()), 414);
        assert_eq!(
            rejected(&vec![b'G'; MAX_REQUEST_LINE_BYTES + 1]),
            414,
            "no line end yet"
        );
        let long_head = format!("GET / HTTP/1.1\r\nX: {}", "a".repeat(MAX_HEAD_BYTES));
        assert_eq!(rejected(long_head.as_bytes()), 431);
        let many = format!(
            "GET / HTTP/1.1\r\n{}\r\n",
            "X: 1\r\n".repeat(MAX_HEADERS + 1)
        );
        assert_eq!(rejected(many.as_bytes()), 431);
    }

    #[test]
    fn chunked_bodies_end_where_their_framing_says() {
        let body = b"5\r\nhello\r\n3;ext=1\r\nabc\r\n0\r\nTrailer: x\r\n\r\nNEXT";
        let mut c = Chunked::default();
        assert_eq!(c.feed(body), Ok(body.len() - 4));
        assert!(c.done());
        // Byte by byte, the same.
        let mut c = Chunked::default();
        let mut used = 0;
        for b in body.chunks(1) {
            used += c.feed(b).unwrap();
        }
        assert_eq!(used, body.len() - 4);
        let mut c = Chunked::default();
        assert_eq!(c.feed(b"0\r\n\r\n"), Ok(5));
        assert!(c.done());
        for bad in [
            &b"x\r\n"[..],
            b"5\r\nhelloXX",
            b"1;a\nb",
            b"ffffffffffffffffff\r\n",
        ] {
            assert_eq!(Chunked::default().feed(bad), Err(()), "{bad:?}");
        }
    }

    #[test]
    fn content_lengths() {
        assert_eq!(decimal(b"0"), Some(0));
        assert_eq!(decimal(b"65536"), Some(65536));
        for bad in [&b""[..], b"+1", b"-1", b"1 2", b"99999999999999999999999"] {
            assert_eq!(decimal(bad), None, "{bad:?}");
        }
    }
}
