//! Spawning a 10,000-entity level from a blob in memory, side by side with
//! hecs's `spawn_batch` of the same plain components without the hierarchy,
//! plus the parts of the cost: validation alone, and a plain `memcpy` of the
//! component bytes (the floor).
//!
//! Level: 1,000 roots with 9 children each; every entity has `transform`
//! (48 bytes, linked into the `TransformManager` from `parent_index`),
//! `position` and `velocity` (12 bytes each, plain archetype components).
//! `DOECS_BENCH_SMOKE=1` shrinks it to 100 entities and runs each body once.

use criterion::{criterion_group, criterion_main, BatchSize, Criterion};
use doecs::raw::name_hash;
use doecs::World;
use doecs_benchkit::smoke;
use doecs_resource::transform::encode_transform;
use doecs_resource::{
    standard_spawner, AlignedBytes, BlobBuilder, SpawnOptions, Spawner, NO_PARENT,
};
use glam::{Affine3A, Vec3};
use std::hint::black_box;

#[derive(Copy, Clone, Debug, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(transparent)]
struct Position([f32; 3]);
#[derive(Copy, Clone, Debug, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(transparent)]
struct Velocity([f32; 3]);
impl doecs_resource::PlainBytes for Position {
    const SCALAR_WIDTH: usize = 4;
}
impl doecs_resource::PlainBytes for Velocity {
    const SCALAR_WIDTH: usize = 4;
}

fn entity_count() -> usize {
    if smoke() {
        100
    } else {
        10_000
    }
}

fn level(n: usize) -> (Vec<u8>, Vec<Affine3A>, Vec<Position>, Vec<Velocity>) {
    let parents: Vec<u32> = (0..n as u32)
        .map(|i| if i % 10 == 0 { NO_PARENT } else { i - i % 10 })
        .collect();
    let locals: Vec<Affine3A> = (0..n)
        .map(|i| Affine3A::from_translation(Vec3::new(i as f32, 1.0, 0.0)))
        .collect();
    let pos: Vec<Position> = (0..n).map(|i| Position([i as f32, 0.0, 1.0])).collect();
    let vel: Vec<Velocity> = (0..n).map(|i| Velocity([0.0, i as f32, 2.0])).collect();
    let mut b = BlobBuilder::new(parents);
    b.push_dense(
        name_hash("transform"),
        64,
        locals.iter().flat_map(encode_transform).collect(),
    );
    b.push_dense(
        name_hash("position"),
        12,
        pos.iter()
            .flat_map(|p| p.0.iter().flat_map(|f| f.to_le_bytes()))
            .collect(),
    );
    b.push_dense(
        name_hash("velocity"),
        12,
        vel.iter()
            .flat_map(|p| p.0.iter().flat_map(|f| f.to_le_bytes()))
            .collect(),
    );
    (b.to_bytes(), locals, pos, vel)
}

fn spawner() -> Spawner {
    let mut s = standard_spawner();
    s.register_plain::<Position>("position").unwrap();
    s.register_plain::<Velocity>("velocity").unwrap();
    s
}

fn bench(c: &mut Criterion) {
    let n = entity_count();
    let (blob, locals, pos, vel) = level(n);
    let blob = AlignedBytes::from_slice(&blob);
    let spawner = spawner();
    let mut g = doecs_benchkit::group(c, &format!("spawn_level_{n}"));
    g.bench_function("doecs_blob_load_and_spawn", |b| {
        b.iter_batched(
            World::new,
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
    // The same level without the transform block: plain components only,
    // the same work hecs does below.
    let plain_blob = {
        let view = doecs_resource::BlobView::parse(&blob).unwrap();
        let mut b = BlobBuilder::new(view.parent_index().iter().collect());
        for block in view
            .blocks()
            .iter()
            .filter(|b| b.component != name_hash("transform"))
        {
            b.push_dense(
                block.component,
                block.instance_size as u32,
                block.data.to_vec(),
            );
        }
        AlignedBytes::from_slice(&b.to_bytes())
    };
    g.bench_function("doecs_blob_plain_pos_vel_only", |b| {
        b.iter_batched(
            World::new,
            |mut world| {
                spawner
                    .spawn(&mut world, black_box(&plain_blob), SpawnOptions::default())
                    .unwrap();
                world
            },
            BatchSize::PerIteration,
        )
    });
    // The transform crate's batch creation alone, on the same data: the part
    // of the level spawn that the transform manager costs.
    let parents: Vec<Option<u32>> = (0..n as u32)
        .map(|i| (i % 10 != 0).then_some(i - i % 10))
        .collect();
    g.bench_function("transform_create_many_only", |b| {
        b.iter_batched(
            || {
                let mut entities = doecs::raw::Entities::new();
                let es: Vec<doecs::Entity> = (0..n).map(|_| entities.alloc()).collect();
                (doecs_transform::TransformManager::with_capacity(n), es)
            },
            |(mut tm, es)| {
                tm.create_many(&es, black_box(&locals), &parents).unwrap();
                tm
            },
            BatchSize::PerIteration,
        )
    });
    g.bench_function("doecs_blob_validate_only", |b| {
        b.iter(|| {
            spawner
                .load(black_box(&blob), SpawnOptions::default())
                .unwrap()
                .0
                .num_entities()
        })
    });
    g.bench_function("hecs_spawn_batch_pos_vel", |b| {
        b.iter_batched(
            hecs::World::new,
            |mut world| {
                world
                    .spawn_batch(pos.iter().zip(&vel).map(|(p, v)| (*p, *v)))
                    .for_each(drop);
                world
            },
            BatchSize::PerIteration,
        )
    });
    g.bench_function("hecs_spawn_batch_local_pos_vel", |b| {
        b.iter_batched(
            hecs::World::new,
            |mut world| {
                world
                    .spawn_batch(
                        locals
                            .iter()
                            .zip(&pos)
                            .zip(&vel)
                            .map(|((l, p), v)| (*l, *p, *v)),
                    )
                    .for_each(drop);
                world
            },
            BatchSize::PerIteration,
        )
    });
    let view = doecs_resource::BlobView::parse(&blob).unwrap();
    let columns: Vec<&[u8]> = view.blocks().iter().map(|b| b.data).collect();
    let total: usize = columns.iter().map(|c| c.len()).sum();
    g.bench_function("memcpy_component_bytes", |b| {
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

criterion_group!(benches, bench);
criterion_main!(benches);
