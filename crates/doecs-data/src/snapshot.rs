//! The store's part of a world snapshot (`World::snapshot_into` /
//! `World::restore`, through [`doecs::ComponentManager::save_state`]).
//!
//! Saved: the arena (record bytes, slots, dead-byte and record counts), the
//! key registry (paths seen, names, and its read cache), the Lamport clock
//! and the lazy collector's random state: everything reads and later writes
//! depend on. Not saved: the scratch buffer (never outlives a call) and the
//! configuration (fixed when the store is made).
//!
//! A saved state is reused: the next snapshot into the same buffer copies
//! into its vectors (`clone_from`), and the registry, which rarely changes,
//! is only compared when it has not. A steady-state snapshot or restore
//! allocates nothing once the buffers are large enough.

use crate::arena::Arena;
use crate::names::KeyRegistry;
use crate::store::DataStore;
use doecs::LazyGc;
use std::any::Any;

/// What a [`DataStore`] saves into a world snapshot.
pub(crate) struct StoreSnapshot {
    arena: Arena,
    registry: KeyRegistry,
    clock: u32,
    gc: LazyGc,
}

/// `to` becomes a copy of `from`, reusing `to`'s memory.
fn copy_arena(to: &mut Arena, from: &Arena) {
    to.bytes.clone_from(&from.bytes);
    to.slots.clone_from(&from.slots);
    to.dead = from.dead;
    to.records = from.records;
}

impl DataStore {
    /// Saves the state into `saved`, reusing the memory of a state saved
    /// there before.
    pub(crate) fn save_into(&self, saved: &mut Option<Box<dyn Any + Send + Sync>>) {
        if !saved.as_ref().is_some_and(|b| b.is::<StoreSnapshot>()) {
            *saved = Some(Box::new(StoreSnapshot {
                arena: Arena::default(),
                registry: KeyRegistry::new(self.registry.keeps_names()),
                clock: 0,
                gc: LazyGc::new(),
            }));
        }
        let state = saved
            .as_mut()
            .and_then(|b| b.downcast_mut::<StoreSnapshot>())
            .expect("a saved store state is there");
        copy_arena(&mut state.arena, &self.arena);
        state.registry.copy_from(&self.registry);
        state.clock = self.clock;
        state.gc.clone_from(&self.gc);
    }

    /// Puts back a state [`save_into`](Self::save_into) saved. A state of
    /// another type is ignored.
    pub(crate) fn restore_from(&mut self, saved: &(dyn Any + Send + Sync)) {
        let Some(state) = saved.downcast_ref::<StoreSnapshot>() else {
            return;
        };
        copy_arena(&mut self.arena, &state.arena);
        self.registry.copy_from(&state.registry);
        self.clock = state.clock;
        self.gc.clone_from(&state.gc);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use doecs::Entity;

    #[test]
    fn a_second_save_reuses_the_buffers() {
        let mut store = DataStore::with_names();
        let es: Vec<Entity> = (0..50).map(|i| Entity::from_parts(i, 0)).collect();
        for (i, &e) in es.iter().enumerate() {
            store.set(e, "hp", i as f32).unwrap();
            store.set(e, "name.first", "x").unwrap();
        }
        let mut saved = None;
        store.save_into(&mut saved);
        let ptr = |saved: &Option<Box<dyn Any + Send + Sync>>| {
            let s = saved.as_ref().unwrap().downcast_ref::<StoreSnapshot>();
            s.unwrap().arena.bytes.as_ptr()
        };
        let first = ptr(&saved);
        store.set(es[3], "hp", -1.0).unwrap();
        store.save_into(&mut saved);
        assert_eq!(ptr(&saved), first, "same arena buffer");
        store.set(es[3], "hp", 5.0).unwrap();
        store.set(es[4], "mana", 5.0).unwrap();
        store.restore_from(&**saved.as_ref().unwrap());
        store.check_invariants();
        assert_eq!(store.get_f32(es[3], "hp"), Some(-1.0));
        assert_eq!(store.get_f32(es[4], "mana"), None);
        assert_eq!(store.known_paths(), 2);
        // A foreign state is ignored.
        store.restore_from(&7u8);
        assert_eq!(store.get_f32(es[3], "hp"), Some(-1.0));
    }
}
