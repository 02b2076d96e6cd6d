//! Change detection: `Changed<T>` and `Added<T>` in every query form, for
//! readers outside a schedule (held `QueryState`s, `world.query_filtered_mut`)
//! and inside one (function and builder systems), against every write path
//! (queries handing out `&mut`, `get_mut`, views, explicit marks, spawns,
//! batches, inserts, commands), across archetype moves, and past 2^32 ticks.

use doecs::prelude::*;
use doecs::{ComponentDescriptor, EntityBuilder, EntityTemplate, Tick, WorldConfig};
use std::alloc::Layout;
use std::sync::Mutex;

#[derive(Clone, Copy, Debug, PartialEq)]
struct A(u32);
#[derive(Clone, Copy, Debug, PartialEq)]
struct B(u64);
#[derive(Clone, Copy, Debug, PartialEq)]
struct C;

fn sorted(mut v: Vec<Entity>) -> Vec<Entity> {
    v.sort();
    v
}

fn set(v: &[Entity]) -> Vec<Entity> {
    sorted(v.to_vec())
}

/// A reader with its own boundary: a held `Changed<A>` and `Added<A>`
/// query, always used together (no write comes between the two uses).
struct Reader {
    changed: QueryState<Entity, Changed<A>>,
    added: QueryState<Entity, Added<A>>,
}

impl Reader {
    fn new(world: &World) -> Self {
        Reader {
            changed: QueryState::new(world),
            added: QueryState::new(world),
        }
    }

    /// `(changed, added)` since this reader's previous read.
    fn read(&mut self, world: &World) -> (Vec<Entity>, Vec<Entity>) {
        (
            sorted(self.changed.iter(world).collect()),
            sorted(self.added.iter(world).collect()),
        )
    }

    fn changed(&mut self, world: &World) -> Vec<Entity> {
        let (changed, added) = self.read(world);
        assert!(added.is_empty(), "unexpected additions {added:?}");
        changed
    }
}

fn small_chunks() -> WorldConfig {
    WorldConfig {
        chunk_bytes: 128,
        ..WorldConfig::default()
    }
}

// ---------------------------------------------------------------------------
// Readers outside a schedule
// ---------------------------------------------------------------------------

#[test]
fn a_world_query_sees_changes_since_its_own_last_use_and_then_nothing() {
    let mut world = World::new();
    let e: Vec<Entity> = (0..4).map(|i| world.spawn((A(i),))).collect();
    fn changed(world: &mut World) -> Vec<Entity> {
        sorted(
            world
                .query_filtered_mut::<Entity, Changed<A>>()
                .iter()
                .collect(),
        )
    }
    fn added(world: &mut World) -> Vec<Entity> {
        sorted(
            world
                .query_filtered_mut::<Entity, Added<A>>()
                .iter()
                .collect(),
        )
    }
    assert_eq!(
        changed(&mut world),
        set(&e),
        "the first use sees everything"
    );
    assert_eq!(
        changed(&mut world),
        vec![],
        "a second use right after sees nothing"
    );
    world.get_mut::<A>(e[2]).unwrap().0 += 1;
    assert_eq!(changed(&mut world), vec![e[2]]);
    assert_eq!(changed(&mut world), vec![]);

    // `Added<A>` is another shape, with its own boundary: its first use sees
    // every entity, not just the ones changed since `Changed<A>` last looked.
    assert_eq!(added(&mut world), set(&e));
    assert_eq!(added(&mut world), vec![]);
    let f = world.spawn((A(9),));
    assert_eq!(added(&mut world), vec![f]);
    assert_eq!(changed(&mut world), vec![f]);
    assert_eq!(added(&mut world), vec![]);

    // Other query shapes keep their own boundaries too.
    let with_value: Vec<Entity> = world
        .query_filtered_mut::<(Entity, &A), Changed<A>>()
        .iter()
        .map(|(e, _)| e)
        .collect();
    assert_eq!(sorted(with_value), sorted([&e[..], &[f]].concat()));

    // `count` is a use of its shape like any other.
    world.get_mut::<A>(e[0]).unwrap().0 += 1;
    assert_eq!(world.query_filtered_mut::<Entity, Changed<A>>().count(), 1);
    assert_eq!(world.query_filtered_mut::<Entity, Changed<A>>().count(), 0);
    assert_eq!(changed(&mut world), vec![]);
}

#[test]
fn held_query_states_each_keep_their_own_boundary() {
    let mut world = World::new();
    let e: Vec<Entity> = (0..3).map(|i| world.spawn((A(i),))).collect();
    let mut r1 = Reader::new(&world);
    let mut r2 = Reader::new(&world);
    assert_eq!(r1.read(&world), (set(&e), set(&e)));
    world.get_mut::<A>(e[0]).unwrap().0 = 7;
    assert_eq!(r1.changed(&world), vec![e[0]]);
    world.get_mut::<A>(e[1]).unwrap().0 = 7;
    assert_eq!(r1.changed(&world), vec![e[1]]);
    // r2 never looked: it sees everything, as added and changed.
    assert_eq!(r2.read(&world), (set(&e), set(&e)));
    world.get_mut::<A>(e[2]).unwrap().0 = 7;
    assert_eq!(r2.changed(&world), vec![e[2]]);
    assert_eq!(r1.changed(&world), vec![e[2]]);
    assert_eq!(r1.read(&world), (vec![], vec![]));
    assert_eq!(r2.read(&world), (vec![], vec![]));
}

#[test]
fn a_fresh_shared_query_sees_everything_every_time() {
    let mut world = World::new();
    let e: Vec<Entity> = (0..3).map(|i| world.spawn((A(i),))).collect();
    for _ in 0..2 {
        let seen: Vec<Entity> = world
            .query_filtered::<Entity, Changed<A>>()
            .iter()
            .collect();
        assert_eq!(sorted(seen), set(&e));
    }
}

#[test]
fn query_state_get_checks_the_window_without_counting_as_a_use() {
    let mut world = World::new();
    let e0 = world.spawn((A(0),));
    let e1 = world.spawn((A(1),));
    let mut changed = QueryState::<&A, Changed<A>>::new(&world);
    assert_eq!(changed.iter(&world).count(), 2);
    world.get_mut::<A>(e1).unwrap().0 = 5;
    assert!(changed.get(&world, e0).is_err(), "e0 did not change");
    assert_eq!(changed.get(&world, e1), Ok(&A(5)));
    assert_eq!(changed.get(&world, e1), Ok(&A(5)), "get is not a use");
    assert_eq!(changed.iter(&world).count(), 1);
    assert!(changed.get(&world, e1).is_err(), "iter was a use");
}

