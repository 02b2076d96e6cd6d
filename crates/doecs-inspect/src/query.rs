//! `GET /api/query`: entities by component names, paged, like flecs's
//! `/query?expr=`.
//!
//! `with=position,velocity` keeps entities that have every named component,
//! `without=spin` drops those with any of these; both take registration or
//! world names, and an unknown name is a 400 rather than an empty result.
//! The query walks whole archetypes (the component set decides for all
//! their rows at once), counts every match for `total`, and builds JSON
//! only for the page `offset..offset + limit`. Sparse components (stored
//! outside archetypes) are terms too: an archetype that the other terms
//! keep is then walked row by row, each entity looked up in the sparse
//! sets. Results come in archetype order, then row order: paging is stable
//! while the world does not change. `values=true` adds each result's
//! component values, sparse ones included.

use crate::components::{component_entry, display_name, is_sparse, of_entity, resolve_all};
use crate::entity::entity_ref;
use crate::error::ApiError;
use doecs::{ComponentId, Entity, WorldCore};
use doecs_registry::ComponentRegistry;
use serde_json::{json, Value};

/// The most results one page holds.
pub const MAX_LIMIT: usize = 1000;
/// Results per page when `limit` is not given.
pub const DEFAULT_LIMIT: usize = 50;
/// The most component names in `with` plus `without`.
pub const MAX_TERMS: usize = 32;

/// A parsed query.
#[derive(Debug, Clone, Default)]
pub struct QuerySpec {
    /// Names the results must have.
    pub with: Vec<String>,
    /// Names the results must not have.
    pub without: Vec<String>,
    /// Results skipped.
    pub offset: usize,
    /// Most results returned.
    pub limit: usize,
    /// Whether to include component values.
    pub values: bool,
}

/// Runs `spec` on `world`.
pub fn run(
    world: &WorldCore,
    registry: &ComponentRegistry,
    spec: &QuerySpec,
) -> Result<Value, ApiError> {
    if spec.with.len() + spec.without.len() > MAX_TERMS {
        return Err(ApiError::bad_request(format!(
            "a query takes at most {MAX_TERMS} component names"
        )));
    }
    let with = resolve_all(world, registry, &spec.with)?;
    let without = resolve_all(world, registry, &spec.without)?;
    // Table terms decide per archetype, sparse ones per entity.
    let split = |ids: &[ComponentId]| -> (Vec<ComponentId>, Vec<ComponentId>) {
        ids.iter().partition(|&&c| !is_sparse(world, c))
    };
    let (with_table, with_sparse) = split(&with);
    let (without_table, without_sparse) = split(&without);
    let page_end = spec.offset.saturating_add(spec.limit);
    let result = |e: Entity| -> Value {
        let mut r = entity_ref(world, registry, e);
        if spec.values {
            r["values"] = of_entity(world, e)
                .into_iter()
                .map(|c| component_entry(world, registry, e, c))
                .collect();
        }
        r
    };
    let mut total = 0usize;
    let mut results = Vec::new();
    for arch in doecs::raw::archetypes(world).iter() {
        if arch.is_empty()
            || !with_table.iter().all(|&c| arch.has(c))
            || without_table.iter().any(|&c| arch.has(c))
        {
            continue;
        }
        if with_sparse.is_empty() && without_sparse.is_empty() {
            let start = total;
            total += arch.len();
            // The part of the page inside this archetype's rows.
            let from = spec.offset.max(start);
            let to = page_end.min(total);
            for &e in arch
                .entities()
                .get(from - start..to.saturating_sub(start))
                .unwrap_or(&[])
            {
                results.push(result(e));
            }
            continue;
        }
        for &e in arch.entities() {
            if !with_sparse.iter().all(|&c| world.has_id(e, c))
                || without_sparse.iter().any(|&c| world.has_id(e, c))
            {
                continue;
            }
            if (spec.offset..page_end).contains(&total) {
                results.push(result(e));
            }
            total += 1;
        }
    }
    let names = |ids: &[ComponentId]| -> Vec<String> {
        ids.iter()
            .map(|&c| display_name(world, registry, c))
            .collect()
    };
    Ok(json!({
        "with": names(&with),
        "without": names(&without),
        "total": total,
        "offset": spec.offset,
        "limit": spec.limit,
        "results": results,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use doecs::World;

    #[test]
    fn pages_across_archetypes() {
        let mut world = World::new();
        world.spawn_batch((0..10u32).map(|i| (i,)));
        world.spawn_batch((0..10u32).map(|i| (i, 1.0f32)));
        world.spawn_batch((0..10u32).map(|i| (i, 1u8)));
        let registry = ComponentRegistry::new();
        let u32_name = std::any::type_name::<u32>().to_owned();
        let f32_name = std::any::type_name::<f32>().to_owned();
        let spec = |offset, limit, without: Vec<String>| QuerySpec {
            with: vec![u32_name.clone()],
            without,
            offset,
            limit,
            values: true,
        };
        let r = run(&world, &registry, &spec(5, 10, vec![])).unwrap();
        assert_eq!(r["total"], 30);
        assert_eq!(r["results"].as_array().unwrap().len(), 10);
        let r = run(&world, &registry, &spec(25, 10, vec![])).unwrap();
        assert_eq!(r["results"].as_array().unwrap().len(), 5);
        let r = run(&world, &registry, &spec(0, 100, vec![f32_name])).unwrap();
        assert_eq!(r["total"], 20);
        assert_eq!(r["results"][0]["values"][0]["kind"], "unregistered");
        let r = run(&world, &registry, &spec(1000, 10, vec![])).unwrap();
        assert_eq!(r["results"].as_array().unwrap().len(), 0);
        let bad = QuerySpec {
            with: vec!["nope".into()],
            ..QuerySpec::default()
        };
        assert_eq!(run(&world, &registry, &bad).unwrap_err().status, 400);
    }
}
