//! add_remove: 10,000 entities with A; add B to all of them, then remove B
//! from all of them.

use criterion::{criterion_group, criterion_main, BatchSize, Criterion};
use doecs_bench::*;
use flecs_ecs::prelude::{ComponentId, IdOperations, World as FlecsWorld};

fn add_remove(c: &mut Criterion) {
    let mut g = group(c, "add_remove");
    let n = n();

    let mut world = doecs::World::new();
    let entities = world.spawn_batch((0..n).map(|i| (A(i as f32),)));
    g.bench_function("doecs", |b| {
        b.iter(|| {
            for &e in &entities {
                world.insert_one(e, B(0.0)).unwrap();
            }
            for &e in &entities {
                world.remove_one::<B>(e).unwrap();
            }
        })
    });

    // The same changes with `B` registered sparse: no row moves.
    let mut world = doecs::World::new();
    world.register_sparse::<B>().unwrap();
    let entities = world.spawn_batch((0..n).map(|i| (A(i as f32),)));
    g.bench_function("doecs_sparse", |b| {
        b.iter(|| {
            for &e in &entities {
                world.insert_one(e, B(0.0)).unwrap();
            }
            for &e in &entities {
                world.remove_one::<B>(e).unwrap();
            }
        })
    });

    // The same changes as one batch each way.
    let mut world = doecs::World::new();
    let entities = world.spawn_batch((0..n).map(|i| (A(i as f32),)));
    g.bench_function("doecs_batch", |b| {
        b.iter(|| {
            world
                .insert_batch(entities.iter().map(|&e| (e, (B(0.0),))))
                .unwrap();
            world.remove_batch::<(B,)>(&entities).unwrap();
        })
    });

    let mut world = hecs::World::new();
    let entities: Vec<_> = world.spawn_batch((0..n).map(|i| (A(i as f32),))).collect();
    g.bench_function("hecs", |b| {
        b.iter(|| {
            for &e in &entities {
                world.insert_one(e, B(0.0)).unwrap();
            }
            for &e in &entities {
                world.remove_one::<B>(e).unwrap();
            }
        })
    });

    let mut world = bevy_ecs::world::World::new();
    let entities: Vec<_> = world.spawn_batch((0..n).map(|i| (A(i as f32),))).collect();
    g.bench_function("bevy_ecs", |b| {
        b.iter(|| {
            for &e in &entities {
                world.entity_mut(e).insert(B(0.0));
            }
            for &e in &entities {
                world.entity_mut(e).remove::<B>();
            }
        })
    });

    let mut world = shipyard::World::new();
    let entities: Vec<_> = world
        .bulk_add_entity((0..n).map(|i| (A(i as f32),)))
        .collect();
    g.bench_function("shipyard", |b| {
        b.iter(|| {
            for &e in &entities {
                world.add_component(e, B(0.0));
            }
            for &e in &entities {
                world.remove::<(B,)>(e).0.unwrap();
            }
        })
    });

    let world = FlecsWorld::new();
    let entities: Vec<_> = (0..n)
        .map(|i| world.entity().set(A(i as f32)).id())
        .collect();
    g.bench_function("flecs_ecs", |b| {
        b.iter(|| {
            for &e in &entities {
                world.entity_from_id(e).set(B(0.0));
            }
            for &e in &entities {
                world.entity_from_id(e).remove(B::id());
            }
        })
    });

    g.bench_function("soa_baseline", |b| {
        // Two tables, moving rows by swap-remove: what an archetype move costs
        // when written by hand for exactly two types.
        b.iter_batched(
            || (0..n).map(|i| A(i as f32)).collect::<Vec<_>>(),
            |mut only_a| {
                let (mut both_a, mut both_b) = (Vec::with_capacity(n), Vec::with_capacity(n));
                while let Some(a) = only_a.pop() {
                    both_a.push(a);
                    both_b.push(B(0.0));
                }
                while let Some(a) = both_a.pop() {
                    both_b.pop();
                    only_a.push(a);
                }
                only_a
            },
            BatchSize::LargeInput,
        )
    });
    g.finish();
}

criterion_group!(benches, add_remove);
criterion_main!(benches);
