//! `check_invariants`: a full O(n) audit of the storage invariants documented on
//! [`TransformManager`], for tests and debugging. It panics with a message
//! naming the first broken invariant.

use crate::manager::{TransformManager, NO_INSTANCE, PENDING};
use doecs::Entity;

impl TransformManager {
    /// Verifies every storage invariant: capacity (spare slot), the entity map
    /// in both directions, every link and its back link, child-list lengths,
    /// acyclicity, parent-before-child where promised (sorted array, ordered
    /// dirty partition) and the closure of the dirty partition. O(n).
    ///
    /// # Panics
    /// If an invariant does not hold (a bug in this crate).
    pub fn check_invariants(&self) {
        let n = self.len as usize;
        assert!(
            self.store.capacity() > n,
            "no spare slot: cap {} len {}",
            self.store.capacity(),
            n
        );
        let c = self.store.cols();
        let ok = |l: crate::link::Link| l.get().is_none_or(|x| (x as usize) < n);
        // Entity map.
        let mut mapped = 0;
        for (idx, &i) in self.map.iter().enumerate() {
            if i != NO_INSTANCE {
                mapped += 1;
                assert!((i as usize) < n, "map[{idx}] = {i} out of range");
                assert_eq!(
                    Entity::from_bits(c.entity[i as usize]).index() as usize,
                    idx,
                    "map[{idx}] wrong"
                );
            }
        }
        assert_eq!(mapped, n, "map has {mapped} entries for {n} instances");
        let mut with_parent = 0usize;
        let mut listed = 0usize;
        for i in 0..n {
            let e = Entity::from_bits(c.entity[i]);
            assert_eq!(
                self.map.get(e.index() as usize),
                Some(&(i as u32)),
                "instance {i} not mapped"
            );
            for l in [
                c.parent[i],
                c.first_child[i],
                c.next_sibling[i],
                c.prev_sibling[i],
            ] {
                assert!(ok(l), "instance {i} has a link out of range");
            }
            match c.parent[i].get() {
                None => {
                    assert!(
                        !c.prev_sibling[i].is_some() && !c.next_sibling[i].is_some(),
                        "root {i} has siblings"
                    );
                }
                Some(p) => {
                    with_parent += 1;
                    assert_ne!(p as usize, i, "instance {i} is its own parent");
                    match c.prev_sibling[i].get() {
                        Some(q) => {
                            assert_eq!(
                                c.next_sibling[q as usize].get(),
                                Some(i as u32),
                                "prev/next mismatch at {i}"
                            );
                            assert_eq!(
                                c.parent[q as usize], c.parent[i],
                                "sibling {q} of {i} has another parent"
                            );
                        }
                        None => assert_eq!(
                            c.first_child[p as usize].get(),
                            Some(i as u32),
                            "{i} is not first child"
                        ),
                    }
                    if self.sorted {
                        assert!(
                            (p as usize) < i,
                            "sorted array but parent {p} after child {i}"
                        );
                    }
                }
            }
            if let Some(s) = c.next_sibling[i].get() {
                assert_eq!(
                    c.prev_sibling[s as usize].get(),
                    Some(i as u32),
                    "next/prev mismatch at {i}"
                );
            }
            if let Some(f) = c.first_child[i].get() {
                assert_eq!(
                    c.parent[f as usize].get(),
                    Some(i as u32),
                    "first child {f} of {i} has another parent"
                );
                assert!(
                    !c.prev_sibling[f as usize].is_some(),
                    "first child {f} has a previous sibling"
                );
            }
            let mut ch = c.first_child[i];
            let mut count = 0usize;
            while let Some(k) = ch.get() {
                count += 1;
                assert!(count <= n, "child list of {i} loops");
                ch = c.next_sibling[k as usize];
            }
            listed += count;
        }
        assert_eq!(
            listed, with_parent,
            "child lists do not cover every linked node"
        );
        // Acyclic: colour walk with memo (0 new, 1 on path, 2 done), O(n).
        let mut state = vec![0u8; n];
        let mut path = Vec::new();
        for s in 0..n {
            let mut x = s;
            while state[x] == 0 {
                state[x] = 1;
                path.push(x);
                match c.parent[x].get() {
                    Some(p) => x = p as usize,
                    None => break,
                }
            }
            assert!(
                state[x] != 1 || c.parent[x].get().is_none(),
                "cycle through instance {x}"
            );
            for &y in &path {
                state[y] = 2;
            }
            path.clear();
        }
        if self.deferred {
            let fd = self.first_dirty as usize;
            assert!(fd <= n, "first_dirty {fd} beyond len {n}");
            for i in fd..n {
                let mut ch = c.first_child[i];
                while let Some(k) = ch.get() {
                    assert!(
                        k as usize >= fd || c.flags[k as usize] & PENDING != 0,
                        "clean child {k} of dirty {i}"
                    );
                    ch = c.next_sibling[k as usize];
                }
                if self.partition_ordered {
                    if let Some(p) = c.parent[i].get() {
                        assert!(
                            (p as usize) < fd || (p as usize) < i,
                            "partition: parent {p} after child {i}"
                        );
                    }
                }
            }
        } else {
            assert!(self.pending.is_empty(), "pending nodes in immediate mode");
        }
    }
}
