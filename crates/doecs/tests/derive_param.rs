//! `#[derive(SystemParam)]`: a struct of system parameters used as one, in
//! function systems and on an `App`; conflicts between its fields, nesting
//! and its `Local` state.

use doecs::prelude::*;
use doecs::{function_system, ScheduleError, System};

#[derive(Clone, Copy, Debug, PartialEq)]
struct Hp(i32);
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Team(u8);
struct Dead;
#[derive(Default, Debug, PartialEq)]
struct Score(i32);
#[derive(Default, Debug, PartialEq)]
struct Turn(u32);
#[derive(Debug, PartialEq)]
struct Hit(i32);

/// Everything a combat system touches, as one parameter.
#[derive(SystemParam)]
struct Combat<'w> {
    units: Query<'w, (Entity, &'static mut Hp, &'static Team), Without<Dead>>,
    score: ResMut<'w, Score>,
    commands: Commands<'w>,
    ticks: Local<'w, u32>,
}

impl Combat<'_> {
    /// Hits every unit of `team` for `damage`; the ones that fall are
    /// marked dead (through the commands) and scored.
    fn strike(&mut self, team: u8, damage: i32) {
        *self.ticks += 1;
        let mut fallen = Vec::new();
        for (e, hp, t) in self.units.iter_mut() {
            if t.0 == team {
                hp.0 -= damage;
                if hp.0 <= 0 {
                    fallen.push(e);
                }
            }
        }
        self.score.0 += fallen.len() as i32;
        for e in fallen {
            self.commands.insert_one(e, Dead);
        }
    }
}

fn strike_red(mut combat: Combat) {
    combat.strike(1, 4);
}

#[test]
fn a_derived_parameter_in_a_schedule() {
    let mut world = World::new();
    world.insert_resource(Score::default());
    let red = world.spawn((Hp(5), Team(1)));
    let blue = world.spawn((Hp(5), Team(2)));
    let mut schedule = Schedule::with_threads(2);
    schedule.add_system(strike_red).unwrap();
    schedule.run(&mut world).unwrap();
    assert_eq!(world.get::<Hp>(red), Ok(&Hp(1)));
    assert!(world.get::<Dead>(red).is_err());
    schedule.run(&mut world).unwrap();
    assert!(world.get::<Dead>(red).is_ok(), "the commands were applied");
    assert_eq!(world.get::<Hp>(blue), Ok(&Hp(5)));
    assert_eq!(world.resource::<Score>(), Some(&Score(1)));
    // Dead units are filtered out: the third run changes nothing.
    schedule.run(&mut world).unwrap();
    assert_eq!(world.get::<Hp>(red), Ok(&Hp(-3)));
    assert_eq!(world.resource::<Score>(), Some(&Score(1)));
}

#[test]
fn its_access_is_its_fields_union() {
    let system = function_system(strike_red).unwrap();
    let access = system.access();
    assert_eq!(access.components.writes().len(), 1, "Hp");
    assert_eq!(
        access.components.reads().len(),
        1,
        "Team (and Dead only filtered)"
    );
    assert_eq!(access.resources.writes().len(), 1);
    assert!(access.commands);
    assert_eq!(access.required_resources.len(), 1);
    assert_eq!(system.params().len(), 1);
    assert_eq!(system.params()[0].name, "Combat");
}

/// A read-only parameter, nested in another with a `Local` of its own.
#[derive(SystemParam)]
struct Roster<'w> {
    units: Query<'w, &'static Team>,
    turn: Res<'w, Turn>,
}

#[derive(SystemParam)]
struct Report<'w> {
    roster: Roster<'w>,
    runs: Local<'w, Vec<u32>>,
    score: Option<Res<'w, Score>>,
    hits: EventWriter<'w, Hit>,
}

fn report(mut report: Report, mut log: ResMut<Vec<String>>) {
    let turn = report.roster.turn.0;
    report.runs.push(turn);
    let red = report.roster.units.iter().filter(|t| t.0 == 1).count();
    let score = report.score.as_ref().map(|s| s.0);
    report.hits.send(Hit(red as i32));
    log.push(format!(
        "turn {turn}: {red} red, score {score:?}, runs {:?}",
        *report.runs
    ));
}

fn next_turn(mut turn: ResMut<Turn>) {
    turn.0 += 1;
}

fn count_hits(mut hits: EventReader<Hit>, score: Option<ResMut<Score>>) {
    let sum = hits.read().map(|h| h.0).sum::<i32>();
    if let Some(mut score) = score {
        score.0 += sum;
    }
}

