//! The schedule: systems run in parallel where their accesses allow.
//!
//! This is the task scheduler of Jungwan Byun's "Data-oriented Entity Component System". Systems are added in order, with
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
//! the result does not depend on the thread count or on timing. Entity ids
//! for spawns recorded while systems run come from per-system pools handed
//! out before the systems start (see `entities::spawn_ids`), so they too are the same at
//! any thread count and in every run.
//!
//! A schedule can run on any number of worlds. What a system keeps about a
//! world (its query caches, its id pool) is kept per world, so running the
//! same schedule on world A and then on world B works, and each world's
//! caches survive the other's runs.
//!
//! A panicking system is caught on its worker. Systems that depend on it are
//! skipped, the others finish, no command buffer of that run is applied (all
//! are dropped, and ids their spawns reserved are freed), and [`Schedule::run`] returns [`ScheduleError::SystemPanicked`].
//! Since systems cannot change the world's structure while they run, the
//! world stays consistent.

mod one_shot;
mod plan;
mod runner;

pub use plan::Plan;

use crate::dyn_value::DynValue;
use crate::entities::spawn_ids::{self as ids, SpawnIds};
use crate::parallel;
pub use crate::parallel::on_schedule_pool;
use crate::system::condition::Condition;
use crate::system::context::{QueryCaches, SpawnSource, SystemContext};
use crate::system::desc::{IntoSystemDesc, SystemDesc, SystemKind};
pub use crate::system::error::ScheduleError;
use crate::system::set::{IntoSetConfig, IntoSystemGroup, OrderTarget, SetConfig};
use crate::system::{System, SystemAccess};
use crate::tick::{ChangeWindow, Tick};
use crate::world::command::{ApplyReport, CommandBuffer};
use crate::world::per_world::PerWorld;
use crate::world::{World, WorldCore};
use plan::{Graph, Segment, Step, SystemFacts};
use runner::{run_graph, SegmentTimes, WorkerPool};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

/// What one run did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RunReport {
    /// What applying the command buffers did.
    pub commands: ApplyReport,
    /// How long each system took, in insertion order.
    pub systems: Vec<SystemTime>,
}

/// One system's time in one run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SystemTime {
    /// The system's name.
    pub name: std::sync::Arc<str>,
    /// Wall time of its run (zero if it did not run).
    pub time: Duration,
}

/// What one system keeps about one world.
#[derive(Default)]
struct WorldState {
    caches: QueryCaches,
    spawn_ids: SpawnIds,
    /// The tick of the system's last run on this world ([`Tick::ZERO`]
    /// before the first, so the first sees everything).
    last_run: Tick,
    /// Whether the system's setup ran on this world (row stamps its change
    /// filters need, event types and removal logs it uses).
    set_up: bool,
}

/// One system and its per-system state.
struct Slot {
    system: Box<dyn System>,
    access: SystemAccess,
    name: std::sync::Arc<str>,
    before: Vec<OrderTarget>,
    after: Vec<OrderTarget>,
    labels: Vec<String>,
    sets: Vec<DynValue>,
    type_id: Option<std::any::TypeId>,
    /// Its run conditions: it runs only when all hold.
    conditions: Vec<Box<dyn Condition>>,
    commands: CommandBuffer,
    /// Per-world state, one entry per live world this schedule ran on.
    worlds: PerWorld<WorldState>,
    /// How long the system took in its last run; `None` before its first.
    last_time: Option<Duration>,
    /// Whether the system ran in the current run (false: skipped).
    ran: bool,
    /// The system's change window in the current run.
    window: ChangeWindow,
}

impl Slot {
    /// Makes `world` the current run's world, creating its state on first
    /// use (and freeing the state of worlds dropped since).
    fn enter(&mut self, world: &WorldCore) {
        self.worlds.enter(world, WorldState::default);
    }

