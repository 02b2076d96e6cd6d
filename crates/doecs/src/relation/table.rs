//! One relation's pairs: who points at whom, and the data each pair carries.
//!
//! A [`RelationTable`] holds every pair `(R, target)` of one relation type
//! `R` as a row in one dense array, and threads each row onto two lists:
//! the pairs of its source (singly linked, in the order added) and the
//! pairs of its target (a circular doubly linked list, in attachment
//! order). One small head per entity index starts both lists, so no lookup
//! hashes, and a relation costs one 28-byte row per pair (plus the value)
//! and eight bytes per entity index: no list of its own per source or
//! target, no allocation per pair. The children of a thousand ships stay
//! as small as the ships. Removing a pair unlinks its row in O(1) on the
//! target's side (whatever its fan-in) and in O(pairs of the source) on the
//! source's side, then moves the last row into the gap, fixing the links
//! that pointed at it. Rows store full entities (with generations), so a
//! head left by a dead entity never answers for the entity that reuses its
//! index.
//!
//! Aliasing rule: none to state. The table is plain safe Rust, owned by the
//! world's [`Relations`](super::Relations), and changed only through
//! `&mut World`.

use super::{Cleanup, Relation};
use crate::entity::Entity;
use crate::stamp::Stamp;
use std::any::Any;
use std::num::NonZeroU32;

/// A row's position in the table, stored + 1 so `Option<RowId>` is four
/// bytes.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
struct RowId(NonZeroU32);

impl RowId {
    fn new(index: usize) -> RowId {
        let stored = u32::try_from(index + 1).expect("fewer than 2^32 - 1 pairs per relation");
        RowId(NonZeroU32::new(stored).expect("index + 1 is non-zero"))
    }
    /// [`RowId::new`] with no check, for `index < u32::MAX - 1` that the
    /// caller checked (a batch checks its last index once). A larger index
    /// would saturate to a wrong id: the debug assert fires in tests.
    #[inline]
    fn below_limit(index: usize) -> RowId {
        debug_assert!(index < u32::MAX as usize - 1);
        RowId(NonZeroU32::MIN.saturating_add(index as u32))
    }
    #[inline]
    fn index(self) -> usize {
        self.0.get() as usize - 1
    }
}

/// One pair.
#[derive(Clone)]
struct Row<R> {
    source: Entity,
    target: Entity,
    /// The source's next pair, in the order added.
    next_out: Option<RowId>,
    /// The neighbours among the target's pairs (a circular list: a lone
    /// pair is its own neighbour).
    prev_in: RowId,
    next_in: RowId,
    value: R,
}

/// Where the lists of one entity index start.
#[derive(Copy, Clone, Default)]
struct Heads {
    /// Its first pair as a source.
    out: Option<RowId>,
    /// Its first pair as a target.
    incoming: Option<RowId>,
}

/// Every pair of relation `R`.
///
/// # Invariants
/// - Every row is on exactly one out-list, its source's, reached from
///   `heads[source.index()].out`, and on exactly one circular in-list, its
///   target's, reached from `heads[target.index()].incoming`; every row of
///   a list has that list's source (or target), full entity included.
/// - `rows[r.next_in].prev_in == r` for every row `r`.
/// - A source names each target once; with `R::EXCLUSIVE`, it has one pair.
/// - `stamp.lineage` is this table's own (no other table, of any world,
///   has had it), and `stamp.edits` grows with every row added or removed:
///   an unchanged stamp means unchanged rows and lists.
/// - `content` is a fresh number ([`Stamp::content`]) at every change of
///   rows, lists or values, carried over by a copy: equal numbers, equal
///   tables (so a copy between them can be skipped).
pub(crate) struct RelationTable<R> {
    rows: Vec<Row<R>>,
    heads: Vec<Heads>,
    stamp: TableStamp,
    content: u64,
}

