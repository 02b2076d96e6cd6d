//! Integration tests: a proptest model test against a naive recursive scene
//! graph, deep chains, wide trees, cycles, batches and the ComponentManager hooks.

use doecs::raw::Entities;

use doecs::{ComponentManager, Entity};
use doecs_transform::{Instance, TransformError, TransformManager, IDLE_PROPAGATIONS};
use glam::{Affine3A, Quat, Vec3};
use proptest::prelude::*;
use std::collections::HashMap;

/// The naive model: parent links and locals, world computed recursively.
#[derive(Default)]
struct Model {
    nodes: HashMap<Entity, (Affine3A, Option<Entity>)>,
}

impl Model {
    fn world(&self, e: Entity) -> Affine3A {
        let (local, parent) = self.nodes[&e];
        match parent {
            Some(p) => self.world(p) * local,
            None => local,
        }
    }
    fn is_ancestor_or_self(&self, a: Entity, mut b: Entity) -> bool {
        loop {
            if a == b {
                return true;
            }
            match self.nodes[&b].1 {
                Some(p) => b = p,
                None => return false,
            }
        }
    }
    fn destroy(&mut self, e: Entity) {
        let kids: Vec<Entity> = self
            .nodes
            .iter()
            .filter(|(_, v)| v.1 == Some(e))
            .map(|(k, _)| *k)
            .collect();
        for k in kids {
            let w = self.world(k);
            self.nodes.insert(k, (w, None));
        }
        self.nodes.remove(&e);
    }
}

fn close(a: Affine3A, b: Affine3A) -> bool {
    let (x, y) = (a.to_cols_array(), b.to_cols_array());
    x.iter()
        .zip(&y)
        .all(|(p, q)| (p - q).abs() <= 1e-5 * p.abs().max(q.abs()).max(1.0))
}

fn compare(tm: &TransformManager, model: &Model, handles: &HashMap<Entity, Instance>) {
    assert_eq!(tm.len(), model.nodes.len());
    for (&e, &(local, parent)) in &model.nodes {
        let h = handles[&e];
        assert!(close(tm.local(h).unwrap(), local), "local of {e}");
        let (got, want) = (tm.world(h).unwrap(), model.world(e));
        assert!(close(got, want), "world of {e}: {got:?} vs {want:?}");
        assert_eq!(tm.parent(h).map(|p| p.entity()), parent, "parent of {e}");
    }
}

#[derive(Debug, Clone)]
enum Op {
    Create(Affine3A),
    CreateMany(Vec<(Affine3A, Option<u32>)>),
    Link(usize, usize),
    Unlink(usize),
    SetLocal(usize, Affine3A),
    SetLocalMany(Vec<(usize, Affine3A)>),
    Destroy(usize),
    OnDestroy(Vec<usize>),
    Compact,
    Propagate,
}

fn affine() -> impl Strategy<Value = Affine3A> {
    (-1.0f32..1.0, -1.0f32..1.0, -1.0f32..1.0, -3.0f32..3.0).prop_map(|(x, y, z, a)| {
        Affine3A::from_rotation_translation(Quat::from_rotation_y(a), Vec3::new(x, y, z))
    })
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => affine().prop_map(Op::Create),
        1 => prop::collection::vec((affine(), prop::option::of(0u32..8)), 0..8).prop_map(Op::CreateMany),
        4 => (any::<usize>(), any::<usize>()).prop_map(|(a, b)| Op::Link(a, b)),
        1 => any::<usize>().prop_map(Op::Unlink),
        3 => (any::<usize>(), affine()).prop_map(|(a, m)| Op::SetLocal(a, m)),
        2 => prop::collection::vec((any::<usize>(), affine()), 0..10).prop_map(Op::SetLocalMany),
        1 => any::<usize>().prop_map(Op::Destroy),
        1 => prop::collection::vec(any::<usize>(), 0..4).prop_map(Op::OnDestroy),
        1 => Just(Op::Compact),
        2 => Just(Op::Propagate),
    ]
}

