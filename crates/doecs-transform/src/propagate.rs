//! World-transform propagation: immediate `set_local`, the O(n) batch
//! `set_local_many`, the full pass `update_all`, and batch creation.
//!
//! Nothing here recurses. A subtree is walked in preorder without a stack by
//! following `first_child`, then `next_sibling`, then climbing `parent` until a
//! sibling appears, stopping at the subtree root; a parent's world is always
//! computed before its children's, so a 100,000-long chain costs O(n) time and
//! O(1) stack. The batch update marks its targets, finds the *topmost* ones (no
//! target among their ancestors) with a memoised climb whose total length is
//! bounded by the number of nodes touched, then walks each topmost subtree
//! once, so moving every node of a chain costs O(n), not O(n²).

use crate::error::TransformError;
use crate::link::{Instance, Link};
use crate::manager::{TransformManager, MOVED, NO_INSTANCE};
use crate::storage::WrittenColumns;
use doecs::raw::ParentsFirst;
use doecs::Entity;
use glam::Affine3A;
use std::ops::Range;

const TARGET: u8 = 1;
const KNOWN: u8 = 2;
const COVERED: u8 = 4;

impl TransformManager {
    /// Recomputes the world transforms of `root` and its whole subtree
    /// (iterative preorder, no stack).
    pub(crate) fn update_subtree(&mut self, root: u32) {
        let c = self.store.values_mut();
        let r = root as usize;
        c.world[r] = match c.parent[r].get() {
            Some(p) => c.world[p as usize] * c.local[r],
            None => c.local[r],
        };
        let mut node = root;
        loop {
            if let Some(fc) = c.first_child[node as usize].get() {
                node = fc;
            } else {
                loop {
                    if node == root {
                        return;
                    }
                    if let Some(ns) = c.next_sibling[node as usize].get() {
                        node = ns;
                        break;
                    }
                    match c.parent[node as usize].get() {
                        Some(p) => node = p,
                        None => return, // unreachable by the link invariants
                    }
                }
            }
            let n = node as usize;
            if let Some(p) = c.parent[n].get() {
                c.world[n] = c.world[p as usize] * c.local[n];
            }
        }
    }

    /// Sets the local transform. In immediate mode the world transforms of the
    /// node and its whole subtree are correct when this returns; in deferred
    /// mode the node is only marked for the next [`propagate`](Self::propagate).
    pub fn set_local(&mut self, inst: Instance, local: Affine3A) -> Result<(), TransformError> {
        let i = self.resolve(inst)?;
        self.store.values_mut().local[i as usize] = local;
        if self.deferred {
            self.mark_moved(i);
        } else {
            self.update_subtree(i);
        }
        Ok(())
    }

    /// Sets many local transforms with a single O(n) world update, however the
    /// nodes relate (the last value wins for a repeated node). All handles are
    /// checked first: on error nothing is changed.
    pub fn set_local_many(&mut self, items: &[(Instance, Affine3A)]) -> Result<(), TransformError> {
        let mut idx = std::mem::take(&mut self.batch_slots);
        idx.clear();
        for &(inst, _) in items {
            match self.resolve(inst) {
                Ok(i) => idx.push(i),
                Err(e) => {
                    self.batch_slots = idx;
                    return Err(e);
                }
            }
        }
        {
            let c = self.store.values_mut();
            for (&i, (_, m)) in idx.iter().zip(items) {
                c.local[i as usize] = *m;
            }
        }
        if self.deferred {
            for &i in &idx {
                self.mark_moved(i);
            }
        } else {
            self.update_topmost(&idx);
        }
        self.batch_slots = idx;
        Ok(())
    }

