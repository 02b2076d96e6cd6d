//! The query language's evaluator: a [`Query`] resolved against one world
//! ([`Plan`]), then run over its archetypes.
//!
//! Design. Resolving does every lookup by name once: component names to
//! ids (and whether each is stored in archetypes or sparse), relation
//! names to relation types, entity names and paths to entities, and
//! variables to slots. Running then costs what the terms need and no
//! more, in three levels:
//!
//! 1. Archetypes. The table components of required terms (change filters
//!    included) and of `!` terms, and the hidden tags the query does not
//!    name, decide for a whole archetype at once, as typed queries do.
//! 2. Chunks. A change filter on a table component skips every chunk whose
//!    stamp for it is outside the window, before looking at its rows.
//! 3. Rows. Only when a term needs it: row change stamps, sparse
//!    components (looked up per entity in their sparse sets, with their
//!    own stamps), and pairs (pairs are not part of an archetype in doecs,
//!    see `doecs::relation`: each chunk's targets are read from the
//!    relation tables in one call per relation, then joined row by row,
//!    as the `join` module describes). An archetype no row term applies
//!    to hands over its entity slice whole, and a page takes only the
//!    part of it it shows.
//!
//! Pair terms run in order as a join: required ones bind variables (one
//! result per binding), then `!` ones check, then optional ones bind what
//! is still unbound. The bindings one entity's joins try are bounded by
//! [`MAX_BINDINGS_PER_ENTITY`], so a join whose targets multiply is an
//! error rather than a hang.

use super::ast::{ChangeKind, Ident, Oper, Query, TargetKind, TermKind};
use super::join::{At, Batch, Bindings, Lookup, PairTarget, PairTerms, Run};
use super::{QueryError, MAX_BINDINGS_PER_ENTITY};
use crate::components::{is_sparse, resolve};
use doecs::raw::{Archetype, ColumnIndex, Row};
use doecs::{ChangeWindow, ComponentId, Entity, Tick, World};
use doecs_registry::ComponentRegistry;
use std::any::TypeId;

/// One result: an entity, and each variable's binding (in the order of
/// [`Plan::variables`]; `None` for a variable only an optional term binds,
/// when it did not).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Match<'p> {
    /// The entity.
    pub entity: Entity,
    /// The binding slots, as entity bits.
    slots: &'p [u64],
    bound: u64,
}

impl<'p> Match<'p> {
    /// Variable `v`'s binding: `None` when unbound, or past the last.
    pub fn binding(&self, v: usize) -> Option<Entity> {
        let slot = *self.slots.get(v)?;
        (v < 64 && self.bound >> v & 1 == 1).then(|| Entity::from_bits(slot))
    }

    /// Every variable's binding, in order.
    pub fn bindings(&self) -> impl Iterator<Item = Option<Entity>> + 'p {
        let (slots, bound) = (self.slots, self.bound);
        (0..slots.len()).map(move |v| (bound >> v & 1 == 1).then(|| Entity::from_bits(slots[v])))
    }
}

/// One page of results, and how many there are in all. The results are
/// kept flat (entities in one `Vec`, bindings in another), so a page of
/// whole archetypes is a few copies of their entity slices, with no
/// allocation per result.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Page {
    /// Every result's count, not just the page's.
    pub total: usize,
    entities: Vec<Entity>,
    /// `variables` binding slots per result, as entity bits.
    slots: Vec<u64>,
    /// Per result (when there are variables), a mask of its bound slots.
    bound: Vec<u64>,
    variables: usize,
}

impl Page {
    /// The page's entities, in order.
    pub fn entities(&self) -> &[Entity] {
        &self.entities
    }

    /// How many results the page holds.
    pub fn len(&self) -> usize {
        self.entities.len()
    }

    /// Whether the page holds no result.
    pub fn is_empty(&self) -> bool {
        self.entities.is_empty()
    }

    /// Result `i`, if the page has it.
    pub fn get(&self, i: usize) -> Option<Match<'_>> {
        let entity = *self.entities.get(i)?;
        let from = i * self.variables;
        let slots = self.slots.get(from..from + self.variables)?;
        let bound = self.bound.get(i).copied().unwrap_or(0);
        Some(Match {
            entity,
            slots,
            bound,
        })
    }

    /// The results, in order.
    pub fn iter(&self) -> impl Iterator<Item = Match<'_>> + '_ {
        (0..self.len()).filter_map(|i| self.get(i))
    }
}

