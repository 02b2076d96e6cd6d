//! The store's key registry and its optional name dictionary.
//!
//! **Collision detection (always on).** Records store 32-bit keys. For every
//! 32-bit key the store has seen by name, the registry keeps the 64-bit
//! [`Key`] of that path. A different path with the same 32-bit key is refused
//! with `DataError::KeyCollision`, and a read through such a path finds
//! nothing instead of the other path's value. The cost is per distinct path
//! (12 bytes plus map overhead), not per entity. Keys that arrive in raw
//! record bytes were checked by whoever built the record ([`crate::Record`]
//! checks its own paths) and are trusted.
//!
//! **Read cache.** Reads must check the registry too, or a path colliding
//! with a stored one would read its value. A registered owner never changes
//! (paths are never unregistered), so a small direct-mapped cache of keys
//! known to own their 32-bit key answers most checks with one relaxed
//! atomic load instead of a map lookup. Atomics keep the store `Sync`.
//!
//! **Names (optional).** With names on, the registry also keeps each path's
//! segments, so records can be exported back to JSON. With names off the
//! dictionary is `None`: no memory and no work.

use crate::error::DataError;
use crate::key::{Key, KeyHash, Path};
use std::collections::hash_map::Entry;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};

/// Entries in the read cache.
const CACHE: usize = 256;

/// A hasher for keys that are already hashes: one multiply.
#[derive(Default)]
pub(crate) struct PreHashed(u64);

impl Hasher for PreHashed {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    fn write_u32(&mut self, x: u32) {
        self.0 = (x as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
}

type Map<V> = HashMap<u32, V, BuildHasherDefault<PreHashed>>;

/// A key registry as a save file holds it.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct SavedKeys {
    /// `(32-bit key, 64-bit key)` of every path seen by name.
    pub full: Vec<(u32, u64)>,
    /// `(32-bit key, path segments)`, when names are kept.
    pub names: Option<Vec<(u32, Vec<String>)>>,
}

/// See the module docs.
#[derive(Debug)]
pub(crate) struct KeyRegistry {
    full: Map<u64>,
    names: Option<Map<Box<[Box<str>]>>>,
    /// Keys known to own their 32-bit key; `Key::ROOT` (never a valid path
    /// key) marks an empty entry.
    owners: Box<[AtomicU64; CACHE]>,
}

#[inline(always)]
fn cache_slot(key: Key) -> usize {
    (key.bits() >> 56) as usize % CACHE
}

impl KeyRegistry {
    pub(crate) fn new(keep_names: bool) -> Self {
        KeyRegistry {
            full: Map::default(),
            names: keep_names.then(Map::default),
            owners: Box::new(std::array::from_fn(|_| AtomicU64::new(Key::ROOT.bits()))),
        }
    }

    pub(crate) fn keeps_names(&self) -> bool {
        self.names.is_some()
    }

    /// Number of distinct paths registered.
    pub(crate) fn len(&self) -> usize {
        self.full.len()
    }

    fn collision(&self, key: Key, path: String) -> DataError {
        let hash = key.hash32();
        DataError::KeyCollision {
            key: hash,
            path,
            other: self.name(hash).map(|s| s.join(".")),
        }
    }

    /// Whether `key` may be admitted (no other path owns its 32-bit key).
    #[inline]
    pub(crate) fn check(
        &self,
        key: Key,
        describe: impl FnOnce() -> String,
    ) -> Result<(), DataError> {
        match self.full.get(&key.hash32().0) {
            Some(&full) if full != key.bits() => Err(self.collision(key, describe())),
            _ => Ok(()),
        }
    }

    /// Whether `key` is cached as the owner of its 32-bit key.
    #[inline(always)]
    fn cached_owner(&self, key: Key) -> bool {
        self.owners[cache_slot(key)].load(Ordering::Relaxed) == key.bits()
    }

    #[inline(always)]
    fn cache_owner(&self, key: Key) {
        self.owners[cache_slot(key)].store(key.bits(), Ordering::Relaxed);
    }

    /// Registers `key` for `path`, refusing a collision.
    #[inline]
    pub(crate) fn admit(&mut self, key: Key, path: &Path<'_>) -> Result<(), DataError> {
        if self.names.is_none() && self.cached_owner(key) {
            return Ok(());
        }
        self.admit_slow(key, path)
    }

