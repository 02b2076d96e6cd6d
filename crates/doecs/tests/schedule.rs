//! Systems, the schedule and command buffers, end to end.

use doecs::{system, CommandBuffer, Entity, Schedule, ScheduleError, World};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

#[derive(Clone, Copy, Debug, PartialEq)]
struct Pos(f32);
#[derive(Clone, Copy, Debug, PartialEq)]
struct Vel(f32);
#[derive(Clone, Copy, Debug, PartialEq)]
struct Age(u32);
#[derive(Clone, Copy, Debug, PartialEq)]
struct Spawned;
struct Dt(f32);
#[derive(Default)]
struct Total(f64);

/// A schedule exercising every kind of system: conflicting writers ordered by
/// insertion, readers, a resource writer, parallel loops and commands.
fn busy_schedule(threads: usize) -> Schedule {
    let mut s = Schedule::with_threads(threads);
    s.add_system(
        system("integrate")
            .query::<(&mut Pos, &Vel)>()
            .reads_resource::<Dt>()
            .run(|ctx| {
                let dt = ctx.resource::<Dt>().0;
                ctx.query::<(&mut Pos, &Vel)>()
                    .par_for_each(|(p, v)| p.0 += v.0 * dt);
            }),
    )
    .unwrap();
    s.add_system(system("age").par_for_each_chunk::<&mut Age>(|ages| {
        for a in ages {
            a.0 += 1;
        }
    }))
    .unwrap();
    s.add_system(system("damp").for_each::<&mut Vel>(|v| v.0 *= 0.99))
        .unwrap();
    s.add_system(
        system("sum")
            .reads::<Pos>()
            .writes_resource::<Total>()
            .run(|ctx| {
                let mut sum = 0.0f64;
                ctx.query::<&Pos>().for_each(|p| sum += p.0 as f64);
                ctx.resource_mut::<Total>().0 += sum;
            }),
    )
    .unwrap();
    s.add_system(
        system("reap")
            .reads::<Age>()
            .reads::<Pos>()
            .commands()
            .run(|ctx| {
                let mut doomed = Vec::new();
                let mut born = Vec::new();
                ctx.query::<(Entity, &Age, &Pos)>().for_each(|(e, a, p)| {
                    if a.0 % 7 == 3 && (p.0 as i64) % 3 == 0 {
                        doomed.push(e);
                    }
                    if a.0 % 5 == 1 && (p.0 as i64) % 4 == 1 {
                        born.push(p.0);
                    }
                });
                for e in doomed {
                    ctx.commands().despawn(e);
                }
                for x in born {
                    let e = ctx.spawn((Pos(x), Vel(-x / 100.0), Age(0)));
                    ctx.commands().insert_one(e, Spawned);
                }
            }),
    )
    .unwrap();
    s
}

fn populated_world() -> World {
    let mut world = World::new();
    world.insert_resource(Dt(0.25));
    world.insert_resource(Total::default());
    let n = if cfg!(miri) { 60 } else { 3000 };
    world.spawn_batch((0..n).map(|i| (Pos(i as f32), Vel((i % 13) as f32 - 6.0), Age(i % 11))));
    world.spawn_batch((0..n / 6).map(|i| (Pos(i as f32 * 0.5), Age(i))));
    world
}

/// Everything observable, in a canonical order.
/// One entity's observable state: id bits, Pos bits, Vel bits, Age, Spawned.
type Row = (u64, u32, Option<u32>, u32, bool);

fn snapshot(world: &mut World) -> (Vec<Row>, u64) {
    let mut rows: Vec<_> = world
        .query::<(Entity, &Pos, Option<&Vel>, &Age, Option<&Spawned>)>()
        .iter()
        .map(|(e, p, v, a, s)| {
            (
                e.to_bits(),
                p.0.to_bits(),
                v.map(|v| v.0.to_bits()),
                a.0,
                s.is_some(),
            )
        })
        .collect();
    rows.sort_by_key(|r| r.0);
    let total = world.resource::<Total>().unwrap().0.to_bits();
    (rows, total)
}

