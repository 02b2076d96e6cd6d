//! Keys: flattened paths, hashed segment by segment (seed 004, steps 1–2).
//!
//! A value lives at a path such as `stats.health`. The record never stores
//! the path, only a 32-bit [`KeyHash`]. Each segment is hashed on its own
//! (length included) and the segment hashes are folded in order, so the path
//! `["a", "b"]` and the single segment `"a.b"` are different inputs by
//! construction: a key that contains a `.` cannot alias a nested path.
//!
//! The full fold is a 64-bit [`Key`]; the record stores its 32-bit fold. The
//! store keeps the 64-bit key of every path it has admitted, per 32-bit key,
//! so two different paths that meet in 32 bits are detected and refused
//! (`DataError::KeyCollision`) instead of silently sharing a value.
//!
//! The hash is part of the on-disk record format: it is fixed, little-endian
//! and platform independent. Changing it changes `FORMAT_VERSION`.

use crate::error::DataError;
use std::fmt;

/// The 32-bit key stored in a record (the fold of a [`Key`]).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct KeyHash(pub u32);

impl fmt::Display for KeyHash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:#010x}", self.0)
    }
}

/// A hashed path: the 64-bit fold of its segment hashes.
///
/// Hash a path once and reuse the key, as the seed does with hashed strings:
///
/// ```
/// use doecs_data::Key;
/// let health = Key::parse("stats.health").unwrap();
/// assert_eq!(health, Key::from_segments(&["stats", "health"]));
/// // A key containing '.' is a different key by construction.
/// assert_ne!(health, Key::from_segments(&["stats.health"]));
/// ```
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Key(u64);

const SEED: u64 = 0x243f_6a88_85a3_08d3;
const MUL: u64 = 0x9e37_79b9_7f4a_7c15;
const MUL2: u64 = 0xd6e8_feb8_6659_fd93;

/// Folded 64x64->128 multiply: a cheap, well-mixing step.
#[inline(always)]
fn mix(x: u64, m: u64) -> u64 {
    let p = (x as u128).wrapping_mul(m as u128);
    (p as u64) ^ ((p >> 64) as u64)
}

/// Hash of one segment, 8 bytes at a time, its length mixed in.
#[inline]
fn segment_hash(s: &[u8]) -> u64 {
    let mut h = SEED ^ (s.len() as u64).wrapping_mul(MUL);
    let mut chunks = s.chunks_exact(8);
    for c in &mut chunks {
        let mut w = [0u8; 8];
        w.copy_from_slice(c);
        h = mix(h ^ u64::from_le_bytes(w), MUL2);
    }
    let rest = chunks.remainder();
    if !rest.is_empty() {
        let mut w = [0u8; 8];
        w[..rest.len()].copy_from_slice(rest);
        h = mix(h ^ u64::from_le_bytes(w), MUL2);
    }
    h
}

impl Key {
    /// The key of the empty path (the root); [`Key::child`] extends it.
    pub const ROOT: Key = Key(SEED);

    /// This path extended by one segment.
    #[inline]
    pub fn child(self, segment: &str) -> Key {
        Key(mix(
            self.0.rotate_left(23) ^ segment_hash(segment.as_bytes()),
            MUL,
        ))
    }

    /// The key of a path given as segments. Segments may be empty or contain
    /// `.`; they are taken literally.
    pub fn from_segments<S: AsRef<str>>(segments: &[S]) -> Key {
        segments.iter().fold(Key::ROOT, |k, s| k.child(s.as_ref()))
    }

    /// The key of a dotted path (`"stats.health"`). Refuses empty segments.
    #[inline]
    pub fn parse(path: &str) -> Result<Key, DataError> {
        let mut k = Key::ROOT;
        for seg in path.split('.') {
            if seg.is_empty() {
                return Err(DataError::EmptySegment(path.to_owned()));
            }
            k = k.child(seg);
        }
        Ok(k)
    }

