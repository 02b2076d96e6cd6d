//! The entity index: where each entity's row is (seed 003's `entity_index`).
//!
//! A flat table indexed by the entity's slot index. Each slot records the
//! generation of the entity whose row it describes, so one load answers both
//! "is this exact entity in this world?" and "where is its row?": a stale
//! handle (older generation) or an entity that lives only in other worlds of
//! a [`Universe`](crate::Universe) finds no location. This is the one answer
//! to "is it here" for every kind of world; the allocator is not consulted.

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

/// One slot of the index: the generation it describes, and the row.
#[derive(Copy, Clone, Debug)]
struct Slot {
    generation: u32,
    /// `None` for a slot with no row in this world.
    location: Option<Location>,
}

const EMPTY: Slot = Slot {
    generation: 0,
    location: None,
};

/// Entity slot index to [`Location`].
///
/// # Invariants
/// A slot with a location describes exactly the entity `(index, generation)`
/// stored in that row.
#[derive(Default, Debug)]
pub struct EntityLocations {
    slots: Vec<Slot>,
    /// Number of slots with a location.
    len: usize,
}

impl EntityLocations {
    /// The location of exactly `entity` (generation included), if it has a row.
    #[inline]
    pub fn get(&self, entity: Entity) -> Option<Location> {
        match self.slots.get(entity.index() as usize) {
            Some(slot) if slot.generation == entity.generation() => slot.location,
            _ => None,
        }
    }

    /// Number of entities with a row.
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether no entity has a row.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Records where `entity` lives.
    #[inline]
    pub fn set(&mut self, entity: Entity, location: Location) {
        let i = entity.index() as usize;
        if i >= self.slots.len() {
            self.grow(i);
        }
        let slot = &mut self.slots[i];
        if slot.location.is_none() {
            self.len += 1;
        }
        *slot = Slot {
            generation: entity.generation(),
            location: Some(location),
        };
    }

    #[cold]
    fn grow(&mut self, index: usize) {
        let len = (index + 1).max(self.slots.len() * 2).max(64);
        self.slots.resize(len, EMPTY);
    }

    /// Makes room for slot indices below `len` without further reallocation.
    pub fn reserve_slots(&mut self, len: usize) {
        if len > self.slots.len() {
            self.slots.resize(len, EMPTY);
        }
    }

    /// Forgets `entity`'s location, if it has one.
    #[inline]
    pub fn clear(&mut self, entity: Entity) {
        if let Some(slot) = self.slots.get_mut(entity.index() as usize) {
            if slot.generation == entity.generation() && slot.location.take().is_some() {
                self.len -= 1;
            }
        }
    }

    /// Every entity with a location, as `(entity, location)`.
    pub fn iter(&self) -> impl Iterator<Item = (Entity, Location)> + '_ {
        self.slots.iter().enumerate().filter_map(|(i, s)| {
            s.location
                .map(|l| (Entity::from_parts(i as u32, s.generation), l))
        })
    }
}
