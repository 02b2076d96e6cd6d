//! `add_pairs`: a batch of new pairs does what adding them one by one in
//! order does (same lists, in the same order; same first refusal, naming
//! the same pair), or refuses and changes nothing, for an exclusive acyclic
//! relation (`ChildOf`), a non-exclusive acyclic one and a plain one, on
//! random batches with dead entities, repeats, second targets and cycles;
//! and a chain 200,000 deep goes in about as fast as a star as wide.

use doecs::{ChildOf, Entity, Relation, RelationError, World};
use proptest::prelude::*;
use std::time::{Duration, Instant};

/// Non-exclusive, acyclic, carrying data.
#[derive(Clone, Debug, PartialEq)]
struct DependsOn(u8);
impl Relation for DependsOn {
    const ACYCLIC: bool = true;
}

/// Non-exclusive, cycles allowed.
#[derive(Clone, Debug, PartialEq)]
struct Likes(u8);
impl Relation for Likes {}

/// Every list of every entity of `es`, in order, for relation `R`.
fn lists<R: Relation + PartialEq + std::fmt::Debug>(w: &World, es: &[Entity]) -> String {
    es.iter()
        .map(|&e| {
            let targets: Vec<_> = w.targets::<R>(e).collect();
            let sources: Vec<_> = w.sources::<R>(e).collect();
            format!("{e:?}: {targets:?} <- {sources:?}\n")
        })
        .collect()
}

/// Builds a world of `n` entities (one dead) with `before` added one by
/// one, then checks `add_pairs(batch)` against adding the batch one by one.
fn agrees<R: Relation + PartialEq + std::fmt::Debug>(
    n: usize,
    before: &[(usize, usize)],
    batch: &[(usize, usize)],
    value: impl Fn(usize) -> R,
) -> Result<(), TestCaseError> {
    // Two identical worlds: one for the batch, one for adding in order.
    let build = || {
        let mut w = World::new();
        let mut es = w.spawn_batch((0..n).map(|_| ()));
        let dead = w.spawn(());
        w.despawn(dead).unwrap();
        es.push(dead);
        for (k, &(s, t)) in before.iter().enumerate() {
            let _ = w.add_pair(es[s % es.len()], es[t % es.len()], value(k));
        }
        (w, es)
    };
    let (mut w, es) = build();
    let (mut one_by_one, _) = build();
    let e = |k: usize| es[k % es.len()];
    // The first refusal adding in order gives, with the rule that a batch
    // holds new pairs only.
    let mut refused = None;
    for (k, &(s, t)) in batch.iter().enumerate() {
        let (s, t) = (e(s), e(t));
        let relation = std::any::type_name::<R>();
        let alive = one_by_one.alive(s) && one_by_one.alive(t);
        let error = if alive && one_by_one.pair::<R>(s, t).is_some() {
            Some(RelationError::DuplicatePair {
                relation,
                subject: s,
                target: t,
            })
        } else if let Some((existing, _)) = alive
            .then(|| one_by_one.targets::<R>(s).next())
            .flatten()
            .filter(|_| R::EXCLUSIVE)
        {
            Some(RelationError::SecondTarget {
                relation,
                subject: s,
                existing,
                target: t,
            })
        } else {
            one_by_one.add_pair(s, t, value(k)).err()
        };
        if let Some(error) = error {
            refused = Some((k, error));
            break;
        }
    }
    let pairs = batch
        .iter()
        .enumerate()
        .map(|(k, &(s, t))| (e(s), e(t), value(k)))
        .collect();
    let before_lists = lists::<R>(&w, &es);
    match (w.add_pairs(pairs), refused) {
        (Ok(()), None) => {
            prop_assert_eq!(lists::<R>(&w, &es), lists::<R>(&one_by_one, &es));
        }
        (Err(got), Some((index, error))) => {
            prop_assert_eq!(got.index, index);
            prop_assert_eq!(got.error, error);
            prop_assert_eq!(
                lists::<R>(&w, &es),
                before_lists,
                "a refusal changes nothing"
            );
        }
        (got, want) => prop_assert!(false, "add_pairs gave {got:?}, one by one {want:?}"),
    }
    w.check_invariants();
    Ok(())
}

fn pairs(n: usize, len: usize) -> impl Strategy<Value = Vec<(usize, usize)>> {
    proptest::collection::vec((0..n + 1, 0..n + 1), 0..len)
}

proptest! {
    // Under Miri: a few cases, and no failure file (no file system).
    #![proptest_config(ProptestConfig {
        cases: if cfg!(miri) { 4 } else { 256 },
        failure_persistence: if cfg!(miri) {
            None
        } else {
            ProptestConfig::default().failure_persistence
        },
        ..ProptestConfig::default()
    })]

    #[test]
    fn a_batch_of_parents_does_what_adding_them_in_order_does(
        before in pairs(8, 6),
        batch in pairs(8, 12),
    ) {
        agrees::<ChildOf>(8, &before, &batch, |_| ChildOf)?;
    }

    #[test]
    fn a_batch_of_an_acyclic_relation_does_what_adding_in_order_does(
        before in pairs(8, 10),
        batch in pairs(8, 16),
    ) {
        agrees::<DependsOn>(8, &before, &batch, |k| DependsOn(k as u8))?;
    }

    #[test]
    fn a_batch_of_a_plain_relation_does_what_adding_in_order_does(
        before in pairs(6, 10),
        batch in pairs(6, 16),
    ) {
        agrees::<Likes>(6, &before, &batch, |k| Likes(k as u8))?;
    }
}

/// Adds `n - 1` parents in one batch, as a chain or a star; returns the
/// time taken.
fn parents_in_one_batch(n: usize, deep: bool) -> Duration {
    let mut w = World::new();
    let es = w.spawn_batch((0..n).map(|_| ()));
    let pairs = (1..n)
        .map(|k| (es[k], if deep { es[k - 1] } else { es[0] }, ChildOf))
        .collect();
    let start = Instant::now();
    w.add_pairs(pairs).unwrap();
    let took = start.elapsed();
    assert_eq!(
        w.parent(es[n - 1]),
        Some(if deep { es[n - 2] } else { es[0] })
    );
    took
}

/// Linear however deep: a chain of 200,000 in one batch within ten times a
/// star's time plus a second (one by one, the chain's cycle checks alone
/// walk 2 * 10^10 steps).
#[test]
#[cfg_attr(miri, ignore = "a timing test at scale")]
fn a_deep_chain_goes_in_about_as_fast_as_a_wide_star() {
    const N: usize = 200_000;
    let wide = parents_in_one_batch(N, false);
    let deep = parents_in_one_batch(N, true);
    eprintln!("{N} parents in one batch: wide {wide:?}, deep {deep:?}");
    assert!(
        deep < wide * 10 + Duration::from_secs(1),
        "{deep:?} against {wide:?}"
    );
}