/// A query resolved against one world: what [`Plan::run`] runs. Valid for
/// that world while its components and named entities stay as they were
/// (resolve again after structural changes to be sure).
#[derive(Debug, Clone)]
pub struct Plan {
    with_table: Vec<ComponentId>,
    without_table: Vec<ComponentId>,
    with_sparse: Vec<ComponentId>,
    without_sparse: Vec<ComponentId>,
    hidden: Vec<ComponentId>,
    table_changes: Vec<(ComponentId, ChangeKind)>,
    sparse_changes: Vec<(ComponentId, ChangeKind)>,
    pairs: PairTerms,
    variables: Vec<String>,
    optional: Vec<ComponentId>,
    with_ids: Vec<ComponentId>,
    without_ids: Vec<ComponentId>,
}

/// Where results go while a plan runs.
pub(super) trait Sink {
    /// A run of results without bindings.
    fn rows(&mut self, entities: &[Entity]);
    /// One result: `slots` are the bindings' slots (all of them, or none
    /// when there are no variables), `bound` the mask of those bound.
    fn one_of(&mut self, entity: Entity, slots: &[u64], bound: u64);
    /// One result, with `bindings`.
    #[inline]
    fn one(&mut self, entity: Entity, bindings: &Bindings) {
        self.one_of(entity, &bindings.slots, bindings.bound);
    }
    /// For each of `rows` in turn, one result per target of its in `run`,
    /// binding the only variable to it.
    #[inline]
    fn joined(&mut self, rows: &[Entity], run: Run<'_>) {
        run.for_each(rows, |e, t| self.one_of(e, &[t.to_bits()], 1));
    }
}

/// Collects one page.
struct PageSink {
    offset: usize,
    end: usize,
    page: Page,
}

impl Sink for PageSink {
    #[inline]
    fn rows(&mut self, entities: &[Entity]) {
        let start = self.page.total;
        self.page.total += entities.len();
        let from = self.offset.max(start);
        let to = self.end.min(self.page.total);
        if from < to {
            // Only a query without variables hands over whole rows.
            debug_assert_eq!(self.page.variables, 0);
            let rows = &entities[from - start..to - start];
            self.page.entities.extend_from_slice(rows);
        }
    }

    #[inline]
    fn one_of(&mut self, entity: Entity, slots: &[u64], bound: u64) {
        if (self.offset..self.end).contains(&self.page.total) {
            self.page.entities.push(entity);
            if self.page.variables > 0 {
                debug_assert_eq!(slots.len(), self.page.variables);
                self.page.slots.extend_from_slice(slots);
                self.page.bound.push(bound);
            }
        }
        self.page.total += 1;
    }

    /// Whole when all of the run's results are on the page: its entities,
    /// each as many times as it has targets, then the targets as slots,
    /// with no check per result.
    #[inline]
    fn joined(&mut self, rows: &[Entity], run: Run<'_>) {
        let n = run.targets.len();
        let start = self.page.total;
        let whole = self.offset <= start
            && start.checked_add(n).is_some_and(|end| end <= self.end)
            && self.page.variables == 1;
        if !whole {
            run.for_each(rows, |e, t| self.one_of(e, &[t.to_bits()], 1));
            return;
        }
        let page = &mut self.page;
        page.entities.reserve(n);
        for (&e, w) in rows.iter().zip(run.ends.windows(2)) {
            for _ in w[0]..w[1] {
                page.entities.push(e);
            }
        }
        page.slots.extend(run.targets.iter().map(|t| t.to_bits()));
        page.bound.extend(std::iter::repeat_n(1, n));
        page.total += n;
    }
}

/// Hands every result to a closure.
struct EachSink<F>(F);

impl<F: FnMut(Match<'_>)> Sink for EachSink<F> {
    fn rows(&mut self, entities: &[Entity]) {
        for &entity in entities {
            (self.0)(Match {
                entity,
                slots: &[],
                bound: 0,
            });
        }
    }
    fn one_of(&mut self, entity: Entity, slots: &[u64], bound: u64) {
        (self.0)(Match {
            entity,
            slots,
            bound,
        });
    }
}

/// The stamp a change filter reads from `(added, changed)`.
#[inline]
fn stamp(kind: ChangeKind, (added, changed): (Tick, Tick)) -> Tick {
    match kind {
        ChangeKind::Changed => changed,
        ChangeKind::Added => added,
    }
}

