//! `ParamSet`: parameters that conflict with each other, used one at a
//! time, and how the set conflicts with a system's other parameters.

// A set's type names its members' types in full: that is what is tested.
#![allow(clippy::type_complexity)]

use doecs::prelude::*;
use doecs::{function_system, System};

#[derive(Clone, Copy, Debug, PartialEq)]
struct Pos(i32);
#[derive(Clone, Copy, Debug, PartialEq)]
struct Vel(i32);
struct Frozen;
#[derive(Default, Debug, PartialEq)]
struct Score(i32);
#[derive(Default)]
struct Log(Vec<String>);

/// Reads every `Pos`, then writes each one, then reads them again: the
/// same component through both members, in turns.
fn shift_to_total(mut set: ParamSet<(Query<&mut Pos>, Query<&Pos>)>, mut log: ResMut<Log>) {
    let total: i32 = set.p1().iter().map(|p| p.0).sum();
    set.p0().for_each(|p| p.0 += total);
    let after: i32 = set.p1().iter().map(|p| p.0).sum();
    log.0.push(format!("{total} -> {after}"));
}

#[test]
fn members_read_and_write_the_same_component_in_turns() {
    let mut world = World::new();
    world.insert_resource(Log::default());
    let a = world.spawn((Pos(1),));
    let b = world.spawn((Pos(2), Vel(0)));
    let mut schedule = Schedule::with_threads(2);
    schedule.add_system(shift_to_total).unwrap();
    schedule.run(&mut world).unwrap();
    schedule.run(&mut world).unwrap();
    assert_eq!(world.get::<Pos>(a), Ok(&Pos(1 + 3 + 9)));
    assert_eq!(world.get::<Pos>(b), Ok(&Pos(2 + 3 + 9)));
    assert_eq!(world.resource::<Log>().unwrap().0, ["3 -> 9", "9 -> 27"]);
}

#[test]
fn a_member_item_may_be_kept_while_the_set_is_not_used() {
    fn system(
        mut set: ParamSet<(Query<&mut Pos>, Query<(Entity, &Pos)>)>,
        mut score: ResMut<Score>,
    ) {
        let mut writer = set.p0();
        for p in writer.iter_mut() {
            p.0 *= 10;
        }
        drop(writer);
        let reader = set.p1();
        let seen: Vec<i32> = reader.iter().map(|(_, p)| p.0).collect();
        score.0 = seen.iter().sum();
    }
    let mut world = World::new();
    world.insert_resource(Score::default());
    world.spawn_batch((1..=3).map(|i| (Pos(i),)));
    let mut schedule = Schedule::new();
    schedule.add_system(system).unwrap();
    schedule.run(&mut world).unwrap();
    assert_eq!(world.resource::<Score>(), Some(&Score(60)));
}

#[test]
fn the_set_conflicts_with_other_parameters_as_its_members_would() {
    fn bad(_set: ParamSet<(Query<&mut Pos>, Query<&Pos>)>, _other: Query<&Pos>) {}
    let err = Schedule::new().add_system(bad).err().unwrap();
    match &err {
        ScheduleError::ConflictingParams { first, second, .. } => {
            assert_eq!(first, "ParamSet<(Query<&mut Pos>, Query<&Pos>)>");
            assert_eq!(second, "Query<&Pos>");
        }
        other => panic!("{other:?}"),
    }
    assert!(
        err.to_string().contains("component `param_set::Pos`"),
        "{err}"
    );

    // Two reading members beside a reader: fine.
    fn readers(_set: ParamSet<(Query<&Pos>, Query<(&Pos, &Vel)>)>, _other: Query<&Pos>) {}
    Schedule::new().add_system(readers).unwrap();

    // Every member kept apart from the other parameter by a filter: fine.
    fn apart(
        _set: ParamSet<(Query<&mut Pos, With<Frozen>>, Query<(&Pos, &Frozen)>)>,
        _other: Query<&mut Pos, Without<Frozen>>,
    ) {
    }
    Schedule::new().add_system(apart).unwrap();
    // One member not kept apart: the set is not either.
    fn one_not_apart(
        _set: ParamSet<(Query<&mut Pos, With<Frozen>>, Query<&Pos>)>,
        _other: Query<&mut Pos, Without<Frozen>>,
    ) {
    }
    assert!(matches!(
        Schedule::new().add_system(one_not_apart),
        Err(ScheduleError::ConflictingParams { .. })
    ));
    // The other order of parameters too.
    fn after(_other: Query<&mut Pos>, _set: ParamSet<(Query<&Vel>, Query<&Pos>)>) {}
    assert!(matches!(
        Schedule::new().add_system(after),
        Err(ScheduleError::ConflictingParams { .. })
    ));
}

