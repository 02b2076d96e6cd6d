//! Query data: what a query hands out per entity and per chunk.
//!
//! A [`QueryData`] type (`&T`, `&mut T`, `Option<&T>`, `Option<&mut T>`,
//! [`Entity`], or a tuple of these) describes three things: whether an
//! archetype matches (and which columns it uses there), a per-archetype
//! `Fetch` of raw column pointers, and how to turn a fetch into one row's
//! item or into one chunk's slices. The chunk form is the
//! `Execute(entityCount, components)` of Jungwan Byun's "Data-oriented Entity
//! Component System": plain slices the compiler can vectorize.
//!
//! Relation terms ([`Up`](super::Up), [`Pairs`](super::Pairs),
//! [`OwnOrInherited`](super::OwnOrInherited)) reach past their row: to the
//! relation's pairs, the entity index and other archetypes' columns. What
//! they need of the world beyond one archetype travels in an `Env`, made
//! once per loop (per piece of a parallel loop) and handed to every
//! `item` call; plain columns have `()` there, which costs nothing. Whether
//! such a term has an item depends on the row (an entity without a
//! parent has no parent's `Height`), so data says whether every row of a
//! matched archetype has an item ([`QueryData::EVERY_ROW`]); where not, the
//! loops ask [`QueryData::try_item`] and skip the rows without one. The
//! `Env` is also where a loop's change window reaches its items
//! ([`Ref`](super::Ref) and [`Mut`](super::Mut) answer `is_changed` by
//! it).

use super::access::{Access, AccessKey, AliasError};
use crate::component::{Component, Components};
use crate::entity::Entity;
use crate::storage::{Archetype, ColumnIndex, TickPtrs};
use crate::tick::{ChangeWindow, Tick};
use crate::world::WorldCore;
use std::ops::Range;
use std::ptr::NonNull;

/// Something a query can fetch. See the module docs.
///
/// # Safety
/// `access` must record every component `fetch` reads (as a read) or hands out
/// mutably (as a write): reads of the visited row as own reads, reads of
/// other entities' rows as related reads
/// ([`Access::add_related_read`]). `fetch`, `item`, `try_item`, `row_matches`
/// and `slice` must only touch the columns found by `match_archetype` for
/// that archetype, besides the related rows they read through their `Env`
/// (never the visited row itself through a relation: a pair pointing at
/// its own source is skipped), and `slice(env, fetch, start, len)` must cover
/// exactly rows `start..start + len`. `try_item` must give `Some` exactly
/// where `row_matches` is true, and always where `EVERY_ROW` holds, and
/// then the item `item` gives. `for_each_row`, where overridden, must hand
/// out exactly the items `try_item` gives for rows `0..len`, in row order,
/// each once. Data that reads related rows must set `READS_RELATED`, and
/// must only read them (what it hands out of another entity's row is
/// shared). A fetch from `fetch_entities(p)` must make `item`, `try_item`
/// and `row_matches` of row `r` read only the entity at `p + r` besides
/// what the `Env` reaches, and give the items the same row of an
/// archetype holding that entity would give. (`written_ticks` should name the ticks of every column
/// handed out mutably; one that misses a column is not unsound, but change
/// filters then miss its writes.)
pub unsafe trait QueryData {
    /// One entity's item.
    type Item<'w>;
    /// One chunk's slices.
    type Slice<'w>;
    /// Raw pointers into one archetype's columns.
    type Fetch: Copy + 'static;
    /// What matching found in one archetype (its columns).
    type State: Copy + Send + Sync + 'static;
    /// A `'static` type unique to this query shape (read vs write included),
    /// used to cache matched archetypes per world.
    type Key: 'static;
    /// What the items need from the world beyond one archetype's columns,
    /// made once per loop by [`QueryData::env`] (see the module docs); `()`
    /// for data that only reads its own row.
    type Env<'w>: Copy;
    /// The same data, read only (`&mut T` becomes `&T`): what a query
    /// hands out through `&self` ([`Query::iter`](crate::Query::iter),
    /// [`Query::get`](crate::Query::get)). It matches the same archetypes
    /// with the same state.
    type ReadOnly: ReadOnlyQueryData<State = Self::State>;

