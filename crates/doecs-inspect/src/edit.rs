//! Edits, allowed only when the inspector was started with write access
//! (`--inspect-write`): set one component of an entity from JSON
//! (`PUT /api/entity/{id}/components/{name}`), and despawn an entity
//! (`DELETE /api/entity/{id}`).
//!
//! A value goes through the component's serde registration
//! ([`Registration::insert_json`](doecs_registry::Registration)), which
//! inserts it, replacing any old value; a plain-bytes runtime component with
//! no registration takes an array of exactly its size in byte values. A
//! value that does not fit the type, or that the registration's check
//! ([`Registering::validate`](doecs_registry::Registering::validate))
//! refuses (a zero mass, say), is a 422 and changes nothing. Edits run
//! between frames, like every request, so a system never sees half of one.
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
use doecs::{Entity, World};
use doecs_registry::ComponentRegistry;
use serde_json::Value;

/// Sets `entity`'s component `name` to `value`; returns the entity's detail.
pub fn set_component(
    world: &mut World,
    registry: &ComponentRegistry,
    entity: Entity,
    name: &str,
    value: &Value,
) -> Result<Value, ApiError> {
    live(world, entity)?;
    let id = resolve(world, registry, name).ok_or_else(|| {
        ApiError::not_found(format!(
            "unknown component \"{name}\" (GET /api/components lists them)"
        ))
    })?;
    let shown = display_name(world, registry, id);
    match registry.for_component(world, id) {
        Some(reg) if reg.is_serde() => reg
            .insert_json(world, entity, value)
            .map_err(|e| ApiError::unprocessable(e.to_string()))?,
        Some(_) => {
            return Err(ApiError::unprocessable(format!(
                "component \"{shown}\" is registered for display only; it cannot be set from JSON"
            )))
        }
        None if world.components().info(id).is_plain_bytes() => {
            let size = world.components().info(id).layout().size();
            let bytes = plain_bytes(value, size)
                .map_err(|why| ApiError::unprocessable(format!("component \"{shown}\": {why}")))?;
            world
                .insert_bytes(entity, id, &bytes)
                .map_err(|e| ApiError::unprocessable(e.to_string()))?;
        }
        None => {
            return Err(ApiError::unprocessable(format!(
                "component \"{shown}\" has no registration; the inspector cannot build its values"
            )))
        }
    }
    detail(world, registry, entity)
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
    use serde_json::json;

    #[test]
    fn plain_bytes_checks_length_and_range() {
        assert_eq!(plain_bytes(&json!([1, 2]), 2).unwrap(), [1, 2]);
        assert!(plain_bytes(&json!([1, 2]), 3).is_err());
        assert!(plain_bytes(&json!([1, 256]), 2).is_err());
        assert!(plain_bytes(&json!([1, -1]), 2).is_err());
        assert!(plain_bytes(&json!("x"), 1).is_err());
    }
}
