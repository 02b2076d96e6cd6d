//! Run conditions: read-only systems returning `bool` that decide whether
//! a system runs this time.
//!
//! `.run_if(cond)` (on any system, through [`SystemConfig`]) attaches a
//! condition; a system with several runs only when all hold. A condition
//! is a function of system parameters returning `bool` (`|score:
//! Res<Score>| score.0 > 10`), or one of the common ones below
//! ([`resource_exists`], [`resource_changed`], [`resource_added`],
//! [`on_event`](crate::on_event), [`in_state`](crate::in_state)),
//! combined with [`ConditionExt::and`], [`ConditionExt::or`] and [`not`]
//! (both short-circuit: the right side is not evaluated when the left
//! decides).
//!
//! A condition is a recipe ([`ConditionDesc`]): each system it guards (a
//! set's or a group's condition guards several) gets its own instance,
//! with its own state (an `on_event` condition's place in the events). So
//! a function condition must be `Clone` (functions, and closures over
//! clonable values, are).
//!
//! A condition only reads: one whose parameters write a component, a
//! resource or a manager, or record commands, is refused when its system
//! is added ([`ScheduleError::InvalidParam`]). Its reads join its system's
//! access, so the schedule orders it against writers as it orders the
//! system. It is evaluated in the system's step, just before the system
//! would run, with the system's change window.
//!
//! A skipped system does not run, so its change window does not move: the
//! next time it runs, its change filters see every change since its last
//! run, including those made while it was skipped. (Its commands and
//! events are simply not sent that time.)

use super::context::SystemContext;
use super::error::ScheduleError;
use super::function::{access_of, system_name, ConditionFunction, ParamList};
use super::SystemAccess;
use crate::system::param::Res;
use crate::world::per_world::PerWorld;
use std::marker::PhantomData;
use std::sync::Arc;

/// A run condition, ready to evaluate. See the module docs.
pub trait Condition: Send {
    /// The condition's name, for messages.
    fn name(&self) -> &str;
    /// What the condition reads.
    fn access(&self) -> &SystemAccess;
    /// Whether the guarded system runs now.
    fn evaluate(&mut self, context: &mut SystemContext<'_>) -> bool;
}

/// A condition ready to attach: a recipe that makes a fresh instance for
/// each system it guards (a set's or a group's condition guards several),
/// or says why it cannot be made. Cheap to clone.
#[derive(Clone)]
pub struct ConditionDesc(Arc<MakeCondition>);

type MakeCondition = dyn Fn() -> Result<Box<dyn Condition>, ScheduleError> + Send + Sync;

impl ConditionDesc {
    fn new(
        make: impl Fn() -> Result<Box<dyn Condition>, ScheduleError> + Send + Sync + 'static,
    ) -> Self {
        ConditionDesc(Arc::new(make))
    }

    /// A fresh instance.
    pub(crate) fn make(&self) -> Result<Box<dyn Condition>, ScheduleError> {
        let condition = (self.0)()?;
        super::refuse_observer(condition.name(), condition.access())?;
        Ok(condition)
    }
}

impl std::fmt::Debug for ConditionDesc {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.make() {
            Ok(c) => write!(f, "ConditionDesc({})", c.name()),
            Err(e) => write!(f, "ConditionDesc(refused: {e})"),
        }
    }
}

/// Something `.run_if` accepts: a function of system parameters returning
/// `bool`, or a [`ConditionDesc`] (a combination, or a common condition).
/// `Marker` only tells the implementations apart.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a run condition",
    label = "not a run condition",
    note = "a run condition is a function of read-only system parameters that returns `bool`"
)]
pub trait IntoCondition<Marker> {
    /// The condition.
    fn into_condition(self) -> ConditionDesc;
}

impl IntoCondition<()> for ConditionDesc {
    fn into_condition(self) -> ConditionDesc {
        self
    }
}

/// Marks function conditions in [`IntoCondition`].
pub struct FunctionConditionMarker;

impl<M: 'static, F: ConditionFunction<M> + Clone + Sync> IntoCondition<(FunctionConditionMarker, M)>
    for F
{
    fn into_condition(self) -> ConditionDesc {
        ConditionDesc::new(move || {
            function_condition(self.clone()).map(|c| Box::new(c) as Box<dyn Condition>)
        })
    }
}

/// A function run as a condition.
struct FunctionCondition<F: ConditionFunction<M>, M> {
    func: F,
    state: PerWorld<<F::Params as ParamList>::State>,
    name: String,
    access: SystemAccess,
    _marker: PhantomData<fn() -> M>,
}

