//! The app: phases, startup, the exit event, plugins, time, the fixed step
//! and determinism across thread counts.

use doecs::prelude::*;
use doecs::LastUpdate;
use doecs::{AppError, Runner};
use std::sync::{Arc, Mutex};
use std::time::Duration;

type Log = Arc<Mutex<Vec<String>>>;

fn logger(log: &Log, name: &'static str) -> impl FnMut(&mut World) + Send + 'static {
    let log = log.clone();
    move |_world: &mut World| log.lock().unwrap().push(name.to_owned())
}

fn take(log: &Log) -> Vec<String> {
    std::mem::take(&mut *log.lock().unwrap())
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Physics;

#[test]
fn phases_run_in_order_and_startup_once() -> Result<(), AppError> {
    let log = Log::default();
    let mut app = App::with_threads(2);
    app.set_time_source(TimeSource::Manual(Duration::from_millis(16)));
    // Added out of order: the phases decide when each runs.
    app.add_systems(Last, logger(&log, "last"))?;
    app.add_systems(Update, logger(&log, "update"))?;
    app.add_systems(First, logger(&log, "first"))?;
    app.add_systems(PostUpdate, logger(&log, "post"))?;
    app.add_systems(PreUpdate, logger(&log, "pre"))?;
    app.add_systems(Startup, logger(&log, "startup"))?;
    app.insert_phase_after(Update, Physics)?;
    app.add_systems(Physics, logger(&log, "physics"))?;
    app.update()?;
    assert_eq!(
        take(&log),
        ["startup", "first", "pre", "update", "physics", "post", "last"]
    );
    app.update()?;
    assert_eq!(
        take(&log),
        ["first", "pre", "update", "physics", "post", "last"]
    );
    assert!(matches!(
        app.add_systems(Startup, |_: &mut World| {}),
        Err(AppError::UnknownPhase { .. })
    ));
    assert!(matches!(
        app.insert_phase_before(First, Physics),
        Err(AppError::DuplicatePhase { .. })
    ));
    assert!(matches!(
        app.insert_phase_after(Startup, 7u8),
        Err(AppError::UnknownPhase { .. })
    ));
    let order: Vec<String> = app.phases().map(|l| format!("{l:?}")).collect();
    assert_eq!(
        order,
        [
            "First",
            "PreUpdate",
            "FixedUpdate",
            "Update",
            "Physics",
            "PostUpdate",
            "Last"
        ]
    );
    Ok(())
}

struct Frames(u32);

fn count_and_exit_at_five(mut frames: ResMut<Frames>, mut exit: EventWriter<AppExit>) {
    frames.0 += 1;
    if frames.0 == 5 {
        exit.send(AppExit::Success);
    }
}

#[test]
fn an_exit_sent_in_any_phase_ends_the_run_after_that_update() -> Result<(), AppError> {
    for late in [false, true] {
        let mut app = App::with_threads(1);
        app.world_mut().insert_resource(Frames(0));
        if late {
            app.add_systems(Last, count_and_exit_at_five)?;
        } else {
            app.add_systems(First, count_and_exit_at_five)?;
        }
        assert_eq!(app.run()?, AppExit::Success);
        assert_eq!(app.world().resource::<Frames>().unwrap().0, 5);
    }
    // A frame limit ends the run too, and an error code comes back as sent.
    let mut app = App::with_threads(1);
    app.world_mut().insert_resource(Frames(0));
    app.add_systems(Update, |mut f: ResMut<Frames>| f.0 += 1)?;
    app.set_runner(Runner::Frames(7));
    assert_eq!(app.run()?, AppExit::Success);
    assert_eq!(app.world().resource::<Frames>().unwrap().0, 7);
    let code = std::num::NonZeroU8::new(3).unwrap();
    app.add_systems(PostUpdate, move |mut exit: EventWriter<AppExit>| {
        exit.send(AppExit::Error(code))
    })?;
    assert_eq!(app.update()?, Some(AppExit::Error(code)));
    Ok(())
}

#[test]
fn a_custom_runner_drives_the_updates() -> Result<(), AppError> {
    let mut app = App::with_threads(1);
    app.world_mut().insert_resource(Frames(0));
    app.add_systems(Update, |mut f: ResMut<Frames>| f.0 += 1)?;
    app.set_runner(Runner::Custom(Box::new(|app: &mut App| {
        for _ in 0..4 {
            app.update()?;
        }
        Ok(AppExit::Success)
    })));
    assert_eq!(app.run()?, AppExit::Success);
    assert_eq!(app.world().resource::<Frames>().unwrap().0, 4);
    // The headless fixed-rate runner gives every frame the same length.
    let mut app = App::with_threads(1);
    app.set_runner(Runner::FixedRate {
        frame: Duration::from_millis(2),
        limit: 3,
    });
    app.run()?;
    let time = app.world().resource::<Time>().unwrap();
    assert_eq!(
        (time.ticks(), time.elapsed()),
        (3, Duration::from_millis(6))
    );
    Ok(())
}

#[derive(Clone, Debug, PartialEq)]
struct Ping(u32);

#[test]
fn events_are_turned_over_once_per_frame() -> Result<(), AppError> {
    // Sent in Update; read by a reader in First and one in Last: each sees
    // every event once, the First reader in the next frame.
    let seen: Arc<Mutex<Vec<(&str, u32)>>> = Arc::default();
    let mut app = App::with_threads(2);
    app.world_mut().add_event::<Ping>();
    app.world_mut().insert_resource(Frames(0));
    app.add_systems(Update, |mut f: ResMut<Frames>, mut w: EventWriter<Ping>| {
        f.0 += 1;
        w.send(Ping(f.0));
    })?;
    let reader = |who: &'static str| {
        let seen = seen.clone();
        move |mut r: EventReader<Ping>| {
            for p in r.read() {
                seen.lock().unwrap().push((who, p.0));
            }
        }
    };
    app.add_systems(First, reader("first"))?;
    app.add_systems(Last, reader("last"))?;
    for _ in 0..3 {
        app.update()?;
    }
    let mut seen = seen.lock().unwrap().clone();
    seen.sort();
    assert_eq!(
        seen,
        [
            ("first", 1),
            ("first", 2),
            ("last", 1),
            ("last", 2),
            ("last", 3)
        ]
    );
    Ok(())
}

struct Steps(Vec<u32>);

#[test]
fn the_fixed_step_runs_as_the_accumulated_time_says() -> Result<(), AppError> {
    let mut app = App::with_threads(1);
    app.set_time_source(TimeSource::Manual(Duration::from_millis(10)));
    app.world_mut()
        .insert_resource(Time::<Fixed>::with_timestep(Duration::from_millis(4)));
    app.world_mut().insert_resource(Steps(Vec::new()));
    app.add_systems(
        FixedUpdate,
        |fixed: Res<Time<Fixed>>, mut s: ResMut<Steps>| s.0.push(fixed.ticks() as u32),
    )?;
    app.add_systems(Update, |fixed: Res<Time<Fixed>>, mut s: ResMut<Steps>| {
        s.0.push(1000 + fixed.steps_this_update())
    })?;
    for _ in 0..4 {
        app.update()?;
    }
    // 10 ms frames, 4 ms steps: 2, 3, 2, 3 steps (40 ms = 10 steps).
    assert_eq!(
        app.world().resource::<Steps>().unwrap().0,
        [1, 2, 1002, 3, 4, 5, 1003, 6, 7, 1002, 8, 9, 10, 1003]
    );
    let fixed = app.world().resource::<Time<Fixed>>().unwrap();
    assert_eq!(fixed.elapsed(), Duration::from_millis(40));
    assert_eq!(fixed.overstep(), Duration::ZERO);

    // A one-second hitch runs at most the cap, and the rest is dropped.
    app.set_time_source(TimeSource::Manual(Duration::from_secs(1)));
    app.world_mut()
        .resource_mut::<Time<Fixed>>()
        .unwrap()
        .set_max_steps_per_update(5);
    app.update()?;
    let fixed = app.world().resource::<Time<Fixed>>().unwrap();
    assert_eq!(fixed.steps_this_update(), 5);
    assert_eq!(fixed.ticks(), 15);
    assert!(fixed.overstep() < Duration::from_millis(4));
    assert_eq!(
        fixed.dropped() + Duration::from_millis(20) + fixed.overstep(),
        Duration::from_secs(1)
    );
    let time = app.world().resource::<Time>().unwrap();
    assert_eq!(time.ticks(), 5);
    assert_eq!(time.delta(), Duration::from_secs(1));
    Ok(())
}

struct Base;
struct NeedsBase;
struct Counter(u32);

impl Plugin for Base {
    fn build(&self, app: &mut App) -> Result<(), AppError> {
        app.world_mut().insert_resource(Counter(0));
        app.add_systems(Update, |mut c: ResMut<Counter>| c.0 += 1)?;
        Ok(())
    }
}

impl Plugin for NeedsBase {
    fn build(&self, app: &mut App) -> Result<(), AppError> {
        if !app.has_plugin::<Base>() {
            app.add_plugins(Base)?;
        }
        app.add_systems(PostUpdate, |mut c: ResMut<Counter>| c.0 += 10)?;
        Ok(())
    }
}

#[test]
fn a_plugin_type_is_added_once_and_may_add_the_plugins_it_needs() -> Result<(), AppError> {
    let mut app = App::with_threads(1);
    app.add_plugins(Base)?.add_plugins(NeedsBase)?;
    let err = app.add_plugins(Base).unwrap_err();
    assert!(matches!(err, AppError::DuplicatePlugin { ref name } if name.ends_with("Base")));
    assert!(err.to_string().contains("added already"));
    app.update()?;
    assert_eq!(
        app.world().resource::<Counter>().unwrap().0,
        11,
        "each system once"
    );

    let mut app = App::with_threads(1);
    app.add_plugins(NeedsBase)?;
    assert!(app.has_plugin::<Base>());
    app.update()?;
    assert_eq!(app.world().resource::<Counter>().unwrap().0, 11);
    Ok(())
}

#[derive(Copy, Clone, Debug, PartialEq)]
struct Pos(i64);
#[derive(Copy, Clone, Debug, PartialEq)]
struct Vel(i64);

fn spawner(mut commands: Commands, time: Res<Time>) {
    let k = time.ticks() as i64;
    commands.spawn((Pos(k), Vel(k % 3 - 1)));
}

fn physics(mut q: Query<(&mut Pos, &Vel)>) {
    q.for_each(|(p, v)| p.0 += v.0);
}

fn reaper(mut commands: Commands, q: Query<(Entity, &Pos)>) {
    for (e, p) in q.iter() {
        if p.0 % 7 == 0 {
            commands.despawn(e);
        }
    }
}

fn simulate(threads: usize) -> Vec<(Entity, i64, i64)> {
    let mut app = App::with_threads(threads);
    app.set_time_source(TimeSource::Manual(Duration::from_millis(13)));
    app.world_mut()
        .insert_resource(Time::<Fixed>::with_timestep(Duration::from_millis(5)));
    app.add_systems(PreUpdate, spawner).unwrap();
    app.add_systems(FixedUpdate, physics).unwrap();
    app.add_systems(PostUpdate, reaper).unwrap();
    for _ in 0..200 {
        app.update().unwrap();
    }
    let mut out: Vec<(Entity, i64, i64)> = app
        .world()
        .query::<(Entity, &Pos, &Vel)>()
        .iter()
        .map(|(e, p, v)| (e, p.0, v.0))
        .collect();
    out.sort_by_key(|x| x.0.to_bits());
    out
}

#[test]
#[cfg_attr(miri, ignore)] // starts thread pools
fn the_world_after_n_updates_is_the_same_at_any_thread_count() {
    let one = simulate(1);
    assert!(one.len() > 50, "a world worth comparing: {}", one.len());
    for threads in [2, 4, 8] {
        assert_eq!(simulate(threads), one, "{threads} threads");
    }
}

/// What a `First` system saw of the update before it.
#[derive(Default)]
struct Previous(Vec<(u64, Vec<String>)>);

fn look_back(last: Option<Res<LastUpdate>>, mut seen: ResMut<Previous>) {
    let entry = match last {
        Some(last) => (
            last.number,
            last.systems.iter().map(|s| s.name.to_string()).collect(),
        ),
        None => (0, Vec::new()),
    };
    seen.0.push(entry);
}

fn in_update() {}

#[test]
fn systems_read_the_previous_update_from_last_update() -> Result<(), AppError> {
    let mut app = App::with_threads(1);
    app.world_mut().insert_resource(Previous::default());
    app.add_systems(First, look_back.named("look_back"))?;
    app.add_systems(Update, in_update.named("in_update"))?;
    app.update()?;
    app.update()?;
    let names = || vec!["look_back".to_owned(), "in_update".to_owned()];
    assert_eq!(
        app.world().resource::<Previous>().unwrap().0,
        [(0, vec![]), (1, names())]
    );
    let last = app.world().resource::<LastUpdate>().unwrap();
    assert_eq!(last.number, 2);
    assert!(last.wall >= last.systems.iter().map(|s| s.time).sum());
    assert_eq!(app.last_update_times().len(), 2);
    Ok(())
}

#[test]
fn shutdown_runs_once_when_the_loop_ends() -> Result<(), AppError> {
    let log = Log::default();
    let mut app = App::with_threads(1);
    app.add_systems(Update, logger(&log, "update"))?;
    app.add_systems(Shutdown, logger(&log, "shutdown"))?;
    app.set_runner(Runner::Frames(2));
    assert_eq!(app.run()?, AppExit::Success);
    assert_eq!(take(&log), ["update", "update", "shutdown"]);
    app.shutdown()?;
    assert!(take(&log).is_empty(), "once only");
    assert!(matches!(
        app.insert_phase_after(Last, Shutdown),
        Err(AppError::DuplicatePhase { .. })
    ));
    Ok(())
}
