//! lazy_gc: one lazy garbage-collection sweep of a 100,000-instance transform
//! manager when nothing has died (it stops after four live probes), beside four
//! hand-written random liveness checks: the sweep should cost about the same.

use criterion::{criterion_group, criterion_main, Criterion};
use doecs::raw::Entities;
use doecs::Entity;
use doecs_bench::*;
use doecs_transform::TransformManager;

fn lazy_gc(c: &mut Criterion) {
    let mut g = group(c, "lazy_gc");
    let n = if smoke() { 100 } else { 100_000 };
    let mut entities = Entities::new();
    let mut tm = TransformManager::new();
    let all: Vec<Entity> = (0..n).map(|_| entities.alloc()).collect();
    for &e in &all {
        tm.create(e, glam::Affine3A::IDENTITY).unwrap();
    }
    let report = tm.sweep_garbage(&entities);
    assert_eq!(
        report.probes, 4,
        "a sweep with nothing dead probes four instances"
    );
    println!("lazy_gc: sweep with nothing dead: {report:?}");
    g.bench_function("doecs_sweep_nothing_dead", |b| {
        b.iter(|| tm.sweep_garbage(&entities))
    });
    let picks = shuffled(all.clone());
    let mut k = 0;
    g.bench_function("four_alive_checks", |b| {
        b.iter(|| {
            let mut alive = 0;
            for _ in 0..4 {
                k = (k + 1) % picks.len();
                alive += entities.alive(picks[k]) as u32;
            }
            alive
        })
    });
    g.finish();
}

criterion_group!(benches, lazy_gc);
criterion_main!(benches);
