//! The app: a world, the schedules that run on it as phases, plugins, time
//! and the loop.
//!
//! Design. An [`App`] owns one [`World`] and one [`Schedule`] per phase.
//! [`App::update`] is one frame: it turns the event buffers over (once per
//! frame, so an event sent in any phase is read by every reader within the
//! next frame), runs [`Startup`] the first time, advances `Time` by the
//! frame's length, then runs the main phases in order: [`First`],
//! [`PreUpdate`], [`FixedUpdate`] (0..n times, one per fixed step),
//! [`Update`], [`PostUpdate`], [`Last`]. Users insert phases of their own
//! between these ([`App::insert_phase_after`]). [`App::run`] loops updates
//! with a [`Runner`] until a system sends [`AppExit`], then runs
//! [`Shutdown`] once.
//!
//! The app lives in the core crate, on top of the schedule, rather than in
//! a crate of its own: one dependency and one prelude for a game, and the
//! workspace's other crates (transforms, DataComponents, levels, the
//! registry, the inspector) can each offer a [`Plugin`] without a new
//! dependency edge. Nothing below the app imports it.
//!
//! Plugins. A plugin adds systems, resources, events and other plugins. A
//! plugin type added twice is refused with [`AppError::DuplicatePlugin`],
//! changing nothing: two instances with different settings cannot both
//! apply, and silently keeping one would hide that. A plugin that needs
//! another adds it only if [`App::has_plugin`] says it is missing.
//!
//! States ([`App::insert_state`]) change at one point per update, after
//! [`PreUpdate`]: the [`State`] docs say what runs then.
//!
//! Determinism. Phases run one after another, each a schedule with the
//! guarantees of [`Schedule::run`]; the fixed step count is integer
//! arithmetic on frame lengths. With a [`TimeSource::Manual`] clock, the
//! world after N updates is the same at any thread count.

mod label;
mod state;
mod time;

pub use label::{
    AnyLabel, First, FixedUpdate, Last, PostUpdate, PreUpdate, ScheduleLabel, Shutdown, Startup,
    Update,
};
pub use state::{in_state, NextState, OnEnter, OnExit, State, StateScoped, States};
pub use time::{Fixed, Real, Time, TimeSource, DEFAULT_MAX_STEPS, DEFAULT_TIMESTEP};

use crate::dyn_value::KeyValue;
use crate::event::EventCursor;
use crate::schedule::{Schedule, SystemTime};
use crate::system::error::ScheduleError;
use crate::system::set::{IntoSetConfig, IntoSystemGroup};
use crate::world::World;
use std::any::TypeId;
use std::time::Duration;
use time::FrameClock;

/// An event that ends [`App::run`] after the update in which it was sent.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum AppExit {
    /// The app finished normally.
    Success,
    /// The app failed with this process exit code (never 0).
    Error(std::num::NonZeroU8),
}

/// What building or running an app can fail with.
#[derive(Debug, thiserror::Error)]
pub enum AppError {
    /// A plugin of this type was added already.
    #[error(
        "plugin `{name}` was added already (a plugin type is added once; check `App::has_plugin`)"
    )]
    DuplicatePlugin {
        /// The plugin's name.
        name: String,
    },
    /// No phase has this label.
    #[error("no phase `{label}` in this app")]
    UnknownPhase {
        /// The label, as `Debug` prints it.
        label: String,
    },
    /// A phase with this label exists already.
    #[error("the app has a phase `{label}` already")]
    DuplicatePhase {
        /// The label, as `Debug` prints it.
        label: String,
    },
    /// A state type was inserted already.
    #[error("state type `{name}` was inserted already")]
    DuplicateState {
        /// The state type's name.
        name: String,
    },
    /// A plugin could not build (its own error inside).
    #[error("plugin `{plugin}`: {source}")]
    Plugin {
        /// The plugin's name.
        plugin: String,
        /// What went wrong.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// A system could not be added, or a phase's schedule failed to run.
    #[error("phase `{phase}`: {source}")]
    Schedule {
        /// The phase's label, as `Debug` prints it.
        phase: String,
        /// What the schedule reported (boxed: a schedule error is large).
        #[source]
        source: Box<ScheduleError>,
    },
}