    /// Whether every row of a matching archetype has an item. Relation
    /// terms clear it: the loops then hand out only the rows
    /// [`QueryData::try_item`] gives an item for.
    const EVERY_ROW: bool = true;

    /// Whether the data reads its components' change stamps row by row
    /// ([`Ref`](super::Ref)): its query then asks the world to keep row
    /// stamps for the types [`QueryData::tracked`] names, as a change
    /// filter does.
    const TRACKS: bool = false;

    /// Whether the data reads other entities' rows (through a relation).
    /// Only such data can read what its own query writes (see
    /// [`AliasError::RelatedWrite`]); for the rest the loops check nothing.
    const READS_RELATED: bool = false;

    /// Records what the query reads and writes, or refuses aliasing.
    fn access(access: &mut Access) -> Result<(), AliasError>;

    /// The entities of a sparse set every item needs (a filtering sparse
    /// term's, the smallest where there are several): a loop may walk them
    /// instead of the archetypes when the data also has a
    /// [`QueryData::fetch_entities`] (see [`Sparse`](super::Sparse)).
    #[inline(always)]
    fn sparse_driver<'w>(env: &Self::Env<'w>) -> Option<&'w [Entity]> {
        let _ = env;
        None
    }

    /// A fetch whose row `r` is the entity at `entities + r` instead of an
    /// archetype's row `r`: only data that reads nothing of a row but its
    /// entity (sparse terms, [`Entity`]) has one.
    #[inline(always)]
    fn fetch_entities(entities: NonNull<Entity>) -> Option<Self::Fetch> {
        let _ = entities;
        None
    }

    /// Records the component types every matching archetype has (the ones
    /// fetched without `Option`).
    fn required(with: &mut Vec<std::any::TypeId>) {
        let _ = with;
    }

    /// Component types the data names without reading them ([`Has`](super::Has)):
    /// like a read or a `With` filter, naming a tag the world hides by
    /// default makes the query see the entities with it.
    fn named(out: &mut Vec<std::any::TypeId>) {
        let _ = out;
    }

    /// The component types whose row stamps the data reads (see
    /// [`QueryData::TRACKS`]).
    fn tracked(out: &mut Vec<std::any::TypeId>) {
        let _ = out;
    }

    /// The archetype's state if it matches, else `None`.
    fn match_archetype(archetype: &Archetype, components: &Components) -> Option<Self::State>;

    /// What this loop's items need from `world` (see [`QueryData::Env`]).
    fn env(world: &WorldCore, window: ChangeWindow) -> Self::Env<'_>;

    /// Pointers to row 0 of the columns of a matching archetype.
    ///
    /// # Safety
    /// `state` must come from `match_archetype` on this archetype.
    unsafe fn fetch(archetype: &Archetype, state: Self::State) -> Self::Fetch;

    /// Row `row` of a fetched archetype.
    ///
    /// # Safety
    /// `row` must be a live row of the fetched archetype and `env` made from
    /// the world it lives in, whose layout has not changed since; the
    /// caller must hold the access `access` describes for `'w`, and hand
    /// out each row's mutable parts at most once at a time. Where the
    /// access has a related read of a type it writes
    /// ([`Access::related_overlap`]), at most one item may be alive at a
    /// time (another row's item may hold the row this one reads as a
    /// relative). Where `EVERY_ROW` is false, only for a row
    /// [`QueryData::row_matches`].
    unsafe fn item<'w>(env: &mut Self::Env<'w>, fetch: Self::Fetch, row: usize) -> Self::Item<'w>;

    /// Row `row`'s item, or `None` if the row has none (only where
    /// `EVERY_ROW` is false).
    ///
    /// # Safety
    /// As [`QueryData::item`], for any live row.
    #[inline(always)]
    unsafe fn try_item<'w>(
        env: &mut Self::Env<'w>,
        fetch: Self::Fetch,
        row: usize,
    ) -> Option<Self::Item<'w>> {
        // SAFETY: forwarded contract; with `EVERY_ROW`, every row matches.
        Some(unsafe { Self::item(env, fetch, row) })
    }

    /// Whether row `row` has an item, found without making it (so without
    /// touching any component value): what `count` asks.
    ///
    /// # Safety
    /// `row` must be a live row of the fetched archetype and `env` made from
    /// its world, unchanged since.
    #[inline(always)]
    unsafe fn row_matches(env: &mut Self::Env<'_>, fetch: Self::Fetch, row: usize) -> bool {
        let _ = (env, fetch, row);
        true
    }

    /// Rows `start..start + len` of a fetched archetype as slices.
    ///
    /// # Safety
    /// The rows must be live; access as for [`QueryData::item`].
    unsafe fn slice<'w>(
        env: &mut Self::Env<'w>,
        fetch: Self::Fetch,
        start: usize,
        len: usize,
    ) -> Self::Slice<'w>;

    /// Calls `f` with the items of rows `0..len` of a fetched archetype, in
    /// row order: what the dense `for_each` runs per archetype. A plain
    /// column walks itself as a slice, the loop shape compilers make
    /// tightest (it measured faster than indexing row by row on the
    /// frag_iter benchmark's many short archetypes).
    ///
    /// # Safety
    /// As [`QueryData::try_item`] for each of the rows.
    #[inline(always)]
    unsafe fn for_each_row<'w>(
        env: &mut Self::Env<'w>,
        fetch: Self::Fetch,
        len: usize,
        mut f: impl FnMut(Self::Item<'w>),
    ) {
        // SAFETY: forwarded contract.
        unsafe { items_of_rows::<Self>(env, fetch, 0..len, &mut f) }
    }

    /// Calls `f` with the items of rows `0..len` of a fetch from
    /// [`QueryData::fetch_entities`] over the entities of this data's own
    /// [`QueryData::sparse_driver`], in row order: what `for_each` runs
    /// when it walks a sparse set whose every entity the query matches. A
    /// lone sparse term walks its values as a slice.
    ///
    /// # Safety
    /// As [`QueryData::try_item`] for each of the rows; `fetch` walks the
    /// driver of `env` and `len` is its length.
    #[inline(always)]
    unsafe fn for_each_driven_row<'w>(
        env: &mut Self::Env<'w>,
        fetch: Self::Fetch,
        len: usize,
        mut f: impl FnMut(Self::Item<'w>),
    ) {
        // SAFETY: forwarded contract.
        unsafe { items_of_rows::<Self>(env, fetch, 0..len, &mut f) }
    }

    /// Hands `out` the change ticks of each column the query writes, in
    /// `fetch`'s archetype (none for data that only reads). Every form of
    /// change stamping goes through it: [`QueryData::mark_written`] for a
    /// run of rows, and the stamps a query's plan gathers once for its
    /// whole archetypes.
    #[inline(always)]
    fn written_ticks(fetch: Self::Fetch, out: &mut impl FnMut(TickPtrs)) {
        let _ = (fetch, out);
    }

    /// Stamps rows `start..start + len` of every component the query writes
    /// as changed at `tick`: the loops call it for the rows whose mutable
    /// items (or slices) they hand out.
    ///
    /// # Safety
    /// The rows must be live and the caller must hold the query's access.
    #[inline(always)]
    unsafe fn mark_written(fetch: Self::Fetch, start: usize, len: usize, tick: Tick) {
        Self::written_ticks(fetch, &mut |ticks| {
            // SAFETY: forwarded contract: the rows are live and the columns
            // written are ours.
            unsafe { ticks.stamp_changed(start, len, tick) }
        });
    }
}

