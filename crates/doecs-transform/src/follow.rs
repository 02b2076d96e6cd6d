//! One scene graph: the transform manager follows the world's `ChildOf`.
//!
//! Design. A world's hierarchy is its `ChildOf` pairs; the transform manager
//! keeps instance-index links only so that world transforms stay
//! immediately correct without a lookup per node. Two graphs that could be
//! edited separately would drift apart, so inside a world the manager's
//! links are *derived*: the parent of an instance is the instance of its
//! entity's nearest `ChildOf` ancestor that has a transform (flecs's `up`
//! traversal), and an instance with no such ancestor is a root (it keeps
//! its local transform as its world). An entity without a transform
//! between two with one (a cable between a boom and its counterweight)
//! does not cut the chain: the counterweight follows the boom.
//!
//! The world tells the manager of every `ChildOf` change
//! ([`ComponentManager::on_parent_changed`], and
//! [`ComponentManager::on_parents_changed`] for a batch), hands it the
//! whole hierarchy when it joins the world or after a load
//! ([`ComponentManager::follow_hierarchy`]), and instances are created
//! against the hierarchy ([`TransformManager::create_in`],
//! [`TransformManager::create_many_in`],
//! [`TransformManager::create_many_in_batch`] for a batch parented in one
//! call, or the [`crate::WorldTransforms`] methods on `World`), so a new
//! node is linked under its nearest ancestor with a transform and adopts
//! the instances below it that linked past it. A change to an entity
//! without a transform relinks the instances below it that it stood over
//! (those reached through entities without transforms), which only exist
//! when some instance's `ChildOf` parent has no transform: the manager
//! keeps a flag for that (`may_have_orphans`) and skips the walk
//! otherwise. Every relink of many nodes is applied link by link with no
//! cycle check (the links follow `ChildOf`, which is acyclic) and then one
//! world update of the topmost relinked subtrees, so following a whole
//! hierarchy (a load) costs time linear in its nodes, however deep. The
//! structural calls of a manager on its own (`link`, `unlink`, `create`,
//! `create_many`) refuse with [`TransformError::FollowsHierarchy`] once it
//! follows a world. `ChildOf` drives, never the other way round:
//! despawning a parent despawns its children in every path, so the manager
//! only ever hears of deaths through `on_destroy`; destroying an instance
//! whose entity lives on links its children under its own parent, keeping
//! their world transforms.
//!
//! [`ComponentManager::on_parent_changed`]: doecs::ComponentManager::on_parent_changed
//! [`ComponentManager::on_parents_changed`]: doecs::ComponentManager::on_parents_changed
//! [`ComponentManager::follow_hierarchy`]: doecs::ComponentManager::follow_hierarchy

use crate::error::TransformError;
use crate::link::{Instance, Link};
use crate::manager::TransformManager;
use crate::propagate::{BatchIndices, BatchSlots};
use doecs::raw::ParentedBatch;
use doecs::{Entity, Hierarchy};
use glam::Affine3A;
use std::collections::{HashMap, HashSet};

impl TransformManager {
    /// Whether this manager follows a world's `ChildOf` hierarchy (it was
    /// added to a world). See the module docs of `follow.rs`.
    pub fn follows_hierarchy(&self) -> bool {
        self.follows
    }

    /// Creates `entity`'s instance linked as `hierarchy` says: under the
    /// instance of its nearest ancestor with one (a root if none has), with
    /// the instances below it that have no nearer ancestor with one linked
    /// under it.
    ///
    /// Errors: as [`create`](Self::create), except that a manager in a
    /// world accepts it.
    pub fn create_in(
        &mut self,
        hierarchy: Hierarchy<'_>,
        entity: Entity,
        local: Affine3A,
    ) -> Result<Instance, TransformError> {
        let inst = self.create_root(entity, local)?;
        self.relink(hierarchy, &[inst.index]);
        self.adopt_children(hierarchy, std::slice::from_ref(&entity));
        // Linking moves no row: the handle is current.
        Ok(inst)
    }

