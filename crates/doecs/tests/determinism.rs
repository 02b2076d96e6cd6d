//! The whole world, entity ids included, is the same at any thread count and
//! in every repeated run.
//!
//! The original bug: `CommandBuffer::spawn` reserved ids through an atomic
//! cursor at the moment a system ran, so two systems that don't conflict,
//! each spawning 20,000 entities through commands, got different ids at 1, 2
//! and 4 threads, and in repeated runs at 4 threads. Here several spawning
//! and despawning systems run for 100 frames, and a hash of every entity id
//! and every component value, in iteration order, must agree at 1, 2, 4 and 8
//! threads and across repeated runs.

use doecs::{system, Entity, Schedule, World};

#[derive(Clone, Copy, Debug, PartialEq, Hash)]
struct Spark(u32);
#[derive(Clone, Copy, Debug, PartialEq, Hash)]
struct Smoke(u32);
#[derive(Clone, Copy, Debug, PartialEq, Hash)]
struct Life(u32);
#[derive(Clone, Copy, Debug, PartialEq, Hash)]
struct Parent(Entity);

struct Scale {
    first: u32,
    each: u32,
    frames: u32,
}

fn scale() -> Scale {
    if cfg!(miri) {
        Scale {
            first: 40,
            each: 2,
            frames: 2,
        }
    } else {
        Scale {
            first: 20_000,
            each: 300,
            frames: 100,
        }
    }
}

/// Two emitters that conflict with nothing (they only record commands), a
/// spawner that links new entities to old ones, an ageing system and a reaper.
fn schedule(threads: usize) -> Schedule {
    let mut s = Schedule::with_threads(threads);
    let Scale { first, each, .. } = scale();
    for (name, smoke) in [("sparks", false), ("smoke", true)] {
        let mut frame = 0u32;
        s.add_system(system(name).commands().run(move |ctx| {
            let n = if frame == 0 { first } else { each + frame % 17 };
            let mut commands = ctx.commands();
            for i in 0..n {
                let e = if smoke {
                    commands.spawn((Smoke(frame * 1000 + i), Life(3 + i % 5)))
                } else {
                    commands.spawn((Spark(frame * 1000 + i), Life(2 + i % 7)))
                };
                if i % 5 == 0 {
                    commands.insert_one(e, Parent(e));
                }
            }
            frame += 1;
        }))
        .unwrap();
    }
    s.add_system(system("children").reads::<Spark>().commands().run(|ctx| {
        let parents: Vec<Entity> = ctx
            .query::<(Entity, &Spark)>()
            .iter()
            .filter(|(_, s)| s.0 % 97 == 0)
            .map(|(e, _)| e)
            .collect();
        let mut commands = ctx.commands();
        for p in parents {
            commands.spawn((Parent(p), Life(1)));
        }
    }))
    .unwrap();
    s.add_system(system("age").par_for_each::<&mut Life>(|l| l.0 = l.0.saturating_sub(1)))
        .unwrap();
    s.add_system(
        system("reap")
            .reads::<Life>()
            .commands()
            .run(|ctx| {
                let dead: Vec<Entity> = ctx
                    .query::<(Entity, &Life)>()
                    .iter()
                    .filter(|(_, l)| l.0 == 0)
                    .map(|(e, _)| e)
                    .collect();
                let mut commands = ctx.commands();
                for e in dead {
                    commands.despawn(e);
                }
            })
            .after("age"),
    )
    .unwrap();
    s
}

/// FNV-1a over every entity id and component value, in iteration order, plus
/// the allocator's counts.
fn world_hash(world: &World) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut mix = |x: u64| {
        for b in x.to_le_bytes() {
            h ^= b as u64;
            h = h.wrapping_mul(0x100_0000_01b3);
        }
    };
    world.check_invariants();
    for (e, spark, smoke, life, parent) in world
        .query::<(
            Entity,
            Option<&Spark>,
            Option<&Smoke>,
            Option<&Life>,
            Option<&Parent>,
        )>()
        .iter()
    {
        mix(e.to_bits());
        mix(spark.map_or(u64::MAX, |s| s.0 as u64));
        mix(smoke.map_or(u64::MAX, |s| s.0 as u64));
        mix(life.map_or(u64::MAX, |l| l.0 as u64));
        mix(parent.map_or(u64::MAX, |p| p.0.to_bits()));
    }
    mix(world.len() as u64);
    mix(world.entities().slot_count() as u64);
    mix(world.entities().free_count() as u64);
    h
}

fn run(threads: usize) -> (u64, usize) {
    let mut world = World::new();
    let mut schedule = schedule(threads);
    for _ in 0..scale().frames {
        schedule.run(&mut world).unwrap();
    }
    assert_eq!(world.entities().reserved_count(), 0, "no id left reserved");
    (world_hash(&world), world.len())
}

#[test]
fn entity_ids_and_values_are_the_same_at_1_2_4_and_8_threads() {
    let one = run(1);
    assert!(one.1 > 0);
    let others: &[usize] = if cfg!(miri) { &[4] } else { &[2, 4, 8] };
    for &threads in others {
        assert_eq!(run(threads), one, "{threads} threads");
    }
}

#[test]
fn repeated_runs_at_4_threads_agree() {
    let first = run(4);
    for _ in 0..if cfg!(miri) { 0 } else { 3 } {
        assert_eq!(run(4), first);
    }
}

#[test]
fn two_spawning_systems_get_the_same_ids_whichever_runs_first() {
    // The original report: two non-conflicting systems, 20,000 spawns each.
    let n = if cfg!(miri) { 40 } else { 20_000 };
    let ids = |threads| {
        let mut world = World::new();
        let mut s = Schedule::with_threads(threads);
        for name in ["a", "b"] {
            s.add_system(system(name).commands().run(move |ctx| {
                let mut commands = ctx.commands();
                for i in 0..n {
                    commands.spawn((Spark(i),));
                }
            }))
            .unwrap();
        }
        s.run(&mut world).unwrap();
        let ids: Vec<(Entity, u32)> = world
            .query::<(Entity, &Spark)>()
            .iter()
            .map(|(e, s)| (e, s.0))
            .collect();
        ids
    };
    let one = ids(1);
    assert_eq!(one.len(), 2 * n as usize);
    let others: &[usize] = if cfg!(miri) { &[4] } else { &[2, 4, 4, 4] };
    for &threads in others {
        assert_eq!(ids(threads), one, "{threads} threads");
    }
}