/// Query data that only reads, so it can run on a shared `&World`.
///
/// # Safety
/// The implementation must record no writes and hand out no mutable access.
pub unsafe trait ReadOnlyQueryData: QueryData {}

/// Query data with an item for every row of a matched archetype (no
/// relation term): a query of it, with an [`ArchetypeFilter`](super::filter::ArchetypeFilter),
/// knows its length ([`ExactSizeIterator`]).
pub trait EveryRowData: QueryData {}

impl<T: Component> EveryRowData for &T {}
impl<T: Component> EveryRowData for &mut T {}
impl<T: Component> EveryRowData for Option<&T> {}
impl<T: Component> EveryRowData for Option<&mut T> {}
impl EveryRowData for Entity {}

/// Calls `f` with the item of each row of `rows` that has one, in row
/// order: every row's [`QueryData::item`] for data with `EVERY_ROW`, else
/// the rows [`QueryData::try_item`] gives an item for. The branch is on a
/// constant, so plain data keeps its straight loop.
///
/// # Safety
/// As [`QueryData::try_item`] for each of the rows.
#[inline(always)]
pub(crate) unsafe fn items_of_rows<'w, Q: QueryData + ?Sized>(
    env: &mut Q::Env<'w>,
    fetch: Q::Fetch,
    rows: Range<usize>,
    f: &mut impl FnMut(Q::Item<'w>),
) {
    for row in rows {
        if Q::EVERY_ROW {
            // SAFETY: forwarded contract; every row has an item.
            f(unsafe { Q::item(env, fetch, row) });
        } else if let Some(item) = unsafe {
            // SAFETY: forwarded contract.
            Q::try_item(env, fetch, row)
        } {
            f(item);
        }
    }
}

