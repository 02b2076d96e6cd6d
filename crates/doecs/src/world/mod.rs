//! The world: entities, their archetype storage, managers and resources.
//!
//! A [`World`] is a [`WorldCore`] (components, archetypes, the entity table,
//! managers and resources) whose entity table ([`Entities`]) also allocates
//! ids. The core does everything that needs no new ids: lookups, queries,
//! inserts and removals. The `World` adds what does: spawning, despawning,
//! reserving ids for command buffers. It dereferences to its core, so every
//! core method is a world method too. A [`Universe`](crate::Universe) instead
//! pairs one allocating table with several cores whose tables are only
//! indices; a core offers no way to allocate, so those worlds cannot hand out
//! ids by mistake.
//!
//! Every operation that names an entity first finds it in the entity index
//! (one load, which also checks the generation), so stale handles are refused
//! with [`EntityError::NoSuchEntity`]. Every operation that could be refused
//! (a dead entity, a malformed bundle) checks before it changes anything, so
//! a refused call leaves the world exactly as it was.
//!
//! Structural changes keep the world consistent at every point where user code
//! can run (a `Drop`, a manager callback, an iterator's `next`): rows are moved
//! and the index updated first, and values are dropped last.
//!
//! The file is split by concern: this file holds the `World` (ids, spawning,
//! despawning); [`core`] the `WorldCore` and its lookups; `structure` the one
//! core per structural change; `typed` and `untyped` the component API for
//! Rust types and for runtime components; `batch` the batch paths;
//! `sanitize` the invariant checks of the `sanitize` feature. [`command`]
//! (command buffers) and [`hooks`] (component hooks) are part of this layer
//! too, because the structural core fires the hooks and applies the commands
//! they record; the crate root re-exports them as `doecs::command` and
//! `doecs::hooks`. Queries, systems and the schedule sit above the world and
//! build on it; nothing here imports them.

mod add_pairs;
mod batch;
mod batch_moves;
mod builder;
pub mod command;
pub mod core;
mod entity_ref;
mod hidden;
mod hook_api;
pub mod hooks;
mod id_list;
mod immutable;
mod load;
mod names;
mod observers;
pub(crate) mod per_world;
pub mod prefab;
pub(crate) mod query_caches;
mod relations;
mod removals;
mod required;
pub use required::RequireError;
mod despawn;
pub(crate) mod sanitize;
mod scratch;
mod snapshot;
pub(crate) mod sparse;
mod sparse_moves;
mod structure;
mod tracking;
mod typed;
mod untyped;

pub use self::core::{WorldCore, WorldId};
pub use builder::{EntityBuilder, EntityTemplate, Spawn};
pub use entity_ref::{EntityRef, EntityWorldMut};
pub use hook_api::MAX_HOOK_ROUNDS;
#[cfg(feature = "serde")]
pub use load::SaveManager;
pub(crate) use observers::{lifecycle_kind, RunObserver, TriggerData, Watch};
pub use observers::{
    Event, ObserverError, ObserverId, ObserverInfo, OnAdd, OnDespawn, OnInsert, OnRemove, OnReplace,
};
pub use removals::RemovedComponents;
pub use snapshot::{Snapshot, SnapshotError};

use crate::bundle::Bundle;
use crate::entities::Entities;
use crate::entity::{Entity, MIN_FREE_INDICES};
use crate::error::EntityError;
use crate::storage::DEFAULT_CHUNK_BYTES;
use query_caches::QueryCaches;

/// Settings fixed when a world is created.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct WorldConfig {
    /// Bytes per chunk (16 KiB by default). A row larger than this gets one-row chunks.
    pub chunk_bytes: usize,
    /// Freed entity indices that must wait before one is reused (1024 by default).
    pub min_free_indices: usize,
}

impl Default for WorldConfig {
    fn default() -> Self {
        WorldConfig {
            chunk_bytes: DEFAULT_CHUNK_BYTES,
            min_free_indices: MIN_FREE_INDICES,
        }
    }
}

