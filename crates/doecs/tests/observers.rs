//! Observers: lifecycle events on every structural path, custom events with
//! targets and propagation, entity observers, system parameters, the order
//! they run in, refusals, recursion, panics, and determinism at 1, 2, 4 and
//! 8 threads.

use doecs::prelude::*;
use doecs::{ComponentHooks, ObserveError, ObserverError};

#[derive(Clone, Copy, Debug, PartialEq)]
struct Health(u32);
#[derive(Clone, Copy, Debug, PartialEq)]
struct Armor(u32);
impl Default for Armor {
    fn default() -> Self {
        Armor(5)
    }
}
#[derive(Clone, Copy, Debug, PartialEq)]
struct Marked;

/// What the observers saw, in order.
#[derive(Default, Debug)]
struct Log(Vec<String>);

fn world_with_log() -> World {
    let mut world = World::new();
    world.init_resource::<Log>();
    world
}

fn log(world: &World) -> Vec<String> {
    world.resource::<Log>().unwrap().0.clone()
}

fn clear_log(world: &mut World) {
    world.resource_mut::<Log>().unwrap().0.clear();
}

/// Registers an observer of every lifecycle event on `Health` that logs
/// `"{event} {entity index} {value or -}"`.
fn watch_health(world: &mut World) {
    fn value(q: &Query<&Health>, e: Entity) -> String {
        q.get(e).map_or("-".into(), |h| h.0.to_string())
    }
    world
        .observe(
            |t: Trigger<OnAdd, Health>, q: Query<&Health>, mut log: ResMut<Log>| {
                let e = t.entity();
                log.0.push(format!("add {} {}", e.index(), value(&q, e)));
            },
        )
        .unwrap();
    world
        .observe(
            |t: Trigger<OnInsert, Health>, q: Query<&Health>, mut log: ResMut<Log>| {
                let e = t.entity();
                log.0.push(format!("insert {} {}", e.index(), value(&q, e)));
            },
        )
        .unwrap();
    world
        .observe(
            |t: Trigger<OnReplace, Health>, q: Query<&Health>, mut log: ResMut<Log>| {
                let e = t.entity();
                log.0
                    .push(format!("replace {} {}", e.index(), value(&q, e)));
            },
        )
        .unwrap();
    world
        .observe(
            |t: Trigger<OnRemove, Health>, q: Query<&Health>, mut log: ResMut<Log>| {
                let e = t.entity();
                log.0.push(format!("remove {} {}", e.index(), value(&q, e)));
            },
        )
        .unwrap();
    world
        .observe(
            |t: Trigger<OnDespawn>, q: Query<&Health>, mut log: ResMut<Log>| {
                let e = t.entity();
                log.0
                    .push(format!("despawn {} {}", e.index(), value(&q, e)));
            },
        )
        .unwrap();
}

#[test]
fn lifecycle_observers_fire_on_every_structural_path() {
    let mut world = world_with_log();
    watch_health(&mut world);

    let a = world.spawn((Health(1),));
    let i = a.index();
    assert_eq!(log(&world), [format!("add {i} 1"), format!("insert {i} 1")]);
    clear_log(&mut world);

    world.insert_one(a, Health(2)).unwrap();
    assert_eq!(
        log(&world),
        [format!("replace {i} 1"), format!("insert {i} 2")],
        "a replace sees the old value, the insert the new one"
    );
    clear_log(&mut world);

    world.insert_one(a, Armor(1)).unwrap();
    assert!(
        log(&world).is_empty(),
        "other components do not fire Health observers"
    );

    assert_eq!(world.remove_one::<Health>(a), Ok(Health(2)));
    assert_eq!(
        log(&world),
        [format!("replace {i} 2"), format!("remove {i} 2")],
        "removal observers see the value still there"
    );
    clear_log(&mut world);

    world.insert_one(a, Health(3)).unwrap();
    clear_log(&mut world);
    world.despawn(a).unwrap();
    assert_eq!(
        log(&world),
        [
            format!("despawn {i} 3"),
            format!("replace {i} 3"),
            format!("remove {i} 3")
        ]
    );
    clear_log(&mut world);

    let batch = world.spawn_batch([(Health(4),), (Health(5),)]);
    assert_eq!(log(&world).len(), 4, "{:?}", log(&world));
    clear_log(&mut world);

    let mut commands = CommandBuffer::new();
    let c = commands.spawn(&world, (Health(6),));
    commands.insert_one(batch[0], Health(7));
    commands.remove_one::<Health>(batch[1]);
    world.apply(&mut commands);
    let (c, b0, b1) = (c.index(), batch[0].index(), batch[1].index());
    assert_eq!(
        log(&world),
        [
            format!("add {c} 6"),
            format!("insert {c} 6"),
            format!("replace {b0} 4"),
            format!("insert {b0} 7"),
            format!("replace {b1} 5"),
            format!("remove {b1} 5"),
        ]
    );
    clear_log(&mut world);

    world.clear();
    let despawns = log(&world)
        .iter()
        .filter(|l| l.starts_with("despawn"))
        .count();
    assert_eq!(
        despawns,
        3,
        "clear despawns every entity: {:?}",
        log(&world)
    );
}

