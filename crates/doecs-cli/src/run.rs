//! `doecs run`: spawn a level into a world and run frames of point-mass
//! physics and transform updates, then print a timing table.
//!
//! Each frame runs four systems in order:
//! - `gravity+drag` (parallel over chunks): `&mut Velocity, &Mass`;
//! - `integrate` (parallel over chunks): `&mut Position, &mut Velocity`,
//!   bouncing off the ground plane;
//! - `gather locals`: the new local transform of every moving node (ships
//!   follow their position, parts spin about their y axis);
//! - `transform update`: one `set_local_many` call, an O(n) world update of
//!   every moved subtree.
//!
//! The physics systems run on a rayon pool of `--threads` workers; the scene
//! graph update is one batch on the calling thread.

use crate::components::{Mass, Position, Spin, Velocity};
use doecs::{Entity, World};
use doecs_transform::{Instance, TransformManager};
use glam::{Affine3A, Vec3};
use indicatif::{ProgressBar, ProgressStyle};
use std::time::{Duration, Instant};

/// Seconds per frame.
pub const DT: f32 = 1.0 / 60.0;

/// Time and work of one system over a run.
#[derive(Clone, Debug, Default)]
pub struct SystemStats {
    /// The system's name.
    pub name: &'static str,
    /// Entities it touched per frame.
    pub entities: usize,
    /// Total time over all frames.
    pub total: Duration,
}

/// Everything `run` measured.
#[derive(Clone, Debug, Default)]
pub struct RunReport {
    /// Per-system statistics, in frame order.
    pub systems: Vec<SystemStats>,
    /// Wall time of each frame.
    pub frames: Vec<Duration>,
    /// Mean height of the point masses at the end (a checksum of the physics).
    pub mean_height: f64,
}

fn timed<R>(stat: &mut SystemStats, f: impl FnOnce() -> (usize, R)) -> R {
    let start = Instant::now();
    let (n, r) = f();
    stat.total += start.elapsed();
    stat.entities = n;
    r
}

/// Runs `frames` frames on a pool of `threads` workers, with a progress bar
/// unless `quiet`.
pub fn run_frames(
    world: &mut World,
    frames: usize,
    threads: usize,
    quiet: bool,
) -> Result<RunReport, String> {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .map_err(|e| format!("cannot start {threads} worker threads: {e}"))?;
    let bar = if quiet {
        ProgressBar::hidden()
    } else {
        ProgressBar::new(frames as u64)
    };
    bar.set_style(
        ProgressStyle::with_template(
            "{spinner} frame {pos}/{len} [{bar:40}] {elapsed_precise} {msg}",
        )
        .expect("valid template")
        .progress_chars("=> "),
    );
    let mut systems = vec![
        SystemStats {
            name: "gravity+drag",
            ..Default::default()
        },
        SystemStats {
            name: "integrate",
            ..Default::default()
        },
        SystemStats {
            name: "gather locals",
            ..Default::default()
        },
        SystemStats {
            name: "transform update",
            ..Default::default()
        },
    ];
    let mut frame_times = Vec::with_capacity(frames);
    let mut items: Vec<(Instance, Affine3A)> = Vec::new();
    pool.install(|| {
        for _ in 0..frames {
            let start = Instant::now();
            timed(&mut systems[0], || {
                world
                    .query_mut::<(&mut Velocity, &Mass)>()
                    .par_for_each_chunk(|(vs, ms)| {
                        for (v, m) in vs.iter_mut().zip(ms) {
                            let drag = 0.05 / m.0;
                            v.0[1] -= 9.81 * DT;
                            for c in &mut v.0 {
                                *c -= *c * drag * DT;
                            }
                        }
                    });
                (0, ())
            });
            timed(&mut systems[1], || {
                world
                    .query_mut::<(&mut Position, &mut Velocity)>()
                    .par_for_each_chunk(|(ps, vs)| {
                        for (p, v) in ps.iter_mut().zip(vs.iter_mut()) {
                            for k in 0..3 {
                                p.0[k] += v.0[k] * DT;
                            }
                            if p.0[1] < 0.0 {
                                p.0[1] = -p.0[1];
                                v.0[1] = -v.0[1] * 0.8;
                            }
                        }
                    });
                (0, ())
            });
            timed(&mut systems[2], || {
                items.clear();
                if let Some(tm) = world.manager::<TransformManager>() {
                    gather_locals(world, tm, &mut items);
                }
                (items.len(), ())
            });
            timed(&mut systems[3], || {
                if let Some(tm) = world.manager_mut::<TransformManager>() {
                    tm.set_local_many(&items)
                        .expect("instances were looked up this frame");
                    (tm.len(), ())
                } else {
                    (0, ())
                }
            });
            frame_times.push(start.elapsed());
            bar.inc(1);
        }
    });
    bar.finish_and_clear();
    systems[0].entities = world.query::<(&Velocity, &Mass)>().iter().count();
    systems[1].entities = world.query::<(&Position, &Velocity)>().iter().count();
    let (sum, count) = world
        .query::<&Position>()
        .iter()
        .fold((0.0f64, 0usize), |(s, n), p| (s + f64::from(p.0[1]), n + 1));
    Ok(RunReport {
        systems,
        frames: frame_times,
        mean_height: sum / count.max(1) as f64,
    })
}

/// New local transforms: ships follow their position, parts spin.
fn gather_locals(world: &World, tm: &TransformManager, items: &mut Vec<(Instance, Affine3A)>) {
    world
        .query::<(Entity, &Position)>()
        .for_each_chunk(|(es, ps)| {
            for (&e, p) in es.iter().zip(ps) {
                if let Some(inst) = tm.lookup(e) {
                    items.push((inst, Affine3A::from_translation(Vec3::from_array(p.0))));
                }
            }
        });
    world.query::<(Entity, &Spin)>().for_each_chunk(|(es, ss)| {
        for (&e, s) in es.iter().zip(ss) {
            if let Some(inst) = tm.lookup(e) {
                let local = tm.local(inst).unwrap_or(Affine3A::IDENTITY);
                items.push((inst, local * Affine3A::from_rotation_y(s.0 * DT)));
            }
        }
    });
}

/// The percentile `p` (0..=1) of sorted durations.
fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

/// Formats the end-of-run table.
pub fn format_report(report: &RunReport) -> String {
    use std::fmt::Write;
    let frames = report.frames.len().max(1);
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:<18} {:>10} {:>12} {:>14}",
        "system", "entities", "total ms", "mean us/frame"
    );
    for s in &report.systems {
        let _ = writeln!(
            out,
            "{:<18} {:>10} {:>12.3} {:>14.2}",
            s.name,
            s.entities,
            s.total.as_secs_f64() * 1e3,
            s.total.as_secs_f64() * 1e6 / frames as f64
        );
    }
    let mut sorted = report.frames.clone();
    sorted.sort_unstable();
    let total: Duration = sorted.iter().sum();
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let _ = writeln!(
        out,
        "frames {}: mean {:.3} ms, p50 {:.3} ms, p90 {:.3} ms, p99 {:.3} ms, max {:.3} ms",
        report.frames.len(),
        ms(total) / frames as f64,
        ms(percentile(&sorted, 0.5)),
        ms(percentile(&sorted, 0.9)),
        ms(percentile(&sorted, 0.99)),
        ms(percentile(&sorted, 1.0)),
    );
    let _ = writeln!(
        out,
        "mean height of point masses at the end: {:.3} m",
        report.mean_height
    );
    out
}
