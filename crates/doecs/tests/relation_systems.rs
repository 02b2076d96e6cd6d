//! Relation terms in function systems run by a schedule: the access of an
//! `Up` term is read from its type, so a system writing what another reads
//! from its parents is ordered against it, and the results follow that
//! order; and a term that reads what its query does not write runs in a
//! parallel loop. These start thread pools, so Miri runs them under Tree
//! Borrows with the other threaded suites (`.ci/run`), while
//! `relations.rs` keeps the aliasing tests under Stacked Borrows.

use doecs::{ChildOf, Entity, Query, Schedule, SystemConfig, Up, World};

#[derive(Debug, PartialEq, Clone, Copy)]
struct Height(u32);

#[derive(Debug, PartialEq, Clone, Copy)]
struct Total(u32);

/// Each child's total: its parent's height (what `grow` writes).
fn stack(mut q: Query<(&mut Total, Up<ChildOf, &Height>)>) {
    q.for_each(|(total, parent)| total.0 = parent.0);
}

/// Every height grows by ten.
fn grow(mut q: Query<&mut Height>) {
    q.for_each(|h| h.0 += 10);
}

/// Each child adds its parent's height to its own, in one system that
/// writes and reads `Height` (the parent's through the up term).
fn climb(mut q: Query<(&mut Height, Up<ChildOf, &Height>)>) {
    q.for_each(|(own, parent)| own.0 += parent.0);
}

/// A ship with three parts, all with a height and a total.
fn world() -> (World, Entity, Vec<Entity>) {
    let mut w = World::new();
    let ship = w.spawn((Height(1), Total(0)));
    let parts: Vec<Entity> = (0..3)
        .map(|i| w.spawn((Height(100 * (i + 1)), Total(0))))
        .collect();
    for &p in &parts {
        w.set_parent(p, ship).unwrap();
    }
    (w, ship, parts)
}

/// `stack` reads `Height` only through its up term and writes none: the
/// schedule still sees it conflict with `grow`, and orders the two as told.
#[test]
fn an_up_term_in_a_system_is_ordered_against_a_writer_of_what_it_reads() {
    for grow_first in [true, false] {
        let (mut w, _ship, parts) = world();
        let mut schedule = Schedule::with_threads(2);
        if grow_first {
            schedule.add_system(grow.before("stack")).unwrap();
            schedule.add_system(stack).unwrap();
        } else {
            schedule.add_system(stack).unwrap();
            schedule.add_system(grow.after("stack")).unwrap();
        }
        let plan = schedule.plan().unwrap().to_string();
        assert!(
            plan.contains("grow -> stack") || plan.contains("stack -> grow"),
            "{plan}"
        );
        assert!(
            !plan.contains("grow, stack") && !plan.contains("stack, grow"),
            "{plan}"
        );
        schedule.run(&mut w).unwrap();
        let want = if grow_first { 11 } else { 1 };
        for &p in &parts {
            assert_eq!(w.get::<Total>(p), Ok(&Total(want)));
        }
        schedule.run(&mut w).unwrap();
        let want = if grow_first { 21 } else { 11 };
        for &p in &parts {
            assert_eq!(w.get::<Total>(p), Ok(&Total(want)));
        }
    }
}

/// Without an explicit order, the conflict through the up term alone
/// orders the systems by insertion; a system writing the very type its up
/// term reads is accepted and runs.
#[test]
fn conflicts_through_an_up_term_are_found_without_being_told() {
    let (mut w, ship, parts) = world();
    let mut schedule = Schedule::with_threads(2);
    schedule.add_system(stack).unwrap();
    schedule.add_system(grow).unwrap();
    schedule.add_system(climb).unwrap();
    let plan = schedule.plan().unwrap().to_string();
    assert!(
        plan.contains("stack -> grow: both access component"),
        "{plan}"
    );
    assert!(plan.contains("Height"), "{plan}");
    schedule.run(&mut w).unwrap();
    // stack: totals 1; grow: ship 11, parts 110, 210, 310; climb: parts
    // add the ship's 11.
    assert_eq!(w.get::<Height>(ship), Ok(&Height(11)));
    let heights: Vec<u32> = parts
        .iter()
        .map(|&p| w.get::<Height>(p).unwrap().0)
        .collect();
    assert_eq!(heights, [121, 221, 321]);
    assert!(parts.iter().all(|&p| w.get::<Total>(p) == Ok(&Total(1))));
}

/// A term that reads what its query does not write runs in parallel: every
/// reference to the parent's `Height` it makes is shared.
#[test]
fn a_parallel_loop_runs_an_up_term_that_reads_what_it_does_not_write() {
    let mut w = World::new();
    let n = if cfg!(miri) { 64 } else { 20_000 };
    let roots: Vec<Entity> = (0..8).map(|i| w.spawn((Height(i),))).collect();
    let kids: Vec<Entity> = w.spawn_batch((0..n).map(|_| (Total(0), Height(1000))));
    // One batch of pairs: kid `i`'s parent is root `i % 8`.
    let family: Vec<Entity> = roots.iter().chain(&kids).copied().collect();
    let parents: Vec<Option<u32>> = (0..8)
        .map(|_| None)
        .chain((0..n).map(|i| Some(i as u32 % 8)))
        .collect();
    w.set_parents_in_batch(&family, &parents).unwrap();
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(2)
        .build()
        .unwrap();
    pool.install(|| {
        w.query_mut::<(&mut Total, Up<ChildOf, &Height>)>()
            .par_for_each(|(total, parent)| total.0 = parent.0 + 1);
    });
    for (i, &k) in kids.iter().enumerate() {
        assert_eq!(w.get::<Total>(k), Ok(&Total(i as u32 % 8 + 1)));
    }
    // In a system, on the schedule's pool.
    fn par_stack(mut q: Query<(&mut Total, Up<ChildOf, &Height>)>) {
        q.par_for_each(|(total, parent)| total.0 = 2 * parent.0);
    }
    let mut schedule = Schedule::with_threads(2);
    schedule.add_system(par_stack).unwrap();
    schedule.run(&mut w).unwrap();
    for (i, &k) in kids.iter().enumerate() {
        assert_eq!(w.get::<Total>(k), Ok(&Total(2 * (i as u32 % 8))));
    }
}