    /// The current run's per-world state.
    fn here(&mut self) -> &mut WorldState {
        self.worlds.current()
    }
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
///             let dt = ctx.resource::<Dt>().0;
///             ctx.query::<(&mut Pos, &Vel)>().for_each(|(p, v)| p.0 += v.0 * dt);
///         }),
/// ).unwrap();
/// schedule.add_system(
///     system("despawn_far").reads::<Pos>().commands().run(|ctx| {
///         let mut far = Vec::new();
///         ctx.query::<(doecs::Entity, &Pos)>().for_each(|(e, p)| if p.0 > 1.5 { far.push(e) });
///         for e in far {
///             ctx.commands().despawn(e);
///         }
///     })
///     .after("integrate"),
/// ).unwrap();
/// schedule.run(&mut world).unwrap(); // Pos 1.0
/// assert!(world.alive(e));
/// schedule.run(&mut world).unwrap(); // Pos 2.0: despawned at the end of the run
/// assert!(!world.alive(e));
/// println!("{}", schedule.plan().unwrap());
/// ```
pub struct Schedule {
    slots: Vec<Mutex<Slot>>,
    /// Per system: whether it records commands (fixed when added).
    records_commands: Vec<bool>,
    steps: Vec<Step>,
    plan: Option<Plan>,
    /// Per segment of the plan: how long it took lately run inline and
    /// pooled (unused for exclusive segments).
    segment_times: Vec<SegmentTimes>,
    threads: usize,
    /// The schedule's own workers, started by the first run.
    pool: Option<WorkerPool>,
    /// Configured sets: their ordering and member conditions.
    set_configs: Vec<SetConfig>,
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
            records_commands: Vec::new(),
            steps: Vec::new(),
            plan: None,
            segment_times: Vec::new(),
            threads,
            pool: None,
            set_configs: Vec::new(),
        }
    }

    /// The number of worker threads.
    pub fn threads(&self) -> usize {
        self.threads
    }

    /// Adds a system (a function system, an exclusive function over `&mut World`, or a [`SystemDesc`](crate::SystemDesc)).
    ///
    /// `SystemKind` comes before `IntoSystemDesc` in the bounds so that a
    /// wrong parameter is reported by its type (see [`SystemKind`]).
    pub fn add_system<M, S>(&mut self, system: S) -> Result<&mut Self, ScheduleError>
    where
        S: SystemKind<M> + IntoSystemDesc<M>,
    {
        let desc: SystemDesc = system.into_desc();
        let system = desc.system?;
        crate::system::refuse_observer(system.name(), system.access())?;
        let mut access = system.access().clone();
        let mut conditions = Vec::with_capacity(desc.conditions.len());
        for condition in desc.conditions {
            add_condition(&mut access, &mut conditions, condition.make()?);
        }
        for config in &self.set_configs {
            if desc.sets.contains(&config.set) {
                for make in &config.conditions {
                    add_condition(&mut access, &mut conditions, make.make()?);
                }
            }
        }
        // A default name already taken (two closures of one function) gets
        // a number; a name given with `.named` must be unique.
        let name: std::sync::Arc<str> = match desc.name {
            Some(name) => name.into(),
            None => self.unused_name(system.name()).into(),
        };
        self.steps.push(Step::System(self.slots.len()));
        self.records_commands.push(access.commands);
        self.slots.push(Mutex::new(Slot {
            system,
            access,
            name,
            before: desc.before,
            after: desc.after,
            labels: desc.labels,
            sets: desc.sets,
            type_id: desc.type_id,
            conditions,
            commands: CommandBuffer::new(),
            worlds: PerWorld::default(),
            last_time: None,
            ran: false,
            window: ChangeWindow::default(),
        }));
        self.plan = None;
        Ok(self)
    }

    /// `base`, or `base#2`, `base#3`, ..: the first no system has.
    fn unused_name(&mut self, base: &str) -> String {
        let taken = |slots: &mut Vec<Mutex<Slot>>, name: &str| {
            slots.iter_mut().any(|s| &*lock_mut(s).name == name)
        };
        if !taken(&mut self.slots, base) {
            return base.to_owned();
        }
        (2..)
            .map(|k| format!("{base}#{k}"))
            .find(|name| !taken(&mut self.slots, name))
            .expect("some number is free")
    }

    /// Adds a sync point: command buffers recorded by the systems added so
    /// far are applied here, and later systems see the changes.
    pub fn add_sync_point(&mut self) -> &mut Self {
        self.steps.push(Step::Sync);
        self.plan = None;
        self
    }

    /// Adds a group of systems: a tuple of systems, possibly chained
    /// (`(a, b, c).chain()`), or one system. See [`SystemSet`](crate::SystemSet).
    pub fn add_systems<M>(
        &mut self,
        group: impl IntoSystemGroup<M>,
    ) -> Result<&mut Self, ScheduleError> {
        for desc in group.into_group().systems {
            self.add_system(desc)?;
        }
        Ok(self)
    }

    /// Configures a system set: orders all its systems
    /// (`Physics.before(Render)`) and guards each with run conditions
    /// (`Physics.run_if(playing)`), whether they were added before or
    /// after this call. A set may be configured several times; the
    /// configurations add up.
    pub fn configure_set(
        &mut self,
        config: impl IntoSetConfig,
    ) -> Result<&mut Self, ScheduleError> {
        let config = config.into_set_config();
        // Made first, so a refused condition changes nothing.
        let mut made = Vec::new();
        for (k, slot) in self.slots.iter_mut().enumerate() {
            if lock_mut(slot).sets.contains(&config.set) {
                for make in &config.conditions {
                    made.push((k, make.make()?));
                }
            }
        }
        for (k, condition) in made {
            let slot = lock_mut(&mut self.slots[k]);
            add_condition(&mut slot.access, &mut slot.conditions, condition);
        }
        self.set_configs.push(config);
        self.plan = None;
        Ok(self)
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
                labels: &s.labels,
                sets: &s.sets,
                type_id: s.type_id,
            })
            .collect();
        let plan = Plan::build(&facts, &self.steps, &self.set_configs)?;
        self.segment_times = vec![SegmentTimes::default(); plan.segments.len()];
        self.plan = Some(plan);
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
                (slot.name.to_string(), slot.last_time.unwrap_or_default())
            })
            .collect()
    }

    /// Runs every system once on `world`, applying command buffers at sync
    /// points and at the end.
    ///
    /// # Errors
    /// Before any system runs: a system that writes
    /// a component the world registered immutable
    /// ([`ScheduleError::WritesImmutable`]), or that needs a missing
    /// resource or manager. While running: a system that panicked.
    pub fn run(&mut self, world: &mut World) -> Result<RunReport, ScheduleError> {
        self.build()?;
        let threads = self.threads;
        let pool = self
            .pool
            .get_or_insert_with(|| WorkerPool::start(threads))
            .pool();
        // A system that writes an immutable component, or whose query
        // reaches a sparse one through a column term, is refused before
        // anything happens to the world.
        for slot in &mut self.slots {
            let slot = lock_mut(slot);
            check_world_allows(&slot.name, &slot.access, world)?;
        }
        for slot in &mut self.slots {
            let slot = lock_mut(slot);
            slot.enter(&world.core);
            if !slot.here().set_up {
                world.core.track_types(&slot.access.tracked);
                for setup in &slot.access.setup {
                    setup(&mut world.core);
                }
                slot.here().set_up = true;
            }
        }
        for slot in &mut self.slots {
            check_required(lock_mut(slot), world)?;
        }
        // Row-stamp requests filed through shared access since the last
        // write are carried out before any system stamps anything.
        let start = world.core.write_tick();
        world.core.age_removals(start);
        let mut run = PlanRun {
            plan: self.plan.as_ref().expect("built"),
            segment_times: &mut self.segment_times,
            slots: &self.slots,
            records_commands: &self.records_commands,
            pool,
            threads,
        };
        // Systems that run on this thread (exclusive ones, inline segments) send
        // their parallel loops to the schedule's pool.
        // With one thread, parallel query loops run in place.
        parallel::with_sequential(threads == 1, || {
            parallel::with_pool(pool, || run.run(world))
        })
    }
}

