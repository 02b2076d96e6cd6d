//! The archetype registry, the type index and the archetype graph (after Sander Mertens's "Building an ECS #2: Archetypes and Vectorization").
//!
//! Archetypes are found by their sorted component set through a type index
//! (a hash map from the set to the id). The graph caches, per archetype and
//! per [bundle](crate::bundle), where inserting or removing that bundle leads
//! and where each field's column is there: an [`InsertEdge`] or a
//! [`RemoveEdge`]. A single component is a bundle of one, so every path that
//! changes an entity's components (typed, untyped, command buffers, entity
//! builders) finds its target with one binary search in a short sorted list
//! and no hashing or sorting of sets, once the edge exists.

use super::archetype::{Archetype, ColumnIndex};
use super::row_move::{MoveIndex, MovePlans};
use super::{ArchetypeId, Row};
use crate::bundle::{BundleId, BundleInfo};
use crate::component::{ComponentId, Components};
use crate::entity::Entity;
use std::collections::HashMap;

/// Where one field of an inserted bundle goes.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct FieldTarget {
    /// The field's column in the target archetype.
    pub column: ColumnIndex,
    /// Whether the source archetype already has the component, so the insert
    /// replaces a value instead of adding one.
    pub replaces: bool,
}

/// The cached result of inserting one bundle into one archetype.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InsertEdge {
    /// The archetype with the bundle's components added (the source itself
    /// when it already has all of them).
    pub target: ArchetypeId,
    /// One entry per bundle field, in field order.
    pub fields: Box<[FieldTarget]>,
    /// Whether any field replaces a value (`fields[i].replaces` for some
    /// `i`), decided once when the edge is made.
    pub replaces_any: bool,
    /// The columns a row moving along the edge copies (when `target` is
    /// not the source).
    pub(crate) moves: MoveIndex,
}

impl InsertEdge {
    fn new(target: ArchetypeId, fields: Box<[FieldTarget]>, moves: MoveIndex) -> Self {
        let replaces_any = fields.iter().any(|f| f.replaces);
        InsertEdge {
            target,
            fields,
            replaces_any,
            moves,
        }
    }
}

/// The cached result of removing one bundle from one archetype.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RemoveEdge {
    /// The archetype without the bundle's components, or the first field
    /// component the source lacks (then nothing can be removed).
    pub target: Result<ArchetypeId, ComponentId>,
    /// When `target` is `Ok`: each field's column in the source, in field order.
    pub fields: Box<[ColumnIndex]>,
    /// When `target` is `Ok`: the columns a row moving along the edge copies.
    pub(crate) moves: MoveIndex,
}

/// The cached result of swapping one bundle for another on one archetype:
/// the remove and insert edges in one step, so the entity moves once and no
/// archetype between them is made.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExchangeEdge {
    /// The archetype without the old bundle and with the new one, or the
    /// first old field the source lacks.
    pub target: Result<ArchetypeId, ComponentId>,
    /// The old bundle's columns in the source, in field order.
    pub old_fields: Box<[ColumnIndex]>,
    /// Where each field of the new bundle goes; `replaces` means the entity
    /// kept that component from before (it is not one of the old fields).
    pub new_fields: Box<[FieldTarget]>,
    /// When `target` is `Ok`: the columns a row moving along the edge copies.
    pub(crate) moves: MoveIndex,
}

/// Index of an edge in one of the [`Archetypes`] edge arenas.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct EdgeIndex(u32);

/// One state of an [`Archetypes`] registry's physical layout: which
/// archetypes exist, how many rows each holds, and where their columns and
/// change ticks live.
///
/// Every way to change any of that goes through `&mut Archetype` handed out
/// by the registry (`Archetypes::get_mut`, `pair_mut`, `iter_mut`) or
/// through creating an archetype, and each of those moves the stamp on. So
/// while the stamp reads the same, pointers and lengths fetched from the
/// registry's archetypes are still current; queries keep their fetched
/// columns on that basis (see `query::state`). The registry part is unique
/// per registry in the process, so stamps of two registries never compare
/// equal, even when one replaced the other at the same address.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct LayoutStamp {
    registry: u64,
    epoch: u64,
}

