//! Typed ordering: system sets, what `before`/`after` name, and groups of
//! systems added together (`chain`).
//!
//! A system set is a value of a type that derives [`SystemSet`]
//! (`#[derive(SystemSet, Clone, Debug, PartialEq, Eq, Hash)] struct
//! Physics;`). A system joins one with `.in_set(Physics)`, and ordering
//! names systems or sets by value, not by string: `.after(integrate)` (a
//! system function: every system made from it), `.before(Physics)` (every
//! system in the set). A misspelled system or set is a compile error.
//! Strings remain for names that are truly dynamic: `.after("name")` finds
//! the system of that name or every system with that label.
//!
//! A set's own configuration ([`Schedule::configure_set`]) orders all its
//! systems at once (`Physics.before(Render)`) and guards all of them with a
//! run condition (`Physics.run_if(playing)`); each member gets its own
//! instance of the condition, evaluated in its own step.
//!
//! [`chain`](SystemGroup::chain) orders a tuple of systems one after the
//! other: `(input, physics, render).chain()`.
//!
//! [`Schedule::configure_set`]: crate::Schedule::configure_set

use super::condition::{ConditionDesc, IntoCondition};
use super::desc::{IntoSystemDesc, SystemDesc, SystemKind};
use crate::dyn_value::{DynValue, KeyValue};
use std::any::TypeId;
use std::sync::atomic::{AtomicU64, Ordering};

/// A system set: implement it with `#[derive(SystemSet)]` on a
/// `Clone + Eq + Hash + Debug` type. See the module docs.
pub trait SystemSet: KeyValue {}

/// What `before`/`after` name. See the module docs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OrderTarget {
    /// The system of this name, and every system with this label.
    Name(String),
    /// Every system made from the function of this type (its name, for
    /// messages).
    System(TypeId, &'static str),
    /// Every system in this set.
    Set(DynValue),
}

/// Something `before`/`after` accept: a system function, a set value, or
/// a name. `Marker` only tells the implementations apart.
#[diagnostic::on_unimplemented(
    message = "`{Self}` names no system or set",
    label = "not a system, a set or a name",
    note = "order against a system function, a value of a `#[derive(SystemSet)]` type, or a name"
)]
pub trait IntoOrderTarget<Marker> {
    /// The target.
    fn into_target(self) -> OrderTarget;
}

/// Marks names in [`IntoOrderTarget`].
pub struct NameMarker;
/// Marks sets in [`IntoOrderTarget`].
pub struct SetMarker;
/// Marks system functions in [`IntoOrderTarget`].
pub struct SystemMarker;

impl IntoOrderTarget<NameMarker> for &str {
    fn into_target(self) -> OrderTarget {
        OrderTarget::Name(self.to_owned())
    }
}

impl IntoOrderTarget<NameMarker> for String {
    fn into_target(self) -> OrderTarget {
        OrderTarget::Name(self)
    }
}

impl<S: SystemSet> IntoOrderTarget<SetMarker> for S {
    fn into_target(self) -> OrderTarget {
        OrderTarget::Set(self.boxed_key())
    }
}

impl<M, F: SystemKind<M> + 'static> IntoOrderTarget<(SystemMarker, M)> for F {
    fn into_target(self) -> OrderTarget {
        OrderTarget::System(TypeId::of::<F>(), std::any::type_name::<F>())
    }
}

/// A set's configuration: ordering and run conditions for all its
/// members. Made by the methods of [`SetConfigExt`].
pub struct SetConfig {
    pub(crate) set: DynValue,
    pub(crate) before: Vec<OrderTarget>,
    pub(crate) after: Vec<OrderTarget>,
    pub(crate) conditions: Vec<ConditionDesc>,
}

impl std::fmt::Debug for SetConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SetConfig")
            .field("set", &self.set)
            .field("before", &self.before)
            .field("after", &self.after)
            .field("conditions", &self.conditions.len())
            .finish()
    }
}

impl SetConfig {
    /// The set's members run before `other`'s systems.
    pub fn before<M>(mut self, other: impl IntoOrderTarget<M>) -> Self {
        self.before.push(other.into_target());
        self
    }

    /// The set's members run after `other`'s systems.
    pub fn after<M>(mut self, other: impl IntoOrderTarget<M>) -> Self {
        self.after.push(other.into_target());
        self
    }

