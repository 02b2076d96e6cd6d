//! Components as the inspector shows them: their names, how a name in a
//! request finds a component, and how a value becomes JSON.
//!
//! A component is shown under its registration's name when the
//! [`ComponentRegistry`] has one (`position`), else under the world's name
//! for it (a runtime component's name, or a Rust type's path). A request
//! may use either.
//!
//! Every component has a `"storage"`: `"table"` for one stored in
//! archetypes, `"sparse"` for one stored in a sparse set of its own
//! (`World::register_sparse`, `Registering::sparse`). An entity's
//! components are its archetype's, then its sparse ones
//! ([`of_entity`]); their values are shown the same way.
//!
//! A value is shown, in this order of preference, as
//! - `"kind": "json"`: the registration's serde form;
//! - `"kind": "debug"`: its `Debug` text (a display-only registration);
//! - `"kind": "bytes"`: the bytes of a plain-bytes runtime component with
//!   no registration, as an array of numbers;
//! - `"kind": "unregistered"`: `{"unregistered": type name}` for anything
//!   else: the inspector cannot read a Rust value it has no registration for.

use doecs::{ComponentId, Entity, WorldCore};
use doecs_registry::{ComponentRegistry, Storage};
use serde_json::{json, Value};
use std::collections::HashMap;

/// The name the inspector shows for component `id`.
pub fn display_name(world: &WorldCore, registry: &ComponentRegistry, id: ComponentId) -> String {
    if let Some(reg) = registry.for_component(world, id) {
        return reg.name().to_owned();
    }
    world
        .components()
        .get_info(id)
        .map_or_else(|| format!("#{}", id.index()), |i| i.name().to_owned())
}

/// Where component `id` is stored: `"table"` or `"sparse"`.
pub fn storage(world: &WorldCore, id: ComponentId) -> &'static str {
    let sparse = world
        .components()
        .get_info(id)
        .is_some_and(|i| i.is_sparse());
    Storage::of_sparse(sparse).as_str()
}

/// Whether component `id` is stored sparse.
pub fn is_sparse(world: &WorldCore, id: ComponentId) -> bool {
    world
        .components()
        .get_info(id)
        .is_some_and(|i| i.is_sparse())
}

/// `entity`'s components: its archetype's, then its sparse ones (none for
/// an entity that is not alive).
pub fn of_entity(world: &WorldCore, entity: Entity) -> Vec<ComponentId> {
    world
        .entity(entity)
        .map(|e| e.components().map(|info| info.id()).collect())
        .unwrap_or_default()
}

/// The component a request names: by registration name, then by the
/// world's own name.
pub fn resolve(world: &WorldCore, registry: &ComponentRegistry, name: &str) -> Option<ComponentId> {
    registry
        .by_name(name)
        .and_then(|r| r.component_id(world))
        .or_else(|| world.components().id_by_name(name))
}

/// Every name in `names`, resolved, or a 400 naming the unknown ones.
pub fn resolve_all(
    world: &WorldCore,
    registry: &ComponentRegistry,
    names: &[String],
) -> Result<Vec<ComponentId>, crate::ApiError> {
    let mut ids = Vec::with_capacity(names.len());
    let mut unknown = Vec::new();
    for n in names {
        match resolve(world, registry, n) {
            Some(id) => ids.push(id),
            None => unknown.push(n.as_str()),
        }
    }
    if unknown.is_empty() {
        Ok(ids)
    } else {
        Err(crate::ApiError::bad_request(format!(
            "unknown component(s): {} (GET /api/components lists them)",
            unknown.join(", ")
        )))
    }
}

/// `entity`'s value of component `id` as `{"kind": ..., "value": ...}`
/// (see the module docs). The entity must have the component.
pub fn value(
    world: &WorldCore,
    registry: &ComponentRegistry,
    entity: Entity,
    id: ComponentId,
) -> Value {
    let Some(info) = world.components().get_info(id) else {
        return json!({ "kind": "error", "value": format!("no component #{}", id.index()) });
    };
    let shown = match registry.for_component(world, id) {
        Some(reg) if reg.is_serde() => reg.value_json(world, entity).map(|v| ("json", v)),
        Some(reg) => reg
            .value_text(world, entity)
            .map(|t| ("debug", Value::String(t))),
        None if info.is_plain_bytes() => world
            .get_bytes(entity, id)
            .map(|b| ("bytes", json!(b)))
            .map_err(Into::into),
        None => Ok((
            "unregistered",
            json!({ "unregistered": info.type_name().unwrap_or(info.name()) }),
        )),
    };
    match shown {
        Ok((kind, value)) => json!({ "kind": kind, "value": value }),
        Err(e) => json!({ "kind": "error", "value": e.to_string() }),
    }
}

/// One component of an entity: its id, name, type, size, storage and
/// value.
pub fn component_entry(
    world: &WorldCore,
    registry: &ComponentRegistry,
    entity: Entity,
    id: ComponentId,
) -> Value {
    let info = world.components().get_info(id);
    let mut entry = value(world, registry, entity, id);
    entry["id"] = json!(id.index());
    entry["name"] = json!(display_name(world, registry, id));
    entry["type"] = json!(info.and_then(|i| i.type_name()));
    entry["size"] = json!(info.map(|i| i.layout().size()));
    entry["storage"] = json!(storage(world, id));
    entry
}

/// The JSON of `GET /api/components`: every component the world knows, with
/// its layout, whether it is registered (and how), and where it is stored:
/// its `storage`, how many `entities` have it, and in how many
/// `archetypes` (none for a sparse component, whose count is its set's).
pub fn list(world: &WorldCore, registry: &ComponentRegistry) -> Value {
    let sparse: HashMap<ComponentId, usize> = doecs::raw::sparse_columns(world)
        .iter()
        .map(|c| (c.component, c.entities.len()))
        .collect();
    let comps: Vec<Value> = world
        .components()
        .iter()
        .map(|info| {
            let id = info.id();
            let reg = registry.for_component(world, id);
            let (entities, archetypes) = match sparse.get(&id) {
                Some(&len) => (len, 0),
                None => doecs::raw::archetypes(world)
                    .iter()
                    .filter(|a| a.has(id))
                    .fold((0usize, 0usize), |(e, n), a| (e + a.len(), n + 1)),
            };
            json!({
                "id": id.index(),
                "name": display_name(world, registry, id),
                "world_name": info.name(),
                "type": info.type_name(),
                "size": info.layout().size(),
                "align": info.layout().align(),
                "plain_bytes": info.is_plain_bytes(),
                "registered": reg.is_some(),
                "serde": reg.is_some_and(|r| r.is_serde()),
                "storage": storage(world, id),
                "entities": entities,
                "archetypes": archetypes,
            })
        })
        .collect();
    json!({ "components": comps })
}
