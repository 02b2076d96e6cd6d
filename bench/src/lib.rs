#![doc = include_str!("../README.md")]
//!
//! Shared pieces of the side-by-side benchmarks: the ecs_bench_suite component
//! types (with glam), the standard sizes, the per-entity kernels every library
//! runs (so each peer does exactly the same arithmetic), one criterion-group
//! helper, and the list of workloads a peer cannot express ("n/a") that the
//! report prints. Each workload file only says how each library drives the
//! shared kernel.
//!
//! Library names used as criterion function ids (and by the report):
//! [`LIBRARIES`].

use criterion::measurement::WallTime;
use criterion::{BenchmarkGroup, Criterion};
use std::time::Duration;

pub use glam::{Mat4, Vec3};

pub mod level;

/// Declares component types that every peer accepts: one struct, with the
/// derives bevy_ecs, shipyard and flecs_ecs need (doecs and hecs take any
/// `Send + Sync + 'static` type).
#[macro_export]
macro_rules! components {
    ($($(#[$meta:meta])* $name:ident($ty:ty);)*) => {$(
        $(#[$meta])*
        #[derive(Copy, Clone, Debug, Default, PartialEq,
            bevy_ecs::component::Component, shipyard::Component, flecs_ecs::prelude::Component)]
        pub struct $name(pub $ty);
    )*};
}

components! {
    /// ecs_bench_suite's `Transform`.
    Transform(Mat4);
    /// ecs_bench_suite's `Position`.
    #[repr(transparent)]
    #[derive(bytemuck::Pod, bytemuck::Zeroable)]
    Position(Vec3);
    /// ecs_bench_suite's `Rotation`.
    Rotation(Vec3);
    /// ecs_bench_suite's `Velocity`.
    #[repr(transparent)]
    #[derive(bytemuck::Pod, bytemuck::Zeroable)]
    Velocity(Vec3);
    /// level_spawn's local transform, as a plain component for the peers.
    LocalTransform(glam::Affine3A);
    /// ecs_bench_suite's `A` (add_remove, schedule).
    A(f32);
    /// ecs_bench_suite's `B`.
    B(f32);
    /// ecs_bench_suite's `C`.
    C(f32);
    /// ecs_bench_suite's `D`.
    D(f32);
    /// ecs_bench_suite's `E`.
    E(f32);
    /// frag_iter's payload, carried beside one of 26 marker types.
    Data(f32);
}

/// The libraries, in report order: criterion function ids.
pub const LIBRARIES: [&str; 6] = [
    "doecs",
    "hecs",
    "bevy_ecs",
    "shipyard",
    "flecs_ecs",
    "soa_baseline",
];

/// The workloads, in report order: criterion group names.
pub const WORKLOADS: [&str; 15] = [
    "simple_insert",
    "simple_iter",
    "simple_iter_1k",
    "simple_iter_10k",
    "simple_iter_100k",
    "simple_iter_1m",
    "simple_iter_4m",
    "frag_iter",
    "heavy_compute",
    "schedule",
    "add_remove",
    "churn",
    "get_random",
    "level_spawn",
    "transform_propagate",
];

/// (workload, library, why it is absent): entries the suite does not measure
/// on purpose, printed as "n/a" by the report instead of a stand-in.
pub const NOT_AVAILABLE: &[(&str, &str, &str)] = &[
    ("schedule", "hecs", "no scheduler in the crate"),
    (
        "transform_propagate",
        "hecs",
        "no hierarchy/transform propagation in the crate",
    ),
    (
        "transform_propagate",
        "bevy_ecs",
        "propagation lives in bevy_transform, not bevy_ecs",
    ),
    (
        "transform_propagate",
        "shipyard",
        "no hierarchy/transform propagation in the crate",
    ),
    (
        "transform_propagate",
        "flecs_ecs",
        "transform propagation lives in flecs' separate transform module, not flecs_ecs",
    ),
];

// Level components for level_spawn: `bytemuck::Pod` (derived above) of f32s.
impl doecs_resource::PlainBytes for Position {
    const SCALAR_WIDTH: usize = 4;
}
impl doecs_resource::PlainBytes for Velocity {
    const SCALAR_WIDTH: usize = 4;
}