    /// Each member runs only when `condition` holds (each with its own
    /// instance of it).
    pub fn run_if<M>(mut self, condition: impl IntoCondition<M>) -> Self {
        self.conditions.push(condition.into_condition());
        self
    }
}

/// Configuration methods on set values: `Physics.before(Render)`.
pub trait SetConfigExt: SystemSet + Sized {
    /// A configuration of this set alone.
    fn configure(self) -> SetConfig {
        SetConfig {
            set: self.boxed_key(),
            before: Vec::new(),
            after: Vec::new(),
            conditions: Vec::new(),
        }
    }

    /// See [`SetConfig::before`].
    fn before<M>(self, other: impl IntoOrderTarget<M>) -> SetConfig {
        self.configure().before(other)
    }

    /// See [`SetConfig::after`].
    fn after<M>(self, other: impl IntoOrderTarget<M>) -> SetConfig {
        self.configure().after(other)
    }

    /// See [`SetConfig::run_if`].
    fn run_if<M>(self, condition: impl IntoCondition<M>) -> SetConfig {
        self.configure().run_if(condition)
    }
}

impl<S: SystemSet> SetConfigExt for S {}

/// Anything [`SetConfigExt`] makes, or a set alone.
pub trait IntoSetConfig {
    /// The configuration.
    fn into_set_config(self) -> SetConfig;
}

impl IntoSetConfig for SetConfig {
    fn into_set_config(self) -> SetConfig {
        self
    }
}

impl<S: SystemSet> IntoSetConfig for S {
    fn into_set_config(self) -> SetConfig {
        self.configure()
    }
}

/// The set of one link of a chain: unique per chain and position.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct ChainLink(u64, usize);

impl SystemSet for ChainLink {}

/// Systems added together. See the module docs.
#[derive(Debug)]
#[must_use = "a group does nothing until added to a schedule or an app"]
pub struct SystemGroup {
    pub(crate) systems: Vec<SystemDesc>,
}

impl SystemGroup {
    /// Orders the systems one after the other, in the tuple's order.
    pub fn chain(mut self) -> Self {
        static CHAINS: AtomicU64 = AtomicU64::new(0);
        let chain = CHAINS.fetch_add(1, Ordering::Relaxed);
        self.systems = std::mem::take(&mut self.systems)
            .into_iter()
            .enumerate()
            .map(|(k, desc)| {
                let desc = desc.in_set(ChainLink(chain, k));
                if k > 0 {
                    desc.after(ChainLink(chain, k - 1))
                } else {
                    desc
                }
            })
            .collect();
        self
    }

    /// Puts every system of the group in `set`.
    pub fn in_set(self, set: impl SystemSet) -> Self {
        let set = set.boxed_key();
        self.map(|d| d.in_set_dyn(set.clone()))
    }

    /// Every system of the group runs before `other`.
    pub fn before<M>(self, other: impl IntoOrderTarget<M>) -> Self {
        let target = other.into_target();
        self.map(|d| d.before_target(target.clone()))
    }

    /// Every system of the group runs after `other`.
    pub fn after<M>(self, other: impl IntoOrderTarget<M>) -> Self {
        let target = other.into_target();
        self.map(|d| d.after_target(target.clone()))
    }

    /// Every system of the group runs only when `condition` holds (each
    /// with its own instance).
    pub fn run_if<M>(self, condition: impl IntoCondition<M>) -> Self {
        let condition = condition.into_condition();
        self.map(|d| d.run_if(condition.clone()))
    }

    fn map(mut self, f: impl FnMut(SystemDesc) -> SystemDesc) -> Self {
        self.systems = std::mem::take(&mut self.systems)
            .into_iter()
            .map(f)
            .collect();
        self
    }
}

/// Something added as a group: one system, a [`SystemGroup`], or a tuple
/// of up to 12 of those. `Marker` only tells the implementations apart.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a system or a tuple of systems",
    label = "not a system",
    note = "a system is a function of up to 12 system parameters, a function whose only parameter is `&mut World`, or a `SystemDesc`; a tuple of up to 12 systems is a group"
)]
pub trait IntoSystemGroup<Marker> {
    /// The group.
    fn into_group(self) -> SystemGroup;

