//! get_random: 10,000 lookups of one component, by entity, in random order.

use criterion::{criterion_group, criterion_main, Criterion};
use doecs_bench::*;
use flecs_ecs::prelude::{EntityViewGet, IdOperations, World as FlecsWorld};
use shipyard::{Get, View};

fn get_random(c: &mut Criterion) {
    let mut g = group(c, "get_random");
    let n = n();

    let mut world = doecs::World::new();
    let order = shuffled(world.spawn_batch((0..n).map(|_| bundle())));
    g.bench_function("doecs", |b| {
        b.iter(|| {
            order
                .iter()
                .map(|&e| world.get::<Position>(e).unwrap().0.x)
                .sum::<f32>()
        })
    });

    // The type looked up once, outside the loop: a held query's `get`.
    let mut query = doecs::QueryState::<&Position>::new(&world);
    g.bench_function("doecs_held_query", |b| {
        b.iter(|| {
            order
                .iter()
                .map(|&e| query.get(&world, e).unwrap().0.x)
                .sum::<f32>()
        })
    });

    // A view: the type resolved once per pass, like shipyard's `View`.
    g.bench_function("doecs_view", |b| {
        b.iter(|| {
            let positions = world.view::<Position>();
            order
                .iter()
                .map(|&e| positions.get(e).unwrap().0.x)
                .sum::<f32>()
        })
    });

    let mut world = hecs::World::new();
    let order = shuffled(world.spawn_batch((0..n).map(|_| bundle())).collect());
    g.bench_function("hecs", |b| {
        b.iter(|| {
            order
                .iter()
                .map(|&e| world.get::<&Position>(e).unwrap().0.x)
                .sum::<f32>()
        })
    });

    let mut world = bevy_ecs::world::World::new();
    let order = shuffled(world.spawn_batch((0..n).map(|_| bundle())).collect());
    g.bench_function("bevy_ecs", |b| {
        b.iter(|| {
            order
                .iter()
                .map(|&e| world.get::<Position>(e).unwrap().0.x)
                .sum::<f32>()
        })
    });

    let mut world = shipyard::World::new();
    let order = shuffled(world.bulk_add_entity((0..n).map(|_| bundle())).collect());
    g.bench_function("shipyard", |b| {
        // shipyard's lookups go through a borrowed view of the storage.
        b.iter(|| {
            world.run(|positions: View<Position>| {
                order
                    .iter()
                    .map(|&e| positions.get(e).unwrap().0.x)
                    .sum::<f32>()
            })
        })
    });

    let world = FlecsWorld::new();
    let order = shuffled(
        (0..n)
            .map(|_| {
                let (t, p, r, v) = bundle();
                world.entity().set(t).set(p).set(r).set(v).id()
            })
            .collect(),
    );
    g.bench_function("flecs_ecs", |b| {
        b.iter(|| {
            order
                .iter()
                .map(|&e| world.entity_from_id(e).get::<&Position>(|p| p.0.x))
                .sum::<f32>()
        })
    });

    let positions = vec![Position(Vec3::X); n];
    let indices = shuffled((0..n).collect::<Vec<_>>());
    g.bench_function("soa_baseline", |b| {
        b.iter(|| indices.iter().map(|&i| positions[i].0.x).sum::<f32>())
    });

    // The floor of doecs's layout for a view's lookup, by hand: per entity
    // index a 12-byte slot (generation, archetype, row), per archetype the
    // start of its `Position` column, then the value. Three dependent
    // loads, where shipyard's sparse set needs two.
    let slots: Vec<[u32; 3]> = (0..n as u32).map(|i| [0, 0, i]).collect();
    let starts: Vec<&[Position]> = vec![&positions];
    let order: Vec<(u32, u32)> = indices.iter().map(|&i| (i as u32, 0)).collect();
    g.bench_function("hand_archetype_layout", |b| {
        b.iter(|| {
            order
                .iter()
                .map(|&(index, generation)| {
                    let [g, archetype, row] = slots[index as usize];
                    assert_eq!(g, generation, "a live entity");
                    starts[archetype as usize][row as usize].0.x
                })
                .sum::<f32>()
        })
    });
    g.finish();
}

criterion_group!(benches, get_random);
criterion_main!(benches);
