//! The cross-feature model test: random operations that mix every feature,
//! checked against a naive model after every step.
//!
//! Bugs live where two features meet, so one sequence mixes them all:
//! single, batch and command-buffer spawns, inserts, removes and despawns,
//! batch inserts and removes
//! (some components panic in `Drop`); `ChildOf` and a custom relation;
//! prefabs and `instantiate`; a hook that records commands, and observers
//! of the same component that must see what it sees; events sent
//! directly and by systems, read by systems in two schedules per frame;
//! snapshot/restore and save/load round trips mid-run; and the same two
//! schedules run on a second world in between; a `Medicine` resource
//! (snapshotted) whose change runs a `resource_changed` system; one-shot
//! systems run on the world; and entities disabled and enabled again
//! (every system and one-shot query skips them, snapshots and saves keep
//! them so); `Sick` is a sparse component, toggled by a hook and a
//! system every frame and read by sparse terms. After every step the world
//! must match the model: the live ids, each entity's own components and
//! the resource,
//! (inherited) values, its parent, prefab and pairs, what each event reader
//! read in each world, and what the hook saw. Ids are checked three ways:
//! a new id never repeats an old one and a reused index has a newer
//! generation; a restore or a load gives back the allocator exactly
//! (generations and the free FIFO); and replaying the sequence at 1, 2, 4
//! and 8 threads gives the same world, ids included.

use doecs::{
    resource_changed, ChildOf, CommandBuffer, ComponentHooks, Entity, EventReader, EventWriter,
    Has, Local, OnAdd, OnRemove, Query, Relation, Res, Schedule, Snapshot, Sparse, SystemConfig,
    Trigger, With, Without, World,
};
use doecs_registry::{ComponentRegistry, WorldSaveExt};
use proptest::prelude::*;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, Mutex};

macro_rules! plain {
    ($($name:ident $(($inner:ty))?),*) => {$(
        #[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize, bytemuck::Pod, bytemuck::Zeroable)]
        #[repr(C)]
        struct $name $(($inner))?;
    )*};
}
plain!(Hp(u32), Frozen, Sick, Poison, Spark(u32));

