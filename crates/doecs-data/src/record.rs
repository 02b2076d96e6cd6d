//! One entity's record: a single relocatable buffer (after Bitsquid's
//! "Allocation Adventures 1: The DataComponent").
//!
//! ```text
//! 0      2      4                 4+4n           4+8n           4+12n    4+13n
//! | count| tail | keys[n]: u32    | stamps[n]: u32| values[n]: u32| types[n]: u8 | free ... | value bytes |
//!                                                                                           ^ cap - tail   ^ cap
//! ```
//!
//! - The **header** grows up from the start: `count: u16`, `tail: u16`, then
//!   the entries as a structure of arrays, so a key search only touches
//!   `keys[]`. `stamps[]` is the per-key version used by merges.
//! - The **value area** (strings and float arrays) grows down from the end;
//!   `tail` is how many bytes of it are in use, holes included.
//! - A `values[]` word is the value itself for bools and floats, and for data
//!   values it is `offset | size << 16`, both `u16`: the bytes are at
//!   `cap - offset .. cap - offset + size`. Offsets are measured **from the
//!   end**, so a record can be moved into a bigger block by copying its header
//!   to the start and its value area to the end, with no patching, and a
//!   record of the same size moves with one plain byte copy.
//! - All integers are little-endian and nothing is aligned, so the bytes are
//!   the same on every platform and can be saved and loaded raw.
//!
//! The capacity of a record is its buffer length (at most 65535). Saved
//! records ([`RecordRef::to_vec`]) are tight: no free space and no holes.
//! [`RecordRef::from_bytes`] validates everything a reader relies on.

use crate::error::LoadError;
use crate::key::KeyHash;
use crate::value::{Floats, Value, ValueType};

/// Bytes of the fixed header (`count`, `tail`).
pub const HEADER_BYTES: usize = 4;
/// Header bytes per entry (key, stamp, value word, type code).
pub const ENTRY_BYTES: usize = 13;
/// The largest record: offsets and sizes are `u16`.
pub const MAX_RECORD_BYTES: usize = u16::MAX as usize;

#[inline(always)]
pub(crate) fn rd16(b: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([b[at], b[at + 1]])
}
#[inline(always)]
pub(crate) fn rd32(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

/// Header length of a record with `count` entries.
#[inline(always)]
pub const fn header_len(count: usize) -> usize {
    HEADER_BYTES + ENTRY_BYTES * count
}
#[inline(always)]
pub(crate) const fn keys_at(_n: usize) -> usize {
    HEADER_BYTES
}
#[inline(always)]
pub(crate) const fn stamps_at(n: usize) -> usize {
    HEADER_BYTES + 4 * n
}
#[inline(always)]
pub(crate) const fn values_at(n: usize) -> usize {
    HEADER_BYTES + 8 * n
}
#[inline(always)]
pub(crate) const fn types_at(n: usize) -> usize {
    HEADER_BYTES + 12 * n
}
/// Splits a data word into (offset from end, size).
#[inline(always)]
pub(crate) const fn split_data(word: u32) -> (usize, usize) {
    ((word & 0xffff) as usize, (word >> 16) as usize)
}
/// Packs (offset from end, size) into a data word.
#[inline(always)]
pub(crate) const fn pack_data(offset: usize, size: usize) -> u32 {
    (offset as u32) | ((size as u32) << 16)
}

/// One entry of a record.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct Entry<'a> {
    /// The 32-bit key.
    pub key: KeyHash,
    /// The per-key version (see the crate docs on merging).
    pub stamp: u32,
    /// The value.
    pub value: Value<'a>,
}

/// A validated, borrowed record. Cheap to copy; reading never fails.
///
/// ```
/// use doecs_data::{Record, RecordRef};
/// let rec = Record::from_json(&serde_json::json!({"stats": {"health": 100.0}})).unwrap();
/// let bytes = rec.as_bytes().to_vec();
/// let back = RecordRef::from_bytes(&bytes).unwrap();
/// assert_eq!(back.get("stats.health").and_then(|v| v.as_f32()), Some(100.0));
/// assert!(RecordRef::from_bytes(&bytes[..3]).is_err());
/// ```
#[derive(Copy, Clone, Debug)]
pub struct RecordRef<'a> {
    bytes: &'a [u8],
}

impl<'a> RecordRef<'a> {
    /// Wraps bytes that are known to hold a valid record (the store's own
    /// blocks). Reading a corrupt trusted record may panic but is never UB.
    #[inline(always)]
    pub(crate) fn trusted(bytes: &'a [u8]) -> Self {
        RecordRef { bytes }
    }

