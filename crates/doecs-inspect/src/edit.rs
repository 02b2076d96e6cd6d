//! Edits, allowed only when the inspector was started with write access
//! (`--inspect-write`):
//!
//! - set one component of an entity from JSON, adding it when the entity
//!   lacks it (`PUT /api/entity/{id}/components/{name}`);
//! - remove one component (`DELETE /api/entity/{id}/components/{name}`);
//! - create an entity, with components from a JSON object of values by
//!   name (`POST /api/entity`);
//! - despawn an entity (`DELETE /api/entity/{id}`).
//!
//! A value goes through the component's serde registration
//! ([`Registration::insert_json`](doecs_registry::Registration)), which
//! inserts it, replacing any old value; a plain-bytes runtime component with
//! no registration takes an array of exactly its size in byte values. A
//! value that does not fit the type, or that the registration's check
//! ([`Registering::validate`](doecs_registry::Registering::validate))
//! refuses (a zero mass, say), is a 422 and changes nothing. A name that is
//! no component, or an entity that is not alive, is a 404. Every value of a
//! new entity is checked before it is spawned, so a refused one leaves no
//! entity behind, not even a spent id. Edits run between frames, like every
//! request, so a system never sees half of one.
//!
//! Because every edit is an insert, a component the world registered
//! immutable (`World::register_immutable`, `Registering::immutable`) is
//! edited like any other: the new value replaces the old one, and the
//! component's `on_replace` and `on_insert` hooks see the change, as they
//! see every change of an immutable component. Nothing here writes a value
//! in place.

use crate::components::{display_name, resolve};
use crate::entity::{detail, live, not_alive};
use crate::error::ApiError;
use doecs::{ComponentId, Entity, World};
use doecs_registry::{ComponentRegistry, Registration};
use serde_json::{json, Value};

/// A checked value, ready to insert.
enum Checked<'r> {
    /// Through a serde registration (checked with `check_json`).
    Serde(&'r Registration, Value),
    /// A plain-bytes runtime component's bytes.
    Bytes(ComponentId, Vec<u8>),
}

/// The 404 for a name that is no component.
fn unknown(name: &str) -> ApiError {
    ApiError::not_found(format!(
        "unknown component \"{name}\" (GET /api/components lists them)"
    ))
}

/// Checks `value` for component `name` without changing anything.
fn check<'r>(
    world: &World,
    registry: &'r ComponentRegistry,
    name: &str,
    value: &Value,
) -> Result<Checked<'r>, ApiError> {
    let refused = |e: doecs_registry::RegistryError| ApiError::unprocessable(e.to_string());
    let Some(id) = resolve(world, registry, name) else {
        // A registration whose type the world has not met yet.
        return match registry.by_name(name) {
            Some(reg) if reg.is_serde() => {
                reg.check_json(value).map_err(refused)?;
                Ok(Checked::Serde(reg, value.clone()))
            }
            _ => Err(unknown(name)),
        };
    };
    let shown = display_name(world, registry, id);
    match registry.for_component(world, id) {
        Some(reg) if reg.is_serde() => {
            reg.check_json(value).map_err(refused)?;
            Ok(Checked::Serde(reg, value.clone()))
        }
        Some(_) => Err(ApiError::unprocessable(format!(
            "component \"{shown}\" is registered for display only; it cannot be set from JSON"
        ))),
        None if world.components().info(id).is_plain_bytes() => {
            let size = world.components().info(id).layout().size();
            let bytes = plain_bytes(value, size)
                .map_err(|why| ApiError::unprocessable(format!("component \"{shown}\": {why}")))?;
            Ok(Checked::Bytes(id, bytes))
        }
        None => Err(ApiError::unprocessable(format!(
            "component \"{shown}\" has no registration; the inspector cannot build its values"
        ))),
    }
}

