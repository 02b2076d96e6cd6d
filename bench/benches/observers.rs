//! observers: what a lifecycle observer costs next to a hook. 10,000
//! entities with A; add B to all of them, then remove B, with (1) nothing
//! watching B, (2) an `on_add` hook on B that counts, (3) an `OnAdd`
//! observer on B that counts the same way, (4) one that counts into a
//! resource (a system parameter), and bevy_ecs unwatched, with a hook and
//! with an observer (both writing a resource), in the same run. An
//! observer's dispatch cost per trigger is (3 − 2) / n.

use criterion::{criterion_group, criterion_main, Criterion};
use doecs::prelude::*;
use doecs::ComponentHooks;
use doecs_bench::*;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

#[derive(Default, bevy_ecs::resource::Resource)]
struct Count(u64);

#[derive(bevy_ecs::component::Component)]
struct BevyB(#[allow(dead_code)] f32);

fn doecs_world(n: usize) -> (World, Vec<Entity>) {
    let mut world = World::new();
    let entities = world.spawn_batch((0..n).map(|i| (A(i as f32),)));
    (world, entities)
}

fn toggle(world: &mut World, entities: &[Entity]) {
    for &e in entities {
        world.insert_one(e, B(0.0)).unwrap();
    }
    for &e in entities {
        world.remove_one::<B>(e).unwrap();
    }
}

fn observers(c: &mut Criterion) {
    let mut g = group(c, "observers");
    let n = n();

    let (mut world, entities) = doecs_world(n);
    g.bench_function("doecs/unwatched", |b| {
        b.iter(|| toggle(&mut world, &entities))
    });

    let (mut world, entities) = doecs_world(n);
    let hooked = Arc::new(AtomicU64::new(0));
    let counter = hooked.clone();
    world.set_hooks::<B>(ComponentHooks::new().on_add(move |_| {
        counter.fetch_add(1, Ordering::Relaxed);
    }));
    g.bench_function("doecs/hook", |b| b.iter(|| toggle(&mut world, &entities)));

    let (mut world, entities) = doecs_world(n);
    world.insert_resource(Count(0));
    world
        .observe(|_: Trigger<OnAdd, B>, mut count: ResMut<Count>| count.0 += 1)
        .unwrap();
    g.bench_function("doecs/observer", |b| {
        b.iter(|| toggle(&mut world, &entities))
    });

    let mut world = bevy_ecs::world::World::new();
    let entities: Vec<_> = world.spawn_batch((0..n).map(|i| (A(i as f32),))).collect();
    world.insert_resource(Count(0));
    world
        .register_component_hooks::<BevyB>()
        .on_add(|mut w, _| w.resource_mut::<Count>().0 += 1);
    g.bench_function("bevy_ecs/hook", |b| {
        b.iter(|| {
            for &e in &entities {
                world.entity_mut(e).insert(BevyB(0.0));
            }
            for &e in &entities {
                world.entity_mut(e).remove::<BevyB>();
            }
        })
    });

    let mut world = bevy_ecs::world::World::new();
    let entities: Vec<_> = world.spawn_batch((0..n).map(|i| (A(i as f32),))).collect();
    world.insert_resource(Count(0));
    world.add_observer(
        |_: bevy_ecs::observer::On<bevy_ecs::lifecycle::Add<BevyB>>,
         mut count: bevy_ecs::system::ResMut<Count>| count.0 += 1,
    );
    g.bench_function("bevy_ecs/observer", |b| {
        b.iter(|| {
            for &e in &entities {
                world.entity_mut(e).insert(BevyB(0.0));
            }
            for &e in &entities {
                world.entity_mut(e).remove::<BevyB>();
            }
        })
    });
    g.finish();
}

criterion_group!(benches, observers);
criterion_main!(benches);
