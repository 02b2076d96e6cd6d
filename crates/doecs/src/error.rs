//! Errors returned by world operations.

use crate::component::ComponentId;
use crate::entity::Entity;

/// Why an operation on an entity or component failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum EntityError {
    /// The entity is dead, was never spawned, or is not in this world.
    #[error("entity {0} is dead or not in this world")]
    NoSuchEntity(Entity),
    /// The entity lacks a typed component.
    #[error("entity {entity} has no component `{component}`")]
    MissingComponent {
        /// The entity.
        entity: Entity,
        /// The Rust type name of the component.
        component: &'static str,
    },
    /// The entity lacks a component given by id.
    #[error("entity {entity} has no component with id {id:?}")]
    MissingComponentId {
        /// The entity.
        entity: Entity,
        /// The component id.
        id: ComponentId,
    },
    /// The component id was not issued by this world.
    #[error("component id {0:?} is not registered in this world")]
    UnknownComponent(ComponentId),
    /// Byte access asked for a component whose values are not plain bytes.
    #[error("component {0:?} is a Rust type or has a drop function, so it cannot be accessed as raw bytes")]
    NotPlainBytes(ComponentId),
    /// A byte slice had the wrong length for the component.
    #[error("component {id:?} takes {expected} bytes per value, got {actual}")]
    WrongSize {
        /// The component id.
        id: ComponentId,
        /// Bytes expected.
        expected: usize,
        /// Bytes given.
        actual: usize,
    },
    /// The same component was named twice in one request.
    #[error("component {0:?} is named twice")]
    DuplicateComponent(ComponentId),
    /// The same entity was named twice where distinct ones are needed
    /// (`get_many_mut`).
    #[error("entity {0} is named twice; the entities must be distinct")]
    AliasedEntity(Entity),
    /// The entity has what the query fetches, but its filter does not pass
    /// it (a change filter, say, when the entity has not changed).
    #[error("entity {entity} does not pass the query filter `{filter}`")]
    FilteredOut {
        /// The entity.
        entity: Entity,
        /// The filter's type name.
        filter: &'static str,
    },
    /// The entity inherits the component from a prefab (through `IsA`)
    /// and owns no copy, so it cannot be written through the entity.
    #[error(
        "entity {entity} inherits `{component}` from prefab {prefab}; insert its own copy (override_inherited) to write it"
    )]
    Inherited {
        /// The instance.
        entity: Entity,
        /// The Rust type name of the component.
        component: &'static str,
        /// The prefab owning the value.
        prefab: Entity,
    },
    /// A bundle type names one component type twice; nothing was changed.
    #[error("bundle `{bundle}` names component `{component}` twice")]
    DuplicateInBundle {
        /// The bundle's type name.
        bundle: &'static str,
        /// The repeated component's type name.
        component: &'static str,
    },
}
