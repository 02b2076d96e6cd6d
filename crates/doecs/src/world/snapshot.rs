//! World snapshots: copy a whole world aside and put it back exactly.
//!
//! Allocation Adventures' single-buffer argument, applied to a whole world:
//! components already live in flat column arrays, so a snapshot is a copy
//! of those arrays, one `memcpy` per column for `Copy` components and one
//! clone per value for `Clone` ones ([`World::snapshot_by_copy`],
//! [`World::snapshot_by_clone`]; a component registered neither way makes
//! [`World::snapshot_into`] refuse with an error naming it). Beside the
//! columns a snapshot keeps the entity table (ids, generations, the free
//! FIFO), every relationship pair with its value (relations are `Clone`),
//! the resources that opted in ([`World::snapshot_resource`]) and the state
//! of every manager that implements
//! [`ComponentManager::save_state`](crate::ComponentManager::save_state).
//!
//! Restoring puts all of it back: the same entity ids and generations, the
//! same archetypes with the same rows in the same order, so iteration order
//! after a restore is the order at the snapshot. A [`Snapshot`] is reused:
//! its buffers only grow, so taking one every frame allocates nothing once
//! the world has stopped growing.
//!
//! Change detection survives: a restore stamps only rows whose value may
//! differ from the value they replace (see `storage::archetype::image`), so
//! a rollback does not make every `Changed` query fire. Hooks do not fire:
//! a restore is not a structural event of the game, and archetypes created
//! after the snapshot are simply left empty.
//!
//! A snapshot belongs to the world it was taken from.

use super::World;
use crate::component::{Component, SnapshotCopy};
use crate::entities::Entities;
use crate::storage::sparse_set::SparseSet;
use crate::storage::ArchetypeImage;
use crate::tick::Tick;
use crate::world::WorldId;
use std::any::{Any, TypeId};

/// Why a snapshot or a restore was refused. Either leaves the world as it was.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum SnapshotError {
    /// A component in the world cannot be copied.
    #[error(
        "component {0} cannot be snapshot: register it with World::snapshot_by_copy (Copy types) \
         or World::snapshot_by_clone (Clone types)"
    )]
    NotCopyable(String),
    /// The snapshot was taken from another world.
    #[error("the snapshot was taken from another world")]
    OtherWorld,
    /// The snapshot holds nothing: never taken, or a `Clone` panicked while
    /// it was taken.
    #[error("the snapshot is empty or unfinished")]
    Unfinished,
}

/// Saved state of one opted-in resource: its type, its value (none if the
/// world had none) and its change ticks.
type SavedResource = (
    TypeId,
    Option<Box<dyn Any + Send + Sync>>,
    crate::resource::ResourceTicks,
);

/// How to save and restore one resource type.
#[derive(Copy, Clone)]
pub(crate) struct ResourceSaver {
    type_id: TypeId,
    save: fn(&World, &mut Option<Box<dyn Any + Send + Sync>>),
    /// Puts the saved value back; `None` (no resource at the snapshot)
    /// removes the resource.
    restore: fn(&mut World, Option<&(dyn Any + Send + Sync)>),
}

/// A copy of a world, reused from snapshot to snapshot. See the module docs.
#[derive(Default)]
pub struct Snapshot {
    world: Option<WorldId>,
    /// Which snapshot this is: a fresh number every time one is taken.
    serial: u64,
    finished: bool,
    tick: Tick,
    entities: Entities,
    archetypes: Vec<Option<ArchetypeImage>>,
    resources: Vec<SavedResource>,
    relations: crate::relation::Relations,
    /// The sparse sets, in the world's order of sets.
    sparse: Vec<SparseSet>,
    managers: Vec<(TypeId, Option<Box<dyn Any + Send + Sync>>)>,
}

impl std::fmt::Debug for Snapshot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Snapshot")
            .field("finished", &self.finished)
            .field("tick", &self.tick)
            .field("entities", &self.entities.len())
            .field("bytes", &self.memory_bytes())
            .finish()
    }
}

