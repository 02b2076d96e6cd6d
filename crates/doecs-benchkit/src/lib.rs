#![doc = include_str!("../README.md")]

pub mod alloc_count;

use criterion::measurement::Measurement;
use criterion::{BenchmarkGroup, Criterion};
use std::time::Duration;

#[cfg(all(target_os = "linux", target_pointer_width = "64"))]
mod cpu_time;
#[cfg(all(target_os = "linux", target_pointer_width = "64"))]
pub use cpu_time::ThreadCpuTime;

/// Smoke mode (`DOECS_BENCH_SMOKE=1`): tiny sizes, minimal timing.
pub fn smoke() -> bool {
    std::env::var_os("DOECS_BENCH_SMOKE").is_some()
}

/// Whether `DOECS_BENCH_CPU_TIME=1` asks for thread CPU time instead of wall
/// time (honoured on 64-bit Linux, where [`ThreadCpuTime`] exists).
pub fn cpu_time_requested() -> bool {
    cfg!(all(target_os = "linux", target_pointer_width = "64"))
        && std::env::var_os("DOECS_BENCH_CPU_TIME").is_some()
}

/// A benchmark group that, in smoke mode, runs each body only briefly;
/// otherwise it keeps criterion's timing (set from the command line).
pub fn group<'a, M: Measurement>(c: &'a mut Criterion<M>, name: &str) -> BenchmarkGroup<'a, M> {
    let mut g = c.benchmark_group(name);
    if smoke() {
        g.sample_size(10)
            .warm_up_time(Duration::from_millis(1))
            .measurement_time(Duration::from_millis(10));
    }
    g
}
