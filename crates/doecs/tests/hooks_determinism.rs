//! A small game driven by hooks, events and removal logs gives the same
//! world, entity ids included, and the same events, at 1, 2, 4 and 8
//! threads and in repeated runs.
//!
//! Units are spawned and despawned through system commands. Hooks on `Unit`
//! spawn a shadow entity for each new unit (and link it back through a
//! command), send events through closure commands, and on removal despawn
//! the shadow and leave a corpse. Systems send and read events (readers both
//! after and before their writers), read `RemovedComponents<Unit>`, and
//! heal units by inserting a replacement (firing `on_replace`). At the end,
//! a hash of every entity id, every component value and everything each
//! reader received must be the same everywhere.
//!
//! Also here, since they start thread pools too: hooks fired through a
//! schedule's `Commands`, and a hook panicking while a schedule applies them.

use doecs::prelude::*;
use doecs::{ComponentHooks, RemovedComponents};

#[derive(Clone, Copy, Debug, PartialEq)]
struct Unit {
    hp: u32,
    team: u8,
}
/// On a shadow entity: the unit it follows.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Shadow(Entity);
/// On a unit: its shadow (inserted by the unit's `on_add` hook).
#[derive(Clone, Copy, Debug, PartialEq)]
struct Tracker(Entity);
#[derive(Clone, Copy, Debug, PartialEq)]
struct Corpse {
    of: Entity,
    team: u8,
}
#[derive(Clone, Copy, Debug, PartialEq)]
struct Life(u32);

#[derive(Clone, Copy, Debug)]
struct Hit {
    target: Entity,
    damage: u32,
}
#[derive(Clone, Copy, Debug)]
struct Died {
    unit: Entity,
    team: u8,
}
#[derive(Clone, Copy, Debug)]
struct Written {
    unit: Entity,
    hp: u32,
}

/// A running FNV-1a hash, one resource per reader.
#[derive(Debug)]
struct Digest<const N: usize>(u64, u64);

impl<const N: usize> Default for Digest<N> {
    fn default() -> Self {
        Digest(0xcbf2_9ce4_8422_2325, 0)
    }
}

impl<const N: usize> Digest<N> {
    fn mix(&mut self, x: u64) {
        for b in x.to_le_bytes() {
            self.0 ^= b as u64;
            self.0 = self.0.wrapping_mul(0x100_0000_01b3);
        }
        self.1 += 1;
    }
}

struct Scale {
    frames: u32,
    per_frame: u32,
}

fn scale() -> Scale {
    if cfg!(miri) {
        Scale {
            frames: 4,
            per_frame: 3,
        }
    } else {
        Scale {
            frames: 100,
            per_frame: 40,
        }
    }
}

fn world() -> World {
    let mut world = World::new();
    world.set_hooks::<Unit>(
        ComponentHooks::new()
            .on_add(|ctx| {
                let unit = ctx.entity;
                let shadow = ctx.spawn((Shadow(unit),));
                ctx.commands.insert_one(unit, Tracker(shadow));
            })
            .on_insert(|ctx| {
                let unit = ctx.entity;
                let hp = ctx.world.get::<Unit>(unit).unwrap().hp;
                ctx.commands.push_closure(move |w| {
                    w.send_event(Written { unit, hp });
                    Ok(())
                });
            })
            .on_remove(|ctx| {
                let unit = ctx.entity;
                if let Ok(t) = ctx.world.get::<Tracker>(unit) {
                    ctx.commands.despawn(t.0);
                }
                let team = ctx.world.get::<Unit>(unit).unwrap().team;
                ctx.spawn((Corpse { of: unit, team }, Life(2 + team as u32)));
                ctx.commands.push_closure(move |w| {
                    w.send_event(Died { unit, team });
                    Ok(())
                });
            }),
    );
    world.set_hooks::<Corpse>(ComponentHooks::new().on_remove(|ctx| {
        // A corpse of team 1 that decays leaves a new unit behind.
        let corpse = *ctx.world.get::<Corpse>(ctx.entity).unwrap();
        if corpse.team == 1 && corpse.of.index() % 4 == 0 {
            ctx.spawn((Unit { hp: 3, team: 0 },));
        }
    }));
    world.insert_resource(Digest::<1>::default());
    world.insert_resource(Digest::<2>::default());
    world.insert_resource(Digest::<3>::default());
    world.insert_resource(Digest::<4>::default());
    world.insert_resource(Digest::<5>::default());
    world
}

