//! `doecs run`: spawn a level into a world and run frames of point-mass
//! physics and transform updates on an [`App`], then print the per-system
//! times.
//!
//! Every step of a frame is a function system, added by [`SimulationPlugin`]
//! to the app's `Update` phase, with the transform plugin's propagation in
//! `PostUpdate`; each phase's schedule derives what each system touches from
//! its parameters and runs the ones that do not conflict at the same time:
//! - `gravity_drag` (parallel over chunks): `&mut Velocity, &Mass`;
//! - `integrate` (parallel over chunks): `&mut Position, &mut Velocity`,
//!   bouncing off the ground plane;
//! - `spin_parts` (parallel over chunks): every part turns about its local
//!   y axis, written straight into the transform manager (runs beside the
//!   physics);
//! - `ship_transforms`: the physics results into the transform hierarchy:
//!   each ship's local transform follows its position, fed chunk by chunk
//!   from the query into the manager;
//! - `propagate` (`PostUpdate`, from [`TransformPlugin`]): one O(n) pass
//!   updating every moved node's world transform, parents first (the
//!   manager runs in deferred mode, so the two writers above only mark
//!   nodes).
//!
//! The loop itself is the app's runner, set by [`FrameLoopPlugin`]; the
//! rollback sync test is another runner (`crate::rollback`), and saving at
//! the end a system of the `Shutdown` phase (`crate::saves`).
//!
//! With `--inspect`, the inspector's plugin serves the world between
//! frames: at the start of each update it answers the queued requests
//! (and, while paused from the page, waits there until resumed or
//! stepped), and hands the inspector the previous update's system times.
//! With `--fps`, the time left in a frame's slot is spent answering
//! requests (or sleeping). The time spent answering is reported beside the
//! frame times, and left out of them.
//!
//! Frame times go into a [`FrameTimes`] summary of fixed size, so the loop
//! allocates nothing per frame however many frames run.

use crate::components::{Mass, Position, Spin, Velocity};
use crate::frame_times::FrameTimes;
use doecs::prelude::*;
use doecs::SystemGroup;
use doecs::{Runner, SystemTime};
use doecs_inspect::{InspectorHandle, ServeStats};
use doecs_transform::{TransformManager, TransformPlugin};
use glam::{Affine3A, Vec3};
use indicatif::{ProgressBar, ProgressStyle};
use std::time::{Duration, Instant};

/// Seconds per frame.
pub const DT: f32 = 1.0 / 60.0;

/// The frame's time step, a resource the systems read (`Clone`, so world
/// snapshots can save it).
#[derive(Clone, Debug)]
pub struct FrameDt(pub f32);

/// Gravity and drag on every point mass.
fn gravity_drag(mut masses: Query<(&mut Velocity, &Mass)>, dt: Res<FrameDt>) {
    let dt = dt.0;
    masses.par_for_each_chunk(|(vs, ms)| {
        for (v, m) in vs.iter_mut().zip(ms) {
            let drag = 0.05 / m.0;
            v.0[1] -= 9.81 * dt;
            for c in &mut v.0 {
                *c -= *c * drag * dt;
            }
        }
    });
}

/// Moves every point mass and bounces it off the ground.
fn integrate(mut bodies: Query<(&mut Position, &mut Velocity)>, dt: Res<FrameDt>) {
    let dt = dt.0;
    bodies.par_for_each_chunk(|(ps, vs)| {
        for (p, v) in ps.iter_mut().zip(vs.iter_mut()) {
            for k in 0..3 {
                p.0[k] += v.0[k] * dt;
            }
            if p.0[1] < 0.0 {
                p.0[1] = -p.0[1];
                v.0[1] = -v.0[1] * 0.8;
            }
        }
    });
}

/// Every part turns about its local y axis.
fn spin_parts(
    mut transforms: ManagerMut<TransformManager>,
    mut parts: Query<(Entity, &Spin)>,
    dt: Res<FrameDt>,
) {
    let dt = dt.0;
    // In parallel over the query's chunks, straight into the manager.
    transforms.par_update_locals(&mut parts, |local, spin| {
        turn_about_local_y(local, spin.0 * dt);
    });
}

