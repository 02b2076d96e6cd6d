//! The raw layer: the untyped, unchecked and batch entry points that the
//! other doecs crates build on, and the storage types they read.
//!
//! A game needs none of this: [`World`] and the crate root are the API.
//! This module is for code that moves many rows at once or works below the
//! types: the resource spawner (levels spawned one `memcpy` per column,
//! parented in the same operation), the save loader (a world rebuilt from
//! saved ids), component managers that follow the hierarchy (the transform
//! manager), and tools that read archetypes and chunks (the inspector).
//!
//! Each function states its contract. The `unsafe` ones move untyped bytes
//! into the world; their `# Safety` section says what the caller proves.
//! The safe ones are sound for every argument, and refuse bad input with a
//! typed error, leaving the world as it was.
//!
//! The storage types re-exported here (archetypes, columns, chunk
//! shapes, change-tick columns) are read-only views for tools and
//! benchmarks; their own docs state each layer's aliasing rule.

pub use crate::bundle::{BundleId, BundleInfo, Bundles, MAX_BUNDLE_FIELDS};
pub use crate::component::name_hash;
pub use crate::dyn_value::{DynValue, KeyValue};
pub use crate::entities::{Entities, EntityTableImage, ImageError, SlotState};
pub use crate::location::Location;
pub use crate::manager::Managers;

pub use crate::relation::{ParentedBatch, ParentsFirst};
pub use crate::resource::{ResourceMut, Resources};
pub use crate::storage::{
    Archetype, ArchetypeId, Archetypes, ChunkShape, ChunkTicks, ColumnIndex, LayoutStamp, Row,
    TickPtrs, DEFAULT_CHUNK_BYTES,
};
pub use crate::system::{short_type_name, system_name, QueryParamState, SystemRun};
pub use crate::type_index::{TypeIdHasher, TypeIdMap};

use crate::component::ComponentId;
use crate::entity::Entity;
use crate::error::EntityError;
use crate::manager::ComponentManager;
use crate::relation::Relation;
use crate::relation::{Hierarchy, RelationError};
use crate::tick::Tick;
use crate::world::{World, WorldConfig, WorldCore};
use std::ptr::NonNull;

/// Spawns `count` entities whose components are `ids` (any order, no
/// duplicates), copying each component's values from `sources[i]`, which
/// holds `count` packed values of component `ids[i]`. One `memcpy` per
/// column; hooks fire, and their commands are applied before it returns.
/// Returns the new entities in order.
///
/// ```
/// let mut world = doecs::World::new();
/// let x = world.component_id::<u32>();
/// let values = [1u32, 2, 3];
/// // SAFETY: `values` holds three `u32`s, which need no drop.
/// let es = unsafe { doecs::raw::spawn_columns(&mut world, &[x], 3, &[values.as_ptr().cast()]) }
///     .unwrap();
/// assert_eq!(world.get::<u32>(es[2]), Ok(&3));
/// ```
///
/// # Errors
/// [`EntityError`] when `ids` is not a valid set (unknown or repeated);
/// the world is unchanged.
///
/// # Panics
/// If `ids` and `sources` differ in length, before anything changes.
///
/// # Safety
/// Each `sources[i]` must point to `count` valid, initialised values of
/// component `ids[i]` laid out at its size (no alignment needed), which the
/// world takes ownership of: the caller must not drop or use them again.
pub unsafe fn spawn_columns(
    world: &mut World,
    ids: &[ComponentId],
    count: usize,
    sources: &[*const u8],
) -> Result<Vec<Entity>, EntityError> {
    // SAFETY: the caller's contract is this function's.
    unsafe { world.spawn_columns_raw(ids, count, sources) }
}