fn schedule(threads: usize) -> Schedule {
    let Scale { per_frame, .. } = scale();
    let mut s = Schedule::with_threads(threads);

    let spawner = move |mut commands: Commands, mut frame: Local<u32>| {
        let f = *frame;
        for i in 0..per_frame + f % 7 {
            let hp = 1 + (f * 31 + i * 17) % 9;
            let e = commands.spawn((Unit {
                hp,
                team: (i % 2) as u8,
            },));
            if i % 11 == 0 {
                // Dies before it ever exists for a system.
                commands.despawn(e);
            }
        }
        *frame += 1;
    };
    let combat = |q: Query<(Entity, &Unit)>, mut hits: EventWriter<Hit>, mut frame: Local<u32>| {
        let f = *frame;
        let units: Vec<(Entity, Unit)> = q.iter().map(|(e, u)| (e, *u)).collect();
        for (k, &(e, u)) in units.iter().enumerate() {
            if (e.index() + f).is_multiple_of(3) {
                let target = units[(k * 7 + f as usize) % units.len()].0;
                hits.send(Hit {
                    target,
                    damage: 1 + u.team as u32,
                });
            }
        }
        *frame += 1;
    };
    let apply_hits = |mut hits: EventReader<Hit>, mut q: Query<&mut Unit>| {
        for hit in hits.read() {
            if let Ok(u) = q.get_mut(hit.target) {
                u.hp = u.hp.saturating_sub(hit.damage);
            }
        }
    };
    let reaper = |mut q: Query<(Entity, &Unit)>, mut commands: Commands| {
        let mut dead = Vec::new();
        let mut heal = Vec::new();
        q.for_each(|(e, u)| {
            if u.hp == 0 {
                dead.push(e);
            } else if u.hp == 5 {
                heal.push((e, u.team));
            }
        });
        for e in dead {
            commands.despawn(e);
        }
        for (e, team) in heal {
            // A replacement: on_replace and on_insert fire.
            commands.insert_one(e, Unit { hp: 7, team });
        }
    };
    let decay = |mut q: Query<(Entity, &mut Life)>, mut commands: Commands| {
        q.for_each(|(e, l)| {
            l.0 = l.0.saturating_sub(1);
            if l.0 == 0 {
                commands.despawn(e);
            }
        });
    };
    let obituary = |mut died: EventReader<Died>, mut d: ResMut<Digest<1>>| {
        for ev in died.read() {
            d.mix(ev.unit.to_bits());
            d.mix(ev.team as u64);
        }
        assert_eq!(died.missed(), 0);
    };
    // Reads hits before combat sends them: the previous frame's.
    let hit_log = |mut hits: EventReader<Hit>, mut d: ResMut<Digest<2>>| {
        assert_eq!(hits.missed(), 0);
        for ev in hits.read() {
            d.mix(ev.target.to_bits());
            d.mix(ev.damage as u64);
        }
    };
    let removed = |gone: RemovedComponents<Unit>, mut d: ResMut<Digest<3>>| {
        for e in gone.iter() {
            d.mix(e.to_bits());
        }
    };
    let written = |mut w: EventReader<Written>, mut d: ResMut<Digest<4>>| {
        for ev in w.read() {
            d.mix(ev.unit.to_bits());
            d.mix(ev.hp as u64);
        }
    };
    let shadows = |q: Query<(Entity, &Shadow)>, mut d: ResMut<Digest<5>>| {
        for (e, s) in q.iter() {
            d.mix(e.to_bits());
            d.mix(s.0.to_bits());
        }
    };
    s.add_system(spawner.named("spawner")).unwrap();
    s.add_system(combat.named("combat")).unwrap();
    s.add_system(apply_hits.named("apply_hits")).unwrap();
    s.add_system(reaper.named("reaper").after("apply_hits"))
        .unwrap();
    s.add_system(decay.named("decay")).unwrap();
    s.add_system(obituary.named("obituary")).unwrap();
    s.add_system(hit_log.named("hit_log").before("combat"))
        .unwrap();
    s.add_system(removed.named("removed")).unwrap();
    s.add_system(written.named("written")).unwrap();
    s.add_system(shadows.named("shadows")).unwrap();
    // A sync point halfway: commands apply, and the systems after it see
    // the changes (and the hook events) in the same frame.
    s.add_sync_point();
    let late_obituary = |mut died: EventReader<Died>, mut d: ResMut<Digest<1>>| {
        for ev in died.read() {
            d.mix(!ev.unit.to_bits());
        }
    };
    s.add_system(late_obituary.named("late_obituary")).unwrap();
    s
}

