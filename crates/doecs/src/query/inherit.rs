//! The own-or-inherited term: an entity's own component, else its prefab's.
//!
//! Design. An instance stores none of its prefab's components (see
//! [`world::prefab`](crate::world::prefab)); [`WorldCore::get`] reads the
//! entity's own value, else the nearest one up its `IsA` chain.
//! [`OwnOrInherited<T>`] is that read as query data: rows of archetypes
//! that have `T` read their own column, straight down it as `&T` does;
//! rows of the others follow `IsA` from the entity, one entity-index lookup
//! per step. So a world of instances pays one lookup for each row that
//! inherits, and none for the rows that own. Entities that neither own nor
//! inherit a `T` are not matched (`Option<OwnOrInherited<T>>` gives `None`
//! for them). `Prefab` itself is never inherited, as for `get`.
//!
//! The name says what the item is: the entity's own `T` where it has one,
//! an inherited one where not, one `&T` either way, so instances read
//! shared prefab data as their own without a copy.
//!
//! Aliasing. The term reads `T` on the entity (an own read: the query may
//! not also write `T`, which refuses `(&mut T, OwnOrInherited<T>)`) and on
//! its prefabs (a related read, so a writer of `T` elsewhere conflicts
//! with it whatever the filters). Since the query never writes `T`, its
//! items never overlap, and it runs in every loop form.

use super::data::{QueryData, ReadOnlyQueryData};
use super::relation::TermRows;
use super::{Access, AccessKey, AliasError};
use crate::component::{Component, ComponentId, Components};
use crate::entity::Entity;
use crate::relation::table::RelationTable;
use crate::relation::IsA;
use crate::storage::{Archetype, ArchetypeId, ColumnIndex};
use crate::tags::Prefab;
use crate::tick::ChangeWindow;
use crate::world::WorldCore;
use std::any::TypeId;
use std::marker::PhantomData;
use std::ptr::NonNull;

/// The entity's own `T`, or, where it has none, the `T` its prefab chain
/// (up `IsA`, nearest first) gives it: the value [`WorldCore::get`] reads.
/// Entities with neither are not matched. See the module docs.
///
/// ```
/// use doecs::{IsA, OwnOrInherited, Prefab, World};
/// #[derive(Debug, PartialEq)]
/// struct Mesh(&'static str);
/// struct Pos(f32);
///
/// let mut world = World::new();
/// let crate_prefab = world.spawn((Prefab, Mesh("crate")));
/// let plain = world.spawn((Pos(0.0),));
/// let shared = world.spawn((Pos(1.0),));
/// world.add_pair(shared, crate_prefab, IsA).unwrap();
/// let own = world.spawn((Pos(2.0), Mesh("barrel")));
/// world.add_pair(own, crate_prefab, IsA).unwrap();
///
/// let mut seen: Vec<(f32, &str)> = world
///     .query::<(&Pos, OwnOrInherited<Mesh>)>()
///     .iter()
///     .map(|(pos, mesh)| (pos.0, mesh.0))
///     .collect();
/// seen.sort_by(|a, b| a.0.total_cmp(&b.0));
/// assert_eq!(seen, [(1.0, "crate"), (2.0, "barrel")]);
/// # let _ = plain;
/// ```
pub struct OwnOrInherited<T>(PhantomData<fn() -> T>);

/// What an own-or-inherited term needs of the world in one loop: the `IsA`
/// table, the world, and `T`'s component id (`None` where `T` is not
/// registered, or is `Prefab`, which is never inherited).
#[derive(Clone, Copy)]
pub struct InheritEnv<'w> {
    world: &'w WorldCore,
    table: Option<&'w RelationTable<IsA>>,
    component: Option<ComponentId>,
}

impl<'w> InheritEnv<'w> {
    /// Where the `T` that `entity`, which lacks one, inherits lives: the
    /// nearest prefab up its `IsA` chain that owns one, as its archetype,
    /// column and row.
    #[inline(never)]
    fn inherited(&self, entity: Entity) -> Option<(&'w Archetype, ColumnIndex, usize)> {
        let (component, table) = (self.component?, self.table?);
        // `IsA` is acyclic, so the chain ends.
        let mut at = table.first_target(entity)?;
        loop {
            let (archetype, row) = self.world.entities.locate(at)?;
            let arch = self
                .world
                .archetypes()
                .get(ArchetypeId::from_index(archetype));
            if let Some(column) = arch.column_of(component) {
                return Some((arch, column, row));
            }
            at = table.first_target(at)?;
        }
    }
}

/// Row `row` of the column starting at `column`.
///
/// # Safety
/// `row` must be a live row of that column, and no one may write it for
/// `'w`.
#[inline(always)]
unsafe fn read_row<'w, T>(column: NonNull<T>, row: usize) -> &'w T {
    // SAFETY: forwarded contract.
    unsafe { column.add(row).as_ref() }
}

// SAFETY: `access` records `T` as an own read and a related read. `fetch`
// touches the archetype's `T` column (if any) and its entity array;
// `try_item` reads the visited row's own `T` where the archetype has the
// column, else a prefab's row found through the `IsA` table in the loop's
// world, never the visited row (`IsA` is acyclic, so the chain never
// returns to it); it gives `Some` exactly where `row_matches` holds.
// `READS_RELATED` is set.
unsafe impl<T: Component> QueryData for OwnOrInherited<T> {
    type Item<'w> = &'w T;
    type Slice<'w> = TermRows<'w, Self>;
    /// The archetype's own `T` column, and its entities.
    type Fetch = (Option<NonNull<T>>, NonNull<Entity>);
    type State = Option<ColumnIndex>;
    type Key = OwnOrInherited<T>;
    type Env<'w> = InheritEnv<'w>;
    type ReadOnly = Self;
    const EVERY_ROW: bool = false;
    const READS_RELATED: bool = true;