#[test]
fn hooks_run_before_observers_and_observer_commands_apply_after_the_operation() {
    let mut world = world_with_log();
    world.set_hooks::<Health>(ComponentHooks::new().on_add(|ctx| {
        let present = ctx.world.get::<Marked>(ctx.entity).is_ok();
        ctx.commands.push_closure(move |w| {
            w.resource_mut::<Log>()
                .unwrap()
                .0
                .push(format!("hook cmd {present}"));
            Ok(())
        });
    }));
    world
        .observe(
            |t: Trigger<OnAdd, Health>, mut commands: Commands, mut log: ResMut<Log>| {
                log.0.push("observer".into());
                commands.entity(t.entity()).insert_one(Marked);
            },
        )
        .unwrap();
    let e = world.spawn((Health(1),));
    assert!(
        world.get::<Marked>(e).is_ok(),
        "the observer's command was applied"
    );
    assert_eq!(log(&world), ["observer", "hook cmd false"]);
}

#[test]
fn observers_write_through_queries_and_their_writes_are_change_stamped() {
    #[derive(Default)]
    struct Seen(Vec<Entity>);
    let mut world = World::new();
    world.init_resource::<Seen>();
    world
        .observe(|t: Trigger<OnAdd, Armor>, mut hp: Query<&mut Health>| {
            if let Ok(h) = hp.get_mut(t.entity()) {
                h.0 += 100;
            }
        })
        .unwrap();
    let e = world.spawn((Health(1),));
    let mut schedule = Schedule::new();
    schedule
        .add_system(
            |q: Query<Entity, Changed<Health>>, mut seen: ResMut<Seen>| {
                seen.0.extend(q.iter());
            },
        )
        .unwrap();
    schedule.run(&mut world).unwrap();
    world.resource_mut::<Seen>().unwrap().0.clear();
    schedule.run(&mut world).unwrap();
    assert!(world.resource::<Seen>().unwrap().0.is_empty());

    world.insert_one(e, Armor(1)).unwrap();
    assert_eq!(world.get::<Health>(e).unwrap().0, 101);
    schedule.run(&mut world).unwrap();
    assert_eq!(
        world.resource::<Seen>().unwrap().0,
        [e],
        "the observer's write marked the row changed"
    );
}

#[test]
fn entity_observers_see_only_their_entity_and_go_with_it() {
    let mut world = world_with_log();
    let a = world.spawn((Health(1),));
    let b = world.spawn((Health(2),));
    world
        .observe_entity(a, |t: Trigger<OnRemove, Health>, mut log: ResMut<Log>| {
            log.0.push(format!("a lost health {}", t.entity().index()));
        })
        .unwrap();
    assert_eq!(world.observers().count(), 1);
    world.remove_one::<Health>(b).unwrap();
    assert!(log(&world).is_empty(), "b's removal is not a's");
    world.remove_one::<Health>(a).unwrap();
    assert_eq!(log(&world), [format!("a lost health {}", a.index())]);
    world.despawn(a).unwrap();
    assert_eq!(world.observers().count(), 0, "a's observers went with it");
    assert_eq!(
        world.observe_entity(a, |_: Trigger<OnDespawn>| {}),
        Err(ObserveError::DeadEntity(a))
    );
}

