//! Whole-entity query data: [`EntityRef`] and [`EntityMut`].
//!
//! Design. `Query<EntityRef>` hands out, for each entity it visits, a view
//! that reads any of the entity's components; `Query<EntityMut>` one that
//! reads and writes any of them, with no structural change (that is
//! [`EntityWorldMut`](crate::EntityWorldMut), which holds the whole world).
//! Which types the views will ask for is only known as they run, so their
//! access is not a list of types but a flag: a read of every component
//! ([`Access::reads_all`]) or a write of every component
//! ([`Access::writes_all`]); see the [access module](super::access). With
//! it, one query refuses `(EntityMut, &T)` or `(EntityRef, &mut T)` as
//! aliasing, a system with `Query<EntityMut>` conflicts with every other
//! parameter and system touching a component (and `Query<EntityRef>` with
//! every writer), and the schedule orders them, as bevy does.
//!
//! Every archetype matches (a view has no required type), the fetch is the
//! archetype's id and entity array, and an item is the entity with its
//! location: a lookup through the component registry and the archetype's
//! column map per `get`, the price of not naming the type up front. A view
//! only reaches its own row, the one the query's access covers: a query's
//! `EntityRef` does not follow `IsA` to inherited components (those are a
//! prefab's row; [`OwnOrInherited`](super::OwnOrInherited) reads them), so
//! two views of different entities never share a value, and `EntityMut`s
//! of different rows may be alive together (collected, in a chunk's rows,
//! on two threads). [`EntityMut::get_mut`] hands out a [`Mut`], which stamps
//! the row changed when written through, as `Mut<T>` query data does, and
//! refuses a component registered immutable.

use super::access::{Access, AliasError};
use super::data::{EveryRowData, QueryData, ReadOnlyQueryData};
use super::terms::Mut;
use crate::component::{Component, ComponentInfo, Components};
use crate::entity::Entity;
use crate::error::EntityError;
use crate::location::Location;
use crate::storage::{Archetype, ArchetypeId, Row};
use crate::tick::ChangeWindow;
use crate::world::{EntityRef, WorldCore};
use std::marker::PhantomData;
use std::ptr::NonNull;

/// Read and write access to one entity's components, without structural
/// changes: the item of query data `EntityMut` (see the module docs).
///
/// ```
/// use doecs::{EntityMut, World};
/// #[derive(Debug, PartialEq)]
/// struct Hp(u32);
/// struct Armor(u32);
///
/// let mut world = World::new();
/// let a = world.spawn((Hp(10), Armor(3)));
/// let b = world.spawn((Hp(7),));
/// world.query_mut::<EntityMut>().for_each(|mut e| {
///     let armor = e.get::<Armor>().map_or(0, |a| a.0);
///     e.get_mut::<Hp>().unwrap().0 += armor;
/// });
/// assert_eq!(world.get::<Hp>(a), Ok(&Hp(13)));
/// assert_eq!(world.get::<Hp>(b), Ok(&Hp(7)));
/// ```
pub struct EntityMut<'w> {
    world: &'w WorldCore,
    entity: Entity,
    location: Location,
    window: ChangeWindow,
}

impl<'w> EntityMut<'w> {
    /// The entity.
    pub fn id(&self) -> Entity {
        self.entity
    }

    /// Its own `T`, if it has one.
    pub fn get<T: Component>(&self) -> Option<&T> {
        self.as_readonly().get::<T>()
    }

    /// Its own `T`, mutably: a [`Mut`], which stamps the row changed (at
    /// the query's tick) when written through.
    ///
    /// # Errors
    /// [`EntityError::MissingComponent`] if it has no `T` of its own;
    /// [`EntityError::Immutable`] if the world registered `T` immutable
    /// ([`WorldCore::register_immutable`]): insert a new value instead.
    pub fn get_mut<T: Component>(&mut self) -> Result<Mut<'_, T>, EntityError> {
        let missing = EntityError::MissingComponent {
            entity: self.entity,
            component: std::any::type_name::<T>(),
        };
        let components = self.world.components();
        let id = components.id_of::<T>().ok_or(missing)?;
        let arch = self.world.archetypes().get(self.location.archetype);
        let column = arch.column_of(id).ok_or(missing)?;
        if components.info(id).is_immutable() {
            return Err(EntityError::Immutable(std::any::type_name::<T>()));
        }
        // SAFETY: the row is the view's live row (its query made it so),
        // the query that handed the view out holds write access to every
        // component of it for `'w` and hands each row out once at a time,
        // and `&mut self` keeps this the only reference the view gives out
        // meanwhile.
        Ok(unsafe {
            Mut::at_row(
                arch.column_ptr(column).cast::<T>(),
                arch.column_ticks(column),
                self.location.row.index(),
                self.window,
            )
        })
    }

    /// Whether it has a `T` of its own.
    pub fn contains<T: Component>(&self) -> bool {
        self.get::<T>().is_some()
    }

    /// Its components, in the archetype's (id) order.
    pub fn components(&self) -> impl Iterator<Item = &'w ComponentInfo> + 'w {
        self.world.components_in(self.location.archetype)
    }

    /// A read-only view of the entity, for as long as this borrow.
    pub fn as_readonly(&self) -> EntityRef<'_> {
        // SAFETY: the location is the view's live row; `&self` keeps
        // `get_mut` (which needs `&mut self`) from writing the row while
        // the read-only view lives, and nothing else writes it (the query's
        // access).
        unsafe { EntityRef::own_row(self.world, self.entity, self.location) }
    }

    /// The view, read only, for the rest of its lifetime.
    pub fn into_readonly(self) -> EntityRef<'w> {
        // SAFETY: as in `as_readonly`; the view is given up, so nothing
        // writes through it any more.
        unsafe { EntityRef::own_row(self.world, self.entity, self.location) }
    }
}

