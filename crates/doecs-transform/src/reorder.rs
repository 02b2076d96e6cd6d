//! Moving instances in the arrays: swap-remove, the three-step swap of
//! Bitsquid's "Building a Data-Oriented Entity System" (part 3), and compaction
//! for locality.
//!
//! Every move goes through one primitive, `move_row(from, to)`: copy the whole
//! row, then repoint the four kinds of reference to it (the parent's
//! `first_child` or the previous sibling's `next_sibling`, the next sibling's
//! `prev_sibling`, every child's `parent`, and the entity map). It requires that
//! nothing refers to `to`. Swapping A and B is then the article's three steps
//! through the spare slot `[len]` (capacity is always `len + 1`):
//! `[len] <- [A]`, `[A] <- [B]`, `[B] <- [len]`; each step meets the
//! precondition, even when A and B are parent and child or siblings.
//! Compaction lays each region out breadth first (parents before children,
//! siblings side by side) by applying that permutation with swaps.

use crate::link::Link;
use crate::manager::TransformManager;
use doecs::Entity;

impl TransformManager {
    /// Moves row `from` to slot `to` and repoints every reference. Nothing may
    /// refer to `to` (it is free or its row was just moved away).
    pub(crate) fn move_row(&mut self, from: u32, to: u32) {
        let (f, t) = (from as usize, to as usize);
        let c = self.store.cols_mut();
        c.local[t] = c.local[f];
        c.world[t] = c.world[f];
        c.entity[t] = c.entity[f];
        c.parent[t] = c.parent[f];
        c.first_child[t] = c.first_child[f];
        c.next_sibling[t] = c.next_sibling[f];
        c.prev_sibling[t] = c.prev_sibling[f];
        c.flags[t] = c.flags[f];
        c.idle[t] = c.idle[f];
        let me = Link::some(to);
        match c.prev_sibling[t].get() {
            Some(q) => c.next_sibling[q as usize] = me,
            None => {
                if let Some(p) = c.parent[t].get() {
                    c.first_child[p as usize] = me;
                }
            }
        }
        if let Some(n) = c.next_sibling[t].get() {
            c.prev_sibling[n as usize] = me;
        }
        let mut ch = c.first_child[t];
        while let Some(k) = ch.get() {
            c.parent[k as usize] = me;
            ch = c.next_sibling[k as usize];
        }
        let e = Entity::from_bits(c.entity[t]);
        self.map[e.index() as usize] = to;
    }

    /// Swaps rows `a` and `b` with the three-step swap through the spare slot.
    pub(crate) fn swap_rows(&mut self, a: u32, b: u32) {
        if a == b {
            return;
        }
        let spare = self.len;
        self.move_row(a, spare);
        self.move_row(b, a);
        self.move_row(spare, b);
    }

    /// Removes the detached, unmapped row `i`, keeping the rows dense (and, in
    /// deferred mode, the clean region and the dirty partition apart).
    pub(crate) fn remove_row(&mut self, i: u32) {
        let mut hole = i;
        if self.deferred && i < self.first_dirty {
            let last_clean = self.first_dirty - 1;
            if i != last_clean {
                self.move_row(last_clean, i);
                self.sorted = false;
            }
            self.first_dirty -= 1;
            hole = self.first_dirty;
        }
        let last = self.len - 1;
        if hole != last {
            self.move_row(last, hole);
            self.sorted = false;
            self.partition_ordered = false;
        }
        self.len -= 1;
        if !self.deferred {
            self.first_dirty = self.len;
        }
    }

    /// Breadth-first order of the nodes in `start..end`: roots are nodes whose
    /// parent is outside the region (in index order); only children inside the
    /// region are followed.
    pub(crate) fn bfs_order(&self, start: u32, end: u32) -> Vec<u32> {
        let c = self.store.cols();
        let inside = |x: u32| x >= start && x < end;
        let mut order: Vec<u32> = (start..end)
            .filter(|&i| !c.parent[i as usize].get().is_some_and(inside))
            .collect();
        let mut head = 0;
        while head < order.len() {
            let mut ch = c.first_child[order[head] as usize];
            while let Some(k) = ch.get() {
                if inside(k) {
                    order.push(k);
                }
                ch = c.next_sibling[k as usize];
            }
            head += 1;
        }
        order
    }

