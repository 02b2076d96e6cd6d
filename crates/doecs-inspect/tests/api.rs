//! The JSON API end to end: a real server on a free loopback port, a world
//! answered between "frames" on the test's thread, and a client thread
//! speaking plain HTTP/1.1 over a `TcpStream` (no client library).
//!
//! Covers what the issue asks of the API: the summary and archetypes match
//! the world, one entity's values, parent and children, stale and
//! never-issued ids (404), query paging, the systems history, controls,
//! edits only with write access, and 4xx JSON errors (never a panic) for
//! malformed requests, oversized targets and bodies, foreign hosts and
//! cross-origin writes.

use doecs::prelude::*;
use doecs::{ComponentDescriptor, DestroyNotice, SystemTime};
use doecs_inspect::{Inspector, InspectorConfig};
use doecs_registry::ComponentRegistry;
use doecs_transform::{TransformManager, WorldTransforms};
use glam::Affine3A;
use serde_json::{json, Value};
use std::net::SocketAddr;

mod common;
use common::{get, raw, request};
use std::sync::Arc;
use std::time::Duration;

#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
struct Position([f32; 3]);
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
struct Health(i32);
#[derive(Debug)]
struct Secret(#[allow(dead_code)] String);
struct Opaque;

/// What the test world is made of.
struct Fixture {
    world: World,
    registry: ComponentRegistry,
    root: Entity,
    child: Entity,
    stale: Entity,
    bytes_entity: Entity,
}

fn fixture() -> Fixture {
    let mut registry = ComponentRegistry::new();
    registry.register::<Position>("position");
    registry.register::<Health>("health").validate(|h| {
        if h.0 >= 0 {
            Ok(())
        } else {
            Err("health cannot be negative".into())
        }
    });
    registry.register_debug::<Secret>("secret").unwrap();
    let mut world = World::new();
    registry.install(&mut world).unwrap();
    world.add_manager(TransformManager::new(), DestroyNotice::Callback);
    world.spawn_batch((0..300).map(|i| (Position([i as f32, 0.0, 0.0]), Health(i))));
    let root = world.spawn((Position([1.0, 2.0, 3.0]), Health(7), Secret("s".into())));
    let child = world.spawn((Health(3), Opaque));
    let stale = world.spawn((Health(0),));
    world.despawn(stale).unwrap();
    let raw_id = world
        .register_component(ComponentDescriptor::dynamic(
            "raw",
            std::alloc::Layout::new::<u32>(),
        ))
        .unwrap();
    let bytes_entity = world.spawn(());
    world
        .insert_bytes(bytes_entity, raw_id, &[1, 2, 3, 4])
        .unwrap();
    world.set_parent(child, root).unwrap();
    world
        .add_transform(root, Affine3A::from_translation([1.0, 2.0, 3.0].into()))
        .unwrap();
    world.add_transform(child, Affine3A::IDENTITY).unwrap();
    Fixture {
        world,
        registry,
        root,
        child,
        stale,
        bytes_entity,
    }
}

/// Runs "frames" on this thread (serving between them) while `client`
/// runs on another; returns the world afterwards.
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
    inspector.set_plan("segment 0:\n  stage 0: tick");
    let addr = inspector.addr();
    assert!(addr.ip().is_loopback() && addr.port() != 0);
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
    assert!(inspector.stats().requests > 0);
    world
}

#[test]
fn summary_archetypes_and_components_match_the_world() {
    let f = fixture();
    let expected_entities = f.world.len();
    let expected_bytes = f.world.chunk_memory_bytes();
    let expected_archetypes: Vec<(usize, usize)> = doecs::raw::archetypes(&f.world)
        .iter()
        .filter(|a| !a.is_empty())
        .map(|a| (a.id().index(), a.len()))
        .collect();
    serve(f.world, f.registry, false, move |addr| {
        let w = get(addr, "/api/world");
        assert_eq!(w.status, 200, "{}", w.body);
        let w = w.json();
        assert_eq!(w["entities"], expected_entities);
        assert_eq!(w["bytes_reserved"], expected_bytes);
        assert!(w["bytes_used"].as_u64().unwrap() <= expected_bytes as u64);
        assert_eq!(w["write"], false);
        assert_eq!(w["transforms"], 2);
        let a = get(addr, "/api/archetypes").json();
        let got: Vec<(usize, usize)> = a["archetypes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| {
                (
                    a["id"].as_u64().unwrap() as usize,
                    a["entities"].as_u64().unwrap() as usize,
                )
            })
            .collect();
        assert_eq!(got, expected_archetypes);
        let big = &a["archetypes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|a| a["entities"] == 300)
            .unwrap();
        assert_eq!(big["components"], json!(["position", "health"]));
        let c = get(addr, "/api/components").json();
        let names: Vec<&str> = c["components"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["name"].as_str().unwrap())
            .collect();
        assert!(
            names.contains(&"position") && names.contains(&"raw"),
            "{names:?}"
        );
        let index = get(addr, "/api").json();
        assert!(index["endpoints"].as_array().unwrap().len() > 5);
    });
}