/// FNV-1a over every entity and component value in iteration order, the
/// readers' digests, and the allocator's counts.
fn world_hash(world: &World) -> u64 {
    let mut h = Digest::<0>::default();
    world.check_invariants();
    for (e, unit, shadow, tracker, corpse, life) in world
        .query::<(
            Entity,
            Option<&Unit>,
            Option<&Shadow>,
            Option<&Tracker>,
            Option<&Corpse>,
            Option<&Life>,
        )>()
        .iter()
    {
        h.mix(e.to_bits());
        h.mix(unit.map_or(u64::MAX, |u| (u.hp as u64) << 8 | u.team as u64));
        h.mix(shadow.map_or(u64::MAX, |s| s.0.to_bits()));
        h.mix(tracker.map_or(u64::MAX, |t| t.0.to_bits()));
        h.mix(corpse.map_or(u64::MAX, |c| c.of.to_bits() ^ c.team as u64));
        h.mix(life.map_or(u64::MAX, |l| l.0 as u64));
    }
    let d1 = world.resource::<Digest<1>>().unwrap();
    let d2 = world.resource::<Digest<2>>().unwrap();
    let d3 = world.resource::<Digest<3>>().unwrap();
    let d4 = world.resource::<Digest<4>>().unwrap();
    let d5 = world.resource::<Digest<5>>().unwrap();
    for d in [
        (d1.0, d1.1),
        (d2.0, d2.1),
        (d3.0, d3.1),
        (d4.0, d4.1),
        (d5.0, d5.1),
    ] {
        h.mix(d.0);
        h.mix(d.1);
    }
    h.mix(world.len() as u64);
    h.mix(world.entities().slot_count() as u64);
    h.mix(world.entities().free_count() as u64);
    h.0
}

/// Every unit has a live shadow that points back at it, and every shadow
/// follows a live unit.
fn check_links(world: &World) {
    for (e, t) in world.query::<(Entity, &Tracker)>().iter() {
        assert!(world.contains::<Unit>(e), "{e:?} tracked but no unit");
        assert_eq!(world.get::<Shadow>(t.0), Ok(&Shadow(e)));
    }
    let units = world.query::<&Unit>().iter().count();
    let tracked = world.query::<&Tracker>().iter().count();
    assert_eq!(units, tracked, "every unit got its tracker");
    for (_, s) in world.query::<(Entity, &Shadow)>().iter() {
        assert!(world.contains::<Unit>(s.0), "a shadow outlived its unit");
    }
}

/// Runs the game; returns the hash, how many entities are left, and how
/// many events of each reader were received.
fn run(threads: usize) -> (u64, usize, [u64; 5]) {
    let mut world = world();
    let mut schedule = schedule(threads);
    for _ in 0..scale().frames {
        schedule.run(&mut world).unwrap();
        assert!(world.take_hook_failures().is_empty());
    }
    check_links(&world);
    assert_eq!(world.entities().reserved_count(), 0, "no id left reserved");
    let counts = [
        world.resource::<Digest<1>>().unwrap().1,
        world.resource::<Digest<2>>().unwrap().1,
        world.resource::<Digest<3>>().unwrap().1,
        world.resource::<Digest<4>>().unwrap().1,
        world.resource::<Digest<5>>().unwrap().1,
    ];
    (world_hash(&world), world.len(), counts)
}

