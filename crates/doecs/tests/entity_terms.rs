//! Whole-entity query data: `Query<EntityRef>` reads any component of each
//! entity it visits, `Query<EntityMut>` reads and writes any (no
//! structural changes). Covers mixed archetypes, filters, every loop form,
//! immutability, change stamps written through `EntityMut::get_mut`,
//! aliasing inside one query or system (refused with typed errors),
//! conflicts between systems (the schedule orders them) and relation
//! terms over whole entities.

use doecs::prelude::*;
use doecs::{AccessKey, AliasError, EntityError, QueryError, ScheduleError};

#[derive(Debug, Clone, Copy, PartialEq)]
struct A(u32);
#[derive(Debug, Clone, Copy, PartialEq)]
struct B(u32);
#[derive(Debug, Clone, Copy, PartialEq)]
struct C(u32);
struct Frozen;

/// Three archetypes: `(A, B)`, `(A,)` and `(B, C)`.
fn world() -> (World, [Entity; 3]) {
    let mut world = World::new();
    let ab = world.spawn((A(1), B(10)));
    let a = world.spawn((A(2),));
    let bc = world.spawn((B(30), C(300)));
    (world, [ab, a, bc])
}

fn sorted<T: Ord>(mut v: Vec<T>) -> Vec<T> {
    v.sort();
    v
}

#[test]
fn entity_ref_reads_any_component_of_mixed_archetypes() {
    let (world, [ab, a, bc]) = world();
    let seen = sorted(
        world
            .query::<EntityRef>()
            .iter()
            .map(|e| {
                (
                    e.id(),
                    e.get::<A>().map(|x| x.0),
                    e.get::<B>().map(|x| x.0),
                    e.get::<C>().map(|x| x.0),
                    e.components().count(),
                )
            })
            .collect(),
    );
    assert_eq!(
        seen,
        sorted(vec![
            (ab, Some(1), Some(10), None, 2),
            (a, Some(2), None, None, 1),
            (bc, None, Some(30), Some(300), 2),
        ])
    );
    assert!(world.query::<EntityRef>().get(bc).unwrap().contains::<C>());
    // Tuples with other read-only data.
    let with_entity: Vec<(Entity, bool)> = world
        .query::<(Entity, EntityRef)>()
        .iter()
        .map(|(e, view)| (e, view.id() == e))
        .collect();
    assert!(with_entity.iter().all(|&(_, same)| same) && with_entity.len() == 3);
    let mut q = QueryState::<(EntityRef, &B)>::new(&world);
    assert_eq!(q.iter(&world).count(), 2);
}

#[test]
fn filters_combine_with_whole_entity_views() {
    let (mut world, [ab, a, bc]) = world();
    world.insert_one(a, Frozen).unwrap();
    let with_a = sorted(
        world
            .query_filtered::<EntityRef, With<A>>()
            .iter()
            .map(|e| e.id())
            .collect(),
    );
    assert_eq!(with_a, sorted(vec![ab, a]));
    let thawed: Vec<Entity> = world
        .query_filtered::<EntityRef, (With<A>, Without<Frozen>)>()
        .iter()
        .map(|e| e.id())
        .collect();
    assert_eq!(thawed, [ab]);
    world
        .query_filtered_mut::<EntityMut, Without<A>>()
        .for_each(|mut e| e.get_mut::<C>().unwrap().0 += 1);
    assert_eq!(world.get::<C>(bc), Ok(&C(301)));
    // Hidden tags stay hidden: a view reads everything, but asks for no tag.
    let d = world.spawn((A(9), Disabled));
    assert!(!world.query::<EntityRef>().iter().any(|e| e.id() == d));
    assert_eq!(
        world
            .query_filtered::<EntityRef, With<Disabled>>()
            .iter()
            .map(|e| e.id())
            .collect::<Vec<_>>(),
        [d]
    );
}

