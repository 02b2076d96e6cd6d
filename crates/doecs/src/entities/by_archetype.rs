//! A value per archetype, found straight from an entity's slot.
//!
//! Random access by entity (a [`View`](crate::View)'s `get`) asks two
//! questions: does this exact entity have a row, and what does its
//! archetype hold (say, where `T`'s column starts)? A slot's code is
//! `LOCATED + archetype index` when it has a row and a smaller number when
//! it has none, so a table indexed by the code itself, with `LOCATED`
//! leading `None`s, answers both with one bounds-checked load: a slot
//! without a row reads a `None` like an archetype without the value.

use super::{Entities, LOCATED};
use crate::entity::Entity;

/// Per archetype, an optional `V`, indexed by slot code (see the module docs).
///
/// # Invariants
/// `by_code[..LOCATED]` are all `None`; `by_code[LOCATED + a]` is the value
/// of archetype `a`.
#[derive(Clone, Debug)]
pub(crate) struct ByArchetype<V> {
    by_code: Vec<Option<V>>,
}

impl<V: Copy> ByArchetype<V> {
    /// The table of `per_archetype`'s values, in archetype index order.
    pub fn new(per_archetype: impl IntoIterator<Item = Option<V>>) -> Self {
        let by_code = std::iter::repeat_n(None, LOCATED as usize)
            .chain(per_archetype)
            .collect();
        ByArchetype { by_code }
    }

    /// The value of archetype `archetype`, if it has one.
    #[inline]
    pub fn get(&self, archetype: usize) -> Option<V> {
        *self.by_code.get(archetype.checked_add(LOCATED as usize)?)?
    }

    /// The value of `entity`'s archetype and `entity`'s row, if `entity`
    /// (generation included) has a row in an archetype with a value. One
    /// load of the slot and one of the table.
    #[inline(always)]
    pub fn find(&self, entities: &Entities, entity: Entity) -> Option<(V, usize)> {
        let slot = entities.slots.get(entity.index() as usize)?;
        if slot.generation != entity.generation() {
            return None;
        }
        // Codes below `LOCATED` (no row) index the leading `None`s.
        let value = (*self.by_code.get(slot.code as usize)?)?;
        Some((value, slot.row as usize))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::location::Location;
    use crate::storage::{ArchetypeId, Row};

    #[test]
    fn finds_only_located_entities_of_archetypes_with_a_value() {
        let mut entities = Entities::default();
        let a = entities.alloc();
        let b = entities.alloc();
        let unplaced = entities.alloc();
        entities.set_location(
            a,
            Location {
                archetype: ArchetypeId::from_index(0),
                row: Row(3),
            },
        );
        entities.set_location(
            b,
            Location {
                archetype: ArchetypeId::from_index(1),
                row: Row(0),
            },
        );
        let table = ByArchetype::new([Some('x'), None]);
        assert_eq!(table.find(&entities, a), Some(('x', 3)));
        assert_eq!(table.find(&entities, b), None, "archetype 1 has no value");
        assert_eq!(table.find(&entities, unplaced), None, "no row");
        assert_eq!(table.get(0), Some('x'));
        assert_eq!(table.get(1), None);
        assert_eq!(table.get(2), None);
        assert_eq!(table.get(usize::MAX), None);
        // A stale generation finds nothing.
        entities.clear_location(a);
        assert!(entities.free(a));
        assert_eq!(table.find(&entities, a), None);
        // A reserved id has no row.
        let reserved = entities.reserve();
        assert_eq!(table.find(&entities, reserved), None);
    }
}