struct Ping(u32);
impl Event for Ping {}

#[test]
fn custom_events_reach_global_and_target_observers_in_registration_order() {
    let mut world = world_with_log();
    let a = world.spawn(());
    let b = world.spawn(());
    world
        .observe(|t: Trigger<Ping>, mut log: ResMut<Log>| {
            let target = t.target().map_or("-".into(), |e| e.index().to_string());
            log.0.push(format!("global1 {} {target}", t.event().0));
        })
        .unwrap();
    world
        .entity_mut(a)
        .unwrap()
        .observe(|mut t: Trigger<Ping>, mut log: ResMut<Log>| {
            log.0.push(format!("a {}", t.event().0));
            t.event_mut().0 += 10;
        })
        .unwrap();
    world
        .observe(|t: Trigger<Ping>, mut log: ResMut<Log>| {
            log.0.push(format!("global2 {}", t.event().0));
        })
        .unwrap();

    world.trigger(Ping(1)).unwrap();
    assert_eq!(log(&world), ["global1 1 -", "global2 1"]);
    clear_log(&mut world);

    world.trigger_targets(Ping(2), [b, a]).unwrap();
    let (ai, bi) = (a.index(), b.index());
    assert_eq!(
        log(&world),
        [
            format!("global1 2 {bi}"),
            "global2 2".into(),
            format!("global1 2 {ai}"),
            "a 2".into(),
            "global2 12".into(),
        ],
        "registration order, global and entity observers interleaved; event_mut is seen by later observers"
    );
    clear_log(&mut world);

    // Commands trigger too, after the operation.
    world
        .run_system_once(move |mut commands: Commands| {
            commands.trigger(Ping(3));
            commands.entity(a).trigger(Ping(4));
        })
        .unwrap();
    assert_eq!(
        log(&world),
        [
            "global1 3 -".to_string(),
            "global2 3".into(),
            format!("global1 4 {ai}"),
            "a 4".into(),
            "global2 14".into(),
        ]
    );
}

struct Hit(u32);
impl Event for Hit {
    const PROPAGATE: bool = true;
}
struct Shield;
#[derive(Debug, PartialEq)]
struct Hull(u32);

#[test]
fn a_hit_on_a_turret_reaches_its_ship_unless_stopped() {
    let mut world = World::new();
    let fleet = world.spawn((Hull(1000),));
    let ship = world.spawn((Hull(100),));
    let turret = world.spawn((Hull(10),));
    world.add_pair(ship, fleet, ChildOf).unwrap();
    world.add_pair(turret, ship, ChildOf).unwrap();
    world
        .observe(
            |mut t: Trigger<Hit>, mut hulls: Query<&mut Hull>, shields: Query<&Shield>| {
                let at = t.target().unwrap();
                if let Ok(h) = hulls.get_mut(at) {
                    h.0 -= t.event().0;
                }
                if shields.get(at).is_ok() {
                    t.propagate(false);
                }
            },
        )
        .unwrap();
    world.trigger_targets(Hit(1), [turret]).unwrap();
    assert_eq!(world.get::<Hull>(turret).unwrap().0, 9);
    assert_eq!(world.get::<Hull>(ship).unwrap().0, 99);
    assert_eq!(world.get::<Hull>(fleet).unwrap().0, 999);

    world.insert_one(ship, Shield).unwrap();
    world.trigger_targets(Hit(1), [turret]).unwrap();
    assert_eq!(world.get::<Hull>(ship).unwrap().0, 98);
    assert_eq!(
        world.get::<Hull>(fleet).unwrap().0,
        999,
        "the shield stopped it"
    );

    // Events that do not propagate stay on their target.
    world.trigger_targets(Ping(0), [turret]).unwrap();
}

