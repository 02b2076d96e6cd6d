//! The world: entities, their archetype storage, managers and resources.
//!
//! `World` ties the layers together. It owns the entity allocator
//! ([`Entities`]), the component registry, the archetypes and the entity index
//! (entity → archetype, chunk, row). Every operation that names an entity first
//! checks it is alive (one load, one compare) and then finds its row (one more
//! load), so stale handles are refused with [`EntityError::NoSuchEntity`].
//!
//! Structural changes keep the world consistent at every point where user code
//! can run (a `Drop`, a manager callback, an iterator's `next`): rows are moved
//! and the index updated first, and values are dropped last.
//!
//! The file is split by concern: this file holds construction, spawning,
//! despawning and lookups; [`moves`](self) holds insert and remove (archetype
//! moves); `untyped` holds the byte-level API for runtime components.

mod batch;
mod moves;
mod untyped;

use crate::bundle::{Bundle, BundleInfo, MAX_BUNDLE_FIELDS};
use crate::component::{
    Component, ComponentDescriptor, ComponentId, Components, RegisterError, TypeIdMap,
};
use crate::entity::{Entities, Entity, MIN_FREE_INDICES};
use crate::error::EntityError;
use crate::location::{EntityLocations, Location};
use crate::manager::{ComponentManager, DestroyNotice, Managers};
use crate::resource::Resources;
use crate::storage::{ArchetypeId, Archetypes, ColumnIndex, DEFAULT_CHUNK_BYTES};
use std::any::TypeId;
use std::sync::atomic::{AtomicU64, Ordering};

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

/// Identifies a world, so query state built for one world is never used on another.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct WorldId(u64);

static NEXT_WORLD_ID: AtomicU64 = AtomicU64::new(0);

/// A bundle's cached spawn target.
#[derive(Debug)]
struct BundleSlot {
    info: BundleInfo,
    /// The archetype of exactly the bundle's components.
    archetype: ArchetypeId,
    /// For each field, its column in `archetype` (first `info.ids.len()` used).
    columns: [ColumnIndex; MAX_BUNDLE_FIELDS],
}

/// Entities and their components. See the module docs.
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
    id: WorldId,
    config: WorldConfig,
    pub(crate) entities: Entities,
    pub(crate) locations: EntityLocations,
    pub(crate) components: Components,
    pub(crate) archetypes: Archetypes,
    bundles: TypeIdMap<BundleSlot>,
    managers: Managers,
    resources: Resources,
    /// Scratch for batch despawns, kept to avoid reallocating.
    despawned: Vec<Entity>,
    /// Whether entity ids come from a [`crate::Universe`] shared with other
    /// worlds instead of `entities` (which then stays empty).
    pub(crate) shared_ids: bool,
    /// Matched-archetype caches of `query_mut` calls, keyed by query shape.
    pub(crate) query_caches: crate::query::QueryCaches,
}

impl Default for World {
    fn default() -> Self {
        Self::new()
    }
}

impl std::fmt::Debug for World {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("World")
            .field("entities", &self.entities)
            .field("archetypes", &self.archetypes.len())
            .field("components", &self.components.len())
            .field("managers", &self.managers)
            .finish()
    }
}

impl World {
    /// An empty world with 16 KiB chunks.
    pub fn new() -> Self {
        Self::with_config(WorldConfig::default())
    }

    /// An empty world with the given settings.
    pub fn with_config(config: WorldConfig) -> Self {
        let components = Components::default();
        World {
            id: WorldId(NEXT_WORLD_ID.fetch_add(1, Ordering::Relaxed)),
            config,
            entities: Entities::with_min_free_indices(config.min_free_indices),
            locations: EntityLocations::default(),
            archetypes: Archetypes::new(config.chunk_bytes, &components),
            components,
            bundles: TypeIdMap::default(),
            managers: Managers::default(),
            resources: Resources::default(),
            despawned: Vec::new(),
            query_caches: crate::query::QueryCaches::default(),
            shared_ids: false,
        }
    }

    /// This world's id.
    pub fn id(&self) -> WorldId {
        self.id
    }

    /// The settings this world was created with.
    pub fn config(&self) -> WorldConfig {
        self.config
    }

