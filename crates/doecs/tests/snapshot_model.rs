//! Snapshot property tests: a random world, a snapshot, random operations,
//! a restore — the world equals the snapshot moment in every id,
//! generation, free-queue position, value and iteration order; and drop
//! counting through snapshot/restore cycles: every value is dropped exactly
//! once. Runs under Miri with strict provenance (few cases).

use doecs::prelude::*;
use doecs::Snapshot;
use proptest::prelude::*;
use std::sync::atomic::{AtomicIsize, Ordering};
use std::sync::Arc;

#[derive(Copy, Clone, Debug, PartialEq)]
struct Pos(f32, f32);
#[derive(Copy, Clone, Debug, PartialEq)]
struct Marker;
#[derive(Copy, Clone, Debug, PartialEq)]
#[repr(C, align(64))]
struct Wide(u8, u64);
#[derive(Clone, Debug, PartialEq)]
struct Name(String);

/// Counts live values: +1 per construction or clone, -1 per drop. A double
/// drop would take the count below the number of live values; a leak would
/// leave it above zero at the end.
#[derive(Debug)]
struct Counted(u32, Arc<AtomicIsize>);

impl Counted {
    fn new(v: u32, live: &Arc<AtomicIsize>) -> Self {
        live.fetch_add(1, Ordering::SeqCst);
        Counted(v, live.clone())
    }
}

impl Clone for Counted {
    fn clone(&self) -> Self {
        Counted::new(self.0, &self.1)
    }
}

impl Drop for Counted {
    fn drop(&mut self) {
        self.1.fetch_sub(1, Ordering::SeqCst);
    }
}

impl PartialEq for Counted {
    fn eq(&self, other: &Self) -> bool {
        self.0 == other.0
    }
}

fn world() -> World {
    let mut world = World::with_config(doecs::WorldConfig {
        min_free_indices: 4,
        ..Default::default()
    });
    world.snapshot_by_copy::<Pos>();
    world.snapshot_by_copy::<Marker>();
    world.snapshot_by_copy::<Wide>();
    world.snapshot_by_clone::<Name>();
    world.snapshot_by_clone::<Counted>();
    world
}

/// Everything observable: the ids (generations, free FIFO) and every entity
/// in iteration order with its values.
fn dump(world: &mut World) -> (doecs::raw::EntityTableImage, Vec<String>) {
    let mut rows = Vec::new();
    world
        .query_mut::<(
            Entity,
            Option<&Pos>,
            Option<&Marker>,
            Option<&Wide>,
            Option<&Name>,
            Option<&Counted>,
        )>()
        .for_each(|(e, p, m, w, n, c)| {
            rows.push(format!(
                "{e:?} {p:?} {m:?} {w:?} {n:?} {:?}",
                c.map(|c| c.0)
            ))
        });
    (world.entities().image().unwrap(), rows)
}

#[derive(Clone, Debug)]
enum Op {
    Spawn(u8, u32),
    Despawn(usize),
    Insert(usize, u8, u32),
    Remove(usize, u8),
    Write(usize, f32),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => (any::<u8>(), any::<u32>()).prop_map(|(k, v)| Op::Spawn(k, v)),
        2 => any::<usize>().prop_map(Op::Despawn),
        2 => (any::<usize>(), any::<u8>(), any::<u32>()).prop_map(|(e, k, v)| Op::Insert(e, k, v)),
        1 => (any::<usize>(), any::<u8>()).prop_map(|(e, k)| Op::Remove(e, k)),
        2 => (any::<usize>(), any::<f32>()).prop_map(|(e, x)| Op::Write(e, x)),
    ]
}

