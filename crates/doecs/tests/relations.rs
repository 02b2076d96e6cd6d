//! Relationship pairs and the `ChildOf` hierarchy: adding, replacing and
//! removing pairs, refusals that leave the world unchanged, cleanup on
//! every despawn path, breadth-first walks, drop counting through a
//! panicking subtree, and a model test against a naive map of sets. Then
//! the relation terms of queries (`Up`, `Pairs`, `for_each_source`): what
//! they match, their aliasing rules (a child writing what it reads from its
//! parent, in the same archetype: this file runs under Miri), and the
//! iterator forms they refuse. Schedules (which start thread pools) are in
//! `relation_systems.rs`.

use doecs::{
    AliasError, ChildOf, Cleanup, CommandBuffer, Entity, EntityError, Pairs, QueryState, Relation,
    RelationError, Up, World,
};
use proptest::prelude::*;
use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::panic::{catch_unwind, AssertUnwindSafe};

/// A data-carrying, non-exclusive relation whose pairs just go when the
/// target dies.
#[derive(Clone, Debug, PartialEq)]
struct Likes(u32);
impl Relation for Likes {}

/// A tag relation whose sources die with their target.
#[derive(Clone, Debug, PartialEq)]
struct OwnedBy;
impl Relation for OwnedBy {
    const ON_TARGET_DESPAWN: Cleanup = Cleanup::DespawnSource;
}

#[derive(Debug, PartialEq, Clone, Copy)]
struct Name(u32);

fn spawn_n(world: &mut World, n: u32) -> Vec<Entity> {
    (0..n).map(|i| world.spawn((Name(i),))).collect()
}

#[test]
fn pairs_carry_data_and_a_source_may_have_several_targets() {
    let mut w = World::new();
    let e = spawn_n(&mut w, 4);
    assert_eq!(w.add_pair(e[0], e[1], Likes(1)), Ok(None));
    assert_eq!(w.add_pair(e[0], e[2], Likes(2)), Ok(None));
    assert_eq!(w.add_pair(e[3], e[2], Likes(3)), Ok(None));
    // Adding an existing pair replaces its value.
    assert_eq!(w.add_pair(e[0], e[1], Likes(10)), Ok(Some(Likes(1))));
    let targets: Vec<(Entity, u32)> = w.targets::<Likes>(e[0]).map(|(t, l)| (t, l.0)).collect();
    assert_eq!(targets, vec![(e[1], 10), (e[2], 2)]);
    assert_eq!(w.sources::<Likes>(e[2]).collect::<Vec<_>>(), [e[0], e[3]]);
    w.pair_mut::<Likes>(e[3], e[2]).unwrap().0 += 1;
    assert_eq!(w.pair::<Likes>(e[3], e[2]), Some(&Likes(4)));
    assert_eq!(w.remove_pair::<Likes>(e[0], e[2]), Ok(Likes(2)));
    assert_eq!(w.sources::<Likes>(e[2]).collect::<Vec<_>>(), [e[3]]);
    assert!(!w.has_pair::<Likes>(e[0], e[2]));
    assert_eq!(w.relations().len(), 2);
    // Pairs do not move rows: every entity stays in its archetype.
    assert_eq!(w.query_mut::<&Name>().iter().count(), 4);
    w.check_invariants();
}

#[test]
fn an_exclusive_relation_keeps_one_target() {
    let mut w = World::new();
    let e = spawn_n(&mut w, 3);
    w.set_parent(e[2], e[0]).unwrap();
    w.set_parent(e[2], e[1]).unwrap();
    assert_eq!(w.parent(e[2]), Some(e[1]));
    assert_eq!(w.children(e[0]).next(), None);
    assert_eq!(w.children(e[1]).collect::<Vec<_>>(), [e[2]]);
    assert_eq!(w.remove_parent(e[2]), Some(e[1]));
    assert_eq!(w.parent(e[2]), None);
    w.check_invariants();
}

#[test]
fn refusals_are_typed_and_change_nothing() {
    let mut w = World::new();
    let e = spawn_n(&mut w, 4);
    w.set_parent(e[1], e[0]).unwrap();
    w.set_parent(e[2], e[1]).unwrap();
    let before = w.hierarchy_breadth_first();
    // A cycle through a descendant, and a self-loop.
    assert!(matches!(
        w.set_parent(e[0], e[2]),
        Err(RelationError::Cycle { subject, target, .. }) if subject == e[0] && target == e[2]
    ));
    assert!(matches!(
        w.set_parent(e[3], e[3]),
        Err(RelationError::Cycle { .. })
    ));
    // A dead entity on either side.
    w.despawn(e[3]).unwrap();
    assert_eq!(
        w.set_parent(e[3], e[0]),
        Err(RelationError::NoSuchEntity(e[3]))
    );
    assert_eq!(
        w.add_pair(e[0], e[3], Likes(0)),
        Err(RelationError::NoSuchEntity(e[3]))
    );
    assert!(matches!(
        w.remove_pair::<Likes>(e[0], e[1]),
        Err(RelationError::NoSuchPair { .. })
    ));
    assert_eq!(w.hierarchy_breadth_first(), before);
    assert_eq!(w.parent(e[0]), None);
    // Errors read well.
    let msg = w.set_parent(e[0], e[2]).unwrap_err().to_string();
    assert!(msg.contains("cycle"), "{msg}");
    w.check_invariants();
}

