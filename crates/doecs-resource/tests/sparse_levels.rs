//! Levels naming components the registry stores sparse
//! (`Registering::sparse`): the spawner's column spawns route their values
//! to the sparse sets, in both spawn paths (every entity with the same
//! components, and groups of entities with different ones), with and
//! without parents, whether or not the registry was installed into the
//! world first. The `Sparse` query terms see the values, no archetype holds
//! the sparse components, and a save of the spawned world keeps them.

use bytemuck::{Pod, Zeroable};
use doecs::{ChildOf, Entity, Has, Sparse, World};
use doecs_registry::{ComponentRegistry, SaveFormat, WorldSaveExt};
use doecs_resource::{Compiler, SpawnOptions, Spawner};
use serde::{Deserialize, Serialize};

/// Stored sparse.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize, Pod, Zeroable)]
#[repr(C)]
struct Stunned {
    turns: u32,
    strength: f32,
}

/// A sparse marker.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize, Pod, Zeroable)]
#[repr(C)]
struct Glowing;

/// Stored in archetypes.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize, Pod, Zeroable)]
#[repr(transparent)]
struct Mass(f32);

fn registry() -> ComponentRegistry {
    let mut r = ComponentRegistry::new();
    r.register::<Stunned>("stunned").plain().sparse();
    r.register::<Glowing>("glowing").plain().sparse();
    r.register::<Mass>("mass").plain();
    r
}

fn spawn(world: &mut World, level: &str) -> Vec<Entity> {
    let registry = registry();
    let compiler = Compiler::from_registry(&registry).unwrap();
    let spawner = Spawner::from_registry(&registry).unwrap();
    let blob = compiler.compile_str(level).unwrap();
    let out = spawner
        .spawn(world, &blob, SpawnOptions { strict: true })
        .unwrap();
    world.check_invariants();
    out.entities
}

/// Every world a test spawns into: a new one, and one the registry was
/// installed into first.
fn worlds() -> [World; 2] {
    let mut installed = World::new();
    registry().install(&mut installed).unwrap();
    [World::new(), installed]
}

/// Asserts that the sparse components `world` knows are sparse there and
/// that no archetype holds them.
fn assert_sparse_storage(world: &World) {
    assert!(world.components().id_by_name("stunned").is_some());
    for name in ["stunned", "glowing"] {
        let Some(id) = world.components().id_by_name(name) else {
            continue;
        };
        assert!(world.components().info(id).is_sparse(), "{name}");
        for arch in doecs::raw::archetypes(world).iter() {
            assert!(!arch.components().contains(&id), "{name} in an archetype");
        }
    }
    let mass = world.components().id_of::<Mass>().unwrap();
    assert!(!world.components().info(mass).is_sparse());
}

fn stunned(world: &World) -> Vec<(Entity, u32)> {
    let mut v: Vec<(Entity, u32)> = world
        .query::<(Entity, Sparse<&Stunned>)>()
        .iter()
        .map(|(e, s)| (e, s.turns))
        .collect();
    v.sort();
    v
}