    /// Sets the local transforms of entities straight from a query's chunk:
    /// `entities[k]` gets `locals[k]` (the iterator's `k`-th item). Entities
    /// without an instance are skipped; returns how many were set. No
    /// intermediate list: each entity is looked up and written in place. In
    /// immediate mode one O(n) world update of the touched subtrees runs at
    /// the end of the call; in deferred mode the nodes are only marked for
    /// the next [`propagate`](Self::propagate).
    ///
    /// ```
    /// use doecs::World;
    /// use doecs_transform::TransformManager;
    /// use glam::{Affine3A, Vec3};
    /// let mut world = World::new();
    /// let es = world.spawn_batch((0..3u32).map(|i| (i,)));
    /// let mut tm = TransformManager::new();
    /// for &e in &es {
    ///     tm.create(e, Affine3A::IDENTITY).unwrap();
    /// }
    /// let set = tm.set_locals(&es, (0..3).map(|i| Affine3A::from_translation(Vec3::X * i as f32)));
    /// assert_eq!(set, 3);
    /// let world_of_2 = tm.world(tm.lookup(es[2]).unwrap()).unwrap();
    /// assert_eq!(world_of_2.translation.x, 2.0);
    /// ```
    pub fn set_locals(
        &mut self,
        entities: &[Entity],
        locals: impl IntoIterator<Item = Affine3A>,
    ) -> usize {
        self.update_locals(entities.iter().copied().zip(locals), |local, new| {
            *local = new
        })
    }

    /// Changes the local transforms of entities in place, straight from a
    /// query: for each `(entity, value)`, `change(&mut local, value)`. As
    /// [`set_locals`](Self::set_locals) otherwise.
    pub fn update_locals<V>(
        &mut self,
        items: impl IntoIterator<Item = (Entity, V)>,
        mut change: impl FnMut(&mut Affine3A, V),
    ) -> usize {
        let mut idx = std::mem::take(&mut self.batch_slots);
        idx.clear();
        let mut count = 0;
        for (entity, value) in items {
            if let Some(i) = self.index_of(entity) {
                change(&mut self.store.values_mut().local[i as usize], value);
                count += 1;
                if self.deferred {
                    self.mark_moved(i);
                } else {
                    idx.push(i);
                }
            }
        }
        if !self.deferred {
            self.update_topmost(&idx);
        }
        self.batch_slots = idx;
        count
    }

