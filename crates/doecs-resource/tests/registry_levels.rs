//! Level components registered once, in a `doecs_registry::ComponentRegistry`
//! (serde + bytemuck), serving the compiler, the spawner and tools: markers,
//! structs of several fields, validation, bad values, unknown names, and the
//! same blob and values as the hand-written registration.

use bytemuck::{Pod, Zeroable};
use doecs::raw::name_hash;
use doecs::{Entity, World};
use doecs_registry::ComponentRegistry;
use doecs_resource::{
    builtin_component, standard_compiler, standard_spawner, BlobBuilder, BlobView, CompileError,
    Compiler, LoadError, Problem, RegistrationError, SpawnError, SpawnOptions, Spawner, TypeBlock,
    BUILTIN_COMPONENTS,
};
use serde::{Deserialize, Serialize};

/// A marker: zero-sized.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize, Pod, Zeroable)]
#[repr(C)]
struct Frozen;

/// A struct of several fields of different types (20 bytes, no padding).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize, Pod, Zeroable)]
#[serde(deny_unknown_fields)]
#[repr(C)]
struct Body {
    velocity: [f32; 3],
    team: u16,
    squad: u16,
    health: i32,
}

#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize, Pod, Zeroable)]
#[repr(transparent)]
struct Mass(f32);

impl Mass {
    fn validate(&self) -> Result<(), String> {
        if self.0.is_finite() && self.0 > 0.0 {
            Ok(())
        } else {
            Err(format!(
                "mass must be finite and greater than 0, got {}",
                self.0
            ))
        }
    }
}

/// Serde only (not plain): for saves and tools, not levels.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
struct Label(String);

fn registry() -> ComponentRegistry {
    let mut r = ComponentRegistry::new();
    r.register::<Frozen>("frozen").plain();
    r.register::<Body>("body").plain();
    r.register::<Mass>("mass").plain().validate(Mass::validate);
    r.register::<Label>("label").cloned();
    r
}

fn pair() -> (Compiler, Spawner) {
    let r = registry();
    (
        Compiler::from_registry(&r).unwrap(),
        Spawner::from_registry(&r).unwrap(),
    )
}

fn spawn(json: &str) -> (World, Vec<Entity>) {
    let (compiler, spawner) = pair();
    let blob = compiler.compile_str(json).unwrap();
    let mut world = World::new();
    let out = spawner
        .spawn(&mut world, &blob, SpawnOptions { strict: true })
        .unwrap();
    (world, out.entities)
}

fn component_error(json: &str) -> (String, String, String) {
    let (compiler, _) = pair();
    match compiler.compile_str(json).unwrap_err() {
        CompileError::Component {
            entity,
            component,
            message,
        } => (entity, component, message),
        other => panic!("expected a component error, got {other}"),
    }
}

#[test]
fn marker_components_compile_spawn_and_are_queried() {
    let json = r#"{"entities": [
        {"name": "a", "components": {"frozen": null, "transform": {}}},
        {"name": "b", "components": {"transform": {}}},
        {"name": "c", "components": {"frozen": true},
         "children": [{"name": "d", "components": {"frozen": {}, "mass": 2}}]},
        {"name": "e", "components": {"mass": 1}}
    ]}"#;
    let (compiler, _) = pair();
    let blob = compiler.compile_str(json).unwrap();
    let view = BlobView::parse(&blob).unwrap();
    let frozen = view
        .blocks()
        .iter()
        .find(|b| b.component == name_hash("frozen"))
        .unwrap();
    assert_eq!(frozen.instance_size, 0);
    assert_eq!(frozen.num_instances(), 3);
    assert_eq!(frozen.entity_index.iter().collect::<Vec<_>>(), [0, 2, 3]);
    assert!(frozen.data.is_empty());

    let (world, es) = spawn(json);
    assert_eq!(es.len(), 5);
    let mut found: Vec<Entity> = world
        .query::<(Entity, &Frozen)>()
        .iter()
        .map(|(e, _)| e)
        .collect();
    found.sort_by_key(|e| e.index());
    let mut expected = vec![es[0], es[2], es[3]];
    expected.sort_by_key(|e| e.index());
    assert_eq!(found, expected);
    for (i, &e) in es.iter().enumerate() {
        assert_eq!(
            world.get::<Frozen>(e).is_ok(),
            [0, 2, 3].contains(&i),
            "{i}"
        );
    }
    assert_eq!(world.get::<Mass>(es[3]), Ok(&Mass(2.0)));
    assert_eq!(world.query::<(&Frozen, &Mass)>().iter().count(), 1);
    let tm = world
        .manager::<doecs_transform::TransformManager>()
        .unwrap();
    assert!(tm.lookup(es[0]).is_some() && tm.lookup(es[1]).is_some());

    // A level where every entity is frozen (the one-group, memcpy path).
    let (world, es) = spawn(
        r#"{"entities": [{"components": {"frozen": null}}, {"components": {"frozen": null}}]}"#,
    );
    assert_eq!(world.query::<&Frozen>().iter().count(), 2);
    assert!(es.iter().all(|&e| world.get::<Frozen>(e).is_ok()));
}

