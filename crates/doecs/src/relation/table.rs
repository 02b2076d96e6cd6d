//! One relation's pairs: who points at whom, and the data each pair carries.
//!
//! A [`RelationTable`] holds every pair `(R, target)` of one relation type
//! `R`, in two indexes addressed by entity index, so no lookup hashes:
//! `outgoing[source.index()]` lists the source's targets with their values,
//! and `incoming[target.index()]` lists the sources pointing at the target.
//! Each pair also records where its source sits in the target's incoming
//! list, so removing a pair is O(1) in the target's fan-in (a swap-remove,
//! fixing the back-index of the source moved into the gap): detaching ten
//! thousand children of one parent costs ten thousand steps, not fifty
//! million. Incoming lists are in attachment order until a removal moves the
//! last entry into the gap. Both indexes store the full entity (with its
//! generation), so a slot left by a dead entity never answers for the entity
//! that reuses its index.
//!
//! Aliasing rule: none to state. The table is plain safe Rust, owned by the
//! world's [`Relations`](super::Relations), and changed only through
//! `&mut World`.

use super::{Cleanup, Relation};
use crate::entity::Entity;
use std::any::Any;

/// One pair as its source holds it.
struct Pair<R> {
    target: Entity,
    value: R,
    /// Where the source sits in the target's incoming list.
    slot: u32,
}

/// The targets of one source, with the values of its pairs.
struct Outgoing<R> {
    source: Entity,
    pairs: Vec<Pair<R>>,
}

/// The sources pointing at one target.
struct Incoming {
    target: Entity,
    sources: Vec<Entity>,
}

/// Every pair of relation `R`.
///
/// # Invariants
/// - `outgoing[i]`, when set, belongs to a source of index `i`, has at least
///   one pair, and names each target once.
/// - `incoming[i]`, when set, belongs to a target of index `i` and has at
///   least one source, each once.
/// - `(s, t)` is a pair of `outgoing` iff `s` is in `incoming` of `t`, at
///   the pair's `slot`; `len` counts them.
/// - With `R::EXCLUSIVE`, every source has one pair.
pub(crate) struct RelationTable<R> {
    outgoing: Vec<Option<Outgoing<R>>>,
    incoming: Vec<Option<Incoming>>,
    len: usize,
}

impl<R> Default for RelationTable<R> {
    fn default() -> Self {
        RelationTable {
            outgoing: Vec::new(),
            incoming: Vec::new(),
            len: 0,
        }
    }
}

/// Slot `i` of `slots`, grown to reach it.
fn slot_mut<T>(slots: &mut Vec<Option<T>>, i: u32) -> &mut Option<T> {
    let i = i as usize;
    if slots.len() <= i {
        slots.resize_with(i + 1, || None);
    }
    &mut slots[i]
}

/// The targets of one source's pairs of `R`, with their values, in the
/// order they were added.
pub struct Targets<'w, R> {
    pairs: std::slice::Iter<'w, Pair<R>>,
}

impl<'w, R> Iterator for Targets<'w, R> {
    type Item = (Entity, &'w R);
    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        self.pairs.next().map(|p| (p.target, &p.value))
    }
    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        self.pairs.size_hint()
    }
}

impl<R> ExactSizeIterator for Targets<'_, R> {}

impl<R: Relation> RelationTable<R> {
    /// The pairs of `source` (none if it has none).
    #[inline]
    fn pairs_slice(&self, source: Entity) -> &[Pair<R>] {
        match self.outgoing.get(source.index() as usize) {
            Some(Some(out)) if out.source == source => &out.pairs,
            _ => &[],
        }
    }

