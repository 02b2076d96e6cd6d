//! The [`TransformManager`]: creation, lookup, links, destruction, accessors.
//!
//! This file holds the type and the operations that change the hierarchy one
//! node at a time. World-transform propagation lives in `propagate.rs`, the
//! deferred dirty partition in `deferred.rs`, row moves and compaction in
//! `reorder.rs`, and the invariant checker in `invariants.rs`. Linking keeps
//! the child's *local* transform (its world follows the new parent); children
//! of a destroyed node keep their *world* transform: on its own the manager
//! makes them roots, in a world it links them under the destroyed node's
//! parent (their nearest ancestor with a transform now, see `follow.rs`).

use crate::error::TransformError;
use crate::link::{Instance, Link};
use crate::storage::Storage;
use doecs::raw::Entities;
use doecs::{ComponentManager, Entity, GcReport, Hierarchy, LazyGc, Probe};
use glam::Affine3A;
use std::any::Any;

/// `flags` bit: local transform (or parent) changed since the last deferred propagation.
pub(crate) const MOVED: u8 = 1;
/// `flags` bit: the node's entity is in the pending list.
pub(crate) const PENDING: u8 = 2;
/// `flags` bit used during propagation: the node stays in the dirty partition.
pub(crate) const STAY: u8 = 4;
/// Entity-map value meaning "no instance".
pub(crate) const NO_INSTANCE: u32 = u32::MAX;

/// The transform component of one world: a scene graph stored as SoA in a
/// single allocation (Bitsquid's "Building a Data-Oriented Entity System",
/// part 3).
///
/// # Storage invariants (checked by [`check_invariants`](Self::check_invariants))
/// - Slots `0..len` are live; capacity is always at least `len + 1`, so slot
///   `[len]` is the spare slot used by the three-step swap.
/// - `map[e.index()] == i` exactly when slot `i < len` holds entity `e`; every
///   live slot is mapped.
/// - Links are instance indices below `len`. `parent`/`first_child`/
///   `next_sibling`/`prev_sibling` form, for each node, a doubly linked list of
///   its children; roots have no siblings; the parent relation is acyclic.
/// - If the array is marked sorted (after [`compact`](Self::compact), kept by
///   appends), every parent comes before its children.
/// - Immediate mode: `world[i] == world[parent] * local[i]` (or `local[i]` for a
///   root) for every node at all times.
/// - Deferred mode: slots `first_dirty..len` are the dirty partition. Every child
///   of a node in it is in it too (or is pending to enter), and after
///   [`propagate`](Self::propagate) parents in it precede their children.
pub struct TransformManager {
    pub(crate) store: Storage,
    pub(crate) len: u32,
    pub(crate) map: Vec<u32>,
    pub(crate) deferred: bool,
    pub(crate) first_dirty: u32,
    pub(crate) pending: Vec<u64>,
    pub(crate) partition_ordered: bool,
    pub(crate) sorted: bool,
    pub(crate) mark: Vec<u8>,
    /// Scratch for `set_local_many`: the resolved slots of the batch.
    pub(crate) batch_slots: Vec<u32>,
    /// Scratch for `find_topmost`: the current climb.
    pub(crate) climb_path: Vec<u32>,
    /// Scratch for `find_topmost`: every node classified (to reset marks).
    pub(crate) climb_touched: Vec<u32>,
    /// Scratch for `update_topmost`: the subtrees to walk.
    pub(crate) topmost_roots: Vec<u32>,
    /// Scratch for `create_many`: a bitset of the batch's entity indices.
    pub(crate) batch_seen: Vec<u64>,
    pub(crate) gc: LazyGc,
    /// Whether this manager follows a world's `ChildOf` hierarchy (it was
    /// added to a world): its links are then the world's pairs restricted
    /// to entities with instances, and only the world changes them.
    pub(crate) follows: bool,
    /// Following only: some instance may have a parent entity without an
    /// instance (so a new instance may have children to adopt). Set when
    /// that can happen, cleared only by a full [`follow_hierarchy`].
    ///
    /// [`follow_hierarchy`]: doecs::ComponentManager::follow_hierarchy
    pub(crate) may_have_orphans: bool,
}

impl Default for TransformManager {
    fn default() -> Self {
        Self::new()
    }
}

