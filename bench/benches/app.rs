//! app: the cost of one frame of the app loop, and the schedule workload
//! run through the app.
//!
//! - `app_update`: one `App::update` with the six standard phases and no
//!   systems: doecs's `App` (manual frame time) beside bevy_app's `App`
//!   (its main schedule: the same phases, no plugins), and a hand-written
//!   baseline that does what any loop must (turn the event buffers over,
//!   advance the frame counter).
//! - `schedule_app`: the `schedule` workload's three systems in the app's
//!   `Update` phase, beside the same systems in a bare `Schedule`.

use criterion::{criterion_group, criterion_main, Criterion};
use doecs_bench::*;
use std::time::Duration;

fn doecs_app() -> doecs::App {
    let mut app = doecs::App::new();
    app.set_time_source(doecs::TimeSource::Manual(Duration::from_millis(16)));
    app
}

fn app_update(c: &mut Criterion) {
    let mut g = group(c, "app_update");
    let mut app = doecs_app();
    app.update().unwrap();
    g.bench_function("doecs", |b| b.iter(|| app.update().unwrap()));

    let mut bevy = bevy_app::App::new();
    bevy.update();
    g.bench_function("bevy_app", |b| b.iter(|| bevy.update()));

    // The least a frame loop does: events turned over, a frame counted.
    let mut world = doecs::World::new();
    world.add_event::<u32>();
    let mut frames = 0u64;
    g.bench_function("baseline", |b| {
        b.iter(|| {
            world.update_events();
            frames = std::hint::black_box(frames + 1);
        })
    });
    g.finish();
}

fn doecs_ab(mut q: doecs::Query<(&mut A, &mut B)>) {
    q.for_each(|(a, b)| swap(&mut a.0, &mut b.0));
}
fn doecs_cd(mut q: doecs::Query<(&mut C, &mut D)>) {
    q.for_each(|(c, d)| swap(&mut c.0, &mut d.0));
}
fn doecs_ce(mut q: doecs::Query<(&mut C, &mut E)>) {
    q.for_each(|(c, e)| swap(&mut c.0, &mut e.0));
}

fn populate(world: &mut doecs::World, n: usize) {
    for shape in (0..4).flat_map(move |shape| std::iter::repeat_n(shape, n)) {
        match shape {
            0 => world.spawn((A(0.0), B(1.0))),
            1 => world.spawn((A(0.0), B(1.0), C(2.0))),
            2 => world.spawn((A(0.0), B(1.0), C(2.0), D(3.0))),
            _ => world.spawn((A(0.0), B(1.0), C(2.0), E(4.0))),
        };
    }
}

fn schedule_app(c: &mut Criterion) {
    let mut g = group(c, "schedule_app");
    let n = n();
    let mut app = doecs_app();
    populate(app.world_mut(), n);
    app.add_systems(doecs::Update, (doecs_ab, doecs_cd, doecs_ce))
        .unwrap();
    app.update().unwrap();
    g.bench_function("doecs_app", |b| b.iter(|| app.update().unwrap()));

    let mut world = doecs::World::new();
    populate(&mut world, n);
    let mut schedule = doecs::Schedule::new();
    schedule
        .add_systems((doecs_ab, doecs_cd, doecs_ce))
        .unwrap();
    schedule.run(&mut world).unwrap();
    g.bench_function("doecs_schedule", |b| {
        b.iter(|| schedule.run(&mut world).unwrap())
    });
    g.finish();
}

criterion_group!(benches, app_update, schedule_app);
criterion_main!(benches);