    /// Validates `bytes` as a record: header and value area fit, every type
    /// code is known, bools are 0/1, floats are finite, strings are UTF-8,
    /// data references lie inside the value area without overlapping, float
    /// arrays are whole floats, and keys are distinct. Any failure is a
    /// typed [`LoadError`], never a panic.
    pub fn from_bytes(bytes: &'a [u8]) -> Result<Self, LoadError> {
        let len = bytes.len();
        if !(HEADER_BYTES..=MAX_RECORD_BYTES).contains(&len) {
            return Err(LoadError::BadLength(len));
        }
        let n = rd16(bytes, 0) as usize;
        let tail = rd16(bytes, 2) as usize;
        let header = header_len(n);
        if header + tail > len {
            return Err(LoadError::Overflow {
                count: n,
                header,
                tail,
                len,
            });
        }
        let rec = RecordRef { bytes };
        let mut ranges: Vec<(usize, usize, usize)> = Vec::new();
        for i in 0..n {
            let code = bytes[types_at(n) + i];
            let ty = ValueType::from_code(code).ok_or(LoadError::BadType { entry: i, code })?;
            let word = rec.word(i);
            match ty {
                ValueType::Bool if word > 1 => {
                    return Err(LoadError::BadBool { entry: i, word });
                }
                ValueType::F32 if !f32::from_bits(word).is_finite() => {
                    return Err(LoadError::NotFinite { entry: i });
                }
                ValueType::Str | ValueType::F32s => {
                    let (offset, size) = split_data(word);
                    // Empty data is canonically at offset 0.
                    if offset > tail || size > offset || (size == 0 && offset != 0) {
                        return Err(LoadError::BadData {
                            entry: i,
                            offset,
                            size,
                            tail,
                        });
                    }
                    let start = len - offset;
                    let data = &bytes[start..start + size];
                    if ty == ValueType::Str {
                        if std::str::from_utf8(data).is_err() {
                            return Err(LoadError::NotUtf8 { entry: i });
                        }
                    } else {
                        if size % 4 != 0 {
                            return Err(LoadError::Misaligned { entry: i, size });
                        }
                        if !Floats::from_le(data).iter().all(f32::is_finite) {
                            return Err(LoadError::NotFinite { entry: i });
                        }
                    }
                    if size > 0 {
                        ranges.push((start, start + size, i));
                    }
                }
                _ => {}
            }
        }
        ranges.sort_unstable();
        for w in ranges.windows(2) {
            if w[1].0 < w[0].1 {
                return Err(LoadError::Overlap {
                    a: w[0].2,
                    b: w[1].2,
                });
            }
        }
        let mut keys: Vec<(u32, usize)> = (0..n).map(|i| (rec.key(i).0, i)).collect();
        keys.sort_unstable();
        for w in keys.windows(2) {
            if w[0].0 == w[1].0 {
                return Err(LoadError::DuplicateKey {
                    a: w[0].1,
                    b: w[1].1,
                });
            }
        }
        Ok(rec)
    }

