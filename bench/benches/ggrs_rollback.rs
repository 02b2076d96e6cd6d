//! ggrs_rollback: what one 8-frame rollback costs on the demo fleet's shape
//! (1,000 ships of 13 entities: 13,000 entities), with whole-world
//! snapshots against per-type copies written by hand.
//!
//! The game: a ship has `Position`, `Velocity` (three `f32`s each), `Mass`
//! and `Pilot`; its four parts and eight sub-parts have `Spin` and `Angle`.
//! An update steers each ship by its pilot's input, applies gravity and
//! drag, integrates and turns every part (four systems on an `App`, one
//! thread). A rollback is what ggrs asks for when a remote input arrives 8
//! frames late: load the state of 8 frames ago, then 8 times save and
//! advance (`rollback8_*`). `save_*` and `load_*` are one save and one load
//! alone. Checksums are left out of both `doecs_*` and `by_type_*` (a
//! hand-written game would have to add its own).
//!
//! - `doecs_*`: `World::snapshot_into` into a ring of 9 reused `Snapshot`s
//!   and `World::restore` (what doecs-ggrs does).
//! - `doecs_ggrs_rollback8`: the same through `doecs_ggrs::Rollback`, whose
//!   saves also compute the checksum (`doecs_ggrs_checksum` alone).
//! - `by_type_*`: the bevy_ggrs approach: per registered type, a
//!   `Vec<(Entity, T)>` filled from a query on save (ring of 9, reused
//!   `Vec`s), written back with one `get_mut` per value on load. No entity
//!   is spawned or despawned here, so it needs no entity bookkeeping,
//!   which favours it. `by_type_rollback8_checksum` adds the same checksum
//!   as doecs-ggrs's after each save, to compare with
//!   `doecs_ggrs_rollback8` like for like.
//!
//! `ggrs_play_*` is the full `doecs play` game, built by the command's own
//! `doecs_cli::play::fleet_app` (one worker thread; `ggrs_play_*_2threads`
//! the same on two, as `doecs play --threads 2`): beside the columns it
//! snapshots the transform hierarchy and the DataComponent store through
//! their managers' hooks, the entity names and the `ChildOf` pairs, and its
//! checksum also hashes every transform. Driven through
//! `doecs_ggrs::Rollback` as a session drives it, with the scripted inputs
//! of `play`: `save` is one save (snapshot and checksum), `load` one load
//! (alternating between two frames 8 apart, so every load has something to
//! put back), `checksum` the checksum alone, `advance8` a load and eight
//! advances, `rollback8` a load then eight times advance and save, and
//! `rollback8_sparse_saving` what ggrs asks for in its sparse saving mode
//! (`SessionBuilder::with_sparse_saving_mode`, which `doecs play` uses): a
//! load, eight advances and one save, of the confirmed frame.

use criterion::{criterion_group, criterion_main, Criterion};
use doecs::prelude::*;
use doecs::{App, Entity, Snapshot, TimeSource, World};
use doecs_bench::{group, sized};
use doecs_cli::play::{fleet_app, scripted_input, ShipInput};
use std::hint::black_box;
use std::time::Duration;

#[derive(Copy, Clone, Debug, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(transparent)]
struct Position([f32; 3]);
#[derive(Copy, Clone, Debug, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(transparent)]
struct Velocity([f32; 3]);
#[derive(Copy, Clone, Debug, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(transparent)]
struct Mass(f32);
#[derive(Copy, Clone, Debug, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(transparent)]
struct Pilot(u32);
#[derive(Copy, Clone, Debug, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(transparent)]
struct Spin(f32);
#[derive(Copy, Clone, Debug, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(transparent)]
struct Angle(f32);

/// Both players' inputs of the frame: thrust per player.
#[derive(Clone, Debug, Default)]
struct Inputs([i8; 2], u32);

const DT: f32 = 1.0 / 60.0;
const DEPTH: usize = 8;

fn steer(inputs: Res<Inputs>, mut ships: Query<(&Pilot, &mut Velocity)>) {
    ships.for_each(|(p, v)| v.0[0] += f32::from(inputs.0[p.0 as usize & 1]) * 4.0 * DT);
}

