//! Archetype storage, in small layers, each with a narrow unsafe API:
//!
//! 1. [`column`]: one growable raw array of one component's values, and
//!    [`layout`]: how many rows make one chunk, the unit systems see.
//! 2. [`archetype`]: one archetype's rows, one column per component, kept
//!    dense by swap-remove ([`Archetype`]).
//! 3. [`archetypes`]: the registry of archetypes, the type index from sorted
//!    component sets to archetypes, and the insert/remove graph
//!    ([`Archetypes`]).
//!
//! The entity index, which maps an entity to its row, lives one layer up in
//! [`crate::location`].
//!
//! # The aliasing rule
//! Column memory is raw allocation owned by the archetype, never reached
//! through Rust references to component values. The layer hands out raw
//! pointers (`column_ptr`, `slot_ptr`, `entities_ptr`) from `&Archetype`;
//! the only reference it makes itself is `entities`, a shared slice of the
//! entity ids, which nothing writes while an `&Archetype` exists.
//! - Through a pointer from `&Archetype`, anyone may **read** a live slot.
//! - Only a caller that holds exclusive access to a slot may **write** it or
//!   make a `&mut` to it: `&mut` to the world, or a schedule-granted write of
//!   that component, which the schedule never grants twice at once. Queries
//!   rely on this to hand out `&mut T` from a shared `&World`.
//! - Structural changes (`push_uninit`, `swap_remove_*`, `reserve`,
//!   `shrink_to_fit`) take `&mut Archetype`; they move rows and may move the
//!   columns, so every pointer obtained before them is invalid afterwards.
//!
//! Only the world's structural core (`world::structure`) calls the
//! structural functions; they are `pub(crate)`.

pub mod archetype;
pub(crate) use archetype::{ArchetypeImage, RestoreScratch};
pub mod archetypes;
pub(crate) mod column;
pub mod layout;
pub(crate) mod row_move;
pub(crate) mod sparse_set;
pub mod ticks;

pub use archetype::{Archetype, ColumnIndex};
pub use archetypes::{Archetypes, LayoutStamp};
pub use layout::{ChunkShape, DEFAULT_CHUNK_BYTES};
pub(crate) use ticks::WriteStamps;
pub use ticks::{ChunkTicks, TickPtrs};

/// An archetype's index in its world's [`Archetypes`]. Id 0 is the empty archetype.
///
/// Stored as index + 1 in a `NonZeroU32`, so `Option<ArchetypeId>` (and the
/// entity index's `Option<Location>`) costs no extra space.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ArchetypeId(std::num::NonZeroU32);

impl ArchetypeId {
    /// The archetype of entities with no components.
    pub const EMPTY: ArchetypeId = ArchetypeId(std::num::NonZeroU32::MIN);

    /// The id as an index.
    #[inline]
    pub const fn index(self) -> usize {
        self.0.get() as usize - 1
    }

    /// Builds an id from an index. Ids are meaningful only in the world that issued them.
    ///
    /// # Panics
    /// If `index >= u32::MAX`.
    #[inline]
    pub const fn from_index(index: usize) -> Self {
        assert!(index < u32::MAX as usize, "doecs: archetype index overflow");
        match std::num::NonZeroU32::new(index as u32 + 1) {
            Some(n) => ArchetypeId(n),
            None => unreachable!(),
        }
    }
}

/// A row of an archetype: rows `0..len` are live.
///
/// Any value can be built, so no safe function trusts one: each checks it
/// against the archetype's length, and only the `unsafe` `_unchecked`
/// forms take the caller's word for it.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Row(pub u32);

impl Row {
    /// The row as `usize`.
    #[inline]
    pub const fn index(self) -> usize {
        self.0 as usize
    }
}
