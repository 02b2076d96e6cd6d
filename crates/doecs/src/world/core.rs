//! The world's core: everything a world holds except its entity allocator.
//!
//! A [`WorldCore`] owns the component registry, the bundle registry, the
//! archetypes and the entity table (entity → archetype and row, see
//! [`crate::entities`]), plus the managers and resources. It never creates or
//! destroys entity ids and offers no way to reach its table: a
//! [`World`](super::World) is a core whose table also allocates ids, and a
//! [`Universe`](crate::Universe) pairs one allocating table with several
//! cores whose tables are only indices. So a world that shares its ids cannot
//! allocate any by mistake, and the question "is this entity here?" has one
//! answer in every kind of world: the table, which records the exact
//! generation of each row's entity ([`WorldCore::contains_entity`]).
//!
//! Queries, systems and the typed and untyped component API all work on a
//! `WorldCore`; a `World` dereferences to its core, so they work on a `World`
//! too.

use crate::bundle::Bundles;
use crate::component::{Component, ComponentDescriptor, ComponentId, Components, RegisterError};
use crate::entities::Entities;
use crate::entity::Entity;
use crate::error::EntityError;
use crate::location::Location;
use crate::manager::{ComponentManager, DestroyNotice, Managers};
use crate::relation::ChildOf;
use crate::resource::Resources;
use crate::storage::Archetypes;
use std::sync::atomic::{AtomicU64, Ordering};

use super::WorldConfig;

/// Identifies a world, so per-world state (query caches, a system's last
/// run) kept outside it is never used on another.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct WorldId(u64);

static NEXT_WORLD_ID: AtomicU64 = AtomicU64::new(0);

/// How to turn over one event type's buffers, keyed by `Events<T>`'s type.
pub(crate) type EventUpdater = (std::any::TypeId, fn(&mut WorldCore));

/// Entities' components, managers and resources, without an id allocator.
/// See the module docs.
pub struct WorldCore {
    id: WorldId,
    /// Held only here: state kept about this world elsewhere holds a weak
    /// handle, and sees the world is gone when this is dropped (see
    /// `per_world`).
    lifeline: std::sync::Arc<()>,
    config: WorldConfig,
    /// The entity table: in a `World` the allocator and the index, in a
    /// universe's world only the index.
    pub(crate) entities: Entities,
    pub(crate) components: Components,
    pub(crate) bundles: Bundles,
    pub(crate) archetypes: Archetypes,
    pub(crate) managers: Managers,
    resources: Resources,
    /// Scratch for batch despawns, kept to avoid reallocating.
    pub(crate) despawned: Vec<Entity>,
    /// The change clock and pending row-stamp requests.
    pub(crate) tracking: super::tracking::Tracking,
    /// Component hooks and the commands they recorded.
    pub(crate) hooks: super::hooks::Hooks,
    /// Removal logs.
    pub(crate) removals: super::removals::Removals,
    /// How to turn over each event type added (see [`crate::event`]),
    /// keyed by the type of its `Events<T>` resource.
    pub(crate) event_updaters: Vec<EventUpdater>,
    /// Relationship pairs, beside the archetypes (see [`crate::relation`]).
    pub(crate) relations: crate::relation::Relations,
    /// The values of sparse components (see `world::sparse`).
    pub(crate) sparse: super::sparse::SparseSets,
    /// The tags queries leave out unless they name them.
    pub(crate) hidden: crate::tags::HiddenTags,
    /// How many operations under way check the world once at their end,
    /// for all the operations they are made of (see `sanitize`).
    #[cfg(feature = "sanitize")]
    pub(crate) checks_held: u32,
}

impl std::fmt::Debug for WorldCore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WorldCore")
            .field("entities", &self.len())
            .field("archetypes", &self.archetypes.len())
            .field("components", &self.components.len())
            .field("managers", &self.managers)
            .finish()
    }
}

impl WorldCore {
    /// An empty core with the given settings.
    pub(crate) fn new(config: WorldConfig) -> Self {
        let components = Components::default();
        WorldCore {
            id: WorldId(NEXT_WORLD_ID.fetch_add(1, Ordering::Relaxed)),
            lifeline: std::sync::Arc::new(()),
            config,
            entities: Entities::with_min_free_indices(config.min_free_indices),
            archetypes: Archetypes::new(config.chunk_bytes, &components),
            components,
            bundles: Bundles::default(),
            managers: Managers::default(),
            resources: Resources::default(),
            hidden: Default::default(),
            despawned: Vec::new(),
            tracking: Default::default(),
            hooks: Default::default(),
            removals: Default::default(),
            event_updaters: Vec::new(),
            relations: Default::default(),
            sparse: Default::default(),
            #[cfg(feature = "sanitize")]
            checks_held: 0,
        }
    }

