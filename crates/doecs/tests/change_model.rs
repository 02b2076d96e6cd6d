//! Model test of change detection: random sequences of writes, structural
//! changes and reader runs, against a naive model that records, for each
//! entity, the step at which its `A` was last added and last changed.
//!
//! Four readers, each with its own boundary (its previous run):
//! - 0: held `QueryState`s iterated through a shared world (the row-stamp
//!   request they file is carried out by the next write);
//! - 1: held `QueryState`s looped with `for_each` through `&mut World`;
//! - 2: `world.query_filtered_mut` (one boundary per query shape), with the
//!   chunk form and `par_for_each`;
//! - 3: a function system in a schedule, ordered after a system that may
//!   write A (of entities with B) and before one that may write A (of
//!   entities without B), beside one that records an insert as a command.
//!
//! At each reader run, the entities its `Changed<A>` and `Added<A>` pass
//! must be exactly those the model stamped after that reader's previous
//! run. Readers are made on their first run, so A may gain row stamps late,
//! after writes and moves that only stamped chunks.
//!
//! Writes through a query follow the documented rule: a `&mut A` item marks
//! its row when it is handed out, written or not.

use doecs::prelude::*;
use doecs::WorldConfig;
use proptest::prelude::*;
use std::collections::HashMap;
use std::sync::Mutex;

#[derive(Clone, Copy, Debug, PartialEq)]
struct A(u32);
#[derive(Clone, Copy, Debug, PartialEq)]
struct B(u64);

#[derive(Clone, Debug)]
enum Op {
    Spawn {
        with_b: bool,
    },
    SpawnBatch {
        n: usize,
        with_b: bool,
    },
    SpawnBOnly,
    InsertA(usize),
    InsertB(usize),
    RemoveA(usize),
    RemoveB(usize),
    Despawn(usize),
    GetMut(usize),
    /// Reads through every read-only path: marks nothing.
    Read(usize),
    /// `get` on a `query_mut::<&mut A>()` for each picked entity.
    QueryGet(Vec<usize>),
    /// The first `k` items of `query_mut::<(Entity, &mut A)>().iter_mut()`.
    QueryTake(usize),
    /// `query_mut::<&mut A>().for_each` writing nothing.
    QueryAll,
    /// `query_filtered_mut::<&mut A, With<B>>().for_each_chunk`.
    ChunkWithB,
    MarkChanged(usize),
    /// A command buffer inserting A on an entity, and maybe spawning one.
    Commands {
        target: usize,
        spawn: bool,
    },
    /// Runs reader 0, 1 or 2.
    Reader(usize),
    /// Runs the schedule (reader 3).
    Schedule {
        before: bool,
        after: bool,
        give: Option<usize>,
    },
}

fn op() -> impl Strategy<Value = Op> {
    let h = 0usize..64;
    prop_oneof![
        4 => any::<bool>().prop_map(|with_b| Op::Spawn { with_b }),
        2 => (1usize..12, any::<bool>()).prop_map(|(n, with_b)| Op::SpawnBatch { n, with_b }),
        1 => Just(Op::SpawnBOnly),
        2 => h.clone().prop_map(Op::InsertA),
        2 => h.clone().prop_map(Op::InsertB),
        1 => h.clone().prop_map(Op::RemoveA),
        2 => h.clone().prop_map(Op::RemoveB),
        2 => h.clone().prop_map(Op::Despawn),
        4 => h.clone().prop_map(Op::GetMut),
        1 => h.clone().prop_map(Op::Read),
        2 => prop::collection::vec(h.clone(), 0..6).prop_map(Op::QueryGet),
        1 => (0usize..20).prop_map(Op::QueryTake),
        1 => Just(Op::QueryAll),
        1 => Just(Op::ChunkWithB),
        2 => h.clone().prop_map(Op::MarkChanged),
        1 => (h.clone(), any::<bool>()).prop_map(|(target, spawn)| Op::Commands { target, spawn }),
        6 => (0usize..3).prop_map(Op::Reader),
        3 => (any::<bool>(), any::<bool>(), prop::option::of(h))
            .prop_map(|(before, after, give)| Op::Schedule { before, after, give }),
    ]
}

/// What the schedule's systems do this run.
#[derive(Default)]
struct Flags {
    before: bool,
    after: bool,
    give: Option<Entity>,
}

/// What the watching system saw in its last run.
#[derive(Default)]
struct Seen(Option<(Vec<Entity>, Vec<Entity>)>);

fn write_before(mut q: Query<&mut A, With<B>>, flags: Res<Flags>) {
    if flags.before {
        q.for_each(|a| a.0 = a.0.wrapping_add(1));
    }
}