/// (workload, note): how a workload's rows differ from like-for-like, printed
/// under its table by the report.
pub const NOTES: &[(&str, &str)] = &[
    (
        "simple_insert",
        "Each library's batch path; flecs_ecs's takes one array per component, built inside the timed code.",
    ),
    (
        "simple_iter",
        "`doecs_for_each_chunk` is a held `QueryState` handing out one 16 KiB chunk's slices at a time. `soa_16k_chunks` is the baseline's hand-written loop over the layout doecs used before its columns became contiguous (separate 16 KiB chunks of 151 rows: an entity array, then one array per component): what that layout cost, for comparison.",
    ),
    (
        "simple_iter_1k",
        "The same `pos += vel` at 1,000 entities (in L1/L2); see the curve in `bench/scaling.svg`.",
    ),
    (
        "simple_iter_1m",
        "One million entities: the columns (12 bytes per component per entity) stream from DRAM.",
    ),
    (
        "simple_iter_4m",
        "Four million entities, 400 MB of component data.",
    ),
    (
        "frag_iter",
        "`doecs` builds its query per call (`world.query_mut`), `doecs_held_query` reuses a held `QueryState`. The baseline is a hand-written loop over 26 separate `Vec`s, one per archetype, as an archetype store holds them: shipyard keeps all 520 values in one array (a sparse set), so it runs one loop where an archetype store runs 26. `doecs_layout_hand_loop` is a hand-written loop over doecs's own 26 `Data` columns, addresses gathered once, no change stamps: the floor of doecs's layout. `doecs_sparse` registers `Data` sparse (`world.register_sparse`), as shipyard stores every component: `query_mut::<Sparse<&mut Data>>()` walks the one set (`doecs_sparse_held_query` with a held `QueryState`).",
    ),
    (
        "heavy_compute",
        "Every library runs on all cores: doecs `par_for_each`, hecs `iter_batched(64)` bridged to rayon, bevy_ecs `par_iter_mut` on its compute pool, shipyard `par_iter`, flecs_ecs a `par_each` system run by `progress()` with `set_threads(cores)`, the baseline rayon `par_iter_mut`.",
    ),
    (
        "schedule",
        "doecs (builder systems; `doecs_fn`: the same systems as plain functions whose parameters declare their access), bevy_ecs and shipyard run the three systems with their parallel schedulers; flecs_ecs runs them as pipeline systems (`progress()`, one thread, its default); the baseline runs the three loops one after another. doecs runs a segment this light on its own thread or on its pool, whichever it measured faster on the machine; bench/README.md has this workload and heavy_compute on 2 to 16 cores.",
    ),
    (
        "add_remove",
        "Every library adds `B` to each of 10,000 entities one at a time, then removes it one at a time. `doecs_batch` makes the same changes with one `insert_batch` and one `remove_batch` (entities that share an archetype move together, one copy per column). `doecs_sparse` makes them one at a time with `B` registered sparse (`world.register_sparse`): no row moves, an append and a swap-remove in `B`'s set.",
    ),
    (
        "get_random",
        "shipyard looks up through one borrowed `View` per iteration (its idiom), and so does `doecs_view` (`world.view::<Position>()`, the type resolved once per pass); `doecs` is `world.get::<Position>(e)`, `doecs_held_query` a held `QueryState<&Position>`'s `get`; flecs_ecs goes through `entity_from_id(..).get`. `hand_archetype_layout` is the floor of doecs's layout, hand-written: an entity's 12-byte slot (generation, archetype, row), its archetype's column start, then the value, three dependent loads where shipyard's sparse set needs two.",
    ),
    (
        "level_spawn",
        "Not like-for-like on purpose: doecs loads and validates the compiled blob, sets the 10,000-entity hierarchy as `ChildOf` pairs and links its transform manager to them; the peers only batch-spawn the same three plain components from arrays, with no hierarchy (the bar the resource issue sets); the baseline is a memcpy of the blob's component bytes. `hand_layout_with_hierarchy` is the floor of what doecs keeps, written by hand into buffers allocated (and their pages touched, so no first-touch page fault is timed) beforehand: entity slots, the plain columns with their entity column, the transform manager's columns in its own layout, one array per column (local, world computed from the parent's, entity, the four links of real child lists, two flag bytes) with its entity map, and a `ChildOf` row per child with the list heads, siblings written as linked runs as doecs writes them (a unit test checks that it writes the values doecs keeps). It reads the blob's own words in place and writes the transform columns column by column, the fastest form we know (one loop writing all ten columns per entity measured 14% slower). It checks nothing: doecs also parses the blob and checks its parent order, each block's entity index and its transforms for NaN and infinity (`Position` and `Velocity` are registered unchecked; the entities it parents are fresh, so it checks nothing about them). `hand_layout_checked` is that floor after the same checks, hand-written over the blob's words (or-reductions, with AVX2 when the CPU has it, as doecs's): the floor for a loader that refuses a bad blob before it writes anything, as doecs must.",
    ),
    (
        "transform_propagate",
        "One full world-transform pass over an 81,000-node forest (1,000 roots × 5 × 5 × 2), `Affine3A`; the baseline is the same pass over parent-first arrays.",
    ),
];