/// Cache key marking a read of `T`.
pub struct Read<T>(std::marker::PhantomData<fn() -> T>);
/// Cache key marking a write of `T`.
pub struct Write<T>(std::marker::PhantomData<fn() -> T>);

/// Pointer to row 0 of column `column`, typed.
#[inline]
fn column<T>(archetype: &Archetype, column: ColumnIndex) -> NonNull<T> {
    archetype.column_ptr(column).cast()
}

/// The column of `T` in `archetype`, if it has one: how every term of one
/// column matches.
#[inline]
pub(super) fn column_of<T: Component>(
    archetype: &Archetype,
    components: &Components,
) -> Option<ColumnIndex> {
    archetype.column_of(components.id_of::<T>()?)
}

/// Row 0 of column `state` and its change ticks: the fetch of every term
/// that writes (or reads the stamps of) one column.
#[inline]
pub(super) fn column_with_ticks<T>(
    archetype: &Archetype,
    state: ColumnIndex,
) -> (NonNull<T>, TickPtrs) {
    (column(archetype, state), archetype.column_ticks(state))
}

// SAFETY: reads exactly the column matched for `T`, recorded as a read.
unsafe impl<T: Component> QueryData for &T {
    type Item<'w> = &'w T;
    type Slice<'w> = &'w [T];
    type Fetch = NonNull<T>;
    type State = ColumnIndex;
    type Key = Read<T>;
    type Env<'w> = ();
    type ReadOnly = Self;
    fn access(access: &mut Access) -> Result<(), AliasError> {
        access.try_add_read(AccessKey::of::<T>())
    }
    fn required(with: &mut Vec<std::any::TypeId>) {
        with.push(std::any::TypeId::of::<T>());
    }
    fn match_archetype(archetype: &Archetype, components: &Components) -> Option<ColumnIndex> {
        column_of::<T>(archetype, components)
    }
    #[inline(always)]
    fn env(_: &WorldCore, _: ChangeWindow) {}
    #[inline]
    unsafe fn fetch(archetype: &Archetype, state: ColumnIndex) -> NonNull<T> {
        column(archetype, state)
    }
    #[inline]
    unsafe fn item<'w>(_: &mut (), fetch: NonNull<T>, row: usize) -> &'w T {
        // SAFETY: `row` is live (caller), so the slot holds an initialised `T`.
        unsafe { fetch.add(row).as_ref() }
    }
    #[inline]
    unsafe fn slice<'w>(_: &mut (), fetch: NonNull<T>, start: usize, len: usize) -> &'w [T] {
        // SAFETY: the rows are live and contiguous in the column.
        unsafe { std::slice::from_raw_parts(fetch.as_ptr().add(start), len) }
    }
    #[inline(always)]
    unsafe fn for_each_row<'w>(_: &mut (), fetch: NonNull<T>, len: usize, f: impl FnMut(&'w T)) {
        // SAFETY: forwarded contract: the rows are live and contiguous.
        unsafe { std::slice::from_raw_parts(fetch.as_ptr(), len) }
            .iter()
            .for_each(f);
    }
}
// SAFETY: `&T` only reads.
unsafe impl<T: Component> ReadOnlyQueryData for &T {}