    fn access(access: &mut Access) -> Result<(), AliasError> {
        access.try_add_read(AccessKey::of::<T>())?;
        access.add_related_read(AccessKey::of::<T>());
        Ok(())
    }
    fn match_archetype(
        archetype: &Archetype,
        components: &Components,
    ) -> Option<Option<ColumnIndex>> {
        Some(
            components
                .id_of::<T>()
                .and_then(|id| archetype.column_of(id)),
        )
    }
    #[inline]
    fn env(world: &WorldCore, _: ChangeWindow) -> InheritEnv<'_> {
        let inheritable = TypeId::of::<T>() != TypeId::of::<Prefab>();
        InheritEnv {
            world,
            table: world.relations.table::<IsA>(),
            component: world.components().id_of::<T>().filter(|_| inheritable),
        }
    }
    #[inline]
    unsafe fn fetch(archetype: &Archetype, state: Option<ColumnIndex>) -> Self::Fetch {
        (
            state.map(|c| archetype.column_ptr(c).cast()),
            archetype.entities_ptr(),
        )
    }
    #[inline]
    unsafe fn item<'w>(env: &mut Self::Env<'w>, fetch: Self::Fetch, row: usize) -> &'w T {
        // SAFETY: forwarded contract.
        unsafe { Self::try_item(env, fetch, row) }
            .expect("doecs: `item` of a row that neither owns nor inherits its component")
    }
    #[inline]
    unsafe fn try_item<'w>(
        env: &mut Self::Env<'w>,
        (own, entities): Self::Fetch,
        row: usize,
    ) -> Option<&'w T> {
        if let Some(own) = own {
            // SAFETY: `row` is live (caller) in the archetype whose `T`
            // column `own` starts; the caller holds the read of `T`.
            return Some(unsafe { read_row(own, row) });
        }
        // SAFETY: `row` is live (caller), so its entity slot is initialised.
        let entity = unsafe { entities.add(row).read() };
        let (arch, column, prefab_row) = env.inherited(entity)?;
        // SAFETY: `prefab_row` is the row of a located entity in `arch`,
        // which holds `T` in `column`, in `env`'s world, borrowed for `'w`;
        // the caller holds the read of `T` (recorded as related), and the
        // query writes no `T` (its own read refuses that).
        Some(unsafe { read_row(arch.column_ptr(column).cast(), prefab_row) })
    }
    #[inline]
    unsafe fn row_matches(
        env: &mut InheritEnv<'_>,
        (own, entities): Self::Fetch,
        row: usize,
    ) -> bool {
        // SAFETY: `row` is live (caller), so its entity slot is initialised.
        own.is_some() || env.inherited(unsafe { entities.add(row).read() }).is_some()
    }
    #[inline(always)]
    unsafe fn for_each_row<'w>(
        env: &mut Self::Env<'w>,
        fetch: Self::Fetch,
        len: usize,
        mut f: impl FnMut(&'w T),
    ) {
        match fetch.0 {
            // An archetype that owns `T`: straight down its column.
            // SAFETY: the rows `0..len` are live (caller) and the caller
            // holds the read of `T`.
            Some(own) => unsafe { std::slice::from_raw_parts(own.as_ptr(), len) }
                .iter()
                .for_each(f),
            None => {
                for row in 0..len {
                    // SAFETY: forwarded contract.
                    if let Some(item) = unsafe { Self::try_item(env, fetch, row) } {
                        f(item);
                    }
                }
            }
        }
    }
    #[inline]
    unsafe fn slice<'w>(
        env: &mut Self::Env<'w>,
        fetch: Self::Fetch,
        start: usize,
        len: usize,
    ) -> TermRows<'w, Self> {
        // SAFETY: forwarded contract.
        unsafe { TermRows::new(*env, fetch, start, len) }
    }
}
// SAFETY: only reads.
unsafe impl<T: Component> ReadOnlyQueryData for OwnOrInherited<T> {}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::world::World;

    #[derive(Debug, PartialEq)]
    struct Armor(u32);

    /// Through a chain of two prefabs the term hands out the nearest
    /// owner's value itself (no copy), as `get` does, and the instance's
    /// own where it has one.
    #[test]
    fn the_inherited_value_is_the_nearest_prefabs_own() {
        let mut world = World::new();
        let base = world.spawn((Prefab, Armor(1)));
        let mid = world.spawn((Prefab,));
        world.add_pair(mid, base, IsA).unwrap();
        let shared = world.spawn(());
        world.add_pair(shared, mid, IsA).unwrap();
        let own = world.spawn((Armor(5),));
        world.add_pair(own, mid, IsA).unwrap();
        let q = world.query::<OwnOrInherited<Armor>>();
        let via_term = q.get(shared).unwrap();
        assert!(std::ptr::eq(via_term, world.get::<Armor>(base).unwrap()));
        assert_eq!(q.get(own), Ok(&Armor(5)));
        const { assert!(!<OwnOrInherited<Armor> as QueryData>::EVERY_ROW) };
    }
}
