//! One entity (`GET /api/entity/{id}`) and the hierarchy (`GET /api/roots`).
//!
//! An entity's detail lists its components with their values, its
//! archetype's then its sparse ones, each with its `"storage"` (see
//! [`crate::components`]), and what the world's managers hold for it:
//! its transform (local and world, as translation, rotation and scale) and
//! its DataComponent record (by path, or by key hash when the store keeps
//! no names). Relationships are a list of `{"relation", "target"}` pairs,
//! as in flecs: every pair the world holds for the entity (its `ChildOf`
//! parent, its `IsA` prefab, any user relation, by the relation's short
//! type name); `incoming` counts the pairs pointing at it, by relation,
//! and `incoming_pairs` lists them per relation, `{"relation", "total",
//! "sources"}`, at most [`MAX_INCOMING`] sources each (a prefab's
//! instances, the entities that escort it), with the total beside.
//! `parent` and `children` are the world's `ChildOf` hierarchy, the one
//! scene graph: a [`TransformManager`] in a world follows it, so its links
//! never name a parent `ChildOf` does not.
//!
//! An id that is stale (its entity was despawned) or was never issued is a
//! 404, never a guess: ids are weak references.
//!
//! Children are listed in id order (the manager keeps them most recently
//! linked first), at most [`MAX_CHILDREN`] of them, with the total beside.

use crate::components::{component_entry, display_name, of_entity};
use crate::error::ApiError;
use doecs::{Entity, WorldCore};
use doecs_data::DataStore;
use doecs_registry::ComponentRegistry;
use doecs_transform::TransformManager;
use glam::Affine3A;
use serde_json::{json, Value};

/// The most children one entity's detail lists.
pub const MAX_CHILDREN: usize = 1000;

/// The most sources of one relation an entity's incoming pairs list.
pub const MAX_INCOMING: usize = 100;

/// The 404 for an id that names no live entity.
pub fn not_alive(entity: Entity) -> ApiError {
    ApiError::not_found(format!(
        "entity {entity} (bits {}) is not alive: it was despawned, or never issued",
        entity.to_bits()
    ))
}

/// The entity, or a 404 when it is not alive.
pub fn live(world: &WorldCore, entity: Entity) -> Result<Entity, ApiError> {
    if world.contains_entity(entity) {
        Ok(entity)
    } else {
        Err(not_alive(entity))
    }
}

/// `entity`'s `ChildOf` children, in id order.
pub fn children_of(world: &WorldCore, entity: Entity) -> Vec<Entity> {
    let mut children: Vec<Entity> = world.children(entity).collect();
    children.sort_unstable();
    children
}

/// A short reference to an entity, for lists and trees: its id, its name
/// (`null` without one), its components' names (sparse ones last) and how
/// many children it has.
pub fn entity_ref(world: &WorldCore, registry: &ComponentRegistry, entity: Entity) -> Value {
    let components: Vec<String> = of_entity(world, entity)
        .into_iter()
        .map(|c| display_name(world, registry, c))
        .collect();
    let children = world.children(entity).count();
    json!({
        "id": entity.to_string(),
        "bits": entity.to_bits(),
        "name": world.name_of(entity),
        "components": components,
        "children": children,
    })
}

/// An affine transform as translation, rotation (quaternion `x, y, z, w`)
/// and scale.
fn affine_json(a: Affine3A) -> Value {
    let (scale, rotation, translation) = a.to_scale_rotation_translation();
    json!({
        "translation": translation.to_array(),
        "rotation": rotation.to_array(),
        "scale": scale.to_array(),
    })
}

/// What the world's managers hold for `entity`.
fn managers(world: &WorldCore, entity: Entity) -> Value {
    let mut out = serde_json::Map::new();
    if let Some(tm) = world.manager::<TransformManager>() {
        if let Some(inst) = tm.lookup(entity) {
            let local = tm.local(inst).map(affine_json);
            let world_t = tm.world(inst).map(affine_json);
            out.insert(
                "transform".into(),
                json!({ "local": local, "world": world_t }),
            );
        }
    }
    if let Some(data) = world.manager::<DataStore>() {
        if let Some(record) = data_record(data, entity) {
            out.insert("data".into(), record);
        }
    }
    Value::Object(out)
}

/// `entity`'s DataComponent record: as JSON by path names when the store
/// keeps them, else by key hash (a store made without names cannot give
/// the paths back).
fn data_record(data: &DataStore, entity: Entity) -> Option<Value> {
    if !data.contains(entity) {
        return None;
    }
    if let Ok(Some(record)) = data.to_json(entity) {
        return Some(record);
    }
    let by_hash: serde_json::Map<String, Value> = data
        .entries(entity)
        .map(|e| (e.key.to_string(), e.value.to_json()))
        .collect();
    Some(json!({ "keys": "hashed (this store keeps no path names)", "entries": by_hash }))
}

