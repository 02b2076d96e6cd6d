//! Stale handles across index reuse: the free-index FIFO waits for
//! `MIN_FREE_INDICES` freed indices before reusing one, a reused index gets a
//! new generation so old copies stay dead, every operation refuses a stale
//! handle with `NoSuchEntity`, and a slot whose generation would wrap is
//! retired for good.

use doecs::{Entity, EntityError, World, WorldConfig, MIN_FREE_INDICES};

#[derive(Debug, Clone, Copy, PartialEq)]
struct Hp(u32);
#[derive(Debug, Clone, Copy, PartialEq)]
struct Armor(u8);

/// Every entity operation on `stale` fails with `NoSuchEntity` and changes nothing.
fn assert_refused(world: &mut World, stale: Entity) {
    let before = world.len();
    assert!(!world.alive(stale));
    assert!(!world.contains::<Hp>(stale));
    let dead = EntityError::NoSuchEntity(stale);
    assert_eq!(world.get::<Hp>(stale).unwrap_err(), dead);
    assert_eq!(world.get_mut::<Hp>(stale).unwrap_err(), dead);
    assert_eq!(world.insert_one(stale, Hp(1)).unwrap_err(), dead);
    assert_eq!(world.insert(stale, (Hp(1), Armor(2))).unwrap_err(), dead);
    assert_eq!(world.remove_one::<Hp>(stale).unwrap_err(), dead);
    assert_eq!(world.remove::<(Hp,)>(stale).unwrap_err(), dead);
    let id = world.component_id::<Hp>();
    assert_eq!(world.remove_by_id(stale, id).unwrap_err(), dead);
    assert_eq!(doecs::raw::get_ptr(world, stale, id).unwrap_err(), dead);
    assert_eq!(world.despawn(stale).unwrap_err(), dead);
    assert_eq!(world.despawn_batch(&[stale, stale]), 0);
    assert_eq!(world.query::<&Hp>().get(stale).unwrap_err(), dead);
    assert_eq!(doecs::raw::location(world, stale).unwrap_err(), dead);
    assert_eq!(world.len(), before);
    world.check_invariants();
}

#[test]
fn default_threshold_is_1024() {
    assert_eq!(MIN_FREE_INDICES, 1024);
    assert_eq!(WorldConfig::default().min_free_indices, 1024);
    assert_eq!(World::new().entities().min_free_indices(), 1024);
}

#[test]
fn indices_wait_for_the_threshold_then_come_back_with_new_generations() {
    let threshold = if cfg!(miri) { 16 } else { MIN_FREE_INDICES };
    let mut world = World::with_config(WorldConfig {
        min_free_indices: threshold,
        ..WorldConfig::default()
    });
    let first: Vec<Entity> = (0..threshold as u32)
        .map(|i| world.spawn((Hp(i),)))
        .collect();
    // Free all but one: below the threshold, spawns take fresh indices.
    for &e in &first[..threshold - 1] {
        world.despawn(e).unwrap();
    }
    let fresh = world.spawn((Hp(0),));
    assert_eq!(
        fresh.index() as usize,
        threshold,
        "no reuse below the threshold"
    );
    assert_eq!(world.entities().free_count(), threshold - 1);
    // One more free reaches the threshold: the oldest freed index comes back.
    world.despawn(first[threshold - 1]).unwrap();
    let reused = world.spawn((Hp(99), Armor(1)));
    assert_eq!(
        reused.index(),
        first[0].index(),
        "FIFO: oldest freed index first"
    );
    assert_ne!(reused.generation(), first[0].generation());
    assert_eq!(world.entities().free_count(), threshold - 1);
    // The old handle is dead although its index is alive again.
    assert!(world.alive(reused));
    assert_refused(&mut world, first[0]);
    assert_eq!(world.get::<Hp>(reused), Ok(&Hp(99)));
    // Below the threshold again: fresh indices.
    let next = world.spawn(());
    assert_eq!(next.index() as usize, threshold + 1);
    for &e in &first {
        assert!(!world.alive(e));
    }
    world.check_invariants();
}

#[test]
fn stale_handles_stay_dead_through_many_reuses() {
    let rounds = if cfg!(miri) { 5 } else { 200 };
    let mut world = World::with_config(WorldConfig {
        min_free_indices: 0,
        chunk_bytes: 128,
    });
    let mut graveyard: Vec<Entity> = Vec::new();
    let mut live = world.spawn((Hp(0),));
    for round in 1..=rounds {
        world.despawn(live).unwrap();
        graveyard.push(live);
        live = world.spawn((Hp(round), Armor(round as u8)));
        assert_eq!(live.index(), 0, "min_free_indices 0 reuses at once");
        assert_eq!(live.generation(), round);
    }
    for &dead in &graveyard {
        assert_refused(&mut world, dead);
    }
    // A forged handle from the future is dead as well.
    assert_refused(&mut world, Entity::from_parts(0, live.generation() + 1));
    assert_refused(&mut world, Entity::from_parts(1_000, 0));
    assert_refused(&mut world, Entity::from_parts(u32::MAX, u32::MAX));
    assert_eq!(world.get::<Hp>(live), Ok(&Hp(rounds)));
}

