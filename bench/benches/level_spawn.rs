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
use doecs_bench::level::{HandLayout, Level};
use doecs_bench::*;
use doecs_resource::SpawnOptions;
use std::hint::black_box;

fn level_spawn(c: &mut Criterion) {
    let mut g = group(c, "level_spawn");
    let n = n() / 10 * 10;
    let level = Level::new(n);
    let (blob, locals, pos, vel) = (&level.blob, &level.locals, &level.pos, &level.vel);
    let spawner = Level::spawner();
    let rows = || {
        locals
            .iter()
            .zip(pos)
            .zip(vel)
            .map(|((l, p), v)| (*l, *p, *v))
    };

    g.bench_function("doecs", |b| {
        b.iter_batched(
            doecs::World::new,
            |mut world| {
                let out = spawner
                    .spawn(&mut world, black_box(blob), SpawnOptions::default())
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
                    .set(locals)
                    .set(pos)
                    .set(vel)
                    .build();
                world
            },
            BatchSize::PerIteration,
        )
    });
    let columns = level.component_bytes();
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
    // The floor for what doecs keeps after a level spawn, hierarchy
    // included, written by hand into buffers allocated and touched
    // beforehand: entity slots, the plain columns with their entity
    // column, the transform manager's columns in its layout, one array
    // per column (local, world computed from the parent's, entity, the
    // four links of real child lists, two flag bytes) with its entity map,
    // and one `ChildOf` row per child with the per-index list heads,
    // siblings written as linked runs. It reads the blob's own words in
    // place (transforms, parent index, plain columns) and writes column by
    // column. No checks: doecs also validates the blob (the parent order,
    // no NaN in a transform), which this floor leaves out and the next one
    // makes.
    let input = level.floor_input();
    g.bench_function("hand_layout_with_hierarchy", |b| {
        b.iter_batched(
            || HandLayout::with_capacity(n, input.plain_bytes()),
            |mut out| {
                out.fill(black_box(&input));
                out
            },
            BatchSize::PerIteration,
        )
    });
    // The same floor after the checks a loader of untrusted bytes makes
    // before it writes anything, hand-written over the blob's words: the
    // parent order, each block's entity index, no NaN or infinity in a
    // transform (the plain components are registered unchecked, as here).
    g.bench_function("hand_layout_checked", |b| {
        b.iter_batched(
            || HandLayout::with_capacity(n, input.plain_bytes()),
            |mut out| {
                assert!(out.fill_checked(black_box(&input)));
                out
            },
            BatchSize::PerIteration,
        )
    });
    g.finish();
}

criterion_group!(benches, level_spawn);
criterion_main!(benches);
