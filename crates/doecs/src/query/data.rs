//! Query data: what a query hands out per entity and per chunk.
//!
//! A [`QueryData`] type (`&T`, `&mut T`, `Option<&T>`, `Option<&mut T>`,
//! [`Entity`], or a tuple of these) describes three things: whether an
//! archetype matches (and which columns it uses there), a per-archetype
//! `Fetch` of raw column pointers, and how to turn a fetch into one row's
//! item or into one chunk's slices. The chunk form is the
//! `Execute(entityCount, components)` of Jungwan Byun's "Data-oriented Entity
//! Component System": plain slices the compiler can vectorize.

use super::access::{Access, AccessKey, AliasError};
use crate::component::{Component, Components};
use crate::entity::Entity;
use crate::storage::{Archetype, ColumnIndex, TickPtrs};
use crate::tick::Tick;
use std::ptr::NonNull;

/// Something a query can fetch. See the module docs.
///
/// # Safety
/// `access` must record every component `fetch` reads (as a read) or hands out
/// mutably (as a write). `fetch`, `item` and `slice` must only touch the columns
/// found by `match_archetype` for that archetype, and `slice(fetch, start,
/// len)` must cover exactly rows `start..start + len`. `for_each_row`, where
/// overridden, must hand out exactly the items `item` gives for rows
/// `0..len`, in row order, each once. (`written_ticks` should name the
/// ticks of every column handed out mutably; one that misses a column is
/// not unsound, but change filters then miss its writes.)
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

    /// Records what the query reads and writes, or refuses aliasing.
    fn access(access: &mut Access) -> Result<(), AliasError>;

    /// Records the component types every matching archetype has (the ones
    /// fetched without `Option`).
    fn required(with: &mut Vec<std::any::TypeId>) {
        let _ = with;
    }

    /// The archetype's state if it matches, else `None`.
    fn match_archetype(archetype: &Archetype, components: &Components) -> Option<Self::State>;

    /// Pointers to row 0 of the columns of a matching archetype.
    ///
    /// # Safety
    /// `state` must come from `match_archetype` on this archetype.
    unsafe fn fetch(archetype: &Archetype, state: Self::State) -> Self::Fetch;

    /// Row `row` of a fetched archetype.
    ///
    /// # Safety
    /// `row` must be a live row of the fetched archetype; the caller must hold
    /// the access `access` describes for `'w`, and hand out each row's mutable
    /// parts at most once at a time.
    unsafe fn item<'w>(fetch: Self::Fetch, row: usize) -> Self::Item<'w>;

    /// Rows `start..start + len` of a fetched archetype as slices.
    ///
    /// # Safety
    /// The rows must be live; access as for [`QueryData::item`].
    unsafe fn slice<'w>(fetch: Self::Fetch, start: usize, len: usize) -> Self::Slice<'w>;

    /// Calls `f` with the items of rows `0..len` of a fetched archetype, in
    /// row order: what the dense `for_each` runs per archetype. A plain
    /// column walks itself as a slice, the loop shape compilers make
    /// tightest (it measured faster than indexing row by row on the
    /// frag_iter benchmark's many short archetypes).
    ///
    /// # Safety
    /// As [`QueryData::item`] for each of the rows.
    #[inline(always)]
    unsafe fn for_each_row<'w>(fetch: Self::Fetch, len: usize, mut f: impl FnMut(Self::Item<'w>)) {
        for row in 0..len {
            // SAFETY: forwarded contract.
            f(unsafe { Self::item(fetch, row) });
        }
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

/// Cache key marking a read of `T`.
pub struct Read<T>(std::marker::PhantomData<fn() -> T>);
/// Cache key marking a write of `T`.
pub struct Write<T>(std::marker::PhantomData<fn() -> T>);

/// Pointer to row 0 of column `column`, typed.
#[inline]
fn column<T>(archetype: &Archetype, column: ColumnIndex) -> NonNull<T> {
    archetype.column_ptr(column).cast()
}

// SAFETY: reads exactly the column matched for `T`, recorded as a read.
unsafe impl<T: Component> QueryData for &T {
    type Item<'w> = &'w T;
    type Slice<'w> = &'w [T];
    type Fetch = NonNull<T>;
    type State = ColumnIndex;
    type Key = Read<T>;
    fn access(access: &mut Access) -> Result<(), AliasError> {
        access.try_add_read(AccessKey::of::<T>())
    }
    fn required(with: &mut Vec<std::any::TypeId>) {
        with.push(std::any::TypeId::of::<T>());
    }
    fn match_archetype(archetype: &Archetype, components: &Components) -> Option<ColumnIndex> {
        archetype.column_of(components.id_of::<T>()?)
    }
    #[inline]
    unsafe fn fetch(archetype: &Archetype, state: ColumnIndex) -> NonNull<T> {
        column(archetype, state)
    }
    #[inline]
    unsafe fn item<'w>(fetch: NonNull<T>, row: usize) -> &'w T {
        // SAFETY: `row` is live (caller), so the slot holds an initialised `T`.
        unsafe { fetch.add(row).as_ref() }
    }
    #[inline]
    unsafe fn slice<'w>(fetch: NonNull<T>, start: usize, len: usize) -> &'w [T] {
        // SAFETY: the rows are live and contiguous in the column.
        unsafe { std::slice::from_raw_parts(fetch.as_ptr().add(start), len) }
    }
    #[inline(always)]
    unsafe fn for_each_row<'w>(fetch: NonNull<T>, len: usize, f: impl FnMut(&'w T)) {
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
    fn access(access: &mut Access) -> Result<(), AliasError> {
        access.try_add_write(AccessKey::of::<T>())
    }
    fn required(with: &mut Vec<std::any::TypeId>) {
        with.push(std::any::TypeId::of::<T>());
    }
    fn match_archetype(archetype: &Archetype, components: &Components) -> Option<ColumnIndex> {
        archetype.column_of(components.id_of::<T>()?)
    }
    #[inline]
    unsafe fn fetch(archetype: &Archetype, state: ColumnIndex) -> Self::Fetch {
        (column(archetype, state), archetype.column_ticks(state))
    }
    #[inline]
    unsafe fn item<'w>(fetch: Self::Fetch, row: usize) -> &'w mut T {
        // SAFETY: `row` is live and the caller hands each row out once at a time.
        unsafe { fetch.0.add(row).as_mut() }
    }
    #[inline]
    unsafe fn slice<'w>(fetch: Self::Fetch, start: usize, len: usize) -> &'w mut [T] {
        // SAFETY: the rows are live, contiguous, and exclusively ours.
        unsafe { std::slice::from_raw_parts_mut(fetch.0.as_ptr().add(start), len) }
    }
    #[inline(always)]
    unsafe fn for_each_row<'w>(fetch: Self::Fetch, len: usize, f: impl FnMut(&'w mut T)) {
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
    #[inline]
    unsafe fn fetch(archetype: &Archetype, state: Option<ColumnIndex>) -> Option<NonNull<T>> {
        state.map(|c| column(archetype, c))
    }
    #[inline]
    unsafe fn item<'w>(fetch: Option<NonNull<T>>, row: usize) -> Option<&'w T> {
        // SAFETY: as for `&T`.
        fetch.map(|p| unsafe { p.add(row).as_ref() })
    }
    #[inline]
    unsafe fn slice<'w>(fetch: Option<NonNull<T>>, start: usize, len: usize) -> Option<&'w [T]> {
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
    #[inline]
    unsafe fn fetch(archetype: &Archetype, state: Option<ColumnIndex>) -> Self::Fetch {
        state.map(|c| (column(archetype, c), archetype.column_ticks(c)))
    }
    #[inline]
    unsafe fn item<'w>(fetch: Self::Fetch, row: usize) -> Option<&'w mut T> {
        // SAFETY: as for `&mut T`.
        fetch.map(|(p, _)| unsafe { p.add(row).as_mut() })
    }
    #[inline]
    unsafe fn slice<'w>(fetch: Self::Fetch, start: usize, len: usize) -> Option<&'w mut [T]> {
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

    fn access(_: &mut Access) -> Result<(), AliasError> {
        Ok(())
    }
    fn match_archetype(_: &Archetype, _: &Components) -> Option<()> {
        Some(())
    }
    #[inline]
    unsafe fn fetch(archetype: &Archetype, _: ()) -> NonNull<Entity> {
        archetype.entities_ptr()
    }
    #[inline]
    unsafe fn item<'w>(fetch: NonNull<Entity>, row: usize) -> Self::Item<'w> {
        // SAFETY: `row` is live, so its entity slot is initialised.
        unsafe { fetch.add(row).read() }
    }
    #[inline]
    unsafe fn slice<'w>(fetch: NonNull<Entity>, start: usize, len: usize) -> &'w [Entity] {
        // SAFETY: the rows are live.
        unsafe { std::slice::from_raw_parts(fetch.as_ptr().add(start), len) }
    }
}
// SAFETY: only reads.
unsafe impl ReadOnlyQueryData for Entity {}

/// A tuple's `for_each_row`: a one-element tuple walks its element's rows
/// (a slice iterator for a plain column, the tightest loop the compiler
/// makes); a wider one (or `()`) is the trait's row-by-row loop over the
/// tuple's `item`, which the compiler vectorizes across the columns just as
/// well.
macro_rules! tuple_rows {
    ($fetch:ident, $len:ident, $f:ident; $only:ident $only_index:tt) => {
        // SAFETY: forwarded contract of `for_each_row`.
        unsafe { $only::for_each_row($fetch.$only_index, $len, |item| $f((item,))) }
    };
    ($fetch:ident, $len:ident, $f:ident; $($name:ident $index:tt),*) => {
        for row in 0..$len {
            // SAFETY: forwarded contract of `for_each_row`, row by row.
            $f(unsafe { Self::item($fetch, row) });
        }
    };
}

macro_rules! tuple_query {
    ($($name:ident $index:tt),*) => {
        // SAFETY: each element upholds the contract; the tuple's access is their
        // union, built with the aliasing checks.
        #[allow(unused_variables, clippy::unused_unit)]
        unsafe impl<$($name: QueryData),*> QueryData for ($($name,)*) {
            type Item<'w> = ($($name::Item<'w>,)*);
            type Slice<'w> = ($($name::Slice<'w>,)*);
            type Fetch = ($($name::Fetch,)*);
            type State = ($($name::State,)*);
            type Key = ($($name::Key,)*);

            fn access(access: &mut Access) -> Result<(), AliasError> {
                $($name::access(access)?;)*
                Ok(())
            }
            fn required(with: &mut Vec<std::any::TypeId>) {
                $($name::required(with);)*
            }
            fn match_archetype(archetype: &Archetype, components: &Components) -> Option<Self::State> {
                Some(($($name::match_archetype(archetype, components)?,)*))
            }
            #[inline]
            unsafe fn fetch(archetype: &Archetype, state: Self::State) -> Self::Fetch {
                // SAFETY: forwarded contract.
                ($(unsafe { $name::fetch(archetype, state.$index) },)*)
            }
            #[inline]
            unsafe fn item<'w>(fetch: Self::Fetch, row: usize) -> Self::Item<'w> {
                // SAFETY: forwarded contract.
                ($(unsafe { $name::item(fetch.$index, row) },)*)
            }
            #[inline]
            unsafe fn slice<'w>(fetch: Self::Fetch, start: usize, len: usize) -> Self::Slice<'w> {
                // SAFETY: forwarded contract.
                ($(unsafe { $name::slice(fetch.$index, start, len) },)*)
            }
            #[inline(always)]
            unsafe fn for_each_row<'w>(
                fetch: Self::Fetch,
                len: usize,
                mut f: impl FnMut(Self::Item<'w>),
            ) {
                tuple_rows!(fetch, len, f; $($name $index),*)
            }
            #[inline(always)]
            fn written_ticks(fetch: Self::Fetch, out: &mut impl FnMut(TickPtrs)) {
                $($name::written_ticks(fetch.$index, out);)*
            }
        }
        // SAFETY: every element only reads.
        unsafe impl<$($name: ReadOnlyQueryData),*> ReadOnlyQueryData for ($($name,)*) {}
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
