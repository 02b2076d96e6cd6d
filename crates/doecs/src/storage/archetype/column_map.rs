//! Which column of an archetype holds a component: the lookup behind every
//! `get`, `insert` and `remove` of one entity.
//!
//! Design. An archetype's components are a short sorted list of dense
//! [`ComponentId`]s. A direct table indexed by id, holding each component's
//! column, answers in one load and one compare, where a scan of the sorted
//! list costs a loop (bevy_ecs keeps a sparse set per archetype for the same
//! reason). The table covers ids up to the archetype's largest, so its size
//! is bounded by that id, not by the number of components in the world; an
//! archetype whose ids are too spread out for the table to stay small
//! ([`MAX_TABLE`] entries) binary-searches its sorted list instead.
//!
//! Aliasing rule: none to state. Plain safe data, built once with its
//! archetype and never changed.

use crate::component::ComponentId;
use std::num::NonZeroU16;

/// The most entries a direct table may have (2 bytes each).
const MAX_TABLE: usize = 1024;

/// From component id to column index, for one archetype's sorted components.
///
/// # Invariants
/// - `Table(t)`: `t[id]` is `Some(i + 1)` exactly when `components[i] == id`,
///   and `t.len()` is the largest id + 1 (0 for no components).
/// - `Sorted`: the archetype's components hold more than `MAX_TABLE` ids'
///   worth of range, or more than `u16::MAX - 1` columns.
#[derive(Clone, Debug)]
pub(crate) enum ColumnMap {
    Table(Box<[Option<NonZeroU16>]>),
    Sorted,
}

impl ColumnMap {
    /// The map of `components`, which are sorted with no duplicates.
    pub(crate) fn new(components: &[ComponentId]) -> Self {
        let len = components.last().map_or(0, |c| c.index() + 1);
        if len > MAX_TABLE || components.len() >= u16::MAX as usize {
            return ColumnMap::Sorted;
        }
        let mut table = vec![None; len].into_boxed_slice();
        for (i, c) in components.iter().enumerate() {
            table[c.index()] = NonZeroU16::new(i as u16 + 1);
        }
        ColumnMap::Table(table)
    }

    /// The column of `component` among `components` (the list this map was
    /// built from), if the archetype has it.
    #[inline]
    pub(crate) fn column_of(
        &self,
        components: &[ComponentId],
        component: ComponentId,
    ) -> Option<usize> {
        match self {
            ColumnMap::Table(table) => table
                .get(component.index())
                .copied()
                .flatten()
                .map(|i| i.get() as usize - 1),
            ColumnMap::Sorted => components.binary_search(&component).ok(),
        }
    }

    /// Panics unless the map agrees with `components`.
    pub(crate) fn check_invariants(&self, components: &[ComponentId]) {
        for (i, &c) in components.iter().enumerate() {
            assert_eq!(self.column_of(components, c), Some(i), "column of {c:?}");
        }
        if let ColumnMap::Table(table) = self {
            let present = table.iter().filter(|e| e.is_some()).count();
            assert_eq!(present, components.len(), "one entry per component");
            assert_eq!(
                table.len(),
                components.last().map_or(0, |c| c.index() + 1),
                "table ends at the largest id"
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(raw: &[usize]) -> Vec<ComponentId> {
        raw.iter().map(|&i| ComponentId::from_index(i)).collect()
    }

    #[test]
    fn finds_exactly_the_components_in_both_forms() {
        for raw in [
            vec![],
            vec![0],
            vec![3],
            vec![0, 2, 4, 9],
            vec![1, 2, 3, 1023],
            vec![5, 1024],      // past the table's bound: sorted
            vec![0, 7, 40_000], // far apart: sorted
        ] {
            let components = ids(&raw);
            let map = ColumnMap::new(&components);
            assert_eq!(
                matches!(map, ColumnMap::Sorted),
                raw.last().is_some_and(|&m| m >= MAX_TABLE),
                "{raw:?}"
            );
            map.check_invariants(&components);
            for probe in 0..1100 {
                let expected = raw.iter().position(|&r| r == probe);
                assert_eq!(
                    map.column_of(&components, ComponentId::from_index(probe)),
                    expected,
                    "{raw:?} probing {probe}"
                );
            }
            let far = ComponentId::from_index(1 << 20);
            assert_eq!(map.column_of(&components, far), None);
        }
    }
}