/// Entities per workload, as in ecs_bench_suite.
pub const N: usize = 10_000;

/// Entities in heavy_compute, as in ecs_bench_suite.
pub const HEAVY_N: usize = 1_000;

/// Whether to run tiny sizes (smoke mode: `DOECS_BENCH_SMOKE=1`), so CI can
/// run every bench body once quickly.
pub fn smoke() -> bool {
    std::env::var_os("DOECS_BENCH_SMOKE").is_some()
}

/// `N`, or a tiny size in smoke mode.
pub fn n() -> usize {
    sized(N)
}

/// `full`, or a tiny size (at most 64) in smoke mode.
pub fn sized(full: usize) -> usize {
    if smoke() {
        full.min(64)
    } else {
        full
    }
}

/// The standard four-component bundle of simple_insert / simple_iter.
pub fn bundle() -> (Transform, Position, Rotation, Velocity) {
    (
        Transform(Mat4::from_scale(Vec3::ONE)),
        Position(Vec3::X),
        Rotation(Vec3::X),
        Velocity(Vec3::X),
    )
}

/// heavy_compute's bundle: a rotation matrix (invertible) and a position.
pub fn heavy_bundle() -> (Transform, Position, Rotation, Velocity) {
    (
        Transform(Mat4::from_axis_angle(Vec3::X, 1.2)),
        Position(Vec3::X),
        Rotation(Vec3::X),
        Velocity(Vec3::X),
    )
}

/// Rows of one [`SoaChunk`]: as many 108-byte rows (an 8-byte entity id and
/// the four components) as fit in 16 KiB, the row count doecs's default chunk
/// layout gives the same bundle.
pub const SOA_CHUNK_ROWS: usize = 16 * 1024 / (8 + 64 + 3 * 12);

/// A hand-written 16 KiB chunk of simple_iter's bundle: an entity-id array,
/// then one array per component, in declaration order (`repr(C)`), which
/// puts every array where doecs's chunk layout puts it.
#[repr(C)]
pub struct SoaChunk {
    /// Entity ids (unused by the loops; they take their room, as in doecs).
    pub entities: [u64; SOA_CHUNK_ROWS],
    /// Transforms.
    pub transforms: [Transform; SOA_CHUNK_ROWS],
    /// Positions.
    pub positions: [Position; SOA_CHUNK_ROWS],
    /// Rotations.
    pub rotations: [Rotation; SOA_CHUNK_ROWS],
    /// Velocities.
    pub velocities: [Velocity; SOA_CHUNK_ROWS],
}

const _: () = assert!(std::mem::size_of::<SoaChunk>() <= 16 * 1024);

/// `n` rows of [`bundle`] in hand-written 16 KiB chunks, filled in order:
/// the chunks and the row count of the last one.
pub fn soa_chunks(n: usize) -> (Vec<Box<SoaChunk>>, usize) {
    let (t, p, r, v) = bundle();
    let count = n.div_ceil(SOA_CHUNK_ROWS).max(1);
    let chunks = (0..count)
        .map(|_| {
            Box::new(SoaChunk {
                entities: [0; SOA_CHUNK_ROWS],
                transforms: [t; SOA_CHUNK_ROWS],
                positions: [p; SOA_CHUNK_ROWS],
                rotations: [r; SOA_CHUNK_ROWS],
                velocities: [v; SOA_CHUNK_ROWS],
            })
        })
        .collect();
    (chunks, n - (count - 1) * SOA_CHUNK_ROWS)
}

/// simple_iter's kernel: `pos += vel`.
#[inline(always)]
pub fn integrate(position: &mut Position, velocity: &Velocity) {
    position.0 += velocity.0;
}

/// heavy_compute's kernel: invert the matrix 100 times, then transform the
/// position by it.
#[inline(always)]
pub fn heavy(position: &mut Position, transform: &mut Transform) {
    for _ in 0..100 {
        transform.0 = transform.0.inverse();
    }
    position.0 = transform.0.transform_vector3(position.0);
}

/// frag_iter's kernel: `data *= 2`.
#[inline(always)]
pub fn double(data: &mut Data) {
    data.0 *= 2.0;
}

/// The schedule workload's three systems' kernel: swap two values.
#[inline(always)]
pub fn swap(x: &mut f32, y: &mut f32) {
    std::mem::swap(x, y);
}

