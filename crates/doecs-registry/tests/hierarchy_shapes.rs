//! Loading costs time linear in entities and pairs whatever the shape of
//! the hierarchy: a `ChildOf` chain 50,000 deep, a transform on every
//! entity, loads in both formats about as fast as a star 50,000 wide (a
//! load quadratic in depth took 1.6 s for a 20,000-deep chain and 41 s for
//! 100,000 in release, against 0.03 s for 100,000 wide), and both come
//! back exact. The bound is the wide load's time, measured in the same run
//! and build, times ten plus two seconds: generous for timing noise on a
//! slow shared machine, hopeless for a load quadratic in depth, in debug
//! and release builds alike.

mod common {
    pub mod hierarchy;
}

use common::hierarchy::registry;
use doecs::World;
use doecs_registry::{SaveFormat, WorldSaveExt};
use doecs_transform::TransformManager;
use std::time::{Duration, Instant};

const N: usize = 50_000;

/// Loads `bytes` on another thread, failing if that takes over `limit`
/// (the thread is left to finish on its own); returns the world and the
/// time taken.
fn load_within(bytes: Vec<u8>, limit: Duration) -> (World, Duration) {
    let (done, loaded) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let start = Instant::now();
        let world = World::load(&bytes[..], &registry()).map_err(|e| e.to_string());
        let _ = done.send((world, start.elapsed()));
    });
    match loaded.recv_timeout(limit) {
        Ok((world, took)) => (world.unwrap(), took),
        Err(_) => panic!("loading {N} entities took over {limit:?}: not linear in depth"),
    }
}

/// Saves the hierarchy of the given shape, loads it back within `limit`
/// and checks every parent link and a few world transforms; returns the
/// load's time.
fn round_trip(deep: bool, format: SaveFormat, limit: Duration) -> Duration {
    let (world, es) = common::hierarchy::hierarchy(N, deep);
    let mut bytes = Vec::new();
    world.save(&mut bytes, format, &registry()).unwrap();
    let (loaded, took) = load_within(bytes, limit);
    loaded.check_invariants();
    let tm = loaded.manager::<TransformManager>().unwrap();
    tm.check_invariants();
    for (k, &e) in es.iter().enumerate() {
        let parent = (k > 0).then(|| if deep { es[k - 1] } else { es[0] });
        assert_eq!(loaded.parent(e), parent, "{format:?}: entity {k}");
        let i = tm.lookup(e).unwrap();
        assert_eq!(tm.parent(i).map(|p| p.entity()), parent);
    }
    let depth = |k: usize| if deep { k + 1 } else { 1 + usize::from(k > 0) };
    for k in [0, 1, N / 2, N - 1] {
        let world_x = tm.world(tm.lookup(es[k]).unwrap()).unwrap().translation.x;
        assert_eq!(world_x, depth(k) as f32, "{format:?}: entity {k}");
    }
    took
}

#[test]
fn a_chain_fifty_thousand_deep_loads_about_as_fast_as_a_star_as_wide() {
    for format in [SaveFormat::Binary, SaveFormat::Json] {
        let wide = round_trip(false, format, Duration::from_secs(600));
        let limit = wide * 10 + Duration::from_secs(2);
        let deep = round_trip(true, format, limit);
        eprintln!("{format:?}: {N} wide loads in {wide:?}, {N} deep in {deep:?}");
    }
}