fn watch(
    changed: Query<Entity, Changed<A>>,
    added: Query<Entity, Added<A>>,
    mut seen: ResMut<Seen>,
) {
    seen.0 = Some((
        sorted(changed.iter().collect()),
        sorted(added.iter().collect()),
    ));
}

fn write_after(mut q: Query<&mut A, Without<B>>, flags: Res<Flags>) {
    if flags.after {
        q.par_for_each(|a| a.0 = a.0.wrapping_add(1));
    }
}

fn give(mut commands: Commands, flags: Res<Flags>) {
    if let Some(e) = flags.give {
        commands.insert_one(e, A(7));
    }
}

fn sorted(mut v: Vec<Entity>) -> Vec<Entity> {
    v.sort();
    v
}

/// The model's view of one live entity: A's `(added, changed)` steps, if it
/// has A, and whether it has B.
#[derive(Clone, Copy, Debug, Default)]
struct Row {
    a: Option<(u64, u64)>,
    b: bool,
}

type Pair = (QueryState<Entity, Changed<A>>, QueryState<Entity, Added<A>>);

struct Harness {
    world: World,
    schedule: Schedule,
    /// Every entity ever spawned (dead ones included).
    handles: Vec<Entity>,
    model: HashMap<Entity, Row>,
    /// The model's clock: one step per write op (or part of a schedule run)
    /// and per reader run.
    step: u64,
    /// Each reader's previous run (0: never ran, so it sees everything).
    last: [u64; 4],
    held: [Option<Pair>; 2],
    /// Whether A kept row stamps from the start, so the world's stamps
    /// must order like the model's.
    exact_stamps: bool,
}

impl Harness {
    fn new(config: WorldConfig, threads: usize, track_early: bool) -> Self {
        let mut world = World::with_config(config);
        world.insert_resource(Flags::default());
        world.insert_resource(Seen::default());
        if track_early {
            world.track_changes::<A>();
        }
        let mut schedule = Schedule::with_threads(threads);
        schedule
            .add_system(write_before)
            .unwrap()
            .add_system(watch.after("write_before"))
            .unwrap()
            .add_system(write_after.after("watch"))
            .unwrap()
            .add_system(give)
            .unwrap();
        Harness {
            world,
            schedule,
            handles: Vec::new(),
            model: HashMap::new(),
            step: 0,
            last: [0; 4],
            held: [None, None],
            exact_stamps: track_early,
        }
    }

    fn tick(&mut self) -> u64 {
        self.step += 1;
        self.step
    }

    fn pick(&self, k: usize) -> Option<Entity> {
        (!self.handles.is_empty()).then(|| self.handles[k % self.handles.len()])
    }

    fn has_a(&self, e: Entity) -> bool {
        self.model.get(&e).is_some_and(|r| r.a.is_some())
    }

    /// Records a write of A on `e` at step `s`, if it has A.
    fn mark(&mut self, e: Entity, s: u64) {
        if let Some(Row {
            a: Some((_, c)), ..
        }) = self.model.get_mut(&e)
        {
            *c = s;
        }
    }

    /// Records an insert of A on live `e` at step `s`.
    fn insert_a(&mut self, e: Entity, s: u64) {
        let row = self.model.get_mut(&e).expect("alive");
        row.a = Some(match row.a {
            Some((added, _)) => (added, s),
            None => (s, s),
        });
    }

    fn spawned(&mut self, e: Entity, row: Row) {
        self.handles.push(e);
        self.model.insert(e, row);
    }

    /// What a reader whose previous run was `last` must see.
    fn expected(&self, last: u64) -> (Vec<Entity>, Vec<Entity>) {
        let mut changed = Vec::new();
        let mut added = Vec::new();
        for (&e, row) in &self.model {
            if let Some((a, c)) = row.a {
                if c > last {
                    changed.push(e);
                }
                if a > last {
                    added.push(e);
                }
            }
        }
        (sorted(changed), sorted(added))
    }

    /// Runs reader `k` (0..3) and returns what it saw.
    fn run_reader(&mut self, k: usize) -> (Vec<Entity>, Vec<Entity>) {
        let world = &mut self.world;
        match k {
            0 | 1 => {
                let (changed, added) = self.held[k]
                    .get_or_insert_with(|| (QueryState::new(world), QueryState::new(world)));
                if k == 0 {
                    (
                        sorted(changed.iter(world).collect()),
                        sorted(added.iter(world).collect()),
                    )
                } else {
                    let mut c = Vec::new();
                    changed.for_each(world, |e| c.push(e));
                    let mut a = Vec::new();
                    added.for_each(world, |e| a.push(e));
                    (sorted(c), sorted(a))
                }
            }
            _ => {
                let mut c = Vec::new();
                world
                    .query_filtered_mut::<Entity, Changed<A>>()
                    .for_each_chunk(|es| c.extend_from_slice(es));
                let a = Mutex::new(Vec::new());
                world
                    .query_filtered_mut::<Entity, Added<A>>()
                    .par_for_each(|e| a.lock().unwrap().push(e));
                (sorted(c), sorted(a.into_inner().unwrap()))
            }
        }
    }

