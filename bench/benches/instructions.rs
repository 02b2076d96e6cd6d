//! Instruction counts of the key workloads, doecs and its peers side by side,
//! under valgrind's callgrind with iai-callgrind (library benchmarks).
//!
//! Unlike criterion's wall time, an instruction count repeats exactly for the
//! same binary and input, however busy the machine is, so a small regression
//! shows as a changed number. Each benchmark is one run of the same work as
//! the criterion bench of the same name (`benches/<workload>.rs`): the same
//! component types, bundles, sizes (`N`) and kernels from `doecs_bench`.
//!
//! Each benchmark's `setup` builds the world (and query, order, schedule) and
//! runs the operation once, as criterion's warm-up does, so first-run costs
//! (new archetypes, query caches, grown buffers) stay out; the measured
//! function then runs the operation once and returns what it worked on, so
//! dropping the world is not counted either (criterion never drops it inside
//! its timing). simple_insert is the exception, as in criterion: building the
//! world, the batch spawn and dropping the world are all measured.
//!
//! `schedule` runs each scheduler on the calling thread (doecs
//! `Schedule::with_threads(1)`, bevy_ecs's `SingleThreadedExecutor`,
//! shipyard on a one-thread global rayon pool that is the calling thread,
//! flecs_ecs's `progress()`, single-threaded by default). callgrind counts
//! only the measured function's thread, and the parallel schedulers'
//! hand-off and spin-waits would make the counts depend on thread
//! interleaving; the systems, data and kernels are those of
//! `benches/schedule.rs`.
//!
//! Run: `bench/instructions.sh` (summary in `target/doecs-instructions.json`)
//! or `cargo bench -p doecs-bench --bench instructions`; needs valgrind and
//! `cargo install iai-callgrind-runner --version 0.16.1` (the version of the
//! `iai-callgrind` dev-dependency).

// The iai-callgrind macros generate undocumented public modules and functions.
#![allow(missing_docs)]

use bevy_ecs::prelude::{Mut, Query as BevyQuery, Schedule as BevySchedule};
use bevy_ecs::query::QueryState as BevyQueryState;
use bevy_ecs::schedule::SingleThreadedExecutor;
use doecs_bench::level::{FloorInput, HandLayout, Level};
use doecs_bench::*;
use flecs_ecs::prelude::{
    ComponentId, EntityViewGet, IdOperations, Query as FlecsQuery, QueryAPI, SystemAPI,
    World as FlecsWorld,
};
use iai_callgrind::{library_benchmark, library_benchmark_group, main};
use shipyard::{Get, IntoIter, View, ViewMut, Workload};
use std::hint::black_box;

// ---------------------------------------------------------------------------
// simple_iter: `pos += vel` over N entities of (Transform, Position,
// Rotation, Velocity).

fn doecs_integrate(world: &mut doecs::World) {
    world
        .query_mut::<(&mut Position, &Velocity)>()
        .for_each(|(p, v)| integrate(p, v))
}

fn doecs_integrate_chunks(
    query: &mut doecs::QueryState<(&mut Position, &Velocity)>,
    world: &mut doecs::World,
) {
    query.for_each_chunk(world, |(ps, vs)| {
        for (p, v) in ps.iter_mut().zip(vs) {
            integrate(p, v);
        }
    })
}

fn simple_iter_doecs_setup() -> Box<doecs::World> {
    let mut world = Box::new(doecs::World::new());
    world.spawn_batch((0..N).map(|_| bundle()));
    doecs_integrate(&mut world);
    world
}

#[library_benchmark]
#[bench::doecs(setup = simple_iter_doecs_setup)]
fn simple_iter_doecs(mut world: Box<doecs::World>) -> Box<doecs::World> {
    doecs_integrate(&mut world);
    world
}

type DoecsIntegrate = doecs::QueryState<(&'static mut Position, &'static Velocity)>;

fn simple_iter_doecs_chunk_setup_with(
    config: doecs::WorldConfig,
) -> (Box<doecs::World>, DoecsIntegrate) {
    let mut world = Box::new(doecs::World::with_config(config));
    world.spawn_batch((0..N).map(|_| bundle()));
    let mut query = doecs::QueryState::new(&world);
    doecs_integrate_chunks(&mut query, &mut world);
    (world, query)
}

fn simple_iter_doecs_chunk_setup() -> (Box<doecs::World>, DoecsIntegrate) {
    simple_iter_doecs_chunk_setup_with(doecs::WorldConfig::default())
}

fn simple_iter_doecs_chunk_64k_setup() -> (Box<doecs::World>, DoecsIntegrate) {
    simple_iter_doecs_chunk_setup_with(doecs::WorldConfig {
        chunk_bytes: 64 * 1024,
        ..Default::default()
    })
}

#[library_benchmark]
#[bench::doecs_for_each_chunk(setup = simple_iter_doecs_chunk_setup)]
#[bench::doecs_for_each_chunk_64k(setup = simple_iter_doecs_chunk_64k_setup)]
fn simple_iter_doecs_chunk(
    (mut world, mut query): (Box<doecs::World>, DoecsIntegrate),
) -> (Box<doecs::World>, DoecsIntegrate) {
    doecs_integrate_chunks(&mut query, &mut world);
    (world, query)
}

fn hecs_integrate(world: &mut hecs::World) {
    for (p, v) in world.query_mut::<(&mut Position, &Velocity)>() {
        integrate(p, v);
    }
}

fn simple_iter_hecs_setup() -> Box<hecs::World> {
    let mut world = Box::new(hecs::World::new());
    world.spawn_batch((0..N).map(|_| bundle()));
    hecs_integrate(&mut world);
    world
}

#[library_benchmark]
#[bench::hecs(setup = simple_iter_hecs_setup)]
fn simple_iter_hecs(mut world: Box<hecs::World>) -> Box<hecs::World> {
    hecs_integrate(&mut world);
    world
}

type BevyIntegrate = BevyQueryState<(&'static mut Position, &'static Velocity)>;

fn bevy_integrate(query: &mut BevyIntegrate, world: &mut bevy_ecs::world::World) {
    for (mut p, v) in query.iter_mut(world) {
        integrate(Mut::as_mut(&mut p), v);
    }
}

fn simple_iter_bevy_setup() -> (Box<bevy_ecs::world::World>, BevyIntegrate) {
    let mut world = Box::new(bevy_ecs::world::World::new());
    world.spawn_batch((0..N).map(|_| bundle())).for_each(drop);
    let mut query = world.query::<(&mut Position, &Velocity)>();
    bevy_integrate(&mut query, &mut world);
    (world, query)
}

#[library_benchmark]
#[bench::bevy_ecs(setup = simple_iter_bevy_setup)]
fn simple_iter_bevy(
    (mut world, mut query): (Box<bevy_ecs::world::World>, BevyIntegrate),
) -> (Box<bevy_ecs::world::World>, BevyIntegrate) {
    bevy_integrate(&mut query, &mut world);
    (world, query)
}

