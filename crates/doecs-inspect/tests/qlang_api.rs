//! `GET /api/query?expr=` end to end, in the style of `tests/api.rs`: a
//! real server on a free loopback port, the world answered between
//! "frames" on the test's thread, a client thread speaking HTTP/1.1.
//!
//! Covers the query language over HTTP: results with variable bindings
//! and optional terms, paging, pair targets by name and id, the older
//! `with=`/`without=` form giving what its query gives, change filters
//! with `since=` and the `tick` each answer reports, and 400s with the
//! column for every kind of query error.

use doecs::prelude::*;
use doecs::{Name, Relation};
use doecs_inspect::parse::percent_encode;
use doecs_inspect::{Inspector, InspectorConfig};
use doecs_registry::ComponentRegistry;
use serde_json::{json, Value};
use std::net::SocketAddr;
use std::time::Duration;

mod common;
use common::{get, request};

#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
struct Position([f32; 3]);
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
struct Health(i32);
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
struct Stunned(u32);
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
struct Likes;
impl Relation for Likes {}

struct Fixture {
    world: World,
    registry: ComponentRegistry,
    ship: Entity,
    parts: Vec<Entity>,
}

/// A ship with four named parts (two stunned, sparse), ten loose entities
/// with a position, a prefab, and a part that likes the ship.
fn fixture() -> Fixture {
    let mut registry = ComponentRegistry::new();
    registry.register::<Position>("position");
    registry.register::<Health>("health");
    registry.register::<Stunned>("stunned").sparse();
    registry.register_relation::<Likes>("Likes").unwrap();
    let mut world = World::new();
    registry.install(&mut world).unwrap();
    let ship = world.spawn((Name::new("ship"), Position([0.0; 3]), Health(100)));
    let parts: Vec<Entity> = (0..4)
        .map(|i| {
            let part = world.spawn((Name::new(format!("part{i}")), Health(i)));
            world.set_parent(part, ship).unwrap();
            if i % 2 == 0 {
                world.insert_one(part, Stunned(i as u32)).unwrap();
            }
            part
        })
        .collect();
    world.add_pair(parts[1], ship, Likes).unwrap();
    world.spawn_batch((0..10).map(|i| (Position([i as f32, 0.0, 0.0]),)));
    world.spawn((doecs::Prefab, Position([9.0; 3])));
    Fixture {
        world,
        registry,
        ship,
        parts,
    }
}

fn serve<F>(mut world: World, registry: ComponentRegistry, client: F) -> World
where
    F: FnOnce(SocketAddr) + Send + 'static,
{
    let config = InspectorConfig::new("127.0.0.1:0")
        .registry(registry)
        .write(true);
    let mut inspector = Inspector::start(config).unwrap();
    let addr = inspector.addr();
    let client = std::thread::spawn(move || client(addr));
    while !client.is_finished() {
        inspector.between_frames(&mut world);
        std::thread::sleep(Duration::from_millis(1));
        inspector.record_frame(&world, Duration::from_millis(1), &[]);
    }
    inspector.serve_pending(&mut world);
    if let Err(panic) = client.join() {
        std::panic::resume_unwind(panic);
    }
    world
}

/// `GET /api/query?expr=<expr>&<rest>`: the status and the JSON.
fn query(addr: SocketAddr, expr: &str, rest: &str) -> (u16, Value) {
    let a = get(
        addr,
        &format!("/api/query?expr={}&{rest}", percent_encode(expr)),
    );
    let json = a.json();
    (a.status, json)
}

