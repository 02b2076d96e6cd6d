//! Where parallel work runs: the pool of the schedule running on this
//! thread, and whether parallel query loops should run in place.
//!
//! A schedule runs some systems on its caller's thread (an inline segment,
//! an exclusive system), outside its rayon pool, and runs tiny segments and
//! one-thread schedules without handing work to other threads at all. The
//! parallel query loops (`query/loops.rs`) and managers with parallel work
//! of their own learn which by asking this thread, not by taking the pool as
//! an argument: `par_for_each` has no pool to pass, and a system's code does
//! not know where it runs. So the state is two thread-locals, set by the
//! schedule around a run ([`with_pool`], [`with_sequential`]) and read by
//! the loops ([`sequential_here`], [`on_schedule_pool`]).
//!
//! The module sits at the bottom of the crate, below queries and the
//! schedule, so that both use it and neither imports the other for it.

thread_local! {
    /// The pool of the schedule running on this thread, while a schedule
    /// runs systems on its caller's thread (see [`with_pool`]).
    static SCHEDULE_POOL: std::cell::Cell<*const rayon::ThreadPool> =
        const { std::cell::Cell::new(std::ptr::null()) };
    /// Whether the systems running on this thread should run their query
    /// loops' parallel forms sequentially, in place: set while a tiny
    /// segment runs on the caller's thread, and while a one-thread schedule
    /// runs (see [`sequential_here`]).
    static SEQUENTIAL: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Whether parallel query loops started on this thread should run in place,
/// one piece after another: inside a segment too small to be worth other
/// threads, or a schedule with one thread. Handing those loops to the pool
/// would only add two thread switches per loop.
#[inline]
pub(crate) fn sequential_here() -> bool {
    SEQUENTIAL.with(std::cell::Cell::get)
}

/// Runs `f` with [`sequential_here`] answering `sequential`.
pub(crate) fn with_sequential<R>(sequential: bool, f: impl FnOnce() -> R) -> R {
    struct Restore(bool);
    impl Drop for Restore {
        fn drop(&mut self) {
            SEQUENTIAL.with(|s| s.set(self.0));
        }
    }
    let _restore = Restore(SEQUENTIAL.with(|s| s.replace(sequential)));
    f()
}

/// Runs `f` with `pool` recorded as this thread's schedule pool, so that
/// parallel loops `f` starts ([`on_schedule_pool`]) use it.
pub(crate) fn with_pool<R>(pool: &rayon::ThreadPool, f: impl FnOnce() -> R) -> R {
    struct Restore(*const rayon::ThreadPool);
    impl Drop for Restore {
        fn drop(&mut self) {
            SCHEDULE_POOL.with(|p| p.set(self.0));
        }
    }
    let _restore = Restore(SCHEDULE_POOL.with(|p| p.replace(pool)));
    f()
}

/// Runs the parallel work `f` (rayon iterators, `join`, `scope`) on the pool
/// of the schedule running on this thread, if a schedule runs a system here
/// outside its pool (an inline segment or an exclusive system runs on the
/// caller's thread); else on the current rayon pool. Query loops do this
/// already; managers with parallel work of their own should too.
pub fn on_schedule_pool<R: Send>(f: impl FnOnce() -> R + Send) -> R {
    let pool = SCHEDULE_POOL.with(|p| p.get());
    if pool.is_null() {
        return f();
    }
    // SAFETY: a non-null pointer was set by `with_pool`, whose borrow of the
    // pool lasts until it restores the old value, after `f` returns.
    let pool = unsafe { &*pool };
    if pool.current_thread_index().is_some() {
        f()
    } else {
        pool.install(f)
    }
}