    /// Creates a batch of instances linked as `hierarchy` says (parents
    /// before children need not hold: any order), in one pass: each is
    /// linked under the instance of its nearest ancestor that is in the
    /// batch or has one already, and adopts the instances below it, as
    /// [`create_in`](Self::create_in) does. Instances are laid out parents
    /// first with siblings together, as [`create_many`](Self::create_many)
    /// does.
    ///
    /// Errors: [`TransformError::LengthMismatch`],
    /// [`TransformError::DuplicateEntity`], [`TransformError::AlreadyExists`],
    /// [`TransformError::CapacityOverflow`]; the manager is unchanged then.
    pub fn create_many_in(
        &mut self,
        hierarchy: Hierarchy<'_>,
        entities: &[Entity],
        locals: &[Affine3A],
    ) -> Result<Vec<Instance>, TransformError> {
        let n = entities.len();
        if locals.len() != n {
            return Err(TransformError::LengthMismatch {
                entities: n,
                locals: locals.len(),
                parents: n,
            });
        }
        // Each entity's position in the batch, by entity index: a dense
        // table over the batch's index range (a fresh batch's indices are
        // close together), a hash map when they are spread out.
        let (lo, hi) = entities.iter().fold((u32::MAX, 0), |(lo, hi), e| {
            (lo.min(e.index()), hi.max(e.index()))
        });
        let position = BatchPositions::new(entities, lo, hi);
        /// Where an entity's transform parent is.
        #[derive(Copy, Clone)]
        enum Up {
            /// In the batch, at this position.
            Batch(u32),
            /// This entity, which has an instance already.
            Outside(Entity),
        }
        let stop = |a: Entity| match position.of(a).filter(|&k| entities[k as usize] == a) {
            Some(k) => Some(Up::Batch(k)),
            None => self.index_of(a).map(|_| Up::Outside(a)),
        };
        let mut nearest = Nearest::default();
        let mut outside = Vec::new();
        let mut skips = false;
        let parents: Vec<Option<u32>> = entities
            .iter()
            .enumerate()
            .map(|(k, &e)| {
                let start = hierarchy.parent(e);
                skips |= start.is_some_and(|p| stop(p).is_none());
                match nearest.at_or_above(hierarchy, start, stop)? {
                    Up::Batch(slot) => Some(slot),
                    Up::Outside(a) => {
                        outside.push((k, a));
                        None
                    }
                }
            })
            .collect();
        let slots = self.create_batch(entities, locals, &parents)?;
        self.may_have_orphans |= skips;
        self.finish_linked(hierarchy, entities, &slots, outside);
        // Linking moves no row: the batch's slots are current.
        Ok(slots.instances(entities))
    }

    /// [`create_many_in`](Self::create_many_in) for a batch parented in one
    /// call ([`raw::parent_batch`](doecs::raw::parent_batch)): when `hierarchy` confirms
    /// the batch's pairs ([`Hierarchy::batch_parents`]), its parent indices
    /// are used as they are, with no lookup per entity (and, when they list
    /// parents first, with no check of their order); otherwise each entity
    /// is looked up as `create_many_in` does. Same result, same errors.
    pub fn create_many_in_batch(
        &mut self,
        hierarchy: Hierarchy<'_>,
        batch: &ParentedBatch,
        locals: &[Affine3A],
    ) -> Result<(), TransformError> {
        let entities = batch.children();
        // Confirmed: every parent is in the batch, and the batch's roots
        // have no parent at all.
        let slots = match (hierarchy.batch_parents(batch), batch.parents_first()) {
            (Some(_), Some(first)) => {
                let indices = BatchIndices {
                    bound: batch.index_bound(),
                    run: batch.index_run(),
                };
                self.create_batch_in_order(entities, &indices, locals, first)?
            }
            (Some(parents), None) => self.create_batch(entities, locals, parents)?,
            (None, _) => return self.create_many_in(hierarchy, entities, locals).map(drop),
        };
        self.finish_linked(hierarchy, entities, &slots, Vec::new());
        Ok(())
    }

    /// The end both batch forms share, once the batch is created: links
    /// item `k` under the instance of each `(k, ancestor)` of `outside` (an
    /// ancestor outside the batch with an instance), and adopts the
    /// instances below the batch.
    fn finish_linked(
        &mut self,
        hierarchy: Hierarchy<'_>,
        entities: &[Entity],
        slots: &BatchSlots,
        outside: Vec<(usize, Entity)>,
    ) {
        if !outside.is_empty() {
            let mut linked = Vec::with_capacity(outside.len());
            for (k, ancestor) in outside {
                // Looked up now: the batch may have moved instances.
                let p = self.index_of(ancestor);
                debug_assert!(p.is_some(), "an instance before the batch");
                self.set_link(slots.slot(k), p);
                linked.push(slots.slot(k));
            }
            self.relinked(&linked);
        }
        self.adopt_children(hierarchy, entities);
    }

