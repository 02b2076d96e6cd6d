//! Function systems: ordinary functions (or closures) whose parameters are
//! [`SystemParam`]s.
//!
//! ```
//! use doecs::prelude::*;
//! struct Position(f32);
//! struct Velocity(f32);
//! struct Frozen;
//! struct Dt(f32);
//!
//! fn integrate(mut q: Query<(&mut Position, &Velocity), Without<Frozen>>, dt: Res<Dt>) {
//!     q.for_each(|(p, v)| p.0 += v.0 * dt.0);
//! }
//!
//! let mut world = World::new();
//! world.insert_resource(Dt(0.5));
//! let e = world.spawn((Position(0.0), Velocity(2.0)));
//! let mut schedule = Schedule::new();
//! schedule.add_system(integrate).unwrap();
//! schedule.run(&mut world).unwrap();
//! assert_eq!(world.get::<Position>(e).unwrap().0, 1.0);
//! ```
//!
//! The access comes from the parameter types when the system is added, so it
//! is declared once; parameters that would alias (`Query<&mut A>` beside
//! `Query<&A>` with nothing keeping their entities apart, two `Commands`, a
//! resource read and written) are refused then, with an error naming both.
//!
//! A [`SystemBuilder`](super::SystemBuilder) makes the same
//! [`FunctionSystem`], over a body that takes the [`SystemContext`] and
//! with the access it declared at run time instead of one derived from
//! parameter types.
//!
//! The trait plumbing follows the pattern bevy_ecs uses: a function `f` with
//! parameters `P0, P1, ..` is a system when `&mut f` can be called both with
//! the parameter types as written and with their items for any lifetime.

use super::context::SystemContext;
use super::error::ScheduleError;
use super::param::{short_type_name, ParamAccess, SystemParam, SystemRun};
use super::{System, SystemAccess};
use crate::world::per_world::PerWorld;
use crate::world::World;
use std::marker::PhantomData;

/// The parameters of a system function, as a tuple.
pub trait ParamList {
    /// Their states.
    type State: Send + Sync + 'static;
    /// Their items for one run.
    type Items<'a>
    where
        Self: 'a;

    /// Describes each parameter into `accesses` (in order) and returns the
    /// first states.
    fn describe(accesses: &mut Vec<ParamAccess>) -> Self::State;

    /// Fetches every parameter.
    ///
    /// # Safety
    /// As [`SystemParam::fetch`].
    unsafe fn fetch<'a>(state: &'a mut Self::State, run: &'a SystemRun<'a>) -> Self::Items<'a>
    where
        Self: 'a;
}

/// A function that can run as a system, with `Marker` naming its parameter
/// types (`fn(P0, P1, ..)`).
pub trait SystemParamFunction<Marker>: Send + 'static {
    /// Its parameters.
    type Params: ParamList + 'static;

    /// Calls the function with fetched parameters.
    fn call(&mut self, items: <Self::Params as ParamList>::Items<'_>);

    /// Runs the function in `context`. A function of system parameters
    /// fetches them and calls [`call`](Self::call); the body of a
    /// [`SystemBuilder`](super::SystemBuilder) system takes the context
    /// itself.
    #[doc(hidden)]
    #[inline]
    fn run_in(
        &mut self,
        state: &mut <Self::Params as ParamList>::State,
        context: &mut SystemContext<'_>,
    ) {
        let run = context.system_run();
        // SAFETY: the schedule runs a `FunctionSystem` only with its declared
        // access, which contains everything its parameters describe (see
        // `function_system`), and after checking the required resources and
        // managers; the items end with the call.
        let items = unsafe { Self::Params::fetch(state, &run) };
        self.call(items);
    }
}

/// A function of system parameters returning `bool`: a run condition
/// (see [`SystemConfig::run_if`](super::SystemConfig::run_if)), with
/// `Marker` naming its parameter types.
pub trait ConditionFunction<Marker>: Send + 'static {
    /// Its parameters.
    type Params: ParamList + 'static;

    /// Calls the function with fetched parameters.
    fn call(&mut self, items: <Self::Params as ParamList>::Items<'_>) -> bool;
}

/// The item of parameter `P` for one run.
pub type SystemParamItem<'a, P> = <P as SystemParam>::Item<'a>;