    /// The pairs of `source`, as `(target, value)`, in the order added.
    #[inline]
    pub(crate) fn pairs_of(&self, source: Entity) -> Targets<'_, R> {
        Targets {
            pairs: self.pairs_slice(source).iter(),
        }
    }

    /// Whether `source` has a pair.
    #[inline]
    pub(crate) fn has_pairs(&self, source: Entity) -> bool {
        !self.pairs_slice(source).is_empty()
    }

    /// The target of `source`'s first pair.
    #[inline]
    pub(crate) fn first_target(&self, source: Entity) -> Option<Entity> {
        self.pairs_slice(source).first().map(|p| p.target)
    }

    /// The value of the pair `(source, target)`.
    #[inline]
    pub(crate) fn value(&self, source: Entity, target: Entity) -> Option<&R> {
        self.pairs_slice(source)
            .iter()
            .find(|p| p.target == target)
            .map(|p| &p.value)
    }

    /// The value of the pair `(source, target)`, mutably.
    pub(crate) fn value_mut(&mut self, source: Entity, target: Entity) -> Option<&mut R> {
        match self.outgoing.get_mut(source.index() as usize) {
            Some(Some(out)) if out.source == source => out
                .pairs
                .iter_mut()
                .find(|p| p.target == target)
                .map(|p| &mut p.value),
            _ => None,
        }
    }

    /// Adds the pair `(source, target)` with `value`, or replaces its value
    /// (returning the old one). An exclusive relation's other pair of
    /// `source` is removed (and dropped) first.
    pub(crate) fn insert(&mut self, source: Entity, target: Entity, value: R) -> Option<R> {
        if let Some(v) = self.value_mut(source, target) {
            return Some(std::mem::replace(v, value));
        }
        if R::EXCLUSIVE {
            let old = self.pairs_of(source).next().map(|(t, _)| t);
            if let Some(old) = old {
                self.remove(source, old);
            }
        }
        let inc = slot_mut(&mut self.incoming, target.index());
        let slot = match inc {
            Some(i) if i.target == target => {
                i.sources.push(source);
                i.sources.len() - 1
            }
            _ => {
                *inc = Some(Incoming {
                    target,
                    sources: vec![source],
                });
                0
            }
        };
        let pair = Pair {
            target,
            value,
            slot: u32::try_from(slot).expect("fewer than 2^32 sources per target"),
        };
        let out = slot_mut(&mut self.outgoing, source.index());
        match out {
            Some(o) if o.source == source => o.pairs.push(pair),
            _ => {
                *out = Some(Outgoing {
                    source,
                    pairs: vec![pair],
                })
            }
        }
        self.len += 1;
        None
    }

    /// Removes the pair `(source, target)`, returning its value.
    pub(crate) fn remove(&mut self, source: Entity, target: Entity) -> Option<R> {
        let out = self.outgoing.get_mut(source.index() as usize)?;
        let o = out.as_mut().filter(|o| o.source == source)?;
        let k = o.pairs.iter().position(|p| p.target == target)?;
        let pair = o.pairs.remove(k);
        if o.pairs.is_empty() {
            *out = None;
        }
        self.unlink_incoming(target, pair.slot);
        self.len -= 1;
        Some(pair.value)
    }

    /// Removes entry `slot` from the incoming list of `target`, moving the
    /// last entry into the gap and fixing that source's back-index.
    fn unlink_incoming(&mut self, target: Entity, slot: u32) {
        let Some(inc) = self.incoming.get_mut(target.index() as usize) else {
            return;
        };
        let Some(i) = inc.as_mut().filter(|i| i.target == target) else {
            return;
        };
        i.sources.swap_remove(slot as usize);
        let moved = i.sources.get(slot as usize).copied();
        if i.sources.is_empty() {
            *inc = None;
        }
        if let Some(moved) = moved {
            if let Some(Some(o)) = self.outgoing.get_mut(moved.index() as usize) {
                if let Some(p) = o.pairs.iter_mut().find(|p| p.target == target) {
                    p.slot = slot;
                }
            }
        }
    }
}

/// A relation table seen without its type, for the world's despawn path
/// and invariant checks.
pub(crate) trait ErasedRelation: Send + Sync {
    /// The relation's Rust type name.
    fn name(&self) -> &'static str;
    /// What happens to a source when its target dies.
    fn cleanup(&self) -> Cleanup;
    /// The sources with a pair pointing at `target` (see the module docs
    /// for their order).
    fn sources_of(&self, target: Entity) -> &[Entity];
    /// Removes every pair from or to `dead`. The removed values are handed
    /// back boxed, so they drop after the table is consistent again.
    fn forget(&mut self, dead: Entity) -> Option<Box<dyn Any + Send>>;
    /// Number of pairs.
    fn len(&self) -> usize;
    /// Every pair as `(source, target)`, sources in index order.
    fn all_pairs(&self) -> Vec<(Entity, Entity)>;
    /// Checks the invariants; `alive` says whether an entity is alive.
    fn check_invariants(&self, alive: &dyn Fn(Entity) -> bool);
    fn as_any(&self) -> &dyn Any;
    fn as_any_mut(&mut self) -> &mut dyn Any;
}

