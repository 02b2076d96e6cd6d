//! The store as a doecs component manager (Bitsquid's "Building a
//! Data-Oriented Entity System", part 2).
//!
//! A [`DataStore`] belongs to one world. Added with
//! `DestroyNotice::Callback`, the world calls `on_destroy` with each batch of
//! despawned entities and their records are dropped at once. Added with
//! `DestroyNotice::LazyGc`, `collect_garbage` runs the article's sweep
//! ([`doecs::LazyGc`]): probe random slots, drop records whose entity is
//! dead, stop after four live ones in a row. Either way the arena compacts
//! itself once enough bytes are dead.

use crate::store::DataStore;
use doecs::raw::Entities;
use doecs::{ComponentManager, Entity, GcReport, Probe};
use std::any::Any;

impl DataStore {
    /// One lazy-gc sweep against `entities`: drops records of dead entities
    /// found by random probes, as in the article.
    pub fn sweep_garbage(&mut self, entities: &Entities) -> GcReport {
        let mut gc = std::mem::take(&mut self.gc);
        let report = gc.sweep(|random| {
            let slots = &self.arena.slots;
            if self.arena.records == 0 || slots.is_empty() {
                return Probe::Empty;
            }
            let idx = (random % slots.len() as u64) as usize;
            let slot = slots[idx];
            if slot.cap.is_none() {
                return Probe::Vacant;
            }
            if entities.alive(Entity::from_parts(idx as u32, slot.generation)) {
                Probe::Alive
            } else {
                self.arena.free_slot(idx);
                Probe::Destroyed
            }
        });
        self.gc = gc;
        if report.destroyed > 0 {
            self.compact_if_fragmented();
        }
        report
    }
}

impl ComponentManager for DataStore {
    /// Drops the records of the destroyed entities (unknown ones are ignored).
    fn on_destroy(&mut self, destroyed: &[Entity]) {
        for &e in destroyed {
            self.arena.free(e);
        }
        self.compact_if_fragmented();
    }

    /// One lazy sweep; returns how many records were dropped.
    fn collect_garbage(&mut self, entities: &Entities) -> usize {
        self.sweep_garbage(entities).destroyed
    }

    /// Takes part in world snapshots: saves the arena, the key registry, the
    /// clock and the collector's state (see `snapshot.rs`), reusing `saved`'s
    /// memory.
    fn save_state(&self, saved: &mut Option<Box<dyn Any + Send + Sync>>) -> bool {
        self.save_into(saved);
        true
    }

    /// Puts back what [`save_state`](Self::save_state) saved, exactly.
    fn restore_state(&mut self, saved: &(dyn Any + Send + Sync)) {
        self.restore_from(saved);
    }
}
