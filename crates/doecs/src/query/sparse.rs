//! Sparse terms: query data that reads components stored sparse.
//!
//! A component registered sparse
//! ([`WorldCore::register_sparse`](crate::WorldCore::register_sparse))
//! has no archetype column, so the column terms (`&T`, `&mut T`, ...)
//! cannot reach it, and a query that names a sparse type through one is
//! refused ([`QueryError::SparseTerm`](super::QueryError::SparseTerm)).
//! [`Sparse`] wraps a term to reach the component's sparse set instead:
//! `Sparse<&T>`, `Sparse<&mut T>`, `Sparse<Option<&T>>`, `Sparse<Ref<T>>`
//! and `Sparse<Has<T>>`. The storage is chosen at run time (every type is a
//! component), which is why the wrapper is spelled out: the type checker
//! cannot tell the two storages apart, and the spelling keeps the dense
//! terms free of any per-row branch.
//!
//! Dense terms drive a mixed query: it visits the archetypes its dense
//! terms match, and for each row looks the entity up in the set (one index
//! load and one generation compare). `Sparse<&T>` and `Sparse<&mut T>`
//! then filter: rows whose entity lacks `T` are skipped, as relation terms
//! skip rows without a target (their data's `EVERY_ROW` is false).
//! `Sparse<&mut T>` stamps each value it hands out changed (sparse values
//! have their own added and changed stamps, which `Sparse<Ref<T>>` reads).

use super::access::{Access, AccessKey, AliasError};
use super::data::{EveryRowData, QueryData, Read, ReadOnlyQueryData, Write};
use super::relation::TermRows;
use super::terms::{Has, Ref};
use crate::component::{Component, Components};
use crate::entity::Entity;
use crate::storage::sparse_set::{SparseSet, SparseSlot};
use crate::storage::Archetype;
use crate::tick::ChangeWindow;
use crate::world::WorldCore;
use std::marker::PhantomData;
use std::ptr::NonNull;

/// A term over a component stored sparse. See the module docs.
///
/// ```
/// use doecs::{Entity, Sparse, World};
///
/// struct Pos(f32);
/// struct Poisoned(u32);
///
/// let mut world = World::new();
/// world.register_sparse::<Poisoned>().unwrap();
/// let a = world.spawn((Pos(0.0), Poisoned(2)));
/// let b = world.spawn((Pos(1.0),));
/// // Dense terms drive; the sparse term filters and fetches.
/// world.query_mut::<(&mut Pos, Sparse<&mut Poisoned>)>().for_each(|(p, mut poison)| {
///     p.0 -= 1.0;
///     poison.0 -= 1;
/// });
/// assert_eq!(world.get::<Pos>(a).unwrap().0, -1.0);
/// assert_eq!(world.get::<Pos>(b).unwrap().0, 1.0);
/// assert_eq!(world.get::<Poisoned>(a).unwrap().0, 1);
/// // Optional and presence forms keep every row.
/// let seen: Vec<(Entity, bool)> =
///     world.query::<(Entity, Sparse<doecs::Has<Poisoned>>)>().iter().collect();
/// assert_eq!(seen.len(), 2);
/// ```
pub struct Sparse<D>(PhantomData<fn() -> D>);

/// What a sparse term needs of the world in one loop: the component's set
/// and the loop's change window.
pub struct SparseEnv<'w, T> {
    set: Option<&'w SparseSet>,
    window: ChangeWindow,
    _value: PhantomData<fn() -> T>,
}

impl<T> Clone for SparseEnv<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for SparseEnv<'_, T> {}

impl<'w, T: Component> SparseEnv<'w, T> {
    #[inline]
    fn new(world: &'w WorldCore, window: ChangeWindow) -> Self {
        SparseEnv {
            set: world
                .components
                .id_of::<T>()
                .and_then(|id| world.sparse.get(id)),
            window,
            _value: PhantomData,
        }
    }

    /// The set and the slot of the entity of row `row`, if it has `T`.
    ///
    /// # Safety
    /// `row` must be a live row of the archetype `entities` points into.
    #[inline(always)]
    unsafe fn find(
        &self,
        entities: NonNull<Entity>,
        row: usize,
    ) -> Option<(&'w SparseSet, SparseSlot)> {
        let set = self.set?;
        if entities == set.entities_ptr() {
            // Walking this very set (see `QueryData::sparse_driver`): the
            // row is the slot.
            return Some((set, SparseSlot::from_index(row)));
        }
        // SAFETY: the row is live (caller), so its entity slot is initialised.
        let entity = unsafe { entities.add(row).read() };
        Some((set, set.slot_of(entity)?))
    }
}