fn gravity_drag(mut q: Query<(&mut Velocity, &Mass)>) {
    q.for_each(|(v, m)| {
        let drag = 0.05 / m.0;
        v.0[1] -= 9.81 * DT;
        for c in &mut v.0 {
            *c -= *c * drag * DT;
        }
    });
}

fn integrate(mut q: Query<(&mut Position, &mut Velocity)>) {
    q.for_each(|(p, v)| {
        for k in 0..3 {
            p.0[k] += v.0[k] * DT;
        }
        if p.0[1] < 0.0 {
            p.0[1] = -p.0[1];
            v.0[1] = -v.0[1] * 0.8;
        }
    });
}

fn turn(mut q: Query<(&mut Angle, &Spin)>) {
    q.for_each(|(a, s)| a.0 += s.0 * DT);
}

/// The fleet set up by `doecs_ggrs::GgrsPlugin`, whose saves also hash
/// the world (the checksum ggrs sends to peers).
fn fleet_ggrs(ships: usize) -> App {
    let mut app = fleet(ships);
    app.add_plugins(
        doecs_ggrs::GgrsPlugin::<u8>::new(Duration::from_secs_f32(DT))
            .rollback_component::<Position>()
            .rollback_component::<Velocity>()
            .rollback_component::<Mass>()
            .rollback_component::<Pilot>()
            .rollback_component::<Spin>()
            .rollback_component::<Angle>()
            .rollback_resource::<Inputs>(),
    )
    .unwrap();
    app
}

fn fleet(ships: usize) -> App {
    let mut world = World::new();
    for t in [
        World::snapshot_by_copy::<Position>,
        World::snapshot_by_copy::<Velocity>,
        World::snapshot_by_copy::<Mass>,
        World::snapshot_by_copy::<Pilot>,
        World::snapshot_by_copy::<Spin>,
        World::snapshot_by_copy::<Angle>,
    ] {
        t(&mut world);
    }
    world.snapshot_resource::<Inputs>();
    for s in 0..ships {
        let f = s as f32;
        world.spawn((
            Position([f, 10.0, 0.0]),
            Velocity([1.0, 0.0, 0.5]),
            Mass(1.0 + f * 1e-3),
            Pilot((s % 2) as u32),
        ));
        for k in 0..12 {
            world.spawn((Spin(0.5 + k as f32 * 0.1), Angle(0.0)));
        }
    }
    world.insert_resource(Inputs::default());
    let mut app = App::with_world(world, 1);
    app.set_time_source(TimeSource::Manual(Duration::from_secs_f32(DT)));
    app.add_systems(Update, (steer, gravity_drag, integrate, turn).into_group())
        .unwrap();
    app
}

/// One frame: this frame's inputs, one update.
fn advance(app: &mut App, frame: u32) {
    let inputs = app.world_mut().resource_mut::<Inputs>().unwrap();
    inputs.0 = [((frame / 8) % 3) as i8 - 1, ((frame / 5) % 3) as i8 - 1];
    inputs.1 = frame;
    app.update().unwrap();
}

/// The bevy_ggrs-style state: one `Vec<(Entity, T)>` per type.
#[derive(Default)]
struct ByType {
    position: Vec<(Entity, Position)>,
    velocity: Vec<(Entity, Velocity)>,
    mass: Vec<(Entity, Mass)>,
    pilot: Vec<(Entity, Pilot)>,
    spin: Vec<(Entity, Spin)>,
    angle: Vec<(Entity, Angle)>,
    inputs: Inputs,
}

fn save_one<T: Copy + Send + Sync + 'static>(world: &World, out: &mut Vec<(Entity, T)>) {
    out.clear();
    world
        .query::<(Entity, &T)>()
        .iter()
        .for_each(|(e, v)| out.push((e, *v)));
}

fn load_one<T: Copy + Send + Sync + 'static>(world: &mut World, from: &[(Entity, T)]) {
    for (e, v) in from {
        if let Ok(slot) = world.get_mut::<T>(*e) {
            *slot = *v;
        }
    }
}

