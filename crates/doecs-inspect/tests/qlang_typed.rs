//! The query language against the typed queries: random worlds (three
//! table components, a sparse one, `ChildOf` and a user relation, disabled
//! entities, despawns), and for each of a set of queries the same query
//! written both ways must give the same results in the same order
//! (archetype, then row, then target order), bindings included. Change
//! filters are compared over the same tick window: the typed query's
//! first run and the text query with the window ending at the same tick,
//! then random writes, then both again.

use doecs::{
    Added, ChangeWindow, Changed, ChildOf, Disabled, Entity, Has, Pairs, QueryState, Ref, Relation,
    Sparse, Tick, With, Without, World,
};
use doecs_inspect::qlang::{parse, Plan};
use doecs_registry::ComponentRegistry;
use proptest::prelude::*;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
struct A(u32);
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
struct B(u32);
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
struct C(u32);
/// Stored sparse.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
struct S(u32);
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Likes;
impl Relation for Likes {}

fn registry() -> ComponentRegistry {
    let mut r = ComponentRegistry::new();
    r.register::<A>("A");
    r.register::<B>("B");
    r.register::<C>("C");
    r.register::<S>("S").sparse();
    r.register_relation::<Likes>("Likes").unwrap();
    r
}

/// One entity of a random world: which components it has, its parent
/// (an earlier entity), whether it is disabled.
#[derive(Debug, Clone)]
struct Spec {
    a: bool,
    b: bool,
    c: bool,
    s: bool,
    parent: Option<prop::sample::Index>,
    disabled: bool,
}

fn spec() -> impl Strategy<Value = Spec> {
    (
        any::<[bool; 4]>(),
        proptest::option::weighted(0.5, any::<prop::sample::Index>()),
        proptest::bool::weighted(0.1),
    )
        .prop_map(|([a, b, c, s], parent, disabled)| Spec {
            a,
            b,
            c,
            s,
            parent,
            disabled,
        })
}

/// A write after the first look: what to do to which entity.
#[derive(Debug, Clone, Copy)]
enum Write {
    SetA,
    InsertA,
    InsertC,
    RemoveB,
    SetS,
    InsertS,
    Spawn,
}

fn write() -> impl Strategy<Value = Write> {
    prop_oneof![
        Just(Write::SetA),
        Just(Write::InsertA),
        Just(Write::InsertC),
        Just(Write::RemoveB),
        Just(Write::SetS),
        Just(Write::InsertS),
        Just(Write::Spawn),
    ]
}

struct Case {
    world: World,
    entities: Vec<Entity>,
}

fn build(
    specs: &[Spec],
    likes: &[(prop::sample::Index, prop::sample::Index)],
    despawn: &[prop::sample::Index],
) -> Case {
    let mut world = World::new();
    registry().install(&mut world).unwrap();
    let mut entities = Vec::new();
    for (i, s) in specs.iter().enumerate() {
        let e = world.spawn(());
        let n = i as u32;
        if s.a {
            world.insert_one(e, A(n)).unwrap();
        }
        if s.b {
            world.insert_one(e, B(n)).unwrap();
        }
        if s.c {
            world.insert_one(e, C(n)).unwrap();
        }
        if s.s {
            world.insert_one(e, S(n)).unwrap();
        }
        if let (Some(p), false) = (s.parent, entities.is_empty()) {
            world.set_parent(e, *p.get(&entities)).unwrap();
        }
        if s.disabled {
            world.disable(e).unwrap();
        }
        entities.push(e);
    }
    if !entities.is_empty() {
        for (x, y) in likes {
            let _ = world.add_pair(*x.get(&entities), *y.get(&entities), Likes);
        }
        for d in despawn {
            // Despawning a parent despawns its children (ChildOf's cleanup).
            let _ = world.despawn(*d.get(&entities));
        }
    }
    Case { world, entities }
}

/// The text query's results as `(entity, bindings)`, window `window`.
fn text(world: &World, query: &str, window: ChangeWindow) -> Vec<(Entity, Vec<Option<Entity>>)> {
    let q = parse(query).unwrap_or_else(|e| panic!("{query}: {e}"));
    let plan = Plan::new(world, &registry(), &q).unwrap_or_else(|e| panic!("{query}: {e}"));
    let page = plan.run(world, window, 0, usize::MAX).unwrap();
    let mut counted = 0;
    plan.for_each(world, window, |_| counted += 1).unwrap();
    assert_eq!(counted, page.total, "{query}: for_each and run agree");
    assert_eq!(page.total, page.len());
    page.iter()
        .map(|m| (m.entity, m.bindings().collect()))
        .collect()
}

fn everything(world: &World) -> ChangeWindow {
    ChangeWindow {
        last_run: Tick::ZERO,
        this_run: world.change_tick(),
    }
}

