//! Immutable components: a component registered immutable changes only by
//! insert. Every path that would write it in place is refused with its
//! typed error and leaves the world as it was (values and change stamps);
//! inserts replace it and fire the hooks with the old and the new value; a
//! schedule (or one-shot run, or app) with a system that declares a write
//! of it is refused before any system runs, while readers run as usual.

use doecs::prelude::*;
use doecs::{ComponentDescriptor, EntityError, QueryError, SystemDesc, Tick};
use std::sync::{Arc, Mutex};

#[derive(Debug, Clone, Copy, PartialEq)]
struct Level(u32);
#[derive(Debug, Clone, Copy, PartialEq)]
struct Hp(u32);

/// The name the errors give `Level`.
fn level() -> &'static str {
    std::any::type_name::<Level>()
}

/// A world with `Level` immutable and two entities holding one.
fn world() -> (World, [Entity; 2]) {
    let mut world = World::new();
    world.register_immutable::<Level>();
    world.track_changes::<Level>();
    let a = world.spawn((Level(1), Hp(10)));
    let b = world.spawn((Level(2),));
    (world, [a, b])
}

/// The values and change stamps of every entity's `Level`.
fn levels(world: &World, entities: &[Entity]) -> Vec<(Level, (Tick, Tick))> {
    entities
        .iter()
        .map(|&e| {
            (
                *world.get::<Level>(e).unwrap(),
                world.change_ticks::<Level>(e).unwrap(),
            )
        })
        .collect()
}

#[test]
fn registration_is_idempotent_and_shows_in_the_info() {
    let mut world = World::new();
    let e = world.spawn((Level(1),));
    let id = world.component_id::<Level>();
    assert!(!world.components().info(id).is_immutable());
    assert_eq!(world.register_immutable::<Level>(), id);
    assert_eq!(world.register_immutable::<Level>(), id);
    assert!(world.components().info(id).is_immutable());
    let hp = world.component_id::<Hp>();
    assert!(!world.components().info(hp).is_immutable());
    // Registered immutable before any entity has it.
    struct Later;
    let later = world.register_immutable::<Later>();
    assert!(world.components().info(later).is_immutable());
    assert_eq!(world.get::<Level>(e), Ok(&Level(1)));
}

#[test]
fn typed_writes_in_place_are_refused_and_change_nothing() {
    let (mut world, [a, b]) = world();
    let before = levels(&world, &[a, b]);
    let refused = Err(EntityError::Immutable(level()));

    assert_eq!(world.get_mut::<Level>(a).map(|l| *l), refused);
    assert_eq!(
        world.get_many_mut::<Level, 2>([a, b]).map(|_| ()),
        Err(EntityError::Immutable(level()))
    );
    assert_eq!(
        world.entity_mut(a).unwrap().get_mut::<Level>().map(|l| *l),
        refused
    );
    let mut view = world.view_mut::<Level>();
    assert_eq!(view.get(a), Ok(&Level(1)), "reads stay allowed");
    assert_eq!(view.get_mut(a).map(|l| *l), refused);
    // The entity and the component are checked first.
    let bare = world.spawn(());
    assert_eq!(
        world.get_mut::<Level>(bare).map(|_| ()),
        Err(EntityError::MissingComponent {
            entity: bare,
            component: level()
        })
    );

    assert_eq!(levels(&world, &[a, b]), before);
    // Other components of the same entity are written as usual.
    world.get_mut::<Hp>(a).unwrap().0 += 1;
    assert_eq!(world.get::<Hp>(a), Ok(&Hp(11)));
    world.check_invariants();
}

#[test]
fn byte_writes_of_an_immutable_runtime_component_are_refused() {
    let mut world = World::new();
    let id = world
        .register_component(ComponentDescriptor::dynamic(
            "raw",
            std::alloc::Layout::new::<u32>(),
        ))
        .unwrap();
    let e = world.spawn(());
    world.insert_bytes(e, id, &[1, 2, 3, 4]).unwrap();
    world.get_bytes_mut(e, id).unwrap()[0] = 9;
    world.register_immutable_by_id(id).unwrap();
    assert!(world.components().info(id).is_immutable());
    assert_eq!(
        world.get_bytes_mut(e, id).map(|_| ()),
        Err(EntityError::ImmutableId(id))
    );
    assert_eq!(world.get_bytes(e, id), Ok(&[9, 2, 3, 4][..]));
    // Inserting bytes replaces the value: still allowed.
    world.insert_bytes(e, id, &[5, 6, 7, 8]).unwrap();
    assert_eq!(world.get_bytes(e, id), Ok(&[5, 6, 7, 8][..]));
    let unknown = doecs::ComponentId::from_index(999);
    assert_eq!(
        world.register_immutable_by_id(unknown),
        Err(EntityError::UnknownComponent(unknown))
    );
}