/// A piece of an app: systems, resources, events and other plugins, added
/// in one call. See the module docs for what adding one twice does.
///
/// ```
/// use doecs::prelude::*;
/// struct Score(u32);
/// struct ScorePlugin;
/// impl Plugin for ScorePlugin {
///     fn build(&self, app: &mut App) -> Result<(), AppError> {
///         app.world_mut().insert_resource(Score(0));
///         app.add_systems(Update, |mut score: ResMut<Score>| score.0 += 1)?;
///         Ok(())
///     }
/// }
/// let mut app = App::new();
/// app.add_plugins(ScorePlugin)?;
/// app.update()?;
/// assert_eq!(app.world().resource::<Score>().unwrap().0, 1);
/// assert!(app.add_plugins(ScorePlugin).is_err(), "added once");
/// # Ok::<(), AppError>(())
/// ```
pub trait Plugin: Send + Sync + 'static {
    /// Adds the plugin's systems, resources, events and sub-plugins.
    fn build(&self, app: &mut App) -> Result<(), AppError>;

    /// The plugin's name, for errors (its type name by default).
    fn name(&self) -> &str {
        std::any::type_name::<Self>()
    }
}

/// A state type: what its transition point runs, and the types of its
/// `OnEnter` and `OnExit` labels.
struct StateType {
    state: TypeId,
    labels: [TypeId; 2],
    transition: fn(&mut App) -> Result<(), AppError>,
}

/// State type `S`'s transition point (see the `state` module docs).
fn transition<S: States>(app: &mut App) -> Result<(), AppError> {
    match state::take_transition::<S>(&mut app.world) {
        state::Transition::None => Ok(()),
        state::Transition::Enter(first) => app.run_on_demand(&OnEnter(first)),
        state::Transition::Change { from, to } => {
            app.run_on_demand(&OnExit(from.clone()))?;
            state::despawn_scoped(&mut app.world, &from);
            state::set_state(&mut app.world, to.clone());
            app.run_on_demand(&OnEnter(to))
        }
    }
}

/// One phase: its label and its schedule.
struct Phase {
    label: AnyLabel,
    schedule: Schedule,
}

/// A world, its phases and plugins. See the module docs.
///
/// ```
/// use doecs::prelude::*;
/// struct Ticks(u32);
/// fn count(mut ticks: ResMut<Ticks>, mut exit: EventWriter<AppExit>) {
///     ticks.0 += 1;
///     if ticks.0 == 3 {
///         exit.send(AppExit::Success);
///     }
/// }
/// let mut app = App::new();
/// app.world_mut().insert_resource(Ticks(0));
/// app.add_systems(Update, count)?;
/// assert_eq!(app.run()?, AppExit::Success);
/// assert_eq!(app.world().resource::<Ticks>().unwrap().0, 3);
/// # Ok::<(), AppError>(())
/// ```
pub struct App {
    world: World,
    startup: Option<Schedule>,
    /// The main phases, in run order (`FixedUpdate` among them).
    phases: Vec<Phase>,
    /// Schedules run on demand: a state's `OnEnter` and `OnExit`.
    on_demand: Vec<Phase>,
    /// The state types, in the order inserted.
    states: Vec<StateType>,
    plugins: Vec<TypeId>,
    clock: FrameClock,
    exit_cursor: EventCursor<AppExit>,
    runner: Runner,
    threads: usize,
    /// Each system's time in the last update, in run order.
    last_systems: Vec<SystemTime>,
    /// Whether the `Shutdown` phase ran.
    shut_down: bool,
}

impl Default for App {
    fn default() -> Self {
        Self::new()
    }
}

impl std::fmt::Debug for App {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("App")
            .field(
                "phases",
                &self.phases.iter().map(|p| &p.label).collect::<Vec<_>>(),
            )
            .field("plugins", &self.plugins.len())
            .finish_non_exhaustive()
    }
}

impl App {
    /// An app with an empty world, the standard phases, the wall clock,
    /// and schedules using every core.
    pub fn new() -> Self {
        Self::with_threads(0)
    }

    /// As [`App::new`], with `threads` workers per schedule (0: one per core).
    pub fn with_threads(threads: usize) -> Self {
        Self::with_world(World::new(), threads)
    }

