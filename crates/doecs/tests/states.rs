//! States: transitions at one point per update, OnEnter/OnExit, in_state,
//! state-scoped entities, and determinism with states, conditions and the
//! fixed step together.

use doecs::prelude::*;
use std::sync::{Arc, Mutex};
use std::time::Duration;

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Screen {
    Menu,
    Playing,
    Over,
}

type Log = Arc<Mutex<Vec<String>>>;

fn log_state(log: &Log, what: &'static str) -> impl FnMut(Res<State<Screen>>) + Send + 'static {
    let log = log.clone();
    move |state: Res<State<Screen>>| {
        log.lock()
            .unwrap()
            .push(format!("{what} in {:?}", state.get()))
    }
}

fn take(log: &Log) -> Vec<String> {
    std::mem::take(&mut *log.lock().unwrap())
}

fn request(to: Screen) -> impl FnMut(ResMut<NextState<Screen>>) + Send + 'static {
    move |mut next: ResMut<NextState<Screen>>| next.set(to.clone())
}

#[test]
fn transitions_run_exit_then_enter_after_pre_update() -> Result<(), AppError> {
    let log = Log::default();
    let mut app = App::with_threads(1);
    app.insert_state(Screen::Menu)?;
    app.add_systems(OnEnter(Screen::Menu), log_state(&log, "enter menu"))?;
    app.add_systems(OnExit(Screen::Menu), log_state(&log, "exit menu"))?;
    app.add_systems(OnEnter(Screen::Playing), log_state(&log, "enter playing"))?;
    app.add_systems(PreUpdate, log_state(&log, "pre"))?;
    app.add_systems(Update, log_state(&log, "update"))?;
    app.add_systems(
        Update,
        request(Screen::Playing)
            .named("start")
            .run_if(in_state(Screen::Menu)),
    )?;

    app.add_systems(
        Update,
        request(Screen::Over)
            .named("finish")
            .run_if(in_state(Screen::Playing)),
    )?;

    app.update()?;
    assert_eq!(
        take(&log),
        ["pre in Menu", "enter menu in Menu", "update in Menu"]
    );
    app.update()?;
    assert_eq!(
        take(&log),
        [
            "pre in Menu",
            "exit menu in Menu",
            "enter playing in Playing",
            "update in Playing"
        ]
    );
    app.update()?;
    assert_eq!(take(&log), ["pre in Playing", "update in Over"]);
    app.update()?;
    assert_eq!(
        take(&log),
        ["pre in Over", "update in Over"],
        "no change asked"
    );
    Ok(())
}

#[test]
fn asking_for_the_current_value_is_no_change_and_the_last_request_wins() -> Result<(), AppError> {
    let log = Log::default();
    let mut app = App::with_threads(1);
    app.insert_state(Screen::Menu)?;
    app.add_systems(OnExit(Screen::Menu), log_state(&log, "exit menu"))?;
    app.add_systems(OnEnter(Screen::Over), log_state(&log, "enter over"))?;
    app.update()?;
    app.world_mut()
        .resource_mut::<NextState<Screen>>()
        .unwrap()
        .set(Screen::Menu);
    app.update()?;
    assert!(take(&log).is_empty());
    let next = app.world_mut().resource_mut::<NextState<Screen>>().unwrap();
    next.set(Screen::Playing);
    next.set(Screen::Over);
    assert_eq!(next.pending(), Some(&Screen::Over));
    app.update()?;
    assert_eq!(take(&log), ["exit menu in Menu", "enter over in Over"]);
    assert_eq!(
        app.world()
            .resource::<NextState<Screen>>()
            .unwrap()
            .pending(),
        None
    );
    Ok(())
}

#[derive(Debug, PartialEq)]
struct Tag(u32);

#[test]
fn entities_scoped_to_a_state_are_despawned_when_it_is_left() -> Result<(), AppError> {
    let mut app = App::with_threads(1);
    app.insert_state(Screen::Menu)?;
    let world = app.world_mut();
    let button = world.spawn((Tag(1), StateScoped(Screen::Menu)));
    let ship = world.spawn((Tag(2), StateScoped(Screen::Playing)));
    let score = world.spawn((Tag(3),));
    app.add_systems(OnExit(Screen::Menu), |q: Query<&Tag>| {
        // OnExit still sees the menu's entities.
        assert_eq!(q.iter().count(), 3);
    })?;
    app.update()?;
    app.world_mut()
        .resource_mut::<NextState<Screen>>()
        .unwrap()
        .set(Screen::Playing);
    app.update()?;
    let world = app.world();
    assert!(!world.alive(button));
    assert!(world.alive(ship) && world.alive(score));
    world.check_invariants();
    Ok(())
}