fn shipyard_integrate(world: &shipyard::World) {
    world.run(|mut ps: ViewMut<Position>, vs: View<Velocity>| {
        for (p, v) in (&mut ps, &vs).iter() {
            integrate(p, v);
        }
    })
}

fn simple_iter_shipyard_setup() -> Box<shipyard::World> {
    let mut world = Box::new(shipyard::World::new());
    world
        .bulk_add_entity((0..N).map(|_| bundle()))
        .for_each(drop);
    shipyard_integrate(&world);
    world
}

#[library_benchmark]
#[bench::shipyard(setup = simple_iter_shipyard_setup)]
fn simple_iter_shipyard(world: Box<shipyard::World>) -> Box<shipyard::World> {
    shipyard_integrate(&world);
    world
}

type FlecsIntegrate = FlecsQuery<(&'static mut Position, &'static Velocity)>;

// The query comes first in the tuple so that it is dropped before its world.
fn simple_iter_flecs_setup() -> (FlecsIntegrate, Box<FlecsWorld>) {
    let world = Box::new(FlecsWorld::new());
    for _ in 0..N {
        let (t, p, r, v) = bundle();
        world.entity().set(t).set(p).set(r).set(v);
    }
    let query = world.new_query::<(&mut Position, &Velocity)>();
    query.each(|(p, v)| integrate(p, v));
    (query, world)
}

#[library_benchmark]
#[bench::flecs_ecs(setup = simple_iter_flecs_setup)]
fn simple_iter_flecs(
    (query, world): (FlecsIntegrate, Box<FlecsWorld>),
) -> (FlecsIntegrate, Box<FlecsWorld>) {
    query.each(|(p, v)| integrate(p, v));
    (query, world)
}

fn soa_integrate(positions: &mut Vec<Position>, velocities: &[Velocity]) {
    for (p, v) in positions.iter_mut().zip(velocities) {
        integrate(p, v);
    }
    black_box(positions);
}

fn simple_iter_soa_setup() -> (Vec<Position>, Vec<Velocity>) {
    let mut positions = vec![Position(Vec3::X); N];
    let velocities = vec![Velocity(Vec3::X); N];
    soa_integrate(&mut positions, &velocities);
    (positions, velocities)
}

#[library_benchmark]
#[bench::soa_baseline(setup = simple_iter_soa_setup)]
fn simple_iter_soa(
    (mut positions, velocities): (Vec<Position>, Vec<Velocity>),
) -> (Vec<Position>, Vec<Velocity>) {
    soa_integrate(&mut positions, &velocities);
    (positions, velocities)
}

fn soa_chunks_integrate(chunks: &mut [Box<SoaChunk>], last_len: usize) {
    let last = chunks.len() - 1;
    for (i, chunk) in chunks.iter_mut().enumerate() {
        let len = if i == last { last_len } else { SOA_CHUNK_ROWS };
        let chunk = &mut **chunk;
        for (p, v) in chunk.positions[..len]
            .iter_mut()
            .zip(&chunk.velocities[..len])
        {
            integrate(p, v);
        }
    }
    black_box(chunks);
}

fn simple_iter_soa_chunks_setup() -> (Vec<Box<SoaChunk>>, usize) {
    let (mut chunks, last_len) = soa_chunks(N);
    soa_chunks_integrate(&mut chunks, last_len);
    (chunks, last_len)
}

#[library_benchmark]
#[bench::soa_16k_chunks(setup = simple_iter_soa_chunks_setup)]
fn simple_iter_soa_chunks(
    (mut chunks, last_len): (Vec<Box<SoaChunk>>, usize),
) -> (Vec<Box<SoaChunk>>, usize) {
    soa_chunks_integrate(&mut chunks, last_len);
    (chunks, last_len)
}

library_benchmark_group!(
    name = simple_iter;
    benchmarks =
        simple_iter_doecs,
        simple_iter_doecs_chunk,
        simple_iter_hecs,
        simple_iter_bevy,
        simple_iter_shipyard,
        simple_iter_flecs,
        simple_iter_soa,
        simple_iter_soa_chunks
);

// ---------------------------------------------------------------------------
// get_random: N lookups of Position, by entity, in a shuffled order.

fn doecs_get_sum(world: &doecs::World, order: &[doecs::Entity]) -> f32 {
    order
        .iter()
        .map(|&e| world.get::<Position>(e).unwrap().0.x)
        .sum()
}

fn doecs_held_query_sum(
    query: &mut doecs::QueryState<&'static Position>,
    world: &doecs::World,
    order: &[doecs::Entity],
) -> f32 {
    order
        .iter()
        .map(|&e| query.get(world, e).unwrap().0.x)
        .sum()
}

fn doecs_view_sum(world: &doecs::World, order: &[doecs::Entity]) -> f32 {
    let positions = world.view::<Position>();
    order.iter().map(|&e| positions.get(e).unwrap().0.x).sum()
}

fn get_random_doecs_world() -> (Box<doecs::World>, Vec<doecs::Entity>) {
    let mut world = Box::new(doecs::World::new());
    let order = shuffled(world.spawn_batch((0..N).map(|_| bundle())));
    (world, order)
}

fn get_random_doecs_setup() -> (Box<doecs::World>, Vec<doecs::Entity>) {
    let (world, order) = get_random_doecs_world();
    black_box(doecs_get_sum(&world, &order));
    (world, order)
}

#[library_benchmark]
#[bench::doecs(setup = get_random_doecs_setup)]
fn get_random_doecs(
    (world, order): (Box<doecs::World>, Vec<doecs::Entity>),
) -> (Box<doecs::World>, Vec<doecs::Entity>, f32) {
    let sum = doecs_get_sum(&world, &order);
    (world, order, sum)
}

type DoecsHeldQuery = (
    Box<doecs::World>,
    Vec<doecs::Entity>,
    doecs::QueryState<&'static Position>,
);

fn get_random_doecs_held_setup() -> DoecsHeldQuery {
    let (world, order) = get_random_doecs_world();
    let mut query = doecs::QueryState::<&Position>::new(&world);
    black_box(doecs_held_query_sum(&mut query, &world, &order));
    (world, order, query)
}

#[library_benchmark]
#[bench::doecs_held_query(setup = get_random_doecs_held_setup)]
fn get_random_doecs_held((world, order, mut query): DoecsHeldQuery) -> (DoecsHeldQuery, f32) {
    let sum = doecs_held_query_sum(&mut query, &world, &order);
    ((world, order, query), sum)
}

fn get_random_doecs_view_setup() -> (Box<doecs::World>, Vec<doecs::Entity>) {
    let (world, order) = get_random_doecs_world();
    black_box(doecs_view_sum(&world, &order));
    (world, order)
}

#[library_benchmark]
#[bench::doecs_view(setup = get_random_doecs_view_setup)]
fn get_random_doecs_view(
    (world, order): (Box<doecs::World>, Vec<doecs::Entity>),
) -> (Box<doecs::World>, Vec<doecs::Entity>, f32) {
    let sum = doecs_view_sum(&world, &order);
    (world, order, sum)
}

