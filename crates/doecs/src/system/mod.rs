//! Systems: named units of work that declare what they touch.
//!
//! A system is the "system" of Jungwan Byun's "Data-oriented Entity Component System": a function over the components it names,
//! run once per schedule pass. Before it runs it states its
//! [`SystemAccess`] — component types read and written, resource types and
//! managers read and written, whether it records structural changes, or
//! whether it needs the whole world exclusively. The
//! [`Schedule`](crate::Schedule) orders any two systems whose accesses
//! conflict and runs the others at the same time.
//!
//! - [`function`] and [`param`]: function systems, the usual way to write a
//!   system: `fn integrate(q: Query<(&mut Pos, &Vel)>, dt: Res<Dt>)`, whose
//!   access comes from its parameter types.
//! - [`param_set`]: [`ParamSet`], parameters that conflict with each other,
//!   used one at a time; and how parameters' accesses merge into one (a
//!   set's, or a `#[derive(SystemParam)]` struct's).
//! - [`desc`]: ordering (`before`, `after`, labels) and naming.
//! - [`builder`]: [`system`] and [`SystemBuilder`], for systems whose access
//!   is only known at run time: `system("move").for_each::<(&mut Pos, &Vel)>(..)`.
//! - [`context`]: [`SystemContext`], the checked view of the world a builder
//!   system runs with (queries, resources, its command buffer).
//! - [`error`]: [`ScheduleError`], what making a system (and building or
//!   running a schedule) can fail with.

pub mod builder;
pub mod condition;
pub mod context;
pub mod desc;
pub mod error;
pub mod function;
pub mod param;
pub mod param_set;
pub mod set;

pub use builder::{system, SystemBuilder};
pub use condition::{
    not, resource_added, resource_changed, resource_exists, Condition, ConditionDesc, ConditionExt,
    IntoCondition,
};
pub use context::SystemContext;
pub use desc::{ExclusiveMarker, FunctionMarker, IntoSystemDesc, SystemConfig, SystemKind};
pub use function::{
    function_system, system_name, ConditionFunction, FunctionSystem, ParamList,
    SystemParamFunction, SystemParamItem,
};
pub use param::{
    short_type_name, Local, Manager, ManagerMut, ParamAccess, QueryParamState, Res, ResMut,
    SystemParam, SystemRun, WorldCheck,
};
pub use param_set::ParamSet;
pub use set::{
    GroupConfig, IntoOrderTarget, IntoSetConfig, IntoSystemGroup, OrderTarget, SetConfig,
    SetConfigExt, SystemGroup, SystemSet,
};

use crate::query::{Access, AccessKey};
use crate::tick::ChangeWindow;
use crate::world::command::CommandBuffer;
use crate::world::World;

/// The id of a system registered with
/// [`World::register_system`](crate::World::register_system).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct SystemId(pub(crate) u32);

/// What a system touches.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SystemAccess {
    /// Component types read and written.
    pub components: Access,
    /// Resource types read and written.
    pub resources: Access,
    /// Component managers read and written.
    pub managers: Access,
    /// Resources that must exist when the schedule runs (checked before any
    /// system starts).
    pub required_resources: Vec<AccessKey>,
    /// Managers that must exist when the schedule runs.
    pub required_managers: Vec<AccessKey>,
    /// Whether the system records structural changes into its command buffer.
    pub commands: bool,
    /// Whether the system needs `&mut World` and runs alone.
    pub exclusive: bool,
    /// Rust component types whose per-row change stamps its change filters
    /// need; the schedule turns them on before the system first runs.
    pub tracked: Vec<std::any::TypeId>,
    /// Event types the system sends: it runs before their readers unless
    /// told otherwise.
    pub event_writes: Vec<AccessKey>,
    /// Event types the system reads.
    pub event_reads: Vec<AccessKey>,
    /// What the world needs before the system first runs on it; the
    /// schedule runs these with `&mut` once per world.
    pub setup: Vec<fn(&mut crate::world::WorldCore)>,
    /// What the world must allow before every run (see
    /// [`ParamAccess::checks`](param::ParamAccess::checks)).
    pub checks: Vec<WorldCheck>,
    /// The event it observes, for an observer (a system with a
    /// [`Trigger`](crate::Trigger) parameter).
    pub observes: Option<param::ObservedEvent>,
}

/// Why two systems may not run at the same time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Conflict {
    /// Both touch this component type, at least one writing it.
    Component(AccessKey),
    /// Both touch this resource type, at least one writing it.
    Resource(AccessKey),
    /// Both touch this component manager, at least one writing it.
    Manager(AccessKey),
    /// One of them is exclusive.
    Exclusive,
}

