//! save_hierarchy: write a world whose entities form one `ChildOf`
//! hierarchy, a transform on every entity, and read it back, for the two
//! shapes that once differed by orders of magnitude: a chain (`deep`: each
//! entity the parent of the next) and a star (`wide`: every entity a child
//! of the first), each in the binary and the JSON format. Loading costs
//! time linear in entities and pairs whatever the shape, so `deep` and
//! `wide` should read alike (a load quadratic in depth took 41 s for the
//! 100,000-deep chain, against 0.03 s for the star).
//!
//! The world holds n = 100,000 entities (1,000 in the smoke run,
//! `DOECS_BENCH_SMOKE=1`, e.g. under `cargo test --benches`). Throughput
//! is reported in bytes of the file written or read, so criterion prints
//! MB/s (file sizes are printed once). Run:
//! `cargo bench -p doecs-registry --bench save_hierarchy -- --warm-up-time 1 --measurement-time 3`.
//! With `DOECS_BENCH_CPU_TIME=1` (Linux) criterion measures the thread's
//! CPU time instead of wall time, for figures taken on a shared machine.

use criterion::measurement::Measurement;
use criterion::{criterion_group, Criterion, Throughput};
use doecs::{DestroyNotice, World};
use doecs_benchkit::{group, smoke};
use doecs_registry::{ComponentRegistry, SaveFormat, WorldSaveExt};
use doecs_transform::{TransformManager, WorldTransforms};
use glam::{Affine3A, Vec3};
use std::hint::black_box;

fn registry() -> ComponentRegistry {
    let mut r = ComponentRegistry::new();
    r.register_manager::<TransformManager>("transform", DestroyNotice::Callback)
        .unwrap();
    r
}

/// `n` entities in one hierarchy: a chain (`deep`) or a star.
fn hierarchy(n: usize, deep: bool) -> World {
    let mut world = World::new();
    let es = world.spawn_empty_batch(n);
    let parents: Vec<Option<u32>> = (0..n as u32)
        .map(|k| match k {
            0 => None,
            _ if deep => Some(k - 1),
            _ => Some(0),
        })
        .collect();
    world.set_parents_in_batch(&es, &parents).unwrap();
    let locals: Vec<Affine3A> = (0..n)
        .map(|k| Affine3A::from_translation(Vec3::new(1.0, k as f32 * 1e-3, 0.0)))
        .collect();
    world.add_transforms(&es, &locals).unwrap();
    world
}

fn save_hierarchy<M: Measurement>(c: &mut Criterion<M>) {
    let n = if smoke() { 1_000 } else { 100_000 };
    let registry = registry();
    let mut g = group(c, &format!("save_hierarchy_{n}"));
    for (shape, deep) in [("deep", true), ("wide", false)] {
        let world = hierarchy(n, deep);
        for (format, name) in [(SaveFormat::Binary, "binary"), (SaveFormat::Json, "json")] {
            let mut file = Vec::new();
            world.save(&mut file, format, &registry).unwrap();
            let loaded = World::load(&file[..], &registry).unwrap();
            assert_eq!(loaded.relations().len(), n - 1);
            println!("save_hierarchy {n} {shape} {name}: {} bytes", file.len());
            g.throughput(Throughput::Bytes(file.len() as u64));
            let mut out = Vec::with_capacity(file.len());
            g.bench_function(format!("{shape}_{name}_save"), |b| {
                b.iter(|| {
                    out.clear();
                    world.save(&mut out, format, &registry).unwrap();
                    black_box(out.len())
                })
            });
            g.bench_function(format!("{shape}_{name}_load"), |b| {
                b.iter(|| World::load(black_box(&file[..]), &registry).unwrap().len())
            });
        }
    }
    g.finish();
}

#[cfg(all(target_os = "linux", target_pointer_width = "64"))]
mod cpu_time {
    use super::*;

    criterion_group!(
        name = cpu_benches;
        config = Criterion::default().with_measurement(doecs_benchkit::ThreadCpuTime);
        targets = save_hierarchy
    );
}

criterion_group!(benches, save_hierarchy);

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
