//! Keys: flattened paths, hashed segment by segment (after Bitsquid's
//! "Allocation Adventures 1: The DataComponent").
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
//! and platform independent. Changing it changes `doecs_resource::FORMAT_VERSION`,
//! since level blobs carry records (version 2 of that format is the current
//! hash: short segments hashed as zero-padded words).

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
/// Hash a path once and reuse the key, as Bitsquid's DataComponent does with
/// hashed strings:
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
const MUL3: u64 = 0xa076_1d64_78bd_642f;

/// Folded 64x64->128 multiply: a cheap, well-mixing step.
#[inline(always)]
const fn mix(x: u64, m: u64) -> u64 {
    let p = (x as u128).wrapping_mul(m as u128);
    (p as u64) ^ ((p >> 64) as u64)
}

#[inline(always)]
const fn rd64(s: &[u8], at: usize) -> u64 {
    // One bounds check (split_at), then a fixed-size read.
    let w = s.split_at(at).1.split_at(8).0;
    u64::from_le_bytes([w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7]])
}

#[inline(always)]
const fn rd32(s: &[u8], at: usize) -> u64 {
    let w = s.split_at(at).1.split_at(4).0;
    u32::from_le_bytes([w[0], w[1], w[2], w[3]]) as u64
}

/// The segment `s[at..at + len]`, `len <= 16`, as two little-endian words,
/// zero-padded (the reference form; [`parse_short`] gets the same words out
/// of registers).
#[inline(always)]
const fn padded_pair(s: &[u8], at: usize, len: usize) -> (u64, u64) {
    let mut buf = [0u8; 16];
    let mut i = 0;
    while i < len {
        buf[i] = s[at + i];
        i += 1;
    }
    (rd64(&buf, 0), rd64(&buf, 8))
}

/// Hash of one segment from its words: short segments are their zero-padded
/// bytes `(a, b)`; the length is mixed in so `"a"` and `"a\0"` differ.
#[inline(always)]
const fn short_segment_hash(a: u64, b: u64, len: usize) -> u64 {
    mix(a ^ MUL3 ^ SEED ^ (len as u64).wrapping_mul(MUL), b ^ MUL2)
}

/// Hash of the segment `s[at..at + len]` on its own (wyhash-style: up to 16
/// bytes in one multiply, 16 bytes a step for longer input, the length
/// mixed in).
#[inline(always)]
const fn segment_hash(s: &[u8], at: usize, len: usize) -> u64 {
    if len <= 16 {
        let (a, b) = padded_pair(s, at, len);
        return short_segment_hash(a, b, len);
    }
    let mut h = SEED ^ (len as u64).wrapping_mul(MUL);
    let mut i = 0;
    while len - i > 16 {
        h = mix(h ^ rd64(s, at + i) ^ MUL3, rd64(s, at + i + 8) ^ MUL2);
        i += 16;
    }
    mix(
        rd64(s, at + len - 16) ^ MUL3 ^ h,
        rd64(s, at + len - 8) ^ MUL2,
    )
}

/// The key of a dotted path, or `None` if a segment is empty.
#[inline(always)]
const fn parse_dotted(bytes: &[u8]) -> Option<Key> {
    let mut k = Key::ROOT;
    let mut start = 0;
    let mut i = 0;
    loop {
        if i == bytes.len() || bytes[i] == b'.' {
            if i == start {
                return None;
            }
            k = k.child_range(bytes, start, i - start);
            if i == bytes.len() {
                return Some(k);
            }
            start = i + 1;
        }
        i += 1;
    }
}

/// Bit 7 of every byte of `w` that is a `.` (exact, no false positives).
#[inline(always)]
fn dot_mask(w: u64) -> u64 {
    const LOW7: u64 = 0x7f7f_7f7f_7f7f_7f7f;
    let x = w ^ 0x2e2e_2e2e_2e2e_2e2e;
    !(((x & LOW7).wrapping_add(LOW7)) | x | LOW7)
}

