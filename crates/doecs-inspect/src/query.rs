//! The older form of `GET /api/query`: entities by component names, paged,
//! like flecs's `/query?expr=`.
//!
//! `with=position,velocity` keeps entities that have every named component,
//! `without=spin` drops those with any of these; both take registration or
//! world names, and an unknown name is a 400 rather than an empty result.
//! The names become the query `position, velocity, !spin` of the query
//! language ([`crate::qlang`], which the route answers both forms with), so
//! both forms share one evaluator: whole archetypes where the component
//! sets decide, sparse components (stored outside archetypes) looked up
//! row by row, results in archetype order, then row order (paging is
//! stable while the world does not change), `total` counting every match,
//! and `values=true` adding each result's component values, sparse ones
//! included. As in typed queries, entities with a tag the world hides
//! (`Prefab`, `Disabled`) are left out unless a name asks for the tag.

use crate::error::ApiError;
use crate::qlang::api::{answer_shared, from_lists, Request};
use doecs::World;
use doecs_registry::ComponentRegistry;
use serde_json::Value;

/// The most results one page holds.
pub const MAX_LIMIT: usize = 1000;
/// Results per page when `limit` is not given.
pub const DEFAULT_LIMIT: usize = 50;
/// The most component names in `with` plus `without`.
pub const MAX_TERMS: usize = crate::qlang::MAX_TERMS;

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

/// Runs `spec` on `world`, as the query language's `with, ..., !without`.
pub fn run(
    world: &World,
    registry: &ComponentRegistry,
    spec: &QuerySpec,
) -> Result<Value, ApiError> {
    let request = Request {
        query: from_lists(&spec.with, &spec.without)?,
        offset: spec.offset,
        limit: spec.limit,
        values: spec.values,
        since: 0,
    };
    answer_shared(world, registry, &request)
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
