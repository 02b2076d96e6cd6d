//! One scene graph: the transform manager follows the world's `ChildOf`.
//!
//! Design. A world's hierarchy is its `ChildOf` pairs; the transform manager
//! keeps instance-index links only so that world transforms stay
//! immediately correct without a lookup per node. Two graphs that could be
//! edited separately would drift apart, so inside a world the manager's
//! links are *derived*: the parent of an instance is the instance of its
//! entity's `ChildOf` parent, and a node whose parent entity has no
//! transform is a root (it keeps its local transform as its world). The
//! world tells the manager of every `ChildOf` change
//! ([`ComponentManager::on_parent_changed`]), hands it the whole hierarchy
//! when it joins the world or after a load
//! ([`ComponentManager::follow_hierarchy`]), and instances are created
//! against the hierarchy ([`TransformManager::create_in`],
//! [`TransformManager::create_many_in`],
//! [`TransformManager::create_many_in_batch`] for a batch parented in one
//! call, or the [`crate::WorldTransforms`] methods on `World`), so a new
//! node is linked under its parent and adopts children that already have
//! transforms. The structural calls of a manager on its own (`link`,
//! `unlink`, `create`, `create_many`) refuse with
//! [`TransformError::FollowsHierarchy`] once it follows a world. `ChildOf`
//! drives, never the other way round: despawning a parent
//! despawns its children in every path, so the manager only ever hears of
//! deaths through `on_destroy`.

use crate::error::TransformError;
use crate::link::{Instance, Link};
use crate::manager::TransformManager;
use crate::propagate::{BatchIndices, BatchSlots};
use doecs::{Entity, Hierarchy, ParentedBatch};
use glam::Affine3A;

impl TransformManager {
    /// Whether this manager follows a world's `ChildOf` hierarchy (it was
    /// added to a world). See the module docs of `follow.rs`.
    pub fn follows_hierarchy(&self) -> bool {
        self.follows
    }

    /// Creates `entity`'s instance linked as `hierarchy` says: under its
    /// parent's instance (a root if the parent has none), with every child
    /// that already has an instance linked under it.
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
        if let Some(parent) = hierarchy.parent(entity) {
            self.link_to_entity(inst.index, Some(parent));
        }
        self.adopt_children(hierarchy, std::slice::from_ref(&entity));
        // Linking moves no row: the handle is current.
        Ok(inst)
    }

    /// Creates a batch of instances linked as `hierarchy` says (parents
    /// before children need not hold: any order), in one pass: each is
    /// linked under its parent's instance, in the batch or already there,
    /// and adopts children that already have instances. Instances are laid
    /// out parents first with siblings together, as
    /// [`create_many`](Self::create_many) does.
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
        let mut outside = Vec::new();
        let parents: Vec<Option<u32>> = entities
            .iter()
            .enumerate()
            .map(|(k, &e)| {
                let p = hierarchy.parent(e)?;
                match position.of(p).filter(|&k| entities[k as usize] == p) {
                    Some(slot) => Some(slot),
                    None => {
                        outside.push((k, p));
                        None
                    }
                }
            })
            .collect();
        let slots = self.create_batch(entities, locals, &parents)?;
        self.finish_linked(hierarchy, entities, &slots, outside);
        // Linking moves no row: the batch's slots are current.
        Ok(slots.instances(entities))
    }

    /// [`create_many_in`](Self::create_many_in) for a batch parented in one
    /// call ([`doecs::WorldCore::parent_batch`]): when `hierarchy` confirms
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
        // Confirmed: every parent is in the batch, none outside.
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
    /// item `k` under each `(k, parent)` of `outside` (a parent entity
    /// outside the batch), and adopts children that already have
    /// instances.
    fn finish_linked(
        &mut self,
        hierarchy: Hierarchy<'_>,
        entities: &[Entity],
        slots: &BatchSlots,
        outside: Vec<(usize, Entity)>,
    ) {
        for (k, parent) in outside {
            self.link_to_entity(slots.slot(k), Some(parent));
        }
        self.adopt_children(hierarchy, entities);
    }

    /// Links slot `c` under the instance of `parent`, or makes it a root
    /// when `parent` is `None` or has no instance.
    fn link_to_entity(&mut self, c: u32, parent: Option<Entity>) {
        let Some(parent) = parent else {
            self.unlink_index(c);
            return;
        };
        match self.index_of(parent) {
            Some(p) => {
                // The hierarchy is acyclic and these links are part of it.
                let linked = self.link_index(c, p);
                debug_assert!(linked.is_ok(), "ChildOf is acyclic");
            }
            None => {
                self.unlink_index(c);
                self.may_have_orphans = true;
            }
        }
    }

    /// Links under each of `created` the children (per `hierarchy`) that
    /// have instances but are not linked to it: those created before their
    /// parent had a transform. Skipped unless such orphans may exist.
    fn adopt_children(&mut self, hierarchy: Hierarchy<'_>, created: &[Entity]) {
        if !self.may_have_orphans {
            return;
        }
        for &parent in created {
            let Some(p) = self.index_of(parent) else {
                continue;
            };
            for child in hierarchy.children(parent) {
                if let Some(c) = self.index_of(child) {
                    if self.store.cols().parent[c as usize] != Link::some(p) {
                        let linked = self.link_index(c, p);
                        debug_assert!(linked.is_ok(), "ChildOf is acyclic");
                    }
                }
            }
        }
    }

    /// Makes every link agree with `hierarchy` (joining a world, or after a
    /// load), then follows it.
    pub(crate) fn follow(&mut self, hierarchy: Hierarchy<'_>) {
        self.follows = true;
        self.may_have_orphans = false;
        let mut wanted = Vec::new();
        for i in 0..self.len {
            let e = self.handle(i).entity;
            let parent = hierarchy.parent(e);
            let p = parent.and_then(|p| self.index_of(p));
            if parent.is_some() && p.is_none() {
                self.may_have_orphans = true;
            }
            let want = p.map_or(Link::NONE, Link::some);
            if self.store.cols().parent[i as usize] != want {
                wanted.push((i, p));
            }
        }
        // Unlink every changed node first: the links left and the links
        // added are then all part of the acyclic hierarchy, so no step can
        // close a cycle.
        for &(c, _) in &wanted {
            self.unlink_index(c);
        }
        for (c, p) in wanted {
            if let Some(p) = p {
                let linked = self.link_index(c, p);
                debug_assert!(linked.is_ok(), "ChildOf is acyclic");
            }
        }
    }

    /// A `ChildOf` change reported by the world.
    pub(crate) fn parent_changed(&mut self, child: Entity, parent: Option<Entity>) {
        if !self.follows {
            return;
        }
        if let Some(c) = self.index_of(child) {
            self.link_to_entity(c, parent);
        }
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
