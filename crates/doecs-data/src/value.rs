//! Values: the restricted JSON model of Bitsquid's "Allocation Adventures 1:
//! The DataComponent".
//!
//! A stored value is a bool, an `f32`, a string or an array of `f32`. Objects
//! are not values: they are flattened into paths (`stats.health`), so every
//! change to the data is "set one key", which is what makes merges simple
//! and well defined. Strings and float arrays are monolithic: setting one
//! replaces it whole.
//!
//! In a record, bools and floats sit in their 32-bit value word; strings and
//! float arrays sit in the record's value area and the word holds their
//! `u16` offset (from the record end) and `u16` size. Float arrays are stored
//! little-endian and unaligned, so they are read through [`Floats`], a view
//! that decodes on access.

use std::cmp::Ordering;
use std::fmt;

/// The type code of a value, as stored in a record's `types[]`.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum ValueType {
    /// `true` or `false`.
    Bool = 1,
    /// A finite `f32`.
    F32 = 2,
    /// A UTF-8 string.
    Str = 3,
    /// An array of finite `f32`.
    F32s = 4,
}

impl ValueType {
    /// The type of a stored code, if the code is valid.
    pub fn from_code(code: u8) -> Option<ValueType> {
        Some(match code {
            1 => ValueType::Bool,
            2 => ValueType::F32,
            3 => ValueType::Str,
            4 => ValueType::F32s,
            _ => return None,
        })
    }

    /// Whether the value lives in the value area (string or float array).
    #[inline]
    pub fn has_data(self) -> bool {
        matches!(self, ValueType::Str | ValueType::F32s)
    }
}

/// A float array, either borrowed from the caller or read from a record.
#[derive(Copy, Clone)]
pub struct Floats<'a>(FloatsRepr<'a>);

#[derive(Copy, Clone)]
enum FloatsRepr<'a> {
    Native(&'a [f32]),
    /// Little-endian bytes, length a multiple of 4.
    Le(&'a [u8]),
}

impl<'a> Floats<'a> {
    /// Wraps a slice.
    pub fn new(values: &'a [f32]) -> Self {
        Floats(FloatsRepr::Native(values))
    }

    /// Wraps little-endian bytes; `bytes.len()` must be a multiple of 4
    /// (trailing bytes are ignored).
    pub(crate) fn from_le(bytes: &'a [u8]) -> Self {
        Floats(FloatsRepr::Le(bytes))
    }

    /// Number of floats.
    pub fn len(&self) -> usize {
        match self.0 {
            FloatsRepr::Native(s) => s.len(),
            FloatsRepr::Le(b) => b.len() / 4,
        }
    }

    /// Whether the array is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The float at `i`.
    pub fn get(&self, i: usize) -> Option<f32> {
        match self.0 {
            FloatsRepr::Native(s) => s.get(i).copied(),
            FloatsRepr::Le(b) => {
                let w = b.get(i * 4..i * 4 + 4)?;
                Some(f32::from_le_bytes([w[0], w[1], w[2], w[3]]))
            }
        }
    }

    /// The floats in order.
    pub fn iter(&self) -> impl Iterator<Item = f32> + 'a {
        let (native, le) = match self.0 {
            FloatsRepr::Native(s) => (s, &[][..]),
            FloatsRepr::Le(b) => (&[][..], b),
        };
        native.iter().copied().chain(
            le.chunks_exact(4)
                .map(|w| f32::from_le_bytes([w[0], w[1], w[2], w[3]])),
        )
    }

    /// Copies the floats into a vector.
    pub fn to_vec(&self) -> Vec<f32> {
        self.iter().collect()
    }

    /// Byte size when stored.
    pub(crate) fn byte_len(&self) -> usize {
        self.len() * 4
    }

    /// Writes the little-endian bytes into `out` (`out.len() == byte_len()`).
    pub(crate) fn write_le(&self, out: &mut [u8]) {
        match self.0 {
            FloatsRepr::Native(s) => {
                for (dst, f) in out.chunks_exact_mut(4).zip(s) {
                    dst.copy_from_slice(&f.to_le_bytes());
                }
            }
            FloatsRepr::Le(b) => out.copy_from_slice(&b[..out.len()]),
        }
    }
}

impl PartialEq for Floats<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len() && self.iter().zip(other.iter()).all(|(a, b)| a == b)
    }
}

impl fmt::Debug for Floats<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