    /// [`update_locals`](Self::update_locals) fed by a query and run in
    /// parallel over its chunks, on the current pool (in a system: the
    /// schedule's): each entity the query visits that has an instance gets
    /// `change(&mut local, &value)`. Returns how many were changed.
    ///
    /// A query yields each entity once, and an entity has one instance, so
    /// every slot is written by one thread. Nodes are marked as by
    /// `update_locals`: in deferred mode for the next
    /// [`propagate`](Self::propagate); in immediate mode one O(n) world
    /// update of the touched subtrees runs at the end.
    ///
    /// ```
    /// use doecs::{Entity, World};
    /// use doecs_transform::TransformManager;
    /// use glam::{Affine3A, Vec3};
    /// struct Speed(f32);
    /// let mut world = World::new();
    /// let es = world.spawn_batch((0..100).map(|i| (Speed(i as f32),)));
    /// let mut tm = TransformManager::new();
    /// for &e in &es {
    ///     tm.create(e, Affine3A::IDENTITY).unwrap();
    /// }
    /// let mut q = world.query_mut::<(Entity, &Speed)>();
    /// let n = tm.par_update_locals(&mut q, |local, s| {
    ///     local.translation.x += s.0;
    /// });
    /// assert_eq!(n, 100);
    /// let w = tm.world(tm.lookup(es[7]).unwrap()).unwrap();
    /// assert_eq!(Vec3::from(w.translation), Vec3::X * 7.0);
    /// ```
    pub fn par_update_locals<V: doecs::Component, F: doecs::QueryFilter + 'static>(
        &mut self,
        query: &mut doecs::Query<'_, (Entity, &V), F>,
        change: impl Fn(&mut Affine3A, &V) + Send + Sync,
    ) -> usize {
        use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::Relaxed};
        let (len, first_dirty, deferred) = (self.len, self.first_dirty, self.deferred);
        let changed = AtomicUsize::new(0);
        let outside_partition = AtomicBool::new(false);
        {
            let map = &self.map;
            let slots = self.store.shared_slots();
            query.par_for_each_chunk(|(entities, values)| {
                let mut n = 0;
                let mut outside = false;
                for (&e, v) in entities.iter().zip(values) {
                    let Some(&i) = map.get(e.index() as usize) else {
                        continue;
                    };
                    if i == NO_INSTANCE || i >= len || slots.entity()[i as usize] != e.to_bits() {
                        continue;
                    }
                    // SAFETY: the query yields each entity once, and slot `i`
                    // is the one live slot holding `e`, so no other item of
                    // this call (on any thread) maps to `i`.
                    let (local, flags) = unsafe { slots.slot(i as usize) };
                    change(local, v);
                    *flags |= MOVED;
                    n += 1;
                    outside |= !deferred || i < first_dirty;
                }
                changed.fetch_add(n, Relaxed);
                if outside {
                    outside_partition.store(true, Relaxed);
                }
            });
        }
        if outside_partition.into_inner() {
            self.finish_parallel_marks();
        }
        changed.into_inner()
    }

    /// After a parallel update marked nodes with `MOVED` only: in deferred
    /// mode queues the marked clean nodes as pending (as `mark_moved` does);
    /// in immediate mode clears the marks and updates the touched subtrees.
    fn finish_parallel_marks(&mut self) {
        if self.deferred {
            for i in 0..self.first_dirty {
                if self.store.cols().flags[i as usize] & MOVED != 0 {
                    self.mark_moved(i);
                }
            }
        } else {
            let mut idx = std::mem::take(&mut self.batch_slots);
            idx.clear();
            let flags = self.store.values_mut().flags;
            for (i, f) in flags[..self.len as usize].iter_mut().enumerate() {
                if *f & MOVED != 0 {
                    *f &= !MOVED;
                    idx.push(i as u32);
                }
            }
            self.update_topmost(&idx);
            self.batch_slots = idx;
        }
    }

    /// Updates the subtrees of the topmost nodes among `targets`, each node once.
    pub(crate) fn update_topmost(&mut self, targets: &[u32]) {
        let mut roots = std::mem::take(&mut self.topmost_roots);
        self.find_topmost(targets, &mut roots);
        for &r in &roots {
            self.update_subtree(r);
        }
        self.topmost_roots = roots;
    }

    /// Fills `roots` with the targets that have no target among their
    /// ancestors, in target order. Each climb stops at the first target or at a
    /// node an earlier climb already classified, so every node is climbed
    /// through at most once. Returns how many nodes were classified (the work
    /// done, at most the number of distinct nodes on target-to-root paths).
    pub(crate) fn find_topmost(&mut self, targets: &[u32], roots: &mut Vec<u32>) -> usize {
        roots.clear();
        if self.mark.len() < self.len as usize {
            self.mark.resize(self.len as usize, 0);
        }
        let mut path = std::mem::take(&mut self.climb_path);
        let mut touched = std::mem::take(&mut self.climb_touched);
        touched.clear();
        let parent = self.store.cols().parent;
        let mark = &mut self.mark;
        for &t in targets {
            mark[t as usize] |= TARGET;
        }
        for &t in targets {
            if mark[t as usize] & KNOWN != 0 {
                continue;
            }
            path.clear();
            let mut up = parent[t as usize];
            let covered = loop {
                let Some(q) = up.get() else { break false };
                let m = mark[q as usize];
                if m & TARGET != 0 {
                    break true;
                }
                if m & KNOWN != 0 {
                    break m & COVERED != 0;
                }
                path.push(q);
                up = parent[q as usize];
            };
            let bits = KNOWN | if covered { COVERED } else { 0 };
            for &q in path.iter().chain(std::iter::once(&t)) {
                mark[q as usize] |= bits;
                touched.push(q);
            }
            if !covered {
                roots.push(t);
            }
        }
        for &q in &touched {
            mark[q as usize] = 0;
        }
        for &t in targets {
            mark[t as usize] = 0;
        }
        let work = touched.len();
        self.climb_path = path;
        self.climb_touched = touched;
        work
    }

    /// Recomputes every world transform in one O(n) pass: a linear walk when the
    /// array is parent-first (after [`compact`](Self::compact)), otherwise one
    /// preorder walk per root.
    pub fn update_all(&mut self) {
        if self.sorted {
            let c = self.store.values_mut();
            for i in 0..self.len as usize {
                c.world[i] = match c.parent[i].get() {
                    Some(p) => c.world[p as usize] * c.local[i],
                    None => c.local[i],
                };
            }
        } else {
            for i in 0..self.len {
                if !self.store.cols().parent[i as usize].is_some() {
                    self.update_subtree(i);
                }
            }
        }
    }

    /// Grows the entity map so it covers every index below `index_bound`.
    fn map_covering(&mut self, index_bound: usize) {
        if self.map.len() < index_bound {
            self.map.resize(index_bound, NO_INSTANCE);
        }
    }

    /// The fast path of [`create_many`](Self::create_many) for a batch whose
    /// parents come before their children (`parents[k] < k`, which a level
    /// blob guarantees; the caller has checked or knows it) and whose
    /// entities have no instance, live or stale. The batch keeps its order:
    /// item `k` lands in slot `len + k`, which is parent-first already, so
    /// links are written in place with no sort, no breadth-first walk and
    /// no temporary arrays. Returns `Ok(None)`, having changed nothing
    /// observable, when the batch does not qualify; errors are the ones the
    /// general path reports. `indices` is what the caller knows of the
    /// entities' indices.
    ///
    /// # Safety
    /// `parents` lists parents first: every `Some(p)` at position `k` has
    /// `p < k` (what [`ParentsFirst`] proves). The writes read and link
    /// the parent's slot unchecked on that promise.
    unsafe fn create_many_in_order(
        &mut self,
        entities: &[Entity],
        indices: &BatchIndices,
        locals: &[Affine3A],
        parents: &[Option<u32>],
    ) -> Result<Option<BatchSlots>, TransformError> {
        debug_assert!(ParentsFirst::holds(parents));
        let n = entities.len();
        // Slices of the batch's length, so indexing by `k` needs no check.
        let (locals, parents) = (&locals[..n], &parents[..n]);
        let base = self.len;
        let b = base as usize;
        // Each parent's last child so far (allocated before the claims,
        // which measured faster than after them).
        let mut last_child = vec![Link::NONE; n];
        // Every entity's map entry is claimed before any slot is written.
        // A run of indices the map does not reach yet is appended in one
        // write, as none of its entries can be taken. Otherwise each entry
        // is checked and claimed in a tight pass of its own (claiming each
        // beside its slot's writes measured slower, as it leaves the write
        // loop short of registers), and a batch with an entry taken
        // already changes nothing.
        let claimed = match &indices.run {
            Some(run) if run.len() == n && run.start as usize >= self.map.len() => {
                debug_assert!(entities
                    .iter()
                    .zip(run.clone())
                    .all(|(e, i)| e.index() == i));
                append_map_run(&mut self.map, run.start as usize, base, n);
                Ok(())
            }
            _ => {
                self.map_covering(indices.bound);
                claim_map_entries(&mut self.map, entities, base)
            }
        };
        if let Err((k, held)) = claimed {
            // An entry that already holds a slot of this batch (>= base) is
            // a duplicate; any other entry is an existing instance.
            let e = entities[k];
            return if held >= base {
                Err(TransformError::DuplicateEntity(e))
            } else if self.store.cols().entity[held as usize] == e.to_bits() {
                Err(TransformError::AlreadyExists(e))
            } else {
                Ok(None) // a stale instance: the general path replaces it
            };
        }
        // The slots are written column by column, each in batch order:
        // the links first, each child appended to its parent's list (the
        // parent's first child or its last child's next sibling, slots of
        // items before it), so the lists end up in batch order; then each
        // world transform beside its local one, a parent's final before its
        // children's (`p < k`).
        self.store.write_columns(b, n, |new| {
            let mut first_child = new.first_child.fill(Link::NONE);
            let mut next_sibling = new.next_sibling.fill(Link::NONE);
            let prev_sibling = new.prev_sibling.write_with(|k| {
                let Some(p) = parents[k] else {
                    return Link::NONE;
                };
                let slot = Link::some(base + k as u32);
                // SAFETY: `p < k < n` (the caller's parents-first promise),
                // and `last_child` is `n` long.
                let prev =
                    std::mem::replace(unsafe { last_child.get_unchecked_mut(p as usize) }, slot);
                // SAFETY: `prev` is the slot of an item before `k` (only
                // items already linked are recorded in `last_child`), and
                // `p < k`: both inside the batch's `n` slots.
                unsafe {
                    match prev.get() {
                        Some(prev) => *next_sibling.get_unchecked_mut(prev as usize - b) = slot,
                        None => *first_child.get_unchecked_mut(p as usize) = slot,
                    }
                }
                prev
            });
            let (world, local) = new
                .world
                .write_with_earlier_beside(new.local, |k, earlier| {
                    let local = locals[k];
                    let world = match parents[k] {
                        // SAFETY: `p < k` (the caller's parents-first promise),
                        // and `earlier` holds the `k` world transforms before
                        // item `k`'s.
                        Some(p) => *unsafe { earlier.get_unchecked(p as usize) } * local,
                        None => local,
                    };
                    (world, local)
                });
            WrittenColumns {
                local,
                world,
                entity: new.entity.write_with(|k| entities[k].to_bits()),
                parent: new.parent.write_with(|k| match parents[k] {
                    Some(p) => Link::some(base + p),
                    None => Link::NONE,
                }),
                first_child,
                next_sibling,
                prev_sibling,
                flags: new.flags.fill(0),
                idle: new.idle.fill(0),
            }
        });
        self.len = base + n as u32;
        if !self.deferred {
            self.first_dirty = self.len;
        }
        Ok(Some(BatchSlots::InOrder { base }))
    }

    /// Creates a batch of instances for the level spawner. `parents[k]` is the
    /// index *within this batch* of item `k`'s parent (any order; cycles, self
    /// parents and out-of-range indices are refused before anything changes).
    /// Instances are laid out parents first with siblings together, and world
    /// transforms are computed in one O(n) pass. Returns the handles in batch order.
    ///
    /// In a world this returns [`TransformError::FollowsHierarchy`]: there
    /// the parents come from `ChildOf`, through
    /// [`create_many_in`](Self::create_many_in).
    pub fn create_many(
        &mut self,
        entities: &[Entity],
        locals: &[Affine3A],
        parents: &[Option<u32>],
    ) -> Result<Vec<Instance>, TransformError> {
        self.refuse_if_following()?;
        let slots = self.create_batch(entities, locals, parents)?;
        Ok(slots.instances(entities))
    }

    /// The core of `create_many` and `create_many_in`: returns where the
    /// items landed.
    pub(crate) fn create_batch(
        &mut self,
        entities: &[Entity],
        locals: &[Affine3A],
        parents: &[Option<u32>],
    ) -> Result<BatchSlots, TransformError> {
        self.check_batch_lengths(entities, locals, parents)?;
        let indices = BatchIndices {
            bound: entities
                .iter()
                .map(|e| e.index() as usize + 1)
                .max()
                .unwrap_or(0),
            run: None,
        };
        if ParentsFirst::holds(parents) {
            // SAFETY: `parents` lists parents first (checked just above).
            let in_order =
                unsafe { self.create_many_in_order(entities, &indices, locals, parents)? };
            if let Some(slots) = in_order {
                return Ok(slots);
            }
        }
        self.create_placed(entities, indices.bound, locals, parents)
    }

    /// [`create_batch`](Self::create_batch) for parents known to come
    /// first and what a [`ParentedBatch`](doecs::raw::ParentedBatch) knows of
    /// its entities' indices: neither is computed again.
    pub(crate) fn create_batch_in_order(
        &mut self,
        entities: &[Entity],
        indices: &BatchIndices,
        locals: &[Affine3A],
        parents: &ParentsFirst,
    ) -> Result<BatchSlots, TransformError> {
        let parents = parents.as_slice();
        self.check_batch_lengths(entities, locals, parents)?;
        // SAFETY: `parents` lists parents first, as `ParentsFirst` proves.
        let in_order = unsafe { self.create_many_in_order(entities, indices, locals, parents)? };
        match in_order {
            Some(slots) => Ok(slots),
            None => self.create_placed(entities, indices.bound, locals, parents),
        }
    }

    /// The length and capacity checks every batch form makes first.
    fn check_batch_lengths(
        &self,
        entities: &[Entity],
        locals: &[Affine3A],
        parents: &[Option<u32>],
    ) -> Result<(), TransformError> {
        let n = entities.len();
        if locals.len() != n || parents.len() != n {
            return Err(TransformError::LengthMismatch {
                entities: n,
                locals: locals.len(),
                parents: parents.len(),
            });
        }
        if self.len as usize + n + 2 >= u32::MAX as usize {
            return Err(TransformError::CapacityOverflow);
        }
        Ok(())
    }

    /// The general path of [`create_batch`](Self::create_batch): any
    /// parent order, stale instances replaced. Items are laid out parents
    /// first with siblings together.
    fn create_placed(
        &mut self,
        entities: &[Entity],
        index_bound: usize,
        locals: &[Affine3A],
        parents: &[Option<u32>],
    ) -> Result<BatchSlots, TransformError> {
        let n = entities.len();
        // Validate: range, duplicates, existing instances. Duplicates are
        // found with a bitset over entity indices (the map grows to cover
        // them anyway), so there is no hashing per entity.
        let mut seen = std::mem::take(&mut self.batch_seen);
        seen.clear();
        seen.resize(index_bound.div_ceil(64), 0);
        let check = (|| {
            for (k, &e) in entities.iter().enumerate() {
                if let Some(p) = parents[k] {
                    if p as usize >= n {
                        return Err(TransformError::ParentOutOfRange { item: k, parent: p });
                    }
                }
                let (word, bit) = (e.index() as usize / 64, 1u64 << (e.index() % 64));
                if seen[word] & bit != 0 {
                    return Err(TransformError::DuplicateEntity(e));
                }
                seen[word] |= bit;
                if self.index_of(e).is_some() {
                    return Err(TransformError::AlreadyExists(e));
                }
            }
            Ok(())
        })();
        self.batch_seen = seen;
        check?;
        // Children lists by counting sort, then BFS from the batch roots.
        let mut start = vec![0u32; n + 1];
        for p in parents.iter().flatten() {
            start[*p as usize + 1] += 1;
        }
        for k in 0..n {
            start[k + 1] += start[k];
        }
        let mut fill = start.clone();
        let mut kids = vec![0u32; n];
        for (k, p) in parents.iter().enumerate() {
            if let Some(p) = p {
                kids[fill[*p as usize] as usize] = k as u32;
                fill[*p as usize] += 1;
            }
        }
        let mut order: Vec<u32> = (0..n as u32)
            .filter(|&k| parents[k as usize].is_none())
            .collect();
        let mut head = 0;
        while head < order.len() {
            let k = order[head] as usize;
            order.extend_from_slice(&kids[start[k] as usize..start[k + 1] as usize]);
            head += 1;
        }
        if order.len() < n {
            let mut reached = vec![false; n];
            for &k in &order {
                reached[k as usize] = true;
            }
            let item = reached.iter().position(|r| !r).unwrap_or(0);
            return Err(TransformError::BatchCycle { item });
        }
        // Commit: stale instances of older generations go first.
        self.map_covering(index_bound);
        for &e in entities {
            // Cannot fail: duplicates and live instances were refused above.
            let _ = self.prepare_slot_for(e);
        }
        let base = self.len;
        // `order` is breadth-first with each parent's children contiguous and
        // in batch order, so rank r lands in slot base + r and every link can
        // be written directly: no list splicing, each slot written once.
        let mut slot = vec![0u32; n];
        for (rank, &k) in order.iter().enumerate() {
            slot[k as usize] = base + rank as u32;
        }
        let item = |rank: usize| order[rank] as usize;
        // Siblings are neighbours in `order`, the same parent on both
        // sides: rank `other`, when it is one, sits in slot `base + other`.
        let sibling = |rank: usize, other: Option<usize>| match other {
            Some(o)
                if o < n
                    && parents[item(rank)].is_some()
                    && parents[item(o)] == parents[item(rank)] =>
            {
                Link::some(base + o as u32)
            }
            _ => Link::NONE,
        };
        self.store.write_columns(base as usize, n, |new| {
            let (world, local) = new
                .world
                .write_with_earlier_beside(new.local, |rank, earlier| {
                    let k = item(rank);
                    let local = locals[k];
                    let world = match parents[k] {
                        // Parents come earlier in `order`, so their world is
                        // final.
                        Some(p) => earlier[(slot[p as usize] - base) as usize] * local,
                        None => local,
                    };
                    (world, local)
                });
            WrittenColumns {
                local,
                world,
                entity: new.entity.write_with(|rank| entities[item(rank)].to_bits()),
                parent: new.parent.write_with(|rank| match parents[item(rank)] {
                    Some(p) => Link::some(slot[p as usize]),
                    None => Link::NONE,
                }),
                first_child: new.first_child.write_with(|rank| {
                    let k = item(rank);
                    kids[start[k] as usize..start[k + 1] as usize]
                        .first()
                        .map_or(Link::NONE, |&f| Link::some(slot[f as usize]))
                }),
                next_sibling: new
                    .next_sibling
                    .write_with(|rank| sibling(rank, Some(rank + 1))),
                prev_sibling: new
                    .prev_sibling
                    .write_with(|rank| sibling(rank, rank.checked_sub(1))),
                flags: new.flags.fill(0),
                idle: new.idle.fill(0),
            }
        });
        for (&e, &i) in entities.iter().zip(&slot) {
            self.map[e.index() as usize] = i;
        }
        self.len = base + n as u32;
        if !self.deferred {
            self.first_dirty = self.len;
        }
        Ok(BatchSlots::Placed(slot))
    }
}

