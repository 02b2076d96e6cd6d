//! Shared pieces of the side-by-side benchmarks: the ecs_bench_suite component
//! types (with glam), the standard sizes, and one criterion-group helper so
//! every workload file only says what each library does.

use criterion::measurement::WallTime;
use criterion::{BenchmarkGroup, Criterion};
use std::time::Duration;

pub use glam::{Mat4, Vec3};

/// ecs_bench_suite's `Transform`.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct Transform(pub Mat4);
/// ecs_bench_suite's `Position`.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct Position(pub Vec3);
/// ecs_bench_suite's `Rotation`.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct Rotation(pub Vec3);
/// ecs_bench_suite's `Velocity`.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct Velocity(pub Vec3);

/// Entities per workload, as in ecs_bench_suite.
pub const N: usize = 10_000;

/// Whether to run tiny sizes (smoke mode: `DOECS_BENCH_SMOKE=1`), so CI can
/// run every bench body once quickly.
pub fn smoke() -> bool {
    std::env::var_os("DOECS_BENCH_SMOKE").is_some()
}

/// `N`, or a tiny size in smoke mode.
pub fn n() -> usize {
    if smoke() {
        64
    } else {
        N
    }
}

/// The standard four-component bundle of simple_insert / simple_iter.
pub fn bundle() -> (Transform, Position, Rotation, Velocity) {
    (
        Transform(Mat4::from_scale(Vec3::ONE)),
        Position(Vec3::X),
        Rotation(Vec3::X),
        Velocity(Vec3::X),
    )
}

/// A benchmark group named `name` with the suite's timing settings.
pub fn group<'a>(c: &'a mut Criterion, name: &str) -> BenchmarkGroup<'a, WallTime> {
    let mut g = c.benchmark_group(name);
    if smoke() {
        g.sample_size(10)
            .warm_up_time(Duration::from_millis(1))
            .measurement_time(Duration::from_millis(10));
    } else {
        g.warm_up_time(Duration::from_secs(1))
            .measurement_time(Duration::from_secs(3));
    }
    g
}

/// A deterministic shuffle (xorshift), so random-order workloads are the same
/// for every library.
pub fn shuffled<T>(mut items: Vec<T>) -> Vec<T> {
    let mut state = 0x2545_f491_4f6c_dd1du64;
    for i in (1..items.len()).rev() {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        items.swap(i, (state % (i as u64 + 1)) as usize);
    }
    items
}
