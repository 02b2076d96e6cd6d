//! The join over a query's pair terms, and where it reads each row's
//! targets from.
//!
//! Design. Pairs are not part of an archetype in doecs (see
//! `doecs::relation`): each relation keeps its pairs in a table of its
//! own, which the plan knows only by the relation's `TypeId`. Asking that
//! table row by row (`Relations::for_each_target_of`) costs a lookup of the
//! relation, an indirect call into the table, and one back into the join
//! per target, for every row: three times the typed query on a join
//! through `ChildOf`. So the evaluator asks once per chunk of rows instead
//! ([`Batch`]): `Relations::targets_of_each` fills, for each relation the
//! query names, every target of each of the chunk's entities into one flat
//! buffer with the end of each row's run, and the join then reads a row's
//! targets as a slice, with no call, hashing or allocation per row (the
//! buffers are kept from chunk to chunk). An exclusive relation such as
//! `ChildOf` fills its buffer with one read per row.
//!
//! Most joins have one pair term (`(ChildOf, $parent)`, `(Likes, *)`).
//! Those skip the general join, which recurses from term to term with the
//! bindings in hand: [`Single`] loops over the row's targets and hands
//! each result to the sink, and when the term binds its variable and no
//! row filter applies, the chunk's buffer goes to the sink whole
//! (`Sink::joined`), which writes a page's entities and bindings in a few
//! tight loops with no check per result.
//!
//! A join of several pair terms runs as a loop too
//! ([`PairTerms::join_batch`]): a depth-first walk over each term's
//! choices for the row (the targets it may bind, or whether it passes),
//! kept on a stack of [`Choices`] that indexes the batch's buffers.
//!
//! [`PairTerms::join`] is the same join written as the definition reads,
//! recursing from term to term over any [`Lookup`]. Plans run it only over
//! a lookup that is not a [`Batch`]: the tests run it over `RowByRow`,
//! which asks the tables row by row as the evaluator used to, and check
//! that the batched walk and the one-term path give the same results, in
//! the same order, and the same errors.
//!
//! Pair terms run in order: required ones bind variables (one result per
//! binding), then `!` ones check, then optional ones bind what is still
//! unbound. The bindings one entity's joins try are bounded by
//! [`MAX_BINDINGS_PER_ENTITY`], so a join whose targets multiply is an
//! error rather than a hang.

use super::ast::Oper;
use super::eval::Sink;
use super::{QueryError, MAX_BINDINGS_PER_ENTITY};
use doecs::{Entity, Relations};
use std::any::TypeId;

/// The variables' bindings while a row is joined: each variable's slot
/// (an entity's 64 bits) and a mask of the bound ones. Each slot is
/// written and read as one 64-bit word: an `Option<Entity>`, or an
/// `Entity` written field by field, is stored in two pieces and read back
/// in one, which the processor cannot forward from its store buffer, and
/// that stall alone made joins several times slower.
#[derive(Debug)]
pub(super) struct Bindings {
    pub(super) slots: Vec<u64>,
    pub(super) bound: u64,
}

impl Bindings {
    /// `variables` slots, none bound.
    pub(super) fn new(variables: usize) -> Bindings {
        Bindings {
            slots: vec![0; variables],
            bound: 0,
        }
    }

    #[inline]
    fn get(&self, v: usize) -> Option<Entity> {
        (self.bound >> v & 1 == 1).then(|| Entity::from_bits(self.slots[v]))
    }

    #[inline]
    fn set(&mut self, v: usize, e: Entity) {
        self.slots[v] = e.to_bits();
        self.bound |= 1 << v;
    }

    /// Unbinds `v`; its slot reads 0, whichever path left it.
    #[inline]
    fn clear(&mut self, v: usize) {
        self.slots[v] = 0;
        self.bound &= !(1 << v);
    }
}

/// A pair term, resolved.
#[derive(Debug, Clone)]
struct PairTerm {
    /// Its relation's position in [`PairTerms::relations`].
    rel: usize,
    target: PairTarget,
    /// Where the term starts in the text, for errors.
    column: usize,
}

