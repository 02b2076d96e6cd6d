//! One connection's bytes, between the socket and hyper: every request
//! head is read, bounded and checked here before hyper sees a byte of it.
//!
//! [`Wire`] is the connection's I/O as hyper sees it. It hands hyper one
//! request at a time: it collects a request head (at most
//! [`MAX_HEAD_BYTES`], its first line at most [`MAX_REQUEST_LINE_BYTES`],
//! at most [`MAX_HEADERS`](crate::http::MAX_HEADERS) headers, within
//! [`HEADER_READ_TIMEOUT`] of its first byte), checks it (the `head`
//! module: ASCII only, well-formed, a valid target and body framing),
//! passes it on with exactly its body (by `Content-Length`, or by
//! following the chunked framing), and holds back whatever the client sent
//! after it until hyper asks for the next head.
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
use crate::head::{examine, Framing, Verdict};
use crate::http::{
    HEADER_READ_TIMEOUT, KEEP_ALIVE_TIMEOUT, LINGER_BYTES, LINGER_TIME, MAX_HEAD_BYTES,
    MAX_REQUEST_LINE_BYTES, WRITE_TIMEOUT,
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