/// Results without bindings.
fn plain(es: impl IntoIterator<Item = Entity>) -> Vec<(Entity, Vec<Option<Entity>>)> {
    es.into_iter().map(|e| (e, Vec::new())).collect()
}

fn check_structural(world: &World, some: Entity) {
    let all = everything(world);
    let t = |q: &str| text(world, q, all);

    // Components, a `!` and an optional one: the optional term's presence
    // too.
    let typed: Vec<(Entity, bool)> = world
        .query_filtered::<(Entity, &A, Option<&C>), Without<B>>()
        .iter()
        .map(|(e, _, c)| (e, c.is_some()))
        .collect();
    let q = parse("A, !B, ?C").unwrap();
    let plan = Plan::new(world, &registry(), &q).unwrap();
    let page = plan.run(world, all, 0, usize::MAX).unwrap();
    let c = plan.optional()[0];
    let shown: Vec<(Entity, bool)> = page
        .entities()
        .iter()
        .map(|&e| (e, world.has_id(e, c)))
        .collect();
    assert_eq!(shown, typed, "A, !B, ?C");

    // Sparse terms, required and refused.
    let typed = world
        .query::<(Entity, &A, Sparse<&S>)>()
        .iter()
        .map(|(e, ..)| e)
        .collect::<Vec<_>>();
    assert_eq!(t("A, S"), plain(typed), "A, S");
    let typed = (world.query::<(Entity, &B, Sparse<Has<S>>)>().iter())
        .filter(|(_, _, has)| !has)
        .map(|(e, ..)| e)
        .collect::<Vec<_>>();
    assert_eq!(t("B, !S"), plain(typed), "B, !S");
    let typed = world
        .query::<(Entity, Sparse<&S>)>()
        .iter()
        .map(|(e, _)| e)
        .collect::<Vec<_>>();
    assert_eq!(t("S"), plain(typed), "S");

    // Hidden tags: left out unless named.
    let typed = world
        .query_filtered::<Entity, With<Disabled>>()
        .iter()
        .collect::<Vec<_>>();
    assert_eq!(t("Disabled"), plain(typed), "Disabled");
    let typed = world
        .query::<(Entity, Option<&A>)>()
        .iter()
        .map(|(e, _)| e)
        .collect::<Vec<_>>();
    assert_eq!(t("?A"), plain(typed), "?A: every entity not hidden");

    // Pairs: any target, a variable, a join, a refused join, a fixed
    // target, an optional binding.
    let typed = world
        .query::<(Entity, Pairs<ChildOf>)>()
        .iter()
        .map(|(e, _)| e)
        .collect::<Vec<_>>();
    assert_eq!(t("(ChildOf, *)"), plain(typed), "(ChildOf, *)");
    let typed: Vec<_> = (world.query::<(Entity, &A, Pairs<Likes>)>().iter())
        .flat_map(|(e, _, likes)| likes.map(move |(x, _)| (e, vec![Some(x)])))
        .collect();
    assert_eq!(t("A, (Likes, $x)"), typed, "A, (Likes, $x)");
    let joined = |keep: bool| -> Vec<(Entity, Vec<Option<Entity>>)> {
        (world.query::<(Entity, Pairs<ChildOf>)>().iter())
            .flat_map(|(e, parents)| parents.map(move |(p, _)| (e, p)))
            .filter(|&(e, p)| world.has_pair::<Likes>(e, p) == keep)
            .map(|(e, p)| (e, vec![Some(p)]))
            .collect()
    };
    assert_eq!(t("(ChildOf, $p), (Likes, $p)"), joined(true), "join");
    assert_eq!(t("(ChildOf, $p), !(Likes, $p)"), joined(false), "anti-join");
    let typed = (world.query::<(Entity, &C, Option<Pairs<ChildOf>>)>().iter())
        .filter(|(_, _, p)| p.is_none())
        .map(|(e, ..)| e)
        .collect::<Vec<_>>();
    assert_eq!(t("!(ChildOf, *), C"), plain(typed), "!(ChildOf, *), C");
    let typed: Vec<_> = (world.query::<(Entity, &B, Option<Pairs<Likes>>)>().iter())
        .flat_map(|(e, _, likes)| {
            let targets: Vec<_> = likes.into_iter().flatten().map(|(x, _)| Some(x)).collect();
            if targets.is_empty() {
                vec![(e, vec![None])]
            } else {
                targets.into_iter().map(|x| (e, vec![x])).collect()
            }
        })
        .collect();
    assert_eq!(t("?(Likes, $x), B"), typed, "?(Likes, $x), B");
    if world.contains_entity(some) {
        let id = format!("{}v{}", some.index(), some.generation());
        let typed = (world.query::<(Entity, Pairs<ChildOf>)>().iter())
            .filter_map(|(e, mut p)| p.any(|(x, _)| x == some).then_some(e))
            .collect::<Vec<_>>();
        let typed = plain(typed);
        assert_eq!(t(&format!("(ChildOf, {id})")), typed, "(ChildOf, {id})");
        let mut sources: Vec<Entity> = world
            .children(some)
            .filter(|&c| !world.has_id(c, world.components().id_of::<Disabled>().unwrap()))
            .collect();
        sources.sort();
        let mut ours: Vec<Entity> = typed.iter().map(|(e, _)| *e).collect();
        ours.sort();
        assert_eq!(ours, sources, "the sources of {id}, less disabled ones");
    }
}