fn hecs_get_sum(world: &hecs::World, order: &[hecs::Entity]) -> f32 {
    order
        .iter()
        .map(|&e| world.get::<&Position>(e).unwrap().0.x)
        .sum()
}

fn get_random_hecs_setup() -> (Box<hecs::World>, Vec<hecs::Entity>) {
    let mut world = Box::new(hecs::World::new());
    let order = shuffled(world.spawn_batch((0..N).map(|_| bundle())).collect());
    black_box(hecs_get_sum(&world, &order));
    (world, order)
}

#[library_benchmark]
#[bench::hecs(setup = get_random_hecs_setup)]
fn get_random_hecs(
    (world, order): (Box<hecs::World>, Vec<hecs::Entity>),
) -> (Box<hecs::World>, Vec<hecs::Entity>, f32) {
    let sum = hecs_get_sum(&world, &order);
    (world, order, sum)
}

fn bevy_get_sum(world: &bevy_ecs::world::World, order: &[bevy_ecs::entity::Entity]) -> f32 {
    order
        .iter()
        .map(|&e| world.get::<Position>(e).unwrap().0.x)
        .sum()
}

fn get_random_bevy_setup() -> (Box<bevy_ecs::world::World>, Vec<bevy_ecs::entity::Entity>) {
    let mut world = Box::new(bevy_ecs::world::World::new());
    let order = shuffled(world.spawn_batch((0..N).map(|_| bundle())).collect());
    black_box(bevy_get_sum(&world, &order));
    (world, order)
}

#[library_benchmark]
#[bench::bevy_ecs(setup = get_random_bevy_setup)]
fn get_random_bevy(
    (world, order): (Box<bevy_ecs::world::World>, Vec<bevy_ecs::entity::Entity>),
) -> (
    Box<bevy_ecs::world::World>,
    Vec<bevy_ecs::entity::Entity>,
    f32,
) {
    let sum = bevy_get_sum(&world, &order);
    (world, order, sum)
}

fn shipyard_get_sum(world: &shipyard::World, order: &[shipyard::EntityId]) -> f32 {
    // shipyard's lookups go through a borrowed view of the storage.
    world
        .run(|positions: View<Position>| order.iter().map(|&e| positions.get(e).unwrap().0.x).sum())
}

fn get_random_shipyard_setup() -> (Box<shipyard::World>, Vec<shipyard::EntityId>) {
    let mut world = Box::new(shipyard::World::new());
    let order = shuffled(world.bulk_add_entity((0..N).map(|_| bundle())).collect());
    black_box(shipyard_get_sum(&world, &order));
    (world, order)
}

#[library_benchmark]
#[bench::shipyard(setup = get_random_shipyard_setup)]
fn get_random_shipyard(
    (world, order): (Box<shipyard::World>, Vec<shipyard::EntityId>),
) -> (Box<shipyard::World>, Vec<shipyard::EntityId>, f32) {
    let sum = shipyard_get_sum(&world, &order);
    (world, order, sum)
}

fn flecs_get_sum(world: &FlecsWorld, order: &[flecs_ecs::prelude::Entity]) -> f32 {
    order
        .iter()
        .map(|&e| world.entity_from_id(e).get::<&Position>(|p| p.0.x))
        .sum()
}

fn get_random_flecs_setup() -> (Box<FlecsWorld>, Vec<flecs_ecs::prelude::Entity>) {
    let world = Box::new(FlecsWorld::new());
    let order = shuffled(
        (0..N)
            .map(|_| {
                let (t, p, r, v) = bundle();
                world.entity().set(t).set(p).set(r).set(v).id()
            })
            .collect(),
    );
    black_box(flecs_get_sum(&world, &order));
    (world, order)
}

#[library_benchmark]
#[bench::flecs_ecs(setup = get_random_flecs_setup)]
fn get_random_flecs(
    (world, order): (Box<FlecsWorld>, Vec<flecs_ecs::prelude::Entity>),
) -> (Box<FlecsWorld>, Vec<flecs_ecs::prelude::Entity>, f32) {
    let sum = flecs_get_sum(&world, &order);
    (world, order, sum)
}

fn soa_get_sum(positions: &[Position], indices: &[usize]) -> f32 {
    indices.iter().map(|&i| positions[i].0.x).sum()
}

fn get_random_soa_setup() -> (Vec<Position>, Vec<usize>) {
    let positions = vec![Position(Vec3::X); N];
    let indices = shuffled((0..N).collect::<Vec<_>>());
    black_box(soa_get_sum(&positions, &indices));
    (positions, indices)
}

#[library_benchmark]
#[bench::soa_baseline(setup = get_random_soa_setup)]
fn get_random_soa(
    (positions, indices): (Vec<Position>, Vec<usize>),
) -> (Vec<Position>, Vec<usize>, f32) {
    let sum = soa_get_sum(&positions, &indices);
    (positions, indices, sum)
}

library_benchmark_group!(
    name = get_random;
    benchmarks =
        get_random_doecs,
        get_random_doecs_held,
        get_random_doecs_view,
        get_random_hecs,
        get_random_bevy,
        get_random_shipyard,
        get_random_flecs,
        get_random_soa
);

// ---------------------------------------------------------------------------
// add_remove: N entities with A; add B to all of them, then remove B from
// all of them.

fn doecs_add_remove(world: &mut doecs::World, entities: &[doecs::Entity]) {
    for &e in entities {
        world.insert_one(e, B(0.0)).unwrap();
    }
    for &e in entities {
        world.remove_one::<B>(e).unwrap();
    }
}

fn add_remove_doecs_setup() -> (Box<doecs::World>, Vec<doecs::Entity>) {
    let mut world = Box::new(doecs::World::new());
    let entities = world.spawn_batch((0..N).map(|i| (A(i as f32),)));
    doecs_add_remove(&mut world, &entities);
    (world, entities)
}

#[library_benchmark]
#[bench::doecs(setup = add_remove_doecs_setup)]
fn add_remove_doecs(
    (mut world, entities): (Box<doecs::World>, Vec<doecs::Entity>),
) -> (Box<doecs::World>, Vec<doecs::Entity>) {
    doecs_add_remove(&mut world, &entities);
    (world, entities)
}

fn add_remove_doecs_sparse_setup() -> (Box<doecs::World>, Vec<doecs::Entity>) {
    let mut world = Box::new(doecs::World::new());
    world.register_sparse::<B>().unwrap();
    let entities = world.spawn_batch((0..N).map(|i| (A(i as f32),)));
    doecs_add_remove(&mut world, &entities);
    (world, entities)
}

#[library_benchmark]
#[bench::doecs_sparse(setup = add_remove_doecs_sparse_setup)]
fn add_remove_doecs_sparse(
    (mut world, entities): (Box<doecs::World>, Vec<doecs::Entity>),
) -> (Box<doecs::World>, Vec<doecs::Entity>) {
    doecs_add_remove(&mut world, &entities);
    (world, entities)
}