#[test]
fn entity_mut_writes_in_every_loop_form() {
    let (mut world, [ab, a, bc]) = world();
    world.query_mut::<EntityMut>().for_each(|mut e| {
        if let Ok(mut x) = e.get_mut::<A>() {
            x.0 += 1;
        }
    });
    assert_eq!(world.get::<A>(ab), Ok(&A(2)));
    assert_eq!(world.get::<A>(a), Ok(&A(3)));
    // Items of different rows may be alive together.
    let mut q = world.query_mut::<EntityMut>();
    let mut all: Vec<EntityMut> = q.iter_mut().collect();
    for e in &mut all {
        if let Ok(mut b) = e.get_mut::<B>() {
            b.0 *= 2;
        }
    }
    assert_eq!(all.len(), 3);
    drop(all);
    q.get_mut(bc).unwrap().get_mut::<C>().unwrap().0 = 7;
    assert_eq!(q.get(bc).unwrap().get::<C>(), Some(&C(7)), "read-only form");
    q.for_each_chunk(|rows| {
        for mut e in rows {
            if let Ok(mut c) = e.get_mut::<C>() {
                c.0 += 1;
            }
        }
    });
    q.par_for_each(|mut e| {
        if let Ok(mut b) = e.get_mut::<B>() {
            b.0 += 1;
        }
    });
    assert_eq!(world.get::<B>(ab), Ok(&B(21)));
    assert_eq!(world.get::<B>(bc), Ok(&B(61)));
    assert_eq!(world.get::<C>(bc), Ok(&C(8)));
    // Misses are typed errors; no structural change is possible.
    let mut q = world.query_mut::<EntityMut>();
    let mut view = q.get_mut(a).unwrap();
    assert_eq!(
        view.get_mut::<C>().map(|_| ()),
        Err(EntityError::MissingComponent {
            entity: a,
            component: std::any::type_name::<C>(),
        })
    );
    assert_eq!(view.as_readonly().get::<A>(), Some(&A(3)));
    assert!(view.contains::<A>() && !view.contains::<B>());
    world.check_invariants();
}

#[test]
fn entity_mut_respects_immutable_components() {
    let (mut world, [ab, ..]) = world();
    world.register_immutable::<A>();
    // The query itself is fine: it names no type.
    let mut q = world.query_mut::<EntityMut>();
    let mut view = q.get_mut(ab).unwrap();
    assert_eq!(
        view.get_mut::<A>().map(|_| ()),
        Err(EntityError::Immutable(std::any::type_name::<A>()))
    );
    view.get_mut::<B>().unwrap().0 = 11;
    assert_eq!(view.get::<A>(), Some(&A(1)));
    assert_eq!(world.get::<A>(ab), Ok(&A(1)));
    assert_eq!(world.get::<B>(ab), Ok(&B(11)));
}

/// A query's view reads the entity's own row only; `world.entity(e)`
/// also finds what `e` inherits from a prefab.
#[test]
fn a_query_view_reads_own_components_only() {
    let mut world = World::new();
    let prefab = world.spawn((Prefab, A(5)));
    let instance = world.spawn((B(1),));
    world.add_pair(instance, prefab, IsA).unwrap();
    assert_eq!(world.entity(instance).unwrap().get::<A>(), Some(&A(5)));
    let q = world.query::<EntityRef>();
    let view = q.get(instance).unwrap();
    assert_eq!(view.get::<A>(), None);
    assert_eq!(view.get::<B>(), Some(&B(1)));
    let own: Vec<Entity> = q.iter().map(|e| e.id()).collect();
    assert_eq!(own, [instance], "the prefab stays hidden");
}

#[test]
fn writes_through_entity_mut_are_stamped_when_written() {
    let (mut world, [ab, a, _]) = world();
    world.track_changes::<A>();
    let mut changed = QueryState::<Entity, Changed<A>>::new(&world);
    assert_eq!(changed.iter(&world).count(), 2, "a first use sees all");
    assert_eq!(changed.iter(&world).count(), 0);
    // Reading through `Mut` stamps nothing; writing stamps the row.
    world.query_mut::<EntityMut>().for_each(|mut e| {
        if let Ok(x) = e.get_mut::<A>() {
            let _ = x.0;
        }
    });
    assert_eq!(changed.iter(&world).count(), 0);
    world.query_mut::<EntityMut>().for_each(|mut e| {
        if e.id() == a {
            let mut x = e.get_mut::<A>().unwrap();
            x.0 = 40;
            assert!(x.is_changed());
        }
    });
    let seen: Vec<Entity> = changed.iter(&world).collect();
    assert_eq!(seen, [a], "only the row written, not {ab}");

    // In a schedule: a reader with `Changed<A>` sees the writer's rows.
    #[derive(Default)]
    struct Seen(Vec<Entity>);
    fn write_a(mut q: Query<EntityMut, (With<A>, With<B>)>) {
        q.for_each(|mut e| e.get_mut::<A>().unwrap().0 += 1);
    }
    fn watch(q: Query<Entity, Changed<A>>, mut seen: ResMut<Seen>) {
        seen.0 = q.iter().collect();
    }
    world.init_resource::<Seen>();
    let mut schedule = Schedule::new();
    schedule.add_system(write_a).unwrap();
    schedule.add_system(watch).unwrap();
    schedule.run(&mut world).unwrap();
    schedule.run(&mut world).unwrap();
    assert_eq!(world.resource::<Seen>().unwrap().0, [ab]);
}