/// [`spawn_columns`] with the new entities parented in the same operation:
/// entity `k` becomes `ChildOf` entity `p` of the batch for each
/// `parents[k] == Some(p)`, `count` being `parents.len()`. The entities are
/// fresh and the indices come first by their type, so no check of
/// [`parent_batch`] is needed; the commands that hooks record while the
/// components arrive are applied once the parents are set too. What level
/// spawning uses.
///
/// ```
/// use doecs::raw::ParentsFirst;
/// let mut world = doecs::World::new();
/// let x = world.component_id::<u32>();
/// let values = [1u32, 2, 3];
/// let parents = ParentsFirst::new(vec![None, Some(0), Some(0)]).unwrap();
/// // SAFETY: `values` holds three `u32`s, which need no drop.
/// let batch = unsafe {
///     doecs::raw::spawn_columns_parented(&mut world, &[x], &[values.as_ptr().cast()], parents)
/// }
/// .unwrap();
/// assert_eq!(batch.index_run(), Some(0..3));
/// assert_eq!(world.parent(batch.children()[1]), Some(batch.children()[0]));
/// ```
///
/// # Errors
/// As [`spawn_columns`]; the world is unchanged.
///
/// # Safety
/// As [`spawn_columns`] with `count == parents.len()`.
pub unsafe fn spawn_columns_parented(
    world: &mut World,
    ids: &[ComponentId],
    sources: &[*const u8],
    parents: ParentsFirst,
) -> Result<ParentedBatch, EntityError> {
    // SAFETY: the caller's contract is this function's.
    unsafe { world.spawn_columns_raw_parented(ids, sources, parents) }
}

/// The safe form of [`spawn_columns`] for plain-bytes components (runtime
/// components without a drop function): `sources[i]` must hold exactly
/// `count` values of `ids[i]`, else the call is refused with
/// [`EntityError::WrongSize`] (or [`EntityError::NotPlainBytes`]), changing
/// nothing.
///
/// # Panics
/// If `ids` and `sources` differ in length, before anything changes.
pub fn spawn_columns_bytes(
    world: &mut World,
    ids: &[ComponentId],
    count: usize,
    sources: &[&[u8]],
) -> Result<Vec<Entity>, EntityError> {
    world.spawn_columns_bytes(ids, count, sources)
}

/// Adds (or replaces) component `id` on `entity`, moving the value from
/// `value`, then applies what hooks recorded. A replaced value is dropped.
///
/// # Errors
/// [`EntityError`] for a dead entity or an unknown id; the world is
/// unchanged and `value` still belongs to the caller.
///
/// # Safety
/// `value` must point to a valid, initialised value of component `id`
/// (any alignment), which the world takes ownership of on `Ok`.
pub unsafe fn insert(
    world: &mut World,
    entity: Entity,
    id: ComponentId,
    value: *const u8,
) -> Result<(), EntityError> {
    // SAFETY: the caller's contract is this function's.
    unsafe { world.insert_raw(entity, id, value) }
}

/// An empty world (settings from `config`, except the reuse threshold,
/// which comes from the image) whose entity table holds `image`'s ids,
/// every live one alive without a row until [`place_columns`] gives it
/// one: the first step of loading a save.
///
/// # Errors
/// [`ImageError`] for an image that is not a consistent entity table.
pub fn world_from_entity_image(
    image: &EntityTableImage,
    config: WorldConfig,
) -> Result<World, ImageError> {
    World::from_entity_image(image, config)
}

/// Gives each of `entities`, alive and without a row (from
/// [`world_from_entity_image`]), a row of the archetype of components
/// `ids`, moving in the values: entity `k` takes value `k` of each column
/// `sources[i]`.
///
/// # Errors
/// Refused, changing nothing, when an entity is not alive-without-a-row
/// ([`EntityError::NoSuchEntity`]), is named twice
/// ([`EntityError::AliasedEntity`]), or the ids are not a valid set.
///
/// # Safety
/// As [`spawn_columns`]: `sources[i]` points to `entities.len()`
/// initialised values of component `ids[i]`, which this call moves out (the
/// caller must not drop them afterwards) when it returns `Ok`; on `Err`
/// they still belong to the caller.
pub unsafe fn place_columns(
    world: &mut World,
    entities: &[Entity],
    ids: &[ComponentId],
    sources: &[*const u8],
) -> Result<(), EntityError> {
    // SAFETY: the caller's contract is this function's.
    unsafe { world.place_columns_raw(entities, ids, sources) }
}