#[test]
fn results_are_identical_at_1_2_and_4_threads() {
    let frames = if cfg!(miri) { 2 } else { 20 };
    let mut results = Vec::new();
    for threads in [1, 2, 4] {
        let mut world = populated_world();
        let mut schedule = busy_schedule(threads);
        for _ in 0..frames {
            schedule.run(&mut world).unwrap();
            world.check_invariants();
        }
        results.push(snapshot(&mut world));
    }
    let initial = populated_world().len();
    assert!(
        results[0].0.len() > initial / 2,
        "the workload keeps most entities"
    );
    assert_eq!(results[0], results[1], "1 vs 2 threads");
    assert_eq!(results[0], results[2], "1 vs 4 threads");
}

/// The original bug: a schedule run on world A and then on world B panicked
/// inside its first system (its query caches kept A's id), and the caller saw
/// `SystemPanicked`, which named the wrong cause. A schedule now keeps what
/// its systems know about each world apart, so it runs on any world.
#[test]
fn one_schedule_runs_on_several_worlds() {
    let frames = if cfg!(miri) { 2 } else { 10 };
    // Reference: each world run alone by its own schedule.
    let alone = |extra: usize| {
        let mut world = populated_world();
        world.spawn_batch((0..extra).map(|i| (Vel(i as f32),)));
        let mut schedule = busy_schedule(2);
        for _ in 0..frames {
            schedule.run(&mut world).unwrap();
        }
        snapshot(&mut world)
    };
    let (want_a, want_b) = (alone(0), alone(7));
    // The same two worlds, interleaved on one schedule.
    let mut a = populated_world();
    let mut b = populated_world();
    // World B gets an extra archetype first, so its archetype ids differ.
    b.spawn_batch((0..7).map(|i| (Vel(i as f32),)));
    let mut schedule = busy_schedule(2);
    for _ in 0..frames {
        schedule.run(&mut a).unwrap();
        schedule.run(&mut b).unwrap();
        a.check_invariants();
        b.check_invariants();
    }
    assert_eq!(snapshot(&mut a), want_a);
    assert_eq!(snapshot(&mut b), want_b);
}

#[test]
fn non_conflicting_systems_overlap_in_time() {
    // Each system raises its flag, then waits (bounded) for the other's: they
    // can only both see each other if they run at the same time.
    let flags = Arc::new([AtomicBool::new(false), AtomicBool::new(false)]);
    let saw = Arc::new(AtomicUsize::new(0));
    let mut s = Schedule::with_threads(2);
    for (me, other) in [(0usize, 1usize), (1, 0)] {
        let (flags, saw) = (flags.clone(), saw.clone());
        s.add_system(system(format!("s{me}")).run(move |_| {
            flags[me].store(true, Ordering::SeqCst);
            let start = Instant::now();
            while start.elapsed() < Duration::from_secs(10) {
                if flags[other].load(Ordering::SeqCst) {
                    saw.fetch_add(1, Ordering::SeqCst);
                    return;
                }
                std::thread::yield_now();
            }
        }))
        .unwrap();
    }
    s.run(&mut World::new()).unwrap();
    assert_eq!(saw.load(Ordering::SeqCst), 2);
}

#[test]
fn conflicting_systems_run_in_insertion_order_unless_constrained() {
    let log = Arc::new(std::sync::Mutex::new(Vec::new()));
    let mut s = Schedule::with_threads(4);
    for name in ["a", "b", "c"] {
        let log = log.clone();
        let desc = system(name)
            .writes::<Pos>()
            .run(move |_| log.lock().unwrap().push(name));
        let desc = if name == "a" { desc.after("c") } else { desc };
        s.add_system(desc).unwrap();
    }
    let mut world = World::new();
    for _ in 0..5 {
        s.run(&mut world).unwrap();
    }
    let log = log.lock().unwrap();
    // `a` after `c` is explicit; `a` and `b` conflict and neither is ordered
    // yet, so insertion order puts `a` first; `c` then precedes `b` through `a`.
    for run in log.chunks(3) {
        assert_eq!(run, ["c", "a", "b"]);
    }
    let plan = s.plan().unwrap().to_string();
    assert!(plan.contains("c -> a: explicit"), "{plan}");
    assert!(plan.contains("a -> b: both access component"), "{plan}");
    assert!(plan.contains("c -> b: both access component"), "{plan}");
    assert!(plan.contains("already ordered by constraints"), "{plan}");
}

