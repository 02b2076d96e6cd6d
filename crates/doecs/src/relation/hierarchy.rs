//! A read-only view of a world's `ChildOf` hierarchy, for the managers that
//! follow it.
//!
//! Design. A world has one scene graph, and it is `ChildOf`: the pairs are
//! the truth, and a manager that keeps parent links of its own for speed
//! (the transform manager keeps instance indices so world transforms are
//! immediately correct) *follows* them. The world tells every manager of
//! each `ChildOf` change ([`ComponentManager::on_parent_changed`], or
//! [`ComponentManager::on_parents_changed`] once for a batch), with this
//! view as it stands after the change, and hands it this view when it joins
//! the world or after a load replaced the pairs
//! ([`ComponentManager::follow_hierarchy`]); a manager creating instances
//! for entities that already have parents or children reads them here.
//!
//! A batch parented in one call ([`raw::parent_batch`](crate::raw::parent_batch)) comes back as
//! a [`ParentedBatch`]: the children with their parents as batch indices.
//! A manager creating instances for the whole batch reads the parents there
//! instead of looking each entity up, once [`Hierarchy::batch_parents`] has
//! confirmed that the world still says the same: at once when no `ChildOf`
//! pair was added or removed since (the table's stamp is unchanged), else
//! in one pass down the batch's rows. Nothing is trusted: a batch whose
//! pairs changed since is simply not confirmed, and the manager looks the
//! entities up instead.
//!
//! The batch also keeps what was known or checked when it was parented:
//! its parents as a [`ParentsFirst`] proof when each parent comes before
//! its children ([`ParentedBatch::parents_first`]), and a bound on its
//! entity indices ([`ParentedBatch::index_bound`]). A manager laying the
//! batch out in batch order uses them instead of checking the order or
//! scanning for the largest index again.
//!
//! [`raw::parent_batch`]: crate::raw::parent_batch
//! [`ComponentManager::on_parent_changed`]: crate::ComponentManager::on_parent_changed
//! [`ComponentManager::on_parents_changed`]: crate::ComponentManager::on_parents_changed
//! [`ComponentManager::follow_hierarchy`]: crate::ComponentManager::follow_hierarchy

use super::table::{RelationTable, Sources, TableStamp};
use super::{ChildOf, RelationError};
use crate::entity::Entity;
use crate::stamp::Stamp;

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

    /// The parents of `batch` as indices into its children, if this
    /// hierarchy still holds exactly the pairs [`raw::parent_batch`](crate::raw::parent_batch)
    /// set for it: every child with a parent index has that parent, and
    /// every other child has none. `None` once any of them changed.
    ///
    /// [`raw::parent_batch`]: crate::raw::parent_batch
    pub fn batch_parents<'b>(&self, batch: &'b ParentedBatch) -> Option<&'b [Option<u32>]> {
        let holds = match self.table {
            Some(t) => t.holds_batch(
                batch.stamp,
                batch.first_row,
                &batch.children,
                batch.parents(),
            ),
            None => batch.parents().iter().all(Option::is_none),
        };
        holds.then_some(batch.parents())
    }

    /// Whether no entity has a parent.
    pub fn is_empty(&self) -> bool {
        use super::table::ErasedRelation;
        self.table.is_none_or(|t| t.len() == 0)
    }
}

/// A batch of entities whose `ChildOf` pairs were set in one call
/// ([`raw::parent_batch`](crate::raw::parent_batch)): the
/// children in batch order, and each one's parent as an index into them.
/// See the module docs for what managers do with it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParentedBatch {
    children: Vec<Entity>,
    /// The first child's index when the children took fresh entity slots
    /// (see [`index_run`](Self::index_run)).
    fresh_from: Option<u32>,
    parents: BatchParents,
    /// Above every child's index (0 for an empty batch).
    index_bound: usize,
    /// The row of the batch's first pair in the `ChildOf` table.
    first_row: usize,
    /// The `ChildOf` table's stamp right after the batch's pairs went in.
    stamp: TableStamp,
    /// The entity table's departures stamp then, when every child was
    /// located.
    located: Stamp,
}

/// A batch's parent indices, kept with their proof when they list
/// parents first.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum BatchParents {
    /// Checked (or known, for a fresh batch) to list parents first.
    First(ParentsFirst),
    /// In range and acyclic, in any order.
    Unordered(Vec<Option<u32>>),
}

impl BatchParents {
    fn as_slice(&self) -> &[Option<u32>] {
        match self {
            BatchParents::First(first) => first.as_slice(),
            BatchParents::Unordered(parents) => parents,
        }
    }
}

impl ParentedBatch {
    pub(crate) fn new(
        children: Vec<Entity>,
        fresh_from: Option<u32>,
        parents: BatchParents,
        index_bound: usize,
        first_row: usize,
        stamp: TableStamp,
        located: Stamp,
    ) -> Self {
        debug_assert_eq!(children.len(), parents.as_slice().len());
        debug_assert!(children.iter().all(|c| (c.index() as usize) < index_bound));
        debug_assert!(fresh_from
            .is_none_or(|first| children.iter().zip(first..).all(|(c, i)| c.index() == i)));
        ParentedBatch {
            children,
            fresh_from,
            parents,
            index_bound,
            first_row,
            stamp,
            located,
        }
    }

    /// The entity table's departures stamp when the batch was parented.
    pub(crate) fn located_stamp(&self) -> Stamp {
        self.located
    }