/// The first `len` (1..=7) bytes of `bytes` as a little-endian word,
/// zero-padded: two overlapping 4-byte loads, or three byte loads.
#[inline(always)]
fn padded_word(bytes: &[u8]) -> u64 {
    let len = bytes.len();
    if len >= 4 {
        let lo = rd32(bytes, 0);
        let hi = rd32(bytes, len - 4);
        lo | (hi >> (8 * (8 - len)) << 32)
    } else {
        let mut w = bytes[0] as u64;
        w |= (bytes[len / 2] as u64) << (8 * (len / 2));
        w | (bytes[len - 1] as u64) << (8 * (len - 1))
    }
}

/// One remembered short path: its zero-padded words, length and key.
/// `len == 0` marks an empty slot (short paths have 1..=16 bytes).
#[derive(Copy, Clone)]
struct MemoEntry {
    lo: u64,
    hi: u64,
    len: usize,
    key: Key,
}

/// Slots in the per-thread memo of parsed short paths (a power of two).
const MEMO_SLOTS: usize = 32;
/// Shift that keeps the top `log2(MEMO_SLOTS)` bits of a 64-bit hash.
const MEMO_SHIFT: u32 = 64 - MEMO_SLOTS.trailing_zeros();

thread_local! {
    /// Recently parsed short paths on this thread, direct-mapped. Parsing is
    /// a pure function of the bytes, so a hit (same length, same padded
    /// words: every byte compared) returns exactly what parsing would; it
    /// only saves the per-segment hashing when a loop reads the same path
    /// for many entities, the common case the article hashes once for.
    static PARSED: [std::cell::Cell<MemoEntry>; MEMO_SLOTS] = const {
        [const {
            std::cell::Cell::new(MemoEntry { lo: 0, hi: 0, len: 0, key: Key::ROOT })
        }; MEMO_SLOTS]
    };
}

/// `parse_dotted` for paths of 1..=16 bytes: the path is loaded once as two
/// zero-padded words, looked up in the per-thread memo, and otherwise
/// parsed out of registers ([`parse_words`]).
#[inline(always)]
fn parse_short(bytes: &[u8]) -> Option<Key> {
    let len = bytes.len();
    let (lo, hi) = if len <= 8 {
        (
            if len == 8 {
                rd64(bytes, 0)
            } else {
                padded_word(bytes)
            },
            0,
        )
    } else {
        // The high word covers bytes len-8..len; drop the bytes `lo` has.
        (rd64(bytes, 0), rd64(bytes, len - 8) >> (8 * (16 - len)))
    };
    // The top bits of a multiplicative hash pick the slot.
    let slot = ((lo ^ hi.rotate_left(29) ^ len as u64).wrapping_mul(MUL) >> MEMO_SHIFT) as usize;
    PARSED.with(|memo| {
        let cell = &memo[slot];
        let hit = cell.get();
        if hit.len == len && hit.lo == lo && hit.hi == hi {
            return Some(hit.key);
        }
        let key = parse_words(lo, hi, len)?;
        cell.set(MemoEntry { lo, hi, len, key });
        Some(key)
    })
}

/// `parse_dotted` for a path of `len` (1..=16) bytes given as zero-padded
/// words: the dots are found with bit tricks, and each segment's padded
/// words are a shift and a mask of the path.
#[inline(never)]
fn parse_words(lo: u64, hi: u64, len: usize) -> Option<Key> {
    let path = (lo as u128) | ((hi as u128) << 64);
    let mut dots = (dot_mask(lo) as u128) | ((dot_mask(hi) as u128) << 64);
    let mut k = Key::ROOT;
    let mut start = 0;
    loop {
        let end = if dots == 0 {
            len
        } else {
            dots.trailing_zeros() as usize / 8
        };
        let seg_len = end - start;
        if seg_len == 0 {
            return None;
        }
        // 1 <= seg_len <= 16, so both shifts are below 128.
        let seg = (path >> (8 * start)) & (u128::MAX >> (128 - 8 * seg_len));
        k = k.child_hash(short_segment_hash(seg as u64, (seg >> 64) as u64, seg_len));
        if end == len {
            return Some(k);
        }
        start = end + 1;
        dots &= dots - 1;
    }
}

/// `parse_dotted` with a byte scan for the dots.
#[inline(never)]
fn parse_scan(bytes: &[u8]) -> Option<Key> {
    let mut k = Key::ROOT;
    let mut start = 0;
    loop {
        let end = bytes[start..].iter().position(|&b| b == b'.');
        let len = end.unwrap_or(bytes.len() - start);
        if len == 0 {
            return None;
        }
        k = k.child_range(bytes, start, len);
        match end {
            Some(e) => start += e + 1,
            None => return Some(k),
        }
    }
}