fn doecs_add_remove_batch(world: &mut doecs::World, entities: &[doecs::Entity]) {
    world
        .insert_batch(entities.iter().map(|&e| (e, (B(0.0),))))
        .unwrap();
    world.remove_batch::<(B,)>(entities).unwrap();
}

fn add_remove_doecs_batch_setup() -> (Box<doecs::World>, Vec<doecs::Entity>) {
    let mut world = Box::new(doecs::World::new());
    let entities = world.spawn_batch((0..N).map(|i| (A(i as f32),)));
    doecs_add_remove_batch(&mut world, &entities);
    (world, entities)
}

#[library_benchmark]
#[bench::doecs_batch(setup = add_remove_doecs_batch_setup)]
fn add_remove_doecs_batch(
    (mut world, entities): (Box<doecs::World>, Vec<doecs::Entity>),
) -> (Box<doecs::World>, Vec<doecs::Entity>) {
    doecs_add_remove_batch(&mut world, &entities);
    (world, entities)
}

fn hecs_add_remove(world: &mut hecs::World, entities: &[hecs::Entity]) {
    for &e in entities {
        world.insert_one(e, B(0.0)).unwrap();
    }
    for &e in entities {
        world.remove_one::<B>(e).unwrap();
    }
}

fn add_remove_hecs_setup() -> (Box<hecs::World>, Vec<hecs::Entity>) {
    let mut world = Box::new(hecs::World::new());
    let entities: Vec<_> = world.spawn_batch((0..N).map(|i| (A(i as f32),))).collect();
    hecs_add_remove(&mut world, &entities);
    (world, entities)
}

#[library_benchmark]
#[bench::hecs(setup = add_remove_hecs_setup)]
fn add_remove_hecs(
    (mut world, entities): (Box<hecs::World>, Vec<hecs::Entity>),
) -> (Box<hecs::World>, Vec<hecs::Entity>) {
    hecs_add_remove(&mut world, &entities);
    (world, entities)
}

fn bevy_add_remove(world: &mut bevy_ecs::world::World, entities: &[bevy_ecs::entity::Entity]) {
    for &e in entities {
        world.entity_mut(e).insert(B(0.0));
    }
    for &e in entities {
        world.entity_mut(e).remove::<B>();
    }
}

fn add_remove_bevy_setup() -> (Box<bevy_ecs::world::World>, Vec<bevy_ecs::entity::Entity>) {
    let mut world = Box::new(bevy_ecs::world::World::new());
    let entities: Vec<_> = world.spawn_batch((0..N).map(|i| (A(i as f32),))).collect();
    bevy_add_remove(&mut world, &entities);
    (world, entities)
}

#[library_benchmark]
#[bench::bevy_ecs(setup = add_remove_bevy_setup)]
fn add_remove_bevy(
    (mut world, entities): (Box<bevy_ecs::world::World>, Vec<bevy_ecs::entity::Entity>),
) -> (Box<bevy_ecs::world::World>, Vec<bevy_ecs::entity::Entity>) {
    bevy_add_remove(&mut world, &entities);
    (world, entities)
}

fn shipyard_add_remove(world: &mut shipyard::World, entities: &[shipyard::EntityId]) {
    for &e in entities {
        world.add_component(e, B(0.0));
    }
    for &e in entities {
        world.remove::<(B,)>(e).0.unwrap();
    }
}

fn add_remove_shipyard_setup() -> (Box<shipyard::World>, Vec<shipyard::EntityId>) {
    let mut world = Box::new(shipyard::World::new());
    let entities: Vec<_> = world
        .bulk_add_entity((0..N).map(|i| (A(i as f32),)))
        .collect();
    shipyard_add_remove(&mut world, &entities);
    (world, entities)
}

#[library_benchmark]
#[bench::shipyard(setup = add_remove_shipyard_setup)]
fn add_remove_shipyard(
    (mut world, entities): (Box<shipyard::World>, Vec<shipyard::EntityId>),
) -> (Box<shipyard::World>, Vec<shipyard::EntityId>) {
    shipyard_add_remove(&mut world, &entities);
    (world, entities)
}

fn flecs_add_remove(world: &FlecsWorld, entities: &[flecs_ecs::prelude::Entity]) {
    for &e in entities {
        world.entity_from_id(e).set(B(0.0));
    }
    for &e in entities {
        world.entity_from_id(e).remove(B::id());
    }
}

fn add_remove_flecs_setup() -> (Box<FlecsWorld>, Vec<flecs_ecs::prelude::Entity>) {
    let world = Box::new(FlecsWorld::new());
    let entities: Vec<_> = (0..N)
        .map(|i| world.entity().set(A(i as f32)).id())
        .collect();
    flecs_add_remove(&world, &entities);
    (world, entities)
}

#[library_benchmark]
#[bench::flecs_ecs(setup = add_remove_flecs_setup)]
fn add_remove_flecs(
    (world, entities): (Box<FlecsWorld>, Vec<flecs_ecs::prelude::Entity>),
) -> (Box<FlecsWorld>, Vec<flecs_ecs::prelude::Entity>) {
    flecs_add_remove(&world, &entities);
    (world, entities)
}

// Two tables, moving rows by swap-remove, as in benches/add_remove.rs (there
// an `iter_batched` whose setup builds the A-only table).
fn soa_add_remove(mut only_a: Vec<A>) -> Vec<A> {
    let (mut both_a, mut both_b) = (Vec::with_capacity(N), Vec::with_capacity(N));
    while let Some(a) = only_a.pop() {
        both_a.push(a);
        both_b.push(B(0.0));
    }
    while let Some(a) = both_a.pop() {
        both_b.pop();
        only_a.push(a);
    }
    only_a
}

fn add_remove_soa_setup() -> Vec<A> {
    black_box(soa_add_remove((0..N).map(|i| A(i as f32)).collect()));
    (0..N).map(|i| A(i as f32)).collect()
}

#[library_benchmark]
#[bench::soa_baseline(setup = add_remove_soa_setup)]
fn add_remove_soa(only_a: Vec<A>) -> Vec<A> {
    soa_add_remove(only_a)
}

library_benchmark_group!(
    name = add_remove;
    benchmarks =
        add_remove_doecs,
        add_remove_doecs_sparse,
        add_remove_doecs_batch,
        add_remove_hecs,
        add_remove_bevy,
        add_remove_shipyard,
        add_remove_flecs,
        add_remove_soa
);

// ---------------------------------------------------------------------------
// simple_insert: build a world and batch-spawn N bundles. As in criterion's
// `b.iter`, the world is built, filled and dropped inside the measurement;
// the setup runs the same once beforehand (process-wide registries, the
// allocator's pools).

fn doecs_insert() {
    let mut world = doecs::World::new();
    world.spawn_batch((0..N).map(|_| bundle()));
    black_box(world);
}

