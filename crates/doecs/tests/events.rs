//! Events and removed-component logs, read by systems: each reader sees
//! each event (or loss) exactly once, in order, across frames.

use doecs::prelude::*;
use doecs::{EventCursor, RemovedComponents, SystemDesc};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

/// A log the systems of a test write and the test reads.
type Shared<T> = Arc<Mutex<Vec<T>>>;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Ev(u32);

#[derive(Clone, Copy, Debug, PartialEq)]
struct Health(u32);
#[derive(Clone, Copy, Debug, PartialEq)]
struct Other(u32);

/// What one reader saw, one list per schedule run.
type Seen = Arc<Mutex<Vec<Vec<u32>>>>;

/// A reader system named `name` that appends what it reads to `seen`, one
/// list per run.
fn reader(name: &str, seen: &Seen) -> SystemDesc {
    let seen = seen.clone();
    (move |mut events: EventReader<Ev>| {
        let got: Vec<u32> = events.read().map(|e| e.0).collect();
        assert!(events.is_empty(), "read everything");
        assert_eq!(events.missed(), 0);
        seen.lock().unwrap().push(got);
    })
    .named(name)
}

/// A writer system named `name` that sends `base + 10 * run + k` for `k` in
/// `0..per_run` each run.
fn writer(name: &str, base: u32, per_run: u32) -> SystemDesc {
    let mut run = 0u32;
    (move |mut events: EventWriter<Ev>| {
        for k in 0..per_run {
            events.send(Ev(base + 10 * run + k));
        }
        run += 1;
    })
    .named(name)
}

/// One frame of a game loop: the schedule's run, then the once-per-frame
/// turnover of the event buffers.
fn frame(schedule: &mut Schedule, world: &mut World) {
    schedule.run(world).unwrap();
    world.update_events();
}

fn take(seen: &Seen) -> Vec<Vec<u32>> {
    std::mem::take(&mut *seen.lock().unwrap())
}

fn threads() -> usize {
    if cfg!(miri) {
        2
    } else {
        4
    }
}

#[test]
fn a_reader_after_its_writer_sees_each_event_in_the_frame_it_was_sent() {
    let seen = Seen::default();
    let mut world = World::new();
    let mut schedule = Schedule::with_threads(threads());
    // Added reader first: the plan still puts the writer before it.
    schedule.add_system(reader("reader", &seen)).unwrap();
    schedule.add_system(writer("writer", 0, 2)).unwrap();
    for _ in 0..4 {
        frame(&mut schedule, &mut world);
    }
    assert_eq!(
        take(&seen),
        vec![vec![0, 1], vec![10, 11], vec![20, 21], vec![30, 31]]
    );
    let plan = schedule.plan().unwrap().to_string();
    assert!(plan.contains("writer"), "{plan}");
}

#[test]
fn a_reader_before_its_writer_sees_the_events_next_frame() {
    let seen = Seen::default();
    let mut world = World::new();
    let mut schedule = Schedule::with_threads(threads());
    schedule
        .add_system(reader("reader", &seen).before("writer"))
        .unwrap();
    schedule.add_system(writer("writer", 0, 2)).unwrap();
    for _ in 0..4 {
        frame(&mut schedule, &mut world);
    }
    assert_eq!(
        take(&seen),
        vec![vec![], vec![0, 1], vec![10, 11], vec![20, 21]]
    );
    // Still there for one more run, then gone.
    assert_eq!(world.resource::<Events<Ev>>().unwrap().len(), 2);
}

#[test]
fn writers_before_and_after_the_reader_are_seen_once_in_send_order() {
    let seen = Seen::default();
    let mut world = World::new();
    let mut schedule = Schedule::with_threads(threads());
    schedule.add_system(writer("early", 100, 1)).unwrap();
    schedule
        .add_system(reader("reader", &seen).before("late"))
        .unwrap();
    schedule.add_system(writer("late", 200, 2)).unwrap();
    for _ in 0..4 {
        frame(&mut schedule, &mut world);
    }
    // Run r: the late writer's events of run r - 1 (sent first), then the
    // early writer's of run r.
    assert_eq!(
        take(&seen),
        vec![
            vec![100],
            vec![200, 201, 110],
            vec![210, 211, 120],
            vec![220, 221, 130],
        ]
    );
}