#[test]
fn aliasing_in_one_query_is_refused() {
    let (world, _) = world();
    let key = AccessKey::of::<A>();
    let all = AccessKey::every_component();
    fn alias<Q: doecs::QueryData>(world: &World) -> Option<AliasError> {
        match QueryState::<Q>::try_new(world) {
            Err(QueryError::Alias(e)) => Some(e),
            Err(e) => panic!("{e}"),
            Ok(_) => None,
        }
    }
    assert_eq!(
        alias::<(EntityMut, &A)>(&world),
        Some(AliasError::MutAndShared(key))
    );
    assert_eq!(
        alias::<(&A, EntityMut)>(&world),
        Some(AliasError::MutAndShared(key))
    );
    assert_eq!(
        alias::<(EntityRef, &mut A)>(&world),
        Some(AliasError::MutAndShared(key))
    );
    assert_eq!(
        alias::<(&mut A, EntityRef)>(&world),
        Some(AliasError::MutAndShared(key))
    );
    assert_eq!(
        alias::<(EntityMut, Mut<A>)>(&world),
        Some(AliasError::MutTwice(key))
    );
    assert_eq!(
        alias::<(EntityMut, EntityMut)>(&world),
        Some(AliasError::MutTwice(all))
    );
    assert_eq!(
        alias::<(EntityMut, EntityRef)>(&world),
        Some(AliasError::MutAndShared(all))
    );
    assert_eq!(alias::<(EntityRef, EntityRef, &A, Ref<B>)>(&world), None);
    assert_eq!(alias::<(EntityMut, Entity, Has<A>)>(&world), None);
    // A change filter reads stamps its query writes anyway.
    assert!(QueryState::<EntityMut, Changed<A>>::try_new(&world).is_ok());
}

#[test]
fn aliasing_in_one_system_is_refused_with_typed_errors() {
    fn one_query(_q: Query<(EntityMut, &A)>) {}
    fn two_queries(_a: Query<EntityMut>, _b: Query<&A>) {}
    fn ref_and_writer(_a: Query<EntityRef>, _b: Query<&mut B>) {}
    fn apart(_a: Query<EntityMut, With<Frozen>>, _b: Query<&mut A, Without<Frozen>>) {}
    fn readers(_a: Query<EntityRef>, _b: Query<(&A, EntityRef)>) {}
    assert!(matches!(
        Schedule::new().add_system(one_query).err(),
        Some(ScheduleError::InvalidParam { system, .. }) if system == "one_query"
    ));
    match Schedule::new().add_system(two_queries).err() {
        Some(ScheduleError::ConflictingParams {
            system,
            first,
            second,
            reason,
        }) => {
            assert_eq!(system, "two_queries");
            assert_eq!(first, "Query<EntityMut>");
            assert_eq!(second, "Query<&A>");
            assert!(reason.contains("A"), "{reason}");
        }
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        Schedule::new().add_system(ref_and_writer).err(),
        Some(ScheduleError::ConflictingParams { .. })
    ));
    assert!(
        Schedule::new().add_system(apart).is_ok(),
        "disjoint filters"
    );
    assert!(Schedule::new().add_system(readers).is_ok());
}

fn touch_all(mut q: Query<EntityMut>) {
    q.for_each(|mut e| {
        if let Ok(mut a) = e.get_mut::<A>() {
            a.0 += 1;
        }
    });
}
fn read_a(q: Query<&A>) {
    assert!(q.iter().count() > 0);
}
fn view_all(q: Query<EntityRef>) {
    assert!(q.iter().count() > 0);
}
fn write_b(mut q: Query<&mut B>) {
    q.for_each(|b| b.0 += 1);
}
fn read_c(q: Query<&C>) {
    let _ = q.iter().count();
}