    /// An app around `world` (a loaded level, say), with `threads` workers
    /// per schedule (0: one per core). [`App::into_world`] gives it back.
    pub fn with_world(mut world: World, threads: usize) -> Self {
        world.add_event::<AppExit>();
        world.insert_resource(Time::<Real>::default());
        world.insert_resource(Time::<Fixed>::default());
        let exit_cursor = world.event_cursor::<AppExit>();
        let mut app = App {
            world,
            startup: Some(Schedule::with_threads(threads)),
            phases: Vec::new(),
            on_demand: Vec::new(),
            states: Vec::new(),
            plugins: Vec::new(),
            clock: FrameClock::new(TimeSource::Real),
            exit_cursor,
            runner: Runner::Loop,
            threads,
            last_systems: Vec::new(),
            shut_down: false,
        };
        for label in [
            First.boxed_key(),
            PreUpdate.boxed_key(),
            FixedUpdate.boxed_key(),
            Update.boxed_key(),
            PostUpdate.boxed_key(),
            Last.boxed_key(),
        ] {
            app.phases.push(Phase {
                label,
                schedule: Schedule::with_threads(threads),
            });
        }
        app
    }

    /// The world.
    pub fn world(&self) -> &World {
        &self.world
    }

    /// The world, mutably.
    pub fn world_mut(&mut self) -> &mut World {
        &mut self.world
    }

    /// The world, giving up the app.
    pub fn into_world(self) -> World {
        self.world
    }

    /// How long each system took in the last update, in the order they
    /// ran (phase by phase; a fixed-step system once per step): the
    /// [`LastUpdate`] resource's.
    pub fn last_update_times(&self) -> &[SystemTime] {
        self.world
            .resource::<LastUpdate>()
            .map_or(&[], |last| &last.systems)
    }

    /// Sets where frame lengths come from (the wall clock by default).
    pub fn set_time_source(&mut self, source: TimeSource) -> &mut Self {
        self.clock = FrameClock::new(source);
        self
    }

    /// Sets how [`App::run`] loops.
    pub fn set_runner(&mut self, runner: Runner) -> &mut Self {
        self.runner = runner;
        self
    }

    /// Adds a plugin: runs its [`Plugin::build`]. A plugin type added
    /// before is refused with [`AppError::DuplicatePlugin`], changing
    /// nothing.
    ///
    /// A build that fails returns its error and the plugin does not count
    /// as added. What it changed before failing stays, so a plugin checks
    /// what can fail (binding a port, reading a file) before it changes
    /// the app, as the workspace's plugins do.
    pub fn add_plugins(&mut self, plugin: impl Plugin) -> Result<&mut Self, AppError> {
        let id = plugin_type_id(&plugin);
        if self.plugins.contains(&id) {
            return Err(AppError::DuplicatePlugin {
                name: plugin.name().to_owned(),
            });
        }
        self.plugins.push(id);
        if let Err(e) = plugin.build(self) {
            self.plugins.retain(|p| *p != id);
            return Err(e);
        }
        Ok(self)
    }

    /// Whether a plugin of type `P` was added.
    pub fn has_plugin<P: Plugin>(&self) -> bool {
        self.plugins.contains(&TypeId::of::<P>())
    }

    /// Adds systems to phase `phase`: one system, or a tuple of them,
    /// possibly chained (see [`Schedule::add_systems`]).
    pub fn add_systems<M>(
        &mut self,
        phase: impl ScheduleLabel,
        systems: impl IntoSystemGroup<M>,
    ) -> Result<&mut Self, AppError> {
        let label = format!("{phase:?}");
        let schedule = self.schedule_mut(phase)?;
        schedule
            .add_systems(systems)
            .map_err(|source| AppError::Schedule {
                phase: label,
                source: Box::new(source),
            })?;
        Ok(self)
    }

    /// Configures system set `set` in phase `phase` (see
    /// [`Schedule::configure_set`]).
    pub fn configure_set(
        &mut self,
        phase: impl ScheduleLabel,
        set: impl IntoSetConfig,
    ) -> Result<&mut Self, AppError> {
        let label = format!("{phase:?}");
        self.schedule_mut(phase)?
            .configure_set(set)
            .map_err(|source| AppError::Schedule {
                phase: label,
                source: Box::new(source),
            })?;
        Ok(self)
    }

