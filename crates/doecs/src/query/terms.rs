//! More query data: [`Has`], [`AnyOf`], [`Ref`] and [`Mut`].
//!
//! - `Has<T>` is whether the entity has `T`, a `bool`, without reading `T`
//!   (it matches every archetype and records no access). It names `T`, so
//!   `Has<Disabled>` sees disabled entities too.
//! - `AnyOf<(A, B, ..)>` matches entities that have at least one of the
//!   terms, and hands out each as an `Option`.
//! - `Ref<T>` reads `T` with its change stamps: [`Ref::is_added`] and
//!   [`Ref::is_changed`] answer for the reader's change window, as
//!   `Added<T>`/`Changed<T>` would filter.
//! - `Mut<T>` writes `T` but stamps a row changed only when written
//!   through ([`DerefMut`]), where `&mut T` stamps every row it hands out.
//!
//! # `&mut T` or `Mut<T>`
//! `&mut T` is the fast path: a loop stamps each run of rows once (one
//! store per chunk, and one per row only where a `Changed<T>` reader keeps
//! row stamps), whatever the loop body does. A system that writes a few
//! of the rows it visits (damage to the units in range, say) and whose
//! readers filter on `Changed<T>` should take `Mut<T>`: each write stamps
//! its own row, and readers see only the rows really written. `Mut<T>`'s
//! chunk form hands out `&mut [T]` and stamps the whole run, as `&mut T`
//! does.

use super::access::{Access, AccessKey, AliasError};
use super::data::{column_of, column_with_ticks, EveryRowData, QueryData, ReadOnlyQueryData};
use crate::component::{Component, Components};
use crate::storage::{Archetype, ColumnIndex, TickPtrs};
use crate::tick::{ChangeWindow, Tick};
use crate::world::WorldCore;
use std::any::TypeId;
use std::marker::PhantomData;
use std::ops::{Deref, DerefMut};
use std::ptr::NonNull;

/// Whether the entity has `T` (query data; see the module docs).
pub struct Has<T>(PhantomData<fn() -> T>);

// SAFETY: reads no component (only which archetype the row is in), records
// nothing, and hands out plain `bool`s.
unsafe impl<T: Component> QueryData for Has<T> {
    type Item<'w> = bool;
    type Slice<'w> = bool;
    type Fetch = bool;
    type State = bool;
    type Key = Has<T>;
    type Env<'w> = ();
    type ReadOnly = Self;

    fn access(_: &mut Access) -> Result<(), AliasError> {
        Ok(())
    }
    fn named(out: &mut Vec<TypeId>) {
        out.push(TypeId::of::<T>());
    }
    fn match_archetype(archetype: &Archetype, components: &Components) -> Option<bool> {
        Some(
            components
                .id_of::<T>()
                .is_some_and(|id| archetype.column_of(id).is_some()),
        )
    }
    #[inline(always)]
    fn env(_: &WorldCore, _: ChangeWindow) {}
    #[inline(always)]
    unsafe fn fetch(_: &Archetype, has: bool) -> bool {
        has
    }
    #[inline(always)]
    unsafe fn item<'w>(_: &mut Self::Env<'w>, has: bool, _: usize) -> Self::Item<'w> {
        has
    }
    #[inline(always)]
    unsafe fn slice<'w>(_: &mut Self::Env<'w>, has: bool, _: usize, _: usize) -> Self::Slice<'w> {
        has
    }
}
// SAFETY: reads nothing.
unsafe impl<T: Component> ReadOnlyQueryData for Has<T> {}
impl<T: Component> EveryRowData for Has<T> {}

/// The entities that have at least one of the terms of the tuple `Q`, each
/// term handed out as an `Option` (query data; see the module docs).
pub struct AnyOf<Q>(PhantomData<fn() -> Q>);

