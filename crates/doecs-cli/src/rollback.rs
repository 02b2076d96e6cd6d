//! `doecs run --rollback N`: the "sync test" of rollback netcode libraries.
//!
//! A game that rolls back (to apply a late input, say) must get exactly the
//! same world when it re-simulates frames it has already run. The sync test
//! checks that on every frame: before each frame the world is snapshot into
//! a ring of N [`Snapshot`]s (reused: nothing is allocated once the world
//! has stopped growing), the frame runs forward and the world is hashed
//! ([`world_hash`]). Once N frames have run, after each frame f the world is
//! restored to the snapshot taken before frame f−N+1 (the oldest in the
//! ring), frames f−N+1..=f run again, and the re-simulated world's hash must
//! equal the forward run's hash after frame f ([`check_hash`]); a mismatch
//! stops the run with an error naming the frame. Frames are numbered from 1
//! in messages; `--frames F` checks F−N+1 frames.
//!
//! The re-simulated world then carries on, so later frames also test that a
//! restored world keeps running exactly as it would have. Every component
//! of the demo (`Position`, `Velocity`, `Mass`, `Spin`) is snapshot as raw
//! bytes, the frame's time step as a cloned resource, and the transform
//! manager and the DataComponent store through their own snapshot hooks.
//!
//! The report gives the mean cost per frame of the snapshot, the restore,
//! the N re-simulated frames and a hash, beside the forward frame time.

use crate::components::{Mass, Position, Spin, Velocity};
use crate::frame_times::FrameTimes;
use crate::run::{self, FrameDt, RunOptions, RunReport, SystemStats, DT};
use doecs::{App, AppError, AppExit, Entity, Plugin, Runner, Snapshot, Time, TimeSource, World};
use doecs_transform::TransformManager;
use std::time::{Duration, Instant};

/// The deepest rollback `--rollback` accepts: each frame re-simulates this
/// many frames and the ring holds as many snapshots, so deeper ones only
/// multiply the run time and the memory (a few MB per snapshot of the
/// default demo level).
pub const MAX_ROLLBACK: usize = 1000;

/// Checks `--rollback` against the other options; returns the depth.
pub fn check_args(
    rollback: Option<usize>,
    inspect: bool,
    frames: usize,
) -> Result<Option<usize>, String> {
    let Some(n) = rollback else {
        return Ok(None);
    };
    if n == 0 {
        return Err("--rollback must be at least 1 (frames to roll back)".into());
    }
    if n > MAX_ROLLBACK {
        return Err(format!(
            "--rollback {n} is more than the limit of {MAX_ROLLBACK} frames \
             (every frame re-simulates N frames, and N snapshots are kept)"
        ));
    }
    if inspect {
        return Err("--rollback cannot be combined with --inspect or --inspect-write".into());
    }
    if frames < n {
        return Err(format!(
            "--rollback {n} needs at least {n} frames to check one (--frames {frames})"
        ));
    }
    Ok(Some(n))
}

/// Registers everything the demo world holds for snapshots: the plain
/// components as raw bytes, through their one registration in the
/// component registry, and the time step and the app's clocks by `Clone`
/// (the managers take part through their own hooks).
pub fn make_snapshotable(world: &mut World) {
    crate::registry::component_registry()
        .install(world)
        .expect("the demo's names are the world's");
    world.snapshot_resource::<FrameDt>();
    world.snapshot_resource::<Time>();
    world.snapshot_resource::<Time<doecs::Fixed>>();
}

/// A fast hash over 64-bit words, FxHash style. Each step,
/// `h ← (rotl(h, 5) ⊕ w) · K` with `K` odd, is a bijection of `h` for a
/// given word, so two inputs that differ in exactly one word always hash
/// differently: one changed value is never missed.
struct WordHash(u64);

impl WordHash {
    const K: u64 = 0x517c_c1b7_2722_0a95;

    fn new() -> Self {
        WordHash(0xcbf2_9ce4_8422_2325)
    }

    #[inline]
    fn word(&mut self, w: u64) {
        self.0 = (self.0.rotate_left(5) ^ w).wrapping_mul(Self::K);
    }

    /// The floats' bits, two to a word.
    #[inline]
    fn floats(&mut self, xs: &[f32]) {
        let mut pairs = xs.chunks_exact(2);
        for p in &mut pairs {
            self.word(u64::from(p[0].to_bits()) | u64::from(p[1].to_bits()) << 32);
        }
        for x in pairs.remainder() {
            self.word(u64::from(x.to_bits()));
        }
    }