#[test]
fn the_game_is_the_same_at_1_2_4_and_8_threads() {
    let one = run(1);
    assert!(one.1 > 0);
    assert!(
        one.2.iter().all(|&n| n > 0),
        "every reader received something: {:?}",
        one.2
    );
    let others: &[usize] = if cfg!(miri) { &[4] } else { &[2, 4, 8] };
    for &threads in others {
        assert_eq!(run(threads), one, "{threads} threads");
    }
}

#[test]
fn repeated_runs_agree() {
    let first = run(4);
    for &threads in if cfg!(miri) {
        &[][..]
    } else {
        &[4, 4, 2, 8][..]
    } {
        assert_eq!(run(threads), first, "{threads} threads");
    }
}

#[test]
fn dropping_the_world_after_the_game_fires_every_removal_hook() {
    use std::sync::atomic::{AtomicI64, Ordering};
    use std::sync::Arc;
    let live = Arc::new(AtomicI64::new(0));
    let mut world = world();
    // Count units in and out on top of the game's hooks, by wrapping them.
    let game = world
        .hooks_of(world.components().id_of::<Unit>().unwrap())
        .unwrap()
        .clone();
    let (add, remove) = (live.clone(), live.clone());
    let (game_add, game_insert, game_remove) = (
        game.get(doecs::HookKind::Add).unwrap().clone(),
        game.get(doecs::HookKind::Insert).unwrap().clone(),
        game.get(doecs::HookKind::Remove).unwrap().clone(),
    );
    world.set_hooks::<Unit>(
        ComponentHooks::new()
            .on_add(move |ctx| {
                add.fetch_add(1, Ordering::SeqCst);
                game_add(ctx);
            })
            .on_insert(move |ctx| game_insert(ctx))
            .on_remove(move |ctx| {
                remove.fetch_sub(1, Ordering::SeqCst);
                game_remove(ctx);
            }),
    );
    let mut schedule = schedule(2);
    for _ in 0..scale().frames.min(20) {
        schedule.run(&mut world).unwrap();
    }
    let units = world.query::<&Unit>().iter().count() as i64;
    assert!(units > 0);
    assert_eq!(live.load(Ordering::SeqCst), units);
    drop(world);
    assert_eq!(live.load(Ordering::SeqCst), 0);
}

