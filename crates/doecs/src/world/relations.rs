//! The world's relationship API: adding, removing and reading pairs, and
//! walking the `ChildOf` hierarchy. The pairs live beside the archetypes
//! (see [`crate::relation`] for why); despawning cleans them up in the
//! despawn core (`structure`), so every despawn path does. A batch of new
//! pairs of any relation goes in through `add_pairs.rs`, checked as a
//! whole in linear time; a batch of parents indexed into the batch itself
//! (levels, prefab subtrees) through [`raw::parent_batch`](crate::raw::parent_batch) here.

use super::core::WorldCore;
use super::structure::NewRows;
use crate::entity::Entity;
use crate::relation::table::TableStamp;
use crate::relation::{
    BatchParents, ChildOf, Hierarchy, ParentedBatch, ParentsFirst, Relation, RelationError,
    Relations, Sources,
};
use std::any::TypeId;
use std::collections::HashSet;

/// Whether `R` is the hierarchy, whose changes the managers follow.
fn is_child_of<R: Relation>() -> bool {
    TypeId::of::<R>() == TypeId::of::<ChildOf>()
}

impl WorldCore {
    /// Adds the pair `(R, target)` to `source` with `value`; if the pair
    /// exists, replaces its value and returns the old one. For an
    /// exclusive relation (such as [`ChildOf`]), the source's other pair of
    /// `R` goes first.
    ///
    /// # Errors
    /// [`RelationError::NoSuchEntity`] if either entity is not alive;
    /// [`RelationError::Cycle`] if `R` is acyclic and `target` already
    /// reaches `source` (or is `source`). The world is unchanged then.
    pub fn add_pair<R: Relation>(
        &mut self,
        source: Entity,
        target: Entity,
        value: R,
    ) -> Result<Option<R>, RelationError> {
        for e in [source, target] {
            if self.entities.location(e).is_none() {
                return Err(RelationError::NoSuchEntity(e));
            }
        }
        if R::ACYCLIC && self.reaches::<R>(target, source) {
            return Err(RelationError::Cycle {
                relation: std::any::type_name::<R>(),
                subject: source,
                target,
            });
        }
        let old = self
            .relations
            .table_mut::<R>()
            .insert(source, target, value);
        if is_child_of::<R>() {
            self.notify_parent_changed(source, Some(target));
        }
        self.sanitize();
        Ok(old)
    }

    /// Removes the pair `(R, target)` from `source` and returns its value.
    ///
    /// # Errors
    /// [`RelationError::NoSuchPair`] if there is no such pair.
    pub fn remove_pair<R: Relation>(
        &mut self,
        source: Entity,
        target: Entity,
    ) -> Result<R, RelationError> {
        let value = self
            .relations
            .table_mut::<R>()
            .remove(source, target)
            .ok_or(RelationError::NoSuchPair {
                relation: std::any::type_name::<R>(),
                subject: source,
                target,
            })?;
        if is_child_of::<R>() {
            self.notify_parent_changed(source, None);
        }
        self.sanitize();
        Ok(value)
    }

    /// The value of the pair `(R, target)` on `source`.
    pub fn pair<R: Relation>(&self, source: Entity, target: Entity) -> Option<&R> {
        self.relations.table::<R>()?.value(source, target)
    }

    /// The value of the pair `(R, target)` on `source`, mutably.
    pub fn pair_mut<R: Relation>(&mut self, source: Entity, target: Entity) -> Option<&mut R> {
        self.relations.table_mut::<R>().value_mut(source, target)
    }

    /// Whether `source` has the pair `(R, target)`.
    pub fn has_pair<R: Relation>(&self, source: Entity, target: Entity) -> bool {
        self.pair::<R>(source, target).is_some()
    }

    /// The pairs `(R, *)` of `source`: each target with its value, in the
    /// order they were added.
    pub fn targets<R: Relation>(&self, source: Entity) -> impl Iterator<Item = (Entity, &R)> {
        self.relations
            .table::<R>()
            .into_iter()
            .flat_map(move |t| t.pairs_of(source))
    }