/// Which table, and how many times its rows changed: two reads of one
/// table with equal stamps saw the same pairs in the same rows. A copy, a
/// restore into a table or a new table gets a new lineage
/// ([`Stamp::fresh`]), so a stamp never matches a table it was not taken
/// from.
pub(crate) type TableStamp = Stamp;

impl<R: Clone> Clone for RelationTable<R> {
    fn clone(&self) -> Self {
        RelationTable {
            rows: self.rows.clone(),
            heads: self.heads.clone(),
            stamp: TableStamp::fresh(),
            content: self.content,
        }
    }
    fn clone_from(&mut self, other: &Self) {
        self.rows.clone_from(&other.rows);
        self.heads.clone_from(&other.heads);
        self.stamp = TableStamp::fresh();
        self.content = other.content;
    }
}

impl<R> Default for RelationTable<R> {
    fn default() -> Self {
        RelationTable {
            rows: Vec::new(),
            heads: Vec::new(),
            stamp: TableStamp::fresh(),
            content: Stamp::content(),
        }
    }
}

/// The targets of one source's pairs of `R`, with their values, in the
/// order they were added.
pub struct Targets<'w, R> {
    rows: &'w [Row<R>],
    at: Option<RowId>,
}

impl<'w, R> Iterator for Targets<'w, R> {
    type Item = (Entity, &'w R);
    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        let row = &self.rows[self.at?.index()];
        self.at = row.next_out;
        Some((row.target, &row.value))
    }
}

/// The sources of one target's pairs of `R`, in the order they were
/// attached.
pub struct Sources<'w, R> {
    rows: &'w [Row<R>],
    first: Option<RowId>,
    at: Option<RowId>,
}

impl<R> Iterator for Sources<'_, R> {
    type Item = Entity;
    #[inline]
    fn next(&mut self) -> Option<Entity> {
        let row = &self.rows[self.at?.index()];
        self.at = Some(row.next_in).filter(|&n| Some(n) != self.first);
        Some(row.source)
    }
}

impl<R> Sources<'_, R> {
    /// No sources at all.
    pub(crate) fn none() -> Self {
        Sources {
            rows: &[],
            first: None,
            at: None,
        }
    }
}

impl<R: Relation> RelationTable<R> {
    /// The first pair of `source`, if it has any.
    #[inline]
    fn out_head(&self, source: Entity) -> Option<RowId> {
        let head = self.heads.get(source.index() as usize)?.out?;
        (self.rows[head.index()].source == source).then_some(head)
    }

    /// The first pair pointing at `target`, if any.
    #[inline]
    fn in_head(&self, target: Entity) -> Option<RowId> {
        let head = self.heads.get(target.index() as usize)?.incoming?;
        (self.rows[head.index()].target == target).then_some(head)
    }

    /// The heads of entity index `i`, grown to reach it.
    fn heads_mut(&mut self, i: u32) -> &mut Heads {
        let i = i as usize;
        if self.heads.len() <= i {
            self.heads.resize(i + 1, Heads::default());
        }
        &mut self.heads[i]
    }