/// A three-level tree: root, 3 children, 2 grandchildren each.
fn tree(w: &mut World) -> (Entity, Vec<Entity>, Vec<Entity>) {
    let root = w.spawn((Name(0),));
    let mut kids = Vec::new();
    let mut grandkids = Vec::new();
    for i in 0..3 {
        let k = w.spawn((Name(10 + i),));
        // `set_parent` is `add_pair` with `ChildOf`.
        w.add_pair(k, root, ChildOf).unwrap();
        kids.push(k);
        for j in 0..2 {
            let g = w.spawn((Name(100 + 10 * i + j),));
            w.set_parent(g, k).unwrap();
            grandkids.push(g);
        }
    }
    (root, kids, grandkids)
}

#[test]
fn walks_are_breadth_first_parents_before_children() {
    let mut w = World::new();
    let (root, kids, grandkids) = tree(&mut w);
    let mut expected = vec![root];
    expected.extend(&kids);
    expected.extend(&grandkids);
    assert_eq!(w.descendants(root), expected);
    assert_eq!(w.hierarchy_breadth_first(), expected);
    assert_eq!(
        w.descendants(kids[1]),
        vec![kids[1], grandkids[2], grandkids[3]]
    );
}

/// Despawns `root` by one path.
fn despawn_by(w: &mut World, root: Entity, path: usize) {
    match path {
        0 => w.despawn(root).unwrap(),
        1 => assert_eq!(w.despawn_batch(&[root]), 1),
        2 => assert_eq!(w.take::<(Name,)>(root), Ok((Name(0),))),
        3 => {
            let mut buffer = CommandBuffer::new();
            buffer.despawn(root);
            let report = w.apply(&mut buffer);
            assert!(report.failed.is_empty(), "{report:?}");
        }
        _ => unreachable!(),
    }
}

#[test]
fn despawning_a_parent_despawns_its_subtree_on_every_path() {
    for path in 0..4 {
        let mut w = World::new();
        let (root, kids, grandkids) = tree(&mut w);
        let bystander = w.spawn((Name(9),));
        let sword = w.spawn((Name(8),));
        w.add_pair(bystander, grandkids[0], Likes(5)).unwrap();
        w.add_pair(grandkids[1], bystander, Likes(6)).unwrap();
        w.add_pair(sword, grandkids[5], OwnedBy).unwrap();
        despawn_by(&mut w, root, path);
        for e in std::iter::once(root)
            .chain(kids.clone())
            .chain(grandkids.clone())
        {
            assert!(!w.alive(e), "path {path}: {e:?} outlived its root");
        }
        assert!(
            !w.alive(sword),
            "path {path}: owned by a despawned grandchild"
        );
        assert!(w.alive(bystander), "path {path}: only lost its pairs");
        assert_eq!(w.targets::<Likes>(bystander).count(), 0);
        assert_eq!(w.sources::<Likes>(bystander).next(), None);
        assert!(w.relations().is_empty(), "path {path}");
        assert_eq!(w.len(), 1);
        w.check_invariants();
    }
}

#[test]
fn detaching_keeps_a_child_alive() {
    let mut w = World::new();
    let (root, kids, grandkids) = tree(&mut w);
    w.remove_parent(kids[0]);
    w.despawn(root).unwrap();
    assert!(w.alive(kids[0]));
    assert!(w.alive(grandkids[0]) && w.alive(grandkids[1]));
    assert!(!w.alive(kids[1]));
    assert_eq!(
        w.children(kids[0]).collect::<Vec<_>>(),
        [grandkids[0], grandkids[1]]
    );
    w.check_invariants();
}

thread_local! {
    static DROPPED: RefCell<Vec<u32>> = const { RefCell::new(Vec::new()) };
}

/// Records its drop; panics on drop if `panics`.
struct Counted {
    id: u32,
    panics: bool,
}

impl Drop for Counted {
    fn drop(&mut self) {
        DROPPED.with(|d| d.borrow_mut().push(self.id));
        if self.panics {
            panic!("Counted {} panics on drop", self.id);
        }
    }
}

#[test]
fn a_panicking_drop_halfway_through_a_subtree_still_drops_every_value_once() {
    DROPPED.with(|d| d.borrow_mut().clear());
    let mut w = World::new();
    let root = w.spawn((Counted {
        id: 0,
        panics: false,
    },));
    let mut all = vec![root];
    let mut id = 1;
    let mut level = vec![root];
    for _ in 0..3 {
        let mut next = Vec::new();
        for &p in &level {
            for _ in 0..2 {
                // One entity of the middle level panics.
                let e = w.spawn((Counted {
                    id,
                    panics: id == 4,
                },));
                w.set_parent(e, p).unwrap();
                id += 1;
                next.push(e);
                all.push(e);
            }
        }
        level = next;
    }
    let survivor = w.spawn((Counted {
        id: 999,
        panics: false,
    },));
    let result = catch_unwind(AssertUnwindSafe(|| w.despawn(root)));
    assert!(result.is_err(), "the drop's panic goes on");
    for &e in &all {
        assert!(!w.alive(e), "{e:?} survived");
    }
    assert!(w.alive(survivor));
    let mut dropped = DROPPED.with(|d| d.borrow().clone());
    dropped.sort_unstable();
    assert_eq!(
        dropped,
        (0..id).collect::<Vec<_>>(),
        "every value dropped exactly once"
    );
    assert!(w.relations().is_empty());
    w.check_invariants();
    drop(w);
    let dropped = DROPPED.with(|d| d.borrow().clone());
    assert_eq!(dropped.iter().filter(|&&i| i == 999).count(), 1);
}

