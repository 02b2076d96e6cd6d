//! Despawning: the fourth structural core, [`WorldCore::despawn_rows`].
//!
//! Design. Rows go one entity at a time through [`drop_row`], which makes
//! the entity table consistent (the entity forgotten, the row that filled
//! the hole followed) before any value drops, so a panicking `Drop` leaves
//! no half-removed row. Relationship pairs go with the entity, both ways;
//! sources of relations that despawn with their target (`ChildOf`) go
//! breadth-first, parents before children, and once such a subtree starts
//! all of it goes even if a hook or a `Drop` panics, the first panic
//! resuming afterwards. Callback managers hear of every removed entity.

use super::core::WorldCore;
use super::id_list::IdList;
use super::scratch::Graveyard;
use crate::entities::Entities;
use crate::entity::Entity;
use crate::location::Location;
use crate::relation::Cleanup;
use crate::storage::Archetypes;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};

/// Runs each piece of a batch even if an earlier one panics, keeping the
/// first panic to resume once the batch is done.
#[derive(Default)]
struct FirstPanic(Option<Box<dyn std::any::Any + Send>>);

impl FirstPanic {
    /// Runs `f`, keeping its panic if it is the first.
    fn run(&mut self, f: impl FnOnce()) {
        if let Err(payload) = catch_unwind(AssertUnwindSafe(f)) {
            self.0.get_or_insert(payload);
        }
    }

    /// Resumes the first panic, if any.
    fn resume(self) {
        if let Some(payload) = self.0 {
            resume_unwind(payload);
        }
    }
}

impl WorldCore {
    /// Removes the rows of every entity of `entities` that is here, dropping
    /// their values, and with `free_ids` also frees their ids (a `World`'s
    /// table allocates them), then tells callback managers about every
    /// removed entity, even if a `Drop` panicked. Entities not here go to
    /// `on_missing` with their position. Returns how many of `entities`
    /// were removed.
    ///
    /// Every removed entity's relationship pairs go too, both ways. With
    /// `free_ids`, the sources of relations that despawn with their target
    /// ([`Cleanup::DespawnSource`], e.g. `ChildOf`) go with each entity,
    /// breadth-first, parents before children; once such a subtree starts,
    /// all of it is removed even if a hook or a `Drop` panics on the way,
    /// and the first panic goes on afterwards.
    pub(crate) fn despawn_rows(
        &mut self,
        entities: &[Entity],
        free_ids: bool,
        mut on_missing: impl FnMut(usize, Entity),
    ) -> usize {
        let mut destroyed = std::mem::take(&mut self.despawned);
        destroyed.clear();
        let mut count = 0;
        // Every listed entity is removed even if a hook or a `Drop` panics
        // on an earlier one, and managers hear of every removal; the first
        // panic then goes on.
        let mut panics = FirstPanic::default();
        for (k, &entity) in entities.iter().enumerate() {
            // A hook of an earlier removal may have despawned it already.
            let Some(location) = self.entities.location(entity) else {
                on_missing(k, entity);
                continue;
            };
            count += 1;
            panics.run(|| {
                if free_ids && self.relations.has_dependents(entity) {
                    self.despawn_subtree(entity, &mut destroyed);
                } else {
                    self.despawn_one(entity, location, free_ids, &mut destroyed);
                }
            });
        }
        self.managers.notify_destroyed(&destroyed);
        self.despawned = destroyed;
        panics.resume();
        count
    }

    /// Removes `root` and everything that despawns with it through its
    /// relations, breadth-first. Each entity's removal runs on even if an
    /// earlier one panicked; the first panic goes on at the end.
    fn despawn_subtree(&mut self, root: Entity, destroyed: &mut Vec<Entity>) {
        let doomed = self.doomed_with(root);
        let mut panics = FirstPanic::default();
        for &e in &doomed {
            // A hook of an earlier removal may have despawned it already.
            let Some(location) = self.entities.location(e) else {
                continue;
            };
            panics.run(|| self.despawn_one(e, location, true, destroyed));
        }
        panics.resume();
    }

