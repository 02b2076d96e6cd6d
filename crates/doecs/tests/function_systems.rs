//! Function systems: plain functions whose parameters declare their access.

use doecs::prelude::*;
use doecs::{ComponentManager, DestroyNotice, ScheduleError};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

#[derive(Clone, Copy, Debug, PartialEq)]
struct Position(f32);
#[derive(Clone, Copy, Debug, PartialEq)]
struct Velocity(f32);
#[derive(Clone, Copy, Debug, PartialEq)]
struct Frozen;
#[derive(Clone, Copy, Debug, PartialEq)]
struct Bullet;
struct Dt(f32);
#[derive(Default)]
struct Frame(u32);

fn integrate(mut q: Query<(&mut Position, &Velocity), Without<Frozen>>, dt: Res<Dt>) {
    q.for_each(|(p, v)| p.0 += v.0 * dt.0);
}

fn fire(mut commands: Commands, mut shots: Local<u32>) {
    *shots += 1;
    let b = commands.spawn((Position(0.0), Velocity(*shots as f32)));
    commands.insert_one(b, Bullet);
}

fn count_frames(mut frame: ResMut<Frame>) {
    frame.0 += 1;
}

fn world() -> World {
    let mut world = World::new();
    world.insert_resource(Dt(0.5));
    world.insert_resource(Frame::default());
    world.spawn((Position(0.0), Velocity(2.0)));
    world.spawn((Position(0.0), Velocity(2.0), Frozen));
    world
}

#[test]
fn a_plain_function_is_a_system_and_its_access_comes_from_its_parameters() {
    let mut world = world();
    let mut schedule = Schedule::with_threads(2);
    schedule
        .add_system(integrate)
        .unwrap()
        .add_system(fire)
        .unwrap()
        .add_system(count_frames)
        .unwrap();
    for _ in 0..3 {
        schedule.run(&mut world).unwrap();
    }
    let moved: Vec<f32> = world
        .query_filtered::<&Position, Without<Frozen>>()
        .iter()
        .map(|p| p.0)
        .collect();
    // The original entity moved 3 times by 1.0; bullets spawned at 0 and then
    // moved by their velocity (1, 2) on the runs after their spawn.
    assert!(moved.contains(&3.0), "{moved:?}");
    assert_eq!(
        world
            .query_filtered::<&Position, With<Frozen>>()
            .iter()
            .next()
            .unwrap()
            .0,
        0.0
    );
    assert_eq!(
        world
            .query_filtered::<Entity, With<Bullet>>()
            .iter()
            .count(),
        3
    );
    assert_eq!(world.resource::<Frame>().unwrap().0, 3);
    // Local state persisted: the third bullet has velocity 3.
    let velocities: Vec<f32> = world
        .query_filtered::<&Velocity, With<Bullet>>()
        .iter()
        .map(|v| v.0)
        .collect();
    assert_eq!(velocities, vec![1.0, 2.0, 3.0]);
    // The plan orders nothing among them: they touch disjoint data.
    let plan = schedule.plan().unwrap().to_string();
    assert!(!plan.contains("integrate -> fire"), "{plan}");
    world.check_invariants();
}

