//! Edits end to end, over a real server: create an entity with components
//! (`POST /api/entity`), add a component the entity lacks and set one it
//! has (`PUT .../components/{name}`), remove one (`DELETE
//! .../components/{name}`). Each is refused with 403 when read-only, 404 for
//! a name or entity that is not there, 422 for a value the type or the
//! registration's check refuses (a zero mass), 400 for a malformed body, and
//! every refusal leaves the world as it was.

use doecs::prelude::*;
use doecs_inspect::InspectorConfig;
use doecs_registry::ComponentRegistry;
use serde_json::{json, Value};

mod common;
use common::{get, request, serve_frames};

#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
struct Mass(f32);
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
struct Velocity([f32; 3]);
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
struct Shield {
    hp: u32,
    up: bool,
}

fn registry() -> ComponentRegistry {
    let mut registry = ComponentRegistry::new();
    registry.register::<Mass>("mass").validate(|m| {
        if m.0 > 0.0 {
            Ok(())
        } else {
            Err(format!("mass must be greater than 0, got {}", m.0))
        }
    });
    registry.register::<Velocity>("velocity");
    // Registered, but no entity has had one: the world meets the type on
    // the first edit that adds it.
    registry.register::<Shield>("shield");
    registry
}

/// Ships with a mass and a velocity; nothing despawned, so the next
/// entity spawned is `N v0`.
fn world() -> (World, Vec<Entity>) {
    let mut world = World::new();
    let ships = world.spawn_batch((0..4).map(|i| (Mass(1.0 + i as f32), Velocity([0.0; 3]))));
    (world, ships)
}

fn config(write: bool) -> InspectorConfig {
    InspectorConfig::new("127.0.0.1:0")
        .registry(registry())
        .write(write)
}

/// One entity's mass, velocity and shield.
type Row = (Entity, Option<Mass>, Option<Velocity>, Option<Shield>);

/// The world's entities and their masses, velocities and shields, to
/// compare before and after refusals.
fn contents(world: &World) -> Vec<Row> {
    let mut all: Vec<_> = doecs::raw::archetypes(world)
        .iter()
        .flat_map(|a| a.entities().to_vec())
        .map(|e| {
            (
                e,
                world.get::<Mass>(e).ok().copied(),
                world.get::<Velocity>(e).ok().copied(),
                world.get::<Shield>(e).ok().copied(),
            )
        })
        .collect();
    all.sort_by_key(|c| c.0);
    all
}

fn component<'a>(detail: &'a Value, name: &str) -> Option<&'a Value> {
    detail["components"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == name)
        .map(|c| &c["value"])
}

fn assert_error(a: &common::Answer, status: u16, says: &str) {
    assert_eq!(a.status, status, "{}", a.body);
    let e = a.json();
    assert_eq!(e["status"], status);
    let message = e["error"].as_str().unwrap();
    assert!(message.contains(says), "{message:?} should say {says:?}");
}