impl LayoutStamp {
    /// The first stamp of a new registry.
    fn fresh() -> Self {
        use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
        static NEXT_REGISTRY: AtomicU64 = AtomicU64::new(0);
        LayoutStamp {
            registry: NEXT_REGISTRY.fetch_add(1, Relaxed),
            epoch: 0,
        }
    }
}

/// Every archetype of a world, plus the type index and the graph.
///
/// # Invariants
/// - `archetypes[i].id() == ArchetypeId::from_index(i)`; archetype 0 has no
///   components.
/// - `by_components` maps each archetype's component set to its id, and nothing else.
/// - An archetype's insert (remove) edge list maps a bundle to an edge of
///   `insert_edges` (`remove_edges`) computed for that archetype and bundle.
/// - `stamp.epoch` moved on at every `&mut Archetype` handed out and at
///   every archetype created (see [`LayoutStamp`]).
pub struct Archetypes {
    archetypes: Vec<Archetype>,
    by_components: HashMap<Box<[ComponentId]>, ArchetypeId>,
    insert_edges: Vec<InsertEdge>,
    remove_edges: Vec<RemoveEdge>,
    exchange_edges: HashMap<(ArchetypeId, BundleId, BundleId), ExchangeEdge>,
    /// Every edge's row-move plan.
    moves: MovePlans,
    chunk_bytes: usize,
    stamp: LayoutStamp,
}

impl std::fmt::Debug for Archetypes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.archetypes.iter()).finish()
    }
}

impl Archetypes {
    /// A registry holding only the empty archetype, with chunks of `chunk_bytes`.
    pub(crate) fn new(chunk_bytes: usize, components: &Components) -> Self {
        let mut archetypes = Archetypes {
            archetypes: Vec::new(),
            by_components: HashMap::new(),
            insert_edges: Vec::new(),
            remove_edges: Vec::new(),
            exchange_edges: HashMap::new(),
            moves: MovePlans::default(),
            chunk_bytes,
            stamp: LayoutStamp::fresh(),
        };
        archetypes.get_or_create(&[], components);
        archetypes
    }

    /// Number of archetypes.
    #[inline]
    pub fn len(&self) -> usize {
        self.archetypes.len()
    }

    /// Always false: the empty archetype always exists.
    pub fn is_empty(&self) -> bool {
        self.archetypes.is_empty()
    }

    /// The configured chunk size in bytes.
    pub fn chunk_bytes(&self) -> usize {
        self.chunk_bytes
    }

    /// The archetype `id`.
    #[inline]
    pub fn get(&self, id: ArchetypeId) -> &Archetype {
        &self.archetypes[id.index()]
    }

    /// The archetype at index `index`, unchecked: for hot lookups whose
    /// index comes from the entity table.
    ///
    /// # Safety
    /// `index` must be below [`Archetypes::len`].
    #[inline(always)]
    pub(crate) unsafe fn get_unchecked(&self, index: usize) -> &Archetype {
        debug_assert!(index < self.archetypes.len());
        // SAFETY: in bounds (caller).
        unsafe { self.archetypes.get_unchecked(index) }
    }

    /// The current layout stamp: equal to an earlier one only if no
    /// archetype was changed or created in between.
    #[inline]
    pub fn layout_stamp(&self) -> LayoutStamp {
        self.stamp
    }

    /// Records that the layout may change now.
    #[inline(always)]
    fn touch(&mut self) {
        self.stamp.epoch += 1;
    }

    /// The archetype `id`, mutably.
    #[inline]
    pub(crate) fn get_mut(&mut self, id: ArchetypeId) -> &mut Archetype {
        self.touch();
        &mut self.archetypes[id.index()]
    }

    /// Two distinct archetypes, mutably.
    ///
    /// # Panics
    /// If `a == b`.
    #[inline(always)]
    pub(crate) fn pair_mut(
        &mut self,
        a: ArchetypeId,
        b: ArchetypeId,
    ) -> (&mut Archetype, &mut Archetype) {
        assert_ne!(a, b, "pair_mut needs two distinct archetypes");
        self.touch();
        if a < b {
            let (lo, hi) = self.archetypes.split_at_mut(b.index());
            (&mut lo[a.index()], &mut hi[0])
        } else {
            let (lo, hi) = self.archetypes.split_at_mut(a.index());
            (&mut hi[0], &mut lo[b.index()])
        }
    }