#[test]
fn conflicting_parameters_are_refused_when_added_naming_both() {
    fn bad(_a: Query<&mut Position>, _b: Query<&Position>) {}
    let err = Schedule::new().add_system(bad).err().unwrap();
    match &err {
        ScheduleError::ConflictingParams {
            system,
            first,
            second,
            ..
        } => {
            assert_eq!(system, "bad");
            assert_eq!(first, "Query<&mut Position>");
            assert_eq!(second, "Query<&Position>");
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(
        err.to_string(),
        "system `bad`: parameters `Query<&mut Position>` and `Query<&Position>` conflict: \
         both access component `function_systems::Position`, one mutably"
    );
    fn two_commands(_a: Commands, _b: Commands) {}
    assert!(matches!(
        Schedule::new().add_system(two_commands),
        Err(ScheduleError::ConflictingParams { .. })
    ));
    fn read_and_write(_a: Res<Dt>, _b: ResMut<Dt>) {}
    assert!(matches!(
        Schedule::new().add_system(read_and_write),
        Err(ScheduleError::ConflictingParams { .. })
    ));
    fn aliasing(_a: Query<(&mut Position, &Position)>) {}
    let err = Schedule::new().add_system(aliasing).err().unwrap();
    assert!(
        matches!(&err, ScheduleError::InvalidParam { param, .. } if param == "Query<(&mut Position, &Position)>"),
        "{err:?}"
    );
}

#[test]
fn filters_that_keep_entities_apart_allow_both_queries() {
    fn split(
        mut moving: Query<&mut Position, Without<Frozen>>,
        mut frozen: Query<&Position, With<Frozen>>,
    ) {
        moving.for_each(|p| p.0 += 1.0);
        frozen.for_each(|p| assert_eq!(p.0, 0.0));
    }
    let mut world = world();
    let mut schedule = Schedule::new();
    schedule.add_system(split).unwrap();
    schedule.run(&mut world).unwrap();
    let sum: f32 = world.query::<&Position>().iter().map(|p| p.0).sum();
    assert_eq!(sum, 1.0);
}

#[test]
fn a_missing_resource_is_a_typed_error_before_any_system_starts() {
    static RAN: AtomicUsize = AtomicUsize::new(0);
    fn first(_q: Query<&Position>) {
        RAN.fetch_add(1, Ordering::SeqCst);
    }
    let mut world = World::new();
    world.spawn((Position(0.0), Velocity(1.0)));
    let mut schedule = Schedule::with_threads(2);
    schedule
        .add_system(first)
        .unwrap()
        .add_system(integrate)
        .unwrap();
    let err = schedule.run(&mut world).unwrap_err();
    assert_eq!(
        err,
        ScheduleError::MissingResource {
            system: "integrate".into(),
            resource: std::any::type_name::<Dt>(),
        }
    );
    assert_eq!(RAN.load(Ordering::SeqCst), 0, "no system started");
    world.insert_resource(Dt(1.0));
    schedule.run(&mut world).unwrap();
    assert_eq!(RAN.load(Ordering::SeqCst), 1);
}

#[test]
fn optional_resources_need_not_exist() {
    fn maybe(dt: Option<Res<Dt>>, mut seen: Local<Vec<bool>>) {
        seen.push(dt.is_some());
        assert!(seen.len() <= 2);
    }
    let mut world = World::new();
    let mut schedule = Schedule::new();
    schedule.add_system(maybe).unwrap();
    schedule.run(&mut world).unwrap();
    world.insert_resource(Dt(1.0));
    schedule.run(&mut world).unwrap();
}

#[derive(Default)]
struct Names(Vec<(Entity, String)>);
impl ComponentManager for Names {
    fn on_destroy(&mut self, destroyed: &[Entity]) {
        self.0.retain(|(e, _)| !destroyed.contains(e));
    }
}

#[test]
fn a_manager_written_by_one_system_runs_beside_systems_that_do_not_touch_it() {
    // `name` writes the manager; `flag_a` and `name` must overlap in time
    // (each waits, bounded, for the other's flag).
    let flags = Arc::new([AtomicBool::new(false), AtomicBool::new(false)]);
    let saw = Arc::new(AtomicUsize::new(0));
    let wait_for = |flags: &[AtomicBool; 2], me: usize, saw: &AtomicUsize| {
        flags[me].store(true, Ordering::SeqCst);
        let start = Instant::now();
        while start.elapsed() < Duration::from_secs(10) {
            if flags[1 - me].load(Ordering::SeqCst) {
                saw.fetch_add(1, Ordering::SeqCst);
                return;
            }
            std::thread::yield_now();
        }
    };
    let (f1, s1, f2, s2) = (flags.clone(), saw.clone(), flags.clone(), saw.clone());
    let name = move |mut names: ManagerMut<Names>, q: Query<Entity, With<Frozen>>| {
        let mut q = q;
        q.for_each(|e| names.0.push((e, "frozen".into())));
        wait_for(&f1, 0, &s1);
    };
    let mover = move |mut q: Query<&mut Position>| {
        q.for_each(|p| p.0 += 1.0);
        wait_for(&f2, 1, &s2);
    };
    let mut world = world();
    world.add_manager(Names::default(), DestroyNotice::Callback);
    let mut schedule = Schedule::with_threads(2);
    schedule
        .add_system(name.named("name"))
        .unwrap()
        .add_system(mover.named("mover"))
        .unwrap();
    schedule.run(&mut world).unwrap();
    assert_eq!(saw.load(Ordering::SeqCst), 2, "the two systems overlapped");
    assert_eq!(world.manager::<Names>().unwrap().0.len(), 1);
    // A reader of the manager is ordered after its writer.
    fn reader(names: Manager<Names>) {
        assert_eq!(names.0.len(), 1);
    }
    schedule.add_system(reader).unwrap();
    assert!(schedule.plan().unwrap().to_string().contains("manager"));
}

#[test]
fn a_missing_manager_is_a_typed_error() {
    fn reader(_names: Manager<Names>) {}
    let mut schedule = Schedule::new();
    schedule.add_system(reader).unwrap();
    assert!(matches!(
        schedule.run(&mut World::new()),
        Err(ScheduleError::MissingManager { .. })
    ));
}

#[test]
fn labels_and_names_order_function_systems() {
    let log = Arc::new(std::sync::Mutex::new(Vec::new()));
    let mut schedule = Schedule::with_threads(4);
    for (name, label) in [("late", None), ("b", Some("early")), ("a", Some("early"))] {
        let log = log.clone();
        let body = move |_q: Query<&Position>| log.lock().unwrap().push(name);
        let desc = body.named(name);
        let desc = match label {
            Some(l) => desc.label(l),
            None => desc.after("early"),
        };
        schedule.add_system(desc).unwrap();
    }
    let mut world = world();
    schedule.run(&mut world).unwrap();
    let log = log.lock().unwrap().clone();
    assert_eq!(log.last(), Some(&"late"), "{log:?}");
    assert!(matches!(
        Schedule::new()
            .add_system(integrate.after("nothing"))
            .unwrap()
            .build(),
        Err(ScheduleError::UnknownSystem { .. })
    ));
}

#[test]
fn an_exclusive_function_gets_the_whole_world() {
    fn spawn_two(world: &mut World) {
        world.spawn((Position(9.0),));
        world.spawn((Position(9.0),));
    }
    let mut world = World::new();
    let mut schedule = Schedule::new();
    schedule.add_system(spawn_two).unwrap();
    schedule.run(&mut world).unwrap();
    assert_eq!(world.len(), 2);
}

#[test]
fn default_names_are_numbered_and_given_names_must_be_unique() {
    let mut schedule = Schedule::new();
    schedule.add_system(|_q: Query<&Position>| {}).unwrap();
    schedule.add_system(|_q: Query<&Velocity>| {}).unwrap();
    let plan = schedule.plan().unwrap().to_string();
    assert!(
        plan.contains("::{{closure}}, ") && plan.contains("::{{closure}}#2"),
        "{plan}"
    );
    schedule
        .add_system((|_q: Query<&Position>| {}).named("same"))
        .unwrap();
    schedule
        .add_system((|_q: Query<&Velocity>| {}).named("same"))
        .unwrap();
    assert_eq!(
        schedule.build(),
        Err(ScheduleError::DuplicateName("same".into()))
    );
}

#[test]
fn parallel_loops_run_in_place_on_a_one_thread_schedule() {
    use std::collections::HashSet;
    use std::sync::Mutex;
    let threads_seen = Arc::new(Mutex::new(HashSet::new()));
    let seen = threads_seen.clone();
    let system_thread = Arc::new(Mutex::new(None));
    let st = system_thread.clone();
    let spread = move |mut q: Query<&mut Position>| {
        *st.lock().unwrap() = Some(std::thread::current().id());
        q.par_for_each(|p| {
            p.0 += 1.0;
            seen.lock().unwrap().insert(std::thread::current().id());
        });
    };
    // Several chunks (fewer under Miri, which takes minutes per 20,000
    // locked inserts).
    let n = if cfg!(miri) { 4_000 } else { 20_000 };
    let mut world = World::new();
    world.spawn_batch((0..n).map(|i| (Position(i as f32),)));
    let mut schedule = Schedule::with_threads(1);
    schedule.add_system(spread.named("spread")).unwrap();
    for _ in 0..3 {
        schedule.run(&mut world).unwrap();
    }
    let seen: Vec<_> = threads_seen.lock().unwrap().drain().collect();
    assert_eq!(
        seen,
        vec![system_thread.lock().unwrap().unwrap()],
        "in place"
    );
    assert_eq!(
        world.query::<&Position>().iter().map(|p| p.0).sum::<f32>(),
        (0..n).map(|i| i as f32 + 3.0).sum::<f32>()
    );
}
