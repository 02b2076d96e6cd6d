//! The data store as a component manager inside a world: despawned entities
//! release their records through the destroy callback or lazy gc, and the
//! arena compacts itself as records die.

use doecs::{DestroyNotice, Entity, World};
use doecs_data::{DataError, DataStore, Key, Record, StoreConfig};
use serde_json::json;
use std::collections::HashMap;

#[test]
fn despawn_releases_records_through_the_callback() {
    let mut world = World::new();
    world.add_manager(DataStore::new(), DestroyNotice::Callback);
    let es = world.spawn_batch((0..1000).map(|_| ()));
    let store = world.manager_mut::<DataStore>().unwrap();
    for (i, &e) in es.iter().enumerate() {
        store.set(e, "health", i as f32).unwrap();
        store.set(e, "name", "grunt").unwrap();
    }
    assert_eq!(store.len(), 1000);
    for &e in &es[..600] {
        world.despawn(e).unwrap();
    }
    let store = world.manager::<DataStore>().unwrap();
    store.check_invariants();
    assert_eq!(store.len(), 400);
    assert!(store.get_f32(es[0], "health").is_none());
    assert_eq!(store.get_f32(es[999], "health"), Some(999.0));
    // 60% of the arena died: it compacted itself.
    assert!(
        store.dead_bytes() * 2 <= store.arena_bytes(),
        "{} dead of {}",
        store.dead_bytes(),
        store.arena_bytes()
    );
}

#[test]
fn lazy_gc_sweeps_dead_records() {
    let mut world = World::new();
    world.add_manager(
        DataStore::with_config(StoreConfig {
            compact_min_dead_bytes: 0,
            ..StoreConfig::default()
        }),
        DestroyNotice::LazyGc,
    );
    let es = world.spawn_batch((0..200).map(|_| ()));
    let prefab = Record::from_json(&json!({"stats": {"health": 100, "mana": 50}})).unwrap();
    world
        .manager_mut::<DataStore>()
        .unwrap()
        .insert_record_many(&es, prefab.as_ref())
        .unwrap();
    world.despawn_batch(&es[..150]);
    assert_eq!(
        world.manager::<DataStore>().unwrap().len(),
        200,
        "lazy: nothing yet"
    );
    let mut sweeps = 0;
    while world.manager::<DataStore>().unwrap().len() > 50 {
        world.collect_garbage();
        sweeps += 1;
        assert!(sweeps < 1000, "gc makes progress");
    }
    let store = world.manager::<DataStore>().unwrap();
    store.check_invariants();
    for &e in &es[150..] {
        assert_eq!(store.get_f32(e, "stats.mana"), Some(50.0));
    }
    // With everything alive a sweep costs four probes and drops nothing.
    assert_eq!(world.collect_garbage(), 0);
}

