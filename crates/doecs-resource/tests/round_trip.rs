//! JSON → blob → spawned world equals the JSON description.

mod common;

use doecs::raw::name_hash;

use doecs::World;
use doecs_resource::{BlobView, LevelDesc, SpawnOptions, TRANSFORM};
use doecs_transform::TransformManager;
use glam::{Affine3A, Quat, Vec3};
use serde_json::Value;

fn f32s(v: &Value) -> Vec<f32> {
    match v {
        Value::Array(a) => a.iter().map(|x| x.as_f64().unwrap() as f32).collect(),
        x => vec![x.as_f64().unwrap() as f32],
    }
}

fn expected_local(v: &Value) -> Affine3A {
    let t = v
        .get("translation")
        .map_or(Vec3::ZERO, |x| Vec3::from_slice(&f32s(x)));
    let r = v.get("rotation").map_or(Quat::IDENTITY, |x| {
        let q = f32s(x);
        Quat::from_xyzw(q[0], q[1], q[2], q[3]).normalize()
    });
    let s = v.get("scale").map_or(Vec3::ONE, |x| {
        let s = f32s(x);
        if s.len() == 1 {
            Vec3::splat(s[0])
        } else {
            Vec3::from_slice(&s)
        }
    });
    Affine3A::from_scale_rotation_translation(s, r, t)
}

/// Checks every entity of `level` against the world, in preorder.
fn assert_world_matches(level: &LevelDesc, world: &World, entities: &[doecs::Entity]) {
    let tm = world.manager::<TransformManager>();
    let mut parents = Vec::new();
    let mut has_transform = Vec::new();
    level
        .visit_preorder(|i, parent, e, _| {
            parents.push(parent);
            has_transform.push(e.components.contains_key(TRANSFORM));
            let entity = entities[i];
            assert!(world.alive(entity));
            let c = &e.components;
            match c.get("position") {
                Some(v) => assert_eq!(world.get::<[f32; 3]>(entity).unwrap().to_vec(), f32s(v)),
                None => assert!(world.get::<[f32; 3]>(entity).is_err()),
            }
            match c.get("velocity") {
                Some(v) => assert_eq!(
                    world.get::<Vec3>(entity).unwrap().to_array().to_vec(),
                    f32s(v)
                ),
                None => assert!(world.get::<Vec3>(entity).is_err()),
            }
            match c.get("mass") {
                Some(v) => assert_eq!(vec![*world.get::<f32>(entity).unwrap()], f32s(v)),
                None => assert!(world.get::<f32>(entity).is_err()),
            }
            let tag_id = world.components().id_by_name("tag");
            match c.get("tag") {
                Some(v) => {
                    let bytes = world.get_bytes(entity, tag_id.unwrap()).unwrap();
                    let want: Vec<u8> = v
                        .as_array()
                        .unwrap()
                        .iter()
                        .flat_map(|x| (x.as_u64().unwrap() as u16).to_le_bytes())
                        .collect();
                    assert_eq!(bytes, &want[..]);
                }
                None => assert!(!tag_id.is_some_and(|id| world.has_id(entity, id))),
            }
            let store = world.manager::<doecs_data::DataStore>();
            match c.get("data") {
                Some(v) => {
                    let store = store.expect("a data store was added");
                    let want = doecs_data::Record::from_json(v).unwrap();
                    assert_eq!(store.to_bytes(entity).unwrap(), want.as_bytes());
                }
                None => assert!(!store.is_some_and(|s| s.contains(entity))),
            }
            match c.get(TRANSFORM) {
                Some(v) => {
                    let tm = tm.expect("a transform manager was added");
                    let inst = tm.lookup(entity).expect("entity has a transform");
                    assert!(tm.local(inst).unwrap().abs_diff_eq(expected_local(v), 1e-6));
                }
                None => assert!(tm.is_none_or(|tm| tm.lookup(entity).is_none())),
            }
        })
        .expect("valid parents");
    // The hierarchy is ChildOf, for every entity with a parent; the
    // transforms follow it: a transform's parent is the transform of its
    // entity's nearest ancestor with one, a root where none has.
    for (i, &e) in entities.iter().enumerate() {
        assert_eq!(
            world.parent(e),
            parents[i].map(|p| entities[p]),
            "entity {i}"
        );
    }
    if let Some(tm) = tm {
        for (i, &e) in entities.iter().enumerate() {
            let Some(inst) = tm.lookup(e) else { continue };
            let mut a = parents[i];
            while let Some(p) = a.filter(|&p| !has_transform[p]) {
                a = parents[p];
            }
            assert_eq!(
                tm.parent(inst).map(|p| p.entity()),
                a.map(|p| entities[p]),
                "entity {i}"
            );
            let want_world = match a {
                Some(p) => {
                    tm.world(tm.lookup(entities[p]).unwrap()).unwrap() * tm.local(inst).unwrap()
                }
                None => tm.local(inst).unwrap(),
            };
            assert!(tm.world(inst).unwrap().abs_diff_eq(want_world, 1e-5));
        }
        tm.check_invariants();
    }
    world.check_invariants();
}

