//! The archetype registry, the type index and the archetype graph (seed 003).
//!
//! Archetypes are found by their sorted component set through a type index
//! (a hash map from the set to the id). Each archetype also caches, per
//! component, the archetype one `add` or one `remove` away: the edges of the
//! archetype graph. After the first time, moving an entity across an edge needs
//! a binary search in a short sorted list and no hashing or sorting of sets.
//! Edges are recorded in both directions when an archetype is created, so the
//! way back is cached too.

use super::archetype::Archetype;
use super::ArchetypeId;
use crate::component::{ComponentId, Components};
use std::collections::HashMap;

/// Every archetype of a world, plus the type index and the graph.
///
/// # Invariants
/// - `archetypes[i].id() == ArchetypeId(i)`; archetype 0 has no components.
/// - `by_components` maps each archetype's component set to its id, and nothing else.
/// - An add edge `(c, t)` on `a` means `t`'s set is `a`'s set plus `c` (which `a`
///   lacks); a remove edge `(c, t)` means `t`'s set is `a`'s set minus `c`.
pub struct Archetypes {
    archetypes: Vec<Archetype>,
    by_components: HashMap<Box<[ComponentId]>, ArchetypeId>,
    chunk_bytes: usize,
}

impl std::fmt::Debug for Archetypes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.archetypes.iter()).finish()
    }
}