impl Key {
    /// The key of the empty path (the root); [`Key::child`] extends it.
    pub const ROOT: Key = Key(SEED);

    /// This path extended by one segment.
    #[inline]
    pub const fn child(self, segment: &str) -> Key {
        self.child_range(segment.as_bytes(), 0, segment.len())
    }

    #[inline(always)]
    const fn child_range(self, bytes: &[u8], at: usize, len: usize) -> Key {
        self.child_hash(segment_hash(bytes, at, len))
    }

    /// Folds one segment's hash into this path's key.
    #[inline(always)]
    const fn child_hash(self, segment: u64) -> Key {
        Key(mix(self.0.rotate_left(23) ^ segment, MUL))
    }

    /// The key of a dotted path, computable at compile time, as Bitsquid's
    /// DataComponent hashes its strings once
    /// (`const HEALTH: Key = Key::constant("stats.health");`).
    /// A path with an empty segment gives [`Key::ROOT`], which every store
    /// operation refuses with `DataError::EmptySegment`.
    ///
    /// ```
    /// use doecs_data::Key;
    /// const HEALTH: Key = Key::constant("stats.health");
    /// assert_eq!(HEALTH, Key::parse("stats.health").unwrap());
    /// assert_eq!(Key::constant("a..b"), Key::ROOT);
    /// ```
    pub const fn constant(path: &str) -> Key {
        match parse_dotted(path.as_bytes()) {
            Some(k) => k,
            None => Key::ROOT,
        }
    }

    /// The key of a path given as segments. Segments may be empty or contain
    /// `.`; they are taken literally. No segments at all gives [`Key::ROOT`],
    /// which stores refuse as a path.
    pub fn from_segments<S: AsRef<str>>(segments: &[S]) -> Key {
        segments.iter().fold(Key::ROOT, |k, s| k.child(s.as_ref()))
    }

    /// The key of a dotted path (`"stats.health"`). Refuses empty segments.
    #[inline(always)]
    pub fn parse(path: &str) -> Result<Key, DataError> {
        match Key::parse_checked(path) {
            Some(k) => Ok(k),
            None => Err(empty_segment(path)),
        }
    }

    /// [`Key::parse`] without the error value: `None` when a segment is
    /// empty. Inlined into the store's hot paths, so the key stays in
    /// registers and the error (which owns a `String`) is never built there.
    #[inline(always)]
    pub(crate) fn parse_checked(path: &str) -> Option<Key> {
        let bytes = path.as_bytes();
        if (1..=16).contains(&bytes.len()) {
            parse_short(bytes)
        } else {
            parse_scan(bytes)
        }
    }

    /// The 32-bit key stored in records.
    #[inline]
    pub fn hash32(self) -> KeyHash {
        KeyHash((self.0 ^ (self.0 >> 32)) as u32)
    }

