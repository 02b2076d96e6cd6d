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
use doecs::World;
use doecs_benchkit::{group, smoke};
use doecs_registry::{SaveFormat, WorldSaveExt};
use std::hint::black_box;

#[path = "../tests/common/hierarchy.rs"]
mod hierarchy;
use hierarchy::{hierarchy, registry};

fn save_hierarchy<M: Measurement>(c: &mut Criterion<M>) {
    let n = if smoke() { 1_000 } else { 100_000 };
    let registry = registry();
    let mut g = group(c, &format!("save_hierarchy_{n}"));
    for (shape, deep) in [("deep", true), ("wide", false)] {
        let (world, _) = hierarchy(n, deep);
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
