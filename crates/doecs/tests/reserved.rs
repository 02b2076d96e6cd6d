//! Reserved ids: an entity waiting to be spawned; a command on it spawns it.

use doecs::World;

#[test]
fn a_command_on_a_reserved_id_spawns_it() {
    #[derive(Debug, PartialEq)]
    struct X(u32);
    let mut world = World::new();
    // Through a command buffer, as hecs allows.
    let e = world.reserve_entity();
    let mut buffer = doecs::CommandBuffer::new();
    buffer.insert_one(e, X(1));
    let report = world.apply(&mut buffer);
    assert_eq!(report.failed, vec![]);
    assert_eq!(world.get::<X>(e), Ok(&X(1)));
    // Directly, with a bundle.
    let f = world.reserve_entity();
    world.insert(f, (X(2), 5u8)).unwrap();
    assert_eq!(world.get::<u8>(f), Ok(&5));
    // A remove spawns it empty, then finds nothing to remove.
    let g = world.reserve_entity();
    assert!(world.remove_one::<X>(g).is_err());
    assert!(world.alive(g));
    assert_eq!(world.entity(g).unwrap().components().count(), 0);
    // Explicitly.
    let h = world.reserve_entity();
    world.spawn_reserved(h, (X(3),)).unwrap();
    assert_eq!(world.get::<X>(h), Ok(&X(3)));
    assert!(
        world.spawn_reserved(h, (X(4),)).is_err(),
        "no longer reserved"
    );
    // Despawning a reserved id cancels it; no copy ever comes to life.
    let d = world.reserve_entity();
    world.despawn(d).unwrap();
    assert!(!world.alive(d));
    assert!(world.insert_one(d, X(5)).is_err());
    assert_eq!(world.len(), 4);
    world.check_invariants();
}
