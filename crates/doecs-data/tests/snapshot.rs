//! The data store in world snapshots: a restore puts every record back byte
//! for byte (stamps included), with the arena's accounting, the clock, the
//! key registry (names and collision checks) and the lazy collector, so the
//! same operations after a restore give the same store.

use doecs::{DestroyNotice, Entity, Snapshot, World};
use doecs_data::{DataError, DataStore, Key, StoreConfig};
use serde_json::json;
use std::collections::HashMap;

#[derive(Copy, Clone, Debug, PartialEq)]
struct Tag(u32);

/// A small deterministic generator (xorshift64).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// Everything observable about the store for the `known` entities.
#[derive(Debug, PartialEq)]
struct State {
    records: Vec<Option<Vec<u8>>>,
    json: Vec<Option<serde_json::Value>>,
    len: usize,
    clock: u32,
    arena: usize,
    dead: usize,
    paths: usize,
}

fn state(world: &World, known: &[Entity]) -> State {
    let store = world.manager::<DataStore>().unwrap();
    store.check_invariants();
    State {
        records: known.iter().map(|&e| store.to_bytes(e)).collect(),
        json: known.iter().map(|&e| store.to_json(e).unwrap()).collect(),
        len: store.len(),
        clock: store.clock(),
        arena: store.arena_bytes(),
        dead: store.dead_bytes(),
        paths: store.known_paths(),
    }
}

/// Asserts equal states, naming the first difference.
#[track_caller]
fn assert_same(a: &State, b: &State) {
    assert_eq!(
        (a.len, a.clock, a.arena, a.dead, a.paths),
        (b.len, b.clock, b.arena, b.dead, b.paths),
        "len, clock, arena bytes, dead bytes, known paths"
    );
    assert_eq!(a.records.len(), b.records.len());
    for (k, (x, y)) in a.records.iter().zip(&b.records).enumerate() {
        assert_eq!(x, y, "record bytes of known entity {k}");
    }
    assert_eq!(a.json, b.json);
}

fn world_with(notice: DestroyNotice, n: u32) -> (World, Vec<Entity>) {
    let mut world = World::new();
    world.snapshot_by_copy::<Tag>();
    world.add_manager(
        DataStore::with_config(StoreConfig {
            keep_names: true,
            compact_min_dead_bytes: 256,
            ..StoreConfig::default()
        }),
        notice,
    );
    let es = world.spawn_batch((0..n).map(|i| (Tag(i),)));
    let store = world.manager_mut::<DataStore>().unwrap();
    for (i, &e) in es.iter().enumerate() {
        store.set(e, "hp", i as f32).unwrap();
        store.set(e, "name", "grunt").unwrap();
    }
    (world, es)
}

/// `frames` frames of random store work seeded by `seed`: sets (in place
/// and growing), removes, JSON, new paths, spawns, despawns, destroys,
/// compaction and lazy collection.
fn frames(world: &mut World, known: &mut Vec<Entity>, seed: u64, frames: usize) {
    let mut rng = Rng(seed);
    for _ in 0..frames {
        for _ in 0..30 {
            let op = rng.below(100);
            let e = known[rng.below(known.len())];
            let x = rng.below(1000) as f32;
            if op < 8 {
                let new = world.spawn((Tag(known.len() as u32),));
                known.push(new);
                let store = world.manager_mut::<DataStore>().unwrap();
                store.set(new, "hp", x).unwrap();
            } else if op < 14 {
                let _ = world.despawn(e);
            } else {
                if !world.alive(e) {
                    continue;
                }
                let store = world.manager_mut::<DataStore>().unwrap();
                match op {
                    14..=40 => {
                        store.set(e, "hp", x).unwrap();
                    }
                    41..=55 => {
                        let s = "y".repeat(rng.below(30));
                        store.set(e, "name", s.as_str()).unwrap();
                    }
                    56..=62 => {
                        let path = format!("extra.k{}", rng.below(40));
                        store.set(e, path.as_str(), x > 500.0).unwrap();
                    }
                    63..=70 => {
                        let _ = store.remove(e, "name");
                    }
                    71..=76 => {
                        store
                            .set_json(e, &json!({"stats": {"str": x, "pos": [x, 1.0, 2.0]}}))
                            .unwrap();
                    }
                    77..=80 => {
                        store.destroy(e);
                    }
                    81 => store.compact(),
                    _ => {
                        store.set(e, "hp", -x).unwrap();
                    }
                }
            }
        }
        world.collect_garbage();
    }
}