#[test]
fn origin_stays_the_first_target_while_target_climbs() {
    let mut world = world_with_log();
    let ship = world.spawn(());
    let turret = world.spawn(());
    world.add_pair(turret, ship, ChildOf).unwrap();
    world
        .observe(|t: Trigger<Hit>, mut log: ResMut<Log>| {
            log.0.push(format!(
                "{} from {}",
                t.target().unwrap().index(),
                t.origin().unwrap().index()
            ));
        })
        .unwrap();
    world.trigger_targets(Hit(1), [turret]).unwrap();
    assert_eq!(
        log(&world),
        [
            format!("{} from {}", turret.index(), turret.index()),
            format!("{} from {}", ship.index(), turret.index())
        ]
    );
}

struct Echo(u32);
impl Event for Echo {}

#[test]
#[cfg_attr(miri, ignore = "a thousand rounds of observers are slow under Miri")]
fn an_observer_that_triggers_itself_forever_is_a_typed_error_not_a_stack_overflow() {
    let mut world = World::new();
    #[derive(Default)]
    struct Count(u32);
    world.init_resource::<Count>();
    world
        .observe(
            |t: Trigger<Echo>, mut commands: Commands, mut n: ResMut<Count>| {
                n.0 += 1;
                commands.trigger(Echo(t.event().0 + 1));
            },
        )
        .unwrap();
    let outcome = world.trigger(Echo(0));
    assert_eq!(
        outcome,
        Err(ObserverError::Unsettled {
            rounds: doecs::MAX_HOOK_ROUNDS
        })
    );
    assert_eq!(
        world.resource::<Count>().unwrap().0 as usize,
        doecs::MAX_HOOK_ROUNDS + 1
    );

    // A bounded chain settles.
    let mut world = World::new();
    world.init_resource::<Count>();
    world
        .observe(
            |t: Trigger<Echo>, mut commands: Commands, mut n: ResMut<Count>| {
                n.0 += 1;
                if t.event().0 < 100 {
                    commands.trigger(Echo(t.event().0 + 1));
                }
            },
        )
        .unwrap();
    world.trigger(Echo(0)).unwrap();
    assert_eq!(world.resource::<Count>().unwrap().0, 101);

    // A lifecycle chain: every new `Health` spawns another.
    let mut world = World::new();
    world
        .observe(|_: Trigger<OnAdd, Health>, mut commands: Commands| {
            commands.spawn((Health(0),));
        })
        .unwrap();
    world.spawn((Health(0),));
    let errors = world.take_observer_errors();
    assert!(
        matches!(errors.as_slice(), [ObserverError::Unsettled { .. }]),
        "{errors:?}"
    );
}

#[test]
fn refused_observers_leave_the_world_unchanged() {
    let mut world = World::new();
    assert!(matches!(
        world.observe(|_: Res<Log>| {}),
        Err(ObserveError::NoTrigger(_))
    ));
    assert!(matches!(
        world.observe(|_: Trigger<OnAdd>| {}),
        Err(ObserveError::NeedsComponent { .. })
    ));
    assert!(matches!(
        world.observe(|_: Trigger<Ping, Health>| {}),
        Err(ObserveError::NotAComponentEvent { .. })
    ));
    assert!(matches!(
        world.observe((|_: Trigger<Ping>| {}).run_if(|| true)),
        Err(ObserveError::RunConditions(_))
    ));
    assert!(matches!(
        world.observe(|_: Trigger<Ping>, _: Query<&mut Health>, _: Query<&Health>| {}),
        Err(ObserveError::System(
            ScheduleError::ConflictingParams { .. }
        ))
    ));
    assert!(matches!(
        world.observe(|_: Trigger<Ping>, _: Trigger<Ping>| {}),
        Err(ObserveError::System(
            ScheduleError::ConflictingParams { .. }
        ))
    ));
    assert_eq!(world.observers().count(), 0);

    // A system with a trigger is an observer, not a system.
    let mut schedule = Schedule::new();
    assert!(matches!(
        schedule.add_system(|_: Trigger<Ping>| {}).map(|_| ()),
        Err(ScheduleError::ObserverNotSystem { .. })
    ));
    assert!(matches!(
        world.run_system_once(|_: Trigger<Ping>| {}),
        Err(ScheduleError::ObserverNotSystem { .. })
    ));
    assert!(matches!(
        schedule
            .add_system((|| {}).run_if(|_: Trigger<Ping>| true))
            .map(|_| ()),
        Err(ScheduleError::ObserverNotSystem { .. })
    ));
}

