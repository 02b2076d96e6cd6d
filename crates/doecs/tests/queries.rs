//! Typed queries: the iterator, `for_each`, `for_each_chunk` and parallel
//! forms agree; `get(entity)` works on queries; cached matches learn of
//! archetypes created after the query was built; filters compose; and a query
//! that would alias (`&mut T` twice, or `&mut T` with `&T`) is refused with a
//! clear panic.

use doecs::{Entity, EntityError, QueryState, With, Without, World, WorldConfig};

#[derive(Debug, Clone, Copy, PartialEq)]
struct Pos(f32);
#[derive(Debug, Clone, Copy, PartialEq)]
struct Vel(f32);
#[derive(Debug, Clone, Copy, PartialEq)]
struct Tag;
#[derive(Debug, Clone, Copy, PartialEq)]
struct Other(u8);

fn n() -> usize {
    // A multiple of 4: each of the four shapes gets n / 4 entities.
    if cfg!(miri) {
        32
    } else {
        2000
    }
}

fn populated() -> (World, Vec<Entity>) {
    let mut world = World::with_config(WorldConfig {
        chunk_bytes: 512,
        min_free_indices: 0,
    });
    let mut es = Vec::new();
    for i in 0..n() {
        let e = match i % 4 {
            0 => world.spawn((Pos(i as f32), Vel(1.0))),
            1 => world.spawn((Pos(i as f32), Vel(2.0), Tag)),
            2 => world.spawn((Pos(i as f32),)),
            _ => world.spawn((Vel(3.0), Other(i as u8))),
        };
        es.push(e);
    }
    (world, es)
}

#[test]
fn iterator_for_each_and_chunks_agree() {
    let (world, _) = populated();
    let mut by_iter: Vec<(Entity, f32, f32)> = world
        .query::<(Entity, &Pos, &Vel)>()
        .iter()
        .map(|(e, p, v)| (e, p.0, v.0))
        .collect();
    let mut by_for_each = Vec::new();
    world
        .query::<(Entity, &Pos, &Vel)>()
        .for_each(|(e, p, v)| by_for_each.push((e, p.0, v.0)));
    let mut by_chunk = Vec::new();
    world
        .query::<(Entity, &Pos, &Vel)>()
        .for_each_chunk(|(es, ps, vs)| {
            assert!(es.len() == ps.len() && ps.len() == vs.len());
            for i in 0..es.len() {
                by_chunk.push((es[i], ps[i].0, vs[i].0));
            }
        });
    for v in [&mut by_iter, &mut by_for_each, &mut by_chunk] {
        v.sort_by_key(|x| x.0);
    }
    assert_eq!(by_iter.len(), n() / 2);
    assert_eq!(by_iter, by_for_each);
    assert_eq!(by_iter, by_chunk);
    // count() agrees too.
    assert_eq!(world.query::<(&Pos, &Vel)>().count(), n() / 2);
}

#[test]
fn mutation_through_every_form() {
    let (mut world, es) = populated();
    world
        .query_mut::<(&mut Pos, &Vel)>()
        .for_each(|(p, v)| p.0 += v.0);
    world
        .query_mut::<(&mut Pos, &Vel)>()
        .for_each_chunk(|(ps, vs)| {
            for (p, v) in ps.iter_mut().zip(vs) {
                p.0 += v.0;
            }
        });
    for (p, v) in world.query_mut::<(&mut Pos, &Vel)>().iter_mut() {
        p.0 += v.0;
    }
    let mut q = QueryState::<(&mut Pos, &Vel)>::new(&world);
    for (p, v) in q.iter_mut(&mut world) {
        p.0 += v.0;
    }
    for (i, &e) in es.iter().enumerate() {
        let expect = match i % 4 {
            0 => Some(i as f32 + 4.0),
            1 => Some(i as f32 + 8.0),
            2 => Some(i as f32),
            _ => None,
        };
        assert_eq!(world.get::<Pos>(e).ok().map(|p| p.0), expect);
    }
}

