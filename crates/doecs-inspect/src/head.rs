//! A request head, checked: what the wire (the `wire` module) makes of
//! the bytes a client has sent before any of them reach hyper.
//!
//! [`examine`] applies the limits ([`MAX_REQUEST_LINE_BYTES`],
//! [`MAX_HEAD_BYTES`], [`MAX_HEADERS`]), refuses bytes that are not
//! ASCII or are control bytes, parses the head with httparse (hyper's own
//! parser, with its default settings), and makes the checks hyper would
//! make after it (the target is a URI, the body's framing is sound), each
//! failure with the status and message of a JSON answer. [`Chunked`]
//! follows a chunked body's framing, by hyper's grammar, to find where the
//! next request starts.

use crate::error::ApiError;
use crate::http::{MAX_HEADERS, MAX_HEAD_BYTES, MAX_REQUEST_LINE_BYTES};

/// How a request's body ends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Framing {
    /// After this many more bytes.
    Length(u64),
    /// Where its chunked framing says.
    Chunked(Chunked),
}

impl Framing {
    pub(crate) fn done(&self) -> bool {
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
