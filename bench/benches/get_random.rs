//! get_random: 10,000 lookups of one component, by entity, in random order.

use criterion::{criterion_group, criterion_main, Criterion};
use doecs_bench::*;

fn get_random(c: &mut Criterion) {
    let mut g = group(c, "get_random");
    let n = n();
    let mut world = doecs::World::new();
    let order = shuffled(world.spawn_batch((0..n).map(|_| bundle())));
    g.bench_function("doecs", |b| {
        b.iter(|| {
            order
                .iter()
                .map(|&e| world.get::<Position>(e).unwrap().0.x)
                .sum::<f32>()
        })
    });
    let mut hworld = hecs::World::new();
    let horder: Vec<_> = hworld.spawn_batch((0..n).map(|_| bundle())).collect();
    let horder = shuffled(horder);
    g.bench_function("hecs", |b| {
        b.iter(|| {
            horder
                .iter()
                .map(|&e| hworld.get::<&Position>(e).unwrap().0.x)
                .sum::<f32>()
        })
    });
    let positions = vec![Position(Vec3::X); n];
    let indices = shuffled((0..n).collect::<Vec<_>>());
    g.bench_function("soa_baseline", |b| {
        b.iter(|| indices.iter().map(|&i| positions[i].0.x).sum::<f32>())
    });
    g.finish();
}

criterion_group!(benches, get_random);
criterion_main!(benches);
