//! The batched join (targets read per chunk, `join::Batch`) against the
//! join reading each row's targets as it comes (`join::RowByRow`): random
//! worlds with three relations (the exclusive `ChildOf` and `Owns`, the
//! non-exclusive `Likes`, self-pairs included), entities without pairs,
//! targets despawned and their indices reused, archetypes of many chunks,
//! and queries with wildcards, fixed targets, variables shared between
//! pairs, `!` and optional pairs and change filters. Both must give the
//! same results in the same order, whole and paged, and the same error.

use super::{parse, Plan, QueryError, MAX_BINDINGS_PER_ENTITY};
use doecs::{ChangeWindow, Entity, Relation, Tick, World};
use doecs_registry::ComponentRegistry;
use proptest::prelude::*;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
struct A(u32);
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
struct B(u32);
/// Big enough that an archetype with it spans chunks of a few rows.
struct Big(#[allow(dead_code)] [u8; 1024]);
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Likes;
impl Relation for Likes {}
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Owns;
impl Relation for Owns {
    const EXCLUSIVE: bool = true;
}

fn registry() -> ComponentRegistry {
    let mut r = ComponentRegistry::new();
    r.register::<A>("A");
    r.register::<B>("B");
    r.register_relation::<Likes>("Likes").unwrap();
    r.register_relation::<Owns>("Owns").unwrap();
    r
}

/// What to do to the world, in order.
#[derive(Debug, Clone)]
enum Step {
    /// Spawn an entity with `A`, `B`, `Big` as the flags say.
    Spawn([bool; 3]),
    Parent(prop::sample::Index, prop::sample::Index),
    Like(prop::sample::Index, prop::sample::Index),
    Own(prop::sample::Index, prop::sample::Index),
    Despawn(prop::sample::Index),
    WriteA(prop::sample::Index),
}

fn step() -> impl Strategy<Value = Step> {
    let i = any::<prop::sample::Index>;
    prop_oneof![
        // Mostly small archetypes of many rows, some of many chunks.
        6 => [0.5, 0.3, 0.15].map(proptest::bool::weighted).prop_map(Step::Spawn),
        2 => (i(), i()).prop_map(|(a, b)| Step::Parent(a, b)),
        4 => (i(), i()).prop_map(|(a, b)| Step::Like(a, b)),
        2 => (i(), i()).prop_map(|(a, b)| Step::Own(a, b)),
        1 => i().prop_map(Step::Despawn),
        1 => i().prop_map(Step::WriteA),
    ]
}

/// The world the steps make, each at a tick of its own, and every entity
/// spawned (dead ones too). With `track`, `A` keeps row stamps.
fn build(steps: &[Step], track: bool) -> (World, Vec<Entity>) {
    let mut world = World::new();
    registry().install(&mut world).unwrap();
    if track {
        world.track_changes::<A>();
    }
    let mut all: Vec<Entity> = Vec::new();
    for s in steps {
        let next = world.change_tick().after(1);
        doecs::raw::set_change_tick(&mut world, next);
        if let Step::Spawn([a, b, big]) = *s {
            let e = world.spawn(());
            let n = all.len() as u32;
            if a {
                world.insert_one(e, A(n)).unwrap();
            }
            if b {
                world.insert_one(e, B(n)).unwrap();
            }
            if big {
                world.insert_one(e, Big([0; 1024])).unwrap();
            }
            all.push(e);
            continue;
        }
        if all.is_empty() {
            continue;
        }
        // Refused pairs (cycles, dead entities) leave the world as it was.
        match s {
            Step::Spawn(_) => {}
            Step::Parent(c, p) => drop(world.set_parent(*c.get(&all), *p.get(&all))),
            Step::Like(x, y) => drop(world.add_pair(*x.get(&all), *y.get(&all), Likes)),
            Step::Own(x, y) => drop(world.add_pair(*x.get(&all), *y.get(&all), Owns)),
            Step::Despawn(d) => drop(world.despawn(*d.get(&all))),
            Step::WriteA(x) => {
                if let Ok(a) = world.get_mut::<A>(*x.get(&all)) {
                    a.0 += 1;
                }
            }
        }
    }
    (world, all)
}

type Rows = Vec<(Entity, Vec<Option<Entity>>)>;

/// The query's results both ways, or both errors; with `window`.
fn both(world: &World, plan: &Plan, window: ChangeWindow) -> [Result<Rows, QueryError>; 2] {
    let rows = |page: super::Page| -> Rows {
        page.iter()
            .map(|m| (m.entity, m.bindings().collect()))
            .collect()
    };
    [
        plan.run(world, window, 0, usize::MAX).map(rows),
        plan.run_row_by_row(world, window, 0, usize::MAX).map(rows),
    ]
}

const QUERIES: &[&str] = &[
    // One pair term: the one-term path, whole chunks or row by row.
    "(ChildOf, $p)",
    "(Likes, *)",
    "A, (Likes, $x)",
    "B, (Owns, $o)",
    "?(Owns, $o)",
    "?(Likes, $x), A",
    "?(Likes, *)",
    "!(ChildOf, *)",
    "Changed(A), (ChildOf, $p)",
    "Changed(A), ?(Likes, $x)",
    // More: the general join.
    "(Likes, $x), (Likes, $y)",
    "(Likes, $x), (Likes, $x)",
    "(ChildOf, $p), (Likes, $p)",
    "(ChildOf, $p), !(Likes, $p)",
    "(Likes, $x), (Owns, $x)",
    "(Owns, $o), (ChildOf, $p), ?(Likes, $p)",
    "?(Likes, $x), B",
    "(Likes, $x), ?(Owns, $y), !(ChildOf, $x)",
    "A, (ChildOf, *), !(Owns, *)",
    "!(Likes, *), ?(Owns, $o)",
    "Changed(A), (Likes, $x), ?(ChildOf, $p)",
];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn batched_and_row_by_row_joins_agree(
        steps in proptest::collection::vec(step(), 0..400),
        some in any::<prop::sample::Index>(),
        offset in 0usize..8,
        limit in 1usize..8,
        since in 0u64..400,
        track in any::<bool>(),
    ) {
        let (world, all) = build(&steps, track);
        let registry = registry();
        let window = ChangeWindow { last_run: Tick::new(since), this_run: world.change_tick() };
        let mut queries: Vec<String> = QUERIES.iter().map(|q| q.to_string()).collect();
        // A fixed target, alive: alone, and beside a variable on it.
        if let Some(&e) = (!all.is_empty()).then(|| some.get(&all)).filter(|&&e| world.contains_entity(e)) {
            let id = format!("{}v{}", e.index(), e.generation());
            queries.push(format!("(Likes, {id})"));
            queries.push(format!("!(ChildOf, {id}), B"));
            queries.push(format!("?(Owns, {id})"));
            queries.push(format!("(ChildOf, {id}), (Likes, $x), !(Owns, $x)"));
        }
        for q in &queries {
            let plan = Plan::new(&world, &registry, &parse(q).unwrap()).unwrap();
            let [batched, row_by_row] = both(&world, &plan, window);
            prop_assert_eq!(&batched, &row_by_row, "{}", q);
            let Ok(rows) = batched else { continue };
            // A page is the same slice of the results.
            let page = plan.run(&world, window, offset, limit).unwrap();
            prop_assert_eq!(page.total, rows.len(), "{}: total", q);
            let shown: Rows = page.iter().map(|m| (m.entity, m.bindings().collect())).collect();
            let expected = rows.iter().skip(offset).take(limit).cloned().collect::<Rows>();
            prop_assert_eq!(shown, expected, "{}: page", q);
            // `for_each` sees them too, in order.
            let mut seen = Vec::new();
            let n = plan.for_each(&world, window, |m| seen.push((m.entity, m.bindings().collect()))).unwrap();
            prop_assert_eq!(n, rows.len());
            prop_assert_eq!(&seen, &rows, "{}: for_each", q);
        }
    }
}

