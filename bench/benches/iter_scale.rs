//! simple_iter at every scale: `pos += vel` over 1,000 to 4,000,000 entities
//! of (Transform, Position, Rotation, Velocity), from in-cache (L1/L2) to far
//! out of cache (DRAM). One criterion group per size, `simple_iter_<size>`, so
//! every size has its own table; the report also draws the curve of time per
//! entity against size.
//!
//! The libraries iterate their usual way: doecs per entity (`query_mut`) and
//! per chunk (a held `QueryState`), hecs `query_mut`, bevy_ecs a held
//! `QueryState`, and the baseline two plain `Vec`s.

use bevy_ecs::prelude::Mut;
use criterion::{criterion_group, criterion_main, Criterion};
use doecs_bench::*;

/// The sizes and their labels.
pub const SIZES: [(usize, &str); 5] = [
    (1_000, "1k"),
    (10_000, "10k"),
    (100_000, "100k"),
    (1_000_000, "1m"),
    (4_000_000, "4m"),
];

fn iter_scale(c: &mut Criterion) {
    for (full, label) in SIZES {
        let n = sized(full);
        let mut g = group(c, &format!("simple_iter_{label}"));
        {
            let mut world = doecs::World::new();
            world.spawn_batch((0..n).map(|_| bundle()));
            g.bench_function("doecs", |b| {
                b.iter(|| {
                    world
                        .query_mut::<(&mut Position, &Velocity)>()
                        .for_each(|(p, v)| integrate(p, v))
                })
            });
            let mut query = doecs::QueryState::<(&mut Position, &Velocity)>::new(&world);
            g.bench_function("doecs_for_each_chunk", |b| {
                b.iter(|| {
                    query.for_each_chunk(&mut world, |(ps, vs)| {
                        for (p, v) in ps.iter_mut().zip(vs) {
                            integrate(p, v);
                        }
                    })
                })
            });
        }
        {
            let mut world = hecs::World::new();
            world.spawn_batch((0..n).map(|_| bundle()));
            g.bench_function("hecs", |b| {
                b.iter(|| {
                    for (p, v) in world.query_mut::<(&mut Position, &Velocity)>() {
                        integrate(p, v);
                    }
                })
            });
        }
        {
            let mut world = bevy_ecs::world::World::new();
            world.spawn_batch((0..n).map(|_| bundle())).for_each(drop);
            let mut query = world.query::<(&mut Position, &Velocity)>();
            g.bench_function("bevy_ecs", |b| {
                b.iter(|| {
                    for (mut p, v) in query.iter_mut(&mut world) {
                        integrate(Mut::as_mut(&mut p), v);
                    }
                })
            });
        }
        {
            let mut positions = vec![Position(Vec3::X); n];
            let velocities = vec![Velocity(Vec3::X); n];
            g.bench_function("soa_baseline", |b| {
                b.iter(|| {
                    for (p, v) in positions.iter_mut().zip(&velocities) {
                        integrate(p, v);
                    }
                    std::hint::black_box(&mut positions);
                })
            });
        }
        g.finish();
    }
}

criterion_group!(benches, iter_scale);
criterion_main!(benches);