/// Inserts a checked value on the live `entity`.
fn apply(world: &mut World, entity: Entity, checked: Checked<'_>) -> Result<(), ApiError> {
    match checked {
        Checked::Serde(reg, value) => reg.insert_json(world, entity, &value),
        Checked::Bytes(id, bytes) => world.insert_bytes(entity, id, &bytes).map_err(Into::into),
    }
    .map_err(|e| ApiError::unprocessable(e.to_string()))
}

/// Sets `entity`'s component `name` to `value`, adding it when the entity
/// lacks it; returns the entity's detail.
pub fn set_component(
    world: &mut World,
    registry: &ComponentRegistry,
    entity: Entity,
    name: &str,
    value: &Value,
) -> Result<Value, ApiError> {
    live(world, entity)?;
    let checked = check(world, registry, name, value)?;
    apply(world, entity, checked)?;
    detail(world, registry, entity)
}

/// Removes `entity`'s component `name`; returns the entity's detail. A
/// component it lacks (or only inherits from its prefab) is a 404.
pub fn remove_component(
    world: &mut World,
    registry: &ComponentRegistry,
    entity: Entity,
    name: &str,
) -> Result<Value, ApiError> {
    live(world, entity)?;
    let id = resolve(world, registry, name).ok_or_else(|| unknown(name))?;
    if !world.has_id(entity, id) {
        let shown = display_name(world, registry, id);
        let inherited = world
            .prefab_of(entity)
            .map(|p| format!(" (it may read one from its prefab {p}, which is not its own)"))
            .unwrap_or_default();
        return Err(ApiError::not_found(format!(
            "entity {entity} has no component \"{shown}\"{inherited}"
        )));
    }
    world
        .remove_by_id(entity, id)
        .map_err(|e| ApiError::unprocessable(e.to_string()))?;
    detail(world, registry, entity)
}

/// Spawns an entity with the components of `body`, a JSON object of
/// values by component name (empty, `null` or `{}` for none); returns its
/// detail. Every value is checked before anything is spawned.
pub fn create(
    world: &mut World,
    registry: &ComponentRegistry,
    body: &Value,
) -> Result<Value, ApiError> {
    let empty = serde_json::Map::new();
    let values =
        match body {
            Value::Null => &empty,
            Value::Object(map) => map,
            _ => return Err(ApiError::bad_request(
                "the body must be a JSON object of component values by name, e.g. {\"mass\": 2}",
            )),
        };
    let mut checked = Vec::with_capacity(values.len());
    for (name, value) in values {
        checked.push(check(world, registry, name, value)?);
    }
    let entity = world.spawn(());
    for c in checked {
        // Checked already; only a hook despawning the entity can refuse.
        apply(world, entity, c)?;
    }
    let mut d = detail(world, registry, entity)?;
    d["created"] = json!(true);
    Ok(d)
}

/// An array of exactly `size` numbers from 0 to 255.
fn plain_bytes(value: &Value, size: usize) -> Result<Vec<u8>, String> {
    let arr = value
        .as_array()
        .ok_or_else(|| format!("expected an array of {size} byte values"))?;
    if arr.len() != size {
        return Err(format!("expected {size} byte values, got {}", arr.len()));
    }
    arr.iter()
        .map(|v| {
            v.as_u64()
                .and_then(|b| u8::try_from(b).ok())
                .ok_or_else(|| format!("{v} is not a byte value (0 to 255)"))
        })
        .collect()
}

/// Despawns `entity`; a dead one is a 404.
pub fn despawn(world: &mut World, entity: Entity) -> Result<(), ApiError> {
    world.despawn(entity).map_err(|_| not_alive(entity))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_bytes_checks_length_and_range() {
        assert_eq!(plain_bytes(&json!([1, 2]), 2).unwrap(), [1, 2]);
        assert!(plain_bytes(&json!([1, 2]), 3).is_err());
        assert!(plain_bytes(&json!([1, 256]), 2).is_err());
        assert!(plain_bytes(&json!([1, -1]), 2).is_err());
        assert!(plain_bytes(&json!("x"), 1).is_err());
    }
}
