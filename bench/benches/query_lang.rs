//! query_lang: the inspector's query language (`doecs_inspect::qlang`)
//! against the typed queries it stands for, on the `doecs` command's
//! bundled demo level: 1,000 ships of 13 entities (13,000), generated,
//! compiled and spawned as `doecs run` and `doecs query` do (the CLI's own
//! `demo_level`, `components` and `registry` sources, included below).
//!
//! Each group ends both forms with the same results in a `Vec`, checked
//! equal once before timing:
//!
//! - `query_lang_ships`: `position, velocity, !spin` (1,000 results, one
//!   archetype) against `(Entity, &Position, &Velocity), Without<Spin>`;
//! - `query_lang_spin`: `spin` (12,000 results, two archetypes) against
//!   `(Entity, &Spin)`;
//! - `query_lang_join`: `spin, Name, (ChildOf, $ship)` (4,000 parts with
//!   their ship) against `(Entity, &Spin, &Name, Pairs<ChildOf>)` with each
//!   pair's target.
//!
//! Rows: `typed` makes `world.query::<..>()` and collects (it matches
//! archetypes afresh every time, as a text query resolves afresh);
//! `text` parses, resolves and runs the text every iteration (what one
//! `GET /api/query?expr=` costs before its JSON); `text_plan` runs an
//! already resolved plan. The bar is `text` at most 1.2× `typed`.
//!
//! Figures (release, `cd bench && DOECS_BENCH_SAMPLES=20
//! DOECS_BENCH_WARMUP_MS=500 DOECS_BENCH_MEASURE_MS=2000 cargo bench
//! --bench query_lang`, a shared two-core machine, criterion's medians,
//! each the mean of two runs):
//! ships 0.80 µs typed, 0.54 µs text (0.68×), 94 ns text_plan; spin
//! 7.8 µs typed, 2.4 µs text (0.31×): whole archetypes are copied as
//! entity slices, where the typed query yields row by row. The join:
//! 20.2 µs typed, 15.1 µs text (0.75×), 14.2 µs text_plan. Pairs live in
//! type-erased relation tables beside the archetypes; the join asks each
//! table once per chunk for every row's targets
//! (`Relations::targets_of_each`) and reads them as slices, and a query
//! of one pair term that binds its variable hands each chunk's targets to
//! the page whole (see `doecs_inspect::qlang` `join.rs`). Before that,
//! each row's targets came through an indirect call into the table and
//! back: 64 µs text against 19.5 µs typed, 3.3×.

use criterion::{criterion_group, criterion_main, Criterion};
use doecs::{ChangeWindow, ChildOf, Entity, Name, Pairs, Tick, Without, World};
use doecs_bench::*;
use doecs_inspect::qlang::{parse, Page, Plan};
use doecs_registry::ComponentRegistry;
use std::hint::black_box;

#[allow(dead_code, unused_imports)]
#[path = "../../crates/doecs-cli/src/components.rs"]
mod components;
#[allow(dead_code, unused_imports)]
#[path = "../../crates/doecs-cli/src/demo_level.rs"]
mod demo_level;
#[allow(dead_code, unused_imports)]
#[path = "../../crates/doecs-cli/src/registry.rs"]
mod registry;

use components::{Position, Spin, Velocity};

/// The demo level of `ships` ships, spawned as the CLI spawns it.
fn demo_world(ships: usize) -> World {
    let json = demo_level::demo_level_json(ships, |_| {});
    let (compiler, spawner) = registry::compiler_and_spawner();
    let text = std::str::from_utf8(&json).expect("the demo level is UTF-8");
    let blob = compiler.compile_str(text).expect("the demo level compiles");
    let blob = doecs_resource::AlignedBytes::from_slice(&blob);
    let mut world = World::new();
    world.add_manager(
        doecs_transform::TransformManager::deferred(),
        doecs::DestroyNotice::Callback,
    );
    spawner
        .spawn(&mut world, &blob, doecs_resource::SpawnOptions::default())
        .expect("the demo level spawns");
    world
}

/// The whole window: no change filter is timed here.
fn window(world: &World) -> ChangeWindow {
    ChangeWindow {
        last_run: Tick::ZERO,
        this_run: world.change_tick(),
    }
}

/// Parses, resolves and runs `query`: every result, in one page.
fn text(world: &World, registry: &ComponentRegistry, query: &str) -> Page {
    let q = parse(query).expect("the query parses");
    let plan = Plan::new(world, registry, &q).expect("the query resolves");
    plan.run(world, window(world), 0, usize::MAX)
        .expect("no join limit")
}

/// A page as `(entity, first binding)`, to compare with the typed form.
fn pairs(page: &Page) -> Vec<(Entity, Option<Entity>)> {
    page.iter().map(|m| (m.entity, m.binding(0))).collect()
}

/// One group: `typed` (its natural output), `text` and `text_plan`, after
/// checking that both forms give the same results.
fn compare<T>(
    c: &mut Criterion,
    (world, registry): (&World, &ComponentRegistry),
    name: &str,
    query: &str,
    typed: impl Fn(&World) -> Vec<T>,
    as_pairs: impl Fn(&T) -> (Entity, Option<Entity>),
) {
    let expected: Vec<_> = typed(world).iter().map(as_pairs).collect();
    assert!(!expected.is_empty(), "{name}: some results");
    let ours = pairs(&text(world, registry, query));
    assert_eq!(ours, expected, "{name}: the same results");
    let plan = Plan::new(world, registry, &parse(query).unwrap()).unwrap();
    let mut g = group(c, name);
    g.bench_function("typed", |b| b.iter(|| black_box(typed(black_box(world)))));
    g.bench_function("text", |b| {
        b.iter(|| black_box(text(black_box(world), registry, black_box(query))))
    });
    g.bench_function("text_plan", |b| {
        b.iter(|| black_box(plan.run(black_box(world), window(world), 0, usize::MAX)))
    });
    g.finish();
}

fn query_lang(c: &mut Criterion) {
    let world = demo_world(sized(1000));
    let registry = registry::component_registry();
    let w = (&world, &registry);
    compare(
        c,
        w,
        "query_lang_ships",
        "position, velocity, !spin",
        |w| {
            w.query_filtered::<(Entity, &Position, &Velocity), Without<Spin>>()
                .iter()
                .map(|(e, ..)| e)
                .collect()
        },
        |&e| (e, None),
    );
    compare(
        c,
        w,
        "query_lang_spin",
        "spin",
        |w| {
            w.query::<(Entity, &Spin)>()
                .iter()
                .map(|(e, _)| e)
                .collect()
        },
        |&e| (e, None),
    );
    compare(
        c,
        w,
        "query_lang_join",
        "spin, Name, (ChildOf, $ship)",
        |w| {
            w.query::<(Entity, &Spin, &Name, Pairs<ChildOf>)>()
                .iter()
                .flat_map(|(e, _, _, ships)| ships.map(move |(s, _)| (e, s)))
                .collect()
        },
        |&(e, s)| (e, Some(s)),
    );
}

criterion_group!(benches, query_lang);
criterion_main!(benches);
