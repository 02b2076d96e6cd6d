//! Thread CPU time as a criterion measurement.
//!
//! On a machine shared with other jobs, wall time includes the time the
//! benchmarking thread spent preempted. `CLOCK_THREAD_CPUTIME_ID` counts only
//! the time it ran, which makes figures from a loaded machine comparable
//! (cache and memory contention still show).

use criterion::measurement::{Measurement, ValueFormatter, WallTime};
use std::time::Duration;

/// `struct timespec` on 64-bit Linux.
#[repr(C)]
struct Timespec {
    seconds: i64,
    nanos: i64,
}

const CLOCK_THREAD_CPUTIME_ID: i32 = 3;

extern "C" {
    fn clock_gettime(clock: i32, out: *mut Timespec) -> i32;
}

fn thread_cpu_now() -> Duration {
    let mut t = Timespec {
        seconds: 0,
        nanos: 0,
    };
    // SAFETY: libc's `clock_gettime(clockid_t, struct timespec *)`; on 64-bit
    // Linux `clockid_t` is `i32` and `timespec` is two `i64`s, which is
    // `Timespec`'s `repr(C)` layout. It writes only through the valid,
    // exclusive pointer it is given.
    let rc = unsafe { clock_gettime(CLOCK_THREAD_CPUTIME_ID, &mut t) };
    assert_eq!(rc, 0, "clock_gettime(CLOCK_THREAD_CPUTIME_ID) failed");
    Duration::new(t.seconds as u64, t.nanos as u32)
}

/// The CPU time of the benchmarking thread, as a criterion [`Measurement`].
#[derive(Clone, Copy, Debug, Default)]
pub struct ThreadCpuTime;

impl Measurement for ThreadCpuTime {
    type Intermediate = Duration;
    type Value = Duration;
    fn start(&self) -> Duration {
        thread_cpu_now()
    }
    fn end(&self, start: Duration) -> Duration {
        thread_cpu_now().saturating_sub(start)
    }
    fn add(&self, a: &Duration, b: &Duration) -> Duration {
        *a + *b
    }
    fn zero(&self) -> Duration {
        Duration::ZERO
    }
    fn to_f64(&self, v: &Duration) -> f64 {
        v.as_nanos() as f64
    }
    fn formatter(&self) -> &dyn ValueFormatter {
        WallTime.formatter()
    }
}