impl std::fmt::Debug for TransformManager {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TransformManager")
            .field("len", &self.len)
            .field("deferred", &self.deferred)
            .field("first_dirty", &self.first_dirty)
            .finish_non_exhaustive()
    }
}

impl TransformManager {
    /// One lazy-gc sweep (part 2 of Bitsquid's series): probes random
    /// instances, destroys those whose entity is dead, stops after four live
    /// ones in a row. The report says how many probes it took (four when
    /// nothing died).
    pub fn sweep_garbage(&mut self, entities: &Entities) -> GcReport {
        let mut gc = std::mem::take(&mut self.gc);
        let report = gc.sweep(|random| {
            if self.len == 0 {
                return Probe::Empty;
            }
            let i = (random % u64::from(self.len)) as u32;
            let e = Entity::from_bits(self.store.cols().entity[i as usize]);
            if entities.alive(e) {
                Probe::Alive
            } else {
                self.destroy_index(i);
                Probe::Destroyed
            }
        });
        self.gc = gc;
        report
    }

    /// An empty manager with immediate world updates.
    pub fn new() -> Self {
        Self::with_capacity(0)
    }

    /// An empty immediate-mode manager with room for `n` instances.
    pub fn with_capacity(n: usize) -> Self {
        TransformManager {
            store: Storage::with_capacity(n + 1),
            len: 0,
            map: Vec::new(),
            deferred: false,
            first_dirty: 0,
            pending: Vec::new(),
            partition_ordered: true,
            sorted: true,
            mark: Vec::new(),
            batch_slots: Vec::new(),
            climb_path: Vec::new(),
            climb_touched: Vec::new(),
            topmost_roots: Vec::new(),
            batch_seen: Vec::new(),
            gc: LazyGc::new(),
            follows: false,
            may_have_orphans: false,
        }
    }

    /// An empty manager in **deferred** mode: `set_local`, `link` and `unlink`
    /// only mark nodes; [`propagate`](Self::propagate) updates world transforms.
    /// In this mode [`world`](Self::world) returns the value of the last
    /// propagation (or of creation, for nodes created since).
    pub fn deferred() -> Self {
        TransformManager {
            deferred: true,
            ..Self::new()
        }
    }

    /// Whether this manager defers world updates.
    pub fn is_deferred(&self) -> bool {
        self.deferred
    }

    /// Number of instances.
    pub fn len(&self) -> usize {
        self.len as usize
    }

    /// Whether there are no instances.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Number of instances in the deferred dirty partition (0 in immediate mode).
    pub fn dirty_len(&self) -> usize {
        if self.deferred {
            (self.len - self.first_dirty) as usize
        } else {
            0
        }
    }

    #[inline]
    pub(crate) fn handle(&self, i: u32) -> Instance {
        Instance {
            index: i,
            entity: Entity::from_bits(self.store.cols().entity[i as usize]),
        }
    }

    #[inline]
    pub(crate) fn index_of(&self, entity: Entity) -> Option<u32> {
        let i = *self.map.get(entity.index() as usize)?;
        (i != NO_INSTANCE && self.store.cols().entity[i as usize] == entity.to_bits()).then_some(i)
    }

    /// The instance of `entity`, if it has one.
    pub fn lookup(&self, entity: Entity) -> Option<Instance> {
        self.index_of(entity).map(|i| Instance { index: i, entity })
    }

    /// Resolves a handle to its current slot: the fast path checks the slot's
    /// entity, the slow path (after the instance moved) goes through the map.
    #[inline]
    pub(crate) fn resolve(&self, inst: Instance) -> Result<u32, TransformError> {
        if inst.index < self.len
            && self.store.cols().entity[inst.index as usize] == inst.entity.to_bits()
        {
            return Ok(inst.index);
        }
        self.index_of(inst.entity)
            .ok_or(TransformError::DeadInstance(inst.entity))
    }

    /// Whether `inst` still names a live instance (possibly moved).
    pub fn contains(&self, inst: Instance) -> bool {
        self.resolve(inst).is_ok()
    }

