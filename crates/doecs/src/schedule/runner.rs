//! Running one parallel segment of a schedule on the schedule's worker pool.
//!
//! Each system of the segment has a counter of unfinished dependencies (seed
//! 002's task scheduler). The systems at zero are spawned onto the pool; a
//! finishing system decrements its dependents' counters, continues with one
//! newly ready dependent on its own thread and spawns the others. The thread
//! that runs the schedule waits until no job is in flight.
//!
//! The jobs share their state through an `Arc`: the last thing a job does is
//! count itself out and, if it was the last, wake the waiting thread, under
//! a mutex the `Arc` keeps alive. Nothing a job borrows from the schedule (the
//! plan, the systems, the world) is touched after that, so the waiting thread
//! may return and end those borrows at once. (`rayon::scope` would do the
//! same bookkeeping, but Miri's Tree Borrows reports its scope being freed
//! while a job still holds a protected reference into it.)

use super::plan::Graph;
use super::{lock, panic_message, Panicked, Slot};
use crate::system::context::SpawnSource;
use crate::system::SystemContext;
use crate::world::WorldCore;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::time::Instant;

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
            let here = &mut slot.worlds[slot.current].1;
            let mut context = SystemContext::new(
                self.world,
                &slot.access,
                &slot.name,
                &mut slot.commands,
                SpawnSource::Pool(&mut here.spawn_ids),
                &mut here.caches,
            );
            slot.system.run(&mut context);
        }));
        slot.last_time = start.elapsed();
        slot.ran = true;
        match outcome {
            Ok(()) => true,
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
    pool: *const rayon::ThreadPool,
    /// Jobs spawned and not yet finished.
    in_flight: AtomicUsize,
    finished: Mutex<bool>,
    wake: Condvar,
}

// SAFETY: `run` and `pool` are only dereferenced while the owner waits (type
// invariant), and what they point at is `Sync` (`Run` holds shared references
// and atomics; `ThreadPool` is `Sync`); the other fields are `Send + Sync`.
unsafe impl Send for Shared {}
// SAFETY: as above.
unsafe impl Sync for Shared {}

/// Spawns a job running `node` (and the dependents it makes ready).
fn spawn_job(shared: &Arc<Shared>, node: u32) {
    shared.in_flight.fetch_add(1, Ordering::AcqRel);
    let job = Arc::clone(shared);
    // SAFETY: the pool outlives every job (the owner waits; type invariant).
    let pool = unsafe { &*shared.pool };
    pool.spawn(move || {
        {
            // SAFETY: this job has not counted itself out yet, so the owner
            // is still waiting and `run` is alive (type invariant).
            let run = unsafe { &*job.run };
            run.run_from(node, |d| spawn_job(&job, d));
        }
        if job.in_flight.fetch_sub(1, Ordering::AcqRel) == 1 {
            let mut finished = job.finished.lock().unwrap_or_else(PoisonError::into_inner);
            *finished = true;
            job.wake.notify_all();
        }
    });
}

/// Runs one parallel segment; returns the panics.
pub(crate) fn run_graph(
    graph: &Graph,
    slots: &[Mutex<Slot>],
    world: &WorldCore,
    pool: &rayon::ThreadPool,
    threads: usize,
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
    if threads == 1 || graph.systems.len() == 1 {
        // One worker: the topological order, no task overhead.
        pool.install(|| {
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
        let shared = Arc::new(Shared {
            run: (&raw const run).cast::<Run<'static>>(),
            pool,
            in_flight: AtomicUsize::new(0),
            finished: Mutex::new(false),
            wake: Condvar::new(),
        });
        let roots: Vec<u32> = (0..graph.systems.len() as u32)
            .filter(|&n| graph.in_degree[n as usize] == 0)
            .collect();
        // Count every root in before any can finish, so `in_flight` only
        // reaches zero once all work is done.
        shared.in_flight.fetch_add(1, Ordering::AcqRel);
        for node in roots {
            spawn_job(&shared, node);
        }
        let mut finished = shared
            .finished
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if shared.in_flight.fetch_sub(1, Ordering::AcqRel) != 1 {
            while !*finished {
                finished = shared
                    .wake
                    .wait(finished)
                    .unwrap_or_else(PoisonError::into_inner);
            }
        }
    }
    run.panics
        .into_inner()
        .unwrap_or_else(PoisonError::into_inner)
}
