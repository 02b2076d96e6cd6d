//! Sparse components against a naive model: random spawns, inserts,
//! removes, despawns, batches, command buffers, writes through queries and
//! snapshot restores, with dense and sparse components mixed in one
//! bundle. After every step each entity's components and values must
//! match the model, both query walks (the set walk of a sparse-only query
//! and the archetype walk of a mixed one) must see exactly the model's
//! entities, and every storage invariant must hold.

use doecs::{CommandBuffer, Entity, Has, Snapshot, Sparse, World};
use proptest::prelude::*;
use std::collections::BTreeMap;

/// Dense.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Pos(u32);
/// Sparse, holding heap memory.
#[derive(Clone, Debug, PartialEq)]
struct Label(String);
/// Sparse tag.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Marked;
/// Sparse, over-aligned.
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(align(64))]
struct Wide(u32);

#[derive(Clone, Debug, Default, PartialEq)]
struct Model {
    pos: Option<u32>,
    label: Option<String>,
    marked: bool,
    wide: Option<u32>,
}

#[derive(Clone, Debug)]
enum Op {
    Spawn(Option<u32>, Option<u8>, bool, Option<u32>),
    InsertLabel(usize, u8),
    InsertMixed(usize, u32, u32),
    Mark(usize),
    RemoveLabel(usize),
    RemoveMixed(usize),
    Unmark(usize),
    Despawn(usize),
    BatchMark(Vec<usize>),
    Buffered(usize, u8),
    AddToWide(u32),
    Snapshot,
    Restore,
}

fn op() -> impl Strategy<Value = Op> {
    let who = 0usize..32;
    prop_oneof![
        3 => (
            proptest::option::of(0u32..100),
            proptest::option::of(0u8..10),
            any::<bool>(),
            proptest::option::of(0u32..100)
        )
            .prop_map(|(p, l, m, w)| Op::Spawn(p, l, m, w)),
        2 => (who.clone(), 0u8..10).prop_map(|(w, l)| Op::InsertLabel(w, l)),
        2 => (who.clone(), 0u32..100, 0u32..100).prop_map(|(w, p, x)| Op::InsertMixed(w, p, x)),
        2 => who.clone().prop_map(Op::Mark),
        1 => who.clone().prop_map(Op::RemoveLabel),
        1 => who.clone().prop_map(Op::RemoveMixed),
        1 => who.clone().prop_map(Op::Unmark),
        1 => who.clone().prop_map(Op::Despawn),
        1 => prop::collection::vec(who.clone(), 0..6).prop_map(Op::BatchMark),
        1 => (who, 0u8..10).prop_map(|(w, l)| Op::Buffered(w, l)),
        1 => (0u32..5).prop_map(Op::AddToWide),
        1 => Just(Op::Snapshot),
        1 => Just(Op::Restore),
    ]
}

/// The `who`-th live entity (modulo how many there are).
fn pick(model: &BTreeMap<Entity, Model>, who: usize) -> Option<Entity> {
    let live: Vec<Entity> = model.keys().copied().collect();
    (!live.is_empty()).then(|| live[who % live.len()])
}

struct Run {
    world: World,
    model: BTreeMap<Entity, Model>,
    snapshot: Option<(Snapshot, BTreeMap<Entity, Model>)>,
}

impl Run {
    fn new() -> Self {
        let mut world = World::new();
        world.register_sparse::<Label>().unwrap();
        world.register_sparse::<Marked>().unwrap();
        world.register_sparse::<Wide>().unwrap();
        world.snapshot_by_copy::<Pos>();
        world.snapshot_by_clone::<Label>();
        world.snapshot_by_copy::<Marked>();
        world.snapshot_by_copy::<Wide>();
        Run {
            world,
            model: BTreeMap::new(),
            snapshot: None,
        }
    }