#[test]
fn handles_survive_compaction_and_relocation() {
    let mut store = DataStore::with_config(StoreConfig {
        compact_min_dead_bytes: 0,
        compact_dead_fraction: 0.1,
        ..StoreConfig::default()
    });
    let es: Vec<Entity> = (0..50).map(|i| Entity::from_parts(i, 1)).collect();
    for round in 0..20 {
        for (i, &e) in es.iter().enumerate() {
            let s = "x".repeat((i + round * 3) % 40);
            store.set(e, "grow", s.as_str()).unwrap();
            store
                .set(e, format!("k{round}").as_str(), round as f32)
                .unwrap();
        }
        store.check_invariants();
    }
    for (i, &e) in es.iter().enumerate() {
        assert_eq!(store.get_str(e, "grow").unwrap().len(), (i + 19 * 3) % 40);
        for round in 0..20 {
            assert_eq!(
                store.get_f32(e, format!("k{round}").as_str()),
                Some(round as f32)
            );
        }
    }
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
fn hash_collisions_are_refused_never_merged() {
    let (a, b) = colliding_pair();
    assert_ne!(
        Key::parse(&a).unwrap(),
        Key::parse(&b).unwrap(),
        "different 64-bit keys"
    );
    let mut store = DataStore::with_names();
    let e = Entity::from_parts(0, 1);
    store.set(e, a.as_str(), 1.0).unwrap();
    let err = store.set(e, b.as_str(), 2.0).unwrap_err();
    match &err {
        DataError::KeyCollision { path, other, .. } => {
            assert_eq!(path, &b);
            assert_eq!(other.as_deref(), Some(a.as_str()));
        }
        other => panic!("expected a collision, got {other}"),
    }
    // The value of `a` is untouched and `b` reads as absent, not as `a`.
    assert_eq!(store.get_f32(e, a.as_str()), Some(1.0));
    assert_eq!(store.get_f32(e, b.as_str()), None);
    assert!(!store.has(e, b.as_str()));
    assert_eq!(store.remove(e, b.as_str()), Ok(false));
    // On another entity too: the registry is per store.
    assert!(store
        .set(Entity::from_parts(1, 1), b.as_str(), 3.0)
        .is_err());
    // Inside one JSON import.
    let mut fresh = DataStore::new();
    let j = json!({ a.clone(): 1, b.clone(): 2 });
    assert!(matches!(
        fresh.set_json(e, &j),
        Err(DataError::KeyCollision { .. })
    ));
    assert!(matches!(
        Record::from_json(&j),
        Err(DataError::KeyCollision { .. })
    ));
    assert!(!fresh.contains(e), "refused import changed nothing");
    store.check_invariants();
}

#[test]
fn stamps_renumber_when_the_clock_fills() {
    let mut store = DataStore::new();
    let (a, b) = (Entity::from_parts(0, 1), Entity::from_parts(1, 1));
    store.set(a, "x", 1.0).unwrap();
    store.debug_set_clock(u32::MAX - 2);
    store.set(a, "y", 2.0).unwrap(); // MAX - 1
    store.set(b, "x", 3.0).unwrap(); // MAX
    store.set(b, "y", 4.0).unwrap(); // renumbered, then newest
    store.check_invariants();
    let order = [
        store.stamp(a, "x").unwrap(),
        store.stamp(a, "y").unwrap(),
        store.stamp(b, "x").unwrap(),
        store.stamp(b, "y").unwrap(),
    ];
    assert!(order.windows(2).all(|w| w[0] < w[1]), "{order:?}");
    assert!(store.clock() < 10);
    // Merges still pick the newer value.
    let theirs = store.to_record(b).unwrap();
    store.merge(a, theirs.as_ref()).unwrap();
    assert_eq!(store.get_f32(a, "x"), Some(3.0));
}

#[test]
fn stale_and_reused_entities() {
    let mut store = DataStore::new();
    let old = Entity::from_parts(5, 1);
    let new = Entity::from_parts(5, 2);
    store.set(old, "hp", 1.0).unwrap();
    assert_eq!(
        store.get_f32(new, "hp"),
        None,
        "a new generation sees nothing"
    );
    store.set(new, "mana", 2.0).unwrap();
    assert_eq!(store.get_f32(old, "hp"), None, "the old record was dropped");
    assert_eq!(store.set(old, "hp", 1.0), Err(DataError::StaleEntity(old)));
    assert_eq!(store.len(), 1);
    store.check_invariants();
}

#[test]
fn merge_ties_converge() {
    // Two stores edit the same key concurrently with equal stamps: exchanging
    // records in either order converges on the same value.
    let e = Entity::from_parts(0, 1);
    let mut left = DataStore::new();
    let mut right = DataStore::new();
    left.set(e, "name", "left").unwrap();
    right.set(e, "name", "right").unwrap();
    let l = left.to_record(e).unwrap();
    let r = right.to_record(e).unwrap();
    left.merge(e, r.as_ref()).unwrap();
    right.merge(e, l.as_ref()).unwrap();
    assert_eq!(left.get_str(e, "name"), right.get_str(e, "name"));
    assert_eq!(
        left.get_str(e, "name"),
        Some("right"),
        "larger bytes win ties"
    );
    // A later local edit beats what was merged in (Lamport clock advanced).
    left.set(e, "name", "after").unwrap();
    let l2 = left.to_record(e).unwrap();
    right.merge(e, l2.as_ref()).unwrap();
    assert_eq!(right.get_str(e, "name"), Some("after"));
}

#[test]
fn records_over_64k_are_refused_without_change() {
    let mut store = DataStore::new();
    let e = Entity::from_parts(0, 1);
    store.set(e, "a", "x".repeat(40_000).as_str()).unwrap();
    let err = store.set(e, "b", "y".repeat(30_000).as_str()).unwrap_err();
    assert!(matches!(err, DataError::RecordTooLarge { .. }), "{err}");
    assert!(!store.has(e, "b"));
    assert_eq!(store.get_str(e, "a").unwrap().len(), 40_000);
    // Replacing the big value with a big value still fits (old bytes reclaimed).
    store.set(e, "a", "z".repeat(60_000).as_str()).unwrap();
    store.check_invariants();
    let big = json!({"a": "q".repeat(70_000)});
    assert!(matches!(
        store.apply_json(e, &big),
        Err(DataError::RecordTooLarge { .. })
    ));
    assert!(store.get_str(e, "a").unwrap().starts_with('z'));
}
