//! A summary of frame times in fixed memory: the count, total, minimum and
//! maximum, exactly, and the percentiles from a histogram of log-spaced
//! buckets (HDR-histogram style), so a run of any number of frames
//! allocates nothing per frame.
//!
//! Times are counted in whole nanoseconds. Below 2^[`PRECISION_BITS`] ns
//! every nanosecond has its own bucket; above, each power-of-two range
//! [2^k, 2^(k+1)) is split into 2^(`PRECISION_BITS` − 1) equal buckets. A
//! bucket of width w therefore starts at 2^(`PRECISION_BITS` − 1) · w or
//! later, and its midpoint is within w / 2 ≤ x / 2^`PRECISION_BITS` of any x
//! in it. The buckets cover every `u64` nanosecond count (longer times count
//! as `u64::MAX` ns, about 584 years) in [`BUCKETS`] counters, 58 KiB.
//!
//! [`FrameTimes::percentile`] picks the same rank as the percentile of the
//! sorted times, rank round((n − 1) · p), and answers the midpoint of the
//! bucket holding it, clamped to the exact minimum and maximum: within
//! [`MAX_RELATIVE_ERROR`] (1/256, about 0.4%) of the exact value, exact for
//! p = 0 and p = 1 and for times under 256 ns.

use std::time::Duration;

/// Bits of precision: times under 2^8 ns are exact, and each power-of-two
/// range above is split into 2^7 buckets.
pub const PRECISION_BITS: u32 = 8;

/// Values with a bucket each.
const EXACT: u64 = 1 << PRECISION_BITS;
/// Buckets per power-of-two range above the exact ones.
const HALF: u64 = EXACT / 2;

/// Buckets in a histogram: the exact ones, then `HALF` for each of the
/// `64 - PRECISION_BITS` shifts a `u64` can need.
pub const BUCKETS: usize = (EXACT + (64 - PRECISION_BITS as u64) * HALF) as usize;

/// The most a percentile differs from the exact one, relative to the exact
/// one: |answer − exact| ≤ exact · `MAX_RELATIVE_ERROR`. The program
/// states it in its docs; the tests assert it.
#[cfg_attr(not(test), allow(dead_code))]
pub const MAX_RELATIVE_ERROR: f64 = 1.0 / EXACT as f64;

/// The bucket of a time of `ns` nanoseconds (buckets are in time order).
fn bucket(ns: u64) -> usize {
    if ns < EXACT {
        return ns as usize;
    }
    // At least 1: `ns` has more than PRECISION_BITS significant bits.
    let shift = 64 - ns.leading_zeros() - PRECISION_BITS;
    // `ns >> shift` keeps the top PRECISION_BITS bits: HALF..EXACT.
    (EXACT + (u64::from(shift) - 1) * HALF + ((ns >> shift) - HALF)) as usize
}

/// The first time in bucket `index`, and the bucket's width, in ns.
fn bucket_range(index: usize) -> (u64, u64) {
    let i = index as u64;
    if i < EXACT {
        return (i, 1);
    }
    let k = i - EXACT;
    let shift = k / HALF + 1;
    ((k % HALF + HALF) << shift, 1 << shift)
}

/// Frame times over a run, in fixed memory (see the module docs).
#[derive(Clone)]
pub struct FrameTimes {
    /// Times per bucket; `BUCKETS` long, allocated once.
    counts: Box<[u64]>,
    /// Times recorded.
    count: u64,
    /// Their sum, in ns (a `u64` count of `u64` times cannot overflow it).
    total_ns: u128,
    /// The least and greatest, in ns (`u64::MAX` and 0 when empty).
    min_ns: u64,
    max_ns: u64,
}

impl Default for FrameTimes {
    fn default() -> Self {
        Self::new()
    }
}

impl std::fmt::Debug for FrameTimes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FrameTimes")
            .field("count", &self.count)
            .field("total", &self.total())
            .field("min", &self.min())
            .field("max", &self.max())
            .finish_non_exhaustive()
    }
}

/// A duration in whole nanoseconds, `u64::MAX` for longer ones.
fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