#[test]
fn two_readers_each_see_everything_once() {
    let (one, two) = (Seen::default(), Seen::default());
    let mut world = World::new();
    let mut schedule = Schedule::with_threads(threads());
    schedule.add_system(reader("one", &one)).unwrap();
    schedule
        .add_system(reader("two", &two).before("w"))
        .unwrap();
    schedule.add_system(writer("w", 0, 3)).unwrap();
    for _ in 0..3 {
        frame(&mut schedule, &mut world);
    }
    let flat = |v: Vec<Vec<u32>>| v.into_iter().flatten().collect::<Vec<u32>>();
    assert_eq!(flat(take(&one)), [0, 1, 2, 10, 11, 12, 20, 21, 22]);
    // The second reader runs before the writer: the last run's events are
    // still to come.
    assert_eq!(flat(take(&two)), [0, 1, 2, 10, 11, 12]);
    frame(&mut schedule, &mut world);
    assert_eq!(flat(take(&two)), [20, 21, 22]);
    assert_eq!(flat(take(&one)), [30, 31, 32]);
}

#[test]
fn events_are_dropped_after_every_reader_had_one_chance() {
    // The reader reads only while `reading` is set; otherwise it only
    // reports how many it missed.
    let reading = Arc::new(AtomicBool::new(true));
    let log: Shared<(u64, Vec<u32>)> = Default::default();
    let (r, l) = (reading.clone(), log.clone());
    let lazy = move |mut events: EventReader<Ev>| {
        if r.load(Ordering::SeqCst) {
            let missed = events.missed();
            let got = events.read().map(|e| e.0).collect();
            l.lock().unwrap().push((missed, got));
        }
    };
    let mut world = World::new();
    let mut schedule = Schedule::with_threads(threads());
    schedule.add_system(writer("w", 0, 1)).unwrap();
    schedule.add_system(lazy.named("lazy")).unwrap();
    // Run 0 read; run 1 skipped: its event is still there in run 2.
    for run in 0..3 {
        reading.store(run != 1, Ordering::SeqCst);
        frame(&mut schedule, &mut world);
    }
    assert_eq!(
        std::mem::take(&mut *log.lock().unwrap()),
        vec![(0, vec![0]), (0, vec![10, 20])]
    );
    // Runs 3 and 4 skipped: run 3's event was dropped at the end of run 4.
    for run in 3..6 {
        reading.store(run == 5, Ordering::SeqCst);
        frame(&mut schedule, &mut world);
    }
    assert_eq!(
        std::mem::take(&mut *log.lock().unwrap()),
        vec![(1, vec![40, 50])]
    );
    // Run 5's event is kept through one more run, in which nobody sends.
    assert_eq!(world.resource::<Events<Ev>>().unwrap().len(), 1);
    let mut quiet = Schedule::with_threads(1);
    quiet.add_system(|_: EventReader<Ev>| {}).unwrap();
    frame(&mut quiet, &mut world);
    assert!(world.resource::<Events<Ev>>().unwrap().is_empty());
}

#[test]
fn a_reader_added_later_reads_what_is_still_kept_and_counts_the_rest() {
    let mut world = World::new();
    let mut writes = Schedule::with_threads(1);
    writes.add_system(writer("w", 0, 2)).unwrap();
    for _ in 0..3 {
        frame(&mut writes, &mut world);
    }
    // Kept: run 2's events only (run 1's were dropped at the end of run 2).
    let got: Shared<(u64, usize, Vec<u32>)> = Default::default();
    let g = got.clone();
    let mut reads = Schedule::with_threads(1);
    reads
        .add_system(
            (move |mut events: EventReader<Ev>| {
                let (missed, len) = (events.missed(), events.len());
                let read = events.read().map(|e| e.0).collect();
                g.lock().unwrap().push((missed, len, read));
            })
            .named("late reader"),
        )
        .unwrap();
    frame(&mut reads, &mut world);
    frame(&mut reads, &mut world);
    assert_eq!(
        std::mem::take(&mut *got.lock().unwrap()),
        vec![(4, 2, vec![20, 21]), (0, 0, vec![])]
    );
}

