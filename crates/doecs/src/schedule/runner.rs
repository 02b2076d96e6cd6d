//! Running one parallel segment of a schedule on the schedule's worker pool.
//!
//! Each system of the segment has a counter of unfinished dependencies (the
//! task scheduler of Jungwan Byun's "Data-oriented Entity Component System"). The systems at zero are spawned onto the pool; a
//! finishing system decrements its dependents' counters, continues with one
//! newly ready dependent on its own thread and spawns the others. The
//! schedule's own thread, moved onto a pool worker, waits until no job is in
//! flight, running pool jobs (systems, or pieces of their parallel loops)
//! while it waits instead of sleeping.
//!
//! The jobs share their state through an `Arc`: the last thing a job does
//! with it is count itself out. Nothing a job borrows from the schedule (the
//! plan, the systems, the world) is touched after that, so the waiting thread
//! may return and end those borrows as soon as the count reaches zero.
//! (`rayon::scope` would do the same bookkeeping, but Miri's Tree Borrows
//! reports its scope being freed while a job still holds a protected
//! reference into it.)
//!
//! A segment runs either on the pool or on the waiting thread alone, in plan
//! order ([`Mode`]): for tiny systems, handing work to other threads costs
//! more than it saves, and how much it costs depends on the machine (waking
//! a sleeping worker takes microseconds, more on a virtual machine, and
//! more workers to wake on more cores). So the choice is measured, not
//! guessed ([`SegmentTimes`]): a segment light enough to try on one thread
//! runs both ways, then the way that was faster, trying the other again now
//! and then. The parallel forms of query loops inside an inline segment (or
//! in a one-thread schedule) run in place, piece by piece. Which thread runs
//! a system never changes the result.

use super::plan::Graph;
use super::{lock, panic_message, Panicked, Slot};
use crate::parallel::with_sequential;
use crate::system::context::SpawnSource;
use crate::system::SystemContext;
use crate::world::WorldCore;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::time::{Duration, Instant};

/// A segment is tried on one thread only if its systems' last times, added
/// up and multiplied by the pool's threads, stay below this: the most the
/// try can cost, had every system spread its own loops over every thread.
const TRY_INLINE_BELOW: Duration = Duration::from_millis(1);
/// Runs before the slower way is tried again, first; each try that loses
/// doubles it, up to [`RETRY_AT_MOST`].
const RETRY_FIRST: u32 = 16;
/// The longest wait between tries of the slower way.
const RETRY_AT_MOST: u32 = 1024;

/// How one parallel segment runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Mode {
    /// On the schedule's thread alone, in plan order, its query loops in
    /// place.
    Inline,
    /// Spread over the pool.
    Pooled,
}

impl Mode {
    fn other(self) -> Mode {
        match self {
            Mode::Inline => Mode::Pooled,
            Mode::Pooled => Mode::Inline,
        }
    }
}

/// How long one parallel segment took lately run each way, to choose how it
/// runs next ([`SegmentTimes::choose`]).
#[derive(Clone, Debug, Default)]
pub(crate) struct SegmentTimes {
    /// Its inline wall time: it falls to any faster run at once and rises
    /// by an eighth of a slower one's excess, since noise (an interrupted
    /// run) only ever adds time.
    inline: Option<Duration>,
    /// Its pooled wall time, likewise.
    pooled: Option<Duration>,
    /// Runs left before the slower way is tried again.
    until_retry: u32,
    /// The wait after that try, if it loses again.
    retry_every: u32,
}

impl SegmentTimes {
    /// How the segment runs next, given its systems' last times added up
    /// (`None` before the first run) and the pool's thread count. With one
    /// thread it runs inline. Otherwise a first run is pooled; a segment
    /// too heavy to try on one thread ([`TRY_INLINE_BELOW`]) stays pooled;
    /// any other is tried each way once, then the faster runs
    /// ([`faster`](Self::faster)), and the slower is tried again after
    /// [`RETRY_FIRST`] runs, then twice as many each time it loses again.
    pub(crate) fn choose(&mut self, work: Option<Duration>, threads: usize) -> Mode {
        if threads <= 1 {
            return Mode::Inline;
        }
        let Some(work) = work else {
            return Mode::Pooled;
        };
        let worst = work.saturating_mul(u32::try_from(threads).unwrap_or(u32::MAX));
        if worst >= TRY_INLINE_BELOW {
            return Mode::Pooled;
        }
        // Each way is measured once before they are compared.
        let Some(faster) = self.faster() else {
            return match self.inline {
                None => Mode::Inline,
                Some(_) => Mode::Pooled,
            };
        };
        if self.until_retry == 0 {
            self.until_retry = self.retry_every.max(RETRY_FIRST);
            return faster.other();
        }
        self.until_retry -= 1;
        faster
    }

