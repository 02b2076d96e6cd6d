//! Required components: inserting a component brings the components it
//! requires that the entity lacks, on every path (spawn, batch, insert,
//! builder, command buffers, systems' commands, prefab instances), keeping
//! values given with it; requirements chain; duplicates and cycles are
//! refused; and hooks fire in the documented order.

use doecs::prelude::*;
use doecs::{ComponentHooks, EntityBuilder, RequireError};
use std::sync::{Arc, Mutex};

#[derive(Debug, Clone, Copy, PartialEq)]
struct Body;
#[derive(Debug, Clone, Copy, PartialEq, Default)]
struct Velocity(i32);
#[derive(Debug, Clone, Copy, PartialEq)]
struct Mass(i32);
#[derive(Debug, Clone, Copy, PartialEq, Default)]
struct Inertia(i32);

fn world() -> World {
    let mut world = World::new();
    world.register_required::<Body, Velocity>().unwrap();
    world
        .register_required_with::<Body, Mass>(|| Mass(10))
        .unwrap();
    world.register_required::<Mass, Inertia>().unwrap();
    world
}

fn parts(world: &World, e: Entity) -> (Option<i32>, Option<i32>, Option<i32>) {
    (
        world.get::<Velocity>(e).ok().map(|v| v.0),
        world.get::<Mass>(e).ok().map(|m| m.0),
        world.get::<Inertia>(e).ok().map(|i| i.0),
    )
}

#[test]
fn every_path_brings_what_is_required() {
    let mut world = world();
    let full = (Some(0), Some(10), Some(0));
    let a = world.spawn((Body,));
    assert_eq!(
        parts(&world, a),
        full,
        "spawn, with the chain Mass -> Inertia"
    );
    let b = world.spawn((Body, Mass(3)));
    assert_eq!(
        parts(&world, b),
        (Some(0), Some(3), Some(0)),
        "a given value is kept"
    );
    let c = world.spawn((7u8,));
    world.insert_one(c, Body).unwrap();
    assert_eq!(parts(&world, c), full, "insert");
    for e in world.spawn_batch((0..3).map(|_| (Body,))) {
        assert_eq!(parts(&world, e), full, "batch");
    }
    let mut builder = EntityBuilder::new();
    builder.add(Body);
    let d = world.spawn(&mut builder);
    assert_eq!(parts(&world, d), full, "builder");
    let mut commands = CommandBuffer::new();
    let e = commands.spawn(&world, (Body,));
    world.apply(&mut commands);
    assert_eq!(parts(&world, e), full, "command buffer");
    let mut schedule = Schedule::with_threads(1);
    schedule
        .add_system(|mut commands: Commands| {
            commands.spawn((Body, Velocity(5)));
        })
        .unwrap();
    schedule.run(&mut world).unwrap();
    let spawned: Vec<_> = world
        .query::<(Entity, &Velocity)>()
        .iter()
        .filter(|(_, v)| v.0 == 5)
        .map(|(e, _)| e)
        .collect();
    assert_eq!(
        parts(&world, spawned[0]),
        (Some(5), Some(10), Some(0)),
        "a system's commands"
    );
    // Removing a required component is allowed: requirements apply when
    // the requiring component arrives.
    world.remove_one::<Velocity>(a).unwrap();
    assert_eq!(parts(&world, a), (None, Some(10), Some(0)));
    assert_eq!(world.required_by::<Body>().len(), 2);
}

#[test]
fn duplicates_and_cycles_are_refused_unchanged() {
    let mut world = world();
    assert!(matches!(
        world.register_required::<Body, Velocity>(),
        Err(RequireError::Duplicate { .. })
    ));
    let err = world
        .register_required_with::<Inertia, Body>(|| Body)
        .unwrap_err();
    let RequireError::Cycle { chain, .. } = &err else {
        panic!("{err}");
    };
    assert_eq!(
        chain.len(),
        4,
        "Inertia requires Body requires Mass requires Inertia: {err}"
    );
    assert!(matches!(
        world.register_required::<Velocity, Velocity>(),
        Err(RequireError::Cycle { .. })
    ));
    // Nothing changed.
    let e = world.spawn((Inertia(1),));
    assert_eq!(parts(&world, e), (None, None, Some(1)));
}

#[test]
fn the_requiring_components_hooks_fire_first() {
    let mut world = world();
    let log: Arc<Mutex<Vec<String>>> = Arc::default();
    let l = log.clone();
    world.set_hooks::<Body>(ComponentHooks::new().on_add(move |ctx| {
        let has_mass = ctx.world.get::<Mass>(ctx.entity).is_ok();
        l.lock()
            .unwrap()
            .push(format!("add Body (mass present: {has_mass})"));
    }));
    let l = log.clone();
    world.set_hooks::<Mass>(ComponentHooks::new().on_add(move |_| {
        l.lock().unwrap().push("add Mass".into());
    }));
    let l = log.clone();
    world.set_hooks::<Inertia>(ComponentHooks::new().on_add(move |_| {
        l.lock().unwrap().push("add Inertia".into());
    }));
    world.spawn((Body,));
    assert_eq!(
        *log.lock().unwrap(),
        ["add Body (mass present: false)", "add Mass", "add Inertia"]
    );
    // Given together, the hooks fire in the one operation.
    log.lock().unwrap().clear();
    world.spawn((Body, Mass(1)));
    let seen = log.lock().unwrap().clone();
    assert!(
        seen.contains(&"add Body (mass present: true)".to_owned()),
        "{seen:?}"
    );
}

#[test]
fn prefab_instances_and_a_prefab_bring_their_requirements() {
    let mut world = world();
    let prefab = world.spawn((Prefab, Body));
    // The prefab itself got what Body requires (it is an entity like any).
    assert_eq!(parts(&world, prefab), (Some(0), Some(10), Some(0)));
    let instance = world.instantiate(prefab, 1).unwrap()[0];
    assert!(world.get::<Body>(instance).is_ok());
    assert_eq!(parts(&world, instance), (Some(0), Some(10), Some(0)));
}
