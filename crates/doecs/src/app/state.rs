//! States: a value per state type (menu, playing, game over) that systems
//! read, request changes to, and run on entering and leaving.
//!
//! [`App::insert_state`](super::App::insert_state) registers a state type
//! with its first value. Its current value is the resource [`State<S>`];
//! a system asks for a change by setting the resource [`NextState<S>`].
//! Changes are applied once per update, at one point: after
//! [`PreUpdate`](super::PreUpdate), before [`FixedUpdate`](super::FixedUpdate)
//! and [`Update`](super::Update), so the update's game logic sees one
//! state throughout. A change from `a` to `b` runs the schedule
//! [`OnExit(a)`](OnExit), despawns the entities scoped to `a`
//! ([`StateScoped`]), sets `State` to `b`, then runs [`OnEnter(b)`](OnEnter).
//! `State<S>` holds the first value from the moment the type is inserted;
//! `OnEnter(first)` runs at the first update's transition point, with no
//! `OnExit` (a change requested before then waits for the next one). Several state types are
//! transitioned in the order they were inserted. Asking for the current
//! value is no change; asking twice before the transition point keeps
//! the last request.
//!
//! [`in_state`] is the run condition of a value: a system that should run
//! only while playing is `.run_if(in_state(Game::Playing))`.

use crate::entity::Entity;
use crate::system::condition::{ConditionDesc, IntoCondition};
use crate::system::param::Res;
use crate::world::World;
use std::fmt::Debug;
use std::hash::Hash;

/// A type whose values are states: `Clone + Eq + Hash + Debug`, sendable.
/// Implemented for every such type; a state is usually a fieldless enum.
pub trait States: Clone + Eq + Hash + Debug + Send + Sync + 'static {}

impl<T: Clone + Eq + Hash + Debug + Send + Sync + 'static> States for T {}

/// The current value of state type `S` (a resource).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct State<S: States>(pub(crate) S);

impl<S: States> State<S> {
    /// The current value.
    pub fn get(&self) -> &S {
        &self.0
    }
}

/// A requested change of state type `S` (a resource), applied at the next
/// transition point.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NextState<S: States>(pub(crate) Option<S>);

impl<S: States> Default for NextState<S> {
    fn default() -> Self {
        NextState(None)
    }
}

impl<S: States> NextState<S> {
    /// Requests a change to `value` (replacing an earlier request).
    pub fn set(&mut self, value: S) {
        self.0 = Some(value);
    }

    /// The requested value, if any.
    pub fn pending(&self) -> Option<&S> {
        self.0.as_ref()
    }
}

/// The schedule run when state value `S` is entered.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct OnEnter<S: States>(pub S);

/// The schedule run when state value `S` is left.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct OnExit<S: States>(pub S);

/// A component that ties its entity to a state value: the entity is
/// despawned when that value is left (after `OnExit` runs).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StateScoped<S: States>(pub S);

/// Holds while state type `S` has the value `value` (and never before `S`
/// is inserted).
pub fn in_state<S: States>(value: S) -> ConditionDesc {
    (move |state: Option<Res<State<S>>>| state.is_some_and(|s| s.0 == value)).into_condition()
}

/// What a state type's transition point does.
pub(crate) enum Transition<S> {
    /// Nothing.
    None,
    /// Enter the first value.
    Enter(S),
    /// Leave one value for another.
    Change {
        /// The value left.
        from: S,
        /// The value entered.
        to: S,
    },
}

/// The first value waiting to be entered (a resource, until the first
/// transition point).
pub(crate) struct Unentered<S>(pub(crate) S);

/// Takes state type `S`'s pending transition out of `world`: entering the
/// first value (already in `State<S>` since it was inserted), or a change,
/// which leaves `State<S>` as it is, for [`OnExit`] to see, until
/// [`set_state`]. A change requested before the first value was entered
/// waits for the next transition point.
pub(crate) fn take_transition<S: States>(world: &mut World) -> Transition<S> {
    if let Some(Unentered(first)) = world.remove_resource::<Unentered<S>>() {
        return Transition::Enter(first);
    }
    let Some(next) = world
        .resource_mut::<NextState<S>>()
        .and_then(|n| n.0.take())
    else {
        return Transition::None;
    };
    match world.resource::<State<S>>() {
        Some(state) if state.0 != next => Transition::Change {
            from: state.0.clone(),
            to: next,
        },
        _ => Transition::None,
    }
}

/// Sets `State<S>` to `value`.
pub(crate) fn set_state<S: States>(world: &mut World, value: S) {
    world.insert_resource(State(value));
}

/// Despawns the entities scoped to `value` of state type `S`, in entity
/// order.
pub(crate) fn despawn_scoped<S: States>(world: &mut World, value: &S) {
    let mut scoped: Vec<Entity> = world
        .query::<(Entity, &StateScoped<S>)>()
        .iter()
        .filter(|(_, s)| s.0 == *value)
        .map(|(e, _)| e)
        .collect();
    scoped.sort_unstable_by_key(|e| e.to_bits());
    world.despawn_batch(&scoped);
}
