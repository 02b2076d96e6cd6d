//! The schedule: systems run in parallel where their accesses allow.
//!
//! This is seed 002's task scheduler. Systems are added in order, with
//! optional `before`/`after` constraints; [`Schedule::build`] turns them into a
//! [`Plan`] (see [`plan`]): any two systems whose accesses conflict are
//! ordered, by constraint or else by insertion order, and the rest may overlap.
//! Running a segment gives each system a counter of unfinished dependencies;
//! the systems at zero start on the schedule's rayon pool, and each finishing
//! system decrements its dependents' counters and starts those that reach
//! zero, continuing with one of them on its own thread.
//!
//! Structural changes go through each system's [`CommandBuffer`], applied in
//! system insertion order at the end of the schedule or at a sync point, so
//! the result does not depend on the thread count or on timing.
//!
//! A panicking system is caught on its worker. Systems that depend on it are
//! skipped, the others finish, no command buffer of that run is applied (all
//! are dropped, and ids their spawns reserved are freed), and [`Schedule::run`] returns [`ScheduleError::SystemPanicked`].
//! Since systems cannot change the world's structure while they run, the
//! world stays consistent.

pub mod plan;

pub use plan::Plan;

use crate::command::{ApplyReport, CommandBuffer};
use crate::system::builder::SystemDesc;
use crate::system::context::QueryCaches;
use crate::system::{System, SystemAccess, SystemContext};
use crate::world::World;
use plan::{Graph, Segment, Step, SystemFacts};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::time::{Duration, Instant};

/// Building or running a schedule failed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ScheduleError {
    /// Two systems share a name.
    #[error("two systems are called `{0}`; system names must be unique")]
    DuplicateName(String),
    /// A constraint names a system that is not in the schedule.
    #[error("system `{system}` is ordered relative to `{missing}`, which is not in the schedule")]
    UnknownSystem {
        /// The system with the constraint.
        system: String,
        /// The name it refers to.
        missing: String,
    },
    /// The `before`/`after` constraints form a cycle.
    #[error("the before/after constraints form a cycle: {}", cycle.join(" -> "))]
    Cycle {
        /// The systems on the cycle, the first repeated at the end.
        cycle: Vec<String>,
    },
    /// A constraint asks a system to run before one that a sync point (or an
    /// exclusive system) already places earlier.
    #[error("`{first}` must run before `{second}`, but a sync point or exclusive system places it after")]
    ContradictsSyncPoint {
        /// The system that should run first.
        first: String,
        /// The system that should run second.
        second: String,
    },
    /// A system panicked while running.
    #[error("system `{system}` panicked: {message}")]
    SystemPanicked {
        /// The first system that panicked (in insertion order).
        system: String,
        /// Its panic message.
        message: String,
        /// Other systems that panicked in the same run.
        also_panicked: Vec<String>,
        /// Systems that did not run because they depend on a panicked one.
        skipped: Vec<String>,
    },
}

/// What one run did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RunReport {
    /// What applying the command buffers did.
    pub commands: ApplyReport,
}

/// One system and its per-system state.
struct Slot {
    system: Box<dyn System>,
    access: SystemAccess,
    name: String,
    before: Vec<String>,
    after: Vec<String>,
    commands: CommandBuffer,
    caches: QueryCaches,
    last_time: Duration,
    /// Whether the system ran in the current run (false: skipped).
    ran: bool,
}

/// Systems with a parallel execution plan. See the module docs.
///
/// ```
/// use doecs::{system, Schedule, World};
/// struct Pos(f32);
/// struct Vel(f32);
/// struct Dt(f32);
///
/// let mut world = World::new();
/// world.insert_resource(Dt(0.5));
/// let e = world.spawn((Pos(0.0), Vel(2.0)));
///
/// let mut schedule = Schedule::with_threads(2);
/// schedule.add_system(
///     system("integrate")
///         .query::<(&mut Pos, &Vel)>()
///         .reads_resource::<Dt>()
///         .run(|ctx| {
///             let dt = ctx.resource::<Dt>().unwrap().0;
///             ctx.query::<(&mut Pos, &Vel)>().for_each(|(p, v)| p.0 += v.0 * dt);
///         }),
/// );
/// schedule.add_system(
///     system("despawn_far").reads::<Pos>().commands().after("integrate").run(|ctx| {
///         let mut far = Vec::new();
///         ctx.query::<(doecs::Entity, &Pos)>().for_each(|(e, p)| if p.0 > 1.5 { far.push(e) });
///         for e in far {
///             ctx.commands().despawn(e);
///         }
///     }),
/// );
/// schedule.run(&mut world).unwrap(); // Pos 1.0
/// assert!(world.alive(e));
/// schedule.run(&mut world).unwrap(); // Pos 2.0: despawned at the end of the run
/// assert!(!world.alive(e));
/// println!("{}", schedule.plan().unwrap());
/// ```
pub struct Schedule {
    slots: Vec<Mutex<Slot>>,
    steps: Vec<Step>,
    plan: Option<Plan>,
    threads: usize,
    /// The schedule's own workers, started by the first run.
    pool: Option<WorkerPool>,
}

