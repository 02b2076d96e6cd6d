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
//! Figures (release, `cargo bench -p doecs-bench --bench query_lang`, a
//! shared two-core machine, medians): ships 849 ns typed, 579 ns text
//! (0.68×), 84 ns text_plan; spin 7.73 µs typed, 2.34 µs text (0.30×):
//! whole archetypes are copied as entity slices, where the typed query
//! yields row by row. The join misses the bar: 21.5 µs typed, 67.6 µs text
//! (3.1×). Pairs live in type-erased relation tables beside the
//! archetypes, so each row's targets come through an indirect call into
//! the table and back into the join, where the typed `Pairs<ChildOf>`
//! term inlines the table lookup into its loop.

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