#[test]
fn markers_refuse_other_values() {
    for bad in ["false", "1", "[1]", r#"{"x": 1}"#, r#""yes""#] {
        let json =
            format!(r#"{{"entities": [{{"name": "m", "components": {{"frozen": {bad}}}}}]}}"#);
        let (entity, component, message) = component_error(&json);
        assert_eq!(entity, r#"entities[0] ("m")"#);
        assert_eq!(component, "frozen");
        assert!(
            message.starts_with("a marker component is written as null, true or {}"),
            "{bad}: {message}"
        );
    }
}

#[test]
fn structs_of_several_fields_round_trip() {
    let json = r#"{"entities": [
        {"name": "ship", "components": {
            "body": {"velocity": [1.5, -2, 3e2], "team": 7, "squad": 65535, "health": -40},
            "data": {"class": "frigate"}}},
        {"name": "rock"},
        {"name": "drone", "components": {
            "body": {"health": 3, "squad": 1, "team": 2, "velocity": [0, 0, 0.25]},
            "frozen": null}}
    ]}"#;
    let (compiler, _) = pair();
    let blob = compiler.compile_str(json).unwrap();
    let view = BlobView::parse(&blob).unwrap();
    let block = view
        .blocks()
        .iter()
        .find(|b| b.component == name_hash("body"))
        .unwrap();
    assert_eq!(block.instance_size, 20);
    // Little-endian, fields in declaration order.
    let mut first = Vec::new();
    for f in [1.5f32, -2.0, 300.0] {
        first.extend_from_slice(&f.to_le_bytes());
    }
    first.extend_from_slice(&7u16.to_le_bytes());
    first.extend_from_slice(&65535u16.to_le_bytes());
    first.extend_from_slice(&(-40i32).to_le_bytes());
    assert_eq!(&block.data[..20], &first[..]);

    let (world, es) = spawn(json);
    assert_eq!(
        world.get::<Body>(es[0]),
        Ok(&Body {
            velocity: [1.5, -2.0, 300.0],
            team: 7,
            squad: 65535,
            health: -40
        })
    );
    assert!(world.get::<Body>(es[1]).is_err());
    assert_eq!(world.get::<Body>(es[2]).unwrap().velocity, [0.0, 0.0, 0.25]);
    assert!(world.get::<Frozen>(es[2]).is_ok());
    assert!(world.get::<Frozen>(es[0]).is_err());
    let store = world.manager::<doecs_data::DataStore>().unwrap();
    assert!(store.contains(es[0]) && !store.contains(es[2]));
}