fn ids(answer: &Value) -> Vec<String> {
    answer["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn expressions_answer_with_bindings_optional_terms_and_pages() {
    let f = fixture();
    let (ship, parts) = (f.ship.to_string(), f.parts.clone());
    serve(f.world, f.registry, move |addr| {
        let (status, q) = query(addr, "health, (ChildOf, $p), ?stunned", "");
        assert_eq!(status, 200, "{q}");
        assert_eq!(q["expr"], "health, (ChildOf, $p), ?stunned");
        assert_eq!(q["variables"], json!(["p"]));
        assert_eq!(q["optional"], json!(["stunned"]));
        assert_eq!(q["total"], 4);
        let expected: Vec<String> = parts.iter().map(|e| e.to_string()).collect();
        assert_eq!(ids(&q), expected);
        let first = &q["results"][0];
        assert_eq!(first["name"], "part0");
        assert_eq!(first["vars"]["p"]["id"], ship);
        assert_eq!(first["vars"]["p"]["name"], "ship");
        assert_eq!(first["optional"], json!(["stunned"]));
        assert_eq!(q["results"][1]["optional"], json!([]));

        // A join: the part that likes its parent; and the others.
        let (_, q) = query(addr, "(ChildOf, $p), (Likes, $p)", "");
        assert_eq!(ids(&q), [parts[1].to_string()]);
        let (_, q) = query(addr, "(ChildOf, $p), !(Likes, $p)", "");
        assert_eq!(q["total"], 3);
        // Targets by name, path and id; sparse terms; pages.
        let (_, by_name) = query(addr, "(ChildOf, ship), stunned", "");
        let (_, by_id) = query(addr, &format!("(ChildOf, {ship}), stunned"), "");
        assert_eq!(by_name["total"], 2);
        assert_eq!(ids(&by_name), ids(&by_id));
        let (_, q) = query(addr, "(ChildOf, ship/part2)", "");
        assert_eq!(q["total"], 0, "part2 has no children");
        let (_, q) = query(addr, "position", "offset=3&limit=4&values=true");
        assert_eq!(
            q["total"], 11,
            "the ship and ten loose ones; not the prefab"
        );
        assert_eq!(q["results"].as_array().unwrap().len(), 4);
        assert_eq!(q["results"][0]["values"][0]["name"], "position");
        let (_, q) = query(addr, "position, Prefab", "");
        assert_eq!(q["total"], 1, "a prefab shows when asked for");
        // Quoted names and world names.
        let (_, q) = query(addr, "\"health\", !\"stunned\"", "");
        assert_eq!(q["total"], 3);
    });
}

#[test]
fn the_older_form_is_the_same_query() {
    let f = fixture();
    serve(f.world, f.registry, move |addr| {
        let old = get(addr, "/api/query?with=health&without=stunned&values=true");
        assert_eq!(old.status, 200, "{}", old.body);
        let old = old.json();
        let (_, new) = query(addr, "health, !stunned", "values=true");
        assert_eq!(old["expr"], "health, !stunned");
        assert_eq!(old["with"], json!(["health"]));
        assert_eq!(old["without"], json!(["stunned"]));
        assert_eq!(old["results"], new["results"]);
        assert_eq!(old["total"], 3);
        // Unknown names point into the query it became.
        let a = get(addr, "/api/query?with=health,nope");
        assert_eq!(a.status, 400);
        assert_eq!(a.json()["column"], 9, "{}", a.body);
        let both = get(addr, "/api/query?with=health&expr=health");
        assert_eq!(both.status, 400);
    });
}

#[test]
fn change_filters_look_after_since() {
    let f = fixture();
    let part = f.parts[3];
    let world = serve(f.world, f.registry, move |addr| {
        let (status, first) = query(addr, "Changed(health)", "");
        assert_eq!(status, 200, "{first}");
        assert_eq!(first["since"], 0);
        assert_eq!(first["total"], 5, "a first look sees every spawn");
        let tick = first["tick"].as_u64().unwrap();
        let (_, none) = query(addr, "Changed(health)", &format!("since={tick}"));
        assert_eq!(none["total"], 0, "{none}");
        // An edit between the looks.
        let put = request(
            addr,
            "PUT",
            &format!("/api/entity/{part}/components/health"),
            "41",
            "",
        );
        assert_eq!(put.status, 200, "{}", put.body);
        let (_, changed) = query(addr, "Changed(health)", &format!("since={tick}"));
        assert_eq!(ids(&changed), [part.to_string()]);
        assert!(changed["tick"].as_u64().unwrap() > tick);
        let (_, added) = query(addr, "Added(health)", &format!("since={tick}"));
        assert_eq!(added["total"], 0, "replacing a value adds nothing");
        let (_, sparse) = query(addr, "Changed(stunned)", &format!("since={tick}"));
        assert_eq!(sparse["total"], 0);
        let (_, sparse) = query(addr, "Added(stunned)", "since=0");
        assert_eq!(sparse["total"], 2);
        let bad = get(addr, "/api/query?expr=health&since=-1");
        assert_eq!(bad.status, 400);
    });
    assert_eq!(world.get::<Health>(part), Ok(&Health(41)));
}

#[test]
fn query_errors_are_400_with_their_column() {
    let f = fixture();
    serve(f.world, f.registry, move |addr| {
        let cases = [
            ("position, (ChildOf $p)", 20, "expected ','"),
            ("position, (ChildOf, $p", 23, "expected ')'"),
            ("position,", 10, "expected a term"),
            ("health, nope", 9, "unknown component \"nope\""),
            ("(Hates, *)", 2, "unknown relation \"Hates\""),
            ("(ChildOf, nobody)", 11, "no one entity \"nobody\""),
            ("(ChildOf, 999v0)", 11, "is not alive"),
            ("health, !(Likes, $x)", 18, "not bound"),
            ("!Changed(health)", 1, "cannot apply"),
            ("a; b", 2, "unexpected character"),
        ];
        for (expr, column, says) in cases {
            let (status, e) = query(addr, expr, "");
            assert_eq!(status, 400, "{expr}: {e}");
            assert_eq!(e["column"], column, "{expr}: {e}");
            assert_eq!(e["status"], 400);
            let message = e["error"].as_str().unwrap();
            assert!(message.contains(says), "{expr}: {message}");
            assert!(message.contains(&format!("column {column}")), "{message}");
        }
        // Errors that are not about the text have no column.
        let a = get(addr, "/api/query?expr=health&limit=5000");
        assert_eq!(a.status, 400);
        assert!(a.json().get("column").is_none(), "{}", a.body);
    });
}