    /// `root` and every live entity that despawns with it through a
    /// [`Cleanup::DespawnSource`] relation, breadth-first, each once.
    pub(crate) fn doomed_with(&self, root: Entity) -> Vec<Entity> {
        let mut doomed = vec![root];
        let mut seen: std::collections::HashSet<Entity> = [root].into_iter().collect();
        let mut next = 0;
        while next < doomed.len() {
            let e = doomed[next];
            next += 1;
            for table in self.relations.tables() {
                if table.cleanup() != Cleanup::DespawnSource {
                    continue;
                }
                table.for_each_source(e, &mut |s| {
                    if self.entities.location(s).is_some() && seen.insert(s) {
                        doomed.push(s);
                    }
                });
            }
        }
        doomed
    }

    /// Removes one entity at `location`: its removal hooks and logs, its
    /// row, its relationship pairs (values dropped last, after every table
    /// is consistent). Recorded in `destroyed` before anything can panic.
    fn despawn_one(
        &mut self,
        entity: Entity,
        location: Location,
        free_ids: bool,
        destroyed: &mut Vec<Entity>,
    ) {
        // Observers record commands and cannot move the row.
        self.run_despawn_observers(entity);
        if self.removal_observed(location) {
            let components =
                IdList::from_slice(self.archetypes.get(location.archetype).components());
            self.before_removal(entity, location, components.as_slice());
            self.log_removals(entity, components.as_slice());
        }
        // Built only when there is a sparse set to empty: an unused
        // graveyard still costs its construction and drop.
        let sparse_values = (!self.sparse.is_empty()).then(|| {
            let mut values = Graveyard::default();
            self.despawn_sparse(entity, true, &mut values);
            values
        });
        destroyed.push(entity);
        if self.hooks.observers.has_entity_observers() {
            // Its observers go with it; component hook masks stay as they
            // are (a mask bit with no observer left only costs a lookup).
            self.hooks.observers.forget_entity(entity);
        }
        let pairs = self.forget_relations(entity);
        drop_row(
            &mut self.entities,
            &mut self.archetypes,
            entity,
            location,
            free_ids,
        );
        drop(pairs);
        drop(sparse_values);
    }

    /// Removes every pair from or to `entity`; returns the removed values,
    /// to be dropped by the caller once the world is consistent.
    fn forget_relations(&mut self, entity: Entity) -> Option<Vec<Box<dyn std::any::Any + Send>>> {
        if self.relations.is_empty() {
            return None;
        }
        let pairs = self.relations.tables_mut().iter_mut();
        Some(pairs.filter_map(|t| t.forget(entity)).collect())
    }

    /// Removes entities that died in a shared id space: drops their rows (if
    /// they had any here) and tells callback managers about all of them.
    pub(crate) fn forget_destroyed(&mut self, destroyed: &[Entity]) {
        // Every row goes even if a `Drop` panics on an earlier one; the
        // first panic goes on at the end.
        let mut panics = FirstPanic::default();
        for &entity in destroyed {
            let Some(location) = self.entities.location(entity) else {
                continue;
            };
            panics.run(|| {
                if self.removals_active() {
                    let components = self
                        .archetypes
                        .get(location.archetype)
                        .components()
                        .to_vec();
                    self.log_removals(entity, &components);
                }
                // Ids are the universe's: relations lose the pairs, and
                // nothing else despawns here.
                let _pairs = self.forget_relations(entity);
                let mut _sparse_values = Graveyard::default();
                if !self.sparse.is_empty() {
                    self.despawn_sparse(entity, false, &mut _sparse_values);
                }
                drop_row(
                    &mut self.entities,
                    &mut self.archetypes,
                    entity,
                    location,
                    false,
                );
            });
        }
        self.managers.notify_destroyed(destroyed);
        panics.resume();
    }
}

/// Removes `entity`'s row at `location` and drops its values. The table
/// forgets `entity` (and with `free_id` frees its id) and follows the row
/// that filled the hole before any value drops, so it is consistent even if
/// a drop panics.
fn drop_row(
    entities: &mut Entities,
    archetypes: &mut Archetypes,
    entity: Entity,
    location: Location,
    free_id: bool,
) {
    entities.clear_location(entity);
    if free_id {
        entities.free(entity);
    }
    let arch = archetypes.get_mut(location.archetype);
    // SAFETY: `location` is the live row of `entity` (index invariant).
    unsafe {
        arch.swap_remove_drop(location.row, |moved| {
            if let Some(moved) = moved {
                entities.relocate(moved, location);
            }
        })
    };
}