#[test]
fn read_only_refuses_every_edit_and_changes_nothing() {
    let (world, ships) = world();
    let before = contents(&world);
    let ship = ships[0];
    let (world, _) = serve_frames(world, config(false), move |addr| {
        let create = request(addr, "POST", "/api/entity", r#"{"mass": 2}"#, "");
        assert_error(&create, 403, "read-only");
        let empty = request(addr, "POST", "/api/entity", "", "");
        assert_error(&empty, 403, "--inspect-write");
        let add = format!("/api/entity/{ship}/components/shield");
        assert_error(
            &request(addr, "PUT", &add, r#"{"hp":1,"up":true}"#, ""),
            403,
            "read-only",
        );
        let remove = format!("/api/entity/{ship}/components/mass");
        assert_error(&request(addr, "DELETE", &remove, "", ""), 403, "read-only");
        assert_eq!(get(addr, "/api/world").json()["write"], false);
    });
    assert_eq!(contents(&world), before);
}

#[test]
fn create_an_entity_with_components_or_none() {
    let (world, _) = world();
    let (world, _) = serve_frames(world, config(true), move |addr| {
        let body = r#"{"mass": 2.5, "velocity": [1, 2, 3], "Name": "probe"}"#;
        let a = request(addr, "POST", "/api/entity", body, "");
        assert_eq!(a.status, 200, "{}", a.body);
        let d = a.json();
        assert_eq!(d["created"], true);
        assert_eq!(d["id"], "4v0", "the next id: nothing was spent before");
        assert_eq!(d["name"], "probe");
        assert_eq!(component(&d, "mass"), Some(&json!(2.5)));
        assert_eq!(component(&d, "velocity"), Some(&json!([1.0, 2.0, 3.0])));
        // The entity is there for the next request too.
        let again = get(addr, "/api/entity/4v0").json();
        assert_eq!(component(&again, "mass"), Some(&json!(2.5)));
        for empty in ["", "{}", "null", "  "] {
            let a = request(addr, "POST", "/api/entity", empty, "");
            assert_eq!(a.status, 200, "{empty:?}: {}", a.body);
            assert_eq!(a.json()["components"], json!([]), "{empty:?}");
        }
    });
    assert_eq!(world.len(), 4 + 1 + 4);
    let probe = world.lookup("probe").unwrap();
    assert_eq!(world.get::<Mass>(probe), Ok(&Mass(2.5)));
    assert_eq!(world.get::<Velocity>(probe), Ok(&Velocity([1.0, 2.0, 3.0])));
}

#[test]
fn a_refused_create_spawns_nothing_and_spends_no_id() {
    let (world, _) = world();
    let before = contents(&world);
    let (world, _) = serve_frames(world, config(true), move |addr| {
        let post = |body: &str| request(addr, "POST", "/api/entity", body, "");
        // The validator's message comes back as it is.
        assert_error(
            &post(r#"{"velocity": [1, 1, 1], "mass": 0}"#),
            422,
            "mass must be greater than 0, got 0",
        );
        assert_error(&post(r#"{"mass": "heavy"}"#), 422, "mass");
        assert_error(&post(r#"{"velocity": [1, 2]}"#), 422, "velocity");
        assert_error(
            &post(r#"{"mass": 1, "warp": 9}"#),
            404,
            "unknown component \"warp\"",
        );
        assert_error(&post("[1, 2]"), 400, "JSON object of component values");
        assert_error(&post("7"), 400, "JSON object");
        assert_error(&post("{"), 400, "not JSON");
        assert_error(
            &request(addr, "POST", "/api/entity?x=1", "{}", ""),
            400,
            "x",
        );
        assert_eq!(get(addr, "/api/world").json()["entities"], 4);
    });
    assert_eq!(contents(&world), before, "refusals change nothing");
    let mut world = world;
    assert_eq!(world.spawn(()).to_string(), "4v0", "no id was spent");
}

#[test]
fn put_adds_a_missing_component_and_sets_one_it_has() {
    let (world, ships) = world();
    let ship = ships[1];
    let (world, _) = serve_frames(world, config(true), move |addr| {
        let put = |name: &str, body: &str| {
            request(
                addr,
                "PUT",
                &format!("/api/entity/{ship}/components/{name}"),
                body,
                "",
            )
        };
        // A registered type the world has never met.
        let a = put("shield", r#"{"hp": 40, "up": true}"#);
        assert_eq!(a.status, 200, "{}", a.body);
        assert_eq!(
            component(&a.json(), "shield"),
            Some(&json!({"hp": 40, "up": true}))
        );
        let a = put("mass", "7.5");
        assert_eq!(a.status, 200, "{}", a.body);
        assert_eq!(component(&a.json(), "mass"), Some(&json!(7.5)));
        // Refused: the world keeps the values it had.
        assert_error(&put("mass", "0"), 422, "mass must be greater than 0");
        assert_error(&put("shield", r#"{"hp": -1, "up": true}"#), 422, "shield");
        assert_error(&put("warp", "1"), 404, "unknown component");
        let d = get(addr, &format!("/api/entity/{ship}")).json();
        assert_eq!(component(&d, "mass"), Some(&json!(7.5)));
    });
    assert_eq!(world.get::<Mass>(ship), Ok(&Mass(7.5)));
    assert_eq!(world.get::<Shield>(ship), Ok(&Shield { hp: 40, up: true }));
}

#[test]
fn delete_removes_one_component_and_refuses_what_is_not_there() {
    let (mut world, ships) = world();
    let (ship, other) = (ships[2], ships[3]);
    let gone = world.spawn((Mass(1.0),));
    world.despawn(gone).unwrap();
    let (world, _) = serve_frames(world, config(true), move |addr| {
        let delete = |e: Entity, name: &str| {
            request(
                addr,
                "DELETE",
                &format!("/api/entity/{e}/components/{name}"),
                "",
                "",
            )
        };
        let a = delete(ship, "velocity");
        assert_eq!(a.status, 200, "{}", a.body);
        let d = a.json();
        assert_eq!(component(&d, "velocity"), None);
        assert_eq!(component(&d, "mass"), Some(&json!(3.0)));
        assert_error(
            &delete(ship, "velocity"),
            404,
            "has no component \"velocity\"",
        );
        assert_error(&delete(ship, "shield"), 404, "unknown component \"shield\"");
        assert_error(&delete(ship, "warp"), 404, "unknown component");
        assert_error(&delete(gone, "mass"), 404, "not alive");
        assert_error(
            &request(addr, "DELETE", "/api/entity/x/components/mass", "", ""),
            400,
            "entity id",
        );
        // A cross-origin edit is refused before it reaches the world.
        let cross = request(
            addr,
            "DELETE",
            &format!("/api/entity/{other}/components/mass"),
            "",
            "Origin: http://evil.example\r\n",
        );
        assert_eq!(cross.status, 403);
    });
    assert!(world.get::<Velocity>(ship).is_err());
    assert_eq!(world.get::<Mass>(ship), Ok(&Mass(3.0)));
    assert_eq!(
        world.get::<Mass>(other),
        Ok(&Mass(4.0)),
        "cross-origin refused"
    );
    assert_eq!(world.get::<Velocity>(other), Ok(&Velocity([0.0; 3])));
}

#[test]
fn a_removed_component_of_an_instance_reads_its_prefabs_again() {
    let mut world = World::new();
    let prefab = world.spawn((doecs::Prefab, Mass(10.0)));
    let instance = world.instantiate(prefab, 1).unwrap()[0];
    world.insert_one(instance, Mass(3.0)).unwrap();
    let (world, _) = serve_frames(world, config(true), move |addr| {
        let path = format!("/api/entity/{instance}/components/mass");
        assert_eq!(request(addr, "DELETE", &path, "", "").status, 200);
        // Its own value is gone; the prefab's is not its own to remove.
        assert_error(&request(addr, "DELETE", &path, "", ""), 404, "prefab");
    });
    assert_eq!(world.get::<Mass>(instance), Ok(&Mass(10.0)));
    assert_eq!(world.get::<Mass>(prefab), Ok(&Mass(10.0)));
}