#[test]
fn plan_shows_stages() {
    let mut s = Schedule::with_threads(2);
    s.add_system(system("w1").writes::<Pos>().run(|_| {}))
        .unwrap();
    s.add_system(system("r1").reads::<Vel>().run(|_| {}))
        .unwrap();
    s.add_system(system("r2").reads::<Pos>().run(|_| {}))
        .unwrap();
    s.add_sync_point();
    s.add_system(system("x").exclusive(|_| {})).unwrap();
    let text = s.plan().unwrap().to_string();
    assert!(text.contains("stage 0: w1, r1"), "{text}");
    assert!(text.contains("stage 1: r2"), "{text}");
    assert!(text.contains("w1 -> r2: both access component"), "{text}");
    assert!(text.contains("exclusive `x`"), "{text}");
}

#[test]
fn build_errors_are_clear() {
    let mut s = Schedule::new();
    s.add_system(system("a").run(|_| {}).after("b")).unwrap();
    s.add_system(system("b").run(|_| {}).after("c")).unwrap();
    s.add_system(system("c").run(|_| {}).after("a")).unwrap();
    let err = s.build().unwrap_err();
    match &err {
        ScheduleError::Cycle { cycle } => {
            assert_eq!(cycle.len(), 4);
            assert_eq!(cycle.first(), cycle.last());
        }
        other => panic!("expected a cycle, got {other:?}"),
    }
    assert!(err.to_string().contains("cycle"), "{err}");
    assert!(
        s.run(&mut World::new()).is_err(),
        "running reports it too, no hang"
    );

    let mut s = Schedule::new();
    s.add_system(system("a").run(|_| {}).before("nobody"))
        .unwrap();
    assert_eq!(
        s.build(),
        Err(ScheduleError::UnknownSystem {
            system: "a".into(),
            missing: "nobody".into()
        })
    );

    let mut s = Schedule::new();
    s.add_system(system("a").run(|_| {})).unwrap();
    s.add_system(system("a").run(|_| {})).unwrap();
    assert_eq!(s.build(), Err(ScheduleError::DuplicateName("a".into())));

    let mut s = Schedule::new();
    s.add_system(system("a").run(|_| {})).unwrap();
    s.add_sync_point();
    s.add_system(system("b").run(|_| {}).before("a")).unwrap();
    assert!(matches!(
        s.build(),
        Err(ScheduleError::ContradictsSyncPoint { .. })
    ));

    let mut s = Schedule::new();
    s.add_system(system("a").run(|_| {}).after("a")).unwrap();
    assert!(matches!(s.build(), Err(ScheduleError::Cycle { .. })));
}

#[test]
fn a_panicking_system_is_reported_and_the_world_stays_consistent() {
    struct Explode(bool);
    for threads in [1, 2] {
        let mut world = populated_world();
        world.insert_resource(Explode(true));
        let before = world.len();
        let mut s = Schedule::with_threads(threads);
        s.add_system(system("spawner").commands().run(|ctx| {
            ctx.spawn((Pos(1.0), Age(1)));
        }))
        .unwrap();
        s.add_system(
            system("bomb")
                .writes::<Pos>()
                .reads_resource::<Explode>()
                .run(|ctx| {
                    if ctx.resource::<Explode>().0 {
                        panic!("boom");
                    }
                    ctx.query::<&mut Pos>().for_each(|p| p.0 += 1.0);
                }),
        )
        .unwrap();
        s.add_system(system("after_bomb").reads::<Pos>().run(|_| {}))
            .unwrap();
        s.add_system(system("independent").writes::<Age>().run(|_| {}))
            .unwrap();
        let err = s.run(&mut world).unwrap_err();
        match &err {
            ScheduleError::SystemPanicked {
                system,
                message,
                skipped,
                ..
            } => {
                assert_eq!(system, "bomb");
                assert_eq!(message, "boom");
                assert_eq!(skipped, &vec!["after_bomb".to_owned()]);
            }
            other => panic!("{other:?}"),
        }
        // No command of the failed run applied; the world is whole.
        world.check_invariants();
        assert_eq!(world.len(), before, "the reserved id was given back");
        // The schedule still works once the cause is gone.
        world.resource_mut::<Explode>().unwrap().0 = false;
        let sum = |w: &World| w.query::<&Pos>().iter().map(|p| p.0 as f64).sum::<f64>();
        let (n_before, sum_before) = (world.query::<&Pos>().count(), sum(&world));
        s.run(&mut world).unwrap();
        world.check_invariants();
        // Every Pos moved by 1; the newly spawned one (applied after) adds 1.0.
        assert_eq!(sum(&world), sum_before + n_before as f64 + 1.0);
        assert_eq!(world.len(), before + 1);
    }
}