    /// Creates a root transform for `entity` with the given local (= world) transform.
    ///
    /// If the map holds an instance for an *older generation* of the same entity
    /// index (its entity died without notice), that stale instance is destroyed first.
    /// The entity map is a dense array indexed by `entity.index()` (as in the
    /// article), so it grows to the largest index seen.
    ///
    /// Errors: [`TransformError::AlreadyExists`], [`TransformError::CapacityOverflow`],
    /// and [`TransformError::FollowsHierarchy`] in a world, where
    /// [`create_in`](Self::create_in) (or `WorldTransforms::add_transform`)
    /// links the new instance as the world's `ChildOf` says.
    pub fn create(&mut self, entity: Entity, local: Affine3A) -> Result<Instance, TransformError> {
        self.refuse_if_following()?;
        self.create_root(entity, local)
    }

    /// A manager in a world takes its links from the world's hierarchy only.
    #[inline]
    pub(crate) fn refuse_if_following(&self) -> Result<(), TransformError> {
        if self.follows {
            Err(TransformError::FollowsHierarchy)
        } else {
            Ok(())
        }
    }

    /// Creates a root instance (the core of every single create).
    pub(crate) fn create_root(
        &mut self,
        entity: Entity,
        local: Affine3A,
    ) -> Result<Instance, TransformError> {
        self.prepare_slot_for(entity)?;
        if self.len as usize + 2 >= u32::MAX as usize {
            return Err(TransformError::CapacityOverflow);
        }
        let i = self.len;
        self.store.grow(i as usize + 2, i as usize + 1);
        self.write_new_row(i, entity, local);
        self.len += 1;
        if !self.deferred {
            self.first_dirty = self.len;
        }
        Ok(Instance { index: i, entity })
    }

    /// Refuses an entity that already has an instance; destroys a stale one of an
    /// older generation at the same index; makes the map long enough.
    pub(crate) fn prepare_slot_for(&mut self, entity: Entity) -> Result<(), TransformError> {
        let idx = entity.index() as usize;
        if let Some(&old) = self.map.get(idx) {
            if old != NO_INSTANCE {
                if self.store.cols().entity[old as usize] == entity.to_bits() {
                    return Err(TransformError::AlreadyExists(entity));
                }
                self.destroy_index(old);
            }
        } else {
            self.map.resize(idx + 1, NO_INSTANCE);
        }
        Ok(())
    }

    /// Writes a fresh root row at slot `i` and maps `entity` to it.
    pub(crate) fn write_new_row(&mut self, i: u32, entity: Entity, local: Affine3A) {
        let c = self.store.cols_mut();
        let u = i as usize;
        c.local[u] = local;
        c.world[u] = local;
        c.entity[u] = entity.to_bits();
        c.parent[u] = Link::NONE;
        c.first_child[u] = Link::NONE;
        c.next_sibling[u] = Link::NONE;
        c.prev_sibling[u] = Link::NONE;
        c.flags[u] = 0;
        c.idle[u] = 0;
        self.map[entity.index() as usize] = i;
    }

    /// The local transform (relative to the parent).
    pub fn local(&self, inst: Instance) -> Option<Affine3A> {
        let i = self.resolve(inst).ok()?;
        Some(self.store.cols().local[i as usize])
    }

    /// The world transform. Always current in immediate mode; in deferred mode,
    /// the value from the last [`propagate`](Self::propagate) (or creation).
    pub fn world(&self, inst: Instance) -> Option<Affine3A> {
        let i = self.resolve(inst).ok()?;
        Some(self.store.cols().world[i as usize])
    }

    /// The parent instance, `None` for roots and dead handles.
    pub fn parent(&self, inst: Instance) -> Option<Instance> {
        let i = self.resolve(inst).ok()?;
        let p = self.store.cols().parent[i as usize].get()?;
        Some(self.handle(p))
    }

