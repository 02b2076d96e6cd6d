//! The names most programs use: `use doecs::prelude::*;`.
//!
//! Everything the README's examples name from doecs is here: the world and
//! entities, bundles (the trait and `#[derive(Bundle)]`), queries and their
//! filters, systems and their parameters, the schedule and its errors,
//! command buffers, events, hooks, managers, snapshots, relationships and
//! prefabs, and shared worlds. Lower-level pieces (runtime component
//! descriptors, storage ids, access sets) stay at the crate root.

pub use crate::app::{
    in_state, App, AppError, AppExit, First, Fixed, FixedUpdate, Last, NextState, OnEnter, OnExit,
    Plugin, PostUpdate, PreUpdate, Shutdown, Startup, State, StateScoped, States, Time, TimeSource,
    Update,
};
pub use crate::entity::Entity;
pub use crate::error::EntityError;
pub use crate::event::{on_event, EventReader, EventWriter, Events};
pub use crate::manager::{ComponentManager, DestroyNotice};
pub use crate::name::Name;
pub use crate::observer::Trigger;
pub use crate::query::{
    Added, AnyOf, Changed, EntityMut, Has, Mut, Or, OwnOrInherited, Pairs, Query, QueryState, Ref,
    Up, View, ViewMut, With, Without,
};
pub use crate::relation::{ChildOf, Cleanup, IsA, Prefab, Relation, RelationError, Targets};
pub use crate::schedule::{Schedule, ScheduleError};
pub use crate::system::SystemId;
pub use crate::system::{
    not, resource_added, resource_changed, resource_exists, system, ConditionExt, GroupConfig,
    IntoSystemDesc, IntoSystemGroup, Local, Manager, ManagerMut, ParamSet, Res, ResMut,
    SetConfigExt, SystemConfig, SystemSet,
};
pub use crate::tags::Disabled;
pub use crate::universe::Universe;
pub use crate::world::command::{CommandBuffer, Commands};
pub use crate::world::hooks::{ComponentHooks, HookContext};
pub use crate::world::RemovedComponents;
pub use crate::world::{EntityBuilder, EntityRef, EntityWorldMut, Snapshot, World, WorldCore};
pub use crate::world::{Event, OnAdd, OnDespawn, OnInsert, OnRemove, OnReplace};
/// The `Bundle` trait and `#[derive(Bundle)]`.
pub use crate::Bundle;
pub use doecs_macros::{QueryData, SystemParam, SystemSet};