/// Entities and their components.
///
/// A `World` is a [`WorldCore`] (the storage, lookups, queries, relations,
/// managers and resources) that also allocates ids: it dereferences to its
/// core, so the core's methods are called on a `World` directly (rustdoc
/// lists them under "Methods from `Deref<Target = WorldCore>`"). No method
/// of the two has the other's name, and every structural change, whichever
/// method makes it, applies the commands hooks record before it returns.
/// (A [`Universe`](crate::Universe)'s worlds are cores that share one
/// allocator.) The methods by concern:
///
/// | concern | methods |
/// |---|---|
/// | create | [`new`](Self::new), [`with_config`](Self::with_config) |
/// | spawn | [`spawn`](Self::spawn) (a bundle, builder or template), [`spawn_batch`](Self::spawn_batch), [`reserve_entity`](Self::reserve_entity), [`spawn_reserved`](Self::spawn_reserved), [`instantiate`](Self::instantiate) (a prefab); `try_` twins refuse a malformed bundle instead of panicking |
/// | despawn | [`despawn`](Self::despawn), [`despawn_batch`](Self::despawn_batch), [`take`](Self::take), [`clear`](Self::clear) |
/// | components | [`get`](WorldCore::get), [`get_mut`](WorldCore::get_mut), [`get_many_mut`](WorldCore::get_many_mut), [`contains`](WorldCore::contains), [`insert`](Self::insert), [`insert_one`](Self::insert_one), [`insert_built`](Self::insert_built), [`remove`](Self::remove), [`remove_one`](Self::remove_one), [`exchange`](Self::exchange), [`entity`](WorldCore::entity), [`entity_mut`](Self::entity_mut), [`register_immutable`](WorldCore::register_immutable) (values change only by insert) |
/// | runtime components | [`register_component`](WorldCore::register_component), [`component_id`](WorldCore::component_id), [`components`](WorldCore::components), [`get_bytes`](WorldCore::get_bytes), [`get_bytes_mut`](WorldCore::get_bytes_mut), [`has_id`](WorldCore::has_id), [`insert_bytes`](Self::insert_bytes), [`remove_by_id`](Self::remove_by_id) |
/// | queries | [`query`](WorldCore::query), [`query_filtered`](WorldCore::query_filtered), [`query_mut`](Self::query_mut), [`query_filtered_mut`](Self::query_filtered_mut), [`view`](WorldCore::view), [`view_mut`](WorldCore::view_mut), [`iter_entities`](WorldCore::iter_entities); held queries are [`QueryState`](crate::QueryState)s; whole entities as query data: [`EntityRef`], [`EntityMut`](crate::EntityMut) |
/// | relations | [`add_pair`](WorldCore::add_pair), [`add_pairs`](WorldCore::add_pairs), [`remove_pair`](WorldCore::remove_pair), [`pair`](WorldCore::pair), [`pair_mut`](WorldCore::pair_mut), [`has_pair`](WorldCore::has_pair), [`targets`](WorldCore::targets), [`sources`](WorldCore::sources), [`relations`](WorldCore::relations) |
/// | hierarchy | [`set_parent`](WorldCore::set_parent), [`set_parents_in_batch`](WorldCore::set_parents_in_batch), [`remove_parent`](WorldCore::remove_parent), [`parent`](WorldCore::parent), [`children`](WorldCore::children), [`descendants`](WorldCore::descendants), [`hierarchy`](WorldCore::hierarchy), [`hierarchy_breadth_first`](WorldCore::hierarchy_breadth_first) |
/// | prefabs | [`instantiate`](Self::instantiate), [`override_inherited`](Self::override_inherited), [`prefab_of`](WorldCore::prefab_of), [`inherited_from`](WorldCore::inherited_from) |
/// | change detection | [`track_changes`](WorldCore::track_changes), [`mark_changed`](WorldCore::mark_changed), [`change_tick`](WorldCore::change_tick), [`change_ticks`](WorldCore::change_ticks), [`track_removals`](WorldCore::track_removals), [`removed`](WorldCore::removed), [`removed_in`](WorldCore::removed_in) (and `_by_id` forms for runtime components) |
/// | commands and hooks | [`apply`](Self::apply), [`apply_all`](Self::apply_all), [`set_hooks`](Self::set_hooks), [`set_hooks_by_id`](Self::set_hooks_by_id), [`hooks_of`](Self::hooks_of), [`flush_hooks`](Self::flush_hooks), [`take_hook_failures`](Self::take_hook_failures) |
/// | events | [`add_event`](WorldCore::add_event), [`send_event`](WorldCore::send_event), [`update_events`](WorldCore::update_events), [`event_cursor`](Self::event_cursor) |
/// | resources | [`insert_resource`](WorldCore::insert_resource), [`init_resource`](WorldCore::init_resource), [`resource`](WorldCore::resource), [`resource_mut`](WorldCore::resource_mut), [`remove_resource`](WorldCore::remove_resource), [`resource_scope`](Self::resource_scope), [`clear_resources`](Self::clear_resources), [`resources`](WorldCore::resources) |
/// | managers | [`add_manager`](WorldCore::add_manager), [`manager`](WorldCore::manager), [`manager_mut`](WorldCore::manager_mut), [`managers`](WorldCore::managers), [`remove_manager`](WorldCore::remove_manager), [`collect_garbage`](Self::collect_garbage) |
/// | snapshots | [`snapshot_by_copy`](Self::snapshot_by_copy), [`snapshot_by_clone`](Self::snapshot_by_clone), [`snapshot_skip`](Self::snapshot_skip), [`snapshot_resource`](Self::snapshot_resource), [`snapshot_into`](Self::snapshot_into), [`restore`](Self::restore) |
/// | the whole world | [`len`](WorldCore::len), [`is_empty`](WorldCore::is_empty), [`alive`](Self::alive), [`contains_entity`](WorldCore::contains_entity), [`entities`](Self::entities), [`id`](WorldCore::id), [`config`](WorldCore::config), [`chunk_memory_bytes`](WorldCore::chunk_memory_bytes), [`free_unused_chunk_memory`](WorldCore::free_unused_chunk_memory), [`check_invariants`](Self::check_invariants) |
///
/// Below these, [`doecs::raw`](crate::raw) holds the untyped, unchecked and
/// batch entry points other crates build on.
///
/// ```
/// use doecs::World;
/// #[derive(Debug, PartialEq)]
/// struct Position(f32);
/// struct Velocity(f32);
///
/// let mut world = World::new();
/// let e = world.spawn((Position(0.0), Velocity(2.0)));
/// world.query_mut::<(&mut Position, &Velocity)>().for_each(|(p, v)| p.0 += v.0);
/// assert_eq!(world.get::<Position>(e).unwrap(), &Position(2.0));
/// ```
pub struct World {
    pub(crate) core: WorldCore,
    /// Matched-archetype caches of `query_mut` calls, keyed by query shape.
    pub(crate) query_caches: QueryCaches,
    /// Whether hook commands are being applied, or held by
    /// `as_one_operation` (nested flushes wait).
    pub(crate) flushing_hooks: bool,
    /// Hook commands that failed when applied.
    pub(crate) hook_failures: Vec<command::CommandFailure>,
    /// Resources that snapshots include.
    pub(crate) resource_savers: Vec<snapshot::ResourceSaver>,
    /// Reused memory for restores.
    pub(crate) restore_scratch: crate::storage::RestoreScratch,
    /// The last snapshot restored (its serial) and the tick it was at.
    pub(crate) last_restore: Option<(u64, crate::tick::Tick)>,
    /// Whether a load is placing rows: some live entity has none yet (see
    /// `sanitize`).
    #[cfg(feature = "sanitize")]
    pub(crate) placing: bool,
}