fn round_trip(notice: DestroyNotice) {
    let (mut world, mut known) = world_with(notice, 200);
    frames(&mut world, &mut known, 3, 4);
    let at_snapshot = known.len();
    let mut snapshot = Snapshot::new();
    world.snapshot_into(&mut snapshot).unwrap();
    let before = state(&world, &known);

    frames(&mut world, &mut known, 77, 10);
    let after_first = state(&world, &known);
    assert_ne!(after_first, before, "the frames changed something");

    world.restore(&snapshot).unwrap();
    world.check_invariants();
    assert_same(&state(&world, &known[..at_snapshot]), &before);
    let store = world.manager::<DataStore>().unwrap();
    for &e in &known[at_snapshot..] {
        assert!(
            !store.contains(e),
            "no record for {e:?}, made after the snapshot"
        );
    }

    // The same frames again: the same entities, the same bytes.
    let mut again = known[..at_snapshot].to_vec();
    frames(&mut world, &mut again, 77, 10);
    assert_eq!(again, known);
    assert_same(&state(&world, &known), &after_first);

    // A second snapshot into the same buffer.
    world.snapshot_into(&mut snapshot).unwrap();
    frames(&mut world, &mut again, 1234, 5);
    world.restore(&snapshot).unwrap();
    assert_same(&state(&world, &known), &after_first);
    world.check_invariants();
}

#[test]
fn callback_store_round_trips() {
    round_trip(DestroyNotice::Callback);
}

#[test]
fn lazy_gc_store_round_trips() {
    round_trip(DestroyNotice::LazyGc);
}

/// Finds two different one-segment paths whose 32-bit keys collide (a
/// birthday search, so about 2^16 tries).
fn colliding_pair() -> (String, String) {
    let mut seen: HashMap<u32, String> = HashMap::new();
    for i in 0.. {
        let name = format!("key{i}");
        let h = Key::parse(&name).unwrap().hash32().0;
        if let Some(other) = seen.insert(h, name.clone()) {
            return (other, name);
        }
    }
    unreachable!()
}

#[test]
fn the_key_registry_comes_back() {
    // A path registered after the snapshot is forgotten by the restore, so
    // the path it collides with is admitted afterwards, and reads through
    // the forgotten path are checked again (not answered from the cache).
    let (a, b) = colliding_pair();
    for keep_names in [false, true] {
        let mut world = World::new();
        world.snapshot_by_copy::<Tag>();
        let config = StoreConfig {
            keep_names,
            ..StoreConfig::default()
        };
        world.add_manager(DataStore::with_config(config), DestroyNotice::Callback);
        let e = world.spawn((Tag(0),));
        let mut snapshot = Snapshot::new();
        world.snapshot_into(&mut snapshot).unwrap();
        let store = world.manager_mut::<DataStore>().unwrap();
        store.set(e, a.as_str(), 1.0).unwrap();
        assert_eq!(store.get_f32(e, a.as_str()), Some(1.0));
        assert!(matches!(
            store.set(e, b.as_str(), 2.0),
            Err(DataError::KeyCollision { .. })
        ));
        world.restore(&snapshot).unwrap();
        let store = world.manager_mut::<DataStore>().unwrap();
        assert_eq!(store.known_paths(), 0);
        assert!(!store.contains(e));
        store.set(e, b.as_str(), 2.0).unwrap();
        assert_eq!(store.get_f32(e, b.as_str()), Some(2.0));
        assert_eq!(
            store.get_f32(e, a.as_str()),
            None,
            "`a` does not read `b`'s value"
        );
        if keep_names {
            let exported = store.to_json(e).unwrap().unwrap();
            assert_eq!(exported[b.as_str()].as_f64(), Some(2.0));
            assert!(exported.get(a.as_str()).is_none());
        }
        store.check_invariants();
    }
}

use doecs_benchkit::alloc_count as counting;

#[global_allocator]
static ALLOCATOR: counting::Counting = counting::Counting;

#[test]
fn steady_state_save_and_restore_allocate_nothing() {
    use doecs::ComponentManager;
    let (mut world, mut known) = world_with(DestroyNotice::Callback, 300);
    frames(&mut world, &mut known, 8, 3);
    let mut store = world.remove_manager::<DataStore>().unwrap();
    let mut saved = None;
    assert!(store.save_state(&mut saved));
    // In-place writes of known paths: the sizes stay.
    for (i, &e) in known.iter().enumerate().step_by(3) {
        if store.has(e, "hp") {
            store.set(e, "hp", i as f32 * 0.5).unwrap();
        }
    }
    let n = counting::allocations(|| {
        assert!(store.save_state(&mut saved));
        store.restore_state(&**saved.as_ref().unwrap());
        assert!(store.save_state(&mut saved));
    });
    assert_eq!(n, 0, "allocations in a steady-state save and restore");
    // The counter counts: a save into an empty buffer allocates.
    let mut fresh = None;
    assert!(
        counting::allocations(|| {
            store.save_state(&mut fresh);
        }) > 0
    );
    store.check_invariants();
}
