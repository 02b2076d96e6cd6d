//! Prefabs and their instances (`GET /api/prefabs`).
//!
//! A prefab is an entity other entities are instances of: the target of an
//! `(IsA, prefab)` pair, or an entity with the [`Prefab`] tag (which hides
//! it from queries that do not ask for it) even before it has instances.
//! Each is listed with its reference (id, name, components), its number of
//! direct instances (the sources of its `IsA` pairs; an instance of an
//! instance counts for the prefab it names), whether it has the tag, and
//! the prefab it is itself an instance of, if any.
//!
//! The list is sorted by instances, most first, then by id, and paged.
//! Finding the prefabs reads the `IsA` pairs once
//! ([`Relations::pairs_of_relation`](doecs::Relations::pairs_of_relation))
//! and the archetypes (or sparse set) holding the tag, never every entity.

use crate::entity::entity_ref;
use doecs::{Entity, IsA, Prefab, WorldCore};
use doecs_registry::ComponentRegistry;
use serde_json::{json, Value};
use std::any::TypeId;
use std::collections::BTreeMap;

/// Per prefab: its number of direct instances and whether it is tagged.
fn census(world: &WorldCore) -> BTreeMap<Entity, (u64, bool)> {
    let mut prefabs = BTreeMap::<Entity, (u64, bool)>::new();
    for (_, prefab) in world.relations().pairs_of_relation(TypeId::of::<IsA>()) {
        prefabs.entry(prefab).or_default().0 += 1;
    }
    let Some(tag) = world.components().by_type_id(TypeId::of::<Prefab>()) else {
        return prefabs;
    };
    let mut mark = |e: Entity| prefabs.entry(e).or_default().1 = true;
    if crate::components::is_sparse(world, tag) {
        for column in doecs::raw::sparse_columns(world) {
            if column.component == tag {
                column.entities.iter().copied().for_each(&mut mark);
            }
        }
    } else {
        for arch in doecs::raw::archetypes(world).iter().filter(|a| a.has(tag)) {
            arch.entities().iter().copied().for_each(&mut mark);
        }
    }
    prefabs
}

/// The JSON of `GET /api/prefabs`: `total` prefabs, `instances` in all,
/// and the page from `offset` of at most `limit` prefabs (see the module
/// docs).
pub fn list(world: &WorldCore, registry: &ComponentRegistry, offset: usize, limit: usize) -> Value {
    let mut prefabs: Vec<(Entity, u64, bool)> = census(world)
        .into_iter()
        .map(|(e, (n, tagged))| (e, n, tagged))
        .collect();
    prefabs.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    let instances: u64 = prefabs.iter().map(|p| p.1).sum();
    let page: Vec<Value> = prefabs
        .iter()
        .skip(offset)
        .take(limit)
        .map(|&(e, n, tagged)| {
            json!({
                "entity": entity_ref(world, registry, e),
                "instances": n,
                "tagged": tagged,
                "instance_of": world.prefab_of(e).map(|p| entity_ref(world, registry, p)),
            })
        })
        .collect();
    json!({
        "total": prefabs.len(),
        "instances": instances,
        "offset": offset,
        "limit": limit,
        "prefabs": page,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use doecs::World;

    #[test]
    fn counts_instances_per_prefab_and_finds_tagged_ones_without_any() {
        let mut world = World::new();
        let drone = world.spawn((Prefab, 1u32));
        let tank = world.spawn((Prefab, 2u32));
        let lonely = world.spawn((Prefab,));
        let untagged = world.spawn((3u32,));
        for _ in 0..3 {
            let e = world.spawn(());
            world.add_pair(e, drone, IsA).unwrap();
        }
        let heavy = world.spawn(());
        world.add_pair(heavy, tank, IsA).unwrap();
        let e = world.spawn(());
        world.add_pair(e, untagged, IsA).unwrap();
        let registry = ComponentRegistry::new();
        let all = list(&world, &registry, 0, 10);
        assert_eq!(all["total"], 4);
        assert_eq!(all["instances"], 5);
        let rows: Vec<(String, u64, bool)> = all["prefabs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| {
                (
                    p["entity"]["id"].as_str().unwrap().to_owned(),
                    p["instances"].as_u64().unwrap(),
                    p["tagged"].as_bool().unwrap(),
                )
            })
            .collect();
        assert_eq!(
            rows,
            [
                (drone.to_string(), 3, true),
                (tank.to_string(), 1, true),
                (untagged.to_string(), 1, false),
                (lonely.to_string(), 0, true),
            ]
        );
        let page = list(&world, &registry, 1, 2);
        assert_eq!(page["prefabs"].as_array().unwrap().len(), 2);
        assert_eq!(page["prefabs"][0]["entity"]["id"], tank.to_string());
        // Despawning a prefab takes its instances with it.
        world.despawn(drone).unwrap();
        let after = list(&world, &registry, 0, 10);
        assert_eq!(after["total"], 3);
        assert_eq!(after["instances"], 2);
    }
}