#[test]
fn events_sent_directly_are_read_with_a_cursor_outside_any_schedule() {
    let mut world = World::new();
    let mut cursor = world.event_cursor::<Ev>();
    world.send_event(Ev(1));
    world.send_event(Ev(2));
    let read = |cursor: &mut EventCursor<Ev>, world: &World| -> Vec<u32> {
        let events = world.resource::<Events<Ev>>().unwrap();
        cursor.read(events).map(|e| e.0).collect()
    };
    assert_eq!(read(&mut cursor, &world), [1, 2]);
    assert_eq!(read(&mut cursor, &world), Vec::<u32>::new(), "each once");

    // A second cursor starts after what was sent so far; a copy of the
    // first goes on from where it was.
    let mut late = world.event_cursor::<Ev>();
    let mut copy = cursor.clone();
    world.update_events();
    world
        .resource_mut::<Events<Ev>>()
        .unwrap()
        .send_batch([Ev(3), Ev(4)]);
    assert_eq!(read(&mut cursor, &world), [3, 4]);
    assert_eq!(read(&mut late, &world), [3, 4]);
    assert_eq!(read(&mut copy, &world), [3, 4]);
    // From the start: everything still kept.
    let mut all = EventCursor::<Ev>::default();
    assert_eq!(read(&mut all, &world), [1, 2, 3, 4]);

    // Two updates drop everything; a cursor that had not read counts them.
    let mut fresh = EventCursor::<Ev>::default();
    world.send_event(Ev(5));
    world.update_events();
    world.update_events();
    let events = world.resource::<Events<Ev>>().unwrap();
    assert!(events.is_empty());
    assert_eq!(events.oldest_number(), 5);
    assert_eq!(events.next_number(), 5);
    assert_eq!(fresh.missed(events), 5);
    assert_eq!(cursor.missed(events), 1, "Ev(5) was never read");
    assert_eq!(read(&mut fresh, &world), Vec::<u32>::new());
    let events = world.resource::<Events<Ev>>().unwrap();
    assert_eq!(fresh.missed(events), 0);

    // A schedule's reader sees events sent directly before its run.
    let seen = Seen::default();
    let mut schedule = Schedule::with_threads(1);
    schedule.add_system(reader("reader", &seen)).unwrap();
    frame(&mut schedule, &mut world);
    world.send_event(Ev(6));
    frame(&mut schedule, &mut world);
    frame(&mut schedule, &mut world);
    assert_eq!(take(&seen), vec![vec![], vec![6], vec![]]);
}

#[test]
fn send_batch_and_deref_of_a_writer() {
    let seen = Seen::default();
    let mut world = World::new();
    let mut schedule = Schedule::with_threads(1);
    let batch = |mut w: EventWriter<Ev>| {
        let before = w.next_number();
        w.send_batch((0..3).map(Ev));
        assert_eq!(w.next_number(), before + 3);
    };
    schedule.add_system(batch.named("batch")).unwrap();
    schedule.add_system(reader("reader", &seen)).unwrap();
    frame(&mut schedule, &mut world);
    frame(&mut schedule, &mut world);
    assert_eq!(take(&seen), vec![vec![0, 1, 2], vec![0, 1, 2]]);
}

#[test]
fn one_schedule_on_two_worlds_reads_each_worlds_events_once() {
    // The reader's place is per world, like the rest of a system's state.
    let seen = Seen::default();
    let mut schedule = Schedule::with_threads(threads());
    schedule.add_system(reader("reader", &seen)).unwrap();
    let (mut a, mut b) = (World::new(), World::new());
    for round in 0..5u32 {
        a.send_event(Ev(round));
        b.send_event(Ev(100 + round));
        frame(&mut schedule, &mut a);
        frame(&mut schedule, &mut b);
    }
    let runs = take(&seen);
    let on_a: Vec<u32> = runs.iter().step_by(2).flatten().copied().collect();
    let on_b: Vec<u32> = runs.iter().skip(1).step_by(2).flatten().copied().collect();
    assert_eq!(on_a, [0, 1, 2, 3, 4]);
    assert_eq!(on_b, [100, 101, 102, 103, 104]);
}