    /// The schedule of phase `phase`, to add systems or sync points to, or
    /// to print its plan.
    pub fn schedule_mut(&mut self, phase: impl ScheduleLabel) -> Result<&mut Schedule, AppError> {
        if Startup.same_as(&phase) {
            return self.startup.as_mut().ok_or_else(|| AppError::UnknownPhase {
                label: "Startup (already run)".to_owned(),
            });
        }
        if let Some(at) = self.phases.iter().position(|p| p.label.is(&phase)) {
            return Ok(&mut self.phases[at].schedule);
        }
        let on_demand = self.on_demand.iter().position(|p| p.label.is(&phase));
        let at = match on_demand {
            Some(at) => at,
            None => {
                let kind = phase.as_any().type_id();
                let known = Shutdown.same_as(&phase)
                    || self.states.iter().any(|s| s.labels.contains(&kind));
                if !known {
                    return Err(AppError::UnknownPhase {
                        label: format!("{phase:?}"),
                    });
                }
                self.on_demand.push(Phase {
                    label: phase.boxed_key(),
                    schedule: Schedule::with_threads(self.threads),
                });
                self.on_demand.len() - 1
            }
        };
        Ok(&mut self.on_demand[at].schedule)
    }

    /// Registers state type `S` with its first value, entered at the first
    /// update's transition point (see [`State`]). Systems can then be added
    /// to its [`OnEnter`] and [`OnExit`] schedules. A state type inserted
    /// twice is refused with [`AppError::DuplicateState`].
    ///
    /// ```
    /// use doecs::prelude::*;
    /// #[derive(Clone, Debug, PartialEq, Eq, Hash)]
    /// enum Screen { Menu, Playing }
    /// struct Started(bool);
    /// fn start(mut next: ResMut<NextState<Screen>>) { next.set(Screen::Playing); }
    /// fn on_play(mut started: ResMut<Started>) { started.0 = true; }
    ///
    /// let mut app = App::with_threads(1);
    /// app.world_mut().insert_resource(Started(false));
    /// app.insert_state(Screen::Menu)?;
    /// app.add_systems(Update, start.run_if(in_state(Screen::Menu)))?;
    /// app.add_systems(OnEnter(Screen::Playing), on_play)?;
    /// app.update()?; // enters Menu; `start` asks for Playing
    /// app.update()?; // leaves Menu, enters Playing
    /// assert_eq!(app.world().resource::<State<Screen>>().unwrap().get(), &Screen::Playing);
    /// assert!(app.world().resource::<Started>().unwrap().0);
    /// # Ok::<(), AppError>(())
    /// ```
    pub fn insert_state<S: States>(&mut self, first: S) -> Result<&mut Self, AppError> {
        let state = TypeId::of::<S>();
        if self.states.iter().any(|s| s.state == state) {
            return Err(AppError::DuplicateState {
                name: std::any::type_name::<S>().to_owned(),
            });
        }
        self.states.push(StateType {
            state,
            labels: [TypeId::of::<OnEnter<S>>(), TypeId::of::<OnExit<S>>()],
            transition: transition::<S>,
        });
        self.world.insert_resource(State(first.clone()));
        self.world.insert_resource(state::Unentered(first));
        self.world.insert_resource(NextState::<S>::default());
        Ok(self)
    }

    /// Runs the on-demand schedule `label`, if it has one.
    fn run_on_demand(&mut self, label: &dyn ScheduleLabel) -> Result<(), AppError> {
        match self.on_demand.iter_mut().find(|p| p.label.is(label)) {
            Some(phase) => run_phase(
                &mut phase.schedule,
                &mut self.world,
                &phase.label,
                &mut self.last_systems,
            ),
            None => Ok(()),
        }
    }

    /// Applies every state type's requested change, in insertion order.
    fn apply_state_transitions(&mut self) -> Result<(), AppError> {
        for k in 0..self.states.len() {
            (self.states[k].transition)(self)?;
        }
        Ok(())
    }

    /// Inserts phase `phase` to run right after phase `after` in every
    /// update.
    pub fn insert_phase_after(
        &mut self,
        after: impl ScheduleLabel,
        phase: impl ScheduleLabel,
    ) -> Result<&mut Self, AppError> {
        let at = self.phase_index(&after)? + 1;
        self.insert_phase(at, phase)
    }