    /// This world's id.
    #[inline]
    pub fn id(&self) -> WorldId {
        self.id
    }

    /// A weak handle that dies with this world.
    pub(crate) fn lifeline(&self) -> std::sync::Weak<()> {
        std::sync::Arc::downgrade(&self.lifeline)
    }

    /// The settings this world was created with.
    pub fn config(&self) -> WorldConfig {
        self.config
    }

    /// The component registry.
    pub fn components(&self) -> &Components {
        &self.components
    }

    /// The bundle registry.
    pub(crate) fn bundles(&self) -> &Bundles {
        &self.bundles
    }

    /// The archetypes.
    pub(crate) fn archetypes(&self) -> &Archetypes {
        &self.archetypes
    }

    /// Number of entities with a row in this world.
    #[inline]
    pub fn len(&self) -> usize {
        self.entities.located_count()
    }

    /// Whether no entity has a row in this world.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether exactly `entity` (generation included) is in this world: one
    /// load and one compare. In a [`World`](super::World) this is the same as
    /// being alive; in a world of a [`Universe`](crate::Universe) it says
    /// whether the entity has entered this world.
    #[inline]
    pub fn contains_entity(&self, entity: Entity) -> bool {
        self.entities.location(entity).is_some()
    }

    /// Whether `entity` is here and has component `T`.
    pub fn contains<T: Component>(&self, entity: Entity) -> bool {
        self.get::<T>(entity).is_ok()
    }

    /// Where `entity`'s row is, or why it has none.
    #[inline]
    pub(crate) fn location(&self, entity: Entity) -> Result<Location, EntityError> {
        self.entities
            .location(entity)
            .ok_or(EntityError::NoSuchEntity(entity))
    }