/// `*local *= Affine3A::from_rotation_y(angle)`, with the product written
/// out: a turn about the local y axis changes only the x and z columns
/// (`x·cos − z·sin` and `x·sin + z·cos`) and not the translation. glam's
/// general product also multiplies the y column and the translation by the
/// rotation's zeros and ones, which costs about twice as much for the same
/// result (equal but for the sign of a zero).
#[inline]
pub fn turn_about_local_y(local: &mut Affine3A, angle: f32) {
    let (sin, cos) = angle.sin_cos();
    let m = &mut local.matrix3;
    let (x, z) = (m.x_axis, m.z_axis);
    m.x_axis = x * cos - z * sin;
    m.z_axis = x * sin + z * cos;
}

/// The physics results into the transform hierarchy: each ship's local
/// transform follows its position, straight from the query's chunks.
fn ship_transforms(
    mut transforms: ManagerMut<TransformManager>,
    mut ships: Query<(Entity, &Position)>,
) {
    ships.for_each_chunk(|(es, ps)| {
        transforms.update_locals(es.iter().copied().zip(ps), |local, p| {
            *local = Affine3A::from_translation(Vec3::from_array(p.0));
        });
    });
}

/// The frame's physics and transform writers (`propagate` apart).
fn frame_systems() -> SystemGroup {
    (gravity_drag, integrate, spin_parts, ship_transforms).into_group()
}

/// The simulation on an app: the frame's step as a resource, its systems
/// in `Update`, and the transform plugin (propagation in `PostUpdate`).
pub struct SimulationPlugin;

impl Plugin for SimulationPlugin {
    fn build(&self, app: &mut App) -> Result<(), AppError> {
        app.world_mut().insert_resource(FrameDt(DT));
        app.add_systems(Update, frame_systems())?;
        app.add_plugins(TransformPlugin)?;
        Ok(())
    }
}

/// One system's time over a run.
#[derive(Clone, Debug, Default)]
pub struct SystemStats {
    /// The system's name.
    pub name: String,
    /// Total time over all frames.
    pub total: Duration,
}

/// Everything `run` measured.
#[derive(Clone, Debug, Default)]
pub struct RunReport {
    /// Per-system statistics, in run order, from the app's per-update
    /// system times.
    pub systems: Vec<SystemStats>,
    /// Wall time of the frames (one app update each, less the time the
    /// inspector spent answering), summarised in fixed memory.
    pub frames: FrameTimes,
    /// Mean height of the point masses at the end (a checksum of the physics).
    pub mean_height: f64,
    /// What the inspector's answers cost, when one served.
    pub inspector: Option<ServeStats>,
}

/// How the frame loop runs.
#[derive(Clone, Debug)]
pub struct RunOptions {
    /// Frames to run.
    pub frames: usize,
    /// Worker threads.
    pub threads: usize,
    /// No progress bar.
    pub quiet: bool,
    /// The time per frame to pace to (`--fps`), if any.
    pub pace: Option<Duration>,
}

/// What the frame loop measured (a resource its runner fills).
#[derive(Clone, Default)]
pub struct FrameStats {
    /// Per-system totals, in run order.
    pub systems: Vec<SystemStats>,
    /// The frames' times.
    pub frames: FrameTimes,
}

/// The main job's loop as the app's runner: `frames` updates with a
/// progress bar, paced to `--fps` if asked (answering the inspector, when
/// there is one, while it waits), each update's system times and wall
/// time recorded into [`FrameStats`].
pub struct FrameLoopPlugin(pub RunOptions);

impl Plugin for FrameLoopPlugin {
    fn build(&self, app: &mut App) -> Result<(), AppError> {
        app.world_mut().insert_resource(FrameStats::default());
        let options = self.0.clone();
        app.set_runner(Runner::Custom(Box::new(move |app| {
            frame_loop(app, &options)
        })));
        Ok(())
    }
}