    /// The state through a bijective finalizer (splitmix64's).
    fn finish(&self) -> u64 {
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

/// A deterministic hash of the world: every entity's id and the bits of
/// every demo component it has, in query (archetype and row) order, then
/// every transform instance's entity, local and world transform in the
/// manager's array order. The same world always hashes the same, at any
/// thread count and in any process; a restored world hashes as the world
/// it was snapshot from.
pub fn world_hash(world: &World) -> u64 {
    let mut h = WordHash::new();
    h.word(world.len() as u64);
    world
        .query::<(
            Entity,
            Option<&Position>,
            Option<&Velocity>,
            Option<&Mass>,
            Option<&Spin>,
        )>()
        .iter()
        .for_each(|(e, p, v, m, s)| {
            h.word(e.to_bits());
            let has = |present: bool, bit: u64| if present { bit } else { 0 };
            h.word(
                has(p.is_some(), 1)
                    | has(v.is_some(), 2)
                    | has(m.is_some(), 4)
                    | has(s.is_some(), 8),
            );
            if let Some(p) = p {
                h.floats(&p.0);
            }
            if let Some(v) = v {
                h.floats(&v.0);
            }
            match (m, s) {
                (Some(m), Some(s)) => h.floats(&[m.0, s.0]),
                (Some(m), None) => h.floats(&[m.0]),
                (None, Some(s)) => h.floats(&[s.0]),
                (None, None) => {}
            }
        });
    if let Some(tm) = world.manager::<TransformManager>() {
        h.word(tm.len() as u64);
        h.word(tm.dirty_len() as u64);
        for inst in tm.iter() {
            h.word(inst.entity().to_bits());
            if let (Some(local), Some(world)) = (tm.local(inst), tm.world(inst)) {
                h.floats(&local.to_cols_array());
                h.floats(&world.to_cols_array());
            }
        }
    }
    h.finish()
}

/// The check of one frame: `Ok` when the re-simulated hash equals the
/// forward one, else an error naming the frame (1-based) and the frame the
/// world was rolled back to.
pub fn check_hash(
    frame: usize,
    depth: usize,
    forward: u64,
    resimulated: u64,
) -> Result<(), String> {
    if forward == resimulated {
        return Ok(());
    }
    Err(format!(
        "rollback {depth}: frame {frame} is not deterministic: after restoring the world \
         as it was before frame {} and re-simulating {depth} frames, the world hash is \
         {resimulated:#018x}, but the forward run's was {forward:#018x}",
        frame + 1 - depth
    ))
}

/// What a sync test measured (a resource once the run ends).
#[derive(Clone, Debug, Default)]
pub struct RollbackReport {
    /// N, the frames rolled back and re-simulated for each check.
    pub depth: usize,
    /// Frames whose re-simulation was checked.
    pub checked: usize,
    /// The forward run, as `run` reports it (frames and system times).
    pub run: RunReport,
    /// Total time taking snapshots (one per frame).
    pub snapshot: Duration,
    /// Total time restoring (one per check).
    pub restore: Duration,
    /// Total time re-simulating (N frames per check).
    pub resimulate: Duration,
    /// Total time hashing the world (twice per check: forward and re-simulated).
    pub hash: Duration,
    /// Hashes computed.
    pub hashes: usize,
}

/// The sync test as the app's runner: `--frames` updates, each checked
/// by rolling back `depth` frames and re-simulating them (see the module
/// docs). The report goes into the [`RollbackReport`] resource; a frame
/// that re-simulates differently ends the run with the plugin's error.
pub struct SyncTestPlugin {
    /// Frames rolled back and re-simulated for each check.
    pub depth: usize,
    /// Frames, progress bar and pacing.
    pub options: RunOptions,
}

impl Plugin for SyncTestPlugin {
    fn build(&self, app: &mut App) -> Result<(), AppError> {
        if self.depth == 0 {
            return Err(sync_test_error(
                "--rollback must be at least 1 (frames to roll back)".into(),
            ));
        }
        // Re-simulated frames must see the same time as the forward ones.
        app.set_time_source(TimeSource::Manual(Duration::from_secs_f32(DT)));
        make_snapshotable(app.world_mut());
        let (depth, options) = (self.depth, self.options.clone());
        app.set_runner(Runner::Custom(Box::new(move |app| {
            let report =
                sync_test(app, &options, depth, &mut |_, _| {}).map_err(sync_test_error)?;
            app.world_mut().insert_resource(report);
            Ok(AppExit::Success)
        })));
        Ok(())
    }
}

fn sync_test_error(message: String) -> AppError {
    AppError::Plugin {
        plugin: "SyncTestPlugin".to_owned(),
        source: message.into(),
    }
}

/// The sync test. `before_resimulating(world, first)` runs after each
/// restore, before frame `first` (1-based) is re-simulated: nothing in the
/// program, a hook for tests that break determinism on purpose.
fn sync_test(
    app: &mut App,
    options: &RunOptions,
    depth: usize,
    before_resimulating: &mut dyn FnMut(&mut World, usize),
) -> Result<RollbackReport, String> {
    let RunOptions {
        frames,
        quiet,
        pace,
        ..
    } = *options;
    let bar = run::frame_bar(frames, quiet, "rollback ");
    bar.set_message(depth.to_string());
    let mut ring: Vec<Snapshot> = (0..depth).map(|_| Snapshot::new()).collect();
    let mut report = RollbackReport {
        depth,
        ..RollbackReport::default()
    };
    let mut systems: Vec<SystemStats> = Vec::new();
    let mut frame_times = FrameTimes::new();
    let mut next = Instant::now();
    let update = |app: &mut App| app.update().map_err(|e| e.to_string());
    for f in 0..frames {
        // `ring[k % depth]` holds the world as it was before frame k (0-based):
        // the last `depth` of them, which is all a check goes back over.
        let start = Instant::now();
        app.world_mut()
            .snapshot_into(&mut ring[f % depth])
            .map_err(|e| format!("frame {}: cannot snapshot the world: {e}", f + 1))?;
        report.snapshot += start.elapsed();

        let start = Instant::now();
        update(app)?;
        frame_times.record(start.elapsed());
        run::add_times(&mut systems, app.last_update_times());

        // The forward hash after frame f + 1.
        let start = Instant::now();
        let forward = world_hash(app.world());
        report.hash += start.elapsed();
        report.hashes += 1;

        if f + 1 >= depth {
            // Back to before frame `first` (0-based), then frames first..=f again.
            let first = f + 1 - depth;
            let start = Instant::now();
            app.world_mut()
                .restore(&ring[first % depth])
                .map_err(|e| format!("frame {}: cannot restore the world: {e}", f + 1))?;
            report.restore += start.elapsed();
            before_resimulating(app.world_mut(), first + 1);
            let start = Instant::now();
            for _ in first..=f {
                update(app)?;
            }
            report.resimulate += start.elapsed();
            let start = Instant::now();
            let again = world_hash(app.world());
            report.hash += start.elapsed();
            report.hashes += 1;
            check_hash(f + 1, depth, forward, again)?;
            report.checked += 1;
        }
        bar.inc(1);
        if let Some(pace) = pace {
            next = (next + pace).max(Instant::now());
            std::thread::sleep(next.saturating_duration_since(Instant::now()));
        }
    }
    bar.finish_and_clear();
    report.run = RunReport {
        systems,
        frames: frame_times,
        mean_height: run::mean_height(app.world()),
        inspector: None,
    };
    Ok(report)
}

/// The report's line, e.g. `rollback 8: 593 frames checked, hashes equal;
/// per frame: snapshot 12 µs, restore 20 µs, re-simulate 8 frames 2.1 ms,
/// hash 40 µs (forward frame 0.26 ms)`.
pub fn format_report(report: &RollbackReport) -> String {
    let us = |total: Duration, count: u64| total.as_secs_f64() * 1e6 / count.max(1) as f64;
    let frames = report.run.frames.count();
    let forward = report.run.frames.total();
    let checked = report.checked;
    format!(
        "rollback {}: {checked} frames checked, hashes equal; per frame: snapshot {:.1} µs, \
         restore {:.1} µs, re-simulate {} frames {:.3} ms, hash {:.1} µs (forward frame {:.3} ms)",
        report.depth,
        us(report.snapshot, frames),
        us(report.restore, checked as u64),
        report.depth,
        us(report.resimulate, checked as u64) / 1e3,
        us(report.hash, report.hashes as u64),
        us(forward, frames) / 1e3,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::{run_job, Job, SimulationPlugin};
    use doecs_resource::{AlignedBytes, SpawnOptions};

    /// The sync test on `world`, as `doecs run --rollback` runs it.
    fn run(
        world: &mut World,
        options: &RunOptions,
        depth: usize,
    ) -> Result<RollbackReport, String> {
        let job = Job {
            rollback: Some(depth),
            ..Job::frames(options.clone())
        };
        run_job(world, &job).map_err(|e| e.to_string())?;
        Ok(world
            .remove_resource::<RollbackReport>()
            .unwrap_or_default())
    }

    /// The demo level with `ships` ships, spawned as `doecs run` does.
    fn demo_world(ships: usize) -> World {
        let json = crate::demo_level::demo_level_json(ships, |_| {});
        let (compiler, spawner) = crate::registry::compiler_and_spawner();
        let blob = compiler
            .compile_str(std::str::from_utf8(&json).unwrap())
            .unwrap();
        let blob = AlignedBytes::from_slice(&blob);
        let mut world = World::new();
        world.add_manager(TransformManager::deferred(), doecs::DestroyNotice::Callback);
        let (view, skipped) = spawner.load(&blob, SpawnOptions::default()).unwrap();
        spawner.spawn_loaded(&mut world, &view, skipped).unwrap();
        world
    }

    fn options(frames: usize, threads: usize) -> RunOptions {
        RunOptions {
            frames,
            threads,
            quiet: true,
            pace: None,
        }
    }

    #[test]
    fn the_arguments_are_checked() {
        assert_eq!(check_args(None, true, 1), Ok(None));
        assert_eq!(check_args(Some(3), false, 3), Ok(Some(3)));
        let err = check_args(Some(0), false, 10).unwrap_err();
        assert!(err.contains("at least 1"), "{err}");
        let err = check_args(Some(MAX_ROLLBACK + 1), false, 5000).unwrap_err();
        assert!(err.contains("limit of 1000"), "{err}");
        let err = check_args(Some(2), true, 10).unwrap_err();
        assert!(err.contains("--inspect"), "{err}");
        let err = check_args(Some(8), false, 5).unwrap_err();
        assert!(err.contains("at least 8 frames"), "{err}");
    }

    #[test]
    fn the_check_fails_on_different_hashes() {
        assert_eq!(check_hash(12, 4, 7, 7), Ok(()));
        let err = check_hash(12, 4, 7, 8).unwrap_err();
        assert!(err.contains("frame 12 is not deterministic"), "{err}");
        assert!(err.contains("before frame 9"), "{err}");
    }

    #[test]
    fn the_hash_sees_one_changed_value() {
        let mut world = demo_world(3);
        let h = world_hash(&world);
        assert_eq!(h, world_hash(&world), "deterministic");
        let e = world
            .query::<(Entity, &Position)>()
            .iter()
            .nth(1)
            .unwrap()
            .0;
        // One bit of one coordinate.
        let flip = |x: &mut f32| *x = f32::from_bits(x.to_bits() ^ 1);
        flip(&mut world.get_mut::<Position>(e).unwrap().0[2]);
        assert_ne!(world_hash(&world), h, "a component value");
        flip(&mut world.get_mut::<Position>(e).unwrap().0[2]);
        assert_eq!(world_hash(&world), h, "changed back");
        let tm = world.manager_mut::<TransformManager>().unwrap();
        let inst = tm.iter().nth(5).unwrap();
        let local = tm.local(inst).unwrap();
        tm.set_local(inst, local * glam::Affine3A::from_rotation_x(1e-3))
            .unwrap();
        assert_ne!(world_hash(&world), h, "a transform");
    }

    #[test]
    fn a_deterministic_world_passes_at_every_thread_count() {
        let mut hashes = Vec::new();
        for threads in [1, 3] {
            let mut world = demo_world(6);
            let report = run(&mut world, &options(12, threads), 4).unwrap();
            assert_eq!(report.checked, 12 - 4 + 1);
            assert_eq!(report.run.frames.count(), 12);
            world.check_invariants();
            world
                .manager::<TransformManager>()
                .unwrap()
                .check_invariants();
            hashes.push(world_hash(&world));
        }
        assert_eq!(hashes[0], hashes[1], "the same world at 1 and 3 threads");
        // The sync test leaves the world where a plain run leaves it.
        let mut plain = demo_world(6);
        run_job(&mut plain, &Job::frames(options(12, 2))).unwrap();
        assert_eq!(world_hash(&plain), hashes[0]);
    }

    #[test]
    fn rolling_back_one_frame_checks_every_frame() {
        let mut world = demo_world(2);
        let report = run(&mut world, &options(5, 2), 1).unwrap();
        assert_eq!(report.checked, 5);
        let line = format_report(&report);
        assert!(
            line.starts_with("rollback 1: 5 frames checked, hashes equal"),
            "{line}"
        );
    }

    #[test]
    fn a_broken_resimulation_is_caught_and_named() {
        // Nudge one velocity when re-simulating from the start of frame 7:
        // the check of the frame that re-simulation ends on must fail.
        let world = demo_world(4);
        let depth = 3;
        let mut nudge = |world: &mut World, first: usize| {
            if first == 7 {
                let mut q = world.query_mut::<&mut Velocity>();
                q.for_each(|v| v.0[0] += 0.5);
            }
        };
        let mut app = App::with_world(world, 2);
        app.add_plugins(SimulationPlugin).unwrap();
        app.add_plugins(SyncTestPlugin {
            depth,
            options: options(20, 2),
        })
        .unwrap();
        let err = sync_test(&mut app, &options(20, 2), depth, &mut nudge).unwrap_err();
        // Re-simulating frames 7..=9 checks frame 9.
        assert!(err.contains("frame 9 is not deterministic"), "{err}");
        assert!(err.contains("before frame 7"), "{err}");
    }
}