    /// Moves live row `row` of archetype `from` into a new row of `to` for
    /// `entity`, copying the columns of plan `moves` with their
    /// change stamps, and swap-removes the source row without drops.
    /// Returns the new row and the entity that filled the hole, if any.
    ///
    /// # Safety
    /// `moves` must be the plan of the edge from `from` to `to` (distinct
    /// archetypes), and `row` live in `from`. Every source component
    /// `to` lacks must already be moved out. Every column of `to` that the
    /// source lacks is left uninitialised: the caller must write it before
    /// anything else touches the archetypes.
    #[inline(always)]
    pub(crate) unsafe fn move_row(
        &mut self,
        entity: Entity,
        (from, row): (ArchetypeId, Row),
        to: ArchetypeId,
        moves: MoveIndex,
    ) -> (Row, Option<Entity>) {
        self.touch();
        let pairs = self.moves.get(moves);
        let (a, b) = (from.index(), to.index());
        debug_assert!(a != b && a < self.archetypes.len() && b < self.archetypes.len());
        // SAFETY: an edge joins two distinct archetypes of this registry
        // (caller), so both indices are in bounds and differ.
        let [source, target] = unsafe { self.archetypes.get_disjoint_unchecked_mut([a, b]) };
        // SAFETY: the plan's target-only columns are left for the caller
        // (contract); the shared ones are copied just below.
        let new = unsafe { target.push_uninit(entity) };
        // SAFETY: `pairs` is the plan of this source and target (caller),
        // `row` is live and `new` was just pushed; the source values are
        // forgotten just below.
        unsafe { source.copy_row_into(row, target, new, pairs) };
        // SAFETY: every value of the source row was copied, or moved out by
        // the caller.
        let moved = unsafe { source.swap_remove_forget(row) };
        (new, moved)
    }

    /// A plan for moving rows from `from` to `to`.
    fn plan_move(&mut self, from: ArchetypeId, to: ArchetypeId) -> MoveIndex {
        self.moves
            .add(&self.archetypes[from.index()], &self.archetypes[to.index()])
    }