    /// Inserts phase `phase` to run right before phase `before` in every
    /// update.
    pub fn insert_phase_before(
        &mut self,
        before: impl ScheduleLabel,
        phase: impl ScheduleLabel,
    ) -> Result<&mut Self, AppError> {
        let at = self.phase_index(&before)?;
        self.insert_phase(at, phase)
    }

    fn phase_index(&self, label: &dyn ScheduleLabel) -> Result<usize, AppError> {
        self.phases
            .iter()
            .position(|p| p.label.is(label))
            .ok_or_else(|| AppError::UnknownPhase {
                label: format!("{label:?}"),
            })
    }

    fn insert_phase(
        &mut self,
        at: usize,
        phase: impl ScheduleLabel,
    ) -> Result<&mut Self, AppError> {
        if Startup.same_as(&phase) || Shutdown.same_as(&phase) || self.phase_index(&phase).is_ok() {
            return Err(AppError::DuplicatePhase {
                label: format!("{phase:?}"),
            });
        }
        self.phases.insert(
            at,
            Phase {
                label: phase.boxed_key(),
                schedule: Schedule::with_threads(self.threads),
            },
        );
        Ok(self)
    }

    /// The plan of every main phase that has systems, in run order, each
    /// under its label: what runs at the same time, and where commands
    /// are applied (see [`Plan`](crate::Plan)).
    pub fn plan(&mut self) -> Result<String, AppError> {
        use std::fmt::Write;
        let mut out = String::new();
        for phase in &mut self.phases {
            if phase.schedule.is_empty() {
                continue;
            }
            let plan = phase.schedule.plan().map_err(|source| AppError::Schedule {
                phase: format!("{:?}", phase.label),
                source: Box::new(source),
            })?;
            let _ = write!(out, "{:?}:\n{plan}", phase.label);
        }
        Ok(out)
    }

    /// The main phases' labels, in run order.
    pub fn phases(&self) -> impl Iterator<Item = &AnyLabel> {
        self.phases.iter().map(|p| &p.label)
    }

    /// Runs one frame (see the module docs) and returns the [`AppExit`]
    /// a system sent in it, if any.
    pub fn update(&mut self) -> Result<Option<AppExit>, AppError> {
        let start = std::time::Instant::now();
        self.world.update_events();
        self.last_systems.clear();
        if let Some(mut startup) = self.startup.take() {
            run_phase(
                &mut startup,
                &mut self.world,
                &Startup,
                &mut self.last_systems,
            )?;
        }
        let frame = self.clock.tick();
        self.world
            .resource_mut::<Time<Real>>()
            .expect("an app's world keeps its Time")
            .advance(frame);
        let steps = self
            .world
            .resource_mut::<Time<Fixed>>()
            .expect("an app's world keeps its Time<Fixed>")
            .accumulate(frame);
        for k in 0..self.phases.len() {
            let phase = &mut self.phases[k];
            if phase.label.is(&FixedUpdate) {
                for _ in 0..steps {
                    self.world
                        .resource_mut::<Time<Fixed>>()
                        .expect("an app's world keeps its Time<Fixed>")
                        .step();
                    run_phase(
                        &mut phase.schedule,
                        &mut self.world,
                        &FixedUpdate,
                        &mut self.last_systems,
                    )?;
                }
            } else {
                run_phase(
                    &mut phase.schedule,
                    &mut self.world,
                    &phase.label,
                    &mut self.last_systems,
                )?;
                if phase.label.is(&PreUpdate) {
                    self.apply_state_transitions()?;
                }
            }
        }
        self.publish_last_update(start.elapsed());
        let events = self
            .world
            .resource::<crate::event::Events<AppExit>>()
            .expect("an app's world keeps its AppExit events");
        Ok(self.exit_cursor.read(events).last().copied())
    }

    /// Moves this update's figures into the [`LastUpdate`] resource (its
    /// memory is swapped, not copied, so nothing is allocated per frame).
    fn publish_last_update(&mut self, wall: Duration) {
        match self.world.resource_mut::<LastUpdate>() {
            Some(last) => {
                std::mem::swap(&mut last.systems, &mut self.last_systems);
                last.number += 1;
                last.wall = wall;
            }
            None => {
                let systems = std::mem::take(&mut self.last_systems);
                self.world.insert_resource(LastUpdate {
                    number: 1,
                    wall,
                    systems,
                });
            }
        }
    }

