//! Where each column of an archetype starts, by component id: the short
//! path of a typed random lookup (`world.get::<T>(entity)`).
//!
//! Design. A lookup by entity ends in one archetype and one row. Through the
//! column map it costs three dependent loads before the value's own: the
//! map's entry (the column index), the column's start and the column's item
//! size. A table indexed by component id that holds each column's start
//! directly needs one, and a typed caller knows the item size statically. On
//! a random lookup the chain of dependent loads, not the instruction count,
//! sets the time, so this table is what lets `get` approach a sparse set's
//! one indirection.
//!
//! The table covers ids up to the archetype's largest, like the column map,
//! but it is bounded more tightly ([`MAX_STARTS`] entries, 8 bytes each): an
//! archetype with a larger id keeps an empty table and its lookups take the
//! column map's path. The starts move whenever the columns reallocate, so the
//! archetype refreshes the table after every capacity change
//! ([`ColumnStarts::refresh`]); `check_invariants` compares it against the
//! columns.
//!
//! Aliasing rule: the table holds copies of the columns' start pointers and
//! never dereferences them. What may be read or written through a start is
//! governed by the archetype's borrow (shared for reads, exclusive for
//! writes), exactly as for the column itself.

use super::Column;
use crate::component::ComponentId;
use std::ptr::NonNull;

/// The most entries a table may have (8 bytes each).
const MAX_STARTS: usize = 256;

/// Each column's start, by component id. See the module docs.
///
/// # Invariants
/// For the archetype's sorted `components` and their `columns`: either the
/// table is empty (no components, or the largest id is at least
/// [`MAX_STARTS`]), or its length is the largest id + 1 and `starts[id]` is
/// `Some(columns[i].ptr())` exactly when `components[i] == id`.
#[derive(Debug)]
pub(crate) struct ColumnStarts {
    starts: Box<[Option<NonNull<u8>>]>,
}

// SAFETY: the pointers are copies of the archetype's own column starts and
// are never dereferenced here; access through them follows the archetype's
// borrow (module docs), as for `Column`, which is `Send + Sync` likewise.
unsafe impl Send for ColumnStarts {}
// SAFETY: as above; shared access only reads the copies.
unsafe impl Sync for ColumnStarts {}

impl ColumnStarts {
    /// The table of `components` (sorted, no duplicates) stored in `columns`.
    pub(crate) fn new(components: &[ComponentId], columns: &[Column]) -> Self {
        let len = components.last().map_or(0, |c| c.index() + 1);
        let len = if len > MAX_STARTS { 0 } else { len };
        let mut table = ColumnStarts {
            starts: vec![None; len].into_boxed_slice(),
        };
        table.refresh(components, columns);
        table
    }

    /// Copies the columns' starts again, after they reallocated.
    pub(crate) fn refresh(&mut self, components: &[ComponentId], columns: &[Column]) {
        if self.starts.is_empty() {
            return;
        }
        for (&c, column) in components.iter().zip(columns) {
            self.starts[c.index()] = Some(column.ptr());
        }
    }

    /// The start of `component`'s column, or `None` when the archetype lacks
    /// it or the table does not cover it (then ask the column map).
    #[inline(always)]
    pub(crate) fn start_of(&self, component: ComponentId) -> Option<NonNull<u8>> {
        self.starts.get(component.index()).copied().flatten()
    }

    /// Panics unless the table agrees with `components` and `columns`.
    pub(crate) fn check_invariants(&self, components: &[ComponentId], columns: &[Column]) {
        if self.starts.is_empty() {
            assert!(
                components.last().is_none_or(|c| c.index() >= MAX_STARTS),
                "an empty table only past its bound"
            );
            return;
        }
        let last = components.last().expect("a table has components");
        assert_eq!(
            self.starts.len(),
            last.index() + 1,
            "table ends at the largest id"
        );
        for (&c, column) in components.iter().zip(columns) {
            assert_eq!(self.starts[c.index()], Some(column.ptr()), "start of {c:?}");
        }
        let present = self.starts.iter().filter(|s| s.is_some()).count();
        assert_eq!(present, components.len(), "one start per component");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::alloc::Layout;

    fn columns(n: usize) -> Vec<Column> {
        (0..n)
            .map(|_| Column::new(Layout::new::<u64>(), None))
            .collect()
    }

    #[test]
    fn covers_small_ids_and_refreshes() {
        let components: Vec<ComponentId> = [1, 4, 9]
            .iter()
            .map(|&i| ComponentId::from_index(i))
            .collect();
        let mut cols = columns(3);
        let mut table = ColumnStarts::new(&components, &cols);
        table.check_invariants(&components, &cols);
        for (probe, expected) in [
            (0, None),
            (1, Some(0)),
            (4, Some(1)),
            (9, Some(2)),
            (10, None),
        ] {
            let start = table.start_of(ComponentId::from_index(probe));
            assert_eq!(
                start,
                expected.map(|i: usize| cols[i].ptr()),
                "probe {probe}"
            );
        }
        for column in &mut cols {
            // SAFETY: every column has capacity 0 and holds nothing.
            unsafe { column.resize(0, 8) };
        }
        table.refresh(&components, &cols);
        table.check_invariants(&components, &cols);
        assert_eq!(table.start_of(components[1]), Some(cols[1].ptr()));
        for column in &mut cols {
            // SAFETY: capacity 8, no live values.
            unsafe { column.resize(8, 0) };
        }
    }

    #[test]
    fn leaves_large_ids_to_the_column_map() {
        let components = vec![
            ComponentId::from_index(2),
            ComponentId::from_index(MAX_STARTS),
        ];
        let cols = columns(2);
        let table = ColumnStarts::new(&components, &cols);
        table.check_invariants(&components, &cols);
        assert_eq!(table.start_of(components[0]), None);
        assert_eq!(table.start_of(components[1]), None);
    }
}