    /// The pairs of `source`, as `(target, value)`, in the order added.
    #[inline]
    pub(crate) fn pairs_of(&self, source: Entity) -> Targets<'_, R> {
        Targets {
            rows: &self.rows,
            at: self.out_head(source),
        }
    }

    /// The sources pointing at `target`, in attachment order.
    #[inline]
    pub(crate) fn sources(&self, target: Entity) -> Sources<'_, R> {
        let first = self.in_head(target);
        Sources {
            rows: &self.rows,
            first,
            at: first,
        }
    }

    /// The pairs of `source`, if it has any.
    #[inline]
    pub(crate) fn pairs_if_any(&self, source: Entity) -> Option<Targets<'_, R>> {
        let at = self.out_head(source)?;
        Some(Targets {
            rows: &self.rows,
            at: Some(at),
        })
    }

    /// Whether `source` has a pair.
    #[inline]
    pub(crate) fn has_pairs(&self, source: Entity) -> bool {
        self.out_head(source).is_some()
    }

    /// The target of `source`'s first pair.
    #[inline]
    pub(crate) fn first_target(&self, source: Entity) -> Option<Entity> {
        self.out_head(source).map(|r| self.rows[r.index()].target)
    }

    /// The row of the pair `(source, target)`.
    fn find(&self, source: Entity, target: Entity) -> Option<RowId> {
        let mut at = self.out_head(source);
        while let Some(r) = at {
            let row = &self.rows[r.index()];
            if row.target == target {
                return Some(r);
            }
            at = row.next_out;
        }
        None
    }

    /// The value of the pair `(source, target)`.
    #[inline]
    pub(crate) fn value(&self, source: Entity, target: Entity) -> Option<&R> {
        self.find(source, target)
            .map(|r| &self.rows[r.index()].value)
    }

    /// The value of the pair `(source, target)`, mutably.
    pub(crate) fn value_mut(&mut self, source: Entity, target: Entity) -> Option<&mut R> {
        let r = self.find(source, target)?;
        self.content = Stamp::content();
        Some(&mut self.rows[r.index()].value)
    }

    /// Adds the pair `(source, target)` with `value`, or replaces its value
    /// (returning the old one). An exclusive relation's other pair of
    /// `source` is removed (and dropped) first.
    pub(crate) fn insert(&mut self, source: Entity, target: Entity, value: R) -> Option<R> {
        if let Some(v) = self.value_mut(source, target) {
            return Some(std::mem::replace(v, value));
        }
        if R::EXCLUSIVE {
            if let Some(old) = self.out_head(source) {
                drop(self.remove_row(old));
            }
        }
        // The source's list: append at its end.
        let mut last = self.out_head(source);
        while let Some(next) = last.and_then(|r| self.rows[r.index()].next_out) {
            last = Some(next);
        }
        self.push_row(source, target, value, last);
        None
    }

    /// Pushes a new row for `(source, target)` and links it: after row
    /// `after` on the source's list (or as its head when `None`), and last
    /// on the target's circular list.
    fn push_row(&mut self, source: Entity, target: Entity, value: R, after: Option<RowId>) {
        self.edited();
        let at = self.rows.len();
        let id = RowId::new(at);
        // A circular list of one, spliced onto the target's list below.
        self.rows.push(Row {
            source,
            target,
            next_out: None,
            prev_in: id,
            next_in: id,
            value,
        });
        match after {
            Some(r) => self.rows[r.index()].next_out = Some(id),
            None => self.heads_mut(source.index()).out = Some(id),
        }
        self.splice_run(target, at, at);
    }

    /// Makes room for `rows` more pairs among entity indices below
    /// `index_bound`, so a batch of inserts does not regrow.
    pub(crate) fn reserve(&mut self, rows: usize, index_bound: usize) {
        self.rows.reserve(rows);
        if self.heads.len() < index_bound {
            self.heads.resize(index_bound, Heads::default());
        }
    }

    /// Adds the pair `(source, target)` for a source with no pair of `R`
    /// yet (a freshly spawned entity): [`RelationTable::insert`] without
    /// the search for an existing pair.
    pub(crate) fn insert_first(&mut self, source: Entity, target: Entity, value: R) {
        debug_assert!(
            self.out_head(source).is_none(),
            "the source has no pair yet"
        );
        self.push_row(source, target, value, None);
    }

    /// [`insert_first`](Self::insert_first) for a batch: for each `k` with
    /// `parents[k] == Some(p)`, in order, the pair `(children[k],
    /// children[p])` with `R::default()`. The sources must have no pair of
    /// `R` yet (a fresh batch) and the pairs must make no cycle; both
    /// callers check. Siblings usually come together (a level, a prefab
    /// subtree), so each run of consecutive children with the same parent
    /// is written as consecutive rows already linked into a circular list
    /// of their own, and spliced onto the target's list once, at its end:
    /// no lookup or back-link per pair. Same rows and lists as calling
    /// `insert_first` for each pair.
    /// `index_bound` bounds the children's indices (each is below it): the
    /// heads are grown to it once.
    pub(crate) fn insert_fresh_batch(
        &mut self,
        children: &[Entity],
        parents: &[Option<u32>],
        index_bound: usize,
    ) where
        R: Default,
    {
        debug_assert_eq!(children.len(), parents.len());
        self.reserve(children.len(), index_bound);
        // Checked once here, so every id below is made without a check.
        assert!(
            self.rows.len() + children.len() < u32::MAX as usize,
            "fewer than 2^32 - 1 pairs per relation"
        );
        self.edited();
        let mut k = 0;
        while k < children.len() {
            let Some(p) = parents[k] else {
                k += 1;
                continue;
            };
            let same = parents[k + 1..].iter().take_while(|&&q| q == Some(p));
            let run = &children[k..k + 1 + same.count()];
            let target = children[p as usize];
            let start = self.rows.len();
            let last = start + run.len() - 1;
            self.rows.extend(run.iter().enumerate().map(|(i, &source)| {
                let at = start + i;
                Row {
                    source,
                    target,
                    next_out: None,
                    prev_in: RowId::below_limit(if at == start { last } else { at - 1 }),
                    next_in: RowId::below_limit(if at == last { start } else { at + 1 }),
                    value: R::default(),
                }
            }));
            for (at, &source) in (start..).zip(run) {
                debug_assert!(
                    self.out_head(source).is_none(),
                    "the source has no pair yet"
                );
                // Below `index_bound`: the heads cover it (a wrong bound
                // panics here).
                self.heads[source.index() as usize].out = Some(RowId::below_limit(at));
            }
            self.splice_run(target, start, last);
            k += run.len();
        }
    }

    /// Adds pairs none of which exists yet (with `R::EXCLUSIVE`, from
    /// sources with no pair of `R`), in order: the rows and lists that
    /// [`insert`](Self::insert) of each in turn makes, without its walk of
    /// the source's list per pair. Each source's list is walked to its end
    /// once, so a batch costs time linear in its pairs and in the pairs its
    /// sources had. `index_bound` bounds the entities' indices.
    pub(crate) fn insert_new(
        &mut self,
        pairs: impl ExactSizeIterator<Item = (Entity, Entity, R)>,
        index_bound: usize,
    ) {
        self.reserve(pairs.len(), index_bound);
        // The last row of each source with a row: a source's list grows at
        // its end.
        let mut tails: std::collections::HashMap<u32, RowId> = std::collections::HashMap::new();
        for (source, target, value) in pairs {
            let after = if R::EXCLUSIVE {
                debug_assert!(self.out_head(source).is_none(), "one pair per source");
                None
            } else {
                match tails.get(&source.index()) {
                    Some(&r) => Some(r),
                    None => {
                        let mut last = self.out_head(source);
                        while let Some(next) = last.and_then(|r| self.rows[r.index()].next_out) {
                            last = Some(next);
                        }
                        last
                    }
                }
            };
            debug_assert!(self.find(source, target).is_none(), "a new pair");
            let at = self.rows.len();
            self.push_row(source, target, value, after);
            if !R::EXCLUSIVE {
                tails.insert(source.index(), RowId::new(at));
            }
        }
    }

    /// Splices rows `start..=last`, already a circular list of their own
    /// (one new row, or a run written by
    /// [`insert_fresh_batch`](Self::insert_fresh_batch)), onto the end of
    /// `target`'s circular list.
    fn splice_run(&mut self, target: Entity, start: usize, last: usize) {
        let (start_id, last_id) = (RowId::below_limit(start), RowId::below_limit(last));
        match self.in_head(target) {
            None => self.heads_mut(target.index()).incoming = Some(start_id),
            Some(first) => {
                let old_last = self.rows[first.index()].prev_in;
                self.rows[start].prev_in = old_last;
                self.rows[last].next_in = first;
                self.rows[old_last.index()].next_in = start_id;
                self.rows[first.index()].prev_in = last_id;
            }
        }
    }

    /// Counts a change of rows or lists (see the type's invariants).
    fn edited(&mut self) {
        self.stamp.bump();
        self.content = Stamp::content();
    }

    /// This table's stamp now: compare it with a later one to learn
    /// whether any pair was added or removed in between.
    pub(crate) fn stamp(&self) -> TableStamp {
        self.stamp
    }

    /// Whether rows `first_row..` hold, in order, the pair `(children[k],
    /// children[p])` of each `parents[k] == Some(p)`, and every `children[k]`
    /// with `parents[k] == None` has no pair: the check that a batch's
    /// pairs are still as [`insert_fresh_batch`](Self::insert_fresh_batch) put
    /// them, when this table's stamp was `then`. With `R::EXCLUSIVE`, a
    /// match means each child's only pair is the one named. O(1) when the
    /// stamp is unchanged; otherwise one pass down consecutive rows, no
    /// list walks.
    pub(crate) fn holds_batch(
        &self,
        then: TableStamp,
        first_row: usize,
        children: &[Entity],
        parents: &[Option<u32>],
    ) -> bool {
        debug_assert!(R::EXCLUSIVE, "a match must be the source's only pair");
        if then == self.stamp {
            return true;
        }
        let mut rows = self.rows.get(first_row..).unwrap_or(&[]).iter();
        children
            .iter()
            .zip(parents)
            .all(|(&child, parent)| match parent {
                Some(p) => rows.next().is_some_and(|row| {
                    row.source == child && Some(&row.target) == children.get(*p as usize)
                }),
                None => !self.has_pairs(child),
            })
    }

    /// Every pair as `(source, target, value)`, in an order that agrees
    /// with every source's and every target's list: adding the pairs in
    /// this order to an empty table rebuilds these lists exactly (saves
    /// rely on it). A topological order of the two list orders, which the
    /// history of adds (each appends to both its lists) shows acyclic.
    pub(crate) fn pairs_in_list_order(&self) -> Vec<(Entity, Entity, &R)> {
        let n = self.rows.len();
        // Each row follows at most one row on each of its two lists.
        let mut waiting = vec![0u8; n];
        let successors = |r: usize| {
            let row = &self.rows[r];
            let first_in = self.heads[row.target.index() as usize].incoming;
            let next_in = Some(row.next_in).filter(|&s| Some(s) != first_in);
            [row.next_out, next_in].into_iter().flatten()
        };
        for r in 0..n {
            for s in successors(r) {
                waiting[s.index()] += 1;
            }
        }
        let mut ready: std::collections::VecDeque<usize> =
            (0..n).filter(|&r| waiting[r] == 0).collect();
        let mut out = Vec::with_capacity(n);
        while let Some(r) = ready.pop_front() {
            let row = &self.rows[r];
            out.push((row.source, row.target, &row.value));
            for s in successors(r) {
                waiting[s.index()] -= 1;
                if waiting[s.index()] == 0 {
                    ready.push_back(s.index());
                }
            }
        }
        debug_assert_eq!(out.len(), n, "list orders are acyclic");
        out
    }

    /// Removes the pair `(source, target)`, returning its value.
    pub(crate) fn remove(&mut self, source: Entity, target: Entity) -> Option<R> {
        let r = self.find(source, target)?;
        Some(self.remove_row(r))
    }

    /// Makes the link to row `from` on `source`'s list (its head, or the
    /// row before it) point at `to` instead.
    fn repoint_out(&mut self, source: Entity, from: RowId, to: Option<RowId>) {
        let heads = &mut self.heads[source.index() as usize];
        if heads.out == Some(from) {
            heads.out = to;
            return;
        }
        let mut at = heads.out;
        while let Some(r) = at {
            let row = &mut self.rows[r.index()];
            if row.next_out == Some(from) {
                row.next_out = to;
                return;
            }
            at = row.next_out;
        }
    }

    /// Points whatever points at row `from` at row `to` instead: the link
    /// before it on its source's list, and its neighbours on its target's.
    fn relink(&mut self, from: RowId, to: RowId) {
        let (source, target, prev_in, next_in) = {
            let row = &self.rows[to.index()];
            (row.source, row.target, row.prev_in, row.next_in)
        };
        self.repoint_out(source, from, Some(to));
        if prev_in == from {
            // Alone on its target's list.
            let row = &mut self.rows[to.index()];
            (row.prev_in, row.next_in) = (to, to);
        } else {
            self.rows[prev_in.index()].next_in = to;
            self.rows[next_in.index()].prev_in = to;
        }
        let heads = &mut self.heads[target.index() as usize];
        if heads.incoming == Some(from) {
            heads.incoming = Some(to);
        }
    }

    /// Unlinks row `r` from both its lists, moves the last row into its
    /// place, and returns its value.
    fn remove_row(&mut self, r: RowId) -> R {
        self.edited();
        let (source, target, next_out, prev_in, next_in) = {
            let row = &self.rows[r.index()];
            (
                row.source,
                row.target,
                row.next_out,
                row.prev_in,
                row.next_in,
            )
        };
        self.repoint_out(source, r, next_out);
        // Off the target's list.
        let heads = &mut self.heads[target.index() as usize];
        if next_in == r {
            heads.incoming = None;
        } else {
            if heads.incoming == Some(r) {
                heads.incoming = Some(next_in);
            }
            self.rows[prev_in.index()].next_in = next_in;
            self.rows[next_in.index()].prev_in = prev_in;
        }
        let last = RowId::new(self.rows.len() - 1);
        let row = self.rows.swap_remove(r.index());
        if last != r {
            self.relink(last, r);
        }
        row.value
    }
}

