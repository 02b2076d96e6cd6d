//! churn and simple_insert-with-requirements in instructions, doecs alone:
//! a file that builds against older checkouts too, for before/after counts.
// iai-callgrind's macros generate undocumented items.
#![allow(missing_docs)]

use doecs_bench::*;
use iai_callgrind::{library_benchmark, library_benchmark_group, main};
use std::hint::black_box;

fn churn_setup() -> (Box<doecs::World>, Vec<doecs::Entity>) {
    let mut world = Box::new(doecs::World::new());
    let mut entities = world.spawn_batch((0..N).map(|_| bundle()));
    for _ in 0..2 {
        world.despawn_batch(&entities);
        entities = world.spawn_batch((0..N).map(|_| bundle()));
    }
    (world, entities)
}

#[library_benchmark]
#[bench::doecs(setup = churn_setup)]
fn churn_doecs(
    (mut world, entities): (Box<doecs::World>, Vec<doecs::Entity>),
) -> (Box<doecs::World>, Vec<doecs::Entity>) {
    for &e in &entities {
        world.despawn(e).unwrap();
    }
    let entities: Vec<_> = (0..N).map(|_| world.spawn(bundle())).collect();
    (world, entities)
}

fn insert_plain() {
    let mut world = doecs::World::new();
    world.spawn_batch((0..N).map(|_| bundle()));
    black_box(world);
}

#[library_benchmark]
#[bench::doecs(setup = insert_plain)]
fn simple_insert_plain(_: ()) {
    insert_plain()
}

fn add_remove_setup() -> (Box<doecs::World>, Vec<doecs::Entity>) {
    let mut world = Box::new(doecs::World::new());
    let entities = world.spawn_batch((0..N).map(|i| (A(i as f32),)));
    (world, entities)
}

// add_remove one entity at a time, in a binary with no batch calls (a
// batch caller of the same insert changes what the compiler inlines).
#[library_benchmark]
#[bench::doecs(setup = add_remove_setup)]
fn add_remove_single(
    (mut world, entities): (Box<doecs::World>, Vec<doecs::Entity>),
) -> (Box<doecs::World>, Vec<doecs::Entity>) {
    for &e in &entities {
        world.insert_one(e, B(0.0)).unwrap();
    }
    for &e in &entities {
        world.remove_one::<B>(e).unwrap();
    }
    (world, entities)
}

library_benchmark_group!(
    name = feature_costs;
    benchmarks = churn_doecs, simple_insert_plain, add_remove_single
);

main!(library_benchmark_groups = feature_costs);
