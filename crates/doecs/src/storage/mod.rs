//! Archetype storage, in three small layers, each with a narrow unsafe API:
//!
//! 1. [`layout`]: where each array sits inside one chunk ([`ChunkLayout`]), and
//!    [`pool`]: where the chunks themselves sit, carved in order from large
//!    blocks ([`ChunkPool`]).
//! 2. [`archetype`]: one archetype's rows, spread over fixed-size chunks, kept
//!    dense by swap-remove ([`Archetype`]).
//! 3. [`archetypes`]: the registry of archetypes, the type index from sorted
//!    component sets to archetypes, and the add/remove graph ([`Archetypes`]).
//!
//! The entity index, which maps an entity to its row, lives one layer up in
//! [`crate::location`].

pub mod archetype;
pub mod archetypes;
pub mod layout;
pub mod pool;

pub use archetype::{Archetype, ColumnIndex};
pub use archetypes::Archetypes;
pub use layout::{ChunkLayout, DEFAULT_CHUNK_BYTES};
pub use pool::{ChunkPool, ChunkPtr};

/// An archetype's index in its world's [`Archetypes`]. Id 0 is the empty archetype.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ArchetypeId(u32);

impl ArchetypeId {
    /// The archetype of entities with no components.
    pub const EMPTY: ArchetypeId = ArchetypeId(0);

    /// The id as an index.
    #[inline]
    pub const fn index(self) -> usize {
        self.0 as usize
    }

    /// Builds an id from an index. Ids are meaningful only in the world that issued them.
    #[inline]
    pub const fn from_index(index: usize) -> Self {
        ArchetypeId(index as u32)
    }
}

/// A chunk's index within its archetype.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ChunkIndex(pub u32);

impl ChunkIndex {
    /// The index as `usize`.
    #[inline]
    pub const fn index(self) -> usize {
        self.0 as usize
    }
}

/// A row within one chunk.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ChunkRow(pub u32);

impl ChunkRow {
    /// The row as `usize`.
    #[inline]
    pub const fn index(self) -> usize {
        self.0 as usize
    }
}