    /// The faster way by the estimates, once both are measured. The pool
    /// must win by a third: its time leaves out costs that fall outside
    /// the segment (workers spinning before they sleep, on cores the
    /// schedule's thread then shares; data left in another core's cache).
    fn faster(&self) -> Option<Mode> {
        let (inline, pooled) = (self.inline?, self.pooled?);
        Some(if pooled.saturating_mul(4) / 3 < inline {
            Mode::Pooled
        } else {
            Mode::Inline
        })
    }

    /// Records a run `mode` that took `wall`. A retried way that is still
    /// slower waits twice as long for its next try; one that won becomes
    /// the way, and the wait starts over.
    pub(crate) fn record(&mut self, mode: Mode, wall: Duration) {
        let before = self.faster();
        let estimate = match mode {
            Mode::Inline => &mut self.inline,
            Mode::Pooled => &mut self.pooled,
        };
        let first = estimate.is_none();
        *estimate = Some(match *estimate {
            Some(e) if wall > e => e + (wall - e) / 8,
            _ => wall,
        });
        let retried = before == Some(mode.other());
        let still_slower = self.faster() == Some(mode.other());
        let every = self.retry_every.max(RETRY_FIRST);
        self.retry_every = match (retried, still_slower) {
            (true, true) => (every * 2).min(RETRY_AT_MOST),
            (true, false) => RETRY_FIRST,
            (false, _) => every,
        };
        if retried || first {
            self.until_retry = self.retry_every;
        }
    }
}

/// A rayon pool whose threads are joined when it is dropped, so dropping a
/// schedule leaves no worker thread behind.
pub(crate) struct WorkerPool {
    /// Always `Some` until dropped.
    pool: Option<rayon::ThreadPool>,
    /// Number of workers that have exited, and a signal for each exit.
    exited: Arc<(Mutex<usize>, Condvar)>,
    threads: usize,
}

impl WorkerPool {
    pub(crate) fn start(threads: usize) -> Self {
        let exited = Arc::new((Mutex::new(0), Condvar::new()));
        let signal = exited.clone();
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .thread_name(move |i| format!("doecs-{threads}-worker-{i}"))
            .exit_handler(move |_| {
                let (count, condvar) = &*signal;
                *count.lock().unwrap_or_else(PoisonError::into_inner) += 1;
                condvar.notify_all();
            })
            .build()
            .expect("doecs: could not start the schedule's worker threads");
        WorkerPool {
            pool: Some(pool),
            exited,
            threads,
        }
    }

    pub(crate) fn pool(&self) -> &rayon::ThreadPool {
        self.pool.as_ref().expect("present until dropped")
    }
}

impl Drop for WorkerPool {
    fn drop(&mut self) {
        // Dropping a rayon pool only asks its threads to stop; wait for them.
        drop(self.pool.take());
        let (count, condvar) = &*self.exited;
        let mut exited = count.lock().unwrap_or_else(PoisonError::into_inner);
        while *exited < self.threads {
            exited = condvar.wait(exited).unwrap_or_else(PoisonError::into_inner);
        }
    }
}

/// State shared by the workers running one segment.
struct Run<'a> {
    graph: &'a Graph,
    slots: &'a [Mutex<Slot>],
    world: &'a WorldCore,
    waiting_on: Vec<AtomicU32>,
    panics: Mutex<Vec<Panicked>>,
}

