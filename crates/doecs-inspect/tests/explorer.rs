//! The explorer's reads end to end, over a real server: relationships both
//! ways (incoming pairs by relation, with names, bounded), prefabs with
//! their instance counts, and the world's history (entities, archetypes,
//! bytes and frame time per frame).

use doecs::prelude::*;
use doecs::{IsA, Name, Prefab};
use doecs_inspect::entity::MAX_INCOMING;
use doecs_inspect::{Inspector, InspectorConfig};
use serde_json::{json, Value};
use std::time::Duration;

mod common;
use common::{get, serve_frames};

#[derive(Clone)]
struct Escorts;
impl doecs::Relation for Escorts {}

fn config() -> InspectorConfig {
    InspectorConfig::new("127.0.0.1:0")
}

#[test]
fn incoming_pairs_name_their_sources_per_relation_bounded_with_a_total() {
    let mut world = World::new();
    let flagship = world.spawn((Name::new("flagship"), 1u32));
    let escorts: Vec<Entity> = (0..MAX_INCOMING + 50)
        .map(|i| {
            let e = world.spawn((Name::new(format!("escort{i}")),));
            world.add_pair(e, flagship, Escorts).unwrap();
            e
        })
        .collect();
    let bridge = world.spawn((Name::new("bridge"),));
    world.set_parent(bridge, flagship).unwrap();
    let first = escorts[0];
    serve_frames(world, config(), move |addr| {
        let d = get(addr, &format!("/api/entity/{flagship}"));
        assert_eq!(d.status, 200, "{}", d.body);
        let d = d.json();
        let total = (MAX_INCOMING + 50) as u64;
        assert_eq!(d["incoming"], json!({ "ChildOf": 1, "Escorts": total }));
        let pairs = d["incoming_pairs"].as_array().unwrap();
        let escorts_in = pairs.iter().find(|p| p["relation"] == "Escorts").unwrap();
        assert_eq!(escorts_in["total"], total);
        let sources = escorts_in["sources"].as_array().unwrap();
        assert_eq!(sources.len(), MAX_INCOMING, "bounded");
        // In attachment order, with their names.
        assert_eq!(sources[0]["id"], first.to_string());
        assert_eq!(sources[0]["name"], "escort0");
        assert_eq!(
            sources[MAX_INCOMING - 1]["name"],
            format!("escort{}", MAX_INCOMING - 1)
        );
        let child_of = pairs.iter().find(|p| p["relation"] == "ChildOf").unwrap();
        assert_eq!(child_of["total"], 1);
        assert_eq!(child_of["sources"][0]["name"], "bridge");
        // The other way: an escort's outgoing pair names the flagship.
        let e = get(addr, &format!("/api/entity/{first}")).json();
        assert_eq!(e["relationships"][0]["relation"], "Escorts");
        assert_eq!(e["relationships"][0]["target"]["name"], "flagship");
        assert_eq!(e["incoming_pairs"], json!([]));
    });
}

#[test]
fn prefabs_are_listed_with_names_and_instance_counts() {
    let mut world = World::new();
    let drone = world.spawn((Prefab, Name::new("drone"), 5u32));
    let turret = world.spawn((Prefab, Name::new("turret")));
    let drones = world.instantiate(drone, 4).unwrap();
    let heavy = world.spawn((Name::new("heavy drone"),));
    world.add_pair(heavy, drone, IsA).unwrap();
    // An instance that is itself a prefab for others.
    let veteran = world.instantiate(drone, 1).unwrap()[0];
    let recruit = world.spawn(());
    world.add_pair(recruit, veteran, IsA).unwrap();
    let first_drone = drones[0];
    let (_, frames) = serve_frames(world, config(), move |addr| {
        let p = get(addr, "/api/prefabs");
        assert_eq!(p.status, 200, "{}", p.body);
        let p = p.json();
        assert_eq!(p["total"], 3);
        assert_eq!(p["instances"], 7);
        let rows: Vec<(String, Value, u64, bool)> = p["prefabs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                (
                    r["entity"]["id"].as_str().unwrap().to_owned(),
                    r["entity"]["name"].clone(),
                    r["instances"].as_u64().unwrap(),
                    r["tagged"].as_bool().unwrap(),
                )
            })
            .collect();
        assert_eq!(
            rows,
            [
                (drone.to_string(), json!("drone"), 6, true),
                // An instance reads its prefab's name.
                (veteran.to_string(), json!("drone"), 1, false),
                (turret.to_string(), json!("turret"), 0, true),
            ]
        );
        assert_eq!(p["prefabs"][1]["instance_of"]["id"], drone.to_string());
        let page = get(addr, "/api/prefabs?offset=1&limit=1").json();
        assert_eq!(page["prefabs"].as_array().unwrap().len(), 1);
        assert_eq!(page["prefabs"][0]["entity"]["id"], veteran.to_string());
        assert_eq!(page["total"], 3);
        // The prefab's detail lists its instances as incoming IsA pairs.
        let d = get(addr, &format!("/api/entity/{drone}")).json();
        let is_a = d["incoming_pairs"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["relation"] == "IsA")
            .unwrap()
            .clone();
        assert_eq!(is_a["total"], 6);
        assert_eq!(is_a["sources"][0]["id"], first_drone.to_string());
        assert_eq!(get(addr, "/api/prefabs?limit=100000").status, 400);
        assert_eq!(get(addr, "/api/prefabs?colour=red").status, 400);
        assert_eq!(
            common::request(addr, "POST", "/api/prefabs", "", "").status,
            405
        );
    });
    assert!(frames > 0);
}