#[test]
fn undeclared_access_is_refused_with_the_systems_name() {
    let mut world = populated_world();
    let mut s = Schedule::with_threads(2);
    s.add_system(system("sneaky").reads::<Vel>().run(|ctx| {
        ctx.query::<&mut Vel>().for_each(|_| {});
    }))
    .unwrap();
    let err = s.run(&mut world).unwrap_err().to_string();
    assert!(
        err.contains("sneaky") && err.contains("without declaring a write"),
        "{err}"
    );

    let mut s = Schedule::with_threads(1);
    s.add_system(system("no_commands").run(|ctx| {
        ctx.commands();
    }))
    .unwrap();
    let err = s.run(&mut world).unwrap_err().to_string();
    assert!(err.contains("records commands without declaring"), "{err}");

    let mut s = Schedule::with_threads(1);
    s.add_system(system("no_resource").run(|ctx| {
        ctx.resource::<Dt>();
    }))
    .unwrap();
    let err = s.run(&mut world).unwrap_err().to_string();
    assert!(err.contains("reads resource"), "{err}");
}

#[test]
fn sync_points_and_exclusive_systems_see_earlier_commands() {
    let mut world = World::new();
    let seen = Arc::new(AtomicUsize::new(0));
    let mut s = Schedule::with_threads(2);
    s.add_system(system("spawn").commands().run(|ctx| {
        for i in 0..10 {
            ctx.spawn((Age(i),));
        }
    }))
    .unwrap();
    s.add_sync_point();
    let seen2 = seen.clone();
    s.add_system(system("count").reads::<Age>().run(move |ctx| {
        seen2.store(ctx.query::<&Age>().count(), Ordering::SeqCst);
    }))
    .unwrap();
    s.add_system(system("clear_old").exclusive(|world| {
        let old: Vec<Entity> = world
            .query::<(Entity, &Age)>()
            .iter()
            .filter(|(_, a)| a.0 >= 5)
            .map(|(e, _)| e)
            .collect();
        world.despawn_batch(&old);
    }))
    .unwrap();
    let report = s.run(&mut world).unwrap();
    assert_eq!(report.commands.applied, 10);
    assert_eq!(seen.load(Ordering::SeqCst), 10);
    assert_eq!(world.len(), 5);
    s.run(&mut world).unwrap();
    assert_eq!(seen.load(Ordering::SeqCst), 15);
    assert_eq!(world.len(), 10);
    world.check_invariants();
}

#[test]
fn get_and_get_mut_through_the_context() {
    let mut world = World::new();
    let e = world.spawn((Pos(1.0), Vel(2.0)));
    let mut s = Schedule::with_threads(1);
    s.add_system(
        system("copy")
            .writes::<Pos>()
            .reads::<Vel>()
            .run(move |ctx| {
                let v = ctx.get::<Vel>(e).unwrap().0;
                ctx.get_mut::<Pos>(e).unwrap().0 += v;
            }),
    )
    .unwrap();
    let mut s2 = Schedule::with_threads(1);
    s2.add_system(system("peek").reads::<Vel>().run(move |ctx| {
        let _ = ctx.get::<Age>(e);
    }))
    .unwrap();
    s.run(&mut world).unwrap();
    assert_eq!(world.get::<Pos>(e), Ok(&Pos(3.0)));
    let err = s2.run(&mut world).unwrap_err().to_string();
    assert!(
        err.contains("reads component") && err.contains("Age"),
        "{err}"
    );
}

#[test]
fn command_buffer_of_a_dropped_schedule_drops_once() {
    struct Counted(Arc<AtomicUsize>);
    impl Drop for Counted {
        fn drop(&mut self) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }
    let drops = Arc::new(AtomicUsize::new(0));
    let mut world = World::new();
    let mut buffer = CommandBuffer::new();
    let e = buffer.spawn(&world, (Counted(drops.clone()),));
    buffer.despawn(e);
    let report = world.apply(&mut buffer);
    assert_eq!(report.applied, 2);
    assert_eq!(drops.load(Ordering::SeqCst), 1);
    world.check_invariants();
}