    /// The group, chained: see [`SystemGroup::chain`].
    fn chain(self) -> SystemGroup
    where
        Self: Sized,
    {
        self.into_group().chain()
    }
}

/// Marks single systems in [`IntoSystemGroup`].
pub struct SingleMarker;

/// Marks tuples in [`IntoSystemGroup`].
pub struct TupleMarker;

impl<M, S: SystemKind<M> + IntoSystemDesc<M>> IntoSystemGroup<(SingleMarker, M)> for S {
    fn into_group(self) -> SystemGroup {
        SystemGroup {
            systems: vec![self.into_desc()],
        }
    }
}

impl IntoSystemGroup<()> for SystemGroup {
    fn into_group(self) -> SystemGroup {
        self
    }
}

/// [`SystemGroup`]'s configuration methods on tuples of systems:
/// `(physics, render).in_set(Draw)`. (A single system has the same
/// methods through [`SystemConfig`](super::SystemConfig).)
pub trait GroupConfig<M>: IntoSystemGroup<(TupleMarker, M)> + Sized {
    /// See [`SystemGroup::in_set`].
    fn in_set(self, set: impl SystemSet) -> SystemGroup {
        self.into_group().in_set(set)
    }

    /// See [`SystemGroup::before`].
    fn before<T>(self, other: impl IntoOrderTarget<T>) -> SystemGroup {
        self.into_group().before(other)
    }

    /// See [`SystemGroup::after`].
    fn after<T>(self, other: impl IntoOrderTarget<T>) -> SystemGroup {
        self.into_group().after(other)
    }

    /// See [`SystemGroup::run_if`].
    fn run_if<K>(self, condition: impl IntoCondition<K>) -> SystemGroup {
        self.into_group().run_if(condition)
    }
}

impl<M, T: IntoSystemGroup<(TupleMarker, M)>> GroupConfig<M> for T {}

macro_rules! tuple_group {
    ($($s:ident $m:ident),*) => {
        #[allow(non_snake_case)]
        impl<$($m, $s: IntoSystemGroup<$m>),*> IntoSystemGroup<(TupleMarker, ($($m,)*))> for ($($s,)*) {
            fn into_group(self) -> SystemGroup {
                let ($($s,)*) = self;
                let mut systems = Vec::new();
                $(systems.extend($s.into_group().systems);)*
                SystemGroup { systems }
            }
        }
    };
}

tuple_group!(S0 M0, S1 M1);
tuple_group!(S0 M0, S1 M1, S2 M2);
tuple_group!(S0 M0, S1 M1, S2 M2, S3 M3);
tuple_group!(S0 M0, S1 M1, S2 M2, S3 M3, S4 M4);
tuple_group!(S0 M0, S1 M1, S2 M2, S3 M3, S4 M4, S5 M5);
tuple_group!(S0 M0, S1 M1, S2 M2, S3 M3, S4 M4, S5 M5, S6 M6);
tuple_group!(S0 M0, S1 M1, S2 M2, S3 M3, S4 M4, S5 M5, S6 M6, S7 M7);
tuple_group!(S0 M0, S1 M1, S2 M2, S3 M3, S4 M4, S5 M5, S6 M6, S7 M7, S8 M8);
tuple_group!(S0 M0, S1 M1, S2 M2, S3 M3, S4 M4, S5 M5, S6 M6, S7 M7, S8 M8, S9 M9);
tuple_group!(S0 M0, S1 M1, S2 M2, S3 M3, S4 M4, S5 M5, S6 M6, S7 M7, S8 M8, S9 M9, S10 M10);
tuple_group!(S0 M0, S1 M1, S2 M2, S3 M3, S4 M4, S5 M5, S6 M6, S7 M7, S8 M8, S9 M9, S10 M10, S11 M11);

/// Whether `target` names a system with these facts.
pub(crate) fn names(
    target: &OrderTarget,
    name: &str,
    labels: &[String],
    type_id: Option<TypeId>,
    sets: &[DynValue],
) -> bool {
    match target {
        OrderTarget::Name(n) => n == name || labels.iter().any(|l| l == n),
        OrderTarget::System(t, _) => type_id == Some(*t),
        OrderTarget::Set(s) => sets.contains(s),
    }
}