fn apply(world: &mut World, live: &mut Vec<Entity>, op: &Op, counter: &Arc<AtomicIsize>) {
    let pick = |live: &Vec<Entity>, i: usize| live.get(i % live.len().max(1)).copied();
    match *op {
        Op::Spawn(kinds, v) => {
            let mut b = doecs::EntityBuilder::new();
            if kinds & 1 != 0 {
                b.add(Pos(v as f32, 0.5));
            }
            if kinds & 2 != 0 {
                b.add(Marker);
            }
            if kinds & 4 != 0 {
                b.add(Wide(v as u8, u64::from(v)));
            }
            if kinds & 8 != 0 {
                b.add(Name(format!("n{v}")));
            }
            if kinds & 16 != 0 {
                b.add(Counted::new(v, counter));
            }
            live.push(world.spawn(&mut b));
        }
        Op::Despawn(i) => {
            if !live.is_empty() {
                let e = live.swap_remove(i % live.len());
                world.despawn(e).unwrap();
            }
        }
        Op::Insert(i, kind, v) => {
            if let Some(e) = pick(live, i) {
                match kind % 3 {
                    0 => world.insert_one(e, Pos(v as f32, 1.0)).unwrap(),
                    1 => world.insert_one(e, Name(v.to_string())).unwrap(),
                    _ => world.insert_one(e, Counted::new(v, counter)).unwrap(),
                }
            }
        }
        Op::Remove(i, kind) => {
            if let Some(e) = pick(live, i) {
                let _ = match kind % 3 {
                    0 => world.remove_one::<Pos>(e).map(drop),
                    1 => world.remove_one::<Marker>(e).map(drop),
                    _ => world.remove_one::<Counted>(e).map(drop),
                };
            }
        }
        Op::Write(i, x) => {
            if let Some(e) = pick(live, i) {
                if let Ok(p) = world.get_mut::<Pos>(e) {
                    p.0 = x;
                }
            }
        }
    }
}

fn config() -> ProptestConfig {
    if cfg!(miri) {
        ProptestConfig {
            cases: 3,
            failure_persistence: None,
            ..ProptestConfig::default()
        }
    } else {
        ProptestConfig::with_cases(96)
    }
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn restore_returns_to_the_snapshot_moment(
        before in prop::collection::vec(op(), 0..60),
        after in prop::collection::vec(op(), 0..60),
        after_second in prop::collection::vec(op(), 0..20),
    ) {
        let counter = Arc::new(AtomicIsize::new(0));
        let mut world = world();
        let mut live = Vec::new();
        for op in &before {
            apply(&mut world, &mut live, op, &counter);
        }
        let at_snapshot = dump(&mut world);
        let live_at_snapshot = live.clone();
        let mut snapshot = Snapshot::new();
        world.snapshot_into(&mut snapshot).unwrap();
        for op in &after {
            apply(&mut world, &mut live, op, &counter);
        }
        world.restore(&snapshot).unwrap();
        world.check_invariants();
        prop_assert_eq!(&dump(&mut world), &at_snapshot);
        // The same snapshot again, after more changes.
        let mut live = live_at_snapshot;
        for op in &after_second {
            apply(&mut world, &mut live, op, &counter);
        }
        world.restore(&snapshot).unwrap();
        prop_assert_eq!(&dump(&mut world), &at_snapshot);
        drop(world);
        drop(snapshot);
        prop_assert_eq!(counter.load(Ordering::SeqCst), 0, "every value dropped exactly once");
    }
}

#[test]
fn drop_counts_through_snapshot_restore_cycles() {
    let counter = Arc::new(AtomicIsize::new(0));
    let mut world = world();
    let n = if cfg!(miri) { 20 } else { 500 };
    let es: Vec<Entity> = (0..n)
        .map(|i| world.spawn((Counted::new(i, &counter), Pos(i as f32, 0.0))))
        .collect();
    assert_eq!(counter.load(Ordering::SeqCst), n as isize);
    let mut snapshot = Snapshot::new();
    for round in 0..4u32 {
        world.snapshot_into(&mut snapshot).unwrap();
        // World and snapshot each hold n values.
        assert_eq!(
            counter.load(Ordering::SeqCst),
            2 * n as isize,
            "round {round}"
        );
        for &e in es.iter().step_by(3) {
            world.despawn(e).unwrap();
        }
        for i in 0..10 {
            world.spawn((Counted::new(1000 + i, &counter),));
        }
        world.restore(&snapshot).unwrap();
        assert_eq!(
            counter.load(Ordering::SeqCst),
            2 * n as isize,
            "round {round}"
        );
        assert!(es.iter().all(|&e| world.alive(e)));
    }
    drop(snapshot);
    assert_eq!(counter.load(Ordering::SeqCst), n as isize);
    drop(world);
    assert_eq!(counter.load(Ordering::SeqCst), 0);
}