/// One entity's parent and `Likes` pairs.
type PairsOf = (Entity, Option<Entity>, Vec<(Entity, u32)>);

/// Every pair of the world, with `Likes` values, in a comparable form.
fn pairs_of_world(w: &World, es: &[Entity]) -> Vec<PairsOf> {
    es.iter()
        .filter(|&&e| w.alive(e))
        .map(|&e| {
            let likes = w.targets::<Likes>(e).map(|(t, l)| (t, l.0)).collect();
            (e, w.parent(e), likes)
        })
        .collect()
}

#[test]
fn snapshots_carry_pairs_and_restore_them_exactly() {
    let mut w = World::new();
    w.snapshot_by_copy::<Name>();
    let e = spawn_n(&mut w, 6);
    let mut snapshot = doecs::Snapshot::new();
    // A snapshot without pairs restores to a moment without them.
    w.snapshot_into(&mut snapshot).unwrap();
    w.set_parent(e[1], e[0]).unwrap();
    w.restore(&snapshot).unwrap();
    assert!(w.relations().is_empty());
    assert_eq!(w.parent(e[1]), None);
    w.check_invariants();

    w.set_parent(e[1], e[0]).unwrap();
    w.set_parent(e[2], e[1]).unwrap();
    w.add_pair(e[3], e[0], Likes(7)).unwrap();
    w.add_pair(e[3], e[2], Likes(8)).unwrap();
    w.add_pair(e[4], e[3], OwnedBy).unwrap();
    let before = pairs_of_world(&w, &e);
    w.snapshot_into(&mut snapshot).unwrap();
    // Everything changes: a subtree and an owner go, pairs come and go.
    w.despawn(e[0]).unwrap();
    w.despawn(e[3]).unwrap();
    w.add_pair(e[5], e[5], Likes(1)).unwrap();
    assert!(!w.alive(e[4]), "owned by e[3]");
    for _ in 0..2 {
        // Restoring the same snapshot twice reuses the tables' memory.
        w.restore(&snapshot).unwrap();
        assert_eq!(pairs_of_world(&w, &e), before);
        assert_eq!(w.children(e[0]).collect::<Vec<_>>(), [e[1]]);
        assert_eq!(w.sources::<OwnedBy>(e[3]).collect::<Vec<_>>(), [e[4]]);
        w.check_invariants();
        w.remove_parent(e[2]);
    }
    // The restored hierarchy still cleans up after itself.
    w.restore(&snapshot).unwrap();
    w.despawn(e[0]).unwrap();
    assert!(!w.alive(e[1]) && !w.alive(e[2]));
    w.check_invariants();
}

// ---------------------------------------------------------------------------
// Model test: random spawns, pairs, reparenting and despawns against a naive
// model (maps of sets), checked after every step.

#[derive(Clone, Debug)]
enum Op {
    Spawn,
    Like(usize, usize, u32),
    Unlike(usize, usize),
    Own(usize, usize),
    SetParent(usize, usize),
    /// `set_parents_in_batch` over picked entities, each with an optional
    /// parent index (taken modulo the batch's length).
    ParentBatch(Vec<(usize, Option<usize>)>),
    Detach(usize),
    Despawn(usize),
    Snapshot,
    Restore,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        2 => Just(Op::Spawn),
        3 => (0..64usize, 0..64usize, any::<u32>()).prop_map(|(a, b, v)| Op::Like(a, b, v)),
        1 => (0..64usize, 0..64usize).prop_map(|(a, b)| Op::Unlike(a, b)),
        1 => (0..64usize, 0..64usize).prop_map(|(a, b)| Op::Own(a, b)),
        4 => (0..64usize, 0..64usize).prop_map(|(a, b)| Op::SetParent(a, b)),
        2 => prop::collection::vec((0..64usize, prop::option::of(0..64usize)), 1..8)
            .prop_map(Op::ParentBatch),
        1 => (0..64usize).prop_map(Op::Detach),
        2 => (0..64usize).prop_map(Op::Despawn),
        1 => Just(Op::Snapshot),
        1 => Just(Op::Restore),
    ]
}

#[derive(Clone, Default, Debug)]
struct Model {
    alive: BTreeSet<Entity>,
    likes: BTreeMap<(Entity, Entity), u32>,
    owned: BTreeSet<(Entity, Entity)>,
    parent: BTreeMap<Entity, Entity>,
}

impl Model {
    fn reaches_by_parent(&self, from: Entity, to: Entity) -> bool {
        let mut at = Some(from);
        while let Some(e) = at {
            if e == to {
                return true;
            }
            at = self.parent.get(&e).copied();
        }
        false
    }