/// The runner of [`FrameLoopPlugin`].
fn frame_loop(app: &mut App, options: &RunOptions) -> Result<AppExit, AppError> {
    let inspector = app.world().resource::<InspectorHandle>().cloned();
    let bar = frame_bar(options.frames, options.quiet, "");
    let mut stats = FrameStats::default();
    let mut next = Instant::now();
    let mut exit = AppExit::Success;
    for _ in 0..options.frames {
        let start = Instant::now();
        let sent = app.update()?;
        let time = start
            .elapsed()
            .saturating_sub(inspector_time(app.last_update_times()));
        stats.frames.record(time);
        add_times(&mut stats.systems, app.last_update_times());
        bar.inc(1);
        if let Some(sent) = sent {
            exit = sent;
            break;
        }
        if let Some(pace) = options.pace {
            // The next frame's slot; after a late frame, the next starts at once.
            next = (next + pace).max(Instant::now());
            match &inspector {
                Some(inspector) => inspector.serve_until(app.world_mut(), next),
                None => std::thread::sleep(next.saturating_duration_since(Instant::now())),
            }
        }
    }
    if let Some(inspector) = inspector {
        inspector.finish(app.world_mut());
    }
    bar.finish_and_clear();
    app.world_mut().insert_resource(stats);
    Ok(exit)
}

/// The inspector's system: its answers have their own line in the report,
/// and while paused it waits, so it is left out of the frame times and the
/// table.
fn is_inspector(s: &SystemTime) -> bool {
    &*s.name == doecs_inspect::SERVE_SYSTEM
}

fn inspector_time(times: &[SystemTime]) -> Duration {
    times
        .iter()
        .filter(|s| is_inspector(s))
        .map(|s| s.time)
        .sum()
}

/// What `doecs run` runs: the frames, and the plugins the options ask for.
#[derive(Clone, Debug)]
pub struct Job {
    /// Frames, threads, progress bar and pacing.
    pub options: RunOptions,
    /// The sync test's depth (`--rollback`), in place of the frame loop.
    pub rollback: Option<usize>,
    /// The inspector to serve (`--inspect`).
    pub inspector: Option<doecs_inspect::InspectorConfig>,
    /// Where to save the world when the run ends (`--save`).
    pub save: Option<std::path::PathBuf>,
}

#[cfg(test)]
impl Job {
    /// Just the frames.
    pub fn frames(options: RunOptions) -> Self {
        Job {
            options,
            rollback: None,
            inspector: None,
            save: None,
        }
    }
}

/// The main job's app on `world`: the simulation, the inspector if asked,
/// the runner (the frame loop, or the sync test) and the save if asked,
/// each a plugin.
pub fn job_app(world: World, job: &Job) -> Result<App, AppError> {
    let mut app = App::with_world(world, job.options.threads);
    app.add_plugins(SimulationPlugin)?;
    if let Some(config) = &job.inspector {
        app.add_plugins(doecs_inspect::InspectorPlugin::new(config.clone()))?;
    }
    match job.rollback {
        Some(depth) => app.add_plugins(crate::rollback::SyncTestPlugin {
            depth,
            options: job.options.clone(),
        })?,
        None => app.add_plugins(FrameLoopPlugin(job.options.clone()))?,
    };
    if let Some(path) = &job.save {
        app.add_plugins(crate::saves::SavePlugin(path.clone()))?;
    }
    if let Some(inspector) = app.world().resource::<InspectorHandle>().cloned() {
        inspector.set_plan(app.plan()?);
    }
    Ok(app)
}

/// Runs `job` on `world`, leaving the world as the run ends it.
#[cfg(test)]
pub fn run_job(world: &mut World, job: &Job) -> Result<(), AppError> {
    let mut app = job_app(std::mem::take(world), job)?;
    let outcome = app.run();
    *world = app.into_world();
    outcome.map(|_| ())
}

/// The report of a run of the frame loop on `world`.
pub fn report_of(world: &World, inspector: Option<ServeStats>) -> RunReport {
    let stats = world.resource::<FrameStats>().cloned().unwrap_or_default();
    RunReport {
        systems: stats.systems,
        frames: stats.frames,
        mean_height: mean_height(world),
        inspector,
    }
}

/// Mean height of the point masses (a checksum of the physics).
pub fn mean_height(world: &World) -> f64 {
    let (sum, count) = world
        .query::<&Position>()
        .iter()
        .fold((0.0f64, 0usize), |(s, n), p| (s + f64::from(p.0[1]), n + 1));
    sum / count.max(1) as f64
}