/// Panics when dropped: every path that drops one must finish its work
/// first. Never snapshotted or saved (the model skips those while any is
/// alive).
struct Bomb;
impl Drop for Bomb {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            panic!("bomb");
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
struct Likes(u8);
impl Relation for Likes {}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Ev(u32);

/// Which world a system ran on, for the logs.
struct WorldTag(u32);

/// A resource: when it changes, the next frame's `heal` system runs and
/// unfreezes the frozen (not sick) entities with at least this much hp.
#[derive(Clone, Debug)]
struct Medicine(u32);

/// What the systems and the hook saw, shared with the test.
#[derive(Default)]
struct Logs {
    /// (world tag, reader, event): reader 0 runs in the update schedule,
    /// reader 1 in the last one.
    read: Vec<(u32, u8, u32)>,
    /// (added?, entity) from the `Poison` hooks.
    hooks: Vec<(bool, Entity)>,
    /// The same, from the `Poison` observers: they fire where the hooks do.
    observed: Vec<(bool, Entity)>,
}
type Shared = Arc<Mutex<Logs>>;

fn registry() -> ComponentRegistry {
    let mut r = ComponentRegistry::new();
    r.register::<Hp>("hp").plain();
    r.register::<Frozen>("frozen").plain();
    // Sparse: toggled by a hook and a system every frame.
    r.register::<Sick>("sick").plain().sparse();
    r.register::<Poison>("poison").plain();
    r.register::<Spark>("spark").plain();
    r.register_relation::<Likes>("likes").unwrap();
    r
}

/// What every world gets, new or loaded: names, hooks and its tag.
fn set_up(world: &mut World, registry: &ComponentRegistry, logs: &Shared, tag: u32) {
    registry.install(world).unwrap();
    let (on_add, on_remove) = (logs.clone(), logs.clone());
    world.set_hooks::<Poison>(
        ComponentHooks::new()
            .on_add(move |ctx| {
                on_add.lock().unwrap().hooks.push((true, ctx.entity));
                ctx.commands.insert_one(ctx.entity, Sick);
            })
            .on_remove(move |ctx| on_remove.lock().unwrap().hooks.push((false, ctx.entity))),
    );
    let (on_add, on_remove) = (logs.clone(), logs.clone());
    world
        .observe(move |t: Trigger<OnAdd, Poison>| {
            on_add.lock().unwrap().observed.push((true, t.entity()));
        })
        .unwrap();
    world
        .observe(move |t: Trigger<OnRemove, Poison>| {
            on_remove.lock().unwrap().observed.push((false, t.entity()));
        })
        .unwrap();
    world.insert_resource(WorldTag(tag));
    world.snapshot_resource::<Medicine>();
}

/// What `heal` reads of the frozen: whether they are sick (sparse).
type FrozenHp = (Entity, &'static Hp, Sparse<Has<Sick>>);

/// The update and last schedules of a frame.
fn schedules(threads: usize, logs: &Shared) -> (Schedule, Schedule) {
    let mut update = Schedule::with_threads(threads);
    update
        .add_system(
            (|mut q: Query<&mut Hp, Without<Frozen>>| q.for_each(|hp| hp.0 += 1)).named("tick"),
        )
        .unwrap();
    update
        .add_system(
            (|mut out: EventWriter<Ev>, mut frame: Local<u32>| {
                out.send(Ev(1000 + *frame));
                *frame += 1;
            })
            .named("writer"),
        )
        .unwrap();
    let a = logs.clone();
    update
        .add_system(
            (move |mut events: EventReader<Ev>, tag: Res<WorldTag>| {
                let mut logs = a.lock().unwrap();
                logs.read.extend(events.read().map(|e| (tag.0, 0, e.0)));
            })
            .named("update reader"),
        )
        .unwrap();
    update
        .add_system(
            (|sick: Query<(Entity, Sparse<&Sick>)>,
              mut commands: doecs::Commands,
              mut frame: Local<u32>| {
                for (e, _) in sick.iter() {
                    commands.remove_one::<Sick>(e);
                    commands.insert_one(e, Frozen);
                }
                commands.spawn((Spark(*frame),));
                *frame += 1;
            })
            .named("sicken"),
        )
        .unwrap();
    update
        .add_system(
            (|frozen: Query<FrozenHp, With<Frozen>>,
              medicine: Option<Res<Medicine>>,
              mut commands: doecs::Commands| {
                let at_least = medicine.expect("the condition saw it").0;
                for (e, hp, sick) in frozen.iter() {
                    if !sick && hp.0 >= at_least {
                        commands.remove_one::<Frozen>(e);
                    }
                }
            })
            .named("heal")
            .run_if(resource_changed::<Medicine>()),
        )
        .unwrap();
    let mut last = Schedule::with_threads(threads);
    let b = logs.clone();
    last.add_system(
        (move |mut events: EventReader<Ev>, tag: Res<WorldTag>| {
            let mut logs = b.lock().unwrap();
            logs.read.extend(events.read().map(|e| (tag.0, 1, e.0)));
        })
        .named("last reader"),
    )
    .unwrap();
    (update, last)
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Kind {
    Hp,
    Frozen,
    Sick,
    Poison,
    Spark,
    Bomb,
    Prefab,
    Disabled,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Hp => "hp",
            Kind::Frozen => "frozen",
            Kind::Sick => "sick",
            Kind::Poison => "poison",
            Kind::Spark => "spark",
            Kind::Bomb => "cross_feature_model::Bomb",
            Kind::Prefab => "Prefab",
            Kind::Disabled => "Disabled",
        }
    }
}

/// One entity in the model: its own components (with `Hp`'s and `Spark`'s
/// values), its parent and its prefab.
#[derive(Clone, Debug, Default, PartialEq)]
struct Ent {
    own: BTreeMap<Kind, u32>,
    parent: Option<Entity>,
    prefab_of: Option<Entity>,
}

/// One world in the model.
#[derive(Clone, Debug, Default)]
struct WorldModel {
    tag: u32,
    ents: BTreeMap<Entity, Ent>,
    likes: BTreeMap<(Entity, Entity), u8>,
    /// Events sent in this world, in order, and how many the readers read.
    sent: Vec<u32>,
    read: usize,
    frames: u32,
    /// The `Medicine` resource, and whether it changed since `heal` last
    /// ran in this world.
    medicine: Option<u32>,
    medicine_changed: bool,
    /// Times `heal` ran in this world (not rolled back: a system's state
    /// is not part of a snapshot).
    heals: u32,
}

impl WorldModel {
    fn live(&self) -> Vec<Entity> {
        self.ents.keys().copied().collect()
    }
    /// The entities queries skip: prefabs and disabled entities.
    fn hidden(&self) -> BTreeSet<Entity> {
        self.ents
            .iter()
            .filter(|(_, e)| {
                e.own.contains_key(&Kind::Prefab) || e.own.contains_key(&Kind::Disabled)
            })
            .map(|(&k, _)| k)
            .collect()
    }
    fn bombs(&self) -> bool {
        self.ents.values().any(|e| e.own.contains_key(&Kind::Bomb))
    }
    fn is_prefab(&self, e: Entity) -> bool {
        self.ents[&e].own.contains_key(&Kind::Prefab)
    }
    fn hp(&self, e: Entity) -> Option<u32> {
        let ent = &self.ents[&e];
        match ent.own.get(&Kind::Hp) {
            Some(&v) => Some(v),
            None => ent
                .prefab_of
                .and_then(|p| self.ents[&p].own.get(&Kind::Hp).copied()),
        }
    }
    /// `e` and everything that despawns with it, parents first.
    fn doomed(&self, e: Entity) -> Vec<Entity> {
        let mut out = vec![e];
        let mut i = 0;
        while i < out.len() {
            let at = out[i];
            for (&k, ent) in &self.ents {
                if (ent.parent == Some(at) || ent.prefab_of == Some(at)) && !out.contains(&k) {
                    out.push(k);
                }
            }
            i += 1;
        }
        out
    }
    /// Removes `es` and everything that goes with them; returns whether a
    /// bomb went off, and logs `Poison` removals.
    fn despawn(&mut self, es: &[Entity], hooks: &mut Vec<(bool, Entity)>) -> bool {
        let mut bomb = false;
        for &e in es {
            if !self.ents.contains_key(&e) {
                continue;
            }
            for d in self.doomed(e) {
                let ent = self.ents.remove(&d).expect("doomed are alive");
                bomb |= ent.own.contains_key(&Kind::Bomb);
                if ent.own.contains_key(&Kind::Poison) {
                    hooks.push((false, d));
                }
                self.likes.retain(|&(a, b), _| a != d && b != d);
            }
        }
        bomb
    }
    /// Inserts `kind` on a live `e`; returns whether a bomb was replaced.
    fn insert(
        &mut self,
        e: Entity,
        kind: Kind,
        value: u32,
        hooks: &mut Vec<(bool, Entity)>,
    ) -> bool {
        let old = self.ents.get_mut(&e).unwrap().own.insert(kind, value);
        if kind == Kind::Poison && old.is_none() {
            hooks.push((true, e));
            self.ents.get_mut(&e).unwrap().own.insert(Kind::Sick, 0);
        }
        kind == Kind::Bomb && old.is_some()
    }
    fn remove(&mut self, e: Entity, kind: Kind, hooks: &mut Vec<(bool, Entity)>) -> bool {
        let had = self.ents.get_mut(&e).unwrap().own.remove(&kind).is_some();
        if kind == Kind::Poison && had {
            hooks.push((false, e));
        }
        kind == Kind::Bomb && had
    }
}

#[derive(Clone, Copy, Debug)]
enum Comp {
    Hp(u32),
    Frozen,
    Poison,
    Bomb,
}

impl Comp {
    fn kind(self) -> Kind {
        match self {
            Comp::Hp(_) => Kind::Hp,
            Comp::Frozen => Kind::Frozen,
            Comp::Poison => Kind::Poison,
            Comp::Bomb => Kind::Bomb,
        }
    }
    fn value(self) -> u32 {
        match self {
            Comp::Hp(v) => v,
            _ => 0,
        }
    }
}

#[derive(Clone, Debug)]
enum BufCmd {
    Spawn(u32),
    Insert(usize, Comp),
    Despawn(usize),
    /// `reserve_entity`, then an insert naming the reserved id.
    InsertReserved(u32),
}

#[derive(Clone, Debug)]
enum Op {
    Spawn(Vec<Comp>),
    SpawnBatch(u8, u32),
    Insert(usize, Comp),
    /// `Hp(value + k)` into the `k`-th picked entity, as one batch.
    InsertBatch(Vec<usize>, u32),
    /// `Frozen` off every picked entity, as one batch (refused whole if
    /// one lacks it or is named twice).
    RemoveBatch(Vec<usize>),
    Remove(usize, Kind),
    Despawn(usize),
    DespawnBatch(Vec<usize>),
    Buffered(Vec<BufCmd>),
    SetParent(usize, usize),
    Like(usize, usize, u8),
    MakePrefab(u32, bool),
    Instantiate(usize, u8),
    SendEvent(u32),
    Frame,
    SideFrame(u32),
    Medicine(u32),
    OneShot,
    Disable(usize),
    Enable(usize),
    Snapshot,
    Restore,
    SaveLoad,
    Defuse,
}

fn comp() -> impl Strategy<Value = Comp> {
    prop_oneof![
        4 => (0u32..100).prop_map(Comp::Hp),
        2 => Just(Comp::Frozen),
        2 => Just(Comp::Poison),
        1 => Just(Comp::Bomb),
    ]
}

fn op() -> impl Strategy<Value = Op> {
    let who = 0usize..64;
    let kind = prop_oneof![
        Just(Kind::Hp),
        Just(Kind::Frozen),
        Just(Kind::Poison),
        Just(Kind::Bomb),
        Just(Kind::Sick)
    ];
    let buf = prop_oneof![
        (0u32..100).prop_map(BufCmd::Spawn),
        (who.clone(), comp()).prop_map(|(w, c)| BufCmd::Insert(w, c)),
        who.clone().prop_map(BufCmd::Despawn),
        (0u32..100).prop_map(BufCmd::InsertReserved),
    ];
    prop_oneof![
        6 => prop::collection::vec(comp(), 0..3).prop_map(Op::Spawn),
        2 => (1u8..6, 0u32..100).prop_map(|(n, hp)| Op::SpawnBatch(n, hp)),
        5 => (who.clone(), comp()).prop_map(|(w, c)| Op::Insert(w, c)),
        2 => (prop::collection::vec(who.clone(), 0..8), 0u32..100)
            .prop_map(|(w, v)| Op::InsertBatch(w, v)),
        2 => prop::collection::vec(who.clone(), 0..8).prop_map(Op::RemoveBatch),
        3 => (who.clone(), kind).prop_map(|(w, k)| Op::Remove(w, k)),
        3 => who.clone().prop_map(Op::Despawn),
        2 => prop::collection::vec(who.clone(), 0..4).prop_map(Op::DespawnBatch),
        3 => prop::collection::vec(buf, 0..5).prop_map(Op::Buffered),
        4 => (who.clone(), who.clone()).prop_map(|(a, b)| Op::SetParent(a, b)),
        2 => (who.clone(), who.clone(), any::<u8>()).prop_map(|(a, b, v)| Op::Like(a, b, v)),
        2 => (0u32..100, any::<bool>()).prop_map(|(hp, p)| Op::MakePrefab(hp, p)),
        2 => (who.clone(), 1u8..4).prop_map(|(p, n)| Op::Instantiate(p, n)),
        2 => (0u32..100).prop_map(Op::SendEvent),
        4 => Just(Op::Frame),
        1 => (0u32..120).prop_map(Op::Medicine),
        1 => Just(Op::OneShot),
        1 => (0usize..64).prop_map(Op::Disable),
        1 => (0usize..64).prop_map(Op::Enable),
        2 => (0u32..100).prop_map(Op::SideFrame),
        1 => Just(Op::Snapshot),
        1 => Just(Op::Restore),
        1 => Just(Op::SaveLoad),
        1 => Just(Op::Defuse),
    ]
}

/// The world, the model, and everything a run keeps beside them.
struct Run {
    world: World,
    model: WorldModel,
    side: World,
    side_model: WorldModel,
    update: Schedule,
    last: Schedule,
    logs: Shared,
    registry: ComponentRegistry,
    /// The snapshot, the model at that moment, the allocator's image then,
    /// and the world it belongs to.
    snapshot: Option<(
        Snapshot,
        WorldModel,
        doecs::raw::EntityTableImage,
        HashMap<u32, u32>,
    )>,
    next_tag: u32,
    /// Per entity index: the newest generation handed out.
    generations: HashMap<u32, u32>,
    /// Whether to compare with the model after every step (the replays at
    /// other thread counts only compare their end state).
    check: bool,
}

/// Spawns one entity with `comps` (one of each kind) through the builder:
/// one bundle, one row.
fn spawn_bundle(world: &mut World, comps: &[Comp]) -> Entity {
    let mut builder = doecs::EntityBuilder::new();
    for &c in comps {
        match c {
            Comp::Hp(v) => builder.add(Hp(v)),
            Comp::Frozen => builder.add(Frozen),
            Comp::Poison => builder.add(Poison),
            Comp::Bomb => builder.add(Bomb),
        };
    }
    world.spawn(&mut builder)
}

fn insert(world: &mut World, e: Entity, c: Comp) -> Result<(), doecs::EntityError> {
    match c {
        Comp::Hp(v) => world.insert_one(e, Hp(v)),
        Comp::Frozen => world.insert_one(e, Frozen),
        Comp::Poison => world.insert_one(e, Poison),
        Comp::Bomb => world.insert_one(e, Bomb),
    }
}

fn buffer_insert(buffer: &mut CommandBuffer, e: Entity, c: Comp) {
    match c {
        Comp::Hp(v) => buffer.insert_one(e, Hp(v)),
        Comp::Frozen => buffer.insert_one(e, Frozen),
        Comp::Poison => buffer.insert_one(e, Poison),
        Comp::Bomb => buffer.insert_one(e, Bomb),
    }
}

/// Runs `f`, asserting it panics exactly when the model says a bomb went off.
fn expect_panic(bomb: bool, f: impl FnOnce()) {
    let panicked = catch_unwind(AssertUnwindSafe(f)).is_err();
    assert_eq!(panicked, bomb, "a panic exactly when a bomb is dropped");
}

impl Run {
    fn new(threads: usize, check: bool) -> Run {
        let logs = Shared::default();
        let registry = registry();
        let mut world = World::with_config(doecs::WorldConfig {
            min_free_indices: 4,
            ..Default::default()
        });
        set_up(&mut world, &registry, &logs, 0);
        let mut side = World::new();
        set_up(&mut side, &registry, &logs, 1);
        let mut side_model = WorldModel {
            tag: 1,
            ..Default::default()
        };
        for hp in [5, 6] {
            let e = side.spawn((Hp(hp),));
            side_model.ents.insert(
                e,
                Ent {
                    own: [(Kind::Hp, hp)].into(),
                    ..Default::default()
                },
            );
        }
        let (update, last) = schedules(threads, &logs);
        Run {
            world,
            model: WorldModel::default(),
            side,
            side_model,
            update,
            last,
            logs,
            registry,
            snapshot: None,
            next_tag: 2,
            generations: HashMap::new(),
            check,
        }
    }