#[derive(QueryData)]
struct Writer<'w> {
    _hp: &'w Hp,
    _level: &'w mut Level,
}

#[derive(QueryData)]
struct Reader<'w> {
    _hp: &'w Hp,
    _level: &'w Level,
}

#[test]
fn query_states_that_write_are_refused() {
    let (world, [a, b]) = world();
    let before = levels(&world, &[a, b]);
    fn refused<Q: doecs::QueryData>(world: &World) {
        assert!(
            matches!(
                QueryState::<Q>::try_new(world),
                Err(QueryError::Immutable(name)) if name == level()
            ),
            "{}",
            std::any::type_name::<Q>()
        );
    }
    refused::<&mut Level>(&world);
    refused::<Mut<Level>>(&world);
    refused::<Option<&mut Level>>(&world);
    refused::<(Entity, &Hp, &mut Level)>(&world);
    refused::<Writer>(&world);
    refused::<AnyOf<(&mut Level, &Hp)>>(&world);

    // Readers are fine, and aliasing is still its own error.
    assert_eq!(
        QueryState::<&Level>::try_new(&world).unwrap().count(&world),
        2
    );
    assert!(QueryState::<Reader>::try_new(&world).is_ok());
    assert!(QueryState::<Ref<Level>>::try_new(&world).is_ok());
    assert!(QueryState::<(&mut Hp, &Level)>::try_new(&world).is_ok());
    assert!(matches!(
        QueryState::<(&mut Hp, &Hp)>::try_new(&world),
        Err(QueryError::Alias(_))
    ));
    assert_eq!(levels(&world, &[a, b]), before);
}

#[test]
#[should_panic(expected = "registered immutable")]
fn query_mut_that_writes_panics_with_the_typed_error() {
    let (mut world, _) = world();
    world.query_mut::<&mut Level>().for_each(|l| l.0 += 1);
}

/// A state built while the component was still mutable refuses to be used
/// once it is immutable, before it hands out anything.
#[test]
fn a_state_built_before_the_registration_is_refused_on_its_next_use() {
    let mut world = World::new();
    let e = world.spawn((Level(1),));
    let mut state = QueryState::<&mut Level>::new(&world);
    state.for_each(&mut world, |l| l.0 += 1);
    assert_eq!(world.get::<Level>(e), Ok(&Level(2)));
    world.register_immutable::<Level>();
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        state.for_each(&mut world, |l| l.0 += 1);
    }));
    let message = *outcome.unwrap_err().downcast::<String>().unwrap();
    assert!(message.contains("registered immutable"), "{message}");
    assert_eq!(world.get::<Level>(e), Ok(&Level(2)));
}

#[test]
fn inserts_replace_and_hooks_see_the_old_and_the_new_value() {
    let (mut world, [a, _]) = world();
    let seen: Arc<Mutex<Vec<(&str, u32)>>> = Arc::default();
    let (replaced, inserted) = (seen.clone(), seen.clone());
    world.set_hooks::<Level>(
        ComponentHooks::new()
            .on_replace(move |ctx| {
                let old = ctx.world.get::<Level>(ctx.entity).unwrap().0;
                replaced.lock().unwrap().push(("replace", old));
            })
            .on_insert(move |ctx| {
                let new = ctx.world.get::<Level>(ctx.entity).unwrap().0;
                inserted.lock().unwrap().push(("insert", new));
            }),
    );
    let mut changed = QueryState::<Entity, Changed<Level>>::new(&world);
    assert_eq!(
        changed.iter(&world).count(),
        2,
        "a first use sees everything"
    );
    assert_eq!(changed.iter(&world).count(), 0);
    world.insert_one(a, Level(5)).unwrap();
    assert_eq!(world.get::<Level>(a), Ok(&Level(5)));
    let seen_changed: Vec<Entity> = changed.iter(&world).collect();
    assert_eq!(seen_changed, [a], "a replacing insert counts as a change");
    world.entity_mut(a).unwrap().insert((Level(6),)).unwrap();
    let mut buffer = CommandBuffer::new();
    buffer.insert_one(a, Level(7));
    world.apply(&mut buffer);
    let _ = world.remove_one::<Level>(a).unwrap();
    assert_eq!(
        *seen.lock().unwrap(),
        [
            ("replace", 1),
            ("insert", 5),
            ("replace", 5),
            ("insert", 6),
            ("replace", 6),
            ("insert", 7),
            ("replace", 7),
        ]
    );
    world.check_invariants();
}