#[test]
fn nested_parameters_on_an_app_keep_their_locals() -> Result<(), doecs::AppError> {
    let mut app = App::with_threads(1);
    app.world_mut().insert_resource(Turn(0));
    app.world_mut().insert_resource(Vec::<String>::new());
    app.world_mut().spawn((Hp(1), Team(1)));
    app.world_mut().spawn((Hp(1), Team(1)));
    app.world_mut().spawn((Hp(1), Team(2)));
    app.add_systems(PreUpdate, next_turn)?;
    app.add_systems(Update, report)?;
    app.add_systems(PostUpdate, count_hits)?;
    app.update()?;
    app.world_mut().insert_resource(Score(0));
    app.update()?;
    app.update()?;
    let log = app.world().resource::<Vec<String>>().unwrap();
    assert_eq!(
        *log,
        [
            "turn 1: 2 red, score None, runs [1]",
            "turn 2: 2 red, score Some(0), runs [1, 2]",
            "turn 3: 2 red, score Some(2), runs [1, 2, 3]",
        ]
    );
    // The event writer's setup (the `Events<Hit>` resource) came through
    // the nesting: the reader counted what was sent.
    assert_eq!(app.world().resource::<Score>(), Some(&Score(4)));
    Ok(())
}

#[test]
fn a_local_is_kept_per_system_between_runs() {
    #[derive(SystemParam)]
    struct Counter<'w> {
        count: Local<'w, u32>,
        out: ResMut<'w, Vec<u32>>,
    }
    fn tick(mut c: Counter) {
        *c.count += 1;
        let n = *c.count;
        c.out.push(n);
    }
    fn tock(mut c: Counter) {
        *c.count += 10;
        let n = *c.count;
        c.out.push(n);
    }
    let mut world = World::new();
    world.insert_resource(Vec::<u32>::new());
    let mut schedule = Schedule::new();
    schedule.add_system(tick.before(tock)).unwrap();
    schedule.add_system(tock).unwrap();
    for _ in 0..3 {
        schedule.run(&mut world).unwrap();
    }
    assert_eq!(
        *world.resource::<Vec<u32>>().unwrap(),
        [1, 10, 2, 20, 3, 30]
    );
}

#[test]
fn fields_that_would_alias_are_refused_naming_both() {
    #[derive(SystemParam)]
    #[allow(dead_code)]
    struct Aliasing<'w> {
        writer: Query<'w, &'static mut Hp>,
        reader: Query<'w, (&'static Hp, &'static Team)>,
    }
    fn bad(_a: Aliasing) {}
    let err = Schedule::new().add_system(bad).err().unwrap();
    match &err {
        ScheduleError::InvalidParam { param, reason, .. } => {
            assert_eq!(param, "Aliasing");
            assert!(
                reason.contains("`writer: Query<&mut Hp>`")
                    && reason.contains("`reader: Query<(&Hp, &Team)>`"),
                "{reason}"
            );
            assert!(reason.contains("component `derive_param::Hp`"), "{reason}");
        }
        other => panic!("{other:?}"),
    }

    #[derive(SystemParam)]
    #[allow(dead_code)]
    struct TwoBuffers<'w> {
        a: Commands<'w>,
        b: Commands<'w>,
    }
    fn two(_t: TwoBuffers) {}
    assert!(matches!(
        Schedule::new().add_system(two),
        Err(ScheduleError::InvalidParam { .. })
    ));

    #[derive(SystemParam)]
    #[allow(dead_code)]
    struct ReadWrite<'w> {
        a: Res<'w, Score>,
        b: ResMut<'w, Score>,
    }
    fn rw(_t: ReadWrite) {}
    assert!(matches!(
        Schedule::new().add_system(rw),
        Err(ScheduleError::InvalidParam { .. })
    ));

    // A field that aliases itself.
    #[derive(SystemParam)]
    #[allow(dead_code)]
    struct SelfAliasing<'w> {
        q: Query<'w, (&'static mut Hp, &'static Hp)>,
    }
    fn self_aliasing(_t: SelfAliasing) {}
    let err = Schedule::new().add_system(self_aliasing).err().unwrap();
    assert!(
        matches!(&err, ScheduleError::InvalidParam { reason, .. } if reason.contains("`q: Query<(&mut Hp, &Hp)>`")),
        "{err:?}"
    );

    // Fields kept apart by their filters: accepted.
    #[derive(SystemParam)]
    #[allow(dead_code)]
    struct Apart<'w> {
        alive: Query<'w, &'static mut Hp, Without<Dead>>,
        dead: Query<'w, &'static mut Hp, With<Dead>>,
    }
    fn apart(_t: Apart) {}
    Schedule::new().add_system(apart).unwrap();
}