/// A pair term's target, resolved.
#[derive(Debug, Clone, Copy)]
pub(super) enum PairTarget {
    /// `*`.
    Any,
    /// An entity, by id, name or path.
    Entity(Entity),
    /// A variable, by slot.
    Var(usize),
}

/// A plan's pair terms, in join order, and the relations they name.
#[derive(Debug, Clone, Default)]
pub(super) struct PairTerms {
    /// Each relation the terms name, once, in the order first named.
    relations: Vec<TypeId>,
    required: Vec<PairTerm>,
    not: Vec<PairTerm>,
    optional: Vec<PairTerm>,
}

impl PairTerms {
    /// Adds a term `oper (relation, target)` at `column`.
    pub(super) fn push(&mut self, oper: Oper, relation: TypeId, target: PairTarget, column: usize) {
        let rel = match self.relations.iter().position(|&r| r == relation) {
            Some(rel) => rel,
            None => {
                self.relations.push(relation);
                self.relations.len() - 1
            }
        };
        let term = PairTerm {
            rel,
            target,
            column,
        };
        match oper {
            Oper::And => self.required.push(term),
            Oper::Not => self.not.push(term),
            Oper::Optional => self.optional.push(term),
        }
    }

    /// Whether there are no pair terms.
    pub(super) fn is_empty(&self) -> bool {
        self.relations.is_empty()
    }

    /// The relations the terms name, once each: a [`Lookup`]'s `rel`
    /// indexes this.
    pub(super) fn relations(&self) -> &[TypeId] {
        &self.relations
    }

    /// The only pair term, when there is one and it names no variable but
    /// the first: what [`Single::run`] joins without [`PairTerms::join`].
    pub(super) fn single(&self) -> Option<Single> {
        let (oper, t) = match (&self.required[..], &self.not[..], &self.optional[..]) {
            ([t], [], []) => (Oper::And, t),
            ([], [t], []) => (Oper::Not, t),
            ([], [], [t]) => (Oper::Optional, t),
            _ => return None,
        };
        if matches!(t.target, PairTarget::Var(v) if v != 0) {
            return None;
        }
        Some(Single {
            oper,
            rel: t.rel,
            target: t.target,
            column: t.column,
        })
    }

    /// Runs pair term `i` (required ones, then the `!` checks, then
    /// optional ones) for the row `at` under `bindings`, and the terms
    /// after it; each complete binding is a result. The reference form of
    /// the join (see the module docs); [`PairTerms::join_batch`] is the
    /// one plans run.
    pub(super) fn join<L: Lookup>(
        &self,
        lookup: &L,
        at: At,
        i: usize,
        bindings: &mut Bindings,
        budget: &mut usize,
        sink: &mut impl Sink,
    ) -> Result<(), QueryError> {
        let required = self.required.len();
        if let Some(t) = self.required.get(i) {
            let target = match t.target {
                PairTarget::Any => None,
                PairTarget::Entity(x) => Some(x),
                PairTarget::Var(v) => match bindings.get(v) {
                    Some(x) => Some(x),
                    None => {
                        self.bind_each(lookup, at, i, t, v, bindings, budget, sink)?;
                        return Ok(());
                    }
                },
            };
            if lookup.has(t.rel, at, target) {
                self.join(lookup, at, i + 1, bindings, budget, sink)?;
            }
            return Ok(());
        }
        if i == required {
            for t in &self.not {
                if lookup.has(t.rel, at, not_target(t, bindings)) {
                    return Ok(());
                }
            }
        }
        let Some(t) = self.optional.get(i - required) else {
            sink.one(at.entity, bindings);
            return Ok(());
        };
        if let PairTarget::Var(v) = t.target {
            if bindings.get(v).is_none()
                && self.bind_each(lookup, at, i, t, v, bindings, budget, sink)?
            {
                return Ok(());
            }
        }
        // An optional term never filters.
        self.join(lookup, at, i + 1, bindings, budget, sink)
    }

