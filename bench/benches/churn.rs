//! churn: despawn 10,000 entities, then spawn 10,000, exercising index reuse.

use criterion::{criterion_group, criterion_main, Criterion};
use doecs_bench::*;
use flecs_ecs::prelude::World as FlecsWorld;

/// The hand-written limit: a generational slot map over four SoA columns.
/// Despawn bumps the slot's generation, swap-removes the row and frees the
/// slot; spawn reuses a free slot and pushes a row.
#[derive(Default)]
struct SlotSoa {
    generation: Vec<u32>,
    row_of_slot: Vec<u32>,
    slot_of_row: Vec<u32>,
    free: Vec<u32>,
    columns: (Vec<Transform>, Vec<Position>, Vec<Rotation>, Vec<Velocity>),
}

impl SlotSoa {
    fn spawn(&mut self, (t, p, r, v): (Transform, Position, Rotation, Velocity)) -> (u32, u32) {
        let row = self.slot_of_row.len() as u32;
        let slot = self.free.pop().unwrap_or_else(|| {
            self.generation.push(0);
            self.row_of_slot.push(0);
            self.generation.len() as u32 - 1
        });
        self.row_of_slot[slot as usize] = row;
        self.slot_of_row.push(slot);
        self.columns.0.push(t);
        self.columns.1.push(p);
        self.columns.2.push(r);
        self.columns.3.push(v);
        (slot, self.generation[slot as usize])
    }

    fn despawn(&mut self, (slot, generation): (u32, u32)) -> bool {
        if self.generation[slot as usize] != generation {
            return false;
        }
        self.generation[slot as usize] += 1;
        let row = self.row_of_slot[slot as usize] as usize;
        self.columns.0.swap_remove(row);
        self.columns.1.swap_remove(row);
        self.columns.2.swap_remove(row);
        self.columns.3.swap_remove(row);
        self.slot_of_row.swap_remove(row);
        if let Some(&moved) = self.slot_of_row.get(row) {
            self.row_of_slot[moved as usize] = row as u32;
        }
        self.free.push(slot);
        true
    }
}

fn churn(c: &mut Criterion) {
    let mut g = group(c, "churn");
    let n = n();

    let mut world = doecs::World::new();
    let mut live = world.spawn_batch((0..n).map(|_| bundle()));
    g.bench_function("doecs", |b| {
        b.iter(|| {
            for &e in &live {
                world.despawn(e).unwrap();
            }
            live = world.spawn_batch((0..n).map(|_| bundle()));
        })
    });

    let mut world = hecs::World::new();
    let mut live: Vec<_> = world.spawn_batch((0..n).map(|_| bundle())).collect();
    g.bench_function("hecs", |b| {
        b.iter(|| {
            for &e in &live {
                world.despawn(e).unwrap();
            }
            live.clear();
            live.extend(world.spawn_batch((0..n).map(|_| bundle())));
        })
    });

    let mut world = bevy_ecs::world::World::new();
    let mut live: Vec<_> = world.spawn_batch((0..n).map(|_| bundle())).collect();
    g.bench_function("bevy_ecs", |b| {
        b.iter(|| {
            for &e in &live {
                assert!(world.despawn(e));
            }
            live.clear();
            live.extend(world.spawn_batch((0..n).map(|_| bundle())));
        })
    });

    let mut world = shipyard::World::new();
    let mut live: Vec<_> = world.bulk_add_entity((0..n).map(|_| bundle())).collect();
    g.bench_function("shipyard", |b| {
        b.iter(|| {
            for &e in &live {
                assert!(world.delete_entity(e));
            }
            live.clear();
            live.extend(world.bulk_add_entity((0..n).map(|_| bundle())));
        })
    });

    let world = FlecsWorld::new();
    let mut live = flecs_spawn_bundles(&world, n);
    g.bench_function("flecs_ecs", |b| {
        b.iter(|| {
            for &e in &live {
                world.entity_from_id(e).destruct();
            }
            live = flecs_spawn_bundles(&world, n);
        })
    });

    let mut soa = SlotSoa::default();
    let mut live: Vec<_> = (0..n).map(|_| soa.spawn(bundle())).collect();
    g.bench_function("soa_baseline", |b| {
        b.iter(|| {
            for &e in &live {
                assert!(soa.despawn(e));
            }
            live.clear();
            live.extend((0..n).map(|_| soa.spawn(bundle())));
        })
    });
    g.finish();
}

criterion_group!(benches, churn);
criterion_main!(benches);
