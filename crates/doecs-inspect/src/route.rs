//! The JSON API's routes: which handler answers which method and path.
//!
//! Modelled on flecs's REST API (`/world`, `/entity/<id>`, `/query?expr=`,
//! `/stats`), under `/api`:
//!
//! | method | path | what |
//! |---|---|---|
//! | GET | `/api` | this table, as JSON |
//! | GET | `/api/world` | entities, archetypes, chunks, bytes used and reserved, sparse values; frame, paused, write access |
//! | GET | `/api/components` | every component: name, type, size, registration, storage (table or sparse), entities |
//! | GET | `/api/archetypes[?empty=true]` | component sets, entity counts, chunks, fill, bytes |
//! | GET | `/api/entity/{id}` | name and path, components with values, parent, children, relationships, managers |
//! | GET | `/api/lookup?path=frigate/turret` | the entity at a path of names along `ChildOf` (404 if none or ambiguous) |
//! | GET | `/api/query?expr=a,!b,(ChildOf,$p)&offset=0&limit=50&values=true&since=TICK` | entities matching a query (the language of [`crate::qlang`]), paged |
//! | GET | `/api/query?with=a,b&without=c&offset=0&limit=50&values=true` | the older form: the query `a, b, !c` |
//! | GET | `/api/roots?offset=0&limit=100` | entities with no parent, paged |
//! | GET | `/api/systems?last=120&since=FRAME` | per-frame times per system, and the schedule's plan |
//! | GET | `/api/history?last=120&since=FRAME` | per frame: wall time, entities, archetypes in use, storage bytes used and reserved |
//! | GET | `/api/prefabs?offset=0&limit=100` | prefabs (targets of `IsA`, or tagged `Prefab`) with their instance counts |
//! | GET | `/api/observers` | every observer (observers are not entities): name, event, component, entity |
//! | GET | `/api/controls` | paused, pending steps, frame |
//! | POST | `/api/controls/pause`, `/step?frames=N`, `/resume` | pause, step, resume |
//! | POST | `/api/entity` | create an entity, with components from a JSON object of values by name (write access) |
//! | PUT | `/api/entity/{id}/components/{name}` | set or add a component from the JSON body (write access) |
//! | DELETE | `/api/entity/{id}/components/{name}` | remove a component (write access) |
//! | DELETE | `/api/entity/{id}` | despawn (write access) |
//!
//! `{id}` is an entity's 64-bit form or `INDEXvGENERATION`. Unknown query
//! parameters are refused (400), so a typo does not silently change the
//! answer. A known path with another method is a 405; anything else a 404.

use crate::controls::{Controls, MAX_STEP};
use crate::error::ApiError;
use crate::history::History;
use crate::parse::{parse_entity, Target};
use crate::query::MAX_LIMIT;
use crate::world_history::WorldHistory;
use crate::{components, edit, entity, prefabs, summary, ServeStats};
use doecs::World;
use doecs_registry::ComponentRegistry;
use serde_json::{json, Value};
use std::time::Instant;

/// An HTTP method, as far as the API cares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    /// GET (and HEAD).
    Get,
    /// POST.
    Post,
    /// PUT.
    Put,
    /// DELETE.
    Delete,
    /// Anything else.
    Other,
}

impl Method {
    /// The method's name.
    pub fn as_str(self) -> &'static str {
        match self {
            Method::Get => "GET",
            Method::Post => "POST",
            Method::Put => "PUT",
            Method::Delete => "DELETE",
            Method::Other => "this method",
        }
    }
}

/// A request for the simulation to answer.
#[derive(Debug, Clone)]
pub struct ApiRequest {
    /// The method.
    pub method: Method,
    /// The parsed path and query string.
    pub target: Target,
    /// The body (at most [`crate::http::MAX_BODY_BYTES`]).
    pub body: Vec<u8>,
}

/// What the routes read and change besides the world.
#[derive(Debug)]
pub(crate) struct State {
    pub registry: ComponentRegistry,
    pub write: bool,
    pub controls: Controls,
    pub history: History,
    pub world_history: WorldHistory,
    pub frame: u64,
    pub plan: Option<String>,
    pub stats: ServeStats,
    pub started: Instant,
}