    /// Binds variable `v` to each of the row's targets for term `t` in
    /// turn, running the terms after `i` under each binding. Returns
    /// whether there was a target. Each binding is charged to `budget`.
    #[allow(clippy::too_many_arguments)]
    #[inline]
    fn bind_each<L: Lookup>(
        &self,
        lookup: &L,
        at: At,
        i: usize,
        t: &PairTerm,
        v: usize,
        bindings: &mut Bindings,
        budget: &mut usize,
        sink: &mut impl Sink,
    ) -> Result<bool, QueryError> {
        // The last pair term: each binding is a result (no call to `join`).
        let last = i + 1 == self.required.len() + self.optional.len() && self.not.is_empty();
        let found = lookup.each(t.rel, at, |x| {
            *budget = (budget.checked_sub(1)).ok_or_else(|| too_many(at.entity, t.column))?;
            bindings.set(v, x);
            if last {
                sink.one(at.entity, bindings);
                Ok(())
            } else {
                self.join(lookup, at, i + 1, bindings, budget, sink)
            }
        });
        bindings.clear(v);
        found
    }

    /// [`PairTerms::join`] of row `at` from the targets a [`Batch`] holds,
    /// without recursion: a depth-first walk over the terms' choices, with
    /// `stack` holding each entered term's choices (kept from row to row
    /// by the caller, so nothing is allocated per row). Same results in
    /// the same order, same bindings tried, same error.
    pub(super) fn join_batch(
        &self,
        batch: &Batch<'_>,
        at: At,
        stack: &mut Vec<Choices>,
        bindings: &mut Bindings,
        sink: &mut impl Sink,
    ) -> Result<(), QueryError> {
        let required = self.required.len();
        let terms = required + self.optional.len();
        let mut budget = MAX_BINDINGS_PER_ENTITY;
        stack.clear();
        loop {
            // Enter term `i`, under the choices made above it.
            let i = stack.len();
            let refused = i == required
                && (self.not.iter()).any(|t| batch.has(t.rel, at, not_target(t, bindings)));
            if refused {
                // Nothing below: the next choice.
            } else if i == terms {
                sink.one(at.entity, bindings);
            } else {
                stack.push(self.choices(batch, at, i, bindings));
            }
            // The next choice of the deepest term with one left.
            loop {
                let Some(top) = stack.last_mut() else {
                    return Ok(());
                };
                if top.at < top.end {
                    if let Some(v) = top.var {
                        let Some(left) = budget.checked_sub(1) else {
                            return Err(too_many(at.entity, self.term(stack.len() - 1).column));
                        };
                        budget = left;
                        bindings.set(v, batch.target(top.rel, top.at));
                    }
                    top.at += 1;
                    break;
                }
                if let Some(v) = top.var {
                    bindings.clear(v);
                }
                stack.pop();
            }
        }
    }

    /// Term `i` of the join order: required terms, then optional ones.
    fn term(&self, i: usize) -> &PairTerm {
        let required = self.required.len();
        match self.required.get(i) {
            Some(t) => t,
            None => &self.optional[i - required],
        }
    }

    /// The choices of term `i` (as [`PairTerms::join`] makes them) for row
    /// `at` under `bindings`.
    #[inline]
    fn choices(&self, batch: &Batch<'_>, at: At, i: usize, bindings: &Bindings) -> Choices {
        let optional = i >= self.required.len();
        let t = self.term(i);
        let pass = |ok: bool| Choices {
            rel: t.rel,
            at: 0,
            end: usize::from(ok),
            var: None,
        };
        let target = match t.target {
            PairTarget::Var(v) if bindings.get(v).is_none() => {
                let (from, to) = batch.span(t.rel, at);
                // An optional term without targets leaves `v` unbound.
                if optional && from == to {
                    return pass(true);
                }
                return Choices {
                    rel: t.rel,
                    at: from,
                    end: to,
                    var: Some(v),
                };
            }
            // An optional term never filters.
            _ if optional => return pass(true),
            PairTarget::Any => None,
            PairTarget::Entity(x) => Some(x),
            PairTarget::Var(v) => bindings.get(v),
        };
        pass(batch.has(t.rel, at, target))
    }
}