#[test]
fn a_reader_moves_only_past_the_events_it_takes() {
    let got: Shared<Vec<u32>> = Default::default();
    let g = got.clone();
    let one_at_a_time = move |mut events: EventReader<Ev>| {
        let first = events.read().next().map(|e| e.0);
        let second = events.read().next().map(|e| e.0);
        g.lock()
            .unwrap()
            .push(first.into_iter().chain(second).collect());
    };
    let mut world = World::new();
    let mut schedule = Schedule::with_threads(1);
    schedule
        .add_system(one_at_a_time.named("two per run"))
        .unwrap();
    world.send_event(Ev(0));
    world.send_event(Ev(1));
    world.send_event(Ev(2));
    frame(&mut schedule, &mut world);
    frame(&mut schedule, &mut world);
    assert_eq!(
        std::mem::take(&mut *got.lock().unwrap()),
        vec![vec![0, 1], vec![2]],
        "every event once, however the iterator is consumed"
    );
}

#[test]
fn an_event_sent_in_one_schedule_is_read_in_the_next_schedule_of_the_frame() {
    // An update schedule sends an exit event; a "last" schedule of the same
    // frame reads it. Running a schedule must not drop it.
    #[derive(Debug)]
    struct Exit;
    let exits = Arc::new(Mutex::new(0u32));
    let mut update = Schedule::with_threads(threads());
    let mut frames = 0u32;
    update
        .add_system(
            (move |mut out: EventWriter<Exit>| {
                frames += 1;
                if frames == 3 {
                    out.send(Exit);
                }
            })
            .named("game"),
        )
        .unwrap();
    let mut last = Schedule::with_threads(threads());
    let e = exits.clone();
    last.add_system(
        (move |mut exit: EventReader<Exit>| *e.lock().unwrap() += exit.read().count() as u32)
            .named("watch exit"),
    )
    .unwrap();
    let mut world = World::new();
    // The loop itself also watches for the exit, after the frame's schedules.
    let mut loop_cursor = world.event_cursor::<Exit>();
    let mut ran = 0;
    let mut loop_saw = 0;
    while loop_saw == 0 && ran < 10 {
        update.run(&mut world).unwrap();
        last.run(&mut world).unwrap();
        loop_saw = loop_cursor
            .read(world.resource::<Events<Exit>>().unwrap())
            .count();
        world.update_events();
        ran += 1;
    }
    assert_eq!(ran, 3, "the loop stops in the frame the exit was sent");
    assert_eq!(*exits.lock().unwrap(), 1, "the last schedule read it too");
    // Two frames later it is gone, read or not.
    world.update_events();
    world.update_events();
    assert!(world.resource::<Events<Exit>>().unwrap().is_empty());
    // Without update_events, schedules alone keep it.
    world.send_event(Exit);
    for _ in 0..5 {
        update.run(&mut world).unwrap();
    }
    assert_eq!(world.resource::<Events<Exit>>().unwrap().len(), 1);
}

/// Appends what `gone` reports to a shared list, one list per run.
fn removals(name: &str, seen: &Arc<Mutex<Vec<Vec<Entity>>>>) -> SystemDesc {
    let seen = seen.clone();
    (move |gone: RemovedComponents<Health>| {
        let now: Vec<Entity> = gone.iter().collect();
        assert_eq!(gone.len(), now.len());
        assert_eq!(gone.is_empty(), now.is_empty());
        seen.lock().unwrap().push(now);
    })
    .named(name)
}