impl FrameTimes {
    /// An empty summary (the one allocation: the bucket counters).
    pub fn new() -> Self {
        FrameTimes {
            counts: vec![0; BUCKETS].into_boxed_slice(),
            count: 0,
            total_ns: 0,
            min_ns: u64::MAX,
            max_ns: 0,
        }
    }

    /// Adds one frame's time; allocates nothing.
    pub fn record(&mut self, time: Duration) {
        let ns = nanos(time);
        self.counts[bucket(ns)] += 1;
        self.count += 1;
        self.total_ns += u128::from(ns);
        self.min_ns = self.min_ns.min(ns);
        self.max_ns = self.max_ns.max(ns);
    }

    /// Frames recorded.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// The sum of the times (saturating at `Duration::MAX`).
    pub fn total(&self) -> Duration {
        let secs = u64::try_from(self.total_ns / 1_000_000_000).unwrap_or(u64::MAX);
        let sub = (self.total_ns % 1_000_000_000) as u32;
        Duration::new(secs, sub)
    }

    /// The mean time (zero when empty).
    pub fn mean(&self) -> Duration {
        if self.count == 0 {
            return Duration::ZERO;
        }
        // The mean of u64 values fits a u64.
        Duration::from_nanos((self.total_ns / u128::from(self.count)) as u64)
    }

    /// The least time, exactly (zero when empty).
    pub fn min(&self) -> Duration {
        if self.count == 0 {
            return Duration::ZERO;
        }
        Duration::from_nanos(self.min_ns)
    }

    /// The greatest time, exactly (zero when empty).
    pub fn max(&self) -> Duration {
        Duration::from_nanos(self.max_ns)
    }