/// The progress bar over `frames` frames (hidden when `quiet`), with
/// `label` before its message.
pub(crate) fn frame_bar(frames: usize, quiet: bool, label: &str) -> ProgressBar {
    let bar = if quiet {
        ProgressBar::hidden()
    } else {
        ProgressBar::new(frames as u64)
    };
    let template = format!(
        "{{spinner}} frame {{pos}}/{{len}} [{{bar:40}}] {{elapsed_precise}} {label}{{msg}}"
    );
    bar.set_style(
        ProgressStyle::with_template(&template)
            .expect("valid template")
            .progress_chars("=> "),
    );
    bar
}

/// Adds one update's system times to the totals (the inspector's left
/// out).
pub(crate) fn add_times(totals: &mut Vec<SystemStats>, run: &[SystemTime]) {
    let run = || run.iter().filter(|s| !is_inspector(s));
    if totals.is_empty() {
        totals.extend(run().map(|s| SystemStats {
            name: s.name.to_string(),
            total: Duration::ZERO,
        }));
    }
    for (total, s) in totals.iter_mut().zip(run()) {
        total.total += s.time;
    }
}

/// Formats the end-of-run table: each system's mean time per frame and its
/// share of the mean frame, then the frame-time mean and percentiles (p50,
/// p90 and p99 within [`crate::frame_times::MAX_RELATIVE_ERROR`] of the
/// exact ones, the mean and max exact).
pub fn format_report(report: &RunReport) -> String {
    use std::fmt::Write;
    let frames = report.frames.count().max(1);
    let mean_frame = report.frames.mean().as_secs_f64();
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:<18} {:>12} {:>14} {:>10}",
        "system", "total ms", "mean us/frame", "of frame"
    );
    for s in &report.systems {
        let mean = s.total.as_secs_f64() / frames as f64;
        let _ = writeln!(
            out,
            "{:<18} {:>12.3} {:>14.2} {:>9.1}%",
            s.name,
            s.total.as_secs_f64() * 1e3,
            mean * 1e6,
            100.0 * mean / mean_frame.max(f64::MIN_POSITIVE)
        );
    }
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let _ = writeln!(
        out,
        "frames {}: mean {:.3} ms, p50 {:.3} ms, p90 {:.3} ms, p99 {:.3} ms, max {:.3} ms",
        report.frames.count(),
        mean_frame * 1e3,
        ms(report.frames.percentile(0.5)),
        ms(report.frames.percentile(0.9)),
        ms(report.frames.percentile(0.99)),
        ms(report.frames.max()),
    );

    let _ = writeln!(
        out,
        "(systems that do not conflict run at the same time, so the shares can add up to more than 100%)"
    );
    if let Some(stats) = report.inspector {
        let per_frame = stats.serve_time.as_secs_f64() / frames as f64;
        let _ = writeln!(
            out,
            "inspector: {} requests answered between frames, {:.3} ms in all, {:.2} us per frame ({:.2}% of the mean frame)",
            stats.requests,
            stats.serve_time.as_secs_f64() * 1e3,
            per_frame * 1e6,
            100.0 * per_frame / mean_frame.max(f64::MIN_POSITIVE)
        );
    }
    let _ = writeln!(
        out,
        "mean height of point masses at the end: {:.3} m",
        report.mean_height
    );
    out
}

#[cfg(test)]
mod tests {
    use super::turn_about_local_y;
    use glam::{Affine3A, Quat, Vec3};

    /// The written-out turn equals glam's general product, value for value
    /// (`==` on floats: only the sign of a zero may differ), over varied
    /// transforms and angles, including repeated turns.
    #[test]
    fn the_written_out_turn_is_glams_product() {
        let mut seed = 0x9e37_79b9_u32;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 17;
            seed ^= seed << 5;
            (seed as f32 / u32::MAX as f32) * 8.0 - 4.0
        };
        for _ in 0..2000 {
            let axis = Vec3::new(next(), next(), next()).normalize_or(Vec3::Z);
            let start = Affine3A::from_scale_rotation_translation(
                Vec3::new(next(), next(), next()),
                Quat::from_axis_angle(axis, next()),
                Vec3::new(next(), next(), next()),
            );
            let (mut ours, mut glams) = (start, start);
            for _ in 0..3 {
                let angle = next();
                turn_about_local_y(&mut ours, angle);
                glams *= Affine3A::from_rotation_y(angle);
                assert_eq!(ours.to_cols_array(), glams.to_cols_array());
            }
        }
    }
}