macro_rules! any_of {
    ($($name:ident $index:tt),*) => {
        // SAFETY: each present term upholds the contract on its own
        // columns; the access is the union of the terms', built with the
        // aliasing checks; a row has an item where some present term has
        // one (every row, when every term has one everywhere).
        #[allow(unused_variables, clippy::unused_unit)]
        unsafe impl<$($name: QueryData),*> QueryData for AnyOf<($($name,)*)> {
            type Item<'w> = ($(Option<$name::Item<'w>>,)*);
            type Slice<'w> = ($(Option<$name::Slice<'w>>,)*);
            type Fetch = ($(Option<$name::Fetch>,)*);
            type State = ($(Option<$name::State>,)*);
            type Key = AnyOf<($($name::Key,)*)>;
            type Env<'w> = ($($name::Env<'w>,)*);
            type ReadOnly = AnyOf<($($name::ReadOnly,)*)>;
            const EVERY_ROW: bool = true $(&& $name::EVERY_ROW)*;
            const READS_RELATED: bool = false $(|| $name::READS_RELATED)*;
            const TRACKS: bool = false $(|| $name::TRACKS)*;

            fn access(access: &mut Access) -> Result<(), AliasError> {
                $($name::access(access)?;)*
                Ok(())
            }
            fn tracked(out: &mut Vec<TypeId>) {
                $($name::tracked(out);)*
            }
            fn named(out: &mut Vec<TypeId>) {
                $($name::named(out);)*
            }
            fn match_archetype(archetype: &Archetype, components: &Components) -> Option<Self::State> {
                let states = ($($name::match_archetype(archetype, components),)*);
                let any = false $(|| states.$index.is_some())*;
                any.then_some(states)
            }
            #[inline(always)]
            fn env(world: &WorldCore, window: ChangeWindow) -> Self::Env<'_> {
                ($($name::env(world, window),)*)
            }
            #[inline]
            unsafe fn fetch(archetype: &Archetype, state: Self::State) -> Self::Fetch {
                // SAFETY: forwarded contract, for each term that matched.
                ($(state.$index.map(|s| unsafe { $name::fetch(archetype, s) }),)*)
            }
            #[inline]
            unsafe fn item<'w>(env: &mut Self::Env<'w>, fetch: Self::Fetch, row: usize) -> Self::Item<'w> {
                // SAFETY: forwarded contract; with `EVERY_ROW`, each
                // present term has an item on every row.
                ($(fetch.$index.and_then(|f| unsafe { $name::try_item(&mut env.$index, f, row) }),)*)
            }
            #[inline]
            unsafe fn try_item<'w>(
                env: &mut Self::Env<'w>,
                fetch: Self::Fetch,
                row: usize,
            ) -> Option<Self::Item<'w>> {
                // SAFETY: forwarded contract.
                let items = unsafe { Self::item(env, fetch, row) };
                let any = false $(|| items.$index.is_some())*;
                any.then_some(items)
            }
            #[inline]
            unsafe fn row_matches(env: &mut Self::Env<'_>, fetch: Self::Fetch, row: usize) -> bool {
                // SAFETY: forwarded contract.
                false $(|| fetch.$index.is_some_and(|f| unsafe { $name::row_matches(&mut env.$index, f, row) }))*
            }
            #[inline]
            unsafe fn slice<'w>(
                env: &mut Self::Env<'w>,
                fetch: Self::Fetch,
                start: usize,
                len: usize,
            ) -> Self::Slice<'w> {
                // SAFETY: forwarded contract.
                ($(fetch.$index.map(|f| unsafe { $name::slice(&mut env.$index, f, start, len) }),)*)
            }
            #[inline(always)]
            fn written_ticks(fetch: Self::Fetch, out: &mut impl FnMut(TickPtrs)) {
                $(if let Some(f) = fetch.$index {
                    $name::written_ticks(f, out);
                })*
            }
        }
        // SAFETY: every term only reads.
        unsafe impl<$($name: ReadOnlyQueryData),*> ReadOnlyQueryData for AnyOf<($($name,)*)> {}
        impl<$($name: EveryRowData),*> EveryRowData for AnyOf<($($name,)*)> {}
    };
}

any_of!(A 0);
any_of!(A 0, B 1);
any_of!(A 0, B 1, C 2);
any_of!(A 0, B 1, C 2, D 3);
any_of!(A 0, B 1, C 2, D 3, E 4);
any_of!(A 0, B 1, C 2, D 3, E 4, F 5);
any_of!(A 0, B 1, C 2, D 3, E 4, F 5, G 6);
any_of!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7);

/// The stamps `(added, changed)` of `row`: its own where the column keeps
/// row stamps, else its chunk's (no earlier than the row's, so a change is
/// never missed; see `storage::ticks`).
///
/// # Safety
/// The row must be live, and no writer of the column may run meanwhile.
#[inline]
unsafe fn row_or_chunk(ticks: TickPtrs, row: usize) -> (Tick, Tick) {
    // SAFETY: forwarded contract.
    let (added, changed) = unsafe {
        ticks
            .row(row)
            .unwrap_or_else(|| ticks.chunk_stamps(ticks.chunk_of(row)))
    };
    (Tick::new(added), Tick::new(changed))
}