#[test]
fn one_entity_with_values_parent_and_children() {
    let f = fixture();
    let (root, child, stale, bytes_entity) = (f.root, f.child, f.stale, f.bytes_entity);
    serve(f.world, f.registry, false, move |addr| {
        let r = get(addr, &format!("/api/entity/{root}"));
        assert_eq!(r.status, 200, "{}", r.body);
        let r = r.json();
        assert_eq!(r["id"], root.to_string());
        let comps = r["components"].as_array().unwrap();
        let by_name = |n: &str| comps.iter().find(|c| c["name"] == n).unwrap().clone();
        assert_eq!(by_name("position")["kind"], "json");
        assert_eq!(by_name("position")["value"], json!([1.0, 2.0, 3.0]));
        assert_eq!(by_name("health")["value"], 7);
        assert_eq!(by_name("secret")["kind"], "debug");
        assert_eq!(by_name("secret")["value"], "Secret(\"s\")");
        assert_eq!(r["parent"], Value::Null);
        assert_eq!(r["children_total"], 1);
        assert_eq!(r["children"][0]["id"], child.to_string());
        assert_eq!(
            r["managers"]["transform"]["local"]["translation"],
            json!([1.0, 2.0, 3.0])
        );
        // The same entity by its 64-bit form.
        let by_bits = get(addr, &format!("/api/entity/{}", root.to_bits())).json();
        assert_eq!(by_bits["components"], r["components"]);

        let c = get(addr, &format!("/api/entity/{child}")).json();
        assert_eq!(c["parent"]["id"], root.to_string());
        assert_eq!(c["relationships"][0]["relation"], "ChildOf");
        assert_eq!(c["relationships"][0]["target"]["id"], root.to_string());
        let opaque = c["components"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["kind"] == "unregistered")
            .unwrap()
            .clone();
        assert!(opaque["value"]["unregistered"]
            .as_str()
            .unwrap()
            .ends_with("Opaque"));

        let b = get(addr, &format!("/api/entity/{bytes_entity}")).json();
        assert_eq!(b["components"][0]["kind"], "bytes");
        assert_eq!(b["components"][0]["value"], json!([1, 2, 3, 4]));

        // Stale, never issued, malformed.
        for id in [
            stale.to_string(),
            "4000000v0".into(),
            format!("{}v7", root.index()),
        ] {
            let a = get(addr, &format!("/api/entity/{id}"));
            assert_eq!(a.status, 404, "{id}: {}", a.body);
            assert_eq!(a.json()["status"], 404);
        }
        let a = get(addr, "/api/entity/twelve");
        assert_eq!(a.status, 400);
        assert!(a.json()["error"].as_str().unwrap().contains("entity id"));

        let roots = get(addr, "/api/roots?limit=1000").json();
        let ids: Vec<&str> = roots["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["id"].as_str().unwrap())
            .collect();
        assert!(ids.contains(&root.to_string().as_str()));
        assert!(
            !ids.contains(&child.to_string().as_str()),
            "a child is no root"
        );
    });
}

#[test]
fn queries_page_by_component_names() {
    let f = fixture();
    serve(f.world, f.registry, false, move |addr| {
        let q = get(
            addr,
            "/api/query?with=health&without=secret&limit=100&offset=250",
        );
        assert_eq!(q.status, 200, "{}", q.body);
        let q = q.json();
        assert_eq!(q["total"], 301, "300 in the batch, and the child");
        assert_eq!(q["results"].as_array().unwrap().len(), 51);
        let q = get(addr, "/api/query?with=position,health&values=true&limit=2").json();
        assert_eq!(q["results"][0]["values"][1]["name"], "health");
        assert_eq!(get(addr, "/api/query?with=nope").status, 400);
        assert_eq!(get(addr, "/api/query?limit=100000").status, 400);
        assert_eq!(get(addr, "/api/query?limit=-1").status, 400);
        assert_eq!(get(addr, "/api/query?colour=red").status, 400);
        assert_eq!(get(addr, "/api/query?with=a&with=b").status, 400);
    });
}

#[test]
fn systems_and_controls() {
    let f = fixture();
    serve(f.world, f.registry, false, move |addr| {
        std::thread::sleep(Duration::from_millis(50));
        let s = get(addr, "/api/systems?last=5").json();
        assert_eq!(s["systems"][0]["name"], "tick");
        assert_eq!(s["systems"][0]["time_us"].as_array().unwrap().len(), 5);
        assert!(s["plan"].as_str().unwrap().contains("stage 0"));
        let p = request(addr, "POST", "/api/controls/pause", "", "");
        assert_eq!(p.status, 200, "{}", p.body);
        assert_eq!(p.json()["paused"], true);
        let f0 = get(addr, "/api/controls").json()["frame"].as_u64().unwrap();
        std::thread::sleep(Duration::from_millis(50));
        let f1 = get(addr, "/api/controls").json()["frame"].as_u64().unwrap();
        assert_eq!(f0, f1, "paused: no frame runs");
        request(addr, "POST", "/api/controls/step?frames=3", "", "");
        // Exactly three frames run, then the loop waits again.
        let frame = || get(addr, "/api/controls").json()["frame"].as_u64().unwrap();
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while frame() < f1 + 3 {
            assert!(std::time::Instant::now() < deadline, "steps never ran");
            std::thread::sleep(Duration::from_millis(5));
        }
        std::thread::sleep(Duration::from_millis(50));
        let f2 = frame();
        assert_eq!(f2, f1 + 3);
        let since = get(addr, &format!("/api/systems?since={}", f2 - 1)).json();
        assert_eq!(since["frames"], json!([f2]));
        let r = request(addr, "POST", "/api/controls/resume", "", "").json();
        assert_eq!(r["paused"], false);
        assert_eq!(
            request(addr, "POST", "/api/controls/jump", "", "").status,
            404
        );
        assert_eq!(get(addr, "/api/controls/pause").status, 405);
        assert_eq!(
            request(addr, "POST", "/api/controls/step?frames=x", "", "").status,
            400
        );
    });
}

#[test]
fn edits_need_write_access() {
    let f = fixture();
    let root = f.root;
    let world = serve(f.world, f.registry.clone(), false, move |addr| {
        let put = request(
            addr,
            "PUT",
            &format!("/api/entity/{root}/components/health"),
            "99",
            "",
        );
        assert_eq!(put.status, 403, "{}", put.body);
        assert_eq!(
            request(addr, "DELETE", &format!("/api/entity/{root}"), "", "").status,
            403
        );
    });
    assert_eq!(world.get::<Health>(root).unwrap().0, 7);
    assert!(world.alive(root));
}

#[test]
fn edits_with_write_access() {
    let f = fixture();
    let (root, child, bytes_entity) = (f.root, f.child, f.bytes_entity);
    let world = serve(f.world, f.registry, true, move |addr| {
        let put = request(
            addr,
            "PUT",
            &format!("/api/entity/{root}/components/health"),
            "99",
            "",
        );
        assert_eq!(put.status, 200, "{}", put.body);
        let detail = put.json();
        let health = detail["components"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["name"] == "health")
            .unwrap()
            .clone();
        assert_eq!(health["value"], 99);
        let bad = request(
            addr,
            "PUT",
            &format!("/api/entity/{root}/components/health"),
            "\"x\"",
            "",
        );
        assert_eq!(bad.status, 422, "{}", bad.body);
        let not_json = request(
            addr,
            "PUT",
            &format!("/api/entity/{root}/components/health"),
            "{",
            "",
        );
        assert_eq!(not_json.status, 400);
        let secret = request(
            addr,
            "PUT",
            &format!("/api/entity/{root}/components/secret"),
            "1",
            "",
        );
        assert_eq!(secret.status, 422);
        let raw = request(
            addr,
            "PUT",
            &format!("/api/entity/{bytes_entity}/components/raw"),
            "[9,8,7,6]",
            "",
        );
        assert_eq!(raw.status, 200, "{}", raw.body);
        let short = request(
            addr,
            "PUT",
            &format!("/api/entity/{bytes_entity}/components/raw"),
            "[9]",
            "",
        );
        assert_eq!(short.status, 422);
        let unknown = request(
            addr,
            "PUT",
            &format!("/api/entity/{root}/components/nope"),
            "1",
            "",
        );
        assert_eq!(unknown.status, 404);
        let del = request(addr, "DELETE", &format!("/api/entity/{child}"), "", "");
        assert_eq!(del.status, 200, "{}", del.body);
        assert_eq!(
            request(addr, "DELETE", &format!("/api/entity/{child}"), "", "").status,
            404
        );
        assert_eq!(get(addr, &format!("/api/entity/{child}")).status, 404);
        let cross = request(
            addr,
            "DELETE",
            &format!("/api/entity/{root}"),
            "",
            "Origin: http://evil.example\r\n",
        );
        assert_eq!(cross.status, 403);
    });
    assert_eq!(world.get::<Health>(root).unwrap().0, 99);
    assert!(!world.alive(child));
    assert!(world.alive(root), "the cross-origin delete was refused");
}

/// An edit of a component the world made immutable is an insert that
/// replaces the value, so the component's hooks see the old value go and
/// the new one arrive; writing it in place stays refused.
#[test]
fn an_edit_the_registry_check_refuses_changes_nothing() {
    let f = fixture();
    let root = f.root;
    let world = serve(f.world, f.registry, true, move |addr| {
        let put = request(
            addr,
            "PUT",
            &format!("/api/entity/{root}/components/health"),
            "-5",
            "",
        );
        assert_eq!(put.status, 422, "{}", put.body);
        let error = put.json()["error"].as_str().unwrap().to_owned();
        assert!(error.contains("health cannot be negative"), "{error}");
    });
    assert_eq!(world.get::<Health>(root), Ok(&Health(7)));
}

#[test]
fn an_edit_of_an_immutable_component_replaces_it_and_fires_hooks() {
    use std::sync::Mutex;
    let mut f = fixture();
    let root = f.root;
    f.world.register_immutable::<Health>();
    let seen: Arc<Mutex<Vec<(&str, i32)>>> = Arc::default();
    let (on_replace, on_insert) = (seen.clone(), seen.clone());
    f.world.set_hooks::<Health>(
        doecs::ComponentHooks::new()
            .on_replace(move |ctx| {
                let old = ctx.world.get::<Health>(ctx.entity).unwrap().0;
                on_replace.lock().unwrap().push(("replace", old));
            })
            .on_insert(move |ctx| {
                let new = ctx.world.get::<Health>(ctx.entity).unwrap().0;
                on_insert.lock().unwrap().push(("insert", new));
            }),
    );
    let mut world = serve(f.world, f.registry, true, move |addr| {
        let put = request(
            addr,
            "PUT",
            &format!("/api/entity/{root}/components/health"),
            "99",
            "",
        );
        assert_eq!(put.status, 200, "{}", put.body);
    });
    assert_eq!(*seen.lock().unwrap(), [("replace", 7), ("insert", 99)]);
    assert_eq!(world.get::<Health>(root), Ok(&Health(99)));
    assert_eq!(
        world.get_mut::<Health>(root),
        Err(doecs::EntityError::Immutable(
            std::any::type_name::<Health>()
        ))
    );
}

#[test]
fn malformed_requests_get_4xx_json() {
    let f = fixture();
    serve(f.world, f.registry, false, move |addr| {
        for (target, status) in [
            ("/api/nothing", 404),
            ("/api/entity/1v0/extra", 404),
            ("/api/world?x=1", 400),
            ("/api/%zz", 400),
            ("/api//world", 400),
            ("/api/%ff", 400),
            ("/nothing.js", 404),
        ] {
            let a = get(addr, target);
            assert_eq!(a.status, status, "{target}: {}", a.body);
            assert_eq!(a.json()["status"], status, "{target}");
        }
        let long = format!("/api/query?with={}", "a".repeat(5000));
        assert_eq!(get(addr, &long).status, 414);
        let big = "1".repeat(70_000);
        let a = request(addr, "PUT", "/api/entity/1v0/components/health", &big, "");
        assert_eq!(a.status, 413, "{}", a.body);
        let a = request(addr, "POST", "/api/world", "", "");
        assert_eq!(a.status, 405);
        let foreign = raw(
            addr,
            b"GET /api/world HTTP/1.1\r\nHost: evil.example\r\nConnection: close\r\n\r\n",
        );
        assert_eq!(foreign.status, 403);
        // Garbage is not HTTP: a 400 with a JSON body, and the server
        // survives it.
        for garbage in [&b"\x00\x01\x02 not http at all\r\n\r\n"[..], b"GET\r\n\r\n"] {
            let a = raw(addr, garbage);
            assert_eq!(a.status, 400, "{}", a.body);
            assert_eq!(a.json()["status"], 400);
        }
        // The page and its files.
        let page = get(addr, "/");
        assert_eq!(page.status, 200);
        assert!(page.body.contains("<canvas"), "{}", page.body);
        assert_eq!(get(addr, "/app.js").status, 200);
        assert_eq!(get(addr, "/api/world").status, 200, "still serving");
    });
}

/// A user relation for the inspector to show.
#[derive(Clone)]
struct Escorts;
impl doecs::Relation for Escorts {}

#[test]
fn an_entity_shows_every_relationship_pair_and_what_points_at_it() {
    let mut registry = ComponentRegistry::new();
    registry.register::<Health>("health");
    let mut world = World::new();
    registry.install(&mut world).unwrap();
    let prefab = world.spawn((doecs::Prefab, Health(50)));
    let ship = world.spawn((Health(1),));
    let part = world.spawn(());
    let escort = world.spawn((Health(2),));
    world.set_parent(part, ship).unwrap();
    world.add_pair(part, prefab, doecs::IsA).unwrap();
    world.add_pair(escort, ship, Escorts).unwrap();
    serve(world, registry, false, move |addr| {
        let p = get(addr, &format!("/api/entity/{part}")).json();
        let pairs: Vec<(String, String)> = p["relationships"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                (
                    r["relation"].as_str().unwrap().to_owned(),
                    r["target"]["id"].as_str().unwrap().to_owned(),
                )
            })
            .collect();
        assert_eq!(
            pairs,
            [
                ("ChildOf".to_owned(), ship.to_string()),
                ("IsA".to_owned(), prefab.to_string())
            ]
        );
        assert_eq!(p["parent"]["id"], ship.to_string());
        let s = get(addr, &format!("/api/entity/{ship}")).json();
        assert_eq!(s["incoming"], json!({ "ChildOf": 1, "Escorts": 1 }));
        assert_eq!(s["children_total"], 1);
        assert_eq!(s["children"][0]["id"], part.to_string());
        let e = get(addr, &format!("/api/entity/{escort}")).json();
        assert_eq!(e["relationships"][0]["relation"], "Escorts");
        // A child is not a root.
        let roots = get(addr, "/api/roots?limit=100").json();
        let ids: Vec<&str> = roots["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["id"].as_str().unwrap())
            .collect();
        assert!(!ids.contains(&part.to_string().as_str()));
        assert!(ids.contains(&ship.to_string().as_str()));
    });
}

#[test]
fn names_paths_and_lookup() {
    let mut f = fixture();
    f.world
        .insert_one(f.root, doecs::Name::new("frigate"))
        .unwrap();
    f.world
        .insert_one(f.child, doecs::Name::new("turret"))
        .unwrap();
    let (root, child) = (f.root, f.child);
    serve(f.world, f.registry, false, move |addr| {
        let d = get(addr, &format!("/api/entity/{child}")).json();
        assert_eq!(d["name"], "turret");
        assert_eq!(d["path"], "frigate/turret");
        assert_eq!(d["parent"]["name"], "frigate");
        let found = get(addr, "/api/lookup?path=frigate/turret");
        assert_eq!(found.status, 200, "{}", found.body);
        assert_eq!(found.json()["entity"]["id"], child.to_string());
        let missing = get(addr, "/api/lookup?path=frigate/engine");
        assert_eq!(missing.status, 404);
        assert!(missing.body.contains("frigate/engine"), "{}", missing.body);
        assert_eq!(get(addr, "/api/lookup?path=a//b").status, 400);
        assert_eq!(get(addr, "/api/lookup").status, 400);
        let r = get(addr, &format!("/api/entity/{root}")).json();
        assert_eq!(r["path"], "frigate");
    });
}

#[test]
fn observers_are_listed_in_run_order_and_on_their_entity() {
    struct Hit;
    impl doecs::Event for Hit {}
    let mut f = fixture();
    f.world
        .observe((|_: Trigger<OnAdd, Health>| {}).named("count_health"))
        .unwrap();
    f.world
        .observe_entity(f.root, (|_: Trigger<Hit>| {}).named("root_hit"))
        .unwrap();
    let root = f.root;
    serve(f.world, f.registry, false, move |addr| {
        let o = get(addr, "/api/observers").json();
        assert_eq!(o["count"], 2);
        let list = o["observers"].as_array().unwrap();
        assert_eq!(list[0]["name"], "count_health");
        assert_eq!(list[0]["event"], "OnAdd");
        assert_eq!(list[0]["component"], "health");
        assert_eq!(list[0]["entity"], Value::Null);
        assert_eq!(list[1]["name"], "root_hit");
        assert_eq!(list[1]["event"], "Hit");
        assert_eq!(list[1]["entity"]["id"], root.to_string());
        let d = get(addr, &format!("/api/entity/{root}")).json();
        assert_eq!(d["observers"].as_array().unwrap().len(), 1);
        assert_eq!(d["observers"][0]["name"], "root_hit");
        assert_eq!(get(addr, "/api/observers?x=1").status, 400);
    });
}
