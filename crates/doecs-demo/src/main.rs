//! The doecs demo: spawns 100,000 point masses and integrates them for 600
//! frames through chunk iteration, then prints per-frame timing.
//!
//! Each frame runs two chunk-form queries: gravity plus drag accelerates every
//! body (`&mut Velocity, &Mass`), and integration moves it
//! (`&mut Position, &Velocity`). Bodies that fall below the floor bounce.

use doecs::World;
use indicatif::{ProgressBar, ProgressStyle};
use std::time::{Duration, Instant};

#[derive(Clone, Copy, Debug)]
struct Position([f32; 3]);
#[derive(Clone, Copy, Debug)]
struct Velocity([f32; 3]);
#[derive(Clone, Copy, Debug)]
struct Mass(f32);

const ENTITIES: usize = 100_000;
const FRAMES: usize = 600;
const DT: f32 = 1.0 / 60.0;

fn main() {
    let entities = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(ENTITIES);
    let frames = std::env::args()
        .nth(2)
        .and_then(|s| s.parse().ok())
        .unwrap_or(FRAMES);
    let mut world = World::new();
    let spawn_start = Instant::now();
    world.spawn_batch((0..entities).map(|i| {
        let f = i as f32;
        (
            Position([
                f.sin() * 100.0,
                50.0 + (f * 0.37).cos() * 40.0,
                f.cos() * 100.0,
            ]),
            Velocity([(f * 0.13).sin(), 0.0, (f * 0.29).cos()]),
            Mass(1.0 + (i % 7) as f32),
        )
    }));
    let spawn_time = spawn_start.elapsed();

    let bar = ProgressBar::new(frames as u64);
    bar.set_style(
        ProgressStyle::with_template(
            "{spinner} frame {pos}/{len} [{bar:40}] {elapsed_precise} {msg}",
        )
        .expect("valid template")
        .progress_chars("=> "),
    );
    let mut frame_times = Vec::with_capacity(frames);
    for _ in 0..frames {
        let start = Instant::now();
        step(&mut world);
        frame_times.push(start.elapsed());
        bar.inc(1);
    }
    bar.finish_with_message("done");

    let (sum, count) = world
        .query::<&Position>()
        .iter()
        .fold((0.0f64, 0usize), |(s, n), p| (s + p.0[1] as f64, n + 1));
    report(
        entities,
        spawn_time,
        &mut frame_times,
        sum / count.max(1) as f64,
    );
}

/// One physics frame, in chunk form.
fn step(world: &mut World) {
    world
        .query_mut::<(&mut Velocity, &Mass)>()
        .for_each_chunk(|(vs, ms)| {
            for (v, m) in vs.iter_mut().zip(ms) {
                let drag = 0.02 / m.0;
                v.0[1] -= 9.81 * DT;
                for c in &mut v.0 {
                    *c -= *c * drag * DT;
                }
            }
        });
    world
        .query_mut::<(&mut Position, &mut Velocity)>()
        .for_each_chunk(|(ps, vs)| {
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
}

fn report(entities: usize, spawn: Duration, frames: &mut [Duration], mean_height: f64) {
    frames.sort();
    let total: Duration = frames.iter().sum();
    let pct = |p: f64| frames[((frames.len() - 1) as f64 * p).round() as usize];
    println!(
        "doecs demo: {entities} point masses, {} frames",
        frames.len()
    );
    println!(
        "  spawn_batch        {:>10.3} ms",
        spawn.as_secs_f64() * 1e3
    );
    println!(
        "  frame mean         {:>10.3} ms",
        total.as_secs_f64() * 1e3 / frames.len().max(1) as f64
    );
    println!(
        "  frame p50          {:>10.3} ms",
        pct(0.5).as_secs_f64() * 1e3
    );
    println!(
        "  frame p99          {:>10.3} ms",
        pct(0.99).as_secs_f64() * 1e3
    );
    println!(
        "  frame max          {:>10.3} ms",
        pct(1.0).as_secs_f64() * 1e3
    );
    println!(
        "  ns per entity-frame {:>9.2}",
        total.as_secs_f64() * 1e9 / (entities * frames.len()).max(1) as f64
    );
    println!("  mean height        {mean_height:>10.3}");
}