impl ByType {
    fn save(&mut self, world: &World) {
        save_one(world, &mut self.position);
        save_one(world, &mut self.velocity);
        save_one(world, &mut self.mass);
        save_one(world, &mut self.pilot);
        save_one(world, &mut self.spin);
        save_one(world, &mut self.angle);
        self.inputs.clone_from(world.resource::<Inputs>().unwrap());
    }

    fn load(&self, world: &mut World) {
        load_one(world, &self.position);
        load_one(world, &self.velocity);
        load_one(world, &self.mass);
        load_one(world, &self.pilot);
        load_one(world, &self.spin);
        load_one(world, &self.angle);
        world
            .resource_mut::<Inputs>()
            .unwrap()
            .clone_from(&self.inputs);
    }
}

fn bench(c: &mut Criterion) {
    let ships = sized(1000);
    let mut g = group(c, &format!("ggrs_rollback_{}", ships * 13));

    // doecs: a ring of snapshots, filled once by playing DEPTH + 1 frames.
    let mut app = fleet(ships);
    let mut ring: Vec<Snapshot> = (0..=DEPTH).map(|_| Snapshot::new()).collect();
    for (f, slot) in ring.iter_mut().enumerate() {
        app.world_mut().snapshot_into(slot).unwrap();
        advance(&mut app, f as u32);
    }
    g.bench_function("doecs_save", |b| {
        b.iter(|| {
            app.world_mut()
                .snapshot_into(black_box(&mut ring[DEPTH]))
                .unwrap()
        })
    });
    g.bench_function("doecs_load", |b| {
        b.iter(|| app.world_mut().restore(black_box(&ring[0])).unwrap())
    });
    g.bench_function("doecs_rollback8", |b| {
        b.iter(|| {
            let (first, rest) = ring.split_at_mut(1);
            app.world_mut().restore(&first[0]).unwrap();
            for (f, slot) in rest.iter_mut().enumerate() {
                advance(&mut app, f as u32 + 1);
                app.world_mut().snapshot_into(slot).unwrap();
            }
        })
    });
    g.bench_function("advance8_only", |b| {
        b.iter(|| {
            app.world_mut().restore(&ring[0]).unwrap();
            for f in 1..=DEPTH {
                advance(&mut app, f as u32);
            }
        })
    });

    // doecs-ggrs's `Rollback`, as a session drives it: checksums included.
    let mut app = fleet_ggrs(ships);
    let mut rollback = doecs_ggrs::Rollback::<u8>::new(&app, DEPTH);
    let mut first = 0;
    for f in 0..=DEPTH {
        let (slot, _) = rollback.save(app.world_mut(), f as i32).unwrap();
        if f == 0 {
            first = slot;
        }
        advance(&mut app, f as u32);
    }
    g.bench_function("doecs_ggrs_checksum", |b| {
        b.iter(|| black_box(rollback.world_checksum(app.world())))
    });
    g.bench_function("doecs_ggrs_rollback8", |b| {
        b.iter(|| {
            rollback.load(app.world_mut(), 0, first).unwrap();
            for f in 1..=DEPTH {
                advance(&mut app, f as u32);
                rollback.save(app.world_mut(), f as i32).unwrap();
            }
        })
    });

    // By type: the same, with hand-written per-type copies (the app is set
    // up by the plugin only so that `sums` hashes the same items).
    let mut app = fleet_ggrs(ships);
    let mut sums = doecs_ggrs::Rollback::<u8>::new(&app, DEPTH);
    let mut ring: Vec<ByType> = (0..=DEPTH).map(|_| ByType::default()).collect();
    for (f, slot) in ring.iter_mut().enumerate() {
        slot.save(app.world());
        advance(&mut app, f as u32);
    }
    g.bench_function("by_type_save", |b| {
        b.iter(|| black_box(&mut ring[DEPTH]).save(app.world()))
    });
    g.bench_function("by_type_load", |b| {
        b.iter(|| black_box(&ring[0]).load(app.world_mut()))
    });
    g.bench_function("by_type_rollback8", |b| {
        b.iter(|| {
            let (first, rest) = ring.split_at_mut(1);
            first[0].load(app.world_mut());
            for (f, slot) in rest.iter_mut().enumerate() {
                advance(&mut app, f as u32 + 1);
                slot.save(app.world());
            }
        })
    });
    g.bench_function("by_type_rollback8_checksum", |b| {
        b.iter(|| {
            let (first, rest) = ring.split_at_mut(1);
            first[0].load(app.world_mut());
            for (f, slot) in rest.iter_mut().enumerate() {
                advance(&mut app, f as u32 + 1);
                slot.save(app.world());
                black_box(sums.world_checksum(app.world()));
            }
        })
    });
    g.finish();
}

