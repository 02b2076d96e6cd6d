//! A refused call leaves the world exactly as it was.
//!
//! The original bug: `world.spawn((1u32, 2u32))` allocated the entity before
//! finding that the bundle names `u32` twice, so after the panic the world
//! held a ghost: `len()` was 1, no query yielded it, and `check_invariants`
//! failed with "every live entity has a row". Every path that takes a bundle
//! (spawn, batch spawn, insert, command buffers, shared worlds) now checks it
//! before anything changes.

use doecs::{CommandBuffer, Entity, EntityError, Universe, World};
use std::panic::{catch_unwind, AssertUnwindSafe};

#[derive(Clone, Copy, Debug, PartialEq)]
struct A(u32);
#[derive(Clone, Copy, Debug, PartialEq)]
struct B(u8);

/// Everything observable about a world, to compare before and after.
#[derive(Debug, PartialEq)]
struct Observed {
    len: usize,
    slots: usize,
    reserved: usize,
    components: usize,
    archetypes: usize,
    rows: Vec<(Entity, Option<A>, Option<B>)>,
}

fn observe(world: &World) -> Observed {
    world.check_invariants();
    Observed {
        len: world.len(),
        slots: world.entities().slot_count(),
        reserved: world.entities().reserved_count(),
        components: world.components().len(),
        archetypes: doecs::raw::archetypes(world).len(),
        rows: world
            .query::<(Entity, Option<&A>, Option<&B>)>()
            .iter()
            .map(|(e, a, b)| (e, a.copied(), b.copied()))
            .collect(),
    }
}

fn duplicate_error(err: EntityError) {
    assert!(
        matches!(err, EntityError::DuplicateInBundle { component, .. } if component == "u32"),
        "{err:?}"
    );
    assert_eq!(
        err.to_string(),
        "bundle `(u32, u32)` names component `u32` twice"
    );
}

#[test]
fn a_spawn_of_a_malformed_bundle_panics_before_anything_changes() {
    let mut world = World::new();
    let before = observe(&world);
    let panic = catch_unwind(AssertUnwindSafe(|| world.spawn((1u32, 2u32)))).unwrap_err();
    let message = panic.downcast_ref::<String>().expect("a message");
    assert!(message.contains("names component `u32` twice"), "{message}");
    assert_eq!(
        observe(&world),
        before,
        "no ghost entity, nothing registered"
    );
    assert_eq!(world.len(), 0);
}

#[test]
fn try_spawn_refuses_with_a_typed_error() {
    let mut world = World::new();
    let keep = world.spawn((A(1), B(2)));
    let before = observe(&world);
    duplicate_error(world.try_spawn((1u32, 2u32)).unwrap_err());
    assert_eq!(observe(&world), before);
    // The world still works, and the next id is the one it would have been.
    let next = world.spawn((A(3),));
    assert_eq!(next.index(), keep.index() + 1);
}

#[test]
fn batch_spawn_refuses_before_anything_changes() {
    let mut world = World::new();
    world.spawn((A(1),));
    let before = observe(&world);
    let result = catch_unwind(AssertUnwindSafe(|| {
        world.spawn_batch((0..10u32).map(|i| (i, i)))
    }));
    assert!(result.is_err());
    assert_eq!(observe(&world), before);
    duplicate_error(
        world
            .try_spawn_batch((0..10u32).map(|i| (i, i)))
            .unwrap_err(),
    );
    assert_eq!(observe(&world), before);
}

#[test]
fn insert_of_a_malformed_bundle_is_refused() {
    let mut world = World::new();
    let e = world.spawn((A(1),));
    let before = observe(&world);
    duplicate_error(world.insert(e, (5u32, 6u32)).unwrap_err());
    assert_eq!(observe(&world), before);
    assert_eq!(world.get::<A>(e), Ok(&A(1)));
}

#[test]
fn refused_inserts_and_removes_change_nothing() {
    let mut world = World::new();
    let e = world.spawn((A(1),));
    let dead = world.spawn((A(2),));
    world.despawn(dead).unwrap();
    // Warm the registry so the refusals below cannot hide behind it.
    world.insert_one(e, B(0)).unwrap();
    world.remove_one::<B>(e).unwrap();
    let before = observe(&world);
    assert_eq!(
        world.insert_one(dead, B(1)),
        Err(EntityError::NoSuchEntity(dead))
    );
    assert!(world.remove_one::<B>(e).is_err());
    assert!(world.remove::<(A, B)>(e).is_err(), "B is missing: A stays");
    assert!(world.remove::<(A, f64)>(e).is_err(), "never registered");
    assert_eq!(world.despawn(dead), Err(EntityError::NoSuchEntity(dead)));
    assert_eq!(observe(&world), before);
}

#[test]
fn a_recorded_spawn_of_a_malformed_bundle_is_reported_and_leaves_no_ghost() {
    let mut world = World::new();
    world.spawn((A(1),));
    let mut commands = CommandBuffer::new();
    let ghost = commands.spawn(&world, (1u32, 2u32));
    commands.insert_one(ghost, A(5));
    let fine = commands.spawn(&world, (A(9),));
    let report = world.apply(&mut commands);
    assert_eq!(report.applied, 1);
    assert_eq!(report.failed.len(), 2);
    duplicate_error(report.failed[0].error);
    assert_eq!(report.failed[1].error, EntityError::NoSuchEntity(ghost));
    assert!(!world.alive(ghost));
    assert_eq!(world.get::<A>(fine), Ok(&A(9)));
    assert_eq!(world.len(), 2);
    assert_eq!(
        world.entities().reserved_count(),
        0,
        "the ghost's id was cancelled"
    );
    world.check_invariants();
}

#[test]
fn a_shared_world_refuses_before_the_entity_enters() {
    let mut universe = Universe::new();
    let game = universe.add_world();
    let e = universe.spawn();
    duplicate_error(
        universe
            .world_mut(game)
            .insert(e, (1u32, 2u32))
            .unwrap_err(),
    );
    assert!(!universe.world(game).contains_entity(e), "did not enter");
    assert_eq!(universe.world(game).len(), 0);
    universe.check_invariants();
}
