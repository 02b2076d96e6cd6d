//! Typed errors of the data store. Every refusal is one of these variants;
//! no operation panics on bad input and a refused operation changes nothing.

use crate::key::KeyHash;
use doecs::Entity;

/// Why a data operation was refused. A refused operation leaves the store
/// exactly as it was.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DataError {
    /// A dotted path had an empty segment (`""`, `"a..b"`, `".a"`, `"a."`),
    /// or a path had no segments at all.
    #[error("path {0:?} has an empty segment or none; use Path::Segments for keys that are empty or contain '.'")]
    EmptySegment(String),
    /// Two different paths hash to the same 32-bit key in this store.
    #[error("key collision: path {path} hashes to key {key} which this store already uses for another path{}", other.as_ref().map(|o| format!(" ({o})")).unwrap_or_default())]
    KeyCollision {
        /// The 32-bit key both paths hash to.
        key: KeyHash,
        /// The path being admitted (its name if known, else its 64-bit hash).
        path: String,
        /// The other path's name, when the store keeps names.
        other: Option<String>,
    },
    /// A JSON array holds something other than numbers.
    #[error("array at {path:?} holds a non-number: only arrays of numbers are allowed, because strings and float arrays merge as one monolithic value; for sets of other items use an object keyed by unique ids (e.g. GUIDs), so every change is a key set that merges cleanly")]
    ArrayNotNumeric {
        /// Dotted path of the array.
        path: String,
    },
    /// JSON `null` has no place in the restricted model.
    #[error("null at {path:?}: the data model has bool, float, string, object and arrays of numbers only; remove the key instead")]
    Null {
        /// Dotted path of the null.
        path: String,
    },
    /// A float is NaN or infinite, or a JSON number does not fit an `f32`.
    #[error("number at {path:?} is not a finite f32")]
    NotFinite {
        /// Dotted path of the number.
        path: String,
    },
    /// `set_json` was given something other than an object at the top level.
    #[error("a record is imported from a JSON object, got {0}")]
    NotAnObject(&'static str),
    /// The record would exceed 64 KiB (offsets and sizes are `u16`).
    #[error("record{} would need {needed} bytes, more than the 65535 a u16 offset can address", entity.map(|e| format!(" of {e}")).unwrap_or_default())]
    RecordTooLarge {
        /// The entity whose record would overflow (none for a free-standing record).
        entity: Option<Entity>,
        /// Bytes the record would need.
        needed: usize,
    },
    /// The arena would exceed 4 GiB (record starts are `u32`).
    #[error("the data arena would exceed 4 GiB")]
    ArenaFull,
    /// The entity is older than the one that owns the record slot.
    #[error("entity {0} is stale: a newer entity with its index owns the record")]
    StaleEntity(Entity),
    /// A key has no name in the side dictionary (names off, or the key came
    /// from raw record bytes), so it cannot be exported to JSON.
    #[error("key {0} has no name in this store's dictionary, so it cannot be exported")]
    UnnamedKey(KeyHash),
    /// Export found a path that is both a value and a prefix of other paths.
    #[error("export conflict: {0:?} is both a value and an object")]
    ExportConflict(String),
    /// Record bytes failed validation.
    #[error(transparent)]
    Load(#[from] LoadError),
}

/// Why record bytes were refused by [`RecordRef::from_bytes`](crate::RecordRef::from_bytes).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LoadError {
    /// Fewer bytes than the 4-byte header, or more than 65535.
    #[error("record is {0} bytes; a record is 4..=65535 bytes")]
    BadLength(usize),
    /// The header and the value bytes claimed by `tail` do not fit.
    #[error("header of {count} entries ({header} bytes) plus {tail} value bytes exceed the {len}-byte record")]
    Overflow {
        /// Entry count.
        count: usize,
        /// Header bytes for that count.
        header: usize,
        /// The `tail` field.
        tail: usize,
        /// Record length.
        len: usize,
    },
    /// An entry's type code is unknown.
    #[error("entry {entry} has unknown type code {code}")]
    BadType {
        /// Entry index.
        entry: usize,
        /// The code.
        code: u8,
    },
    /// A bool word is neither 0 nor 1.
    #[error("entry {entry} is a bool with word {word:#x}")]
    BadBool {
        /// Entry index.
        entry: usize,
        /// The word.
        word: u32,
    },
    /// A float (scalar or array element) is NaN or infinite.
    #[error("entry {entry} holds a non-finite float")]
    NotFinite {
        /// Entry index.
        entry: usize,
    },
    /// A data reference points outside the value area.
    #[error("entry {entry} refers to {size} bytes at {offset} from the end, outside the {tail}-byte value area")]
    BadData {
        /// Entry index.
        entry: usize,
        /// Offset from the record end.
        offset: usize,
        /// Size in bytes.
        size: usize,
        /// The value area size.
        tail: usize,
    },
    /// A float array's size is not a multiple of 4.
    #[error("entry {entry} is a float array of {size} bytes, not a multiple of 4")]
    Misaligned {
        /// Entry index.
        entry: usize,
        /// Size in bytes.
        size: usize,
    },
    /// Two entries' value bytes overlap.
    #[error("entries {a} and {b} share value bytes")]
    Overlap {
        /// One entry.
        a: usize,
        /// The other.
        b: usize,
    },
    /// A string is not UTF-8.
    #[error("entry {entry} is a string that is not UTF-8")]
    NotUtf8 {
        /// Entry index.
        entry: usize,
    },
    /// Two entries have the same key.
    #[error("entries {a} and {b} have the same key")]
    DuplicateKey {
        /// One entry.
        a: usize,
        /// The other.
        b: usize,
    },
}