/// A read of `T` that knows when it was added and last changed (query
/// data `Ref<T>`, and its item; see the module docs).
pub struct Ref<'w, T> {
    value: &'w T,
    added: Tick,
    changed: Tick,
    window: ChangeWindow,
}

impl<'w, T> Ref<'w, T> {
    /// A value with its stamps, seen in `window`.
    #[inline(always)]
    pub(crate) fn from_parts(
        value: &'w T,
        added: Tick,
        changed: Tick,
        window: ChangeWindow,
    ) -> Self {
        Ref {
            value,
            added,
            changed,
            window,
        }
    }

    /// Whether `T` was added in the reader's window.
    pub fn is_added(&self) -> bool {
        self.window.contains(self.added)
    }

    /// Whether `T` was written (or added) in the reader's window.
    pub fn is_changed(&self) -> bool {
        self.window.contains(self.changed)
    }

    /// The tick `T` was last written at (its chunk's, where the world
    /// keeps no row stamps for `T` yet: no earlier than the row's own).
    pub fn last_changed(&self) -> Tick {
        self.changed
    }

    /// The value, for as long as the item's borrow.
    pub fn into_inner(self) -> &'w T {
        self.value
    }
}

impl<T> Deref for Ref<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        self.value
    }
}

impl<T: std::fmt::Debug> std::fmt::Debug for Ref<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.value.fmt(f)
    }
}

/// Cache key of `Ref<T>`: its own shape (it also reads ticks).
pub struct ReadTicks<T>(PhantomData<fn() -> T>);

// SAFETY: reads exactly the column matched for `T` and its ticks,
// recorded as a read.
unsafe impl<T: Component> QueryData for Ref<'_, T> {
    type Item<'w> = Ref<'w, T>;
    type Slice<'w> = &'w [T];
    type Fetch = (NonNull<T>, TickPtrs);
    type State = ColumnIndex;
    type Key = ReadTicks<T>;
    type Env<'w> = ChangeWindow;
    type ReadOnly = Ref<'static, T>;
    const TRACKS: bool = true;

    fn access(access: &mut Access) -> Result<(), AliasError> {
        access.try_add_read(AccessKey::of::<T>())
    }
    fn required(with: &mut Vec<TypeId>) {
        with.push(TypeId::of::<T>());
    }
    fn tracked(out: &mut Vec<TypeId>) {
        out.push(TypeId::of::<T>());
    }
    fn match_archetype(archetype: &Archetype, components: &Components) -> Option<ColumnIndex> {
        column_of::<T>(archetype, components)
    }
    #[inline(always)]
    fn env(_: &WorldCore, window: ChangeWindow) -> ChangeWindow {
        window
    }
    #[inline]
    unsafe fn fetch(archetype: &Archetype, state: ColumnIndex) -> Self::Fetch {
        column_with_ticks(archetype, state)
    }
    #[inline]
    unsafe fn item<'w>(window: &mut ChangeWindow, fetch: Self::Fetch, row: usize) -> Ref<'w, T> {
        // SAFETY: `row` is live and the caller holds read access to `T`
        // (so no writer of its value or ticks runs).
        let ((added, changed), value) =
            unsafe { (row_or_chunk(fetch.1, row), fetch.0.add(row).as_ref()) };
        Ref {
            value,
            added,
            changed,
            window: *window,
        }
    }
    #[inline]
    unsafe fn slice<'w>(
        _: &mut ChangeWindow,
        fetch: Self::Fetch,
        start: usize,
        len: usize,
    ) -> &'w [T] {
        // SAFETY: the rows are live, and only read.
        unsafe { std::slice::from_raw_parts(fetch.0.as_ptr().add(start), len) }
    }
}
// SAFETY: only reads.
unsafe impl<T: Component> ReadOnlyQueryData for Ref<'_, T> {}
impl<T: Component> EveryRowData for Ref<'_, T> {}
impl<T: Component> EveryRowData for Mut<'_, T> {}

/// A write of `T` that stamps its row changed only when written through
/// (query data `Mut<T>`, and its item; see the module docs).
pub struct Mut<'w, T> {
    value: &'w mut T,
    ticks: TickPtrs,
    row: usize,
    added: Tick,
    changed: Tick,
    window: ChangeWindow,
}