    fn pick(&self, who: usize) -> Option<Entity> {
        let live = self.model.live();
        (!live.is_empty()).then(|| live[who % live.len()])
    }

    /// Records entities new to the model, checking each id is fresh.
    fn learn(&mut self, e: Entity, ent: Ent) {
        if let Some(&g) = self.generations.get(&e.index()) {
            assert!(
                e.generation() > g,
                "{e:?} reuses an index without a newer generation"
            );
        }
        self.generations.insert(e.index(), e.generation());
        self.model.ents.insert(e, ent);
    }

    fn step(&mut self, op: &Op) {
        let mut hooks = Vec::new();
        match op.clone() {
            Op::Spawn(mut comps) => {
                // One of each kind.
                let mut kinds = BTreeSet::new();
                comps.retain(|c| kinds.insert(c.kind()));
                let e = spawn_bundle(&mut self.world, &comps);
                self.learn(e, Ent::default());
                for c in comps {
                    self.model.insert(e, c.kind(), c.value(), &mut hooks);
                }
            }
            Op::SpawnBatch(n, hp) => {
                let es = self
                    .world
                    .spawn_batch((0..n).map(|i| (Hp(hp + u32::from(i)),)));
                for (i, e) in es.into_iter().enumerate() {
                    self.learn(
                        e,
                        Ent {
                            own: [(Kind::Hp, hp + i as u32)].into(),
                            ..Default::default()
                        },
                    );
                }
            }
            Op::Insert(who, c) => {
                let Some(e) = self.pick(who) else { return };
                let bomb = self.model.insert(e, c.kind(), c.value(), &mut hooks);
                expect_panic(bomb, || insert(&mut self.world, e, c).unwrap());
            }
            Op::InsertBatch(who, value) => {
                let es: Vec<Entity> = who.iter().filter_map(|&w| self.pick(w)).collect();
                for (k, &e) in es.iter().enumerate() {
                    self.model.insert(e, Kind::Hp, value + k as u32, &mut hooks);
                }
                let batch = es
                    .iter()
                    .enumerate()
                    .map(|(k, &e)| (e, (Hp(value + k as u32),)));
                self.world.insert_batch(batch).unwrap();
            }
            Op::RemoveBatch(who) => {
                let es: Vec<Entity> = who.iter().filter_map(|&w| self.pick(w)).collect();
                let distinct = es.iter().collect::<BTreeSet<_>>().len() == es.len();
                let all_frozen = es
                    .iter()
                    .all(|e| self.model.ents[e].own.contains_key(&Kind::Frozen));
                let outcome = self.world.remove_batch::<(Frozen,)>(&es);
                assert_eq!(outcome.is_ok(), distinct && all_frozen, "{outcome:?}");
                if outcome.is_ok() {
                    for &e in &es {
                        self.model.remove(e, Kind::Frozen, &mut hooks);
                    }
                }
            }
            Op::Remove(who, kind) => {
                let Some(e) = self.pick(who) else { return };
                let bomb = self.model.remove(e, kind, &mut hooks);
                let world = &mut self.world;
                expect_panic(bomb, || match kind {
                    Kind::Hp => drop(world.remove_one::<Hp>(e)),
                    Kind::Frozen => drop(world.remove_one::<Frozen>(e)),
                    Kind::Sick => drop(world.remove_one::<Sick>(e)),
                    Kind::Poison => drop(world.remove_one::<Poison>(e)),
                    Kind::Bomb => drop(world.remove_one::<Bomb>(e)),
                    Kind::Spark | Kind::Prefab | Kind::Disabled => unreachable!(),
                });
            }
            Op::Despawn(who) => {
                let Some(e) = self.pick(who) else { return };
                let bomb = self.model.despawn(&[e], &mut hooks);
                expect_panic(bomb, || self.world.despawn(e).unwrap());
            }
            Op::DespawnBatch(whos) => {
                let es: Vec<Entity> = whos.iter().filter_map(|&w| self.pick(w)).collect();
                let bomb = self.model.despawn(&es, &mut hooks);
                expect_panic(bomb, || {
                    self.world.despawn_batch(&es);
                });
            }
            Op::Buffered(cmds) => self.buffered(&cmds, &mut hooks),
            Op::SetParent(c, p) => {
                let (Some(child), Some(parent)) = (self.pick(c), self.pick(p)) else {
                    return;
                };
                if self.model.is_prefab(child) || self.model.is_prefab(parent) {
                    return;
                }
                let cycle = child == parent || self.model.doomed(child).contains(&parent);
                let result = self.world.set_parent(child, parent);
                assert_eq!(result.is_err(), cycle, "{result:?}");
                if !cycle {
                    self.model.ents.get_mut(&child).unwrap().parent = Some(parent);
                }
            }
            Op::Like(a, b, v) => {
                let (Some(a), Some(b)) = (self.pick(a), self.pick(b)) else {
                    return;
                };
                if a == b {
                    return;
                }
                self.world.add_pair(a, b, Likes(v)).unwrap();
                self.model.likes.insert((a, b), v);
            }
            Op::MakePrefab(hp, poison) => {
                let e = if poison {
                    self.world.spawn((doecs::Prefab, Hp(hp), Poison))
                } else {
                    self.world.spawn((doecs::Prefab, Hp(hp)))
                };
                self.learn(e, Ent::default());
                self.model.insert(e, Kind::Prefab, 0, &mut hooks);
                self.model.insert(e, Kind::Hp, hp, &mut hooks);
                if poison {
                    self.model.insert(e, Kind::Poison, 0, &mut hooks);
                }
            }
            Op::Instantiate(who, n) => {
                let prefabs: Vec<Entity> = self
                    .model
                    .live()
                    .into_iter()
                    .filter(|&e| self.model.is_prefab(e))
                    .collect();
                if prefabs.is_empty() {
                    return;
                }
                let prefab = prefabs[who % prefabs.len()];
                let es = self.world.instantiate(prefab, n.into()).unwrap();
                assert_eq!(es.len(), usize::from(n));
                for e in es {
                    self.learn(
                        e,
                        Ent {
                            prefab_of: Some(prefab),
                            ..Default::default()
                        },
                    );
                }
            }
            Op::Disable(who) | Op::Enable(who) => {
                let Some(e) = self.pick(who) else {
                    return;
                };
                if self.model.is_prefab(e) {
                    return;
                }
                if matches!(op, Op::Disable(_)) {
                    self.world.disable(e).unwrap();
                    self.model
                        .ents
                        .get_mut(&e)
                        .unwrap()
                        .own
                        .insert(Kind::Disabled, 0);
                } else {
                    self.world.enable(e).unwrap();
                    self.model
                        .ents
                        .get_mut(&e)
                        .unwrap()
                        .own
                        .remove(&Kind::Disabled);
                }
            }
            Op::Medicine(v) => {
                self.world.insert_resource(Medicine(v));
                self.model.medicine = Some(v);
                self.model.medicine_changed = true;
            }
            Op::OneShot => {
                // The sick lose half their own hp, once.
                self.world
                    .run_system_once(|mut q: Query<(&mut Hp, Sparse<&Sick>)>| {
                        q.for_each(|(hp, _)| hp.0 /= 2)
                    })
                    .unwrap();
                let hidden = self.model.hidden();
                for (e, ent) in self.model.ents.iter_mut() {
                    if hidden.contains(e) || !ent.own.contains_key(&Kind::Sick) {
                        continue;
                    }
                    if let Some(hp) = ent.own.get_mut(&Kind::Hp) {
                        *hp /= 2;
                    }
                }
            }
            Op::SendEvent(v) => {
                self.world.send_event(Ev(v));
                self.model.sent.push(v);
            }
            Op::Frame => {
                let (world, model) = (&mut self.world, &mut self.model);
                let spark = frame(world, model, &mut self.update, &mut self.last);
                let ent = Ent {
                    own: [(Kind::Spark, model.frames - 1)].into(),
                    ..Default::default()
                };
                self.learn(spark, ent);
            }
            Op::SideFrame(v) => {
                self.side.send_event(Ev(v));
                self.side_model.sent.push(v);
                let spark = frame(
                    &mut self.side,
                    &mut self.side_model,
                    &mut self.update,
                    &mut self.last,
                );
                let frame = self.side_model.frames - 1;
                self.side_model.ents.insert(
                    spark,
                    Ent {
                        own: [(Kind::Spark, frame)].into(),
                        ..Default::default()
                    },
                );
            }
            Op::Snapshot => {
                if self.model.bombs() {
                    return;
                }
                let mut snapshot = self.snapshot.take().map(|s| s.0).unwrap_or_default();
                self.world.snapshot_into(&mut snapshot).unwrap();
                let image = self.world.entities().image().unwrap();
                self.snapshot = Some((
                    snapshot,
                    self.model.clone(),
                    image,
                    self.generations.clone(),
                ));
            }
            Op::Restore => {
                let Some((snapshot, saved, image, generations)) = &self.snapshot else {
                    return;
                };
                if self.model.bombs() {
                    return;
                }
                if saved.tag != self.model.tag {
                    assert_eq!(
                        self.world.restore(snapshot),
                        Err(doecs::SnapshotError::OtherWorld)
                    );
                    return;
                }
                self.world.restore(snapshot).unwrap();
                assert_eq!(
                    &self.world.entities().image().unwrap(),
                    image,
                    "the allocator, exactly"
                );
                // A rollback: ids handed out since the snapshot come again.
                self.generations = generations.clone();
                // Events, readers and frames are not part of a snapshot.
                let (sent, read, frames, heals) = (
                    self.model.sent.clone(),
                    self.model.read,
                    self.model.frames,
                    self.model.heals,
                );
                // The resource and its ticks come back; `heal`'s last run
                // does not, so a change it has run for since stays seen.
                let medicine_changed = saved.medicine_changed && heals == saved.heals;
                self.model = WorldModel {
                    sent,
                    read,
                    frames,
                    heals,
                    medicine_changed,
                    ..saved.clone()
                };
            }
            Op::SaveLoad => {
                if self.model.bombs() {
                    return;
                }
                let mut bytes = Vec::new();
                self.world
                    .save(
                        &mut bytes,
                        doecs_registry::SaveFormat::Binary,
                        &self.registry,
                    )
                    .unwrap();
                let mut loaded = World::load(&bytes[..], &self.registry).unwrap();
                assert_eq!(
                    loaded.entities().image().unwrap(),
                    self.world.entities().image().unwrap()
                );
                let tag = self.next_tag;
                self.next_tag += 1;
                set_up(&mut loaded, &self.registry, &self.logs, tag);
                // Dropping the old world removes every component: its hooks fire.
                for (&e, ent) in &self.model.ents {
                    if ent.own.contains_key(&Kind::Poison) {
                        hooks.push((false, e));
                    }
                }
                self.world = loaded;
                // A new world: no events or resources yet, and systems
                // start afresh there.
                self.model = WorldModel {
                    tag,
                    sent: Vec::new(),
                    read: 0,
                    frames: 0,
                    medicine: None,
                    medicine_changed: false,
                    heals: 0,
                    ..self.model.clone()
                };
            }
            Op::Defuse => {
                let bombs: Vec<Entity> = self
                    .model
                    .ents
                    .iter()
                    .filter(|(_, ent)| ent.own.contains_key(&Kind::Bomb))
                    .map(|(&e, _)| e)
                    .collect();
                for e in bombs {
                    self.model.remove(e, Kind::Bomb, &mut hooks);
                    expect_panic(true, || drop(self.world.remove_one::<Bomb>(e)));
                }
            }
        }
        if self.check {
            self.compare(hooks);
        }
    }