/// A benchmark group named `name` with the suite's timing settings.
///
/// Full runs take their timing from `DOECS_BENCH_WARMUP_MS` and
/// `DOECS_BENCH_MEASURE_MS` (defaults 1,000 and 3,000) and the sample count
/// from `DOECS_BENCH_SAMPLES` (default 100), so a whole-suite run
/// can be shortened to fit a time budget.
pub fn group<'a>(c: &'a mut Criterion, name: &str) -> BenchmarkGroup<'a, WallTime> {
    let mut g = c.benchmark_group(name);
    if smoke() {
        g.sample_size(10)
            .warm_up_time(Duration::from_millis(1))
            .measurement_time(Duration::from_millis(10));
    } else {
        let ms = |var: &str, default: u64| {
            std::env::var(var)
                .ok()
                .and_then(|v| v.parse().ok())
                .unwrap_or(default)
        };
        g.sample_size(ms("DOECS_BENCH_SAMPLES", 100) as usize)
            .warm_up_time(Duration::from_millis(ms("DOECS_BENCH_WARMUP_MS", 1000)))
            .measurement_time(Duration::from_millis(ms("DOECS_BENCH_MEASURE_MS", 3000)));
    }
    g
}

/// Threads for the parallel workloads: every core (2 here), the same for
/// every library.
pub fn threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Starts bevy's compute pool (its parallel queries and multi-threaded
/// executor run there) with [`threads`] threads, once per process.
pub fn bevy_task_pool() {
    bevy_tasks::ComputeTaskPool::get_or_init(|| {
        bevy_tasks::TaskPoolBuilder::new()
            .num_threads(threads())
            .build()
    });
}

/// A deterministic shuffle (xorshift), so random-order workloads are the same
/// for every library.
pub fn shuffled<T>(mut items: Vec<T>) -> Vec<T> {
    let mut state = 0x2545_f491_4f6c_dd1du64;
    for i in (1..items.len()).rev() {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        items.swap(i, (state % (i as u64 + 1)) as usize);
    }
    items
}

/// flecs_ecs's batch path for `n` standard bundles: one array per component,
/// handed to `entity_bulk` (the arrays are built inside the timed code, as the
/// other libraries build their bundles from an iterator).
pub fn flecs_spawn_bundles(
    world: &flecs_ecs::prelude::World,
    n: usize,
) -> Vec<flecs_ecs::prelude::Entity> {
    let (mut t, mut p, mut r, mut v) = (
        Vec::with_capacity(n),
        Vec::with_capacity(n),
        Vec::with_capacity(n),
        Vec::with_capacity(n),
    );
    for (a, b, c, d) in (0..n).map(|_| bundle()) {
        t.push(a);
        p.push(b);
        r.push(c);
        v.push(d);
    }
    world
        .entity_bulk(n as u32)
        .set(&t)
        .set(&p)
        .set(&r)
        .set(&v)
        .build()
}

/// Ships in the demo-level shape (as `doecs demo-level`): each ship has
/// [`DEMO_PARTS`] parts of [`DEMO_SUB_PARTS`] sub-parts, 13 entities three
/// levels deep.
pub const DEMO_SHIPS: usize = 1_000;
/// Parts per demo ship.
pub const DEMO_PARTS: usize = 4;
/// Sub-parts per demo part.
pub const DEMO_SUB_PARTS: usize = 2;

/// Spawns `ships` ships of the demo level's shape into `world`: a ship is
/// (LocalTransform, Position, Velocity, A), a part (LocalTransform, B), a
/// sub-part (LocalTransform,). With `child_of`, each part is `ChildOf` its
/// ship and each sub-part `ChildOf` its part; without, the same entities
/// have no hierarchy. Returns every entity, ships first in each ship.
pub fn spawn_demo_ships(
    world: &mut doecs::World,
    ships: usize,
    child_of: bool,
) -> Vec<doecs::Entity> {
    let local = |i: usize| {
        LocalTransform(glam::Affine3A::from_translation(Vec3::new(
            i as f32, 0.0, 0.0,
        )))
    };
    let mut all = Vec::with_capacity(ships * (1 + DEMO_PARTS * (1 + DEMO_SUB_PARTS)));
    for s in 0..ships {
        let ship = world.spawn((local(s), Position(Vec3::ZERO), Velocity(Vec3::X), A(1.0)));
        all.push(ship);
        for p in 0..DEMO_PARTS {
            let part = world.spawn((local(p), B(0.5)));
            all.push(part);
            if child_of {
                world.set_parent(part, ship).expect("fresh entities");
            }
            for q in 0..DEMO_SUB_PARTS {
                let sub = world.spawn((local(q),));
                all.push(sub);
                if child_of {
                    world.set_parent(sub, part).expect("fresh entities");
                }
            }
        }
    }
    all
}
