#![doc = include_str!("../../../README.md")]
//!
//! # Cargo features
//!
//! - `serde`: `Serialize` and `Deserialize` for [`Entity`], so components
//!   holding entity references can be saved and loaded.
//! - `sanitize`: every structural operation ends with a check of the whole
//!   world's invariants ([`World::check_invariants`]), as flecs's
//!   `FLECS_SANITIZE` does (see "Sanitize builds" above). O(world) per
//!   operation, for tests and debugging; off, the checks compile to
//!   nothing. `cargo test -p doecs --features sanitize`.
#![deny(unsafe_op_in_unsafe_fn)]
#![warn(missing_docs, clippy::undocumented_unsafe_blocks)]

// Lets the derive macros' `::doecs::..` paths work inside this crate too.
extern crate self as doecs;

mod app;
mod bundle;
mod component;
mod dyn_value;
mod entities;
mod entity;
mod error;
mod event;
mod location;
mod manager;
mod name;
mod observer;
mod parallel;
pub mod prelude;
mod query;
pub mod raw;
mod relation;
mod resource;
mod schedule;
mod stamp;
mod storage;
mod system;
mod tags;
mod tick;
mod type_index;
mod universe;
mod world;

// Command buffers and hooks belong to the world layer (the structural core
// applies and fires them); their items are re-exported below.
use world::{command, hooks};

pub use app::{
    in_state, AnyLabel, App, AppError, AppExit, CustomRunner, First, Fixed, FixedUpdate, Last,
    LastUpdate, NextState, OnEnter, OnExit, Plugin, PostUpdate, PreUpdate, Real, Runner,
    ScheduleLabel, Shutdown, Startup, State, StateScoped, States, Time, TimeSource, Update,
    DEFAULT_MAX_STEPS, DEFAULT_TIMESTEP,
};
/// What the derive macros' expansions call on; not an API.
#[doc(hidden)]
pub mod __private {
    pub use crate::bundle::__private::*;
    pub use crate::query::derived::*;
}
pub use bundle::{Bundle, CloneBundle, CloneFieldSink, FieldSink};
pub use command::{ApplyReport, CommandBuffer, CommandFailure, Commands, EntityCommands};
pub use component::{
    Component, ComponentDescriptor, ComponentId, ComponentInfo, Components, RegisterError,
    SnapshotCopy,
};
/// `#[derive(Bundle)]`: a struct whose fields are components, used like a
/// tuple bundle (see [`doecs_macros`]).
pub use doecs_macros::Bundle;
/// `#[derive(QueryData)]`: a struct (or enum) with one lifetime whose
/// fields are query data is both a query and its item (see
/// [`doecs_macros`]).
pub use doecs_macros::QueryData;
/// `#[derive(SystemParam)]`: a struct whose named fields are system
/// parameters is one parameter, fetched field by field (see
/// [`doecs_macros`]).
pub use doecs_macros::SystemParam;
/// `#[derive(SystemSet)]`: makes a `Clone + Eq + Hash + Debug` type a
/// system set (see [`SystemSet`]).
pub use doecs_macros::SystemSet;
pub use entity::{Entity, MIN_FREE_INDICES};
pub use error::{EntityError, QuerySingleError};
pub use event::{on_event, EventCursor, EventIter, EventReader, EventWriter, Events};
pub use hooks::{ComponentHooks, Hook, HookContext, HookKind};
pub use manager::{ComponentManager, DestroyNotice, GcReport, LazyGc, Probe};
pub use name::{LookupError, Name};
pub use observer::{EntityEvent, ObserveError, Trigger};
pub use query::{
    Access, AccessKey, Added, AliasError, AnyOf, ArchetypeFilter, Batch, BatchedIter, Changed,
    Combinations, CombinationsMut, EntityMut, EveryRowData, FilteredAccess, Has, Mut, Or,
    OwnOrInherited, Pairs, Query, QueryData, QueryError, QueryFilter, QueryIter, QueryState,
    ReadOnlyItem, ReadOnlyQueryData, Ref, Sparse, Up, View, ViewMut, With, Without,
};
pub use relation::{
    ChildOf, Cleanup, Hierarchy, IsA, PairsError, Prefab, Relation, RelationError, Relations,
    Sources, Targets,
};
pub use resource::ResourceTicks;
pub use schedule::{on_schedule_pool, Plan, RunReport, Schedule, ScheduleError, SystemTime};
pub use system::desc::SystemDesc;
pub use system::{
    function_system, not, resource_added, resource_changed, resource_exists, system, Condition,
    ConditionDesc, ConditionExt, ConditionFunction, Conflict, ExclusiveMarker, FunctionMarker,
    FunctionSystem, IntoCondition, IntoSystemDesc, Local, Manager, ManagerMut, ParamAccess,
    ParamList, ParamSet, Res, ResMut, System, SystemAccess, SystemBuilder, SystemConfig,
    SystemContext, SystemKind, SystemParam, SystemParamFunction, SystemParamItem, WorldCheck,
};
pub use system::{
    GroupConfig, IntoOrderTarget, IntoSetConfig, IntoSystemGroup, OrderTarget, SetConfig,
    SetConfigExt, SystemGroup, SystemSet,
};
pub use tags::{Disabled, HiddenTags};
pub use tick::{ChangeWindow, Tick};
pub use universe::{SharedWorld, Universe, WorldKey};
#[cfg(feature = "serde")]
pub use world::SaveManager;
pub use world::{
    EntityBuilder, EntityRef, EntityTemplate, EntityWorldMut, RemovedComponents, RequireError,
    Snapshot, SnapshotError, Spawn, World, WorldConfig, WorldCore, WorldId, MAX_HOOK_ROUNDS,
};
pub use world::{
    Event, ObserverError, ObserverId, ObserverInfo, OnAdd, OnDespawn, OnInsert, OnRemove, OnReplace,
};