    /// A command buffer of `cmds`, applied; a bomb stops the buffer after the
    /// run of despawns it was in.
    fn buffered(&mut self, cmds: &[BufCmd], hooks: &mut Vec<(bool, Entity)>) {
        let mut buffer = CommandBuffer::new();
        // What each command does to the model, in order; `None` ends a run.
        let mut plan: Vec<BufCmd> = Vec::new();
        let mut spawned = Vec::new();
        let mut reserved_here = Vec::new();
        for cmd in cmds {
            match *cmd {
                BufCmd::Spawn(hp) => {
                    let e = buffer.spawn(&self.world, (Hp(hp),));
                    spawned.push((e, hp));
                }
                BufCmd::Insert(who, c) => {
                    let Some(e) = self.pick(who) else { continue };
                    buffer_insert(&mut buffer, e, c);
                }
                BufCmd::Despawn(who) => {
                    let Some(e) = self.pick(who) else { continue };
                    buffer.despawn(e);
                }
                BufCmd::InsertReserved(hp) => {
                    let e = self.world.reserve_entity();
                    buffer.insert_one(e, Hp(hp));
                    spawned.push((e, hp));
                    reserved_here.push(e);
                }
            }
            plan.push(cmd.clone());
        }
        // Replay on the model; entities are picked from the model as it was
        // when the commands were recorded.
        let live = self.model.live();
        let at = |who: usize| live[who % live.len()];
        let mut bomb = false;
        let mut spawns = spawned.into_iter();
        let mut i = 0;
        while i < plan.len() {
            match plan[i] {
                BufCmd::Spawn(_) | BufCmd::InsertReserved(_) => {
                    let (e, hp) = spawns.next().unwrap();
                    self.learn(
                        e,
                        Ent {
                            own: [(Kind::Hp, hp)].into(),
                            ..Default::default()
                        },
                    );
                }
                BufCmd::Insert(who, c) => {
                    let e = at(who);
                    if self.model.ents.contains_key(&e) {
                        bomb |= self.model.insert(e, c.kind(), c.value(), hooks);
                    } else {
                        // Refused: the value is dropped unused.
                        bomb |= matches!(c, Comp::Bomb);
                    }
                }
                BufCmd::Despawn(_) => {
                    // A run of despawns is one batch.
                    let mut run = Vec::new();
                    while let Some(&BufCmd::Despawn(who)) = plan.get(i) {
                        run.push(at(who));
                        i += 1;
                    }
                    i -= 1;
                    bomb |= self.model.despawn(&run, hooks);
                }
            }
            i += 1;
            if bomb {
                // The rest of the buffer is dropped; its spawns never happen.
                break;
            }
        }
        let world = &mut self.world;
        expect_panic(bomb, || {
            world.apply(&mut buffer);
        });
        // Ids reserved with `reserve_entity` whose insert was dropped stay
        // reserved: despawning one cancels it.
        for e in reserved_here {
            if !self.model.ents.contains_key(&e) {
                assert!(self.world.entities().is_reserved(e));
                self.world.despawn(e).unwrap();
            }
        }
    }