fn hecs_insert() {
    let mut world = hecs::World::new();
    world.spawn_batch((0..N).map(|_| bundle()));
    black_box(world);
}

fn bevy_insert() {
    let mut world = bevy_ecs::world::World::new();
    world.spawn_batch((0..N).map(|_| bundle())).for_each(drop);
    black_box(world);
}

fn shipyard_insert() {
    let mut world = shipyard::World::new();
    world
        .bulk_add_entity((0..N).map(|_| bundle()))
        .for_each(drop);
    black_box(world);
}

fn flecs_insert() {
    let world = FlecsWorld::new();
    flecs_spawn_bundles(&world, N);
    black_box(world);
}

fn soa_insert() {
    let (mut t, mut p, mut r, mut v) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for (a, b, c, d) in (0..N).map(|_| bundle()) {
        t.push(a);
        p.push(b);
        r.push(c);
        v.push(d);
    }
    black_box((t, p, r, v));
}

#[library_benchmark]
#[bench::doecs(setup = doecs_insert)]
fn simple_insert_doecs(_: ()) {
    doecs_insert()
}

#[library_benchmark]
#[bench::hecs(setup = hecs_insert)]
fn simple_insert_hecs(_: ()) {
    hecs_insert()
}

#[library_benchmark]
#[bench::bevy_ecs(setup = bevy_insert)]
fn simple_insert_bevy(_: ()) {
    bevy_insert()
}

#[library_benchmark]
#[bench::shipyard(setup = shipyard_insert)]
fn simple_insert_shipyard(_: ()) {
    shipyard_insert()
}

#[library_benchmark]
#[bench::flecs_ecs(setup = flecs_insert)]
fn simple_insert_flecs(_: ()) {
    flecs_insert()
}

#[library_benchmark]
#[bench::soa_baseline(setup = soa_insert)]
fn simple_insert_soa(_: ()) {
    soa_insert()
}

library_benchmark_group!(
    name = simple_insert;
    benchmarks =
        simple_insert_doecs,
        simple_insert_hecs,
        simple_insert_bevy,
        simple_insert_shipyard,
        simple_insert_flecs,
        simple_insert_soa
);

// ---------------------------------------------------------------------------
// frag_iter: 26 component types A..Z, 20 entities of each, each also
// carrying `Data`; `data *= 2` over all 520 (26 archetypes).

/// Entities per fragment type, as in ecs_bench_suite.
const PER_TYPE: usize = 20;