// SAFETY: writes exactly the column matched for `T` (values and change
// ticks), recorded as a write.
unsafe impl<T: Component> QueryData for &mut T {
    type Item<'w> = &'w mut T;
    type Slice<'w> = &'w mut [T];
    type Fetch = (NonNull<T>, TickPtrs);
    type State = ColumnIndex;
    type Key = Write<T>;
    type Env<'w> = ();
    type ReadOnly = &'static T;
    fn access(access: &mut Access) -> Result<(), AliasError> {
        access.try_add_write(AccessKey::of::<T>())
    }
    fn required(with: &mut Vec<std::any::TypeId>) {
        with.push(std::any::TypeId::of::<T>());
    }
    fn match_archetype(archetype: &Archetype, components: &Components) -> Option<ColumnIndex> {
        column_of::<T>(archetype, components)
    }
    #[inline(always)]
    fn env(_: &WorldCore, _: ChangeWindow) {}
    #[inline]
    unsafe fn fetch(archetype: &Archetype, state: ColumnIndex) -> Self::Fetch {
        column_with_ticks(archetype, state)
    }
    #[inline]
    unsafe fn item<'w>(_: &mut (), fetch: Self::Fetch, row: usize) -> &'w mut T {
        // SAFETY: `row` is live and the caller hands each row out once at a time.
        unsafe { fetch.0.add(row).as_mut() }
    }
    #[inline]
    unsafe fn slice<'w>(_: &mut (), fetch: Self::Fetch, start: usize, len: usize) -> &'w mut [T] {
        // SAFETY: the rows are live, contiguous, and exclusively ours.
        unsafe { std::slice::from_raw_parts_mut(fetch.0.as_ptr().add(start), len) }
    }
    #[inline(always)]
    unsafe fn for_each_row<'w>(
        _: &mut (),
        fetch: Self::Fetch,
        len: usize,
        f: impl FnMut(&'w mut T),
    ) {
        // SAFETY: forwarded contract: the rows are live, contiguous, and ours.
        unsafe { std::slice::from_raw_parts_mut(fetch.0.as_ptr(), len) }
            .iter_mut()
            .for_each(f);
    }
    #[inline(always)]
    fn written_ticks(fetch: Self::Fetch, out: &mut impl FnMut(TickPtrs)) {
        out(fetch.1);
    }
}

// SAFETY: reads the column if present, recorded as a read.
unsafe impl<T: Component> QueryData for Option<&T> {
    type Item<'w> = Option<&'w T>;
    type Slice<'w> = Option<&'w [T]>;
    type Fetch = Option<NonNull<T>>;
    type State = Option<ColumnIndex>;
    type Key = Option<Read<T>>;
    type Env<'w> = ();
    type ReadOnly = Self;