/// A relation table seen without its type, for the world's despawn path
/// and invariant checks.
pub(crate) trait ErasedRelation: Send + Sync {
    /// The relation's Rust type name.
    fn name(&self) -> &'static str;
    /// The relation's `TypeId` (not the table's).
    fn relation_type(&self) -> std::any::TypeId;
    /// What happens to a source when its target dies.
    fn cleanup(&self) -> Cleanup;
    /// Calls `f` with each source of a pair pointing at `target`, in
    /// attachment order.
    fn for_each_source(&self, target: Entity, f: &mut dyn FnMut(Entity));
    /// Whether some pair points at `target`.
    fn has_sources(&self, target: Entity) -> bool;
    /// Calls `f` with each target of `source`'s pairs, in the order added.
    fn for_each_target(&self, source: Entity, f: &mut dyn FnMut(Entity));
    /// For each of `sources`, in order, appends its targets (in the order
    /// added) to `targets`, then pushes `targets.len()` to `ends`.
    fn targets_of_each(&self, sources: &[Entity], ends: &mut Vec<usize>, targets: &mut Vec<Entity>);
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
    /// A copy of the table.
    fn clone_box(&self) -> Box<dyn ErasedRelation>;
    /// Makes `to`, a table of the same relation, a copy of this one,
    /// reusing its memory.
    fn copy_into(&self, to: &mut dyn ErasedRelation);
}

