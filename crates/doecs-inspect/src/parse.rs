//! Parsers for what a client sends in a URL: the path, the query string and
//! entity ids. They are total: any input gives a value or a [`ParseError`],
//! never a panic, and every length is bounded (property-tested in
//! `tests/parse_props.rs`).
//!
//! - A path starts with `/`; its segments are percent-decoded one by one
//!   (so `%2F` inside a segment does not split it), must be UTF-8, and
//!   `.`/`..` or empty segments in the middle are refused. A trailing `/`
//!   is ignored.
//! - A query string is `key=value` pairs joined by `&`, decoded the way
//!   browsers encode forms (`+` is a space). A key given twice is refused
//!   rather than guessed at.
//! - An entity id is either its 64-bit form (`Entity::to_bits`, in decimal)
//!   or `INDEXvGENERATION`, the way `Entity` prints itself (`12v0`).

use crate::error::ApiError;
use doecs::Entity;

/// The longest request target (path and query string) accepted, in bytes.
pub const MAX_TARGET_BYTES: usize = 4096;
/// The most path segments accepted.
pub const MAX_SEGMENTS: usize = 16;
/// The most query parameters accepted.
pub const MAX_PARAMS: usize = 32;

/// Why a request target could not be parsed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParseError {
    /// Longer than [`MAX_TARGET_BYTES`].
    #[error("the request target is {len} bytes long; the limit is {max}")]
    TooLong {
        /// Its length.
        len: usize,
        /// The limit.
        max: usize,
    },
    /// The path does not start with `/`.
    #[error("the path must start with '/'")]
    NotAbsolute,
    /// A `%` not followed by two hex digits (at this byte of the piece decoded).
    #[error("bad percent escape at byte {0}")]
    BadEscape(usize),
    /// The decoded bytes are not UTF-8.
    #[error("the decoded text is not UTF-8")]
    NotUtf8,
    /// An empty, `.` or `..` segment inside the path.
    #[error("the path has an empty, '.' or '..' segment")]
    BadSegment,
    /// More than [`MAX_SEGMENTS`] segments.
    #[error("the path has more than {MAX_SEGMENTS} segments")]
    TooManySegments,
    /// More than [`MAX_PARAMS`] parameters.
    #[error("the query string has more than {MAX_PARAMS} parameters")]
    TooManyParams,
    /// A parameter with an empty name.
    #[error("the query string has a parameter with an empty name")]
    EmptyKey,
    /// A parameter given twice.
    #[error("query parameter \"{0}\" is given more than once")]
    DuplicateParam(String),
    /// Not an entity id.
    #[error("\"{0}\" is not an entity id: expected its 64-bit form (e.g. 4294967308) or INDEXvGENERATION (e.g. 12v1)")]
    BadEntity(String),
}

impl From<ParseError> for ApiError {
    fn from(e: ParseError) -> Self {
        match e {
            ParseError::TooLong { .. } => ApiError::new(414, e.to_string()),
            _ => ApiError::bad_request(e.to_string()),
        }
    }
}

/// A parsed request target.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Target {
    /// The decoded path segments (`/api/world` is `["api", "world"]`).
    pub path: Vec<String>,
    /// The decoded query parameters.
    pub query: QueryString,
}

/// Decoded query parameters, in the order given, each key once.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct QueryString {
    pairs: Vec<(String, String)>,
}

/// The value of one hex digit.
fn hex(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    }
}

/// Decodes `%XX` escapes (and `+` as a space when `plus_is_space`).
pub fn percent_decode(s: &str, plus_is_space: bool) -> Result<String, ParseError> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'%' => {
                let hi = bytes.get(i + 1).copied().and_then(hex);
                let lo = bytes.get(i + 2).copied().and_then(hex);
                match (hi, lo) {
                    (Some(hi), Some(lo)) => out.push(hi << 4 | lo),
                    _ => return Err(ParseError::BadEscape(i)),
                }
                i += 3;
            }
            b'+' if plus_is_space => {
                out.push(b' ');
                i += 1;
            }
            b => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8(out).map_err(|_| ParseError::NotUtf8)
}