impl Snapshot {
    /// An empty snapshot, to take one into.
    pub fn new() -> Self {
        Self::default()
    }

    /// How many live entities it holds.
    pub fn len(&self) -> usize {
        self.entities.len()
    }

    /// Whether it holds none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The change tick it was taken at.
    pub fn tick(&self) -> Tick {
        self.tick
    }

    /// Bytes its component and entity buffers hold (reserved included).
    pub fn memory_bytes(&self) -> usize {
        self.archetypes
            .iter()
            .flatten()
            .map(ArchetypeImage::memory_bytes)
            .sum()
    }
}

impl World {
    /// Snapshots copy `T` as raw bytes, a column at a time.
    pub fn snapshot_by_copy<T: Component + Copy>(&mut self) {
        let id = self.core.components.register::<T>();
        self.core
            .components
            .set_snapshot_copy(id, SnapshotCopy::Bytes);
    }

    /// Snapshots copy `T` value by value with `Clone`.
    pub fn snapshot_by_clone<T: Component + Clone>(&mut self) {
        /// # Safety
        /// `from` points to a live `T`; `to` to writable, aligned, unused
        /// memory for one `T`.
        unsafe fn clone_as<T: Clone>(from: *const u8, to: *mut u8) {
            // SAFETY: the caller's contract.
            unsafe { to.cast::<T>().write((*from.cast::<T>()).clone()) }
        }
        /// # Safety
        /// `from` and `to` point to live, distinct `T`s.
        unsafe fn clone_into<T: Clone>(from: *const u8, to: *mut u8) {
            // SAFETY: the caller's contract.
            unsafe { (*to.cast::<T>()).clone_from(&*from.cast::<T>()) }
        }
        let id = self.core.components.register::<T>();
        self.core
            .components
            .set_snapshot_copy(id, SnapshotCopy::Clone(clone_as::<T>, clone_into::<T>));
    }

    /// Snapshots skip `T`: they keep none of its values, and a restore gives
    /// every restored entity that has `T` a fresh `T::default()` (marked
    /// changed, so systems that rebuild it see it). For components that are
    /// neither `Copy` nor `Clone` (handles, caches), which otherwise make
    /// [`snapshot_into`](Self::snapshot_into) refuse.
    pub fn snapshot_skip<T: Component + Default>(&mut self) {
        /// # Safety
        /// `to` is writable, aligned, unused memory for one `T`.
        unsafe fn default_into<T: Default>(to: *mut u8) {
            // SAFETY: the caller's contract.
            unsafe { to.cast::<T>().write(T::default()) }
        }
        let id = self.core.components.register::<T>();
        self.core
            .components
            .set_snapshot_copy(id, SnapshotCopy::Reset(default_into::<T>));
    }