macro_rules! system_function {
    ($($param:ident $index:tt),*) => {
        #[allow(non_snake_case, unused_variables, clippy::unused_unit)]
        impl<$($param: SystemParam),*> ParamList for ($($param,)*) {
            type State = ($($param::State,)*);
            type Items<'a> = ($($param::Item<'a>,)*) where Self: 'a;

            fn describe(accesses: &mut Vec<ParamAccess>) -> Self::State {
                ($({
                    let mut access = ParamAccess {
                        name: short_type_name::<$param>(),
                        ..ParamAccess::default()
                    };
                    let state = $param::describe(&mut access);
                    accesses.push(access);
                    state
                },)*)
            }

            unsafe fn fetch<'a>(state: &'a mut Self::State, run: &'a SystemRun<'a>) -> Self::Items<'a>
            where
                Self: 'a,
            {
                // SAFETY: forwarded contract, one parameter at a time.
                ($(unsafe { $param::fetch(&mut state.$index, run) },)*)
            }
        }

        #[allow(non_snake_case)]
        impl<Func, $($param: SystemParam + 'static),*> SystemParamFunction<fn($($param,)*)> for Func
        where
            Func: Send + 'static,
            for<'a> &'a mut Func: FnMut($($param),*) + FnMut($(SystemParamItem<'_, $param>),*),
        {
            type Params = ($($param,)*);

            #[inline]
            fn call(&mut self, items: <Self::Params as ParamList>::Items<'_>) {
                #[allow(clippy::too_many_arguments)]
                fn call_inner<$($param),*>(mut f: impl FnMut($($param),*), $($param: $param),*) {
                    f($($param),*)
                }
                let ($($param,)*) = items;
                call_inner(self, $($param),*)
            }
        }

        #[allow(non_snake_case)]
        impl<Func, $($param: SystemParam + 'static),*> ConditionFunction<fn($($param,)*)> for Func
        where
            Func: Send + 'static,
            for<'a> &'a mut Func: FnMut($($param),*) -> bool + FnMut($(SystemParamItem<'_, $param>),*) -> bool,
        {
            type Params = ($($param,)*);

            #[inline]
            fn call(&mut self, items: <Self::Params as ParamList>::Items<'_>) -> bool {
                #[allow(clippy::too_many_arguments)]
                fn call_inner<$($param),*>(mut f: impl FnMut($($param),*) -> bool, $($param: $param),*) -> bool {
                    f($($param),*)
                }
                let ($($param,)*) = items;
                call_inner(self, $($param),*)
            }
        }
    };
}

system_function!();
system_function!(P0 0);
system_function!(P0 0, P1 1);
system_function!(P0 0, P1 1, P2 2);
system_function!(P0 0, P1 1, P2 2, P3 3);
system_function!(P0 0, P1 1, P2 2, P3 3, P4 4);
system_function!(P0 0, P1 1, P2 2, P3 3, P4 4, P5 5);
system_function!(P0 0, P1 1, P2 2, P3 3, P4 4, P5 5, P6 6);
system_function!(P0 0, P1 1, P2 2, P3 3, P4 4, P5 5, P6 6, P7 7);
system_function!(P0 0, P1 1, P2 2, P3 3, P4 4, P5 5, P6 6, P7 7, P8 8);
system_function!(P0 0, P1 1, P2 2, P3 3, P4 4, P5 5, P6 6, P7 7, P8 8, P9 9);
system_function!(P0 0, P1 1, P2 2, P3 3, P4 4, P5 5, P6 6, P7 7, P8 8, P9 9, P10 10);
system_function!(P0 0, P1 1, P2 2, P3 3, P4 4, P5 5, P6 6, P7 7, P8 8, P9 9, P10 10, P11 11);

/// A function run as a system. Made by [`function_system`].
pub struct FunctionSystem<F: SystemParamFunction<M>, M> {
    func: F,
    /// The parameters' states, one per live world the system runs on: a
    /// query's matched archetypes, an event reader's place and a `Local`
    /// all belong to one world.
    state: PerWorld<<F::Params as ParamList>::State>,
    name: String,
    access: SystemAccess,
    params: Vec<ParamAccess>,
    _marker: PhantomData<fn() -> M>,
}

impl<F: SystemParamFunction<M>, M> FunctionSystem<F, M> {
    /// The parameters, as described when the system was made.
    pub fn params(&self) -> &[ParamAccess] {
        &self.params
    }
}

/// The default name of a function system: the function's name without its
/// module path (`integrate`); a closure keeps the name of the function it is
/// in (`main::{{closure}}`), so two closures need `.named(..)`.
pub fn system_name<F>() -> String {
    let full = std::any::type_name::<F>();
    let mut parts = full.rsplit("::");
    let last = parts.next().unwrap_or(full);
    if last.starts_with('{') {
        match parts.next() {
            Some(outer) => format!("{outer}::{last}"),
            None => last.to_owned(),
        }
    } else {
        last.to_owned()
    }
}

/// Makes a system of `func`, deriving its access from its parameters and
/// refusing parameters that would alias.
pub fn function_system<M: 'static, F: SystemParamFunction<M>>(
    func: F,
) -> Result<FunctionSystem<F, M>, ScheduleError> {
    let name = system_name::<F>();
    let mut params = Vec::new();
    // The first world's states are made on the first run, like the others'.
    let _ = F::Params::describe(&mut params);
    let access = access_of(&name, &params)?;
    Ok(FunctionSystem {
        func,
        state: PerWorld::default(),
        name,
        access,
        params,
        _marker: PhantomData,
    })
}

/// The access of a system (or run condition) called `name` with
/// parameters `params`, refusing parameters that would alias.
pub(crate) fn access_of(name: &str, params: &[ParamAccess]) -> Result<SystemAccess, ScheduleError> {
    let mut access = SystemAccess::default();
    for (i, p) in params.iter().enumerate() {
        if let Some(reason) = &p.invalid {
            return Err(ScheduleError::InvalidParam {
                system: name.to_owned(),
                param: p.name.clone(),
                reason: reason.clone(),
            });
        }
        for q in &params[..i] {
            if let Some(reason) = q.conflict_with(p) {
                return Err(ScheduleError::ConflictingParams {
                    system: name.to_owned(),
                    first: q.name.clone(),
                    second: p.name.clone(),
                    reason,
                });
            }
        }
        access.components.extend(&p.components.access);
        access.resources.extend(&p.resources);
        access.managers.extend(&p.managers);
        access.commands |= p.commands;
        super::merge(&mut access.tracked, &p.tracked);
        super::merge(&mut access.event_writes, &p.event_writes);
        super::merge(&mut access.event_reads, &p.event_reads);
        super::merge(&mut access.setup, &p.setup);
        super::merge(&mut access.checks, &p.checks);
        super::merge(&mut access.required_resources, &p.required_resources);
        super::merge(&mut access.required_managers, &p.required_managers);
        access.observes = access.observes.or(p.observes);
    }
    Ok(access)
}

impl<F: SystemParamFunction<M>, M: 'static> System for FunctionSystem<F, M> {
    fn name(&self) -> &str {
        &self.name
    }

    fn access(&self) -> &SystemAccess {
        &self.access
    }

    #[inline]
    fn run(&mut self, context: &mut SystemContext<'_>) {
        let state = self
            .state
            .enter(context.world(), || F::Params::describe(&mut Vec::new()));
        self.func.run_in(state, context);
    }
}

impl<B: FnMut(&mut SystemContext<'_>) + Send + 'static>
    FunctionSystem<ContextBody<B>, ContextMarker>
{
    /// The system of a [`SystemBuilder`](super::SystemBuilder): a body over
    /// its [`SystemContext`], with the access declared at run time (the
    /// context checks every query and resource against it).
    pub(crate) fn with_access(body: B, name: String, access: SystemAccess) -> Self {
        FunctionSystem {
            func: ContextBody(body),
            state: PerWorld::default(),
            name,
            access,
            params: Vec::new(),
            _marker: PhantomData,
        }
    }
}

/// Marks a body over the [`SystemContext`] in [`SystemParamFunction`].
pub struct ContextMarker;

/// A [`SystemBuilder`](super::SystemBuilder) system's body: it takes no
/// parameters but the context, whose checks stand in for them.
pub struct ContextBody<B>(B);

impl<B: FnMut(&mut SystemContext<'_>) + Send + 'static> SystemParamFunction<ContextMarker>
    for ContextBody<B>
{
    type Params = ();

    fn call(&mut self, _items: ()) {
        unreachable!("a context body runs through `run_in`")
    }

    #[inline]
    fn run_in(&mut self, _state: &mut (), context: &mut SystemContext<'_>) {
        (self.0)(context)
    }
}

/// A function over the whole world, run alone at a sync point: the one
/// exclusive system type, made from a function over `&mut World` or by
/// [`SystemBuilder::exclusive`](super::SystemBuilder::exclusive).
pub(crate) struct ExclusiveSystem<F> {
    func: F,
    name: String,
    access: SystemAccess,
}

impl<F: FnMut(&mut World) + Send + 'static> ExclusiveSystem<F> {
    pub(crate) fn new(func: F, name: String) -> Self {
        ExclusiveSystem {
            func,
            name,
            access: SystemAccess {
                exclusive: true,
                ..SystemAccess::default()
            },
        }
    }
}

impl<F: FnMut(&mut World) + Send + 'static> System for ExclusiveSystem<F> {
    fn name(&self) -> &str {
        &self.name
    }
    fn access(&self) -> &SystemAccess {
        &self.access
    }
    fn run(&mut self, _context: &mut SystemContext<'_>) {
        unreachable!(
            "doecs: exclusive system `{}` run without the world",
            self.name
        )
    }
    fn run_exclusive(&mut self, world: &mut World, _window: crate::tick::ChangeWindow) {
        (self.func)(world)
    }
}