    fn despawn(&mut self, root: Entity) {
        let mut doomed = vec![root];
        let mut seen: BTreeSet<Entity> = [root].into();
        let mut next = 0;
        while next < doomed.len() {
            let e = doomed[next];
            next += 1;
            let kids = self
                .parent
                .iter()
                .filter(|(_, p)| **p == e)
                .map(|(c, _)| *c);
            let owned = self.owned.iter().filter(|(_, t)| *t == e).map(|(s, _)| *s);
            for s in kids.chain(owned).collect::<Vec<_>>() {
                if seen.insert(s) {
                    doomed.push(s);
                }
            }
        }
        for e in doomed {
            self.alive.remove(&e);
            self.likes.retain(|(s, t), _| *s != e && *t != e);
            self.owned.retain(|(s, t)| *s != e && *t != e);
            self.parent.retain(|c, p| *c != e && *p != e);
        }
    }
}

fn check(w: &World, m: &Model, handles: &[Entity]) -> Result<(), TestCaseError> {
    w.check_invariants();
    for &e in handles {
        prop_assert_eq!(w.alive(e), m.alive.contains(&e));
        if !m.alive.contains(&e) {
            continue;
        }
        let likes: BTreeMap<Entity, u32> = w.targets::<Likes>(e).map(|(t, l)| (t, l.0)).collect();
        let model: BTreeMap<Entity, u32> = m
            .likes
            .iter()
            .filter(|((s, _), _)| *s == e)
            .map(|((_, t), v)| (*t, *v))
            .collect();
        prop_assert_eq!(likes, model);
        let liked_by: BTreeSet<Entity> = w.sources::<Likes>(e).collect();
        let model: BTreeSet<Entity> = m
            .likes
            .keys()
            .filter(|(_, t)| *t == e)
            .map(|(s, _)| *s)
            .collect();
        prop_assert_eq!(liked_by, model);
        prop_assert_eq!(w.parent(e), m.parent.get(&e).copied());
        let kids: BTreeSet<Entity> = w.children(e).collect();
        let model: BTreeSet<Entity> = m
            .parent
            .iter()
            .filter(|(_, p)| **p == e)
            .map(|(c, _)| *c)
            .collect();
        prop_assert_eq!(kids, model);
    }
    // Adding the pairs in `pairs_in_order` to a fresh world rebuilds every
    // list in its order (as a save's load does).
    let slots = handles.iter().map(|e| e.index()).max().unwrap_or(0) as usize + 1;
    let mut fresh = World::new();
    let same: Vec<Entity> = (0..slots).map(|_| fresh.spawn(())).collect();
    let at = |e: Entity| same[e.index() as usize];
    for (s, t, v) in doecs::raw::pairs_in_order::<Likes>(w) {
        fresh.add_pair(at(s), at(t), v.clone()).unwrap();
    }
    for (s, t, _) in doecs::raw::pairs_in_order::<ChildOf>(w) {
        fresh.set_parent(at(s), at(t)).unwrap();
    }
    for &e in handles.iter().filter(|e| m.alive.contains(e)) {
        let by_index = |es: Vec<Entity>| es.iter().map(|e| e.index()).collect::<Vec<_>>();
        prop_assert_eq!(
            by_index(w.sources::<Likes>(e).collect()),
            by_index(fresh.sources::<Likes>(at(e)).collect())
        );
        prop_assert_eq!(
            by_index(w.targets::<Likes>(e).map(|(t, _)| t).collect()),
            by_index(fresh.targets::<Likes>(at(e)).map(|(t, _)| t).collect())
        );
        prop_assert_eq!(
            by_index(w.children(e).collect()),
            by_index(fresh.children(at(e)).collect())
        );
    }
    // The breadth-first walk puts every parent before its children.
    let order = w.hierarchy_breadth_first();
    let pos: BTreeMap<Entity, usize> = order.iter().enumerate().map(|(i, e)| (*e, i)).collect();
    prop_assert_eq!(pos.len(), order.len(), "each entity once");
    for (c, p) in &m.parent {
        prop_assert!(pos[p] < pos[c], "parent {:?} after child {:?}", p, c);
    }
    prop_assert_eq!(order.len(), {
        let mut all: BTreeSet<Entity> = m.parent.keys().copied().collect();
        all.extend(m.parent.values().copied());
        all.len()
    });
    Ok(())
}