    /// Runs the [`Shutdown`] phase, once: later calls run nothing.
    /// [`App::run`] calls it when its loop ends; an app driven by
    /// [`App::update`] calls it itself.
    pub fn shutdown(&mut self) -> Result<(), AppError> {
        if std::mem::replace(&mut self.shut_down, true) {
            return Ok(());
        }
        self.last_systems.clear();
        self.run_on_demand(&Shutdown)
    }

    /// Runs updates with the app's [`Runner`] until a system sends
    /// [`AppExit`] (or the runner's frame limit is reached, which counts
    /// as [`AppExit::Success`]), then the [`Shutdown`] phase, and returns
    /// the exit.
    pub fn run(&mut self) -> Result<AppExit, AppError> {
        let exit = self.run_loop()?;
        self.shutdown()?;
        Ok(exit)
    }

    fn run_loop(&mut self) -> Result<AppExit, AppError> {
        match std::mem::replace(&mut self.runner, Runner::Loop) {
            Runner::Loop => self.run_frames(u64::MAX),
            Runner::Frames(limit) => self.run_frames(limit),
            Runner::FixedRate { frame, limit } => {
                self.set_time_source(TimeSource::Manual(frame));
                let mut next = std::time::Instant::now();
                for _ in 0..limit {
                    if let Some(exit) = self.update()? {
                        return Ok(exit);
                    }
                    next += frame;
                    if let Some(wait) = next.checked_duration_since(std::time::Instant::now()) {
                        std::thread::sleep(wait);
                    }
                }
                Ok(AppExit::Success)
            }
            Runner::Custom(runner) => runner(self),
        }
    }

    fn run_frames(&mut self, limit: u64) -> Result<AppExit, AppError> {
        for _ in 0..limit {
            if let Some(exit) = self.update()? {
                return Ok(exit);
            }
        }
        Ok(AppExit::Success)
    }
}

/// The previous update as the app measured it (a resource, replaced at the
/// end of every update): systems read the update before their own, so a
/// system in [`First`] can hand the last frame to a profiler or an
/// inspector.
#[derive(Clone, Debug, Default)]
pub struct LastUpdate {
    /// Updates finished so far (this one is the `number`th).
    pub number: u64,
    /// Its wall-clock time, from the start of [`App::update`] to the end
    /// of [`Last`].
    pub wall: Duration,
    /// Each system's time, in the order they ran (phase by phase; a
    /// fixed-step system once per step).
    pub systems: Vec<SystemTime>,
}

/// A function that drives an app: see [`Runner::Custom`].
pub type CustomRunner = Box<dyn FnOnce(&mut App) -> Result<AppExit, AppError>>;

/// How [`App::run`] loops.
pub enum Runner {
    /// Updates as fast as possible, on the app's clock, until an exit.
    Loop,
    /// As `Loop`, stopping after this many updates at most.
    Frames(u64),
    /// Headless at a fixed rate: every update is `frame` long
    /// ([`TimeSource::Manual`]) and starts `frame` after the previous one
    /// (sleeping between); at most `limit` updates.
    FixedRate {
        /// The length of every frame.
        frame: Duration,
        /// Most updates to run.
        limit: u64,
    },
    /// A function that drives the app itself (calling [`App::update`]).
    Custom(CustomRunner),
}

impl std::fmt::Debug for Runner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Runner::Loop => f.write_str("Loop"),
            Runner::Frames(n) => write!(f, "Frames({n})"),
            Runner::FixedRate { frame, limit } => write!(f, "FixedRate({frame:?}, {limit})"),
            Runner::Custom(_) => f.write_str("Custom"),
        }
    }
}

fn plugin_type_id<P: Plugin>(_: &P) -> TypeId {
    TypeId::of::<P>()
}

/// Runs one phase's schedule, skipping an empty one, and appends its
/// systems' times to `times`.
fn run_phase(
    schedule: &mut Schedule,
    world: &mut World,
    label: &dyn std::fmt::Debug,
    times: &mut Vec<SystemTime>,
) -> Result<(), AppError> {
    if schedule.is_empty() {
        return Ok(());
    }
    let report = schedule.run(world).map_err(|source| AppError::Schedule {
        phase: format!("{label:?}"),
        source: Box::new(source),
    })?;
    times.extend(report.systems);
    Ok(())
}
