//! Query data: what a query hands out per entity and per chunk.
//!
//! A [`QueryData`] type (`&T`, `&mut T`, `Option<&T>`, `Option<&mut T>`,
//! [`Entity`], or a tuple of these) describes three things: whether an
//! archetype matches (and which columns it uses there), a per-chunk `Fetch` of
//! raw column pointers, and how to turn a fetch into one row's item or into
//! the whole chunk's slices. The chunk form is seed 002's
//! `Execute(entityCount, components)`: plain slices the compiler can vectorize.

use super::access::{Access, AccessKey};
use crate::component::{Component, Components};
use crate::entity::Entity;
use crate::storage::{Archetype, ColumnIndex};
use std::ptr::NonNull;

/// Something a query can fetch. See the module docs.
///
/// # Safety
/// `access` must record every component `fetch` reads (as a read) or hands out
/// mutably (as a write). `fetch`, `item` and `slice` must only touch the columns
/// found by `match_archetype` for that archetype, and `slice(fetch, len)` must
/// cover exactly rows `0..len`.
pub unsafe trait QueryData {
    /// One entity's item.
    type Item<'w>;
    /// One chunk's slices.
    type Slice<'w>;
    /// Raw pointers into one chunk.
    type Fetch: Copy;
    /// What matching found in one archetype (its columns).
    type State: Copy + Send + Sync + 'static;
    /// A `'static` type unique to this query shape (read vs write included),
    /// used to cache matched archetypes per world.
    type Key: 'static;

    /// Records what the query reads and writes. Panics on aliasing.
    fn access(access: &mut Access);

    /// The archetype's state if it matches, else `None`.
    fn match_archetype(archetype: &Archetype, components: &Components) -> Option<Self::State>;

    /// Pointers into chunk `chunk` of a matching archetype.
    ///
    /// # Safety
    /// `state` must come from `match_archetype` on this archetype, and `chunk`
    /// must be a chunk in use.
    unsafe fn fetch(archetype: &Archetype, state: Self::State, chunk: usize) -> Self::Fetch;

    /// Row `row` of a fetched chunk.
    ///
    /// # Safety
    /// `row` must be a live row of the fetched chunk; the caller must hold the
    /// access `access` describes for `'w`, and hand out each row's mutable
    /// parts at most once at a time.
    unsafe fn item<'w>(fetch: Self::Fetch, row: usize) -> Self::Item<'w>;

    /// Hints the CPU to start loading the first rows of a fetched chunk. The
    /// loops call it for the next chunk before walking the current one, so the
    /// short column runs of 16 KiB chunks do not each start with cache misses.
    #[inline]
    fn prefetch(_fetch: Self::Fetch) {}

    /// Rows `0..len` of a fetched chunk as slices.
    ///
    /// # Safety
    /// `len` must be the chunk's length; access as for [`QueryData::item`].
    unsafe fn slice<'w>(fetch: Self::Fetch, len: usize) -> Self::Slice<'w>;
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

/// Prefetches the first four cache lines at `ptr`. A hint only: it never
/// faults and never reads memory, whatever the address (and it is compiled out
/// under Miri and off x86_64).
#[inline(always)]
fn prefetch_lines(ptr: *const i8) {
    #[cfg(all(target_arch = "x86_64", not(miri)))]
    for line in 0..4 {
        // SAFETY: `_mm_prefetch` is a cache hint with no memory access, valid
        // for any address; `wrapping_add` keeps the arithmetic defined.
        unsafe {
            std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(
                ptr.wrapping_add(line * 64),
            )
        };
    }
    let _ = ptr;
}

/// Pointer to column `column` of `chunk`, typed.
fn column<T>(archetype: &Archetype, column: ColumnIndex, chunk: usize) -> NonNull<T> {
    archetype.column_ptr(chunk, column).cast()
}

// SAFETY: reads exactly the column matched for `T`, recorded as a read.
unsafe impl<T: Component> QueryData for &T {
    type Item<'w> = &'w T;
    type Slice<'w> = &'w [T];
    type Fetch = NonNull<T>;
    type State = ColumnIndex;
    type Key = Read<T>;
    #[inline]
    fn prefetch(fetch: NonNull<T>) {
        prefetch_lines(fetch.as_ptr().cast());
    }