    /// The entity allocator.
    pub fn entities(&self) -> &Entities {
        &self.entities
    }

    /// The component registry.
    pub fn components(&self) -> &Components {
        &self.components
    }

    /// The archetypes.
    pub fn archetypes(&self) -> &Archetypes {
        &self.archetypes
    }

    /// Number of live entities.
    pub fn len(&self) -> usize {
        if self.shared_ids {
            self.archetypes.iter().map(|a| a.len()).sum()
        } else {
            self.entities.len()
        }
    }

    /// Whether no entity is alive.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether `entity` is alive: one load and one compare. In a world that
    /// shares ids through a [`crate::Universe`], whether it is in this world.
    #[inline]
    pub fn alive(&self, entity: Entity) -> bool {
        if self.shared_ids {
            self.location(entity).is_ok()
        } else {
            self.entities.alive(entity)
        }
    }

    /// Whether `entity` is alive and has component `T`.
    pub fn contains<T: Component>(&self, entity: Entity) -> bool {
        self.get::<T>(entity).is_ok()
    }

    /// Reserves an entity id with shared access; it becomes a live, empty entity
    /// at the next structural change (see [`Entities::reserve`]).
    pub fn reserve_entity(&self) -> Entity {
        self.entities.reserve()
    }

    /// Makes reserved ids live entities in the empty archetype.
    #[inline]
    pub fn flush_reserved(&mut self) {
        if self.entities.pending_reserved() != 0 {
            self.flush_reserved_slow();
        }
    }

    #[cold]
    fn flush_reserved_slow(&mut self) {
        let range = self.entities.flush_reserved();
        for index in range {
            let entity = self.entities.entity_at(index).expect("just flushed");
            self.place_empty(entity);
        }
    }

    /// Registers a component type described at runtime (or a Rust type under a
    /// stable name). Names must be unique.
    pub fn register_component(
        &mut self,
        descriptor: ComponentDescriptor,
    ) -> Result<ComponentId, RegisterError> {
        self.components.register_descriptor(descriptor)
    }

    /// The id of Rust type `T`, registering it on first use.
    pub fn component_id<T: Component>(&mut self) -> ComponentId {
        self.components.register::<T>()
    }

    /// Where `entity`'s row is, or why it has none.
    #[inline]
    pub fn location(&self, entity: Entity) -> Result<Location, EntityError> {
        if self.shared_ids {
            return self.shared_location(entity);
        }
        if !self.entities.alive(entity) {
            return Err(EntityError::NoSuchEntity(entity));
        }
        self.locations
            .get(entity)
            .ok_or(EntityError::NoSuchEntity(entity))
    }

    /// Location check without an allocator: the row must hold this exact
    /// entity (generation included), which the universe keeps true by removing
    /// every dead entity from every world.
    #[cold]
    fn shared_location(&self, entity: Entity) -> Result<Location, EntityError> {
        let location = self
            .locations
            .get(entity)
            .ok_or(EntityError::NoSuchEntity(entity))?;
        let stored = self
            .archetypes
            .get(location.archetype)
            .entity_at(location.chunk, location.row);
        if stored == entity {
            Ok(location)
        } else {
            Err(EntityError::NoSuchEntity(entity))
        }
    }

    fn bundle_slot<B: Bundle>(&mut self) -> &BundleSlot {
        let key = TypeId::of::<B>();
        if !self.bundles.contains_key(&key) {
            self.register_bundle::<B>();
        }
        &self.bundles[&key]
    }

    #[cold]
    fn register_bundle<B: Bundle>(&mut self) {
        let info = BundleInfo::new::<B>(&mut self.components);
        let archetype = self
            .archetypes
            .get_or_create(&info.sorted, &self.components);
        let arch = self.archetypes.get(archetype);
        let mut columns = [ColumnIndex(0); MAX_BUNDLE_FIELDS];
        for (slot, &c) in columns.iter_mut().zip(info.ids.iter()) {
            *slot = arch.column_of(c).expect("bundle archetype has every field");
        }
        self.bundles.insert(
            TypeId::of::<B>(),
            BundleSlot {
                info,
                archetype,
                columns,
            },
        );
    }