/// Attaches `condition` to a system: its reads join the system's access
/// (without making an exclusive system less so).
fn add_condition(
    access: &mut SystemAccess,
    conditions: &mut Vec<Box<dyn Condition>>,
    condition: Box<dyn Condition>,
) {
    let exclusive = access.exclusive;
    access.extend(condition.access());
    access.exclusive = exclusive;
    conditions.push(condition);
}

/// Whether every run condition of `slot` holds, evaluated in a context
/// with the slot's access over `world` (an exclusive system's conditions
/// read through the world it is about to get).
fn conditions_hold(slot: &mut Slot, world: &WorldCore, window: ChangeWindow) -> bool {
    if slot.conditions.is_empty() {
        return true;
    }
    let here = slot.worlds.current();
    let mut commands = CommandBuffer::new();
    let mut context = SystemContext::new(
        world,
        &slot.access,
        &slot.name,
        &mut commands,
        SpawnSource::Pool(&mut here.spawn_ids),
        &mut here.caches,
        window,
    );
    slot.conditions.iter_mut().all(|c| c.evaluate(&mut context))
}

/// One run of a built plan.
struct PlanRun<'a> {
    plan: &'a Plan,
    /// One per segment of `plan`.
    segment_times: &'a mut [SegmentTimes],
    slots: &'a [Mutex<Slot>],
    records_commands: &'a [bool],
    pool: &'a rayon::ThreadPool,
    threads: usize,
}