    fn access(access: &mut Access) -> Result<(), AliasError> {
        access.try_add_read(AccessKey::of::<T>())
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
    #[inline(always)]
    fn env(_: &WorldCore, _: ChangeWindow) {}
    #[inline]
    unsafe fn fetch(archetype: &Archetype, state: Option<ColumnIndex>) -> Option<NonNull<T>> {
        state.map(|c| column(archetype, c))
    }
    #[inline]
    unsafe fn item<'w>(_: &mut (), fetch: Option<NonNull<T>>, row: usize) -> Option<&'w T> {
        // SAFETY: as for `&T`.
        fetch.map(|p| unsafe { p.add(row).as_ref() })
    }
    #[inline]
    unsafe fn slice<'w>(
        _: &mut (),
        fetch: Option<NonNull<T>>,
        start: usize,
        len: usize,
    ) -> Option<&'w [T]> {
        // SAFETY: as for `&T`.
        fetch.map(|p| unsafe { std::slice::from_raw_parts(p.as_ptr().add(start), len) })
    }
}
// SAFETY: only reads.
unsafe impl<T: Component> ReadOnlyQueryData for Option<&T> {}

// SAFETY: writes the column if present (values and change ticks), recorded
// as a write.
unsafe impl<T: Component> QueryData for Option<&mut T> {
    type Item<'w> = Option<&'w mut T>;
    type Slice<'w> = Option<&'w mut [T]>;
    type Fetch = Option<(NonNull<T>, TickPtrs)>;
    type State = Option<ColumnIndex>;
    type Key = Option<Write<T>>;
    type Env<'w> = ();
    type ReadOnly = Option<&'static T>;

    fn access(access: &mut Access) -> Result<(), AliasError> {
        access.try_add_write(AccessKey::of::<T>())
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
    #[inline(always)]
    fn env(_: &WorldCore, _: ChangeWindow) {}
    #[inline]
    unsafe fn fetch(archetype: &Archetype, state: Option<ColumnIndex>) -> Self::Fetch {
        state.map(|c| (column(archetype, c), archetype.column_ticks(c)))
    }
    #[inline]
    unsafe fn item<'w>(_: &mut (), fetch: Self::Fetch, row: usize) -> Option<&'w mut T> {
        // SAFETY: as for `&mut T`.
        fetch.map(|(p, _)| unsafe { p.add(row).as_mut() })
    }
    #[inline]
    unsafe fn slice<'w>(
        _: &mut (),
        fetch: Self::Fetch,
        start: usize,
        len: usize,
    ) -> Option<&'w mut [T]> {
        // SAFETY: as for `&mut T`.
        fetch.map(|(p, _)| unsafe { std::slice::from_raw_parts_mut(p.as_ptr().add(start), len) })
    }
    #[inline(always)]
    fn written_ticks(fetch: Self::Fetch, out: &mut impl FnMut(TickPtrs)) {
        if let Some((_, ticks)) = fetch {
            out(ticks);
        }
    }
}

// SAFETY: reads only the chunk's entity array, which no query writes.
unsafe impl QueryData for Entity {
    type Item<'w> = Entity;
    type Slice<'w> = &'w [Entity];
    type Fetch = NonNull<Entity>;
    type State = ();
    type Key = Entity;
    type Env<'w> = ();
    type ReadOnly = Self;

    fn access(_: &mut Access) -> Result<(), AliasError> {
        Ok(())
    }
    fn match_archetype(_: &Archetype, _: &Components) -> Option<()> {
        Some(())
    }
    #[inline(always)]
    fn env(_: &WorldCore, _: ChangeWindow) {}
    #[inline]
    unsafe fn fetch(archetype: &Archetype, _: ()) -> NonNull<Entity> {
        archetype.entities_ptr()
    }
    #[inline(always)]
    fn fetch_entities(entities: NonNull<Entity>) -> Option<NonNull<Entity>> {
        Some(entities)
    }
    #[inline]
    unsafe fn item<'w>(_: &mut (), fetch: NonNull<Entity>, row: usize) -> Self::Item<'w> {
        // SAFETY: `row` is live, so its entity slot is initialised.
        unsafe { fetch.add(row).read() }
    }
    #[inline]
    unsafe fn slice<'w>(
        _: &mut (),
        fetch: NonNull<Entity>,
        start: usize,
        len: usize,
    ) -> &'w [Entity] {
        // SAFETY: the rows are live.
        unsafe { std::slice::from_raw_parts(fetch.as_ptr().add(start), len) }
    }
}
// SAFETY: only reads.
unsafe impl ReadOnlyQueryData for Entity {}