    /// Spawns an entity with the components of `bundle`.
    ///
    /// ```
    /// let mut world = doecs::World::new();
    /// let e = world.spawn((1u32, "name"));
    /// assert_eq!(world.get::<u32>(e), Ok(&1));
    /// ```
    pub fn spawn<B: Bundle>(&mut self, bundle: B) -> Entity {
        self.flush_reserved();
        let entity = self.entities.alloc();
        let slot = self.bundle_slot::<B>();
        let (archetype, columns) = (slot.archetype, slot.columns);
        self.write_new_row(entity, bundle, archetype, &columns[..B::FIELD_COUNT]);
        entity
    }

    /// Appends a row for `entity` in `archetype` holding `bundle`, whose field
    /// i goes to `columns[i]`, and records the location.
    fn write_new_row<B: Bundle>(
        &mut self,
        entity: Entity,
        bundle: B,
        archetype: ArchetypeId,
        columns: &[ColumnIndex],
    ) {
        let arch = self.archetypes.get_mut(archetype);
        debug_assert_eq!(arch.components().len(), columns.len());
        // SAFETY: the bundle's fields cover every column of this archetype (it is
        // the bundle's own archetype), and we write them all just below.
        let (chunk, row) = unsafe { arch.push_uninit(entity) };
        let mut bases = [std::ptr::null_mut::<u8>(); MAX_BUNDLE_FIELDS];
        for (base, &col) in bases.iter_mut().zip(columns) {
            *base = arch.column_ptr(chunk.index(), col).as_ptr();
        }
        // SAFETY: `bases[i]` is the column of field i's type (bundle slot
        // invariant) and `row` is the freshly pushed, uninitialised row.
        unsafe { bundle.write_row(&bases[..columns.len()], row.index()) };
        self.locations.set(
            entity,
            Location {
                archetype,
                chunk,
                row,
            },
        );
    }

    /// Puts a freshly allocated entity into the empty archetype.
    pub(super) fn place_empty(&mut self, entity: Entity) {
        let arch = self.archetypes.get_mut(ArchetypeId::EMPTY);
        // SAFETY: the empty archetype has no columns to initialise.
        let (chunk, row) = unsafe { arch.push_uninit(entity) };
        self.locations.set(
            entity,
            Location {
                archetype: ArchetypeId::EMPTY,
                chunk,
                row,
            },
        );
    }

    /// Despawns `entity`, dropping its components and telling callback managers.
    pub fn despawn(&mut self, entity: Entity) -> Result<(), EntityError> {
        let location = self.location(entity)?;
        self.entities.free(entity);
        let notify = NotifyManagers::new(&mut self.managers, &mut self.despawned);
        notify.destroyed.push(entity);
        Self::remove_row_and_drop(&mut self.archetypes, &mut self.locations, entity, location);
        Ok(())
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
        let notify = NotifyManagers::new(&mut self.managers, &mut self.despawned);
        for (k, &entity) in entities.iter().enumerate() {
            let location = match self.locations.get(entity) {
                Some(location) if self.entities.alive(entity) => location,
                _ => {
                    on_dead(k, entity);
                    continue;
                }
            };
            self.entities.free(entity);
            notify.destroyed.push(entity);
            Self::remove_row_and_drop(&mut self.archetypes, &mut self.locations, entity, location);
        }
        notify.destroyed.len()
    }

    /// Removes entities that died in a shared id space: drops their rows (if
    /// they had any here) and tells callback managers about all of them.
    pub(crate) fn forget_destroyed(&mut self, destroyed: &[Entity]) {
        let notify = NotifyManagers::new(&mut self.managers, &mut self.despawned);
        notify.destroyed.extend_from_slice(destroyed);
        for &entity in destroyed {
            let Some(location) = self.locations.get(entity) else {
                continue;
            };
            let stored = self
                .archetypes
                .get(location.archetype)
                .entity_at(location.chunk, location.row);
            if stored == entity {
                Self::remove_row_and_drop(
                    &mut self.archetypes,
                    &mut self.locations,
                    entity,
                    location,
                );
            }
        }
    }

