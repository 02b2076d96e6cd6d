//! The untyped lookups tools use where they know a component or relation
//! only at run time (the inspector's query language): change stamps by
//! component id, table or sparse, and a relation's targets and sources by
//! its `TypeId`. Each must agree with its typed counterpart.

use doecs::{ChildOf, Relation, World};
use std::any::TypeId;

#[derive(Debug, PartialEq)]
struct Health(u32);
#[derive(Debug, PartialEq)]
struct Stunned(u32);
#[derive(Clone)]
struct Likes;
impl Relation for Likes {}
#[derive(Clone)]
struct Unused;
impl Relation for Unused {}

#[test]
fn change_ticks_by_id_agree_with_the_typed_ones() {
    let mut world = World::new();
    world.register_sparse::<Stunned>().unwrap();
    let health = world.component_id::<Health>();
    let stunned = world.component_id::<Stunned>();
    let a = world.spawn((Health(1),));
    let b = world.spawn((Health(2), Stunned(3)));
    doecs::raw::set_change_tick(&mut world, doecs::Tick::new(10));
    world.get_mut::<Health>(b).unwrap().0 += 1;
    world.get_mut::<Stunned>(b).unwrap().0 += 1;
    for e in [a, b] {
        assert_eq!(
            world.change_ticks_by_id(e, health),
            world.change_ticks::<Health>(e)
        );
    }
    assert_eq!(
        world.change_ticks_by_id(b, stunned),
        world.change_ticks::<Stunned>(b)
    );
    let (added, changed) = world.change_ticks_by_id(b, stunned).unwrap();
    assert!(added < changed, "the write came after the spawn");
    assert_eq!(changed, doecs::Tick::new(10));
    // Missing, dead and unknown are errors, never a guess.
    assert!(world.change_ticks_by_id(a, stunned).is_err());
    let unknown = world.component_id::<u8>();
    assert!(world.change_ticks_by_id(a, unknown).is_err());
    world.despawn(a).unwrap();
    assert!(world.change_ticks_by_id(a, health).is_err());
}

#[test]
fn relations_by_type_id_agree_with_the_typed_ones() {
    let mut world = World::new();
    let [alice, bob, carol] = [(), (), ()].map(|()| world.spawn(()));
    world.add_pair(alice, bob, Likes).unwrap();
    world.add_pair(alice, carol, Likes).unwrap();
    world.add_pair(carol, bob, Likes).unwrap();
    world.set_parent(carol, alice).unwrap();
    let relations = world.relations();
    let targets = |relation: TypeId, e| {
        let mut out = Vec::new();
        relations.for_each_target_of(relation, e, &mut |t| out.push(t));
        out
    };
    let sources = |relation: TypeId, e| {
        let mut out = Vec::new();
        relations.for_each_source_of(relation, e, &mut |s| out.push(s));
        out
    };
    let likes = TypeId::of::<Likes>();
    for e in [alice, bob, carol] {
        let typed: Vec<_> = world.targets::<Likes>(e).map(|(t, _)| t).collect();
        assert_eq!(targets(likes, e), typed);
        let typed: Vec<_> = world.sources::<Likes>(e).collect();
        assert_eq!(sources(likes, e), typed);
    }
    assert_eq!(targets(TypeId::of::<ChildOf>(), carol), [alice]);
    assert_eq!(sources(TypeId::of::<ChildOf>(), alice), [carol]);
    assert!(targets(TypeId::of::<Unused>(), alice).is_empty());
    assert!(sources(TypeId::of::<Unused>(), bob).is_empty());
}

#[test]
fn a_relations_pairs_by_type_id_are_every_pair_of_it_and_follow_despawns() {
    let mut world = World::new();
    let [alice, bob, carol, dave] = [(), (), (), ()].map(|()| world.spawn(()));
    world.add_pair(carol, bob, Likes).unwrap();
    world.add_pair(alice, bob, Likes).unwrap();
    world.add_pair(alice, carol, Likes).unwrap();
    world.set_parent(dave, alice).unwrap();
    let likes = TypeId::of::<Likes>();
    // Sources in index order, each source's pairs in the order added.
    assert_eq!(
        world.relations().pairs_of_relation(likes),
        [(alice, bob), (alice, carol), (carol, bob)]
    );
    assert_eq!(
        world.relations().pairs_of_relation(TypeId::of::<ChildOf>()),
        [(dave, alice)]
    );
    assert!(world
        .relations()
        .pairs_of_relation(TypeId::of::<Unused>())
        .is_empty());
    // A despawned entity's pairs go both ways.
    world.despawn(carol).unwrap();
    assert_eq!(world.relations().pairs_of_relation(likes), [(alice, bob)]);
}

/// `targets_of_each` over a run of sources: per source, what
/// `for_each_target_of` gives, in order, for exclusive and non-exclusive
/// relations, unknown ones, dead sources and despawned targets.
#[test]
fn targets_of_each_agrees_with_for_each_target_of() {
    let mut world = World::new();
    let es: Vec<_> = (0..8).map(|_| world.spawn(())).collect();
    for (s, t) in [(0, 1), (0, 2), (0, 3), (2, 1), (3, 3), (5, 0), (5, 7)] {
        world.add_pair(es[s], es[t], Likes).unwrap();
    }
    for (child, parent) in [(1, 0), (2, 0), (4, 3), (6, 5)] {
        world.set_parent(es[child], es[parent]).unwrap();
    }
    // Despawning 7 removes (5, 7); despawning 3 takes its child 4 along.
    world.despawn(es[7]).unwrap();
    world.despawn(es[3]).unwrap();
    let relations = world.relations();
    for relation in [
        TypeId::of::<Likes>(),
        TypeId::of::<ChildOf>(),
        TypeId::of::<Unused>(),
    ] {
        // Buffers that already hold something: only appended to.
        let (mut ends, mut targets) = (vec![99], vec![es[6]]);
        relations.targets_of_each(relation, &es, &mut ends, &mut targets);
        assert_eq!(ends.len(), 1 + es.len());
        let mut from = 1;
        for (k, &e) in es.iter().enumerate() {
            let mut one = Vec::new();
            relations.for_each_target_of(relation, e, &mut |t| one.push(t));
            assert_eq!(targets[from..ends[1 + k]], one[..], "source {k}");
            from = ends[1 + k];
        }
        assert_eq!(from, targets.len());
    }
    let (mut ends, mut targets) = (Vec::new(), Vec::new());
    relations.targets_of_each(TypeId::of::<Likes>(), &es, &mut ends, &mut targets);
    assert_eq!(ends, [2, 2, 3, 3, 3, 4, 4, 4]);
    assert_eq!(targets, [es[1], es[2], es[1], es[0]]);
}