    /// The children of `inst` (empty for a dead handle), most recently linked first.
    pub fn children(&self, inst: Instance) -> Children<'_> {
        let next = match self.resolve(inst) {
            Ok(i) => self.store.cols().first_child[i as usize],
            Err(_) => Link::NONE,
        };
        Children {
            manager: self,
            next,
        }
    }

    /// The ancestors of `inst`, parent first, ending at its root.
    pub fn ancestors(&self, inst: Instance) -> Ancestors<'_> {
        let next = match self.resolve(inst) {
            Ok(i) => self.store.cols().parent[i as usize],
            Err(_) => Link::NONE,
        };
        Ancestors {
            manager: self,
            next,
        }
    }

    /// Every instance, in array order.
    pub fn iter(&self) -> impl Iterator<Item = Instance> + '_ {
        (0..self.len).map(|i| self.handle(i))
    }

    /// Every instance's local transform, in array order (the order of
    /// [`iter`](Self::iter)): all of them in one slice, for passes over
    /// every transform such as a checksum.
    pub fn locals(&self) -> &[Affine3A] {
        let local = self.store.cols().local;
        &local[..self.len as usize]
    }

    /// Every instance's world transform, in array order, as
    /// [`world`](Self::world) reads them (in deferred mode, the values of
    /// the last propagation).
    pub fn worlds(&self) -> &[Affine3A] {
        let world = self.store.cols().world;
        &world[..self.len as usize]
    }

    /// Every instance's entity, in array order.
    pub fn entities(&self) -> impl ExactSizeIterator<Item = Entity> + '_ {
        let entity = self.store.cols().entity;
        entity[..self.len as usize]
            .iter()
            .map(|&bits| Entity::from_bits(bits))
    }

    /// Inserts detached node `c` at the head of `p`'s child list.
    pub(crate) fn attach(&mut self, c: u32, p: u32) {
        let k = self.store.cols_mut();
        let old = k.first_child[p as usize];
        if let Some(o) = old.get() {
            k.prev_sibling[o as usize] = Link::some(c);
        }
        k.next_sibling[c as usize] = old;
        k.prev_sibling[c as usize] = Link::NONE;
        k.parent[c as usize] = Link::some(p);
        k.first_child[p as usize] = Link::some(c);
    }

    /// Removes `c` from its parent's child list, making it a root.
    pub(crate) fn detach(&mut self, c: u32) {
        let k = self.store.cols_mut();
        let u = c as usize;
        let Some(p) = k.parent[u].get() else { return };
        let (prev, next) = (k.prev_sibling[u], k.next_sibling[u]);
        match prev.get() {
            Some(q) => k.next_sibling[q as usize] = next,
            None => k.first_child[p as usize] = next,
        }
        if let Some(n) = next.get() {
            k.prev_sibling[n as usize] = prev;
        }
        k.parent[u] = Link::NONE;
        k.prev_sibling[u] = Link::NONE;
        k.next_sibling[u] = Link::NONE;
    }

    /// Deferred mode: remember that `i`'s world must be recomputed.
    pub(crate) fn mark_moved(&mut self, i: u32) {
        let in_partition = i >= self.first_dirty;
        let k = self.store.values_mut();
        let u = i as usize;
        k.flags[u] |= MOVED;
        if !in_partition && k.flags[u] & PENDING == 0 {
            k.flags[u] |= PENDING;
            self.pending.push(k.entity[u]);
        }
    }

    /// Links `child` under `parent`, moving it if it already had a parent. The
    /// child keeps its local transform; its subtree's world transforms follow.
    /// Refuses dead handles and cycles (a node under itself or a descendant).
    ///
    /// In a world the hierarchy is `ChildOf` (`World::set_parent`), and this
    /// returns [`TransformError::FollowsHierarchy`].
    pub fn link(&mut self, child: Instance, parent: Instance) -> Result<(), TransformError> {
        self.refuse_if_following()?;
        let c = self.resolve(child)?;
        let p = self.resolve(parent)?;
        self.link_index(c, p)
    }

    /// Links slot `c` under slot `p` (the core of `link` and of following
    /// the world's hierarchy).
    pub(crate) fn link_index(&mut self, c: u32, p: u32) -> Result<(), TransformError> {
        let cycle = || TransformError::Cycle {
            child: self.handle(c).entity,
            parent: self.handle(p).entity,
        };
        let mut up = Link::some(p);
        while let Some(a) = up.get() {
            if a == c {
                return Err(cycle());
            }
            up = self.store.cols().parent[a as usize];
        }
        if self.store.cols().parent[c as usize] == Link::some(p) {
            return Ok(());
        }
        self.detach(c);
        self.attach(c, p);
        if p > c {
            self.sorted = false;
        }
        if self.deferred {
            if p >= self.first_dirty {
                self.partition_ordered = false;
            }
            self.mark_moved(c);
        } else {
            self.update_subtree(c);
        }
        Ok(())
    }

    /// Makes `child` a root. It keeps its local transform, which becomes its world.
    ///
    /// In a world this returns [`TransformError::FollowsHierarchy`], as
    /// [`link`](Self::link) does.
    pub fn unlink(&mut self, child: Instance) -> Result<(), TransformError> {
        self.refuse_if_following()?;
        let c = self.resolve(child)?;
        self.unlink_index(c);
        Ok(())
    }

    /// Makes slot `c` a root (the core of `unlink`).
    pub(crate) fn unlink_index(&mut self, c: u32) {
        if !self.store.cols().parent[c as usize].is_some() {
            return;
        }
        self.detach(c);
        if self.deferred {
            self.mark_moved(c);
        } else {
            self.update_subtree(c);
        }
    }

    /// The current world transform of `i` computed from locals up to its root,
    /// O(depth), independent of stored world values.
    pub(crate) fn world_now(&self, i: u32) -> Affine3A {
        let c = self.store.cols();
        let mut w = c.local[i as usize];
        let mut up = c.parent[i as usize];
        while let Some(a) = up.get() {
            w = c.local[a as usize] * w;
            up = c.parent[a as usize];
        }
        w
    }

    /// Destroys an instance. Its children keep their world transform: they
    /// become roots (their local is set to it) or, in a world, are linked
    /// under the destroyed node's parent, their nearest ancestor with a
    /// transform now (their local is set relative to it; where that
    /// parent's world cannot be inverted, they keep their local instead). The last instance moves into the
    /// freed slot, so handles to it go stale (they still resolve, see [`Instance`]).
    pub fn destroy(&mut self, inst: Instance) -> Result<(), TransformError> {
        let i = self.resolve(inst)?;
        self.destroy_index(i);
        Ok(())
    }

    pub(crate) fn destroy_index(&mut self, i: u32) {
        // In a world the children's nearest ancestor with an instance is
        // now `i`'s parent's (see `follow.rs`); on its own, none.
        let up = match self.follows {
            true => self.store.cols().parent[i as usize].get(),
            false => None,
        };
        if self.follows && self.store.cols().first_child[i as usize].is_some() {
            // The children keep their parent entity, which has no instance now.
            self.may_have_orphans = true;
        }
        // A child keeps its world transform: its local becomes relative to
        // `up`'s world, when that can be inverted.
        let up_inverse = up.and_then(|p| {
            let w = match self.deferred {
                true => self.world_now(p),
                false => self.store.cols().world[p as usize],
            };
            Some(w.inverse()).filter(|inv| inv.is_finite())
        });
        while let Some(ch) = self.store.cols().first_child[i as usize].get() {
            let w = if self.deferred {
                self.world_now(ch)
            } else {
                self.store.cols().world[ch as usize]
            };
            self.detach(ch);
            match (up, up_inverse) {
                (None, _) => {
                    let k = self.store.values_mut();
                    k.local[ch as usize] = w;
                    k.world[ch as usize] = w;
                }
                (Some(p), Some(inverse)) => {
                    self.store.values_mut().local[ch as usize] = inverse * w;
                    self.set_link(ch, Some(p));
                }
                (Some(p), None) => {
                    // A parent with a singular world: the child keeps its
                    // local, and its subtree follows the new parent.
                    self.set_link(ch, Some(p));
                    if !self.deferred {
                        self.update_subtree(ch);
                    }
                }
            }
            if self.deferred {
                self.mark_moved(ch);
            }
        }
        self.detach(i);
        let e = Entity::from_bits(self.store.cols().entity[i as usize]);
        self.map[e.index() as usize] = NO_INSTANCE;
        self.remove_row(i);
    }
}