    /// The percentile `p` (0..=1; outside, clamped): the time of rank
    /// round((n − 1) · p) among the sorted times, within
    /// [`MAX_RELATIVE_ERROR`] of it (see the module docs); zero when empty.
    pub fn percentile(&self, p: f64) -> Duration {
        if self.count == 0 {
            return Duration::ZERO;
        }
        let p = if p.is_nan() { 0.0 } else { p.clamp(0.0, 1.0) };
        let last = self.count - 1;
        // `as` saturates; the rank is never past the last time.
        let rank = ((last as f64 * p).round() as u64).min(last);
        if rank == 0 {
            return self.min();
        }
        if rank == last {
            return self.max();
        }
        let mut below = 0u64;
        for (index, &n) in self.counts.iter().enumerate() {
            below += n;
            if below > rank {
                let (low, width) = bucket_range(index);
                let mid = low + width / 2;
                return Duration::from_nanos(mid.clamp(self.min_ns, self.max_ns));
            }
        }
        // The counts add up to `count`, so the loop has answered.
        self.max()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The percentile `p` of sorted times, as the summary defines it.
    fn exact(sorted: &[u64], p: f64) -> u64 {
        sorted[((sorted.len() - 1) as f64 * p).round() as usize]
    }

    /// A small deterministic generator (xorshift64*).
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
        }
    }

    const PS: [f64; 9] = [0.0, 0.01, 0.1, 0.5, 0.9, 0.99, 0.999, 0.9999, 1.0];

    /// Checks every percentile of `times` against the sorted exact ones.
    fn check(times: &[u64]) {
        let mut summary = FrameTimes::new();
        for &t in times {
            summary.record(Duration::from_nanos(t));
        }
        let mut sorted = times.to_vec();
        sorted.sort_unstable();
        assert_eq!(summary.count(), times.len() as u64);
        assert_eq!(summary.max(), Duration::from_nanos(*sorted.last().unwrap()));
        assert_eq!(summary.min(), Duration::from_nanos(sorted[0]));
        let total: u128 = times.iter().map(|&t| u128::from(t)).sum();
        assert_eq!(summary.total().as_nanos(), total);
        for p in PS {
            let want = exact(&sorted, p);
            let got = nanos(summary.percentile(p));
            let error = got.abs_diff(want) as f64;
            assert!(
                error <= want as f64 * MAX_RELATIVE_ERROR,
                "p{p}: {got} ns against {want} ns exactly ({} values)",
                times.len()
            );
        }
        assert_eq!(summary.percentile(0.0), summary.min());
        assert_eq!(summary.percentile(1.0), summary.max());
    }

    #[test]
    fn buckets_are_contiguous_and_cover_u64() {
        assert_eq!(bucket(0), 0);
        assert_eq!(bucket(u64::MAX), BUCKETS - 1);
        let mut next = 0u64;
        for index in 0..BUCKETS {
            let (low, width) = bucket_range(index);
            assert_eq!(low, next, "bucket {index} starts where the last ended");
            assert_eq!(bucket(low), index);
            let high = low + (width - 1);
            assert_eq!(bucket(high), index);
            // The bound the module docs derive: w / 2 ≤ low / 2^PRECISION_BITS.
            assert!(width / 2 <= low >> PRECISION_BITS, "bucket {index}");
            next = high.wrapping_add(1);
        }
        assert_eq!(next, 0, "the last bucket ends at u64::MAX");
    }

    #[test]
    fn empty_summary_is_all_zero() {
        let summary = FrameTimes::new();
        assert_eq!(summary.count(), 0);
        for p in PS {
            assert_eq!(summary.percentile(p), Duration::ZERO);
        }
        assert_eq!(summary.total(), Duration::ZERO);
        assert_eq!(summary.mean(), Duration::ZERO);
        assert_eq!(summary.min(), Duration::ZERO);
        assert_eq!(summary.max(), Duration::ZERO);
    }

    #[test]
    fn one_sample_is_every_percentile_exactly() {
        for t in [0, 1, 255, 256, 1_234_567, 16_666_667, u64::MAX] {
            let mut summary = FrameTimes::new();
            summary.record(Duration::from_nanos(t));
            for p in PS {
                assert_eq!(summary.percentile(p), Duration::from_nanos(t), "{t} p{p}");
            }
            assert_eq!(summary.mean(), Duration::from_nanos(t));
            check(&[t]);
        }
    }

    #[test]
    fn percentiles_are_within_the_error_bound() {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        // Log-uniform from 1 ns to about 17 s, then frame-like times
        // (0.2 to 1.2 ms with rare 30 ms stalls), then small exact ones.
        let wide: Vec<u64> = (0..20_000)
            .map(|_| {
                let bits = rng.next() % 34;
                (rng.next() >> (64 - bits.max(1))).max(1)
            })
            .collect();
        check(&wide);
        let frames: Vec<u64> = (0..50_000)
            .map(|_| {
                let r = rng.next();
                if r.is_multiple_of(1000) {
                    30_000_000 + r % 1_000_000
                } else {
                    200_000 + r % 1_000_000
                }
            })
            .collect();
        check(&frames);
        let small: Vec<u64> = (0..1000).map(|_| rng.next() % 300).collect();
        check(&small);
        for n in 2..40 {
            check(&wide[..n]);
        }
        check(&[0, u64::MAX]);
        check(&[u64::MAX - 1, u64::MAX, u64::MAX]);
    }

    #[test]
    fn times_past_u64_nanoseconds_saturate() {
        let mut summary = FrameTimes::new();
        summary.record(Duration::MAX);
        summary.record(Duration::MAX);
        assert_eq!(summary.max(), Duration::from_nanos(u64::MAX));
        assert_eq!(summary.percentile(0.5), Duration::from_nanos(u64::MAX));
        assert_eq!(summary.total().as_nanos(), 2 * u128::from(u64::MAX));
    }

    #[test]
    fn memory_does_not_grow_with_frames() {
        let mut summary = FrameTimes::new();
        let counters = summary.counts.as_ptr();
        for i in 0..1_000_000u64 {
            summary.record(Duration::from_nanos(i * 37));
        }
        assert_eq!(summary.counts.len(), BUCKETS);
        assert_eq!(summary.counts.as_ptr(), counters);
        assert_eq!(summary.count(), 1_000_000);
    }
}
