//! The storage of a world's query caches: one type-erased slot per query
//! shape.
//!
//! A world keeps the matched-archetype cache of every query shape used on
//! it through `query_mut` (as a system keeps one per world, and a universe
//! one per member world), so those queries are cheap to build again. The
//! world only stores them: each slot is a `Box<dyn Any>`, and the query
//! layer, which sits above the world, gives the slots their meaning (its
//! `impl QueryCaches` in `query/state.rs` makes, finds and casts them, and
//! its `World::query_mut` uses them). So the world owns the caches without
//! importing anything from queries.

use crate::type_index::TypeIndex;
use std::any::Any;

/// Caches of matched archetypes, one per query shape, each in its own boxed
/// slot. A [`Query`](crate::Query) built per call (`World::query_mut`, a
/// system's `ctx.query`) borrows the cache of its shape in place: one cached
/// type lookup, no allocation.
#[derive(Default)]
pub struct QueryCaches {
    /// Query shape to its slot.
    pub(crate) index: TypeIndex<u32>,
    /// The caches, each of the type its key names.
    pub(crate) slots: Vec<Box<dyn Any + Send + Sync>>,
}

impl std::fmt::Debug for QueryCaches {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("QueryCaches")
            .field("shapes", &self.slots.len())
            .finish()
    }
}