impl Default for World {
    fn default() -> Self {
        Self::new()
    }
}

impl std::fmt::Debug for World {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("World").field("core", &self.core).finish()
    }
}

impl std::ops::Deref for World {
    type Target = WorldCore;
    #[inline]
    fn deref(&self) -> &WorldCore {
        &self.core
    }
}

impl std::ops::DerefMut for World {
    #[inline]
    fn deref_mut(&mut self) -> &mut WorldCore {
        &mut self.core
    }
}

impl World {
    /// An empty world with 16 KiB chunks.
    pub fn new() -> Self {
        Self::with_config(WorldConfig::default())
    }

    /// An empty world with the given settings.
    pub fn with_config(config: WorldConfig) -> Self {
        World {
            core: WorldCore::new(config),
            query_caches: QueryCaches::default(),
            flushing_hooks: false,
            hook_failures: Vec::new(),
            resource_savers: Vec::new(),
            restore_scratch: Default::default(),
            last_restore: None,
            #[cfg(feature = "sanitize")]
            placing: false,
        }
    }

    /// The entity table: the allocator and the index.
    pub fn entities(&self) -> &Entities {
        &self.core.entities
    }

    /// Whether `entity` is alive: one load and one compare. Every live entity
    /// has a row, so this is [`WorldCore::contains_entity`].
    #[inline]
    pub fn alive(&self, entity: Entity) -> bool {
        self.core.contains_entity(entity)
    }

