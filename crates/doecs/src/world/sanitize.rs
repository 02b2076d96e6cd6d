//! The `sanitize` feature: every structural operation ends by verifying the
//! invariants of the whole world it changed, as flecs's `FLECS_SANITIZE`
//! does. Without the feature the checks compile to nothing.
//!
//! The checks sit at a few choke points, not in every method:
//! - [`World::flush_hooks`], which every `World` operation ends with (spawns
//!   of every kind, insert, remove, exchange, take, despawns, `clear`,
//!   applying a command buffer, [`raw::as_one_operation`](crate::raw::as_one_operation), placing loaded
//!   rows);
//! - the public structural methods of [`WorldCore`]: insert, remove,
//!   exchange and their untyped forms (which a `World` shadows, but a
//!   universe's worlds call), every relation change (`add_pair`,
//!   `remove_pair`, `set_parent`, `add_pairs`, `parent_batch`, ..., which a
//!   `World` does not shadow), and `free_unused_chunk_memory`;
//! - the few `World` operations that change the world without a flush:
//!   [`World::instantiate`], [`World::restore`],
//!   [`raw::world_from_entity_image`](crate::raw::world_from_entity_image), and the end of each parallel segment
//!   of a schedule (its id pools settled);
//! - the [`Universe`](crate::Universe)'s spawns and despawns, and
//!   [`SharedWorld::insert`](crate::universe::SharedWorld::insert).
//!
//! An operation made of other operations holds their checks and checks
//! once at its end ([`World::with_checks_held`]): applying a command buffer
//! checks after its last command, a hook flush after its last round, a
//! schedule's segment after applying every system's commands, and
//! `World::insert` once, not once in its core and again after its flush.
//! (Each check walks the whole world, so a check per command would make
//! applying a buffer quadratic.) Inside [`raw::as_one_operation`](crate::raw::as_one_operation) every
//! call still checks: each leaves the world consistent.
//!
//! A check costs O(world), so a test suite run with the feature is slower;
//! it is meant for tests and debugging, never for a shipped build.

use super::core::WorldCore;
use super::World;

impl World {
    /// With the `sanitize` feature, [`World::check_invariants`] (unless an
    /// operation under way holds the checks); otherwise nothing. While a
    /// load is placing rows (see [`raw::world_from_entity_image`](crate::raw::world_from_entity_image)), live
    /// entities without a row are expected, and only the table and the
    /// storage are checked.
    #[inline]
    pub(crate) fn sanitize(&self) {
        #[cfg(feature = "sanitize")]
        if self.core.checks_held == 0 {
            count_check();
            if self.placing {
                self.core.entities.check_invariants();
                self.core.check_storage_invariants();
            } else {
                self.check_invariants();
            }
        }
    }

    /// Runs `operation` with the checks of the operations it is made of
    /// held; the caller checks once afterwards. Without the `sanitize`
    /// feature, just runs it.
    #[inline]
    pub(crate) fn with_checks_held<R>(&mut self, operation: impl FnOnce(&mut World) -> R) -> R {
        #[cfg(feature = "sanitize")]
        {
            use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
            self.core.checks_held += 1;
            let outcome = catch_unwind(AssertUnwindSafe(|| operation(self)));
            self.core.checks_held -= 1;
            match outcome {
                Ok(result) => result,
                Err(payload) => resume_unwind(payload),
            }
        }
        #[cfg(not(feature = "sanitize"))]
        operation(self)
    }

    /// Notes whether a load is still placing rows: whether some live entity
    /// has none yet. Only the `sanitize` feature keeps this.
    #[inline]
    pub(crate) fn note_placing(&mut self) {
        #[cfg(feature = "sanitize")]
        {
            self.placing = self.core.entities.unlocated_count() > 0;
        }
    }
}

impl WorldCore {
    /// With the `sanitize` feature, [`WorldCore::check_storage_invariants`] (unless
    /// an operation under way holds the checks); otherwise nothing.
    #[inline]
    pub(crate) fn sanitize(&self) {
        #[cfg(feature = "sanitize")]
        if self.checks_held == 0 {
            count_check();
            self.check_storage_invariants();
        }
    }
}