    fn apply(&mut self, op: &Op) -> Result<(), TestCaseError> {
        match *op {
            Op::Spawn { with_b } => {
                let s = self.tick();
                let e = if with_b {
                    self.world.spawn((A(1), B(1)))
                } else {
                    self.world.spawn((A(1),))
                };
                self.spawned(
                    e,
                    Row {
                        a: Some((s, s)),
                        b: with_b,
                    },
                );
            }
            Op::SpawnBatch { n, with_b } => {
                let s = self.tick();
                let es = if with_b {
                    self.world
                        .spawn_batch((0..n).map(|i| (B(i as u64), A(i as u32))))
                } else {
                    self.world.spawn_batch((0..n).map(|i| (A(i as u32),)))
                };
                prop_assert_eq!(es.len(), n);
                for e in es {
                    self.spawned(
                        e,
                        Row {
                            a: Some((s, s)),
                            b: with_b,
                        },
                    );
                }
            }
            Op::SpawnBOnly => {
                self.tick();
                let e = self.world.spawn((B(0),));
                self.spawned(e, Row { a: None, b: true });
            }
            Op::InsertA(k) => {
                let Some(e) = self.pick(k) else { return Ok(()) };
                let s = self.tick();
                let ok = self.world.insert_one(e, A(2)).is_ok();
                prop_assert_eq!(ok, self.model.contains_key(&e));
                if ok {
                    self.insert_a(e, s);
                }
            }
            Op::InsertB(k) => {
                let Some(e) = self.pick(k) else { return Ok(()) };
                self.tick();
                let ok = self.world.insert_one(e, B(2)).is_ok();
                prop_assert_eq!(ok, self.model.contains_key(&e));
                if ok {
                    self.model.get_mut(&e).unwrap().b = true;
                }
            }
            Op::RemoveA(k) => {
                let Some(e) = self.pick(k) else { return Ok(()) };
                self.tick();
                let ok = self.world.remove_one::<A>(e).is_ok();
                prop_assert_eq!(ok, self.has_a(e));
                if ok {
                    self.model.get_mut(&e).unwrap().a = None;
                }
            }
            Op::RemoveB(k) => {
                let Some(e) = self.pick(k) else { return Ok(()) };
                self.tick();
                let ok = self.world.remove_one::<B>(e).is_ok();
                prop_assert_eq!(ok, self.model.get(&e).is_some_and(|r| r.b));
                if ok {
                    self.model.get_mut(&e).unwrap().b = false;
                }
            }
            Op::Despawn(k) => {
                let Some(e) = self.pick(k) else { return Ok(()) };
                self.tick();
                let ok = self.world.despawn(e).is_ok();
                prop_assert_eq!(ok, self.model.remove(&e).is_some());
            }
            Op::GetMut(k) => {
                let Some(e) = self.pick(k) else { return Ok(()) };
                let s = self.tick();
                let ok = match self.world.get_mut::<A>(e) {
                    Ok(a) => {
                        a.0 = a.0.wrapping_add(1);
                        true
                    }
                    Err(_) => false,
                };
                prop_assert_eq!(ok, self.has_a(e));
                self.mark(e, s);
            }
            Op::Read(k) => {
                self.tick();
                if let Some(e) = self.pick(k) {
                    prop_assert_eq!(self.world.get::<A>(e).is_ok(), self.has_a(e));
                    prop_assert_eq!(self.world.query_mut::<&A>().get(e).is_ok(), self.has_a(e));
                }
                let n = self.model.values().filter(|r| r.a.is_some()).count();
                prop_assert_eq!(self.world.query::<&A>().iter().count(), n);
                let mut seen = 0;
                self.world
                    .query_mut::<(Entity, &A)>()
                    .for_each_chunk(|(es, _)| seen += es.len());
                prop_assert_eq!(seen, n);
            }
            Op::QueryGet(ref ks) => {
                let s = self.tick();
                let picked: Vec<Entity> = ks.iter().filter_map(|&k| self.pick(k)).collect();
                let mut got = Vec::new();
                {
                    let mut q = self.world.query_mut::<&mut A>();
                    for &e in &picked {
                        got.push(q.get_mut(e).is_ok());
                    }
                }
                for (&e, ok) in picked.iter().zip(got) {
                    prop_assert_eq!(ok, self.has_a(e));
                    self.mark(e, s);
                }
            }
            Op::QueryTake(k) => {
                let s = self.tick();
                let handed: Vec<Entity> = self
                    .world
                    .query_mut::<(Entity, &mut A)>()
                    .iter_mut()
                    .take(k)
                    .map(|(e, _)| e)
                    .collect();
                let n = self.model.values().filter(|r| r.a.is_some()).count();
                prop_assert_eq!(handed.len(), k.min(n));
                for e in handed {
                    prop_assert!(self.has_a(e));
                    self.mark(e, s);
                }
            }
            Op::QueryAll => {
                let s = self.tick();
                let mut n = 0;
                self.world.query_mut::<&mut A>().for_each(|_| n += 1);
                let es: Vec<Entity> = self.model.keys().copied().collect();
                for e in es {
                    self.mark(e, s);
                }
                prop_assert_eq!(n, self.model.values().filter(|r| r.a.is_some()).count());
            }
            Op::ChunkWithB => {
                let s = self.tick();
                self.world
                    .query_filtered_mut::<&mut A, With<B>>()
                    .for_each_chunk(|values| {
                        if let Some(a) = values.first_mut() {
                            a.0 = a.0.wrapping_add(1);
                        }
                    });
                let es: Vec<Entity> = self
                    .model
                    .iter()
                    .filter(|(_, r)| r.b)
                    .map(|(&e, _)| e)
                    .collect();
                for e in es {
                    self.mark(e, s);
                }
            }
            Op::MarkChanged(k) => {
                let Some(e) = self.pick(k) else { return Ok(()) };
                let s = self.tick();
                let ok = self.world.mark_changed::<A>(e).is_ok();
                prop_assert_eq!(ok, self.has_a(e));
                self.mark(e, s);
            }
            Op::Commands { target, spawn } => {
                let Some(e) = self.pick(target) else {
                    return Ok(());
                };
                let s = self.tick();
                let mut commands = CommandBuffer::new();
                commands.insert_one(e, A(3));
                let spawned = spawn.then(|| commands.spawn(&self.world, (A(4),)));
                let report = self.world.apply(&mut commands);
                let alive = self.model.contains_key(&e);
                prop_assert_eq!(report.failed.is_empty(), alive);
                if alive {
                    self.insert_a(e, s);
                }
                if let Some(f) = spawned {
                    self.spawned(
                        f,
                        Row {
                            a: Some((s, s)),
                            b: false,
                        },
                    );
                }
            }
            Op::Reader(k) => {
                let s = self.tick();
                let want = self.expected(self.last[k]);
                let got = self.run_reader(k);
                prop_assert_eq!(&got, &want, "reader {}", k);
                self.last[k] = s;
            }
            Op::Schedule {
                before,
                after,
                give,
            } => {
                let target = give.and_then(|k| self.pick(k));
                {
                    let flags = self.world.resource_mut::<Flags>().unwrap();
                    flags.before = before;
                    flags.after = after;
                    flags.give = target;
                }
                // write_before, then watch, then write_after, then the
                // commands at the end of the segment.
                let s = self.tick();
                if before {
                    let es: Vec<Entity> = self
                        .model
                        .iter()
                        .filter(|(_, r)| r.b)
                        .map(|(&e, _)| e)
                        .collect();
                    for e in es {
                        self.mark(e, s);
                    }
                }
                let s = self.tick();
                let want = self.expected(self.last[3]);
                self.last[3] = s;
                let s = self.tick();
                if after {
                    let es: Vec<Entity> = self
                        .model
                        .iter()
                        .filter(|(_, r)| !r.b)
                        .map(|(&e, _)| e)
                        .collect();
                    for e in es {
                        self.mark(e, s);
                    }
                }
                let s = self.tick();
                let report = self.schedule.run(&mut self.world).unwrap();
                if let Some(e) = target {
                    let alive = self.model.contains_key(&e);
                    prop_assert_eq!(report.commands.failed.is_empty(), alive);
                    if alive {
                        self.insert_a(e, s);
                    }
                }
                let got = self.world.resource_mut::<Seen>().unwrap().0.take();
                prop_assert_eq!(got, Some(want), "the schedule's reader");
            }
        }
        Ok(())
    }