fn run(ops: &[Op]) -> Result<(), TestCaseError> {
    let mut w = World::new();
    w.snapshot_by_copy::<Name>();
    let mut m = Model::default();
    let mut snapshot = doecs::Snapshot::new();
    let mut saved: Option<Model> = None;
    let mut handles: Vec<Entity> = Vec::new();
    for i in 0..6 {
        let e = w.spawn((Name(i),));
        handles.push(e);
        m.alive.insert(e);
    }
    let mut queries = Queries {
        likes: QueryState::new(&w),
        up: QueryState::new(&w),
    };
    let pick = |h: &[Entity], k: usize| h[k % h.len()];
    for op in ops {
        match *op {
            Op::Spawn => {
                let e = w.spawn((Name(handles.len() as u32),));
                handles.push(e);
                m.alive.insert(e);
            }
            Op::Like(a, b, v) => {
                let (s, t) = (pick(&handles, a), pick(&handles, b));
                let ok = m.alive.contains(&s) && m.alive.contains(&t);
                let old = if ok { m.likes.insert((s, t), v) } else { None };
                match w.add_pair(s, t, Likes(v)) {
                    Ok(prev) => {
                        prop_assert!(ok);
                        prop_assert_eq!(prev.map(|l| l.0), old);
                    }
                    Err(e) => {
                        prop_assert!(!ok);
                        prop_assert!(matches!(e, RelationError::NoSuchEntity(_)));
                    }
                }
            }
            Op::Unlike(a, b) => {
                let (s, t) = (pick(&handles, a), pick(&handles, b));
                let model = m.likes.remove(&(s, t));
                prop_assert_eq!(w.remove_pair::<Likes>(s, t).ok().map(|l| l.0), model);
            }
            Op::Own(a, b) => {
                let (s, t) = (pick(&handles, a), pick(&handles, b));
                let ok = m.alive.contains(&s) && m.alive.contains(&t);
                prop_assert_eq!(w.add_pair(s, t, OwnedBy).is_ok(), ok);
                if ok {
                    m.owned.insert((s, t));
                }
            }
            Op::SetParent(a, b) => {
                let (c, p) = (pick(&handles, a), pick(&handles, b));
                let alive = m.alive.contains(&c) && m.alive.contains(&p);
                let cycle = alive && m.reaches_by_parent(p, c);
                match w.set_parent(c, p) {
                    Ok(()) => {
                        prop_assert!(alive && !cycle);
                        m.parent.insert(c, p);
                    }
                    Err(RelationError::Cycle { .. }) => prop_assert!(cycle),
                    Err(RelationError::NoSuchEntity(_)) => prop_assert!(!alive),
                    Err(e) => prop_assert!(false, "unexpected {e}"),
                }
            }
            Op::ParentBatch(ref items) => {
                let n = items.len();
                let children: Vec<Entity> = items.iter().map(|&(a, _)| pick(&handles, a)).collect();
                let parents: Vec<Option<u32>> = items
                    .iter()
                    .map(|&(_, p)| p.map(|p| (p % n) as u32))
                    .collect();
                // Valid: live, parentless, distinct children whose indices
                // make no cycle.
                let distinct = children.iter().collect::<BTreeSet<_>>().len() == n;
                let fresh = children
                    .iter()
                    .all(|c| m.alive.contains(c) && !m.parent.contains_key(c));
                let acyclic = (0..n).all(|start| {
                    let mut at = Some(start);
                    (0..=n).any(|_| {
                        at = at.and_then(|k| parents[k].map(|p| p as usize));
                        at.is_none()
                    })
                });
                let before: Vec<Vec<Entity>> =
                    children.iter().map(|&c| w.children(c).collect()).collect();
                let result = w.set_parents_in_batch(&children, &parents);
                prop_assert_eq!(result.is_ok(), distinct && fresh && acyclic, "{:?}", result);
                if result.is_ok() {
                    for (k, p) in parents.iter().enumerate() {
                        if let Some(p) = p {
                            m.parent.insert(children[k], children[*p as usize]);
                        }
                    }
                    // Each target's children: its old ones, then the
                    // batch's, in batch order.
                    for (t, old) in children.iter().zip(before) {
                        let mut want = old;
                        want.extend(
                            (0..n)
                                .filter(|&k| parents[k].map(|p| children[p as usize]) == Some(*t))
                                .map(|k| children[k]),
                        );
                        prop_assert_eq!(w.children(*t).collect::<Vec<_>>(), want);
                    }
                }
            }
            Op::Detach(a) => {
                let c = pick(&handles, a);
                prop_assert_eq!(w.remove_parent(c), m.parent.remove(&c));
            }
            Op::Snapshot => {
                w.snapshot_into(&mut snapshot).unwrap();
                saved = Some(m.clone());
            }
            Op::Restore => {
                let restored = w.restore(&snapshot);
                match &saved {
                    Some(model) => {
                        prop_assert!(restored.is_ok());
                        m = model.clone();
                    }
                    None => prop_assert!(restored.is_err(), "nothing to restore yet"),
                }
            }
            Op::Despawn(a) => {
                let e = pick(&handles, a);
                let alive = m.alive.contains(&e);
                prop_assert_eq!(w.despawn(e).is_ok(), alive);
                if alive {
                    m.despawn(e);
                }
            }
        }
        check(&w, &m, &handles)?;
        check_queries(&mut w, &m, &mut queries)?;
    }
    Ok(())
}