    /// The entities with a pair `(R, target)`, in the order their pairs
    /// were added.
    pub fn sources<R: Relation>(&self, target: Entity) -> Sources<'_, R> {
        match self.relations.table::<R>() {
            Some(t) => t.sources(target),
            None => Sources::none(),
        }
    }

    /// Every pair of `R` as `(source, target, value)`, in an order that
    /// rebuilds every source's targets and every target's sources in their
    /// present order when the pairs are added to a world without them (how
    /// saves keep children in order).
    pub(crate) fn pairs_in_order<R: Relation>(&self) -> Vec<(Entity, Entity, &R)> {
        self.relations
            .table::<R>()
            .map(|t| t.pairs_in_list_order())
            .unwrap_or_default()
    }

    /// Every relation's pairs.
    pub fn relations(&self) -> &Relations {
        &self.relations
    }

    /// Makes `child` a child of `parent` (the pair `(ChildOf, parent)`),
    /// replacing its previous parent.
    ///
    /// # Errors
    /// As [`WorldCore::add_pair`]: a dead entity, or a cycle (`parent` is
    /// `child` or one of its descendants).
    pub fn set_parent(&mut self, child: Entity, parent: Entity) -> Result<(), RelationError> {
        self.add_pair(child, parent, ChildOf).map(|_| ())
    }

    /// Detaches `child` from its parent; returns the parent it had.
    pub fn remove_parent(&mut self, child: Entity) -> Option<Entity> {
        let parent = self.parent(child)?;
        self.remove_pair::<ChildOf>(child, parent)
            .expect("the pair to its parent exists");
        Some(parent)
    }

    /// The `ChildOf` hierarchy, read-only: the one scene graph of this
    /// world, which managers such as the transform manager follow.
    pub fn hierarchy(&self) -> Hierarchy<'_> {
        Hierarchy::new(self.relations.table::<ChildOf>())
    }

    /// Gives each of `children` the parent named by `parents` (an index
    /// into `children`, so parents come from the same batch, as in level
    /// blobs and prefab subtrees; `None`: a root), in one pass with one
    /// validation: the batch form of [`WorldCore::set_parent`] for children
    /// that have no parent yet.
    ///
    /// # Errors
    /// The world is unchanged on any error:
    /// [`RelationError::BatchLength`] if the slices differ in length;
    /// [`RelationError::NoSuchEntity`] for a dead child;
    /// [`RelationError::HasParent`] for a child that has a parent already
    /// or appears twice; [`RelationError::BatchParentOutOfRange`] for an
    /// index outside the batch; [`RelationError::Cycle`] if the indices
    /// form a cycle (no cycle can reach outside the batch, since no child
    /// had a parent).
    pub fn set_parents_in_batch(
        &mut self,
        children: &[Entity],
        parents: &[Option<u32>],
    ) -> Result<(), RelationError> {
        self.parent_batch_rows(children, parents).map(drop)
    }

    /// [`WorldCore::set_parents_in_batch`], keeping the batch: the returned
    /// [`ParentedBatch`] lets a manager that creates instances for the
    /// whole batch read the parents as batch indices instead of looking
    /// each entity up (see [`Hierarchy::batch_parents`]).
    ///
    /// # Errors
    /// As [`WorldCore::set_parents_in_batch`]; the world is unchanged.
    pub(crate) fn parent_batch(
        &mut self,
        children: Vec<Entity>,
        parents: Vec<Option<u32>>,
    ) -> Result<ParentedBatch, RelationError> {
        let rows = self.parent_batch_rows(&children, &parents)?;
        let parents = if rows.parents_first {
            // SAFETY: `parent_batch_rows` found `ParentsFirst::holds` true
            // for these very indices (`rows.parents_first`).
            BatchParents::First(unsafe { ParentsFirst::new_unchecked(parents) })
        } else {
            BatchParents::Unordered(parents)
        };
        Ok(self.parented_batch(children, None, parents, rows))
    }

    /// The handle of a batch whose pairs just went in at `rows`;
    /// `fresh_from` as [`NewRows::fresh_from`] says, for the children.
    fn parented_batch(
        &self,
        children: Vec<Entity>,
        fresh_from: Option<u32>,
        parents: BatchParents,
        rows: BatchRows,
    ) -> ParentedBatch {
        ParentedBatch::new(
            children,
            fresh_from,
            parents,
            rows.index_bound,
            rows.first_row,
            rows.stamp,
            self.entities.departures(),
        )
    }

    /// Whether every entity of `batch` is still here: at once when no
    /// entity left this world since the batch was parented (the entity
    /// table's departures stamp is unchanged), else one lookup each.
    pub(crate) fn batch_located(&self, batch: &ParentedBatch) -> bool {
        batch.located_stamp() == self.entities.departures()
            || batch
                .children()
                .iter()
                .all(|&c| self.entities.locate(c).is_some())
    }

    /// Parents a batch of entities spawned in the operation that calls
    /// this, before anything else could touch them: fresh entities are
    /// alive, distinct and parentless, and `parents` are in range and
    /// acyclic by their type, so nothing is checked.
    pub(crate) fn parent_fresh_batch(
        &mut self,
        spawned: NewRows,
        parents: ParentsFirst,
    ) -> ParentedBatch {
        let NewRows {
            entities: children,
            fresh_from,
        } = spawned;
        debug_assert_eq!(children.len(), parents.len());
        debug_assert!(children
            .iter()
            .all(|&c| self.entities.locate(c).is_some() && self.parent(c).is_none()));
        // Every index is below the slot count: exact when the batch ends
        // with the last slot (fresh slots come last, in increasing order).
        let slots = self.entities.slot_count();
        let index_bound = match children.last() {
            Some(last) if last.index() as usize + 1 == slots => slots,
            _ => crate::entity::index_bound(&children),
        };
        let rows = self.insert_batch_rows(&children, parents.as_slice(), true, index_bound);
        self.parented_batch(children, fresh_from, BatchParents::First(parents), rows)
    }

    /// The one core of both batch forms: validates and adds the pairs.
    fn parent_batch_rows(
        &mut self,
        children: &[Entity],
        parents: &[Option<u32>],
    ) -> Result<BatchRows, RelationError> {
        if children.len() != parents.len() {
            return Err(RelationError::BatchLength {
                children: children.len(),
                parents: parents.len(),
            });
        }
        use crate::relation::table::ErasedRelation;
        let table = self.relations.table::<ChildOf>();
        // One simple pass per check, each a tight loop (a refused batch
        // reports the first child that fails the first failing check).
        if let Some(&dead) = children
            .iter()
            .find(|&&c| self.entities.locate(c).is_none())
        {
            return Err(RelationError::NoSuchEntity(dead));
        }
        if let Some(t) = table.filter(|t| t.len() > 0) {
            if let Some(&c) = children.iter().find(|&&c| t.has_pairs(c)) {
                return Err(RelationError::HasParent(c));
            }
        }
        // Parents before children (as level blobs and prefab subtrees are
        // laid out) cannot form a cycle, and are in range; children in
        // increasing index order (a fresh batch) cannot repeat. Only
        // batches that are neither pay for the full checks.
        let in_order = ParentsFirst::holds(parents);
        if !in_order {
            if let Some((k, &Some(p))) = parents
                .iter()
                .enumerate()
                .find(|(_, p)| p.is_some_and(|p| p as usize >= children.len()))
            {
                return Err(RelationError::BatchParentOutOfRange { item: k, parent: p });
            }
        }
        let increasing = children
            .windows(2)
            .fold(true, |ok, w| ok & (w[0].index() < w[1].index()));
        let index_bound = match children.last() {
            Some(last) if increasing => last.index() as usize + 1,
            _ => crate::entity::index_bound(children),
        };
        if !increasing {
            let mut seen = vec![0u64; index_bound.div_ceil(64)];
            for &child in children {
                let (word, bit) = (child.index() as usize / 64, 1u64 << (child.index() % 64));
                if seen[word] & bit != 0 {
                    return Err(RelationError::HasParent(child));
                }
                seen[word] |= bit;
            }
        }
        if !in_order {
            Self::check_batch_acyclic(children, parents)?;
        }
        let rows = self.insert_batch_rows(children, parents, in_order, index_bound);
        self.sanitize();
        Ok(rows)
    }

    /// Adds a checked batch's pairs ([`WorldCore::insert_fresh_child_of`])
    /// and says where they went, with what the checks found.
    fn insert_batch_rows(
        &mut self,
        children: &[Entity],
        parents: &[Option<u32>],
        parents_first: bool,
        index_bound: usize,
    ) -> BatchRows {
        use crate::relation::table::ErasedRelation;
        let first_row = self.relations.table::<ChildOf>().map_or(0, |t| t.len());
        let stamp = self.insert_fresh_child_of(children, parents, index_bound);
        BatchRows {
            first_row,
            stamp,
            parents_first,
            index_bound,
        }
    }

    /// Refuses batch parent indices that form a cycle.
    fn check_batch_acyclic(
        children: &[Entity],
        parents: &[Option<u32>],
    ) -> Result<(), RelationError> {
        // 0 unvisited, 1 on the current walk, 2 known to end at a root.
        let mut state = vec![0u8; children.len()];
        let mut walk = Vec::new();
        for start in 0..children.len() {
            let mut at = Some(start);
            while let Some(k) = at {
                match state[k] {
                    2 => break,
                    1 => {
                        return Err(RelationError::Cycle {
                            relation: std::any::type_name::<ChildOf>(),
                            subject: children[k],
                            target: children[parents[k].expect("on a walk") as usize],
                        })
                    }
                    _ => {
                        state[k] = 1;
                        walk.push(k);
                        at = parents[k].map(|p| p as usize);
                    }
                }
            }
            for k in walk.drain(..) {
                state[k] = 2;
            }
        }
        Ok(())
    }

    /// Adds `(ChildOf, children[p])` to each `children[k]` with
    /// `parents[k] == Some(p)`, in order, for children known to have no
    /// parent and batch indices known to be in range and make no cycle (a
    /// fresh batch), and tells the managers. `index_bound` bounds the
    /// children's indices, to reserve once. Returns the `ChildOf` table's
    /// stamp with the pairs in (managers are only told, so they cannot
    /// change it).
    pub(crate) fn insert_fresh_child_of(
        &mut self,
        children: &[Entity],
        parents: &[Option<u32>],
        index_bound: usize,
    ) -> TableStamp {
        let table = self.relations.table_mut::<ChildOf>();
        table.insert_fresh_batch(children, parents, index_bound);
        let stamp = table.stamp();
        if !self.managers.is_empty() {
            let parented: Vec<Entity> = children
                .iter()
                .zip(parents)
                .filter(|(_, p)| p.is_some())
                .map(|(&c, _)| c)
                .collect();
            self.notify_parents_changed(&parented);
        }
        stamp
    }

    /// Tells every manager that `child`'s parent is now `parent`.
    fn notify_parent_changed(&mut self, child: Entity, parent: Option<Entity>) {
        let hierarchy = Hierarchy::new(self.relations.table::<ChildOf>());
        self.managers
            .notify_parent_changed(hierarchy, child, parent);
    }

    /// Hands every manager the hierarchy again, after the pairs were
    /// replaced wholesale (a load): each makes its own links agree.
    pub(crate) fn refollow_hierarchy(&mut self) {
        let hierarchy = Hierarchy::new(self.relations.table::<ChildOf>());
        self.managers.follow_hierarchy(hierarchy);
    }

    /// The parent of `child`, if it has one.
    pub fn parent(&self, child: Entity) -> Option<Entity> {
        self.targets::<ChildOf>(child).next().map(|(p, _)| p)
    }

    /// The children of `parent`, in attachment order.
    pub fn children(&self, parent: Entity) -> Sources<'_, ChildOf> {
        self.sources::<ChildOf>(parent)
    }

    /// `root` and its descendants, breadth-first: parents before children,
    /// siblings in [`WorldCore::children`] order.
    pub fn descendants(&self, root: Entity) -> Vec<Entity> {
        let mut out = vec![root];
        self.extend_breadth_first(&mut out, 0);
        out
    }

    /// Appends, breadth-first, the children of `out[from..]` and of each
    /// entity appended in turn.
    fn extend_breadth_first(&self, out: &mut Vec<Entity>, from: usize) {
        let mut next = from;
        while next < out.len() {
            let e = out[next];
            next += 1;
            out.extend(self.children(e));
        }
    }

    /// Every entity in the hierarchy, breadth-first from the roots (live
    /// entities with children and no parent, in index order): each parent
    /// comes before its children.
    pub fn hierarchy_breadth_first(&self) -> Vec<Entity> {
        let mut roots: Vec<Entity> = self
            .relations
            .table::<ChildOf>()
            .map(|t| {
                use crate::relation::table::ErasedRelation;
                t.all_pairs()
                    .into_iter()
                    .map(|(_, parent)| parent)
                    .filter(|&p| self.parent(p).is_none())
                    .collect()
            })
            .unwrap_or_default();
        roots.sort_unstable_by_key(|e| e.index());
        roots.dedup();
        let mut out = roots;
        self.extend_breadth_first(&mut out, 0);
        out
    }

    /// Whether `from` reaches `to` by following pairs of `R` from source to
    /// target (or is `to`). Visits each entity at most once, so it ends on
    /// any graph.
    fn reaches<R: Relation>(&self, from: Entity, to: Entity) -> bool {
        if R::EXCLUSIVE {
            // One target each: a chain, which ends because the relation is
            // acyclic (only acyclic relations ask).
            let mut at = Some(from);
            while let Some(e) = at {
                if e == to {
                    return true;
                }
                at = self.targets::<R>(e).next().map(|(t, _)| t);
            }
            return false;
        }
        if from == to {
            return true;
        }
        let mut stack = vec![from];
        let mut seen: HashSet<Entity> = HashSet::new();
        while let Some(e) = stack.pop() {
            for (t, _) in self.targets::<R>(e) {
                if t == to {
                    return true;
                }
                if seen.insert(t) {
                    stack.push(t);
                }
            }
        }
        false
    }
}

/// What [`WorldCore::parent_batch_rows`] learned and did: the `ChildOf`
/// row of the batch's first pair, the table's stamp right after, and what
/// the checks found of the batch.
struct BatchRows {
    first_row: usize,
    stamp: TableStamp,
    /// The parent indices list parents first.
    parents_first: bool,
    /// Above every child's index.
    index_bound: usize,
}
