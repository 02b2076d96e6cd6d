//! `GET /api/query`: the query language over HTTP, and the JSON of its
//! results, which the `doecs query` command prints too.
//!
//! Design. The route only reads parameters; everything else is here, so
//! the API, the page and the command show results the same way. Both
//! forms of the request become one [`Query`]: `expr=` is parsed, and the
//! older `with=a,b&without=c` is turned into the query `a, b, !c`
//! (printed and parsed again, so its errors point at columns of that
//! text, which the answer's `expr` shows). The answer:
//!
//! ```text
//! {"expr": "position, (ChildOf, $p)", "with": ["position"], "without": [],
//!  "variables": ["p"], "optional": [], "tick": 812, "since": 0,
//!  "total": 4000, "offset": 0, "limit": 50,
//!  "results": [{"id": "1v0", "bits": 1, "name": "ship0.part0", "components": [...],
//!               "children": 2, "vars": {"p": {"id": "0v0", "bits": 0, "name": "ship0"}},
//!               "optional": [], "values": [...]}, ...]}
//! ```
//!
//! `vars` maps each variable to its target (`null` when only an optional
//! term binds it and none did); `optional` lists the optional component
//! terms the entity matched; `values` (with `values=true`) is every
//! component's value, as `GET /api/entity` shows them. `tick` is the
//! world's change tick the answer read up to: pass it as `since=` to see
//! what changed after it (see the [module docs](super)). A query error is
//! a 400 with the column: `{"error": "expected ')' at column 17, found
//! ','", "column": 17, "status": 400}`.

use super::ast::{Ident, Oper, Query, Term, TermKind};
use super::{parse, Match, Plan, QueryError};
use crate::components::{component_entry, display_name, of_entity};
use crate::entity::entity_ref;
use crate::error::ApiError;
use crate::parse::QueryString;
use crate::query::{DEFAULT_LIMIT, MAX_LIMIT};
use doecs::{ChangeWindow, ComponentId, Entity, Tick, World};
use doecs_registry::ComponentRegistry;
use serde_json::{json, Map, Value};

/// The parameters `GET /api/query` takes.
pub const PARAMS: &[&str] = &[
    "expr", "with", "without", "offset", "limit", "values", "since",
];

/// A query request, parsed.
#[derive(Debug, Clone)]
pub struct Request {
    /// The query.
    pub query: Query,
    /// Results skipped.
    pub offset: usize,
    /// Most results returned.
    pub limit: usize,
    /// Whether to include every component's value.
    pub values: bool,
    /// The change window starts after this tick.
    pub since: u64,
}

impl Request {
    /// The request in a query string (see the module docs).
    ///
    /// # Errors
    /// A 400 for an unknown parameter, a bad number, both forms at once,
    /// or a query that does not parse (with its column).
    pub fn from_params(q: &QueryString) -> Result<Request, ApiError> {
        q.only(PARAMS)?;
        let query = match q.get("expr") {
            Some(expr) => {
                if q.get("with").is_some() || q.get("without").is_some() {
                    return Err(ApiError::bad_request(
                        "give either expr= or with=/without=, not both",
                    ));
                }
                parse(expr)?
            }
            None => from_lists(&q.list("with"), &q.list("without"))?,
        };
        let since = match q.get("since") {
            None => 0,
            Some(s) => s.parse::<u64>().map_err(|_| {
                ApiError::bad_request(format!(
                    "query parameter \"since\" must be a change tick (a whole number), got \"{}\"",
                    s.chars().take(32).collect::<String>()
                ))
            })?,
        };
        Ok(Request {
            query,
            offset: q.usize_or("offset", 0, usize::MAX)?,
            limit: q.usize_or("limit", DEFAULT_LIMIT, MAX_LIMIT)?,
            values: q.flag("values")?,
            since,
        })
    }
}

/// The query `with[0], with[1], ..., !without[0], ...`: the older form of
/// the request. Printed and parsed again, so that its columns are those of
/// its canonical text.
///
/// # Errors
/// [`QueryError::TooManyTerms`] past [`super::MAX_TERMS`] names (and any
/// other error of parsing the text, which cannot happen for non-empty
/// names).
pub fn from_lists(with: &[String], without: &[String]) -> Result<Query, QueryError> {
    let term = |oper, name: &String| Term {
        oper,
        kind: TermKind::Component(Ident::new(name.clone(), 0)),
        column: 0,
    };
    let terms: Vec<Term> = with
        .iter()
        .map(|n| term(Oper::And, n))
        .chain(without.iter().map(|n| term(Oper::Not, n)))
        .collect();
    if terms.is_empty() {
        // No names: every entity (the empty text does not parse).
        return Ok(Query::default());
    }
    parse(&Query { terms }.to_string())
}