/// Each entity with its parent's id and name.
type UpNames = (Entity, Up<ChildOf, (Entity, &'static Name)>);

/// Held queries with relation terms, kept across every change of the run.
struct Queries {
    likes: QueryState<(Entity, &'static Name, Pairs<Likes>)>,
    up: QueryState<UpNames>,
}

/// `(Likes, *)`, `(Likes, target)` and the traversal up `ChildOf` agree
/// with the model.
fn check_queries(w: &mut World, m: &Model, q: &mut Queries) -> Result<(), TestCaseError> {
    let mut names = Vec::new();
    let mut wildcard = BTreeMap::new();
    let mut sources_seen = BTreeSet::new();
    let mut once = true;
    q.likes.for_each(w, |(source, name, targets)| {
        once &= sources_seen.insert(source);
        names.push((source, name.0));
        for (target, like) in targets {
            wildcard.insert((source, target), like.0);
        }
    });
    prop_assert!(once, "each source handed out once");
    prop_assert_eq!(&wildcard, &m.likes);
    let sources: BTreeSet<Entity> = m.likes.keys().map(|&(s, _)| s).collect();
    prop_assert_eq!(&sources_seen, &sources, "exactly the entities with pairs");
    prop_assert_eq!(q.likes.count(w), sources.len());
    for &target in &m.alive {
        let mut to = BTreeMap::new();
        let mut once = true;
        w.query_mut::<(Entity, &Name)>()
            .for_each_source::<Likes>(target, |(source, _), like| {
                once &= to.insert(source, like.0).is_none();
            });
        prop_assert!(once, "each source of a target handed out once");
        let model: BTreeMap<Entity, u32> = m
            .likes
            .iter()
            .filter(|((_, t), _)| *t == target)
            .map(|((s, _), v)| (*s, *v))
            .collect();
        prop_assert_eq!(to, model);
    }
    let mut up = BTreeMap::new();
    q.up.for_each(w, |(child, (parent, name))| {
        names.push((parent, name.0));
        up.insert(child, parent);
    });
    prop_assert_eq!(&up, &m.parent);
    // Read-only, so the iterator runs, and agrees; so does `count`.
    let iterated: BTreeMap<Entity, Entity> = q.up.iter(w).map(|(c, (p, _))| (c, p)).collect();
    prop_assert_eq!(&iterated, &m.parent);
    prop_assert_eq!(q.up.count(w), m.parent.len());
    // Every item handed out was the entity's own.
    for (e, name) in names {
        prop_assert_eq!(w.get::<Name>(e).map(|n| n.0), Ok(name));
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: if cfg!(miri) { 4 } else { 256 },
        failure_persistence: if cfg!(miri) {
            None
        } else {
            ProptestConfig::default().failure_persistence
        },
        ..ProptestConfig::default()
    })]
    #[test]
    fn pairs_and_hierarchy_agree_with_a_naive_model(
        ops in prop::collection::vec(op(), 1..if cfg!(miri) { 24 } else { 120 })
    ) {
        run(&ops)?;
    }
}

#[derive(Debug, PartialEq, Clone, Copy)]
struct Height(u32);

/// A child may write the component it reads from its parent, with the
/// parent in the same archetype, visited by the same loop; a pair pointing
/// at its own source is skipped, so the two items never alias. Run under
/// Miri (Stacked Borrows), this checks that no `&mut` and `&` to one value
/// are ever live together.
#[test]
fn up_term_writes_the_child_from_the_parent_and_skips_self_pairs() {
    let mut w = World::new();
    let root = w.spawn((Name(1),));
    let mid = w.spawn((Name(10),));
    let leaf = w.spawn((Name(100),));
    let loner = w.spawn((Name(7),));
    w.set_parent(mid, root).unwrap();
    w.set_parent(leaf, mid).unwrap();
    w.add_pair(loner, loner, Likes(1)).unwrap();
    // The query visits rows in archetype order, not parents first, so the
    // leaf may see its parent before or after the parent's own update.
    let mut seen = Vec::new();
    w.query_mut::<(&mut Name, Up<ChildOf, &Name>)>()
        .for_each(|(own, parent)| {
            seen.push((own.0, parent.0));
            own.0 += parent.0;
        });
    seen.sort();
    assert_eq!(seen.len(), 2);
    assert!(seen.contains(&(10, 1)));
    assert!(seen[1].0 == 100 && (seen[1].1 == 10 || seen[1].1 == 11));
    assert_eq!(w.get::<Name>(root), Ok(&Name(1)));
    assert_eq!(w.get::<Name>(mid), Ok(&Name(11)));
    let mut calls = 0;
    w.query_mut::<(&mut Name, Up<Likes, &Name>)>()
        .for_each(|_| calls += 1);
    assert_eq!(calls, 0, "a self-pair is never traversed");
    // `get` hands out one item at a time, writing and reading both ways.
    let mut q = w.query_mut::<(&mut Name, Up<ChildOf, &Name>)>();
    let (own, parent) = q.get_mut(leaf).unwrap();
    own.0 = parent.0 * 2;
    assert!(matches!(
        q.get(root),
        Err(EntityError::MissingComponent { .. })
    ));
    assert!(
        q.get(loner).is_err(),
        "no `ChildOf` pair, and its `Likes` pair is to itself"
    );
    assert_eq!(w.get::<Name>(leaf), Ok(&Name(22)));
    // Writing through a pairs term: every source of the hierarchy.
    w.query_mut::<(&mut Name, Pairs<ChildOf>)>()
        .for_each(|(name, parents)| {
            assert_eq!(parents.count(), 1, "ChildOf is exclusive");
            name.0 = 0;
        });
    assert_eq!(w.get::<Name>(leaf), Ok(&Name(0)));
    assert_eq!(
        w.get::<Name>(root),
        Ok(&Name(1)),
        "a root has no ChildOf pair"
    );
    // A self-pair is data to a pairs term.
    let mut selfish = Vec::new();
    w.query_mut::<(Entity, Pairs<Likes>)>()
        .for_each(|(e, likes)| selfish.extend(likes.map(|(t, l)| (e, t, l.0))));
    assert_eq!(selfish, [(loner, loner, 1)]);
    w.check_invariants();
}

/// Many children and parents interleaved in one archetype, written from
/// their parents in one loop, with a change filter's row-by-row path too:
/// every child sees its parent's value before or after the parent's own
/// update, never a torn one.
#[test]
fn a_deep_hierarchy_in_one_archetype_reads_and_writes_in_one_loop() {
    let mut w = World::new();
    let n = if cfg!(miri) { 40 } else { 400 };
    let es: Vec<Entity> = (0..n).map(|i| w.spawn((Height(i),))).collect();
    // A chain and a fan: entity i's parent is i / 2 (0 is the root).
    for i in 1..n as usize {
        w.set_parent(es[i], es[i / 2]).unwrap();
    }
    let mut q = QueryState::<(Entity, &mut Height, Up<ChildOf, (Entity, &Height)>)>::new(&w);
    let mut visits = 0;
    q.for_each(&mut w, |(e, own, (parent, above))| {
        assert_eq!(index_in(&es, e) / 2, index_in(&es, parent));
        own.0 += above.0;
        visits += 1;
    });
    assert_eq!(visits, n - 1, "the root has no parent");
    let changed =
        QueryState::<(&mut Height, Up<ChildOf, &Height>), doecs::Changed<Height>>::new(&w)
            .count(&w);
    assert_eq!(changed, n as usize - 1);
    let mut filtered =
        QueryState::<(&mut Height, Up<ChildOf, &Height>), doecs::Changed<Height>>::new(&w);
    let mut again = 0;
    filtered.for_each(&mut w, |(own, above)| {
        own.0 = above.0;
        again += 1;
    });
    assert_eq!(again, n - 1);
}

/// Index of `e` in `es`.
fn index_in(es: &[Entity], e: Entity) -> usize {
    es.iter().position(|&x| x == e).unwrap()
}

/// Entities without a target, or whose target lacks the data, are not
/// matched; the `Option` form keeps them with `None`; a target may be in
/// any archetype.
#[test]
fn up_matches_only_entities_whose_target_has_the_data() {
    let mut w = World::new();
    let tall = w.spawn((Height(5),));
    let bare = w.spawn((Name(0),));
    let under_tall = w.spawn((Name(1),));
    let under_bare = w.spawn((Name(2),));
    let orphan = w.spawn((Name(3),));
    w.set_parent(under_tall, tall).unwrap();
    w.set_parent(under_bare, bare).unwrap();
    let got: Vec<(Entity, u32)> = w
        .query::<(Entity, Up<ChildOf, &Height>)>()
        .iter()
        .map(|(e, h)| (e, h.0))
        .collect();
    assert_eq!(got, [(under_tall, 5)]);
    assert_eq!(w.query::<Up<ChildOf, &Height>>().count(), 1);
    let mut all: Vec<(Entity, Option<u32>)> = w
        .query::<(Entity, &Name, Option<Up<ChildOf, &Height>>)>()
        .iter()
        .map(|(e, _, h)| (e, h.map(|h| h.0)))
        .collect();
    all.sort();
    let mut want = vec![
        (bare, None),
        (under_tall, Some(5)),
        (under_bare, None),
        (orphan, None),
    ];
    want.sort();
    assert_eq!(all, want);
    // An up term of an `Option`: every entity with a parent.
    let with_parent = w.query::<Up<ChildOf, Option<&Height>>>().count();
    assert_eq!(with_parent, 2);
    // Pairs: only entities with pairs of the relation; `Option` keeps the rest.
    assert_eq!(w.query::<Pairs<ChildOf>>().count(), 2);
    assert_eq!(w.query::<Pairs<Likes>>().count(), 0, "no table yet");
    let none = w
        .query::<Option<Pairs<Likes>>>()
        .iter()
        .filter(|p| p.is_none())
        .count();
    assert_eq!(none, 5);
    // A grandparent, through a term inside a term.
    let top = w.spawn((Height(9),));
    w.set_parent(tall, top).unwrap();
    let grand: Vec<(Entity, u32)> = w
        .query::<(Entity, Up<ChildOf, Up<ChildOf, &Height>>)>()
        .iter()
        .map(|(e, h)| (e, h.0))
        .collect();
    assert_eq!(grand, [(under_tall, 9)]);
}

/// A pair whose target is despawned goes with it: the source is no longer
/// matched (or, for `ChildOf`, goes too).
#[test]
fn an_entity_whose_target_is_despawned_is_not_matched() {
    let mut w = World::new();
    let idol = w.spawn((Height(3),));
    let fan = w.spawn((Name(0),));
    w.add_pair(fan, idol, Likes(1)).unwrap();
    let parent = w.spawn((Height(4),));
    let child = w.spawn((Name(1),));
    w.set_parent(child, parent).unwrap();
    let mut likes = QueryState::<(Entity, Up<Likes, &Height>)>::new(&w);
    let mut children = QueryState::<(Entity, Up<ChildOf, &Height>)>::new(&w);
    assert_eq!(likes.iter(&w).map(|(e, _)| e).collect::<Vec<_>>(), [fan]);
    assert_eq!(children.iter(&w).count(), 1);
    w.despawn(idol).unwrap();
    w.despawn(parent).unwrap();
    assert!(w.alive(fan) && !w.alive(child));
    assert_eq!(likes.iter(&w).count(), 0);
    assert_eq!(likes.count(&w), 0);
    assert_eq!(children.iter(&w).count(), 0);
    // New entities (which may reuse the dead targets' indices) are not
    // their stand-ins.
    w.spawn_batch((0..4).map(|i| (Height(i),)));
    assert_eq!(likes.iter(&w).count(), 0);
    assert_eq!(children.iter(&w).count(), 0);
}

/// A query whose up term reads what it writes runs only in its callback
/// loops: every iterator, chunk and parallel form refuses it, with a typed
/// error where one is asked for, before any item exists. A query whose term
/// reads something else runs in every form.
#[test]
fn iterator_forms_refuse_an_up_term_that_reads_what_the_query_writes() {
    let mut w = World::new();
    let parent = w.spawn((Height(2), Name(0)));
    let child = w.spawn((Height(1), Name(0)));
    w.set_parent(child, parent).unwrap();
    type Overlap = (&'static mut Height, Up<ChildOf, &'static Height>);
    let key = doecs::AccessKey::of::<Height>();
    assert_eq!(
        QueryState::<Overlap>::iterable(),
        Err(AliasError::RelatedWrite(key))
    );
    let mut q = w.query_mut::<(&mut Height, Up<ChildOf, &Height>)>();
    assert!(matches!(q.try_iter_mut(), Err(AliasError::RelatedWrite(k)) if k == key));
    let refused = |f: &mut dyn FnMut()| {
        let err = catch_unwind(AssertUnwindSafe(f)).expect_err("refused");
        let msg = err.downcast_ref::<String>().cloned().unwrap_or_default();
        assert!(msg.contains("reads it on related entities"), "{msg}");
    };
    refused(&mut || {
        q.iter_mut();
    });
    // Read only, the overlap is two shared reads: `iter` runs, and its
    // items may be kept together.
    let both: Vec<(u32, u32)> = q.iter().map(|(own, up)| (own.0, up.0)).collect();
    assert_eq!(both, [(1, 2)]);
    refused(&mut || {
        q.iter_batched(4);
    });
    refused(&mut || q.for_each_chunk(|_| {}));
    refused(&mut || q.par_for_each(|_| {}));
    refused(&mut || q.par_for_each_chunk(|_| {}));
    let mut state = QueryState::<Overlap>::new(&w);
    assert!(state.try_iter_mut(&mut w).is_err());
    // The callback loop runs, and so does a term nesting the overlap away:
    // a grandparent read is the entity's own (two pairs may lead back),
    // so that query is refused when made instead.
    w.query_mut::<(&mut Height, Up<ChildOf, &Height>)>()
        .for_each(|(own, parent)| own.0 += parent.0);
    assert_eq!(w.get::<Height>(child), Ok(&Height(3)));
    assert!(QueryState::<(&mut Height, Up<ChildOf, Up<ChildOf, &Height>>)>::try_access().is_err());
    // No overlap: every form runs, and the items may be collected.
    let mut names = w.query_mut::<(&mut Name, Up<ChildOf, &Height>)>();
    let collected: Vec<_> = names.iter_mut().collect();
    assert_eq!(collected.len(), 1);
    for (name, height) in collected {
        name.0 = height.0;
    }
    let mut rows = 0;
    names.for_each_chunk(|(names, ups)| {
        for (name, up) in names.iter_mut().zip(ups) {
            rows += 1;
            if let Some(h) = up {
                name.0 += h.0;
            }
        }
    });
    assert_eq!(
        rows, 2,
        "a chunk's term rows cover every row, `None` where unmatched"
    );
    assert_eq!(w.get::<Name>(child), Ok(&Name(4)));
    assert_eq!(w.get::<Name>(parent), Ok(&Name(0)));
}

/// The access of an up term: the parent's read is a read (a writer of the
/// type conflicts with it, whatever the filters), which a query may hold
/// beside a write of the same type.
#[test]
fn up_terms_record_their_reads_for_the_scheduler() {
    use doecs::{function_system, Query, System, With, Without};
    struct Marked;
    let access = QueryState::<(&mut Height, Up<ChildOf, &Height>)>::access();
    let key = doecs::AccessKey::of::<Height>();
    assert_eq!(access.writes(), [key]);
    assert_eq!(access.reads(), [key]);
    assert_eq!(access.related_reads(), [key]);
    assert!(access.own_reads().is_empty());

    fn stack(mut q: Query<(&mut Height, Up<ChildOf, &Height>)>) {
        q.for_each(|(own, parent)| own.0 += parent.0);
    }
    fn grow(mut q: Query<&mut Height>) {
        q.for_each(|h| h.0 += 1);
    }
    fn look(mut q: Query<(&Name, Up<ChildOf, &Height>)>) {
        q.for_each(|_| {});
    }
    let stack = function_system(stack).expect("a write beside a related read is no alias");
    let grow = function_system(grow).unwrap();
    let look = function_system(look).unwrap();
    assert!(look.access().conflict_with(grow.access()).is_some());
    assert!(stack.access().conflict_with(grow.access()).is_some());
    assert!(look.access().conflict_with(stack.access()).is_some());
    // Two parameters whose filters keep their entities apart still meet
    // through the parent.
    fn apart(
        mut writes: Query<&mut Height, Without<Marked>>,
        mut reads: Query<Up<ChildOf, &Height>, With<Marked>>,
    ) {
        writes.for_each(|_| {});
        reads.for_each(|_| {});
    }
    assert!(matches!(
        function_system(apart),
        Err(doecs::ScheduleError::ConflictingParams { .. })
    ));
}