/// The relation a pair term names: by its registry name, else by the
/// type name (short or full) of a relation the world holds pairs of.
fn relation(
    world: &World,
    registry: &ComponentRegistry,
    name: &Ident,
) -> Result<TypeId, QueryError> {
    if let Some(t) = registry.relation_type(&name.text) {
        return Ok(t);
    }
    let kinds: Vec<(TypeId, &str)> = world
        .relations()
        .kinds()
        .map(|(t, type_name, _)| (t, type_name))
        .collect();
    for &(t, type_name) in &kinds {
        if type_name == name.text || crate::entity::short_type_name(type_name) == name.text {
            return Ok(t);
        }
    }
    let mut known: Vec<String> = ["ChildOf", "IsA"].map(String::from).to_vec();
    for (_, type_name) in kinds {
        let short = crate::entity::short_type_name(type_name);
        if !known.contains(&short) {
            known.push(short);
        }
    }
    Err(QueryError::UnknownRelation {
        name: name.text.clone(),
        column: name.column,
        known: known.join(", "),
    })
}

impl Plan {
    /// Resolves `query` against `world`: component names through
    /// `registry` and the world (as [`crate::components::resolve`]),
    /// relations as the [module docs](super) say, entity names with
    /// `World::lookup`.
    ///
    /// # Errors
    /// A [`QueryError`] at the column of the first name that resolves to
    /// nothing, and those of [`Query::check`].
    pub fn new(
        world: &World,
        registry: &ComponentRegistry,
        query: &Query,
    ) -> Result<Plan, QueryError> {
        query.check()?;
        let variables = query.variables();
        let mut plan = Plan {
            with_table: Vec::new(),
            without_table: Vec::new(),
            with_sparse: Vec::new(),
            without_sparse: Vec::new(),
            hidden: Vec::new(),
            table_changes: Vec::new(),
            sparse_changes: Vec::new(),
            pairs: PairTerms::default(),
            variables: Vec::new(),
            optional: Vec::new(),
            with_ids: Vec::new(),
            without_ids: Vec::new(),
        };
        let component = |name: &Ident| -> Result<ComponentId, QueryError> {
            resolve(world, registry, &name.text).ok_or_else(|| QueryError::UnknownComponent {
                name: name.text.clone(),
                column: name.column,
            })
        };
        let mut named = Vec::new();
        for term in &query.terms {
            match &term.kind {
                TermKind::Component(name) => {
                    let id = component(name)?;
                    named.push(id);
                    match (term.oper, is_sparse(world, id)) {
                        (Oper::And, false) => plan.with_table.push(id),
                        (Oper::And, true) => plan.with_sparse.push(id),
                        (Oper::Not, false) => plan.without_table.push(id),
                        (Oper::Not, true) => plan.without_sparse.push(id),
                        (Oper::Optional, _) => plan.optional.push(id),
                    }
                    match term.oper {
                        Oper::And => plan.with_ids.push(id),
                        Oper::Not => plan.without_ids.push(id),
                        Oper::Optional => {}
                    }
                }
                TermKind::Change {
                    kind,
                    component: name,
                } => {
                    let id = component(name)?;
                    named.push(id);
                    if is_sparse(world, id) {
                        plan.with_sparse.push(id);
                        plan.sparse_changes.push((id, *kind));
                    } else {
                        plan.with_table.push(id);
                        plan.table_changes.push((id, *kind));
                    }
                }
                TermKind::Pair {
                    relation: rel,
                    target,
                } => {
                    let relation = relation(world, registry, rel)?;
                    let target_at = target.column;
                    let target = match &target.kind {
                        TargetKind::Any => PairTarget::Any,
                        TargetKind::Variable(v) => {
                            PairTarget::Var(variables.iter().position(|x| x == v).unwrap_or(0))
                        }
                        TargetKind::Id(e) => {
                            if !world.contains_entity(*e) {
                                return Err(QueryError::DeadEntity {
                                    entity: format!("{}v{}", e.index(), e.generation()),
                                    column: target_at,
                                });
                            }
                            PairTarget::Entity(*e)
                        }
                        TargetKind::Name(n) => match world.lookup(n) {
                            Ok(e) => PairTarget::Entity(e),
                            Err(why) => {
                                return Err(QueryError::UnknownEntity {
                                    name: n.clone(),
                                    column: target_at,
                                    reason: why.to_string(),
                                })
                            }
                        },
                    };
                    plan.pairs.push(term.oper, relation, target, term.column);
                }
            }
        }
        plan.variables = variables;
        plan.hidden = world
            .hidden_tags()
            .types()
            .iter()
            .filter_map(|&t| world.components().by_type_id(t))
            .filter(|id| !named.contains(id))
            .collect();
        Ok(plan)
    }