/// Encodes everything but unreserved characters (`A-Z a-z 0-9 - _ . ~`)
/// as `%XX`: safe in a path segment, a query key or a query value.
pub fn percent_encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for &b in s.as_bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Parses a request target: `PATH` or `PATH?QUERY` (a `#fragment` is dropped).
pub fn parse_target(target: &str) -> Result<Target, ParseError> {
    if target.len() > MAX_TARGET_BYTES {
        return Err(ParseError::TooLong {
            len: target.len(),
            max: MAX_TARGET_BYTES,
        });
    }
    let target = target.split_once('#').map_or(target, |(t, _)| t);
    let (path, query) = target.split_once('?').unwrap_or((target, ""));
    Ok(Target {
        path: parse_path(path)?,
        query: parse_query(query)?,
    })
}

/// Parses a path into decoded segments (see the module docs).
pub fn parse_path(path: &str) -> Result<Vec<String>, ParseError> {
    if path.len() > MAX_TARGET_BYTES {
        return Err(ParseError::TooLong {
            len: path.len(),
            max: MAX_TARGET_BYTES,
        });
    }
    let rest = path.strip_prefix('/').ok_or(ParseError::NotAbsolute)?;
    let rest = rest.strip_suffix('/').unwrap_or(rest);
    if rest.is_empty() {
        return Ok(Vec::new());
    }
    let mut segments = Vec::new();
    for raw in rest.split('/') {
        if segments.len() == MAX_SEGMENTS {
            return Err(ParseError::TooManySegments);
        }
        if raw.is_empty() {
            return Err(ParseError::BadSegment);
        }
        let segment = percent_decode(raw, false)?;
        if segment == "." || segment == ".." {
            return Err(ParseError::BadSegment);
        }
        segments.push(segment);
    }
    Ok(segments)
}

/// Parses a query string (without the `?`) into decoded pairs. Empty
/// pieces (`a=1&&b=2`) are skipped; a key without `=` has an empty value.
pub fn parse_query(query: &str) -> Result<QueryString, ParseError> {
    if query.len() > MAX_TARGET_BYTES {
        return Err(ParseError::TooLong {
            len: query.len(),
            max: MAX_TARGET_BYTES,
        });
    }
    let mut pairs: Vec<(String, String)> = Vec::new();
    for piece in query.split('&').filter(|p| !p.is_empty()) {
        if pairs.len() == MAX_PARAMS {
            return Err(ParseError::TooManyParams);
        }
        let (k, v) = piece.split_once('=').unwrap_or((piece, ""));
        let key = percent_decode(k, true)?;
        if key.is_empty() {
            return Err(ParseError::EmptyKey);
        }
        let value = percent_decode(v, true)?;
        if pairs.iter().any(|(existing, _)| *existing == key) {
            return Err(ParseError::DuplicateParam(key));
        }
        pairs.push((key, value));
    }
    Ok(QueryString { pairs })
}

/// Parses an entity id: its 64-bit form in decimal, or `INDEXvGENERATION`.
pub fn parse_entity(s: &str) -> Result<Entity, ParseError> {
    let bad = || ParseError::BadEntity(s.chars().take(64).collect());
    let digits = |t: &str| !t.is_empty() && t.len() <= 20 && t.bytes().all(|b| b.is_ascii_digit());
    if let Some((index, generation)) = s.split_once('v') {
        if !digits(index) || !digits(generation) {
            return Err(bad());
        }
        let index: u32 = index.parse().map_err(|_| bad())?;
        let generation: u32 = generation.parse().map_err(|_| bad())?;
        return Ok(Entity::from_parts(index, generation));
    }
    if !digits(s) {
        return Err(bad());
    }
    s.parse::<u64>().map(Entity::from_bits).map_err(|_| bad())
}

impl QueryString {
    /// The pairs, in the order given.
    pub fn pairs(&self) -> &[(String, String)] {
        &self.pairs
    }

    /// The value of `key`.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.pairs
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// Refuses parameters other than `known`, so a typo is an error rather
    /// than silently ignored.
    pub fn only(&self, known: &[&str]) -> Result<(), ApiError> {
        match self
            .pairs
            .iter()
            .find(|(k, _)| !known.contains(&k.as_str()))
        {
            None => Ok(()),
            Some((k, _)) => Err(ApiError::bad_request(format!(
                "unknown query parameter \"{k}\" (known here: {})",
                if known.is_empty() {
                    "none".to_owned()
                } else {
                    known.join(", ")
                }
            ))),
        }
    }

    /// `key` as a number from 0 to `max`, or `default` when absent.
    pub fn usize_or(&self, key: &str, default: usize, max: usize) -> Result<usize, ApiError> {
        let Some(v) = self.get(key) else {
            return Ok(default);
        };
        match v.parse::<usize>() {
            Ok(n) if n <= max => Ok(n),
            _ => Err(ApiError::bad_request(format!(
                "query parameter \"{key}\" must be a whole number from 0 to {max}, got \"{}\"",
                v.chars().take(32).collect::<String>()
            ))),
        }
    }