/// Iterator over the children of a node. See [`TransformManager::children`].
#[derive(Debug)]
pub struct Children<'a> {
    manager: &'a TransformManager,
    next: Link,
}

impl Iterator for Children<'_> {
    type Item = Instance;
    fn next(&mut self) -> Option<Instance> {
        let i = self.next.get()?;
        self.next = self.manager.store.cols().next_sibling[i as usize];
        Some(self.manager.handle(i))
    }
}

/// Iterator over the ancestors of a node. See [`TransformManager::ancestors`].
#[derive(Debug)]
pub struct Ancestors<'a> {
    manager: &'a TransformManager,
    next: Link,
}

impl Iterator for Ancestors<'_> {
    type Item = Instance;
    fn next(&mut self) -> Option<Instance> {
        let i = self.next.get()?;
        self.next = self.manager.store.cols().parent[i as usize];
        Some(self.manager.handle(i))
    }
}

impl ComponentManager for TransformManager {
    /// Destroys the instances of the given entities (unknown ones are ignored).
    /// Children of a destroyed node that survive keep their world (see
    /// [`destroy`](TransformManager::destroy)).
    fn on_destroy(&mut self, destroyed: &[Entity]) {
        for &e in destroyed {
            if let Some(i) = self.index_of(e) {
                self.destroy_index(i);
            }
        }
    }