impl<R: Relation> ErasedRelation for RelationTable<R> {
    fn name(&self) -> &'static str {
        std::any::type_name::<R>()
    }

    fn relation_type(&self) -> std::any::TypeId {
        std::any::TypeId::of::<R>()
    }

    fn cleanup(&self) -> Cleanup {
        R::ON_TARGET_DESPAWN
    }

    fn for_each_source(&self, target: Entity, f: &mut dyn FnMut(Entity)) {
        self.sources(target).for_each(f);
    }

    fn has_sources(&self, target: Entity) -> bool {
        self.in_head(target).is_some()
    }

    fn for_each_target(&self, source: Entity, f: &mut dyn FnMut(Entity)) {
        self.pairs_of(source).for_each(|(t, _)| f(t));
    }

    fn targets_of_each(
        &self,
        sources: &[Entity],
        ends: &mut Vec<usize>,
        targets: &mut Vec<Entity>,
    ) {
        if R::EXCLUSIVE {
            targets.reserve(sources.len());
        }
        ends.extend(sources.iter().map(|&source| {
            let mut at = self.out_head(source);
            while let Some(r) = at {
                let row = &self.rows[r.index()];
                targets.push(row.target);
                // An exclusive relation's source has one pair: no walk.
                at = if R::EXCLUSIVE { None } else { row.next_out };
            }
            targets.len()
        }));
    }

    fn forget(&mut self, dead: Entity) -> Option<Box<dyn Any + Send>> {
        // Each removal moves a row, so the heads are read afresh each time.
        let mut removed: Vec<R> = Vec::new();
        while let Some(r) = self.in_head(dead) {
            removed.push(self.remove_row(r));
        }
        while let Some(r) = self.out_head(dead) {
            removed.push(self.remove_row(r));
        }
        (!removed.is_empty()).then(|| Box::new(removed) as Box<dyn Any + Send>)
    }

    fn len(&self) -> usize {
        self.rows.len()
    }

    fn all_pairs(&self) -> Vec<(Entity, Entity)> {
        let mut pairs = Vec::with_capacity(self.rows.len());
        for heads in &self.heads {
            let mut at = heads.out;
            while let Some(r) = at {
                let row = &self.rows[r.index()];
                pairs.push((row.source, row.target));
                at = row.next_out;
            }
        }
        pairs
    }

    fn check_invariants(&self, alive: &dyn Fn(Entity) -> bool) {
        let name = self.name();
        let mut on_out = vec![false; self.rows.len()];
        let mut on_in = vec![false; self.rows.len()];
        for (i, heads) in self.heads.iter().enumerate() {
            let mut at = heads.out;
            let mut source = None;
            let mut targets = Vec::new();
            while let Some(r) = at {
                let row = &self.rows[r.index()];
                assert_eq!(
                    row.source.index() as usize,
                    i,
                    "{name}: out-list of its source"
                );
                assert!(
                    *source.get_or_insert(row.source) == row.source,
                    "one source per list"
                );
                assert!(
                    !std::mem::replace(&mut on_out[r.index()], true),
                    "a row on two out-lists"
                );
                assert!(alive(row.source), "{name}: source {:?} is dead", row.source);
                assert!(alive(row.target), "{name}: target {:?} is dead", row.target);
                assert!(
                    !targets.contains(&row.target),
                    "{name}: a target named twice"
                );
                targets.push(row.target);
                at = row.next_out;
            }
            if R::EXCLUSIVE {
                assert!(
                    targets.len() <= 1,
                    "{name}: exclusive relation with two targets"
                );
            }
            let Some(first) = heads.incoming else {
                continue;
            };
            let target = self.rows[first.index()].target;
            let mut at = first;
            loop {
                let row = &self.rows[at.index()];
                assert_eq!(row.target, target, "{name}: one target per in-list");
                assert_eq!(
                    row.target.index() as usize,
                    i,
                    "{name}: in-list of its target"
                );
                assert_eq!(
                    self.rows[row.next_in.index()].prev_in,
                    at,
                    "circular links agree"
                );
                assert!(
                    !std::mem::replace(&mut on_in[at.index()], true),
                    "a row on two in-lists"
                );
                at = row.next_in;
                if at == first {
                    break;
                }
            }
        }
        assert!(on_out.iter().all(|&b| b), "{name}: a row on no out-list");
        assert!(on_in.iter().all(|&b| b), "{name}: a row on no in-list");
    }

    fn as_any(&self) -> &dyn Any {
        self
    }

    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }

    fn clone_box(&self) -> Box<dyn ErasedRelation> {
        Box::new(self.clone())
    }

    fn copy_into(&self, to: &mut dyn ErasedRelation) {
        let to: &mut Self = to
            .as_any_mut()
            .downcast_mut()
            .expect("copied into a table of the same relation");
        // The same number: the same rows already (no change since).
        if to.content != self.content {
            to.clone_from(self);
        }
    }
}
