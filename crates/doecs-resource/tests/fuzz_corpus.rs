//! Replays the fuzz seeds and every saved fuzz regression on stable Rust,
//! with the same checks as the `load_blob` fuzz target.

mod common;

use doecs::World;
use doecs_resource::SpawnOptions;
use doecs_transform::TransformManager;
use std::path::Path;

fn replay(bytes: &[u8]) -> bool {
    let (_, spawner) = common::registry();
    let mut ok = false;
    for strict in [false, true] {
        let mut world = World::new();
        match spawner.spawn(&mut world, bytes, SpawnOptions { strict }) {
            Ok(out) => {
                assert_eq!(world.len(), out.entities.len());
                world.check_invariants();
                if let Some(tm) = world.manager::<TransformManager>() {
                    tm.check_invariants();
                }
                ok = true;
            }
            Err(_) => {
                assert!(world.is_empty());
                assert!(world.manager::<TransformManager>().is_none());
            }
        }
    }
    ok
}

#[test]
fn fuzz_seeds_and_regressions_replay_cleanly() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz");
    let mut files = 0;
    let mut spawned = 0;
    for dir in ["corpus/load_blob", "regressions"] {
        for entry in std::fs::read_dir(root.join(dir)).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "md") {
                continue;
            }
            files += 1;
            spawned += usize::from(replay(&std::fs::read(&path).unwrap()));
        }
    }
    assert!(files >= 3, "the seeds are present");
    assert!(spawned >= 3, "the valid seeds spawn");
}
