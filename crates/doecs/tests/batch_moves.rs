//! `insert_batch` and `remove_batch`: the same world as one entity at a
//! time (a property test over random worlds and batches), hooks and
//! observers on the fallback path, drops, change stamps, command forms,
//! and refusals that change nothing.

use doecs::prelude::*;
use doecs::{ComponentHooks, Trigger};
use proptest::prelude::*;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

#[derive(Clone, Copy, Debug, PartialEq)]
struct A(u32);
#[derive(Clone, Copy, Debug, PartialEq)]
struct B(u32);
#[derive(Clone, Copy, Debug, PartialEq)]
struct C(u64);
#[derive(Clone, Copy, Debug, PartialEq)]
struct Tag;

/// One entity's components: A, B, C and whether it has `Tag`.
type Row = (Entity, Option<u32>, Option<u32>, Option<u64>, bool);

/// Every entity's components, sorted by entity.
fn digest(world: &World) -> Vec<Row> {
    let mut out: Vec<_> = world
        .query::<(Entity, Option<&A>, Option<&B>, Option<&C>, Has<Tag>)>()
        .iter()
        .map(|(e, a, b, c, t)| (e, a.map(|x| x.0), b.map(|x| x.0), c.map(|x| x.0), t))
        .collect();
    out.sort_by_key(|x| x.0.to_bits());
    out
}

/// A world with entities of several archetypes, interleaved in id order.
fn mixed(n: u32) -> (World, Vec<Entity>) {
    let mut world = World::new();
    let es = (0..n)
        .map(|i| match i % 3 {
            0 => world.spawn((A(i),)),
            1 => world.spawn((A(i), C(i as u64))),
            _ => world.spawn((C(i as u64), Tag)),
        })
        .collect();
    (world, es)
}

#[test]
fn insert_batch_matches_one_at_a_time_across_archetypes() {
    let (mut batched, es) = mixed(300);
    let (mut single, _) = mixed(300);
    // Runs of the same archetype and interleaved ones.
    let mut order = es.clone();
    order.sort_by_key(|e| (e.index() % 3, e.index()));
    order.extend(es.iter().step_by(7));
    batched
        .insert_batch(order.iter().map(|&e| (e, (B(e.index()),))))
        .unwrap();
    for &e in &order {
        single.insert(e, (B(e.index()),)).unwrap();
    }
    assert_eq!(digest(&batched), digest(&single));
    batched.check_invariants();
}

#[test]
fn remove_batch_matches_one_at_a_time_and_refuses_without_changing_anything() {
    let (mut batched, es) = mixed(300);
    let (mut single, _) = mixed(300);
    let with_c: Vec<Entity> = es.iter().copied().filter(|e| e.index() % 3 != 0).collect();
    batched.remove_batch::<(C,)>(&with_c).unwrap();
    for &e in &with_c {
        single.remove_one::<C>(e).unwrap();
    }
    assert_eq!(digest(&batched), digest(&single));
    batched.check_invariants();

    let before = digest(&batched);
    let dead = batched.spawn((A(0),));
    batched.despawn(dead).unwrap();
    let before_dead = digest(&batched);
    assert_eq!(before, before_dead);
    assert_eq!(
        batched.remove_batch::<(A,)>(&[es[0], dead]),
        Err(EntityError::NoSuchEntity(dead))
    );
    assert!(matches!(
        batched.remove_batch::<(Tag,)>(&[es[2], es[0]]),
        Err(EntityError::MissingComponent { entity, .. }) if entity == es[0]
    ));
    assert_eq!(
        batched.remove_batch::<(A,)>(&[es[0], es[3], es[0]]),
        Err(EntityError::AliasedEntity(es[0]))
    );
    let reserved = batched.reserve_entity();
    assert!(matches!(
        batched.remove_batch::<(A,)>(&[reserved]),
        Err(EntityError::MissingComponent { .. })
    ));
    assert!(!batched.alive(reserved), "a refused batch spawns nothing");
    assert_eq!(
        batched.insert_batch([(es[0], (B(1),)), (dead, (B(2),))]),
        Err(EntityError::NoSuchEntity(dead))
    );
    assert_eq!(digest(&batched), before, "refused batches change nothing");
}

#[test]
fn hooks_observers_and_drops_take_the_one_entity_path_with_its_semantics() {
    let mut world = World::new();
    let added = Arc::new(AtomicUsize::new(0));
    let seen = added.clone();
    world.set_hooks::<B>(ComponentHooks::new().on_add(move |_| {
        seen.fetch_add(1, Ordering::Relaxed);
    }));
    #[derive(Default)]
    struct Removed(usize);
    world.init_resource::<Removed>();
    world
        .observe(|_: Trigger<OnRemove, B>, mut r: ResMut<Removed>| r.0 += 1)
        .unwrap();
    let es = world.spawn_batch((0..50).map(|i| (A(i),)));
    world
        .insert_batch(es.iter().map(|&e| (e, (B(1),))))
        .unwrap();
    assert_eq!(added.load(Ordering::Relaxed), 50);
    world.remove_batch::<(B,)>(&es).unwrap();
    assert_eq!(world.resource::<Removed>().unwrap().0, 50);

    // Values with a Drop are dropped exactly once each.
    let drops = Arc::new(AtomicUsize::new(0));
    struct Counted(Arc<AtomicUsize>);
    impl Drop for Counted {
        fn drop(&mut self) {
            self.0.fetch_add(1, Ordering::Relaxed);
        }
    }
    world
        .insert_batch(es.iter().map(|&e| (e, (Counted(drops.clone()),))))
        .unwrap();
    assert_eq!(drops.load(Ordering::Relaxed), 0);
    world.remove_batch::<(Counted,)>(&es).unwrap();
    assert_eq!(drops.load(Ordering::Relaxed), 50);
    // Replacing inserts drop the old values.
    world
        .insert_batch(es.iter().map(|&e| (e, (Counted(drops.clone()),))))
        .unwrap();
    world
        .insert_batch(es.iter().map(|&e| (e, (Counted(drops.clone()),))))
        .unwrap();
    assert_eq!(drops.load(Ordering::Relaxed), 100);
    world.check_invariants();
}