impl Run<'_> {
    /// Runs local node `node`; returns whether it finished without panicking.
    fn run_system(&self, node: u32) -> bool {
        let index = self.graph.systems[node as usize];
        let mut guard = lock(&self.slots[index]);
        let slot = &mut *guard;
        let start = Instant::now();
        let outcome = catch_unwind(AssertUnwindSafe(|| {
            let here = slot.worlds.current();
            let mut context = SystemContext::new(
                self.world,
                &slot.access,
                &slot.name,
                &mut slot.commands,
                SpawnSource::Pool(&mut here.spawn_ids),
                &mut here.caches,
                slot.window,
            );
            let runs = slot.conditions.iter_mut().all(|c| c.evaluate(&mut context));
            if runs {
                slot.system.run(&mut context);
            }
            runs
        }));
        slot.last_time = Some(start.elapsed());
        // A system skipped by a run condition did not run: its change
        // window stays (see `system::condition`).
        slot.ran = !matches!(outcome, Ok(false));
        match outcome {
            Ok(_) => true,
            Err(payload) => {
                let message = panic_message(payload.as_ref());
                self.panics
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .push((index, message));
                false
            }
        }
    }

    /// Runs `node`, then keeps running newly ready dependents on this
    /// thread, handing the extra ones to `spawn`.
    fn run_from(&self, mut node: u32, mut spawn: impl FnMut(u32)) {
        loop {
            if !self.run_system(node) {
                return; // dependents of a panicked system never become ready
            }
            let mut next = None;
            for &d in &self.graph.dependents[node as usize] {
                if self.waiting_on[d as usize].fetch_sub(1, Ordering::AcqRel) == 1 {
                    match next {
                        None => next = Some(d),
                        Some(_) => spawn(d),
                    }
                }
            }
            match next {
                Some(d) => node = d,
                None => return,
            }
        }
    }
}

/// What the jobs of one segment share, kept alive by each job's `Arc`.
///
/// # Invariants
/// `run` points at the segment's [`Run`], which outlives every job's use of
/// it: the owner waits until `in_flight` is zero, and a job reads `run` only
/// before counting itself out.
struct Shared {
    run: *const Run<'static>,
    /// Jobs spawned and not yet finished.
    in_flight: AtomicUsize,
}

// SAFETY: `run` is only dereferenced while the owner waits (type invariant),
// and `Run` is `Sync` (shared references, atomics and a mutex); the count is
// an atomic.
unsafe impl Send for Shared {}
// SAFETY: as above.
unsafe impl Sync for Shared {}

/// Spawns a job running `node` (and the dependents it makes ready) onto the
/// current pool (the caller runs inside the schedule's pool).
fn spawn_job(shared: &Arc<Shared>, node: u32) {
    shared.in_flight.fetch_add(1, Ordering::AcqRel);
    let job = Arc::clone(shared);
    rayon::spawn(move || {
        {
            // SAFETY: this job has not counted itself out yet, so the owner
            // is still waiting and `run` is alive (type invariant).
            let run = unsafe { &*job.run };
            run.run_from(node, |d| spawn_job(&job, d));
        }
        job.in_flight.fetch_sub(1, Ordering::AcqRel);
    });
}

