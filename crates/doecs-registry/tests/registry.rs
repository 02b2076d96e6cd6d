//! One registration serves display, JSON edits, plain bytes and snapshots.

use doecs::{Entity, Snapshot, World};
use doecs_registry::{ComponentRegistry, RegistryError};
use serde::{Deserialize, Serialize};

#[derive(
    Copy, Clone, Debug, PartialEq, Serialize, Deserialize, bytemuck::Pod, bytemuck::Zeroable,
)]
#[repr(C)]
struct Velocity {
    x: f32,
    y: f32,
}

#[derive(
    Copy, Clone, Debug, PartialEq, Serialize, Deserialize, bytemuck::Pod, bytemuck::Zeroable,
)]
#[repr(C)]
struct Frozen;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
struct Name(String);

#[derive(Debug)]
struct Secret(#[allow(dead_code)] u32);

fn registry() -> ComponentRegistry {
    let mut r = ComponentRegistry::new();
    r.register::<Velocity>("velocity").plain();
    r.register::<Frozen>("frozen").plain();
    r.register::<Name>("name").cloned();
    r.register_debug::<Secret>("secret").unwrap();
    r
}

#[test]
fn values_show_as_json_or_debug() {
    let registry = registry();
    let mut world = World::new();
    registry.install(&mut world).unwrap();
    let e = world.spawn((
        Velocity { x: 1.0, y: -2.0 },
        Name("ship".into()),
        Frozen,
        Secret(7),
    ));
    let by_id = |name: &str| {
        let reg = registry.by_name(name).unwrap();
        let id = reg.component_id(&world).unwrap();
        registry
            .for_component(&world, id)
            .unwrap()
            .name()
            .to_owned()
    };
    assert_eq!(by_id("velocity"), "velocity");
    let v = registry.by_name("velocity").unwrap();
    assert_eq!(
        v.value_json(&world, e).unwrap(),
        serde_json::json!({"x": 1.0, "y": -2.0})
    );
    assert_eq!(
        registry
            .by_name("frozen")
            .unwrap()
            .value_json(&world, e)
            .unwrap(),
        serde_json::Value::Null
    );
    assert_eq!(
        registry
            .by_name("secret")
            .unwrap()
            .value_text(&world, e)
            .unwrap(),
        "Secret(7)"
    );
    assert!(matches!(
        registry.by_name("secret").unwrap().value_json(&world, e),
        Err(RegistryError::NotSerde(_))
    ));
    // The world knows the stable names.
    assert!(world.components().id_by_name("velocity").is_some());
}

#[test]
fn json_edits_are_checked_and_refusals_change_nothing() {
    let registry = registry();
    let mut world = World::new();
    registry.install(&mut world).unwrap();
    let e = world.spawn((Name("a".into()),));
    let v = registry.by_name("velocity").unwrap();
    v.insert_json(&mut world, e, &serde_json::json!({"x": 3.0, "y": 4.0}))
        .unwrap();
    assert_eq!(world.get::<Velocity>(e), Ok(&Velocity { x: 3.0, y: 4.0 }));
    let err = v
        .insert_json(&mut world, e, &serde_json::json!({"x": "no"}))
        .unwrap_err();
    assert!(err.to_string().contains("velocity"), "{err}");
    assert_eq!(world.get::<Velocity>(e), Ok(&Velocity { x: 3.0, y: 4.0 }));
    let dead = Entity::from_bits(u64::MAX);
    assert!(matches!(
        v.insert_json(&mut world, dead, &serde_json::json!({"x": 1.0, "y": 1.0})),
        Err(RegistryError::Entity(_))
    ));
}

/// `check_json` answers as `insert_json` would, parse and check alike,
/// and changes nothing.
#[test]
fn json_checks_agree_with_inserts_and_change_nothing() {
    let mut registry = registry();
    registry.register::<u32>("charge").validate(|c| {
        if *c <= 100 {
            Ok(())
        } else {
            Err("at most 100".into())
        }
    });
    let mut world = World::new();
    registry.install(&mut world).unwrap();
    let e = world.spawn((Name("a".into()),));
    let charge = registry.by_name("charge").unwrap();
    for (value, ok) in [
        (serde_json::json!(7), true),
        (serde_json::json!(101), false),
        (serde_json::json!("x"), false),
        (serde_json::json!(-1), false),
    ] {
        let checked = charge.check_json(&value);
        assert_eq!(checked.is_ok(), ok, "{value}: {checked:?}");
        let inserted = charge.insert_json(&mut world, e, &value);
        assert_eq!(
            checked.map_err(|e| e.to_string()),
            inserted.map_err(|e| e.to_string()),
            "{value}"
        );
    }
    assert_eq!(world.get::<u32>(e), Ok(&7));
    let refused = charge.check_json(&serde_json::json!(101)).unwrap_err();
    assert!(refused.to_string().contains("at most 100"), "{refused}");
    assert!(matches!(
        registry
            .by_name("secret")
            .unwrap()
            .check_json(&serde_json::json!(1)),
        Err(RegistryError::NotSerde(_))
    ));
}

#[test]
fn plain_registrations_give_level_bytes() {
    let registry = registry();
    let bytes = registry
        .by_name("velocity")
        .unwrap()
        .json_to_bytes(&serde_json::json!({"x": 1.0, "y": 2.0}))
        .unwrap();
    assert_eq!(bytes, bytemuck::bytes_of(&Velocity { x: 1.0, y: 2.0 }));
    let marker = registry
        .by_name("frozen")
        .unwrap()
        .json_to_bytes(&serde_json::Value::Null)
        .unwrap();
    assert!(marker.is_empty(), "markers are zero bytes");
    assert!(registry
        .by_name("name")
        .unwrap()
        .json_to_bytes(&serde_json::json!("x"))
        .is_err());
}

#[test]
fn clashes_are_errors() {
    let mut r = registry();
    assert!(matches!(
        r.try_register::<Name>("other"),
        Err(RegistryError::TypeTaken { .. })
    ));
    assert!(matches!(
        r.try_register::<u32>("name"),
        Err(RegistryError::NameTaken(_))
    ));
}

#[test]
fn installed_types_snapshot() {
    let registry = registry();
    let mut world = World::new();
    registry.install(&mut world).unwrap();
    let e = world.spawn((Velocity { x: 1.0, y: 1.0 }, Name("n".into()), Frozen));
    let mut snapshot = Snapshot::new();
    world.snapshot_into(&mut snapshot).unwrap();
    world.get_mut::<Name>(e).unwrap().0.push('!');
    world.despawn(e).unwrap();
    world.restore(&snapshot).unwrap();
    assert_eq!(world.get::<Name>(e), Ok(&Name("n".into())));
}

#[test]
fn f32_values_show_in_their_shortest_form() {
    #[derive(Clone, Copy, Debug, serde::Serialize, serde::Deserialize)]
    struct Speed(f32);
    let mut registry = doecs_registry::ComponentRegistry::new();
    registry.register::<Speed>("speed");
    let mut world = doecs::World::new();
    let e = world.spawn((Speed(0.1),));
    let reg = registry.by_name("speed").unwrap();
    assert_eq!(reg.value_json(&world, e).unwrap(), serde_json::json!(0.1));
    assert_eq!(reg.value_text(&world, e).unwrap(), "0.1");
}

#[test]
fn install_is_idempotent_after_the_types_were_used() {
    // A world that already spawned a prefab and a registered user type (both
    // registered by type on first use) takes the registry's names.
    let registry = registry();
    let mut world = World::new();
    let prefab = world.spawn((doecs::Prefab, Velocity { x: 1.0, y: 0.0 }));
    let instance = world.instantiate(prefab, 1).unwrap()[0];
    registry.install(&mut world).unwrap();
    registry.install(&mut world).unwrap();
    let id = world.component_id::<Velocity>();
    assert_eq!(world.components().info(id).name(), "velocity");
    assert_eq!(world.components().id_by_name("velocity"), Some(id));
    let prefab_id = world.component_id::<doecs::Prefab>();
    assert_eq!(world.components().info(prefab_id).name(), "Prefab");
    // Snapshots work with or without the registry.
    let mut snapshot = Snapshot::new();
    world.snapshot_into(&mut snapshot).unwrap();
    world.despawn(prefab).unwrap();
    world.restore(&snapshot).unwrap();
    assert_eq!(
        world.get::<Velocity>(instance),
        Ok(&Velocity { x: 1.0, y: 0.0 })
    );
    // A name another component holds is still refused, changing nothing.
    let mut other = World::new();
    other.spawn((Velocity { x: 0.0, y: 0.0 },));
    other
        .register_component(doecs::ComponentDescriptor::of_named::<u8>("velocity"))
        .unwrap();
    assert!(registry.install(&mut other).is_err());
    let id = other.component_id::<Velocity>();
    assert!(other.components().info(id).name().contains("Velocity"));
}