    /// The parents as [`ParentsFirst`] when every parent index is smaller
    /// than its child's, so a manager can lay the batch out in batch order
    /// with each parent placed before its children. Known when the batch
    /// was parented: nothing is checked here.
    pub fn parents_first(&self) -> Option<&ParentsFirst> {
        match &self.parents {
            BatchParents::First(first) => Some(first),
            BatchParents::Unordered(_) => None,
        }
    }

    /// The batch's entities, in batch order.
    pub fn children(&self) -> &[Entity] {
        &self.children
    }

    /// Each child's parent, as an index into [`children`](Self::children),
    /// as given when the batch was parented.
    pub fn parents(&self) -> &[Option<u32>] {
        self.parents.as_slice()
    }

    /// A bound on the children's entity indices: each is below it (0 for
    /// an empty batch). A manager with a map by entity index grows it
    /// once to this size.
    pub fn index_bound(&self) -> usize {
        self.index_bound
    }

    /// The children's entity indices as one run, `start`, `start + 1`, …
    /// in batch order, when the batch was spawned into entity slots no
    /// entity had before (as a level into a new world): a manager with a
    /// map by entity index that does not reach `start` yet can append the
    /// batch's entries in one sequential write, knowing no entry of the
    /// run is taken. `None` when that is not known (reused slots, or a
    /// batch of existing entities).
    ///
    /// ```
    /// use doecs::raw::ParentsFirst;
    /// use doecs::{ComponentId, World};
    /// let mut world = World::new();
    /// let x: ComponentId = world.component_id::<u32>();
    /// let values = [1u32, 2, 3];
    /// let parents = ParentsFirst::new(vec![None, Some(0), Some(0)]).unwrap();
    /// // SAFETY: `values` holds three `u32`s, which need no drop.
    /// let batch = unsafe {
    ///     doecs::raw::spawn_columns_parented(&mut world, &[x], &[values.as_ptr().cast()], parents)
    /// }
    /// .unwrap();
    /// assert_eq!(batch.index_run(), Some(0..3));
    /// ```
    pub fn index_run(&self) -> Option<std::ops::Range<u32>> {
        let n = self.children.len() as u32;
        self.fresh_from.map(|first| first..first + n)
    }

    /// The batch's entities, giving up the rest.
    pub fn into_children(self) -> Vec<Entity> {
        self.children
    }
}

/// Batch parent indices that list every parent before its children:
/// item `k`'s parent, when it has one, is an index `p < k` into the same
/// batch. Level blobs and prefab subtrees are laid out this way. Such
/// indices are in range and cannot form a cycle, so a batch parented with
/// them needs no other check of its indices
/// (`raw::spawn_columns_parented` takes them).
///
/// The order is a safety invariant: code that builds a batch from a
/// `ParentsFirst` may read a parent's slot, written earlier, without a
/// check. [`new`](Self::new) checks it; [`new_unchecked`](Self::new_unchecked)
/// takes the caller's word.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ParentsFirst(Vec<Option<u32>>);

impl ParentsFirst {
    /// Checks `parents` (one pass).
    ///
    /// # Errors
    /// [`RelationError::ParentNotBefore`] for the first item whose parent
    /// index is not smaller than its own.
    ///
    /// ```
    /// use doecs::raw::ParentsFirst;
    /// use doecs::RelationError;
    /// assert!(ParentsFirst::new(vec![None, Some(0), Some(1)]).is_ok());
    /// assert_eq!(
    ///     ParentsFirst::new(vec![Some(1), None]),
    ///     Err(RelationError::ParentNotBefore { item: 0, parent: 1 })
    /// );
    /// ```
    pub fn new(parents: Vec<Option<u32>>) -> Result<Self, RelationError> {
        if Self::holds(&parents) {
            return Ok(ParentsFirst(parents));
        }
        let (item, parent) = parents
            .iter()
            .enumerate()
            .find_map(|(k, p)| p.filter(|&p| p as usize >= k).map(|p| (k, p)))
            .expect("the order does not hold, so some item breaks it");
        Err(RelationError::ParentNotBefore { item, parent })
    }

    /// Wraps `parents` without the pass [`new`](Self::new) makes: for
    /// indices already checked elsewhere (a level blob's parent index is
    /// checked when the blob is read).
    ///
    /// # Safety
    /// Every `Some(p)` at position `k` of `parents` has `p < k`. Batch
    /// writers rely on it to read parents' slots unchecked.
    ///
    /// ```
    /// // SAFETY: item 1's parent, 0, comes before it.
    /// let parents = unsafe { doecs::raw::ParentsFirst::new_unchecked(vec![None, Some(0)]) };
    /// assert_eq!(parents.as_slice(), &[None, Some(0)]);
    /// ```
    pub unsafe fn new_unchecked(parents: Vec<Option<u32>>) -> Self {
        debug_assert!(Self::holds(&parents), "parents must come first");
        ParentsFirst(parents)
    }

    /// Whether every `Some(p)` at position `k` of `parents` has `p < k`:
    /// one branch-free pass.
    pub fn holds(parents: &[Option<u32>]) -> bool {
        parents
            .iter()
            .zip(0u32..)
            .fold(true, |ok, (p, k)| ok & p.is_none_or(|p| p < k))
    }

    /// The indices.
    pub fn as_slice(&self) -> &[Option<u32>] {
        &self.0
    }

    /// Number of items.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether the batch is empty.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The indices, giving up the proof.
    pub fn into_vec(self) -> Vec<Option<u32>> {
        self.0
    }
}