    /// Reserves an entity id with shared access, for a spawn recorded now and
    /// applied later (see [`Entities::reserve`]).
    ///
    /// A reserved id is an entity waiting to be spawned: it is not alive,
    /// and becomes alive when [`World::spawn_reserved`] spawns it, or when
    /// an insert or a remove names it (directly or through a command
    /// buffer), which spawns it with that bundle (or empty) first, as hecs
    /// does. Despawning it cancels the reservation. A command buffer's
    /// `spawn` reserves its id this way and spawns it when applied.
    ///
    /// ```
    /// use doecs::{CommandBuffer, World};
    /// let mut world = World::new();
    /// let e = world.reserve_entity();
    /// assert!(!world.alive(e));
    /// let mut buffer = CommandBuffer::new();
    /// buffer.insert_one(e, 7u32);
    /// world.apply(&mut buffer);
    /// assert_eq!(world.get::<u32>(e), Ok(&7));
    /// ```
    pub fn reserve_entity(&self) -> Entity {
        self.core.entities.reserve()
    }

    /// Spawns an entity with the components of `source`: a bundle (a tuple
    /// or a `#[derive(Bundle)]` struct), an [`EntityBuilder`] (`&mut`,
    /// emptied) or an [`EntityTemplate`] (`&`, cloned). See [`Spawn`].
    ///
    /// ```
    /// use doecs::{EntityBuilder, World};
    /// let mut world = doecs::World::new();
    /// let e = world.spawn((1u32, "name"));
    /// assert_eq!(world.get::<u32>(e), Ok(&1));
    /// let mut builder = EntityBuilder::new();
    /// builder.add(2u32);
    /// let f = world.spawn(&mut builder);
    /// assert_eq!(world.get::<u32>(f), Ok(&2));
    /// ```
    ///
    /// # Panics
    /// If a bundle names one component type twice, before anything changes
    /// ([`World::try_spawn`] returns that as an error instead).
    #[inline]
    pub fn spawn(&mut self, source: impl Spawn) -> Entity {
        match self.try_spawn(source) {
            Ok(entity) => entity,
            Err(e) => panic!("doecs: {e}"),
        }
    }

    /// As [`World::spawn`], but a bundle that names one component type twice
    /// is refused, leaving the world as it was. Choose it where the bundle's
    /// types are not fixed in the source (generic code, tools).
    ///
    /// ```
    /// let mut world = doecs::World::new();
    /// assert!(world.try_spawn((1u32, 2u32)).is_err());
    /// assert!(world.is_empty());
    /// ```
    #[inline]
    pub fn try_spawn(&mut self, source: impl Spawn) -> Result<Entity, EntityError> {
        let entity = source.spawn_in(self)?;
        self.flush_hooks();
        Ok(entity)
    }