/// The JSON of `GET /api/entity/{id}`, or a 404.
pub fn detail(
    world: &WorldCore,
    registry: &ComponentRegistry,
    entity: Entity,
) -> Result<Value, ApiError> {
    let loc = doecs::raw::location(world, entity).map_err(|_| not_alive(entity))?;
    let components: Vec<Value> = of_entity(world, entity)
        .into_iter()
        .map(|c| component_entry(world, registry, entity, c))
        .collect();
    let parent = world.parent(entity);
    let children = children_of(world, entity);
    let total = children.len();
    let listed: Vec<Value> = children
        .iter()
        .take(MAX_CHILDREN)
        .map(|&c| entity_ref(world, registry, c))
        .collect();
    let relationships: Vec<Value> = world
        .relations()
        .pairs_from(entity)
        .into_iter()
        .map(|(relation, target)| {
            json!({
                "relation": short_type_name(relation),
                "target": entity_ref(world, registry, target),
            })
        })
        .collect();
    let (incoming, incoming_pairs) = incoming(world, registry, entity);
    Ok(json!({
        "id": entity.to_string(),
        "bits": entity.to_bits(),
        "name": world.name_of(entity),
        "path": world.path_of(entity),
        "index": entity.index(),
        "generation": entity.generation(),
        "archetype": loc.archetype.index(),
        "row": loc.row.index(),
        "components": components,
        "parent": parent.map(|p| entity_ref(world, registry, p)),
        "children": listed,
        "children_total": total,
        "relationships": relationships,
        "incoming": incoming,
        "incoming_pairs": incoming_pairs,
        "managers": managers(world, entity),
        "observers": world
            .observers()
            .filter(|o| o.entity == Some(entity))
            .map(|o| observer_json(world, registry, &o))
            .collect::<Vec<_>>(),
    }))
}

/// The pairs pointing at `entity`: their number by relation (short type
/// name), and per relation, in the order the relations were first used,
/// `{"relation", "total", "sources"}` with the first [`MAX_INCOMING`]
/// sources in attachment order. Nothing is collected beyond that: a
/// prefab with a million instances costs a count, not a list.
fn incoming(
    world: &WorldCore,
    registry: &ComponentRegistry,
    entity: Entity,
) -> (std::collections::BTreeMap<String, u64>, Vec<Value>) {
    let mut counts = std::collections::BTreeMap::<String, u64>::new();
    let mut pairs = Vec::new();
    let relations = world.relations();
    for (relation, name, _) in relations.kinds() {
        let (mut total, mut sources) = (0u64, Vec::new());
        relations.for_each_source_of(relation, entity, &mut |source| {
            total += 1;
            if sources.len() < MAX_INCOMING {
                sources.push(source);
            }
        });
        if total == 0 {
            continue;
        }
        let short = short_type_name(name);
        *counts.entry(short.clone()).or_default() += total;
        let sources: Vec<Value> = sources
            .into_iter()
            .map(|s| entity_ref(world, registry, s))
            .collect();
        pairs.push(json!({ "relation": short, "total": total, "sources": sources }));
    }
    (counts, pairs)
}

/// One observer as JSON: its name, event, component and entity.
pub fn observer_json(
    world: &WorldCore,
    registry: &ComponentRegistry,
    observer: &doecs::ObserverInfo,
) -> Value {
    json!({
        "id": observer.id.index(),
        "name": observer.name,
        "event": short_type_name(observer.event),
        "component": observer.component.map(|c| display_name(world, registry, c)),
        "entity": observer.entity.map(|e| entity_ref(world, registry, e)),
    })
}

/// The JSON of `GET /api/observers`: every observer, in the order they
/// run (registration order). Observers are not entities; this lists them.
pub fn observers(world: &WorldCore, registry: &ComponentRegistry) -> Value {
    let list: Vec<Value> = world
        .observers()
        .map(|o| observer_json(world, registry, &o))
        .collect();
    json!({ "count": list.len(), "observers": list })
}

/// A relation's type name without its module path (`doecs::relation::ChildOf`
/// is `ChildOf`; generic arguments keep theirs).
pub(crate) fn short_type_name(name: &str) -> String {
    let head = name.split('<').next().unwrap_or(name);
    let short = head.rsplit("::").next().unwrap_or(head);
    format!("{short}{}", &name[head.len()..])
}

/// The JSON of `GET /api/roots`: entities with no `ChildOf` parent, in id
/// order, paged.
pub fn roots(
    world: &WorldCore,
    registry: &ComponentRegistry,
    offset: usize,
    limit: usize,
) -> Value {
    let mut roots: Vec<Entity> = doecs::raw::archetypes(world)
        .iter()
        .flat_map(|a| a.entities().iter().copied())
        .filter(|&e| world.parent(e).is_none())
        .collect();
    roots.sort_unstable();
    let total = roots.len();
    let page: Vec<Value> = roots
        .iter()
        .skip(offset)
        .take(limit)
        .map(|&e| entity_ref(world, registry, e))
        .collect();
    json!({ "total": total, "offset": offset, "limit": limit, "results": page })
}