impl PlanRun<'_> {
    /// Runs every segment in order; see [`Schedule::run`].
    fn run(&mut self, world: &mut World) -> Result<RunReport, ScheduleError> {
        let (plan, slots) = (self.plan, self.slots);
        let mut report = RunReport::default();
        for (at, segment) in plan.segments.iter().enumerate() {
            match segment {
                Segment::Exclusive(i) => {
                    let mut slot = lock(&slots[*i]);
                    // The system's step gets the clock's current tick; its
                    // direct writes stamp with it.
                    let tick = world.change_tick();
                    let window = ChangeWindow {
                        last_run: slot.here().last_run,
                        this_run: tick,
                    };
                    let start = Instant::now();
                    let slot_ref = &mut *slot;
                    let outcome = catch_unwind(AssertUnwindSafe(|| {
                        let runs = conditions_hold(slot_ref, &world.core, window);
                        if runs {
                            slot_ref.system.run_exclusive(world, window);
                        }
                        runs
                    }));
                    slot.last_time = Some(start.elapsed());
                    // A skipped system keeps its change window (see
                    // `system::condition`).
                    if matches!(outcome, Ok(true) | Err(_)) {
                        slot.here().last_run = tick;
                    }
                    let after = world.change_tick().max(tick.next());
                    world.set_change_tick(after);
                    if let Err(payload) = outcome {
                        let message = panic_message(payload.as_ref());
                        drop(slot);
                        discard_commands(slots, world);
                        return Err(ScheduleError::SystemPanicked {
                            system: plan.name(*i).to_owned(),
                            message,
                            also_panicked: Vec::new(),
                            skipped: Vec::new(),
                        });
                    }
                }
                Segment::Parallel(graph) => {
                    self.with_pools(graph, |pools| {
                        ids::reserve_pools(&mut world.core.entities, pools)
                    });
                    // Inline or pooled, by how long each took lately.
                    let work: Option<Duration> = graph
                        .systems
                        .iter()
                        .map(|&i| lock(&slots[i]).last_time)
                        .sum();
                    let mode = self.segment_times[at].choose(work, self.threads);
                    // Each system's step gets its own tick, in plan order, so
                    // the stamps do not depend on which thread ran what.
                    let base = world.change_tick();
                    for (k, &node) in graph.order.iter().enumerate() {
                        let mut slot = lock(&slots[graph.systems[node as usize]]);
                        slot.window = ChangeWindow {
                            last_run: slot.here().last_run,
                            this_run: base.after(k as u64),
                        };
                    }
                    world.set_change_tick(base.after(graph.order.len() as u64));
                    let started = Instant::now();
                    let panics = run_graph(graph, slots, &world.core, self.pool, mode);
                    self.segment_times[at].record(mode, started.elapsed());
                    for &i in &graph.systems {
                        let mut slot = lock(&slots[i]);
                        if slot.ran {
                            slot.here().last_run = slot.window.this_run;
                        }
                    }
                    self.with_pools(graph, |pools| {
                        ids::materialize_lanes(&mut world.core.entities, pools)
                    });
                    let failed = if panics.is_empty() {
                        // A hook run by a command may panic: report it as
                        // the panic of the system whose commands were being
                        // applied, drop the rest, and settle the id pools.
                        // The world is checked once, when the pools are
                        // settled (`sanitize`).
                        let mut applying = None;
                        let outcome = catch_unwind(AssertUnwindSafe(|| {
                            world.with_checks_held(|world| {
                                for &i in &graph.systems {
                                    let mut slot = lock(&slots[i]);
                                    if !slot.commands.is_empty() {
                                        applying = Some(i);
                                        report.commands.absorb(world.apply(&mut slot.commands));
                                    }
                                }
                            })
                        }));
                        match outcome {
                            Ok(()) => None,
                            Err(payload) => {
                                discard_commands(slots, world);
                                Some(ScheduleError::SystemPanicked {
                                    system: plan
                                        .name(applying.expect("only applying can panic here"))
                                        .to_owned(),
                                    message: panic_message(payload.as_ref()),
                                    also_panicked: Vec::new(),
                                    skipped: Vec::new(),
                                })
                            }
                        }
                    } else {
                        let error = panic_error(plan, graph, slots, panics);
                        discard_commands(slots, world);
                        Some(error)
                    };
                    self.with_pools(graph, |pools| {
                        ids::settle_pools(&mut world.core.entities, pools)
                    });
                    world.sanitize();
                    // The commands were stamped with the segment's closing
                    // tick; what follows gets a later one.
                    let after = world.change_tick().next();
                    world.set_change_tick(after);
                    if let Some(error) = failed {
                        return Err(error);
                    }
                }
            }
        }
        report.systems = slots
            .iter()
            .map(|slot| {
                let slot = lock(slot);
                SystemTime {
                    name: slot.name.clone(),
                    time: if slot.ran {
                        slot.last_time.unwrap_or_default()
                    } else {
                        Duration::ZERO
                    },
                }
            })
            .collect();
        // Event buffers are not turned over here: that happens once per
        // frame (`update_events`), whatever schedules the frame runs.
        Ok(report)
    }

    /// Calls `f` with the current world's spawn-id pools of the segment's
    /// systems that record commands, in system order (not at all if none do).
    fn with_pools(&self, graph: &Graph, f: impl FnOnce(&mut [&mut SpawnIds])) {
        if !graph.systems.iter().any(|&i| self.records_commands[i]) {
            return;
        }
        let mut guards: Vec<_> = graph
            .systems
            .iter()
            .filter(|&&i| self.records_commands[i])
            .map(|&i| lock(&self.slots[i]))
            .collect();
        let mut pools: Vec<&mut SpawnIds> =
            guards.iter_mut().map(|g| &mut g.here().spawn_ids).collect();
        f(&mut pools);
    }
}