/// Where the items of a created batch landed.
pub(crate) enum BatchSlots {
    /// Item `k` in slot `base + k` (a batch that lists parents first).
    InOrder {
        /// The first item's slot.
        base: u32,
    },
    /// Item `k` in slot `slots[k]`.
    Placed(Vec<u32>),
}

impl BatchSlots {
    /// The slot of item `k`.
    pub(crate) fn slot(&self, k: usize) -> u32 {
        match self {
            BatchSlots::InOrder { base } => base + k as u32,
            BatchSlots::Placed(slots) => slots[k],
        }
    }

    /// The handles of the batch's `entities`, in batch order.
    pub(crate) fn instances(&self, entities: &[Entity]) -> Vec<Instance> {
        (0..entities.len())
            .map(|k| Instance {
                index: self.slot(k),
                entity: entities[k],
            })
            .collect()
    }
}

/// What a batch's caller knows of its entities' indices.
pub(crate) struct BatchIndices {
    /// Above every entity's index.
    pub(crate) bound: usize,
    /// The indices, when they are one run in batch order
    /// ([`ParentedBatch::index_run`](doecs::raw::ParentedBatch::index_run)).
    pub(crate) run: Option<Range<u32>>,
}

/// Appends to `map` the entries of a batch whose entities' indices are the
/// run `start..start + n`, which `map` does not reach yet: no instance up
/// to `start`, then slot `base + k` for the `k`-th.
fn append_map_run(map: &mut Vec<u32>, start: usize, base: u32, n: usize) {
    debug_assert!(start >= map.len());
    map.reserve(start + n - map.len());
    map.resize(start, NO_INSTANCE);
    map.extend(base..base + n as u32);
}