impl Default for Schedule {
    fn default() -> Self {
        Self::new()
    }
}

impl std::fmt::Debug for Schedule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Schedule")
            .field("systems", &self.slots.len())
            .field("threads", &self.threads)
            .finish()
    }
}

impl Schedule {
    /// An empty schedule using every available core.
    pub fn new() -> Self {
        Self::with_threads(0)
    }

    /// An empty schedule whose pool has `threads` workers (0: one per core).
    pub fn with_threads(threads: usize) -> Self {
        let threads = if threads == 0 {
            std::thread::available_parallelism().map_or(1, |n| n.get())
        } else {
            threads
        };
        Schedule {
            slots: Vec::new(),
            steps: Vec::new(),
            plan: None,
            threads,
            pool: None,
        }
    }

    /// The number of worker threads.
    pub fn threads(&self) -> usize {
        self.threads
    }

    /// Adds a system (see [`crate::system`]).
    pub fn add_system(&mut self, desc: SystemDesc) -> &mut Self {
        let access = desc.system.access().clone();
        let name = desc.system.name().to_owned();
        self.steps.push(Step::System(self.slots.len()));
        self.slots.push(Mutex::new(Slot {
            system: desc.system,
            access,
            name,
            before: desc.before,
            after: desc.after,
            commands: CommandBuffer::new(),
            caches: QueryCaches::default(),
            last_time: Duration::ZERO,
            ran: false,
        }));
        self.plan = None;
        self
    }

    /// Adds a sync point: command buffers recorded by the systems added so
    /// far are applied here, and later systems see the changes.
    pub fn add_sync_point(&mut self) -> &mut Self {
        self.steps.push(Step::Sync);
        self.plan = None;
        self
    }

    /// Number of systems.
    pub fn len(&self) -> usize {
        self.slots.len()
    }

    /// Whether there are no systems.
    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    /// Builds the plan if it is out of date. [`Schedule::run`] calls this.
    pub fn build(&mut self) -> Result<(), ScheduleError> {
        if self.plan.is_some() {
            return Ok(());
        }
        let slots: Vec<&Slot> = self
            .slots
            .iter_mut()
            .map(|m| &*m.get_mut().unwrap_or_else(PoisonError::into_inner))
            .collect();
        let facts: Vec<SystemFacts<'_>> = slots
            .iter()
            .map(|s| SystemFacts {
                name: &s.name,
                access: &s.access,
                before: &s.before,
                after: &s.after,
            })
            .collect();
        self.plan = Some(Plan::build(&facts, &self.steps)?);
        Ok(())
    }

    /// The plan: stages, and why each ordered pair is ordered. Builds it if needed.
    pub fn plan(&mut self) -> Result<&Plan, ScheduleError> {
        self.build()?;
        Ok(self.plan.as_ref().expect("just built"))
    }

    /// How long each system took in the last run, in insertion order.
    pub fn system_times(&mut self) -> Vec<(String, Duration)> {
        self.slots
            .iter_mut()
            .map(|m| {
                let slot = m.get_mut().unwrap_or_else(PoisonError::into_inner);
                (slot.name.clone(), slot.last_time)
            })
            .collect()
    }

    /// Runs every system once, applying command buffers at sync points and
    /// at the end.
    pub fn run(&mut self, world: &mut World) -> Result<RunReport, ScheduleError> {
        self.build()?;
        let threads = self.threads;
        let pool = self
            .pool
            .get_or_insert_with(|| WorkerPool::start(threads))
            .pool();
        let plan = self.plan.as_ref().expect("built");
        let mut report = RunReport::default();
        for segment in &plan.segments {
            match segment {
                Segment::Exclusive(i) => {
                    let mut slot = lock(&self.slots[*i]);
                    let system = &mut slot.system;
                    let start = Instant::now();
                    let outcome = catch_unwind(AssertUnwindSafe(|| {
                        pool.install(|| system.run_exclusive(world))
                    }));
                    slot.last_time = start.elapsed();
                    if let Err(payload) = outcome {
                        let message = panic_message(payload.as_ref());
                        drop(slot);
                        discard_commands(&self.slots, world);
                        return Err(ScheduleError::SystemPanicked {
                            system: plan.name(*i).to_owned(),
                            message,
                            also_panicked: Vec::new(),
                            skipped: Vec::new(),
                        });
                    }
                }
                Segment::Parallel(graph) => {
                    let shared: &World = world;
                    let panics = run_graph(graph, &self.slots, shared, pool, self.threads);
                    if !panics.is_empty() {
                        let error = panic_error(plan, graph, &self.slots, panics);
                        discard_commands(&self.slots, world);
                        return Err(error);
                    }
                    for &i in &graph.systems {
                        let mut slot = lock(&self.slots[i]);
                        report.commands.absorb(world.apply(&mut slot.commands));
                    }
                }
            }
        }
        Ok(report)
    }
}