#[test]
fn batch_spawn_reuses_only_above_the_threshold() {
    let mut world = World::with_config(WorldConfig {
        min_free_indices: 4,
        ..WorldConfig::default()
    });
    let a = world.spawn_batch((0..10u32).map(|i| (Hp(i),)));
    let doomed = &a[..6];
    assert_eq!(world.despawn_batch(doomed), 6);
    // 6 waiting, threshold 4: three reuses are legal (each with >= 4 waiting).
    let b = world.spawn_batch((0..5u32).map(|i| (Hp(100 + i),)));
    let reused = b.iter().filter(|e| e.index() < 10).count();
    assert_eq!(reused, 3);
    let empties = world.spawn_batch((0..5).map(|_| ()));
    assert!(empties.iter().all(|e| e.index() >= 10), "3 waiting < 4");
    for &d in doomed {
        assert_refused(&mut world, d);
    }
    world.check_invariants();
}

#[test]
fn wrapping_generation_retires_the_slot() {
    let mut world = World::with_config(WorldConfig {
        min_free_indices: 0,
        ..WorldConfig::default()
    });
    let e = world.spawn((Hp(1),));
    let other = world.spawn((Hp(2),));
    let e = doecs::raw::debug_set_generation(&mut world, e, u32::MAX - 1).unwrap();
    world.check_invariants();
    assert_eq!(world.get::<Hp>(e), Ok(&Hp(1)));
    // One more cycle is still allowed: generation MAX - 1 -> MAX.
    world.despawn(e).unwrap();
    let last = world.spawn((Hp(3),));
    assert_eq!(last.index(), e.index());
    assert_eq!(last.generation(), u32::MAX);
    assert_eq!(world.entities().retired_count(), 0);
    // Freeing generation MAX would wrap to 0: the slot is retired instead.
    world.despawn(last).unwrap();
    assert_eq!(world.entities().retired_count(), 1);
    assert_eq!(world.entities().free_count(), 0);
    world.check_invariants();
    let fresh: Vec<Entity> = (0..8).map(|_| world.spawn((Hp(0),))).collect();
    assert!(
        fresh.iter().all(|f| f.index() != e.index()),
        "a retired index is never reused"
    );
    for g in [0, 1, u32::MAX - 1, u32::MAX] {
        assert_refused(&mut world, Entity::from_parts(e.index(), g));
    }
    // Other slots keep cycling.
    world.despawn(other).unwrap();
    let again = world.spawn(());
    assert_eq!(again.index(), other.index());
    assert_eq!(again.generation(), other.generation() + 1);
    world.check_invariants();
}

#[test]
fn reserved_entities_live_only_once_their_spawn_applies() {
    let mut world = World::new();
    let a = world.spawn((Hp(1),));
    let mut commands = doecs::CommandBuffer::new();
    let r = commands.spawn(&world, (Hp(7),));
    assert!(!world.alive(r));
    assert_eq!(world.get::<Hp>(r), Err(EntityError::NoSuchEntity(r)));
    // Until the spawn applies, the id is not alive, and other spawns never
    // take its index.
    let b = world.spawn((Hp(2),));
    assert_ne!(b.index(), r.index());
    assert!(world.entities().is_reserved(r));
    world.check_invariants();
    world.apply(&mut commands);
    assert!(world.alive(r));
    assert_eq!(world.get::<Hp>(r), Ok(&Hp(7)));
    assert_ne!(r, a);
    world.check_invariants();
    world.despawn(r).unwrap();
    assert_refused(&mut world, r);

    // An insert that names a reserved id first spawns it (as hecs does);
    // the buffer's own spawn then finds it taken and is reported.
    let mut commands = doecs::CommandBuffer::new();
    let s = commands.spawn(&world, (Hp(9),));
    assert_eq!(world.insert_one(s, Hp(8)), Ok(()));
    assert_eq!(world.get::<Hp>(s), Ok(&Hp(8)));
    let report = world.apply(&mut commands);
    assert_eq!(report.failed.len(), 1);
    assert_eq!(report.failed[0].error, EntityError::NoSuchEntity(s));
    assert_eq!(world.get::<Hp>(s), Ok(&Hp(8)));
    world.check_invariants();
}