    fn compare(&mut self, mut hooks: Vec<(bool, Entity)>) {
        for (world, model) in [(&self.world, &self.model), (&self.side, &self.side_model)] {
            world.check_invariants();
            let live: Vec<Entity> = {
                let mut v: Vec<Entity> = world.iter_entities().collect();
                v.sort();
                v
            };
            assert_eq!(live, model.live(), "live ids of world {}", model.tag);
            assert_eq!(
                world.resource::<Medicine>().map(|m| m.0),
                model.medicine,
                "the medicine of world {}",
                model.tag
            );
            for (&e, ent) in &model.ents {
                let mut own: Vec<&str> = world
                    .entity(e)
                    .unwrap()
                    .components()
                    .map(|c| c.name())
                    .collect();
                own.sort_unstable();
                let mut want: Vec<&str> = ent.own.keys().map(|k| k.name()).collect();
                want.sort_unstable();
                assert_eq!(own, want, "{e:?}'s own components");
                assert_eq!(
                    world.get::<Hp>(e).ok().map(|h| h.0),
                    model.hp(e),
                    "{e:?}'s hp"
                );
                if let Some(&s) = ent.own.get(&Kind::Spark) {
                    assert_eq!(world.get::<Spark>(e).map(|s| s.0), Ok(s));
                }
                assert_eq!(world.parent(e), ent.parent, "{e:?}'s parent");
                assert_eq!(world.prefab_of(e), ent.prefab_of, "{e:?}'s prefab");
            }
            let pairs: BTreeMap<(Entity, Entity), u8> = doecs::raw::pairs_in_order::<Likes>(world)
                .into_iter()
                .map(|(a, b, l)| ((a, b), l.0))
                .collect();
            assert_eq!(pairs, model.likes, "pairs");
            let parents: BTreeSet<(Entity, Entity)> = doecs::raw::pairs_in_order::<ChildOf>(world)
                .into_iter()
                .map(|(a, b, _)| (a, b))
                .collect();
            let want: BTreeSet<(Entity, Entity)> = model
                .ents
                .iter()
                .filter_map(|(&e, ent)| Some((e, ent.parent?)))
                .collect();
            assert_eq!(parents, want, "ChildOf pairs");
        }
        let mut logs = self.logs.lock().unwrap();
        let mut seen = std::mem::take(&mut logs.hooks);
        seen.sort();
        hooks.sort();
        assert_eq!(seen, hooks, "what the hook saw");
        let mut observed = std::mem::take(&mut logs.observed);
        observed.sort();
        assert_eq!(observed, hooks, "what the observers saw");
        for model in [&self.model, &self.side_model] {
            for reader in 0..2u8 {
                let read: Vec<u32> = logs
                    .read
                    .iter()
                    .filter(|&&(t, r, _)| t == model.tag && r == reader)
                    .map(|&(_, _, v)| v)
                    .collect();
                assert_eq!(
                    read,
                    model.sent[..model.read],
                    "reader {reader} of world {}",
                    model.tag
                );
            }
        }
    }