#[test]
fn an_observer_missing_its_resource_does_not_run_and_says_why() {
    let mut world = World::new();
    world
        .observe(|_: Trigger<Ping>, mut log: ResMut<Log>| log.0.push("ran".into()))
        .unwrap();
    world.trigger(Ping(0)).unwrap();
    let errors = world.take_observer_errors();
    assert!(
        matches!(&errors[..], [ObserverError::MissingResource { resource, .. }] if resource.contains("Log")),
        "{errors:?}"
    );
    world.init_resource::<Log>();
    world.trigger(Ping(0)).unwrap();
    assert_eq!(log(&world), ["ran"]);
    assert!(world.take_observer_errors().is_empty());
}

#[test]
fn removed_observers_stop_firing_and_the_list_names_them() {
    let mut world = world_with_log();
    let first = world
        .observe(|_: Trigger<OnAdd, Health>, mut log: ResMut<Log>| log.0.push("first".into()))
        .unwrap();
    let second = world
        .observe(
            (|_: Trigger<OnAdd, Health>, mut log: ResMut<Log>| log.0.push("second".into()))
                .named("second"),
        )
        .unwrap();
    let listed: Vec<_> = world.observers().collect();
    assert_eq!(listed.len(), 2);
    assert_eq!(listed[1].id, second);
    assert_eq!(listed[1].name, "second");
    assert!(listed[1].event.ends_with("OnAdd"));
    assert_eq!(listed[1].component, world.components().id_of::<Health>());
    world.spawn((Health(1),));
    assert_eq!(log(&world), ["first", "second"]);
    assert!(world.remove_observer(first));
    assert!(!world.remove_observer(first), "already gone");
    clear_log(&mut world);
    world.spawn((Health(1),));
    assert_eq!(log(&world), ["second"]);
    assert!(world.remove_observer(second));
    clear_log(&mut world);
    world.spawn((Health(1),));
    assert!(log(&world).is_empty());
}

#[test]
fn a_panicking_observer_leaves_the_world_consistent_and_stays_registered() {
    let mut world = world_with_log();
    world
        .observe(|t: Trigger<OnAdd, Health>, mut log: ResMut<Log>| {
            log.0.push("ran".into());
            let _ = t;
            if log.0.len() == 1 {
                panic!("first time");
            }
        })
        .unwrap();
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        world.spawn((Health(1),));
    }));
    assert!(outcome.is_err());
    assert_eq!(
        world.len(),
        1,
        "the spawn completed before its observers ran"
    );
    world.spawn((Health(2),));
    assert_eq!(log(&world), ["ran", "ran"]);
    assert_eq!(world.observers().count(), 1);
}

#[test]
fn required_components_and_observers_both_follow_an_insert() {
    let mut world = world_with_log();
    world.register_required::<Health, Armor>().unwrap();
    world
        .observe(
            |t: Trigger<OnAdd, Armor>, a: Query<&Armor>, mut log: ResMut<Log>| {
                log.0
                    .push(format!("armor {}", a.get(t.entity()).unwrap().0));
            },
        )
        .unwrap();
    let e = world.spawn((Health(1),));
    assert_eq!(world.get::<Armor>(e).unwrap().0, 5);
    assert_eq!(log(&world), ["armor 5"]);
}