impl<'w, T> Mut<'w, T> {
    /// The item of row `row` of a column whose row 0 is at `column` and
    /// whose stamps are `ticks`, for a reader in `window`: how `Mut<T>`
    /// and [`EntityMut::get_mut`](crate::EntityMut::get_mut) make theirs.
    ///
    /// # Safety
    /// `row` must be live in the column, and the caller must hold write
    /// access to its value and stamps for `'w`, handing the row out once
    /// at a time.
    #[inline]
    pub(crate) unsafe fn at_row(
        column: NonNull<T>,
        ticks: TickPtrs,
        row: usize,
        window: ChangeWindow,
    ) -> Self {
        // SAFETY: forwarded contract: the row is live and ours, so its
        // stamps race with no writer.
        let ((added, changed), value) =
            unsafe { (row_or_chunk(ticks, row), column.add(row).as_mut()) };
        Mut {
            value,
            ticks,
            row,
            added,
            changed,
            window,
        }
    }
}

impl<T> Mut<'_, T> {
    /// Marks the row changed at the reader's tick without writing it.
    pub fn set_changed(&mut self) {
        if self.changed != self.window.this_run {
            // SAFETY: the item exists while its loop holds write access to
            // `T` for this row, which is live and handed out once.
            unsafe { self.ticks.stamp_changed(self.row, 1, self.window.this_run) };
            self.changed = self.window.this_run;
        }
    }

    /// Whether `T` was added in the reader's window.
    pub fn is_added(&self) -> bool {
        self.window.contains(self.added)
    }

    /// Whether `T` was written in the reader's window (through this item
    /// included).
    pub fn is_changed(&self) -> bool {
        self.window.contains(self.changed)
    }

    /// The value, without marking the row changed.
    pub fn bypass_change_detection(&mut self) -> &mut T {
        self.value
    }
}

impl<T> Deref for Mut<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        self.value
    }
}

impl<T> DerefMut for Mut<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        self.set_changed();
        self.value
    }
}

impl<T: std::fmt::Debug> std::fmt::Debug for Mut<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.value.fmt(f)
    }
}

/// Cache key of `Mut<T>`: its own shape (it stamps by write, so it shares
/// no stamping plan with `&mut T`).
pub struct WriteOnChange<T>(PhantomData<fn() -> T>);

// SAFETY: writes exactly the column matched for `T` and its ticks,
// recorded as a write; an item stamps only its own row, a slice only its
// own rows.
unsafe impl<T: Component> QueryData for Mut<'_, T> {
    type Item<'w> = Mut<'w, T>;
    type Slice<'w> = &'w mut [T];
    type Fetch = (NonNull<T>, TickPtrs);
    type State = ColumnIndex;
    type Key = WriteOnChange<T>;
    type Env<'w> = ChangeWindow;
    type ReadOnly = &'static T;

    fn access(access: &mut Access) -> Result<(), AliasError> {
        access.try_add_write(AccessKey::of::<T>())
    }
    fn required(with: &mut Vec<TypeId>) {
        with.push(TypeId::of::<T>());
    }
    fn match_archetype(archetype: &Archetype, components: &Components) -> Option<ColumnIndex> {
        column_of::<T>(archetype, components)
    }
    #[inline(always)]
    fn env(_: &WorldCore, window: ChangeWindow) -> ChangeWindow {
        window
    }
    #[inline]
    unsafe fn fetch(archetype: &Archetype, state: ColumnIndex) -> Self::Fetch {
        column_with_ticks(archetype, state)
    }
    #[inline]
    unsafe fn item<'w>(window: &mut ChangeWindow, fetch: Self::Fetch, row: usize) -> Mut<'w, T> {
        // SAFETY: `row` is live, the caller holds write access to `T` and
        // hands the row out once at a time.
        unsafe { Mut::at_row(fetch.0, fetch.1, row, *window) }
    }
    #[inline]
    unsafe fn slice<'w>(
        window: &mut ChangeWindow,
        fetch: Self::Fetch,
        start: usize,
        len: usize,
    ) -> &'w mut [T] {
        // SAFETY: the rows are live, contiguous and exclusively ours; a
        // slice may be written anywhere, so the run is stamped now.
        unsafe {
            fetch.1.stamp_changed(start, len, window.this_run);
            std::slice::from_raw_parts_mut(fetch.0.as_ptr().add(start), len)
        }
    }
    // No `written_ticks`: the loops stamp nothing ahead; items stamp when
    // written, slices when made.
}
