//! simple_iter: `pos += vel` over 10,000 entities of (Transform, Position, Rotation, Velocity).

use criterion::{criterion_group, criterion_main, Criterion};
use doecs_bench::*;

fn simple_iter(c: &mut Criterion) {
    let mut g = group(c, "simple_iter");
    let n = n();

    let mut world = doecs::World::new();
    world.spawn_batch((0..n).map(|_| bundle()));
    g.bench_function("doecs_for_each", |b| {
        b.iter(|| {
            world
                .query_mut::<(&mut Position, &Velocity)>()
                .for_each(|(p, v)| p.0 += v.0)
        })
    });
    let mut query = doecs::Query::<(&mut Position, &Velocity)>::new(&world);
    g.bench_function("doecs_for_each_chunk", |b| {
        b.iter(|| {
            query.for_each_chunk(&mut world, |(ps, vs)| {
                for (p, v) in ps.iter_mut().zip(vs) {
                    p.0 += v.0;
                }
            })
        })
    });

    let mut world = hecs::World::new();
    world.spawn_batch((0..n).map(|_| bundle()));
    g.bench_function("hecs", |b| {
        b.iter(|| {
            for (p, v) in world.query_mut::<(&mut Position, &Velocity)>() {
                p.0 += v.0;
            }
        })
    });

    let mut positions = vec![Position(Vec3::X); n];
    let velocities = vec![Velocity(Vec3::X); n];
    g.bench_function("soa_baseline", |b| {
        b.iter(|| {
            for (p, v) in positions.iter_mut().zip(&velocities) {
                p.0 += v.0;
            }
            std::hint::black_box(&mut positions);
        })
    });
    g.finish();
}

criterion_group!(benches, simple_iter);
criterion_main!(benches);