    /// Bitsquid's lazy collection: probe random instances, destroy those whose
    /// entity is dead, stop after four live ones in a row.
    fn collect_garbage(&mut self, entities: &Entities) -> usize {
        self.sweep_garbage(entities).destroyed
    }

    /// Takes part in world snapshots: saves every field that decides what
    /// the manager does next (see `snapshot.rs`), reusing `saved`'s memory.
    fn save_state(&self, saved: &mut Option<Box<dyn Any + Send + Sync>>) -> bool {
        self.save_into(saved);
        true
    }

    /// Puts back what [`save_state`](Self::save_state) saved, exactly.
    fn restore_state(&mut self, saved: &(dyn Any + Send + Sync)) {
        self.restore_from(saved);
    }

    /// Joins a world: the links become the world's `ChildOf` pairs among
    /// entities with instances, and only the world changes them from now on
    /// (see `follow.rs`).
    fn follow_hierarchy(&mut self, hierarchy: Hierarchy<'_>) {
        self.follow(hierarchy);
    }

    /// Relinks `child`'s instance under its nearest ancestor's with one,
    /// or, when it has none, the instances below it (see `follow.rs`).
    fn on_parent_changed(&mut self, hierarchy: Hierarchy<'_>, child: Entity, _: Option<Entity>) {
        self.parents_changed(hierarchy, std::slice::from_ref(&child));
    }

    /// [`on_parent_changed`](Self::on_parent_changed) for a batch, with one
    /// walk of the hierarchy and one world update for all of it.
    fn on_parents_changed(&mut self, hierarchy: Hierarchy<'_>, children: &[Entity]) {
        self.parents_changed(hierarchy, children);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::Vec3;

    #[test]
    fn stale_handles_resolve_after_swap_remove() {
        let mut tm = TransformManager::new();
        let a = tm
            .create(Entity::from_parts(0, 0), Affine3A::IDENTITY)
            .unwrap();
        let b = tm
            .create(
                Entity::from_parts(1, 0),
                Affine3A::from_translation(Vec3::X),
            )
            .unwrap();
        tm.destroy(a).unwrap();
        assert_eq!(b.index(), 1);
        assert_eq!(
            tm.world(b).unwrap().translation.x,
            1.0,
            "moved to slot 0, still found"
        );
        assert_eq!(tm.lookup(b.entity()).unwrap().index(), 0);
        assert!(tm.world(a).is_none());
        assert_eq!(tm.link(a, b), Err(TransformError::DeadInstance(a.entity())));
    }

    #[test]
    fn destroy_reparents_children_keeping_world() {
        let mut tm = TransformManager::new();
        let p = tm
            .create(
                Entity::from_parts(0, 0),
                Affine3A::from_translation(Vec3::X),
            )
            .unwrap();
        let c = tm
            .create(
                Entity::from_parts(1, 0),
                Affine3A::from_translation(Vec3::Y),
            )
            .unwrap();
        tm.link(c, p).unwrap();
        assert_eq!(
            tm.link(p, p),
            Err(TransformError::Cycle {
                child: p.entity(),
                parent: p.entity()
            })
        );
        tm.destroy(p).unwrap();
        assert!(tm.parent(c).is_none());
        assert_eq!(
            tm.world(c).unwrap().translation,
            Vec3::new(1.0, 1.0, 0.0).into()
        );
        assert_eq!(tm.local(c), tm.world(c));
        tm.check_invariants();
    }
}
