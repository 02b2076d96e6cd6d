//! The world at a glance (`GET /api/world`) and its archetypes
//! (`GET /api/archetypes`).
//!
//! Memory is counted the way the storage lays it out: a row is the entity
//! id plus one value of every column, so an archetype *uses* `row bytes ×
//! rows` and *reserves* `row bytes × capacity`
//! ([`Archetype::memory_bytes`](doecs::raw::Archetype), the
//! room kept for rows that despawns emptied included). Chunk fill is the
//! rows over the room of the chunks they span: a full archetype is 1.0,
//! and only its last chunk can be partly empty.
//!
//! Sparse components live in sparse sets, not in archetypes: the archetype
//! table leaves them out, and the summary counts them apart
//! (`sparse_components`, `sparse_values`, `sparse_bytes_used`: value bytes
//! plus one entity id per value).

use crate::components::display_name;
use doecs::raw::Archetype;
use doecs::{Entity, WorldCore};
use doecs_registry::ComponentRegistry;
use doecs_transform::TransformManager;
use serde_json::{json, Value};

/// Bytes of one row of `arch`: the entity id and one value per column.
fn row_bytes(world: &WorldCore, arch: &Archetype) -> usize {
    std::mem::size_of::<Entity>()
        + arch
            .components()
            .iter()
            .map(|&c| world.components().info(c).layout().size())
            .sum::<usize>()
}

/// Rows over the room of the chunks they span (1.0 for an empty archetype).
fn fill(arch: &Archetype) -> f64 {
    let room = arch.chunk_count() * arch.chunk_rows();
    if room == 0 {
        1.0
    } else {
        arch.len() as f64 / room as f64
    }
}

/// One archetype's row of the table.
fn archetype_json(world: &WorldCore, registry: &ComponentRegistry, arch: &Archetype) -> Value {
    let row = row_bytes(world, arch);
    let names: Vec<String> = arch
        .components()
        .iter()
        .map(|&c| display_name(world, registry, c))
        .collect();
    json!({
        "id": arch.id().index(),
        "components": names,
        "entities": arch.len(),
        "capacity": arch.capacity(),
        "chunks": arch.chunk_count(),
        "chunk_rows": arch.chunk_rows(),
        "fill": fill(arch),
        "row_bytes": row,
        "bytes_used": row * arch.len(),
        "bytes_reserved": arch.memory_bytes(),
    })
}

/// The JSON of `GET /api/archetypes`, in id order. The empty archetype (no
/// components) is listed only when `include_empty` or it holds entities.
pub fn archetypes(world: &WorldCore, registry: &ComponentRegistry, include_empty: bool) -> Value {
    let list: Vec<Value> = doecs::raw::archetypes(world)
        .iter()
        .filter(|a| include_empty || !a.is_empty())
        .map(|a| archetype_json(world, registry, a))
        .collect();
    json!({ "chunk_bytes": doecs::raw::archetypes(world).chunk_bytes(), "archetypes": list })
}

/// The JSON of `GET /api/world`, before the inspector adds its own state.
pub fn world(world: &WorldCore) -> Value {
    let archetypes = doecs::raw::archetypes(world);
    let (mut chunks, mut used, mut non_empty) = (0usize, 0usize, 0usize);
    for a in archetypes.iter() {
        chunks += a.chunk_count();
        used += row_bytes(world, a) * a.len();
        non_empty += usize::from(!a.is_empty());
    }
    let transforms = world.manager::<TransformManager>().map(|m| m.len());
    let sparse = doecs::raw::sparse_columns(world);
    let sparse_values: usize = sparse.iter().map(|c| c.entities.len()).sum();
    let sparse_bytes: usize = (sparse.iter())
        .map(|c| {
            let size = world.components().info(c.component).layout().size();
            c.entities.len() * (size + std::mem::size_of::<Entity>())
        })
        .sum();
    json!({
        "entities": world.len(),
        "archetypes": archetypes.len(),
        "archetypes_in_use": non_empty,
        "chunks": chunks,
        "chunk_bytes": archetypes.chunk_bytes(),
        "bytes_used": used,
        "bytes_reserved": world.chunk_memory_bytes(),
        "components": world.components().len(),
        "sparse_components": sparse.len(),
        "sparse_values": sparse_values,
        "sparse_bytes_used": sparse_bytes,
        "transforms": transforms,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use doecs::World;

    #[test]
    fn counts_rows_chunks_and_bytes() {
        let mut world = World::new();
        world.spawn_batch((0..1000u32).map(|i| (i, i as f32)));
        world.spawn((1u8,));
        let registry = ComponentRegistry::new();
        let w = super::world(&world);
        assert_eq!(w["entities"], 1001);
        let row = std::mem::size_of::<Entity>() + 8;
        assert!(w["bytes_used"].as_u64().unwrap() >= (row * 1000) as u64);
        assert!(w["bytes_reserved"].as_u64() >= w["bytes_used"].as_u64());
        let a = archetypes(&world, &registry, false);
        let list = a["archetypes"].as_array().unwrap();
        assert_eq!(list.len(), 2);
        let big = list.iter().find(|a| a["entities"] == 1000).unwrap();
        assert_eq!(big["bytes_used"], row * 1000);
        let fill = big["fill"].as_f64().unwrap();
        assert!(fill > 0.5 && fill <= 1.0, "{fill}");
        assert!(big["chunks"].as_u64().unwrap() >= 1);
    }
}