/// The paths the API knows, for telling a 405 from a 404.
fn known(path: &[&str]) -> bool {
    matches!(
        path,
        ["api"]
            | [
                "api",
                "world"
                    | "components"
                    | "archetypes"
                    | "query"
                    | "roots"
                    | "systems"
                    | "history"
                    | "prefabs"
                    | "observers"
                    | "entity"
                    | "lookup"
            ]
            | ["api", "controls"]
            | ["api", "controls", "pause" | "step" | "resume"]
            | ["api", "entity", _]
            | ["api", "entity", _, "components", _]
    )
}

/// The 403 for an edit without write access.
fn read_only() -> ApiError {
    ApiError::forbidden(
        "the inspector is read-only; start it with write access (doecs run --inspect-write) to edit",
    )
}

/// The body as JSON, or a 400.
fn json_body(body: &[u8]) -> Result<Value, ApiError> {
    serde_json::from_slice(body)
        .map_err(|e| ApiError::bad_request(format!("the body is not JSON: {e}")))
}

/// The body as JSON, `null` when empty, or a 400.
fn optional_json_body(body: &[u8]) -> Result<Value, ApiError> {
    if body.iter().all(u8::is_ascii_whitespace) {
        Ok(Value::Null)
    } else {
        json_body(body)
    }
}

/// `?since=FRAME`, if given.
fn since(q: &crate::parse::QueryString) -> Result<Option<u64>, ApiError> {
    match q.get("since") {
        None => Ok(None),
        Some(_) => Ok(Some(q.usize_or("since", 0, usize::MAX)? as u64)),
    }
}