#[test]
fn state_types_are_inserted_once_and_before_their_schedules() -> Result<(), AppError> {
    let mut app = App::with_threads(1);
    assert!(matches!(
        app.add_systems(OnEnter(Screen::Menu), |_: &mut World| {}),
        Err(AppError::UnknownPhase { .. })
    ));
    app.insert_state(Screen::Menu)?;
    assert!(matches!(
        app.insert_state(Screen::Over),
        Err(AppError::DuplicateState { .. })
    ));
    assert_eq!(
        app.world().resource::<State<Screen>>().unwrap().get(),
        &Screen::Menu,
        "the first value is there before the first update"
    );
    Ok(())
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Music {
    Quiet,
    Loud,
}

#[test]
fn several_state_types_change_in_insertion_order() -> Result<(), AppError> {
    let log = Log::default();
    let mut app = App::with_threads(1);
    app.insert_state(Music::Quiet)?.insert_state(Screen::Menu)?;
    let l = log.clone();
    app.add_systems(OnEnter(Screen::Playing), move |_: &mut World| {
        l.lock().unwrap().push("screen".into())
    })?;
    let l = log.clone();
    app.add_systems(OnEnter(Music::Loud), move |_: &mut World| {
        l.lock().unwrap().push("music".into())
    })?;
    app.update()?;
    app.add_systems(
        First,
        |mut s: ResMut<NextState<Screen>>, mut m: ResMut<NextState<Music>>| {
            s.set(Screen::Playing);
            m.set(Music::Loud);
        },
    )?;
    app.update()?;
    assert_eq!(take(&log), ["music", "screen"]);
    Ok(())
}

#[derive(Copy, Clone, Debug, PartialEq)]
struct Pos(i64);

fn play(threads: usize) -> Vec<(Entity, i64)> {
    let mut app = App::with_threads(threads);
    app.set_time_source(TimeSource::Manual(Duration::from_millis(7)));
    app.world_mut()
        .insert_resource(Time::<Fixed>::with_timestep(Duration::from_millis(3)));
    app.insert_state(Screen::Menu).unwrap();
    app.add_systems(
        OnEnter(Screen::Playing),
        |mut commands: Commands, time: Res<Time>| {
            for i in 0..20 {
                commands.spawn((Pos(i + time.ticks() as i64), StateScoped(Screen::Playing)));
            }
        },
    )
    .unwrap();
    app.add_systems(
        FixedUpdate,
        (|mut q: Query<&mut Pos>| q.for_each(|p| p.0 += 1)).run_if(in_state(Screen::Playing)),
    )
    .unwrap();
    app.add_systems(
        Update,
        (|time: Res<Time>, mut next: ResMut<NextState<Screen>>| match time.ticks() % 9 {
            2 => next.set(Screen::Playing),
            6 => next.set(Screen::Over),
            8 => next.set(Screen::Menu),
            _ => {}
        })
        .named("director"),
    )
    .unwrap();
    app.add_systems(
        PostUpdate,
        (|mut commands: Commands, q: Query<(Entity, &Pos)>| {
            for (e, p) in q.iter() {
                if p.0 % 11 == 0 {
                    commands.despawn(e);
                }
            }
        })
        .run_if(in_state(Screen::Playing)),
    )
    .unwrap();
    // Every 4th update raises the score; a system runs only when it changed.
    #[derive(Default)]
    struct Score(i64);
    app.world_mut().insert_resource(Score::default());
    app.add_systems(Update, |time: Res<Time>, mut score: ResMut<Score>| {
        if time.ticks() % 4 == 0 {
            score.0 += 1;
        }
    })
    .unwrap();
    app.add_systems(
        PostUpdate,
        (|mut q: Query<&mut Pos>, score: Res<Score>| q.for_each(|p| p.0 += score.0))
            .run_if(resource_changed::<Score>()),
    )
    .unwrap();
    // 95 updates end while playing (requested at update 92, entered at 93).
    // Every 30th frame is 60 ms long: 20 fixed steps due, capped at 8.
    for k in 0..95 {
        let frame = if k % 30 == 29 { 60 } else { 7 };
        app.set_time_source(TimeSource::Manual(Duration::from_millis(frame)));
        app.update().unwrap();
    }
    let fixed = app.world().resource::<Time<Fixed>>().unwrap();
    // 824 ms of frames would be 274 steps; each long frame runs 8 of its 20.
    assert_eq!(fixed.ticks(), 274 - 3 * 12, "the catch-up was capped");
    assert_eq!(
        app.world().resource::<State<Screen>>().unwrap().get(),
        &Screen::Playing
    );
    let mut out: Vec<(Entity, i64)> = app
        .world()
        .query::<(Entity, &Pos)>()
        .iter()
        .map(|(e, p)| (e, p.0))
        .collect();
    out.sort_by_key(|x| x.0.to_bits());
    out
}

#[test]
#[cfg_attr(miri, ignore)] // many updates, thread pools
fn states_conditions_and_the_fixed_step_are_deterministic_at_any_thread_count() {
    let one = play(1);
    assert!(one.len() > 10, "{}", one.len());
    for threads in [2, 4, 8] {
        assert_eq!(play(threads), one, "{threads} threads");
    }
}
