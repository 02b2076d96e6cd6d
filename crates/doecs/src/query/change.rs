//! Change filters: `Changed<T>` and `Added<T>`.
//!
//! `Changed<T>` passes entities whose `T` was written in the reader's
//! window (since its previous run, see [`crate::tick`]): through `&mut T`
//! in a query, `get_mut`, an insert that replaced it, or an explicit
//! [`mark_changed`](crate::WorldCore::mark_changed). Getting `T` counts as
//! a change, so `Added<T>` entities pass `Changed<T>` too. `Added<T>`
//! passes entities that got `T` in the window: spawned with it, or given it
//! by an insert, a command or a level spawn.
//!
//! Both skip whole chunks first: a chunk whose tick for `T` is not in the
//! window is passed over without touching its rows (see
//! [`crate::storage::ticks`]). In the chunks that remain, each row's own
//! stamp decides.
//!
//! ```
//! use doecs::{Added, Changed, Entity, QueryState, World};
//! struct Health(u32);
//! let mut world = World::new();
//! let a = world.spawn((Health(10),));
//! let b = world.spawn((Health(10),));
//! let mut hurt = QueryState::<Entity, Changed<Health>>::new(&world);
//! let mut new = QueryState::<Entity, Added<Health>>::new(&world);
//! assert_eq!(hurt.iter(&world).count(), 2, "the first look sees every spawn");
//! assert_eq!(new.iter(&world).count(), 2);
//!
//! world.get_mut::<Health>(b).unwrap().0 -= 3;
//! let c = world.spawn((Health(5),));
//! assert_eq!(hurt.iter(&world).collect::<Vec<_>>(), vec![b, c]);
//! assert_eq!(new.iter(&world).collect::<Vec<_>>(), vec![c]);
//! assert_eq!(hurt.iter(&world).count(), 0, "nothing since the last look");
//! # let _ = a;
//! ```

use super::access::{Access, AccessKey};
use super::filter::QueryFilter;
use crate::component::{Component, Components};
use crate::storage::{Archetype, ColumnIndex, TickPtrs};
use crate::tick::ChangeWindow;
use std::any::TypeId;
use std::marker::PhantomData;

/// Passes entities whose `T` changed (or was added) in the reader's window.
/// See the module docs.
pub struct Changed<T>(PhantomData<fn() -> T>);

/// Passes entities that got `T` in the reader's window. See the module docs.
pub struct Added<T>(PhantomData<fn() -> T>);

/// The two filters differ only in which stamp they read.
macro_rules! change_filter {
    ($filter:ident, $pick:expr, $which:expr) => {
        // SAFETY: records a read of `T`, and reads only `T`'s ticks through
        // the fetch made for the archetype's `T` column.
        unsafe impl<T: Component> QueryFilter for $filter<T> {
            type State = ColumnIndex;
            type Fetch = TickPtrs;
            const DENSE: bool = false;

            fn matches(archetype: &Archetype, components: &Components) -> bool {
                components.id_of::<T>().is_some_and(|id| archetype.has(id))
            }
            fn filter_state(archetype: &Archetype, components: &Components) -> ColumnIndex {
                components
                    .id_of::<T>()
                    .and_then(|id| archetype.column_of(id))
                    .expect("called for matching archetypes")
            }
            fn filter_access(access: &mut super::access::FilteredAccess) {
                access.with.push(TypeId::of::<T>());
            }
            fn filter_reads(access: &mut Access) {
                access.add_read_unless_written(AccessKey::of::<T>());
            }
            fn tracked(types: &mut Vec<TypeId>) {
                types.push(TypeId::of::<T>());
            }
            #[inline(always)]
            unsafe fn fetch(archetype: &Archetype, state: ColumnIndex) -> TickPtrs {
                archetype.column_ticks(state)
            }
            #[inline(always)]
            unsafe fn chunk_passes(fetch: TickPtrs, chunk: usize, window: ChangeWindow) -> bool {
                // SAFETY: forwarded contract.
                let stamps = unsafe { fetch.chunk_stamps(chunk) };
                window.contains_raw($pick(stamps))
            }
            #[inline(always)]
            unsafe fn row_passes(fetch: TickPtrs, row: usize, window: ChangeWindow) -> bool {
                // SAFETY: forwarded contract.
                match unsafe { fetch.row(row) } {
                    Some(stamps) => window.contains_raw($pick(stamps)),
                    // No row stamps yet (a pending request): the chunk decides.
                    // SAFETY: the row's chunk holds live rows; forwarded.
                    None => unsafe { Self::chunk_passes(fetch, fetch.chunk_of(row), window) },
                }
            }
            #[inline(always)]
            unsafe fn first_passing(
                fetch: TickPtrs,
                from: usize,
                to: usize,
                window: ChangeWindow,
            ) -> usize {
                // SAFETY: forwarded contract (live rows of one chunk).
                match unsafe { fetch.row_stamps($which, from, to) } {
                    Some(stamps) => from + first_in_window(stamps, window, true),
                    // Without row stamps the (passing) chunk decides for all.
                    None => from,
                }
            }
            #[inline(always)]
            unsafe fn first_failing(
                fetch: TickPtrs,
                from: usize,
                to: usize,
                window: ChangeWindow,
            ) -> usize {
                // SAFETY: forwarded contract.
                match unsafe { fetch.row_stamps($which, from, to) } {
                    Some(stamps) => from + first_in_window(stamps, window, false),
                    None => to,
                }
            }
        }
    };
}

change_filter!(Changed, |(_, changed): (u64, u64)| changed, 1);
change_filter!(Added, |(added, _): (u64, u64)| added, 0);

/// The first of `stamps` in `window` (`passing`) or outside it (not
/// `passing`), or `stamps.len()`. Scans eight stamps at a time with no
/// early exit inside a block, which compiles to vector compares.
#[inline(always)]
fn first_in_window(stamps: &[u64], window: ChangeWindow, passing: bool) -> usize {
    let hit = |t: u64| window.contains_raw(t) == passing;
    let mut blocks = stamps.chunks_exact(8);
    let mut at = 0;
    for block in blocks.by_ref() {
        if block.iter().fold(false, |any, &t| any | hit(t)) {
            break;
        }
        at += 8;
    }
    stamps[at..]
        .iter()
        .position(|&t| hit(t))
        .map_or(stamps.len(), |i| at + i)
}
