//! Query filters: `With<T>`, `Without<T>`, `Or<(..)>`, the change filters
//! [`Changed<T>`](super::Changed) and [`Added<T>`](super::Added), and tuples
//! of them (all must pass).
//!
//! A filter works at up to three levels. Every filter decides which
//! archetypes match; that is checked once per archetype, when a query's
//! cache learns of it, and for `With`, `Without` and `Or`s of them it is
//! all there is: such filters are *dense* (`DENSE`), every row of a
//! matching archetype passes, and loops over them never look at rows. A
//! change filter also looks at chunks, skipping every chunk whose change
//! tick is outside the reader's window, and then at the rows of the chunks
//! it keeps.
//!
//! Filters also say which components they require or exclude, so the
//! schedule can tell that `Query<&mut A, With<B>>` and `Query<&A,
//! Without<B>>` never touch the same entity, and which components' ticks
//! they read, so a change filter never runs beside a writer of what it
//! watches.

use super::access::{Access, FilteredAccess};
use crate::component::{Component, Components};
use crate::storage::Archetype;
use crate::tick::ChangeWindow;
use std::any::TypeId;
use std::marker::PhantomData;

/// Decides which entities a query visits. See the module docs.
///
/// # Safety
/// `filter_reads` must record every component whose ticks `fetch`,
/// `chunk_passes` and `row_passes` read; `fetch` must only be called with a
/// state `filter_state` made for that archetype, and the checks must only
/// read through the fetch.
pub unsafe trait QueryFilter {
    /// What the filter keeps per matching archetype (its columns).
    type State: Copy + Send + Sync + 'static;
    /// What the row-level checks read, for one archetype.
    type Fetch: Copy + 'static;
    /// Whether every row of a matching archetype passes: no change filter
    /// inside.
    const DENSE: bool;

    /// Whether `archetype` passes.
    fn matches(archetype: &Archetype, components: &Components) -> bool;

    /// The state for a matching archetype.
    fn filter_state(archetype: &Archetype, components: &Components) -> Self::State;

    /// Records the component types every passing archetype has (`with`) and
    /// the ones no passing archetype has (`without`). Leaving them out is
    /// always correct, only less precise.
    fn filter_access(access: &mut FilteredAccess) {
        let _ = access;
    }

    /// Records the components whose change ticks the filter reads.
    fn filter_reads(access: &mut Access) {
        let _ = access;
    }

    /// Records every component type the filter looks at, in any branch:
    /// what [`QueryFilter::filter_access`] and
    /// [`QueryFilter::filter_reads`] record, and also the types of
    /// branches that record nothing because they may fail (an [`Or`]'s).
    /// A query refuses a filter naming a type stored sparse, which no
    /// archetype filter can see.
    fn named(out: &mut Vec<TypeId>) {
        let mut filtered = FilteredAccess::default();
        Self::filter_access(&mut filtered);
        let mut read = Access::default();
        Self::filter_reads(&mut read);
        out.extend(filtered.with);
        out.extend(filtered.without);
        out.extend(read.reads().iter().map(|k| k.type_id));
    }

    /// Records the Rust types whose row stamps the filter needs.
    fn tracked(types: &mut Vec<TypeId>) {
        let _ = types;
    }

    /// The row-level pointers of a matching archetype.
    ///
    /// # Safety
    /// `state` must come from `filter_state` on this archetype.
    unsafe fn fetch(archetype: &Archetype, state: Self::State) -> Self::Fetch;

    /// Whether any row of chunk `chunk` may pass.
    ///
    /// # Safety
    /// The chunk must hold live rows of the fetched archetype, and no writer
    /// of the components the filter reads may run meanwhile.
    unsafe fn chunk_passes(fetch: Self::Fetch, chunk: usize, window: ChangeWindow) -> bool;

    /// Whether live row `row` passes.
    ///
    /// # Safety
    /// As [`QueryFilter::chunk_passes`], for the row.
    unsafe fn row_passes(fetch: Self::Fetch, row: usize, window: ChangeWindow) -> bool;

    /// The first row in `from..to` that passes, or `to`. Filters with a
    /// faster scan than row by row override it.
    ///
    /// # Safety
    /// As [`QueryFilter::chunk_passes`], for the rows (all in one chunk).
    #[inline(always)]
    unsafe fn first_passing(
        fetch: Self::Fetch,
        from: usize,
        to: usize,
        window: ChangeWindow,
    ) -> usize {
        // SAFETY: forwarded contract.
        (from..to)
            .find(|&r| unsafe { Self::row_passes(fetch, r, window) })
            .unwrap_or(to)
    }