fn run(ops: Vec<Op>, deferred: bool) {
    let mut entities = Entities::new();
    let mut tm = if deferred {
        TransformManager::deferred()
    } else {
        TransformManager::new()
    };
    let mut model = Model::default();
    let mut handles: HashMap<Entity, Instance> = HashMap::new();
    let mut order: Vec<Entity> = Vec::new(); // live entities, for picking
    for op in ops {
        let is_propagate = matches!(op, Op::Propagate);
        let pick = |k: usize, order: &Vec<Entity>| order[k % order.len()];
        match op {
            Op::Create(m) => {
                let e = entities.alloc();
                handles.insert(e, tm.create(e, m).unwrap());
                model.nodes.insert(e, (m, None));
                order.push(e);
            }
            Op::CreateMany(items) => {
                let mut es = Vec::new();
                entities.alloc_many(items.len(), &mut es);
                let locals: Vec<Affine3A> = items.iter().map(|i| i.0).collect();
                let parents: Vec<Option<u32>> = items.iter().map(|i| i.1).collect();
                let n = items.len();
                // Expected validity: in range and acyclic.
                let in_range = parents.iter().flatten().all(|&p| (p as usize) < n);
                let acyclic = in_range
                    && (0..n).all(|k| {
                        let mut x = k;
                        for _ in 0..=n {
                            match parents[x] {
                                Some(p) => x = p as usize,
                                None => return true,
                            }
                        }
                        false
                    });
                let res = tm.create_many(&es, &locals, &parents);
                if !acyclic {
                    assert!(res.is_err());
                } else {
                    let hs = res.unwrap();
                    for k in 0..n {
                        handles.insert(es[k], hs[k]);
                        model
                            .nodes
                            .insert(es[k], (locals[k], parents[k].map(|p| es[p as usize])));
                        order.push(es[k]);
                    }
                }
            }
            Op::Link(a, b) if !order.is_empty() => {
                let (c, p) = (pick(a, &order), pick(b, &order));
                let res = tm.link(handles[&c], handles[&p]);
                if model.is_ancestor_or_self(c, p) {
                    assert!(matches!(res, Err(TransformError::Cycle { .. })));
                } else {
                    res.unwrap();
                    model.nodes.get_mut(&c).unwrap().1 = Some(p);
                }
            }
            Op::Unlink(a) if !order.is_empty() => {
                let c = pick(a, &order);
                tm.unlink(handles[&c]).unwrap();
                model.nodes.get_mut(&c).unwrap().1 = None;
            }
            Op::SetLocal(a, m) if !order.is_empty() => {
                let c = pick(a, &order);
                tm.set_local(handles[&c], m).unwrap();
                model.nodes.get_mut(&c).unwrap().0 = m;
            }
            Op::SetLocalMany(items) if !order.is_empty() => {
                let batch: Vec<(Instance, Affine3A)> = items
                    .iter()
                    .map(|&(a, m)| (handles[&pick(a, &order)], m))
                    .collect();
                tm.set_local_many(&batch).unwrap();
                for &(a, m) in &items {
                    model.nodes.get_mut(&pick(a, &order)).unwrap().0 = m;
                }
            }
            Op::Destroy(a) if !order.is_empty() => {
                let c = pick(a, &order);
                tm.destroy(handles[&c]).unwrap();
                assert!(tm.destroy(handles[&c]).is_err());
                model.destroy(c);
                order.retain(|&x| x != c);
            }
            Op::OnDestroy(list) if !order.is_empty() => {
                let mut dead: Vec<Entity> = list.iter().map(|&a| pick(a, &order)).collect();
                dead.sort();
                dead.dedup();
                dead.push(Entity::from_parts(999_999, 0)); // unknown: ignored
                tm.on_destroy(&dead);
                for &c in &dead[..dead.len() - 1] {
                    model.destroy(c);
                    order.retain(|&x| x != c);
                }
            }
            Op::Compact => tm.compact(),
            Op::Propagate => tm.propagate(),
            _ => {}
        }
        tm.check_invariants();
        if !deferred || is_propagate {
            compare(&tm, &model, &handles);
        }
    }
    tm.propagate();
    tm.check_invariants();
    compare(&tm, &model, &handles);
    // Idle nodes leave the dirty partition.
    for _ in 0..=IDLE_PROPAGATIONS {
        tm.propagate();
    }
    assert_eq!(tm.dirty_len(), 0);
    tm.check_invariants();
    compare(&tm, &model, &handles);
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: if cfg!(miri) { 4 } else { 256 },
        // Miri's isolation forbids the file system that failure persistence uses.
        failure_persistence: if cfg!(miri) { None } else { ProptestConfig::default().failure_persistence },
        ..ProptestConfig::default()
    })]
    #[test]
    fn model_immediate(ops in prop::collection::vec(op(), 0..if cfg!(miri) { 20 } else { 80 })) {
        run(ops, false);
    }

    #[test]
    fn model_deferred(ops in prop::collection::vec(op(), 0..if cfg!(miri) { 20 } else { 80 })) {
        run(ops, true);
    }
}

const DEEP: usize = if cfg!(miri) { 200 } else { 100_000 };

fn chain(tm: &mut TransformManager, n: usize) -> Vec<Instance> {
    let mut entities = Entities::new();
    let mut es = Vec::new();
    entities.alloc_many(n, &mut es);
    let locals = vec![Affine3A::from_translation(Vec3::X); n];
    let parents: Vec<Option<u32>> = (0..n).map(|k| k.checked_sub(1).map(|p| p as u32)).collect();
    tm.create_many(&es, &locals, &parents).unwrap()
}

