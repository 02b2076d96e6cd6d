//! simple_insert: build a world and spawn 10,000 entities of
//! (Transform, Position, Rotation, Velocity), with each library's batch path.

use criterion::{criterion_group, criterion_main, Criterion};
use doecs_bench::*;

fn simple_insert(c: &mut Criterion) {
    let mut g = group(c, "simple_insert");
    let n = n();
    g.bench_function("doecs", |b| {
        b.iter(|| {
            let mut world = doecs::World::new();
            world.spawn_batch((0..n).map(|_| bundle()));
            world
        })
    });
    g.bench_function("hecs", |b| {
        b.iter(|| {
            let mut world = hecs::World::new();
            world.spawn_batch((0..n).map(|_| bundle()));
            world
        })
    });
    g.bench_function("bevy_ecs", |b| {
        b.iter(|| {
            let mut world = bevy_ecs::world::World::new();
            world.spawn_batch((0..n).map(|_| bundle())).for_each(drop);
            world
        })
    });
    g.bench_function("shipyard", |b| {
        b.iter(|| {
            let mut world = shipyard::World::new();
            world
                .bulk_add_entity((0..n).map(|_| bundle()))
                .for_each(drop);
            world
        })
    });
    g.bench_function("flecs_ecs", |b| {
        b.iter(|| {
            let world = flecs_ecs::prelude::World::new();
            flecs_spawn_bundles(&world, n);
            world
        })
    });
    g.bench_function("soa_baseline", |b| {
        b.iter(|| {
            let (mut t, mut p, mut r, mut v) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
            for (a, b2, c2, d) in (0..n).map(|_| bundle()) {
                t.push(a);
                p.push(b2);
                r.push(c2);
                v.push(d);
            }
            (t, p, r, v)
        })
    });
    g.finish();
}

criterion_group!(benches, simple_insert);
criterion_main!(benches);