/// A join whose bindings multiply past the bound is the same error both
/// ways, at the same term.
#[test]
fn too_many_bindings_is_the_same_error_both_ways() {
    let mut world = World::new();
    registry().install(&mut world).unwrap();
    let fan = world.spawn((A(0),));
    for _ in 0..20 {
        let t = world.spawn(());
        world.add_pair(fan, t, Likes).unwrap();
    }
    let q = parse("A, (Likes, $a), (Likes, $b), (Likes, $c), (Likes, $d)").unwrap();
    let plan = Plan::new(&world, &registry(), &q).unwrap();
    let window = ChangeWindow {
        last_run: Tick::ZERO,
        this_run: world.change_tick(),
    };
    let [batched, row_by_row] = both(&world, &plan, window);
    assert_eq!(batched, row_by_row);
    match batched {
        Err(QueryError::TooManyBindings { max, .. }) => assert_eq!(max, MAX_BINDINGS_PER_ENTITY),
        other => panic!("expected too many bindings, got {other:?}"),
    }
    // Three variables stay under the bound: 20^3 results.
    let q = parse("A, (Likes, $a), (Likes, $b), (Likes, $c)").unwrap();
    let plan = Plan::new(&world, &registry(), &q).unwrap();
    let [batched, row_by_row] = both(&world, &plan, window);
    assert_eq!(batched.as_ref().map(Vec::len), Ok(8000));
    assert_eq!(batched, row_by_row);
    // One term, one entity past the bound: the one-term path refuses it
    // as the join does.
    let more = world.spawn_batch((20..=MAX_BINDINGS_PER_ENTITY).map(|_| ()));
    world
        .add_pairs(more.iter().map(|&t| (fan, t, Likes)).collect())
        .unwrap();
    for q in ["A, (Likes, $a)", "A, ?(Likes, $a)"] {
        let plan = Plan::new(&world, &registry(), &parse(q).unwrap()).unwrap();
        let [batched, row_by_row] = both(&world, &plan, window);
        assert!(
            matches!(batched, Err(QueryError::TooManyBindings { column: 4, .. })),
            "{q}"
        );
        assert_eq!(batched, row_by_row, "{q}");
    }
}