    /// Links under each of `created` the instances below it (per
    /// `hierarchy`) that have no nearer ancestor with an instance: those
    /// created before it had one. Skipped unless such instances may exist.
    fn adopt_children(&mut self, hierarchy: Hierarchy<'_>, created: &[Entity]) {
        if !self.may_have_orphans {
            return;
        }
        let mut nodes = Vec::new();
        let mut seen = HashSet::new();
        for &parent in created {
            if self.index_of(parent).is_some() {
                self.instances_below(hierarchy, parent, &mut nodes, &mut seen);
            }
        }
        self.relink(hierarchy, &nodes);
    }

    /// Appends to `out` the instances below `entity` in `hierarchy` reached
    /// through entities without one: those whose nearest ancestor with an
    /// instance is `entity` (or, when it has none, is its own). `seen`
    /// holds the entities without instances already walked, across calls.
    fn instances_below(
        &self,
        hierarchy: Hierarchy<'_>,
        entity: Entity,
        out: &mut Vec<u32>,
        seen: &mut HashSet<Entity>,
    ) {
        let mut stack = vec![entity];
        while let Some(e) = stack.pop() {
            for child in hierarchy.children(e) {
                match self.index_of(child) {
                    Some(i) => out.push(i),
                    None => {
                        if seen.insert(child) {
                            stack.push(child);
                        }
                    }
                }
            }
        }
    }

    /// Makes every link agree with `hierarchy` (joining a world, or after a
    /// load), then follows it. Linear in the nodes, however deep.
    pub(crate) fn follow(&mut self, hierarchy: Hierarchy<'_>) {
        self.follows = true;
        self.may_have_orphans = false;
        let all: Vec<u32> = (0..self.len).collect();
        self.relink(hierarchy, &all);
    }

    /// Links each of `nodes` under the instance of its entity's nearest
    /// ancestor with one (a root where none has), then updates the world
    /// transforms of the nodes that moved, once. Notes orphans (nodes whose
    /// `ChildOf` parent has no instance).
    pub(crate) fn relink(&mut self, hierarchy: Hierarchy<'_>, nodes: &[u32]) {
        let stop = |a: Entity| self.index_of(a);
        let mut nearest = Nearest::default();
        let mut orphans = false;
        let mut changed = Vec::new();
        for &i in nodes {
            let start = hierarchy.parent(self.handle(i).entity);
            orphans |= start.is_some_and(|p| stop(p).is_none());
            let want = nearest.at_or_above(hierarchy, start, stop);
            if self.store.cols().parent[i as usize] != want.map_or(Link::NONE, Link::some) {
                changed.push((i, want));
            }
        }
        self.may_have_orphans |= orphans;
        for &(c, p) in &changed {
            self.set_link(c, p);
        }
        let moved: Vec<u32> = changed.iter().map(|&(c, _)| c).collect();
        self.relinked(&moved);
    }

    /// Links slot `c` under slot `p` (a root for `None`) with no cycle
    /// check and no world update: for links that follow `ChildOf`, which is
    /// acyclic, set in bulk before one [`relinked`](Self::relinked) of the
    /// nodes whose links changed.
    pub(crate) fn set_link(&mut self, c: u32, p: Option<u32>) {
        self.detach(c);
        if let Some(p) = p {
            self.attach(c, p);
            if p > c {
                self.sorted = false;
            }
            if self.deferred && p >= self.first_dirty {
                self.partition_ordered = false;
            }
        }
    }

    /// After [`set_link`](Self::set_link)s: the world transforms of the
    /// relinked `nodes` and their subtrees are updated (immediate mode, each
    /// node once however the nodes relate) or marked for the next
    /// propagation (deferred mode).
    pub(crate) fn relinked(&mut self, nodes: &[u32]) {
        if self.deferred {
            for &c in nodes {
                self.mark_moved(c);
            }
        } else if !nodes.is_empty() {
            self.update_topmost(nodes);
        }
    }

    /// Links the nodes of a manager that follows no world yet as
    /// `hierarchy` says (what [`follow`](Self::follow) would make them),
    /// taking the links of `order` (`(child, parent)` slots, applied in
    /// order, each at the head of its parent's children) first where they
    /// agree with it, so a saved sibling order comes back; a link of
    /// `order` that disagrees is left out. Then updates world transforms
    /// once. Linear in the nodes and `order`.
    pub(crate) fn link_from_hierarchy(&mut self, hierarchy: Hierarchy<'_>, order: &[(u32, u32)]) {
        let stop = |a: Entity| self.index_of(a);
        let mut nearest = Nearest::default();
        let want: Vec<Option<u32>> = (0..self.len)
            .map(|i| nearest.at_or_above(hierarchy, hierarchy.parent(self.handle(i).entity), stop))
            .collect();
        let mut linked = vec![false; want.len()];
        let mut moved = Vec::with_capacity(want.len());
        let wanted = order
            .iter()
            .filter(|&&(c, p)| want[c as usize] == Some(p))
            .copied()
            .chain((0..self.len).filter_map(|c| Some((c, want[c as usize]?))));
        for (c, p) in wanted.collect::<Vec<_>>() {
            if !std::mem::replace(&mut linked[c as usize], true) {
                self.set_link(c, Some(p));
                moved.push(c);
            }
        }
        self.relinked(&moved);
    }