    fn step(&mut self, op: &Op) {
        let w = &mut self.world;
        match op.clone() {
            Op::Spawn(p, l, m, x) => {
                let mut b = doecs::EntityBuilder::new();
                if let Some(p) = p {
                    b.add(Pos(p));
                }
                if let Some(l) = l {
                    b.add(Label(format!("l{l}")));
                }
                if m {
                    b.add(Marked);
                }
                if let Some(x) = x {
                    b.add(Wide(x));
                }
                let e = w.spawn(&mut b);
                self.model.insert(
                    e,
                    Model {
                        pos: p,
                        label: l.map(|l| format!("l{l}")),
                        marked: m,
                        wide: x,
                    },
                );
            }
            Op::InsertLabel(who, l) => {
                let Some(e) = pick(&self.model, who) else {
                    return;
                };
                w.insert_one(e, Label(format!("i{l}"))).unwrap();
                self.model.get_mut(&e).unwrap().label = Some(format!("i{l}"));
            }
            Op::InsertMixed(who, p, x) => {
                let Some(e) = pick(&self.model, who) else {
                    return;
                };
                w.insert(e, (Wide(x), Pos(p))).unwrap();
                let m = self.model.get_mut(&e).unwrap();
                m.wide = Some(x);
                m.pos = Some(p);
            }
            Op::Mark(who) => {
                let Some(e) = pick(&self.model, who) else {
                    return;
                };
                w.insert_one(e, Marked).unwrap();
                self.model.get_mut(&e).unwrap().marked = true;
            }
            Op::RemoveLabel(who) => {
                let Some(e) = pick(&self.model, who) else {
                    return;
                };
                let got = w.remove_one::<Label>(e).ok().map(|l| l.0);
                assert_eq!(got, self.model.get_mut(&e).unwrap().label.take());
            }
            Op::RemoveMixed(who) => {
                let Some(e) = pick(&self.model, who) else {
                    return;
                };
                let m = self.model.get_mut(&e).unwrap();
                match w.remove::<(Pos, Wide)>(e) {
                    Ok((p, x)) => {
                        assert_eq!((Some(p.0), Some(x.0)), (m.pos, m.wide));
                        m.pos = None;
                        m.wide = None;
                    }
                    Err(_) => assert!(m.pos.is_none() || m.wide.is_none()),
                }
            }
            Op::Unmark(who) => {
                let Some(e) = pick(&self.model, who) else {
                    return;
                };
                let had = w.remove_one::<Marked>(e).is_ok();
                let m = self.model.get_mut(&e).unwrap();
                assert_eq!(had, m.marked);
                m.marked = false;
            }
            Op::Despawn(who) => {
                let Some(e) = pick(&self.model, who) else {
                    return;
                };
                w.despawn(e).unwrap();
                self.model.remove(&e);
            }
            Op::BatchMark(whos) => {
                let es: Vec<Entity> = whos
                    .iter()
                    .filter_map(|&who| pick(&self.model, who))
                    .collect();
                w.insert_batch(es.iter().map(|&e| (e, (Marked,)))).unwrap();
                for e in es {
                    self.model.get_mut(&e).unwrap().marked = true;
                }
            }
            Op::Buffered(who, l) => {
                let Some(e) = pick(&self.model, who) else {
                    return;
                };
                let mut commands = CommandBuffer::new();
                commands.remove::<(Marked,)>(e);
                commands.insert(e, (Label(format!("b{l}")),));
                w.apply(&mut commands);
                let m = self.model.get_mut(&e).unwrap();
                m.marked = false;
                m.label = Some(format!("b{l}"));
            }
            Op::AddToWide(k) => {
                w.query_mut::<Sparse<&mut Wide>>().for_each(|x| x.0 += k);
                for m in self.model.values_mut() {
                    if let Some(x) = &mut m.wide {
                        *x += k;
                    }
                }
            }
            Op::Snapshot => {
                let mut snap = Snapshot::new();
                w.snapshot_into(&mut snap).unwrap();
                self.snapshot = Some((snap, self.model.clone()));
            }
            Op::Restore => {
                if let Some((snap, model)) = &self.snapshot {
                    w.restore(snap).unwrap();
                    self.model = model.clone();
                }
            }
        }
        self.check();
    }

    fn check(&mut self) {
        let w = &mut self.world;
        w.check_invariants();
        assert_eq!(w.len(), self.model.len());
        for (&e, m) in &self.model {
            assert_eq!(w.get::<Pos>(e).ok().map(|p| p.0), m.pos, "{e:?}");
            assert_eq!(
                w.get::<Label>(e).ok().map(|l| l.0.clone()),
                m.label,
                "{e:?}"
            );
            assert_eq!(w.contains::<Marked>(e), m.marked, "{e:?}");
            assert_eq!(w.get::<Wide>(e).ok().map(|x| x.0), m.wide, "{e:?}");
        }
        // The set walk of a sparse-only query.
        let mut walked = Vec::new();
        w.query_mut::<(Entity, Sparse<&Label>)>()
            .for_each(|(e, l)| walked.push((e, l.0.clone())));
        walked.sort();
        let expected: Vec<(Entity, String)> = self
            .model
            .iter()
            .filter_map(|(&e, m)| Some((e, m.label.clone()?)))
            .collect();
        assert_eq!(walked, expected);
        // The archetype walk of a mixed query.
        let mut mixed: Vec<(Entity, u32, bool)> = w
            .query::<(Entity, &Pos, Sparse<&Wide>, Sparse<Has<Marked>>)>()
            .iter()
            .map(|(e, p, x, m)| {
                assert_eq!(x.0, self.model[&e].wide.unwrap());
                (e, p.0, m)
            })
            .collect();
        mixed.sort();
        let expected: Vec<(Entity, u32, bool)> = self
            .model
            .iter()
            .filter(|(_, m)| m.wide.is_some())
            .filter_map(|(&e, m)| Some((e, m.pos?, m.marked)))
            .collect();
        assert_eq!(mixed, expected);
        // Sparse components never make archetypes.
        for arch in doecs::raw::archetypes(w).iter() {
            for &id in arch.components() {
                assert!(!w.components().info(id).is_sparse());
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: if cfg!(miri) { 4 } else { 256 },
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn sparse_components_match_the_model(ops in prop::collection::vec(op(), 1..if cfg!(miri) { 20 } else { 60 })) {
        let mut run = Run::new();
        for op in &ops {
            run.step(op);
        }
    }
}