    /// The variables, in the order their bindings are listed.
    pub fn variables(&self) -> &[String] {
        &self.variables
    }

    /// The optional component terms' components, in term order.
    pub fn optional(&self) -> &[ComponentId] {
        &self.optional
    }

    /// The required component terms' components, in term order.
    pub fn with_components(&self) -> &[ComponentId] {
        &self.with_ids
    }

    /// The `!` component terms' components, in term order.
    pub fn without_components(&self) -> &[ComponentId] {
        &self.without_ids
    }

    /// Whether the query has change filters.
    pub fn has_changes(&self) -> bool {
        !self.table_changes.is_empty() || !self.sparse_changes.is_empty()
    }

    /// The table components the change filters read row stamps of: a
    /// caller with `&mut World` may ask the world to keep them
    /// (`WorldCore::track_changes_by_id`), for row-exact answers.
    pub fn tracked(&self) -> Vec<ComponentId> {
        self.table_changes.iter().map(|&(id, _)| id).collect()
    }

    /// Whether no term looks at rows: every matching archetype is taken
    /// whole.
    fn row_free(&self) -> bool {
        self.with_sparse.is_empty()
            && self.without_sparse.is_empty()
            && self.table_changes.is_empty()
            && self.pairs.is_empty()
    }

    /// The results `offset..offset + limit` (in archetype, row, then join
    /// order) and the count of all, changes judged by `window`.
    ///
    /// # Errors
    /// [`QueryError::TooManyBindings`] when a join multiplies past its
    /// bound.
    pub fn run(
        &self,
        world: &World,
        window: ChangeWindow,
        offset: usize,
        limit: usize,
    ) -> Result<Page, QueryError> {
        let lookup = Batch::new(world.relations(), self.pairs.relations());
        self.run_with(world, window, offset, limit, lookup, true)
    }

    /// [`Plan::run`] with the general join reading targets row by row, the
    /// form the batched join and the one-term path must agree with.
    #[cfg(test)]
    pub(super) fn run_row_by_row(
        &self,
        world: &World,
        window: ChangeWindow,
        offset: usize,
        limit: usize,
    ) -> Result<Page, QueryError> {
        let lookup = super::join::RowByRow {
            relations: world.relations(),
            types: self.pairs.relations(),
        };
        self.run_with(world, window, offset, limit, lookup, false)
    }

    /// [`Plan::run`], the join reading targets from `lookup`, and a query
    /// of one pair term joined without the general join when `fast`.
    fn run_with(
        &self,
        world: &World,
        window: ChangeWindow,
        offset: usize,
        limit: usize,
        mut lookup: impl Lookup,
        fast: bool,
    ) -> Result<Page, QueryError> {
        // The rows of the archetypes that pass bound the results of a
        // query without joins, and estimate those of one with: reserving
        // them up front spares the page its regrowth.
        let rows: usize = (doecs::raw::archetypes(world).iter())
            .filter(|a| self.takes(a))
            .map(|a| a.len())
            .sum();
        let reserve = rows.saturating_sub(offset).min(limit);
        let variables = self.variables.len();
        let mut sink = PageSink {
            offset,
            end: offset.saturating_add(limit),
            page: Page {
                entities: Vec::with_capacity(reserve),
                slots: Vec::with_capacity(reserve.saturating_mul(variables)),
                bound: Vec::with_capacity(if variables > 0 { reserve } else { 0 }),
                variables,
                total: 0,
            },
        };
        self.visit(world, window, &mut lookup, fast, &mut sink)?;
        Ok(sink.page)
    }

