//! Run conditions: `.run_if` on function, builder and exclusive systems,
//! combinators, the common conditions, refusal of writing conditions, and
//! the change window of a skipped system.

use doecs::prelude::*;
use doecs::{Changed, ScheduleError};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

struct Enabled(bool);
struct Count(u32);

fn enabled(flag: Res<Enabled>) -> bool {
    flag.0
}

fn bump(mut count: ResMut<Count>) {
    count.0 += 1;
}

fn world_with(flag: bool) -> World {
    let mut world = World::new();
    world.insert_resource(Enabled(flag));
    world.insert_resource(Count(0));
    world
}

#[test]
#[cfg_attr(miri, ignore)] // four-thread pools
fn a_system_runs_only_while_its_condition_holds() {
    for threads in [1, 4] {
        let mut world = world_with(false);
        let mut schedule = Schedule::with_threads(threads);
        schedule.add_system(bump.run_if(enabled)).unwrap();
        schedule.run(&mut world).unwrap();
        assert_eq!(world.resource::<Count>().unwrap().0, 0, "{threads} threads");
        world.resource_mut::<Enabled>().unwrap().0 = true;
        schedule.run(&mut world).unwrap();
        schedule.run(&mut world).unwrap();
        assert_eq!(world.resource::<Count>().unwrap().0, 2, "{threads} threads");
    }
}

#[test]
fn builder_and_exclusive_systems_take_conditions_too() {
    let mut world = world_with(false);
    let mut schedule = Schedule::with_threads(1);
    schedule
        .add_system(
            system("builder")
                .writes_resource::<Count>()
                .run(|ctx| ctx.resource_mut::<Count>().0 += 10)
                .run_if(enabled),
        )
        .unwrap()
        .add_system(
            (|world: &mut World| world.resource_mut::<Count>().unwrap().0 += 100)
                .run_if(not(enabled)),
        )
        .unwrap();
    schedule.run(&mut world).unwrap();
    assert_eq!(world.resource::<Count>().unwrap().0, 100);
    world.resource_mut::<Enabled>().unwrap().0 = true;
    schedule.run(&mut world).unwrap();
    assert_eq!(world.resource::<Count>().unwrap().0, 110);
}

static RIGHT_SIDE: AtomicUsize = AtomicUsize::new(0);

fn counted_true() -> bool {
    RIGHT_SIDE.fetch_add(1, Ordering::SeqCst);
    true
}

fn never() -> bool {
    false
}

#[test]
fn and_or_short_circuit_and_not_negates() {
    let mut world = world_with(true);
    let mut schedule = Schedule::with_threads(1);
    schedule
        .add_system(bump.named("and").run_if(never.and(counted_true)))
        .unwrap()
        .add_system(bump.named("or").run_if(enabled.or(counted_true)))
        .unwrap()
        .add_system(bump.named("or_false").run_if(never.or(counted_true)))
        .unwrap()
        .add_system(bump.named("not").run_if(not(never)))
        .unwrap()
        .add_system(bump.named("two").run_if(enabled).run_if(never))
        .unwrap();
    schedule.run(&mut world).unwrap();
    // "or", "or_false" and "not" ran; "and" and "two" did not.
    assert_eq!(world.resource::<Count>().unwrap().0, 3);
    // Only "or_false" evaluated the right side.
    assert_eq!(RIGHT_SIDE.load(Ordering::SeqCst), 1);
}

#[test]
fn a_condition_that_writes_is_refused_when_added() {
    let mut schedule = Schedule::with_threads(1);
    let writes = |mut c: ResMut<Count>| {
        c.0 += 1;
        true
    };
    let err = schedule.add_system(bump.run_if(writes)).unwrap_err();
    assert!(matches!(err, ScheduleError::InvalidParam { .. }), "{err}");
    assert!(err.to_string().contains("only reads"), "{err}");
    let records = |_: Commands| true;
    let err = schedule.add_system(bump.run_if(records)).unwrap_err();
    assert!(err.to_string().contains("commands"), "{err}");
    assert!(schedule.is_empty(), "nothing was added");
}

#[derive(Debug)]
struct Hit;