#[test]
fn the_schedule_orders_whole_entity_systems_against_others() {
    let (mut world, [ab, ..]) = world();
    let mut schedule = Schedule::with_threads(4);
    schedule
        .add_system(read_c)
        .unwrap()
        .add_system(touch_all)
        .unwrap()
        .add_system(read_a)
        .unwrap()
        .add_system(view_all)
        .unwrap()
        .add_system(write_b)
        .unwrap();
    let plan = schedule.plan().unwrap().to_string();
    // A write of every component conflicts with any component reader.
    assert!(plan.contains("read_c -> touch_all"), "{plan}");
    assert!(
        plan.contains("touch_all -> read_a: both access component `"),
        "{plan}"
    );
    assert!(plan.contains("touch_all -> view_all"), "{plan}");
    // A read of every component conflicts with writers only.
    assert!(plan.contains("view_all -> write_b"), "{plan}");
    assert!(!plan.contains("read_a -> view_all"), "{plan}");
    assert!(!plan.contains("read_c -> view_all"), "{plan}");
    for _ in 0..3 {
        schedule.run(&mut world).unwrap();
    }
    assert_eq!(world.get::<A>(ab), Ok(&A(4)));
    assert_eq!(world.get::<B>(ab), Ok(&B(13)));
}

#[test]
fn system_accesses_conflict_as_their_views_do() {
    let access = |desc: doecs::SystemDesc| {
        let mut schedule = Schedule::new();
        schedule.add_system(desc).unwrap();
        schedule
    };
    // Through the builder too: a declared whole-entity query.
    let mut world = World::new();
    let e = world.spawn((A(1),));
    let mut schedule = access(doecs::system("built").query::<EntityMut>().run(|ctx| {
        ctx.query::<EntityMut>()
            .for_each(|mut v| v.get_mut::<A>().unwrap().0 = 9)
    }));
    schedule.run(&mut world).unwrap();
    assert_eq!(world.get::<A>(e), Ok(&A(9)));
    // Declaring one type does not cover every component.
    let mut schedule = access(doecs::system("narrow").reads::<A>().run(|ctx| {
        let _ = ctx.query::<EntityRef>().iter().count();
    }));
    let err = schedule.run(&mut world).unwrap_err();
    assert!(
        matches!(&err, ScheduleError::SystemPanicked { message, .. } if message.contains("every component")),
        "{err}"
    );
    // A run condition may read whole entities, never write them.
    fn any_a(q: Query<EntityRef, With<A>>) -> bool {
        q.iter().next().is_some()
    }
    fn writes(_q: Query<EntityMut>) -> bool {
        true
    }
    assert!(Schedule::new().add_system(read_a.run_if(any_a)).is_ok());
    assert!(matches!(
        Schedule::new().add_system(read_a.run_if(writes)).err(),
        Some(ScheduleError::InvalidParam { .. })
    ));
}

#[derive(QueryData)]
#[allow(dead_code)] // read through the query's items only
struct Labelled<'w> {
    id: Entity,
    view: EntityRef<'w>,
}

#[derive(QueryData)]
struct Editable<'w> {
    id: Entity,
    view: EntityMut<'w>,
}

#[test]
fn derived_query_data_and_relation_terms_take_whole_entities() {
    let (mut world, [ab, a, bc]) = world();
    world.query_mut::<Editable>().for_each(|mut e| {
        if e.id == ab {
            e.view.get_mut::<B>().unwrap().0 = 12;
        }
    });
    assert_eq!(world.get::<B>(ab), Ok(&B(12)));
    // Its read-only twin reads through `EntityRef`.
    let read: Vec<u32> = world
        .query_mut::<Editable>()
        .iter()
        .filter_map(|e| e.view.get::<B>().map(|b| b.0))
        .collect();
    assert_eq!(sorted(read), [12, 30]);
    let ids = sorted(
        world
            .query::<Labelled>()
            .iter()
            .filter(|l| l.view.contains::<B>())
            .map(|l| l.id)
            .collect(),
    );
    assert_eq!(ids, sorted(vec![ab, bc]));
    // A parent's components, whatever they are.
    world.set_parent(a, bc).unwrap();
    let parents: Vec<(Entity, Option<u32>)> = world
        .query::<(Entity, Up<ChildOf, EntityRef>)>()
        .iter()
        .map(|(e, parent)| (e, parent.get::<C>().map(|c| c.0)))
        .collect();
    assert_eq!(parents, [(a, Some(300))]);
    // Writing a type that a relation term may read on a related entity:
    // only the callback loops run it.
    assert!(matches!(
        QueryState::<(&mut A, Up<ChildOf, EntityRef>)>::iterable(),
        Err(AliasError::RelatedWrite(_))
    ));
    assert!(matches!(
        QueryState::<(EntityMut, Up<ChildOf, &C>)>::iterable(),
        Err(AliasError::RelatedWrite(_))
    ));
    world
        .query_mut::<(EntityMut, Up<ChildOf, &C>)>()
        .for_each(|(mut own, parent)| own.get_mut::<A>().unwrap().0 = parent.0);
    assert_eq!(world.get::<A>(a), Ok(&A(300)));
}
