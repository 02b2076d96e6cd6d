//! Criterion benchmarks for the transform manager, measured side by side:
//! full propagation of an 81,000-node forest (also per node), `Mat4` against
//! `Affine3A` on the same propagation workload and a plain copy of the same
//! bytes (the memory floor), a 1,000-long moving chain
//! (`set_local_many` against `set_local` node by node), one immediate
//! `set_local` on a root with 5 descendants against computing the 6 matrices
//! by hand, and a lazy-gc sweep with nothing dead against four liveness
//! checks. Run: `cargo bench -p doecs-transform -- --warm-up-time 1 --measurement-time 3`.
//! With `DOECS_BENCH_SMOKE=1` (e.g. under `cargo test --benches`) every body
//! runs on tiny sizes with minimal timing, as a quick check that it works.
//! With `DOECS_BENCH_CPU_TIME=1` (Linux) criterion measures the thread's CPU
//! time instead of wall time, for figures taken on a machine shared with other
//! jobs.

use criterion::measurement::Measurement;
use criterion::{criterion_group, Criterion, Throughput};
use doecs::raw::Entities;
use doecs_benchkit::{group, smoke};
use doecs_transform::{Instance, TransformManager};
use glam::{Affine3A, Mat4, Quat, Vec3};
use std::hint::black_box;

fn some_affine(k: usize) -> Affine3A {
    let f = k as f32 * 0.001;
    Affine3A::from_scale_rotation_translation(
        Vec3::splat(1.0 + f * 0.01),
        Quat::from_rotation_y(f),
        Vec3::new(f, 1.0, -f),
    )
}

/// 1,000 roots (10 in smoke mode), each with 5 children, 25 grandchildren and
/// 50 great-grandchildren.
fn forest() -> TransformManager {
    let roots = if smoke() { 10 } else { 1000 };
    let mut entities = Entities::new();
    let (mut locals, mut parents) = (Vec::new(), Vec::new());
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
    for k in 0..parents.len() {
        locals.push(some_affine(k));
    }
    assert_eq!(parents.len(), roots * 81);
    let mut es = Vec::new();
    entities.alloc_many(parents.len(), &mut es);
    let mut tm = TransformManager::with_capacity(parents.len());
    tm.create_many(&es, &locals, &parents).unwrap();
    tm.compact();
    tm
}

/// The propagation workload on plain slices, generic over the matrix type.
#[inline(never)]
fn propagate_arrays<T: Copy + std::ops::Mul<Output = T>>(
    world: &mut [T],
    local: &[T],
    parent: &[u32],
) {
    for i in 0..world.len() {
        let p = parent[i];
        world[i] = if p != u32::MAX {
            world[p as usize] * local[i]
        } else {
            local[i]
        };
    }
}

fn full_propagation<M: Measurement>(c: &mut Criterion<M>) {
    let mut tm = forest();
    // The same workload on plain arrays, for Mat4 vs Affine3A.
    let n = tm.len();
    // Parent indices as the manager stores them: u32 with u32::MAX for none.
    let parent: Vec<u32> = tm
        .iter()
        .map(|h| tm.parent(h).map_or(u32::MAX, |p| p.index()))
        .collect();
    let local_a: Vec<Affine3A> = tm.iter().map(|h| tm.local(h).unwrap()).collect();
    let local_m: Vec<Mat4> = local_a.iter().map(|&a| Mat4::from(a)).collect();
    let mut world_a = vec![Affine3A::IDENTITY; n];
    let mut world_m = vec![Mat4::IDENTITY; n];

    let mut g = group(c, "full_propagation_81k");
    g.throughput(Throughput::Elements(n as u64));
    g.bench_function("manager_update_all", |b| {
        b.iter(|| black_box(&mut tm).update_all())
    });
    g.bench_function("arrays_affine3a", |b| {
        b.iter(|| propagate_arrays(black_box(&mut world_a), &local_a, &parent))
    });
    g.bench_function("arrays_mat4", |b| {
        b.iter(|| propagate_arrays(black_box(&mut world_m), &local_m, &parent))
    });
    // The floor: only copying the locals into the world array (same bytes
    // read and written, no multiply, no parent read).
    g.bench_function("arrays_copy_floor", |b| {
        b.iter(|| black_box(&mut world_a).copy_from_slice(&local_a))
    });
    g.finish();
}