/// Drops every system's recorded commands unapplied, freeing the ids their
/// spawns reserved.
fn discard_commands(slots: &[Mutex<Slot>], world: &mut World) {
    for slot in slots {
        lock(slot).commands.discard(world);
    }
}

/// A rayon pool whose threads are joined when it is dropped, so dropping a
/// schedule leaves no worker thread behind.
struct WorkerPool {
    /// Always `Some` until dropped.
    pool: Option<rayon::ThreadPool>,
    /// Number of workers that have exited, and a signal for each exit.
    exited: Arc<(Mutex<usize>, Condvar)>,
    threads: usize,
}

impl WorkerPool {
    fn start(threads: usize) -> Self {
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

    fn pool(&self) -> &rayon::ThreadPool {
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

fn lock(slot: &Mutex<Slot>) -> std::sync::MutexGuard<'_, Slot> {
    // A poisoned slot only means its system panicked in an earlier run; the
    // slot itself is still whole.
    slot.lock().unwrap_or_else(PoisonError::into_inner)
}

fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "non-string panic payload".to_owned()
    }
}

/// A system's panic: (global index, message).
type Panicked = (usize, String);

/// Builds the error for a segment in which systems panicked.
fn panic_error(
    plan: &Plan,
    graph: &Graph,
    slots: &[Mutex<Slot>],
    mut panics: Vec<Panicked>,
) -> ScheduleError {
    panics.sort_by_key(|p| p.0);
    let ran: Vec<bool> = graph.systems.iter().map(|&i| lock(&slots[i]).ran).collect();
    let (first, message) = panics.remove(0);
    ScheduleError::SystemPanicked {
        system: plan.name(first).to_owned(),
        message,
        also_panicked: panics.iter().map(|p| plan.name(p.0).to_owned()).collect(),
        skipped: graph
            .systems
            .iter()
            .zip(ran)
            .filter(|(_, ran)| !ran)
            .map(|(&i, _)| plan.name(i).to_owned())
            .collect(),
    }
}

/// State shared by the workers running one segment.
struct Run<'a> {
    graph: &'a Graph,
    slots: &'a [Mutex<Slot>],
    world: &'a World,
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
            let mut context = SystemContext::new(
                self.world,
                &slot.access,
                &slot.name,
                &mut slot.commands,
                &mut slot.caches,
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
    /// thread, spawning the extra ones onto the pool.
    fn run_from<'s>(&'s self, scope: &rayon::Scope<'s>, mut node: u32) {
        loop {
            if !self.run_system(node) {
                return; // dependents of a panicked system never become ready
            }
            let mut next = None;
            for &d in &self.graph.dependents[node as usize] {
                if self.waiting_on[d as usize].fetch_sub(1, Ordering::AcqRel) == 1 {
                    match next {
                        None => next = Some(d),
                        Some(_) => scope.spawn(move |s| self.run_from(s, d)),
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

/// Runs one parallel segment; returns the panics.
fn run_graph(
    graph: &Graph,
    slots: &[Mutex<Slot>],
    world: &World,
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
    pool.install(|| {
        if threads == 1 || graph.systems.len() == 1 {
            // One worker: the topological order, no task overhead.
            let mut failed = vec![false; graph.systems.len()];
            for &node in &graph.order {
                let blocked = graph
                    .edges
                    .iter()
                    .any(|e| e.to == node && failed[e.from as usize]);
                failed[node as usize] = blocked || !run.run_system(node);
            }
        } else {
            let run = &run;
            rayon::scope(|scope| {
                for (node, &degree) in graph.in_degree.iter().enumerate() {
                    if degree == 0 {
                        scope.spawn(move |s| run.run_from(s, node as u32));
                    }
                }
            });
        }
    });
    run.panics
        .into_inner()
        .unwrap_or_else(PoisonError::into_inner)
}