/// Records `key` as reached through a sparse term, besides `add`'s record.
fn sparse_access(
    access: &mut Access,
    key: AccessKey,
    add: fn(&mut Access, AccessKey) -> Result<(), AliasError>,
) -> Result<(), AliasError> {
    add(access, key)?;
    access.add_sparse_term(key);
    Ok(())
}

/// Implements the parts every sparse term shares.
macro_rules! sparse_common {
    () => {
        type Fetch = NonNull<Entity>;
        type State = ();
        type Env<'w> = SparseEnv<'w, T>;
        fn match_archetype(_: &Archetype, _: &Components) -> Option<()> {
            Some(())
        }
        #[inline]
        fn env(world: &WorldCore, window: ChangeWindow) -> SparseEnv<'_, T> {
            SparseEnv::new(world, window)
        }
        #[inline]
        unsafe fn fetch(archetype: &Archetype, _: ()) -> NonNull<Entity> {
            archetype.entities_ptr()
        }
        #[inline(always)]
        fn fetch_entities(entities: NonNull<Entity>) -> Option<NonNull<Entity>> {
            Some(entities)
        }
    };
}

/// The chunk form of a read-only term: its rows' items, one by one.
macro_rules! term_rows_slice {
    () => {
        #[inline]
        unsafe fn slice<'w>(
            env: &mut Self::Env<'w>,
            fetch: NonNull<Entity>,
            start: usize,
            len: usize,
        ) -> TermRows<'w, Self> {
            // SAFETY: forwarded contract.
            unsafe { TermRows::new(*env, fetch, start, len) }
        }
    };
}

/// The driver of a term that filters: its set's entities (none where `T`
/// has no set).
macro_rules! sparse_driver {
    () => {
        #[inline(always)]
        fn sparse_driver<'w>(env: &Self::Env<'w>) -> Option<&'w [Entity]> {
            Some(env.set.map_or(&[], |s| s.entities()))
        }
    };
}

// SAFETY: reads `T` of the visited row's entity only, in `T`'s sparse set
// (recorded as a read, and as a sparse term); `fetch` touches only the
// entity array. `try_item` gives `Some` exactly where `row_matches` holds.
unsafe impl<T: Component> QueryData for Sparse<&T> {
    type Item<'w> = &'w T;
    type Slice<'w> = TermRows<'w, Self>;
    type Key = Sparse<Read<T>>;
    type ReadOnly = Self;
    const EVERY_ROW: bool = false;
    sparse_common!();
    sparse_driver!();

    fn access(access: &mut Access) -> Result<(), AliasError> {
        sparse_access(access, AccessKey::of::<T>(), Access::try_add_read)
    }
    #[inline]
    unsafe fn item<'w>(env: &mut Self::Env<'w>, fetch: NonNull<Entity>, row: usize) -> &'w T {
        // SAFETY: forwarded contract.
        unsafe { Self::try_item(env, fetch, row) }.expect("doecs: `item` of a row without `T`")
    }
    #[inline]
    unsafe fn try_item<'w>(
        env: &mut Self::Env<'w>,
        fetch: NonNull<Entity>,
        row: usize,
    ) -> Option<&'w T> {
        // SAFETY: `row` is live (caller); the slot found holds a live `T`
        // of the set, which the loop's world borrow keeps in place for
        // `'w`, and which no writer touches (the caller holds the read).
        unsafe {
            let (set, slot) = env.find(fetch, row)?;
            Some(set.value_ptr(slot).cast::<T>().as_ref())
        }
    }
    #[inline]
    unsafe fn row_matches(env: &mut Self::Env<'_>, fetch: NonNull<Entity>, row: usize) -> bool {
        // SAFETY: forwarded contract.
        unsafe { env.find(fetch, row) }.is_some()
    }
    term_rows_slice!();
    #[inline(always)]
    unsafe fn for_each_driven_row<'w>(
        env: &mut Self::Env<'w>,
        _: NonNull<Entity>,
        len: usize,
        f: impl FnMut(&'w T),
    ) {
        let Some(set) = env.set else { return };
        // SAFETY: the rows are the set's `len` live slots, in order (the
        // driver is this set); the values are read under the caller's read.
        unsafe { std::slice::from_raw_parts(set.values_ptr().cast::<T>().as_ptr(), len) }
            .iter()
            .for_each(f);
    }
}
// SAFETY: only reads.
unsafe impl<T: Component> ReadOnlyQueryData for Sparse<&T> {}