fn function_condition<M: 'static, F: ConditionFunction<M>>(
    func: F,
) -> Result<FunctionCondition<F, M>, ScheduleError> {
    let name = system_name::<F>();
    let mut params = Vec::new();
    let _ = F::Params::describe(&mut params);
    let access = access_of(&name, &params)?;
    let writes = access
        .components
        .first_write()
        .map(|k| k.name)
        .or_else(|| access.resources.writes().first().map(|k| k.name))
        .or_else(|| access.managers.writes().first().map(|k| k.name));
    if let Some(written) = writes {
        return Err(ScheduleError::InvalidParam {
            system: name,
            param: written.to_owned(),
            reason: "a run condition only reads, and this is written".to_owned(),
        });
    }
    if access.commands {
        return Err(ScheduleError::InvalidParam {
            system: name,
            param: "Commands".to_owned(),
            reason: "a run condition only reads, and cannot record commands".to_owned(),
        });
    }
    Ok(FunctionCondition {
        func,
        state: PerWorld::default(),
        name,
        access,
        _marker: PhantomData,
    })
}

impl<F: ConditionFunction<M>, M: 'static> Condition for FunctionCondition<F, M> {
    fn name(&self) -> &str {
        &self.name
    }

    fn access(&self) -> &SystemAccess {
        &self.access
    }

    fn evaluate(&mut self, context: &mut SystemContext<'_>) -> bool {
        let state = self
            .state
            .enter(context.world(), || F::Params::describe(&mut Vec::new()));
        let run = context.system_run();
        // SAFETY: the condition's access (derived from its parameters, and
        // read-only) is part of its system's, which the schedule holds
        // while the system's step runs; the items end with the call.
        let items = unsafe { F::Params::fetch(state, &run) };
        self.func.call(items)
    }
}

/// Two conditions, both or either.
struct Both {
    left: Box<dyn Condition>,
    right: Box<dyn Condition>,
    /// `true`: both must hold; `false`: either.
    all: bool,
    name: String,
    access: SystemAccess,
}

impl Condition for Both {
    fn name(&self) -> &str {
        &self.name
    }
    fn access(&self) -> &SystemAccess {
        &self.access
    }
    fn evaluate(&mut self, context: &mut SystemContext<'_>) -> bool {
        let left = self.left.evaluate(context);
        if left != self.all {
            return left;
        }
        self.right.evaluate(context)
    }
}

/// A condition, negated.
struct Not(Box<dyn Condition>, String);

impl Condition for Not {
    fn name(&self) -> &str {
        &self.1
    }
    fn access(&self) -> &SystemAccess {
        self.0.access()
    }
    fn evaluate(&mut self, context: &mut SystemContext<'_>) -> bool {
        !self.0.evaluate(context)
    }
}

fn both(left: ConditionDesc, right: ConditionDesc, all: bool) -> ConditionDesc {
    ConditionDesc::new(move || {
        let (left, right) = (left.make()?, right.make()?);
        let mut access = left.access().clone();
        access.extend(right.access());
        let name = format!(
            "({} {} {})",
            left.name(),
            if all { "and" } else { "or" },
            right.name()
        );
        Ok(Box::new(Both {
            left,
            right,
            all,
            name,
            access,
        }) as Box<dyn Condition>)
    })
}

/// `and` and `or` on every condition.
pub trait ConditionExt<M>: IntoCondition<M> + Sized {
    /// Holds when both hold; `other` is evaluated only if `self` holds.
    fn and<M2>(self, other: impl IntoCondition<M2>) -> ConditionDesc {
        both(self.into_condition(), other.into_condition(), true)
    }

    /// Holds when either holds; `other` is evaluated only if `self` does
    /// not hold.
    fn or<M2>(self, other: impl IntoCondition<M2>) -> ConditionDesc {
        both(self.into_condition(), other.into_condition(), false)
    }
}

impl<M, C: IntoCondition<M>> ConditionExt<M> for C {}

/// Holds when `condition` does not.
pub fn not<M>(condition: impl IntoCondition<M>) -> ConditionDesc {
    let condition = condition.into_condition();
    ConditionDesc::new(move || {
        let c = condition.make()?;
        let name = format!("not {}", c.name());
        Ok(Box::new(Not(c, name)) as Box<dyn Condition>)
    })
}

/// Holds when resource `R` exists.
pub fn resource_exists<R: Send + Sync + 'static>() -> ConditionDesc {
    (|r: Option<Res<R>>| r.is_some()).into_condition()
}

/// Holds when resource `R` was inserted or written since the guarded
/// system last ran (its change window; see [`Res::is_changed`]). Does not
/// hold while there is no `R`.
pub fn resource_changed<R: Send + Sync + 'static>() -> ConditionDesc {
    (|r: Option<Res<R>>| r.is_some_and(|r| r.is_changed())).into_condition()
}

/// Holds when resource `R` was inserted since the guarded system last ran.
/// Does not hold while there is no `R`.
pub fn resource_added<R: Send + Sync + 'static>() -> ConditionDesc {
    (|r: Option<Res<R>>| r.is_some_and(|r| r.is_added())).into_condition()
}
