//! frag_iter: 26 component types A..Z, 20 entities of each, each also
//! carrying `Data`; the loop does `data *= 2` over all 520 (26 archetypes).

use criterion::{criterion_group, criterion_main, Criterion};
use doecs_bench::*;
use flecs_ecs::prelude::{QueryAPI, World as FlecsWorld};
use shipyard::{IntoIter, ViewMut};

/// Entities per fragment type, as in ecs_bench_suite.
const PER_TYPE: usize = 20;

macro_rules! fragments {
    ($($t:ident),*) => {
        mod frag {
            doecs_bench::components! { $( #[allow(missing_docs)] $t(f32); )* }
        }

        fn spawn_doecs(world: &mut doecs::World) {
            $( world.spawn_batch((0..PER_TYPE).map(|_| (frag::$t(0.0), Data(1.0)))); )*
        }
        fn spawn_doecs_sparse(world: &mut doecs::World) {
            world.register_sparse::<Data>().unwrap();
            $( world.spawn_batch((0..PER_TYPE).map(|_| (frag::$t(0.0), Data(1.0)))); )*
        }
        fn spawn_hecs(world: &mut hecs::World) {
            $( world.spawn_batch((0..PER_TYPE).map(|_| (frag::$t(0.0), Data(1.0)))); )*
        }
        fn spawn_bevy(world: &mut bevy_ecs::world::World) {
            $( world.spawn_batch((0..PER_TYPE).map(|_| (frag::$t(0.0), Data(1.0)))).for_each(drop); )*
        }
        fn spawn_shipyard(world: &mut shipyard::World) {
            $( world.bulk_add_entity((0..PER_TYPE).map(|_| (frag::$t(0.0), Data(1.0)))).for_each(drop); )*
        }
        fn spawn_flecs(world: &FlecsWorld) {
            $( for _ in 0..PER_TYPE { world.entity().set(frag::$t(0.0)).set(Data(1.0)); } )*
        }
    };
}

fragments!(A, B, C, D, E, F, G, H, I, J, K, L, M, N, O, P, Q, R, S, T, U, V, W, X, Y, Z);

fn frag_iter(c: &mut Criterion) {
    let mut g = group(c, "frag_iter");

    let mut world = doecs::World::new();
    spawn_doecs(&mut world);
    g.bench_function("doecs", |b| {
        b.iter(|| world.query_mut::<(&mut Data,)>().for_each(|(d,)| double(d)))
    });
    let mut query = doecs::QueryState::<&mut Data>::new(&world);
    g.bench_function("doecs_held_query", |b| {
        b.iter(|| query.for_each(&mut world, double))
    });

    // The floor of doecs's own layout: a hand loop over the same 26 `Data`
    // columns, their addresses gathered once, with no change stamps.
    let data = world.components().id_of::<Data>().expect("registered");
    let columns: Vec<(*mut Data, usize)> = doecs::raw::archetypes(&world)
        .iter()
        .filter_map(|arch| {
            let column = arch.column_of(data)?;
            Some((arch.column_ptr(column).cast::<Data>().as_ptr(), arch.len()))
        })
        .filter(|&(_, len)| len > 0)
        .collect();
    g.bench_function("doecs_layout_hand_loop", |b| {
        b.iter(|| {
            for &(ptr, len) in &columns {
                // SAFETY: each pointer is a live `Data` column of `len` rows;
                // the world is neither changed nor read while this runs.
                unsafe { std::slice::from_raw_parts_mut(ptr, len) }
                    .iter_mut()
                    .for_each(double);
            }
        })
    });

    // `Data` stored sparse: the query walks its set, not the archetypes.
    let mut world = doecs::World::new();
    spawn_doecs_sparse(&mut world);
    g.bench_function("doecs_sparse", |b| {
        b.iter(|| {
            world
                .query_mut::<doecs::Sparse<&mut Data>>()
                .for_each(double)
        })
    });

    let mut query = doecs::QueryState::<doecs::Sparse<&mut Data>>::new(&world);
    g.bench_function("doecs_sparse_held_query", |b| {
        b.iter(|| query.for_each(&mut world, double))
    });

    let mut world = hecs::World::new();
    spawn_hecs(&mut world);
    g.bench_function("hecs", |b| {
        b.iter(|| {
            for d in world.query_mut::<&mut Data>() {
                double(d);
            }
        })
    });

    let mut world = bevy_ecs::world::World::new();
    spawn_bevy(&mut world);
    let mut query = world.query::<&mut Data>();
    g.bench_function("bevy_ecs", |b| {
        b.iter(|| {
            for mut d in query.iter_mut(&mut world) {
                double(&mut d);
            }
        })
    });

    let mut world = shipyard::World::new();
    spawn_shipyard(&mut world);
    g.bench_function("shipyard", |b| {
        b.iter(|| {
            world.run(|mut ds: ViewMut<Data>| {
                for d in (&mut ds).iter() {
                    double(d);
                }
            })
        })
    });

    let world = FlecsWorld::new();
    spawn_flecs(&world);
    let query = world.new_query::<&mut Data>();
    g.bench_function("flecs_ecs", |b| b.iter(|| query.each(double)));

    // 26 tables of 20 rows each, as an archetype store would hold them.
    let mut tables: Vec<Vec<Data>> = (0..26).map(|_| vec![Data(1.0); PER_TYPE]).collect();
    g.bench_function("soa_baseline", |b| {
        b.iter(|| {
            for table in &mut tables {
                table.iter_mut().for_each(double);
            }
            std::hint::black_box(&mut tables);
        })
    });
    g.finish();
}

criterion_group!(benches, frag_iter);
criterion_main!(benches);