    #[cold]
    fn admit_slow(&mut self, key: Key, path: &Path<'_>) -> Result<(), DataError> {
        match self.full.entry(key.hash32().0) {
            Entry::Occupied(o) => {
                if *o.get() != key.bits() {
                    return Err(self.collision(key, path.describe()));
                }
            }
            Entry::Vacant(v) => {
                v.insert(key.bits());
            }
        }
        self.cache_owner(key);
        if let Some(names) = &mut self.names {
            if let Entry::Vacant(v) = names.entry(key.hash32().0) {
                if let Some(segments) = path.segments() {
                    v.insert(segments.into_iter().map(String::into_boxed_str).collect());
                }
            }
        }
        Ok(())
    }

    /// Registers a key known by segments (JSON import); the caller checked it.
    pub(crate) fn admit_segments(&mut self, key: Key, segments: &[&str]) {
        self.full.insert(key.hash32().0, key.bits());
        if let Some(names) = &mut self.names {
            names
                .entry(key.hash32().0)
                .or_insert_with(|| segments.iter().map(|&s| Box::from(s)).collect());
        }
    }

    /// Whether a read through `key` may trust a stored entry with its 32-bit
    /// key: true unless another path owns that 32-bit key.
    #[inline(always)]
    pub(crate) fn readable(&self, key: Key) -> bool {
        self.cached_owner(key) || self.readable_slow(key)
    }

    #[cold]
    fn readable_slow(&self, key: Key) -> bool {
        match self.full.get(&key.hash32().0) {
            Some(&full) if full == key.bits() => {
                self.cache_owner(key);
                true
            }
            Some(_) => false,
            None => true,
        }
    }

    /// The segments of a key, when names are kept and known.
    pub(crate) fn name(&self, key: KeyHash) -> Option<&[Box<str>]> {
        self.names.as_ref()?.get(&key.0).map(|b| &b[..])
    }

    /// The registry as plain data for save files, sorted by 32-bit key:
    /// every registered 64-bit key, and the names when they are kept.
    pub(crate) fn to_saved(&self) -> SavedKeys {
        let mut full: Vec<(u32, u64)> = self.full.iter().map(|(&k, &v)| (k, v)).collect();
        full.sort_unstable();
        let names = self.names.as_ref().map(|names| {
            let mut v: Vec<(u32, Vec<String>)> = names
                .iter()
                .map(|(&k, segs)| (k, segs.iter().map(|s| s.to_string()).collect()))
                .collect();
            v.sort_unstable();
            v
        });
        SavedKeys { full, names }
    }

    /// A registry from [`to_saved`](Self::to_saved)'s data, checked: every
    /// 64-bit key must hash to its 32-bit key, and every name must be the
    /// path of its registered key.
    pub(crate) fn from_saved(saved: &SavedKeys) -> Result<KeyRegistry, String> {
        let mut reg = KeyRegistry::new(saved.names.is_some());
        for &(k, full) in &saved.full {
            if crate::key::Key::from_bits(full).hash32().0 != k {
                return Err(format!("key {full:#018x} does not hash to {k:#010x}"));
            }
            if reg.full.insert(k, full).is_some() {
                return Err(format!("key {k:#010x} is listed twice"));
            }
        }
        if let (Some(names), Some(saved_names)) = (&mut reg.names, &saved.names) {
            for (k, segments) in saved_names {
                let key = Key::from_segments(segments);
                if reg.full.get(k) != Some(&key.bits()) {
                    return Err(format!(
                        "the name {:?} is not the path of key {k:#010x}",
                        segments.join(".")
                    ));
                }
                names.insert(*k, segments.iter().map(|s| Box::from(s.as_str())).collect());
            }
        }
        Ok(reg)
    }

    /// Makes `self` an exact copy of `src` (for world snapshots), reusing
    /// its memory: maps that are already equal are left alone, so copying
    /// an unchanged registry compares instead of allocating.
    pub(crate) fn copy_from(&mut self, src: &KeyRegistry) {
        if self.full != src.full {
            self.full.clone_from(&src.full);
        }
        if self.names != src.names {
            self.names.clone_from(&src.names);
        }
        // The read cache too: after a restore, a key registered since the
        // snapshot must not stay cached as an owner.
        for (to, from) in self.owners.iter().zip(src.owners.iter()) {
            to.store(from.load(Ordering::Relaxed), Ordering::Relaxed);
        }
    }

    /// Heap bytes (approximate capacity-based figure, for reports).
    pub(crate) fn heap_bytes(&self) -> usize {
        let cache = CACHE * 8;
        let full = self.full.capacity() * (4 + 8 + 1);
        let names = self.names.as_ref().map_or(0, |n| {
            n.capacity() * (4 + 16 + 1)
                + n.values()
                    .map(|s| s.len() * 16 + s.iter().map(|x| x.len()).sum::<usize>())
                    .sum::<usize>()
        });
        cache + full + names
    }
}