    /// `key` as a flag: absent is `false`; `true`/`1`/empty are `true`;
    /// `false`/`0` are `false`.
    pub fn flag(&self, key: &str) -> Result<bool, ApiError> {
        match self.get(key) {
            None => Ok(false),
            Some("" | "true" | "1") => Ok(true),
            Some("false" | "0") => Ok(false),
            Some(v) => Err(ApiError::bad_request(format!(
                "query parameter \"{key}\" must be true or false, got \"{}\"",
                v.chars().take(32).collect::<String>()
            ))),
        }
    }

    /// `key` as a comma-separated list of non-empty, trimmed names.
    pub fn list(&self, key: &str) -> Vec<String> {
        self.get(key)
            .unwrap_or("")
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths() {
        assert_eq!(parse_path("/").unwrap(), Vec::<String>::new());
        assert_eq!(parse_path("/api/world").unwrap(), ["api", "world"]);
        assert_eq!(parse_path("/api/world/").unwrap(), ["api", "world"]);
        assert_eq!(parse_path("/a%2Fb/c%20d").unwrap(), ["a/b", "c d"]);
        assert_eq!(parse_path("/a+b").unwrap(), ["a+b"]);
        assert_eq!(parse_path("api"), Err(ParseError::NotAbsolute));
        assert_eq!(parse_path("/a//b"), Err(ParseError::BadSegment));
        assert_eq!(parse_path("/a/../b"), Err(ParseError::BadSegment));
        assert_eq!(parse_path("/a/%2e%2E"), Err(ParseError::BadSegment));
        assert_eq!(parse_path("/%zz"), Err(ParseError::BadEscape(0)));
        assert_eq!(parse_path("/%4"), Err(ParseError::BadEscape(0)));
        assert_eq!(parse_path("/%ff"), Err(ParseError::NotUtf8));
        let deep = "/a".repeat(MAX_SEGMENTS + 1);
        assert_eq!(parse_path(&deep), Err(ParseError::TooManySegments));
    }

    #[test]
    fn queries() {
        let q = parse_query("with=position,velocity&limit=10&x").unwrap();
        assert_eq!(q.get("with"), Some("position,velocity"));
        assert_eq!(q.list("with"), ["position", "velocity"]);
        assert_eq!(q.usize_or("limit", 5, 100).unwrap(), 10);
        assert_eq!(q.usize_or("offset", 5, 100).unwrap(), 5);
        assert!(q.usize_or("with", 5, 100).is_err());
        assert!(q.flag("x").unwrap());
        assert!(!q.flag("y").unwrap());
        assert!(q.only(&["with", "limit"]).is_err());
        assert!(q.only(&["with", "limit", "x"]).is_ok());
        assert_eq!(
            parse_query("a=1&a=2"),
            Err(ParseError::DuplicateParam("a".into()))
        );
        assert_eq!(parse_query("=1"), Err(ParseError::EmptyKey));
        assert_eq!(parse_query("a+b=c+d").unwrap().get("a b"), Some("c d"));
        assert_eq!(parse_query("&&").unwrap(), QueryString::default());
        let many = (0..=MAX_PARAMS)
            .map(|i| format!("k{i}=1"))
            .collect::<Vec<_>>()
            .join("&");
        assert_eq!(parse_query(&many), Err(ParseError::TooManyParams));
    }

    #[test]
    fn targets() {
        let t = parse_target("/api/query?with=a#frag").unwrap();
        assert_eq!(t.path, ["api", "query"]);
        assert_eq!(t.query.get("with"), Some("a"));
        let long = format!("/{}", "a".repeat(MAX_TARGET_BYTES));
        assert!(matches!(
            parse_target(&long),
            Err(ParseError::TooLong { .. })
        ));
    }

    #[test]
    fn entities() {
        let e = Entity::from_parts(12, 3);
        assert_eq!(parse_entity("12v3").unwrap(), e);
        assert_eq!(parse_entity(&e.to_bits().to_string()).unwrap(), e);
        for bad in [
            "",
            "v",
            "12v",
            "v3",
            "-1",
            "1.5",
            "12v3v4",
            "99999999999v0",
            "x",
        ] {
            assert!(parse_entity(bad).is_err(), "{bad}");
        }
        assert!(parse_entity("18446744073709551616").is_err());
    }
}