/// The rayon forms. Skipped under Miri: rayon's work-stealing deques use
/// crossbeam-epoch, whose intrusive list violates Stacked Borrows
/// (crossbeam-rs/crossbeam#545), so Miri stops inside crossbeam, not doecs.
#[test]
#[cfg_attr(
    miri,
    ignore = "crossbeam-epoch (rayon) violates Stacked Borrows: crossbeam#545"
)]
fn parallel_forms_agree_with_serial_ones() {
    let (mut world, es) = populated();
    let mut serial: Vec<(Entity, f32, f32)> = world
        .query::<(Entity, &Pos, &Vel)>()
        .iter()
        .map(|(e, p, v)| (e, p.0, v.0))
        .collect();
    let mut by_par = std::sync::Mutex::new(Vec::new());
    world
        .query_mut::<(Entity, &Pos, &Vel)>()
        .par_for_each(|(e, p, v)| by_par.lock().unwrap().push((e, p.0, v.0)));
    let mut by_par = std::mem::take(by_par.get_mut().unwrap());
    serial.sort_by_key(|x| x.0);
    by_par.sort_by_key(|x| x.0);
    assert_eq!(serial, by_par);
    world
        .query_mut::<(&mut Pos, &Vel)>()
        .par_for_each_chunk(|(ps, vs)| {
            for (p, v) in ps.iter_mut().zip(vs) {
                p.0 += v.0;
            }
        });
    let mut q = QueryState::<(&mut Pos, &Vel)>::new(&world);
    q.par_for_each(&mut world, |(p, v)| p.0 += v.0);
    let mut chunks = std::sync::atomic::AtomicUsize::new(0);
    q.par_for_each_chunk(&mut world, |(ps, _)| {
        chunks.fetch_add(ps.len(), std::sync::atomic::Ordering::Relaxed);
    });
    assert_eq!(*chunks.get_mut(), n() / 2);
    for (i, &e) in es.iter().enumerate() {
        let expect = match i % 4 {
            0 => Some(i as f32 + 2.0),
            1 => Some(i as f32 + 4.0),
            2 => Some(i as f32),
            _ => None,
        };
        assert_eq!(world.get::<Pos>(e).ok().map(|p| p.0), expect);
    }
}

#[test]
fn filters_and_options() {
    let (mut world, es) = populated();
    let tagged: Vec<Entity> = world.query_filtered::<Entity, With<Tag>>().iter().collect();
    assert_eq!(tagged.len(), n() / 4);
    assert!(tagged.iter().all(|&e| world.get::<Tag>(e).is_ok()));
    let untagged_movers = world
        .query_filtered::<(&Pos, &Vel), Without<Tag>>()
        .iter()
        .count();
    assert_eq!(untagged_movers, n() / 4);
    // Tuple filters.
    let c = world
        .query_filtered::<Entity, (With<Vel>, Without<Pos>)>()
        .iter()
        .count();
    assert_eq!(c, n() / 4);
    // Option: every Pos, with or without Vel.
    let mut with_vel = 0;
    let mut without = 0;
    world
        .query::<(&Pos, Option<&Vel>)>()
        .for_each(|(_, v)| match v {
            Some(_) => with_vel += 1,
            None => without += 1,
        });
    assert_eq!((with_vel, without), (n() / 2, n() / 4));
    // Option<&mut T> writes only where present.
    world
        .query_mut::<(&Pos, Option<&mut Vel>)>()
        .for_each(|(_, v)| {
            if let Some(v) = v {
                v.0 = -1.0;
            }
        });
    for (i, &e) in es.iter().enumerate() {
        let v = world.get::<Vel>(e).ok().map(|v| v.0);
        match i % 4 {
            0 | 1 => assert_eq!(v, Some(-1.0)),
            2 => assert_eq!(v, None),
            _ => assert_eq!(v, Some(3.0)),
        }
    }
    // Option chunk slices are None for archetypes lacking the component.
    let mut some = 0;
    let mut none = 0;
    world
        .query::<(&Pos, Option<&Tag>)>()
        .for_each_chunk(|(ps, ts)| match ts {
            Some(ts) => {
                assert_eq!(ts.len(), ps.len());
                some += ps.len();
            }
            None => none += ps.len(),
        });
    assert_eq!((some, none), (n() / 4, n() / 2));
    // A component never registered matches nothing (With) or everything (Without).
    struct Never;
    assert_eq!(
        world.query_filtered::<Entity, With<Never>>().iter().count(),
        0
    );
    assert_eq!(
        world
            .query_filtered::<Entity, Without<Never>>()
            .iter()
            .count(),
        n()
    );
    assert_eq!(world.query::<&Never>().iter().count(), 0);
}