impl std::fmt::Debug for EntityMut<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("EntityMut").field(&self.entity).finish()
    }
}

/// What whole-entity items need beyond one archetype's columns: the world
/// (its registry and archetypes) and the loop's change window.
#[derive(Copy, Clone)]
pub struct EntityEnv<'w> {
    world: &'w WorldCore,
    window: ChangeWindow,
}

/// One fetched archetype of a whole-entity term: its id and row 0 of its
/// entity array.
#[derive(Copy, Clone)]
pub struct EntityFetch {
    archetype: ArchetypeId,
    entities: NonNull<Entity>,
}

impl EntityFetch {
    /// Row `row`'s entity and location.
    ///
    /// # Safety
    /// `row` must be live in the fetched archetype.
    #[inline]
    unsafe fn at(self, row: usize) -> (Entity, Location) {
        // SAFETY: `row` is live (caller), so its entity slot is initialised.
        let entity = unsafe { self.entities.add(row).read() };
        let location = Location {
            archetype: self.archetype,
            row: Row(row as u32),
        };
        (entity, location)
    }
}

/// The rows of one chunk (or run of rows) of a whole-entity term, in the
/// chunk forms (`for_each_chunk`): an iterator over the views of rows
/// `start..start + len`, each once.
pub struct EntityRows<'w, V> {
    env: EntityEnv<'w>,
    fetch: EntityFetch,
    row: usize,
    end: usize,
    _views: PhantomData<fn() -> V>,
}

// SAFETY: the rows hand out views of `Send` items (`EntityRef` and
// `EntityMut` hold a `&WorldCore`, which is `Sync`), each row once; the
// fetch points at the rows' entities, read only.
unsafe impl<V: Send> Send for EntityRows<'_, V> {}

impl<'w, V> EntityRows<'w, V> {
    /// The rows `start..start + len`.
    ///
    /// # Safety
    /// As [`QueryData::slice`] for the term whose views these are.
    #[inline]
    unsafe fn new(env: EntityEnv<'w>, fetch: EntityFetch, start: usize, len: usize) -> Self {
        EntityRows {
            env,
            fetch,
            row: start,
            end: start + len,
            _views: PhantomData,
        }
    }

    /// The next row, if any is left.
    #[inline]
    fn next_row(&mut self) -> Option<usize> {
        (self.row < self.end).then(|| {
            self.row += 1;
            self.row - 1
        })
    }
}

impl<'w> Iterator for EntityRows<'w, EntityRef<'w>> {
    type Item = EntityRef<'w>;

    #[inline]
    fn next(&mut self) -> Option<EntityRef<'w>> {
        let row = self.next_row()?;
        // SAFETY: `new`'s contract: the rows are live rows of the fetched
        // archetype in `env`'s world, under the loop's access.
        Some(unsafe { <EntityRef<'w> as QueryData>::item(&mut self.env, self.fetch, row) })
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.end - self.row;
        (n, Some(n))
    }
}

impl<'w> Iterator for EntityRows<'w, EntityMut<'w>> {
    type Item = EntityMut<'w>;

    #[inline]
    fn next(&mut self) -> Option<EntityMut<'w>> {
        let row = self.next_row()?;
        // SAFETY: as above; each row is handed out once.
        Some(unsafe { <EntityMut<'w> as QueryData>::item(&mut self.env, self.fetch, row) })
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.end - self.row;
        (n, Some(n))
    }
}

impl<'w> ExactSizeIterator for EntityRows<'w, EntityRef<'w>> {}
impl<'w> ExactSizeIterator for EntityRows<'w, EntityMut<'w>> {}

