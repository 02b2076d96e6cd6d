//! Times saving and loading a world whose entities form one `ChildOf`
//! hierarchy, each with a transform: a chain (`deep`: every entity the
//! parent of the next) or a star (`wide`: every entity a child of the
//! first). Loading must cost time linear in entities and pairs whatever
//! the shape.
//!
//! ```text
//! cargo run --release -p doecs-registry --example hierarchy_load -- 100000 deep binary
//! ```
//!
//! Arguments, all optional: the number of entities (100,000), the shape
//! (`deep` or `wide`) and the format (`binary` or `json`).

use doecs::World;
use doecs_registry::{SaveFormat, WorldSaveExt};
use doecs_transform::TransformManager;
use std::time::Instant;

#[path = "../tests/common/hierarchy.rs"]
mod hierarchy;

fn main() {
    let mut args = std::env::args().skip(1);
    let n: usize = args.next().map_or(100_000, |a| a.parse().expect("a count"));
    let deep = args.next().is_none_or(|s| s == "deep");
    let format = match args.next().as_deref() {
        Some("json") => SaveFormat::Json,
        _ => SaveFormat::Binary,
    };
    let registry = hierarchy::registry();

    let start = Instant::now();
    let (world, es) = hierarchy::hierarchy(n, deep);
    let spawned = start.elapsed();

    let start = Instant::now();
    let mut bytes = Vec::new();
    world.save(&mut bytes, format, &registry).unwrap();
    let saved = start.elapsed();

    let start = Instant::now();
    let loaded = World::load(&bytes[..], &registry).unwrap();
    let load = start.elapsed();

    assert_eq!(loaded.len(), n);
    let tm = loaded.manager::<TransformManager>().unwrap();
    let last = tm.lookup(es[n - 1]).unwrap();
    let want = if deep { n as f32 } else { 2.0 };
    assert_eq!(tm.world(last).unwrap().translation.x, want);
    println!(
        "{n} entities, {} ({format:?}, {} bytes): spawn {:.3} s, save {:.3} s, load {:.3} s",
        if deep { "deep" } else { "wide" },
        bytes.len(),
        spawned.as_secs_f64(),
        saved.as_secs_f64(),
        load.as_secs_f64()
    );
}