#[test]
fn deep_chain_immediate_and_batch() {
    let mut tm = TransformManager::new();
    let hs = chain(&mut tm, DEEP);
    let last = *hs.last().unwrap();
    assert_eq!(tm.world(last).unwrap().translation.x, DEEP as f32);
    tm.set_local(hs[0], Affine3A::from_translation(Vec3::new(1.0, 5.0, 0.0)))
        .unwrap();
    assert_eq!(tm.world(last).unwrap().translation.y, 5.0);
    let batch: Vec<_> = hs
        .iter()
        .rev()
        .map(|&h| (h, Affine3A::from_translation(Vec3::Y)))
        .collect();
    tm.set_local_many(&batch).unwrap();
    assert_eq!(tm.world(last).unwrap().translation.y, DEEP as f32);
    // A cycle through the whole chain is refused.
    assert!(matches!(
        tm.link(hs[0], last),
        Err(TransformError::Cycle { .. })
    ));
    tm.compact();
    tm.update_all();
    tm.check_invariants();
    tm.destroy(hs[DEEP / 2]).unwrap();
    tm.check_invariants();
    assert_eq!(tm.world(last).unwrap().translation.y, DEEP as f32);
    assert!(tm.ancestors(last).count() < DEEP / 2 + 1);
}

#[test]
fn deep_chain_deferred() {
    let mut tm = TransformManager::deferred();
    let hs = chain(&mut tm, DEEP);
    let last = *hs.last().unwrap();
    tm.set_local(hs[0], Affine3A::from_translation(Vec3::new(1.0, 5.0, 0.0)))
        .unwrap();
    assert_eq!(
        tm.world(last).unwrap().translation.y,
        0.0,
        "deferred: last propagated value"
    );
    tm.propagate();
    assert_eq!(tm.world(last).unwrap().translation.y, 5.0);
    tm.check_invariants();
}

#[test]
fn wide_tree() {
    let n = if cfg!(miri) { 100 } else { 50_000 };
    let mut entities = Entities::new();
    let mut tm = TransformManager::new();
    let root = tm.create(entities.alloc(), Affine3A::IDENTITY).unwrap();
    let mut kids = Vec::new();
    for k in 0..n {
        let h = tm
            .create(
                entities.alloc(),
                Affine3A::from_translation(Vec3::X * k as f32),
            )
            .unwrap();
        tm.link(h, root).unwrap();
        kids.push(h);
    }
    assert_eq!(tm.children(root).count(), n);
    tm.set_local(root, Affine3A::from_translation(Vec3::Z))
        .unwrap();
    assert_eq!(
        tm.world(kids[n - 1]).unwrap().translation,
        Vec3::new((n - 1) as f32, 0.0, 1.0).into()
    );
    tm.compact();
    tm.check_invariants();
    tm.destroy(root).unwrap();
    tm.check_invariants();
    assert_eq!(
        tm.world(kids[3]).unwrap().translation,
        Vec3::new(3.0, 0.0, 1.0).into()
    );
    assert!(tm.parent(kids[3]).is_none());
}

#[test]
fn create_many_validation() {
    let mut entities = Entities::new();
    let mut tm = TransformManager::new();
    let mut es = Vec::new();
    entities.alloc_many(3, &mut es);
    let l = [Affine3A::IDENTITY; 3];
    assert!(matches!(
        tm.create_many(&es, &l, &[Some(1), Some(2), Some(0)]),
        Err(TransformError::BatchCycle { .. })
    ));
    assert!(matches!(
        tm.create_many(&es, &l, &[Some(0), None, None]),
        Err(TransformError::BatchCycle { .. })
    ));
    assert!(matches!(
        tm.create_many(&es, &l, &[Some(7), None, None]),
        Err(TransformError::ParentOutOfRange { .. })
    ));
    assert!(matches!(
        tm.create_many(&es, &l[..2], &[None; 3]),
        Err(TransformError::LengthMismatch { .. })
    ));
    assert!(matches!(
        tm.create_many(&[es[0], es[0]], &l[..2], &[None; 2]),
        Err(TransformError::DuplicateEntity(_))
    ));
    assert!(tm.is_empty());
    // Children before parents in the batch are fine.
    let hs = tm.create_many(&es, &l, &[Some(2), Some(0), None]).unwrap();
    assert_eq!(tm.parent(hs[0]).unwrap().entity(), es[2]);
    assert!(matches!(
        tm.create(es[1], Affine3A::IDENTITY),
        Err(TransformError::AlreadyExists(_))
    ));
    tm.check_invariants();
}

#[test]
fn garbage_collection_and_stale_generations() {
    let mut entities = Entities::with_min_free_indices(0);
    let mut tm = TransformManager::new();
    let a = entities.alloc();
    let b = entities.alloc();
    let ha = tm.create(a, Affine3A::IDENTITY).unwrap();
    let hb = tm.create(b, Affine3A::from_translation(Vec3::X)).unwrap();
    tm.link(hb, ha).unwrap();
    entities.free(a);
    let removed = tm.collect_garbage(&entities);
    assert_eq!(removed, 1);
    assert!(tm.lookup(a).is_none());
    assert!(tm.parent(hb).is_none());
    tm.check_invariants();
    // A new generation of b's index replaces a stale instance.
    let b2 = Entity::from_parts(b.index(), b.generation() + 1);
    tm.create(b2, Affine3A::IDENTITY).unwrap();
    assert!(tm.lookup(b).is_none());
    assert_eq!(tm.len(), 1);
    tm.check_invariants();
}