#[test]
fn query_get() {
    let (mut world, es) = populated();
    let mut q = QueryState::<(&Pos, Option<&Tag>), Without<Other>>::new(&world);
    for (i, &e) in es.iter().enumerate() {
        let got = q.get(&world, e);
        match i % 4 {
            0 => assert_eq!(got, Ok((&Pos(i as f32), None))),
            1 => assert_eq!(got, Ok((&Pos(i as f32), Some(&Tag)))),
            2 => assert_eq!(got, Ok((&Pos(i as f32), None))),
            _ => assert!(
                matches!(got, Err(EntityError::MissingComponent { entity, .. }) if entity == e)
            ),
        }
    }
    let mut qm = QueryState::<&mut Pos>::new(&world);
    *qm.get_mut(&mut world, es[0]).unwrap() = Pos(-5.0);
    assert_eq!(world.get::<Pos>(es[0]), Ok(&Pos(-5.0)));
    {
        let mut borrowed = world.query_mut::<(&mut Pos, &Vel)>();
        borrowed.get_mut(es[1]).unwrap().0 .0 = -6.0;
        assert!(borrowed.get(es[2]).is_err());
    }
    assert_eq!(world.get::<Pos>(es[1]), Ok(&Pos(-6.0)));
    // Dead and stale handles.
    world.despawn(es[0]).unwrap();
    assert_eq!(q.get(&world, es[0]), Err(EntityError::NoSuchEntity(es[0])));
    assert_eq!(
        world.query::<&Pos>().get(es[0]),
        Err(EntityError::NoSuchEntity(es[0]))
    );
    let forged = Entity::from_parts(es[0].index() + 1_000_000, 0);
    assert_eq!(
        q.get(&world, forged),
        Err(EntityError::NoSuchEntity(forged))
    );
}

#[test]
fn cache_learns_new_archetypes() {
    let mut world = World::new();
    let mut q = QueryState::<(Entity, &mut Pos)>::new(&world);
    let mut filtered = QueryState::<&Pos, Without<Tag>>::new(&world);
    assert_eq!(q.matched_archetypes(), 0);
    assert_eq!(q.count(&world), 0);
    let a = world.spawn((Pos(1.0),));
    assert_eq!(q.count(&world), 1);
    assert_eq!(q.matched_archetypes(), 1);
    // A new archetype appears after the query was built and used.
    let b = world.spawn((Pos(2.0), Vel(0.0)));
    let c = world.spawn((Vel(0.0),));
    let mut seen: Vec<Entity> = Vec::new();
    q.for_each(&mut world, |(e, p)| {
        p.0 *= 10.0;
        seen.push(e);
    });
    seen.sort();
    assert_eq!(seen, {
        let mut v = vec![a, b];
        v.sort();
        v
    });
    assert_eq!(q.matched_archetypes(), 2);
    // Archetypes created by insert are found too, and filters apply to them.
    world.insert_one(a, Tag).unwrap();
    assert_eq!(filtered.iter(&world).count(), 1);
    assert_eq!(q.count(&world), 2);
    assert_eq!(q.matched_archetypes(), 3);
    world.insert_one(c, Pos(3.0)).unwrap();
    assert_eq!(q.iter_mut(&mut world).count(), 3);
    assert_eq!(filtered.iter(&world).count(), 2);
    // The ad-hoc `query_mut` cache also updates between calls.
    assert_eq!(world.query_mut::<&mut Pos>().count(), 3);
    world.spawn((Pos(4.0), Other(0)));
    assert_eq!(world.query_mut::<&mut Pos>().count(), 4);
    assert_eq!(world.query_mut::<&mut Pos>().iter().count(), 4);
    // Empty archetypes are matched but yield nothing.
    world.despawn(a).unwrap();
    assert_eq!(q.iter_mut(&mut world).count(), 3);
}

