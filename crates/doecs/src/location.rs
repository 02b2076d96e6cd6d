//! The entity index: where each entity's row is (seed 003's `entity_index`).
//!
//! A flat table indexed by the entity's slot index, so the lookup is one load.
//! `None` means the slot holds no entity in this world: it is dead, or (when
//! several worlds share one id space) lives only in other worlds.

use crate::entity::Entity;
use crate::storage::{ArchetypeId, ChunkIndex, ChunkRow};

/// Where one entity's components are.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Location {
    /// The entity's archetype.
    pub archetype: ArchetypeId,
    /// The chunk within the archetype.
    pub chunk: ChunkIndex,
    /// The row within the chunk.
    pub row: ChunkRow,
}

/// Entity slot index to [`Location`].
#[derive(Default, Debug)]
pub struct EntityLocations {
    slots: Vec<Option<Location>>,
}

impl EntityLocations {
    /// The location of slot `entity.index()`. Callers check liveness first.
    #[inline]
    pub fn get(&self, entity: Entity) -> Option<Location> {
        self.slots.get(entity.index() as usize).copied().flatten()
    }

    /// Records where `entity` lives.
    #[inline]
    pub fn set(&mut self, entity: Entity, location: Location) {
        let i = entity.index() as usize;
        if i >= self.slots.len() {
            self.grow(i);
        }
        self.slots[i] = Some(location);
    }

    #[cold]
    fn grow(&mut self, index: usize) {
        let len = (index + 1).max(self.slots.len() * 2).max(64);
        self.slots.resize(len, None);
    }

    /// Makes room for slot indices below `len` without further reallocation.
    pub fn reserve_slots(&mut self, len: usize) {
        if len > self.slots.len() {
            self.slots.resize(len, None);
        }
    }

    /// Forgets `entity`'s location.
    #[inline]
    pub fn clear(&mut self, entity: Entity) {
        if let Some(slot) = self.slots.get_mut(entity.index() as usize) {
            *slot = None;
        }
    }

    /// Every slot with a location, as `(slot index, location)`.
    pub fn iter(&self) -> impl Iterator<Item = (u32, Location)> + '_ {
        self.slots
            .iter()
            .enumerate()
            .filter_map(|(i, l)| l.map(|l| (i as u32, l)))
    }
}