/// Every loop form over one held query sees exactly the same changes: the
/// rows written since its previous use, across archetypes and chunks.
#[test]
fn every_loop_form_sees_exactly_the_changed_rows() {
    let mut world = World::with_config(small_chunks());
    let mut all: Vec<Entity> = (0..200).map(|i| world.spawn((A(i),))).collect();
    all.extend((0..60).map(|i| world.spawn((A(i), B(i as u64)))));
    all.extend((0..40).map(|i| world.spawn((A(i), C))));
    // Spread over archetypes and chunks, with neighbouring rows.
    let picks = [0usize, 1, 2, 17, 64, 65, 199, 200, 230, 259, 260, 299];
    let written: Vec<Entity> = picks.iter().map(|&i| all[i]).collect();

    type Q = (Entity, &'static A);
    let mut each = QueryState::<Q, Changed<A>>::new(&world);
    let mut chunked = QueryState::<Q, Changed<A>>::new(&world);
    let mut par = QueryState::<Q, Changed<A>>::new(&world);
    let mut par_chunked = QueryState::<Q, Changed<A>>::new(&world);
    let mut iter = QueryState::<Q, Changed<A>>::new(&world);
    let mut iter_mut = QueryState::<Q, Changed<A>>::new(&world);
    let mut each_ref = QueryState::<Q, Changed<A>>::new(&world);
    let mut count = QueryState::<Q, Changed<A>>::new(&world);
    let mut added = QueryState::<Q, Added<A>>::new(&world);

    type Forms<'a> = [(&'a str, &'a mut QueryState<Q, Changed<A>>); 8];
    /// Each form's name, the entities it saw, and how many.
    fn look(world: &mut World, forms: Forms<'_>) -> Vec<(String, Option<Vec<Entity>>, usize)> {
        let mut out = Vec::new();
        for (name, state) in forms {
            let seen: Vec<Entity> = match name {
                "for_each" => {
                    let mut v = Vec::new();
                    state.for_each(world, |(e, _)| v.push(e));
                    v
                }
                "for_each_chunk" => {
                    let mut v = Vec::new();
                    state.for_each_chunk(world, |(es, values)| {
                        assert_eq!(es.len(), values.len());
                        v.extend_from_slice(es)
                    });
                    v
                }
                "par_for_each" => {
                    let v = Mutex::new(Vec::new());
                    state.par_for_each(world, |(e, _)| v.lock().unwrap().push(e));
                    v.into_inner().unwrap()
                }
                "par_for_each_chunk" => {
                    let v = Mutex::new(Vec::new());
                    state.par_for_each_chunk(world, |(es, _)| {
                        v.lock().unwrap().extend_from_slice(es)
                    });
                    v.into_inner().unwrap()
                }
                "iter" => state.iter(world).map(|(e, _)| e).collect(),
                "iter_mut" => state.iter_mut(world).map(|(e, _)| e).collect(),
                "for_each_ref" => {
                    let mut v = Vec::new();
                    state.for_each_ref(world, |(e, _)| v.push(e));
                    v
                }
                "count" => {
                    out.push((name.to_owned(), None, state.count(world)));
                    continue;
                }
                _ => unreachable!(),
            };
            let n = seen.len();
            out.push((name.to_owned(), Some(seen), n));
        }
        out
    }
    macro_rules! forms {
        () => {
            [
                ("for_each", &mut each),
                ("for_each_chunk", &mut chunked),
                ("par_for_each", &mut par),
                ("par_for_each_chunk", &mut par_chunked),
                ("iter", &mut iter),
                ("iter_mut", &mut iter_mut),
                ("for_each_ref", &mut each_ref),
                ("count", &mut count),
            ]
        };
    }
    let check = |results: Vec<(String, Option<Vec<Entity>>, usize)>, want: &[Entity]| {
        for (name, seen, n) in results {
            assert_eq!(n, want.len(), "{name}");
            if let Some(seen) = seen {
                assert_eq!(sorted(seen), set(want), "{name}");
            }
        }
    };

    check(look(&mut world, forms!()), &all);
    assert_eq!(added.iter(&world).count(), all.len());
    check(look(&mut world, forms!()), &[]);

    for &e in &written {
        world.get_mut::<A>(e).unwrap().0 += 1;
    }
    check(look(&mut world, forms!()), &written);
    check(look(&mut world, forms!()), &[]);
    assert_eq!(added.iter(&world).count(), 0, "writes are not additions");
    world.check_invariants();
}

/// One borrowed `Query` has one window: all its loop forms agree.
#[test]
fn the_forms_of_one_world_query_share_its_window() {
    let mut world = World::with_config(small_chunks());
    let all: Vec<Entity> = (0..100).map(|i| world.spawn((A(i),))).collect();
    world.query_filtered_mut::<Entity, Changed<A>>().count();
    let written = [all[3], all[4], all[50], all[99]];
    for &e in &written {
        world.get_mut::<A>(e).unwrap().0 += 1;
    }
    let mut q = world.query_filtered_mut::<Entity, Changed<A>>();
    let mut each = Vec::new();
    q.for_each(|e| each.push(e));
    let mut chunks = Vec::new();
    q.for_each_chunk(|es| chunks.extend_from_slice(es));
    let par = Mutex::new(Vec::new());
    q.par_for_each(|e| par.lock().unwrap().push(e));
    let iter: Vec<Entity> = q.iter().collect();
    let batched: Vec<Entity> = q.iter_batched(2).flatten().collect();
    let count = q.count();
    for seen in [each, chunks, par.into_inner().unwrap(), iter, batched] {
        assert_eq!(sorted(seen), set(&written));
    }
    assert_eq!(count, written.len());
    assert!(q.get(written[0]).is_ok());
    assert!(q.get(all[0]).is_err(), "filtered out");
    drop(q);
    assert_eq!(world.query_filtered_mut::<Entity, Changed<A>>().count(), 0);
}

#[test]
fn the_chunk_form_hands_out_exactly_the_runs_of_changed_rows() {
    let mut world = World::with_config(small_chunks());
    let all: Vec<Entity> = (0..64).map(|i| world.spawn((A(i),))).collect();
    let mut state = QueryState::<(Entity, &A), Changed<A>>::new(&world);
    state.for_each_chunk(&mut world, |_| {});
    let written = [all[5], all[6], all[7], all[20], all[40], all[41]];
    for &e in &written {
        world.get_mut::<A>(e).unwrap().0 += 100;
    }
    let mut slices = Vec::new();
    state.for_each_chunk(&mut world, |(es, values)| {
        assert!(
            values.iter().all(|a| a.0 >= 100),
            "only changed rows: {values:?}"
        );
        slices.push(es.to_vec());
    });
    let flat: Vec<Entity> = slices.concat();
    assert_eq!(
        flat.len(),
        written.len(),
        "no unchanged row in a slice: {slices:?}"
    );
    assert_eq!(sorted(flat), set(&written));
    assert!(slices.len() >= 3, "three separate runs: {slices:?}");
}

#[test]
fn change_filters_combine_with_with_without_and_or() {
    let mut world = World::new();
    let a = world.spawn((A(0),));
    let ab = world.spawn((A(0), B(0)));
    let ac = world.spawn((A(0), C));
    let abc = world.spawn((A(0), B(0), C));
    let b = world.spawn((B(0),));
    let everyone = set(&[a, ab, ac, abc, b]);

    let mut changed_with_b = QueryState::<Entity, (Changed<A>, With<B>)>::new(&world);
    let mut changed_without_b = QueryState::<Entity, (Changed<A>, Without<B>)>::new(&world);
    let mut either = QueryState::<Entity, Or<(Changed<A>, Changed<B>)>>::new(&world);
    let mut both = QueryState::<Entity, (Changed<A>, Changed<B>)>::new(&world);
    let mut added_or_changed = QueryState::<Entity, Or<(Added<A>, Changed<B>)>>::new(&world);
    let mut changed_or_c = QueryState::<Entity, Or<(Changed<A>, With<C>)>>::new(&world);
    let mut added_b_without_c = QueryState::<Entity, (Added<B>, Without<C>)>::new(&world);
    macro_rules! read {
        ($q:expr) => {
            sorted($q.iter(&world).collect::<Vec<Entity>>())
        };
    }
    // First uses see every entity that passes the structural part.
    assert_eq!(read!(changed_with_b), set(&[ab, abc]));
    assert_eq!(read!(changed_without_b), set(&[a, ac]));
    assert_eq!(read!(either), everyone);
    assert_eq!(read!(both), set(&[ab, abc]));
    assert_eq!(read!(added_or_changed), everyone);
    assert_eq!(read!(changed_or_c), set(&[a, ab, ac, abc]));
    assert_eq!(read!(added_b_without_c), set(&[ab, b]));

    world.get_mut::<A>(a).unwrap().0 = 1;
    world.get_mut::<A>(ab).unwrap().0 = 1;
    world.get_mut::<B>(b).unwrap().0 = 1;
    world.get_mut::<B>(abc).unwrap().0 = 1;
    assert_eq!(read!(changed_with_b), vec![ab]);
    assert_eq!(read!(changed_without_b), vec![a]);
    assert_eq!(read!(either), set(&[a, ab, b, abc]));
    assert_eq!(read!(both), vec![], "no entity changed both");
    assert_eq!(read!(added_or_changed), set(&[b, abc]), "nothing was added");
    // `With<C>` passes every C entity; `Changed<A>` adds the others.
    assert_eq!(read!(changed_or_c), set(&[a, ab, ac, abc]));
    assert_eq!(read!(added_b_without_c), vec![]);

    world.get_mut::<A>(abc).unwrap().0 = 2;
    world.get_mut::<B>(abc).unwrap().0 = 2;
    world.insert_one(ac, B(3)).unwrap();
    let d = world.spawn((A(4), B(4)));
    assert_eq!(read!(changed_with_b), set(&[abc, d]));
    assert_eq!(read!(changed_without_b), vec![]);
    assert_eq!(read!(either), set(&[abc, ac, d]));
    assert_eq!(read!(both), set(&[abc, d]), "d was spawned: both are new");
    assert_eq!(read!(added_or_changed), set(&[abc, ac, d]));
    assert_eq!(read!(changed_or_c), set(&[ac, abc, d]));
    assert_eq!(read!(added_b_without_c), vec![d]);
    world.check_invariants();
}

// ---------------------------------------------------------------------------
// What marks and what does not
// ---------------------------------------------------------------------------

#[test]
fn reading_never_marks() {
    let mut world = World::with_config(small_chunks());
    let all: Vec<Entity> = (0..40).map(|i| world.spawn((A(i), B(i as u64)))).collect();
    let mut r = Reader::new(&world);
    r.read(&world);
    let before: Vec<(Tick, Tick)> = all
        .iter()
        .map(|&e| world.change_ticks::<A>(e).unwrap())
        .collect();

    let _ = world.get::<A>(all[0]).unwrap();
    let _ = world.entity(all[1]).unwrap().get::<A>();
    let _ = world.view::<A>().get(all[2]).unwrap();
    let _: u32 = world.query::<&A>().iter().map(|a| a.0).sum();
    world.query_mut::<&A>().for_each(|_| {});
    world.query_mut::<(Entity, &A)>().for_each_chunk(|_| {});
    world.query_mut::<&A>().par_for_each(|_| {});
    let _ = world.query_mut::<&A>().get(all[3]).unwrap();
    world.query_mut::<Option<&A>>().for_each(|_| {});
    QueryState::<&A>::new(&world).for_each(&mut world, |_| {});
    // Writing another component of the same entities does not mark A.
    world
        .query_mut::<(&mut B, &A)>()
        .for_each(|(b, a)| b.0 += a.0 as u64);
    world.get_mut::<B>(all[4]).unwrap().0 = 0;

    assert_eq!(r.read(&world), (vec![], vec![]));
    let after: Vec<(Tick, Tick)> = all
        .iter()
        .map(|&e| world.change_ticks::<A>(e).unwrap())
        .collect();
    assert_eq!(before, after);
}

#[test]
fn every_direct_write_path_marks_exactly_its_entity() {
    let mut world = World::new();
    let all: Vec<Entity> = (0..8).map(|i| world.spawn((A(i),))).collect();
    let mut r = Reader::new(&world);
    r.read(&world);

    world.get_mut::<A>(all[0]).unwrap().0 += 1;
    assert_eq!(r.changed(&world), vec![all[0]], "get_mut");

    let [x, y] = world.get_many_mut::<A, 2>([all[1], all[2]]).unwrap();
    std::mem::swap(x, y);
    assert_eq!(r.changed(&world), vec![all[1], all[2]], "get_many_mut");

    world.entity_mut(all[3]).unwrap().get_mut::<A>().unwrap().0 += 1;
    assert_eq!(r.changed(&world), vec![all[3]], "EntityWorldMut::get_mut");

    world.view_mut::<A>().get_mut(all[4]).unwrap().0 += 1;
    assert_eq!(r.changed(&world), vec![all[4]], "ViewMut::get_mut");
    // A view that only reads marks nothing.
    let _ = world.view_mut::<A>().get(all[4]).unwrap();
    assert_eq!(r.changed(&world), vec![]);

    world.mark_changed::<A>(all[5]).unwrap();
    assert_eq!(r.changed(&world), vec![all[5]], "mark_changed");

    let id = world.component_id::<A>();
    world.mark_changed_by_id(all[6], id).unwrap();
    assert_eq!(r.changed(&world), vec![all[6]], "mark_changed_by_id");

    // Refused marks change nothing.
    let b_only = world.spawn((B(0),));
    assert_eq!(r.read(&world), (vec![], vec![]));
    assert!(world.mark_changed::<A>(b_only).is_err());
    assert!(
        world.mark_changed::<C>(all[0]).is_err(),
        "C was never registered"
    );
    world.despawn(all[7]).unwrap();
    assert!(world.mark_changed::<A>(all[7]).is_err());
    assert!(world.mark_changed_by_id(all[7], id).is_err());
    assert!(world.get_mut::<A>(b_only).is_err());
    assert_eq!(r.read(&world), (vec![], vec![]));

    // The stamps say the same: added at the spawn, changed later.
    let (added, changed) = world.change_ticks::<A>(all[0]).unwrap();
    assert!(added < changed, "{added:?} {changed:?}");
    let (added, changed) = world.change_ticks::<A>(all[1]).unwrap();
    assert!(added < changed);
}

#[test]
fn a_mut_query_item_marks_each_row_it_hands_out() {
    let mut world = World::with_config(small_chunks());
    let all: Vec<Entity> = (0..40).map(|i| world.spawn((A(i),))).collect();
    let extra = world.spawn((A(99), C));
    let mut r = Reader::new(&world);
    r.read(&world);

    // A lazy iterator marks the rows it yields, written or not, and no others.
    let handed: Vec<Entity> = world
        .query_mut::<(Entity, &mut A)>()
        .iter_mut()
        .take(3)
        .map(|(e, _)| e)
        .collect();
    assert_eq!(handed.len(), 3);
    assert_eq!(r.changed(&world), sorted(handed));

    // `get_mut` on a mutable query marks that one row.
    {
        let mut q = world.query_mut::<&mut A>();
        let _item = q.get_mut(all[17]).unwrap();
    }
    assert_eq!(r.changed(&world), vec![all[17]]);

    // `iter` and `get` through `&self` are reads: they mark nothing.
    {
        let q = world.query_mut::<&mut A>();
        assert_eq!(q.iter().count(), 41);
        assert_eq!(q.get(all[3]).unwrap().0, 3);
    }
    assert_eq!(r.changed(&world), Vec::<Entity>::new());

    // `for_each` hands out every row it visits: all are marked, even
    // though the closure writes none.
    world
        .query_filtered_mut::<&mut A, Without<C>>()
        .for_each(|_| {});
    assert_eq!(r.changed(&world), set(&all));

    // The chunk form hands out whole chunks: writing one element of each
    // slice marks every row of it.
    let mut first_only = Vec::new();
    world
        .query_mut::<(Entity, &mut A)>()
        .for_each_chunk(|(es, values)| {
            values[0].0 += 1;
            first_only.push(es[0]);
        });
    assert!(first_only.len() < all.len(), "several rows per chunk");
    assert_eq!(r.changed(&world), set(&[&all[..], &[extra]].concat()));

    // The parallel forms mark what they hand out too.
    world
        .query_filtered_mut::<&mut A, With<C>>()
        .par_for_each(|a| a.0 += 1);
    assert_eq!(r.changed(&world), vec![extra]);
    world
        .query_filtered_mut::<&mut A, With<C>>()
        .par_for_each_chunk(|_| {});
    assert_eq!(r.changed(&world), vec![extra]);

    // `Option<&mut A>` marks the rows that have an A (and visits, without
    // marking anything, the ones that do not).
    world.spawn((B(1),));
    r.read(&world);
    let mut visited = 0;
    world
        .query_mut::<Option<&mut A>>()
        .for_each(|_| visited += 1);
    assert_eq!(visited, all.len() + 2);
    assert_eq!(r.changed(&world), set(&[&all[..], &[extra]].concat()));
}

/// A mutable item under a change filter marks only the rows that pass the
/// filter (the ones handed out), in every loop form.
#[test]
fn a_mut_query_under_a_change_filter_marks_only_the_rows_it_passes() {
    let mut world = World::with_config(small_chunks());
    let all: Vec<Entity> = (0..64).map(|i| world.spawn((A(i), B(i as u64)))).collect();
    let mut b_changed = QueryState::<Entity, Changed<B>>::new(&world);
    assert_eq!(b_changed.iter(&world).count(), all.len());
    let written = [all[1], all[2], all[33], all[63]];
    type Pair = (&'static A, &'static mut B);
    // The first use of the shape sees (and so marks) every row.
    world
        .query_filtered_mut::<Pair, Changed<A>>()
        .for_each(|_| {});
    assert_eq!(b_changed.iter(&world).count(), all.len());
    for form in 0..6 {
        for &e in &written {
            world.get_mut::<A>(e).unwrap().0 += 1;
        }
        let mut q = world.query_filtered_mut::<Pair, Changed<A>>();
        match form {
            0 => q.for_each(|(a, b)| b.0 = a.0 as u64),
            1 => q.for_each_chunk(|(a, b)| {
                for (a, b) in a.iter().zip(b) {
                    b.0 = a.0 as u64;
                }
            }),
            2 => q.par_for_each(|(a, b)| b.0 = a.0 as u64),
            3 => q
                .iter_batched(5)
                .flatten()
                .for_each(|(a, b)| b.0 = a.0 as u64),
            4 => q.par_for_each_chunk(|(a, b)| {
                for (a, b) in a.iter().zip(b) {
                    b.0 = a.0 as u64;
                }
            }),
            _ => q.iter_mut().for_each(|(a, b)| b.0 = a.0 as u64),
        }
        drop(q);
        assert_eq!(
            sorted(b_changed.iter(&world).collect()),
            set(&written),
            "form {form}"
        );
    }
}

// ---------------------------------------------------------------------------
// Spawns, inserts and commands
// ---------------------------------------------------------------------------

/// Runs `spawn` and checks that exactly the entities it reports are new to
/// a reader, as added and changed.
fn assert_spawn_path(
    world: &mut World,
    r: &mut Reader,
    name: &str,
    spawn: impl FnOnce(&mut World) -> Vec<Entity>,
) {
    assert_eq!(r.read(world), (vec![], vec![]), "{name}: quiet before");
    let new = spawn(world);
    assert!(!new.is_empty());
    assert_eq!(r.read(world), (set(&new), set(&new)), "{name}");
    assert_eq!(r.read(world), (vec![], vec![]), "{name}: quiet after");
    for &e in &new {
        let (added, changed) = world.change_ticks::<A>(e).unwrap();
        assert_eq!(added, changed, "{name}: getting A counts as changing it");
    }
}

#[test]
fn every_spawn_path_marks_added_and_changed() {
    let mut world = World::with_config(small_chunks());
    // Rows already there must not be reported again.
    world.spawn_batch((0..20).map(|i| (A(i),)));
    world.spawn_batch((0..20).map(|i| (A(i), B(0))));
    let mut r = Reader::new(&world);
    r.read(&world);

    assert_spawn_path(&mut world, &mut r, "spawn", |w| vec![w.spawn((A(1),))]);
    assert_spawn_path(&mut world, &mut r, "spawn with more", |w| {
        vec![w.spawn((A(1), B(1), C))]
    });
    assert_spawn_path(&mut world, &mut r, "try_spawn", |w| {
        vec![w.try_spawn((A(1), B(2))).unwrap()]
    });
    assert_spawn_path(&mut world, &mut r, "spawn_batch", |w| {
        w.spawn_batch((0..30).map(|i| (A(i),)))
    });
    assert_spawn_path(&mut world, &mut r, "try_spawn_batch", |w| {
        w.try_spawn_batch((0..5).map(|i| (B(i), A(i as u32))))
            .unwrap()
    });
    assert_spawn_path(&mut world, &mut r, "spawn builder", |w| {
        let mut builder = EntityBuilder::new();
        builder.add(A(3)).add(C);
        vec![w.spawn(&mut builder)]
    });
    assert_spawn_path(&mut world, &mut r, "spawn template", |w| {
        let mut template = EntityTemplate::new();
        template.add(A(4));
        vec![w.spawn(&template)]
    });
    assert_spawn_path(&mut world, &mut r, "spawn template, repeated", |w| {
        let mut template = EntityTemplate::new();
        template.add(A(4)).add(B(4));
        (0..9).map(|_| w.spawn(&template)).collect::<Vec<_>>()
    });
    assert_spawn_path(&mut world, &mut r, "spawn_columns_raw", |w| {
        let id = w.component_id::<A>();
        let values = [A(5), A(6), A(7)];
        // SAFETY: three valid `A`s (plain `Copy` data, nothing to drop).
        unsafe {
            doecs::raw::spawn_columns(w, &[id], values.len(), &[values.as_ptr().cast()]).unwrap()
        }
    });
    assert_spawn_path(&mut world, &mut r, "command buffer spawn", |w| {
        let mut commands = CommandBuffer::new();
        let e = commands.spawn(w, (A(8),));
        let f = commands.spawn(w, (A(8), B(8)));
        let report = w.apply(&mut commands);
        assert!(report.failed.is_empty());
        vec![e, f]
    });
    // Spawning into a chunk that holds changed rows reports only those.
    let old = world.spawn((A(0),));
    r.read(&world);
    world.get_mut::<A>(old).unwrap().0 = 1;
    let new = world.spawn((A(0),));
    assert_eq!(r.read(&world), (set(&[old, new]), vec![new]));
    // Spawning without A is invisible to an A reader.
    world.spawn((B(0),));
    world.spawn_batch((0..3).map(|_| ()));
    assert_eq!(r.read(&world), (vec![], vec![]));
    world.check_invariants();
}

#[test]
fn inserting_a_new_component_adds_it_and_replacing_one_only_changes_it() {
    let mut world = World::new();
    let holders: Vec<Entity> = (0..10).map(|i| world.spawn((A(i), B(0)))).collect();
    let bare: Vec<Entity> = (0..10).map(|i| world.spawn((B(i),))).collect();
    let mut r = Reader::new(&world);
    let mut c_added = QueryState::<Entity, Added<C>>::new(&world);
    r.read(&world);
    c_added.iter(&world).count();

    // Giving A to entities without it: added (and changed).
    world.insert_one(bare[0], A(1)).unwrap();
    world.insert(bare[1], (A(1), C)).unwrap();
    world.entity_mut(bare[2]).unwrap().insert_one(A(1)).unwrap();
    let mut builder = EntityBuilder::new();
    builder.add(A(1));
    world.insert_built(bare[3], &mut builder).unwrap();
    let id = world.component_id::<A>();
    let value = A(1);
    // SAFETY: a valid `A`, plain data the world may copy.
    unsafe { doecs::raw::insert(&mut world, bare[4], id, std::ptr::from_ref(&value).cast()) }
        .unwrap();
    let old: (B,) = world.exchange(bare[5], (A(1),)).unwrap();
    assert_eq!(old, (B(5),));
    let mut commands = CommandBuffer::new();
    commands.insert_one(bare[6], A(1));
    commands.insert(bare[7], (C, A(1)));
    assert!(world.apply(&mut commands).failed.is_empty());
    let given = &bare[..8];
    assert_eq!(r.read(&world), (set(given), set(given)));
    assert_eq!(
        sorted(c_added.iter(&world).collect()),
        set(&[bare[1], bare[7]])
    );

    // Replacing an A: changed, not added.
    world.insert_one(holders[0], A(2)).unwrap();
    world.insert(holders[1], (A(2), C)).unwrap();
    world
        .entity_mut(holders[2])
        .unwrap()
        .insert_one(A(2))
        .unwrap();
    let mut builder = EntityBuilder::new();
    builder.add(A(2));
    world.insert_built(holders[3], &mut builder).unwrap();
    let value = A(2);
    // SAFETY: as above.
    unsafe {
        doecs::raw::insert(
            &mut world,
            holders[4],
            id,
            std::ptr::from_ref(&value).cast(),
        )
    }
    .unwrap();
    world.insert_one(holders[5], C).unwrap();
    let old: (C,) = world.exchange(holders[5], (A(2),)).unwrap();
    assert_eq!(old, (C,));
    let mut commands = CommandBuffer::new();
    commands.insert_one(holders[6], A(2));
    commands.insert(holders[7], (A(2), B(2)));
    assert!(world.apply(&mut commands).failed.is_empty());
    let replaced = &holders[..8];
    assert_eq!(r.read(&world), (set(replaced), vec![]));
    assert_eq!(
        sorted(c_added.iter(&world).collect()),
        vec![holders[1]],
        "C is new on holders[1] (the exchange took it off holders[5] again)"
    );
    for &e in replaced {
        assert_eq!(world.get::<A>(e), Ok(&A(2)));
    }
    world.check_invariants();
}

/// Runtime components have no typed filter, but the same stamps: a level
/// spawn from bytes adds, byte writes and explicit marks change, a byte
/// insert adds or replaces, and moves keep them.
#[test]
fn runtime_components_are_stamped_on_every_path() {
    let mut world = World::new();
    let id = world
        .register_component(ComponentDescriptor::dynamic("Heat", Layout::new::<u32>()))
        .unwrap();
    world.track_changes_by_id(id);
    let stamps = |w: &World, e: Entity| {
        let location = doecs::raw::location(w, e).unwrap();
        let arch = doecs::raw::archetypes(w).get(location.archetype);
        arch.row_ticks(location.row, arch.column_of(id).unwrap())
    };
    // Direct writes stamp the current tick; move the clock between steps.
    let step = |w: &mut World| {
        let t = w.change_tick().next();
        doecs::raw::set_change_tick(w, t);
        t
    };
    let t1 = step(&mut world);
    let es = doecs::raw::spawn_columns_bytes(&mut world, &[id], 3, &[&[0u8; 12]]).unwrap();
    for &e in &es {
        assert_eq!(stamps(&world, e), (t1, t1));
    }
    let t2 = step(&mut world);
    world.get_bytes_mut(es[1], id).unwrap()[0] = 1;
    assert_eq!(stamps(&world, es[1]), (t1, t2));
    assert_eq!(stamps(&world, es[0]), (t1, t1));
    let t3 = step(&mut world);
    world.insert_bytes(es[2], id, &[9; 4]).unwrap();
    assert_eq!(stamps(&world, es[2]), (t1, t3), "a replacement");
    let t4 = step(&mut world);
    let f = world.spawn((A(0),));
    world.insert_bytes(f, id, &[1; 4]).unwrap();
    assert_eq!(stamps(&world, f), (t4, t4), "an addition");
    let t5 = step(&mut world);
    world.mark_changed_by_id(es[0], id).unwrap();
    assert_eq!(stamps(&world, es[0]), (t1, t5));
    step(&mut world);
    world.insert_one(es[0], A(1)).unwrap();
    world.despawn(es[1]).unwrap();
    world.remove_one::<A>(f).unwrap();
    assert_eq!(stamps(&world, es[0]), (t1, t5), "moved by an insert");
    assert_eq!(stamps(&world, es[2]), (t1, t3), "moved by a despawn");
    assert_eq!(stamps(&world, f), (t4, t4), "moved by a removal");
    world.check_invariants();
}

// ---------------------------------------------------------------------------
// Moves between archetypes keep stamps
// ---------------------------------------------------------------------------

#[test]
fn rows_moved_between_archetypes_keep_their_stamps() {
    let mut world = World::with_config(small_chunks());
    let all: Vec<Entity> = (0..50).map(|i| world.spawn((A(i),))).collect();
    let mut r = Reader::new(&world);
    let mut b_added = QueryState::<Entity, Added<B>>::new(&world);
    r.read(&world);
    b_added.iter(&world).count();

    // Insert another component: one changed row and one unchanged row move.
    world.get_mut::<A>(all[3]).unwrap().0 = 100;
    world.insert_one(all[3], B(0)).unwrap();
    world.insert_one(all[5], B(0)).unwrap();
    assert_eq!(r.read(&world), (vec![all[3]], vec![]));
    assert_eq!(
        sorted(b_added.iter(&world).collect()),
        set(&[all[3], all[5]])
    );

    // Remove another component: the rows move back.
    world.get_mut::<A>(all[5]).unwrap().0 = 100;
    world.remove_one::<B>(all[3]).unwrap();
    world.remove_one::<B>(all[5]).unwrap();
    assert_eq!(r.read(&world), (vec![all[5]], vec![]));

    // Despawn: the last row fills the hole, keeping its stamps.
    fn last_row(world: &mut World) -> Entity {
        let last = world.query_mut::<Entity>().iter().last();
        last.expect("entities")
    }
    let last = last_row(&mut world);
    world.despawn(all[0]).unwrap();
    assert_eq!(
        r.read(&world),
        (vec![], vec![]),
        "the moved row did not change"
    );
    assert_eq!(doecs::raw::location(&world, last).unwrap().row.index(), 0);
    // A changed row moves into the first chunk, among unchanged rows: only
    // it is reported.
    let tail = last_row(&mut world);
    world.get_mut::<A>(tail).unwrap().0 = 100;
    world.despawn(all[2]).unwrap();
    assert_eq!(doecs::raw::location(&world, tail).unwrap().row.index(), 2);
    assert_eq!(
        r.read(&world),
        (vec![tail], vec![]),
        "the changed row still is"
    );

    // Despawning a changed entity removes it from the report.
    world.get_mut::<A>(all[10]).unwrap().0 = 100;
    world.get_mut::<A>(all[11]).unwrap().0 = 100;
    world.despawn(all[10]).unwrap();
    assert_eq!(r.read(&world), (vec![all[11]], vec![]));

    // Batches of despawns, `take`, and an insert that moves a changed row
    // that was just added.
    world.get_mut::<A>(all[20]).unwrap().0 = 100;
    assert_eq!(world.despawn_batch(&[all[12], all[13], all[14]]), 3);
    let (_b,): (A,) = world.take(all[15]).unwrap();
    let fresh = world.spawn((A(7),));
    world.insert_one(fresh, C).unwrap();
    assert_eq!(r.read(&world), (set(&[all[20], fresh]), vec![fresh]));

    // An exchange of other components keeps A's stamps.
    world.insert_one(all[30], B(0)).unwrap();
    r.read(&world);
    let _: (B,) = world.exchange(all[30], (C,)).unwrap();
    assert_eq!(r.read(&world), (vec![], vec![]));

    // Freeing unused chunk memory moves nothing that changed.
    world.free_unused_chunk_memory();
    assert_eq!(r.read(&world), (vec![], vec![]));
    world.get_mut::<A>(all[40]).unwrap().0 = 1;
    world.free_unused_chunk_memory();
    assert_eq!(r.read(&world), (vec![all[40]], vec![]));
    world.check_invariants();
}

/// Row stamps start when a change filter first needs them; rows moved
/// before that carry their chunk's ticks, and a reader made afterwards
/// still sees exactly what changed after its first look.
#[test]
fn a_reader_made_late_is_exact_from_its_second_look() {
    let mut world = World::with_config(small_chunks());
    let all: Vec<Entity> = (0..60).map(|i| world.spawn((A(i),))).collect();
    // No filter watches A yet: these writes and moves only stamp chunks.
    world.get_mut::<A>(all[59]).unwrap().0 = 1;
    world.despawn(all[0]).unwrap();
    world.insert_one(all[7], B(0)).unwrap();
    world.get_mut::<A>(all[8]).unwrap().0 = 1;

    let mut r = Reader::new(&world);
    let alive: Vec<Entity> = all[1..].to_vec();
    assert_eq!(r.read(&world), (set(&alive), set(&alive)));
    // Moves before any write through `&mut` (the request is still pending).
    world.despawn(all[1]).unwrap();
    world.remove_one::<B>(all[7]).unwrap();
    assert_eq!(r.read(&world), (vec![], vec![]));
    world.get_mut::<A>(all[30]).unwrap().0 = 1;
    assert_eq!(r.read(&world), (vec![all[30]], vec![]));
    world.despawn(all[2]).unwrap();
    world.get_mut::<A>(all[59]).unwrap().0 = 2;
    world.despawn(all[3]).unwrap();
    assert_eq!(r.read(&world), (vec![all[59]], vec![]));
    world.check_invariants();
}

// ---------------------------------------------------------------------------
// Systems
// ---------------------------------------------------------------------------

/// Which entities the writer systems write this run.
#[derive(Default)]
struct Writes {
    early: Vec<Entity>,
    late: Vec<Entity>,
}

/// What the watching system saw, one `(changed, added)` per run.
#[derive(Default)]
struct Seen(Vec<(Vec<Entity>, Vec<Entity>)>);

/// Writes the A of each entity in `Writes::early` that has one.
fn early(mut q: Query<&mut A>, w: Res<Writes>) {
    for &e in &w.early {
        if let Ok(a) = q.get_mut(e) {
            a.0 += 1;
        }
    }
}

/// Writes the A of each entity in `Writes::late` that has one.
fn late(mut q: Query<&mut A>, w: Res<Writes>) {
    for &e in &w.late {
        if let Ok(a) = q.get_mut(e) {
            a.0 += 1;
        }
    }
}

fn watch(
    changed: Query<Entity, Changed<A>>,
    added: Query<Entity, Added<A>>,
    mut seen: ResMut<Seen>,
) {
    let c = sorted(changed.iter().collect());
    let a = sorted(added.iter().collect());
    seen.0.push((c, a));
}

fn last_seen(world: &World) -> (Vec<Entity>, Vec<Entity>) {
    world.resource::<Seen>().unwrap().0.last().unwrap().clone()
}

fn set_writes(world: &mut World, early: &[Entity], late: &[Entity]) {
    let w = world.resource_mut::<Writes>().unwrap();
    w.early = early.to_vec();
    w.late = late.to_vec();
}

#[test]
fn a_system_sees_exactly_the_changes_since_its_previous_run() {
    for threads in [1, 2, 4] {
        let mut world = World::new();
        world.insert_resource(Writes::default());
        world.insert_resource(Seen::default());
        let e: Vec<Entity> = (0..6).map(|i| world.spawn((A(i),))).collect();
        let mut schedule = Schedule::with_threads(threads);
        schedule
            .add_system(watch.after("early").before("late"))
            .unwrap()
            .add_system(late)
            .unwrap()
            .add_system(early)
            .unwrap();

        // First run: everything, as added and changed; `early` ran first,
        // `late` writes after the watcher looked.
        set_writes(&mut world, &[e[0]], &[e[1]]);
        schedule.run(&mut world).unwrap();
        assert_eq!(last_seen(&world), (set(&e), set(&e)), "{threads} threads");

        // Second run: `late`'s write of the previous run, a direct write
        // between runs, and `early`'s write of this run.
        world.get_mut::<A>(e[2]).unwrap().0 += 1;
        set_writes(&mut world, &[e[3]], &[]);
        schedule.run(&mut world).unwrap();
        assert_eq!(
            last_seen(&world),
            (set(&[e[1], e[2], e[3]]), vec![]),
            "{threads} threads"
        );

        // Nothing happened.
        set_writes(&mut world, &[], &[]);
        schedule.run(&mut world).unwrap();
        assert_eq!(last_seen(&world), (vec![], vec![]), "{threads} threads");

        // Direct spawns, replacements, removals and marks between runs.
        let f = world.spawn((A(9),));
        world.insert_one(e[0], A(0)).unwrap();
        world.insert_one(e[4], B(0)).unwrap();
        world.mark_changed::<A>(e[5]).unwrap();
        world.despawn(e[1]).unwrap();
        schedule.run(&mut world).unwrap();
        assert_eq!(
            last_seen(&world),
            (set(&[e[0], e[5], f]), vec![f]),
            "{threads} threads"
        );

        // A world reader between runs does not take changes from the system.
        world.get_mut::<A>(e[3]).unwrap().0 += 1;
        assert_eq!(
            world.query_filtered_mut::<Entity, Changed<A>>().count(),
            world.len(),
            "its first use"
        );
        assert_eq!(world.query_filtered_mut::<Entity, Changed<A>>().count(), 0);
        set_writes(&mut world, &[e[2]], &[e[2]]);
        schedule.run(&mut world).unwrap();
        assert_eq!(last_seen(&world), (set(&[e[2], e[3]]), vec![]));
        // The world reader sees `early` and `late`: both wrote e2.
        assert_eq!(
            sorted(
                world
                    .query_filtered_mut::<Entity, Changed<A>>()
                    .iter()
                    .collect()
            ),
            vec![e[2]]
        );
        set_writes(&mut world, &[], &[]);
        schedule.run(&mut world).unwrap();
        assert_eq!(last_seen(&world), (vec![e[2]], vec![]), "late's write");
        world.check_invariants();
    }
}

#[test]
fn a_system_does_not_see_its_own_writes_but_others_do() {
    fn bump(mut q: Query<&mut A, Changed<A>>) {
        q.for_each(|a| a.0 += 1);
    }
    for threads in [1, 2] {
        let mut world = World::new();
        world.insert_resource(Seen::default());
        let e: Vec<Entity> = (0..4).map(|i| world.spawn((A(i * 10),))).collect();
        let mut schedule = Schedule::with_threads(threads);
        schedule
            .add_system(bump)
            .unwrap()
            .add_system(watch.after("bump"))
            .unwrap();
        schedule.run(&mut world).unwrap();
        let values = |w: &World| {
            e.iter()
                .map(|&x| w.get::<A>(x).unwrap().0)
                .collect::<Vec<_>>()
        };
        assert_eq!(values(&world), vec![1, 11, 21, 31], "first run: all");
        schedule.run(&mut world).unwrap();
        assert_eq!(
            values(&world),
            vec![1, 11, 21, 31],
            "its own writes are old"
        );
        // The watcher saw bump's writes in the first run (all), and none new
        // in the second.
        assert_eq!(last_seen(&world), (vec![], vec![]));
        world.get_mut::<A>(e[2]).unwrap().0 = 0;
        schedule.run(&mut world).unwrap();
        assert_eq!(values(&world), vec![1, 11, 1, 31]);
        assert_eq!(last_seen(&world), (vec![e[2]], vec![]));
        schedule.run(&mut world).unwrap();
        assert_eq!(values(&world), vec![1, 11, 1, 31]);
    }
}

#[derive(Default)]
struct FilterLog(Vec<[Vec<Entity>; 5]>);

#[allow(clippy::type_complexity)]
fn filtered_watch(
    with_b: Query<Entity, (Changed<A>, With<B>)>,
    without_b: Query<Entity, (Changed<A>, Without<B>)>,
    either: Query<Entity, Or<(Changed<A>, Changed<B>)>>,
    added_or_c: Query<Entity, Or<(Added<A>, With<C>)>>,
    mut par: Query<(Entity, &A), Changed<A>>,
    mut log: ResMut<FilterLog>,
) {
    let collected = Mutex::new(Vec::new());
    par.par_for_each(|(e, _)| collected.lock().unwrap().push(e));
    let mut chunked = Vec::new();
    par.for_each_chunk(|(es, _)| chunked.extend_from_slice(es));
    let par = sorted(collected.into_inner().unwrap());
    assert_eq!(sorted(chunked), par, "the chunk form agrees");
    log.0.push([
        sorted(with_b.iter().collect()),
        sorted(without_b.iter().collect()),
        sorted(either.iter().collect()),
        sorted(added_or_c.iter().collect()),
        par,
    ]);
}

fn b_writer(mut q: Query<(Entity, &mut B)>, w: Res<Writes>) {
    for &e in &w.early {
        if let Ok((_, b)) = q.get_mut(e) {
            b.0 += 1;
        }
    }
}

/// A system skipped because the one it runs after panicked keeps its
/// boundary: its next run sees the changes of both runs.
#[test]
fn a_skipped_system_sees_the_changes_it_missed() {
    #[derive(Default)]
    struct Fail(bool);
    fn flaky(mut q: Query<&mut A>, w: Res<Writes>, fail: Res<Fail>) {
        for &e in &w.early {
            q.get_mut(e).unwrap().0 += 1;
        }
        assert!(!fail.0, "flaky failed on purpose");
    }
    for threads in [1, 2] {
        let mut world = World::new();
        world.insert_resource(Writes::default());
        world.insert_resource(Seen::default());
        world.insert_resource(Fail(false));
        let e: Vec<Entity> = (0..4).map(|i| world.spawn((A(i),))).collect();
        let mut schedule = Schedule::with_threads(threads);
        schedule
            .add_system(flaky)
            .unwrap()
            .add_system(watch.after("flaky"))
            .unwrap();
        schedule.run(&mut world).unwrap();
        assert_eq!(world.resource::<Seen>().unwrap().0.len(), 1);

        world.get_mut::<A>(e[0]).unwrap().0 += 1;
        set_writes(&mut world, &[e[1]], &[]);
        world.resource_mut::<Fail>().unwrap().0 = true;
        assert!(schedule.run(&mut world).is_err());
        assert_eq!(
            world.resource::<Seen>().unwrap().0.len(),
            1,
            "watch was skipped"
        );

        world.get_mut::<A>(e[2]).unwrap().0 += 1;
        set_writes(&mut world, &[], &[]);
        world.resource_mut::<Fail>().unwrap().0 = false;
        schedule.run(&mut world).unwrap();
        assert_eq!(
            last_seen(&world),
            (set(&[e[0], e[1], e[2]]), vec![]),
            "{threads} threads"
        );
    }
}

#[test]
fn system_parameters_combine_change_filters_with_other_filters() {
    for threads in [1, 4] {
        let mut world = World::with_config(small_chunks());
        world.insert_resource(Writes::default());
        world.insert_resource(FilterLog::default());
        let a: Vec<Entity> = (0..100).map(|i| world.spawn((A(i),))).collect();
        let ab: Vec<Entity> = (0..100).map(|i| world.spawn((A(i), B(0)))).collect();
        let ac: Vec<Entity> = (0..50).map(|i| world.spawn((A(i), C))).collect();
        let b: Vec<Entity> = (0..20).map(|i| world.spawn((B(i),))).collect();
        let mut schedule = Schedule::with_threads(threads);
        schedule
            .add_system(early)
            .unwrap()
            .add_system(b_writer)
            .unwrap()
            .add_system(filtered_watch.after("early").after("b_writer"))
            .unwrap();
        schedule.run(&mut world).unwrap();
        let log = |w: &World| w.resource::<FilterLog>().unwrap().0.last().unwrap().clone();
        let first = log(&world);
        let all_a = sorted([&a[..], &ab[..], &ac[..]].concat());
        assert_eq!(first[0], set(&ab));
        assert_eq!(first[1], sorted([&a[..], &ac[..]].concat()));
        assert_eq!(first[2], sorted([&all_a[..], &b[..]].concat()));
        assert_eq!(first[3], all_a);
        assert_eq!(first[4], all_a);

        // Writes of A (early) and B (b_writer) to a mix of entities.
        let written = vec![a[0], a[99], ab[5], ab[50], ac[3], b[7]];
        set_writes(&mut world, &written, &[]);
        schedule.run(&mut world).unwrap();
        let second = log(&world);
        assert_eq!(second[0], set(&[ab[5], ab[50]]));
        assert_eq!(second[1], set(&[a[0], a[99], ac[3]]));
        assert_eq!(second[2], set(&written), "B changed on ab and b too");
        assert_eq!(second[3], set(&ac), "all C entities, nothing added");
        assert_eq!(second[4], set(&[a[0], a[99], ab[5], ab[50], ac[3]]));

        set_writes(&mut world, &[], &[]);
        let fresh = world.spawn((A(0), B(0)));
        schedule.run(&mut world).unwrap();
        let third = log(&world);
        assert_eq!(third[0], vec![fresh]);
        assert_eq!(third[1], vec![]);
        assert_eq!(third[2], vec![fresh]);
        assert_eq!(third[3], sorted([&ac[..], &[fresh]].concat()));
        assert_eq!(third[4], vec![fresh]);
    }
}

#[test]
fn par_for_each_in_a_system_marks_exactly_its_rows() {
    fn heat(mut q: Query<&mut A, With<C>>) {
        q.par_for_each(|a| a.0 += 1);
    }
    for threads in [1, 2, 4] {
        let mut world = World::with_config(small_chunks());
        world.insert_resource(Seen::default());
        let plain: Vec<Entity> = (0..300).map(|i| world.spawn((A(i),))).collect();
        let hot: Vec<Entity> = (0..300).map(|i| world.spawn((A(i), C))).collect();
        let mut schedule = Schedule::with_threads(threads);
        schedule
            .add_system(watch)
            .unwrap()
            .add_system(heat.after("watch"))
            .unwrap();
        schedule.run(&mut world).unwrap();
        assert_eq!(
            last_seen(&world).0.len(),
            plain.len() + hot.len(),
            "first run"
        );
        schedule.run(&mut world).unwrap();
        assert_eq!(last_seen(&world), (set(&hot), vec![]), "{threads} threads");
    }
}

#[test]
fn commands_from_a_system_are_added_once_applied() {
    #[derive(Default)]
    struct Spawned(Vec<Entity>);
    fn spawner(mut commands: Commands, mut spawned: ResMut<Spawned>, w: Res<Writes>) {
        spawned.0.clear();
        spawned.0.push(commands.spawn((A(1),)));
        for &e in &w.early {
            // Replacing A (the entities have it): a change, not an addition.
            commands.insert_one(e, A(2));
        }
        for &e in &w.late {
            // Giving A to entities without it: an addition.
            commands.insert_one(e, A(3));
        }
    }
    for sync in [false, true] {
        let mut world = World::new();
        world.insert_resource(Writes::default());
        world.insert_resource(Seen::default());
        world.insert_resource(Spawned::default());
        let holders: Vec<Entity> = (0..3).map(|i| world.spawn((A(i),))).collect();
        let bare: Vec<Entity> = (0..3).map(|i| world.spawn((B(i),))).collect();
        let mut schedule = Schedule::with_threads(2);
        schedule.add_system(spawner).unwrap();
        if sync {
            schedule.add_sync_point();
        }
        schedule.add_system(watch).unwrap();
        schedule.run(&mut world).unwrap();
        let spawned_first = world.resource::<Spawned>().unwrap().0.clone();
        let (changed, added) = last_seen(&world);
        if sync {
            let all = sorted([&holders[..], &spawned_first[..]].concat());
            assert_eq!((changed, added), (all.clone(), all));
        } else {
            assert_eq!((changed, added), (set(&holders), set(&holders)));
        }

        set_writes(&mut world, &[holders[0]], &[bare[0], bare[1]]);
        schedule.run(&mut world).unwrap();
        let spawned = world.resource::<Spawned>().unwrap().0.clone();
        let (changed, added) = last_seen(&world);
        if sync {
            // This run's commands, applied at the sync point.
            let new = sorted([&spawned[..], &bare[..2]].concat());
            assert_eq!(added, new);
            assert_eq!(changed, sorted([&new[..], &[holders[0]]].concat()));
        } else {
            // The previous run's commands.
            assert_eq!((changed, added), (set(&spawned_first), set(&spawned_first)));
            set_writes(&mut world, &[], &[]);
            schedule.run(&mut world).unwrap();
            let (changed, added) = last_seen(&world);
            let new = sorted([&spawned[..], &bare[..2]].concat());
            assert_eq!(added, new);
            assert_eq!(changed, sorted([&new[..], &[holders[0]]].concat()));
        }
        world.check_invariants();
    }
}

#[test]
fn exclusive_and_builder_systems_take_part_in_the_order() {
    #[derive(Default)]
    struct BuilderSeen(Vec<Vec<Entity>>);
    fn poke(world: &mut World) {
        let target = world.resource::<Writes>().unwrap().early.clone();
        for e in target {
            world.get_mut::<A>(e).unwrap().0 += 1;
        }
    }
    let mut world = World::new();
    world.insert_resource(Writes::default());
    world.insert_resource(Seen::default());
    world.insert_resource(BuilderSeen::default());
    let e: Vec<Entity> = (0..4).map(|i| world.spawn((A(i),))).collect();
    let mut schedule = Schedule::with_threads(2);
    schedule
        .add_system(watch)
        .unwrap()
        .add_system(poke)
        .unwrap()
        .add_system(
            system("builder_watch")
                .query_filtered::<Entity, Changed<A>>()
                .writes_resource::<BuilderSeen>()
                .run(|ctx| {
                    let seen: Vec<Entity> =
                        ctx.query_filtered::<Entity, Changed<A>>().iter().collect();
                    ctx.resource_mut::<BuilderSeen>().0.push(sorted(seen));
                }),
        )
        .unwrap();
    schedule.run(&mut world).unwrap();
    let builder_last = |w: &World| {
        w.resource::<BuilderSeen>()
            .unwrap()
            .0
            .last()
            .unwrap()
            .clone()
    };
    assert_eq!(last_seen(&world).0, set(&e));
    assert_eq!(builder_last(&world), set(&e));
    // `watch` runs before the exclusive `poke`, the builder system after it.
    set_writes(&mut world, &[e[1]], &[]);
    schedule.run(&mut world).unwrap();
    assert_eq!(last_seen(&world).0, vec![]);
    assert_eq!(builder_last(&world), vec![e[1]]);
    set_writes(&mut world, &[], &[]);
    schedule.run(&mut world).unwrap();
    assert_eq!(last_seen(&world).0, vec![e[1]]);
    assert_eq!(builder_last(&world), vec![]);
}

#[test]
fn a_schedule_keeps_a_boundary_per_world() {
    let mut one = World::new();
    let mut two = World::new();
    for w in [&mut one, &mut two] {
        w.insert_resource(Seen::default());
    }
    let e1: Vec<Entity> = (0..3).map(|i| one.spawn((A(i),))).collect();
    let e2: Vec<Entity> = (0..5).map(|i| two.spawn((A(i),))).collect();
    let mut schedule = Schedule::with_threads(2);
    schedule.add_system(watch).unwrap();
    schedule.run(&mut one).unwrap();
    assert_eq!(last_seen(&one).0, set(&e1));
    schedule.run(&mut two).unwrap();
    assert_eq!(last_seen(&two).0, set(&e2), "its first run on this world");
    one.get_mut::<A>(e1[1]).unwrap().0 = 7;
    schedule.run(&mut two).unwrap();
    assert_eq!(last_seen(&two).0, vec![]);
    schedule.run(&mut one).unwrap();
    assert_eq!(last_seen(&one).0, vec![e1[1]]);
}

// ---------------------------------------------------------------------------
// The clock past 32 bits
// ---------------------------------------------------------------------------

/// Which entity the writer system writes each frame.
#[derive(Default)]
struct Target(Option<Entity>);

fn write_target(mut q: Query<&mut A>, target: Res<Target>) {
    if let Some(e) = target.0 {
        q.get_mut(e).unwrap().0 += 1;
    }
}

/// Runs many frames from clock value `start`, each writing one or two
/// entities (by a system and directly), and checks every frame that a
/// system reader and a held reader see exactly those, never older ones.
fn frames_from(start: u64, frames: usize) {
    let mut world = World::with_config(small_chunks());
    doecs::raw::set_change_tick(&mut world, Tick::new(start));
    world.insert_resource(Seen::default());
    world.insert_resource(Target::default());
    let mut es: Vec<Entity> = (0..64).map(|i| world.spawn((A(i),))).collect();
    for &e in &es {
        assert_eq!(world.change_ticks::<A>(e).unwrap().0, Tick::new(start));
    }
    let mut schedule = Schedule::with_threads(2);
    schedule
        .add_system(write_target)
        .unwrap()
        .add_system(watch.after("write_target"))
        .unwrap();
    let mut held = Reader::new(&world);
    assert_eq!(held.read(&world), (set(&es), set(&es)));
    schedule.run(&mut world).unwrap();
    assert_eq!(last_seen(&world), (set(&es), set(&es)));

    for frame in 0..frames {
        let mut want = Vec::new();
        let mut added = Vec::new();
        let target = es[(frame * 7) % es.len()];
        world.resource_mut::<Target>().unwrap().0 = Some(target);
        want.push(target);
        if frame % 3 == 0 {
            let direct = es[(frame * 13 + 5) % es.len()];
            world.get_mut::<A>(direct).unwrap().0 += 1;
            want.push(direct);
        }
        if frame % 5 == 0 {
            let e = world.spawn((A(0),));
            es.push(e);
            want.push(e);
            added.push(e);
        }
        want.sort();
        want.dedup();
        schedule.run(&mut world).unwrap();
        assert_eq!(
            last_seen(&world),
            (want.clone(), sorted(added.clone())),
            "frame {frame}, tick {:?}",
            world.change_tick()
        );
        assert_eq!(
            held.read(&world),
            (want, sorted(added)),
            "frame {frame}, tick {:?}",
            world.change_tick()
        );
    }
    world.check_invariants();
}

#[test]
fn frames_across_2_pow_32_report_only_new_changes() {
    let start = u32::MAX as u64 - 3;
    frames_from(start, if cfg!(miri) { 24 } else { 200 });
}

#[test]
fn frames_near_half_of_u64_report_only_new_changes() {
    frames_from(u64::MAX / 2 - 20, if cfg!(miri) { 24 } else { 200 });
}

#[test]
fn the_clock_passes_2_pow_32() {
    let mut world = World::new();
    doecs::raw::set_change_tick(&mut world, Tick::new(u32::MAX as u64 - 3));
    let e = world.spawn((A(0),));
    let mut r = Reader::new(&world);
    r.read(&world);
    for _ in 0..10 {
        world.get_mut::<A>(e).unwrap().0 += 1;
        assert_eq!(r.changed(&world), vec![e]);
        assert_eq!(r.changed(&world), vec![]);
    }
    assert!(world.change_tick().get() > u32::MAX as u64);
    let (added, changed) = world.change_ticks::<A>(e).unwrap();
    assert!(added.get() <= u32::MAX as u64, "{added:?}");
    assert!(changed.get() > u32::MAX as u64, "{changed:?}");
}

/// Jumps that would make a 32-bit (or a wrapping) clock confuse old stamps
/// with new ones or miss new ones: about 2^32 ahead (the low 32 bits of the
/// new ticks fall at, just after or just before the old ones), one and a
/// half times 2^32, and 2^63 ahead.
#[test]
fn big_jumps_never_make_old_stamps_look_new() {
    let near = 1u64 << 32;
    for jump in [
        near,
        near - 1,
        near + 1,
        near - 8,
        near - 100,
        3 << 31,
        1 << 63,
    ] {
        let mut world = World::new();
        world.insert_resource(Seen::default());
        let old: Vec<Entity> = (0..4).map(|i| world.spawn((A(i),))).collect();
        let mut schedule = Schedule::with_threads(1);
        schedule.add_system(watch).unwrap();
        let mut r = Reader::new(&world);
        schedule.run(&mut world).unwrap();
        assert_eq!(r.read(&world), (set(&old), set(&old)));
        // An old write, after both readers looked once.
        world.get_mut::<A>(old[1]).unwrap().0 += 1;
        schedule.run(&mut world).unwrap();
        assert_eq!(r.changed(&world), vec![old[1]]);
        assert_eq!(last_seen(&world).0, vec![old[1]]);

        let now = world.change_tick().get();
        doecs::raw::set_change_tick(&mut world, Tick::new(now + jump));
        schedule.run(&mut world).unwrap();
        assert_eq!(last_seen(&world), (vec![], vec![]), "jump {jump:#x}");
        assert_eq!(r.read(&world), (vec![], vec![]), "jump {jump:#x}");

        world.get_mut::<A>(old[2]).unwrap().0 += 1;
        let new = world.spawn((A(9),));
        schedule.run(&mut world).unwrap();
        assert_eq!(
            last_seen(&world),
            (set(&[old[2], new]), vec![new]),
            "jump {jump:#x}"
        );
        assert_eq!(r.read(&world), (set(&[old[2], new]), vec![new]));

        // A reader that slept through the jump sees only what changed since
        // its last look, not the stamps from before it.
        let mut sleeper = QueryState::<Entity, Changed<A>>::new(&world);
        assert_eq!(sleeper.iter(&world).count(), 5);
        let later = world.change_tick().get() + jump / 2;
        doecs::raw::set_change_tick(&mut world, Tick::new(later));
        world.get_mut::<A>(old[3]).unwrap().0 += 1;
        assert_eq!(sleeper.iter(&world).collect::<Vec<_>>(), vec![old[3]]);
    }
}

#[test]
#[should_panic(expected = "cannot go back")]
fn the_clock_never_goes_back() {
    let mut world = World::new();
    doecs::raw::set_change_tick(&mut world, Tick::new(100));
    doecs::raw::set_change_tick(&mut world, Tick::new(99));
}
