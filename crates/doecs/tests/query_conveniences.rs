//! The query conveniences: reading through `&self` (`iter`, `get`,
//! `for x in &query`) beside writing through `&mut self` (`iter_mut`,
//! `get_mut`, `for x in &mut query`); `single` and `single_mut` with their
//! typed errors; `contains`, `is_empty` and `count`; and combinations of
//! K distinct entities, read only and mutable, against a naive model.

use doecs::prelude::*;
use doecs::{Changed, QuerySingleError};

#[derive(Debug, Clone, Copy, PartialEq)]
struct Pos(i64);
#[derive(Debug, Clone, Copy, PartialEq)]
struct Vel(i64);
struct Player;

#[test]
fn a_mutable_query_reads_through_shared_borrows_and_writes_through_unique_ones() {
    let mut world = World::new();
    let es: Vec<Entity> = (0..5).map(|i| world.spawn((Pos(i), Vel(1)))).collect();
    let mut q = world.query_mut::<(&mut Pos, &Vel)>();
    // Two read-only iterators and a `get` alive together.
    let a = q.iter();
    let b = q.iter();
    let third = q.get(es[2]).unwrap();
    assert_eq!(a.zip(b).filter(|((p, _), (p2, _))| p.0 == p2.0).count(), 5);
    assert_eq!(third.0 .0, 2);
    let sum: i64 = (&q).into_iter().map(|(p, _)| p.0).sum();
    assert_eq!(sum, 10);
    for (p, v) in &mut q {
        p.0 += v.0;
    }
    q.get_mut(es[0]).unwrap().0 .0 = 100;
    for (p, v) in q.iter_mut() {
        p.0 *= v.0;
    }
    let all: Vec<i64> = (&q).into_iter().map(|(p, _)| p.0).collect();
    assert_eq!(all, [100, 2, 3, 4, 5]);
    assert!(q.contains(es[4]));
    assert_eq!(q.count(), 5);
    assert!(!q.is_empty());
}

#[test]
fn a_read_only_system_query_needs_no_mut() {
    let mut world = World::new();
    world.spawn_batch((0..4).map(|i| (Pos(i),)));
    world.insert_resource(0i64);
    let mut schedule = Schedule::with_threads(1);
    schedule
        .add_system(|q: Query<&Pos>, mut total: ResMut<i64>| {
            for p in &q {
                *total += p.0;
            }
            *total += q.iter().count() as i64;
        })
        .unwrap();
    schedule.run(&mut world).unwrap();
    assert_eq!(*world.resource::<i64>().unwrap(), 6 + 4);
}

#[test]
fn single_and_single_mut_say_why_there_is_not_one() {
    let mut world = World::new();
    let q = world.query_filtered::<&Pos, With<Player>>();
    assert!(matches!(q.single(), Err(QuerySingleError::NoEntities(_))));
    let player = world.spawn((Pos(1), Player));
    world.spawn((Pos(2),));
    {
        let mut q = world.query_filtered_mut::<&mut Pos, With<Player>>();
        q.single_mut().unwrap().0 = 7;
        assert_eq!(q.single().unwrap().0, 7);
    }
    assert_eq!(world.get::<Pos>(player), Ok(&Pos(7)));
    world.spawn((Pos(3), Player));
    let mut q = world.query_filtered_mut::<&mut Pos, With<Player>>();
    let err = q.single_mut().map(|_| ()).unwrap_err();
    assert!(matches!(err, QuerySingleError::MultipleEntities(_)));
    assert!(
        err.to_string().starts_with("more than one entity matches"),
        "{err}"
    );
    // A change filter counts only what passes.
    drop(q);
    let mut changed = world.query_filtered_mut::<Entity, Changed<Pos>>();
    assert_eq!(
        changed.iter_mut().count(),
        3,
        "the first use sees everything"
    );
    let changed = world.query_filtered_mut::<Entity, Changed<Pos>>();
    assert!(matches!(
        changed.single(),
        Err(QuerySingleError::NoEntities(_))
    ));
}

/// n choose k, the naive way: every k-subset of `0..n` in lexicographic
/// order.
fn subsets(n: usize, k: usize) -> Vec<Vec<usize>> {
    if k == 0 {
        return vec![vec![]];
    }
    let mut out = Vec::new();
    for first in 0..n {
        for mut rest in subsets(n, k - 1) {
            if rest.first().is_none_or(|&r| r > first) {
                rest.insert(0, first);
                out.push(rest);
            }
        }
    }
    out
}

#[test]
fn combinations_are_every_k_subset_once_in_iteration_order() {
    for n in [0usize, 1, 2, 3, 7] {
        let mut world = World::new();
        world.spawn_batch((0..n as i64).map(|i| (Pos(i), Vel(i * 10))));
        // Some in another archetype, and some filtered out.
        world.spawn((Pos(99),));
        let q = world.query_filtered::<&Pos, With<Vel>>();
        let order: Vec<i64> = q.iter().map(|p| p.0).collect();
        let pairs: Vec<Vec<i64>> = q
            .iter_combinations::<2>()
            .map(|set| set.iter().map(|p| p.0).collect())
            .collect();
        let want: Vec<Vec<i64>> = subsets(order.len(), 2)
            .into_iter()
            .map(|s| s.into_iter().map(|i| order[i]).collect())
            .collect();
        assert_eq!(pairs, want, "n = {n}");
        assert_eq!(q.iter_combinations::<3>().count(), subsets(n, 3).len());
    }
}

#[test]
fn mutable_combinations_let_each_pair_act_on_both() {
    // Every pair of bodies pulls each other one step closer.
    let mut world = World::new();
    let es: Vec<Entity> = [0, 10, 30].map(|x| world.spawn((Pos(x),))).to_vec();
    let mut q = world.query_mut::<&mut Pos>();
    let mut combos = q.iter_combinations_mut::<2>();
    let mut pairs = 0;
    while let Some([a, b]) = combos.fetch_next() {
        let step = (b.0 - a.0).signum();
        a.0 += step;
        b.0 -= step;
        pairs += 1;
    }
    assert_eq!(pairs, 3);
    let got: Vec<i64> = es.iter().map(|&e| world.get::<Pos>(e).unwrap().0).collect();
    assert_eq!(got, [2, 10, 28]);
}