/// Runs one parallel segment, as `mode` says (inline: on the calling
/// thread; pooled: on `pool`); returns the panics.
pub(crate) fn run_graph(
    graph: &Graph,
    slots: &[Mutex<Slot>],
    world: &WorldCore,
    pool: &rayon::ThreadPool,
    mode: Mode,
) -> Vec<Panicked> {
    for &i in &graph.systems {
        lock(&slots[i]).ran = false;
    }
    let run = Run {
        graph,
        slots,
        world,
        waiting_on: graph.in_degree.iter().map(|&d| AtomicU32::new(d)).collect(),
        panics: Mutex::new(Vec::new()),
    };
    if mode == Mode::Inline {
        // One thread, the caller's: the plan's order, no task overhead, and
        // query loops run in place.
        with_sequential(true, || {
            let mut failed = vec![false; graph.systems.len()];
            for &node in &graph.order {
                let blocked = graph
                    .edges
                    .iter()
                    .any(|e| e.to == node && failed[e.from as usize]);
                failed[node as usize] = blocked || !run.run_system(node);
            }
        });
    } else {
        pool.install(|| {
            let shared = Arc::new(Shared {
                run: (&raw const run).cast::<Run<'static>>(),
                in_flight: AtomicUsize::new(0),
            });
            for node in 0..graph.systems.len() as u32 {
                if graph.in_degree[node as usize] == 0 {
                    spawn_job(&shared, node);
                }
            }
            // Run jobs while waiting; a job spawns its dependents before it
            // counts itself out, so zero means every job has finished.
            while shared.in_flight.load(Ordering::Acquire) != 0 {
                if !matches!(rayon::yield_now(), Some(rayon::Yield::Executed)) {
                    std::hint::spin_loop();
                }
            }
        });
    }
    run.panics
        .into_inner()
        .unwrap_or_else(PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use super::*;

    const US: Duration = Duration::from_micros(1);

    /// Runs `runs` choices, recording `inline` or `pooled` for each;
    /// returns the modes chosen.
    fn drive(
        times: &mut SegmentTimes,
        runs: usize,
        inline: Duration,
        pooled: Duration,
    ) -> Vec<Mode> {
        (0..runs)
            .map(|_| {
                let mode = times.choose(Some(10 * US), 16);
                times.record(mode, if mode == Mode::Inline { inline } else { pooled });
                mode
            })
            .collect()
    }

    fn pooled_runs(modes: &[Mode]) -> Vec<usize> {
        (0..modes.len())
            .filter(|&k| modes[k] == Mode::Pooled)
            .collect()
    }

    #[test]
    fn first_heavy_and_one_thread_runs_need_no_measure() {
        let mut times = SegmentTimes::default();
        assert_eq!(
            times.choose(None, 16),
            Mode::Pooled,
            "a first run is pooled"
        );
        // 100 µs on 16 threads could be 1.6 ms inline: never tried.
        for _ in 0..100 {
            assert_eq!(times.choose(Some(100 * US), 16), Mode::Pooled);
        }
        assert_eq!(times.choose(Some(100 * US), 1), Mode::Inline);
    }

    /// Where waking the pool costs more than it saves, the segment settles
    /// inline, trying the pool again after 16 runs, then 32, 64, … up to
    /// every 1,024 runs.
    #[test]
    fn a_segment_settles_on_the_faster_way_and_retries_less_often() {
        let mut times = SegmentTimes::default();
        times.record(Mode::Pooled, 50 * US); // the first run
        let modes = drive(&mut times, 4000, 15 * US, 50 * US);
        assert_eq!(modes[0], Mode::Inline, "the untried way goes next");
        let pooled = pooled_runs(&modes);
        let gaps: Vec<usize> = pooled.windows(2).map(|w| w[1] - w[0] - 1).collect();
        assert_eq!(pooled[0], 17, "16 inline runs after both were measured");
        assert_eq!(gaps[..6], [32, 64, 128, 256, 512, 1024]);
        assert!(gaps[6..].iter().all(|&g| g == 1024), "{gaps:?}");
    }

    /// A pool that wins by less than a third, or one slow inline run
    /// among fast ones, does not move the segment onto the pool.
    #[test]
    fn small_wins_and_single_slow_runs_keep_the_segment_inline() {
        let mut times = SegmentTimes::default();
        let modes = drive(&mut times, 100, 20 * US, 17 * US);
        assert_eq!(modes[..2], [Mode::Inline, Mode::Pooled]);
        assert_eq!(pooled_runs(&modes), [1, 18, 51], "only the retries");
        // One inline run interrupted (twice as long) among 20 us ones.
        times.record(Mode::Inline, 40 * US);
        assert_eq!(times.inline, Some(20 * US + 20 * US / 8));
        assert_eq!(times.faster(), Some(Mode::Inline));
        // A faster run counts at once.
        times.record(Mode::Inline, 19 * US);
        assert_eq!(times.inline, Some(19 * US));
    }

    /// When the pool is faster, the segment settles pooled; when the
    /// machine changes and the retried way wins, it becomes the way.
    #[test]
    fn a_retried_way_that_wins_takes_over() {
        let mut times = SegmentTimes::default();
        let modes = drive(&mut times, 200, 40 * US, 20 * US);
        assert_eq!(modes[..2], [Mode::Inline, Mode::Pooled], "each way once");
        let inline_runs = modes.iter().filter(|&&m| m == Mode::Inline).count();
        assert!(inline_runs <= 5, "{inline_runs} inline runs of 200");
        // The pool gets slow (other work on the machine): the next retry
        // of inline wins, and the segment stays inline.
        let modes = drive(&mut times, 300, 40 * US, 80 * US);
        let first_inline = modes.iter().position(|&m| m == Mode::Inline).unwrap();
        assert!(first_inline <= 128, "retried within the backoff");
        let after = &modes[first_inline..];
        assert!(pooled_runs(after).len() <= 3, "{after:?}");
    }
}
