//! snapshot: copy a whole world aside and put it back, against `memcpy` of
//! the same bytes.
//!
//! `snapshot_<n>`: n entities of four `Copy` components (Position,
//! Velocity, Rotation: 12 bytes each; A: 4 bytes; plus the 8-byte entity
//! ids), at 10k, 100k and 1M entities. `doecs_snapshot` is
//! `World::snapshot_into` into a reused `Snapshot`; `doecs_restore` is
//! `World::restore` from it (after one write, so the restore has something
//! to revert). The baseline copies five plain `Vec`s of the same sizes into
//! preallocated ones: the floor for "copy this much memory".
//!
//! `snapshot_clone_100k`: the same with a fourth component that is `Clone`
//! only, an inventory holding a `Vec<u32>` of four items, snapshotted
//! through its clone function. Its baseline copies the three `Copy` columns
//! and the ids with `memcpy` and the inventories with `Vec::clone_from`
//! (which reuses each inner allocation, as the snapshot's buffers do).
//!
//! No peer is in the table: none of hecs, bevy_ecs, shipyard or flecs_ecs
//! has a whole-world snapshot (flecs removed its snapshot addon in 2024).

use criterion::{criterion_group, criterion_main, Criterion};
use doecs_bench::*;
use std::hint::black_box;

/// The `Clone`-only component: a small inventory.
#[derive(Clone, Debug, Default, PartialEq)]
struct Inventory(Vec<u32>);

/// `doecs_snapshot` (into a reused `Snapshot`) and `doecs_restore` (after
/// one write to `probe`'s `Position`, so the restore has something to
/// revert).
fn bench_snapshot_and_restore(
    g: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    world: &mut doecs::World,
    probe: doecs::Entity,
) {
    let mut snapshot = doecs::Snapshot::new();
    world.snapshot_into(&mut snapshot).unwrap();
    g.bench_function("doecs_snapshot", |b| {
        b.iter(|| {
            world.snapshot_into(black_box(&mut snapshot)).unwrap();
        })
    });
    g.bench_function("doecs_restore", |b| {
        b.iter(|| {
            world.get_mut::<Position>(probe).unwrap().0.x += 1.0;
            world.restore(black_box(&snapshot)).unwrap();
        })
    });
}

fn bench_size(c: &mut Criterion, n: usize) {
    let n = sized(n);
    let mut g = group(c, &format!("snapshot_{}", label(n)));
    let mut world = doecs::World::new();
    world.snapshot_by_copy::<Position>();
    world.snapshot_by_copy::<Velocity>();
    world.snapshot_by_copy::<Rotation>();
    world.snapshot_by_copy::<A>();
    let es = world.spawn_batch((0..n).map(|i| {
        let f = i as f32;
        (
            Position(Vec3::splat(f)),
            Velocity(Vec3::X),
            Rotation(Vec3::Y),
            A(f),
        )
    }));
    bench_snapshot_and_restore(&mut g, &mut world, es[n / 2]);
    let positions: Vec<Vec3> = (0..n).map(|i| Vec3::splat(i as f32)).collect();
    let velocities: Vec<Vec3> = vec![Vec3::X; n];
    let rotations: Vec<Vec3> = vec![Vec3::Y; n];
    let a: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let ids: Vec<u64> = (0..n as u64).collect();
    let (mut p2, mut v2, mut r2, mut a2, mut i2) = (
        positions.clone(),
        velocities.clone(),
        rotations.clone(),
        a.clone(),
        ids.clone(),
    );
    g.bench_function("memcpy", |b| {
        b.iter(|| {
            p2.copy_from_slice(black_box(&positions));
            v2.copy_from_slice(black_box(&velocities));
            r2.copy_from_slice(black_box(&rotations));
            a2.copy_from_slice(black_box(&a));
            i2.copy_from_slice(black_box(&ids));
        })
    });
    g.finish();
}

fn bench_clone(c: &mut Criterion) {
    let n = sized(100_000);
    let mut g = group(c, &format!("snapshot_clone_{}", label(n)));
    let mut world = doecs::World::new();
    world.snapshot_by_copy::<Position>();
    world.snapshot_by_copy::<Velocity>();
    world.snapshot_by_copy::<Rotation>();
    world.snapshot_by_clone::<Inventory>();
    let inventory = |i: usize| Inventory(vec![i as u32, 1, 2, 3]);
    let es = world.spawn_batch((0..n).map(|i| {
        (
            Position(Vec3::splat(i as f32)),
            Velocity(Vec3::X),
            Rotation(Vec3::Y),
            inventory(i),
        )
    }));
    bench_snapshot_and_restore(&mut g, &mut world, es[n / 2]);
    let positions: Vec<Vec3> = (0..n).map(|i| Vec3::splat(i as f32)).collect();
    let velocities: Vec<Vec3> = vec![Vec3::X; n];
    let rotations: Vec<Vec3> = vec![Vec3::Y; n];
    let ids: Vec<u64> = (0..n as u64).collect();
    let inventories: Vec<Inventory> = (0..n).map(inventory).collect();
    let (mut p2, mut v2, mut r2, mut i2, mut inv2) = (
        positions.clone(),
        velocities.clone(),
        rotations.clone(),
        ids.clone(),
        inventories.clone(),
    );
    g.bench_function("memcpy_and_clone_from", |b| {
        b.iter(|| {
            p2.copy_from_slice(black_box(&positions));
            v2.copy_from_slice(black_box(&velocities));
            r2.copy_from_slice(black_box(&rotations));
            i2.copy_from_slice(black_box(&ids));
            inv2.clone_from(black_box(&inventories));
        })
    });
    g.finish();
}

fn label(n: usize) -> String {
    match n {
        n if n >= 1_000_000 && n % 1_000_000 == 0 => format!("{}m", n / 1_000_000),
        n if n >= 1000 && n % 1000 == 0 => format!("{}k", n / 1000),
        n => n.to_string(),
    }
}

fn snapshot(c: &mut Criterion) {
    for n in [10_000, 100_000, 1_000_000] {
        bench_size(c, n);
    }
    bench_clone(c);
}

criterion_group!(benches, snapshot);
criterion_main!(benches);