#[test]
fn a_schedule_forgets_the_state_of_dropped_worlds() {
    // A game that loads a level each round runs its schedule on a fresh
    // world every time: what the systems keep about each world (query
    // caches, `Local`s, id pools) must go with the world.
    static LIVE: AtomicUsize = AtomicUsize::new(0);
    struct Counted;
    impl Default for Counted {
        fn default() -> Self {
            LIVE.fetch_add(1, Ordering::SeqCst);
            Counted
        }
    }
    impl Drop for Counted {
        fn drop(&mut self) {
            LIVE.fetch_sub(1, Ordering::SeqCst);
        }
    }
    let changed = |q: doecs::Query<&Pos, doecs::Changed<Pos>>,
                   mut runs: doecs::Local<u32>,
                   _counted: doecs::Local<Counted>| {
        *runs += 1;
        assert_eq!(q.iter().count(), if *runs == 1 { 100 } else { 0 });
    };
    let mut s = Schedule::with_threads(2);
    s.add_system(changed).unwrap();
    s.add_system(system("builder").reads::<Pos>().commands().run(|ctx| {
        let _ = ctx.query::<&Pos>().iter().count();
    }))
    .unwrap();
    let rounds = if cfg!(miri) { 20 } else { 2_000 };
    let mut kept = World::new();
    kept.spawn_batch((0..100).map(|i| (Pos(i as f32),)));
    s.run(&mut kept).unwrap();
    for _ in 0..rounds {
        let mut world = World::new();
        world.spawn_batch((0..100).map(|i| (Pos(i as f32),)));
        s.run(&mut world).unwrap();
        s.run(&mut world).unwrap();
        assert!(LIVE.load(Ordering::SeqCst) <= 2, "one Local per live world");
    }
    // The world still alive kept its state: its second run sees no change.
    s.run(&mut kept).unwrap();
    drop(kept);
    let mut last = World::new();
    last.spawn_batch((0..100).map(|i| (Pos(i as f32),)));
    s.run(&mut last).unwrap();
    assert_eq!(
        LIVE.load(Ordering::SeqCst),
        1,
        "only the live world's Local"
    );
}

#[derive(Debug)]
struct Made;

#[test]
fn a_system_ordered_after_one_that_records_commands_sees_them() {
    use doecs::{Commands, Query, SystemConfig};
    use std::sync::Mutex;
    for threads in [1, 2] {
        let counts: Arc<Mutex<Vec<usize>>> = Arc::default();
        let mut world = World::new();
        let mut s = Schedule::with_threads(threads);
        let c = counts.clone();
        // The reader is added first and ordered after the spawner: ordering
        // crosses the automatic sync point between them.
        s.add_system(
            (move |q: Query<&Made>| c.lock().unwrap().push(q.iter().count()))
                .named("count")
                .after("spawn"),
        )
        .unwrap();
        s.add_system(
            (|mut commands: Commands| {
                commands.spawn((Made,));
            })
            .named("spawn"),
        )
        .unwrap();
        s.run(&mut world).unwrap();
        s.run(&mut world).unwrap();
        assert_eq!(*counts.lock().unwrap(), [1, 2], "{threads} threads");
        let plan = s.plan().unwrap().to_string();
        assert!(plan.contains("segment 0:\n  stage 0: spawn"), "{plan}");
        assert!(plan.contains("sync point"), "{plan}");
        assert!(plan.contains("segment 1:\n  stage 0: count"), "{plan}");
    }
}

#[test]
fn ordering_after_a_system_without_commands_adds_no_sync_point() {
    let mut s = Schedule::with_threads(1);
    s.add_system(system("a").writes::<Pos>().run(|_| {}))
        .unwrap();
    s.add_system(system("b").reads::<Pos>().run(|_| {}).after("a"))
        .unwrap();
    let plan = s.plan().unwrap().to_string();
    assert!(!plan.contains("sync point"), "{plan}");
    assert!(plan.contains("stage 1: b"), "{plan}");
}