fn chain(n: usize) -> (TransformManager, Vec<Instance>) {
    let mut entities = Entities::new();
    let mut es = Vec::new();
    entities.alloc_many(n, &mut es);
    let locals: Vec<Affine3A> = (0..n).map(some_affine).collect();
    let parents: Vec<Option<u32>> = (0..n).map(|k| k.checked_sub(1).map(|p| p as u32)).collect();
    let mut tm = TransformManager::new();
    let hs = tm.create_many(&es, &locals, &parents).unwrap();
    (tm, hs)
}

fn chain_batch<M: Measurement>(c: &mut Criterion<M>) {
    let (mut tm, hs) = chain(if smoke() { 16 } else { 1000 });
    let batch: Vec<(Instance, Affine3A)> = hs
        .iter()
        .enumerate()
        .map(|(k, &h)| (h, some_affine(k + 7)))
        .collect();
    let mut g = group(c, "chain_1000_all_move");
    g.bench_function("set_local_many", |b| {
        b.iter(|| tm.set_local_many(black_box(&batch)).unwrap())
    });
    g.bench_function("set_local_each", |b| {
        b.iter(|| {
            for &(h, m) in black_box(&batch) {
                tm.set_local(h, m).unwrap();
            }
        })
    });
    g.finish();
}

fn immediate_small<M: Measurement>(c: &mut Criterion<M>) {
    // root -> a, b; a -> c, d; b -> e
    let mut entities = Entities::new();
    let mut es = Vec::new();
    entities.alloc_many(6, &mut es);
    let locals: Vec<Affine3A> = (0..6).map(some_affine).collect();
    let parents = [None, Some(0), Some(0), Some(1), Some(1), Some(2)];
    let mut tm = TransformManager::new();
    let hs = tm.create_many(&es, &locals, &parents).unwrap();
    let root = hs[0];
    let m = some_affine(42);
    let mut world = [Affine3A::IDENTITY; 6];
    let mut g = group(c, "root_with_5_descendants");
    g.bench_function("set_local_immediate", |b| {
        b.iter(|| tm.set_local(black_box(root), black_box(m)).unwrap())
    });
    g.bench_function("by_hand_6_matrices", |b| {
        b.iter(|| {
            let l = black_box(&locals);
            world[0] = black_box(m);
            for i in 1..6 {
                world[i] = world[parents[i].unwrap() as usize] * l[i];
            }
            black_box(&mut world);
        })
    });
    g.finish();
}

/// The lazy garbage collection of Bitsquid's "Building a Data-Oriented Entity
/// System" (part 2) when nothing died: one sweep of a 100,000-instance manager
/// stops after four live probes, so it should cost about as much as four
/// random liveness checks done by hand.
fn lazy_gc<M: Measurement>(c: &mut Criterion<M>) {
    let n = if smoke() { 100 } else { 100_000 };
    let mut entities = Entities::new();
    let mut es = Vec::new();
    entities.alloc_many(n, &mut es);
    let mut tm = TransformManager::with_capacity(n);
    for &e in &es {
        tm.create(e, Affine3A::IDENTITY).unwrap();
    }
    let report = tm.sweep_garbage(&entities);
    assert_eq!((report.probes, report.destroyed), (4, 0));
    println!("lazy_gc_100k: one sweep with nothing dead = {report:?}");
    let mut g = group(c, "lazy_gc_100k");
    g.bench_function("sweep_nothing_dead", |b| {
        b.iter(|| black_box(&mut tm).sweep_garbage(&entities))
    });
    let mut k = 0usize;
    g.bench_function("four_random_alive_checks", |b| {
        b.iter(|| {
            let mut alive = 0;
            for _ in 0..4 {
                k = (k + 7919) % es.len();
                alive += u32::from(entities.alive(black_box(es[k])));
            }
            alive
        })
    });
    g.finish();
}

/// The same benches measured in thread CPU time (`DOECS_BENCH_CPU_TIME=1`).
#[cfg(all(target_os = "linux", target_pointer_width = "64"))]
mod cpu_time {
    use super::*;

    criterion_group!(
        name = cpu_benches;
        config = Criterion::default().with_measurement(doecs_benchkit::ThreadCpuTime);
        targets = full_propagation, chain_batch, immediate_small, lazy_gc
    );
}

criterion_group!(
    benches,
    full_propagation,
    chain_batch,
    immediate_small,
    lazy_gc
);

fn main() {
    #[cfg(all(target_os = "linux", target_pointer_width = "64"))]
    if doecs_benchkit::cpu_time_requested() {
        println!("measuring thread CPU time (DOECS_BENCH_CPU_TIME)");
        cpu_time::cpu_benches();
        Criterion::default().configure_from_args().final_summary();
        return;
    }
    benches();
    Criterion::default().configure_from_args().final_summary();
}
