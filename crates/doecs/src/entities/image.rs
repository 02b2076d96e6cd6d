//! The entity table as plain data, for save files.
//!
//! A save file must bring back exactly the ids a world had: every live
//! entity with its generation, the generation each free slot will hand out
//! next, the order of the free FIFO (so the ids spawned after a load are the
//! ids the saved world would have spawned), and the retired slots. An
//! [`EntityTableImage`] holds that as three lists over the slot indices
//! `0..generations.len()`: `free` in queue order, `retired`, and every other
//! index is live. Reserved ids (spawns recorded in command buffers and not
//! applied) belong to no file: [`Entities::image`] refuses a table that has
//! any.
//!
//! [`Entities::from_image`] checks an image read from outside the process
//! before it builds anything: an index out of range, listed twice, or both
//! free and retired is a typed [`ImageError`], never a panic. The live
//! entities of the new table have no rows yet; the world places them
//! ([`raw::place_columns`](crate::raw::place_columns)) and
//! checks that every one got a row.

use super::{Entities, Slot, FREE, LOCATED, RESERVED, RETIRED, UNLOCATED};
use crate::entity::Entity;

/// The ids of an entity table. See the module docs.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EntityTableImage {
    /// Generation of every slot: the live entity's, or for a free slot the
    /// next one to hand out.
    pub generations: Vec<u32>,
    /// Free slot indices, in FIFO order (the first is reused first).
    pub free: Vec<u32>,
    /// Retired slot indices (their generation would have wrapped), ascending.
    pub retired: Vec<u32>,
    /// How many freed indices must wait before one is reused.
    pub min_free_indices: usize,
}

/// Why an entity-table image was refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ImageError {
    /// The table has reserved ids (unapplied spawns), which no image carries.
    #[error("{0} entity ids are reserved for spawns not yet applied; apply or drop the command buffers first")]
    Reserved(usize),
    /// A free or retired index is not below the slot count.
    #[error("slot index {index} is out of range (the table has {slots} slots)")]
    OutOfRange {
        /// The index.
        index: u32,
        /// The slot count.
        slots: usize,
    },
    /// An index is listed twice (in `free`, in `retired`, or in both).
    #[error("slot index {0} is listed twice among the free and retired slots")]
    Repeated(u32),
    /// More slots than ids exist.
    #[error("{0} slots is more than the 2^32 - 1 entity indices")]
    TooManySlots(usize),
}

impl EntityTableImage {
    /// The live entities, in index order.
    pub fn live(&self) -> impl Iterator<Item = Entity> + '_ {
        let mut dead = vec![false; self.generations.len()];
        for &i in self.free.iter().chain(&self.retired) {
            if let Some(d) = dead.get_mut(i as usize) {
                *d = true;
            }
        }
        self.generations
            .iter()
            .enumerate()
            .filter(move |(i, _)| !dead[*i])
            .map(|(i, &g)| Entity::from_parts(i as u32, g))
    }
}

impl Entities {
    /// This table's ids as plain data (see the module docs).
    pub fn image(&self) -> Result<EntityTableImage, ImageError> {
        let reserved = self.reserved_count();
        if reserved > 0 {
            return Err(ImageError::Reserved(reserved));
        }
        Ok(EntityTableImage {
            generations: self.slots.iter().map(|s| s.generation).collect(),
            free: self.free.iter().copied().collect(),
            retired: (0..self.slots.len() as u32)
                .filter(|&i| self.slots[i as usize].code == RETIRED)
                .collect(),
            min_free_indices: self.min_free_indices,
        })
    }

    /// A table holding `image`'s ids, every live one alive without a row.
    /// Checks the image first (see [`ImageError`]).
    pub fn from_image(image: &EntityTableImage) -> Result<Entities, ImageError> {
        let n = image.generations.len();
        if n >= u32::MAX as usize {
            return Err(ImageError::TooManySlots(n));
        }
        let mut slots: Vec<Slot> = image
            .generations
            .iter()
            .map(|&g| Slot::with(g, UNLOCATED))
            .collect();
        for (&i, code) in image
            .free
            .iter()
            .map(|i| (i, FREE))
            .chain(image.retired.iter().map(|i| (i, RETIRED)))
        {
            let slot = slots
                .get_mut(i as usize)
                .ok_or(ImageError::OutOfRange { index: i, slots: n })?;
            if slot.code != UNLOCATED {
                return Err(ImageError::Repeated(i));
            }
            slot.code = code;
        }
        let retired = image.retired.len();
        let mut table = Entities::with_min_free_indices(image.min_free_indices);
        table.live = n - image.free.len() - retired;
        table.retired = retired;
        table.free = image.free.iter().copied().collect();
        table.slots = slots;
        *table.pending.get_mut() = n as u32;
        Ok(table)
    }

    /// Live entities without a row (after [`Entities::from_image`], the
    /// ones not placed yet).
    pub fn unlocated_count(&self) -> usize {
        self.live - self.located
    }

    /// Whether `entity` is alive without a row.
    pub fn is_unlocated(&self, entity: Entity) -> bool {
        self.slot(entity).is_some_and(|s| s.code == UNLOCATED)
    }
}

// Keep the slot codes this file relies on in one place.
const _: () =
    assert!(UNLOCATED < FREE && FREE < RESERVED && RESERVED < RETIRED && RETIRED < LOCATED);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn image_round_trips_ids_and_free_order() {
        let mut t = Entities::with_min_free_indices(2);
        let mut es = Vec::new();
        t.alloc_many(6, &mut es);
        for &e in &[es[4], es[1], es[3]] {
            t.free(e);
        }
        let image = t.image().unwrap();
        assert_eq!(image.free, vec![4, 1, 3]);
        let mut back = Entities::from_image(&image).unwrap();
        back.check_invariants();
        assert_eq!(back.unlocated_count(), 3);
        assert!(back.is_unlocated(es[0]) && !back.alive(es[1]));
        assert_eq!(image.live().collect::<Vec<_>>(), vec![es[0], es[2], es[5]]);
        // The next ids are the ones the original would hand out.
        let (mut a, mut b) = (Vec::new(), Vec::new());
        t.alloc_many(4, &mut a);
        back.alloc_many(4, &mut b);
        assert_eq!(a, b);
    }

    #[test]
    fn bad_images_are_refused() {
        let base = EntityTableImage {
            generations: vec![0, 3, 1],
            free: vec![1],
            retired: vec![],
            min_free_indices: 0,
        };
        assert!(Entities::from_image(&base).is_ok());
        let mut img = base.clone();
        img.free.push(7);
        assert_eq!(
            Entities::from_image(&img).unwrap_err(),
            ImageError::OutOfRange { index: 7, slots: 3 }
        );
        let mut img = base.clone();
        img.retired.push(1);
        assert_eq!(
            Entities::from_image(&img).unwrap_err(),
            ImageError::Repeated(1)
        );
        let mut img = base;
        img.free.push(1);
        assert_eq!(
            Entities::from_image(&img).unwrap_err(),
            ImageError::Repeated(1)
        );
    }

    #[test]
    fn reserved_ids_refuse_an_image() {
        let mut t = Entities::new();
        let mut es = Vec::new();
        t.reserve_many(2, &mut es);
        assert_eq!(t.image().unwrap_err(), ImageError::Reserved(2));
        let _ = t.reserve();
        t.spawn_reserved(es[0]);
        t.spawn_reserved(es[1]);
        assert_eq!(t.image().unwrap_err(), ImageError::Reserved(1));
    }
}