    /// Bytes of chunk memory held by all archetypes, including chunks emptied
    /// by despawns and kept for reuse.
    pub fn chunk_memory_bytes(&self) -> usize {
        self.archetypes.iter().map(|a| a.chunk_memory_bytes()).sum()
    }

    /// Returns unused chunk memory to the allocator and reports how many bytes.
    ///
    /// Chunks emptied by despawns and moves stay with their archetype so that
    /// respawning never allocates; after a large despawn that will not be
    /// followed by a respawn, this frees every block of chunks none of which
    /// is in use.
    ///
    /// ```
    /// let mut world = doecs::World::new();
    /// let es = world.spawn_batch((0..10_000u32).map(|i| (i, i as f32)));
    /// world.despawn_batch(&es);
    /// assert!(world.chunk_memory_bytes() > 0, "kept for reuse");
    /// let freed = world.free_unused_chunk_memory();
    /// assert!(freed > 0);
    /// assert_eq!(world.chunk_memory_bytes(), 0);
    /// ```
    pub fn free_unused_chunk_memory(&mut self) -> usize {
        self.archetypes
            .iter_mut()
            .map(|a| a.free_unused_chunk_memory())
            .sum()
    }

    /// Despawns every entity.
    pub fn clear(&mut self) {
        let all: Vec<Entity> = self
            .archetypes
            .iter()
            .flat_map(|a| {
                (0..a.chunk_count()).flat_map(move |c| a.chunk_entities(c).iter().copied())
            })
            .collect();
        self.despawn_batch(&all);
    }

    fn remove_row_and_drop(
        archetypes: &mut Archetypes,
        locations: &mut EntityLocations,
        entity: Entity,
        location: Location,
    ) {
        locations.clear(entity);
        let arch = archetypes.get_mut(location.archetype);
        // SAFETY: `location` is the live row of `entity` (entity index invariant).
        unsafe {
            arch.swap_remove_drop(location.chunk, location.row, |moved| {
                if let Some(moved) = moved {
                    locations.set(moved, location);
                }
            })
        };
    }

    /// A shared reference to `entity`'s `T`.
    #[inline]
    pub fn get<T: Component>(&self, entity: Entity) -> Result<&T, EntityError> {
        let ptr = self.component_ptr::<T>(entity)?;
        // SAFETY: the slot holds an initialised `T`; `&self` prevents mutation.
        Ok(unsafe { &*ptr })
    }

    /// A mutable reference to `entity`'s `T`.
    #[inline]
    pub fn get_mut<T: Component>(&mut self, entity: Entity) -> Result<&mut T, EntityError> {
        let ptr = self.component_ptr::<T>(entity)?;
        // SAFETY: the slot holds an initialised `T`; `&mut self` makes this the only access.
        Ok(unsafe { &mut *ptr })
    }

    #[inline]
    pub(crate) fn component_ptr<T: Component>(
        &self,
        entity: Entity,
    ) -> Result<*mut T, EntityError> {
        let location = self.location(entity)?;
        let missing = EntityError::MissingComponent {
            entity,
            component: std::any::type_name::<T>(),
        };
        let id = self.components.id_of::<T>().ok_or(missing)?;
        let arch = self.archetypes.get(location.archetype);
        let column = arch.column_of(id).ok_or(missing)?;
        Ok(arch
            .slot_ptr(location.chunk, location.row, column)
            .cast::<T>()
            .as_ptr())
    }

    /// Adds a component manager. With [`DestroyNotice::Callback`] it hears of
    /// every despawn; with [`DestroyNotice::LazyGc`] it is swept by
    /// [`World::collect_garbage`]. Replaces and returns a manager of the same type.
    pub fn add_manager<M: ComponentManager>(
        &mut self,
        manager: M,
        notice: DestroyNotice,
    ) -> Option<M> {
        self.managers.add(manager, notice)
    }

    /// The manager of type `M`.
    pub fn manager<M: ComponentManager>(&self) -> Option<&M> {
        self.managers.get()
    }

    /// The manager of type `M`, mutably.
    pub fn manager_mut<M: ComponentManager>(&mut self) -> Option<&mut M> {
        self.managers.get_mut()
    }