/// Hooks fired by a schedule's commands: each once per event, with the
/// entity, component and value the event concerns.
#[test]
fn a_schedule_commands_parameter_fires_hooks_once() {
    use doecs::{ComponentId, HookContext};
    use std::sync::{Arc, Mutex};
    #[derive(Clone, Copy, Debug, PartialEq)]
    struct A(u32);
    #[derive(Clone, Copy, Debug, PartialEq)]
    struct B(u32);
    #[derive(Default)]
    struct Frame(u32);
    type Rec = (&'static str, Entity, ComponentId, u32);
    type Log = Arc<Mutex<Vec<Rec>>>;
    fn recorder(log: &Log, read: fn(&WorldCore, Entity) -> u32) -> ComponentHooks {
        let hook = |kind: &'static str| {
            let log = log.clone();
            move |ctx: &mut HookContext<'_>| {
                let v = read(ctx.world, ctx.entity);
                log.lock()
                    .unwrap()
                    .push((kind, ctx.entity, ctx.component, v));
            }
        };
        ComponentHooks::new()
            .on_add(hook("add"))
            .on_insert(hook("insert"))
            .on_replace(hook("replace"))
            .on_remove(hook("remove"))
    }
    fn cycle(mut commands: Commands, q: Query<(Entity, &A)>, mut frame: ResMut<Frame>) {
        for (e, a) in q.iter() {
            if a.0 % 2 == 0 {
                commands.despawn(e);
            } else {
                commands.insert_one(e, A(a.0 + 1));
                commands.insert_one(e, B(a.0));
            }
        }
        frame.0 += 1;
        commands.spawn((A(frame.0 * 10 + 1),));
    }
    let log = Log::default();
    let mut world = World::new();
    world.set_hooks::<A>(recorder(&log, |w, e| w.get::<A>(e).unwrap().0));
    world.set_hooks::<B>(recorder(&log, |w, e| w.get::<B>(e).unwrap().0));
    let (a, b) = (world.component_id::<A>(), world.component_id::<B>());
    world.insert_resource(Frame::default());
    let mut schedule = Schedule::with_threads(if cfg!(miri) { 2 } else { 4 });
    schedule.add_system(cycle).unwrap();
    let frames = 4;
    for _ in 0..frames {
        schedule.run(&mut world).unwrap();
    }
    world.check_invariants();
    let calls = std::mem::take(&mut *log.lock().unwrap());
    // Each frame spawns one entity with an odd A; the next frame makes it
    // even and gives it B; the one after despawns it.
    let adds: Vec<Entity> = calls
        .iter()
        .filter(|c| c.0 == "add" && c.2 == a)
        .map(|c| c.1)
        .collect();
    assert_eq!(adds.len(), frames);
    for (k, &e) in adds.iter().enumerate() {
        let v = (k as u32 + 1) * 10 + 1;
        let of_e: Vec<Rec> = calls.iter().copied().filter(|c| c.1 == e).collect();
        let mut want = vec![("add", e, a, v), ("insert", e, a, v)];
        if k + 1 < frames {
            want.extend([
                ("replace", e, a, v),
                ("insert", e, a, v + 1),
                ("add", e, b, v),
                ("insert", e, b, v),
            ]);
        }
        if k + 2 < frames {
            want.extend([
                ("replace", e, a, v + 1),
                ("replace", e, b, v),
                ("remove", e, a, v + 1),
                ("remove", e, b, v),
            ]);
        }
        assert_eq!(of_e, want, "entity {k}");
    }
    assert_eq!(world.len(), 2);
    assert_eq!(world.entities().reserved_count(), 0);
}

/// A hook that panics while a schedule applies commands: reported as that
/// system's panic, the rest of the commands dropped, the spawn ids settled,
/// and the schedule usable afterwards.
#[test]
fn a_panicking_hook_in_a_schedule_leaves_the_schedule_usable() {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;
    #[derive(Clone, Copy, Debug, PartialEq)]
    struct A(u32);
    #[derive(Clone, Copy, Debug, PartialEq)]
    struct B(u32);
    let armed = Arc::new(AtomicBool::new(true));
    let mut world = World::new();
    let a = armed.clone();
    world.set_hooks::<A>(ComponentHooks::new().on_add(move |_| {
        if a.load(Ordering::SeqCst) {
            panic!("A failed");
        }
    }));
    fn spawner(mut commands: Commands) {
        commands.spawn((A(1),));
        commands.spawn((B(1),));
    }
    fn other(mut commands: Commands) {
        commands.spawn((B(2),));
    }
    let mut schedule = Schedule::with_threads(2);
    schedule.add_system(spawner).unwrap();
    schedule.add_system(other).unwrap();
    match schedule.run(&mut world) {
        Err(doecs::ScheduleError::SystemPanicked {
            system, message, ..
        }) => {
            assert!(system.ends_with("spawner"), "{system}");
            assert_eq!(message, "A failed");
        }
        other => panic!("{other:?}"),
    }
    world.check_invariants();
    assert_eq!(world.entities().reserved_count(), 0, "no id left reserved");
    // The spawn before the panic is complete; the rest were dropped.
    assert_eq!(world.len(), 1);
    armed.store(false, Ordering::SeqCst);
    for _ in 0..2 {
        schedule.run(&mut world).unwrap();
    }
    world.check_invariants();
    assert_eq!(world.entities().reserved_count(), 0);
    assert_eq!(world.query::<&A>().iter().count(), 3);
    assert_eq!(world.query::<&B>().iter().count(), 4);
}
