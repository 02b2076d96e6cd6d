//! Disabled entities and the tags hidden by default: a disabled entity is
//! left out of every query, loop and system that does not name `Disabled`,
//! while staying alive and reachable by id; it keeps its state through
//! snapshots; a game's own tag can be hidden the same way; and prefabs go
//! through the same mechanism.

use doecs::prelude::*;
use doecs::{Changed, Snapshot};

#[derive(Debug, Clone, Copy, PartialEq)]
struct Hp(u32);
#[derive(Debug, Clone, Copy, PartialEq)]
struct Offscreen;

fn hps(world: &World) -> Vec<u32> {
    let mut v: Vec<u32> = world.query::<&Hp>().iter().map(|h| h.0).collect();
    v.sort_unstable();
    v
}

#[test]
fn a_disabled_entity_is_skipped_by_queries_that_do_not_name_it() {
    let mut world = World::new();
    let es: Vec<Entity> = (1..=4).map(|i| world.spawn((Hp(i),))).collect();
    let mut held = QueryState::<&Hp>::new(&world);
    assert_eq!(held.iter(&world).count(), 4);
    world.disable(es[1]).unwrap();
    assert!(world.is_disabled(es[1]));
    assert_eq!(hps(&world), [1, 3, 4]);
    assert_eq!(held.iter(&world).count(), 3, "a held query too");
    world.query_mut::<&mut Hp>().for_each(|h| h.0 += 10);
    assert_eq!(
        world.get::<Hp>(es[1]),
        Ok(&Hp(2)),
        "untouched, but reachable"
    );
    // Naming `Disabled` sees them: a fetch, an option, a filter, `Has`.
    assert_eq!(world.query::<(&Hp, &Disabled)>().iter().count(), 1);
    assert_eq!(world.query::<(&Hp, Option<&Disabled>)>().iter().count(), 4);
    assert_eq!(
        world.query_filtered::<&Hp, With<Disabled>>().iter().count(),
        1
    );
    let flags: Vec<bool> = world
        .query::<(&Hp, Has<Disabled>)>()
        .iter()
        .map(|(_, d)| d)
        .collect();
    assert_eq!(flags.iter().filter(|d| **d).count(), 1);
    world.enable(es[1]).unwrap();
    world.enable(es[1]).unwrap(); // enabling twice is fine
    assert_eq!(hps(&world), [2, 11, 13, 14]);
    world.despawn(es[3]).unwrap();
    assert!(world.enable(es[3]).is_err() && world.disable(es[3]).is_err());
}

#[test]
fn systems_skip_disabled_entities_and_see_them_come_back() {
    let mut world = World::new();
    let a = world.spawn((Hp(0),));
    let b = world.spawn((Hp(0),));
    let mut schedule = Schedule::with_threads(1);
    schedule
        .add_system(|mut q: Query<&mut Hp>| q.for_each(|h| h.0 += 1))
        .unwrap();
    world.insert_resource(Vec::<usize>::new());
    schedule
        .add_system(|q: Query<&Hp, Changed<Hp>>, mut seen: ResMut<Vec<usize>>| {
            seen.push(q.iter().count())
        })
        .unwrap();
    schedule.run(&mut world).unwrap();
    world.disable(b).unwrap();
    schedule.run(&mut world).unwrap();
    schedule.run(&mut world).unwrap();
    world.enable(b).unwrap();
    schedule.run(&mut world).unwrap();
    assert_eq!(world.get::<Hp>(a), Ok(&Hp(4)));
    assert_eq!(world.get::<Hp>(b), Ok(&Hp(2)));
    // The change reader sees `b` again once enabled, written by the tick.
    assert_eq!(world.resource::<Vec<usize>>().unwrap(), &[2, 1, 1, 2]);
}

#[test]
fn a_games_own_tag_can_be_hidden_and_the_built_ins_shown() {
    let mut world = World::new();
    world.spawn((Hp(1),));
    world.spawn((Hp(2), Offscreen));
    let mut held = QueryState::<&Hp>::new(&world);
    assert_eq!(held.iter(&world).count(), 2);
    assert!(world.hide_by_default::<Offscreen>());
    assert!(!world.hide_by_default::<Offscreen>());
    assert_eq!(hps(&world), [1]);
    assert_eq!(held.iter(&world).count(), 1, "cached matches are redone");
    assert!(world.show_by_default::<Offscreen>());
    assert_eq!(held.iter(&world).count(), 2);
    // Showing `Disabled` makes disabled entities plain entities.
    let e = world.spawn((Hp(3),));
    world.disable(e).unwrap();
    assert_eq!(hps(&world), [1, 2]);
    assert!(world.show_by_default::<Disabled>());
    assert_eq!(hps(&world), [1, 2, 3]);
    assert!(world
        .hidden_tags()
        .types()
        .contains(&std::any::TypeId::of::<Prefab>()));
}

#[test]
fn disabled_survives_snapshots_commands_and_prefab_instances() {
    let mut world = World::new();
    world.snapshot_by_copy::<Hp>();
    let e = world.spawn((Hp(5),));
    let mut snapshot = Snapshot::default();
    world.snapshot_into(&mut snapshot).unwrap();
    world.disable(e).unwrap();
    let mut after = Snapshot::default();
    world.snapshot_into(&mut after).unwrap();
    world.restore(&snapshot).unwrap();
    assert!(!world.is_disabled(e) && hps(&world) == [5]);
    world.restore(&after).unwrap();
    assert!(world.is_disabled(e) && hps(&world).is_empty());
    // By command, and on a prefab's instance (the prefab stays hidden).
    let prefab = world.spawn((Prefab, Hp(7)));
    let instance = world.instantiate(prefab, 1).unwrap()[0];
    let mut commands = CommandBuffer::new();
    commands.insert_one(instance, Disabled);
    world.apply(&mut commands);
    assert!(world.is_disabled(instance));
    assert_eq!(world.query::<OwnOrInherited<Hp>>().iter().count(), 0);
    world.enable(instance).unwrap();
    world.enable(e).unwrap();
    let mut seen: Vec<u32> = world
        .query::<OwnOrInherited<Hp>>()
        .iter()
        .map(|h| h.0)
        .collect();
    seen.sort_unstable();
    assert_eq!(seen, [5, 7]);
}
