//! Typed ordering: ordering against system functions and sets, set
//! configuration (order and run conditions), groups and chains.

use doecs::prelude::*;
use doecs::ScheduleError;
use std::sync::{Arc, Mutex};

type Log = Arc<Mutex<Vec<&'static str>>>;

struct Shared(Log);

fn push(log: &Shared, what: &'static str) {
    log.0.lock().unwrap().push(what);
}

// Every system writes `Shared`, so each pair conflicts and runs in some
// order: insertion order unless told otherwise.
fn input(log: ResMut<Shared>) {
    push(&log, "input");
}
fn physics(log: ResMut<Shared>) {
    push(&log, "physics");
}
fn render(log: ResMut<Shared>) {
    push(&log, "render");
}

#[derive(SystemSet, Clone, Debug, PartialEq, Eq, Hash)]
enum Stage {
    Simulate,
    Draw,
}

fn schedule_run(schedule: &mut Schedule) -> Vec<&'static str> {
    let log = Log::default();
    let mut world = World::new();
    world.insert_resource(Shared(log.clone()));
    schedule.run(&mut world).unwrap();
    let out = log.lock().unwrap().clone();
    out
}

#[test]
fn systems_are_ordered_against_system_functions() {
    let mut s = Schedule::with_threads(2);
    s.add_system(render.after(physics)).unwrap();
    s.add_system(physics.after(input)).unwrap();
    s.add_system(input).unwrap();
    assert_eq!(schedule_run(&mut s), ["input", "physics", "render"]);

    let mut s = Schedule::with_threads(1);
    s.add_system(render.after(physics)).unwrap();
    let err = s.build().unwrap_err();
    assert!(
        matches!(&err, ScheduleError::UnknownSystem { missing, .. } if missing.ends_with("physics")),
        "{err}"
    );
}

#[test]
fn sets_order_their_members_whenever_configured() {
    let mut s = Schedule::with_threads(2);
    s.configure_set(Stage::Simulate.before(Stage::Draw))
        .unwrap();
    s.add_system(render.in_set(Stage::Draw)).unwrap();
    s.add_system(physics.in_set(Stage::Simulate)).unwrap();
    s.add_system(input.before(Stage::Simulate)).unwrap();
    assert_eq!(schedule_run(&mut s), ["input", "physics", "render"]);
}

#[test]
fn chains_order_a_tuple_and_groups_share_configuration() -> Result<(), ScheduleError> {
    let mut s = Schedule::with_threads(2);
    s.add_systems((render, physics, input).chain())?;
    assert_eq!(schedule_run(&mut s), ["render", "physics", "input"]);

    let mut s = Schedule::with_threads(2);
    s.add_systems((physics, render).in_set(Stage::Draw))?;
    s.add_systems(input.after(Stage::Draw))?;
    assert_eq!(schedule_run(&mut s), ["physics", "render", "input"]);
    Ok(())
}

#[derive(Debug)]
struct Spawned;

#[test]
fn a_chain_sees_the_commands_of_the_links_before() -> Result<(), AppError> {
    let counts: Arc<Mutex<Vec<usize>>> = Arc::default();
    let c = counts.clone();
    let mut app = App::with_threads(2);
    app.add_systems(
        Update,
        (
            |mut commands: Commands| {
                commands.spawn((Spawned,));
            },
            move |q: Query<&Spawned>| c.lock().unwrap().push(q.iter().count()),
        )
            .chain(),
    )?;
    app.update()?;
    app.update()?;
    assert_eq!(*counts.lock().unwrap(), [1, 2]);
    Ok(())
}

struct Playing(bool);

fn playing(p: Res<Playing>) -> bool {
    p.0
}

#[test]
fn a_set_condition_guards_every_member_added_before_or_after() -> Result<(), AppError> {
    let log = Log::default();
    let mut app = App::with_threads(2);
    app.world_mut().insert_resource(Shared(log.clone()));
    app.world_mut().insert_resource(Playing(false));
    app.add_systems(Update, physics.in_set(Stage::Simulate))?;
    app.configure_set(Update, Stage::Simulate.run_if(playing))?;
    app.add_systems(Update, render.in_set(Stage::Simulate).after(physics))?;
    app.add_systems(Update, input.before(Stage::Simulate))?;
    app.update()?;
    assert_eq!(*log.lock().unwrap(), ["input"]);
    log.lock().unwrap().clear();
    app.world_mut().resource_mut::<Playing>().unwrap().0 = true;
    app.update()?;
    assert_eq!(*log.lock().unwrap(), ["input", "physics", "render"]);
    // A group's condition reaches each system of the group.
    log.lock().unwrap().clear();
    let mut s = Schedule::with_threads(1);
    s.add_systems(
        (input, render)
            .chain()
            .run_if(not(resource_exists::<Playing>())),
    )
    .unwrap();
    assert_eq!(schedule_run(&mut s), ["input", "render"]);
    Ok(())
}

#[test]
fn a_set_configured_with_a_writing_condition_is_refused_unchanged() {
    let mut s = Schedule::with_threads(1);
    s.add_system(physics.in_set(Stage::Simulate)).unwrap();
    let writes = |mut p: ResMut<Playing>| {
        p.0 = true;
        true
    };
    let err = s.configure_set(Stage::Simulate.run_if(writes)).unwrap_err();
    assert!(err.to_string().contains("only reads"), "{err}");
    // Nothing was attached: the system still runs.
    assert_eq!(schedule_run(&mut s), ["physics"]);
}