    /// Everything a replay at another thread count must reproduce.
    fn digest(&self) -> String {
        let mut out = format!("{:?}\n", self.world.entities().image().unwrap());
        for e in self.model.live() {
            let own: Vec<&str> = self
                .world
                .entity(e)
                .unwrap()
                .components()
                .map(|c| c.name())
                .collect();
            out += &format!(
                "{e:?} {own:?} {:?} {:?}\n",
                self.world.get::<Hp>(e).ok(),
                self.world.parent(e)
            );
        }
        out += &format!("{:?}\n", doecs::raw::pairs_in_order::<Likes>(&self.world));
        out += &format!("{:?}", self.side.entities().image().unwrap());
        out
    }
}

/// One frame: the update schedule, the last schedule, then the event
/// turnover. Applies it to the model and returns the frame's spark.
fn frame(
    world: &mut World,
    model: &mut WorldModel,
    update: &mut Schedule,
    last: &mut Schedule,
) -> Entity {
    let before: BTreeSet<Entity> = world.iter_entities().collect();
    update.run(world).unwrap();
    last.run(world).unwrap();
    world.update_events();
    // The model: hp ticks (own values, live entities, not frozen), the
    // writer sends, both readers read everything, medicine that changed
    // heals, the sick freeze.
    // Systems' queries skip prefabs and disabled entities.
    let hidden = model.hidden();
    for (e, ent) in model.ents.iter_mut() {
        if hidden.contains(e) || ent.own.contains_key(&Kind::Frozen) {
            continue;
        }
        if let Some(hp) = ent.own.get_mut(&Kind::Hp) {
            *hp += 1;
        }
    }
    if let (Some(at_least), true) = (model.medicine, model.medicine_changed) {
        for (e, ent) in model.ents.iter_mut() {
            let own = |k| ent.own.contains_key(&k);
            let healed = !hidden.contains(e)
                && own(Kind::Frozen)
                && !own(Kind::Sick)
                && ent.own.get(&Kind::Hp).is_some_and(|&hp| hp >= at_least);
            if healed {
                ent.own.remove(&Kind::Frozen);
            }
        }
        model.medicine_changed = false;
        model.heals += 1;
    }
    model.sent.push(1000 + model.frames);
    model.read = model.sent.len();
    for (e, ent) in model.ents.iter_mut() {
        if !hidden.contains(e) && ent.own.remove(&Kind::Sick).is_some() {
            ent.own.insert(Kind::Frozen, 0);
        }
    }
    model.frames += 1;
    let new: Vec<Entity> = world
        .iter_entities()
        .filter(|e| !before.contains(e))
        .collect();
    assert_eq!(new.len(), 1, "one spark per frame");
    new[0]
}

fn run_ops(ops: &[Op], threads: usize, check: bool) -> String {
    // Bombs are expected to go off: keep their panics quiet.
    static QUIET: std::sync::Once = std::sync::Once::new();
    QUIET.call_once(|| {
        let default = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if info.payload().downcast_ref::<&str>() != Some(&"bomb") {
                default(info);
            }
        }));
    });
    let mut run = Run::new(threads, check);
    for op in ops {
        run.step(op);
    }
    // Defuse what is left, so dropping the world does not panic.
    run.step(&Op::Defuse);
    run.digest()
}

fn cases() -> u32 {
    if cfg!(miri) {
        4
    } else {
        std::env::var("DOECS_MODEL_CASES")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(128)
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn every_feature_together_matches_the_model(ops in prop::collection::vec(op(), 1..if cfg!(miri) { 24 } else { 80 })) {
        let checked = run_ops(&ops, 2, true);
        let threads: &[usize] = if cfg!(miri) { &[1] } else { &[1, 4, 8] };
        for &t in threads {
            prop_assert_eq!(&run_ops(&ops, t, false), &checked, "replay at {} threads", t);
        }
    }
}
