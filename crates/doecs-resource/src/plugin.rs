//! Levels on an app: ask for a level from any system, and it is spawned
//! at a fixed point of the next frame.
//!
//! [`LevelPlugin`] gives the app's world a [`Levels`] resource holding the
//! spawner and a queue of requested blobs. A system (or code outside the
//! app, through `app.world_mut()`) asks with [`Levels::spawn`], which
//! returns a [`LevelId`] at once. The plugin's exclusive system, in
//! [`PreUpdate`] in the set [`LevelSystems::Spawn`], spawns every queued
//! blob in request order and sends one [`LevelLoaded`] event per request,
//! with the entities or the error. So a level asked for during frame f is
//! in the world when frame f+1's `Update` runs, and its event is readable
//! there (events live for two frames).
//!
//! A blob that fails leaves the world as it was (the spawner checks
//! everything before it creates anything), and the requests after it are
//! still spawned. Spawning in request order keeps entity ids the same at
//! any thread count.
//!
//! The plugin adds the transform and DataComponent plugins unless the app
//! has them, since the built-in `transform` and `data` components live in
//! their managers.

use crate::spawner::{SpawnOptions, SpawnResult, Spawner};
use crate::SpawnError;
use doecs::{App, AppError, Plugin, PreUpdate, SystemConfig, World};
use doecs_data::DataPlugin;
use doecs_transform::TransformPlugin;
use std::sync::Arc;

/// The system sets of the level plugin.
#[derive(doecs::SystemSet, Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LevelSystems {
    /// The queued levels are spawned (in `PreUpdate`).
    Spawn,
}

/// Which request a [`LevelLoaded`] answers: numbered from 0 in request
/// order, per world.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct LevelId(pub u64);

/// The answer to one [`Levels::spawn`] request (an event).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LevelLoaded {
    /// The request.
    pub id: LevelId,
    /// The entities created, or why nothing was.
    pub result: Result<SpawnResult, SpawnError>,
}

/// The spawner and the queue of requested levels (a resource).
pub struct Levels {
    spawner: Arc<Spawner>,
    queue: Vec<(LevelId, Arc<[u8]>, SpawnOptions)>,
    next: u64,
}

impl std::fmt::Debug for Levels {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Levels")
            .field("spawner", &self.spawner)
            .field("queued", &self.queue.len())
            .field("next", &self.next)
            .finish()
    }
}

impl Levels {
    /// Asks for the compiled level `blob` to be spawned with default
    /// options at the next [`LevelSystems::Spawn`].
    pub fn spawn(&mut self, blob: impl Into<Arc<[u8]>>) -> LevelId {
        self.spawn_with(blob, SpawnOptions::default())
    }

    /// As [`spawn`](Self::spawn), with `options`.
    pub fn spawn_with(&mut self, blob: impl Into<Arc<[u8]>>, options: SpawnOptions) -> LevelId {
        let id = LevelId(self.next);
        self.next += 1;
        self.queue.push((id, blob.into(), options));
        id
    }

    /// Requests not yet spawned.
    pub fn pending(&self) -> usize {
        self.queue.len()
    }

    /// The spawner the levels are spawned with.
    pub fn spawner(&self) -> &Spawner {
        &self.spawner
    }
}

/// Spawns requested levels on an app. See the module docs.
///
/// ```
/// use doecs::prelude::*;
/// use doecs_resource::{standard_compiler, LevelLoaded, LevelPlugin, Levels};
/// use doecs_transform::TransformManager;
///
/// let blob = standard_compiler()
///     .compile_str(r#"{"entities": [{"components": {"transform": {}}}]}"#)
///     .unwrap();
/// let mut app = App::with_threads(1);
/// app.add_plugins(LevelPlugin::default())?;
/// app.world_mut().resource_mut::<Levels>().unwrap().spawn(blob);
/// app.update()?;
/// assert_eq!(app.world().len(), 1);
/// let events = app.world().resource::<Events<LevelLoaded>>().unwrap();
/// let loaded = events.since(0).next().unwrap().1;
/// assert_eq!(loaded.result.as_ref().unwrap().entities.len(), 1);
/// # Ok::<(), AppError>(())
/// ```
#[derive(Clone, Debug)]
pub struct LevelPlugin {
    spawner: Arc<Spawner>,
}

impl Default for LevelPlugin {
    /// The standard spawner ([`crate::standard_spawner`]).
    fn default() -> Self {
        LevelPlugin::new(crate::standard_spawner())
    }
}

impl LevelPlugin {
    /// Spawns levels with `spawner`.
    pub fn new(spawner: Spawner) -> Self {
        LevelPlugin {
            spawner: Arc::new(spawner),
        }
    }
}

/// Spawns every queued level, in request order, and sends their events.
fn spawn_levels(world: &mut World) {
    let Some(levels) = world.resource_mut::<Levels>() else {
        return;
    };
    if levels.queue.is_empty() {
        return;
    }
    let queue = std::mem::take(&mut levels.queue);
    let spawner = Arc::clone(&levels.spawner);
    for (id, blob, options) in &queue {
        let result = spawner.spawn(world, blob, *options);
        world.send_event(LevelLoaded { id: *id, result });
    }
    // Give the queue's memory back for the next requests.
    if let Some(levels) = world.resource_mut::<Levels>() {
        let mut queue = queue;
        queue.clear();
        if levels.queue.is_empty() {
            levels.queue = queue;
        }
    }
}

impl Plugin for LevelPlugin {
    fn build(&self, app: &mut App) -> Result<(), AppError> {
        if !app.has_plugin::<TransformPlugin>() {
            app.add_plugins(TransformPlugin)?;
        }
        if !app.has_plugin::<DataPlugin>() {
            app.add_plugins(DataPlugin)?;
        }
        let world = app.world_mut();
        world.add_event::<LevelLoaded>();
        world.insert_resource(Levels {
            spawner: Arc::clone(&self.spawner),
            queue: Vec::new(),
            next: 0,
        });
        app.add_systems(PreUpdate, spawn_levels.in_set(LevelSystems::Spawn))?;
        Ok(())
    }
}
