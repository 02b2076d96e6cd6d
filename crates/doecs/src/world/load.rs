//! Building a world from saved ids: the core path of loading a save file.
//!
//! A loader first makes a world whose entity table holds the saved ids
//! ([`raw::world_from_entity_image`](crate::raw::world_from_entity_image)): every live entity is alive but has no row
//! yet. It then places the saved rows, one archetype at a time, with
//! [`raw::place_columns`](crate::raw::place_columns), which moves the values of each column in
//! with one copy, as [`raw::spawn_columns`](crate::raw::spawn_columns) does for new entities (the
//! two share the structural core `place_rows`). Finally
//! [`raw::finish_placing`](crate::raw::finish_placing) checks that every live entity got a row, so a
//! file that names an entity in no table, or in two, is refused instead of
//! leaving a world with an entity that has no row.
//!
//! Managers are not rows: with the `serde` feature, a manager that
//! implements `SaveManager` says what it saves and rebuilds itself in the
//! loaded world once the rows are placed.

use super::{World, WorldConfig};
use crate::component::ComponentId;
use crate::entities::{Entities, EntityTableImage, ImageError};
use crate::entity::Entity;
use crate::error::EntityError;
#[cfg(feature = "serde")]
use crate::manager::ComponentManager;

impl World {
    /// An empty world (settings from `config`, except the reuse threshold,
    /// which comes from the image) whose entity table holds `image`'s ids,
    /// every live one alive without a row, until
    /// [`raw::place_columns`](crate::raw::place_columns) gives it one.
    pub(crate) fn from_entity_image(
        image: &EntityTableImage,
        config: WorldConfig,
    ) -> Result<World, ImageError> {
        let entities = Entities::from_image(image)?;
        let mut world = World::with_config(WorldConfig {
            min_free_indices: image.min_free_indices,
            ..config
        });
        world.core.entities = entities;
        world.note_placing();
        world.sanitize();
        Ok(world)
    }

    /// Gives each of `entities`, alive and without a row (from
    /// [`raw::world_from_entity_image`](crate::raw::world_from_entity_image)), a row of the
    /// archetype of components `ids`, moving in the values: entity `k`
    /// takes value `k` of each column `sources[i]`.
    ///
    /// Refused, changing nothing, when an entity is not alive-without-a-row
    /// ([`EntityError::NoSuchEntity`]), is named twice
    /// ([`EntityError::AliasedEntity`]), or the ids are not a valid set.
    ///
    /// # Safety
    /// As [`raw::spawn_columns`]: crate::raw::spawn_columns points to `entities.len()`
    /// initialised values of component `ids[i]`, which this call moves out
    /// (the caller must not drop them afterwards) when it returns `Ok`; on
    /// `Err` they still belong to the caller.
    pub(crate) unsafe fn place_columns_raw(
        &mut self,
        entities: &[Entity],
        ids: &[ComponentId],
        sources: &[*const u8],
    ) -> Result<(), EntityError> {
        assert_eq!(ids.len(), sources.len(), "one source per component");
        for &e in entities {
            if !self.core.entities.is_unlocated(e) {
                return Err(EntityError::NoSuchEntity(e));
            }
        }
        if let Some(e) = first_repeated(entities, self.core.entities.slot_count()) {
            return Err(EntityError::AliasedEntity(e));
        }
        let bundle = self.core.bundles.of_ids(ids, &self.core.components)?;
        let (bundle, sources, sparse) = self.core.split_columns(bundle, sources);
        let sizes: Vec<usize> = (self.core.bundles.info(bundle).ids().iter())
            .map(|&id| self.core.components.info(id).layout().size())
            .collect();
        // SAFETY: the entities are alive without rows (checked above). Each
        // column gets one copy of the `count` values of its source (caller's
        // contract) into the new rows `first..first + count`, which lie
        // inside its capacity.
        unsafe {
            self.core.place_rows(entities, bundle, |bases, first| {
                for ((&base, &size), &src) in bases.iter().zip(&sizes).zip(&sources) {
                    std::ptr::copy_nonoverlapping(
                        src,
                        base.add(first * size),
                        entities.len() * size,
                    )
                }
            });
            // The entities have rows now, and lack every sparse component.
            self.core.insert_sparse_columns(entities, &sparse);
        };
        self.note_placing();
        self.flush_hooks();
        Ok(())
    }