impl<R: Relation> ErasedRelation for RelationTable<R> {
    fn name(&self) -> &'static str {
        std::any::type_name::<R>()
    }

    fn cleanup(&self) -> Cleanup {
        R::ON_TARGET_DESPAWN
    }

    fn sources_of(&self, target: Entity) -> &[Entity] {
        match self.incoming.get(target.index() as usize) {
            Some(Some(i)) if i.target == target => &i.sources,
            _ => &[],
        }
    }

    fn forget(&mut self, dead: Entity) -> Option<Box<dyn Any + Send>> {
        // Pairs pointing at `dead`: their sources lose them (the whole
        // incoming list goes, so no back-index needs fixing).
        let sources = match self.incoming.get_mut(dead.index() as usize) {
            Some(slot) if slot.as_ref().is_some_and(|i| i.target == dead) => {
                slot.take().map(|i| i.sources).unwrap_or_default()
            }
            _ => Vec::new(),
        };
        let mut removed: Vec<R> = Vec::new();
        for s in sources {
            let out = slot_mut(&mut self.outgoing, s.index());
            if let Some(o) = out.as_mut().filter(|o| o.source == s) {
                if let Some(k) = o.pairs.iter().position(|p| p.target == dead) {
                    removed.push(o.pairs.remove(k).value);
                    self.len -= 1;
                }
                if o.pairs.is_empty() {
                    *out = None;
                }
            }
        }
        // Pairs from `dead`: their targets forget it.
        let own = match self.outgoing.get_mut(dead.index() as usize) {
            Some(slot) if slot.as_ref().is_some_and(|o| o.source == dead) => {
                slot.take().map(|o| o.pairs).unwrap_or_default()
            }
            _ => Vec::new(),
        };
        for pair in own {
            self.unlink_incoming(pair.target, pair.slot);
            self.len -= 1;
            removed.push(pair.value);
        }
        (!removed.is_empty()).then(|| Box::new(removed) as Box<dyn Any + Send>)
    }

    fn len(&self) -> usize {
        self.len
    }

    fn all_pairs(&self) -> Vec<(Entity, Entity)> {
        self.outgoing
            .iter()
            .flatten()
            .flat_map(|o| o.pairs.iter().map(move |p| (o.source, p.target)))
            .collect()
    }

    fn check_invariants(&self, alive: &dyn Fn(Entity) -> bool) {
        let mut count = 0;
        for (i, o) in self.outgoing.iter().enumerate() {
            let Some(o) = o else { continue };
            assert_eq!(o.source.index() as usize, i, "outgoing slot of its source");
            assert!(!o.pairs.is_empty(), "no empty outgoing lists");
            assert!(
                alive(o.source),
                "{}: source {:?} is dead",
                self.name(),
                o.source
            );
            if R::EXCLUSIVE {
                assert_eq!(o.pairs.len(), 1, "exclusive relation with two targets");
            }
            for (k, p) in o.pairs.iter().enumerate() {
                let t = p.target;
                assert!(alive(t), "{}: target {t:?} is dead", self.name());
                assert!(
                    o.pairs[..k].iter().all(|u| u.target != t),
                    "a target named twice"
                );
                assert_eq!(
                    self.sources_of(t).get(p.slot as usize),
                    Some(&o.source),
                    "back-index of the pair in the incoming list"
                );
                count += 1;
            }
        }
        let mut incoming = 0;
        for (i, inc) in self.incoming.iter().enumerate() {
            let Some(inc) = inc else { continue };
            assert_eq!(
                inc.target.index() as usize,
                i,
                "incoming slot of its target"
            );
            assert!(!inc.sources.is_empty(), "no empty incoming lists");
            for s in &inc.sources {
                assert!(
                    self.pairs_of(*s).any(|(t, _)| t == inc.target),
                    "incoming entry without its pair"
                );
                incoming += 1;
            }
        }
        assert_eq!(count, self.len, "pair count");
        assert_eq!(incoming, self.len, "incoming count");
    }

    fn as_any(&self) -> &dyn Any {
        self
    }

    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }
}