/// The target a `!` term checks under `bindings`: `None` for any.
#[inline]
fn not_target(t: &PairTerm, bindings: &Bindings) -> Option<Entity> {
    match t.target {
        PairTarget::Any => None,
        PairTarget::Entity(x) => Some(x),
        // Bound by a required term (`Query::check`).
        PairTarget::Var(v) => bindings.get(v),
    }
}

/// One entered term's choices in [`PairTerms::join_batch`]: the targets
/// `at..end` of relation `rel` in the batch, each bound to `var` in turn;
/// or, for a term that binds nothing, `end - at` passes (one, or none).
#[derive(Debug, Clone, Copy)]
pub(super) struct Choices {
    rel: usize,
    at: usize,
    end: usize,
    var: Option<usize>,
}

/// The error of an entity whose joins try more than
/// [`MAX_BINDINGS_PER_ENTITY`] bindings, at the term at `column`.
#[cold]
fn too_many(e: Entity, column: usize) -> QueryError {
    QueryError::TooManyBindings {
        entity: format!("{}v{}", e.index(), e.generation()),
        max: MAX_BINDINGS_PER_ENTITY,
        column,
    }
}

/// A query's only pair term (see [`PairTerms::single`]). Joining it is a
/// loop over the row's targets that hands each result straight to the
/// sink, with no recursion and no [`Bindings`]: the results, their order
/// and errors are those of [`PairTerms::join`] for the same term.
#[derive(Debug, Clone, Copy)]
pub(super) struct Single {
    oper: Oper,
    rel: usize,
    target: PairTarget,
    column: usize,
}

impl Single {
    /// The results of a whole run of `rows` (those given to
    /// [`Lookup::start`], none filtered out) from a [`Batch`]; `None` (and
    /// nothing done) for [`Single::run`] to take each row instead: when
    /// the lookup is no batch, the term is optional and binds, or a row
    /// could try more than [`MAX_BINDINGS_PER_ENTITY`] bindings. A term
    /// that binds hands the run to the sink whole (`Sink::joined`); one
    /// that binds nothing hands over each stretch of consecutive rows that
    /// pass as one slice.
    #[inline]
    pub(super) fn run_all<L: Lookup>(
        &self,
        lookup: &L,
        rows: &[Entity],
        sink: &mut impl Sink,
    ) -> Option<()> {
        let run = lookup.batch()?.run(self.rel)?;
        if run.ends.len() != rows.len() + 1 {
            return None;
        }
        let target = match (self.oper, self.target) {
            (Oper::And, PairTarget::Var(_)) => {
                return (run.targets.len() <= MAX_BINDINGS_PER_ENTITY)
                    .then(|| sink.joined(rows, run));
            }
            (Oper::Optional, PairTarget::Var(_)) => return None,
            (_, PairTarget::Var(_) | PairTarget::Any) => None,
            (_, PairTarget::Entity(x)) => Some(x),
        };
        let base = run.ends.first().copied().unwrap_or(0);
        let mut from = None;
        for (k, w) in run.ends.windows(2).enumerate() {
            let (a, b) = (w[0].saturating_sub(base), w[1].saturating_sub(base));
            let targets = run.targets.get(a..b).unwrap_or(&[]);
            let has = match target {
                None => !targets.is_empty(),
                Some(x) => targets.contains(&x),
            };
            let keep = match self.oper {
                Oper::And => has,
                Oper::Not => !has,
                Oper::Optional => true,
            };
            match (keep, from) {
                (true, None) => from = Some(k),
                (false, Some(f)) => {
                    sink.rows(rows.get(f..k).unwrap_or(&[]));
                    from = None;
                }
                _ => {}
            }
        }
        if let Some(f) = from {
            sink.rows(rows.get(f..).unwrap_or(&[]));
        }
        Some(())
    }