/// The fetch of every whole-entity term: the archetype's id and entities.
#[inline]
fn fetch_entities(archetype: &Archetype) -> EntityFetch {
    EntityFetch {
        archetype: archetype.id(),
        entities: archetype.entities_ptr(),
    }
}

// SAFETY: `access` records a read of every component of the visited rows.
// Every archetype matches with all of its columns as the term's (the state
// is `()`, since there is nothing to pick); `fetch` reads the archetype's
// entity array, and an item reads only its own row's columns, found
// through the registry in `env`'s world (a query's `EntityRef` does not
// follow `IsA` to another entity's row). Every row has an item.
unsafe impl QueryData for EntityRef<'_> {
    type Item<'w> = EntityRef<'w>;
    type Slice<'w> = EntityRows<'w, EntityRef<'w>>;
    type Fetch = EntityFetch;
    type State = ();
    type Key = EntityRef<'static>;
    type Env<'w> = EntityEnv<'w>;
    type ReadOnly = EntityRef<'static>;

    fn access(access: &mut Access) -> Result<(), AliasError> {
        access.try_add_reads_all()
    }
    fn match_archetype(_: &Archetype, _: &Components) -> Option<()> {
        Some(())
    }
    #[inline]
    fn env(world: &WorldCore, window: ChangeWindow) -> EntityEnv<'_> {
        EntityEnv { world, window }
    }
    #[inline]
    unsafe fn fetch(archetype: &Archetype, _: ()) -> EntityFetch {
        fetch_entities(archetype)
    }
    #[inline]
    unsafe fn item<'w>(env: &mut Self::Env<'w>, fetch: EntityFetch, row: usize) -> Self::Item<'w> {
        // SAFETY: `row` is live (caller).
        let (entity, location) = unsafe { fetch.at(row) };
        // SAFETY: `location` is `entity`'s live row in `env`'s world, and
        // the caller holds a read of every component of it for `'w`, so
        // nothing writes it.
        unsafe { EntityRef::own_row(env.world, entity, location) }
    }
    #[inline]
    unsafe fn slice<'w>(
        env: &mut Self::Env<'w>,
        fetch: EntityFetch,
        start: usize,
        len: usize,
    ) -> Self::Slice<'w> {
        // SAFETY: forwarded contract.
        unsafe { EntityRows::new(*env, fetch, start, len) }
    }
}
// SAFETY: only reads.
unsafe impl ReadOnlyQueryData for EntityRef<'_> {}
impl EveryRowData for EntityRef<'_> {}

// SAFETY: `access` records a write of every component of the visited
// rows. As for `EntityRef`, every archetype matches with all of its
// columns, `fetch` reads the entity array, and an item reaches only its
// own row; it writes (and stamps) a column of it only through
// `EntityMut::get_mut`, one `Mut` at a time per item, and the caller hands
// each row out once at a time. Writes are stamped by the items as they
// happen, so `written_ticks` names nothing (as for `Mut<T>`).
unsafe impl QueryData for EntityMut<'_> {
    type Item<'w> = EntityMut<'w>;
    type Slice<'w> = EntityRows<'w, EntityMut<'w>>;
    type Fetch = EntityFetch;
    type State = ();
    type Key = EntityMut<'static>;
    type Env<'w> = EntityEnv<'w>;
    type ReadOnly = EntityRef<'static>;

    fn access(access: &mut Access) -> Result<(), AliasError> {
        access.try_add_writes_all()
    }
    fn match_archetype(_: &Archetype, _: &Components) -> Option<()> {
        Some(())
    }
    #[inline]
    fn env(world: &WorldCore, window: ChangeWindow) -> EntityEnv<'_> {
        EntityEnv { world, window }
    }
    #[inline]
    unsafe fn fetch(archetype: &Archetype, _: ()) -> EntityFetch {
        fetch_entities(archetype)
    }
    #[inline]
    unsafe fn item<'w>(env: &mut Self::Env<'w>, fetch: EntityFetch, row: usize) -> Self::Item<'w> {
        // SAFETY: `row` is live (caller).
        let (entity, location) = unsafe { fetch.at(row) };
        EntityMut {
            world: env.world,
            entity,
            location,
            window: env.window,
        }
    }
    #[inline]
    unsafe fn slice<'w>(
        env: &mut Self::Env<'w>,
        fetch: EntityFetch,
        start: usize,
        len: usize,
    ) -> Self::Slice<'w> {
        // SAFETY: forwarded contract.
        unsafe { EntityRows::new(*env, fetch, start, len) }
    }
}
impl EveryRowData for EntityMut<'_> {}
