//! simple_iter: `pos += vel` over 10,000 entities of
//! (Transform, Position, Rotation, Velocity).

use bevy_ecs::prelude::Mut;
use criterion::{criterion_group, criterion_main, Criterion};
use doecs_bench::*;
use flecs_ecs::prelude::{QueryAPI, World as FlecsWorld};
use shipyard::{IntoIter, View, ViewMut};

/// doecs's chunk form of the kernel: one call per chunk, with its slices.
fn integrate_chunks(
    query: &mut doecs::QueryState<(&mut Position, &Velocity)>,
    world: &mut doecs::World,
) {
    query.for_each_chunk(world, |(ps, vs)| {
        for (p, v) in ps.iter_mut().zip(vs) {
            integrate(p, v);
        }
    })
}

fn simple_iter(c: &mut Criterion) {
    let mut g = group(c, "simple_iter");
    let n = n();

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
        b.iter(|| integrate_chunks(&mut query, &mut world))
    });

    let mut world = hecs::World::new();
    world.spawn_batch((0..n).map(|_| bundle()));
    g.bench_function("hecs", |b| {
        b.iter(|| {
            for (p, v) in world.query_mut::<(&mut Position, &Velocity)>() {
                integrate(p, v);
            }
        })
    });

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

    let mut world = shipyard::World::new();
    world
        .bulk_add_entity((0..n).map(|_| bundle()))
        .for_each(drop);
    g.bench_function("shipyard", |b| {
        b.iter(|| {
            world.run(|mut ps: ViewMut<Position>, vs: View<Velocity>| {
                for (p, v) in (&mut ps, &vs).iter() {
                    integrate(p, v);
                }
            })
        })
    });

    let world = FlecsWorld::new();
    for _ in 0..n {
        let (t, p, r, v) = bundle();
        world.entity().set(t).set(p).set(r).set(v);
    }
    let query = world.new_query::<(&mut Position, &Velocity)>();
    g.bench_function("flecs_ecs", |b| {
        b.iter(|| query.each(|(p, v)| integrate(p, v)))
    });

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

    let (mut chunks, last_len) = soa_chunks(n);
    let last = chunks.len() - 1;
    g.bench_function("soa_16k_chunks", |b| {
        b.iter(|| {
            for (i, chunk) in chunks.iter_mut().enumerate() {
                let len = if i == last { last_len } else { SOA_CHUNK_ROWS };
                let chunk = &mut **chunk;
                for (p, v) in chunk.positions[..len]
                    .iter_mut()
                    .zip(&chunk.velocities[..len])
                {
                    integrate(p, v);
                }
            }
            std::hint::black_box(&mut chunks);
        })
    });
    g.finish();
}

criterion_group!(benches, simple_iter);
criterion_main!(benches);