#[test]
fn removed_components_reports_each_loss_once_on_every_path() {
    let seen: Arc<Mutex<Vec<Vec<Entity>>>> = Default::default();
    let mut world = World::new();
    let mut schedule = Schedule::with_threads(threads());
    schedule.add_system(removals("funerals", &seen)).unwrap();
    // Before the first run nobody tracks Health: this loss is not logged.
    let early = world.spawn((Health(0),));
    world.despawn(early).unwrap();
    schedule.run(&mut world).unwrap();

    let es = world.spawn_batch((0..9).map(|i| (Health(i), Other(i))));
    let plain = world.spawn((Other(99),));
    let run = |world: &mut World, schedule: &mut Schedule| -> Vec<Entity> {
        schedule.run(world).unwrap();
        seen.lock().unwrap().last().unwrap().clone()
    };
    assert_eq!(run(&mut world, &mut schedule), vec![]);

    world.remove_one::<Health>(es[0]).unwrap();
    world.despawn(es[1]).unwrap();
    world.despawn(plain).unwrap(); // no Health: not a loss of Health
    world.insert_one(es[2], Health(50)).unwrap(); // a replacement: not a loss
    let _: (Health,) = world.exchange(es[3], (Other(7),)).unwrap();
    world.take::<(Other,)>(es[4]).unwrap();
    assert!(
        world.remove_one::<Health>(es[0]).is_err(),
        "refused: no loss"
    );
    assert_eq!(
        run(&mut world, &mut schedule),
        vec![es[0], es[1], es[3], es[4]]
    );
    assert_eq!(run(&mut world, &mut schedule), vec![], "each once");

    let mut cmd = CommandBuffer::new();
    cmd.remove_one::<Health>(es[5]);
    cmd.despawn(es[6]);
    cmd.despawn(es[6]); // fails: one loss only
    world.apply(&mut cmd);
    world.despawn_batch(&[es[7], es[7]]);
    assert_eq!(run(&mut world, &mut schedule), vec![es[5], es[6], es[7]]);

    // Re-added and lost again: a second loss.
    world.insert_one(es[0], Health(1)).unwrap();
    world.remove::<(Health,)>(es[0]).unwrap();
    world.clear();
    let mut want = vec![es[0]];
    want.extend([es[2], es[8]]);
    let mut got = run(&mut world, &mut schedule);
    // `clear` despawns in storage order.
    got[1..].sort();
    assert_eq!(got, want);
    assert_eq!(run(&mut world, &mut schedule), vec![]);
    world.check_invariants();
}

#[test]
fn removals_made_by_commands_in_a_schedule_are_read_once() {
    // A reaper despawns (through commands) every entity whose health hit
    // zero; a decay system lowers health; a counter reads the losses. Over
    // the frames, every reaped entity is read exactly once, by the end of
    // the run after the one that reaped it.
    let frames = if cfg!(miri) { 6 } else { 30 };
    let seen: Arc<Mutex<Vec<Vec<Entity>>>> = Default::default();
    let reaped: Arc<Mutex<Vec<Vec<Entity>>>> = Default::default();
    let mut world = World::new();
    let mut schedule = Schedule::with_threads(threads());
    let r = reaped.clone();
    let reap = move |q: Query<(Entity, &Health)>, mut commands: Commands| {
        let dead: Vec<Entity> = q.iter().filter(|(_, h)| h.0 == 0).map(|(e, _)| e).collect();
        for &e in &dead {
            commands.despawn(e);
        }
        r.lock().unwrap().push(dead);
    };
    let decay = |mut q: Query<&mut Health>| q.for_each(|h| h.0 = h.0.saturating_sub(1));
    let spawn = {
        let mut n = 0u32;
        move |mut commands: Commands| {
            commands.spawn((Health(n % 4),));
            commands.spawn((Health(n % 3),));
            n += 1;
        }
    };
    schedule.add_system(decay.named("decay")).unwrap();
    schedule
        .add_system(reap.named("reap").after("decay"))
        .unwrap();
    schedule.add_system(spawn.named("spawn")).unwrap();
    schedule
        .add_system(removals("read", &seen).after("reap"))
        .unwrap();
    for _ in 0..frames {
        schedule.run(&mut world).unwrap();
    }
    let reaped = reaped.lock().unwrap().clone();
    let seen = seen.lock().unwrap().clone();
    assert_eq!(reaped.len(), frames);
    assert_eq!(seen.len(), frames);
    assert!(reaped.iter().map(Vec::len).sum::<usize>() > 0);
    // The reader is ordered after the reaper, which records commands: an
    // automatic sync point applies the despawns between them, so the reader
    // sees them, in order, in the same run.
    for r in 0..frames {
        assert_eq!(seen[r], reaped[r], "run {r}");
    }
    world.check_invariants();
}

#[test]
fn removal_logs_outside_a_schedule() {
    let mut world = World::new();
    world.track_removals::<Health>();
    let a = world.spawn((Health(1),));
    let b = world.spawn((Health(2), Other(0)));
    world.despawn(a).unwrap();
    world.remove_one::<Health>(b).unwrap();
    world.remove_one::<Other>(b).unwrap();
    let log: Vec<Entity> = world.removed::<Health>().map(|(e, _)| e).collect();
    assert_eq!(log, vec![a, b]);
    assert_eq!(world.removed::<Other>().count(), 0, "Other is not tracked");
}
