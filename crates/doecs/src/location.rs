//! Where an entity's row is.

use crate::storage::{ArchetypeId, Row};

/// Where one entity's components are: its archetype and its row there. The
/// row's chunk is `row / archetype.chunk_rows()`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Location {
    /// The entity's archetype.
    pub archetype: ArchetypeId,
    /// The row within the archetype.
    pub row: Row,
}
