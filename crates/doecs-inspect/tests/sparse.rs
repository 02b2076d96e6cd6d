//! Sparse components in the inspector's API, end to end over HTTP (the
//! client of `common`): an entity's detail lists its sparse components
//! after its archetype's, with their values (serde, unregistered, plain
//! bytes) and `"storage": "sparse"`; the component list marks storage and
//! counts a sparse component's entities from its set; archetypes never
//! name a sparse component; the world summary counts sparse values; the
//! query language takes sparse components in `with` and `without`, pages
//! them in archetype then row order, and shows their values; and edits add,
//! replace and despawn sparse values.

use doecs::prelude::*;
use doecs::{ComponentDescriptor, Sparse, SystemTime};
use doecs_inspect::{Inspector, InspectorConfig};
use doecs_registry::ComponentRegistry;
use serde_json::{json, Value};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

mod common;
use common::{get, request};

#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
struct Position([f32; 3]);

/// Sparse, serde.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
struct Stunned {
    turns: u32,
    by: String,
}

/// Sparse marker, serde.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
struct Glowing;

/// Sparse, with no registration.
struct Opaque;

struct Fixture {
    world: World,
    registry: ComponentRegistry,
    /// Position, Stunned and Glowing.
    both: Entity,
    /// Stunned only.
    sparse_only: Entity,
    /// Position only.
    plain: Entity,
    /// Opaque and raw (a sparse plain-bytes runtime component).
    odd: Entity,
    /// Every entity with Stunned, in archetype then row order.
    stunned: Vec<Entity>,
}

fn stunned(i: u32) -> Stunned {
    Stunned {
        turns: i,
        by: format!("trap {i}"),
    }
}

fn fixture() -> Fixture {
    let mut registry = ComponentRegistry::new();
    registry.register::<Position>("position");
    registry.register::<Stunned>("stunned").cloned().sparse();
    registry.register::<Glowing>("glowing").sparse();
    let mut world = World::new();
    registry.install(&mut world).unwrap();
    world.register_sparse::<Opaque>().unwrap();
    let raw = world
        .register_component(
            ComponentDescriptor::dynamic("raw", std::alloc::Layout::new::<u32>()).sparse(),
        )
        .unwrap();
    world.spawn_batch((0..50).map(|i| (Position([i as f32, 0.0, 0.0]),)));
    let with_stunned: Vec<Entity> = (0..10)
        .map(|i| world.spawn((Position([0.0, i as f32, 0.0]), stunned(i))))
        .collect();
    let sparse_only: Vec<Entity> = (10..15).map(|i| world.spawn((stunned(i),))).collect();
    for i in 0..3 {
        world.spawn((Position([0.0, 0.0, i as f32]), Glowing));
    }
    let both = with_stunned[3];
    world.insert_one(both, Glowing).unwrap();
    let plain = world.spawn((Position([9.0, 9.0, 9.0]),));
    let odd = world.spawn((Opaque,));
    world.insert_bytes(odd, raw, &[1, 2, 3, 4]).unwrap();
    let stunned: Vec<Entity> = doecs::raw::archetypes(&world)
        .iter()
        .flat_map(|a| a.entities().iter().copied())
        .filter(|&e| world.get::<Stunned>(e).is_ok())
        .collect();
    assert_eq!(stunned.len(), 15);
    Fixture {
        world,
        registry,
        both,
        sparse_only: sparse_only[0],
        plain,
        odd,
        stunned,
    }
}

/// Serves `world` between frames on this thread until `client` is done.
fn serve<F>(mut world: World, registry: ComponentRegistry, write: bool, client: F) -> World
where
    F: FnOnce(SocketAddr) + Send + 'static,
{
    let mut inspector = Inspector::start(
        InspectorConfig::new("127.0.0.1:0")
            .registry(registry)
            .write(write),
    )
    .unwrap();
    let addr = inspector.addr();
    let client = std::thread::spawn(move || client(addr));
    let name: Arc<str> = Arc::from("tick");
    while !client.is_finished() {
        inspector.between_frames(&mut world);
        let systems = [SystemTime {
            name: name.clone(),
            time: Duration::from_micros(50),
        }];
        std::thread::sleep(Duration::from_millis(1));
        inspector.record_frame(&world, Duration::from_micros(100), &systems);
    }
    inspector.serve_pending(&mut world);
    if let Err(panic) = client.join() {
        std::panic::resume_unwind(panic);
    }
    world
}