/// Claims each entity's entry in `map` for its slot, `base + k` for item
/// `k`, in batch order, until it meets an entry taken already: then it
/// undoes the claims before it, leaving `map` as it was, and returns that
/// item and the entry's value. Panics if an entity's index is not below
/// `map.len()` (the caller grows the map to cover the batch first).
fn claim_map_entries(map: &mut [u32], entities: &[Entity], base: u32) -> Result<(), (usize, u32)> {
    for (k, e) in entities.iter().enumerate() {
        let entry = &mut map[e.index() as usize];
        if *entry != NO_INSTANCE {
            let held = *entry;
            for done in &entities[..k] {
                map[done.index() as usize] = NO_INSTANCE;
            }
            return Err((k, held));
        }
        *entry = base + k as u32;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::{TransformError, TransformManager};
    use doecs::Entity;
    use glam::{Affine3A, Vec3};

    #[test]
    fn batch_with_a_dead_handle_changes_nothing() {
        let mut tm = TransformManager::new();
        let a = tm
            .create(Entity::from_parts(0, 0), Affine3A::IDENTITY)
            .unwrap();
        let b = tm
            .create(Entity::from_parts(1, 0), Affine3A::IDENTITY)
            .unwrap();
        tm.destroy(b).unwrap();
        let m = Affine3A::from_translation(Vec3::X);
        assert_eq!(
            tm.set_local_many(&[(a, m), (b, m)]),
            Err(TransformError::DeadInstance(b.entity()))
        );
        assert_eq!(tm.local(a), Some(Affine3A::IDENTITY));
    }

    #[test]
    fn batch_updates_only_topmost_subtrees_once() {
        let mut tm = TransformManager::new();
        let h: Vec<_> = (0..5)
            .map(|i| {
                tm.create(Entity::from_parts(i, 0), Affine3A::IDENTITY)
                    .unwrap()
            })
            .collect();
        for k in 1..5 {
            tm.link(h[k], h[k - 1]).unwrap();
        }
        let m = Affine3A::from_translation(Vec3::X);
        tm.set_local_many(&[(h[4], m), (h[2], m), (h[1], m), (h[4], m)])
            .unwrap();
        assert_eq!(tm.world(h[4]).unwrap().translation.x, 3.0);
        assert!(tm.mark.iter().all(|&b| b == 0), "scratch marks are reset");
    }

    /// A chain where every node moves: the climb classifies each node once and
    /// only the chain's root is walked, so the batch is one O(n) pass.
    #[test]
    fn moving_every_node_of_a_chain_is_linear() {
        let n = if cfg!(miri) { 50 } else { 1000 };
        let mut tm = TransformManager::new();
        let es: Vec<Entity> = (0..n).map(|i| Entity::from_parts(i, 0)).collect();
        let parents: Vec<Option<u32>> = (0..n).map(|k| k.checked_sub(1)).collect();
        let hs = tm
            .create_many(&es, &vec![Affine3A::IDENTITY; n as usize], &parents)
            .unwrap();
        let mut roots = Vec::new();
        for order in [
            (0..n).collect::<Vec<u32>>(),
            (0..n).rev().collect(),
            (0..n).map(|k| (k * 7) % n).collect(), // n is not a multiple of 7
        ] {
            let slots: Vec<u32> = order.iter().map(|&k| hs[k as usize].index()).collect();
            let work = tm.find_topmost(&slots, &mut roots);
            assert_eq!(roots, vec![0], "only the chain root is walked");
            assert!(work <= n as usize, "climb work {work} for {n} nodes");
        }
        // Every other node moves: still one walk from the topmost target.
        let odd: Vec<u32> = (1..n).step_by(2).rev().collect();
        let work = tm.find_topmost(&odd, &mut roots);
        assert_eq!(roots, vec![1]);
        assert!(work <= n as usize);
        assert!(tm.mark.iter().all(|&b| b == 0));
        // And the result is right: every node moved by +1 in x.
        let batch: Vec<_> = hs
            .iter()
            .rev()
            .map(|&h| (h, Affine3A::from_translation(Vec3::X)))
            .collect();
        tm.set_local_many(&batch).unwrap();
        assert_eq!(
            tm.world(hs[n as usize - 1]).unwrap().translation.x,
            n as f32
        );
    }

    /// Disjoint subtrees: every target is topmost, each walked once.
    #[test]
    fn unrelated_targets_are_each_their_own_root() {
        let mut tm = TransformManager::new();
        let hs: Vec<_> = (0..10)
            .map(|i| {
                tm.create(Entity::from_parts(i, 0), Affine3A::IDENTITY)
                    .unwrap()
            })
            .collect();
        for k in 5..10 {
            tm.link(hs[k], hs[k - 5]).unwrap();
        }
        let mut roots = Vec::new();
        let targets = [9, 0, 8, 5, 1];
        let work = tm.find_topmost(&targets, &mut roots);
        assert_eq!(roots, vec![9, 0, 8, 1], "5 lies under 0");
        assert!(work <= 10);
    }
}