    /// The results of row `at`. A query with this term has one variable
    /// when the term names one (slot 0), and none otherwise.
    #[inline]
    pub(super) fn run<L: Lookup>(
        &self,
        lookup: &L,
        at: At,
        sink: &mut impl Sink,
    ) -> Result<(), QueryError> {
        let e = at.entity;
        let target = match self.target {
            PairTarget::Var(_) if self.oper != Oper::Not => {
                let mut budget = MAX_BINDINGS_PER_ENTITY;
                let found = lookup.each(self.rel, at, |x| {
                    budget = (budget.checked_sub(1)).ok_or_else(|| too_many(e, self.column))?;
                    sink.one_of(e, &[x.to_bits()], 1);
                    Ok(())
                })?;
                if !found && self.oper == Oper::Optional {
                    sink.one_of(e, &[0], 0);
                }
                return Ok(());
            }
            // Unbound in a `!` term (which `Query::check` refuses): as
            // the join, any target.
            PairTarget::Var(_) | PairTarget::Any => None,
            PairTarget::Entity(x) => Some(x),
        };
        let keep = match self.oper {
            Oper::And => lookup.has(self.rel, at, target),
            Oper::Not => !lookup.has(self.rel, at, target),
            Oper::Optional => true,
        };
        if keep {
            sink.one_of(e, &[], 0);
        }
        Ok(())
    }
}

/// The row being joined: its entity, and its position in the run of rows
/// the lookup was last given ([`Lookup::start`]).
#[derive(Debug, Clone, Copy)]
pub(super) struct At {
    pub(super) entity: Entity,
    pub(super) row: usize,
}

/// Where the join reads the targets of the row it joins.
pub(super) trait Lookup {
    /// Gets ready for the rows `entities` (a chunk's); [`At::row`] then
    /// indexes them.
    fn start(&mut self, entities: &[Entity]);

    /// Whether the row has a pair of relation `rel` to `target` (to any,
    /// for `None`).
    fn has(&self, rel: usize, at: At, target: Option<Entity>) -> bool;

    /// Calls `f` with each target of the row in relation `rel`, in the
    /// order the pairs were added, until it returns an error, which is
    /// returned. Otherwise, returns whether there was a target.
    fn each(
        &self,
        rel: usize,
        at: At,
        f: impl FnMut(Entity) -> Result<(), QueryError>,
    ) -> Result<bool, QueryError>;

    /// The lookup as a [`Batch`], if it is one.
    fn batch(&self) -> Option<&Batch<'_>>;
}

/// The targets of a run of rows in one relation: row `k`'s are
/// `targets[ends[k] - ends[0]..ends[k + 1] - ends[0]]`, with one more end
/// than rows.
#[derive(Debug, Clone, Copy)]
pub(super) struct Run<'a> {
    pub(super) ends: &'a [usize],
    pub(super) targets: &'a [Entity],
}

impl Run<'_> {
    /// Calls `f` with each of `rows` and each of its targets, in order.
    #[inline]
    pub(super) fn for_each(&self, rows: &[Entity], mut f: impl FnMut(Entity, Entity)) {
        let base = self.ends.first().copied().unwrap_or(0);
        for (&e, w) in rows.iter().zip(self.ends.windows(2)) {
            let (from, to) = (w[0].saturating_sub(base), w[1].saturating_sub(base));
            for &t in self.targets.get(from..to).unwrap_or(&[]) {
                f(e, t);
            }
        }
    }
}

/// The targets of a run of rows, read from the relation tables in one call
/// per relation (see the module docs).
pub(super) struct Batch<'w> {
    relations: &'w Relations,
    types: &'w [TypeId],
    /// Per relation: `ends` (row `k`'s targets are
    /// `targets[ends[k]..ends[k + 1]]`) and `targets`.
    runs: Vec<(Vec<usize>, Vec<Entity>)>,
}