    /// The first row in `from..to` that fails, or `to`.
    ///
    /// # Safety
    /// As [`QueryFilter::first_passing`].
    #[inline(always)]
    unsafe fn first_failing(
        fetch: Self::Fetch,
        from: usize,
        to: usize,
        window: ChangeWindow,
    ) -> usize {
        // SAFETY: forwarded contract.
        (from..to)
            .find(|&r| !unsafe { Self::row_passes(fetch, r, window) })
            .unwrap_or(to)
    }
}

/// Passes archetypes that have `T` (without fetching it).
pub struct With<T>(PhantomData<fn() -> T>);

/// Passes archetypes that lack `T`.
pub struct Without<T>(PhantomData<fn() -> T>);

/// Passes entities that pass any of its filters (a tuple of up to 8).
///
/// ```
/// use doecs::{Or, With, World};
/// struct A;
/// struct B;
/// let mut world = World::new();
/// world.spawn((A, 1u8));
/// world.spawn((B, 2u8));
/// world.spawn((3u8,));
/// let sum: u8 = world
///     .query_filtered::<&u8, Or<(With<A>, With<B>)>>()
///     .iter()
///     .sum();
/// assert_eq!(sum, 3);
/// ```
pub struct Or<T>(PhantomData<fn() -> T>);

/// The row-level parts of an archetype-only filter: every row passes.
macro_rules! dense_filter {
    () => {
        type State = ();
        type Fetch = ();
        const DENSE: bool = true;
        fn filter_state(_: &Archetype, _: &Components) {}
        #[inline(always)]
        unsafe fn fetch(_: &Archetype, _: ()) {}
        #[inline(always)]
        unsafe fn chunk_passes(_: (), _: usize, _: ChangeWindow) -> bool {
            true
        }
        #[inline(always)]
        unsafe fn row_passes(_: (), _: usize, _: ChangeWindow) -> bool {
            true
        }
    };
}

// SAFETY: reads no ticks; every row of a matching archetype passes.
unsafe impl<T: Component> QueryFilter for With<T> {
    dense_filter!();
    fn matches(archetype: &Archetype, components: &Components) -> bool {
        components.id_of::<T>().is_some_and(|id| archetype.has(id))
    }
    fn filter_access(access: &mut FilteredAccess) {
        access.with.push(TypeId::of::<T>());
    }
}

// SAFETY: reads no ticks; every row of a matching archetype passes.
unsafe impl<T: Component> QueryFilter for Without<T> {
    dense_filter!();
    fn matches(archetype: &Archetype, components: &Components) -> bool {
        !components.id_of::<T>().is_some_and(|id| archetype.has(id))
    }
    fn filter_access(access: &mut FilteredAccess) {
        access.without.push(TypeId::of::<T>());
    }
}