/// A tuple's `for_each_row`: a one-element tuple walks its element's rows
/// (a slice iterator for a plain column, the tightest loop the compiler
/// makes); a wider one (or `()`) is the row-by-row loop over the tuple's
/// `item` (or `try_item`, where some element decides per row), which the
/// compiler vectorizes across the columns just as well.
macro_rules! tuple_rows {
    ($env:ident, $fetch:ident, $len:ident, $f:ident; $only:ident $only_index:tt) => {
        // SAFETY: forwarded contract of `for_each_row`.
        unsafe {
            $only::for_each_row(&mut $env.$only_index, $fetch.$only_index, $len, |item| {
                $f((item,))
            })
        }
    };
    ($env:ident, $fetch:ident, $len:ident, $f:ident; $($name:ident $index:tt),*) => {
        // SAFETY: forwarded contract of `for_each_row`, row by row.
        unsafe { items_of_rows::<Self>($env, $fetch, 0..$len, &mut $f) }
    };
}

/// A tuple's `for_each_driven_row`: a one-element tuple walks its
/// element's (a lone sparse term's values as a slice), a wider one goes
/// row by row.
macro_rules! tuple_driven_rows {
    ($env:ident, $fetch:ident, $len:ident, $f:ident; $only:ident $only_index:tt) => {
        // SAFETY: forwarded contract of `for_each_driven_row`.
        unsafe {
            $only::for_each_driven_row(&mut $env.$only_index, $fetch.$only_index, $len, |item| {
                $f((item,))
            })
        }
    };
    ($env:ident, $fetch:ident, $len:ident, $f:ident; $($name:ident $index:tt),*) => {
        // SAFETY: forwarded contract, row by row.
        unsafe { items_of_rows::<Self>($env, $fetch, 0..$len, &mut $f) }
    };
}

