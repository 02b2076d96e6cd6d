//! A held query keeps the fetched columns of its archetypes between uses and
//! fetches again only when the archetype layout changed. These tests change
//! the layout in every way between uses of one held query (rows added,
//! removed, moved, columns grown past their capacity and into new chunks,
//! new archetypes, snapshots restored, row stamps added) and check that each
//! use sees exactly the world as it is then. They run under Miri, which
//! checks that no stale pointer is followed.

use doecs::{Changed, Entity, QueryState, Snapshot, World, WorldConfig};
use std::collections::BTreeMap;

#[derive(Clone, Copy, Debug, PartialEq)]
struct Value(u32);
#[derive(Clone, Copy, Debug, PartialEq)]
struct Tag(u8);
#[derive(Clone, Copy, Debug, PartialEq)]
struct Other(u16);

/// Small chunks, so a few dozen rows span several chunks.
fn world() -> World {
    World::with_config(WorldConfig {
        chunk_bytes: 128,
        ..Default::default()
    })
}

/// What a held query sees now, by entity, through `for_each` and through
/// `for_each_chunk`; the two must agree.
fn seen(world: &mut World, query: &mut QueryState<(Entity, &mut Value)>) -> BTreeMap<Entity, u32> {
    let mut by_row = BTreeMap::new();
    query.for_each(world, |(e, v)| {
        v.0 += 1;
        assert!(by_row.insert(e, v.0).is_none(), "{e:?} visited twice");
    });
    let mut by_chunk = BTreeMap::new();
    query.for_each_chunk(world, |(es, vs)| {
        assert_eq!(es.len(), vs.len());
        for (e, v) in es.iter().zip(vs.iter_mut()) {
            v.0 -= 1;
            assert!(
                by_chunk.insert(*e, v.0 + 1).is_none(),
                "{e:?} visited twice"
            );
        }
    });
    assert_eq!(by_row, by_chunk);
    by_row.into_iter().map(|(e, v)| (e, v - 1)).collect()
}

/// The truth, read entity by entity.
fn expected(world: &World, alive: &[Entity]) -> BTreeMap<Entity, u32> {
    alive
        .iter()
        .filter_map(|&e| world.get::<Value>(e).ok().map(|v| (e, v.0)))
        .collect()
}

#[test]
fn a_held_query_follows_every_layout_change() {
    let mut w = world();
    let mut query = QueryState::<(Entity, &mut Value)>::new(&w);
    let mut alive: Vec<Entity> = (0..5).map(|i| w.spawn((Value(i),))).collect();
    assert_eq!(seen(&mut w, &mut query), expected(&w, &alive));

    // Rows added to a matched archetype, past its capacity and into new chunks.
    alive.extend((5..40).map(|i| w.spawn((Value(i),))));
    assert_eq!(seen(&mut w, &mut query), expected(&w, &alive));
    w.check_invariants();

    // A new archetype that matches.
    alive.extend((40..60).map(|i| w.spawn((Value(i), Tag(1)))));
    assert_eq!(seen(&mut w, &mut query), expected(&w, &alive));

    // Rows removed, the last row swapped into their place.
    for e in alive[..10].iter().step_by(3).copied().collect::<Vec<_>>() {
        w.despawn(e).unwrap();
    }
    alive.retain(|&e| w.alive(e));
    assert_eq!(seen(&mut w, &mut query), expected(&w, &alive));

    // Rows moved between archetypes, both ways.
    for &e in &alive[..8] {
        w.insert(e, (Other(7),)).unwrap();
    }
    for &e in &alive[40..45] {
        w.remove::<(Tag,)>(e).unwrap();
    }
    assert_eq!(seen(&mut w, &mut query), expected(&w, &alive));

    // A row moved out of the query altogether, then back.
    let out = alive[20];
    let value = w.remove::<(Value,)>(out).unwrap();
    assert_eq!(seen(&mut w, &mut query), expected(&w, &alive));
    w.insert(out, value).unwrap();
    assert_eq!(seen(&mut w, &mut query), expected(&w, &alive));

    // Row stamps added to the column after the first fetch.
    let mut changed = QueryState::<&Value, Changed<Value>>::new(&w);
    assert_eq!(changed.count(&w), alive.len());
    assert_eq!(seen(&mut w, &mut query), expected(&w, &alive));
    assert_eq!(
        changed.count(&w),
        alive.len(),
        "the held query stamps its writes"
    );

    // Every archetype emptied, then refilled.
    for e in alive.drain(..) {
        w.despawn(e).unwrap();
    }
    assert!(seen(&mut w, &mut query).is_empty());
    alive.extend((0..30).map(|i| w.spawn((Value(100 + i), Tag(2)))));
    assert_eq!(seen(&mut w, &mut query), expected(&w, &alive));
    w.check_invariants();
}

#[test]
fn a_held_query_follows_a_restore() {
    let mut w = world();
    w.snapshot_by_copy::<Value>();
    w.snapshot_by_copy::<Tag>();
    let mut query = QueryState::<(Entity, &mut Value)>::new(&w);
    let mut alive: Vec<Entity> = (0..20).map(|i| w.spawn((Value(i),))).collect();
    let mut snapshot = Snapshot::new();
    w.snapshot_into(&mut snapshot).unwrap();
    let before = seen(&mut w, &mut query);

    alive.extend((20..50).map(|i| w.spawn((Value(i), Tag(0)))));
    for &e in &alive[..5] {
        w.despawn(e).unwrap();
    }
    assert_eq!(
        seen(&mut w, &mut query),
        expected(
            &w,
            &alive
                .iter()
                .copied()
                .filter(|&e| w.alive(e))
                .collect::<Vec<_>>()
        )
    );

    w.restore(&snapshot).unwrap();
    assert_eq!(seen(&mut w, &mut query), before);
}

#[test]
fn one_query_state_on_two_worlds() {
    let (mut a, mut b) = (world(), world());
    let ea: Vec<Entity> = (0..7).map(|i| a.spawn((Value(i),))).collect();
    let eb: Vec<Entity> = (0..9).map(|i| b.spawn((Value(10 * i),))).collect();
    let mut query = QueryState::<(Entity, &mut Value)>::new(&a);
    for _ in 0..2 {
        assert_eq!(seen(&mut a, &mut query), expected(&a, &ea));
        assert_eq!(seen(&mut b, &mut query), expected(&b, &eb));
    }
}
