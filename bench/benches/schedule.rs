//! schedule: three systems swapping A<->B, C<->D and C<->E, run by each
//! library's scheduler over (A,B), (A,B,C), (A,B,C,D) and (A,B,C,E), 10,000
//! entities each. The first two systems touch disjoint data, so a scheduler
//! may run them at the same time; the last two both write C.

use bevy_ecs::prelude::{Query as BevyQuery, Schedule as BevySchedule};
use criterion::{criterion_group, criterion_main, Criterion};
use doecs_bench::*;
use flecs_ecs::prelude::{SystemAPI, World as FlecsWorld};
use shipyard::{IntoIter, ViewMut, Workload};

/// The four entity shapes, ten thousand each.
fn populations(n: usize) -> impl Iterator<Item = usize> {
    (0..4).flat_map(move |shape| std::iter::repeat_n(shape, n))
}

fn bevy_ab(mut q: BevyQuery<(&mut A, &mut B)>) {
    for (mut a, mut b) in &mut q {
        swap(&mut a.0, &mut b.0);
    }
}
fn bevy_cd(mut q: BevyQuery<(&mut C, &mut D)>) {
    for (mut c, mut d) in &mut q {
        swap(&mut c.0, &mut d.0);
    }
}
fn bevy_ce(mut q: BevyQuery<(&mut C, &mut E)>) {
    for (mut c, mut e) in &mut q {
        swap(&mut c.0, &mut e.0);
    }
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

fn shipyard_ab(mut a: ViewMut<A>, mut b: ViewMut<B>) {
    for (a, b) in (&mut a, &mut b).iter() {
        swap(&mut a.0, &mut b.0);
    }
}
fn shipyard_cd(mut c: ViewMut<C>, mut d: ViewMut<D>) {
    for (c, d) in (&mut c, &mut d).iter() {
        swap(&mut c.0, &mut d.0);
    }
}
fn shipyard_ce(mut c: ViewMut<C>, mut e: ViewMut<E>) {
    for (c, e) in (&mut c, &mut e).iter() {
        swap(&mut c.0, &mut e.0);
    }
}

fn schedule(c: &mut Criterion) {
    let mut g = group(c, "schedule");
    let n = n();

    let mut world = doecs::World::new();
    for shape in populations(n) {
        match shape {
            0 => world.spawn((A(0.0), B(1.0))),
            1 => world.spawn((A(0.0), B(1.0), C(2.0))),
            2 => world.spawn((A(0.0), B(1.0), C(2.0), D(3.0))),
            _ => world.spawn((A(0.0), B(1.0), C(2.0), E(4.0))),
        };
    }
    let mut doecs_schedule = doecs::Schedule::new();
    doecs_schedule
        .add_system(
            doecs::system("ab").for_each::<(&mut A, &mut B)>(|(a, b)| swap(&mut a.0, &mut b.0)),
        )
        .unwrap()
        .add_system(
            doecs::system("cd").for_each::<(&mut C, &mut D)>(|(c, d)| swap(&mut c.0, &mut d.0)),
        )
        .unwrap()
        .add_system(
            doecs::system("ce").for_each::<(&mut C, &mut E)>(|(c, e)| swap(&mut c.0, &mut e.0)),
        )
        .unwrap();
    doecs_schedule.run(&mut world).expect("schedule runs"); // builds the plan once
    g.bench_function("doecs", |b| {
        b.iter(|| doecs_schedule.run(&mut world).expect("schedule runs"))
    });

    // The same three systems as plain functions (access from the parameters).
    let mut fn_schedule = doecs::Schedule::new();
    fn_schedule
        .add_system(doecs_ab)
        .unwrap()
        .add_system(doecs_cd)
        .unwrap()
        .add_system(doecs_ce)
        .unwrap();
    fn_schedule.run(&mut world).expect("schedule runs");
    g.bench_function("doecs_fn", |b| {
        b.iter(|| fn_schedule.run(&mut world).expect("schedule runs"))
    });

    bevy_task_pool();
    let mut world = bevy_ecs::world::World::new();
    for shape in populations(n) {
        let mut e = world.spawn((A(0.0), B(1.0)));
        match shape {
            1 => drop(e.insert(C(2.0))),
            2 => drop(e.insert((C(2.0), D(3.0)))),
            3 => drop(e.insert((C(2.0), E(4.0)))),
            _ => {}
        }
    }
    let mut bevy_schedule = BevySchedule::default();
    bevy_schedule.add_systems((bevy_ab, bevy_cd, bevy_ce));
    bevy_schedule.run(&mut world); // builds the executor's graph once
    g.bench_function("bevy_ecs", |b| b.iter(|| bevy_schedule.run(&mut world)));

    let mut world = shipyard::World::new();
    for shape in populations(n) {
        match shape {
            0 => world.add_entity((A(0.0), B(1.0))),
            1 => world.add_entity((A(0.0), B(1.0), C(2.0))),
            2 => world.add_entity((A(0.0), B(1.0), C(2.0), D(3.0))),
            _ => world.add_entity((A(0.0), B(1.0), C(2.0), E(4.0))),
        };
    }
    Workload::new("swaps")
        .with_system(shipyard_ab)
        .with_system(shipyard_cd)
        .with_system(shipyard_ce)
        .add_to_world(&world)
        .expect("workload");
    world.run_default_workload().expect("workload runs");
    g.bench_function("shipyard", |b| {
        b.iter(|| world.run_default_workload().expect("workload runs"))
    });

    let world = FlecsWorld::new();
    for shape in populations(n) {
        let e = world.entity().set(A(0.0)).set(B(1.0));
        match shape {
            1 => drop(e.set(C(2.0))),
            2 => drop(e.set(C(2.0)).set(D(3.0))),
            3 => drop(e.set(C(2.0)).set(E(4.0))),
            _ => {}
        }
    }
    world
        .system::<(&mut A, &mut B)>()
        .each(|(a, b)| swap(&mut a.0, &mut b.0));
    world
        .system::<(&mut C, &mut D)>()
        .each(|(c, d)| swap(&mut c.0, &mut d.0));
    world
        .system::<(&mut C, &mut E)>()
        .each(|(c, e)| swap(&mut c.0, &mut e.0));
    world.progress();
    g.bench_function("flecs_ecs", |b| b.iter(|| world.progress()));

    // Hand-written: one table per shape, the three loops run one after another.
    let mut as_ = vec![A(0.0); 4 * n];
    let mut bs = vec![B(1.0); 4 * n];
    let mut cs = vec![C(2.0); 3 * n];
    let mut ds = vec![D(3.0); n];
    let mut es = vec![E(4.0); n];
    g.bench_function("soa_baseline", |b| {
        b.iter(|| {
            for (a, b) in as_.iter_mut().zip(&mut bs) {
                swap(&mut a.0, &mut b.0);
            }
            for (c, d) in cs[n..2 * n].iter_mut().zip(&mut ds) {
                swap(&mut c.0, &mut d.0);
            }
            for (c, e) in cs[2 * n..].iter_mut().zip(&mut es) {
                swap(&mut c.0, &mut e.0);
            }
            std::hint::black_box((&mut as_, &mut bs, &mut cs, &mut ds, &mut es));
        })
    });
    g.finish();
}

criterion_group!(benches, schedule);
criterion_main!(benches);