    /// Spawns `entity`, an id [`World::reserve_entity`] reserved, with
    /// `bundle` (also the apply step of a recorded spawn). An id that is not
    /// reserved is refused with [`EntityError::NoSuchEntity`], changing
    /// nothing; a malformed bundle is refused and cancels the reservation.
    pub fn spawn_reserved<B: Bundle>(
        &mut self,
        entity: Entity,
        bundle: B,
    ) -> Result<(), EntityError> {
        let id = match self.core.bundle_id::<B>() {
            Ok(id) => id,
            Err(e) => {
                self.core.entities.cancel_reserved(entity);
                return Err(e);
            }
        };
        if !self.core.entities.spawn_reserved(entity) {
            return Err(EntityError::NoSuchEntity(entity));
        }
        // SAFETY: the entity was only reserved, so it has no row; the writer
        // fills exactly `B`'s fields.
        unsafe {
            self.core
                .place_row(entity, id, structure::typed_writer(bundle))
        };
        // As after every other operation a command applies: what its hooks
        // recorded applies before the next command.
        self.flush_hooks();
        Ok(())
    }

    /// Despawns `entity`, dropping its components and telling callback managers.
    pub fn despawn(&mut self, entity: Entity) -> Result<(), EntityError> {
        if self.despawn_each(std::slice::from_ref(&entity), |_, _| {}) == 1 {
            Ok(())
        } else {
            Err(EntityError::NoSuchEntity(entity))
        }
    }

    /// Removes the components of bundle `B` from `entity`, despawns it (its
    /// other components drop), and returns them. If the entity lacks one of
    /// `B`'s components, nothing changes.
    ///
    /// ```
    /// let mut world = doecs::World::new();
    /// let e = world.spawn((1u8, "name"));
    /// assert_eq!(world.take::<(u8,)>(e), Ok((1,)));
    /// assert!(!world.alive(e));
    /// ```
    pub fn take<B: Bundle>(&mut self, entity: Entity) -> Result<B, EntityError> {
        let values = self.with_checks_held(|w| w.core.remove::<B>(entity))?;
        // A hook run by the removal may have despawned it already; either
        // way it is gone now.
        let _ = self
            .core
            .despawn_rows(std::slice::from_ref(&entity), true, |_, _| {});
        self.flush_hooks();
        Ok(values)
    }

    /// Despawns every live entity in `entities` (dead ones are skipped) and
    /// returns how many died. Callback managers get one call with all of them.
    pub fn despawn_batch(&mut self, entities: &[Entity]) -> usize {
        self.despawn_each(entities, |_, _| {})
    }

    /// [`World::despawn_batch`], calling `on_dead(k, entities[k])` for each
    /// entity that was not alive when its turn came (a repeat included).
    pub(crate) fn despawn_each(
        &mut self,
        entities: &[Entity],
        mut on_dead: impl FnMut(usize, Entity),
    ) -> usize {
        let mut missing = Vec::new();
        let mut removed = self
            .core
            .despawn_rows(entities, true, |k, e| missing.push((k, e)));
        // A reserved id was never spawned: despawning it cancels it.
        for (k, e) in missing {
            if self.core.entities.cancel_reserved(e) {
                removed += 1;
            } else {
                on_dead(k, e);
            }
        }
        self.flush_hooks();
        removed
    }

    /// Spawns `entity` with no components if it is a reserved id.
    #[inline]
    pub(crate) fn spawn_if_reserved(&mut self, entity: Entity) {
        if self.core.entities.is_reserved(entity) {
            self.spawn_reserved_empty(entity);
        }
    }