impl Archetypes {
    /// A registry holding only the empty archetype, with chunks of `chunk_bytes`.
    pub fn new(chunk_bytes: usize, components: &Components) -> Self {
        let mut archetypes = Archetypes {
            archetypes: Vec::new(),
            by_components: HashMap::new(),
            chunk_bytes,
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

    /// The archetype `id`, mutably.
    #[inline]
    pub fn get_mut(&mut self, id: ArchetypeId) -> &mut Archetype {
        &mut self.archetypes[id.index()]
    }

    /// Two distinct archetypes, mutably.
    ///
    /// # Panics
    /// If `a == b`.
    #[inline(always)]
    pub fn pair_mut(&mut self, a: ArchetypeId, b: ArchetypeId) -> (&mut Archetype, &mut Archetype) {
        assert_ne!(a, b, "pair_mut needs two distinct archetypes");
        if a < b {
            let (lo, hi) = self.archetypes.split_at_mut(b.index());
            (&mut lo[a.index()], &mut hi[0])
        } else {
            let (lo, hi) = self.archetypes.split_at_mut(a.index());
            (&mut hi[0], &mut lo[b.index()])
        }
    }

    /// All archetypes in id order.
    pub fn iter(&self) -> std::slice::Iter<'_, Archetype> {
        self.archetypes.iter()
    }

    /// All archetypes in id order, mutably (the set and the graph stay fixed).
    pub(crate) fn iter_mut(&mut self) -> std::slice::IterMut<'_, Archetype> {
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
    pub fn get_or_create(
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

    /// The archetype reached from `from` by adding `component`: `from` itself if it
    /// already has it. Cached as a graph edge.
    #[inline]
    pub fn insert_target(
        &mut self,
        from: ArchetypeId,
        component: ComponentId,
        components: &Components,
    ) -> ArchetypeId {
        if self.get(from).has(component) {
            return from;
        }
        self.insert_target_absent(from, component, components)
    }

    /// Like [`Archetypes::insert_target`] when the caller already knows `from`
    /// lacks `component`: one edge lookup.
    #[inline]
    pub fn insert_target_absent(
        &mut self,
        from: ArchetypeId,
        component: ComponentId,
        components: &Components,
    ) -> ArchetypeId {
        let a = self.get(from);
        debug_assert!(!a.has(component));
        match a.add_edges.binary_search_by_key(&component, |e| e.0) {
            Ok(i) => a.add_edges[i].1,
            Err(_) => self.insert_target_slow(from, component, components),
        }
    }

    #[cold]
    fn insert_target_slow(
        &mut self,
        from: ArchetypeId,
        component: ComponentId,
        components: &Components,
    ) -> ArchetypeId {
        let mut set = self.get(from).components().to_vec();
        let at = set.binary_search(&component).unwrap_err();
        set.insert(at, component);
        let to = self.get_or_create(&set, components);
        self.link(from, to, component);
        to
    }

    /// The archetype reached from `from` by removing `component`, or `None` if
    /// `from` lacks it. Cached as a graph edge.
    #[inline]
    pub fn remove_target(
        &mut self,
        from: ArchetypeId,
        component: ComponentId,
        components: &Components,
    ) -> Option<ArchetypeId> {
        if !self.get(from).has(component) {
            return None;
        }
        Some(self.remove_target_present(from, component, components))
    }

    /// Like [`Archetypes::remove_target`] when the caller already knows `from`
    /// has `component`: one edge lookup.
    #[inline]
    pub fn remove_target_present(
        &mut self,
        from: ArchetypeId,
        component: ComponentId,
        components: &Components,
    ) -> ArchetypeId {
        let a = self.get(from);
        debug_assert!(a.has(component));
        match a.remove_edges.binary_search_by_key(&component, |e| e.0) {
            Ok(i) => a.remove_edges[i].1,
            Err(_) => self.remove_target_slow(from, component, components),
        }
    }

    #[cold]
    fn remove_target_slow(
        &mut self,
        from: ArchetypeId,
        component: ComponentId,
        components: &Components,
    ) -> ArchetypeId {
        let set: Vec<_> = self
            .get(from)
            .components()
            .iter()
            .copied()
            .filter(|&c| c != component)
            .collect();
        let to = self.get_or_create(&set, components);
        self.link(to, from, component);
        to
    }

    /// Records the edge pair `smaller --add c--> larger` and `larger --remove c--> smaller`.
    fn link(&mut self, smaller: ArchetypeId, larger: ArchetypeId, component: ComponentId) {
        fn put(edges: &mut Vec<(ComponentId, ArchetypeId)>, c: ComponentId, to: ArchetypeId) {
            if let Err(i) = edges.binary_search_by_key(&c, |e| e.0) {
                edges.insert(i, (c, to));
            }
        }
        put(
            &mut self.archetypes[smaller.index()].add_edges,
            component,
            larger,
        );
        put(
            &mut self.archetypes[larger.index()].remove_edges,
            component,
            smaller,
        );
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
            for &(c, to) in &a.add_edges {
                let mut expect = a.components().to_vec();
                let at = expect
                    .binary_search(&c)
                    .expect_err("add edge for a component already present");
                expect.insert(at, c);
                assert_eq!(
                    self.get(to).components(),
                    &expect[..],
                    "add edge {:?} +{:?}",
                    a.id(),
                    c
                );
            }
            for &(c, to) in &a.remove_edges {
                let expect: Vec<_> = a.components().iter().copied().filter(|&x| x != c).collect();
                assert!(a.has(c), "remove edge for a missing component");
                assert_eq!(
                    self.get(to).components(),
                    &expect[..],
                    "remove edge {:?} -{:?}",
                    a.id(),
                    c
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edges_are_created_once_in_both_directions() {
        let mut registry = Components::default();
        let (a, b) = (registry.register::<u8>(), registry.register::<u16>());
        let mut archetypes = Archetypes::new(1024, &registry);
        let empty = ArchetypeId::EMPTY;
        let with_a = archetypes.insert_target(empty, a, &registry);
        assert_eq!(archetypes.get(with_a).components(), &[a]);
        assert_eq!(archetypes.get(empty).add_edges(), &[(a, with_a)]);
        assert_eq!(archetypes.get(with_a).remove_edges(), &[(a, empty)]);
        // Cached: same answer, nothing new.
        assert_eq!(archetypes.insert_target(empty, a, &registry), with_a);
        assert_eq!(archetypes.remove_target(with_a, a, &registry), Some(empty));
        assert_eq!(archetypes.len(), 2);
        // Adding a present component stays put; removing a missing one is None.
        assert_eq!(archetypes.insert_target(with_a, a, &registry), with_a);
        assert_eq!(archetypes.remove_target(with_a, b, &registry), None);
        // Two routes to {a, b} reach the same archetype.
        let ab = archetypes.insert_target(with_a, b, &registry);
        let with_b = archetypes.remove_target(ab, a, &registry).unwrap();
        assert_eq!(archetypes.insert_target(with_b, a, &registry), ab);
        assert_eq!(archetypes.find(&[a, b]), Some(ab));
        assert_eq!(archetypes.len(), 4);
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