#[cfg(all(test, feature = "sanitize"))]
thread_local! {
    /// How many checks ran on this thread (tests run one per thread).
    static CHECKS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// Counts one check, for the tests that prove the checks run.
#[cfg(feature = "sanitize")]
#[inline]
pub(crate) fn count_check() {
    #[cfg(test)]
    CHECKS.with(|c| c.set(c.get() + 1));
}

/// How many checks ran on this thread so far.
#[cfg(all(test, feature = "sanitize"))]
pub(crate) fn checks_run() -> usize {
    CHECKS.with(|c| c.get())
}

#[cfg(all(test, feature = "sanitize"))]
mod tests {
    use super::checks_run;
    use crate::prelude::*;
    use crate::{ChildOf, CommandBuffer, ComponentHooks, IsA, Prefab, Snapshot, Universe};

    /// Runs `op` and asserts that it checked the world at least once.
    fn checked<R>(name: &str, op: impl FnOnce() -> R) -> R {
        let before = checks_run();
        let result = op();
        assert!(checks_run() > before, "{name} ran no check");
        result
    }

    #[test]
    fn every_structural_operation_checks_the_world() {
        let mut world = World::new();
        world.snapshot_by_copy::<u32>();
        world.snapshot_by_copy::<f32>();
        let e = checked("spawn", || world.spawn((1u32,)));
        let es = checked("spawn_batch", || world.spawn_batch((0..4u32).map(|i| (i,))));
        checked("try_spawn_batch", || {
            world.try_spawn_batch([(5u32,)]).unwrap()
        });
        let empties = checked("spawn_empty_batch", || world.spawn_empty_batch(3));
        checked("insert", || world.insert(e, (2.0f32,)).unwrap());
        checked("insert_one", || world.insert_one(e, 3u32).unwrap());
        checked("remove_one", || world.remove_one::<f32>(e).unwrap());
        checked("exchange", || {
            world.exchange::<(u32,), _>(e, (4.0f32,)).unwrap()
        });
        checked("take", || world.take::<(u32,)>(es[0]).unwrap());
        checked("despawn", || world.despawn(es[1]).unwrap());
        checked("despawn_batch", || world.despawn_batch(&es[2..]));
        let mut template = crate::EntityTemplate::new();
        template.add(7u32);
        checked("spawn_template", || world.spawn(&template));
        let mut builder = crate::EntityBuilder::new();
        builder.add(8u32);
        checked("spawn_built", || world.spawn(&mut builder));
        let mut buffer = CommandBuffer::new();
        let reserved = buffer.spawn(&world, (9u32,));
        buffer.insert_one(e, 1u32);
        checked("apply", || world.apply(&mut buffer));
        assert!(world.alive(reserved));
        checked("add_pair", || {
            world.set_parent(empties[1], empties[0]).unwrap()
        });
        checked("remove_parent", || world.remove_parent(empties[1]).unwrap());
        checked("add_pairs", || {
            world
                .add_pairs(vec![(empties[1], empties[0], ChildOf)])
                .unwrap()
        });
        checked("parent_batch", || {
            let more = world.spawn_empty_batch(2);
            world.parent_batch(more, vec![None, Some(0)]).unwrap()
        });
        let mut snapshot = Snapshot::new();
        world.snapshot_into(&mut snapshot).unwrap();
        let prefab = world.spawn((Prefab, 1u32));
        checked("instantiate", || world.instantiate(prefab, 2).unwrap());
        checked("despawn subtree", || world.despawn(empties[0]).unwrap());
        checked("restore", || world.restore(&snapshot).unwrap());
        checked("free_unused_chunk_memory", || {
            world.free_unused_chunk_memory()
        });
        checked("as_one_operation", || {
            world.as_one_operation(|w| w.spawn((1u32,)))
        });
        let heat = world
            .register_component(crate::ComponentDescriptor::dynamic(
                "Heat",
                std::alloc::Layout::new::<u32>(),
            ))
            .unwrap();
        checked("spawn_columns_bytes", || {
            world.spawn_columns_bytes(&[heat], 2, &[&[0u8; 8]]).unwrap()
        });
        checked("clear", || world.clear());

        // Loading: the checks run while rows are placed (live entities
        // without a row are expected then), and in full once all are.
        let mut source = World::new();
        let saved = source.spawn_batch((0..3u32).map(|i| (i,)));
        source.despawn(saved[1]).unwrap();
        let image = source.entities().image().unwrap();
        let mut loaded = checked("from_entity_image", || {
            World::from_entity_image(&image, crate::WorldConfig::default()).unwrap()
        });
        let id = loaded.component_id::<u32>();
        let live: Vec<Entity> = image.live().collect();
        let values = [7u32, 8];
        for k in 0..live.len() {
            checked("place_columns_raw", || {
                // SAFETY: one initialised `u32` for the one entity; `u32`
                // needs no drop, so the array may keep its copy.
                unsafe {
                    loaded.place_columns_raw(&live[k..=k], &[id], &[values[k..].as_ptr().cast()])
                }
                .unwrap()
            });
        }
        loaded.finish_placing().unwrap();
        assert_eq!(loaded.get::<u32>(live[1]), Ok(&8));
        checked("a loaded world's operations", || loaded.spawn((9u32,)));

        let mut universe = Universe::new();
        let game = universe.add_world();
        let sword = checked("universe spawn", || universe.spawn());
        checked("shared insert", || {
            universe.world_mut(game).insert_one(sword, 1u32).unwrap()
        });
        checked("shared remove", || {
            universe.world_mut(game).remove_one::<u32>(sword).unwrap()
        });
        checked("universe despawn", || universe.despawn(sword).unwrap());
    }

    #[test]
    fn composed_operations_check_once_at_their_end() {
        let mut world = World::new();
        world.set_hooks::<u32>(ComponentHooks::new().on_add(|ctx| {
            ctx.commands.insert_one(ctx.entity, 1u8);
            ctx.commands.insert_one(ctx.entity, 2u16);
        }));
        // The spawn and the flush of the two commands its hook recorded.
        let before = checks_run();
        let e = world.spawn((1u32,));
        assert_eq!(checks_run() - before, 1);
        assert_eq!(world.get::<u16>(e), Ok(&2));
        // An insert: not once in the core and again after the flush.
        let before = checks_run();
        world.insert_one(e, 3u64).unwrap();
        assert_eq!(checks_run() - before, 1);
        // A buffer of many commands.
        let mut buffer = CommandBuffer::new();
        for i in 0..10u32 {
            buffer.spawn(&world, (i,));
        }
        let before = checks_run();
        world.apply(&mut buffer);
        assert_eq!(checks_run() - before, 1);
        assert_eq!(world.len(), 11);
    }

    #[test]
    #[should_panic(expected = "is dead")]
    fn a_corrupted_world_is_caught_at_the_next_operation() {
        let mut world = World::new();
        let parent = world.spawn(());
        let child = world.spawn(());
        world.add_pair(child, parent, IsA).unwrap();
        // Renames the parent in the table and its row, but not in the pair
        // that names it: the pair now points at a dead entity.
        world.debug_set_generation(parent, 7).unwrap();
        world.spawn(());
    }
}