    /// The raw bytes (the whole block, free space included).
    pub fn as_bytes(&self) -> &'a [u8] {
        self.bytes
    }

    /// Capacity: the buffer length.
    #[inline(always)]
    pub fn capacity(&self) -> usize {
        self.bytes.len()
    }

    /// Number of entries.
    #[inline(always)]
    pub fn len(&self) -> usize {
        rd16(self.bytes, 0) as usize
    }

    /// Whether the record has no entries.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Bytes of the value area in use, holes included.
    #[inline(always)]
    pub fn tail(&self) -> usize {
        rd16(self.bytes, 2) as usize
    }

    /// Free bytes between header and value area.
    #[inline(always)]
    pub fn free(&self) -> usize {
        self.capacity() - header_len(self.len()) - self.tail()
    }

    /// The key of entry `i`.
    #[inline(always)]
    pub fn key(&self, i: usize) -> KeyHash {
        KeyHash(rd32(self.bytes, keys_at(self.len()) + 4 * i))
    }

    /// The stamp of entry `i`.
    #[inline(always)]
    pub fn stamp(&self, i: usize) -> u32 {
        rd32(self.bytes, stamps_at(self.len()) + 4 * i)
    }

    /// The raw value word of entry `i`.
    #[inline(always)]
    pub(crate) fn word(&self, i: usize) -> u32 {
        rd32(self.bytes, values_at(self.len()) + 4 * i)
    }

    /// The type of entry `i`.
    #[inline(always)]
    pub fn value_type(&self, i: usize) -> ValueType {
        let code = self.bytes[types_at(self.len()) + i];
        ValueType::from_code(code).expect("record invariant: type codes are valid")
    }

    /// The entry index holding `key`. A linear scan of `keys[]` only.
    #[inline]
    pub fn find(&self, key: KeyHash) -> Option<usize> {
        let n = self.len();
        let keys = &self.bytes[HEADER_BYTES..HEADER_BYTES + 4 * n];
        keys.chunks_exact(4)
            .position(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]) == key.0)
    }

    /// The type code and value word stored under `key`: one read of the
    /// count, one bounds check of the header, a scan of `keys[]`.
    #[inline(always)]
    pub(crate) fn find_word(&self, key: KeyHash) -> Option<(u8, u32)> {
        let n = rd16(self.bytes, 0) as usize;
        let header = &self.bytes[..header_len(n)];
        let (keys, rest) = header[HEADER_BYTES..].split_at(4 * n);
        let i = keys
            .chunks_exact(4)
            .position(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]) == key.0)?;
        let (_stamps, rest) = rest.split_at(4 * n);
        let (values, types) = rest.split_at(4 * n);
        let w = &values[4 * i..4 * i + 4];
        Some((types[i], u32::from_le_bytes([w[0], w[1], w[2], w[3]])))
    }

    /// The data bytes of entry `i` (empty for inline values).
    #[inline]
    pub(crate) fn data(&self, i: usize) -> &'a [u8] {
        let (offset, size) = split_data(self.word(i));
        let start = self.capacity() - offset;
        &self.bytes[start..start + size]
    }

    /// Bytes entry `i` holds in the value area (0 for bools and floats).
    #[inline]
    pub fn data_len(&self, i: usize) -> usize {
        if self.value_type(i).has_data() {
            split_data(self.word(i)).1
        } else {
            0
        }
    }

    /// The value of entry `i`.
    #[inline]
    pub fn value(&self, i: usize) -> Value<'a> {
        let word = self.word(i);
        match self.value_type(i) {
            ValueType::Bool => Value::Bool(word != 0),
            ValueType::F32 => Value::F32(f32::from_bits(word)),
            ValueType::Str => Value::Str(
                std::str::from_utf8(self.data(i)).expect("record invariant: strings are UTF-8"),
            ),
            ValueType::F32s => Value::F32s(Floats::from_le(self.data(i))),
        }
    }

    /// Entry `i`.
    pub fn entry(&self, i: usize) -> Entry<'a> {
        Entry {
            key: self.key(i),
            stamp: self.stamp(i),
            value: self.value(i),
        }
    }

    /// The value at a path, if present.
    pub fn get<'p>(&self, path: impl Into<crate::Path<'p>>) -> Option<Value<'a>> {
        let key = path.into().key().ok()?;
        self.find(key.hash32()).map(|i| self.value(i))
    }

    /// All entries, in storage order.
    pub fn entries(&self) -> impl Iterator<Item = Entry<'a>> + '_ {
        (0..self.len()).map(|i| self.entry(i))
    }

    /// Bytes of live value data (holes excluded).
    pub fn live_data(&self) -> usize {
        (0..self.len())
            .filter(|&i| self.value_type(i).has_data())
            .map(|i| split_data(self.word(i)).1)
            .sum()
    }

    /// Length of the record written tight (no free space, no holes).
    pub fn tight_len(&self) -> usize {
        header_len(self.len()) + self.live_data()
    }

    /// The largest stamp in the record (0 when empty).
    pub fn max_stamp(&self) -> u32 {
        (0..self.len()).map(|i| self.stamp(i)).max().unwrap_or(0)
    }

    /// The record saved tight, ready for [`RecordRef::from_bytes`].
    pub fn to_vec(&self) -> Vec<u8> {
        let mut out = vec![0u8; self.tight_len()];
        crate::edit::write_tight(*self, &mut out, None);
        out
    }
}

/// An owned, validated, tight record: the unit of saving, loading, merging
/// and batch spawning.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Record {
    bytes: Vec<u8>,
}

impl Record {
    /// Validates and takes ownership of record bytes. The bytes are kept as
    /// they are (free space and holes included).
    pub fn from_bytes(bytes: Vec<u8>) -> Result<Record, LoadError> {
        RecordRef::from_bytes(&bytes)?;
        Ok(Record { bytes })
    }

    /// Wraps bytes the crate produced and knows are valid.
    pub(crate) fn trusted(bytes: Vec<u8>) -> Record {
        Record { bytes }
    }

    /// A borrowed view.
    pub fn as_ref(&self) -> RecordRef<'_> {
        RecordRef::trusted(&self.bytes)
    }

    /// The raw bytes.
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// Builds a tight record from a JSON object (flattening nested objects).
    /// Stamps are 0: a compiled base record loses every merge against edits.
    pub fn from_json(json: &serde_json::Value) -> Result<Record, crate::DataError> {
        let flat = crate::json::flatten_object(json)?;
        crate::json::check_batch_collisions(&flat)?;
        let bytes =
            crate::edit::build(flat.iter().map(|f| (f.key.hash32(), 0, f.value.as_value())))
                .map_err(|needed| crate::DataError::RecordTooLarge {
                    entity: None,
                    needed,
                })?;
        Ok(Record { bytes })
    }
}