// SAFETY: writes `T` of the visited row's entity only (value and changed
// stamp, in `T`'s sparse set), recorded as a write and as a sparse term;
// each row's entity has its own slot, so rows handed out once each never
// share a value. `try_item` gives `Some` exactly where `row_matches` holds.
unsafe impl<T: Component> QueryData for Sparse<&mut T> {
    type Item<'w> = &'w mut T;
    type Slice<'w> = SparseRowsMut<'w, T>;
    type Key = Sparse<Write<T>>;
    type ReadOnly = Sparse<&'static T>;
    const EVERY_ROW: bool = false;
    sparse_common!();
    sparse_driver!();

    fn access(access: &mut Access) -> Result<(), AliasError> {
        sparse_access(access, AccessKey::of::<T>(), Access::try_add_write)
    }
    #[inline]
    unsafe fn item<'w>(env: &mut Self::Env<'w>, fetch: NonNull<Entity>, row: usize) -> &'w mut T {
        // SAFETY: forwarded contract.
        unsafe { Self::try_item(env, fetch, row) }.expect("doecs: `item` of a row without `T`")
    }
    #[inline]
    unsafe fn try_item<'w>(
        env: &mut Self::Env<'w>,
        fetch: NonNull<Entity>,
        row: usize,
    ) -> Option<&'w mut T> {
        // SAFETY: `row` is live (caller); the slot holds the entity's live
        // `T`, which the caller's write access makes ours, handed out once
        // (each row once at a time, one slot per entity). The stamp is the
        // slot's own, under the same access.
        unsafe {
            let (set, slot) = env.find(fetch, row)?;
            set.stamp_changed(slot, env.window.this_run);
            Some(set.value_ptr(slot).cast::<T>().as_mut())
        }
    }
    #[inline]
    unsafe fn row_matches(env: &mut Self::Env<'_>, fetch: NonNull<Entity>, row: usize) -> bool {
        // SAFETY: forwarded contract.
        unsafe { env.find(fetch, row) }.is_some()
    }
    #[inline]
    unsafe fn slice<'w>(
        env: &mut Self::Env<'w>,
        fetch: NonNull<Entity>,
        start: usize,
        len: usize,
    ) -> SparseRowsMut<'w, T> {
        SparseRowsMut {
            env: *env,
            fetch,
            row: start,
            end: start + len,
        }
    }
    #[inline(always)]
    unsafe fn for_each_driven_row<'w>(
        env: &mut Self::Env<'w>,
        _: NonNull<Entity>,
        len: usize,
        f: impl FnMut(&'w mut T),
    ) {
        let Some(set) = env.set else { return };
        // SAFETY: the rows are the set's `len` live slots, in order (the
        // driver is this set); the caller's write access makes their
        // values and stamps ours, each value handed out once.
        unsafe {
            set.stamp_all_changed(env.window.this_run);
            std::slice::from_raw_parts_mut(set.values_ptr().cast::<T>().as_ptr(), len)
        }
        .iter_mut()
        .for_each(f);
    }
}

// SAFETY: reads `T` of the visited row's entity if it has one, as
// `Sparse<&T>` does; every row has an item.
unsafe impl<T: Component> QueryData for Sparse<Option<&T>> {
    type Item<'w> = Option<&'w T>;
    type Slice<'w> = TermRows<'w, Self>;
    type Key = Sparse<Option<Read<T>>>;
    type ReadOnly = Self;
    sparse_common!();

    fn access(access: &mut Access) -> Result<(), AliasError> {
        sparse_access(access, AccessKey::of::<T>(), Access::try_add_read)
    }
    #[inline]
    unsafe fn item<'w>(
        env: &mut Self::Env<'w>,
        fetch: NonNull<Entity>,
        row: usize,
    ) -> Option<&'w T> {
        // SAFETY: forwarded contract (see `Sparse<&T>`).
        unsafe { <Sparse<&T>>::try_item(env, fetch, row) }
    }
    term_rows_slice!();
}
// SAFETY: only reads.
unsafe impl<T: Component> ReadOnlyQueryData for Sparse<Option<&T>> {}
impl<T: Component> EveryRowData for Sparse<Option<&T>> {}