    fn access(access: &mut Access) {
        access.add_read(AccessKey::of::<T>());
    }
    fn match_archetype(archetype: &Archetype, components: &Components) -> Option<ColumnIndex> {
        archetype.column_of(components.id_of::<T>()?)
    }
    #[inline]
    unsafe fn fetch(archetype: &Archetype, state: ColumnIndex, chunk: usize) -> NonNull<T> {
        column(archetype, state, chunk)
    }
    #[inline]
    unsafe fn item<'w>(fetch: NonNull<T>, row: usize) -> &'w T {
        // SAFETY: `row` is live (caller), so the slot holds an initialised `T`.
        unsafe { fetch.add(row).as_ref() }
    }
    #[inline]
    unsafe fn slice<'w>(fetch: NonNull<T>, len: usize) -> &'w [T] {
        // SAFETY: rows `0..len` are live and contiguous in the column.
        unsafe { std::slice::from_raw_parts(fetch.as_ptr(), len) }
    }
}
// SAFETY: `&T` only reads.
unsafe impl<T: Component> ReadOnlyQueryData for &T {}

// SAFETY: writes exactly the column matched for `T`, recorded as a write.
unsafe impl<T: Component> QueryData for &mut T {
    type Item<'w> = &'w mut T;
    type Slice<'w> = &'w mut [T];
    type Fetch = NonNull<T>;
    type State = ColumnIndex;
    type Key = Write<T>;
    #[inline]
    fn prefetch(fetch: NonNull<T>) {
        prefetch_lines(fetch.as_ptr().cast());
    }

    fn access(access: &mut Access) {
        access.add_write(AccessKey::of::<T>());
    }
    fn match_archetype(archetype: &Archetype, components: &Components) -> Option<ColumnIndex> {
        archetype.column_of(components.id_of::<T>()?)
    }
    #[inline]
    unsafe fn fetch(archetype: &Archetype, state: ColumnIndex, chunk: usize) -> NonNull<T> {
        column(archetype, state, chunk)
    }
    #[inline]
    unsafe fn item<'w>(fetch: NonNull<T>, row: usize) -> &'w mut T {
        // SAFETY: `row` is live and the caller hands each row out once at a time.
        unsafe { fetch.add(row).as_mut() }
    }
    #[inline]
    unsafe fn slice<'w>(fetch: NonNull<T>, len: usize) -> &'w mut [T] {
        // SAFETY: rows `0..len` are live, contiguous, and exclusively ours.
        unsafe { std::slice::from_raw_parts_mut(fetch.as_ptr(), len) }
    }
}

// SAFETY: reads the column if present, recorded as a read.
unsafe impl<T: Component> QueryData for Option<&T> {
    type Item<'w> = Option<&'w T>;
    type Slice<'w> = Option<&'w [T]>;
    type Fetch = Option<NonNull<T>>;
    type State = Option<ColumnIndex>;
    type Key = Option<Read<T>>;

    fn access(access: &mut Access) {
        access.add_read(AccessKey::of::<T>());
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
    unsafe fn fetch(
        archetype: &Archetype,
        state: Option<ColumnIndex>,
        chunk: usize,
    ) -> Option<NonNull<T>> {
        state.map(|c| column(archetype, c, chunk))
    }
    #[inline]
    unsafe fn item<'w>(fetch: Option<NonNull<T>>, row: usize) -> Option<&'w T> {
        // SAFETY: as for `&T`.
        fetch.map(|p| unsafe { p.add(row).as_ref() })
    }
    #[inline]
    unsafe fn slice<'w>(fetch: Option<NonNull<T>>, len: usize) -> Option<&'w [T]> {
        // SAFETY: as for `&T`.
        fetch.map(|p| unsafe { std::slice::from_raw_parts(p.as_ptr(), len) })
    }
}
// SAFETY: only reads.
unsafe impl<T: Component> ReadOnlyQueryData for Option<&T> {}

// SAFETY: writes the column if present, recorded as a write.
unsafe impl<T: Component> QueryData for Option<&mut T> {
    type Item<'w> = Option<&'w mut T>;
    type Slice<'w> = Option<&'w mut [T]>;
    type Fetch = Option<NonNull<T>>;
    type State = Option<ColumnIndex>;
    type Key = Option<Write<T>>;