fn component<'a>(detail: &'a Value, name: &str) -> Option<&'a Value> {
    detail["components"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == name)
}

fn names(v: &Value) -> Vec<&str> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_str().unwrap())
        .collect()
}

#[test]
fn an_entity_shows_its_sparse_components_with_values() {
    let f = fixture();
    let (both, sparse_only, plain, odd) = (f.both, f.sparse_only, f.plain, f.odd);
    serve(f.world, f.registry, false, move |addr| {
        let d = get(addr, &format!("/api/entity/{both}"));
        assert_eq!(d.status, 200, "{}", d.body);
        let d = d.json();
        let listed: Vec<&str> = d["components"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["name"].as_str().unwrap())
            .collect();
        assert_eq!(
            listed,
            ["position", "stunned", "glowing"],
            "sparse ones last"
        );
        let position = component(&d, "position").unwrap();
        assert_eq!(position["storage"], "table");
        let s = component(&d, "stunned").unwrap();
        assert_eq!(s["storage"], "sparse");
        assert_eq!(s["kind"], "json");
        assert_eq!(s["value"], json!({"turns": 3, "by": "trap 3"}));
        assert!(s["type"].as_str().unwrap().ends_with("Stunned"));
        let g = component(&d, "glowing").unwrap();
        assert_eq!(
            (g["storage"].clone(), g["value"].clone()),
            (json!("sparse"), Value::Null)
        );
        assert_eq!(g["size"], 0);

        // Sparse only: in the archetype without components.
        let d = get(addr, &format!("/api/entity/{sparse_only}")).json();
        assert_eq!(d["components"].as_array().unwrap().len(), 1);
        assert_eq!(component(&d, "stunned").unwrap()["value"]["turns"], 10);

        // Unregistered and plain-bytes sparse components.
        let d = get(addr, &format!("/api/entity/{odd}")).json();
        let opaque = (d["components"].as_array().unwrap().iter())
            .find(|c| c["kind"] == "unregistered")
            .unwrap();
        assert_eq!(opaque["storage"], "sparse");
        let raw = component(&d, "raw").unwrap();
        assert_eq!(raw["kind"], "bytes");
        assert_eq!(raw["value"], json!([1, 2, 3, 4]));
        assert_eq!(raw["storage"], "sparse");

        let d = get(addr, &format!("/api/entity/{plain}")).json();
        assert!(component(&d, "stunned").is_none());

        // Short references (roots, children, query results) name them too.
        let roots = get(addr, "/api/roots?limit=1000").json();
        let r = (roots["results"].as_array().unwrap().iter())
            .find(|r| r["id"] == both.to_string())
            .unwrap();
        assert_eq!(names(&r["components"]), ["position", "stunned", "glowing"]);
    });
}

#[test]
fn components_archetypes_and_summary_count_sparse_storage() {
    let f = fixture();
    serve(f.world, f.registry, false, move |addr| {
        let c = get(addr, "/api/components").json();
        let by_name = |n: &str| {
            (c["components"].as_array().unwrap().iter())
                .find(|c| c["name"] == n)
                .unwrap()
                .clone()
        };
        let s = by_name("stunned");
        assert_eq!(s["storage"], "sparse");
        assert_eq!(s["entities"], 15);
        assert_eq!(s["archetypes"], 0);
        assert_eq!(by_name("glowing")["entities"], 4);
        assert_eq!(by_name("raw")["storage"], "sparse");
        assert_eq!(by_name("raw")["entities"], 1);
        let p = by_name("position");
        assert_eq!(p["storage"], "table");
        assert_eq!(p["entities"], 50 + 10 + 3 + 1);
        assert!(p["archetypes"].as_u64().unwrap() >= 1);

        let a = get(addr, "/api/archetypes?empty=true").json();
        for arch in a["archetypes"].as_array().unwrap() {
            for name in names(&arch["components"]) {
                assert!(!["stunned", "glowing", "raw"].contains(&name), "{arch}");
            }
        }

        let w = get(addr, "/api/world").json();
        assert_eq!(w["sparse_components"], 4, "stunned, glowing, Opaque, raw");
        assert_eq!(w["sparse_values"], 15 + 4 + 1 + 1);
        assert!(w["sparse_bytes_used"].as_u64().unwrap() >= 4 + 15 * 8);
    });
}

