//! Worlds that share one id space.
//!
//! The original bug: a `SharedWorld` dereferenced to a `World`, so
//! `universe.world_mut(g).reserve_entity()` allocated from that world's own,
//! unused allocator and returned `0v0`, the id of a live universe entity; the
//! next insert gave that entity two rows. Also `world(g).entities().alive(b)`
//! was false while `world.alive(b)` was true. Now a universe's worlds are
//! `WorldCore`s, which have no allocator (reserving on one does not compile:
//! see `tests/ui`), and liveness has one answer.

use doecs::{Universe, WorldKey};

#[test]
fn liveness_has_one_answer_and_entering_a_world_is_another_question() {
    let mut universe = Universe::new();
    let (game, inventory) = (universe.add_world(), universe.add_world());
    let a = universe.spawn();
    let b = universe.spawn();
    universe.world_mut(game).insert_one(b, 1.5f32).unwrap();
    for (who, key) in [("game", game), ("inventory", inventory)] {
        let shared = universe.world_mut(key);
        for e in [a, b] {
            assert!(shared.alive(e), "{who}: {e} alive");
            assert_eq!(shared.alive(e), shared.entities().alive(e));
        }
    }
    assert!(universe.world(game).contains_entity(b));
    assert!(!universe.world(game).contains_entity(a));
    assert!(!universe.world(inventory).contains_entity(b));
    universe.despawn(b).unwrap();
    assert!(!universe.alive(b));
    assert!(!universe.world_mut(game).alive(b));
    assert!(!universe.world(game).contains_entity(b));
    universe.check_invariants();
}

#[test]
fn ids_come_only_from_the_universe() {
    let mut universe = Universe::new();
    let worlds: Vec<WorldKey> = (0..3).map(|_| universe.add_world()).collect();
    let mut all = Vec::new();
    for round in 0..50u32 {
        let e = universe.spawn();
        all.push(e);
        let key = worlds[round as usize % 3];
        universe.world_mut(key).insert_one(e, round).unwrap();
        universe
            .world_mut(worlds[0])
            .insert_one(e, round as u8)
            .unwrap();
        if round % 4 == 0 {
            universe.despawn(all[round as usize / 2]).ok();
        }
        universe.check_invariants();
    }
    let mut indices: Vec<u32> = all.iter().map(|e| e.index()).collect();
    indices.sort_unstable();
    indices.dedup();
    assert_eq!(indices.len(), all.len(), "no index handed out twice");
}

#[test]
fn a_shared_world_removes_exchanges_and_refuses_bad_bytes_unchanged() {
    use doecs::{ComponentDescriptor, EntityError};
    use std::alloc::Layout;
    let mut universe = Universe::new();
    let game = universe.add_world();
    let (a, b) = (universe.spawn(), universe.spawn());
    let mut shared = universe.world_mut(game);
    shared.insert(a, (1u32, 2u16)).unwrap();
    assert_eq!(shared.remove_one::<u16>(a), Ok(2));
    assert_eq!(shared.exchange::<(u32,), _>(a, (3.5f32,)), Ok((1,)));
    assert_eq!(shared.get::<f32>(a), Ok(&3.5));
    assert!(shared.remove::<(u32,)>(a).is_err(), "a lacks u32");
    let bytes = shared
        .register_component(ComponentDescriptor::dynamic(
            "Blob",
            Layout::new::<[u8; 4]>(),
        ))
        .unwrap();
    // A refused insert does not enter `b` into the world.
    assert!(matches!(
        shared.insert_bytes(b, bytes, &[1, 2, 3]),
        Err(EntityError::WrongSize {
            expected: 4,
            actual: 3,
            ..
        })
    ));
    assert!(!shared.contains_entity(b));
    shared.insert_bytes(b, bytes, &[1, 2, 3, 4]).unwrap();
    assert_eq!(shared.get_bytes(b, bytes), Ok(&[1u8, 2, 3, 4][..]));
    shared.remove_by_id(b, bytes).unwrap();
    assert!(!shared.has_id(b, bytes));
    universe.check_invariants();
}
