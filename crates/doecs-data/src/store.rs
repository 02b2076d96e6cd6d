//! [`DataStore`]: the DataComponent of one world, with the per-key API.
//!
//! Writes go to the entity's record in place when it fits (a bool or float
//! overwrite is a key scan plus one 32-bit store) and otherwise rewrite the
//! record tight into a bigger block (see the `arena` module). Reads are a slot
//! lookup, a scan of the record's `keys[]` and one word load. Paths are
//! hashed on every call unless given as a pre-hashed [`Key`].

use crate::arena::{Arena, Writable};
use crate::edit;
use crate::error::DataError;
use crate::json::{check_batch_collisions, flatten_object, Flat};
use crate::key::{Key, KeyHash, Path};
use crate::names::KeyRegistry;
use crate::record::{header_len, Entry, Record, RecordRef, ENTRY_BYTES, MAX_RECORD_BYTES};
use crate::value::{Floats, Value, ValueType};
use doecs::{Entity, LazyGc};

/// Settings of a [`DataStore`].
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct StoreConfig {
    /// Keep path names in a side dictionary so records can be exported to
    /// JSON. Off by default: then it costs nothing.
    pub keep_names: bool,
    /// The arena compacts itself when dead bytes exceed this fraction of it...
    pub compact_dead_fraction: f32,
    /// ...and at least this many bytes are dead.
    pub compact_min_dead_bytes: usize,
}

impl Default for StoreConfig {
    fn default() -> Self {
        StoreConfig {
            keep_names: false,
            compact_dead_fraction: 0.5,
            compact_min_dead_bytes: 4096,
        }
    }
}

/// The DataComponent: small dynamic data for many entities, one relocatable
/// record per entity, all records in one arena. See the crate docs.
#[derive(Debug)]
pub struct DataStore {
    pub(crate) arena: Arena,
    pub(crate) registry: KeyRegistry,
    /// The Lamport clock: every stamp in the store is at most this.
    pub(crate) clock: u32,
    scratch: Vec<u8>,
    config: StoreConfig,
    pub(crate) gc: LazyGc,
}

impl Default for DataStore {
    fn default() -> Self {
        Self::new()
    }
}

impl DataStore {
    /// An empty store, names off.
    pub fn new() -> Self {
        Self::with_config(StoreConfig::default())
    }

    /// An empty store that keeps path names, so [`DataStore::to_json`] works.
    pub fn with_names() -> Self {
        Self::with_config(StoreConfig {
            keep_names: true,
            ..StoreConfig::default()
        })
    }

    /// An empty store with `config`.
    pub fn with_config(config: StoreConfig) -> Self {
        DataStore {
            arena: Arena::default(),
            registry: KeyRegistry::new(config.keep_names),
            clock: 0,
            scratch: Vec::new(),
            config,
            gc: LazyGc::new(),
        }
    }

    /// The settings.
    pub fn config(&self) -> StoreConfig {
        self.config
    }

    /// Number of entities with a record.
    pub fn len(&self) -> usize {
        self.arena.records
    }

    /// Whether no entity has a record.
    pub fn is_empty(&self) -> bool {
        self.arena.records == 0
    }

    /// Whether the store keeps path names (so [`DataStore::to_json`] works).
    pub fn keeps_names(&self) -> bool {
        self.registry.keeps_names()
    }

    /// The current Lamport clock (the largest stamp issued or seen).
    pub fn clock(&self) -> u32 {
        self.clock
    }

    /// Bytes in the arena (live blocks plus dead bytes).
    pub fn arena_bytes(&self) -> usize {
        self.arena.bytes.len()
    }

    /// Dead bytes in the arena (left by records that moved or died).
    pub fn dead_bytes(&self) -> usize {
        self.arena.dead
    }

    /// Heap bytes held by the store (capacities; the registry is estimated).
    pub fn heap_bytes(&self) -> usize {
        self.arena.bytes.capacity()
            + self.arena.slots.capacity() * std::mem::size_of::<crate::arena::Slot>()
            + self.scratch.capacity()
            + self.registry.heap_bytes()
    }

    /// Number of distinct paths the store has admitted by name.
    pub fn known_paths(&self) -> usize {
        self.registry.len()
    }

    /// Whether `entity` has a record (possibly empty).
    pub fn contains(&self, entity: Entity) -> bool {
        self.arena.record(entity).is_some()
    }