#[test]
fn batch_inserts_are_added_and_moved_columns_keep_their_stamps() {
    #[derive(Default)]
    struct Seen {
        added: usize,
        changed_a: usize,
    }
    let mut world = World::new();
    world.init_resource::<Seen>();
    let es = world.spawn_batch((0..20).map(|i| (A(i),)));
    let mut schedule = Schedule::new();
    schedule
        .add_system(
            |added: Query<(), Added<B>>, changed: Query<(), Changed<A>>, mut s: ResMut<Seen>| {
                s.added = added.iter().count();
                s.changed_a = changed.iter().count();
            },
        )
        .unwrap();
    schedule.run(&mut world).unwrap();
    schedule.run(&mut world).unwrap();
    assert_eq!(world.resource::<Seen>().unwrap().changed_a, 0);
    world
        .insert_batch(es.iter().map(|&e| (e, (B(0),))))
        .unwrap();
    schedule.run(&mut world).unwrap();
    let seen = world.resource::<Seen>().unwrap();
    assert_eq!(seen.added, 20, "every batch-inserted B is added");
    assert_eq!(
        seen.changed_a, 0,
        "moving a row does not change its other values"
    );
}

#[test]
fn command_forms_apply_as_one_batch() {
    let (mut world, es) = mixed(30);
    let targets = es.clone();
    world
        .run_system_once(move |mut commands: Commands| {
            commands.insert_batch(targets.iter().map(|&e| (e, (B(7),))));
            commands.remove_batch::<(B,)>(targets.iter().copied().take(10));
        })
        .unwrap();
    let with_b = world.query::<&B>().iter().count();
    assert_eq!(with_b, 20);
    world.check_invariants();
}

#[derive(Clone, Debug)]
enum Step {
    Insert(Vec<usize>),
    InsertC(Vec<usize>),
    Remove(Vec<usize>),
    Despawn(usize),
}

fn step() -> impl Strategy<Value = Step> {
    let picks = || proptest::collection::vec(0..40usize, 0..30);
    prop_oneof![
        picks().prop_map(Step::Insert),
        picks().prop_map(Step::InsertC),
        picks().prop_map(Step::Remove),
        (0..40usize).prop_map(Step::Despawn),
    ]
}

proptest! {
    // Under Miri: a few cases, and no failure file (no file system).
    #![proptest_config(ProptestConfig {
        cases: if cfg!(miri) { 2 } else { 128 },
        failure_persistence: if cfg!(miri) {
            None
        } else {
            ProptestConfig::default().failure_persistence
        },
        ..ProptestConfig::default()
    })]

    /// Random batches on random worlds give exactly the world the
    /// one-entity operations give (refused batches leave both unchanged).
    #[test]
    fn batches_equal_one_entity_operations(steps in proptest::collection::vec(step(), 1..12)) {
        let (mut batched, es) = mixed(40);
        let (mut single, _) = mixed(40);
        for step in steps {
            match step {
                Step::Insert(picks) | Step::InsertC(picks) if picks.is_empty() => {}
                Step::Insert(picks) => {
                    let batch: Vec<(Entity, (B,))> =
                        picks.iter().map(|&i| (es[i], (B(i as u32),))).collect();
                    let refused = batched.insert_batch(batch.clone()).is_err();
                    if !refused {
                        for (e, b) in batch {
                            single.insert(e, b).unwrap();
                        }
                    }
                }
                Step::InsertC(picks) => {
                    let batch: Vec<(Entity, (C, Tag))> =
                        picks.iter().map(|&i| (es[i], (C(i as u64 * 3), Tag))).collect();
                    if batched.insert_batch(batch.clone()).is_ok() {
                        for (e, b) in batch {
                            single.insert(e, b).unwrap();
                        }
                    }
                }
                Step::Remove(picks) => {
                    let entities: Vec<Entity> = picks.iter().map(|&i| es[i]).collect();
                    if batched.remove_batch::<(C,)>(&entities).is_ok() {
                        for &e in &entities {
                            single.remove_one::<C>(e).unwrap();
                        }
                    }
                }
                Step::Despawn(i) => {
                    let _ = batched.despawn(es[i]);
                    let _ = single.despawn(es[i]);
                }
            }
            prop_assert_eq!(digest(&batched), digest(&single));
            batched.check_invariants();
        }
    }
}