    /// Removes and returns the manager of type `M`.
    pub fn remove_manager<M: ComponentManager>(&mut self) -> Option<M> {
        self.managers.remove()
    }

    /// Runs lazy garbage collection on every `LazyGc` manager; returns how many
    /// instances were destroyed.
    pub fn collect_garbage(&mut self) -> usize {
        self.managers.collect_garbage(&self.entities)
    }

    /// Lazy collection against another allocator (a universe's).
    pub(crate) fn collect_garbage_with(&mut self, entities: &Entities) -> usize {
        self.managers.collect_garbage(entities)
    }

    /// Stores a resource (a world-level singleton), returning the old one.
    pub fn insert_resource<R: Send + Sync + 'static>(&mut self, value: R) -> Option<R> {
        self.resources.insert(value)
    }

    /// The resource of type `R`.
    pub fn resource<R: Send + Sync + 'static>(&self) -> Option<&R> {
        self.resources.get()
    }

    /// The resource of type `R`, mutably.
    pub fn resource_mut<R: Send + Sync + 'static>(&mut self) -> Option<&mut R> {
        self.resources.get_mut()
    }

    /// Removes and returns the resource of type `R`.
    pub fn remove_resource<R: Send + Sync + 'static>(&mut self) -> Option<R> {
        self.resources.remove()
    }

    /// The resources map.
    pub fn resources(&self) -> &Resources {
        &self.resources
    }

    /// Test hook: gives the live `entity` generation `generation` everywhere the
    /// world records it (allocator and row), so generation wrap-around can be
    /// tested without four billion despawns. Returns the renamed handle, or
    /// `None` if `entity` is not alive (or ids are shared with a universe).
    #[doc(hidden)]
    pub fn debug_set_generation(&mut self, entity: Entity, generation: u32) -> Option<Entity> {
        if self.shared_ids {
            return None;
        }
        let location = self.location(entity).ok()?;
        let renamed = self.entities.debug_set_generation(entity, generation)?;
        let arch = self.archetypes.get_mut(location.archetype);
        // SAFETY: `location` is `entity`'s live row, so its entity slot is in
        // bounds and initialised; `&mut self` makes the write exclusive.
        unsafe {
            arch.entities_ptr(location.chunk.index())
                .as_ptr()
                .add(location.row.index())
                .write(renamed)
        };
        self.locations.set(renamed, location);
        Some(renamed)
    }

    /// Verifies every invariant: allocator, archetypes and graph, and that the
    /// entity index and the rows agree both ways. Panics on failure. Meant for
    /// tests and debugging; it walks the whole world.
    pub fn check_invariants(&self) {
        self.entities.check_invariants();
        self.archetypes.check_invariants();
        let mut rows = 0usize;
        for arch in self.archetypes.iter() {
            for c in 0..arch.chunk_count() {
                for (r, &e) in arch.chunk_entities(c).iter().enumerate() {
                    assert!(
                        self.shared_ids || self.entities.alive(e),
                        "dead entity {e} stored in {:?}",
                        arch.id()
                    );
                    let loc = self.locations.get(e).expect("stored entity has a location");
                    assert_eq!(
                        (loc.archetype, loc.chunk.index(), loc.row.index()),
                        (arch.id(), c, r),
                        "entity index disagrees with storage for {e}"
                    );
                    rows += 1;
                }
            }
        }
        let located = self.locations.iter().count();
        assert_eq!(located, rows, "every located entity has exactly one row");
        if !self.shared_ids {
            assert_eq!(rows, self.entities.len(), "every live entity has a row");
        }
    }
}

/// Collects destroyed entities and tells callback managers about them when
/// dropped, so they hear of every despawn even if a component's `Drop` panicked.
struct NotifyManagers<'a> {
    managers: &'a mut Managers,
    destroyed: &'a mut Vec<Entity>,
}

impl<'a> NotifyManagers<'a> {
    fn new(managers: &'a mut Managers, scratch: &'a mut Vec<Entity>) -> Self {
        scratch.clear();
        NotifyManagers {
            managers,
            destroyed: scratch,
        }
    }
}

impl Drop for NotifyManagers<'_> {
    fn drop(&mut self) {
        self.managers.notify_destroyed(self.destroyed);
    }
}