/// Answers `request` on `world`. A query with change filters asks the
/// world to keep row stamps for them and, after reading, moves its change
/// clock on by one tick (see the [module docs](super)).
///
/// # Errors
/// A 400 with the column for a name that resolves to nothing, or a join
/// past its bound.
pub fn answer(
    world: &mut World,
    registry: &ComponentRegistry,
    request: &Request,
) -> Result<Value, ApiError> {
    let plan = Plan::new(world, registry, &request.query)?;
    for id in plan.tracked() {
        world.track_changes_by_id(id);
    }
    let now = world.change_tick();
    let answer = respond(world, registry, &plan, request, now)?;
    if plan.has_changes() {
        doecs::raw::set_change_tick(world, now.next());
    }
    Ok(answer)
}

/// [`answer`] through shared access: the clock stays, and change filters
/// on components without row stamps decide by chunk.
///
/// # Errors
/// As [`answer`].
pub fn answer_shared(
    world: &World,
    registry: &ComponentRegistry,
    request: &Request,
) -> Result<Value, ApiError> {
    let plan = Plan::new(world, registry, &request.query)?;
    respond(world, registry, &plan, request, world.change_tick())
}

fn respond(
    world: &World,
    registry: &ComponentRegistry,
    plan: &Plan,
    request: &Request,
    now: Tick,
) -> Result<Value, ApiError> {
    let window = ChangeWindow {
        last_run: Tick::new(request.since),
        this_run: now,
    };
    let page = plan.run(world, window, request.offset, request.limit)?;
    let results: Vec<Value> = page
        .iter()
        .map(|m| result_json(world, registry, plan, m, request.values))
        .collect();
    let names = |ids: &[ComponentId]| -> Vec<String> {
        ids.iter()
            .map(|&id| display_name(world, registry, id))
            .collect()
    };
    Ok(json!({
        "expr": request.query.to_string(),
        "with": names(plan.with_components()),
        "without": names(plan.without_components()),
        "variables": plan.variables(),
        "optional": names(plan.optional()),
        "tick": now.get(),
        "since": request.since,
        "total": page.total,
        "offset": request.offset,
        "limit": request.limit,
        "results": results,
    }))
}

/// A short reference to a variable's target: id, bits and name.
pub fn binding_json(world: &World, entity: Option<Entity>) -> Value {
    match entity {
        None => Value::Null,
        Some(e) => json!({
            "id": e.to_string(),
            "bits": e.to_bits(),
            "name": world.name_of(e),
        }),
    }
}

/// One result as JSON: the entity's short reference (see
/// [`entity_ref`]), its variables' bindings when the query has any, the
/// optional terms it matched when the query has any, and every
/// component's value when `values`.
pub fn result_json(
    world: &World,
    registry: &ComponentRegistry,
    plan: &Plan,
    m: Match<'_>,
    values: bool,
) -> Value {
    let mut r = entity_ref(world, registry, m.entity);
    if !plan.variables().is_empty() {
        let vars: Map<String, Value> = plan
            .variables()
            .iter()
            .zip(m.bindings())
            .map(|(name, b)| (name.clone(), binding_json(world, b)))
            .collect();
        r["vars"] = Value::Object(vars);
    }
    if !plan.optional().is_empty() {
        let present: Vec<String> = plan
            .optional()
            .iter()
            .filter(|&&id| world.has_id(m.entity, id))
            .map(|&id| display_name(world, registry, id))
            .collect();
        r["optional"] = json!(present);
    }
    if values {
        r["values"] = of_entity(world, m.entity)
            .into_iter()
            .map(|c| component_entry(world, registry, m.entity, c))
            .collect();
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_older_form_becomes_a_query() {
        let q = from_lists(&["position".into(), "a b".into()], &["spin".into()]).unwrap();
        assert_eq!(q.to_string(), "position, \"a b\", !spin");
        assert_eq!(q.terms[2].column, 18);
        assert_eq!(from_lists(&[], &[]).unwrap(), Query::default());
        let many: Vec<String> = (0..40).map(|i| format!("c{i}")).collect();
        assert!(matches!(
            from_lists(&many, &[]),
            Err(QueryError::TooManyTerms { .. })
        ));
    }
}