/// Refuses a run whose world lacks a resource or manager the system needs.
fn check_required(slot: &Slot, world: &World) -> Result<(), ScheduleError> {
    check_required_access(&slot.name, &slot.access, world)
}

/// Whether the resources and managers `access` requires exist in `world`.
pub(crate) fn check_required_access(
    name: &str,
    access: &SystemAccess,
    world: &World,
) -> Result<(), ScheduleError> {
    if let Some(key) = access
        .required_resources
        .iter()
        .find(|k| !world.resources().contains_type(k.type_id))
    {
        return Err(ScheduleError::MissingResource {
            system: name.to_string(),
            resource: key.name,
        });
    }
    if let Some(key) = access
        .required_managers
        .iter()
        .find(|k| !world.managers.contains_type(k.type_id))
    {
        return Err(ScheduleError::MissingManager {
            system: name.to_string(),
            manager: key.name,
        });
    }
    Ok(())
}

/// Refuses a system whose access writes a component `world` registered
/// immutable, or one of whose queries `world` refuses (`access.checks`).
pub(crate) fn check_world_allows(
    name: &str,
    access: &SystemAccess,
    world: &World,
) -> Result<(), ScheduleError> {
    if let Some(key) = access.components.immutable_write(world.components()) {
        return Err(ScheduleError::WritesImmutable {
            system: name.to_string(),
            component: key.name,
        });
    }
    for check in &access.checks {
        check(&world.core).map_err(|error| ScheduleError::RefusedQuery {
            system: name.to_string(),
            error,
        })?;
    }
    Ok(())
}

/// A slot through `&mut`, without locking.
fn lock_mut(slot: &mut Mutex<Slot>) -> &mut Slot {
    slot.get_mut().unwrap_or_else(PoisonError::into_inner)
}

/// Drops every system's recorded commands unapplied, freeing the ids their
/// spawns reserved.
fn discard_commands(slots: &[Mutex<Slot>], world: &mut World) {
    for slot in slots {
        lock(slot).commands.discard(world);
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
pub(crate) type Panicked = (usize, String);

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

#[cfg(test)]
mod tests {
    use super::*;

    // A schedule starts a rayon pool, whose crossbeam-epoch fails Stacked
    // Borrows with strict provenance; tests/schedule.rs covers the same
    // under Tree Borrows.
    #[test]
    #[cfg_attr(miri, ignore = "starts a thread pool")]
    fn slots_keep_state_for_live_worlds_only() {
        let mut schedule = Schedule::with_threads(1);
        schedule
            .add_system(crate::system("count").reads::<u32>().run(|ctx| {
                let _ = ctx.query::<&u32>().iter().count();
            }))
            .unwrap();
        let mut kept = World::new();
        schedule.run(&mut kept).unwrap();
        for _ in 0..50 {
            let mut world = World::new();
            world.spawn((1u32,));
            schedule.run(&mut world).unwrap();
        }
        let slot = lock_mut(&mut schedule.slots[0]);
        assert!(slot.worlds.len() <= 2, "kept {}", slot.worlds.len());
    }
}