#[test]
fn mixed_level_round_trips() {
    let (compiler, spawner) = common::registry();
    let level: LevelDesc = serde_json::from_str(common::MIXED_LEVEL).unwrap();
    let blob = compiler.compile(&level).unwrap();
    let view = BlobView::parse(&blob).unwrap();
    assert_eq!(view.num_entities(), 7);
    assert_eq!(view.hierarchy_depth(), 3);
    // Spawn order: name (-200), transform (-100), data (-50),
    // position/velocity (0), mass (1), tag (2).
    let order: Vec<u64> = view.blocks().iter().map(|b| b.component).collect();
    let names = [
        "name",
        "transform",
        "data",
        "position",
        "velocity",
        "mass",
        "tag",
    ];
    assert_eq!(
        order,
        names.iter().map(|n| name_hash(n)).collect::<Vec<_>>()
    );
    let mut world = World::new();
    let out = spawner
        .spawn(&mut world, &blob, SpawnOptions { strict: true })
        .unwrap();
    assert_eq!(out.entities.len(), 7);
    assert!(out.skipped.is_empty());
    // Six names, then transform, data, position, velocity, mass, tag.
    assert_eq!(out.instances, 6 + 4 + 2 + 2 + 1 + 3 + 2);
    assert_eq!(world.lookup("ship/marker/light"), Ok(out.entities[4]));
    assert_eq!(world.name_of(out.entities[0]), Some("ship"));
    let store = world.manager::<doecs_data::DataStore>().unwrap();
    assert_eq!(store.get_f32(out.entities[0], "stats.health"), Some(100.0));
    assert_eq!(store.get_str(out.entities[0], "name"), Some("orc"));
    assert_eq!(store.get_bool(out.entities[5], "hard"), Some(true));
    assert_world_matches(&level, &world, &out.entities);
}

#[test]
fn spawning_twice_gives_two_independent_copies() {
    let (compiler, spawner) = common::registry();
    let level: LevelDesc = serde_json::from_str(common::MIXED_LEVEL).unwrap();
    let blob = compiler.compile(&level).unwrap();
    let mut world = World::new();
    let a = spawner
        .spawn(&mut world, &blob, SpawnOptions::default())
        .unwrap();
    let b = spawner
        .spawn(&mut world, &blob, SpawnOptions::default())
        .unwrap();
    assert_eq!(world.len(), 14);
    assert_world_matches(&level, &world, &a.entities);
    assert_world_matches(&level, &world, &b.entities);
}

#[test]
fn dense_level_of_ten_thousand_round_trips() {
    let (compiler, spawner) = common::registry();
    let mut entities = Vec::new();
    // Miri runs a smaller level (still several chunks) through the same path.
    let roots = if cfg!(miri) { 60 } else { 1000 };
    for i in 0..roots {
        let kids: Vec<Value> = (0..9)
            .map(|k| {
                serde_json::json!({
                    "components": { "transform": { "translation": [k as f32, 0, 0] },
                                    "position": [i as f32, k as f32, 0], "velocity": [0, 0, 1] }
                })
            })
            .collect();
        entities.push(serde_json::json!({
            "components": { "transform": { "translation": [0, i as f32, 0] },
                            "position": [i as f32, 0, 0], "velocity": [1, 0, 0] },
            "children": kids
        }));
    }
    let level: LevelDesc =
        serde_json::from_value(serde_json::json!({ "entities": entities })).unwrap();
    let blob = compiler.compile(&level).unwrap();
    let mut world = World::new();
    let out = spawner
        .spawn(&mut world, &blob, SpawnOptions::default())
        .unwrap();
    assert_eq!(out.entities.len(), roots * 10);
    assert_eq!(
        doecs::raw::archetypes(&world)
            .iter()
            .filter(|a| !a.is_empty())
            .count(),
        1,
        "one archetype move"
    );
    assert_world_matches(&level, &world, &out.entities);
}