    /// The rare half of [`World::spawn_if_reserved`].
    #[cold]
    #[inline(never)]
    fn spawn_reserved_empty(&mut self, entity: Entity) {
        // An empty bundle is well formed, so this cannot be refused.
        let _ = self.spawn_reserved(entity, ());
    }

    /// Despawns every entity (hooks fire, relations are cleaned up, as for
    /// any despawn). Everything that is not an entity stays: resources,
    /// events, managers, registered components and hooks. To reset those
    /// too, make a new world; [`World::clear_resources`] drops the
    /// resources alone.
    pub fn clear(&mut self) {
        let all: Vec<Entity> = self.core.iter_entities().collect();
        self.despawn_batch(&all);
    }

    /// Drops every resource (events included: they are resources).
    pub fn clear_resources(&mut self) {
        self.core.resources_mut().clear();
    }

    /// Takes resource `R` out of the world, runs `f` with it and the world,
    /// and puts it back: for code that needs a resource and the rest of
    /// the world mutably at once. `None` (and `f` not run) if there is no
    /// `R`. The resource keeps its added tick and counts as changed now; if
    /// `f` removed or replaced
    /// the world's `R` meanwhile, the value taken out is put back over it.
    ///
    /// ```
    /// let mut world = doecs::World::new();
    /// world.insert_resource(vec![1u32, 2, 3]);
    /// let spawned = world.resource_scope(|world, numbers: &mut Vec<u32>| {
    ///     let es = world.spawn_batch(numbers.iter().map(|&n| (n,)));
    ///     numbers.push(4);
    ///     es.len()
    /// });
    /// assert_eq!(spawned, Some(3));
    /// assert_eq!(world.resource::<Vec<u32>>().unwrap().len(), 4);
    /// ```
    pub fn resource_scope<R: Send + Sync + 'static, T>(
        &mut self,
        f: impl FnOnce(&mut World, &mut R) -> T,
    ) -> Option<T> {
        let ticks = self.core.resources().ticks(std::any::TypeId::of::<R>())?;
        let mut value = self.core.remove_resource::<R>()?;
        let out = f(self, &mut value);
        self.core.insert_resource(value);
        let changed = self.core.change_tick();
        self.core.resources_mut().set_ticks(
            std::any::TypeId::of::<R>(),
            crate::resource::ResourceTicks {
                added: ticks.added,
                changed,
            },
        );
        Some(out)
    }

    /// Runs lazy garbage collection on every `LazyGc` manager; returns how many
    /// instances were destroyed.
    pub fn collect_garbage(&mut self) -> usize {
        let core = &mut self.core;
        core.managers.collect_garbage(&core.entities)
    }

    /// Test hook: gives the live `entity` generation `generation` everywhere the
    /// world records it (table and row), so generation wrap-around can be
    /// tested without four billion despawns. Returns the renamed handle, or
    /// `None` if `entity` is not alive.
    pub(crate) fn debug_set_generation(
        &mut self,
        entity: Entity,
        generation: u32,
    ) -> Option<Entity> {
        let location = self.core.location(entity).ok()?;
        let core = &mut self.core;
        let renamed = core.entities.debug_set_generation(entity, generation)?;
        core.entities.set_location(renamed, location);
        let arch = core.archetypes.get_mut(location.archetype);
        // SAFETY: `location` is `entity`'s live row, so its entity slot is in
        // bounds and initialised; `&mut self` makes the write exclusive.
        unsafe {
            arch.entities_ptr()
                .as_ptr()
                .add(location.row.index())
                .write(renamed)
        };
        Some(renamed)
    }

    /// Verifies every invariant: the entity table, archetypes and graph, the
    /// index against the rows, and that exactly the live entities have rows.
    /// Panics on failure. Meant for tests and debugging; it walks the whole world.
    pub fn check_invariants(&self) {
        self.core.entities.check_invariants();
        self.core.check_storage_invariants();
        assert_eq!(
            self.core.len(),
            self.core.entities.len(),
            "every live entity has a row"
        );
    }
}