impl<'w> Batch<'w> {
    /// Buffers for the relations `types` (a [`PairTerms::relations`]).
    pub(super) fn new(relations: &'w Relations, types: &'w [TypeId]) -> Batch<'w> {
        Batch {
            relations,
            types,
            runs: types.iter().map(|_| (Vec::new(), Vec::new())).collect(),
        }
    }

    /// Row `at`'s targets in relation `rel`: empty past the rows given.
    #[inline]
    fn targets(&self, rel: usize, at: At) -> &[Entity] {
        let (from, to) = self.span(rel, at);
        (self.runs.get(rel))
            .and_then(|(_, targets)| targets.get(from..to))
            .unwrap_or(&[])
    }

    /// Where row `at`'s targets in relation `rel` are in its buffer, as
    /// `(from, to)`: `(0, 0)` past the rows given.
    #[inline]
    fn span(&self, rel: usize, at: At) -> (usize, usize) {
        let Some((ends, _)) = self.runs.get(rel) else {
            return (0, 0);
        };
        match (ends.get(at.row), ends.get(at.row + 1)) {
            (Some(&from), Some(&to)) if from <= to => (from, to),
            _ => (0, 0),
        }
    }

    /// Target `i` of relation `rel`'s buffer (an index from
    /// [`Batch::span`]).
    #[inline]
    fn target(&self, rel: usize, i: usize) -> Entity {
        (self.runs.get(rel))
            .and_then(|(_, targets)| targets.get(i).copied())
            .unwrap_or(Entity::from_bits(0))
    }

    /// The targets in relation `rel` of all the rows given to
    /// [`Lookup::start`], as one [`Run`].
    #[inline]
    pub(super) fn run(&self, rel: usize) -> Option<Run<'_>> {
        let (ends, targets) = self.runs.get(rel)?;
        Some(Run { ends, targets })
    }
}

impl Lookup for Batch<'_> {
    fn start(&mut self, entities: &[Entity]) {
        for (&relation, (ends, targets)) in self.types.iter().zip(&mut self.runs) {
            ends.clear();
            targets.clear();
            ends.push(0);
            self.relations
                .targets_of_each(relation, entities, ends, targets);
        }
    }

    #[inline]
    fn has(&self, rel: usize, at: At, target: Option<Entity>) -> bool {
        let targets = self.targets(rel, at);
        match target {
            None => !targets.is_empty(),
            Some(x) => targets.contains(&x),
        }
    }

    #[inline]
    fn each(
        &self,
        rel: usize,
        at: At,
        mut f: impl FnMut(Entity) -> Result<(), QueryError>,
    ) -> Result<bool, QueryError> {
        let targets = self.targets(rel, at);
        for &x in targets {
            f(x)?;
        }
        Ok(!targets.is_empty())
    }

    #[inline]
    fn batch(&self) -> Option<&Batch<'_>> {
        Some(self)
    }
}

/// The targets of each row asked of the relation tables when it is joined:
/// the straightforward form [`Batch`] must agree with.
#[cfg(test)]
pub(super) struct RowByRow<'w> {
    pub(super) relations: &'w Relations,
    pub(super) types: &'w [TypeId],
}

#[cfg(test)]
impl Lookup for RowByRow<'_> {
    fn start(&mut self, _: &[Entity]) {}

    fn has(&self, rel: usize, at: At, target: Option<Entity>) -> bool {
        let mut found = false;
        self.relations
            .for_each_target_of(self.types[rel], at.entity, &mut |t| {
                found |= target.is_none_or(|x| x == t);
            });
        found
    }

    fn each(
        &self,
        rel: usize,
        at: At,
        mut f: impl FnMut(Entity) -> Result<(), QueryError>,
    ) -> Result<bool, QueryError> {
        let mut found = false;
        let mut failed = Ok(());
        self.relations
            .for_each_target_of(self.types[rel], at.entity, &mut |x| {
                if failed.is_ok() {
                    found = true;
                    failed = f(x);
                }
            });
        failed.map(|()| found)
    }

    fn batch(&self) -> Option<&Batch<'_>> {
        None
    }
}