#[test]
fn unknown_types_are_skipped_or_refused_in_strict_mode() {
    let (compiler, _) = common::registry();
    let blob = compiler.compile_str(common::MIXED_LEVEL).unwrap();
    let mut spawner = doecs_resource::Spawner::new();
    spawner
        .register("transform", doecs_resource::TransformSpawner)
        .unwrap();
    spawner
        .register("data", doecs_resource::DataSpawner)
        .unwrap();
    spawner.register_plain::<f32>("mass").unwrap();
    let mut world = World::new();
    let out = spawner
        .spawn(&mut world, &blob, SpawnOptions::default())
        .unwrap();
    let skipped: Vec<u64> = out.skipped.iter().map(|s| s.component).collect();
    assert_eq!(
        skipped,
        vec![
            name_hash("name"),
            name_hash("position"),
            name_hash("velocity"),
            name_hash("tag")
        ]
    );
    assert_eq!(out.skipped[3].instances, 2);
    assert_eq!(out.skipped[3].bytes, 8);
    assert_eq!(world.len(), 7);
    let mut strict_world = World::new();
    let err = spawner
        .spawn(&mut strict_world, &blob, SpawnOptions { strict: true })
        .unwrap_err();
    assert!(err.to_string().contains("unknown component type"), "{err}");
    assert!(strict_world.is_empty());
    assert!(strict_world.manager::<TransformManager>().is_none());
}

#[test]
fn compile_errors_name_the_entity_and_component() {
    let (compiler, _) = common::registry();
    let err = compiler
        .compile_str(r#"{"entities":[{"children":[{"name":"x","components":{"mass":[1,2]}}]}]}"#)
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "entities[0].children[0] (\"x\"): component `mass`: expected 1 numbers, found 2"
    );
    let err = compiler
        .compile_str(r#"{"entities":[{"components":{"nope":1}}]}"#)
        .unwrap_err();
    assert!(err
        .to_string()
        .contains("no compiler is registered for component `nope`"));
    let err = compiler
        .compile_str(r#"{"entities":[{"childern":[]}]}"#)
        .unwrap_err();
    assert!(
        err.to_string().contains("unknown field `childern`"),
        "{err}"
    );
}

#[test]
fn world_conflicts_are_refused_before_anything_is_spawned() {
    let (compiler, spawner) = common::registry();
    let blob = compiler.compile_str(common::MIXED_LEVEL).unwrap();
    let mut world = World::new();
    // A different component already owns the name `tag`.
    world
        .register_component(doecs::ComponentDescriptor::dynamic(
            "tag",
            std::alloc::Layout::new::<u64>(),
        ))
        .unwrap();
    let err = spawner
        .spawn(&mut world, &blob, SpawnOptions::default())
        .unwrap_err();
    assert!(
        matches!(err, doecs_resource::SpawnError::WorldConflict { .. }),
        "{err}"
    );
    assert!(world.is_empty());
}

mod random_levels {
    use super::*;
    use proptest::prelude::*;

    /// A random entity: which optional components it has, and children.
    fn entity(depth: u32) -> BoxedStrategy<Value> {
        let leaf = (any::<[bool; 6]>(), -100i32..100).prop_map(|(has, x)| {
            let mut c = serde_json::Map::new();
            let f = x as f32 / 4.0;
            if has[0] {
                c.insert(
                    "transform".into(),
                    serde_json::json!({ "translation": [f, 1.0, -f], "scale": 2 }),
                );
            }
            if has[1] {
                c.insert("position".into(), serde_json::json!([f, f + 1.0, f + 2.0]));
            }
            if has[2] {
                c.insert("velocity".into(), serde_json::json!([-f, 0.5, 0]));
            }
            if has[3] {
                c.insert("mass".into(), serde_json::json!(f));
            }
            if has[4] {
                c.insert(
                    "tag".into(),
                    serde_json::json!([x.unsigned_abs() % 65536, 3]),
                );
            }
            if has[5] {
                c.insert(
                    "data".into(),
                    serde_json::json!({ "hp": f, "tags": { "boss": x > 50 } }),
                );
            }
            serde_json::json!({ "components": c })
        });
        if depth == 0 {
            return leaf.boxed();
        }
        (leaf, proptest::collection::vec(entity(depth - 1), 0..4))
            .prop_map(|(mut e, kids)| {
                e["children"] = Value::Array(kids);
                e
            })
            .boxed()
    }

    proptest! {
        // Under Miri: a few cases, and no failure file (no file system).
        #![proptest_config(ProptestConfig {
            cases: if cfg!(miri) { 4 } else { 64 },
            failure_persistence: if cfg!(miri) { None } else { ProptestConfig::default().failure_persistence },
            ..ProptestConfig::default()
        })]
        /// Any level with any mix of component sets round-trips, and each
        /// entity lands in the archetype of exactly its plain components.
        #[test]
        fn random_levels_round_trip(roots in proptest::collection::vec(entity(3), 0..6)) {
            let (compiler, spawner) = common::registry();
            let level: LevelDesc =
                serde_json::from_value(serde_json::json!({ "entities": roots })).unwrap();
            let blob = compiler.compile(&level).unwrap();
            let mut world = World::new();
            let out = spawner.spawn(&mut world, &blob, SpawnOptions { strict: true }).unwrap();
            prop_assert_eq!(out.entities.len(), level.entity_count());
            assert_world_matches(&level, &world, &out.entities);
        }
    }
}
