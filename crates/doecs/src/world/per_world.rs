//! State kept outside a world about that world, forgotten when it is dropped.
//!
//! A schedule or a system may run on many worlds in turn: a game that loads
//! a level or a save each round runs its schedule on a fresh world every
//! time. Whatever it keeps about a world (query caches, an event reader's
//! place, an id pool, the tick of its last run) is kept per world, in a
//! [`PerWorld`] map keyed by [`WorldId`]. Each world holds a lifeline (an
//! `Arc<()>`) and each entry a weak handle to it, so an entry whose world
//! was dropped is found dead and freed the next time the map meets a world
//! it has not seen. The map therefore holds at most one entry per world
//! that is still alive, and its lookup checks the world of the last call
//! first, so running on one world at a time costs one comparison.

use super::core::{WorldCore, WorldId};
use std::sync::Weak;

/// One value per live world. See the module docs.
#[derive(Debug)]
pub(crate) struct PerWorld<T> {
    entries: Vec<Entry<T>>,
    /// Index of the entry of the last world entered.
    current: usize,
}

#[derive(Debug)]
struct Entry<T> {
    world: WorldId,
    lifeline: Weak<()>,
    value: T,
}

impl<T> Default for PerWorld<T> {
    fn default() -> Self {
        PerWorld {
            entries: Vec::new(),
            current: 0,
        }
    }
}

impl<T> PerWorld<T> {
    /// The value for `world`, made by `make` if there is none; it becomes
    /// the current one. Meeting a new world frees the values of dropped
    /// worlds first.
    pub(crate) fn enter(&mut self, world: &WorldCore, make: impl FnOnce() -> T) -> &mut T {
        let id = world.id();
        let hit = self
            .entries
            .get(self.current)
            .is_some_and(|e| e.world == id);
        if !hit {
            self.current = match self.entries.iter().position(|e| e.world == id) {
                Some(i) => i,
                None => {
                    self.entries.retain(|e| e.lifeline.strong_count() > 0);
                    self.entries.push(Entry {
                        world: id,
                        lifeline: world.lifeline(),
                        value: make(),
                    });
                    self.entries.len() - 1
                }
            };
        }
        &mut self.entries[self.current].value
    }

    /// The value of the world last entered.
    ///
    /// # Panics
    /// If no world was entered yet.
    pub(crate) fn current(&mut self) -> &mut T {
        &mut self.entries[self.current].value
    }

    /// How many worlds' values are kept (dead ones not yet freed included).
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.entries.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::World;

    #[test]
    fn dropped_worlds_are_forgotten_when_a_new_world_is_met() {
        let mut map = PerWorld::<u32>::default();
        let keep = World::new();
        *map.enter(&keep, || 0) += 1;
        for _ in 0..100 {
            let fresh = World::new();
            *map.enter(&fresh, || 10) += 1;
            assert!(map.len() <= 2, "only live worlds are kept: {}", map.len());
        }
        assert_eq!(
            *map.enter(&keep, || 0),
            1,
            "the live world's value survives"
        );
        let other = World::new();
        assert_eq!(*map.enter(&other, || 7), 7);
        assert_eq!(map.len(), 2);
        assert_eq!(*map.current(), 7);
    }
}