#[test]
fn common_conditions() {
    let mut world = World::new();
    world.insert_resource(Count(0));
    world.add_event::<Hit>();
    let mut schedule = Schedule::with_threads(1);
    schedule
        .add_system(bump.named("on_hit").run_if(on_event::<Hit>()))
        .unwrap()
        .add_system(
            (|mut c: ResMut<Count>| c.0 += 100)
                .named("with_enabled")
                .run_if(resource_exists::<Enabled>()),
        )
        .unwrap();
    schedule.run(&mut world).unwrap();
    assert_eq!(world.resource::<Count>().unwrap().0, 0);
    world.send_event(Hit);
    world.send_event(Hit);
    schedule.run(&mut world).unwrap();
    assert_eq!(
        world.resource::<Count>().unwrap().0,
        1,
        "once for both events"
    );
    schedule.run(&mut world).unwrap();
    assert_eq!(
        world.resource::<Count>().unwrap().0,
        1,
        "each event seen once"
    );
    world.insert_resource(Enabled(false));
    schedule.run(&mut world).unwrap();
    assert_eq!(world.resource::<Count>().unwrap().0, 101);
}

#[derive(Debug, PartialEq)]
struct Heat(u32);

#[test]
fn a_skipped_system_sees_the_changes_made_while_it_was_skipped() {
    let seen: Arc<Mutex<Vec<Vec<u32>>>> = Arc::default();
    let mut world = world_with(false);
    let es = world.spawn_batch((0..4).map(|i| (Heat(i),)));
    let mut schedule = Schedule::with_threads(1);
    let log = seen.clone();
    schedule
        .add_system(
            (move |q: Query<&Heat, Changed<Heat>>| {
                let mut v: Vec<u32> = q.iter().map(|h| h.0).collect();
                v.sort();
                log.lock().unwrap().push(v);
            })
            .run_if(enabled),
        )
        .unwrap();
    world.resource_mut::<Enabled>().unwrap().0 = true;
    schedule.run(&mut world).unwrap();
    world.resource_mut::<Enabled>().unwrap().0 = false;
    world.get_mut::<Heat>(es[1]).unwrap().0 = 11;
    schedule.run(&mut world).unwrap();
    world.get_mut::<Heat>(es[3]).unwrap().0 = 13;
    schedule.run(&mut world).unwrap();
    world.resource_mut::<Enabled>().unwrap().0 = true;
    schedule.run(&mut world).unwrap();
    schedule.run(&mut world).unwrap();
    world.get_mut::<Heat>(es[0]).unwrap().0 = 10;
    schedule.run(&mut world).unwrap();
    let seen = seen.lock().unwrap();
    // Every row is new at the first run; the two changes made while it was
    // skipped come together at the next; then nothing, then 10.
    assert_eq!(*seen, [vec![0, 1, 2, 3], vec![11, 13], vec![], vec![10]]);
}

#[test]
fn conditions_work_in_an_app() -> Result<(), AppError> {
    let mut app = App::with_threads(1);
    app.world_mut().insert_resource(Count(0));
    app.add_systems(Update, bump.run_if(resource_exists::<Enabled>()))?;
    app.update()?;
    app.world_mut().insert_resource(Enabled(true));
    app.update()?;
    app.update()?;
    assert_eq!(app.world().resource::<Count>().unwrap().0, 2);
    Ok(())
}

#[derive(Clone)]
struct Score(u32);

/// What a reader saw on each run: (is_added, is_changed).
#[derive(Default)]
struct Seen(Vec<(bool, bool)>);

#[test]
fn res_sees_inserts_and_writes_since_its_previous_run() {
    let mut world = World::new();
    world.insert_resource(Score(0));
    world.insert_resource(Seen::default());
    world.insert_resource(Enabled(false));
    let mut schedule = Schedule::with_threads(1);
    schedule
        .add_systems(
            (
                // Writes only while enabled; otherwise it only reads through
                // its `ResMut`, which must not mark the score changed.
                |mut score: ResMut<Score>, on: Res<Enabled>| {
                    if on.0 {
                        score.0 += 1;
                    } else {
                        assert!(score.0 < 100);
                    }
                },
                |score: Res<Score>, mut seen: ResMut<Seen>| {
                    let seen_now = (score.is_added(), score.is_changed());
                    seen.0.push(seen_now);
                },
            )
                .chain(),
        )
        .unwrap();
    schedule.run(&mut world).unwrap(); // first run: everything is new
    schedule.run(&mut world).unwrap(); // nothing written
    world.resource_mut::<Enabled>().unwrap().0 = true;
    schedule.run(&mut world).unwrap(); // written through ResMut
    world.resource_mut::<Enabled>().unwrap().0 = false;
    schedule.run(&mut world).unwrap(); // nothing written
    world.resource_mut::<Score>().unwrap().0 = 50; // a direct write
    schedule.run(&mut world).unwrap();
    world.insert_resource(Score(7)); // replaced: changed, not added
    schedule.run(&mut world).unwrap();
    world.remove_resource::<Score>();
    world.insert_resource(Score(1)); // inserted anew: added
    schedule.run(&mut world).unwrap();
    assert_eq!(
        world.resource::<Seen>().unwrap().0,
        [
            (true, true),
            (false, false),
            (false, true),
            (false, false),
            (false, true),
            (false, true),
            (true, true),
        ]
    );
}