    /// Calls `f` with every result, in order; returns how many there were.
    ///
    /// # Errors
    /// As [`Plan::run`].
    pub fn for_each(
        &self,
        world: &World,
        window: ChangeWindow,
        mut f: impl FnMut(Match<'_>),
    ) -> Result<usize, QueryError> {
        let mut count = 0usize;
        let mut sink = EachSink(|m: Match<'_>| {
            count += 1;
            f(m)
        });
        let mut lookup = Batch::new(world.relations(), self.pairs.relations());
        self.visit(world, window, &mut lookup, true, &mut sink)?;
        Ok(count)
    }

    /// Whether the archetype's component set lets its rows through (the
    /// first level of the module docs); an empty one never does.
    #[inline]
    fn takes(&self, arch: &Archetype) -> bool {
        !arch.is_empty()
            && self.with_table.iter().all(|&c| arch.has(c))
            && !self.without_table.iter().any(|&c| arch.has(c))
            && !self.hidden.iter().any(|&c| arch.has(c))
    }

    /// Whether row `row` (entity `e`) of `arch` passes the row terms but
    /// pairs (the third level of the module docs): its row stamps of the
    /// change-filtered `columns`, its sparse components and their stamps.
    fn row_passes(
        &self,
        world: &World,
        window: ChangeWindow,
        arch: &Archetype,
        columns: &[(ColumnIndex, ChangeKind)],
        row: Row,
        e: Entity,
    ) -> bool {
        (columns.iter()).all(|&(c, kind)| window.contains(stamp(kind, arch.row_ticks(row, c))))
            && self.with_sparse.iter().all(|&c| world.has_id(e, c))
            && !self.without_sparse.iter().any(|&c| world.has_id(e, c))
            && self.sparse_changes.iter().all(|&(c, kind)| {
                world
                    .change_ticks_by_id(e, c)
                    .is_ok_and(|t| window.contains(stamp(kind, t)))
            })
    }

    fn visit(
        &self,
        world: &World,
        window: ChangeWindow,
        lookup: &mut impl Lookup,
        fast: bool,
        sink: &mut impl Sink,
    ) -> Result<(), QueryError> {
        let row_free = self.row_free();
        let joins = !self.pairs.is_empty();
        // One pair term (the common join) runs without the general join.
        let single = (self.pairs.single()).filter(|_| fast && self.variables.len() <= 1);
        // Whether a row can fail but for its pairs.
        let row_filters = !self.table_changes.is_empty()
            || !self.with_sparse.is_empty()
            || !self.without_sparse.is_empty()
            || !self.sparse_changes.is_empty();
        let mut bindings = Bindings::new(self.variables.len());
        let mut stack = Vec::new();
        let mut columns: Vec<(ColumnIndex, ChangeKind)> = Vec::new();
        for arch in doecs::raw::archetypes(world).iter() {
            if !self.takes(arch) {
                continue;
            }
            if row_free {
                sink.rows(arch.entities());
                continue;
            }
            columns.clear();
            columns.extend(
                self.table_changes
                    .iter()
                    .filter_map(|&(id, kind)| Some((arch.column_of(id)?, kind))),
            );
            let entities = arch.entities();
            for chunk in 0..arch.chunk_count() {
                let in_window = columns.iter().all(|&(c, kind)| {
                    let t = arch.chunk_ticks(c, chunk);
                    window.contains(stamp(kind, (t.added(), t.changed())))
                });
                if !in_window {
                    continue;
                }
                let (start, len) = arch.chunk_rows_of(chunk);
                let rows = entities.get(start..start + len).unwrap_or(&[]);
                if joins {
                    lookup.start(rows);
                    if let (Some(single), false) = (&single, row_filters) {
                        if single.run_all(lookup, rows, sink).is_some() {
                            continue;
                        }
                    }
                }
                for (k, &e) in rows.iter().enumerate() {
                    let row = Row((start + k) as u32);
                    if row_filters && !self.row_passes(world, window, arch, &columns, row, e) {
                        continue;
                    }
                    let at = At { entity: e, row: k };
                    if let Some(single) = &single {
                        single.run(lookup, at, sink)?;
                        continue;
                    }
                    match lookup.batch().filter(|_| fast) {
                        Some(batch) => {
                            (self.pairs).join_batch(batch, at, &mut stack, &mut bindings, sink)?
                        }
                        None => {
                            let mut budget = MAX_BINDINGS_PER_ENTITY;
                            (self.pairs).join(lookup, at, 0, &mut bindings, &mut budget, sink)?;
                        }
                    }
                }
            }
        }
        Ok(())
    }
}
