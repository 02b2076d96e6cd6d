//! Adding systems to a schedule: a [`SystemDesc`] is a system with its
//! ordering (`before`/`after` other systems or labels) and labels.
//!
//! [`Schedule::add_system`](crate::Schedule::add_system) takes anything that
//! is [`IntoSystemDesc`]: a function system (a plain function whose
//! parameters are system parameters), a function over `&mut World` (an
//! exclusive system), or a builder system. [`SystemConfig`] gives all of
//! them the same ordering methods:
//!
//! ```
//! use doecs::prelude::*;
//! fn gravity(mut q: Query<&mut f32>) { q.for_each(|v| *v -= 9.81); }
//! fn integrate(mut q: Query<&mut f64>) { q.for_each(|p| *p += 1.0); }
//! fn report(world: &mut World) { let _ = world.len(); }
//!
//! let mut schedule = Schedule::new();
//! schedule
//!     .add_system(gravity.label("physics"))?
//!     .add_system(integrate.after("physics"))?
//!     .add_system(report.named("report"))?;
//! # Ok::<(), doecs::ScheduleError>(())
//! ```

use super::condition::{ConditionDesc, IntoCondition};
use super::error::ScheduleError;
use super::function::{function_system, system_name, ExclusiveSystem, SystemParamFunction};
use super::set::{IntoOrderTarget, OrderTarget, SystemSet};
use super::System;
use crate::dyn_value::DynValue;
use crate::world::World;
use std::any::TypeId;

/// A system ready to add to a schedule, with its ordering hints, or why it
/// could not be made.
pub struct SystemDesc {
    pub(crate) system: Result<Box<dyn System>, ScheduleError>,
    pub(crate) name: Option<String>,
    pub(crate) before: Vec<OrderTarget>,
    pub(crate) after: Vec<OrderTarget>,
    pub(crate) labels: Vec<String>,
    pub(crate) sets: Vec<DynValue>,
    /// The type of the function the system was made from, if any: what
    /// `.after(that_function)` finds.
    pub(crate) type_id: Option<TypeId>,
    pub(crate) conditions: Vec<ConditionDesc>,
}

impl std::fmt::Debug for SystemDesc {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SystemDesc")
            .field("name", &self.name())
            .field("before", &self.before)
            .field("after", &self.after)
            .field("labels", &self.labels)
            .finish()
    }
}

impl SystemDesc {
    /// Wraps a hand-written [`System`].
    pub fn new(system: impl System + 'static) -> Self {
        Self::from_result(Ok(Box::new(system)))
    }

    pub(crate) fn from_result(system: Result<Box<dyn System>, ScheduleError>) -> Self {
        SystemDesc {
            system,
            name: None,
            before: Vec::new(),
            after: Vec::new(),
            labels: Vec::new(),
            sets: Vec::new(),
            type_id: None,
            conditions: Vec::new(),
        }
    }

    /// Runs before `other`: a system function (every system made from
    /// it), a set value (every system in it), or a name (the system of
    /// that name, or every system with that label).
    pub fn before<M>(self, other: impl IntoOrderTarget<M>) -> Self {
        self.before_target(other.into_target())
    }

    /// Runs after `other` (as [`before`](Self::before) names it).
    pub fn after<M>(self, other: impl IntoOrderTarget<M>) -> Self {
        self.after_target(other.into_target())
    }

    pub(crate) fn before_target(mut self, target: OrderTarget) -> Self {
        self.before.push(target);
        self
    }

    pub(crate) fn after_target(mut self, target: OrderTarget) -> Self {
        self.after.push(target);
        self
    }

    /// Puts the system in `set`: ordering and conditions of the set apply
    /// to it (see [`SystemSet`](crate::SystemSet)).
    pub fn in_set(self, set: impl SystemSet) -> Self {
        self.in_set_dyn(set.boxed_key())
    }

    pub(crate) fn in_set_dyn(mut self, set: DynValue) -> Self {
        if !self.sets.contains(&set) {
            self.sets.push(set);
        }
        self
    }