#[test]
fn the_history_records_the_world_after_every_frame() {
    let mut world = World::new();
    world.spawn_batch((0..100u32).map(|i| (i,)));
    let mut inspector = Inspector::start(config().write(false)).unwrap();
    let addr = inspector.addr();
    let client = std::thread::spawn(move || {
        let deadline = std::time::Instant::now() + Duration::from_secs(20);
        loop {
            let h = get(addr, "/api/history?last=30").json();
            if h["frames"].as_array().unwrap().len() == 30 {
                return h;
            }
            assert!(std::time::Instant::now() < deadline, "no frames: {h}");
            std::thread::sleep(Duration::from_millis(5));
        }
    });
    // Each frame spawns one entity, and every tenth one of a new archetype.
    let mut n = 0u64;
    while !client.is_finished() {
        inspector.between_frames(&mut world);
        n += 1;
        if n.is_multiple_of(10) {
            world.spawn((n, n as f32));
        } else {
            world.spawn((n as u32,));
        }
        inspector.record_frame(&world, Duration::from_micros(n), &[]);
        std::thread::sleep(Duration::from_millis(1));
    }
    let h = client.join().unwrap();
    let frames: Vec<u64> = serde_json::from_value(h["frames"].clone()).unwrap();
    let entities: Vec<u64> = serde_json::from_value(h["entities"].clone()).unwrap();
    let times: Vec<f64> = serde_json::from_value(h["frame_time_us"].clone()).unwrap();
    let archetypes: Vec<u64> = serde_json::from_value(h["archetypes"].clone()).unwrap();
    let used: Vec<u64> = serde_json::from_value(h["bytes_used"].clone()).unwrap();
    let reserved: Vec<u64> = serde_json::from_value(h["bytes_reserved"].clone()).unwrap();
    for i in 0..30 {
        // Frame f spawned the 100 + f-th entity, and took f µs.
        assert_eq!(entities[i], 100 + frames[i], "{h}");
        assert_eq!(times[i], frames[i] as f64, "{h}");
        let expected = if frames[i] >= 10 { 2 } else { 1 };
        assert_eq!(archetypes[i], expected, "{h}");
        assert!(used[i] <= reserved[i], "{h}");
        if i > 0 {
            assert_eq!(frames[i], frames[i - 1] + 1);
            assert!(used[i] > used[i - 1], "every frame adds a row: {h}");
        }
    }
    // Since a frame: only the newer ones; the limits are checked.
    let last = *frames.last().unwrap();
    let client = std::thread::spawn(move || {
        let newer = get(addr, &format!("/api/history?since={}", last - 2)).json();
        let cap = newer["capacity"].as_u64().unwrap();
        assert!(newer["frames"].as_array().unwrap().len() >= 2, "{newer}");
        assert_eq!(newer["frames"][0], last - 1);
        assert_eq!(
            get(addr, &format!("/api/history?last={}", cap + 1)).status,
            400
        );
        assert_eq!(get(addr, "/api/history?since=x").status, 400);
        assert_eq!(get(addr, "/api/history?frames=1").status, 400);
    });
    while !client.is_finished() {
        inspector.between_frames(&mut world);
        std::thread::sleep(Duration::from_millis(1));
    }
    client.join().unwrap();
}

#[test]
fn the_history_through_the_plugin_follows_the_apps_world() {
    let mut app = App::with_threads(1);
    app.add_plugins(doecs_inspect::InspectorPlugin::new(config()))
        .unwrap();
    app.add_systems(
        Update,
        (|mut commands: Commands| {
            commands.spawn((1u8,));
        })
        .named("grow"),
    )
    .unwrap();
    let handle = app
        .world()
        .resource::<doecs_inspect::InspectorHandle>()
        .unwrap()
        .clone();
    for _ in 0..6 {
        app.update().unwrap();
    }
    // The sixth update is recorded when the next one starts, or here.
    handle.finish(app.world_mut());
    let addr = handle.addr();
    let client = std::thread::spawn(move || get(addr, "/api/history").json());
    while !client.is_finished() {
        handle.serve_until(
            app.world_mut(),
            std::time::Instant::now() + Duration::from_millis(5),
        );
    }
    let h = client.join().unwrap();
    assert_eq!(h["frames"], json!([1, 2, 3, 4, 5, 6]), "{h}");
    assert_eq!(h["entities"], json!([1, 2, 3, 4, 5, 6]), "{h}");
    assert_eq!(h["archetypes"], json!([1, 1, 1, 1, 1, 1]), "{h}");
}
