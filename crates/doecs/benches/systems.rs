//! The execution layer's figures, each side by side with its reference:
//! - `deferred_despawn`: despawning 10,000 entities through a command buffer
//!   vs despawning them directly;
//! - `heavy_compute`: 1,000 entities inverting a `Mat4` 100 times with
//!   `par_for_each` vs a plain rayon `par_iter_mut` over a `Vec`.
//!
//! `DOECS_BENCH_SMOKE=1` shrinks every size so `cargo test --benches` runs
//! each body once quickly.

use criterion::{criterion_group, criterion_main, BatchSize, Criterion};
use doecs::{CommandBuffer, World};
use doecs_benchkit::smoke;
use glam::{Mat4, Vec3};
use rayon::prelude::*;
use std::hint::black_box;

#[derive(Clone, Copy)]
struct Pos(Vec3);
/// Carried for a realistic row size; never read.
#[allow(dead_code)]
#[derive(Clone, Copy)]
struct Vel(Vec3);
#[derive(Clone, Copy)]
struct Transform(Mat4);
/// Carried for a realistic row size; never read.
#[allow(dead_code)]
#[derive(Clone, Copy)]
struct Rot(Vec3);

fn populated(n: usize) -> (World, Vec<doecs::Entity>) {
    let mut world = World::new();
    let es = world.spawn_batch((0..n).map(|i| (Pos(Vec3::splat(i as f32)), Vel(Vec3::ONE))));
    (world, es)
}

fn deferred_despawn(c: &mut Criterion) {
    let n = if smoke() { 100 } else { 10_000 };
    let mut g = c.benchmark_group("deferred_despawn");
    g.bench_function("direct", |b| {
        b.iter_batched_ref(
            || populated(n),
            |(world, es)| {
                for &e in es.iter() {
                    world.despawn(e).unwrap();
                }
            },
            BatchSize::LargeInput,
        )
    });
    g.bench_function("command_buffer", |b| {
        let mut buffer = CommandBuffer::new();
        b.iter_batched_ref(
            || populated(n),
            |(world, es)| {
                for &e in es.iter() {
                    buffer.despawn(e);
                }
                black_box(world.apply(&mut buffer));
            },
            BatchSize::LargeInput,
        )
    });
    g.finish();
}

fn heavy_compute(c: &mut Criterion) {
    let n = if smoke() { 20 } else { 1_000 };
    let mut g = c.benchmark_group("heavy_compute");
    let mut world = World::new();
    world.spawn_batch((0..n).map(|_| {
        (
            Transform(Mat4::from_axis_angle(Vec3::X, 1.2)),
            Pos(Vec3::X),
            Rot(Vec3::X),
            Vel(Vec3::X),
        )
    }));
    g.bench_function("doecs_par_for_each", |b| {
        b.iter(|| {
            world
                .query_mut::<(&mut Transform, &mut Pos)>()
                .par_for_each(|(t, p)| heavy(t, p))
        })
    });
    let mut soa: Vec<(Mat4, Vec3)> = (0..n)
        .map(|_| (Mat4::from_axis_angle(Vec3::X, 1.2), Vec3::X))
        .collect();
    g.bench_function("rayon_vec", |b| {
        b.iter(|| {
            soa.par_iter_mut().for_each(|(t, p)| {
                for _ in 0..100 {
                    *t = t.inverse();
                }
                *p = t.transform_vector3(*p);
            })
        })
    });
    g.finish();
}

/// ecs_bench_suite's heavy_compute kernel.
fn heavy(t: &mut Transform, p: &mut Pos) {
    for _ in 0..100 {
        t.0 = t.0.inverse();
    }
    p.0 = t.0.transform_vector3(p.0);
}

criterion_group! {
    name = benches;
    config = Criterion::default();
    targets = deferred_despawn, heavy_compute
}
criterion_main!(benches);