    /// The world agrees with the model on who has what, and (with row
    /// stamps from the start) its stamps order like the model's steps.
    fn check(&self) -> Result<(), TestCaseError> {
        self.world.check_invariants();
        prop_assert_eq!(self.world.len(), self.model.len());
        for (&e, row) in &self.model {
            prop_assert!(self.world.alive(e));
            prop_assert_eq!(self.world.get::<A>(e).is_ok(), row.a.is_some());
            prop_assert_eq!(self.world.get::<B>(e).is_ok(), row.b);
        }
        if !self.exact_stamps {
            return Ok(());
        }
        // (model added, model changed, world added, world changed)
        let mut stamps: Vec<(u64, u64, u64, u64)> = Vec::new();
        for (&e, row) in &self.model {
            if let Some((a, c)) = row.a {
                let (wa, wc) = self.world.change_ticks::<A>(e).unwrap();
                prop_assert!(wa <= wc);
                stamps.push((a, c, wa.get(), wc.get()));
            }
        }
        // Model order implies world order (equal steps, equal ticks; the
        // world may give several steps one tick).
        let mut all: Vec<(u64, u64)> = stamps
            .iter()
            .flat_map(|&(a, c, wa, wc)| [(a, wa), (c, wc)])
            .collect();
        all.sort();
        for pair in all.windows(2) {
            let ((m0, w0), (m1, w1)) = (pair[0], pair[1]);
            if m0 == m1 {
                prop_assert_eq!(w0, w1, "step {} has two ticks", m0);
            } else {
                prop_assert!(w0 <= w1, "steps {} < {} but ticks {} > {}", m0, m1, w0, w1);
            }
        }
        Ok(())
    }
}