/// Both players' scripted inputs of `frame`, as `doecs play` feeds them.
fn play_inputs(frame: i32) -> [(ShipInput, ggrs::InputStatus); 2] {
    [0, 1].map(|p| (scripted_input(1, frame, p), ggrs::InputStatus::Confirmed))
}

/// The full `doecs play` game (see the module docs), on one worker thread
/// and on two.
fn bench_play(c: &mut Criterion) {
    bench_play_on(c, 1, "");
    bench_play_on(c, 2, "_2threads");
}

fn bench_play_on(c: &mut Criterion, threads: usize, suffix: &str) {
    let ships = sized(1000);
    let mut g = group(c, &format!("ggrs_play_{}{suffix}", ships * 13));
    let mut app = fleet_app(ships, threads).unwrap();
    let mut rollback = doecs_ggrs::Rollback::<ShipInput>::new(&app, DEPTH);
    // Frames 0..=DEPTH saved, the world at frame DEPTH.
    let (mut slots, mut sums) = (Vec::new(), Vec::new());
    for f in 0..=DEPTH as i32 {
        if f > 0 {
            rollback.advance(&mut app, &play_inputs(f - 1)).unwrap();
        }
        let (slot, sum) = rollback.save(app.world_mut(), f).unwrap();
        slots.push(slot);
        sums.push(sum);
    }
    let last = DEPTH as i32;
    g.bench_function("save", |b| {
        b.iter(|| black_box(rollback.save(app.world_mut(), last).unwrap()))
    });
    let mut which = false;
    g.bench_function("load", |b| {
        b.iter(|| {
            which = !which;
            let (f, slot) = if which {
                (0, slots[0])
            } else {
                (last, slots[DEPTH])
            };
            rollback.load(app.world_mut(), f, slot).unwrap();
        })
    });
    g.bench_function("checksum", |b| {
        b.iter(|| black_box(rollback.world_checksum(app.world())))
    });
    g.bench_function("advance8", |b| {
        b.iter(|| {
            rollback.load(app.world_mut(), 0, slots[0]).unwrap();
            for f in 1..=last {
                rollback.advance(&mut app, &play_inputs(f - 1)).unwrap();
            }
        })
    });
    g.bench_function("rollback8", |b| {
        b.iter(|| {
            rollback.load(app.world_mut(), 0, slots[0]).unwrap();
            for f in 1..=last {
                rollback.advance(&mut app, &play_inputs(f - 1)).unwrap();
                rollback.save(app.world_mut(), f).unwrap();
            }
        })
    });
    // ggrs's sparse saving mode: a rollback saves only the confirmed
    // frame, so one save among the eight advances.
    g.bench_function("rollback8_sparse_saving", |b| {
        b.iter(|| {
            rollback.load(app.world_mut(), 0, slots[0]).unwrap();
            for f in 1..=last {
                rollback.advance(&mut app, &play_inputs(f - 1)).unwrap();
                if f == 1 {
                    rollback.save(app.world_mut(), f).unwrap();
                }
            }
        })
    });
    // Every re-simulation from frame 0 reproduced the first run's frame 8,
    // and a load puts back exactly what was saved.
    assert_eq!(rollback.world_checksum(app.world()), sums[DEPTH]);
    rollback.load(app.world_mut(), 0, slots[0]).unwrap();
    assert_eq!(rollback.world_checksum(app.world()), sums[0]);
    g.finish();
}

criterion_group!(benches, bench, bench_play);
criterion_main!(benches);