impl std::fmt::Display for Conflict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Conflict::Component(key) => write!(f, "component `{}`", key.name),
            Conflict::Resource(key) => write!(f, "resource `{}`", key.name),
            Conflict::Manager(key) => write!(f, "manager `{}`", key.name),
            Conflict::Exclusive => f.write_str("exclusive access to the world"),
        }
    }
}

impl SystemAccess {
    /// The first reason the two may not overlap, if any.
    pub fn conflict_with(&self, other: &SystemAccess) -> Option<Conflict> {
        if self.exclusive || other.exclusive {
            return Some(Conflict::Exclusive);
        }
        if let Some(key) = self.components.conflict_with(&other.components) {
            return Some(Conflict::Component(key));
        }
        if let Some(key) = self.managers.conflict_with(&other.managers) {
            return Some(Conflict::Manager(key));
        }
        self.resources
            .conflict_with(&other.resources)
            .map(Conflict::Resource)
    }

    /// Adds another access to this one (a union; required sets too).
    pub fn extend(&mut self, other: &SystemAccess) {
        self.components.extend(&other.components);
        self.resources.extend(&other.resources);
        self.managers.extend(&other.managers);
        for key in &other.required_resources {
            if !self.required_resources.contains(key) {
                self.required_resources.push(*key);
            }
        }
        for key in &other.required_managers {
            if !self.required_managers.contains(key) {
                self.required_managers.push(*key);
            }
        }
        self.commands |= other.commands;
        merge(&mut self.tracked, &other.tracked);
        merge(&mut self.event_writes, &other.event_writes);
        merge(&mut self.event_reads, &other.event_reads);
        merge(&mut self.setup, &other.setup);
        merge(&mut self.checks, &other.checks);
        self.exclusive |= other.exclusive;
    }

    /// Whether the system may read component `key` (named, or as part of
    /// a read or write of every component: `EntityRef`, `EntityMut`).
    pub fn may_read_component(&self, key: &AccessKey) -> bool {
        self.components.may_read(key)
    }

    /// Whether the system may write component `key` (named, or as part of
    /// a write of every component: `EntityMut`).
    pub fn may_write_component(&self, key: &AccessKey) -> bool {
        self.components.may_write(key)
    }
}

/// A unit of work for the [`Schedule`](crate::Schedule). Most systems are
/// built from closures with [`system`]; implement this trait for systems that
/// carry their own state.
pub trait System: Send {
    /// The system's name, unique within a schedule.
    fn name(&self) -> &str;

    /// What the system touches. Must not change between runs.
    fn access(&self) -> &SystemAccess;

    /// Runs the system on a shared world. Non-exclusive systems get this.
    /// The context checks every query and resource against [`System::access`].
    fn run(&mut self, context: &mut SystemContext<'_>);

    /// Runs the system with the whole world, for systems whose access is
    /// `exclusive`; the schedule calls this instead of [`System::run`]. The
    /// default runs [`System::run`] with a context that allows the declared
    /// access and applies its commands straight after.
    ///
    /// `window` is the system's change window: changes since its previous
    /// run, up to the tick its writes are stamped with (the world's clock
    /// reads that tick while it runs).
    fn run_exclusive(&mut self, world: &mut World, window: ChangeWindow) {
        let access = self.access().clone();
        let name = self.name().to_owned();
        let mut commands = CommandBuffer::new();
        let mut caches = context::QueryCaches::default();
        let mut context = SystemContext::new(
            &world.core,
            &access,
            &name,
            &mut commands,
            context::SpawnSource::World(&world.core.entities),
            &mut caches,
            window,
        );
        self.run(&mut context);
        world.apply(&mut commands);
    }
}

/// Refuses to schedule (or run as a one-shot, or as a run condition) a
/// system with a [`Trigger`](crate::Trigger) parameter: only a trigger
/// runs an observer.
pub(crate) fn refuse_observer(
    name: &str,
    access: &SystemAccess,
) -> Result<(), error::ScheduleError> {
    match access.observes {
        Some(observed) => Err(error::ScheduleError::ObserverNotSystem {
            system: name.to_owned(),
            event: observed.event_name,
        }),
        None => Ok(()),
    }
}

/// Appends the items of `extra` that `into` lacks.
pub(crate) fn merge<T: PartialEq + Copy>(into: &mut Vec<T>, extra: &[T]) {
    for &x in extra {
        if !into.contains(&x) {
            into.push(x);
        }
    }
}
