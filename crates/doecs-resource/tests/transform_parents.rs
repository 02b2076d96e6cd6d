//! A transform follows the nearest ancestor that has one: in a level, a
//! `counterweight` (with a transform) hangs from a `cable` (without one)
//! under a `boom` (with one), and its world transform includes the boom's,
//! before and after the boom moves, in immediate and deferred mode, and
//! after a save and load. (It used to spawn as a root, ignoring the boom.)

use doecs::{DestroyNotice, Entity, World};
use doecs_registry::{ComponentRegistry, SaveFormat, WorldSaveExt};
use doecs_resource::{standard_compiler, standard_spawner, SpawnOptions};
use doecs_transform::{TransformManager, WorldTransforms};
use glam::{Affine3A, Quat, Vec3};

const CRANE: &str = r#"{ "entities": [
  { "name": "boom",
    "components": { "transform": { "translation": [10, 0, 0], "rotation": [0, 0, 0.7071068, 0.7071068] } },
    "children": [
      { "name": "cable",
        "children": [
          { "name": "counterweight", "components": { "transform": { "translation": [0, -2, 0] } } }
        ] }
    ] }
] }"#;

/// The crane spawned into a world whose transform manager is immediate or
/// deferred: (world, [boom, cable, counterweight]).
fn crane(deferred: bool) -> (World, [Entity; 3]) {
    let blob = standard_compiler().compile_str(CRANE).unwrap();
    let mut world = World::new();
    let manager = match deferred {
        true => TransformManager::deferred(),
        false => TransformManager::new(),
    };
    world.add_manager(manager, DestroyNotice::Callback);
    let spawned = standard_spawner()
        .spawn(&mut world, &blob, SpawnOptions::default())
        .unwrap();
    let [boom, cable, counterweight] = spawned.entities[..] else {
        panic!("three entities");
    };
    assert_eq!(world.parent(counterweight), Some(cable));
    assert_eq!(world.parent(cable), Some(boom));
    (world, [boom, cable, counterweight])
}

/// The counterweight's world translation, after a propagation.
fn counterweight_at(world: &mut World, counterweight: Entity) -> Vec3 {
    let tm = world.transforms_mut();
    tm.propagate();
    tm.check_invariants();
    let i = tm.lookup(counterweight).unwrap();
    tm.world(i).unwrap().translation.into()
}

fn close(a: Vec3, b: Vec3) -> bool {
    a.abs_diff_eq(b, 1e-4)
}

#[test]
fn a_transform_under_an_entity_without_one_follows_the_nearest_ancestor_with_one() {
    for deferred in [false, true] {
        let (mut world, [boom, cable, counterweight]) = crane(deferred);
        let tm = world.manager::<TransformManager>().unwrap();
        assert!(tm.lookup(cable).is_none(), "the cable has no transform");
        let i = tm.lookup(counterweight).unwrap();
        assert_eq!(tm.parent(i).map(|p| p.entity()), Some(boom));
        // The boom, turned a quarter about z, puts the counterweight's
        // (0, -2, 0) at (2, 0, 0) from its own (10, 0, 0).
        let at = counterweight_at(&mut world, counterweight);
        assert!(
            close(at, Vec3::new(12.0, 0.0, 0.0)),
            "deferred {deferred}: {at}"
        );
        // Moving the boom moves the counterweight.
        let tm = world.transforms_mut();
        let b = tm.lookup(boom).unwrap();
        tm.set_local(b, Affine3A::from_translation(Vec3::new(0.0, 5.0, 0.0)))
            .unwrap();
        let at = counterweight_at(&mut world, counterweight);
        assert!(
            close(at, Vec3::new(0.0, 3.0, 0.0)),
            "deferred {deferred}: {at}"
        );
        world.check_invariants();
    }
}

#[test]
fn the_cable_passes_changes_on_to_the_counterweight() {
    let (mut world, [boom, cable, counterweight]) = crane(false);
    // A transform for the cable: the counterweight hangs from it now.
    world
        .add_transform(cable, Affine3A::from_translation(Vec3::new(0.0, -1.0, 0.0)))
        .unwrap();
    let tm = world.manager::<TransformManager>().unwrap();
    let i = tm.lookup(counterweight).unwrap();
    assert_eq!(tm.parent(i).map(|p| p.entity()), Some(cable));
    let at = counterweight_at(&mut world, counterweight);
    assert!(close(at, Vec3::new(13.0, 0.0, 0.0)), "{at}");
    // Taking it away again: back under the boom, where it stays put.
    let tm = world.transforms_mut();
    tm.destroy(tm.lookup(cable).unwrap()).unwrap();
    let i = tm.lookup(counterweight).unwrap();
    assert_eq!(tm.parent(i).map(|p| p.entity()), Some(boom));
    let at = counterweight_at(&mut world, counterweight);
    assert!(close(at, Vec3::new(13.0, 0.0, 0.0)), "kept its world: {at}");
    // Hanging the cable (no transform) from a new root carries the
    // counterweight along; detaching it leaves the counterweight a root.
    let hook = world.spawn(());
    let hook_at = Affine3A::from_rotation_translation(Quat::IDENTITY, Vec3::new(0.0, 0.0, 7.0));
    world.add_transform(hook, hook_at).unwrap();
    world.set_parent(cable, hook).unwrap();
    let tm = world.manager::<TransformManager>().unwrap();
    let local: Vec3 = tm
        .local(tm.lookup(counterweight).unwrap())
        .unwrap()
        .translation
        .into();
    let at = counterweight_at(&mut world, counterweight);
    assert!(close(at, local + Vec3::new(0.0, 0.0, 7.0)), "{at}");
    world.remove_parent(cable);
    let at = counterweight_at(&mut world, counterweight);
    assert!(close(at, local), "a root: its local is its world: {at}");
    world.check_invariants();
}

#[test]
fn a_saved_crane_loads_with_the_counterweight_under_the_boom() {
    let (world, [boom, _, counterweight]) = crane(false);
    let mut registry = ComponentRegistry::new();
    registry
        .register_manager::<TransformManager>("transform", DestroyNotice::Callback)
        .unwrap();
    for format in [SaveFormat::Binary, SaveFormat::Json] {
        let mut bytes = Vec::new();
        world.save(&mut bytes, format, &registry).unwrap();
        let mut loaded = World::load(&bytes[..], &registry).unwrap();
        let tm = loaded.manager::<TransformManager>().unwrap();
        let i = tm.lookup(counterweight).unwrap();
        assert_eq!(tm.parent(i).map(|p| p.entity()), Some(boom));
        let at = counterweight_at(&mut loaded, counterweight);
        assert!(close(at, Vec3::new(12.0, 0.0, 0.0)), "{format:?}: {at}");
    }
}
