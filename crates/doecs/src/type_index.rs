//! Lookups keyed by Rust `TypeId`: a map that does not re-hash the key, and
//! an index with a direct-mapped cache in front of it.
//!
//! Typed operations (`world.get::<T>`, `world.insert_one(e, t)`) look a type
//! up on every call, so the common case must cost one compare: a small
//! direct-mapped cache holds the latest type registered into each slot, and
//! the hash map behind it holds every type.

use std::any::TypeId;
use std::collections::HashMap;
use std::hash::{BuildHasher, BuildHasherDefault, Hasher};

/// Hasher for `TypeId` keys: a `TypeId` is already a strong hash, so this just
/// keeps its bits instead of hashing again.
#[derive(Default)]
pub struct TypeIdHasher(u64);

impl Hasher for TypeIdHasher {
    #[inline]
    fn finish(&self) -> u64 {
        self.0
    }
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        // TypeId hashes itself as one or two u64 writes; fold whatever arrives.
        for chunk in bytes.chunks(8) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.0 = self.0.rotate_left(5) ^ u64::from_ne_bytes(word);
        }
    }
    #[inline]
    fn write_u64(&mut self, value: u64) {
        self.0 = self.0.rotate_left(5) ^ value;
    }
}

/// A map keyed by `TypeId` that does not re-hash the key.
pub type TypeIdMap<V> = HashMap<TypeId, V, BuildHasherDefault<TypeIdHasher>>;

/// Slots in the direct-mapped cache.
const FAST_SLOTS: usize = 64;

/// A value the cache's vacant slots hold. It is never returned: a vacant
/// slot's key is [`Vacant`]'s `TypeId`, which no caller looks up.
pub(crate) trait Placeholder: Copy {
    /// Any value of the type.
    const PLACEHOLDER: Self;
}

impl Placeholder for u32 {
    const PLACEHOLDER: Self = 0;
}

/// The key of a vacant cache slot: a private type, so no caller has its
/// `TypeId`.
struct Vacant;

/// `TypeId` to a small `Copy` value, with a one-compare cache in front.
///
/// # Invariants
/// Every cached pair whose key is not [`Vacant`]'s is also in `map`; the
/// map never holds [`Vacant`]'s.
#[derive(Clone, Debug)]
pub(crate) struct TypeIndex<V: Placeholder> {
    fast: [(TypeId, V); FAST_SLOTS],
    map: TypeIdMap<V>,
}

impl<V: Placeholder> Default for TypeIndex<V> {
    fn default() -> Self {
        TypeIndex {
            fast: [(TypeId::of::<Vacant>(), V::PLACEHOLDER); FAST_SLOTS],
            map: TypeIdMap::default(),
        }
    }
}

#[inline]
fn fast_slot(type_id: TypeId) -> usize {
    (BuildHasherDefault::<TypeIdHasher>::default().hash_one(type_id) as usize) % FAST_SLOTS
}

impl<V: Placeholder> TypeIndex<V> {
    /// The value of `type_id`, if inserted.
    #[inline]
    pub fn get(&self, type_id: TypeId) -> Option<V> {
        // A hit is one compare of the key: a vacant slot's never matches.
        match self.fast[fast_slot(type_id)] {
            (t, v) if t == type_id => Some(v),
            _ => self.map.get(&type_id).copied(),
        }
    }

    /// Records `value` for `type_id` (and caches it).
    pub fn insert(&mut self, type_id: TypeId, value: V) {
        debug_assert_ne!(type_id, TypeId::of::<Vacant>(), "the vacant key is private");
        self.map.insert(type_id, value);
        self.fast[fast_slot(type_id)] = (type_id, value);
    }

    /// Number of types recorded.
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.map.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vacant_slots_answer_nothing() {
        let index = TypeIndex::<u32>::default();
        for t in [
            TypeId::of::<u8>(),
            TypeId::of::<String>(),
            TypeId::of::<()>(),
        ] {
            assert_eq!(index.get(t), None);
        }
    }

    #[test]
    fn cached_and_uncached_lookups_agree() {
        let mut index = TypeIndex::<u32>::default();
        macro_rules! put {
            ($($t:ty => $v:expr),*) => { $(index.insert(TypeId::of::<$t>(), $v);)* };
        }
        put!(u8 => 1, u16 => 2, u32 => 3, u64 => 4, i8 => 5, i16 => 6, i32 => 7, i64 => 8,
             [u8; 1] => 9, [u8; 2] => 10, [u8; 3] => 11, (u8, u8) => 12);
        assert_eq!(index.get(TypeId::of::<u8>()), Some(1));
        assert_eq!(index.get(TypeId::of::<(u8, u8)>()), Some(12));
        assert_eq!(index.get(TypeId::of::<f32>()), None);
        assert_eq!(index.len(), 12);
    }
}