fn run(
    ops: &[Op],
    config: WorldConfig,
    threads: usize,
    track_early: bool,
) -> Result<(), TestCaseError> {
    let mut h = Harness::new(config, threads, track_early);
    for op in ops {
        h.apply(op)?;
        h.check()?;
    }
    // Every reader, once more, and then again: the second sees nothing.
    for k in 0..3 {
        h.apply(&Op::Reader(k))?;
        h.apply(&Op::Reader(k))?;
    }
    let quiet = Op::Schedule {
        before: false,
        after: false,
        give: None,
    };
    h.apply(&quiet)?;
    h.apply(&quiet)?;
    Ok(())
}

fn config() -> impl Strategy<Value = WorldConfig> {
    (
        prop_oneof![Just(64usize), Just(256), Just(16 * 1024)],
        prop_oneof![Just(0usize), Just(1024)],
    )
        .prop_map(|(chunk_bytes, min_free_indices)| WorldConfig {
            chunk_bytes,
            min_free_indices,
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    #[cfg_attr(miri, ignore = "proptest needs the file system and is slow under Miri")]
    fn readers_see_exactly_the_changes_since_their_previous_run(
        ops in prop::collection::vec(op(), 0..80),
        config in config(),
        threads in 1usize..=2,
        track_early in any::<bool>(),
    ) {
        run(&ops, config, threads, track_early)?;
    }
}

/// Fixed sequences that exercise every op, every reader and late tracking.
#[test]
fn a_fixed_sequence_agrees_with_the_model() {
    let ops = vec![
        Op::SpawnBatch {
            n: 20,
            with_b: false,
        },
        Op::SpawnBatch {
            n: 10,
            with_b: true,
        },
        Op::GetMut(3),
        Op::InsertB(4),
        Op::Despawn(0),
        Op::Reader(0),
        Op::RemoveB(4),
        Op::Reader(0),
        Op::Schedule {
            before: true,
            after: false,
            give: Some(5),
        },
        Op::Reader(1),
        Op::QueryTake(7),
        Op::Schedule {
            before: false,
            after: true,
            give: None,
        },
        Op::Reader(2),
        Op::SpawnBOnly,
        Op::InsertA(30),
        Op::RemoveA(6),
        Op::InsertA(6),
        Op::QueryGet(vec![1, 2, 3, 100]),
        Op::ChunkWithB,
        Op::Read(8),
        Op::MarkChanged(9),
        Op::Commands {
            target: 10,
            spawn: true,
        },
        Op::Reader(0),
        Op::Reader(1),
        Op::Reader(2),
        Op::Schedule {
            before: true,
            after: true,
            give: Some(0),
        },
        Op::QueryAll,
        Op::Schedule {
            before: false,
            after: false,
            give: None,
        },
    ];
    for config in [
        WorldConfig::default(),
        WorldConfig {
            chunk_bytes: 64,
            min_free_indices: 0,
        },
    ] {
        for threads in [1, 2] {
            for track_early in [false, true] {
                run(&ops, config, threads, track_early).unwrap();
            }
        }
    }
}
