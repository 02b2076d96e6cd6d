//! The level plugin on an app: requests from systems are spawned in the
//! next frame's `PreUpdate`, in request order, each answered by one event;
//! a bad blob changes nothing and does not stop the requests after it; and
//! the world, ids included, is the same at any thread count.

use doecs::prelude::*;
use doecs::raw::name_hash;
use doecs_resource::transform::{encode_transform, TRANSFORM_SIZE};
use doecs_resource::{
    standard_spawner, BlobBuilder, LevelId, LevelLoaded, LevelPlugin, LevelSystems, Levels,
    NO_PARENT,
};
use doecs_transform::TransformManager;
use glam::{Affine3A, Vec3};
use std::sync::Arc;

#[derive(Copy, Clone, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(transparent)]
struct Mass(f32);
impl doecs_resource::PlainBytes for Mass {
    const SCALAR_WIDTH: usize = 4;
}

/// A root and two children, each with a transform and a mass `base + i`.
fn blob(base: f32) -> Arc<[u8]> {
    let mut b = BlobBuilder::new(vec![NO_PARENT, 0, 0]);
    b.push_dense(
        name_hash("transform"),
        TRANSFORM_SIZE as u32,
        (0..3)
            .flat_map(|i| encode_transform(&Affine3A::from_translation(Vec3::X * i as f32)))
            .collect(),
    );
    b.push_dense(
        name_hash("mass"),
        4,
        (0..3)
            .flat_map(|i| (base + i as f32).to_le_bytes())
            .collect(),
    );
    b.to_bytes().into()
}

fn plugin() -> LevelPlugin {
    let mut spawner = standard_spawner();
    spawner.register_plain::<Mass>("mass").unwrap();
    LevelPlugin::new(spawner)
}

/// What the `Update` systems saw: (frame, level answers).
#[derive(Default)]
struct Seen(Vec<(u32, LevelId, Result<usize, String>)>);

#[derive(Default)]
struct Frame(u32);

fn request_on_frame_one(frame: Res<Frame>, mut levels: ResMut<Levels>) {
    if frame.0 == 1 {
        levels.spawn(blob(10.0));
        levels.spawn(Arc::<[u8]>::from(&b"not a level"[..]));
        levels.spawn(blob(20.0));
    }
}

fn record(frame: Res<Frame>, mut loaded: EventReader<LevelLoaded>, mut seen: ResMut<Seen>) {
    for event in loaded.read() {
        let outcome = match &event.result {
            Ok(out) => Ok(out.entities.len()),
            Err(e) => Err(e.to_string()),
        };
        seen.0.push((frame.0, event.id, outcome));
    }
}

fn count_frames(mut frame: ResMut<Frame>) {
    frame.0 += 1;
}

fn app(threads: usize) -> App {
    let mut app = App::with_threads(threads);
    app.add_plugins(plugin()).unwrap();
    app.world_mut().insert_resource(Frame::default());
    app.world_mut().insert_resource(Seen::default());
    app.add_systems(First, count_frames).unwrap();
    app.add_systems(Update, (request_on_frame_one, record).chain())
        .unwrap();
    // A spawner of its own beside the levels, ordered after them, so ids
    // interleave with level ids.
    app.add_systems(
        PreUpdate,
        (|mut commands: Commands| {
            commands.spawn((Mass(-1.0),));
        })
        .after(LevelSystems::Spawn),
    )
    .unwrap();
    app
}

#[test]
fn levels_asked_for_in_a_frame_are_spawned_in_the_next_and_answered() {
    let mut app = app(1);
    app.update().unwrap(); // frame 1: requests
    assert_eq!(app.world().resource::<Levels>().unwrap().pending(), 3);
    let before = app.world().len();
    app.update().unwrap(); // frame 2: spawned in PreUpdate, seen in Update
    assert_eq!(app.world().resource::<Levels>().unwrap().pending(), 0);
    let seen = &app.world().resource::<Seen>().unwrap().0;
    assert_eq!(seen.len(), 3, "{seen:?}");
    assert_eq!(seen[0], (2, LevelId(0), Ok(3)));
    assert_eq!(seen[2], (2, LevelId(2), Ok(3)));
    assert_eq!((seen[1].0, seen[1].1), (2, LevelId(1)));
    assert!(
        seen[1].2.is_err(),
        "the bad blob is refused: {:?}",
        seen[1].2
    );
    // Two levels of three and one more `Mass(-1)` from the other spawner.
    assert_eq!(app.world().len(), before + 6 + 1);
    let world = app.world();
    let mut masses: Vec<f32> = world.query::<&Mass>().iter().map(|m| m.0).collect();
    masses.sort_by(f32::total_cmp);
    assert_eq!(masses, [-1.0, -1.0, 10.0, 11.0, 12.0, 20.0, 21.0, 22.0]);
    // The levels' hierarchies arrived with them, propagated in PostUpdate.
    let transforms = world.manager::<TransformManager>().unwrap();
    assert_eq!(transforms.len(), 6);
    app.update().unwrap();
    assert_eq!(
        app.world().resource::<Seen>().unwrap().0.len(),
        3,
        "each answer is read once"
    );
}

#[test]
fn the_plugin_keeps_the_transform_and_data_plugins_a_user_added() {
    let mut app = App::with_threads(1);
    app.add_plugins(doecs_transform::TransformPlugin).unwrap();
    app.add_plugins(doecs_data::DataPlugin).unwrap();
    app.add_plugins(plugin()).unwrap();
    assert!(matches!(
        app.add_plugins(plugin()),
        Err(AppError::DuplicatePlugin { .. })
    ));
}

fn simulate(threads: usize) -> Vec<(Entity, u32)> {
    let mut app = app(threads);
    for _ in 0..4 {
        app.update().unwrap();
    }
    let mut out: Vec<(Entity, u32)> = app
        .world()
        .query::<(Entity, &Mass)>()
        .iter()
        .map(|(e, m)| (e, m.0.to_bits()))
        .collect();
    out.sort_by_key(|x| x.0.to_bits());
    out
}

#[test]
#[cfg_attr(miri, ignore)] // starts thread pools
fn levels_spawn_the_same_ids_at_any_thread_count() {
    let one = simulate(1);
    assert_eq!(one.len(), 6 + 4);
    for threads in [2, 4, 8] {
        assert_eq!(simulate(threads), one, "{threads} threads");
    }
}

#[derive(Copy, Clone, Debug, PartialEq, Default)]
struct Inertia(f32);

#[test]
fn a_level_spawn_brings_required_components() {
    let mut world = World::new();
    world.register_required::<Mass, Inertia>().unwrap();
    let mut spawner = standard_spawner();
    spawner.register_plain::<Mass>("mass").unwrap();
    let out = spawner
        .spawn(
            &mut world,
            &blob(1.0),
            doecs_resource::SpawnOptions::default(),
        )
        .unwrap();
    for e in out.entities {
        assert_eq!(world.get::<Inertia>(e), Ok(&Inertia(0.0)));
    }
}
