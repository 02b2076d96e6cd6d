//! Entities: generational ids.
//!
//! An [`Entity`] is a plain `Copy` id made of a 32-bit slot index and a 32-bit
//! generation, packed into a `u64`. A handle is alive exactly when its
//! generation equals its slot's current generation in the world's
//! [`Entities`](crate::Entities) table, so every stale copy of a despawned
//! handle reads as dead: entities work as weak references (Bitsquid's "Building a Data-Oriented Entity System", part 1).

use std::fmt;

/// Default number of freed indices that must wait before any is reused.
pub const MIN_FREE_INDICES: usize = 1024;

/// A generational entity id: a 32-bit index and a 32-bit generation.
///
/// Entities are weak references. Keep copies anywhere; after the entity is
/// despawned every copy reads as dead, even once its index is reused.
///
/// ```
/// let mut world = doecs::World::new();
/// let e = world.spawn((1u8,));
/// let stale = e;
/// world.despawn(e).unwrap();
/// assert!(!world.alive(stale));
/// ```
#[derive(Copy, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Entity {
    // Field order makes the derived `Ord` sort by index first.
    index: u32,
    generation: u32,
}

impl Entity {
    /// Builds a handle from its parts. A handle built this way is alive only if
    /// the allocator really issued this index with this generation.
    #[inline]
    pub const fn from_parts(index: u32, generation: u32) -> Self {
        Entity { index, generation }
    }

    /// The slot index, dense from zero. Side tables can be indexed by it.
    #[inline]
    pub const fn index(self) -> u32 {
        self.index
    }

    /// The generation of the slot when this entity was created.
    #[inline]
    pub const fn generation(self) -> u32 {
        self.generation
    }

    /// Packs the entity into a `u64`: generation in the high half, index in the low.
    #[inline]
    pub const fn to_bits(self) -> u64 {
        ((self.generation as u64) << 32) | self.index as u64
    }

    /// Unpacks an entity packed by [`Entity::to_bits`].
    #[inline]
    pub const fn from_bits(bits: u64) -> Self {
        Entity {
            index: bits as u32,
            generation: (bits >> 32) as u32,
        }
    }
}

/// An entity is written as its 64 bits ([`Entity::to_bits`]), so references
/// to entities inside components survive a save and load that keeps ids.
#[cfg(feature = "serde")]
impl serde::Serialize for Entity {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u64(self.to_bits())
    }
}

#[cfg(feature = "serde")]
impl<'de> serde::Deserialize<'de> for Entity {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        <u64 as serde::Deserialize>::deserialize(d).map(Entity::from_bits)
    }
}

impl fmt::Debug for Entity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}v{}", self.index, self.generation)
    }
}

impl fmt::Display for Entity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
}

/// Above every index of `entities` (0 when there are none): the length
/// a map by entity index needs to cover them.
pub(crate) fn index_bound(entities: &[Entity]) -> usize {
    entities
        .iter()
        .map(|e| e.index() as usize + 1)
        .max()
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bits_round_trip() {
        let e = Entity::from_parts(7, 9);
        assert_eq!(Entity::from_bits(e.to_bits()), e);
        assert_eq!(e.to_bits(), (9u64 << 32) | 7);
    }
}