    /// Every entity in this world, in archetype and row order.
    pub fn iter_entities(&self) -> impl Iterator<Item = Entity> + '_ {
        self.archetypes
            .iter()
            .flat_map(|a| a.entities().iter().copied())
    }

    /// Registers a component type described at runtime (or a Rust type under a
    /// stable name). Names must be unique. A descriptor made with
    /// [`ComponentDescriptor::sparse`] registers a sparse component (see
    /// [`WorldCore::register_sparse`]).
    pub fn register_component(
        &mut self,
        descriptor: ComponentDescriptor,
    ) -> Result<ComponentId, RegisterError> {
        self.register_described(descriptor)
    }

    /// The id of Rust type `T`, registering it on first use.
    pub fn component_id<T: Component>(&mut self) -> ComponentId {
        self.components.register::<T>()
    }

    /// A shared reference to `entity`'s `T`.
    #[inline]
    pub fn get<T: Component>(&self, entity: Entity) -> Result<&T, EntityError> {
        let ptr = self.component_ptr::<T>(entity)?;
        // SAFETY: the slot holds an initialised `T`; `&self` prevents mutation.
        Ok(unsafe { &*ptr })
    }

    /// A mutable reference to `entity`'s `T`. Marks it changed.
    ///
    /// # Errors
    /// [`EntityError::NoSuchEntity`], [`EntityError::MissingComponent`],
    /// [`EntityError::Inherited`] for a `T` only inherited from a prefab,
    /// and [`EntityError::Immutable`] for a `T` registered immutable
    /// ([`WorldCore::register_immutable`]); the world is unchanged then.
    #[inline]
    pub fn get_mut<T: Component>(&mut self, entity: Entity) -> Result<&mut T, EntityError> {
        let slot = self.write_slot::<T>(entity)?;
        let tick = self.write_tick();
        // SAFETY: just found, and `&mut self` gives write access to it.
        let ptr = unsafe { self.stamp_write_slot(slot, tick) };
        // SAFETY: the slot holds an initialised `T`; `&mut self` makes this the only access.
        Ok(unsafe { &mut *ptr.cast::<T>() })
    }

    /// Pointer to `entity`'s `T`, valid until the next structural change.
    #[inline]
    pub(crate) fn component_ptr<T: Component>(
        &self,
        entity: Entity,
    ) -> Result<*mut T, EntityError> {
        // The short path: one entity-table load, one type lookup (a
        // direct-mapped cache compare), one column lookup.
        let Some(id) = self.components.id_of::<T>() else {
            return self.component_ptr_elsewhere::<T>(entity);
        };
        let Some((archetype, row)) = self.entities.locate(entity) else {
            return self.component_ptr_elsewhere::<T>(entity);
        };
        // SAFETY: a located entity's archetype index is an archetype's
        // and its row is live (world invariant); `T`'s id names a column of `T`s.
        let own = unsafe {
            self.archetypes
                .get_unchecked(archetype)
                .typed_slot_ptr_unchecked::<T>(id, crate::storage::Row(row as u32))
        };
        match own {
            Some(slot) => Ok(slot.as_ptr()),
            None => self.component_ptr_elsewhere::<T>(entity),
        }
    }

    /// [`WorldCore::component_ptr`] for what is not in the entity's row:
    /// its sparse `T`, the `T` it inherits, or why it has none.
    #[cold]
    #[inline(never)]
    fn component_ptr_elsewhere<T: Component>(&self, entity: Entity) -> Result<*mut T, EntityError> {
        self.location(entity)?;
        match self.sparse_ptr::<T>(entity) {
            Some(slot) => Ok(slot.cast::<T>().as_ptr()),
            None => self.inherited_ptr::<T>(entity),
        }
    }

    /// Pointer to the `T` `entity` inherits through `IsA` (see
    /// [`crate::world::prefab`]), for reads only.
    #[cold]
    #[inline(never)]
    fn inherited_ptr<T: Component>(&self, entity: Entity) -> Result<*mut T, EntityError> {
        let missing = EntityError::MissingComponent {
            entity,
            component: std::any::type_name::<T>(),
        };
        let prefab = self.inherited_from::<T>(entity).ok_or(missing)?;
        let location = self.location(prefab)?;
        let arch = self.archetypes.get(location.archetype);
        let id = self.components.id_of::<T>().ok_or(missing)?;
        arch.component_slot_ptr(id, location.row)
            .or_else(|| self.sparse_slot_ptr(id, prefab))
            .map(|slot| slot.cast::<T>().as_ptr())
            .ok_or(missing)
    }

    /// Where `entity`'s `T` is, for a write: its column and the entity's
    /// location. A `T` registered immutable is refused
    /// ([`EntityError::Immutable`]): every path that writes a value in
    /// place finds it here.
    #[inline]
    pub(crate) fn component_column<T: Component>(
        &self,
        entity: Entity,
    ) -> Result<(crate::storage::ColumnIndex, Location), EntityError> {
        let location = self.location(entity)?;
        let missing = EntityError::MissingComponent {
            entity,
            component: std::any::type_name::<T>(),
        };
        let arch = self.archetypes.get(location.archetype);
        let column = self
            .components
            .id_of::<T>()
            .and_then(|id| Some((id, arch.column_of(id)?)));
        match column {
            Some((id, _)) if self.components.info(id).is_immutable() => {
                Err(EntityError::Immutable(std::any::type_name::<T>()))
            }
            Some((_, column)) => Ok((column, location)),
            // Inherited values are shared with the prefab: never written
            // through an instance.
            None => Err(match self.inherited_from::<T>(entity) {
                Some(prefab) => EntityError::Inherited {
                    entity,
                    component: std::any::type_name::<T>(),
                    prefab,
                },
                None => missing,
            }),
        }
    }

    /// The slot at `location` in `column`, stamped as changed at `tick`, for
    /// a write.
    ///
    /// # Safety
    /// `location` must be live and `column` one of its archetype's; the
    /// caller must hold write access to that slot (and `tick` be its write
    /// tick).
    #[inline]
    pub(crate) unsafe fn stamped_ptr(
        &self,
        column: crate::storage::ColumnIndex,
        location: Location,
        tick: crate::tick::Tick,
    ) -> *mut u8 {
        let arch = self.archetypes.get(location.archetype);
        // SAFETY: forwarded contract.
        unsafe {
            arch.column_ticks(column)
                .stamp_changed(location.row.index(), 1, tick)
        };
        // SAFETY: `location` is live (caller), so its row is below the
        // capacity.
        unsafe { arch.slot_ptr_unchecked(location.row, column) }.as_ptr()
    }

    /// Adds a component manager. With [`DestroyNotice::Callback`] it hears of
    /// every despawn; with [`DestroyNotice::LazyGc`] it is swept by
    /// `collect_garbage`. Replaces and returns a manager of the same type.
    /// The manager is handed the world's `ChildOf` hierarchy first
    /// ([`ComponentManager::follow_hierarchy`]).
    pub fn add_manager<M: ComponentManager>(
        &mut self,
        mut manager: M,
        notice: DestroyNotice,
    ) -> Option<M> {
        manager.follow_hierarchy(self.hierarchy());
        self.managers.add(manager, notice)
    }

    /// The manager of type `M`, mutably, beside the `ChildOf` hierarchy it
    /// follows: what a manager needs to create instances for entities that
    /// may already have a parent or children.
    pub(crate) fn manager_and_hierarchy_mut<M: ComponentManager>(
        &mut self,
    ) -> Option<(&mut M, crate::relation::Hierarchy<'_>)> {
        let hierarchy = crate::relation::Hierarchy::new(self.relations.table::<ChildOf>());
        Some((self.managers.get_mut()?, hierarchy))
    }

    /// The manager of type `M`.
    pub fn manager<M: ComponentManager>(&self) -> Option<&M> {
        self.managers.get()
    }

    /// Every manager of this world.
    pub fn managers(&self) -> &Managers {
        &self.managers
    }

    /// The manager of type `M`, mutably.
    pub fn manager_mut<M: ComponentManager>(&mut self) -> Option<&mut M> {
        self.managers.get_mut()
    }

    /// Removes and returns the manager of type `M`.
    pub fn remove_manager<M: ComponentManager>(&mut self) -> Option<M> {
        self.managers.remove()
    }

    /// Stores a resource (a world-level singleton), returning the old one.
    /// It is marked changed now, and added now if it is new (see
    /// [`Res::is_changed`](crate::Res::is_changed)).
    pub fn insert_resource<R: Send + Sync + 'static>(&mut self, value: R) -> Option<R> {
        let tick = self.change_tick();
        self.resources.insert(value, tick)
    }

    /// The resource of type `R`, inserting `R::default()` first if there is
    /// none.
    pub fn init_resource<R: Default + Send + Sync + 'static>(&mut self) -> &mut R {
        if !self.resources.contains::<R>() {
            self.insert_resource(R::default());
        }
        let tick = self.change_tick();
        self.resources.get_mut(tick).expect("inserted above")
    }

    /// The resource of type `R`.
    pub fn resource<R: Send + Sync + 'static>(&self) -> Option<&R> {
        self.resources.get()
    }

    /// The resource of type `R`, mutably. Asking marks it changed now,
    /// whether or not it is then written.
    pub fn resource_mut<R: Send + Sync + 'static>(&mut self) -> Option<&mut R> {
        let tick = self.change_tick();
        self.resources.get_mut(tick)
    }

    /// Removes and returns the resource of type `R`.
    pub fn remove_resource<R: Send + Sync + 'static>(&mut self) -> Option<R> {
        self.resources.remove()
    }

    /// The resources map.
    pub fn resources(&self) -> &Resources {
        &self.resources
    }

    /// The resources map, mutably (restores set ticks through it).
    pub(crate) fn resources_mut(&mut self) -> &mut Resources {
        &mut self.resources
    }

    /// Bytes of column memory held by all archetypes, including room kept
    /// for rows that despawns emptied.
    pub fn chunk_memory_bytes(&self) -> usize {
        self.archetypes.iter().map(|a| a.memory_bytes()).sum()
    }

    /// Returns unused column memory to the allocator and reports how many bytes.
    ///
    /// Room emptied by despawns and moves stays with its archetype so that
    /// respawning never allocates; after a large despawn that will not be
    /// followed by a respawn, this shrinks every archetype's columns to the
    /// rows in use.
    ///
    /// ```
    /// let mut world = doecs::World::new();
    /// let es = world.spawn_batch((0..100u32).map(|i| (i, i as f32)));
    /// world.despawn_batch(&es);
    /// assert!(world.chunk_memory_bytes() > 0, "kept for reuse");
    /// let freed = world.free_unused_chunk_memory();
    /// assert!(freed > 0);
    /// assert_eq!(world.chunk_memory_bytes(), 0);
    /// ```
    pub fn free_unused_chunk_memory(&mut self) -> usize {
        let freed = self.archetypes.iter_mut().map(|a| a.shrink_to_fit()).sum();
        self.sanitize();
        freed
    }

    /// Verifies the storage invariants: the archetypes and their graph, and
    /// that the entity table and the rows agree both ways. Panics on failure.
    /// Meant for tests and debugging; it walks the whole world.
    pub(crate) fn check_storage_invariants(&self) {
        self.archetypes.check_invariants();
        self.relations
            .check_invariants(&|e| self.entities.location(e).is_some());
        self.sparse.check_invariants();
        for set in self.sparse.iter() {
            for &e in set.entities() {
                assert!(
                    self.entities.location(e).is_some(),
                    "entity {e} in the sparse set of {:?} has no row",
                    set.component()
                );
            }
        }
        let mut rows = 0usize;
        for arch in self.archetypes.iter() {
            for (r, &e) in arch.entities().iter().enumerate() {
                let loc = self
                    .entities
                    .location(e)
                    .unwrap_or_else(|| panic!("stored entity {e} has a location"));
                assert_eq!(
                    (loc.archetype, loc.row.index()),
                    (arch.id(), r),
                    "entity index disagrees with storage for {e}"
                );
                rows += 1;
            }
        }
        assert_eq!(
            self.entities.iter_located().count(),
            rows,
            "every located entity has exactly one row"
        );
        assert_eq!(
            self.entities.located_count(),
            rows,
            "the table counts its rows"
        );
    }
}