    /// `ChildOf` changes reported by the world: each of `children` has the
    /// parent `hierarchy` names now. An instance is relinked; an entity
    /// without one has the instances below it relinked.
    pub(crate) fn parents_changed(&mut self, hierarchy: Hierarchy<'_>, children: &[Entity]) {
        if !self.follows {
            return;
        }
        let mut nodes = Vec::new();
        let mut seen = HashSet::new();
        for &child in children {
            match self.index_of(child) {
                Some(c) => nodes.push(c),
                None if self.may_have_orphans => {
                    self.instances_below(hierarchy, child, &mut nodes, &mut seen)
                }
                None => {}
            }
        }
        if !nodes.is_empty() {
            self.relink(hierarchy, &nodes);
        }
    }
}

/// The nearest entity at or above a start that a `stop` test accepts, for
/// many starts in one pass: each entity walked through (one the test
/// refuses) is remembered with the answer, so no entity is walked twice
/// and many questions cost time linear in the entities they reach.
struct Nearest<T> {
    known: HashMap<Entity, Option<T>>,
    path: Vec<Entity>,
}

impl<T> Default for Nearest<T> {
    fn default() -> Self {
        Nearest {
            known: HashMap::new(),
            path: Vec::new(),
        }
    }
}

impl<T: Copy> Nearest<T> {
    /// What `stop` says of the first entity it accepts on the way from
    /// `start` up `hierarchy`; `None` past the root. `stop` must give one
    /// answer per entity for the life of this value.
    fn at_or_above(
        &mut self,
        hierarchy: Hierarchy<'_>,
        start: Option<Entity>,
        stop: impl Fn(Entity) -> Option<T>,
    ) -> Option<T> {
        self.path.clear();
        let mut at = start;
        let found = loop {
            let Some(e) = at else { break None };
            if let Some(t) = stop(e) {
                break Some(t);
            }
            if let Some(&known) = self.known.get(&e) {
                break known;
            }
            self.path.push(e);
            at = hierarchy.parent(e);
        };
        for &e in &self.path {
            self.known.insert(e, found);
        }
        found
    }
}

/// Positions of a batch's entities, by entity index.
enum BatchPositions {
    /// Indices `lo, lo + 1, ...` in batch order (a freshly spawned batch):
    /// the position is the offset, with no table.
    Consecutive {
        lo: u32,
        n: u32,
    },
    Dense {
        lo: u32,
        slots: Vec<u32>,
    },
    Sparse(std::collections::HashMap<u32, u32>),
}

impl BatchPositions {
    fn new(entities: &[Entity], lo: u32, hi: u32) -> Self {
        if entities.is_empty() {
            return BatchPositions::Dense {
                lo: 0,
                slots: Vec::new(),
            };
        }
        let span = (hi - lo) as usize + 1;
        if span == entities.len() && entities.iter().zip(lo..).all(|(e, i)| e.index() == i) {
            BatchPositions::Consecutive { lo, n: span as u32 }
        } else if span <= entities.len() * 4 + 64 {
            let mut slots = vec![u32::MAX; span];
            for (k, e) in entities.iter().enumerate() {
                slots[(e.index() - lo) as usize] = k as u32;
            }
            BatchPositions::Dense { lo, slots }
        } else {
            BatchPositions::Sparse(
                entities
                    .iter()
                    .enumerate()
                    .map(|(k, e)| (e.index(), k as u32))
                    .collect(),
            )
        }
    }

    /// The batch position of `e`, if `e` (this generation) is in the batch.
    /// Duplicates are refused later by the batch create; here the last
    /// position of an index wins.
    fn of(&self, e: Entity) -> Option<u32> {
        let k = match self {
            BatchPositions::Consecutive { lo, n } => {
                let at = e.index().checked_sub(*lo)?;
                return (at < *n).then_some(at);
            }
            BatchPositions::Dense { lo, slots } => {
                let at = e.index().checked_sub(*lo)? as usize;
                *slots.get(at)?
            }
            BatchPositions::Sparse(map) => *map.get(&e.index())?,
        };
        (k != u32::MAX).then_some(k)
    }
}