#[test]
fn a_level_of_mixed_entities_fills_the_sparse_sets() {
    // Entities differ in their components: the grouped spawn path, with a
    // hierarchy (so the batch is parented).
    let level = r#"{"entities": [
        {"name": "a", "components": {"mass": 1, "stunned": {"turns": 3, "strength": 0.5}},
         "children": [
            {"name": "b", "components": {"stunned": {"turns": 4, "strength": 1}, "glowing": null}},
            {"name": "c", "components": {"mass": 2}}
         ]},
        {"name": "d", "components": {"glowing": true}},
        {"name": "e"}
    ]}"#;
    for mut world in worlds() {
        let before = doecs::raw::archetypes(&world).len();
        let es = spawn(&mut world, level);
        let [a, b, c, d, e] = es[..] else {
            panic!("five entities")
        };
        assert_sparse_storage(&world);
        assert_eq!(stunned(&world), {
            let mut v = vec![(a, 3), (b, 4)];
            v.sort();
            v
        });
        assert_eq!(
            world.get::<Stunned>(b),
            Ok(&Stunned {
                turns: 4,
                strength: 1.0
            })
        );
        let glowing: Vec<(Entity, bool)> = world
            .query::<(Entity, Sparse<Has<Glowing>>)>()
            .iter()
            .filter(|&(_, g)| g)
            .collect();
        assert_eq!(glowing.len(), 2);
        assert!(world.get::<Glowing>(b).is_ok() && world.get::<Glowing>(d).is_ok());
        assert!(world.get::<Glowing>(a).is_err() && world.get::<Stunned>(c).is_err());
        assert!(world.get::<Stunned>(e).is_err());
        // Dense values and the hierarchy are as usual.
        assert_eq!(world.get::<Mass>(a), Ok(&Mass(1.0)));
        assert_eq!(world.get::<Mass>(c), Ok(&Mass(2.0)));
        assert_eq!(world.parent(b), Some(a));
        assert_eq!(world.parent(c), Some(a));
        assert!(world.has_pair::<ChildOf>(b, a));
        // The sparse components made no archetype: only () (which every
        // world has) and (Mass), plus the ChildOf pair's archetypes.
        let mut shapes: Vec<Vec<String>> = doecs::raw::archetypes(&world)
            .iter()
            .filter(|arch| !arch.is_empty())
            .map(|arch| {
                arch.components()
                    .iter()
                    .map(|&id| world.components().info(id).name().to_owned())
                    .collect()
            })
            .collect();
        shapes.sort();
        assert!(
            shapes
                .iter()
                .all(|s| !s.iter().any(|n| n == "stunned" || n == "glowing")),
            "{shapes:?}"
        );
        assert!(doecs::raw::archetypes(&world).len() > before);
    }
}

#[test]
fn a_level_where_every_entity_has_the_same_components() {
    // One group: the whole blob is spawned with one column spawn, sparse
    // columns included; roots only, then with children.
    let roots = r#"{"entities": [
        {"components": {"mass": 1, "stunned": {"turns": 1, "strength": 0}}},
        {"components": {"mass": 2, "stunned": {"turns": 2, "strength": 0}}},
        {"components": {"mass": 3, "stunned": {"turns": 3, "strength": 0}}}
    ]}"#;
    let parented = r#"{"entities": [
        {"components": {"glowing": null, "stunned": {"turns": 1, "strength": 0}},
         "children": [{"components": {"glowing": null, "stunned": {"turns": 2, "strength": 0}}}]}
    ]}"#;
    for mut world in worlds() {
        let archetypes = doecs::raw::archetypes(&world).len();
        let es = spawn(&mut world, roots);
        assert_sparse_storage(&world);
        assert_eq!(stunned(&world), vec![(es[0], 1), (es[1], 2), (es[2], 3)]);
        let rows: Vec<(f32, u32)> = world
            .query::<(&Mass, Sparse<&Stunned>)>()
            .iter()
            .map(|(m, s)| (m.0, s.turns))
            .collect();
        assert_eq!(rows.len(), 3);
        assert!(rows.iter().all(|&(m, t)| m == t as f32));
        // (Mass) only.
        assert_eq!(doecs::raw::archetypes(&world).len(), archetypes + 1);

        let kids = spawn(&mut world, parented);
        assert_eq!(world.parent(kids[1]), Some(kids[0]));
        assert_eq!(world.get::<Stunned>(kids[1]).unwrap().turns, 2);
        assert!(world.get::<Glowing>(kids[0]).is_ok());
        assert_eq!(stunned(&world).len(), 5);
    }
}

#[test]
fn a_spawned_level_saves_and_loads_with_its_sparse_values() {
    let level = r#"{"entities": [
        {"components": {"mass": 1, "stunned": {"turns": 3, "strength": 0.5}}},
        {"components": {"glowing": null}}
    ]}"#;
    let registry = registry();
    for mut world in worlds() {
        let es = spawn(&mut world, level);
        for format in [SaveFormat::Binary, SaveFormat::Json] {
            let mut bytes = Vec::new();
            world.save(&mut bytes, format, &registry).unwrap();
            let loaded = World::load(&bytes[..], &registry).unwrap();
            loaded.check_invariants();
            assert_sparse_storage(&loaded);
            assert_eq!(stunned(&loaded), vec![(es[0], 3)]);
            assert!(loaded.get::<Glowing>(es[1]).is_ok());
        }
    }
}
