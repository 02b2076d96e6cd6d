//! The per-type functions a registration carries: how one component's
//! values are written to and read from saves, column by column (archetype
//! tables and sparse sections alike).

use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;

/// A column of decoded values whose memory the world takes over.
pub(crate) trait DecodedColumn {
    /// The first value.
    fn as_ptr(&self) -> *const u8;
    /// How many values.
    fn len(&self) -> usize;
    /// Forgets the first `moved` values (the world moved them out) and
    /// drops the others; the memory is freed on drop.
    ///
    /// # Safety
    /// Only after the first `moved` values (at most `len`) were moved out.
    unsafe fn forget_moved(&mut self, moved: usize);
    /// Calls `check` on every value, stopping at the first error (with the
    /// value's index).
    fn check_each(
        &self,
        check: &dyn Fn(&dyn std::any::Any) -> Result<(), String>,
    ) -> Result<(), (usize, String)>;
}

impl<T: 'static> DecodedColumn for Vec<T> {
    fn as_ptr(&self) -> *const u8 {
        self.as_slice().as_ptr().cast()
    }
    fn len(&self) -> usize {
        Vec::len(self)
    }
    unsafe fn forget_moved(&mut self, moved: usize) {
        let len = Vec::len(self);
        assert!(moved <= len, "moved {moved} of {len} values");
        // SAFETY: the caller moved values `..moved` out, so only `moved..`
        // are still owned here: length 0 first (a panicking `Drop` then
        // leaks instead of dropping twice), then those are dropped in
        // place, leaving only the allocation for `Vec`'s drop.
        unsafe {
            self.set_len(0);
            let rest = self.as_mut_ptr().add(moved);
            std::ptr::drop_in_place(std::ptr::slice_from_raw_parts_mut(rest, len - moved));
        }
    }
    fn check_each(
        &self,
        check: &dyn Fn(&dyn std::any::Any) -> Result<(), String>,
    ) -> Result<(), (usize, String)> {
        for (i, v) in self.iter().enumerate() {
            check(v).map_err(|m| (i, m))?;
        }
        Ok(())
    }
}

pub(super) type Decoded = Box<dyn DecodedColumn>;

/// Reads `count` plain values from raw little-endian memory (`None`: the
/// bytes are not `count` values long).
type FromRaw = fn(&[u8], usize) -> Option<Decoded>;

/// How one registered type is written to and read from saves.
#[derive(Clone, Copy)]
pub(crate) struct SaveFns {
    /// Appends the JSON of `count` values starting at the pointer.
    pub(super) to_json: unsafe fn(*const u8, usize, &mut Vec<Value>) -> Result<(), String>,
    /// Appends the postcard encodings of `count` values.
    pub(super) to_postcard: unsafe fn(*const u8, usize, &mut Vec<u8>) -> Result<(), String>,
    /// Parses JSON values.
    pub(super) from_json: fn(&[Value]) -> Result<Decoded, String>,
    /// Parses `count` postcard values, which must fill the bytes exactly.
    pub(super) from_postcard: fn(&[u8], usize) -> Result<Decoded, String>,
    /// For plain types: reads `count` values from raw little-endian memory.
    pub(super) from_raw: Option<FromRaw>,
    /// Bytes per value.
    pub(super) size: usize,
}

impl SaveFns {
    /// The serde path for `T`.
    pub(crate) fn serde<T: Serialize + DeserializeOwned + 'static>() -> SaveFns {
        /// # Safety
        /// `ptr` points to `count` live `T`s nobody writes meanwhile.
        unsafe fn to_json<T: Serialize>(
            ptr: *const u8,
            count: usize,
            out: &mut Vec<Value>,
        ) -> Result<(), String> {
            // SAFETY: the caller's contract.
            let values = unsafe { std::slice::from_raw_parts(ptr.cast::<T>(), count) };
            for v in values {
                out.push(serde_json::to_value(v).map_err(|e| e.to_string())?);
            }
            Ok(())
        }
        /// # Safety
        /// As `to_json`.
        unsafe fn to_postcard<T: Serialize>(
            ptr: *const u8,
            count: usize,
            out: &mut Vec<u8>,
        ) -> Result<(), String> {
            // SAFETY: the caller's contract.
            let values = unsafe { std::slice::from_raw_parts(ptr.cast::<T>(), count) };
            for v in values {
                let taken = std::mem::take(out);
                *out = postcard::to_extend(v, taken).map_err(|e| e.to_string())?;
            }
            Ok(())
        }
        fn from_json<T: DeserializeOwned + 'static>(values: &[Value]) -> Result<Decoded, String> {
            let mut out: Vec<T> = Vec::with_capacity(values.len());
            for v in values {
                out.push(T::deserialize(v).map_err(|e| e.to_string())?);
            }
            Ok(Box::new(out))
        }
        fn from_postcard<T: DeserializeOwned + 'static>(
            mut bytes: &[u8],
            count: usize,
        ) -> Result<Decoded, String> {
            // A corrupt count must not reserve more than the bytes can hold.
            let mut out: Vec<T> = Vec::with_capacity(count.min(bytes.len()));
            for i in 0..count {
                let (v, rest) = postcard::take_from_bytes::<T>(bytes)
                    .map_err(|e| format!("value {i} of {count}: {e}"))?;
                out.push(v);
                bytes = rest;
            }
            if !bytes.is_empty() {
                return Err(format!("{} bytes left after {count} values", bytes.len()));
            }
            Ok(Box::new(out))
        }
        SaveFns {
            to_json: to_json::<T>,
            to_postcard: to_postcard::<T>,
            from_json: from_json::<T>,
            from_postcard: from_postcard::<T>,
            from_raw: None,
            size: std::mem::size_of::<T>(),
        }
    }

    /// The serde path for `T`, plus raw columns.
    pub(crate) fn plain<T: bytemuck::Pod + Serialize + DeserializeOwned + 'static>() -> SaveFns {
        fn from_raw<T: bytemuck::Pod>(bytes: &[u8], count: usize) -> Option<Decoded> {
            let size = std::mem::size_of::<T>();
            if bytes.len() != count.checked_mul(size)? {
                return None;
            }
            let mut out: Vec<T> = vec![T::zeroed(); count];
            if size != 0 {
                bytemuck::cast_slice_mut::<T, u8>(&mut out).copy_from_slice(bytes);
            }
            Some(Box::new(out))
        }
        SaveFns {
            from_raw: Some(from_raw::<T>),
            ..SaveFns::serde::<T>()
        }
    }

    /// Whether this host writes the type's columns as raw memory.
    pub(super) fn writes_raw(&self) -> bool {
        self.from_raw.is_some() && cfg!(target_endian = "little")
    }
}