#[test]
fn queries_take_sparse_terms() {
    let f = fixture();
    let expected: Vec<String> = f.stunned.iter().map(|e| e.to_string()).collect();
    let both = f.both;
    serve(f.world, f.registry, false, move |addr| {
        let total = |q: &str| {
            let r = get(addr, &format!("/api/query?{q}"));
            assert_eq!(r.status, 200, "{q}: {}", r.body);
            r.json()["total"].as_u64().unwrap()
        };
        assert_eq!(total("with=stunned"), 15);
        assert_eq!(total("with=position,stunned"), 10);
        assert_eq!(total("with=stunned&without=position"), 5);
        assert_eq!(total("with=position&without=stunned"), 50 + 3 + 1);
        assert_eq!(total("with=stunned,glowing"), 1);
        assert_eq!(total("without=stunned,glowing"), 50 + 1 + 1);
        // Pages in archetype then row order, across the sparse filter.
        let mut seen = Vec::new();
        for offset in (0..20).step_by(4) {
            let q = get(
                addr,
                &format!("/api/query?with=stunned&offset={offset}&limit=4"),
            )
            .json();
            assert_eq!(q["total"], 15);
            assert_eq!(q["with"], json!(["stunned"]));
            for r in q["results"].as_array().unwrap() {
                seen.push(r["id"].as_str().unwrap().to_owned());
            }
        }
        assert_eq!(seen, expected);
        // Values include the sparse ones.
        let q = get(addr, "/api/query?with=glowing,stunned&values=true").json();
        let r = &q["results"][0];
        assert_eq!(r["id"], both.to_string());
        let values: Vec<(&str, &str)> = (r["values"].as_array().unwrap().iter())
            .map(|v| (v["name"].as_str().unwrap(), v["storage"].as_str().unwrap()))
            .collect();
        assert_eq!(
            values,
            [
                ("position", "table"),
                ("stunned", "sparse"),
                ("glowing", "sparse")
            ]
        );
        assert_eq!(r["values"][1]["value"]["by"], "trap 3");
    });
}

#[test]
fn edits_add_replace_and_despawn_sparse_values() {
    let f = fixture();
    let (both, plain) = (f.both, f.plain);
    let archetypes = doecs::raw::archetypes(&f.world).len();
    let world = serve(f.world, f.registry, true, move |addr| {
        // Add to an entity without it.
        let put = request(
            addr,
            "PUT",
            &format!("/api/entity/{plain}/components/stunned"),
            r#"{"turns": 7, "by": "inspector"}"#,
            "",
        );
        assert_eq!(put.status, 200, "{}", put.body);
        let s = component(&put.json(), "stunned").unwrap().clone();
        assert_eq!(
            (s["storage"].as_str(), s["value"]["turns"].as_u64()),
            (Some("sparse"), Some(7))
        );
        // Replace.
        let put = request(
            addr,
            "PUT",
            &format!("/api/entity/{both}/components/stunned"),
            r#"{"turns": 1, "by": "x"}"#,
            "",
        );
        assert_eq!(put.status, 200, "{}", put.body);
        let bad = request(
            addr,
            "PUT",
            &format!("/api/entity/{both}/components/stunned"),
            "12",
            "",
        );
        assert_eq!(bad.status, 422, "{}", bad.body);
        let del = request(addr, "DELETE", &format!("/api/entity/{both}"), "", "");
        assert_eq!(del.status, 200, "{}", del.body);
        assert_eq!(get(addr, "/api/query?with=stunned").json()["total"], 15);
    });
    world.check_invariants();
    assert_eq!(
        world.get::<Stunned>(plain),
        Ok(&Stunned {
            turns: 7,
            by: "inspector".into()
        })
    );
    assert!(!world.alive(both));
    assert_eq!(
        doecs::raw::archetypes(&world).len(),
        archetypes,
        "no archetype was made"
    );
    assert_eq!(world.query::<Sparse<&Stunned>>().iter().count(), 15);
}
