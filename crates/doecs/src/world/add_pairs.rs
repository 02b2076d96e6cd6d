//! Adding a batch of new pairs at once: how a load rebuilds a relation.
//!
//! Design. [`WorldCore::add_pair`] checks each pair against the world as it
//! stands: for an acyclic relation it walks from the target towards the
//! roots to make sure the pair closes no cycle, and it walks the source's
//! list to append the new row. Adding a saved chain `n` deep pair by pair
//! therefore costs O(n²), and so does giving one source `n` targets. A
//! batch knows all its pairs before it adds any, so it checks them
//! together: one pass for live entities, repeats and second targets of an
//! exclusive relation, one depth-first search over the batch's pairs (and
//! the world's pairs they lead to) for cycles, each entity visited once,
//! and then one insert of every row, each source's list walked once. A
//! batch costs time linear in its pairs and in the entities and pairs they
//! reach, whatever the shape. Only a refused batch pays more: the cycle
//! search is repeated on prefixes of the batch (a binary search, O(n log
//! n)) to name the pair that adding them one by one would have refused, so
//! the error is the one an add in order would give. Entities are keyed by
//! index (every entity checked is alive, so an index names one entity): a
//! dense array when the batch is large next to the entity table, a hash map
//! otherwise.

use super::core::WorldCore;
use crate::entity::Entity;
use crate::relation::{ChildOf, Hierarchy, PairsError, Relation, RelationError, Targets};
use std::any::TypeId;
use std::collections::{HashMap, HashSet};

/// "No batch pair" in the per-source lists of [`WorldCore::closes_cycle`].
const NONE: u32 = u32::MAX;
/// Depth-first colours: on the current path, and finished.
const GREY: u8 = 1;
const BLACK: u8 = 2;

impl WorldCore {
    /// Adds `pairs` of relation `R`, in order: the pairs, lists and manager
    /// notices that [`add_pair`](Self::add_pair) of each in turn would
    /// make, in time linear in the pairs and the entities they reach (see
    /// the module docs of `add_pairs.rs`), where one by one an acyclic
    /// relation costs O(n²) on a chain `n` deep. Every pair must be new:
    /// where `add_pair` would replace a pair's value or an exclusive
    /// relation's target, this refuses.
    ///
    /// # Errors
    /// [`PairsError`] naming the first pair that adding them in order would
    /// refuse: [`RelationError::NoSuchEntity`] for a dead entity,
    /// [`RelationError::DuplicatePair`] for a pair listed twice or already
    /// in the world, [`RelationError::SecondTarget`] for a second target of
    /// a source of an exclusive relation, [`RelationError::Cycle`] for a
    /// pair that closes a cycle in an acyclic relation. The world is
    /// unchanged then.
    ///
    /// ```
    /// use doecs::{ChildOf, RelationError, World};
    /// let mut world = World::new();
    /// let es = world.spawn_batch((0..4).map(|_| ()));
    /// // A chain 0 <- 1 <- 2 <- 3, added in one call.
    /// let chain = (1..4).map(|k| (es[k], es[k - 1], ChildOf)).collect();
    /// world.add_pairs(chain).unwrap();
    /// assert_eq!(world.parent(es[3]), Some(es[2]));
    /// // Closing the loop is refused, and nothing is added.
    /// let err = world.add_pairs(vec![(es[0], es[3], ChildOf)]).unwrap_err();
    /// assert_eq!(err.index, 0);
    /// assert!(matches!(err.error, RelationError::Cycle { .. }));
    /// assert_eq!(world.parent(es[0]), None);
    /// ```
    pub fn add_pairs<R: Relation>(
        &mut self,
        pairs: Vec<(Entity, Entity, R)>,
    ) -> Result<(), PairsError> {
        if pairs.is_empty() {
            return Ok(());
        }
        let ends: Vec<(Entity, Entity)> = pairs.iter().map(|&(s, t, _)| (s, t)).collect();
        let refused = self.first_refused::<R>(&ends);
        let checked = refused.as_ref().map_or(ends.len(), |(k, _)| *k);
        // A cycle closed before the first other refusal comes first.
        if R::ACYCLIC {
            if let Some(k) = self.first_cycle::<R>(&ends[..checked]) {
                let (subject, target) = ends[k];
                let error = RelationError::Cycle {
                    relation: std::any::type_name::<R>(),
                    subject,
                    target,
                };
                return Err(PairsError { index: k, error });
            }
        }
        if let Some((index, error)) = refused {
            return Err(PairsError { index, error });
        }
        let index_bound = ends
            .iter()
            .map(|&(s, t)| s.index().max(t.index()) as usize + 1)
            .max()
            .unwrap_or(0);
        self.relations
            .table_mut::<R>()
            .insert_new(pairs.into_iter(), index_bound);
        if TypeId::of::<R>() == TypeId::of::<ChildOf>() && !self.managers.is_empty() {
            let children: Vec<Entity> = ends.iter().map(|&(s, _)| s).collect();
            self.notify_parents_changed(&children);
        }
        self.sanitize();
        Ok(())
    }

