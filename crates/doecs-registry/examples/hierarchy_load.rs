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

use doecs::{DestroyNotice, Entity, World};
use doecs_registry::{ComponentRegistry, SaveFormat, WorldSaveExt};
use doecs_transform::{TransformManager, WorldTransforms};
use glam::{Affine3A, Vec3};
use std::time::Instant;

fn main() {
    let mut args = std::env::args().skip(1);
    let n: usize = args.next().map_or(100_000, |a| a.parse().expect("a count"));
    let deep = args.next().is_none_or(|s| s == "deep");
    let format = match args.next().as_deref() {
        Some("json") => SaveFormat::Json,
        _ => SaveFormat::Binary,
    };
    let mut registry = ComponentRegistry::new();
    registry
        .register_manager::<TransformManager>("transform", DestroyNotice::Callback)
        .unwrap();

    let start = Instant::now();
    let mut world = World::new();
    let es: Vec<Entity> = world.spawn_empty_batch(n);
    let parents: Vec<Option<u32>> = (0..n as u32)
        .map(|k| match k {
            0 => None,
            _ if deep => Some(k - 1),
            _ => Some(0),
        })
        .collect();
    world.set_parents_in_batch(&es, &parents).unwrap();
    let locals = vec![Affine3A::from_translation(Vec3::X); n];
    world.add_transforms(&es, &locals).unwrap();
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
