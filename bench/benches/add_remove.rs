//! add_remove: 10,000 entities with A; add B to all of them, then remove B.

use criterion::{criterion_group, criterion_main, BatchSize, Criterion};
use doecs_bench::*;

#[derive(Copy, Clone)]
struct A(#[allow(dead_code)] f32);
#[derive(Copy, Clone)]
struct B(#[allow(dead_code)] f32);

fn add_remove(c: &mut Criterion) {
    let mut g = group(c, "add_remove");
    let n = n();
    g.bench_function("doecs", |b| {
        let mut world = doecs::World::new();
        let entities = world.spawn_batch((0..n).map(|i| (A(i as f32),)));
        b.iter(|| {
            for &e in &entities {
                world.insert_one(e, B(0.0)).unwrap();
            }
            for &e in &entities {
                world.remove_one::<B>(e).unwrap();
            }
        })
    });
    g.bench_function("hecs", |b| {
        let mut world = hecs::World::new();
        let entities: Vec<_> = world.spawn_batch((0..n).map(|i| (A(i as f32),))).collect();
        b.iter(|| {
            for &e in &entities {
                world.insert_one(e, B(0.0)).unwrap();
            }
            for &e in &entities {
                world.remove_one::<B>(e).unwrap();
            }
        })
    });
    g.bench_function("soa_baseline", |b| {
        // Two tables and an index, moving rows by swap-remove: what an
        // archetype move costs when written by hand for exactly two types.
        b.iter_batched(
            || {
                (
                    (0..n).map(|i| A(i as f32)).collect::<Vec<_>>(),
                    (0..n).collect::<Vec<usize>>(),
                )
            },
            |(mut only_a, ids)| {
                let mut both: Vec<(A, B)> = Vec::with_capacity(n);
                while let Some(a) = only_a.pop() {
                    both.push((a, B(0.0)));
                }
                while let Some((a, _)) = both.pop() {
                    only_a.push(a);
                }
                (only_a, ids)
            },
            BatchSize::LargeInput,
        )
    });
    g.finish();
}

criterion_group!(benches, add_remove);
criterion_main!(benches);
