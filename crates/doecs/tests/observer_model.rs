//! Observers against a naive model: random hierarchies, global and entity
//! observers (some stopping propagation at chosen entities), triggers of a
//! propagating and a non-propagating event on random targets, observers
//! removed and entities despawned (with their subtrees and their
//! observers). After every step, the observers that ran, in order, with the
//! target and origin each saw, must be exactly what the model predicts.

use doecs::prelude::*;
use proptest::prelude::*;
use std::sync::{Arc, Mutex};

/// Propagates up `ChildOf`.
struct Hit;
impl Event for Hit {
    const PROPAGATE: bool = true;
}
/// Stays on its targets.
struct Ping;
impl Event for Ping {}

/// (observer number, target index, origin index): what ran.
type Log = Arc<Mutex<Vec<(usize, usize, usize)>>>;

#[derive(Clone, Debug)]
enum Op {
    /// An observer of `Hit` (or `Ping`), global or on an entity, that stops
    /// propagation at the entities in `stops`.
    Observe {
        hit: bool,
        on: Option<usize>,
        stops: Vec<usize>,
    },
    Unobserve(usize),
    Trigger {
        hit: bool,
        targets: Vec<usize>,
    },
    Despawn(usize),
}

fn op(n: usize) -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => (any::<bool>(), proptest::option::of(0..n), proptest::collection::vec(0..n, 0..3))
            .prop_map(|(hit, on, stops)| Op::Observe { hit, on, stops }),
        1 => (0..16usize).prop_map(Op::Unobserve),
        5 => (any::<bool>(), proptest::collection::vec(0..n, 1..4))
            .prop_map(|(hit, targets)| Op::Trigger { hit, targets }),
        1 => (0..n).prop_map(Op::Despawn),
    ]
}

/// An observer in the model.
struct ModelObserver {
    hit: bool,
    on: Option<usize>,
    stops: Vec<usize>,
    alive: bool,
}

const N: usize = 10;

fn run(parents: Vec<Option<usize>>, ops: Vec<Op>) {
    let mut world = World::new();
    let ids: Vec<Entity> = (0..N).map(|_| world.spawn(())).collect();
    let index_of = {
        let ids = ids.clone();
        move |e: Entity| ids.iter().position(|&x| x == e).unwrap()
    };
    let mut alive = [true; N];
    let mut parent = [None; N];
    for (child, p) in parents.iter().enumerate() {
        // Parents come before children: no cycles.
        if let Some(p) = p.filter(|&p| p < child) {
            world.add_pair(ids[child], ids[p], ChildOf).unwrap();
            parent[child] = Some(p);
        }
    }
    let log: Log = Arc::default();
    let mut model: Vec<ModelObserver> = Vec::new();
    let mut handles = Vec::new();

    for op in ops {
        let mut want = Vec::new();
        match op {
            Op::Observe { hit, on, stops } => {
                if on.is_some_and(|i| !alive[i]) {
                    continue;
                }
                let number = model.len();
                let (log, index_of) = (log.clone(), index_of.clone());
                let stop_at: Vec<Entity> = stops.iter().map(|&i| ids[i]).collect();
                let handle = if hit {
                    let body = move |mut t: Trigger<Hit>| {
                        let (at, from) = (t.target().unwrap(), t.origin().unwrap());
                        log.lock()
                            .unwrap()
                            .push((number, index_of(at), index_of(from)));
                        if stop_at.contains(&at) {
                            t.propagate(false);
                        }
                    };
                    match on {
                        Some(i) => world.observe_entity(ids[i], body),
                        None => world.observe(body),
                    }
                } else {
                    let body = move |t: Trigger<Ping>| {
                        let (at, from) = (t.target().unwrap(), t.origin().unwrap());
                        log.lock()
                            .unwrap()
                            .push((number, index_of(at), index_of(from)));
                    };
                    match on {
                        Some(i) => world.observe_entity(ids[i], body),
                        None => world.observe(body),
                    }
                };
                handles.push(handle.unwrap());
                model.push(ModelObserver {
                    hit,
                    on,
                    stops,
                    alive: true,
                });
            }
            Op::Unobserve(k) => {
                if k < model.len() {
                    let was = model[k].alive;
                    assert_eq!(world.remove_observer(handles[k]), was);
                    model[k].alive = false;
                }
            }
            Op::Trigger { hit, targets } => {
                let entities: Vec<Entity> = targets.iter().map(|&i| ids[i]).collect();
                if hit {
                    world.trigger_targets(Hit, entities).unwrap();
                } else {
                    world.trigger_targets(Ping, entities).unwrap();
                }
                for &origin in &targets {
                    let mut at = origin;
                    loop {
                        if !alive[at] {
                            break;
                        }
                        let mut stopped = false;
                        for (k, o) in model.iter().enumerate() {
                            if o.alive && o.hit == hit && o.on.is_none_or(|i| i == at) {
                                want.push((k, at, origin));
                                stopped |= hit && o.stops.contains(&at);
                            }
                        }
                        match parent[at] {
                            Some(p) if hit && !stopped => at = p,
                            _ => break,
                        }
                    }
                }
            }
            Op::Despawn(i) => {
                if !alive[i] {
                    continue;
                }
                world.despawn(ids[i]).unwrap();
                // The subtree goes with it, and its entities' observers.
                let mut doomed = vec![i];
                while let Some(d) = doomed.pop() {
                    alive[d] = false;
                    for o in model.iter_mut().filter(|o| o.on == Some(d)) {
                        o.alive = false;
                    }
                    doomed.extend((0..N).filter(|&c| alive[c] && parent[c] == Some(d)));
                }
            }
        }
        let seen = std::mem::take(&mut *log.lock().unwrap());
        assert_eq!(seen, want);
        let live = model.iter().filter(|o| o.alive).count();
        assert_eq!(world.observers().count(), live, "observers listed");
    }
}

proptest! {
    // Under Miri: a few cases, and no failure file (no file system).
    #![proptest_config(ProptestConfig {
        cases: if cfg!(miri) { 2 } else { 256 },
        failure_persistence: if cfg!(miri) {
            None
        } else {
            ProptestConfig::default().failure_persistence
        },
        ..ProptestConfig::default()
    })]

    #[test]
    fn observers_match_a_naive_model(
        parents in proptest::collection::vec(proptest::option::of(0..N), N),
        ops in proptest::collection::vec(op(N), 1..40),
    ) {
        run(parents, ops);
    }
}