fn apply(world: &mut World, writes: &[(Write, prop::sample::Index)], entities: &[Entity]) {
    let live: Vec<Entity> = entities
        .iter()
        .copied()
        .filter(|&e| world.contains_entity(e))
        .collect();
    for &(w, at) in writes {
        if live.is_empty() {
            world.spawn((A(1),));
            continue;
        }
        let e = *at.get(&live);
        match w {
            Write::SetA => {
                if let Ok(a) = world.get_mut::<A>(e) {
                    a.0 += 1;
                }
            }
            Write::InsertA => drop(world.insert_one(e, A(7))),
            Write::InsertC => drop(world.insert_one(e, C(7))),
            Write::RemoveB => drop(world.remove_one::<B>(e)),
            Write::SetS => {
                if let Ok(s) = world.get_mut::<S>(e) {
                    s.0 += 1;
                }
            }
            Write::InsertS => drop(world.insert_one(e, S(7))),
            Write::Spawn => drop(world.spawn((A(9), C(9)))),
        }
    }
}

/// `Changed(A)`, `Added(C)`, `Changed(S)` and `Added(S)` in both forms.
fn changes(world: &World, window: ChangeWindow, typed: &mut Typed) -> Vec<[Vec<Entity>; 4]> {
    let ours = ["Changed(A)", "Added(C)", "Changed(S)", "Added(S)"]
        .map(|q| text(world, q, window).into_iter().map(|(e, _)| e).collect());
    let changed_a: Vec<Entity> = typed.changed_a.iter(world).collect();
    let added_c: Vec<Entity> = typed.added_c.iter(world).collect();
    let (mut changed_s, mut added_s) = (Vec::new(), Vec::new());
    for (e, s) in typed.sparse_s.iter(world) {
        if s.is_changed() {
            changed_s.push(e);
        }
        if s.is_added() {
            added_s.push(e);
        }
    }
    vec![ours, [changed_a, added_c, changed_s, added_s]]
}

struct Typed {
    changed_a: QueryState<Entity, Changed<A>>,
    added_c: QueryState<Entity, Added<C>>,
    sparse_s: QueryState<(Entity, Sparse<Ref<'static, S>>)>,
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn text_and_typed_queries_agree(
        specs in proptest::collection::vec(spec(), 0..48),
        likes in proptest::collection::vec(any::<(prop::sample::Index, prop::sample::Index)>(), 0..40),
        despawn in proptest::collection::vec(any::<prop::sample::Index>(), 0..4),
        some in any::<prop::sample::Index>(),
        writes in proptest::collection::vec((write(), any::<prop::sample::Index>()), 0..24),
        track in any::<bool>(),
    ) {
        let Case { mut world, entities } = build(&specs, &likes, &despawn);
        if track {
            world.track_changes::<A>();
            world.track_changes::<C>();
        }
        let some = if entities.is_empty() { Entity::from_parts(0, 0) } else { *some.get(&entities) };
        check_structural(&world, some);

        // First looks: everything up to the same tick.
        let mut typed = Typed {
            changed_a: QueryState::new(&world),
            added_c: QueryState::new(&world),
            sparse_s: QueryState::new(&world),
        };
        let first = world.change_tick();
        let window = ChangeWindow { last_run: Tick::ZERO, this_run: first };
        // Each typed query reads through the current tick, then moves the
        // clock on: give them all the first window by reading them before
        // anything is written (their windows end at successive ticks, at
        // which nothing was stamped).
        let [ours, theirs]: [[Vec<Entity>; 4]; 2] = changes(&world, window, &mut typed).try_into().unwrap();
        prop_assert_eq!(ours, theirs, "first look");

        apply(&mut world, &writes, &entities);
        check_structural(&world, some);
        // The typed queries read at `first`, `first + 1` and `first + 2`,
        // and nothing was stamped between: their second windows start
        // there, and count the same changes as one starting at `first`.
        let window = ChangeWindow { last_run: first, this_run: world.change_tick() };
        let [ours, theirs]: [[Vec<Entity>; 4]; 2] = changes(&world, window, &mut typed).try_into().unwrap();
        prop_assert_eq!(ours, theirs, "after the writes");
    }
}
