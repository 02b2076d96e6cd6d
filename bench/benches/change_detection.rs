//! change_detection: a pass over the entities whose `Position` changed, out
//! of 100,000 entities of (Position, Velocity), after 1% of them were
//! written since the reader's last pass.
//!
//! - `changed_clustered`: the written 1% are 1,000 consecutive entities
//!   (two or three 16 KiB chunks);
//! - `changed_spread`: every 100th entity, so every chunk holds changes;
//! - `changed_full_pass`: the same pass over every entity, no filter: what
//!   the filtered passes are measured against.
//!
//! Only the reading pass is timed (`iter_custom`); the writes happen before
//! each pass, untimed. doecs reads through a held `QueryState<&Position,
//! Changed<Position>>`, bevy_ecs through a `SystemState<Query<&Position,
//! Changed<Position>>>` (its direct, per-reader form). The hand-written
//! baseline keeps a list of the written indices and sums those: the floor
//! for "visit exactly what changed".

use bevy_ecs::prelude::{Changed as BevyChanged, Query as BevyQuery};
use bevy_ecs::system::SystemState;
use criterion::{criterion_group, criterion_main, Criterion};
use doecs_bench::*;
use std::hint::black_box;
use std::time::{Duration, Instant};

/// Entities in the world.
const WORLD: usize = 100_000;

/// Which 1% is written before each pass.
#[derive(Clone, Copy)]
enum Pattern {
    Clustered,
    Spread,
}

impl Pattern {
    fn rows(self, n: usize) -> Vec<usize> {
        let k = (n / 100).max(1);
        match self {
            // Start past the first chunk so the run is not aligned to one.
            Pattern::Clustered => (n / 3..n / 3 + k).collect(),
            Pattern::Spread => (0..n).step_by(100).take(k).collect(),
        }
    }
}

fn bench_pattern(c: &mut Criterion, name: &str, pattern: Option<Pattern>) {
    let mut g = group(c, name);
    let n = sized(WORLD);
    let rows = pattern.map_or_else(Vec::new, |p| p.rows(n));

    // doecs
    let mut world = doecs::World::new();
    let es =
        world.spawn_batch((0..n).map(|i| (Position(Vec3::splat(i as f32)), Velocity(Vec3::X))));
    let mut changed = doecs::QueryState::<&Position, doecs::Changed<Position>>::new(&world);
    let mut all = doecs::QueryState::<&Position>::new(&world);
    changed.for_each_ref(&world, |_| {}); // the first look sees every spawn
    g.bench_function("doecs", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                for &r in &rows {
                    world.get_mut::<Position>(es[r]).unwrap().0.x += 1.0;
                }
                let start = Instant::now();
                let mut sum = 0.0;
                if pattern.is_some() {
                    changed.for_each_ref(&world, |p| sum += p.0.x);
                } else {
                    all.for_each_ref(&world, |p| sum += p.0.x);
                }
                black_box(sum);
                total += start.elapsed();
            }
            total
        })
    });

    // bevy_ecs
    let mut world = bevy_ecs::world::World::new();
    let es: Vec<_> = world
        .spawn_batch((0..n).map(|i| (Position(Vec3::splat(i as f32)), Velocity(Vec3::X))))
        .collect();
    let mut changed: SystemState<BevyQuery<&Position, BevyChanged<Position>>> =
        SystemState::new(&mut world);
    let mut all: SystemState<BevyQuery<&Position>> = SystemState::new(&mut world);
    changed.get(&world).expect("query").iter().for_each(drop);
    g.bench_function("bevy_ecs", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                for &r in &rows {
                    world.get_mut::<Position>(es[r]).unwrap().0.x += 1.0;
                }
                // A reader's last-run tick only moves when the world's
                // change tick does, as a schedule would move it.
                world.increment_change_tick();
                let start = Instant::now();
                let mut sum = 0.0;
                if pattern.is_some() {
                    for p in changed.get(&world).expect("query").iter() {
                        sum += p.0.x;
                    }
                } else {
                    for p in all.get(&world).expect("query").iter() {
                        sum += p.0.x;
                    }
                }
                black_box(sum);
                total += start.elapsed();
            }
            total
        })
    });

    // Hand-written: positions in one array, and the writer's list of what it wrote.
    let mut positions: Vec<Position> = (0..n).map(|i| Position(Vec3::splat(i as f32))).collect();
    let mut dirty: Vec<u32> = Vec::with_capacity(rows.len());
    g.bench_function("soa_baseline", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                dirty.clear();
                for &r in &rows {
                    positions[r].0.x += 1.0;
                    dirty.push(r as u32);
                }
                let start = Instant::now();
                let mut sum = 0.0;
                if pattern.is_some() {
                    for &i in &dirty {
                        sum += positions[i as usize].0.x;
                    }
                } else {
                    for p in &positions {
                        sum += p.0.x;
                    }
                }
                black_box(sum);
                total += start.elapsed();
            }
            total
        })
    });
    g.finish();
}

fn change_detection(c: &mut Criterion) {
    bench_pattern(c, "changed_clustered", Some(Pattern::Clustered));
    bench_pattern(c, "changed_spread", Some(Pattern::Spread));
    bench_pattern(c, "changed_full_pass", None);
}

criterion_group!(benches, change_detection);
criterion_main!(benches);
