//! heavy_compute: 1,000 entities; in parallel, invert each one's matrix 100
//! times, then transform its position by it. Every library runs on all cores
//! (its own thread pool, sized to the machine).

use criterion::{criterion_group, criterion_main, Criterion};
use doecs_bench::*;
use flecs_ecs::prelude::{ParSystemAPI, World as FlecsWorld};
use rayon::prelude::*;
use shipyard::{IntoIter, ViewMut};

fn heavy_compute(c: &mut Criterion) {
    let mut g = group(c, "heavy_compute");
    let n = sized(HEAVY_N);

    let mut world = doecs::World::new();
    world.spawn_batch((0..n).map(|_| heavy_bundle()));
    g.bench_function("doecs", |b| {
        b.iter(|| {
            world
                .query_mut::<(&mut Position, &mut Transform)>()
                .par_for_each(|(p, t)| heavy(p, t))
        })
    });

    let mut world = hecs::World::new();
    world.spawn_batch((0..n).map(|_| heavy_bundle()));
    g.bench_function("hecs", |b| {
        // hecs' documented route to parallelism: batches bridged to rayon.
        b.iter(|| {
            world
                .query::<(&mut Position, &mut Transform)>()
                .iter_batched(64)
                .par_bridge()
                .for_each(|batch| {
                    for (p, t) in batch {
                        heavy(p, t);
                    }
                })
        })
    });

    bevy_task_pool();
    let mut world = bevy_ecs::world::World::new();
    world
        .spawn_batch((0..n).map(|_| heavy_bundle()))
        .for_each(drop);
    let mut query = world.query::<(&mut Position, &mut Transform)>();
    g.bench_function("bevy_ecs", |b| {
        b.iter(|| {
            query
                .par_iter_mut(&mut world)
                .for_each(|(mut p, mut t)| heavy(&mut p, &mut t))
        })
    });

    let mut world = shipyard::World::new();
    world
        .bulk_add_entity((0..n).map(|_| heavy_bundle()))
        .for_each(drop);
    g.bench_function("shipyard", |b| {
        b.iter(|| {
            world.run(|mut ps: ViewMut<Position>, mut ts: ViewMut<Transform>| {
                (&mut ps, &mut ts).par_iter().for_each(|(p, t)| heavy(p, t))
            })
        })
    });

    let world = FlecsWorld::new();
    world.set_threads(threads() as i32);
    for _ in 0..n {
        let (t, p, r, v) = heavy_bundle();
        world.entity().set(t).set(p).set(r).set(v);
    }
    world
        .system::<(&mut Position, &mut Transform)>()
        .par_each(|(p, t)| heavy(p, t));
    g.bench_function("flecs_ecs", |b| b.iter(|| world.progress()));

    let mut positions = vec![heavy_bundle().1; n];
    let mut transforms = vec![heavy_bundle().0; n];
    g.bench_function("soa_baseline", |b| {
        b.iter(|| {
            positions
                .par_iter_mut()
                .zip(transforms.par_iter_mut())
                .for_each(|(p, t)| heavy(p, t))
        })
    });
    g.finish();
}

criterion_group!(benches, heavy_compute);
criterion_main!(benches);