    /// Rearranges `start..start + order.len()` so that slot `start + j` holds the
    /// node that was at `order[j]` (a permutation of that range), by swaps.
    pub(crate) fn permute_region(&mut self, start: u32, order: &[u32]) {
        let m = order.len();
        // pos[k]: where the node first at start+k is now; who[j]: which node is at start+j.
        let mut pos: Vec<u32> = (start..start + m as u32).collect();
        let mut who: Vec<u32> = (0..m as u32).collect();
        for (j, &o) in order.iter().enumerate() {
            let o = (o - start) as usize;
            let cur = pos[o];
            let target = start + j as u32;
            if cur != target {
                let displaced = who[j];
                self.swap_rows(cur, target);
                pos[displaced as usize] = cur;
                who[(cur - start) as usize] = displaced;
                pos[o] = target;
                who[j] = o as u32;
            }
        }
    }

    /// Reorders the instances for locality: parents before children and
    /// siblings side by side (breadth first). Every link and the entity map stay
    /// correct. **Instance handles are invalidated** in the sense that their slot
    /// index may now hold another node; they still resolve correctly through the
    /// entity map (see [`crate::Instance`]), and [`lookup`](Self::lookup) gives
    /// fresh ones. In deferred mode the clean region and the dirty partition are
    /// compacted separately, so the partition survives.
    pub fn compact(&mut self) {
        if self.deferred {
            // Restore the partition's closure first (nodes linked under dirty
            // parents join it), so region-wise BFS is parent-first globally.
            self.enter_pending();
        }
        let (fd, len) = (self.first_dirty.min(self.len), self.len);
        let regions = if self.deferred {
            [(0, fd), (fd, len)]
        } else {
            [(0, len), (len, len)]
        };
        for (s, e) in regions {
            if e > s {
                let order = self.bfs_order(s, e);
                self.permute_region(s, &order);
            }
        }
        let c = self.store.cols();
        self.sorted = (0..len).all(|i| c.parent[i as usize].get().is_none_or(|p| p < i));
        self.partition_ordered = true;
    }
}

#[cfg(test)]
mod tests {
    use crate::TransformManager;
    use doecs::Entity;
    use glam::{Affine3A, Vec3};

    fn e(i: u32) -> Entity {
        Entity::from_parts(i, 0)
    }

    #[test]
    fn three_step_swap_of_related_rows_keeps_links() {
        let mut tm = TransformManager::new();
        let h: Vec<_> = (0..4)
            .map(|i| {
                tm.create(e(i), Affine3A::from_translation(Vec3::X))
                    .unwrap()
            })
            .collect();
        tm.link(h[1], h[0]).unwrap();
        tm.link(h[2], h[0]).unwrap();
        tm.link(h[3], h[1]).unwrap();
        for (a, b) in [(0, 1), (1, 2), (0, 3), (2, 3), (3, 0)] {
            tm.swap_rows(a, b);
            tm.sorted = false;
            tm.check_invariants();
        }
        assert_eq!(tm.world(h[3]).unwrap().translation.x, 3.0);
        assert_eq!(tm.parent(h[3]).unwrap().entity(), e(1));
    }

    #[test]
    fn compact_puts_parents_first_and_siblings_together() {
        let mut tm = TransformManager::new();
        let h: Vec<_> = (0..6)
            .map(|i| tm.create(e(i), Affine3A::IDENTITY).unwrap())
            .collect();
        // 5 -> 4 -> {3, 1}; 2 -> 0
        tm.link(h[4], h[5]).unwrap();
        tm.link(h[3], h[4]).unwrap();
        tm.link(h[1], h[4]).unwrap();
        tm.link(h[0], h[2]).unwrap();
        tm.compact();
        tm.check_invariants(); // sorted: parents before children
        let kids: Vec<u32> = tm
            .children(h[4])
            .map(|k| tm.lookup(k.entity()).unwrap().index())
            .collect();
        assert_eq!(kids[0].abs_diff(kids[1]), 1, "siblings adjacent");
    }
}