macro_rules! tuple_query {
    ($($name:ident $index:tt),*) => {
        // SAFETY: each element upholds the contract; the tuple's access is their
        // union, built with the aliasing checks; it has an item where every
        // element has one.
        #[allow(unused_variables, clippy::unused_unit)]
        unsafe impl<$($name: QueryData),*> QueryData for ($($name,)*) {
            type Item<'w> = ($($name::Item<'w>,)*);
            type Slice<'w> = ($($name::Slice<'w>,)*);
            type Fetch = ($($name::Fetch,)*);
            type State = ($($name::State,)*);
            type Key = ($($name::Key,)*);
            type Env<'w> = ($($name::Env<'w>,)*);
            type ReadOnly = ($($name::ReadOnly,)*);
            const EVERY_ROW: bool = true $(&& $name::EVERY_ROW)*;
            const READS_RELATED: bool = false $(|| $name::READS_RELATED)*;
            const TRACKS: bool = false $(|| $name::TRACKS)*;

            fn access(access: &mut Access) -> Result<(), AliasError> {
                $($name::access(access)?;)*
                Ok(())
            }
            fn required(with: &mut Vec<std::any::TypeId>) {
                $($name::required(with);)*
            }
            fn tracked(out: &mut Vec<std::any::TypeId>) {
                $($name::tracked(out);)*
            }
            fn named(out: &mut Vec<std::any::TypeId>) {
                $($name::named(out);)*
            }
            #[inline(always)]
            fn sparse_driver<'w>(env: &Self::Env<'w>) -> Option<&'w [Entity]> {
                #[allow(unused_mut)]
                let mut best: Option<&'w [Entity]> = None;
                $(
                    if let Some(d) = $name::sparse_driver(&env.$index) {
                        if best.is_none_or(|b| d.len() < b.len()) {
                            best = Some(d);
                        }
                    }
                )*
                best
            }
            #[inline(always)]
            fn fetch_entities(entities: NonNull<Entity>) -> Option<Self::Fetch> {
                Some(($($name::fetch_entities(entities)?,)*))
            }
            fn match_archetype(archetype: &Archetype, components: &Components) -> Option<Self::State> {
                Some(($($name::match_archetype(archetype, components)?,)*))
            }
            #[inline(always)]
            fn env(world: &WorldCore, window: ChangeWindow) -> Self::Env<'_> {
                ($($name::env(world, window),)*)
            }
            #[inline]
            unsafe fn fetch(archetype: &Archetype, state: Self::State) -> Self::Fetch {
                // SAFETY: forwarded contract.
                ($(unsafe { $name::fetch(archetype, state.$index) },)*)
            }
            #[inline]
            unsafe fn item<'w>(env: &mut Self::Env<'w>, fetch: Self::Fetch, row: usize) -> Self::Item<'w> {
                // SAFETY: forwarded contract.
                ($(unsafe { $name::item(&mut env.$index, fetch.$index, row) },)*)
            }
            #[inline]
            unsafe fn try_item<'w>(
                env: &mut Self::Env<'w>,
                fetch: Self::Fetch,
                row: usize,
            ) -> Option<Self::Item<'w>> {
                // SAFETY: forwarded contract.
                Some(($(unsafe { $name::try_item(&mut env.$index, fetch.$index, row) }?,)*))
            }
            #[inline]
            unsafe fn row_matches(env: &mut Self::Env<'_>, fetch: Self::Fetch, row: usize) -> bool {
                // SAFETY: forwarded contract.
                true $(&& unsafe { $name::row_matches(&mut env.$index, fetch.$index, row) })*
            }
            #[inline]
            unsafe fn slice<'w>(
                env: &mut Self::Env<'w>,
                fetch: Self::Fetch,
                start: usize,
                len: usize,
            ) -> Self::Slice<'w> {
                // SAFETY: forwarded contract.
                ($(unsafe { $name::slice(&mut env.$index, fetch.$index, start, len) },)*)
            }
            #[inline(always)]
            unsafe fn for_each_row<'w>(
                env: &mut Self::Env<'w>,
                fetch: Self::Fetch,
                len: usize,
                mut f: impl FnMut(Self::Item<'w>),
            ) {
                tuple_rows!(env, fetch, len, f; $($name $index),*)
            }
            #[inline(always)]
            unsafe fn for_each_driven_row<'w>(
                env: &mut Self::Env<'w>,
                fetch: Self::Fetch,
                len: usize,
                mut f: impl FnMut(Self::Item<'w>),
            ) {
                tuple_driven_rows!(env, fetch, len, f; $($name $index),*)
            }
            #[inline(always)]
            fn written_ticks(fetch: Self::Fetch, out: &mut impl FnMut(TickPtrs)) {
                $($name::written_ticks(fetch.$index, out);)*
            }
        }
        // SAFETY: every element only reads.
        unsafe impl<$($name: ReadOnlyQueryData),*> ReadOnlyQueryData for ($($name,)*) {}
        impl<$($name: EveryRowData),*> EveryRowData for ($($name,)*) {}
    };
}

tuple_query!();
tuple_query!(A 0);
tuple_query!(A 0, B 1);
tuple_query!(A 0, B 1, C 2);
tuple_query!(A 0, B 1, C 2, D 3);
tuple_query!(A 0, B 1, C 2, D 3, E 4);
tuple_query!(A 0, B 1, C 2, D 3, E 4, F 5);
tuple_query!(A 0, B 1, C 2, D 3, E 4, F 5, G 6);
tuple_query!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7);
tuple_query!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8);
tuple_query!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9);