#[test]
fn bad_values_are_typed_errors_naming_entity_and_component() {
    let cases = [
        (
            r#"{"velocity": [1, 2], "team": 1, "squad": 1, "health": 1}"#,
            "invalid length 2",
        ),
        (
            r#"{"velocity": [1, 2, 3], "team": 1, "squad": 1}"#,
            "missing field `health`",
        ),
        (
            r#"{"velocity": [1, 2, 3], "team": -1, "squad": 1, "health": 1}"#,
            "invalid value",
        ),
        (
            r#"{"velocity": [1, 2, 3], "team": 1, "squad": 1, "health": 1, "x": 0}"#,
            "unknown field `x`",
        ),
        (r#"[1, 2, 3]"#, "invalid"),
        (r#""fast""#, "invalid type: string"),
    ];
    for (value, expect) in cases {
        let json = format!(
            r#"{{"entities": [{{"name": "p", "children": [{{"name": "c", "components": {{"body": {value}}}}}]}}]}}"#
        );
        let (entity, component, message) = component_error(&json);
        assert_eq!(entity, r#"entities[0].children[0] ("c")"#, "{value}");
        assert_eq!(component, "body");
        assert!(message.contains(expect), "{value}: {message}");
    }
    let (entity, component, message) =
        component_error(r#"{"entities": [{"components": {"mass": "heavy"}}]}"#);
    assert_eq!(
        (entity.as_str(), component.as_str()),
        ("entities[0]", "mass")
    );
    assert!(
        message.contains("invalid type: string \"heavy\""),
        "{message}"
    );
}

#[test]
fn unknown_names_are_errors_or_skipped() {
    let (compiler, spawner) = pair();
    let err = compiler
        .compile_str(r#"{"entities": [{"name": "x", "components": {"frozn": null}}]}"#)
        .unwrap_err();
    assert_eq!(
        err,
        CompileError::UnknownComponent {
            entity: r#"entities[0] ("x")"#.into(),
            component: "frozn".into()
        }
    );
    // Serde-only entries are for saves and tools; a level cannot hold them.
    let err = compiler
        .compile_str(r#"{"entities": [{"components": {"label": "boss"}}]}"#)
        .unwrap_err();
    assert!(
        matches!(&err, CompileError::UnknownComponent { component, .. } if component == "label"),
        "{err}"
    );
    assert!(spawner.name_of(name_hash("label")).is_none());

    let mut blob = BlobBuilder::roots(2);
    blob.push_dense(name_hash("frozen"), 0, Vec::new());
    blob.push_dense(name_hash("mystery"), 4, vec![0; 8]);
    let blob = blob.to_bytes();
    let mut world = World::new();
    let out = spawner
        .spawn(&mut world, &blob, SpawnOptions::default())
        .unwrap();
    assert_eq!(out.skipped.len(), 1);
    assert_eq!(out.skipped[0].component, name_hash("mystery"));
    assert_eq!(world.query::<&Frozen>().iter().count(), 2);
    let mut world = World::new();
    let err = spawner
        .spawn(&mut world, &blob, SpawnOptions { strict: true })
        .unwrap_err();
    assert!(
        matches!(
            err,
            SpawnError::Load(LoadError {
                problem: Problem::UnknownType(t),
                ..
            }) if t == name_hash("mystery")
        ),
        "{err}"
    );
    assert!(world.is_empty());
}

#[test]
fn validation_refuses_at_compile_and_at_load() {
    let (compiler, spawner) = pair();
    let err = compiler
        .compile_str(r#"{"entities": [{"name": "ok", "components": {"mass": 1}}, {"name": "rock", "components": {"mass": 0}}]}"#)
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        r#"entities[1] ("rock"): component `mass`: mass must be finite and greater than 0, got 0"#
    );
    // serde reads 1e39 as an infinite f32: the check refuses it.
    let (_, _, message) = component_error(r#"{"entities": [{"components": {"mass": 1e39}}]}"#);
    assert_eq!(message, "mass must be finite and greater than 0, got inf");

    // A hand-made blob is held to the same rule, before anything is spawned.
    let blob = |masses: [f32; 2]| {
        let mut b = BlobBuilder::roots(3);
        b.push_dense(name_hash("frozen"), 0, Vec::new());
        b.push_block(TypeBlock {
            component: name_hash("mass"),
            instance_size: 4,
            entity_index: vec![0, 2],
            data: masses.iter().flat_map(|m| m.to_le_bytes()).collect(),
        });
        b.to_bytes()
    };
    for (bad, shown) in [(0.0, "0"), (-1.0, "-1"), (f32::NAN, "NaN")] {
        let mut world = World::new();
        let err = spawner
            .spawn(&mut world, &blob([2.0, bad]), SpawnOptions::default())
            .unwrap_err();
        let SpawnError::Load(e) = err else {
            panic!("expected a load error, got {err}")
        };
        assert_eq!(e.field, "block[1].instance_data");
        assert_eq!(
            e.problem,
            Problem::Rejected {
                name: "mass".into(),
                instance: 1,
                message: format!(
                    "mass must be finite and greater than 0, got {shown} (blob entity 2)"
                ),
            }
        );
        assert!(world.is_empty(), "nothing spawned");
        assert!(spawner
            .load(&blob([2.0, bad]), SpawnOptions::default())
            .is_err());
    }
    let mut world = World::new();
    let out = spawner
        .spawn(&mut world, &blob([2.0, 0.5]), SpawnOptions::default())
        .unwrap();
    assert_eq!(world.get::<Mass>(out.entities[2]), Ok(&Mass(0.5)));
    assert!(world.get::<Mass>(out.entities[1]).is_err());
    assert_eq!(world.query::<&Frozen>().iter().count(), 3);
}

#[test]
fn same_blob_and_values_as_the_hand_written_registration() {
    #[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize, Pod, Zeroable)]
    #[repr(transparent)]
    struct Position([f32; 3]);
    #[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize, Pod, Zeroable)]
    #[repr(transparent)]
    struct Velocity([f32; 3]);
    let mut registry = ComponentRegistry::new();
    registry.register::<Position>("position").plain();
    registry.register::<Velocity>("velocity").plain();
    registry
        .register::<Mass>("mass")
        .plain()
        .validate(Mass::validate);
    let compiler = Compiler::from_registry(&registry).unwrap();
    let spawner = Spawner::from_registry(&registry).unwrap();
    let err = compiler
        .compile_str(r#"{"entities": [{"name": "s", "components": {"velocity": [1, 2]}}]}"#)
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        r#"entities[0] ("s"): component `velocity`: invalid length 2, expected an array of length 3"#
    );

    let mut old_compiler = standard_compiler();
    old_compiler.register_f32s("position", 0, 3).unwrap();
    old_compiler.register_f32s("velocity", 0, 3).unwrap();
    old_compiler
        .register_f32s_validated("mass", 0, 1, |m| Mass(m[0]).validate())
        .unwrap();
    let mut old_spawner = standard_spawner();
    old_spawner.register_plain::<[f32; 3]>("position").unwrap();
    old_spawner
        .register_plain::<glam::Vec3>("velocity")
        .unwrap();
    old_spawner.register_plain::<f32>("mass").unwrap();

    let mut json = String::from(r#"{"entities": ["#);
    for s in 0..40 {
        if s > 0 {
            json.push(',');
        }
        let f = s as f32;
        json.push_str(&format!(
            r#"{{"name": "ship{s}", "components": {{"transform": {{"translation": [{f}, 1, 2]}},
                "position": [{f}, {}, -0.1], "velocity": [0.3, {}, 7], "mass": {}, "data": {{"hp": {s}}}}},
              "children": [{{"components": {{"transform": {{"scale": 0.5}}, "mass": 0.25}}}}]}}"#,
            f * 0.5,
            -f,
            1.0 + f / 3.0
        ));
    }
    json.push_str("]}");
    let blob = compiler.compile_str(&json).unwrap();
    assert_eq!(blob, old_compiler.compile_str(&json).unwrap(), "same bytes");

    let mut world = World::new();
    let new = spawner
        .spawn(&mut world, &blob, SpawnOptions { strict: true })
        .unwrap();
    let mut old_world = World::new();
    let old = old_spawner
        .spawn(&mut old_world, &blob, SpawnOptions { strict: true })
        .unwrap();
    assert_eq!(new.instances, old.instances);
    for (&e, &o) in new.entities.iter().zip(&old.entities) {
        assert_eq!(
            world.get::<Position>(e).ok().map(|p| p.0),
            old_world.get::<[f32; 3]>(o).ok().copied()
        );
        assert_eq!(
            world.get::<Velocity>(e).ok().map(|v| v.0),
            old_world.get::<glam::Vec3>(o).ok().map(|v| v.to_array())
        );
        assert_eq!(
            world.get::<Mass>(e).ok().map(|m| m.0),
            old_world.get::<f32>(o).ok().copied()
        );
    }
}

#[test]
fn the_registry_serves_tools_on_spawned_worlds() {
    let registry = registry();
    let (world, es) = spawn(
        r#"{"entities": [{"components": {"frozen": null,
            "body": {"velocity": [1, 2, 3], "team": 1, "squad": 2, "health": 9}}}]}"#,
    );
    for name in ["frozen", "body"] {
        let reg = registry.by_name(name).unwrap();
        let id = reg.component_id(&world).unwrap();
        assert_eq!(
            world.components().info(id).name(),
            name,
            "spawned under its name"
        );
        assert_eq!(registry.for_component(&world, id).unwrap().name(), name);
    }
    let body = registry.by_name("body").unwrap();
    assert_eq!(
        body.value_json(&world, es[0]).unwrap(),
        serde_json::json!({"velocity": [1.0, 2.0, 3.0], "team": 1, "squad": 2, "health": 9})
    );
    let frozen = registry.by_name("frozen").unwrap();
    assert_eq!(
        frozen.value_json(&world, es[0]).unwrap(),
        serde_json::Value::Null
    );

    // A world where the registry installed the types first: found by type.
    let (compiler, spawner) = pair();
    let mut world = World::new();
    registry.install(&mut world).unwrap();
    let before = world.components().len();
    let blob = compiler
        .compile_str(r#"{"entities": [{"components": {"frozen": null, "mass": 3}}]}"#)
        .unwrap();
    let out = spawner
        .spawn(&mut world, &blob, SpawnOptions::default())
        .unwrap();
    assert_eq!(world.components().len(), before, "no new component");
    assert_eq!(world.get::<Mass>(out.entities[0]), Ok(&Mass(3.0)));
}

#[test]
fn registration_clashes_and_built_ins() {
    let mut clash = ComponentRegistry::new();
    clash.register::<Mass>("transform").plain();
    assert_eq!(
        Compiler::from_registry(&clash).unwrap_err(),
        RegistrationError::NameTaken("transform".into())
    );
    assert_eq!(
        Spawner::from_registry(&clash).unwrap_err(),
        RegistrationError::NameTaken("transform".into())
    );
    // Nothing is registered when one entry clashes.
    let mut half = ComponentRegistry::new();
    half.register::<Frozen>("frozen").plain();
    half.register::<Mass>("data").plain();
    let mut compiler = Compiler::new();
    compiler.register_f32s("data", 0, 1).unwrap();
    assert!(compiler.register_registry(&half).is_err());
    assert_eq!(compiler.components().len(), 1);
    let mut spawner = standard_spawner();
    assert!(spawner.register_registry(&half).is_err());
    assert!(spawner.name_of(name_hash("frozen")).is_none());
    // Twice: the names are taken.
    let mut spawner = Spawner::from_registry(&registry()).unwrap();
    assert!(matches!(
        spawner.register_registry(&registry()),
        Err(RegistrationError::NameTaken(_))
    ));

    let names: Vec<&str> = BUILTIN_COMPONENTS.iter().map(|b| b.name).collect();
    assert_eq!(names, ["name", "transform", "prefab", "is_a", "data"]);
    assert_eq!(builtin_component("data").unwrap().instance_size, None);
    let compiler = Compiler::from_registry(&registry()).unwrap();
    let listed: Vec<(&str, i32, Option<usize>)> = compiler.components();
    assert_eq!(
        listed,
        [
            ("name", -200, None),
            ("is_a", -150, Some(4)),
            ("prefab", -150, Some(0)),
            ("transform", -100, Some(64)),
            ("data", -50, None),
            ("body", 0, Some(20)),
            ("frozen", 0, Some(0)),
            ("mass", 0, Some(4)),
        ]
    );
    let spawner = Spawner::from_registry(&registry()).unwrap();
    for name in ["transform", "data", "body", "frozen", "mass"] {
        assert_eq!(spawner.name_of(name_hash(name)), Some(name));
    }
}
