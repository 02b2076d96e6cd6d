//! Fuzzes the blob loader and spawner: any bytes either spawn a consistent
//! world or are refused with an error that leaves the world empty.
#![no_main]

use doecs::World;
use doecs_resource::{standard_spawner, SpawnOptions};
use doecs_transform::TransformManager;
use libfuzzer_sys::fuzz_target;
use std::alloc::Layout;

fuzz_target!(|data: &[u8]| {
    let mut spawner = standard_spawner();
    spawner.register_plain::<[f32; 3]>("position").unwrap();
    spawner.register_plain::<f32>("mass").unwrap();
    spawner
        .register_plain_dynamic("tag", Layout::from_size_align(4, 2).unwrap(), 2)
        .unwrap();
    for strict in [false, true] {
        let mut world = World::new();
        match spawner.spawn(&mut world, data, SpawnOptions { strict }) {
            Ok(out) => {
                assert_eq!(world.len(), out.entities.len());
                world.check_invariants();
                if let Some(tm) = world.manager::<TransformManager>() {
                    tm.check_invariants();
                }
            }
            Err(_) => {
                assert!(world.is_empty());
                assert!(world.manager::<TransformManager>().is_none());
            }
        }
    }
});
