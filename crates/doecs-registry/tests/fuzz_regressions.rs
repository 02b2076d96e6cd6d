//! The fuzz corpus, every input the loader fuzzer ever found a problem
//! with (`fuzz/corpus/load_world`, `fuzz/regressions/load_world` in this
//! crate) and the saves of older format versions kept as fixtures
//! (`tests/fixtures`) load to a valid world or a typed error. Also writes
//! the starting corpus when asked (`DOECS_WRITE_FUZZ_SEEDS=1`).

mod common {
    pub mod fuzz_registry;
}

use common::fuzz_registry::*;
use doecs::World;
use doecs_registry::{load_world_from_bytes, LoadOptions, SaveFormat, WorldSaveExt};
use std::path::{Path, PathBuf};

fn fuzz_dir(sub: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz").join(sub)
}

/// A small world touching every registered kind, sparse ones included.
fn seed_world() -> World {
    let mut world = World::new();
    registry().install(&mut world).unwrap();
    let a = world.spawn((Pos([1.0, 2.0, 3.0]), Hp(7)));
    let b = world.spawn((Hp(1), Frozen, Target(a)));
    world.spawn((
        Inventory {
            owner: "x".into(),
            items: vec![(1, 2)],
        },
        Aligned { a: 1, b: 2 },
    ));
    let c = world.spawn(());
    world.despawn(c).unwrap();
    // Sparse values: beside dense ones, and alone.
    world.insert_one(a, Stunned(3)).unwrap();
    world.spawn((
        Label {
            text: "only sparse".into(),
            level: 2,
        },
        Marked,
    ));
    // Relationship pairs: a hierarchy and a prefab link.
    world.set_parent(b, a).unwrap();
    let prefab = world.spawn((doecs::Prefab, Hp(9)));
    let instance = world.spawn(());
    world.add_pair(instance, prefab, doecs::IsA).unwrap();
    let mut tm = doecs_transform::TransformManager::new();
    let ia = tm.create(a, glam_identity()).unwrap();
    let ib = tm.create(b, glam_identity()).unwrap();
    tm.link(ib, ia).unwrap();
    world.add_manager(tm, doecs::DestroyNotice::Callback);
    world
}

fn glam_identity() -> glam::Affine3A {
    glam::Affine3A::IDENTITY
}

#[test]
fn seeds_and_regressions_never_panic() {
    let registry = registry();
    if std::env::var_os("DOECS_WRITE_FUZZ_SEEDS").is_some() {
        let world = seed_world();
        for (format, name) in [
            (SaveFormat::Binary, "seed.bin"),
            (SaveFormat::Json, "seed.json"),
        ] {
            let mut bytes = Vec::new();
            world.save(&mut bytes, format, &registry).unwrap();
            std::fs::write(fuzz_dir("corpus/load_world").join(name), bytes).unwrap();
        }
    }
    let mut files = 0;
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    for dir in [
        fuzz_dir("corpus/load_world"),
        fuzz_dir("regressions/load_world"),
        fixtures,
    ] {
        let Ok(entries) = std::fs::read_dir(dir) else {
            continue;
        };
        for entry in entries {
            let path = entry.unwrap().path();
            let bytes = std::fs::read(&path).unwrap();
            for skip_unknown in [false, true] {
                let options = LoadOptions {
                    skip_unknown,
                    ..Default::default()
                };
                if let Ok(w) = load_world_from_bytes(&bytes, &registry, options) {
                    w.check_invariants();
                }
            }
            files += 1;
        }
    }
    assert!(
        files >= 4,
        "the corpus and fixtures are there ({files} files)"
    );
}

#[test]
fn the_seed_world_round_trips() {
    let registry = registry();
    let world = seed_world();
    let mut bytes = Vec::new();
    world
        .save(&mut bytes, SaveFormat::Binary, &registry)
        .unwrap();
    let loaded = World::load(&bytes[..], &registry).unwrap();
    assert_eq!(loaded.len(), world.len());
    assert_eq!(
        doecs::raw::sparse_columns(&loaded)
            .iter()
            .map(|c| c.entities.len())
            .sum::<usize>(),
        3,
        "the sparse values came back"
    );
}
