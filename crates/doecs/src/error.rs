//! Errors returned by world operations.

use crate::component::{ComponentId, Components};
use crate::entity::Entity;

/// Why an operation on an entity or component failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum EntityError {
    /// The entity is dead, was never spawned, or is not in this world.
    #[error("entity {0} is dead or not in this world")]
    NoSuchEntity(Entity),
    /// The entity lacks a typed component.
    #[error(
        "entity {entity} has no component `{component}`{}",
        reference_hint(component)
    )]
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
    /// A write through `&mut` (or in place) of a component registered
    /// immutable ([`WorldCore::register_immutable`]); its values change
    /// only by insert, which replaces the value and fires the hooks.
    ///
    /// [`WorldCore::register_immutable`]: crate::WorldCore::register_immutable
    #[error(
        "component `{0}` is immutable: it cannot be written in place; insert a new value to replace it"
    )]
    Immutable(&'static str),
    /// As [`EntityError::Immutable`], for a component given by id.
    #[error(
        "component {0:?} is immutable: it cannot be written in place; insert a new value to replace it"
    )]
    ImmutableId(ComponentId),
    /// A bundle type names one component type twice; nothing was changed.
    #[error("bundle `{bundle}` names component `{component}` twice")]
    DuplicateInBundle {
        /// The bundle's type name.
        bundle: &'static str,
        /// The repeated component's type name.
        component: &'static str,
    },
}

impl EntityError {
    /// The error for `entity` lacking component `id`: named by its Rust type
    /// when it has one, else by id.
    pub(crate) fn missing(components: &Components, entity: Entity, id: ComponentId) -> Self {
        match components.info(id).type_name() {
            Some(component) => EntityError::MissingComponent { entity, component },
            None => EntityError::MissingComponentId { entity, id },
        }
    }
}

/// For a component type that is a reference (`get::<&Health>`, the hecs
/// spelling), a hint naming the type to ask for instead.
fn reference_hint(component: &str) -> String {
    let Some(rest) = component.strip_prefix('&') else {
        return String::new();
    };
    let inner = rest.strip_prefix("mut ").unwrap_or(rest).trim_start();
    let short = short_type_path(inner);
    format!(
        "; did you mean `get::<{short}>`? Components are looked up by their type, \
         without `&` (references are only for queries)"
    )
}

/// A type name without module paths, for messages:
/// `Query<(&mut Position, &Velocity)>`.
pub(crate) fn short_type_path(full: &str) -> String {
    let mut out = String::with_capacity(full.len());
    let mut segment_start = 0;
    for (i, c) in full.char_indices() {
        if c.is_alphanumeric() || c == '_' || c == ':' {
            continue;
        }
        let segment = &full[segment_start..i];
        out.push_str(segment.rsplit("::").next().unwrap_or(segment));
        out.push(c);
        segment_start = i + c.len_utf8();
    }
    let segment = &full[segment_start..];
    out.push_str(segment.rsplit("::").next().unwrap_or(segment));
    // Lifetimes say nothing here.
    for lifetime in ["'_, ", "'static ", "'_ "] {
        out = out.replace(lifetime, "");
    }
    out.replace("<'_>", "").replace("<'static>", "")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reference_component_gets_a_hint() {
        let e = EntityError::MissingComponent {
            entity: crate::Entity::from_parts(3, 0),
            component: std::any::type_name::<&Vec<crate::Entity>>(),
        };
        let message = e.to_string();
        assert!(
            message.contains("did you mean `get::<Vec<Entity>>`?"),
            "{message}"
        );
        let plain = EntityError::MissingComponent {
            entity: crate::Entity::from_parts(3, 0),
            component: "u32",
        };
        assert_eq!(plain.to_string(), "entity 3v0 has no component `u32`");
    }
}

/// Why a query's `single` or `single_mut` has no one item to give.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum QuerySingleError {
    /// No entity matches.
    #[error("no entity matches the query `{0}`")]
    NoEntities(&'static str),
    /// More than one entity matches.
    #[error("more than one entity matches the query `{0}`")]
    MultipleEntities(&'static str),
}