    /// How many live entities have no row yet: after loading, any is an
    /// error (see [`raw::finish_placing`](crate::raw::finish_placing)).
    pub(crate) fn unplaced_count(&self) -> usize {
        self.core.entities.unlocated_count()
    }

    /// Checks that every live entity has a row; on success the world is a
    /// normal world. Otherwise returns the first entity without one.
    pub(crate) fn finish_placing(&self) -> Result<(), Entity> {
        if self.unplaced_count() == 0 {
            return Ok(());
        }
        let image = self.core.entities.image().unwrap_or_default();
        let first = image
            .live()
            .find(|&e| self.core.entities.is_unlocated(e))
            .expect("an unplaced entity is live");
        Err(first)
    }
}

/// The first entity of `entities` whose index appears earlier too; every
/// index is below `slots`. A bitset over the slots when the batch is large
/// next to the table (one pass), else a sorted copy (so a world of many
/// small archetypes does not clear a whole-table bitset per archetype).
fn first_repeated(entities: &[Entity], slots: usize) -> Option<Entity> {
    if entities.len().saturating_mul(64) >= slots {
        let mut seen = vec![0u64; slots.div_ceil(64)];
        for &e in entities {
            let (word, bit) = (e.index() as usize / 64, e.index() % 64);
            if seen[word] & (1 << bit) != 0 {
                return Some(e);
            }
            seen[word] |= 1 << bit;
        }
        return None;
    }
    let mut sorted: Vec<(u32, usize)> = entities
        .iter()
        .enumerate()
        .map(|(k, e)| (e.index(), k))
        .collect();
    sorted.sort_unstable();
    // Of each run of equal indices, the second occurrence in `entities`
    // order is the repeat the bitset pass would report; take the earliest.
    sorted
        .windows(2)
        .filter(|w| w[0].0 == w[1].0)
        .map(|w| w[1].1)
        .min()
        .map(|k| entities[k])
}

/// A manager that can be written to and rebuilt from a save file (with the
/// `serde` feature).
///
/// A manager is not an archetype column, so a save cannot copy it column
/// by column: the manager says what its saved form is (any serde type) and
/// how to rebuild itself from it. The trait is part of doecs (re-exported
/// at the crate root, beside [`ComponentManager`]), so a manager crate
/// implements it with no more than doecs and serde; it lives with the
/// world's load path because rebuilding takes the loaded [`World`]. The
/// save format itself (`doecs-registry`, whose
/// `ComponentRegistry::register_manager` names a manager for save files)
/// writes `Saved` as JSON or postcard and rebuilds the manager after the
/// entities are placed.
#[cfg(feature = "serde")]
pub trait SaveManager: ComponentManager + Sized {
    /// What a save holds for the manager.
    type Saved: serde::Serialize + serde::de::DeserializeOwned;
    /// The manager's state in saved form.
    fn to_saved(&self) -> Self::Saved;
    /// Rebuilds the manager in `world`, whose entities are placed already,
    /// with their pairs (a manager that follows the hierarchy links itself
    /// from the world's `ChildOf`).
    /// A saved state that does not fit (an entity that is not alive, a
    /// cycle) is an error saying why, never a panic.
    fn from_saved(saved: Self::Saved, world: &World) -> Result<Self, String>;

    /// `(child, parent)` links a saved state holds that belong in the
    /// world's `ChildOf` hierarchy: saves written before the hierarchy was
    /// saved as pairs kept it in the transform manager alone. A load adds
    /// them as `ChildOf` pairs, in this order, when the save holds no
    /// `ChildOf` pair of its own. The default holds none.
    fn saved_parents(saved: &Self::Saved) -> Vec<(Entity, Entity)> {
        let _ = saved;
        Vec::new()
    }
}

#[cfg(test)]
mod tests {
    use super::first_repeated;
    use crate::entity::Entity;

    #[test]
    fn both_ways_find_the_first_repeat() {
        let e = |i| Entity::from_parts(i, 0);
        let batch = [e(5), e(9), e(2), e(9), e(5), e(2)];
        // Bitset (small table) and sorted copy (large table) agree.
        assert_eq!(first_repeated(&batch, 16), Some(e(9)));
        assert_eq!(first_repeated(&batch, 1 << 20), Some(e(9)));
        assert_eq!(first_repeated(&batch[..3], 16), None);
        assert_eq!(first_repeated(&batch[..3], 1 << 20), None);
        assert_eq!(first_repeated(&[], 1 << 20), None);
    }
}