    /// The 32-bit key stored in records.
    #[inline]
    pub fn hash32(self) -> KeyHash {
        KeyHash((self.0 ^ (self.0 >> 32)) as u32)
    }

    /// The full 64-bit hash.
    pub fn bits(self) -> u64 {
        self.0
    }
}

/// Where a value lives: a dotted path, literal segments or a pre-hashed key.
///
/// Every store method takes `impl Into<Path>`, so `"stats.health"`,
/// `&["stats", "health"]` and a [`Key`] all work. A pre-hashed key is the
/// fastest; names are recorded (when the store keeps them) only from the
/// first two forms.
#[derive(Copy, Clone, Debug)]
pub enum Path<'a> {
    /// A dotted path; segments must be non-empty.
    Dotted(&'a str),
    /// Literal segments (may be empty or contain `.`).
    Segments(&'a [&'a str]),
    /// A pre-hashed key.
    Hashed(Key),
}

impl<'a> From<&'a str> for Path<'a> {
    fn from(s: &'a str) -> Self {
        Path::Dotted(s)
    }
}
impl<'a> From<&'a String> for Path<'a> {
    fn from(s: &'a String) -> Self {
        Path::Dotted(s)
    }
}
impl<'a> From<&'a [&'a str]> for Path<'a> {
    fn from(s: &'a [&'a str]) -> Self {
        Path::Segments(s)
    }
}
impl<'a, const N: usize> From<&'a [&'a str; N]> for Path<'a> {
    fn from(s: &'a [&'a str; N]) -> Self {
        Path::Segments(s)
    }
}
impl From<Key> for Path<'_> {
    fn from(k: Key) -> Self {
        Path::Hashed(k)
    }
}

impl Path<'_> {
    /// The path's key.
    #[inline]
    pub fn key(&self) -> Result<Key, DataError> {
        match *self {
            Path::Dotted(s) => Key::parse(s),
            Path::Segments(s) => Ok(Key::from_segments(s)),
            Path::Hashed(k) => Ok(k),
        }
    }

    /// The path's segments, when it has names.
    pub fn segments(&self) -> Option<Vec<String>> {
        match *self {
            Path::Dotted(s) => Some(s.split('.').map(str::to_owned).collect()),
            Path::Segments(s) => Some(s.iter().map(|&x| x.to_owned()).collect()),
            Path::Hashed(_) => None,
        }
    }

    /// A printable form for error messages.
    pub fn describe(&self) -> String {
        match *self {
            Path::Dotted(s) => s.to_owned(),
            Path::Segments(s) => format!("{s:?}"),
            Path::Hashed(k) => format!("key {:#018x}", k.0),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dotted_equals_segments_and_dots_do_not_alias() {
        assert_eq!(Key::parse("a.b").unwrap(), Key::from_segments(&["a", "b"]));
        assert_ne!(Key::parse("a.b").unwrap(), Key::from_segments(&["a.b"]));
        assert_ne!(Key::from_segments(&["ab"]), Key::from_segments(&["a", "b"]));
        assert_ne!(Key::from_segments(&["a"]), Key::from_segments(&["a", ""]));
        assert_ne!(Key::from_segments(&["a\0"]), Key::from_segments(&["a"]));
        assert!(Key::parse("a..b").is_err());
        assert!(Key::parse("").is_err());
        assert!(Key::parse("a.").is_err());
    }

    #[test]
    fn long_segments_hash_every_byte() {
        let a = "abcdefghijklmnopq";
        let b = "abcdefghijklmnopr";
        assert_ne!(Key::from_segments(&[a]), Key::from_segments(&[b]));
        assert_ne!(
            Key::from_segments(&[a]).hash32(),
            Key::from_segments(&[b]).hash32()
        );
    }

    #[test]
    fn hash_is_stable() {
        // Part of the on-disk format: must never change silently.
        let k = Key::parse("stats.health").unwrap();
        assert_eq!(k, Key::from_segments(&["stats", "health"]));
        let again = Key::ROOT.child("stats").child("health");
        assert_eq!(k, again);
    }
}