/// How many live entities have no row yet: after loading, any is an error
/// (see [`finish_placing`]).
pub fn unplaced_count(world: &World) -> usize {
    world.unplaced_count()
}

/// Checks that every live entity has a row; on success the world is a
/// normal world. Otherwise returns the first entity without one.
pub fn finish_placing(world: &World) -> Result<(), Entity> {
    world.finish_placing()
}

/// Runs `operation` as one world operation: hooks fire inside it as usual,
/// but the commands they record wait until it returns, and are applied then.
/// For a change made of several world calls that must not be interleaved
/// with hook commands: a level spawn creates its entities, parents them and
/// gives them their manager instances before any hook's command can
/// despawn one. Inside a flush (a hook command's own operation), the
/// commands join that flush's next round instead. If `operation` panics,
/// the commands stay queued for the next operation's flush.
///
/// ```
/// use doecs::{ComponentHooks, World};
/// let mut world = World::new();
/// world.set_hooks::<u32>(ComponentHooks::new().on_add(|ctx| ctx.commands.despawn(ctx.entity)));
/// let (e, alive_inside) = doecs::raw::as_one_operation(&mut world, |world| {
///     let e = world.spawn((7u32,));
///     (e, world.alive(e))
/// });
/// assert!(alive_inside, "the hook's despawn waited");
/// assert!(!world.alive(e), "and was applied after");
/// ```
pub fn as_one_operation<R>(world: &mut World, operation: impl FnOnce(&mut World) -> R) -> R {
    world.as_one_operation(operation)
}

/// [`WorldCore::set_parents_in_batch`], keeping the batch: the returned
/// [`ParentedBatch`] lets a manager that creates instances for the whole
/// batch read the parents as batch indices instead of looking each entity
/// up (see [`Hierarchy::batch_parents`]).
///
/// ```
/// let mut world = doecs::World::new();
/// let es = world.spawn_batch((0..3).map(|_| ()));
/// let batch = doecs::raw::parent_batch(&mut world, es.clone(), vec![None, Some(0), Some(0)])
///     .unwrap();
/// assert_eq!(world.hierarchy().batch_parents(&batch), Some(&[None, Some(0), Some(0)][..]));
/// world.remove_parent(es[2]);
/// assert_eq!(world.hierarchy().batch_parents(&batch), None);
/// ```
///
/// # Errors
/// As [`WorldCore::set_parents_in_batch`]; the world is unchanged.
pub fn parent_batch(
    world: &mut WorldCore,
    children: Vec<Entity>,
    parents: Vec<Option<u32>>,
) -> Result<ParentedBatch, RelationError> {
    world.parent_batch(children, parents)
}

/// Whether every entity of `batch` is still in `world`: at once when no
/// entity left the world since the batch was parented (the entity table's
/// departures stamp is unchanged), else one lookup each.
///
/// ```
/// let mut world = doecs::World::new();
/// let es = world.spawn_batch((0..3).map(|_| ()));
/// let batch = doecs::raw::parent_batch(&mut world, es.clone(), vec![None, Some(0), None])
///     .unwrap();
/// assert!(doecs::raw::batch_located(&world, &batch));
/// world.despawn(es[2]).unwrap();
/// assert!(!doecs::raw::batch_located(&world, &batch));
/// ```
pub fn batch_located(world: &WorldCore, batch: &ParentedBatch) -> bool {
    world.batch_located(batch)
}

