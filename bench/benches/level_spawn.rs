//! level_spawn: a 10,000-entity level (1,000 roots with 9 children each; a
//! local transform, `Position` and `Velocity` per entity) spawned by doecs
//! from doecs-resource's compiled blob in memory, validation and hierarchy
//! linking included.
//!
//! The peers have no level format or blob loader, so their rows are the bar
//! the resource issue sets: each library's batch spawn of the same three
//! plain components (the local transform as a plain `Affine3A` value) from
//! ready-made arrays, without the hierarchy. The SoA baseline copies the
//! blob's component bytes into a new buffer: the memcpy floor.

use criterion::{criterion_group, criterion_main, BatchSize, Criterion};
use doecs_bench::*;
use doecs_resource::transform::{encode_transform, TRANSFORM_SIZE};
use doecs_resource::{
    standard_spawner, AlignedBytes, BlobBuilder, BlobView, SpawnOptions, NO_PARENT,
};
use glam::Affine3A;
use std::hint::black_box;

/// The level's blob and the same data as arrays.
fn level(n: usize) -> (Vec<u8>, Vec<LocalTransform>, Vec<Position>, Vec<Velocity>) {
    let parents: Vec<u32> = (0..n as u32)
        .map(|i| if i % 10 == 0 { NO_PARENT } else { i - i % 10 })
        .collect();
    let locals: Vec<LocalTransform> = (0..n)
        .map(|i| LocalTransform(Affine3A::from_translation(Vec3::new(i as f32, 1.0, 0.0))))
        .collect();
    let pos: Vec<Position> = (0..n)
        .map(|i| Position(Vec3::new(i as f32, 0.0, 1.0)))
        .collect();
    let vel: Vec<Velocity> = (0..n)
        .map(|i| Velocity(Vec3::new(0.0, i as f32, 2.0)))
        .collect();
    let le = |v: &Vec3| v.to_array().into_iter().flat_map(f32::to_le_bytes);
    let mut b = BlobBuilder::new(parents);
    b.push_dense(
        doecs::name_hash("transform"),
        TRANSFORM_SIZE as u32,
        locals.iter().flat_map(|l| encode_transform(&l.0)).collect(),
    );
    b.push_dense(
        doecs::name_hash("position"),
        12,
        pos.iter().flat_map(|p| le(&p.0)).collect(),
    );
    b.push_dense(
        doecs::name_hash("velocity"),
        12,
        vel.iter().flat_map(|v| le(&v.0)).collect(),
    );
    (b.to_bytes(), locals, pos, vel)
}

fn level_spawn(c: &mut Criterion) {
    let mut g = group(c, "level_spawn");
    let n = n() / 10 * 10;
    let (blob, locals, pos, vel) = level(n);
    let blob = AlignedBytes::from_slice(&blob);
    let mut spawner = standard_spawner();
    spawner.register_plain::<Position>("position").unwrap();
    spawner.register_plain::<Velocity>("velocity").unwrap();
    let rows = || {
        locals
            .iter()
            .zip(&pos)
            .zip(&vel)
            .map(|((l, p), v)| (*l, *p, *v))
    };

    g.bench_function("doecs", |b| {
        b.iter_batched(
            doecs::World::new,
            |mut world| {
                let out = spawner
                    .spawn(&mut world, black_box(&blob), SpawnOptions::default())
                    .unwrap();
                assert_eq!(out.entities.len(), n);
                world
            },
            BatchSize::PerIteration,
        )
    });
    g.bench_function("hecs", |b| {
        b.iter_batched(
            hecs::World::new,
            |mut world| {
                world.spawn_batch(rows()).for_each(drop);
                world
            },
            BatchSize::PerIteration,
        )
    });
    g.bench_function("bevy_ecs", |b| {
        b.iter_batched(
            bevy_ecs::world::World::new,
            |mut world| {
                world.spawn_batch(rows()).for_each(drop);
                world
            },
            BatchSize::PerIteration,
        )
    });
    g.bench_function("shipyard", |b| {
        b.iter_batched(
            shipyard::World::new,
            |mut world| {
                world.bulk_add_entity(rows()).for_each(drop);
                world
            },
            BatchSize::PerIteration,
        )
    });
    g.bench_function("flecs_ecs", |b| {
        b.iter_batched(
            flecs_ecs::prelude::World::new,
            |world| {
                world
                    .entity_bulk(n as u32)
                    .set(&locals)
                    .set(&pos)
                    .set(&vel)
                    .build();
                world
            },
            BatchSize::PerIteration,
        )
    });
    let view = BlobView::parse(&blob).unwrap();
    let columns: Vec<&[u8]> = view.blocks().iter().map(|b| b.data).collect();
    let total: usize = columns.iter().map(|c| c.len()).sum();
    g.bench_function("soa_baseline", |b| {
        b.iter_batched(
            || Vec::<u8>::with_capacity(total),
            |mut dst| {
                for c in &columns {
                    dst.extend_from_slice(black_box(c));
                }
                dst
            },
            BatchSize::PerIteration,
        )
    });
    g.finish();
}

criterion_group!(benches, level_spawn);
criterion_main!(benches);
