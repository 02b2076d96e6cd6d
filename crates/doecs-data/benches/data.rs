//! The DataStore side by side with the naive peer, a
//! `HashMap<String, serde_json::Value>` per entity:
//! - `get_f32_among_8`: read one existing float key of 8, for every entity;
//! - `get_f32_mixed_paths`: read a different float key for each entity in
//!   turn (five paths), so the per-thread memo of parsed paths is exercised
//!   with more than one path;
//! - `set_existing_f32`: overwrite one existing float key, for every entity;
//! - memory (printed, from the counting allocator): 100,000 entities with a
//!   `health` float, and with the five-key character sheet of Bitsquid's
//!   "Allocation Adventures 1: The DataComponent".
//!
//! The DataStore is measured with the same string path as the peer
//! (`"stats.health"`, hashed on every call) and with a pre-hashed `Key`.
//! `DOECS_BENCH_SMOKE=1` runs every body once on tiny sizes.
//! `DOECS_BENCH_CPU_TIME=1` (64-bit Linux) measures the benchmarking thread's
//! CPU time instead of wall time, so time spent preempted on a shared,
//! loaded machine does not count (cache contention still does).

mod common;

use common::*;
use criterion::measurement::Measurement;
use criterion::{criterion_group, Criterion};
use doecs_benchkit::{group, smoke};
use doecs_data::Key;
use std::hint::black_box;

#[global_allocator]
static ALLOC: Counting = Counting;

fn entities() -> usize {
    if smoke() {
        16
    } else {
        1000
    }
}

const PATH: &str = "stats.health";

fn get_f32_among_8<M: Measurement>(c: &mut Criterion<M>) {
    let n = entities();
    let naive = naive_flat(n, &eight_pairs());
    let store = store_by_set(n, &eight_pairs());
    let key = Key::parse(PATH).unwrap();
    let mut g = group(c, "get_f32_among_8");
    g.bench_function("naive_hashmap", |b| {
        b.iter(|| {
            let mut sum = 0.0f32;
            for m in &naive {
                sum += m.get(black_box(PATH)).and_then(|v| v.as_f64()).unwrap() as f32;
            }
            sum
        })
    });
    g.bench_function("datastore_str_path", |b| {
        b.iter(|| {
            let mut sum = 0.0f32;
            for i in 0..n {
                sum += store.get_f32(entity(i), black_box(PATH)).unwrap();
            }
            sum
        })
    });
    g.bench_function("datastore_key", |b| {
        b.iter(|| {
            let mut sum = 0.0f32;
            for i in 0..n {
                sum += store.get_f32(entity(i), black_box(key)).unwrap();
            }
            sum
        })
    });
    g.finish();
}

/// The float keys of `eight_pairs`, read in turn: a loop that does not reuse
/// one path, so the per-thread memo of parsed paths helps less.
const FLOAT_PATHS: [&str; 5] = [
    "stats.health",
    "stats.mana",
    "stats.stamina",
    "position.x",
    "position.y",
];

fn get_f32_mixed_paths<M: Measurement>(c: &mut Criterion<M>) {
    let n = entities();
    let naive = naive_flat(n, &eight_pairs());
    let store = store_by_set(n, &eight_pairs());
    let mut g = group(c, "get_f32_mixed_paths");
    g.bench_function("naive_hashmap", |b| {
        b.iter(|| {
            let mut sum = 0.0f32;
            for (i, m) in naive.iter().enumerate() {
                let path = black_box(FLOAT_PATHS[i % FLOAT_PATHS.len()]);
                sum += m.get(path).and_then(|v| v.as_f64()).unwrap() as f32;
            }
            sum
        })
    });
    g.bench_function("datastore_str_path", |b| {
        b.iter(|| {
            let mut sum = 0.0f32;
            for i in 0..n {
                let path = black_box(FLOAT_PATHS[i % FLOAT_PATHS.len()]);
                sum += store.get_f32(entity(i), path).unwrap();
            }
            sum
        })
    });
    g.finish();
}

fn set_existing_f32<M: Measurement>(c: &mut Criterion<M>) {
    let n = entities();
    let mut naive = naive_flat(n, &eight_pairs());
    let mut store = store_by_set(n, &eight_pairs());
    let key = Key::parse(PATH).unwrap();
    let mut g = group(c, "set_existing_f32");
    let mut x = 0.0f32;
    g.bench_function("naive_hashmap", |b| {
        b.iter(|| {
            x += 1.0;
            for m in naive.iter_mut() {
                *m.get_mut(black_box(PATH)).unwrap() = serde_json::Value::from(x as f64);
            }
        })
    });
    g.bench_function("datastore_str_path", |b| {
        b.iter(|| {
            x += 1.0;
            for i in 0..n {
                store.set(entity(i), black_box(PATH), x).unwrap();
            }
        })
    });
    g.bench_function("datastore_key", |b| {
        b.iter(|| {
            x += 1.0;
            for i in 0..n {
                store.set(entity(i), black_box(key), x).unwrap();
            }
        })
    });
    g.finish();
    store.check_invariants();
}

fn memory<M: Measurement>(_c: &mut Criterion<M>) {
    let n = if smoke() { 1000 } else { 100_000 };
    let health = [("health", serde_json::json!(100.0))];
    let (a, naive_health) = retained(|| naive_flat(n, &health));
    drop(a);
    let (b, ours_health) = retained(|| store_by_set(n, &health));
    drop(b);
    let (a, naive_sheet) = retained(|| naive_flat(n, &sheet_pairs()));
    drop(a);
    let (a, naive_nested_sheet) = retained(|| naive_nested(n, &sheet_json()));
    drop(a);
    let (b, ours_sheet) = retained(|| store_by_set(n, &sheet_pairs()));
    drop(b);
    println!(
        "memory/health x{n}: naive {naive_health} B, datastore {ours_health} B, ratio {:.3} (limit 0.125)",
        ours_health as f64 / naive_health as f64
    );
    println!(
        "memory/sheet x{n}: naive flat {naive_sheet} B, naive nested {naive_nested_sheet} B, datastore {ours_sheet} B, ratio vs flat {:.3} (limit 0.25)",
        ours_sheet as f64 / naive_sheet as f64
    );
}

fn hash_path<M: Measurement>(c: &mut Criterion<M>) {
    use std::hash::{BuildHasher, RandomState};
    let state = RandomState::new();
    let mut g = group(c, "hash_path");
    g.bench_function("std_siphash", |b| {
        b.iter(|| state.hash_one(black_box(PATH)))
    });
    g.bench_function("key_parse", |b| {
        b.iter(|| Key::parse(black_box(PATH)).unwrap())
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
        targets = hash_path, get_f32_among_8, get_f32_mixed_paths, set_existing_f32, memory
    );
}

criterion_group!(
    benches,
    hash_path,
    get_f32_among_8,
    get_f32_mixed_paths,
    set_existing_f32,
    memory
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
