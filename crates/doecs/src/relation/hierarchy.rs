//! A read-only view of a world's `ChildOf` hierarchy, for the managers that
//! follow it.
//!
//! Design. A world has one scene graph, and it is `ChildOf`: the pairs are
//! the truth, and a manager that keeps parent links of its own for speed
//! (the transform manager keeps instance indices so world transforms are
//! immediately correct) *follows* them. The world tells every manager of
//! each `ChildOf` change ([`ComponentManager::on_parent_changed`]) and hands
//! it this view when it joins the world or after a load replaced the pairs
//! ([`ComponentManager::follow_hierarchy`]); a manager creating instances
//! for entities that already have parents or children reads them here.
//!
//! [`ComponentManager::on_parent_changed`]: crate::ComponentManager::on_parent_changed
//! [`ComponentManager::follow_hierarchy`]: crate::ComponentManager::follow_hierarchy

use super::table::{RelationTable, Sources};
use super::ChildOf;
use crate::entity::Entity;

/// The `ChildOf` pairs of a world, read-only: each entity's parent and
/// children. Get one with `World::hierarchy` or, beside a manager,
/// `World::manager_and_hierarchy_mut`.
#[derive(Copy, Clone)]
pub struct Hierarchy<'w> {
    table: Option<&'w RelationTable<ChildOf>>,
}

impl std::fmt::Debug for Hierarchy<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        use super::table::ErasedRelation;
        f.debug_struct("Hierarchy")
            .field("pairs", &self.table.map_or(0, |t| t.len()))
            .finish()
    }
}

impl<'w> Hierarchy<'w> {
    /// A hierarchy with no pairs: every entity is a root.
    pub fn empty() -> Self {
        Hierarchy { table: None }
    }

    pub(crate) fn new(table: Option<&'w RelationTable<ChildOf>>) -> Self {
        Hierarchy { table }
    }

    /// The parent of `child`, if it has one.
    #[inline]
    pub fn parent(&self, child: Entity) -> Option<Entity> {
        self.table?.first_target(child)
    }

    /// The children of `parent`, in attachment order.
    #[inline]
    pub fn children(&self, parent: Entity) -> Sources<'w, ChildOf> {
        match self.table {
            Some(t) => t.sources(parent),
            None => Sources::none(),
        }
    }

    /// Whether no entity has a parent.
    pub fn is_empty(&self) -> bool {
        use super::table::ErasedRelation;
        self.table.is_none_or(|t| t.len() == 0)
    }
}