    /// Adds a label others can order against (several systems may share one).
    pub fn label(mut self, label: impl Into<String>) -> Self {
        self.labels.push(label.into());
        self
    }

    /// Runs the system only when `condition` holds (and every other
    /// condition given).
    ///
    /// A condition is a function of read-only system parameters returning
    /// `bool`, or a common one ([`resource_exists`](crate::resource_exists),
    /// [`on_event`](crate::on_event)), combined with
    /// [`and`](crate::ConditionExt::and), [`or`](crate::ConditionExt::or)
    /// (both short-circuit) and [`not`](crate::not). One that writes or
    /// records commands is refused when the system is added. Its reads
    /// join the system's access, and it is evaluated in the system's step,
    /// with the system's change window. A skipped system's window does not
    /// move: when it next runs, its change filters see every change since
    /// its last run, those made while it was skipped included.
    ///
    /// ```
    /// use doecs::prelude::*;
    /// struct Paused(bool);
    /// struct Ticks(u32);
    /// fn running(paused: Res<Paused>) -> bool { !paused.0 }
    /// fn tick(mut t: ResMut<Ticks>) { t.0 += 1; }
    ///
    /// let mut world = World::new();
    /// world.insert_resource(Paused(true));
    /// world.insert_resource(Ticks(0));
    /// let mut schedule = Schedule::with_threads(1);
    /// schedule.add_system(tick.run_if(running))?;
    /// schedule.run(&mut world)?;
    /// assert_eq!(world.resource::<Ticks>().unwrap().0, 0);
    /// # Ok::<(), ScheduleError>(())
    /// ```
    pub fn run_if<M>(mut self, condition: impl IntoCondition<M>) -> Self {
        self.conditions.push(condition.into_condition());
        self
    }

    /// Renames the system (names are unique within a schedule).
    pub fn named(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }

    /// The system's name.
    pub fn name(&self) -> &str {
        match (&self.name, &self.system) {
            (Some(name), _) => name,
            (None, Ok(system)) => system.name(),
            (None, Err(_)) => "<refused system>",
        }
    }
}

/// Something [`Schedule::add_system`](crate::Schedule::add_system) accepts.
/// `Marker` only tells the implementations apart.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a system",
    label = "not a system",
    note = "a system is a function of up to 12 system parameters (`Query`, `Res`, `Commands`, ..), a function whose only parameter is `&mut World`, or a `SystemDesc`"
)]
pub trait IntoSystemDesc<Marker> {
    /// The system with its ordering.
    fn into_desc(self) -> SystemDesc;
}

impl IntoSystemDesc<()> for SystemDesc {
    fn into_desc(self) -> SystemDesc {
        self
    }
}

/// Marks function systems in [`IntoSystemDesc`].
pub struct FunctionMarker;

/// Which kind of system a value is, from its signature alone: a function
/// of so many parameters (`Marker` names their types), an exclusive
/// function over `&mut World`, or a [`SystemDesc`].
///
/// It exists for the compiler's messages.
/// [`Schedule::add_system`](crate::Schedule::add_system) and
/// [`SystemConfig`] ask for it before [`IntoSystemDesc`]: the number of
/// parameters picks one kind, so the marker is known when the parameters
/// are checked, and a parameter that is not a
/// [`SystemParam`](super::SystemParam) is reported by its own type
/// ("`&World` is not a system parameter"). Asked for `IntoSystemDesc` with
/// the marker still open, the compiler would try every implementation,
/// find that none applies, and name only the function. (A function of one
/// `&mut World` parameter fits two kinds; `IntoSystemDesc` then picks the
/// exclusive one.)
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a system",
    label = "not a system",
    note = "a system is a function of up to 12 system parameters (`Query`, `Res`, `Commands`, ..), a function whose only parameter is `&mut World`, or a `SystemDesc`"
)]
pub trait SystemKind<Marker> {}

