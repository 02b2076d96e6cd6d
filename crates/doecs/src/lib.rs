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

pub mod bundle;
pub mod component;
pub mod entities;
pub mod entity;
pub mod error;
pub mod event;
pub mod location;
pub mod manager;
mod parallel;
pub mod prelude;
pub mod query;
pub mod relation;
pub mod resource;
pub mod schedule;
mod stamp;
pub mod storage;
pub mod system;
mod tags;
pub mod tick;
mod type_index;
pub mod universe;
pub mod world;

// Command buffers and hooks belong to the world layer (the structural core
// applies and fires them); their public paths stay `doecs::command` and
// `doecs::hooks`.
#[doc(inline)]
pub use world::{command, hooks};

pub use bundle::{Bundle, BundleId};
pub use command::{ApplyReport, CommandBuffer, CommandFailure, Commands};
pub use component::{
    name_hash, Component, ComponentDescriptor, ComponentId, ComponentInfo, Components,
    RegisterError, SnapshotCopy,
};
/// `#[derive(Bundle)]`: a struct whose fields are components, used like a
/// tuple bundle (see [`doecs_macros`]).
pub use doecs_macros::Bundle;
pub use entities::{Entities, EntityTableImage, ImageError, SlotState};
pub use entity::{Entity, MIN_FREE_INDICES};
pub use error::EntityError;
pub use event::{EventCursor, EventReader, EventWriter, Events};
pub use hooks::{ComponentHooks, Hook, HookContext, HookKind};
pub use location::Location;
pub use manager::{ComponentManager, DestroyNotice, GcReport, LazyGc, Probe};
pub use query::{
    Access, Added, Changed, InheritQuery, Or, PairQuery, Query, QueryData, QueryFilter, QueryIter,
    QueryState, ReadOnlyQueryData, UpQuery, View, ViewMut, With, Without,
};
pub use relation::{
    ChildOf, Cleanup, Hierarchy, IsA, PairsError, ParentedBatch, ParentsFirst, Prefab, Relation,
    RelationError, Relations, Sources, Targets,
};
pub use schedule::{on_schedule_pool, Plan, RunReport, Schedule, ScheduleError, SystemTime};
pub use storage::{ArchetypeId, Row};
pub use system::desc::SystemDesc;
pub use system::{
    function_system, system, Conflict, IntoSystemDesc, Local, Manager, ManagerMut, Res, ResMut,
    System, SystemAccess, SystemBuilder, SystemConfig, SystemContext, SystemKind, SystemParam,
};
pub use tick::{ChangeWindow, Tick};
pub use type_index::{TypeIdHasher, TypeIdMap};
pub use universe::{SharedWorld, Universe, WorldKey};
#[cfg(feature = "serde")]
pub use world::SaveManager;
pub use world::{
    EntityBuilder, EntityMut, EntityRef, EntityTemplate, RemovedComponents, Snapshot,
    SnapshotError, World, WorldConfig, WorldCore, WorldId, MAX_HOOK_ROUNDS,
};