#[test]
fn the_struct_conflicts_with_other_parameters_as_its_fields_would() {
    fn beside(_c: Combat, _q: Query<&Hp>) {}
    let err = Schedule::new().add_system(beside).err().unwrap();
    assert!(
        matches!(&err, ScheduleError::ConflictingParams { first, second, .. }
            if first == "Combat" && second == "Query<&Hp>"),
        "{err:?}"
    );
    fn beside_commands(_c: Commands, _r: Roster, _combat: Combat) {}
    assert!(matches!(
        Schedule::new().add_system(beside_commands),
        Err(ScheduleError::ConflictingParams { .. })
    ));
    // Filters of one field do not keep the whole struct apart: `Combat`
    // also reads `Team` on every unit... but `Team` is only read, so a
    // reader of `Team` is fine.
    fn team_reader(_c: Combat, _q: Query<&Team>) {}
    Schedule::new().add_system(team_reader).unwrap();
    // The struct's filter (`Without<Dead>`) does keep it apart.
    fn dead_writer(_c: Combat, _q: Query<&mut Hp, With<Dead>>) {}
    Schedule::new().add_system(dead_writer).unwrap();
    // Two read-only structs side by side.
    fn two_rosters(_a: Roster, _b: Roster) {}
    Schedule::new().add_system(two_rosters).unwrap();
}

#[test]
fn a_derived_parameter_in_a_param_set_and_a_set_in_a_derived_parameter() {
    #[derive(SystemParam)]
    struct Healing<'w> {
        set: ParamSet<'w, (Query<'w, &'static mut Hp>, Query<'w, &'static Hp>)>,
        turn: Res<'w, Turn>,
    }
    fn heal(mut h: Healing, mut both: ParamSet<(Roster, Query<&mut Team>)>) {
        let total: i32 = h.set.p1().iter().map(|hp| hp.0).sum();
        let turn = h.turn.0 as i32;
        h.set.p0().for_each(|hp| hp.0 += total + turn);
        let red = both.p0().units.iter().filter(|t| t.0 == 1).count();
        both.p1().for_each(|t| t.0 += red as u8);
    }
    let mut world = World::new();
    world.insert_resource(Turn(10));
    let a = world.spawn((Hp(1), Team(1)));
    let b = world.spawn((Hp(2), Team(2)));
    let mut schedule = Schedule::new();
    schedule.add_system(heal).unwrap();
    schedule.run(&mut world).unwrap();
    assert_eq!(world.get::<Hp>(a), Ok(&Hp(14)));
    assert_eq!(world.get::<Hp>(b), Ok(&Hp(15)));
    assert_eq!(world.get::<Team>(a), Ok(&Team(2)));
    assert_eq!(world.get::<Team>(b), Ok(&Team(3)));
}

#[test]
fn a_struct_without_fields_or_lifetime() {
    #[derive(SystemParam)]
    struct Nothing {}
    fn nothing(_n: Nothing, mut turn: ResMut<Turn>) {
        turn.0 += 1;
    }
    let mut world = World::new();
    world.insert_resource(Turn(0));
    let mut schedule = Schedule::new();
    schedule.add_system(nothing).unwrap();
    schedule.run(&mut world).unwrap();
    assert_eq!(world.resource::<Turn>(), Some(&Turn(1)));
}

#[test]
fn a_run_condition_may_take_a_derived_parameter() {
    fn red_left(roster: Roster) -> bool {
        roster.units.iter().any(|t| t.0 == 1)
    }
    let mut world = World::new();
    world.insert_resource(Turn(0));
    let red = world.spawn((Team(1),));
    let mut schedule = Schedule::new();
    schedule.add_system(next_turn.run_if(red_left)).unwrap();
    schedule.run(&mut world).unwrap();
    world.despawn(red).unwrap();
    schedule.run(&mut world).unwrap();
    assert_eq!(world.resource::<Turn>(), Some(&Turn(1)));
}

#[test]
fn query_data_may_borrow_for_the_struct_lifetime_too() {
    #[derive(SystemParam)]
    struct Medic<'w> {
        patients: Query<'w, (&'w mut Hp, &'w Team)>,
        turn: Res<'w, Turn>,
    }
    fn treat(mut medic: Medic) {
        let turn = medic.turn.0 as i32;
        for (hp, team) in medic.patients.iter_mut() {
            hp.0 += turn * team.0 as i32;
        }
    }
    let mut world = World::new();
    world.insert_resource(Turn(2));
    let e = world.spawn((Hp(1), Team(3)));
    let mut schedule = Schedule::new();
    schedule.add_system(treat).unwrap();
    schedule.run(&mut world).unwrap();
    assert_eq!(world.get::<Hp>(e), Ok(&Hp(7)));
}