impl SystemKind<()> for SystemDesc {}

impl<F: FnMut(&mut World)> SystemKind<ExclusiveMarker> for F {}

macro_rules! function_kind {
    ($($param:ident),*) => {
        impl<F: FnMut($($param),*), $($param),*> SystemKind<(FunctionMarker, fn($($param,)*))> for F {}
    };
}
function_kind!();
function_kind!(P0);
function_kind!(P0, P1);
function_kind!(P0, P1, P2);
function_kind!(P0, P1, P2, P3);
function_kind!(P0, P1, P2, P3, P4);
function_kind!(P0, P1, P2, P3, P4, P5);
function_kind!(P0, P1, P2, P3, P4, P5, P6);
function_kind!(P0, P1, P2, P3, P4, P5, P6, P7);
function_kind!(P0, P1, P2, P3, P4, P5, P6, P7, P8);
function_kind!(P0, P1, P2, P3, P4, P5, P6, P7, P8, P9);
function_kind!(P0, P1, P2, P3, P4, P5, P6, P7, P8, P9, P10);
function_kind!(P0, P1, P2, P3, P4, P5, P6, P7, P8, P9, P10, P11);

impl<M: 'static, F: SystemParamFunction<M>> IntoSystemDesc<(FunctionMarker, M)> for F {
    fn into_desc(self) -> SystemDesc {
        let mut desc =
            SystemDesc::from_result(function_system(self).map(|s| Box::new(s) as Box<dyn System>));
        desc.type_id = Some(TypeId::of::<F>());
        desc
    }
}

/// Marks exclusive function systems (`fn(&mut World)`) in [`IntoSystemDesc`].
pub struct ExclusiveMarker;

impl<F: FnMut(&mut World) + Send + 'static> IntoSystemDesc<ExclusiveMarker> for F {
    fn into_desc(self) -> SystemDesc {
        let name = system_name::<F>();
        let mut desc = SystemDesc::new(ExclusiveSystem::new(self, name));
        desc.type_id = Some(TypeId::of::<F>());
        desc
    }
}

/// Ordering and naming for anything that becomes a system: a function
/// system (`integrate.after("gravity")`), an exclusive one, or a desc.
///
/// Implemented for every [`SystemKind`]; the methods ask for
/// [`IntoSystemDesc`] themselves, so a function with a parameter that is not
/// a system parameter is reported by that parameter's type here too.
pub trait SystemConfig<Marker>: SystemKind<Marker> + Sized {
    /// Runs before `other`: see [`SystemDesc::before`].
    fn before<M>(self, other: impl IntoOrderTarget<M>) -> SystemDesc
    where
        Self: IntoSystemDesc<Marker>,
    {
        self.into_desc().before(other)
    }

    /// Runs after `other`: see [`SystemDesc::before`].
    fn after<M>(self, other: impl IntoOrderTarget<M>) -> SystemDesc
    where
        Self: IntoSystemDesc<Marker>,
    {
        self.into_desc().after(other)
    }

    /// Puts the system in `set`.
    fn in_set(self, set: impl SystemSet) -> SystemDesc
    where
        Self: IntoSystemDesc<Marker>,
    {
        self.into_desc().in_set(set)
    }

    /// Adds a label others can order against.
    fn label(self, label: impl Into<String>) -> SystemDesc
    where
        Self: IntoSystemDesc<Marker>,
    {
        self.into_desc().label(label)
    }

    /// Runs the system only when `condition` holds.
    fn run_if<C>(self, condition: impl IntoCondition<C>) -> SystemDesc
    where
        Self: IntoSystemDesc<Marker>,
    {
        self.into_desc().run_if(condition)
    }

    /// Renames the system.
    fn named(self, name: impl Into<String>) -> SystemDesc
    where
        Self: IntoSystemDesc<Marker>,
    {
        self.into_desc().named(name)
    }
}

impl<M, T: SystemKind<M>> SystemConfig<M> for T {}