macro_rules! tuple_filter {
    ($($name:ident $index:tt),*) => {
        // SAFETY: each element upholds the contract; the tuple records the
        // union of their reads and reads only through their fetches.
        #[allow(unused_variables, clippy::unused_unit)]
        unsafe impl<$($name: QueryFilter),*> QueryFilter for ($($name,)*) {
            type State = ($($name::State,)*);
            type Fetch = ($($name::Fetch,)*);
            const DENSE: bool = true $(&& $name::DENSE)*;
            fn matches(archetype: &Archetype, components: &Components) -> bool {
                true $(&& $name::matches(archetype, components))*
            }
            fn filter_state(archetype: &Archetype, components: &Components) -> Self::State {
                ($($name::filter_state(archetype, components),)*)
            }
            fn filter_access(access: &mut FilteredAccess) {
                $($name::filter_access(access);)*
            }
            fn filter_reads(access: &mut Access) {
                $($name::filter_reads(access);)*
            }
            fn named(out: &mut Vec<TypeId>) {
                $($name::named(out);)*
            }
            fn tracked(types: &mut Vec<TypeId>) {
                $($name::tracked(types);)*
            }
            #[inline(always)]
            unsafe fn fetch(archetype: &Archetype, state: Self::State) -> Self::Fetch {
                // SAFETY: forwarded contract.
                ($(unsafe { $name::fetch(archetype, state.$index) },)*)
            }
            #[inline(always)]
            unsafe fn chunk_passes(fetch: Self::Fetch, chunk: usize, window: ChangeWindow) -> bool {
                // SAFETY: forwarded contract.
                true $(&& unsafe { $name::chunk_passes(fetch.$index, chunk, window) })*
            }
            #[inline(always)]
            unsafe fn row_passes(fetch: Self::Fetch, row: usize, window: ChangeWindow) -> bool {
                // SAFETY: forwarded contract.
                true $(&& unsafe { $name::row_passes(fetch.$index, row, window) })*
            }
        }

        // SAFETY: as for tuples; a branch that does not match the archetype
        // has no state and no fetch, and is never consulted.
        #[allow(unused_variables, clippy::unused_unit)]
        unsafe impl<$($name: QueryFilter),*> QueryFilter for Or<($($name,)*)> {
            type State = ($(Option<$name::State>,)*);
            type Fetch = ($(Option<$name::Fetch>,)*);
            const DENSE: bool = true $(&& $name::DENSE)*;
            fn matches(archetype: &Archetype, components: &Components) -> bool {
                false $(|| $name::matches(archetype, components))*
            }
            fn filter_state(archetype: &Archetype, components: &Components) -> Self::State {
                ($($name::matches(archetype, components)
                    .then(|| $name::filter_state(archetype, components)),)*)
            }
            // An `Or` requires nothing any single branch requires (each may
            // fail), so it records no `with`/`without`; it reads what every
            // branch reads.
            fn filter_reads(access: &mut Access) {
                $($name::filter_reads(access);)*
            }
            fn named(out: &mut Vec<TypeId>) {
                $($name::named(out);)*
            }
            fn tracked(types: &mut Vec<TypeId>) {
                $($name::tracked(types);)*
            }
            #[inline(always)]
            unsafe fn fetch(archetype: &Archetype, state: Self::State) -> Self::Fetch {
                // SAFETY: each present state was made for this archetype.
                ($(state.$index.map(|s| unsafe { $name::fetch(archetype, s) }),)*)
            }
            #[inline(always)]
            unsafe fn chunk_passes(fetch: Self::Fetch, chunk: usize, window: ChangeWindow) -> bool {
                // SAFETY: forwarded contract, for the branches that matched.
                false $(|| fetch.$index.is_some_and(|f| unsafe { $name::chunk_passes(f, chunk, window) }))*
            }
            #[inline(always)]
            unsafe fn row_passes(fetch: Self::Fetch, row: usize, window: ChangeWindow) -> bool {
                // SAFETY: forwarded contract, for the branches that matched.
                false $(|| fetch.$index.is_some_and(|f| unsafe { $name::row_passes(f, row, window) }))*
            }
        }
    };
}

/// A filter that decides by archetype alone (`With`, `Without`, and `Or`
/// and tuples of them): it never skips single rows, so a query with it
/// knows its length ([`ExactSizeIterator`]).
pub trait ArchetypeFilter: QueryFilter {}

impl<T: Component> ArchetypeFilter for With<T> {}
impl<T: Component> ArchetypeFilter for Without<T> {}

macro_rules! archetype_filter {
    ($($name:ident),*) => {
        impl<$($name: ArchetypeFilter),*> ArchetypeFilter for ($($name,)*) {}
        impl<$($name: ArchetypeFilter),*> ArchetypeFilter for Or<($($name,)*)> {}
    };
}

impl ArchetypeFilter for () {}
archetype_filter!(A);
archetype_filter!(A, B);
archetype_filter!(A, B, C);
archetype_filter!(A, B, C, D);
archetype_filter!(A, B, C, D, E);
archetype_filter!(A, B, C, D, E, F);
archetype_filter!(A, B, C, D, E, F, G);
archetype_filter!(A, B, C, D, E, F, G, H);

tuple_filter!();
tuple_filter!(A 0);
tuple_filter!(A 0, B 1);
tuple_filter!(A 0, B 1, C 2);
tuple_filter!(A 0, B 1, C 2, D 3);
tuple_filter!(A 0, B 1, C 2, D 3, E 4);
tuple_filter!(A 0, B 1, C 2, D 3, E 4, F 5);
tuple_filter!(A 0, B 1, C 2, D 3, E 4, F 5, G 6);
tuple_filter!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7);
