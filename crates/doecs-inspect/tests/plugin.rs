//! The inspector as an app plugin: requests are answered between the
//! app's updates, the frames it shows are the app's (with their system
//! times), pause and step hold the app's loop, and a port that cannot be
//! bound is the plugin's error.

use doecs::prelude::*;
use doecs_inspect::{InspectorConfig, InspectorHandle, InspectorPlugin};
use std::time::{Duration, Instant};

mod common;
use common::{get, request};

#[derive(Default)]
struct Ticks(u64);

fn tick(mut commands: Commands, mut ticks: ResMut<Ticks>) {
    ticks.0 += 1;
    commands.spawn((ticks.0,));
}

fn app() -> App {
    let mut app = App::with_threads(1);
    app.add_plugins(InspectorPlugin::new(InspectorConfig::new("127.0.0.1:0")))
        .unwrap();
    app.world_mut().insert_resource(Ticks::default());
    app.add_systems(Update, tick.named("tick")).unwrap();
    app
}

#[test]
#[cfg_attr(miri, ignore)] // sockets
fn the_plugin_serves_between_updates_and_its_controls_hold_the_loop() {
    let mut app = app();
    let handle = app.world().resource::<InspectorHandle>().unwrap().clone();
    let addr = handle.addr();
    let client = std::thread::spawn(move || {
        let frame = || get(addr, "/api/controls").json()["frame"].as_u64().unwrap();
        let deadline = Instant::now() + Duration::from_secs(20);
        while frame() < 3 {
            assert!(Instant::now() < deadline, "no frames recorded");
            std::thread::sleep(Duration::from_millis(2));
        }
        // The world is seen between updates: one entity per update done.
        let paused = request(addr, "POST", "/api/controls/pause", "", "").json();
        assert_eq!(paused["paused"], true);
        let held = frame();
        let w = get(addr, "/api/world").json();
        assert_eq!(w["entities"].as_u64().unwrap(), held, "{w}");
        std::thread::sleep(Duration::from_millis(50));
        assert_eq!(frame(), held, "paused: the app's loop waits in First");
        request(addr, "POST", "/api/controls/step?frames=2", "", "");
        while frame() < held + 2 {
            assert!(Instant::now() < deadline, "steps never ran");
            std::thread::sleep(Duration::from_millis(2));
        }
        std::thread::sleep(Duration::from_millis(50));
        assert_eq!(frame(), held + 2);
        let systems = get(addr, "/api/systems?last=2").json();
        let names: Vec<&str> = systems["systems"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["name"].as_str().unwrap())
            .collect();
        assert!(names.contains(&"tick"), "{systems}");
        request(addr, "POST", "/api/controls/resume", "", "");
    });
    while !client.is_finished() {
        app.update().unwrap();
        std::thread::sleep(Duration::from_millis(1));
    }
    handle.finish(app.world_mut());
    if let Err(panic) = client.join() {
        std::panic::resume_unwind(panic);
    }
    assert!(handle.stats().requests >= 6);
    assert_eq!(
        handle.lock().frame(),
        app.world().resource::<Ticks>().unwrap().0,
        "every update was recorded once"
    );
}

#[test]
#[cfg_attr(miri, ignore)] // sockets
fn a_port_in_use_is_the_plugins_error() {
    let first = app();
    let addr = first.world().resource::<InspectorHandle>().unwrap().addr();
    let mut second = App::with_threads(1);
    let err = second
        .add_plugins(InspectorPlugin::new(InspectorConfig::new(addr.to_string())))
        .unwrap_err();
    assert!(matches!(err, AppError::Plugin { .. }), "{err}");
    assert!(!second.has_plugin::<InspectorPlugin>());
}
