//! Prefabs and instances declared in a level: compiled into the blob,
//! spawned as the `Prefab` tag and `(IsA, prefab)` pairs, read through
//! inheritance; bad declarations are compile errors and hostile blobs load
//! errors.

mod common;

use doecs::{IsA, Prefab, World};
use doecs_resource::{BlobBuilder, CompileError, SpawnError, SpawnOptions, TypeBlock, IS_A};

const LEVEL: &str = r#"{"entities": [
    {"name": "crate", "components": {"prefab": true, "mass": 5.0, "position": [0, 0, 0]},
     "children": [{"name": "lid", "components": {"mass": 1.0}}]},
    {"name": "heavy crate", "components": {"prefab": true, "is_a": "crate", "mass": 50.0}},
    {"components": {"is_a": "crate", "position": [1, 0, 0]}},
    {"components": {"is_a": "crate", "position": [2, 0, 0], "mass": 7.0}},
    {"components": {"is_a": "heavy crate", "position": [3, 0, 0]}}
]}"#;

#[test]
fn a_level_declares_prefabs_and_instances() {
    let (compiler, spawner) = common::registry();
    let blob = compiler.compile_str(LEVEL).unwrap();
    let mut world = World::new();
    let out = spawner
        .spawn(&mut world, &blob, SpawnOptions::default())
        .unwrap();
    let e = &out.entities;
    // Blob order (preorder): crate, lid, heavy crate, three instances.
    let (crate_, lid, heavy, plain, own, from_heavy) = (e[0], e[1], e[2], e[3], e[4], e[5]);
    assert!(world.contains::<Prefab>(crate_) && world.contains::<Prefab>(heavy));
    assert!(!world.contains::<Prefab>(plain) && !world.contains::<Prefab>(lid));
    assert!(world.has_pair::<IsA>(plain, crate_));
    assert!(world.has_pair::<IsA>(heavy, crate_));
    assert!(world.has_pair::<IsA>(from_heavy, heavy));
    // Inherited reads, overrides, chains.
    assert_eq!(world.get::<f32>(plain), Ok(&5.0));
    assert_eq!(world.get::<f32>(own), Ok(&7.0));
    assert_eq!(world.get::<f32>(from_heavy), Ok(&50.0));
    assert_eq!(world.get::<[f32; 3]>(from_heavy), Ok(&[3.0, 0.0, 0.0]));
    // Prefabs stay out of ordinary queries; their children are ordinary.
    let mut masses: Vec<f32> = world.query_mut::<&f32>().iter().copied().collect();
    masses.sort_by(f32::total_cmp);
    assert_eq!(
        masses,
        [1.0, 7.0],
        "the lid and the override; the prefabs are hidden"
    );
    assert_eq!(world.parent(lid), Some(crate_));
    // Despawning a prefab takes its instances (IsA's cleanup).
    world.despawn(heavy).unwrap();
    assert!(!world.alive(from_heavy));
    world.check_invariants();
}

#[test]
fn bad_prefab_declarations_are_compile_errors() {
    let (compiler, _) = common::registry();
    let compile = |json: &str| compiler.compile_str(json).unwrap_err();
    let message = |e: CompileError| e.to_string();
    // A prefab declared after its instance.
    let e = compile(
        r#"{"entities": [{"components": {"is_a": "later"}}, {"name": "later", "components": {"prefab": true}}]}"#,
    );
    assert!(message(e).contains("no earlier entity is named `later`"));
    // An entity as its own prefab.
    let e = compile(r#"{"entities": [{"name": "me", "components": {"is_a": "me"}}]}"#);
    assert!(message(e).contains("no earlier entity is named `me`"));
    // An ambiguous name.
    let e = compile(
        r#"{"entities": [{"name": "a", "components": {}}, {"name": "a", "components": {}}, {"components": {"is_a": "a"}}]}"#,
    );
    assert!(message(e).contains("more than one earlier entity is named `a`"));
    // Not a name; `prefab` not `true`.
    let e = compile(r#"{"entities": [{"components": {"is_a": 0}}]}"#);
    assert!(message(e).contains("expected the name of an earlier entity"));
    let e = compile(r#"{"entities": [{"components": {"prefab": false}}]}"#);
    assert!(message(e).contains("expected `true`"));
}

#[test]
fn a_hostile_is_a_block_is_a_load_error_and_spawns_nothing() {
    let (_, spawner) = common::registry();
    for prefab in [1u32, 2, u32::MAX] {
        // Entity 1 claims entity `prefab` (itself, later, or out of range).
        let mut blob = BlobBuilder::new(vec![u32::MAX, u32::MAX, u32::MAX]);
        blob.push_block(TypeBlock {
            component: doecs::raw::name_hash(IS_A),
            instance_size: 4,
            entity_index: vec![1],
            data: prefab.to_le_bytes().to_vec(),
        });
        let mut world = World::new();
        let err = spawner
            .spawn(&mut world, &blob.to_bytes(), SpawnOptions::default())
            .unwrap_err();
        assert!(matches!(err, SpawnError::Load(_)), "{err}");
        assert_eq!(world.len(), 0, "a refused blob spawns nothing");
    }
}
