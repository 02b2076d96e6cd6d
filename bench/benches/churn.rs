//! churn: despawn 10,000 entities, then spawn 10,000, exercising index reuse.

use criterion::{criterion_group, criterion_main, Criterion};
use doecs_bench::*;

fn churn(c: &mut Criterion) {
    let mut g = group(c, "churn");
    let n = n();
    g.bench_function("doecs", |b| {
        let mut world = doecs::World::new();
        let mut live = world.spawn_batch((0..n).map(|_| bundle()));
        b.iter(|| {
            for &e in &live {
                world.despawn(e).unwrap();
            }
            live.clear();
            world.spawn_batch_into((0..n).map(|_| bundle()), &mut live);
        })
    });
    g.bench_function("hecs", |b| {
        let mut world = hecs::World::new();
        let mut live: Vec<_> = world.spawn_batch((0..n).map(|_| bundle())).collect();
        b.iter(|| {
            for &e in &live {
                world.despawn(e).unwrap();
            }
            live.clear();
            live.extend(world.spawn_batch((0..n).map(|_| bundle())));
        })
    });
    g.finish();
}

criterion_group!(benches, churn);
criterion_main!(benches);