// SAFETY: reads `T` of the visited row's entity and its stamps, as
// `Sparse<&T>` does (stamps are written only under a write of `T`).
unsafe impl<T: Component> QueryData for Sparse<Ref<'_, T>> {
    type Item<'w> = Ref<'w, T>;
    type Slice<'w> = TermRows<'w, Self>;
    type Key = Sparse<Ref<'static, T>>;
    type ReadOnly = Self;
    const EVERY_ROW: bool = false;
    /// Reads stamps, so its query reads since its previous use (sparse
    /// values always keep their own stamps: no request to make).
    const TRACKS: bool = true;
    sparse_common!();
    sparse_driver!();

    fn access(access: &mut Access) -> Result<(), AliasError> {
        sparse_access(access, AccessKey::of::<T>(), Access::try_add_read)
    }
    #[inline]
    unsafe fn item<'w>(env: &mut Self::Env<'w>, fetch: NonNull<Entity>, row: usize) -> Ref<'w, T> {
        // SAFETY: forwarded contract.
        unsafe { Self::try_item(env, fetch, row) }.expect("doecs: `item` of a row without `T`")
    }
    #[inline]
    unsafe fn try_item<'w>(
        env: &mut Self::Env<'w>,
        fetch: NonNull<Entity>,
        row: usize,
    ) -> Option<Ref<'w, T>> {
        // SAFETY: as `Sparse<&T>`; the stamps are the slot's, read under
        // the same read access.
        unsafe {
            let (set, slot) = env.find(fetch, row)?;
            let (added, changed) = set.ticks(slot);
            let value = set.value_ptr(slot).cast::<T>().as_ref();
            Some(Ref::from_parts(value, added, changed, env.window))
        }
    }
    #[inline]
    unsafe fn row_matches(env: &mut Self::Env<'_>, fetch: NonNull<Entity>, row: usize) -> bool {
        // SAFETY: forwarded contract.
        unsafe { env.find(fetch, row) }.is_some()
    }
    term_rows_slice!();
}
// SAFETY: only reads.
unsafe impl<T: Component> ReadOnlyQueryData for Sparse<Ref<'_, T>> {}

// SAFETY: reads no value, only whether the visited row's entity is in the
// set (recorded as a sparse term, without a read, as `Has` records none).
unsafe impl<T: Component> QueryData for Sparse<Has<T>> {
    type Item<'w> = bool;
    type Slice<'w> = TermRows<'w, Self>;
    type Key = Sparse<Has<T>>;
    type ReadOnly = Self;
    sparse_common!();

    fn access(access: &mut Access) -> Result<(), AliasError> {
        access.add_sparse_term(AccessKey::of::<T>());
        Ok(())
    }
    #[inline]
    unsafe fn item<'w>(
        env: &mut Self::Env<'w>,
        fetch: NonNull<Entity>,
        row: usize,
    ) -> Self::Item<'w> {
        // SAFETY: forwarded contract.
        unsafe { env.find(fetch, row) }.is_some()
    }
    term_rows_slice!();
}
// SAFETY: only reads.
unsafe impl<T: Component> ReadOnlyQueryData for Sparse<Has<T>> {}
impl<T: Component> EveryRowData for Sparse<Has<T>> {}

/// The rows of one chunk (or run of rows) of a `Sparse<&mut T>` term, in
/// the chunk forms (`for_each_chunk`): for each row, its `T` (stamped
/// changed), or `None` where the entity has none.
pub struct SparseRowsMut<'w, T> {
    env: SparseEnv<'w, T>,
    fetch: NonNull<Entity>,
    row: usize,
    end: usize,
}

// SAFETY: the rows hand out `&mut T` of distinct entities, each once; `T`
// is `Send`, and the set is reached through `&WorldCore` (`Sync`).
unsafe impl<T: Component> Send for SparseRowsMut<'_, T> {}

impl<'w, T: Component> Iterator for SparseRowsMut<'w, T> {
    type Item = Option<&'w mut T>;

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        if self.row == self.end {
            return None;
        }
        let row = self.row;
        self.row += 1;
        // SAFETY: `slice` made these rows for live rows of the fetched
        // archetype, under the loop's write access to `T`; each row goes
        // out once.
        Some(unsafe { <Sparse<&mut T>>::try_item(&mut self.env, self.fetch, row) })
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.end - self.row;
        (n, Some(n))
    }
}

impl<T: Component> ExactSizeIterator for SparseRowsMut<'_, T> {}
