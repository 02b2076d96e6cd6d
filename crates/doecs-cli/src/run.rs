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
//! With `--inspect`, an inspector serves the world between frames: before
//! each frame the loop answers the queued requests (and, while paused from
//! the page, waits there until resumed or stepped); after it, the frame's
//! system times go to the inspector's history. With `--fps`, the time left
//! in a frame's slot is spent answering requests (or sleeping). The time
//! spent answering is reported beside the frame times.
//!
//! Frame times go into a [`FrameTimes`] summary of fixed size, so the loop
//! allocates nothing per frame however many frames run.

use crate::components::{Mass, Position, Spin, Velocity};
use crate::frame_times::FrameTimes;
use doecs::prelude::*;
use doecs::SystemGroup;
use doecs::{ScheduleError, SystemTime};
use doecs_inspect::{Inspector, ServeStats};
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
        *local *= Affine3A::from_rotation_y(spin.0 * dt);
    });
}

/// The physics results into the transform hierarchy: each ship's local
/// transform follows its position, straight from the query's chunks.
fn ship_transforms(
    mut transforms: ManagerMut<TransformManager>,
    mut ships: Query<(Entity, &Position)>,
) {
    ships.for_each_chunk(|(es, ps)| {
        transforms.set_locals(
            es,
            ps.iter()
                .map(|p| Affine3A::from_translation(Vec3::from_array(p.0))),
        );
    });
}

/// One pass updating every moved node's world transform, parents first.
fn propagate(mut transforms: ManagerMut<TransformManager>) {
    transforms.propagate();
}

/// The frame's physics and transform writers (`propagate` apart).
fn frame_systems() -> SystemGroup {
    (gravity_drag, integrate, spin_parts, ship_transforms).into_group()
}

/// The frame's systems on one schedule of `threads` workers, propagation
/// last: what the rollback sync test re-simulates.
pub fn schedule(threads: usize) -> Result<Schedule, ScheduleError> {
    let mut schedule = Schedule::with_threads(threads);
    schedule
        .add_systems(frame_systems())?
        .add_system(propagate)?;
    Ok(schedule)
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
    /// Per-system statistics, in schedule order, from the schedule's own
    /// run reports.
    pub systems: Vec<SystemStats>,
    /// Wall time of the frames (one schedule run each), summarised in
    /// fixed memory.
    pub frames: FrameTimes,
    /// Mean height of the point masses at the end (a checksum of the physics).
    pub mean_height: f64,
    /// What the inspector's answers cost, when one served.
    pub inspector: Option<ServeStats>,
}

/// How `run_frames` runs.
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

/// Runs the frames of the schedule (see [`RunOptions`]), serving
/// `inspector` between them when there is one.
pub fn run_frames(
    world: &mut World,
    options: &RunOptions,
    mut inspector: Option<&mut Inspector>,
) -> Result<RunReport, String> {
    let threads = options.threads;
    let mut app = App::with_world(std::mem::take(world), threads);
    let outcome = run_app_frames(&mut app, options, inspector.as_deref_mut());
    *world = app.into_world();
    let (systems, frame_times) = outcome?;
    Ok(RunReport {
        systems,
        frames: frame_times,
        mean_height: mean_height(world),
        inspector: inspector.map(|i| i.stats()),
    })
}

/// The frame loop of [`run_frames`] on `app`: per-system totals and the
/// frame times.
fn run_app_frames(
    app: &mut App,
    options: &RunOptions,
    mut inspector: Option<&mut Inspector>,
) -> Result<(Vec<SystemStats>, FrameTimes), String> {
    let RunOptions {
        frames,
        quiet,
        pace,
        ..
    } = *options;
    app.add_plugins(SimulationPlugin)
        .map_err(|e| e.to_string())?;
    if let Some(inspector) = inspector.as_deref_mut() {
        let mut plan_of = |phase: &str| -> Result<String, String> {
            let schedule = match phase {
                "Update" => app.schedule_mut(Update),
                _ => app.schedule_mut(PostUpdate),
            };
            let plan = schedule
                .map_err(|e| e.to_string())?
                .plan()
                .map_err(|e| e.to_string())?;
            Ok(format!("{phase}:\n{plan}"))
        };
        let plan = plan_of("Update")? + &plan_of("PostUpdate")?;
        inspector.set_plan(plan);
    }
    let bar = frame_bar(frames, quiet, "");
    let mut systems: Vec<SystemStats> = Vec::new();
    let mut frame_times = FrameTimes::new();
    let mut next = Instant::now();
    for _ in 0..frames {
        if let Some(inspector) = inspector.as_deref_mut() {
            inspector.between_frames(app.world_mut());
        }
        let start = Instant::now();
        app.update().map_err(|e| e.to_string())?;
        let time = start.elapsed();
        frame_times.record(time);
        add_times(&mut systems, app.last_update_times());
        if let Some(inspector) = inspector.as_deref_mut() {
            inspector.record_frame(time, app.last_update_times());
        }
        bar.inc(1);
        if let Some(pace) = pace {
            // The next frame's slot; after a late frame, the next starts at once.
            next = (next + pace).max(Instant::now());
            match inspector.as_deref_mut() {
                Some(inspector) => inspector.serve_until(app.world_mut(), next),
                None => std::thread::sleep(next.saturating_duration_since(Instant::now())),
            }
        }
    }
    if let Some(inspector) = inspector {
        inspector.serve_pending(app.world_mut());
    }
    bar.finish_and_clear();
    Ok((systems, frame_times))
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

/// Adds one run's system times to the totals.
pub(crate) fn add_times(totals: &mut Vec<SystemStats>, run: &[SystemTime]) {
    if totals.is_empty() {
        totals.extend(run.iter().map(|s| SystemStats {
            name: s.name.to_string(),
            total: Duration::ZERO,
        }));
    }
    for (total, s) in totals.iter_mut().zip(run) {
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