    fn access(access: &mut Access) {
        access.add_write(AccessKey::of::<T>());
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
    unsafe fn fetch(
        archetype: &Archetype,
        state: Option<ColumnIndex>,
        chunk: usize,
    ) -> Option<NonNull<T>> {
        state.map(|c| column(archetype, c, chunk))
    }
    #[inline]
    unsafe fn item<'w>(fetch: Option<NonNull<T>>, row: usize) -> Option<&'w mut T> {
        // SAFETY: as for `&mut T`.
        fetch.map(|p| unsafe { p.add(row).as_mut() })
    }
    #[inline]
    unsafe fn slice<'w>(fetch: Option<NonNull<T>>, len: usize) -> Option<&'w mut [T]> {
        // SAFETY: as for `&mut T`.
        fetch.map(|p| unsafe { std::slice::from_raw_parts_mut(p.as_ptr(), len) })
    }
}

// SAFETY: reads only the chunk's entity array, which no query writes.
unsafe impl QueryData for Entity {
    type Item<'w> = Entity;
    type Slice<'w> = &'w [Entity];
    type Fetch = NonNull<Entity>;
    type State = ();
    type Key = Entity;

    fn access(_: &mut Access) {}
    fn match_archetype(_: &Archetype, _: &Components) -> Option<()> {
        Some(())
    }
    #[inline]
    unsafe fn fetch(archetype: &Archetype, _: (), chunk: usize) -> NonNull<Entity> {
        archetype.entities_ptr(chunk)
    }
    #[inline]
    unsafe fn item<'w>(fetch: NonNull<Entity>, row: usize) -> Self::Item<'w> {
        // SAFETY: `row` is live, so its entity slot is initialised.
        unsafe { fetch.add(row).read() }
    }
    #[inline]
    unsafe fn slice<'w>(fetch: NonNull<Entity>, len: usize) -> &'w [Entity] {
        // SAFETY: rows `0..len` are live.
        unsafe { std::slice::from_raw_parts(fetch.as_ptr(), len) }
    }
}
// SAFETY: only reads.
unsafe impl ReadOnlyQueryData for Entity {}

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

            fn access(access: &mut Access) {
                $($name::access(access);)*
            }
            fn match_archetype(archetype: &Archetype, components: &Components) -> Option<Self::State> {
                Some(($($name::match_archetype(archetype, components)?,)*))
            }
            #[inline]
            unsafe fn fetch(archetype: &Archetype, state: Self::State, chunk: usize) -> Self::Fetch {
                // SAFETY: forwarded contract.
                ($(unsafe { $name::fetch(archetype, state.$index, chunk) },)*)
            }
            #[inline]
            fn prefetch(fetch: Self::Fetch) {
                $($name::prefetch(fetch.$index);)*
            }
            #[inline]
            unsafe fn item<'w>(fetch: Self::Fetch, row: usize) -> Self::Item<'w> {
                // SAFETY: forwarded contract.
                ($(unsafe { $name::item(fetch.$index, row) },)*)
            }
            #[inline]
            unsafe fn slice<'w>(fetch: Self::Fetch, len: usize) -> Self::Slice<'w> {
                // SAFETY: forwarded contract.
                ($(unsafe { $name::slice(fetch.$index, len) },)*)
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
