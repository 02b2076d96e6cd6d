//! Runs one workload for one library a given number of rounds, for counting
//! instructions under `valgrind --tool=callgrind` (repeatable on a busy
//! machine, unlike wall time). Usage: `instructions <workload> <library> <rounds>`;
//! the cost of one round is the difference between two round counts.

use doecs_bench::*;

#[derive(Copy, Clone)]
struct A(#[allow(dead_code)] f32);
#[derive(Copy, Clone)]
struct B(#[allow(dead_code)] f32);

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (workload, library) = (args[1].as_str(), args[2].as_str());
    let rounds: usize = args[3].parse().expect("rounds");
    match (workload, library) {
        ("add_remove", "doecs") => {
            let mut world = doecs::World::new();
            let es = world.spawn_batch((0..N).map(|i| (A(i as f32),)));
            for _ in 0..rounds {
                doecs_add_remove(&mut world, &es);
            }
        }
        ("add_remove", "hecs") => {
            let mut world = hecs::World::new();
            let es: Vec<_> = world.spawn_batch((0..N).map(|i| (A(i as f32),))).collect();
            for _ in 0..rounds {
                for &e in &es {
                    world.insert_one(e, B(0.0)).unwrap();
                }
                for &e in &es {
                    world.remove_one::<B>(e).unwrap();
                }
            }
        }
        ("simple_iter", "doecs") => {
            let mut world = doecs::World::new();
            world.spawn_batch((0..N).map(|_| bundle()));
            for _ in 0..rounds {
                world
                    .query_mut::<(&mut Position, &Velocity)>()
                    .for_each(|(p, v)| p.0 += v.0);
            }
        }
        ("simple_iter", "hecs") => {
            let mut world = hecs::World::new();
            world.spawn_batch((0..N).map(|_| bundle()));
            for _ in 0..rounds {
                for (p, v) in world.query_mut::<(&mut Position, &Velocity)>() {
                    p.0 += v.0;
                }
            }
        }
        ("simple_iter", "soa") => {
            let mut ps = vec![Position(Vec3::X); N];
            let vs = vec![Velocity(Vec3::X); N];
            for _ in 0..rounds {
                for (p, v) in ps.iter_mut().zip(&vs) {
                    p.0 += v.0;
                }
                std::hint::black_box(&mut ps);
            }
        }
        ("churn", "doecs") => {
            let mut world = doecs::World::new();
            let mut live = world.spawn_batch((0..N).map(|_| bundle()));
            for _ in 0..rounds {
                for &e in &live {
                    world.despawn(e).unwrap();
                }
                live = world.spawn_batch((0..N).map(|_| bundle()));
            }
        }
        ("churn", "hecs") => {
            let mut world = hecs::World::new();
            let mut live: Vec<_> = world.spawn_batch((0..N).map(|_| bundle())).collect();
            for _ in 0..rounds {
                for &e in &live {
                    world.despawn(e).unwrap();
                }
                live = world.spawn_batch((0..N).map(|_| bundle())).collect();
            }
        }
        ("simple_insert", "doecs") => {
            for _ in 0..rounds {
                let mut world = doecs::World::new();
                world.spawn_batch((0..N).map(|_| bundle()));
                std::hint::black_box(world);
            }
        }
        ("simple_insert", "shipyard") => {
            for _ in 0..rounds {
                let mut world = shipyard::World::new();
                world
                    .bulk_add_entity((0..N).map(|_| bundle()))
                    .for_each(drop);
                std::hint::black_box(world);
            }
        }
        _ => panic!("unknown workload/library"),
    }
}

/// One round of add_remove, kept out of line as in the iai-callgrind bench,
/// so the compiler makes the same inlining choices there and here.
#[inline(never)]
fn doecs_add_remove(world: &mut doecs::World, entities: &[doecs::Entity]) {
    for &e in entities {
        world.insert_one(e, B(0.0)).unwrap();
    }
    for &e in entities {
        world.remove_one::<B>(e).unwrap();
    }
}