/// Answers `req` on `world`.
pub(crate) fn route(
    state: &mut State,
    world: &mut World,
    req: &ApiRequest,
) -> Result<Value, ApiError> {
    let path: Vec<&str> = req.target.path.iter().map(String::as_str).collect();
    let q = &req.target.query;
    let reg = &state.registry;
    match (req.method, path.as_slice()) {
        (Method::Get, ["api"]) => {
            q.only(&[])?;
            Ok(index())
        }
        (Method::Get, ["api", "world"]) => {
            q.only(&[])?;
            let mut w = summary::world(world);
            w["frame"] = json!(state.frame);
            w["paused"] = json!(state.controls.paused());
            w["write"] = json!(state.write);
            w["uptime_s"] = json!(state.started.elapsed().as_secs_f64());
            w["inspector"] = json!({
                "requests": state.stats.requests,
                "serve_time_us": state.stats.serve_time.as_secs_f64() * 1e6,
            });
            Ok(w)
        }
        (Method::Get, ["api", "components"]) => {
            q.only(&[])?;
            Ok(components::list(world, reg))
        }
        (Method::Get, ["api", "observers"]) => {
            q.only(&[])?;
            Ok(entity::observers(world, reg))
        }
        (Method::Get, ["api", "archetypes"]) => {
            q.only(&["empty"])?;
            Ok(summary::archetypes(world, reg, q.flag("empty")?))
        }
        (Method::Get, ["api", "entity", id]) => {
            q.only(&[])?;
            entity::detail(world, reg, parse_entity(id)?)
        }
        (Method::Get, ["api", "lookup"]) => {
            q.only(&["path"])?;
            let path = q.get("path").ok_or_else(|| {
                ApiError::bad_request("`path` is required: names separated by `/`")
            })?;
            match world.lookup(path) {
                Ok(e) => Ok(json!({ "entity": entity::entity_ref(world, reg, e) })),
                Err(e @ doecs::LookupError::BadPath(_)) => {
                    Err(ApiError::bad_request(e.to_string()))
                }
                Err(e) => Err(ApiError::not_found(e.to_string())),
            }
        }
        (Method::Delete, ["api", "entity", id]) => {
            q.only(&[])?;
            let e = parse_entity(id)?;
            if !state.write {
                return Err(read_only());
            }
            edit::despawn(world, e)?;
            Ok(json!({ "despawned": e.to_string(), "bits": e.to_bits() }))
        }
        (Method::Post, ["api", "entity"]) => {
            q.only(&[])?;
            if !state.write {
                return Err(read_only());
            }
            let body = optional_json_body(&req.body)?;
            edit::create(world, reg, &body)
        }
        (Method::Delete, ["api", "entity", id, "components", name]) => {
            q.only(&[])?;
            let e = parse_entity(id)?;
            if !state.write {
                return Err(read_only());
            }
            edit::remove_component(world, reg, e, name)
        }
        (Method::Put, ["api", "entity", id, "components", name]) => {
            q.only(&[])?;
            let e = parse_entity(id)?;
            if !state.write {
                return Err(read_only());
            }
            let value = json_body(&req.body)?;
            edit::set_component(world, reg, e, name, &value)
        }
        (Method::Get, ["api", "query"]) => {
            let request = crate::qlang::api::Request::from_params(q)?;
            crate::qlang::api::answer(world, reg, &request)
        }
        (Method::Get, ["api", "roots"]) => {
            q.only(&["offset", "limit"])?;
            let offset = q.usize_or("offset", 0, usize::MAX)?;
            let limit = q.usize_or("limit", 100, MAX_LIMIT)?;
            Ok(entity::roots(world, reg, offset, limit))
        }
        (Method::Get, ["api", "systems"]) => {
            q.only(&["last", "since"])?;
            let cap = state.history.capacity();
            let last = q.usize_or("last", cap, cap)?;
            let mut s = state.history.to_json(last, since(q)?);
            s["frame"] = json!(state.frame);
            s["plan"] = json!(state.plan);
            Ok(s)
        }
        (Method::Get, ["api", "history"]) => {
            q.only(&["last", "since"])?;
            let cap = state.world_history.capacity();
            let last = q.usize_or("last", cap, cap)?;
            let mut h = state.world_history.to_json(last, since(q)?);
            h["frame"] = json!(state.frame);
            Ok(h)
        }
        (Method::Get, ["api", "prefabs"]) => {
            q.only(&["offset", "limit"])?;
            let offset = q.usize_or("offset", 0, usize::MAX)?;
            let limit = q.usize_or("limit", 100, MAX_LIMIT)?;
            Ok(prefabs::list(world, reg, offset, limit))
        }
        (Method::Get, ["api", "controls"]) => {
            q.only(&[])?;
            Ok(state.controls.to_json(state.frame))
        }
        (Method::Post, ["api", "controls", action]) => {
            match *action {
                "pause" => {
                    q.only(&[])?;
                    state.controls.pause();
                }
                "resume" => {
                    q.only(&[])?;
                    state.controls.resume();
                }
                "step" => {
                    q.only(&["frames"])?;
                    let n = q.usize_or("frames", 1, MAX_STEP as usize)?;
                    state.controls.step(n as u64);
                }
                _ => {
                    return Err(ApiError::not_found(format!(
                        "no control \"{action}\" (pause, step, resume)"
                    )))
                }
            }
            Ok(state.controls.to_json(state.frame))
        }
        (method, p) if known(p) => Err(ApiError::method_not_allowed(
            method.as_str(),
            &format!("/{}", p.join("/")),
        )),
        _ => Err(ApiError::not_found(format!(
            "no such endpoint: /{} (GET /api lists them)",
            path.join("/")
        ))),
    }
}

/// The JSON of `GET /api`: the endpoints.
fn index() -> Value {
    json!({
        "endpoints": [
            "GET /api/world",
            "GET /api/components",
            "GET /api/archetypes[?empty=true]",
            "GET /api/entity/{id}",
            "GET /api/lookup?path=a/b",
            "GET /api/query?expr=a,!b,(ChildOf,$p)&offset=0&limit=50&values=true&since=TICK",
            "GET /api/query?with=a,b&without=c&offset=0&limit=50&values=true",
            "GET /api/roots?offset=0&limit=100",
            "GET /api/systems?last=N&since=FRAME",
            "GET /api/history?last=N&since=FRAME",
            "GET /api/prefabs?offset=0&limit=100",
            "GET /api/observers",
            "GET /api/controls",
            "POST /api/controls/pause | /api/controls/step?frames=N | /api/controls/resume",
            "POST /api/entity (write access; body: {\"component\": value, ...})",
            "PUT /api/entity/{id}/components/{name} (write access; adds it when missing)",
            "DELETE /api/entity/{id}/components/{name} (write access)",
            "DELETE /api/entity/{id} (write access)"
        ],
        "entity_ids": "the 64-bit form (Entity::to_bits) or INDEXvGENERATION, e.g. 12v0"
    })
}
