//! Hooks and custom spawners that despawn level entities while a level
//! spawns. A level spawn is one world operation: the commands hooks record
//! while it runs are applied once it is complete, hierarchy and transforms
//! included, so the spawn neither panics nor leaves a half-linked entity
//! behind. A custom spawner that despawns an entity outright does not
//! stop the others from getting their transforms.

use doecs::raw::name_hash;

use doecs::{ComponentHooks, Entity, World};
use doecs_resource::transform::{encode_transform, TRANSFORM_SIZE};
use doecs_resource::{standard_spawner, BlobBuilder, SpawnOptions, NO_PARENT};
use doecs_transform::TransformManager;
use glam::{Affine3A, Vec3};
use std::sync::{Arc, Mutex};

#[derive(Copy, Clone, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(transparent)]
struct Mass(f32);
impl doecs_resource::PlainBytes for Mass {
    const SCALAR_WIDTH: usize = 4;
}

/// Roots 0 and 3, children 1, 2 under 0 and 4 under 3; every entity has a
/// transform and a mass.
fn blob() -> Vec<u8> {
    let parents = vec![NO_PARENT, 0, 0, NO_PARENT, 3];
    let mut b = BlobBuilder::new(parents);
    b.push_dense(
        name_hash("transform"),
        TRANSFORM_SIZE as u32,
        (0..5)
            .flat_map(|i| encode_transform(&Affine3A::from_translation(Vec3::X * i as f32)))
            .collect(),
    );
    b.push_dense(
        name_hash("mass"),
        4,
        (0..5).flat_map(|i| (i as f32).to_le_bytes()).collect(),
    );
    b.to_bytes()
}

#[test]
fn a_hook_that_despawns_a_level_entity_runs_after_the_whole_spawn() {
    let mut world = World::new();
    let mut spawner = standard_spawner();
    spawner.register_plain::<Mass>("mass").unwrap();
    let fired: Arc<Mutex<Vec<Entity>>> = Arc::default();
    let log = fired.clone();
    world.set_hooks::<Mass>(ComponentHooks::new().on_add(move |ctx| {
        log.lock().unwrap().push(ctx.entity);
        // A leaf (4) and a root with children (0).
        let mass = ctx.world.get::<Mass>(ctx.entity).unwrap().0;
        if mass == 0.0 || mass == 4.0 {
            ctx.commands.despawn(ctx.entity);
        }
    }));
    let out = spawner
        .spawn(&mut world, &blob(), SpawnOptions::default())
        .unwrap();
    let e = &out.entities;
    assert_eq!(
        *fired.lock().unwrap(),
        *e,
        "one on_add per entity, in order"
    );
    // The despawns were applied after the spawn, with the usual cleanup:
    // `ChildOf` despawns the children of a despawned parent.
    for (k, &entity) in e.iter().enumerate() {
        assert_eq!(world.alive(entity), k == 3, "entity {k}");
    }
    let tm = world.manager::<TransformManager>().unwrap();
    assert_eq!(tm.len(), 1);
    assert!(tm.lookup(e[4]).is_none());
    let t3 = tm.lookup(e[3]).unwrap();
    assert_eq!(tm.children(t3).count(), 0);
    assert_eq!(tm.world(t3).unwrap().translation, (Vec3::X * 3.0).into());
    assert_eq!(world.children(e[3]).count(), 0);
    world.check_invariants();
}

/// A custom spawner that despawns one of the level's entities while the
/// level spawns, as a buggy game spawner might.
struct Despawner(u32);

impl doecs_resource::ComponentSpawner for Despawner {
    fn instance_size(&self) -> Option<usize> {
        Some(4)
    }
    fn spawn(&self, world: &mut World, batch: &doecs_resource::SpawnBatch<'_>) {
        world.despawn(batch.entity_lookup[self.0 as usize]).unwrap();
    }
}

#[test]
fn a_custom_spawner_despawning_a_level_entity_does_not_break_the_spawn() {
    let mut world = World::new();
    let mut spawner = standard_spawner();
    // Registered under "mass", before the transforms in block order.
    spawner.register("mass", Despawner(4)).unwrap();
    let mut bytes_blob = BlobBuilder::new(vec![NO_PARENT, 0, 0, NO_PARENT, 3]);
    bytes_blob.push_dense(name_hash("mass"), 4, vec![0; 20]);
    bytes_blob.push_dense(
        name_hash("transform"),
        TRANSFORM_SIZE as u32,
        (0..5)
            .flat_map(|i| encode_transform(&Affine3A::from_translation(Vec3::X * i as f32)))
            .collect(),
    );
    let out = spawner
        .spawn(&mut world, &bytes_blob.to_bytes(), SpawnOptions::default())
        .unwrap();
    let e = &out.entities;
    assert!(!world.alive(e[4]));
    let tm = world.manager::<TransformManager>().unwrap();
    assert_eq!(tm.len(), 4);
    let t0 = tm.lookup(e[0]).unwrap();
    assert_eq!(tm.children(t0).count(), 2);
    let t2 = tm.lookup(e[2]).unwrap();
    assert_eq!(tm.world(t2).unwrap().translation, (Vec3::X * 2.0).into());
    assert_eq!(tm.children(tm.lookup(e[3]).unwrap()).count(), 0);
    world.check_invariants();
}

#[test]
fn observers_see_every_level_entity_and_their_commands_apply_after_the_spawn() {
    use doecs::prelude::{Commands, Query, Trigger};
    use doecs::OnAdd;
    let mut world = World::new();
    let mut spawner = standard_spawner();
    spawner.register_plain::<Mass>("mass").unwrap();
    let fired: Arc<Mutex<Vec<(Entity, f32)>>> = Arc::default();
    let log = fired.clone();
    world
        .observe(
            move |t: Trigger<OnAdd, Mass>, masses: Query<&Mass>, mut commands: Commands| {
                let mass = masses.get(t.entity()).unwrap().0;
                log.lock().unwrap().push((t.entity(), mass));
                if mass == 4.0 {
                    commands.despawn(t.entity());
                }
            },
        )
        .unwrap();
    let out = spawner
        .spawn(&mut world, &blob(), SpawnOptions::default())
        .unwrap();
    let e = &out.entities;
    let seen: Vec<(Entity, f32)> = e.iter().enumerate().map(|(k, &x)| (x, k as f32)).collect();
    assert_eq!(
        *fired.lock().unwrap(),
        seen,
        "one OnAdd per entity, in order, values in place"
    );
    for (k, &entity) in e.iter().enumerate() {
        assert_eq!(world.alive(entity), k != 4, "entity {k}");
    }
    world.check_invariants();
}