#[test]
fn resource_changed_and_resource_added_guard_systems() {
    let mut world = world_with(false);
    let mut schedule = Schedule::with_threads(1);
    schedule
        .add_system(bump.run_if(resource_changed::<Enabled>()))
        .unwrap();
    schedule.run(&mut world).unwrap(); // inserted before the first run
    schedule.run(&mut world).unwrap();
    schedule.run(&mut world).unwrap();
    assert_eq!(world.resource::<Count>().unwrap().0, 1);
    world.resource_mut::<Enabled>().unwrap().0 = true;
    schedule.run(&mut world).unwrap();
    schedule.run(&mut world).unwrap();
    assert_eq!(world.resource::<Count>().unwrap().0, 2);
    // Absent: does not hold, and the schedule does not refuse to run.
    world.remove_resource::<Enabled>();
    schedule.run(&mut world).unwrap();
    assert_eq!(world.resource::<Count>().unwrap().0, 2);

    let mut world = world_with(false);
    let mut schedule = Schedule::with_threads(1);
    schedule
        .add_system(bump.run_if(resource_added::<Score>()))
        .unwrap();
    schedule.run(&mut world).unwrap();
    world.insert_resource(Score(1));
    schedule.run(&mut world).unwrap();
    world.insert_resource(Score(2)); // a replacement is not an add
    schedule.run(&mut world).unwrap();
    assert_eq!(world.resource::<Count>().unwrap().0, 1);
}

#[test]
fn a_restore_puts_resource_ticks_back_and_fires_no_change() {
    let mut world = World::new();
    world.insert_resource(Score(0));
    world.snapshot_resource::<Score>();
    world.insert_resource(Count(0));
    let mut schedule = Schedule::with_threads(1);
    schedule
        .add_system(bump.run_if(resource_changed::<Score>()))
        .unwrap();
    schedule.run(&mut world).unwrap();
    let mut snapshot = doecs::Snapshot::default();
    world.snapshot_into(&mut snapshot).unwrap();
    world.resource_mut::<Score>().unwrap().0 = 9;
    world.restore(&snapshot).unwrap();
    assert_eq!(world.resource::<Score>().unwrap().0, 0);
    schedule.run(&mut world).unwrap();
    assert_eq!(
        world.resource::<Count>().unwrap().0,
        1,
        "the restored score is as it was at the snapshot: unchanged since the system ran"
    );
}

#[test]
fn a_change_a_system_ran_for_is_not_new_again_after_a_restore() {
    let mut world = World::new();
    world.insert_resource(Count(0));
    world.snapshot_resource::<Score>();
    let mut schedule = Schedule::with_threads(1);
    schedule
        .add_system(bump.run_if(resource_changed::<Score>()))
        .unwrap();
    world.insert_resource(Score(3));
    let mut snapshot = doecs::Snapshot::default();
    world.snapshot_into(&mut snapshot).unwrap();
    schedule.run(&mut world).unwrap(); // runs for the insert
    world.restore(&snapshot).unwrap();
    schedule.run(&mut world).unwrap(); // the same change: already seen
    assert_eq!(world.resource::<Count>().unwrap().0, 1);
    // Restored to before a change the system has not seen: it runs.
    let mut world = World::new();
    world.insert_resource(Count(0));
    world.snapshot_resource::<Score>();
    world.insert_resource(Score(3));
    world.snapshot_into(&mut snapshot).unwrap();
    world.restore(&snapshot).unwrap();
    schedule.run(&mut world).unwrap();
    assert_eq!(world.resource::<Count>().unwrap().0, 1);
}