#[test]
fn the_set_access_is_its_members_union() {
    fn system(_set: ParamSet<(Query<&mut Pos>, Query<&Vel>, Res<Score>)>) {}
    let system = function_system(system).unwrap();
    let access = system.access();
    assert_eq!(access.components.writes().len(), 1);
    assert_eq!(access.components.reads().len(), 1);
    assert_eq!(access.resources.reads().len(), 1);
    assert_eq!(access.required_resources.len(), 1);
    assert_eq!(system.params().len(), 1, "the set is one parameter");
}

#[test]
fn an_invalid_member_makes_the_set_invalid() {
    fn bad(_set: ParamSet<(Query<&Vel>, Query<(&mut Pos, &Pos)>)>) {}
    let err = Schedule::new().add_system(bad).err().unwrap();
    assert!(
        matches!(&err, ScheduleError::InvalidParam { param, reason, .. }
            if param.starts_with("ParamSet<") && reason.contains("Query<(&mut Pos, &Pos)>")),
        "{err:?}"
    );
}

/// A set of commands and resources: `Commands` and `ResMut<Score>`
/// beside a `Res<Score>` reading what the other member wrote.
fn commands_and_resources(mut set: ParamSet<(Commands, ResMut<Score>, Res<Score>, Local<i32>)>) {
    let runs = {
        let mut local = set.p3();
        *local += 1;
        *local
    };
    set.p1().0 += runs;
    let score = set.p2().0;
    set.p0().spawn((Pos(score),));
}

#[test]
fn commands_and_resources_in_a_set() {
    let mut world = World::new();
    world.insert_resource(Score::default());
    let mut schedule = Schedule::with_threads(2);
    schedule.add_system(commands_and_resources).unwrap();
    for _ in 0..3 {
        schedule.run(&mut world).unwrap();
    }
    assert_eq!(world.resource::<Score>(), Some(&Score(1 + 2 + 3)));
    let mut spawned: Vec<i32> = world.query::<&Pos>().iter().map(|p| p.0).collect();
    spawned.sort();
    assert_eq!(
        spawned,
        [1, 3, 6],
        "the local counted runs, the commands applied"
    );

    // Commands in the set beside other commands: refused, one buffer.
    fn two_buffers(_set: ParamSet<(Commands, Query<&Pos>)>, _c: Commands) {}
    assert!(matches!(
        Schedule::new().add_system(two_buffers),
        Err(ScheduleError::ConflictingParams { .. })
    ));
    // A resource written in the set, read beside it: refused.
    fn res_conflict(_set: ParamSet<(ResMut<Score>, Query<&Pos>)>, _r: Res<Score>) {}
    assert!(matches!(
        Schedule::new().add_system(res_conflict),
        Err(ScheduleError::ConflictingParams { .. })
    ));
}

#[test]
fn a_required_resource_of_a_member_is_required() {
    fn needs(_set: ParamSet<(Res<Score>, Query<&Pos>)>) {}
    let mut world = World::new();
    let mut schedule = Schedule::new();
    schedule.add_system(needs).unwrap();
    assert!(matches!(
        schedule.run(&mut world),
        Err(ScheduleError::MissingResource { .. })
    ));
    world.insert_resource(Score::default());
    schedule.run(&mut world).unwrap();
}

/// A set whose writing member and a reading system of its own: the
/// schedule orders the two (their accesses conflict), so with two threads
/// the reader sees either all or none of a run's writes.
#[test]
fn a_set_that_writes_is_ordered_against_readers() {
    fn writer(mut set: ParamSet<(Query<&mut Pos>, Query<&Vel>)>) {
        let v: i32 = set.p1().iter().map(|v| v.0).sum();
        set.p0().for_each(|p| p.0 += v);
    }
    fn reader(q: Query<&Pos>, mut log: ResMut<Log>) {
        let seen: Vec<i32> = q.iter().map(|p| p.0).collect();
        log.0.push(format!("{seen:?}"));
    }
    let mut world = World::new();
    world.insert_resource(Log::default());
    world.spawn((Pos(0), Vel(1)));
    world.spawn((Pos(0),));
    let mut schedule = Schedule::with_threads(2);
    schedule.add_system(writer.before(reader)).unwrap();
    schedule.add_system(reader).unwrap();
    let w = function_system(writer).unwrap();
    let r = function_system(reader).unwrap();
    assert!(w.access().conflict_with(r.access()).is_some());
    schedule.run(&mut world).unwrap();
    schedule.run(&mut world).unwrap();
    let log = &world.resource::<Log>().unwrap().0;
    assert_eq!(log.len(), 2);
    assert!(log[0].contains('1') && log[1].contains('2'), "{log:?}");
}