#[test]
fn a_held_query_moves_between_worlds() {
    let mut world = World::new();
    let mut other = World::new();
    world.spawn((Pos(1.0),));
    other.spawn((Vel(0.0),)); // archetype ids differ between the worlds
    other.spawn((Pos(2.0),));
    other.spawn((Pos(3.0),));
    let mut q = QueryState::<&Pos>::new(&world);
    assert_eq!(q.iter(&world).map(|p| p.0).sum::<f32>(), 1.0);
    assert_eq!(q.iter(&other).map(|p| p.0).sum::<f32>(), 5.0);
    assert_eq!(q.iter(&world).map(|p| p.0).sum::<f32>(), 1.0);
}

#[test]
#[should_panic(expected = "accesses `queries::Pos` mutably twice")]
fn aliasing_mut_twice_panics() {
    let world = World::new();
    let _ = QueryState::<(&mut Pos, &mut Pos)>::new(&world);
}

#[test]
#[should_panic(expected = "accesses `queries::Pos` both mutably and immutably")]
fn aliasing_mut_then_ref_panics() {
    let world = World::new();
    let _ = QueryState::<(&mut Pos, &Pos)>::new(&world);
}

#[test]
#[should_panic(expected = "accesses `queries::Pos` both mutably and immutably")]
fn aliasing_ref_then_mut_panics() {
    let world = World::new();
    let _ = QueryState::<(&Pos, &Vel, &mut Pos)>::new(&world);
}

#[test]
#[should_panic(expected = "accesses `queries::Vel` mutably twice")]
fn aliasing_through_option_panics() {
    let world = World::new();
    let _ = QueryState::<(Option<&mut Vel>, &mut Vel)>::new(&world);
}

#[test]
#[should_panic(expected = "accesses `queries::Pos` both mutably and immutably")]
fn aliasing_in_nested_tuple_panics() {
    let world = World::new();
    let _ = QueryState::<((&mut Pos,), (Option<&Pos>, Entity))>::new(&world);
}

#[test]
#[should_panic(expected = "accesses `queries::Pos` mutably twice")]
fn aliasing_through_world_query_mut_panics() {
    let mut world = World::new();
    world.spawn((Pos(0.0),));
    world
        .query_mut::<(&mut Pos, &mut Pos)>()
        .for_each(|(a, b)| a.0 = b.0);
}

#[test]
fn shared_reads_and_filters_do_not_alias() {
    let mut world = World::new();
    world.spawn((Pos(1.0), Vel(2.0)));
    // Reading twice, and mutating a filtered type, are fine.
    assert_eq!(
        world.query::<(&Pos, &Pos, Option<&Pos>)>().iter().count(),
        1
    );
    let mut n = 0;
    world
        .query_filtered_mut::<&mut Pos, (With<Pos>, With<Vel>)>()
        .for_each(|p| {
            p.0 += 1.0;
            n += 1;
        });
    assert_eq!(n, 1);
    let access = QueryState::<(&mut Pos, &Vel, Entity)>::access();
    assert_eq!(access.writes().len(), 1);
    assert_eq!(access.reads().len(), 1);
}
