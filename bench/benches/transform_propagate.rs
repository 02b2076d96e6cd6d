//! transform_propagate: one full world-transform pass over an 81,000-node
//! forest (1,000 roots, each with 5 children, 25 grandchildren and 50
//! great-grandchildren), doecs-transform's `update_all` beside the same pass
//! written by hand over parent-before-child arrays. The peers have no
//! propagation of their own in these crates (see `NOT_AVAILABLE`).

use criterion::{criterion_group, criterion_main, Criterion};
use doecs::raw::Entities;
use doecs_bench::*;
use doecs_transform::TransformManager;
use glam::{Affine3A, Quat};
use std::hint::black_box;

fn local(k: usize) -> Affine3A {
    let f = k as f32 * 0.001;
    Affine3A::from_scale_rotation_translation(
        Vec3::splat(1.0 + f * 0.01),
        Quat::from_rotation_y(f),
        Vec3::new(f, 1.0, -f),
    )
}

/// Parent index of every node (parents first), for `roots` trees of 81 nodes.
fn forest(roots: usize) -> Vec<Option<u32>> {
    let mut parents = Vec::new();
    for _ in 0..roots {
        let root = parents.len() as u32;
        parents.push(None);
        let mut level = vec![root];
        for fan in [5, 5, 2] {
            let mut next = Vec::new();
            for &p in &level {
                for _ in 0..fan {
                    next.push(parents.len() as u32);
                    parents.push(Some(p));
                }
            }
            level = next;
        }
    }
    parents
}

fn transform_propagate(c: &mut Criterion) {
    let mut g = group(c, "transform_propagate");
    let parents = forest(if smoke() { 2 } else { 1000 });
    let locals: Vec<Affine3A> = (0..parents.len()).map(local).collect();

    let mut entities = Entities::new();
    let mut es = Vec::new();
    entities.alloc_many(parents.len(), &mut es);
    let mut tm = TransformManager::with_capacity(parents.len());
    tm.create_many(&es, &locals, &parents).unwrap();
    tm.compact();
    g.bench_function("doecs", |b| b.iter(|| black_box(&mut tm).update_all()));

    let parent: Vec<u32> = parents.iter().map(|p| p.unwrap_or(u32::MAX)).collect();
    let mut world = vec![Affine3A::IDENTITY; parents.len()];
    g.bench_function("soa_baseline", |b| {
        b.iter(|| {
            let world = black_box(&mut world);
            for i in 0..world.len() {
                let p = parent[i];
                world[i] = if p != u32::MAX {
                    world[p as usize] * locals[i]
                } else {
                    locals[i]
                };
            }
        })
    });
    g.finish();
}

criterion_group!(benches, transform_propagate);
criterion_main!(benches);
