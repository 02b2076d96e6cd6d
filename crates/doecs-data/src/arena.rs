//! The arena: every entity's record in one large buffer (the "next post" of
//! Bitsquid's "Allocation Adventures 1: The DataComponent": many records, one
//! allocation).
//!
//! `bytes` holds the record blocks back to back; `slots`, indexed by entity
//! index, says where each entity's block is. A block's capacity is the
//! record's capacity, so a record grows inside its block until the free
//! space between its header and its value area runs out. Then it is
//! rewritten tight into a bigger block: in place when it is the last block
//! of the arena (the buffer just grows), otherwise at the end of the arena,
//! and its old block becomes dead bytes.
//!
//! When dead bytes pass a fraction of the arena (`StoreConfig`), the arena
//! compacts itself: every record is rewritten tight, in entity-index order,
//! into a fresh buffer. Handles are entities and resolve through `slots`,
//! so they stay valid across compaction.
//!
//! # Invariants (checked by `DataStore::check_invariants`)
//! - Occupied blocks lie inside `bytes` and do not overlap.
//! - `bytes.len() == dead + sum of occupied capacities`.
//! - `records` is the number of occupied slots.
//! - Each occupied block holds a valid record (`RecordRef::from_bytes`).

use crate::edit::write_tight;
use crate::error::DataError;
use crate::record::RecordRef;
use doecs::Entity;
use std::num::NonZeroU16;

/// Where one entity's record lives.
#[derive(Copy, Clone, Debug, Default)]
pub(crate) struct Slot {
    /// Generation of the entity owning the record.
    pub(crate) generation: u32,
    /// Byte offset of the block in the arena.
    pub(crate) start: u32,
    /// Block capacity; `None` means the slot holds no record.
    pub(crate) cap: Option<NonZeroU16>,
}

/// Result of looking a writer's entity up.
pub(crate) enum Writable {
    /// The entity owns a record at `start`, `cap` bytes.
    Owned { start: usize, cap: usize },
    /// No record (or only a dead older entity's record, which may be dropped).
    Vacant,
}

/// See the module docs.
#[derive(Clone, Debug, Default)]
pub(crate) struct Arena {
    pub(crate) bytes: Vec<u8>,
    pub(crate) slots: Vec<Slot>,
    pub(crate) dead: usize,
    pub(crate) records: usize,
}

/// Grows `v`'s capacity by at least a quarter when `add` more items do not fit,
/// so growth is amortized but slack stays small (memory matters here).
fn reserve_quarter<T>(v: &mut Vec<T>, add: usize) {
    if v.len() + add > v.capacity() {
        let want = (v.len() + add).max(v.capacity() + v.capacity() / 4 + 16);
        v.reserve_exact(want - v.len());
    }
}