#[test]
fn a_restore_keeps_observers_and_fires_none() {
    let mut world = world_with_log();
    world.snapshot_by_copy::<Health>();
    let a = world.spawn((Health(1),));
    let mut snap = Snapshot::default();
    world.snapshot_into(&mut snap).unwrap();
    watch_health(&mut world);
    world.spawn((Health(2),));
    clear_log(&mut world);
    world.restore(&snap).unwrap();
    assert!(
        log(&world).is_empty(),
        "a restore is not a structural change"
    );
    world.insert_one(a, Health(3)).unwrap();
    assert_eq!(
        log(&world),
        [
            format!("replace {} 1", a.index()),
            format!("insert {} 3", a.index())
        ]
    );
}

/// A game where observers react to systems' commands: the same world at
/// every thread count.
fn game(threads: usize) -> Vec<(Entity, Option<u32>, bool)> {
    let mut world = World::new();
    #[derive(Default)]
    struct Kills(u32);
    world.init_resource::<Kills>();
    world
        .observe(|t: Trigger<OnAdd, Health>, mut commands: Commands| {
            if t.entity().index().is_multiple_of(3) {
                commands.entity(t.entity()).insert_one(Marked);
            }
        })
        .unwrap();
    world
        .observe(
            |t: Trigger<OnRemove, Health>, mut kills: ResMut<Kills>, mut commands: Commands| {
                kills.0 += 1;
                commands.spawn((Armor(t.entity().index()),));
            },
        )
        .unwrap();
    world
        .observe(
            |t: Trigger<Hit>, mut hp: Query<&mut Health>, mut commands: Commands| {
                if let Ok(h) = hp.get_mut(t.target().unwrap()) {
                    h.0 = h.0.saturating_sub(t.event().0);
                    if h.0 == 0 {
                        commands.entity(t.target().unwrap()).remove_one::<Health>();
                    }
                }
            },
        )
        .unwrap();
    let mut schedule = Schedule::with_threads(threads);
    schedule
        .add_system(|mut commands: Commands, q: Query<Entity, With<Health>>| {
            let n = q.iter().count() as u32;
            for k in 0..4 {
                commands.spawn((Health(3 + (n + k) % 4),));
            }
        })
        .unwrap();
    schedule
        .add_system(
            |mut commands: Commands, q: Query<(Entity, &Health), Without<Marked>>| {
                for (e, h) in q.iter() {
                    commands.entity(e).trigger(Hit(h.0 % 3 + 1));
                }
            },
        )
        .unwrap();
    schedule
        .add_system(|mut commands: Commands, q: Query<Entity, With<Armor>>| {
            for e in q.iter().step_by(2) {
                commands.despawn(e);
            }
        })
        .unwrap();
    for _ in 0..if cfg!(miri) { 3 } else { 20 } {
        schedule.run(&mut world).unwrap();
    }
    let mut out: Vec<_> = world
        .query::<(Entity, Option<&Health>, Has<Marked>)>()
        .iter()
        .map(|(e, h, m)| (e, h.map(|h| h.0), m))
        .collect();
    out.sort_by_key(|x| x.0.to_bits());
    out.push((
        Entity::from_parts(0, 0),
        Some(world.resource::<Kills>().unwrap().0),
        false,
    ));
    out
}

#[test]
fn observers_driven_by_a_schedule_give_the_same_world_at_1_2_4_and_8_threads() {
    let one = game(1);
    assert!(one.len() > 10);
    for threads in [2, 4, 8] {
        assert_eq!(game(threads), one, "{threads} threads");
    }
    assert_eq!(game(4), one, "repeated run");
}

#[test]
fn observers_see_every_change_of_an_immutable_component() {
    let mut world = world_with_log();
    world.register_immutable::<Health>();
    watch_health(&mut world);
    let e = world.spawn((Health(1),));
    assert!(world.get_mut::<Health>(e).is_err(), "no write in place");
    world.insert_one(e, Health(2)).unwrap();
    let i = e.index();
    assert_eq!(
        log(&world),
        [
            format!("add {i} 1"),
            format!("insert {i} 1"),
            format!("replace {i} 1"),
            format!("insert {i} 2")
        ],
        "the only way to change it is a replace, which the observers see"
    );
}