/// Hands every manager the hierarchy again, after the pairs were replaced
/// wholesale (a load): each makes its own links agree.
pub fn refollow_hierarchy(world: &mut WorldCore) {
    world.refollow_hierarchy()
}

/// The manager of type `M`, mutably, beside the `ChildOf` hierarchy it
/// follows: what a manager needs to create instances for entities that may
/// already have a parent or children.
pub fn manager_and_hierarchy_mut<M: ComponentManager>(
    world: &mut WorldCore,
) -> Option<(&mut M, Hierarchy<'_>)> {
    world.manager_and_hierarchy_mut::<M>()
}

/// Test hook: gives the live `entity` generation `generation` everywhere the
/// world records it (table and row), so generation wrap-around can be
/// tested without four billion despawns. Returns the renamed handle, or
/// `None` if `entity` is not alive.
pub fn debug_set_generation(world: &mut World, entity: Entity, generation: u32) -> Option<Entity> {
    world.debug_set_generation(entity, generation)
}

/// The archetypes of `world`: every table, its columns and chunks, for
/// tools that show the storage (the inspector) and for benchmarks.
pub fn archetypes(world: &WorldCore) -> &Archetypes {
    world.archetypes()
}

/// One sparse component's values in a world (see
/// [`WorldCore::register_sparse`]), for tools that show the storage and
/// for saves: value `k` (at `values` plus `k` times the component's size)
/// belongs to `entities[k]`. Valid while the world is borrowed.
#[derive(Copy, Clone, Debug)]
pub struct SparseColumn<'w> {
    /// The component.
    pub component: ComponentId,
    /// The entities that have it, in slot order.
    pub entities: &'w [Entity],
    /// The first value; the others follow, packed at the component's size.
    pub values: NonNull<u8>,
}

/// Every sparse component's values in `world`, in the order the components
/// were made sparse.
pub fn sparse_columns(world: &WorldCore) -> Vec<SparseColumn<'_>> {
    world
        .sparse
        .iter()
        .map(|set| SparseColumn {
            component: set.component(),
            entities: set.entities(),
            values: set.values_ptr(),
        })
        .collect()
}

/// The bundle registry of `world`: each bundle's component ids and cached
/// edges.
pub fn bundles(world: &WorldCore) -> &Bundles {
    world.bundles()
}

/// Where `entity`'s row is (archetype and row), or why it has none. Valid
/// until the next structural change.
///
/// # Errors
/// [`EntityError::NoSuchEntity`] for an entity without a row here.
pub fn location(world: &WorldCore, entity: Entity) -> Result<Location, EntityError> {
    world.location(entity)
}

/// Pointer to `entity`'s value of component `id`. Valid until the next
/// structural change; reading through it is the caller's `unsafe` (the
/// value has `id`'s layout). Writes through it are not seen by `Changed`
/// filters unless marked with [`WorldCore::mark_changed_by_id`], nor by
/// hooks: a component registered immutable
/// ([`WorldCore::register_immutable`]) must not be written through it
/// (insert a new value instead).
///
/// # Errors
/// [`EntityError`] for a dead entity, an unknown id, or an entity without
/// the component.
pub fn get_ptr(
    world: &WorldCore,
    entity: Entity,
    id: ComponentId,
) -> Result<NonNull<u8>, EntityError> {
    world.get_ptr(entity, id)
}

/// Moves `world`'s change clock to `tick`, as a schedule does to give each
/// step its own tick.
///
/// # Panics
/// If `tick` is earlier than the current tick: the clock never goes back.
pub fn set_change_tick(world: &mut WorldCore, tick: Tick) {
    world.set_change_tick(tick)
}

/// Every pair of `R` as `(source, target, value)`, in an order that
/// rebuilds every source's targets and every target's sources in their
/// present order when the pairs are added to a world without them (how
/// saves keep children in order).
pub fn pairs_in_order<R: Relation>(world: &WorldCore) -> Vec<(Entity, Entity, &R)> {
    world.pairs_in_order::<R>()
}