    /// All archetypes in id order.
    pub fn iter(&self) -> std::slice::Iter<'_, Archetype> {
        self.archetypes.iter()
    }

    /// All archetypes in id order, mutably (the set and the graph stay fixed).
    pub(crate) fn iter_mut(&mut self) -> std::slice::IterMut<'_, Archetype> {
        self.touch();
        self.archetypes.iter_mut()
    }

    /// Archetypes with ids from `start` on (new since a query last looked).
    pub fn since(&self, start: usize) -> &[Archetype] {
        &self.archetypes[start.min(self.archetypes.len())..]
    }

    /// The archetype with exactly this sorted component set, if it exists.
    pub fn find(&self, sorted: &[ComponentId]) -> Option<ArchetypeId> {
        self.by_components.get(sorted).copied()
    }

    /// The archetype with exactly this sorted set, created if needed.
    pub(crate) fn get_or_create(
        &mut self,
        sorted: &[ComponentId],
        components: &Components,
    ) -> ArchetypeId {
        debug_assert!(
            sorted.windows(2).all(|w| w[0] < w[1]),
            "set must be sorted and unique"
        );
        if let Some(id) = self.find(sorted) {
            return id;
        }
        self.touch();
        let id = ArchetypeId::from_index(self.archetypes.len());
        let set: Box<[ComponentId]> = sorted.into();
        self.archetypes.push(Archetype::new(
            id,
            set.clone(),
            components,
            self.chunk_bytes,
        ));
        self.by_components.insert(set, id);
        id
    }

    /// The edge for inserting bundle `bundle` (described by `info`) into
    /// archetype `from`, computed and cached on first use.
    #[inline]
    pub(crate) fn insert_edge(
        &mut self,
        from: ArchetypeId,
        bundle: BundleId,
        info: &BundleInfo,
        components: &Components,
    ) -> EdgeIndex {
        let edges = &self.get(from).insert_edges;
        match edges.binary_search_by_key(&bundle, |e| e.0) {
            Ok(i) => EdgeIndex(edges[i].1),
            Err(at) => self.insert_edge_slow(from, bundle, info, components, at),
        }
    }

    #[cold]
    fn insert_edge_slow(
        &mut self,
        from: ArchetypeId,
        bundle: BundleId,
        info: &BundleInfo,
        components: &Components,
        at: usize,
    ) -> EdgeIndex {
        let source = self.get(from).components();
        let mut set = source.to_vec();
        for &c in info.sorted() {
            if let Err(i) = set.binary_search(&c) {
                set.insert(i, c);
            }
        }
        let target = self.get_or_create(&set, components);
        let source = self.get(from);
        let target_arch = self.get(target);
        let fields = info
            .ids()
            .iter()
            .map(|&c| FieldTarget {
                column: target_arch.column_of(c).expect("target has every field"),
                replaces: source.has(c),
            })
            .collect();
        let moves = self.plan_move(from, target);
        let edge = InsertEdge::new(target, fields, moves);
        // The way back: removing the bundle from the target leads here, when
        // the insert added every field.
        if target != from && edge.fields.iter().all(|f| !f.replaces) {
            let back = RemoveEdge {
                target: Ok(from),
                fields: edge.fields.iter().map(|f| f.column).collect(),
                moves: self.plan_move(target, from),
            };
            self.cache_remove_edge(target, bundle, back);
        }
        self.cache_insert_edge(from, bundle, edge, at)
    }

    /// Records `edge` as `from`'s insert edge for `bundle`, at position `at`
    /// of its sorted list.
    fn cache_insert_edge(
        &mut self,
        from: ArchetypeId,
        bundle: BundleId,
        edge: InsertEdge,
        at: usize,
    ) -> EdgeIndex {
        let index = EdgeIndex(self.insert_edges.len() as u32);
        self.insert_edges.push(edge);
        self.get_mut(from)
            .insert_edges
            .insert(at, (bundle, index.0));
        index
    }

    /// Records `edge` as `from`'s remove edge for `bundle`, unless it has one.
    fn cache_remove_edge(&mut self, from: ArchetypeId, bundle: BundleId, edge: RemoveEdge) {
        if let Err(at) = self
            .get(from)
            .remove_edges
            .binary_search_by_key(&bundle, |e| e.0)
        {
            let index = self.remove_edges.len() as u32;
            self.remove_edges.push(edge);
            self.get_mut(from).remove_edges.insert(at, (bundle, index));
        }
    }

    /// The edge for removing bundle `bundle` (described by `info`) from
    /// archetype `from`, computed and cached on first use.
    #[inline]
    pub(crate) fn remove_edge(
        &mut self,
        from: ArchetypeId,
        bundle: BundleId,
        info: &BundleInfo,
        components: &Components,
    ) -> EdgeIndex {
        let edges = &self.get(from).remove_edges;
        match edges.binary_search_by_key(&bundle, |e| e.0) {
            Ok(i) => EdgeIndex(edges[i].1),
            Err(at) => self.remove_edge_slow(from, bundle, info, components, at),
        }
    }

    #[cold]
    fn remove_edge_slow(
        &mut self,
        from: ArchetypeId,
        bundle: BundleId,
        info: &BundleInfo,
        components: &Components,
        at: usize,
    ) -> EdgeIndex {
        let source = self.get(from);
        let edge = match info.ids().iter().find(|&&c| !source.has(c)) {
            Some(&missing) => RemoveEdge {
                target: Err(missing),
                fields: Box::new([]),
                moves: MoveIndex::NONE,
            },
            None => {
                let fields = info
                    .ids()
                    .iter()
                    .map(|&c| source.column_of(c).expect("checked above"))
                    .collect();
                let set: Vec<ComponentId> = source
                    .components()
                    .iter()
                    .copied()
                    .filter(|c| info.sorted().binary_search(c).is_err())
                    .collect();
                let target = self.get_or_create(&set, components);
                RemoveEdge {
                    target: Ok(target),
                    fields,
                    moves: self.plan_move(from, target),
                }
            }
        };
        // The way back: inserting the bundle into the target leads here.
        if let Ok(target) = edge.target {
            let moves = self.plan_move(target, from);
            let back = InsertEdge::new(
                from,
                edge.fields
                    .iter()
                    .map(|&column| FieldTarget {
                        column,
                        replaces: false,
                    })
                    .collect(),
                moves,
            );
            if let Err(back_at) = self
                .get(target)
                .insert_edges
                .binary_search_by_key(&bundle, |e| e.0)
            {
                self.cache_insert_edge(target, bundle, back, back_at);
            }
        }
        let index = EdgeIndex(self.remove_edges.len() as u32);
        self.remove_edges.push(edge);
        self.get_mut(from)
            .remove_edges
            .insert(at, (bundle, index.0));
        index
    }

    /// The cached target of inserting `bundle` into `from`, if the edge exists.
    pub fn cached_insert_target(&self, from: ArchetypeId, bundle: BundleId) -> Option<ArchetypeId> {
        let edges = &self.get(from).insert_edges;
        let i = edges.binary_search_by_key(&bundle, |e| e.0).ok()?;
        Some(self.insert_edges[edges[i].1 as usize].target)
    }

    /// The cached target of removing `bundle` from `from`, if the edge exists
    /// and the archetype has every field.
    pub fn cached_remove_target(&self, from: ArchetypeId, bundle: BundleId) -> Option<ArchetypeId> {
        let edges = &self.get(from).remove_edges;
        let i = edges.binary_search_by_key(&bundle, |e| e.0).ok()?;
        self.remove_edges[edges[i].1 as usize].target.ok()
    }

    /// Number of cached edges, insert and remove.
    pub fn edge_count(&self) -> usize {
        self.insert_edges.len() + self.remove_edges.len()
    }

    /// The edge for swapping bundle `old` for bundle `new` on archetype
    /// `from`, computed and cached on first use.
    pub(crate) fn exchange_edge(
        &mut self,
        from: ArchetypeId,
        (old, old_info): (BundleId, &BundleInfo),
        (new, new_info): (BundleId, &BundleInfo),
        components: &Components,
    ) -> &ExchangeEdge {
        let key = (from, old, new);
        if !self.exchange_edges.contains_key(&key) {
            let source = self.get(from);
            let edge = match old_info.ids().iter().find(|&&c| !source.has(c)) {
                Some(&missing) => ExchangeEdge {
                    target: Err(missing),
                    old_fields: Box::new([]),
                    new_fields: Box::new([]),
                    moves: MoveIndex::NONE,
                },
                None => {
                    let old_fields: Box<[ColumnIndex]> = old_info
                        .ids()
                        .iter()
                        .map(|&c| source.column_of(c).expect("checked above"))
                        .collect();
                    let mut set: Vec<ComponentId> = source
                        .components()
                        .iter()
                        .copied()
                        .filter(|c| old_info.sorted().binary_search(c).is_err())
                        .collect();
                    let kept = set.clone();
                    for &c in new_info.sorted() {
                        if let Err(i) = set.binary_search(&c) {
                            set.insert(i, c);
                        }
                    }
                    let target = self.get_or_create(&set, components);
                    let target_arch = self.get(target);
                    let new_fields = new_info
                        .ids()
                        .iter()
                        .map(|&c| FieldTarget {
                            column: target_arch.column_of(c).expect("target has every field"),
                            replaces: kept.binary_search(&c).is_ok(),
                        })
                        .collect();
                    ExchangeEdge {
                        target: Ok(target),
                        old_fields,
                        new_fields,
                        moves: self.plan_move(from, target),
                    }
                }
            };
            self.exchange_edges.insert(key, edge);
        }
        &self.exchange_edges[&key]
    }

    /// An insert edge by index.
    #[inline]
    pub(crate) fn insert_edge_at(&self, edge: EdgeIndex) -> &InsertEdge {
        &self.insert_edges[edge.0 as usize]
    }

    /// A remove edge by index.
    #[inline]
    pub(crate) fn remove_edge_at(&self, edge: EdgeIndex) -> &RemoveEdge {
        &self.remove_edges[edge.0 as usize]
    }

    /// Verifies the type index, every archetype and every edge. Panics on failure.
    pub fn check_invariants(&self) {
        assert!(
            self.archetypes[0].components().is_empty(),
            "archetype 0 is empty"
        );
        assert_eq!(
            self.by_components.len(),
            self.archetypes.len(),
            "type index size"
        );
        for (i, a) in self.archetypes.iter().enumerate() {
            assert_eq!(a.id().index(), i, "archetype id matches its slot");
            assert_eq!(
                self.find(a.components()),
                Some(a.id()),
                "type index finds {:?}",
                a.id()
            );
            a.check_invariants();
            for &(_, e) in &a.insert_edges {
                let edge = &self.insert_edges[e as usize];
                let target = self.get(edge.target);
                assert!(
                    a.components().iter().all(|&c| target.has(c)),
                    "insert edge {:?} -> {:?} keeps every component",
                    a.id(),
                    edge.target
                );
                for f in edge.fields.iter() {
                    let c = target.components()[f.column.index()];
                    assert_eq!(f.replaces, a.has(c), "insert edge replace flag");
                }
                let added = target.components().len() - a.components().len();
                assert!(added <= edge.fields.len(), "insert edge adds only fields");
                self.moves.check(edge.moves, a, target);
            }
            for &(_, e) in &a.remove_edges {
                let edge = &self.remove_edges[e as usize];
                match edge.target {
                    Err(missing) => assert!(!a.has(missing), "remove edge's missing field"),
                    Ok(t) => {
                        let target = self.get(t);
                        for &col in edge.fields.iter() {
                            let c = a.components()[col.index()];
                            assert!(!target.has(c), "remove edge drops every field");
                        }
                        assert_eq!(
                            target.components().len() + edge.fields.len(),
                            a.components().len(),
                            "remove edge drops only fields"
                        );
                        self.moves.check(edge.moves, a, target);
                    }
                }
            }
        }
        for (&(from, _, _), edge) in &self.exchange_edges {
            if let Ok(to) = edge.target {
                self.moves.check(edge.moves, self.get(from), self.get(to));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bundle::Bundles;

    #[test]
    fn edges_are_cached_per_archetype_and_bundle() {
        let mut registry = Components::default();
        let mut bundles = Bundles::default();
        let ab = bundles.of::<(u8, u16)>(&mut registry).unwrap();
        let b = bundles.of::<(u16,)>(&mut registry).unwrap();
        let (a_id, b_id) = (
            registry.id_of::<u8>().unwrap(),
            registry.id_of::<u16>().unwrap(),
        );
        let mut archetypes = Archetypes::new(1024, &registry);
        let empty = ArchetypeId::EMPTY;
        let e = archetypes.insert_edge(empty, ab, bundles.info(ab), &registry);
        let edge = archetypes.insert_edge_at(e).clone();
        assert_eq!(archetypes.get(edge.target).components(), &[a_id, b_id]);
        assert!(edge.fields.iter().all(|f| !f.replaces));
        // Cached: the same edge, no new archetype.
        assert_eq!(
            archetypes.insert_edge(empty, ab, bundles.info(ab), &registry),
            e
        );
        assert_eq!(archetypes.len(), 2);
        // Inserting (u16,) into {u8, u16} replaces and stays put.
        let again = archetypes.insert_edge(edge.target, b, bundles.info(b), &registry);
        let again = archetypes.insert_edge_at(again);
        assert_eq!(again.target, edge.target);
        assert!(again.fields[0].replaces);
        // Removing (u16,) leads to {u8}; removing it from {} reports the missing field.
        let r = archetypes.remove_edge(edge.target, b, bundles.info(b), &registry);
        let only_a = archetypes.remove_edge_at(r).target.unwrap();
        assert_eq!(archetypes.get(only_a).components(), &[a_id]);
        let r = archetypes.remove_edge(empty, b, bundles.info(b), &registry);
        assert_eq!(archetypes.remove_edge_at(r).target, Err(b_id));
        archetypes.check_invariants();
    }

    #[test]
    #[should_panic(expected = "two distinct archetypes")]
    fn pair_mut_refuses_the_same_archetype() {
        let registry = Components::default();
        let mut archetypes = Archetypes::new(1024, &registry);
        let _ = archetypes.pair_mut(ArchetypeId::EMPTY, ArchetypeId::EMPTY);
    }
}