/// One value of the restricted model, borrowed.
///
/// ```
/// use doecs_data::Value;
/// let v: Value = 3.5f32.into();
/// assert_eq!(v, Value::F32(3.5));
/// let s: Value = "The One".into();
/// assert_eq!(s.as_str(), Some("The One"));
/// ```
#[derive(Copy, Clone, Debug, PartialEq)]
pub enum Value<'a> {
    /// A bool.
    Bool(bool),
    /// A finite float.
    F32(f32),
    /// A string.
    Str(&'a str),
    /// An array of finite floats.
    F32s(Floats<'a>),
}

impl From<bool> for Value<'_> {
    fn from(b: bool) -> Self {
        Value::Bool(b)
    }
}
impl From<f32> for Value<'_> {
    fn from(f: f32) -> Self {
        Value::F32(f)
    }
}
impl<'a> From<&'a str> for Value<'a> {
    fn from(s: &'a str) -> Self {
        Value::Str(s)
    }
}
impl<'a> From<&'a String> for Value<'a> {
    fn from(s: &'a String) -> Self {
        Value::Str(s)
    }
}
impl<'a> From<&'a [f32]> for Value<'a> {
    fn from(s: &'a [f32]) -> Self {
        Value::F32s(Floats::new(s))
    }
}
impl<'a, const N: usize> From<&'a [f32; N]> for Value<'a> {
    fn from(s: &'a [f32; N]) -> Self {
        Value::F32s(Floats::new(s))
    }
}
impl<'a> From<&'a Vec<f32>> for Value<'a> {
    fn from(s: &'a Vec<f32>) -> Self {
        Value::F32s(Floats::new(s))
    }
}

impl<'a> Value<'a> {
    /// The value's type.
    pub fn value_type(&self) -> ValueType {
        match self {
            Value::Bool(_) => ValueType::Bool,
            Value::F32(_) => ValueType::F32,
            Value::Str(_) => ValueType::Str,
            Value::F32s(_) => ValueType::F32s,
        }
    }

    /// The bool, if this is one.
    pub fn as_bool(&self) -> Option<bool> {
        match *self {
            Value::Bool(b) => Some(b),
            _ => None,
        }
    }

    /// The float, if this is one.
    pub fn as_f32(&self) -> Option<f32> {
        match *self {
            Value::F32(f) => Some(f),
            _ => None,
        }
    }

    /// The string, if this is one.
    pub fn as_str(&self) -> Option<&'a str> {
        match *self {
            Value::Str(s) => Some(s),
            _ => None,
        }
    }

    /// The float array, if this is one.
    pub fn as_f32s(&self) -> Option<Floats<'a>> {
        match *self {
            Value::F32s(f) => Some(f),
            _ => None,
        }
    }

    /// Whether every float in the value is finite.
    pub(crate) fn is_finite(&self) -> bool {
        match self {
            Value::F32(f) => f.is_finite(),
            Value::F32s(a) => a.iter().all(f32::is_finite),
            _ => true,
        }
    }

    /// Bytes the value needs in the value area.
    pub(crate) fn data_len(&self) -> usize {
        match self {
            Value::Str(s) => s.len(),
            Value::F32s(a) => a.byte_len(),
            _ => 0,
        }
    }

    /// The value word of an inline value (bool or float).
    pub(crate) fn inline_word(&self) -> u32 {
        match *self {
            Value::Bool(b) => b as u32,
            Value::F32(f) => f.to_bits(),
            _ => 0,
        }
    }

    /// Writes the data bytes (`out.len() == data_len()`).
    pub(crate) fn write_data(&self, out: &mut [u8]) {
        match self {
            Value::Str(s) => out.copy_from_slice(s.as_bytes()),
            Value::F32s(a) => a.write_le(out),
            _ => {}
        }
    }

    /// The merge tie-break order: by type code, then by stored bytes
    /// (the value word for bools and floats, the data bytes otherwise).
    /// A total order, so merging is commutative even on equal stamps.
    pub fn merge_order(&self, other: &Value<'_>) -> Ordering {
        self.value_type()
            .cmp(&other.value_type())
            .then_with(|| match (self, other) {
                (Value::Str(a), Value::Str(b)) => a.as_bytes().cmp(b.as_bytes()),
                (Value::F32s(a), Value::F32s(b)) => {
                    let ab = a.iter().flat_map(f32::to_le_bytes);
                    let bb = b.iter().flat_map(f32::to_le_bytes);
                    ab.cmp(bb)
                }
                _ => self.inline_word().cmp(&other.inline_word()),
            })
    }

    /// The value as JSON (floats become JSON numbers through `f64`).
    pub fn to_json(&self) -> serde_json::Value {
        match *self {
            Value::Bool(b) => serde_json::Value::Bool(b),
            Value::F32(f) => json_number(f),
            Value::Str(s) => serde_json::Value::String(s.to_owned()),
            Value::F32s(a) => serde_json::Value::Array(a.iter().map(json_number).collect()),
        }
    }
}

/// A float as a JSON number: whole numbers below 2^24 (exact in `f32`) as
/// integers, so `{"health": 100}` exports as it was imported.
fn json_number(f: f32) -> serde_json::Value {
    if f == f.trunc() && f.abs() < 16_777_216.0 && !(f == 0.0 && f.is_sign_negative()) {
        return serde_json::Value::from(f as i64);
    }
    serde_json::Number::from_f64(f as f64)
        .map(serde_json::Value::Number)
        .unwrap_or(serde_json::Value::Null)
}
