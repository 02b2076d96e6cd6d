//! relations: what relationship pairs cost.
//!
//! - `relations_add_remove`: 10,000 entities with A; add then remove, on
//!   each, a plain component (B), a data pair `(Rel, target)`, and a
//!   `ChildOf` parent. The bar is the pair at most 1.25× the
//!   component.
//! - `relations_parent_read`: 1,000 parents with 12 children each; every
//!   child reads its parent's A (traversal up the hierarchy): through
//!   `parent` and `get` per child, and through a held query with an
//!   `Up<ChildOf, &A>` term, beside flecs_ecs's `ChildOf` with an
//!   up-traversal term, against a hand-written loop over a parent-index
//!   array.

use criterion::{criterion_group, criterion_main, Criterion};
use doecs::{Entity, Relation};
use doecs_bench::*;
use glam::Vec3;
use std::hint::black_box;

#[derive(Clone)]
struct Rel(#[allow(dead_code)] f32);
impl Relation for Rel {}

fn add_remove(c: &mut Criterion) {
    let mut g = group(c, "relations_add_remove");
    let n = n();
    let mut world = doecs::World::new();
    let entities = world.spawn_batch((0..n).map(|i| (A(i as f32),)));
    let target = world.spawn((A(0.0),));
    g.bench_function("doecs_component", |b| {
        b.iter(|| {
            for &e in &entities {
                world.insert_one(e, B(0.0)).unwrap();
            }
            for &e in &entities {
                world.remove_one::<B>(e).unwrap();
            }
        })
    });
    g.bench_function("doecs_pair", |b| {
        b.iter(|| {
            for &e in &entities {
                world.add_pair(e, target, Rel(0.0)).unwrap();
            }
            for &e in &entities {
                world.remove_pair::<Rel>(e, target).unwrap();
            }
        })
    });
    g.bench_function("doecs_child_of", |b| {
        b.iter(|| {
            for &e in &entities {
                world.set_parent(e, target).unwrap();
            }
            for &e in &entities {
                world.remove_parent(e).unwrap();
            }
        })
    });
    g.finish();
}

fn parent_read(c: &mut Criterion) {
    let mut g = group(c, "relations_parent_read");
    let parents = sized(1_000);
    let mut world = doecs::World::new();
    let mut index_of_parent = Vec::new();
    let mut parent_values = Vec::new();
    for p in 0..parents {
        let parent = world.spawn((A(p as f32),));
        parent_values.push(A(p as f32));
        for _ in 0..12 {
            let child = world.spawn((B(0.0),));
            world.set_parent(child, parent).unwrap();
            index_of_parent.push(p);
        }
    }
    let mut query = doecs::QueryState::<(Entity, &B)>::new(&world);
    g.bench_function("doecs_get_parent", |b| {
        b.iter(|| {
            let mut sum = 0.0;
            for (child, _) in query.iter(&world) {
                let parent = world.parent(child).unwrap();
                sum += world.get::<A>(parent).unwrap().0;
            }
            black_box(sum)
        })
    });
    let mut up = doecs::QueryState::<(&B, doecs::Up<doecs::ChildOf, &A>)>::new(&world);
    g.bench_function("doecs_up_query", |b| {
        b.iter(|| {
            let mut sum = 0.0;
            up.for_each(&mut world, |(_, parent)| sum += parent.0);
            black_box(sum)
        })
    });
    // flecs_ecs: the same hierarchy through its built-in `ChildOf` pairs
    // (one table per parent), read with an up-traversal term.
    let flecs = flecs_ecs::prelude::World::new();
    for p in 0..parents {
        let parent = flecs.entity().set(A(p as f32));
        for _ in 0..12 {
            flecs.entity().set(B(0.0)).child_of(parent);
        }
    }
    let flecs_query = {
        use flecs_ecs::prelude::*;
        flecs.query::<(&B, &A)>().term_at(1).parent().build()
    };
    g.bench_function("flecs_ecs_up", |b| {
        use flecs_ecs::prelude::QueryAPI;
        b.iter(|| {
            let mut sum = 0.0;
            flecs_query.each(|(_, parent)| sum += parent.0);
            black_box(sum)
        })
    });
    g.bench_function("soa_baseline", |b| {
        b.iter(|| {
            let sum: f32 = index_of_parent.iter().map(|&p| parent_values[p].0).sum();
            black_box(sum)
        })
    });
    g.finish();
}

/// Iterating every part of the demo level's shape (1,000 ships of 13
/// entities), with and without the hierarchy as `ChildOf`.
fn demo_level_iter(c: &mut Criterion) {
    let mut g = group(c, "relations_demo_level_iter");
    for (name, child_of) in [("doecs_no_hierarchy", false), ("doecs_child_of", true)] {
        let mut world = doecs::World::new();
        spawn_demo_ships(&mut world, sized(DEMO_SHIPS), child_of);
        let mut parts = doecs::QueryState::<&mut LocalTransform>::new(&world);
        g.bench_function(name, |b| {
            b.iter(|| {
                parts.for_each(&mut world, |local| {
                    local.0.translation.x += 1.0;
                })
            })
        });
    }
    g.finish();
}

/// Parent of each entity of `ships` demo ships in spawn order (ship, then
/// each part followed by its sub-parts), `None` for the ships.
fn demo_parents(ships: usize) -> Vec<Option<u32>> {
    let mut parents = Vec::new();
    for _ in 0..ships {
        let ship = parents.len() as u32;
        parents.push(None);
        for _ in 0..DEMO_PARTS {
            let part = parents.len() as u32;
            parents.push(Some(ship));
            for _ in 0..DEMO_SUB_PARTS {
                parents.push(Some(part));
            }
        }
    }
    parents
}

/// `instantiate` of a 13-entity prefab (the demo ship: a transform on
/// every node, three levels of `ChildOf`) 1,000 times, against spawning
/// the same 13,000 entities with their transforms and hierarchy from a
/// compiled level blob.
fn instantiate(c: &mut Criterion) {
    use doecs_resource::transform::{encode_transform, TRANSFORM_SIZE};
    use doecs_resource::{standard_spawner, AlignedBytes, BlobBuilder, SpawnOptions, NO_PARENT};
    let mut g = group(c, "relations_instantiate");
    let ships = sized(DEMO_SHIPS);
    let parents = demo_parents(ships);
    let local = glam::Affine3A::from_translation(Vec3::new(1.0, 2.0, 3.0));
    let mut blob = BlobBuilder::new(parents.iter().map(|p| p.unwrap_or(NO_PARENT)).collect());
    blob.push_dense(
        doecs::raw::name_hash("transform"),
        TRANSFORM_SIZE as u32,
        parents
            .iter()
            .flat_map(|_| encode_transform(&local))
            .collect(),
    );
    let blob = AlignedBytes::from_slice(&blob.to_bytes());
    let spawner = standard_spawner();
    g.bench_function("doecs_blob_spawn", |b| {
        b.iter_batched(
            doecs::World::new,
            |mut world| {
                let out = spawner
                    .spawn(&mut world, black_box(&blob), SpawnOptions::default())
                    .unwrap();
                assert_eq!(out.entities.len(), parents.len());
                world
            },
            criterion::BatchSize::PerIteration,
        )
    });
    g.bench_function("doecs_instantiate", |b| {
        b.iter_batched(
            || {
                let mut world = doecs::World::new();
                let ship = spawn_demo_ships(&mut world, 1, true)[0];
                for e in world.descendants(ship) {
                    world.insert_one(e, doecs::Prefab).unwrap();
                }
                (world, ship)
            },
            |(mut world, ship)| {
                let fleet = world.instantiate(black_box(ship), ships).unwrap();
                assert_eq!(fleet.len(), ships);
                world
            },
            criterion::BatchSize::PerIteration,
        )
    });
    g.finish();
}

criterion_group!(
    benches,
    add_remove,
    parent_read,
    demo_level_iter,
    instantiate
);
criterion_main!(benches);