fn bump(mut q: Query<&mut Level>) {
    q.for_each(|l| l.0 += 1);
}

#[derive(Default)]
struct Ran(Vec<&'static str>);

fn first(mut ran: ResMut<Ran>, q: Query<&Level>) {
    let _ = q.iter().count();
    ran.0.push("first");
}

#[test]
fn a_schedule_with_a_writer_is_refused_before_any_system_runs() {
    let (mut world, [a, b]) = world();
    world.init_resource::<Ran>();
    let before = levels(&world, &[a, b]);
    let mut schedule = Schedule::new();
    schedule.add_system(first).unwrap();
    schedule.add_system(bump).unwrap();
    let err = schedule.run(&mut world).unwrap_err();
    assert_eq!(
        err,
        ScheduleError::WritesImmutable {
            system: "bump".into(),
            component: level(),
        }
    );
    assert!(err.to_string().contains("`bump`"), "{err}");
    assert!(world.resource::<Ran>().unwrap().0.is_empty(), "nothing ran");
    assert_eq!(levels(&world, &[a, b]), before);
}

#[test]
fn every_way_of_declaring_a_write_is_refused() {
    fn with_mut(_q: Query<Mut<Level>>) {}
    fn with_option(_q: Query<Option<&mut Level>>) {}
    fn with_derived(_q: Query<Writer>) {}
    fn with_set(_set: ParamSet<(Query<&Level>, Query<&mut Level>)>) {}
    let (mut world, _) = world();
    let systems: Vec<(&str, SystemDesc)> = vec![
        ("with_mut", with_mut.into_desc()),
        ("with_option", with_option.into_desc()),
        ("with_derived", with_derived.into_desc()),
        ("with_set", with_set.into_desc()),
        (
            "built",
            doecs::system("built").writes::<Level>().run(|_| {}),
        ),
        (
            "built_query",
            doecs::system("built_query").for_each::<&mut Level>(|_| {}),
        ),
    ];
    for (name, system) in systems {
        let mut schedule = Schedule::new();
        schedule.add_system(system).unwrap();
        assert_eq!(
            schedule.run(&mut world).unwrap_err(),
            ScheduleError::WritesImmutable {
                system: name.into(),
                component: level(),
            }
        );
    }
}

#[test]
fn one_shot_runs_and_apps_are_refused_too() {
    let (mut world, [a, b]) = world();
    let before = levels(&world, &[a, b]);
    assert_eq!(
        world.run_system_once(bump),
        Err(ScheduleError::WritesImmutable {
            system: "bump".into(),
            component: level(),
        })
    );
    let id = world.register_system(bump).unwrap();
    assert!(matches!(
        world.run_system(id),
        Err(ScheduleError::WritesImmutable { .. })
    ));
    assert_eq!(levels(&world, &[a, b]), before);

    let mut app = App::new();
    app.world_mut().register_immutable::<Level>();
    app.world_mut().spawn((Level(1),));
    app.add_systems(Update, bump).unwrap();
    let err = app.update().unwrap_err();
    assert!(
        matches!(
            &err,
            doecs::AppError::Schedule { source, .. }
                if matches!(**source, ScheduleError::WritesImmutable { .. })
        ),
        "{err}"
    );
}

#[test]
fn readers_and_inserting_systems_run() {
    fn relevel(q: Query<(Entity, &Level)>, mut commands: Commands) {
        for (e, l) in &q {
            commands.insert_one(e, Level(l.0 * 10));
        }
    }
    let (mut world, [a, b]) = world();
    world.init_resource::<Ran>();
    let mut schedule = Schedule::new();
    schedule.add_system(first).unwrap();
    schedule.add_system(relevel).unwrap();
    schedule.run(&mut world).unwrap();
    assert_eq!(world.resource::<Ran>().unwrap().0, ["first"]);
    assert_eq!(world.get::<Level>(a), Ok(&Level(10)));
    assert_eq!(world.get::<Level>(b), Ok(&Level(20)));
    world.run_system_once(first).unwrap();
    assert_eq!(world.resource::<Ran>().unwrap().0, ["first", "first"]);
}