    /// The first pair, and why, that adding `ends` in order would refuse
    /// for a reason other than a cycle.
    fn first_refused<R: Relation>(
        &self,
        ends: &[(Entity, Entity)],
    ) -> Option<(usize, RelationError)> {
        let relation = std::any::type_name::<R>();
        let table = self.relations.table::<R>();
        let slots = self.entities.slot_count();
        // Exclusive: each source's target so far. Otherwise: every pair so
        // far, with the world's pairs of each source seen (read once).
        let mut target_of: ByIndex<Entity> =
            ByIndex::new(ends.len(), if R::EXCLUSIVE { slots } else { 0 });
        let mut pairs: HashSet<(Entity, Entity)> = HashSet::new();
        let mut read: HashSet<Entity> = HashSet::new();
        for (k, &(subject, target)) in ends.iter().enumerate() {
            for e in [subject, target] {
                if self.entities.location(e).is_none() {
                    return Some((k, RelationError::NoSuchEntity(e)));
                }
            }
            let duplicate = RelationError::DuplicatePair {
                relation,
                subject,
                target,
            };
            if R::EXCLUSIVE {
                let existing = target_of
                    .get(subject)
                    .or_else(|| table.and_then(|t| t.first_target(subject)));
                match existing {
                    Some(e) if e == target => return Some((k, duplicate)),
                    Some(existing) => {
                        let error = RelationError::SecondTarget {
                            relation,
                            subject,
                            existing,
                            target,
                        };
                        return Some((k, error));
                    }
                    None => target_of.insert(subject, target),
                }
            } else {
                if let Some(table) = table.filter(|t| t.has_pairs(subject)) {
                    if read.insert(subject) {
                        pairs.extend(table.pairs_of(subject).map(|(t, _)| (subject, t)));
                    }
                }
                if !pairs.insert((subject, target)) {
                    return Some((k, duplicate));
                }
            }
        }
        None
    }

    /// The pair of `ends` that closes the first cycle when they are added
    /// in order to the world's pairs of `R`, if any.
    fn first_cycle<R: Relation>(&self, ends: &[(Entity, Entity)]) -> Option<usize> {
        if !self.closes_cycle::<R>(ends) {
            return None;
        }
        // `ends[..lo]` closes none, `ends[..hi]` closes one.
        let (mut lo, mut hi) = (0, ends.len());
        while hi - lo > 1 {
            let mid = lo + (hi - lo) / 2;
            if self.closes_cycle::<R>(&ends[..mid]) {
                hi = mid;
            } else {
                lo = mid;
            }
        }
        Some(hi - 1)
    }

    /// Whether the world's pairs of `R` with `ends` added hold a cycle
    /// (they hold none without: `R` is acyclic). One depth-first search
    /// from the batch's sources, each entity visited once.
    fn closes_cycle<R: Relation>(&self, ends: &[(Entity, Entity)]) -> bool {
        let slots = self.entities.slot_count();
        let table = self.relations.table::<R>();
        // The batch's pairs of each source, as a list threaded through `next`.
        let mut first: ByIndex<u32> = ByIndex::new(ends.len(), slots);
        let mut next = vec![NONE; ends.len()];
        for (k, &(s, _)) in ends.iter().enumerate().rev() {
            next[k] = first.get(s).unwrap_or(NONE);
            first.insert(s, k as u32);
        }
        let mut colour: ByIndex<u8> = ByIndex::new(ends.len(), slots);
        // A frame: its entity, its next batch pair, its world pairs.
        type Frame<'t, R> = (Entity, u32, Option<Targets<'t, R>>);
        let frame = |e: Entity, first: &ByIndex<u32>| -> Frame<'_, R> {
            (
                e,
                first.get(e).unwrap_or(NONE),
                table.map(|t| t.pairs_of(e)),
            )
        };
        let mut stack: Vec<Frame<'_, R>> = Vec::new();
        for &(start, _) in ends {
            if colour.get(start).is_some() {
                continue;
            }
            colour.insert(start, GREY);
            stack.push(frame(start, &first));
            while let Some((node, batch, world)) = stack.last_mut() {
                let target = if *batch != NONE {
                    let k = *batch as usize;
                    *batch = next[k];
                    Some(ends[k].1)
                } else {
                    world.as_mut().and_then(Iterator::next).map(|(t, _)| t)
                };
                match target {
                    None => {
                        colour.insert(*node, BLACK);
                        stack.pop();
                    }
                    Some(t) => match colour.get(t) {
                        Some(GREY) => return true,
                        Some(_) => {}
                        None => {
                            colour.insert(t, GREY);
                            stack.push(frame(t, &first));
                        }
                    },
                }
            }
        }
        false
    }

    /// Tells every manager that each of `children` got the parent the
    /// hierarchy now names, in one call.
    pub(crate) fn notify_parents_changed(&mut self, children: &[Entity]) {
        let hierarchy = Hierarchy::new(self.relations.table::<ChildOf>());
        self.managers.notify_parents_changed(hierarchy, children);
    }
}

/// Values by entity index, for entities alive together (see the module
/// docs).
enum ByIndex<T> {
    Dense(Vec<Option<T>>),
    Sparse(HashMap<u32, T>),
}

impl<T: Copy> ByIndex<T> {
    /// Room for the entities of a batch of `batch` pairs, in a world of
    /// `slots` entity slots.
    fn new(batch: usize, slots: usize) -> Self {
        if slots <= batch.saturating_mul(4).saturating_add(1024) {
            ByIndex::Dense(vec![None; slots])
        } else {
            ByIndex::Sparse(HashMap::new())
        }
    }

    fn get(&self, e: Entity) -> Option<T> {
        match self {
            ByIndex::Dense(v) => v.get(e.index() as usize).copied().flatten(),
            ByIndex::Sparse(m) => m.get(&e.index()).copied(),
        }
    }

    fn insert(&mut self, e: Entity, value: T) {
        match self {
            ByIndex::Dense(v) => v[e.index() as usize] = Some(value),
            ByIndex::Sparse(m) => {
                m.insert(e.index(), value);
            }
        }
    }
}