    /// Snapshots include resource `R` (cloned), and whether the world had
    /// one: a restore puts the value back, or removes `R` if the world had
    /// none at the snapshot.
    pub fn snapshot_resource<R: Clone + Send + Sync + 'static>(&mut self) {
        fn save<R: Clone + Send + Sync + 'static>(
            world: &World,
            saved: &mut Option<Box<dyn Any + Send + Sync>>,
        ) {
            let Some(value) = world.resource::<R>() else {
                *saved = None;
                return;
            };
            match saved.as_mut().and_then(|b| b.downcast_mut::<R>()) {
                Some(old) => old.clone_from(value),
                None => *saved = Some(Box::new(value.clone())),
            }
        }
        fn restore<R: Clone + Send + Sync + 'static>(
            world: &mut World,
            saved: Option<&(dyn Any + Send + Sync)>,
        ) {
            let Some(saved) = saved else {
                // Absent at the snapshot: absent after the restore.
                world.remove_resource::<R>();
                return;
            };
            let Some(saved) = saved.downcast_ref::<R>() else {
                return;
            };
            match world.resource_mut::<R>() {
                Some(value) => value.clone_from(saved),
                None => {
                    world.insert_resource(saved.clone());
                }
            }
        }
        if !self
            .resource_savers
            .iter()
            .any(|s| s.type_id == TypeId::of::<R>())
        {
            self.resource_savers.push(ResourceSaver {
                type_id: TypeId::of::<R>(),
                save: save::<R>,
                restore: restore::<R>,
            });
        }
    }

    /// Copies the whole world into `snapshot`, reusing its memory. Refused,
    /// with `snapshot` left unfinished, when a component in a non-empty
    /// archetype cannot be copied. The change clock moves on one tick, so
    /// that every later write is known to postdate the snapshot.
    pub fn snapshot_into(&mut self, snapshot: &mut Snapshot) -> Result<(), SnapshotError> {
        snapshot.finished = false;
        let core = &self.core;
        for arch in core.archetypes.iter().filter(|a| !a.is_empty()) {
            for &id in arch.components() {
                let info = core.components.info(id);
                if matches!(info.snapshot_copy(), SnapshotCopy::Unsupported) {
                    return Err(SnapshotError::NotCopyable(info.name().to_owned()));
                }
            }
        }
        for set in core.sparse.iter().filter(|s| s.len() > 0) {
            let info = core.components.info(set.component());
            if matches!(info.snapshot_copy(), SnapshotCopy::Unsupported) {
                return Err(SnapshotError::NotCopyable(info.name().to_owned()));
            }
        }
        static SERIAL: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        snapshot.serial = SERIAL.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        snapshot.world = Some(core.id());
        snapshot.tick = core.change_tick();
        snapshot.entities.copy_from(&core.entities);
        let archetypes = core.archetypes.len();
        snapshot.archetypes.resize_with(archetypes, || None);
        snapshot.archetypes.truncate(archetypes);
        for (arch, image) in core.archetypes.iter().zip(&mut snapshot.archetypes) {
            arch.save_into(image, &core.components);
        }
        snapshot
            .resources
            .resize_with(self.resource_savers.len(), || {
                (TypeId::of::<()>(), None, Default::default())
            });
        for (saver, (type_id, saved, ticks)) in
            self.resource_savers.iter().zip(&mut snapshot.resources)
        {
            if *type_id != saver.type_id {
                *saved = None;
                *type_id = saver.type_id;
            }
            (saver.save)(self, saved);
            *ticks = core.resources().ticks(saver.type_id).unwrap_or_default();
        }
        snapshot.relations.copy_from(&core.relations);
        snapshot.sparse.truncate(core.sparse.len());
        for (i, set) in core.sparse.iter().enumerate() {
            if snapshot.sparse.len() == i {
                snapshot
                    .sparse
                    .push(SparseSet::new(set.component(), set.item(), set.drop_fn()));
            }
            let copy = core.components.info(set.component()).snapshot_copy();
            snapshot.sparse[i].copy_from(set, copy);
        }
        core.managers.save_states(&mut snapshot.managers);
        snapshot.finished = true;
        let next = self.core.change_tick().next();
        self.core.set_change_tick(next);
        Ok(())
    }

    /// Puts the world back as `snapshot` saw it (see the module docs).
    ///
    /// If a component's `Clone` panics midway, the world is left empty (every
    /// entity freed, values leaked) and consistent, and the panic continues.
    pub fn restore(&mut self, snapshot: &Snapshot) -> Result<(), SnapshotError> {
        if !snapshot.finished {
            return Err(SnapshotError::Unfinished);
        }
        if snapshot.world != Some(self.core.id()) {
            return Err(SnapshotError::OtherWorld);
        }
        let now = self.core.write_tick();
        // Rows stamped no later than `since` hold the snapshot's values: at
        // the snapshot, or, after a restore of this same snapshot, at that
        // restore (which put every value back).
        let since = match self.last_restore {
            Some((serial, tick)) if serial == snapshot.serial => tick.max(snapshot.tick),
            _ => snapshot.tick,
        };
        let mut scratch = std::mem::take(&mut self.restore_scratch);
        /// Empties the world if a restore unwinds.
        struct Unwinding<'a>(&'a mut World);
        impl Drop for Unwinding<'_> {
            fn drop(&mut self) {
                let core = &mut self.0.core;
                for arch in core.archetypes.iter_mut() {
                    arch.drop_all_values();
                }
                core.entities.free_all_located();
            }
        }
        let guard = Unwinding(self);
        let core = &mut guard.0.core;
        for index in 0..core.archetypes.len() {
            let id = crate::storage::ArchetypeId::from_index(index);
            let (entities, archetypes) = (&core.entities, &mut core.archetypes);
            let arch = archetypes.get_mut(id);
            match snapshot.archetypes.get(index).and_then(Option::as_ref) {
                Some(image) => arch.restore_from(
                    image,
                    since,
                    now,
                    |e| {
                        entities
                            .location(e)
                            .filter(|l| l.archetype == id)
                            .map(|l| l.row.index())
                    },
                    &mut scratch,
                ),
                None => arch.drop_all_values(),
            }
        }
        core.entities.copy_from(&snapshot.entities);
        std::mem::forget(guard);
        self.restore_scratch = scratch;
        // Savers are `Copy`: index them so restoring allocates nothing.
        for (i, (type_id, saved, ticks)) in snapshot.resources.iter().enumerate() {
            let Some(saver) = self.resource_savers.get(i).copied() else {
                break;
            };
            if *type_id == saver.type_id {
                (saver.restore)(self, saved.as_deref());
                // Change ticks come back as they were, as components' do.
                self.core.resources_mut().set_ticks(*type_id, *ticks);
            }
        }
        self.restore_sparse(snapshot, since, now);
        self.core.managers.restore_states(&snapshot.managers);
        // A relation value's `Clone` may panic: then the world keeps no
        // pairs (never half-copied tables), and the panic goes on.
        let relations = &mut self.core.relations;
        if let Err(payload) = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            relations.copy_from(&snapshot.relations)
        })) {
            *relations = Default::default();
            std::panic::resume_unwind(payload);
        }
        self.last_restore = Some((snapshot.serial, now));
        // Later writes must stamp after the restore.
        self.core.set_change_tick(now.next());
        self.sanitize();
        Ok(())
    }

    /// Puts the sparse sets back as `snapshot` saw them. A value is stamped
    /// changed now where it may differ from the one it replaces: the
    /// entity lacked the component, or its value changed after `since`,
    /// or the component is reset by snapshots. If a `Clone` panics, every
    /// sparse set is left empty and the panic goes on.
    fn restore_sparse(&mut self, snapshot: &Snapshot, since: Tick, now: Tick) {
        let core = &mut self.core;
        let mut same = Vec::new();
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            for (i, set) in core.sparse.iter_mut().enumerate() {
                let Some(image) = snapshot.sparse.get(i) else {
                    set.clear();
                    continue;
                };
                let copy = core.components.info(set.component()).snapshot_copy();
                let reset = matches!(copy, SnapshotCopy::Reset(_));
                same.clear();
                same.extend(image.entities().iter().map(|&e| {
                    // SAFETY: `slot_of` found a live slot; nothing writes
                    // the set meanwhile (`&mut` to the world).
                    !reset
                        && set
                            .slot_of(e)
                            .is_some_and(|s| unsafe { set.ticks(s) }.1 <= since)
                }));
                set.copy_from(image, copy);
                for (slot, &kept) in same.iter().enumerate() {
                    if !kept {
                        let slot = set.slot_of(image.entities()[slot]).expect("just copied");
                        // SAFETY: the slot is live and `&mut` to the world
                        // makes its stamps ours.
                        unsafe { set.stamp_changed(slot, now) };
                    }
                }
            }
        }));
        if let Err(payload) = outcome {
            for set in core.sparse.iter_mut() {
                set.clear();
            }
            std::panic::resume_unwind(payload);
        }
    }
}