macro_rules! fragments {
    ($($t:ident),*) => {
        mod frag {
            doecs_bench::components! { $( #[allow(missing_docs)] $t(f32); )* }
        }

        fn spawn_doecs(world: &mut doecs::World) {
            $( world.spawn_batch((0..PER_TYPE).map(|_| (frag::$t(0.0), Data(1.0)))); )*
        }
        fn spawn_hecs(world: &mut hecs::World) {
            $( world.spawn_batch((0..PER_TYPE).map(|_| (frag::$t(0.0), Data(1.0)))); )*
        }
        fn spawn_bevy(world: &mut bevy_ecs::world::World) {
            $( world.spawn_batch((0..PER_TYPE).map(|_| (frag::$t(0.0), Data(1.0)))).for_each(drop); )*
        }
        fn spawn_shipyard(world: &mut shipyard::World) {
            $( world.bulk_add_entity((0..PER_TYPE).map(|_| (frag::$t(0.0), Data(1.0)))).for_each(drop); )*
        }
        fn spawn_flecs(world: &FlecsWorld) {
            $( for _ in 0..PER_TYPE { world.entity().set(frag::$t(0.0)).set(Data(1.0)); } )*
        }
    };
}

fragments!(A, B, C, D, E, F, G, H, I, J, K, L, M, N, O, P, Q, R, S, T, U, V, W, X, Y, Z);

fn doecs_double(world: &mut doecs::World) {
    world.query_mut::<(&mut Data,)>().for_each(|(d,)| double(d))
}

fn frag_iter_doecs_setup() -> Box<doecs::World> {
    let mut world = Box::new(doecs::World::new());
    spawn_doecs(&mut world);
    doecs_double(&mut world);
    world
}

#[library_benchmark]
#[bench::doecs(setup = frag_iter_doecs_setup)]
fn frag_iter_doecs(mut world: Box<doecs::World>) -> Box<doecs::World> {
    doecs_double(&mut world);
    world
}

fn doecs_double_sparse(world: &mut doecs::World) {
    world
        .query_mut::<doecs::Sparse<&mut Data>>()
        .for_each(double)
}

fn frag_iter_doecs_sparse_setup() -> Box<doecs::World> {
    let mut world = Box::new(doecs::World::new());
    world.register_sparse::<Data>().unwrap();
    spawn_doecs(&mut world);
    doecs_double_sparse(&mut world);
    world
}

#[library_benchmark]
#[bench::doecs_sparse(setup = frag_iter_doecs_sparse_setup)]
fn frag_iter_doecs_sparse(mut world: Box<doecs::World>) -> Box<doecs::World> {
    doecs_double_sparse(&mut world);
    world
}

type DoecsDouble = doecs::QueryState<&'static mut Data>;

fn frag_iter_doecs_held_setup() -> (Box<doecs::World>, DoecsDouble) {
    let mut world = Box::new(doecs::World::new());
    spawn_doecs(&mut world);
    let mut query = doecs::QueryState::<&mut Data>::new(&world);
    query.for_each(&mut world, double);
    (world, query)
}

#[library_benchmark]
#[bench::doecs_held_query(setup = frag_iter_doecs_held_setup)]
fn frag_iter_doecs_held(
    (mut world, mut query): (Box<doecs::World>, DoecsDouble),
) -> (Box<doecs::World>, DoecsDouble) {
    query.for_each(&mut world, double);
    (world, query)
}

fn hecs_double(world: &mut hecs::World) {
    for d in world.query_mut::<&mut Data>() {
        double(d);
    }
}

fn frag_iter_hecs_setup() -> Box<hecs::World> {
    let mut world = Box::new(hecs::World::new());
    spawn_hecs(&mut world);
    hecs_double(&mut world);
    world
}

#[library_benchmark]
#[bench::hecs(setup = frag_iter_hecs_setup)]
fn frag_iter_hecs(mut world: Box<hecs::World>) -> Box<hecs::World> {
    hecs_double(&mut world);
    world
}

type BevyDouble = BevyQueryState<&'static mut Data>;

fn bevy_double(query: &mut BevyDouble, world: &mut bevy_ecs::world::World) {
    for mut d in query.iter_mut(world) {
        double(&mut d);
    }
}

fn frag_iter_bevy_setup() -> (Box<bevy_ecs::world::World>, BevyDouble) {
    let mut world = Box::new(bevy_ecs::world::World::new());
    spawn_bevy(&mut world);
    let mut query = world.query::<&mut Data>();
    bevy_double(&mut query, &mut world);
    (world, query)
}

#[library_benchmark]
#[bench::bevy_ecs(setup = frag_iter_bevy_setup)]
fn frag_iter_bevy(
    (mut world, mut query): (Box<bevy_ecs::world::World>, BevyDouble),
) -> (Box<bevy_ecs::world::World>, BevyDouble) {
    bevy_double(&mut query, &mut world);
    (world, query)
}

fn shipyard_double(world: &shipyard::World) {
    world.run(|mut ds: ViewMut<Data>| {
        for d in (&mut ds).iter() {
            double(d);
        }
    })
}

fn frag_iter_shipyard_setup() -> Box<shipyard::World> {
    let mut world = Box::new(shipyard::World::new());
    spawn_shipyard(&mut world);
    shipyard_double(&world);
    world
}

#[library_benchmark]
#[bench::shipyard(setup = frag_iter_shipyard_setup)]
fn frag_iter_shipyard(world: Box<shipyard::World>) -> Box<shipyard::World> {
    shipyard_double(&world);
    world
}

type FlecsDouble = FlecsQuery<&'static mut Data>;

// The query comes first in the tuple so that it is dropped before its world.
fn frag_iter_flecs_setup() -> (FlecsDouble, Box<FlecsWorld>) {
    let world = Box::new(FlecsWorld::new());
    spawn_flecs(&world);
    let query = world.new_query::<&mut Data>();
    query.each(double);
    (query, world)
}

#[library_benchmark]
#[bench::flecs_ecs(setup = frag_iter_flecs_setup)]
fn frag_iter_flecs(
    (query, world): (FlecsDouble, Box<FlecsWorld>),
) -> (FlecsDouble, Box<FlecsWorld>) {
    query.each(double);
    (query, world)
}

// 26 tables of 20 rows each, as an archetype store would hold them.
fn soa_double(tables: &mut Vec<Vec<Data>>) {
    for table in tables.iter_mut() {
        table.iter_mut().for_each(double);
    }
    black_box(tables);
}

fn frag_iter_soa_setup() -> Vec<Vec<Data>> {
    let mut tables: Vec<Vec<Data>> = (0..26).map(|_| vec![Data(1.0); PER_TYPE]).collect();
    soa_double(&mut tables);
    tables
}

#[library_benchmark]
#[bench::soa_baseline(setup = frag_iter_soa_setup)]
fn frag_iter_soa(mut tables: Vec<Vec<Data>>) -> Vec<Vec<Data>> {
    soa_double(&mut tables);
    tables
}

library_benchmark_group!(
    name = frag_iter;
    benchmarks =
        frag_iter_doecs,
        frag_iter_doecs_sparse,
        frag_iter_doecs_held,
        frag_iter_hecs,
        frag_iter_bevy,
        frag_iter_shipyard,
        frag_iter_flecs,
        frag_iter_soa
);

// ---------------------------------------------------------------------------
// schedule: three systems swapping A<->B, C<->D and C<->E over (A,B),
// (A,B,C), (A,B,C,D) and (A,B,C,E), N entities each; each scheduler on the
// calling thread (see the top of the file).

/// The four entity shapes, N each.
fn populations() -> impl Iterator<Item = usize> {
    (0..4).flat_map(|shape| std::iter::repeat_n(shape, N))
}

fn schedule_doecs_setup() -> (Box<doecs::World>, doecs::Schedule) {
    let mut world = Box::new(doecs::World::new());
    for shape in populations() {
        match shape {
            0 => world.spawn((A(0.0), B(1.0))),
            1 => world.spawn((A(0.0), B(1.0), C(2.0))),
            2 => world.spawn((A(0.0), B(1.0), C(2.0), D(3.0))),
            _ => world.spawn((A(0.0), B(1.0), C(2.0), E(4.0))),
        };
    }
    let mut schedule = doecs::Schedule::with_threads(1);
    schedule
        .add_system(
            doecs::system("ab").for_each::<(&mut A, &mut B)>(|(a, b)| swap(&mut a.0, &mut b.0)),
        )
        .unwrap()
        .add_system(
            doecs::system("cd").for_each::<(&mut C, &mut D)>(|(c, d)| swap(&mut c.0, &mut d.0)),
        )
        .unwrap()
        .add_system(
            doecs::system("ce").for_each::<(&mut C, &mut E)>(|(c, e)| swap(&mut c.0, &mut e.0)),
        )
        .unwrap();
    schedule.run(&mut world).expect("schedule runs"); // builds the plan once
    (world, schedule)
}

#[library_benchmark]
#[bench::doecs(setup = schedule_doecs_setup)]
fn schedule_doecs(
    (mut world, mut schedule): (Box<doecs::World>, doecs::Schedule),
) -> (Box<doecs::World>, doecs::Schedule) {
    schedule.run(&mut world).expect("schedule runs");
    (world, schedule)
}

fn bevy_ab(mut q: BevyQuery<(&mut A, &mut B)>) {
    for (mut a, mut b) in &mut q {
        swap(&mut a.0, &mut b.0);
    }
}
fn bevy_cd(mut q: BevyQuery<(&mut C, &mut D)>) {
    for (mut c, mut d) in &mut q {
        swap(&mut c.0, &mut d.0);
    }
}
fn bevy_ce(mut q: BevyQuery<(&mut C, &mut E)>) {
    for (mut c, mut e) in &mut q {
        swap(&mut c.0, &mut e.0);
    }
}

fn schedule_bevy_setup() -> (Box<bevy_ecs::world::World>, BevySchedule) {
    let mut world = Box::new(bevy_ecs::world::World::new());
    for shape in populations() {
        let mut e = world.spawn((A(0.0), B(1.0)));
        match shape {
            1 => drop(e.insert(C(2.0))),
            2 => drop(e.insert((C(2.0), D(3.0)))),
            3 => drop(e.insert((C(2.0), E(4.0)))),
            _ => {}
        }
    }
    let mut schedule = BevySchedule::default();
    schedule.set_executor(SingleThreadedExecutor::default());
    schedule.add_systems((bevy_ab, bevy_cd, bevy_ce));
    schedule.run(&mut world); // builds the executor's graph once
    (world, schedule)
}

#[library_benchmark]
#[bench::bevy_ecs(setup = schedule_bevy_setup)]
fn schedule_bevy(
    (mut world, mut schedule): (Box<bevy_ecs::world::World>, BevySchedule),
) -> (Box<bevy_ecs::world::World>, BevySchedule) {
    schedule.run(&mut world);
    (world, schedule)
}

fn shipyard_ab(mut a: ViewMut<A>, mut b: ViewMut<B>) {
    for (a, b) in (&mut a, &mut b).iter() {
        swap(&mut a.0, &mut b.0);
    }
}
fn shipyard_cd(mut c: ViewMut<C>, mut d: ViewMut<D>) {
    for (c, d) in (&mut c, &mut d).iter() {
        swap(&mut c.0, &mut d.0);
    }
}
fn shipyard_ce(mut c: ViewMut<C>, mut e: ViewMut<E>) {
    for (c, e) in (&mut c, &mut e).iter() {
        swap(&mut c.0, &mut e.0);
    }
}

fn schedule_shipyard_setup() -> Box<shipyard::World> {
    // shipyard runs workloads on rayon's global pool: make it one thread,
    // this one, so every system runs where callgrind counts.
    rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .use_current_thread()
        .build_global()
        .expect("rayon's global pool is not built yet");
    let mut world = Box::new(shipyard::World::new());
    for shape in populations() {
        match shape {
            0 => world.add_entity((A(0.0), B(1.0))),
            1 => world.add_entity((A(0.0), B(1.0), C(2.0))),
            2 => world.add_entity((A(0.0), B(1.0), C(2.0), D(3.0))),
            _ => world.add_entity((A(0.0), B(1.0), C(2.0), E(4.0))),
        };
    }
    Workload::new("swaps")
        .with_system(shipyard_ab)
        .with_system(shipyard_cd)
        .with_system(shipyard_ce)
        .add_to_world(&world)
        .expect("workload");
    world.run_default_workload().expect("workload runs");
    world
}

#[library_benchmark]
#[bench::shipyard(setup = schedule_shipyard_setup)]
fn schedule_shipyard(world: Box<shipyard::World>) -> Box<shipyard::World> {
    world.run_default_workload().expect("workload runs");
    world
}

fn schedule_flecs_setup() -> Box<FlecsWorld> {
    let world = Box::new(FlecsWorld::new());
    for shape in populations() {
        let e = world.entity().set(A(0.0)).set(B(1.0));
        match shape {
            1 => drop(e.set(C(2.0))),
            2 => drop(e.set(C(2.0)).set(D(3.0))),
            3 => drop(e.set(C(2.0)).set(E(4.0))),
            _ => {}
        }
    }
    world
        .system::<(&mut A, &mut B)>()
        .each(|(a, b)| swap(&mut a.0, &mut b.0));
    world
        .system::<(&mut C, &mut D)>()
        .each(|(c, d)| swap(&mut c.0, &mut d.0));
    world
        .system::<(&mut C, &mut E)>()
        .each(|(c, e)| swap(&mut c.0, &mut e.0));
    world.progress();
    world
}

#[library_benchmark]
#[bench::flecs_ecs(setup = schedule_flecs_setup)]
fn schedule_flecs(world: Box<FlecsWorld>) -> Box<FlecsWorld> {
    world.progress();
    world
}

/// One table per shape, as in benches/schedule.rs.
struct SoaSchedule {
    a: Vec<A>,
    b: Vec<B>,
    c: Vec<C>,
    d: Vec<D>,
    e: Vec<E>,
}

fn soa_schedule(s: &mut SoaSchedule) {
    for (a, b) in s.a.iter_mut().zip(&mut s.b) {
        swap(&mut a.0, &mut b.0);
    }
    for (c, d) in s.c[N..2 * N].iter_mut().zip(&mut s.d) {
        swap(&mut c.0, &mut d.0);
    }
    for (c, e) in s.c[2 * N..].iter_mut().zip(&mut s.e) {
        swap(&mut c.0, &mut e.0);
    }
    black_box(s);
}

fn schedule_soa_setup() -> SoaSchedule {
    let mut s = SoaSchedule {
        a: vec![A(0.0); 4 * N],
        b: vec![B(1.0); 4 * N],
        c: vec![C(2.0); 3 * N],
        d: vec![D(3.0); N],
        e: vec![E(4.0); N],
    };
    soa_schedule(&mut s);
    s
}

#[library_benchmark]
#[bench::soa_baseline(setup = schedule_soa_setup)]
fn schedule_soa(mut s: SoaSchedule) -> SoaSchedule {
    soa_schedule(&mut s);
    s
}

library_benchmark_group!(
    name = schedule;
    benchmarks =
        schedule_doecs,
        schedule_bevy,
        schedule_shipyard,
        schedule_flecs,
        schedule_soa
);

// ---------------------------------------------------------------------------
// level_spawn: spawn the N-entity level (roots with 9 children each; a
// local transform, `Position` and `Velocity` each) from its compiled blob,
// hierarchy included, against the hand-written floor over the same layout
// (with and without the checks of the blob's words a loader of untrusted
// bytes makes first) and the memcpy of the blob's component bytes
// (benches/level_spawn.rs).
// The setup spawns once into another world first (the allocator's pools);
// the measured function spawns into a fresh world and returns it.

struct LevelRun {
    level: Level,
    spawner: doecs_resource::Spawner,
    world: doecs::World,
}

fn level_spawn_doecs_setup() -> LevelRun {
    let level = Level::new(N);
    let spawner = Level::spawner();
    let options = doecs_resource::SpawnOptions::default();
    let mut warm = doecs::World::new();
    spawner.spawn(&mut warm, &level.blob, options).unwrap();
    LevelRun {
        level,
        spawner,
        world: doecs::World::new(),
    }
}

#[library_benchmark]
#[bench::doecs(setup = level_spawn_doecs_setup)]
fn level_spawn_doecs(mut run: LevelRun) -> LevelRun {
    let options = doecs_resource::SpawnOptions::default();
    let out = run
        .spawner
        .spawn(&mut run.world, black_box(&run.level.blob), options)
        .unwrap();
    assert_eq!(out.entities.len(), N);
    run
}

/// The level, kept for the whole run (each benchmark runs in its own
/// process), so the floor's input can borrow it.
fn leaked_level() -> &'static Level {
    Box::leak(Box::new(Level::new(N)))
}

/// The floor's input, and its buffers allocated and touched beforehand
/// (as in criterion's setup).
fn level_spawn_floor_setup() -> (FloorInput<'static>, HandLayout) {
    let input = leaked_level().floor_input();
    let mut warm = HandLayout::with_capacity(N, input.plain_bytes());
    warm.fill(&input);
    let out = HandLayout::with_capacity(N, input.plain_bytes());
    (input, out)
}

#[library_benchmark]
#[bench::hand_layout_with_hierarchy(setup = level_spawn_floor_setup)]
fn level_spawn_floor((input, mut out): (FloorInput<'static>, HandLayout)) -> HandLayout {
    out.fill(black_box(&input));
    out
}

fn level_spawn_soa_setup() -> (Vec<&'static [u8]>, Vec<u8>) {
    let columns = leaked_level().component_bytes();
    let total = columns.iter().map(|c| c.len()).sum();
    (columns, Vec::with_capacity(total))
}

#[library_benchmark]
#[bench::soa_baseline(setup = level_spawn_soa_setup)]
fn level_spawn_soa((columns, mut dst): (Vec<&'static [u8]>, Vec<u8>)) -> Vec<u8> {
    for c in &columns {
        dst.extend_from_slice(black_box(c));
    }
    dst
}

#[library_benchmark]
#[bench::hand_layout_checked(setup = level_spawn_floor_setup)]
fn level_spawn_floor_checked((input, mut out): (FloorInput<'static>, HandLayout)) -> HandLayout {
    assert!(out.fill_checked(black_box(&input)));
    out
}

library_benchmark_group!(
    name = level_spawn;
    benchmarks = level_spawn_doecs, level_spawn_floor, level_spawn_floor_checked, level_spawn_soa
);

// ---------------------------------------------------------------------------
// observers: add_remove with an `on_add` hook on B, and with an `OnAdd`
// observer on B, each counting into a static: the difference over N is
// an observer's dispatch cost per trigger, in instructions.

static HOOKED: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

fn observers_doecs_hook_setup() -> (Box<doecs::World>, Vec<doecs::Entity>) {
    let mut world = Box::new(doecs::World::new());
    world.set_hooks::<B>(doecs::ComponentHooks::new().on_add(|_| {
        HOOKED.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }));
    let entities = world.spawn_batch((0..N).map(|i| (A(i as f32),)));
    doecs_add_remove(&mut world, &entities);
    (world, entities)
}

fn observers_doecs_observer_setup() -> (Box<doecs::World>, Vec<doecs::Entity>) {
    let mut world = Box::new(doecs::World::new());
    world
        .observe(|_: doecs::Trigger<doecs::OnAdd, B>| {
            HOOKED.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        })
        .unwrap();
    let entities = world.spawn_batch((0..N).map(|i| (A(i as f32),)));
    doecs_add_remove(&mut world, &entities);
    (world, entities)
}

#[library_benchmark]
#[bench::hook(setup = observers_doecs_hook_setup)]
#[bench::observer(setup = observers_doecs_observer_setup)]
fn observers_doecs(
    (mut world, entities): (Box<doecs::World>, Vec<doecs::Entity>),
) -> (Box<doecs::World>, Vec<doecs::Entity>) {
    doecs_add_remove(&mut world, &entities);
    (world, entities)
}

// simple_insert in a world with a requirement registered (A requires B;
// the spawned bundle has neither): what registering requirements costs
// the inserts that do not involve them. Compare with simple_insert/doecs.
fn doecs_insert_with_requirements() {
    let mut world = doecs::World::new();
    world.register_required::<A, B>().unwrap();
    world.spawn_batch((0..N).map(|_| bundle()));
    black_box(world);
}

#[library_benchmark]
#[bench::doecs_with_requirements(setup = doecs_insert_with_requirements)]
fn simple_insert_required(_: ()) {
    doecs_insert_with_requirements()
}

library_benchmark_group!(
    name = observers;
    benchmarks = observers_doecs, simple_insert_required
);

// ---------------------------------------------------------------------------
// churn: despawn N entities of the four-component bundle, then spawn N
// again (index reuse), as the criterion bench of that name.

fn doecs_churn(world: &mut doecs::World, live: &mut Vec<doecs::Entity>) {
    for &e in live.iter() {
        world.despawn(e).unwrap();
    }
    *live = world.spawn_batch((0..N).map(|_| bundle()));
}

fn churn_doecs_setup() -> (Box<doecs::World>, Vec<doecs::Entity>) {
    let mut world = Box::new(doecs::World::new());
    let mut live = world.spawn_batch((0..N).map(|_| bundle()));
    doecs_churn(&mut world, &mut live);
    (world, live)
}

#[library_benchmark]
#[bench::doecs(setup = churn_doecs_setup)]
fn churn_doecs(
    (mut world, mut live): (Box<doecs::World>, Vec<doecs::Entity>),
) -> (Box<doecs::World>, Vec<doecs::Entity>) {
    doecs_churn(&mut world, &mut live);
    (world, live)
}

fn hecs_churn(world: &mut hecs::World, live: &mut Vec<hecs::Entity>) {
    for &e in live.iter() {
        world.despawn(e).unwrap();
    }
    live.clear();
    live.extend(world.spawn_batch((0..N).map(|_| bundle())));
}

fn churn_hecs_setup() -> (Box<hecs::World>, Vec<hecs::Entity>) {
    let mut world = Box::new(hecs::World::new());
    let mut live: Vec<_> = world.spawn_batch((0..N).map(|_| bundle())).collect();
    hecs_churn(&mut world, &mut live);
    (world, live)
}

#[library_benchmark]
#[bench::hecs(setup = churn_hecs_setup)]
fn churn_hecs(
    (mut world, mut live): (Box<hecs::World>, Vec<hecs::Entity>),
) -> (Box<hecs::World>, Vec<hecs::Entity>) {
    hecs_churn(&mut world, &mut live);
    (world, live)
}

fn bevy_churn(world: &mut bevy_ecs::world::World, live: &mut Vec<bevy_ecs::entity::Entity>) {
    for &e in live.iter() {
        assert!(world.despawn(e));
    }
    live.clear();
    live.extend(world.spawn_batch((0..N).map(|_| bundle())));
}

type BevyChurn = (Box<bevy_ecs::world::World>, Vec<bevy_ecs::entity::Entity>);

fn churn_bevy_setup() -> BevyChurn {
    let mut world = Box::new(bevy_ecs::world::World::new());
    let mut live: Vec<_> = world.spawn_batch((0..N).map(|_| bundle())).collect();
    bevy_churn(&mut world, &mut live);
    (world, live)
}

#[library_benchmark]
#[bench::bevy_ecs(setup = churn_bevy_setup)]
fn churn_bevy((mut world, mut live): BevyChurn) -> BevyChurn {
    bevy_churn(&mut world, &mut live);
    (world, live)
}

fn shipyard_churn(world: &mut shipyard::World, live: &mut Vec<shipyard::EntityId>) {
    for &e in live.iter() {
        assert!(world.delete_entity(e));
    }
    live.clear();
    live.extend(world.bulk_add_entity((0..N).map(|_| bundle())));
}

fn churn_shipyard_setup() -> (Box<shipyard::World>, Vec<shipyard::EntityId>) {
    let mut world = Box::new(shipyard::World::new());
    let mut live: Vec<_> = world.bulk_add_entity((0..N).map(|_| bundle())).collect();
    shipyard_churn(&mut world, &mut live);
    (world, live)
}

#[library_benchmark]
#[bench::shipyard(setup = churn_shipyard_setup)]
fn churn_shipyard(
    (mut world, mut live): (Box<shipyard::World>, Vec<shipyard::EntityId>),
) -> (Box<shipyard::World>, Vec<shipyard::EntityId>) {
    shipyard_churn(&mut world, &mut live);
    (world, live)
}

library_benchmark_group!(
    name = churn;
    benchmarks = churn_doecs, churn_hecs, churn_bevy, churn_shipyard
);

main!(
    library_benchmark_groups = simple_iter,
    get_random,
    add_remove,
    simple_insert,
    frag_iter,
    schedule,
    level_spawn,
    observers,
    churn
);
