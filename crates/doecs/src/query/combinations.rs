//! Combinations of a query's items: every set of `K` distinct matching
//! entities, once each, as bevy's `iter_combinations` offers.
//!
//! Both forms list the matching entities once, in iteration order, then
//! walk index sets `i0 < i1 < … < iK-1` in lexicographic order, fetching
//! each set's items by entity. The read-only form is an iterator: its
//! items are shared reads, so any number may be alive. The mutable form
//! hands out one set at a time from `fetch_next(&mut self)`: a set
//! borrows the walker, and the `K` entities of a set are distinct, so no
//! two of its items alias (relation terms that read what the query writes
//! are refused first, as for every iterator form).

use super::data::QueryData;
use super::filter::QueryFilter;
use super::{Query, ReadOnlyItem};
use crate::entity::Entity;

/// The index sets `0 ≤ i0 < … < iK-1 < n`, in lexicographic order.
struct IndexSets<const K: usize> {
    next: Option<[usize; K]>,
    n: usize,
}

impl<const K: usize> IndexSets<K> {
    fn new(n: usize) -> Self {
        let first = std::array::from_fn(|i| i);
        IndexSets {
            next: (K > 0 && K <= n).then_some(first),
            n,
        }
    }

    fn advance(&mut self) -> Option<[usize; K]> {
        let current = self.next?;
        let mut following = current;
        // The rightmost index that can still move right.
        let mut i = K;
        self.next = loop {
            if i == 0 {
                break None;
            }
            i -= 1;
            if following[i] < self.n - (K - i) {
                following[i] += 1;
                for j in i + 1..K {
                    following[j] = following[j - 1] + 1;
                }
                break Some(following);
            }
        };
        Some(current)
    }
}

/// The matching entities of `query`, in iteration order.
fn entities_of<Q: QueryData, F: QueryFilter + 'static>(query: &Query<'_, Q, F>) -> Vec<Entity> {
    let mut out = Vec::new();
    // SAFETY: the query's constructor vouched for the filter's reads, and
    // its state is current (see `Query::matched`).
    unsafe {
        query
            .state_ref()
            .entities_matched(query.world, query.window, &mut out)
    };
    out
}

/// Every set of `K` distinct matching entities, read only. Made by
/// [`Query::iter_combinations`].
pub struct Combinations<'q, 'w, Q: QueryData, F: QueryFilter + 'static, const K: usize> {
    query: &'q Query<'w, Q, F>,
    entities: Vec<Entity>,
    sets: IndexSets<K>,
}

impl<'q, 'w, Q: QueryData, F: QueryFilter + 'static, const K: usize> Combinations<'q, 'w, Q, F, K> {
    pub(super) fn new(query: &'q Query<'w, Q, F>) -> Self {
        let entities = entities_of(query);
        let sets = IndexSets::new(entities.len());
        Combinations {
            query,
            entities,
            sets,
        }
    }
}

impl<'q, 'w, Q: QueryData, F: QueryFilter + 'static, const K: usize> Iterator
    for Combinations<'q, 'w, Q, F, K>
{
    type Item = [ReadOnlyItem<'q, Q>; K];

    fn next(&mut self) -> Option<Self::Item> {
        let set = self.sets.advance()?;
        let query = self.query;
        Some(set.map(|i| {
            query
                .get(self.entities[i])
                .expect("listed as matching, and the world cannot change meanwhile")
        }))
    }
}

/// Every set of `K` distinct matching entities with their mutable parts,
/// one at a time. Made by [`Query::iter_combinations_mut`].
pub struct CombinationsMut<'q, 'w, Q: QueryData, F: QueryFilter + 'static, const K: usize> {
    query: &'q mut Query<'w, Q, F>,
    entities: Vec<Entity>,
    sets: IndexSets<K>,
}

impl<'q, 'w, Q: QueryData, F: QueryFilter + 'static, const K: usize>
    CombinationsMut<'q, 'w, Q, F, K>
{
    pub(super) fn new(query: &'q mut Query<'w, Q, F>) -> Self {
        let entities = entities_of(query);
        let sets = IndexSets::new(entities.len());
        CombinationsMut {
            query,
            entities,
            sets,
        }
    }

    /// The next set, or `None` when every set has been handed out.
    #[allow(clippy::should_implement_trait)] // a lending walker, not an `Iterator`
    pub fn fetch_next(&mut self) -> Option<[Q::Item<'_>; K]> {
        let set = self.sets.advance()?;
        let query = &*self.query;
        let (world, window) = (query.world, query.window);
        let state = query.state_ref();
        Some(set.map(|i| {
            // SAFETY: the query's constructor vouched for its access for
            // `'w`; the set's entities are distinct, so its items are
            // distinct rows (and `new`'s caller refused relation terms
            // that read what the query writes); the items borrow `self`
            // mutably, so no other set is alive; the state is current.
            unsafe { state.get_matched::<Q>(world, window, self.entities[i]) }
                .expect("listed as matching, and the world cannot change meanwhile")
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::IndexSets;

    fn all<const K: usize>(n: usize) -> Vec<[usize; K]> {
        let mut sets = IndexSets::<K>::new(n);
        std::iter::from_fn(|| sets.advance()).collect()
    }

    #[test]
    fn index_sets_are_the_k_subsets_in_order() {
        assert_eq!(
            all::<2>(4),
            [[0, 1], [0, 2], [0, 3], [1, 2], [1, 3], [2, 3]]
        );
        assert_eq!(all::<3>(3), [[0, 1, 2]]);
        assert!(all::<3>(2).is_empty());
        assert!(all::<0>(5).is_empty());
        assert_eq!(all::<1>(3), [[0], [1], [2]]);
        // n choose k.
        assert_eq!(all::<3>(10).len(), 120);
    }
}