    /// `entity`'s record, borrowed.
    pub fn record(&self, entity: Entity) -> Option<RecordRef<'_>> {
        self.arena.record(entity)
    }

    /// `entity`'s record saved tight, ready for [`RecordRef::from_bytes`].
    pub fn to_bytes(&self, entity: Entity) -> Option<Vec<u8>> {
        self.arena.record(entity).map(|r| r.to_vec())
    }

    /// `entity`'s record as an owned [`Record`] (tight).
    pub fn to_record(&self, entity: Entity) -> Option<Record> {
        self.to_bytes(entity).map(Record::trusted)
    }

    /// Gives `entity` an empty record if it has none.
    pub fn create(&mut self, entity: Entity) -> Result<(), DataError> {
        match self.arena.writable(entity)? {
            Writable::Owned { .. } => Ok(()),
            Writable::Vacant => {
                let mut empty = [0u8; crate::record::HEADER_BYTES];
                edit::init(&mut empty);
                self.arena.place(entity, &empty)
            }
        }
    }

    /// Drops `entity`'s record. Returns whether it had one.
    pub fn destroy(&mut self, entity: Entity) -> bool {
        let had = self.arena.free(entity);
        if had {
            self.compact_if_fragmented();
        }
        had
    }

    // ----- reads -------------------------------------------------------

    /// Finds the entry for `key`, refusing a path that collides with the
    /// path owning the stored 32-bit key.
    #[inline(always)]
    fn lookup(&self, entity: Entity, key: Key) -> Option<(RecordRef<'_>, usize)> {
        let rec = self.arena.record(entity)?;
        let i = rec.find(key.hash32())?;
        if !self.registry.readable(key) {
            return None;
        }
        Some((rec, i))
    }

    /// The value at `path`, if present.
    ///
    /// ```
    /// use doecs::Entity;
    /// use doecs_data::{DataStore, Value};
    /// let mut store = DataStore::new();
    /// let e = Entity::from_parts(0, 1);
    /// store.set(e, "stats.health", 100.0).unwrap();
    /// store.set(e, "name", "The One").unwrap();
    /// assert_eq!(store.get(e, "stats.health"), Some(Value::F32(100.0)));
    /// assert_eq!(store.get_str(e, "name"), Some("The One"));
    /// assert_eq!(store.get_f32(e, "name"), None, "wrong type reads as absent");
    /// ```
    #[inline]
    pub fn get<'p>(&self, entity: Entity, path: impl Into<Path<'p>>) -> Option<Value<'_>> {
        let key = path.into().key_checked()?;
        self.lookup(entity, key).map(|(r, i)| r.value(i))
    }

    /// The float at `path`, if present and a float.
    #[inline]
    pub fn get_f32<'p>(&self, entity: Entity, path: impl Into<Path<'p>>) -> Option<f32> {
        let key = path.into().key_checked()?;
        let (code, word) = self.arena.record(entity)?.find_word(key.hash32())?;
        (code == ValueType::F32 as u8 && self.registry.readable(key)).then(|| f32::from_bits(word))
    }

    /// The bool at `path`, if present and a bool.
    #[inline]
    pub fn get_bool<'p>(&self, entity: Entity, path: impl Into<Path<'p>>) -> Option<bool> {
        let key = path.into().key_checked()?;
        let (code, word) = self.arena.record(entity)?.find_word(key.hash32())?;
        (code == ValueType::Bool as u8 && self.registry.readable(key)).then_some(word != 0)
    }

    /// The string at `path`, if present and a string.
    #[inline]
    pub fn get_str<'p>(&self, entity: Entity, path: impl Into<Path<'p>>) -> Option<&str> {
        self.get(entity, path)?.as_str()
    }

    /// The float array at `path`, if present and an array.
    #[inline]
    pub fn get_f32s<'p>(&self, entity: Entity, path: impl Into<Path<'p>>) -> Option<Floats<'_>> {
        self.get(entity, path)?.as_f32s()
    }

    /// Whether `path` holds a value.
    pub fn has<'p>(&self, entity: Entity, path: impl Into<Path<'p>>) -> bool {
        path.into()
            .key()
            .is_ok_and(|key| self.lookup(entity, key).is_some())
    }

    /// The stamp (per-key version) of the value at `path`.
    pub fn stamp<'p>(&self, entity: Entity, path: impl Into<Path<'p>>) -> Option<u32> {
        let key = path.into().key_checked()?;
        self.lookup(entity, key).map(|(r, i)| r.stamp(i))
    }

    /// All entries of `entity`'s record, in storage order.
    pub fn entries(&self, entity: Entity) -> impl Iterator<Item = Entry<'_>> + '_ {
        let rec = self.arena.record(entity);
        (0..rec.map_or(0, |r| r.len())).map(move |i| rec.expect("non-empty range").entry(i))
    }

    // ----- writes ------------------------------------------------------

    /// Issues the next stamp, renumbering all stamps if the clock is full.
    #[inline(always)]
    fn next_stamp(&mut self) -> u32 {
        if self.clock == u32::MAX {
            self.renumber_stamps();
        }
        self.clock = self.clock.saturating_add(1);
        self.clock
    }

    /// Sets `path` to `value`, stamped with the next clock value. Creates the
    /// record if needed. A `path` whose 32-bit key another path already uses
    /// in this store is refused ([`DataError::KeyCollision`]).
    ///
    /// ```
    /// use doecs::Entity;
    /// use doecs_data::DataStore;
    /// let mut store = DataStore::new();
    /// let e = Entity::from_parts(3, 1);
    /// store.set(e, "color", &[0.0, 0.5, 0.5, 0.7]).unwrap();
    /// store.set(e, &["a.b"], true).unwrap(); // one segment containing '.'
    /// assert_eq!(store.get_f32s(e, "color").unwrap().to_vec(), [0.0, 0.5, 0.5, 0.7]);
    /// assert_eq!(store.get_bool(e, &["a.b"]), Some(true));
    /// assert!(!store.has(e, "a.b"));
    /// assert!(store.set(e, "x", f32::NAN).is_err());
    /// ```
    #[inline]
    pub fn set<'p, 'v>(
        &mut self,
        entity: Entity,
        path: impl Into<Path<'p>>,
        value: impl Into<Value<'v>>,
    ) -> Result<(), DataError> {
        let path = path.into();
        let value = value.into();
        let key = path.key()?;
        if !value.is_finite() {
            return Err(DataError::NotFinite {
                path: path.describe(),
            });
        }
        let writable = self.arena.writable(entity)?;
        self.registry.admit(key, &path)?;
        let stamp = self.next_stamp();
        self.set_raw(entity, writable, key.hash32(), stamp, &value)
    }

    /// Sets one entry with a given stamp; all checks are done.
    #[inline(always)]
    fn set_raw(
        &mut self,
        entity: Entity,
        writable: Writable,
        key: KeyHash,
        stamp: u32,
        value: &Value<'_>,
    ) -> Result<(), DataError> {
        match writable {
            Writable::Owned { start, cap } => {
                if edit::try_set(&mut self.arena.bytes[start..start + cap], key, stamp, value) {
                    return Ok(());
                }
                self.set_rewriting(entity, start, cap, key, stamp, value)
            }
            Writable::Vacant => {
                let bytes =
                    edit::build(std::iter::once((key, stamp, *value))).map_err(|needed| {
                        DataError::RecordTooLarge {
                            entity: Some(entity),
                            needed,
                        }
                    })?;
                self.arena.place(entity, &bytes)?;
                self.compact_if_fragmented();
                Ok(())
            }
        }
    }

    /// The record's size after setting `key` to a value of `data_len` bytes,
    /// written tight.
    fn size_after_set(rec: RecordRef<'_>, key: KeyHash, data_len: usize) -> usize {
        match rec.find(key) {
            Some(i) => rec.tight_len() - rec.data_len(i) + data_len,
            None => rec.tight_len() + ENTRY_BYTES + data_len,
        }
    }

    /// Slow path of a set: the record is rewritten tight (holes reclaimed)
    /// into its own block if that is enough, or into a bigger one.
    #[cold]
    fn set_rewriting(
        &mut self,
        entity: Entity,
        start: usize,
        cap: usize,
        key: KeyHash,
        stamp: u32,
        value: &Value<'_>,
    ) -> Result<(), DataError> {
        let rec = RecordRef::trusted(&self.arena.bytes[start..start + cap]);
        let needed = Self::size_after_set(rec, key, value.data_len());
        if needed > MAX_RECORD_BYTES {
            return Err(DataError::RecordTooLarge {
                entity: Some(entity),
                needed,
            });
        }
        let target = if needed <= cap {
            cap
        } else {
            needed.max(cap + cap / 2).min(MAX_RECORD_BYTES)
        };
        let dropped = rec.find(key).filter(|&i| rec.value_type(i).has_data());
        self.scratch.clear();
        self.scratch.resize(target, 0);
        edit::write_tight(rec, &mut self.scratch, dropped);
        let fitted = edit::try_set(&mut self.scratch, key, stamp, value);
        debug_assert!(fitted, "the rewritten record has room by construction");
        let scratch = std::mem::take(&mut self.scratch);
        let placed = self.arena.place(entity, &scratch);
        self.scratch = scratch;
        placed?;
        self.compact_if_fragmented();
        Ok(())
    }

    /// Removes `path`. Returns whether it held a value.
    pub fn remove<'p>(
        &mut self,
        entity: Entity,
        path: impl Into<Path<'p>>,
    ) -> Result<bool, DataError> {
        let key = path.into().key()?;
        if !self.registry.readable(key) {
            return Ok(false);
        }
        let Some(block) = self.arena.block_mut(entity) else {
            return Ok(false);
        };
        let Some(i) = RecordRef::trusted(block).find(key.hash32()) else {
            return Ok(false);
        };
        edit::remove(block, i);
        Ok(true)
    }

    /// Checks that edits of `entity` (distinct keys, applied in order) keep
    /// every intermediate record within 64 KiB. Returns the writable slot.
    pub(crate) fn plan_edits(
        &self,
        entity: Entity,
        edits: impl Iterator<Item = (KeyHash, usize)>,
    ) -> Result<Writable, DataError> {
        let writable = self.arena.writable(entity)?;
        let rec = match writable {
            Writable::Owned { start, cap } => {
                Some(RecordRef::trusted(&self.arena.bytes[start..start + cap]))
            }
            Writable::Vacant => None,
        };
        let mut size = rec.map_or(header_len(0), |r| r.tight_len());
        for (key, data_len) in edits {
            let existing = rec.and_then(|r| r.find(key).map(|i| r.data_len(i)));
            size = match existing {
                Some(old) => size - old + data_len,
                None => size + ENTRY_BYTES + data_len,
            };
            if size > MAX_RECORD_BYTES {
                return Err(DataError::RecordTooLarge {
                    entity: Some(entity),
                    needed: size,
                });
            }
        }
        Ok(writable)
    }

    /// Applies checked edits with distinct keys, one stamp each.
    pub(crate) fn apply_checked<'v>(
        &mut self,
        entity: Entity,
        edits: impl Iterator<Item = (KeyHash, u32, Value<'v>)>,
    ) -> Result<(), DataError> {
        for (key, stamp, value) in edits {
            let writable = self.arena.writable(entity)?;
            self.set_raw(entity, writable, key, stamp, &value)?;
        }
        Ok(())
    }

    fn admit_flat(&mut self, flat: &[Flat<'_>]) -> Result<(), DataError> {
        check_batch_collisions(flat)?;
        for f in flat {
            self.registry.check(f.key, || f.segments.join("."))?;
        }
        Ok(())
    }

    /// Replaces `entity`'s whole record with a JSON object, flattened
    /// (`{"stats": {"health": 1}}` sets `stats.health`). All values get one
    /// new stamp. Refused input changes nothing.
    ///
    /// ```
    /// use doecs::Entity;
    /// use doecs_data::DataStore;
    /// let mut store = DataStore::with_names();
    /// let e = Entity::from_parts(0, 1);
    /// let sheet = serde_json::json!({
    ///     "name": "The One",
    ///     "stats": {"health": 100, "mana": 200},
    ///     "status_effects": {"drunk": true, "delirious": true}
    /// });
    /// store.set_json(e, &sheet).unwrap();
    /// assert_eq!(store.get_f32(e, "stats.mana"), Some(200.0));
    /// assert_eq!(store.to_json(e).unwrap(), Some(sheet));
    /// let err = store.set_json(e, &serde_json::json!({"bag": ["sword"]})).unwrap_err();
    /// assert!(err.to_string().contains("object keyed by unique ids"));
    /// assert_eq!(store.get_f32(e, "stats.mana"), Some(200.0), "refused: unchanged");
    /// ```
    pub fn set_json(&mut self, entity: Entity, json: &serde_json::Value) -> Result<(), DataError> {
        let flat = flatten_object(json)?;
        self.admit_flat(&flat)?;
        self.arena.writable(entity)?;
        let mut bytes = edit::build(flat.iter().map(|f| (f.key.hash32(), 0, f.value.as_value())))
            .map_err(|needed| DataError::RecordTooLarge {
            entity: Some(entity),
            needed,
        })?;
        let stamp = self.next_stamp();
        edit::stamp_all(&mut bytes, stamp);
        self.arena.place(entity, &bytes)?;
        for f in &flat {
            self.registry.admit_segments(f.key, &f.segments);
        }
        self.compact_if_fragmented();
        Ok(())
    }

    /// Sets every leaf of a JSON object on `entity`, keeping its other keys
    /// (creating the record if needed).
    /// All values get one new stamp. Refused input changes nothing.
    pub fn apply_json(
        &mut self,
        entity: Entity,
        json: &serde_json::Value,
    ) -> Result<(), DataError> {
        let flat = flatten_object(json)?;
        self.admit_flat(&flat)?;
        self.plan_edits(
            entity,
            flat.iter()
                .map(|f| (f.key.hash32(), f.value.as_value().data_len())),
        )?;
        for f in &flat {
            self.registry.admit_segments(f.key, &f.segments);
        }
        self.create(entity)?;
        let stamp = self.next_stamp();
        self.apply_checked(
            entity,
            flat.iter()
                .map(|f| (f.key.hash32(), stamp, f.value.as_value())),
        )
    }

    /// Replaces `entity`'s record with a copy of a validated record: a byte
    /// copy, no hashing. The clock advances past the record's stamps.
    ///
    /// ```
    /// use doecs::Entity;
    /// use doecs_data::{DataStore, Record};
    /// let prefab = Record::from_json(&serde_json::json!({"health": 100})).unwrap();
    /// let mut store = DataStore::new();
    /// let e = Entity::from_parts(0, 1);
    /// store.insert_record(e, prefab.as_ref()).unwrap();
    /// assert_eq!(store.get_f32(e, "health"), Some(100.0));
    /// ```
    pub fn insert_record(
        &mut self,
        entity: Entity,
        record: RecordRef<'_>,
    ) -> Result<(), DataError> {
        self.insert_record_many(std::slice::from_ref(&entity), record)
    }

    /// Gives every entity of `entities` a copy of `record` (the resource
    /// spawner's batch path: validate once, then byte copies). Checks every
    /// entity before changing anything.
    pub fn insert_record_many(
        &mut self,
        entities: &[Entity],
        record: RecordRef<'_>,
    ) -> Result<(), DataError> {
        for &e in entities {
            self.arena.writable(e)?;
        }
        let tight_owned;
        let bytes = if record.free() == 0 && record.tight_len() == record.capacity() {
            record.as_bytes()
        } else {
            tight_owned = record.to_vec();
            &tight_owned
        };
        let max_index = entities
            .iter()
            .map(|e| e.index() as usize)
            .max()
            .unwrap_or(0);
        self.arena.reserve(entities.len(), bytes.len(), max_index);
        for &e in entities {
            self.arena.place(e, bytes)?;
        }
        self.clock = self.clock.max(record.max_stamp());
        self.compact_if_fragmented();
        Ok(())
    }

    /// Reserves room for `records` more records of about `bytes_each` bytes
    /// for entity indices below `max_index + 1`.
    pub fn reserve(&mut self, records: usize, bytes_each: usize, max_index: usize) {
        self.arena.reserve(records, bytes_each, max_index);
    }

    // ----- arena upkeep -----------------------------------------------

    /// Compacts the arena now: every record rewritten tight, in entity order.
    pub fn compact(&mut self) {
        self.arena.compact();
        self.scratch = Vec::new();
    }

    /// Compacts when dead bytes pass the configured threshold.
    pub(crate) fn compact_if_fragmented(&mut self) {
        let dead = self.arena.dead;
        if dead >= self.config.compact_min_dead_bytes
            && dead as f64
                > self.arena.bytes.len() as f64 * self.config.compact_dead_fraction as f64
        {
            self.compact();
        }
    }

    /// Renumbers every stamp to its rank among distinct stamps (keeping
    /// their order, and 0 as 0), so the clock has room again.
    #[cold]
    pub(crate) fn renumber_stamps(&mut self) {
        let mut all: Vec<u32> = Vec::new();
        for slot in &self.arena.slots {
            let Some(cap) = slot.cap else { continue };
            let s = slot.start as usize;
            let rec = RecordRef::trusted(&self.arena.bytes[s..s + cap.get() as usize]);
            all.extend((0..rec.len()).map(|i| rec.stamp(i)));
        }
        all.push(0);
        all.sort_unstable();
        all.dedup();
        for slot in &self.arena.slots {
            let Some(cap) = slot.cap else { continue };
            let s = slot.start as usize;
            let block = &mut self.arena.bytes[s..s + cap.get() as usize];
            let n = RecordRef::trusted(block).len();
            for i in 0..n {
                let at = crate::record::stamps_at(n) + 4 * i;
                let old = crate::record::rd32(block, at);
                let rank = all.binary_search(&old).unwrap_or(0) as u32;
                block[at..at + 4].copy_from_slice(&rank.to_le_bytes());
            }
        }
        self.clock = (all.len() - 1) as u32;
    }

    /// Sets the clock (tests of stamp renumbering).
    #[doc(hidden)]
    pub fn debug_set_clock(&mut self, clock: u32) {
        self.clock = clock;
    }
}