impl Arena {
    /// The record of `entity`, if it owns one.
    #[inline(always)]
    pub(crate) fn record(&self, entity: Entity) -> Option<RecordRef<'_>> {
        let slot = self.slots.get(entity.index() as usize)?;
        let cap = slot.cap?.get() as usize;
        if slot.generation != entity.generation() {
            return None;
        }
        let start = slot.start as usize;
        Some(RecordRef::trusted(&self.bytes[start..start + cap]))
    }

    /// The block of `entity`, mutably, if it owns one.
    #[inline(always)]
    pub(crate) fn block_mut(&mut self, entity: Entity) -> Option<&mut [u8]> {
        let slot = self.slots.get(entity.index() as usize)?;
        let cap = slot.cap?.get() as usize;
        if slot.generation != entity.generation() {
            return None;
        }
        let start = slot.start as usize;
        Some(&mut self.bytes[start..start + cap])
    }

    /// Looks up `entity` for writing without changing anything.
    #[inline]
    pub(crate) fn writable(&self, entity: Entity) -> Result<Writable, DataError> {
        match self.slots.get(entity.index() as usize) {
            Some(&Slot {
                generation,
                start,
                cap: Some(cap),
            }) => {
                if generation == entity.generation() {
                    Ok(Writable::Owned {
                        start: start as usize,
                        cap: cap.get() as usize,
                    })
                } else if generation < entity.generation() {
                    Ok(Writable::Vacant)
                } else {
                    Err(DataError::StaleEntity(entity))
                }
            }
            _ => Ok(Writable::Vacant),
        }
    }

    /// Gives `entity` a block holding exactly `src` (its capacity is
    /// `src.len()`, 4..=65535), replacing any record in its slot.
    pub(crate) fn place(&mut self, entity: Entity, src: &[u8]) -> Result<(), DataError> {
        let cap = NonZeroU16::new(src.len() as u16)
            .filter(|_| src.len() <= u16::MAX as usize)
            .expect("record sizes are checked before placement");
        let idx = entity.index() as usize;
        if idx >= self.slots.len() {
            let add = idx + 1 - self.slots.len();
            reserve_quarter(&mut self.slots, add);
            self.slots.resize(idx + 1, Slot::default());
        }
        let slot = self.slots[idx];
        if let Some(old) = slot.cap {
            let (s, c) = (slot.start as usize, old.get() as usize);
            if s + c == self.bytes.len() {
                // The last block: grow or shrink it where it is.
                if s + src.len() > u32::MAX as usize {
                    return Err(DataError::ArenaFull);
                }
                self.bytes.truncate(s);
                reserve_quarter(&mut self.bytes, src.len());
                self.bytes.extend_from_slice(src);
                self.slots[idx] = Slot {
                    generation: entity.generation(),
                    start: s as u32,
                    cap: Some(cap),
                };
                return Ok(());
            }
            if c == src.len() {
                self.bytes[s..s + c].copy_from_slice(src);
                self.slots[idx].generation = entity.generation();
                return Ok(());
            }
        }
        let start = self.bytes.len();
        if start + src.len() > u32::MAX as usize {
            return Err(DataError::ArenaFull);
        }
        if let Some(old) = slot.cap {
            self.dead += old.get() as usize;
        } else {
            self.records += 1;
        }
        reserve_quarter(&mut self.bytes, src.len());
        self.bytes.extend_from_slice(src);
        self.slots[idx] = Slot {
            generation: entity.generation(),
            start: start as u32,
            cap: Some(cap),
        };
        Ok(())
    }

    /// Drops the record in slot `idx`, whoever owns it.
    pub(crate) fn free_slot(&mut self, idx: usize) {
        let Some(slot) = self.slots.get_mut(idx) else {
            return;
        };
        let Some(cap) = slot.cap.take() else {
            return;
        };
        let (s, c) = (slot.start as usize, cap.get() as usize);
        self.records -= 1;
        if s + c == self.bytes.len() {
            self.bytes.truncate(s);
        } else {
            self.dead += c;
        }
    }

    /// Drops `entity`'s record; false if it owned none.
    pub(crate) fn free(&mut self, entity: Entity) -> bool {
        if self.record(entity).is_none() {
            return false;
        }
        self.free_slot(entity.index() as usize);
        true
    }

    /// Rewrites every record tight, in entity-index order, into a fresh
    /// buffer sized exactly. Dead bytes, free space and holes are all gone.
    pub(crate) fn compact(&mut self) {
        let total: usize = self
            .slots
            .iter()
            .filter_map(|s| {
                let cap = s.cap?.get() as usize;
                let start = s.start as usize;
                Some(RecordRef::trusted(&self.bytes[start..start + cap]).tight_len())
            })
            .sum();
        let mut fresh = Vec::with_capacity(total);
        for slot in &mut self.slots {
            let Some(cap) = slot.cap else { continue };
            let start = slot.start as usize;
            let rec = RecordRef::trusted(&self.bytes[start..start + cap.get() as usize]);
            let tight = rec.tight_len();
            let at = fresh.len();
            fresh.resize(at + tight, 0);
            write_tight(rec, &mut fresh[at..], None);
            slot.start = at as u32;
            slot.cap = NonZeroU16::new(tight as u16);
        }
        self.bytes = fresh;
        self.dead = 0;
    }

    /// Reserves room for `records` more records of `bytes_each` and entity
    /// indices up to `max_index`.
    pub(crate) fn reserve(&mut self, records: usize, bytes_each: usize, max_index: usize) {
        reserve_quarter(&mut self.bytes, records * bytes_each);
        if max_index >= self.slots.len() {
            let add = max_index + 1 - self.slots.len();
            reserve_quarter(&mut self.slots, add);
        }
    }
}