    /// A key from its 64 bits ([`Key::bits`]), as save files hold it.
    pub(crate) fn from_bits(bits: u64) -> Key {
        Key(bits)
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

/// The error for a path with an empty segment, kept out of the hot paths.
#[cold]
#[inline(never)]
fn empty_segment(path: &str) -> DataError {
    DataError::EmptySegment(path.to_owned())
}

impl Path<'_> {
    /// The path's key.
    #[inline(always)]
    pub fn key(&self) -> Result<Key, DataError> {
        match self.key_checked() {
            Some(k) => Ok(k),
            None => Err(match *self {
                Path::Dotted(s) => empty_segment(s),
                _ => empty_segment(""),
            }),
        }
    }

    /// The path's key, or `None` when a segment is empty (see [`Path::key`]
    /// for the error); what the store's reads use.
    #[inline(always)]
    pub(crate) fn key_checked(&self) -> Option<Key> {
        match *self {
            Path::Dotted(s) => Key::parse_checked(s),
            Path::Segments([]) => None,
            Path::Segments(s) => Some(Key::from_segments(s)),
            Path::Hashed(k) if k == Key::ROOT => None,
            Path::Hashed(k) => Some(k),
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
    fn every_byte_of_every_length_matters() {
        let base: Vec<u8> = (0..40u8).map(|i| b'a' + i % 26).collect();
        for len in 0..40 {
            let s = std::str::from_utf8(&base[..len]).unwrap();
            let k = Key::from_segments(&[s]);
            for i in 0..len {
                let mut t = base[..len].to_vec();
                t[i] = b'Z';
                let t = std::str::from_utf8(&t).unwrap();
                assert_ne!(k, Key::from_segments(&[t]), "len {len} byte {i}");
            }
            let longer = std::str::from_utf8(&base[..len + 1]).unwrap();
            assert_ne!(k, Key::from_segments(&[longer]));
        }
    }

    #[test]
    fn fast_parse_agrees_with_the_const_fold() {
        let samples = [
            "a",
            "ab",
            "abc",
            "a.c",
            ".bc",
            "ab.",
            "a.b.",
            "ab.c",
            "abc.d",
            "health",
            "a.bcdef",
            "abcde.g",
            "abcdef.",
            "name",
            "stats.health",
            "stats.mana",
            "abcdefgh",
            "abcdefg.",
            ".bcdefgh",
            "a.b.c.d.e.f.g.h",
            "a..bcdefgh",
            "abcdefghijklmnop",
            "abcdefghijklmno.",
            "abcdefgh.jklmnop",
            "status_effects.drunk",
            "x.y",
            "........",
            "aaaaaaaa.bbbbbbb",
            "a.bbbbbbbbbbbbbb",
            "aaaaaaaaaaaaaa.b",
        ];
        for s in samples {
            let fast = Key::parse(s).ok();
            let reference = parse_dotted(s.as_bytes());
            assert_eq!(fast, reference, "{s:?}");
            let by_segments = (!s.split('.').any(str::is_empty))
                .then(|| Key::from_segments(&s.split('.').collect::<Vec<_>>()));
            assert_eq!(fast, by_segments, "{s:?}");
        }
    }

    proptest::proptest! {
        /// The word-at-a-time parser, the const byte loop and the segment
        /// fold agree on every path, dots and multi-byte characters included.
        #[test]
        fn fast_parse_agrees_on_random_paths(s in "[ab.\\x00é]{0,40}") {
            let fast = Key::parse(&s).ok();
            proptest::prop_assert_eq!(fast, parse_dotted(s.as_bytes()));
            let by_segments = (!s.split('.').any(str::is_empty))
                .then(|| Key::from_segments(&s.split('.').collect::<Vec<_>>()));
            proptest::prop_assert_eq!(fast, by_segments);
        }
    }

    #[test]
    fn memo_hits_return_what_parsing_returns() {
        // More distinct short paths than memo slots, read interleaved and
        // repeatedly, so slots are hit, missed and overwritten.
        let paths: Vec<String> = (0..200)
            .map(|i| match i % 4 {
                0 => format!("k{i}"),
                1 => format!("s.k{i}"),
                2 => format!("stats.v{i}.x"),
                _ => format!("{i}\0.{i}"),
            })
            .filter(|p| p.len() <= 16)
            .collect();
        for round in 0..3 {
            for j in 0..paths.len() {
                let p = &paths[(j * 7 + round) % paths.len()];
                assert_eq!(Key::parse(p).ok(), parse_dotted(p.as_bytes()), "{p:?}");
            }
        }
        assert!(
            Key::parse("a..b").is_err(),
            "a refused path is never memoised"
        );
        assert!(Key::parse("a..b").is_err());
    }

    #[test]
    fn empty_paths_are_refused() {
        let none: [&str; 0] = [];
        assert!(Path::Segments(&none).key().is_err());
        assert!(Path::Hashed(Key::ROOT).key().is_err());
        assert!(Path::Segments(&[""]).key().is_ok());
    }

    #[test]
    fn hash_is_stable() {
        // Part of the on-disk format: must never change silently.
        let k = Key::parse("stats.health").unwrap();
        assert_eq!(k, Key::from_segments(&["stats", "health"]));
        let again = Key::ROOT.child("stats").child("health");
        assert_eq!(k, again);
        assert_eq!(k.bits(), 6297049266409499977);
        assert_eq!(
            k.hash32(),
            KeyHash((6297049266409499977u64 ^ (6297049266409499977u64 >> 32)) as u32)
        );
    }
}
