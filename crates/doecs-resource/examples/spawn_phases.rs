//! Times the phases of spawning a 10,000-entity level (a profiling aid for
//! the `spawn_level` bench): validation, plain components only, and the
//! full spawn with transforms.

use doecs::raw::name_hash;

use doecs::World;
use doecs_resource::transform::encode_transform;
use doecs_resource::{standard_spawner, BlobBuilder, SpawnOptions, NO_PARENT};
use glam::{Affine3A, Vec3};
use std::time::Instant;

fn main() {
    let n = 10_000u32;
    let parents: Vec<u32> = (0..n)
        .map(|i| if i % 10 == 0 { NO_PARENT } else { i - i % 10 })
        .collect();
    let mut with_t = BlobBuilder::new(parents.clone());
    let locals: Vec<u8> = (0..n)
        .flat_map(|i| encode_transform(&Affine3A::from_translation(Vec3::new(i as f32, 0.0, 0.0))))
        .collect();
    with_t.push_dense(name_hash("transform"), 64, locals);
    let mut plain = BlobBuilder::new(parents);
    for b in [&mut with_t, &mut plain] {
        b.push_dense(name_hash("position"), 12, vec![1; 12 * n as usize]);
        b.push_dense(name_hash("velocity"), 12, vec![2; 12 * n as usize]);
    }
    let (with_t, plain) = (with_t.to_bytes(), plain.to_bytes());
    let mut spawner = standard_spawner();
    spawner.register_plain::<[f32; 3]>("position").unwrap();
    spawner.register_plain::<[u32; 3]>("velocity").unwrap();
    for round in 0..5 {
        let t = Instant::now();
        spawner.load(&with_t, SpawnOptions::default()).unwrap();
        let load = t.elapsed();
        let mut w = World::new();
        let t = Instant::now();
        spawner
            .spawn(&mut w, &plain, SpawnOptions::default())
            .unwrap();
        let plain_t = t.elapsed();
        let mut w = World::new();
        let t = Instant::now();
        spawner
            .spawn(&mut w, &with_t, SpawnOptions::default())
            .unwrap();
        let full = t.elapsed();
        let mut h = hecs::World::new();
        let t = Instant::now();
        h.spawn_batch((0..n).map(|i| ([i as f32; 3], [i; 3])))
            .for_each(drop);
        let hecs_t = t.elapsed();
        println!("round {round}: validate {load:?}, plain spawn {plain_t:?}, full spawn {full:?}, hecs {hecs_t:?}");
    }
}
