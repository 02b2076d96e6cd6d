//! One-shot systems: run once, or registered and run by id.

use doecs::prelude::*;
use doecs::{Added, ScheduleError};

struct Score(u32);

#[derive(Debug, PartialEq)]
struct Coin(u32);

#[test]
fn a_system_runs_once_now_and_its_commands_apply() {
    let mut world = World::new();
    world.insert_resource(Score(0));
    world
        .run_system_once(|mut commands: Commands, mut s: ResMut<Score>| {
            s.0 += 1;
            commands.spawn((Coin(5),));
        })
        .unwrap();
    assert_eq!(world.resource::<Score>().unwrap().0, 1);
    assert_eq!(
        world.query::<&Coin>().iter().collect::<Vec<_>>(),
        [&Coin(5)]
    );
    // Exclusive functions, builder systems and run conditions too.
    world
        .run_system_once(|w: &mut World| w.resource_mut::<Score>().unwrap().0 += 10)
        .unwrap();
    world
        .run_system_once((|mut s: ResMut<Score>| s.0 += 100).run_if(|| false))
        .unwrap();
    assert_eq!(world.resource::<Score>().unwrap().0, 11);
    world.check_invariants();
}

#[test]
fn refusals_change_nothing() {
    let mut world = World::new();
    let err = world
        .run_system_once(|mut s: ResMut<Score>| s.0 += 1)
        .unwrap_err();
    assert!(
        matches!(err, ScheduleError::MissingResource { .. }),
        "{err}"
    );
    let err = world
        .run_system_once(|_a: Query<&mut Coin>, _b: Query<&Coin>| {})
        .unwrap_err();
    assert!(
        matches!(err, ScheduleError::ConflictingParams { .. }),
        "{err}"
    );
    assert!(world.is_empty());
}

#[test]
fn a_registered_system_keeps_its_change_window_between_runs() {
    let mut world = World::new();
    world.insert_resource(Score(0));
    let count_new = world
        .register_system(|q: Query<&Coin, Added<Coin>>, mut s: ResMut<Score>| {
            s.0 += q.iter().count() as u32;
        })
        .unwrap();
    world.spawn_batch((0..3).map(|i| (Coin(i),)));
    world.run_system(count_new).unwrap();
    assert_eq!(world.resource::<Score>().unwrap().0, 3);
    world.run_system(count_new).unwrap();
    assert_eq!(world.resource::<Score>().unwrap().0, 3, "nothing new");
    world.spawn((Coin(9),));
    world.run_system(count_new).unwrap();
    assert_eq!(world.resource::<Score>().unwrap().0, 4);
    // A system that runs a registered system, even itself, gets an error
    // for its own id while it runs.
    let outer = world
        .register_system(move |w: &mut World| {
            assert!(matches!(w.run_system(SystemId::clone(&count_new)), Ok(())));
        })
        .unwrap();
    world.run_system(outer).unwrap();
    let other = World::new().register_system(|| {});
    assert!(other.is_ok());
}

#[test]
fn an_unknown_or_running_id_is_an_error() {
    let mut world = World::new();
    let mut other = World::new();
    let id = other.register_system(|| {}).unwrap();
    assert!(matches!(
        world.run_system(id),
        Err(ScheduleError::NoSuchSystem(_))
    ));
    let me = std::sync::Arc::new(std::sync::Mutex::new(None::<SystemId>));
    let m = me.clone();
    let selfish = world
        .register_system(move |w: &mut World| {
            let id = m.lock().unwrap().unwrap();
            assert!(matches!(
                w.run_system(id),
                Err(ScheduleError::NoSuchSystem(_))
            ));
        })
        .unwrap();
    *me.lock().unwrap() = Some(selfish);
    world.run_system(selfish).unwrap();
    world.run_system(selfish).unwrap();
}
