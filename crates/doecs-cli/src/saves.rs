//! `doecs run --save PATH` and `--load PATH`: the whole world to a file and
//! back, through the same [`ComponentRegistry`] the levels and the inspector
//! use, plus the two managers, the transform hierarchy and the DataComponent,
//! which save themselves in their own forms. A `.json` path gets JSON, anything else the compact binary
//! format; loading tells them apart by their first bytes. Entity ids are
//! kept, so a loaded world runs on exactly as the saved one would have.

use crate::registry::component_registry;
use doecs::{App, AppError, DestroyNotice, Plugin, Shutdown, World};
use doecs_registry::{ComponentRegistry, SaveFormat, WorldSaveExt};
use doecs_transform::TransformManager;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// The component registry with the managers: what a save holds.
pub fn save_registry() -> ComponentRegistry {
    let mut registry = component_registry();
    registry
        .register_manager::<TransformManager>("transform", DestroyNotice::Callback)
        .expect("a fresh name");
    registry
        .register_manager::<doecs_data::DataStore>("data", DestroyNotice::Callback)
        .expect("a fresh name");
    registry
}

/// The format for `path`: JSON for `.json`, else binary.
pub fn format_for(path: &Path) -> SaveFormat {
    match path.extension().and_then(|e| e.to_str()) {
        Some(e) if e.eq_ignore_ascii_case("json") => SaveFormat::Json,
        _ => SaveFormat::Binary,
    }
}

/// Saves `world` to `path` and says so.
pub fn save(world: &World, path: &Path) -> Result<(), String> {
    let start = Instant::now();
    let format = format_for(path);
    let file =
        std::fs::File::create(path).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    world
        .save(file, format, &save_registry())
        .map_err(|e| format!("cannot save to {}: {e}", path.display()))?;
    let bytes = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
    crate::outln!(
        "saved {} entities to {} ({} bytes, {}) in {:.2} ms",
        world.len(),
        path.display(),
        bytes,
        match format {
            SaveFormat::Json => "JSON",
            SaveFormat::Binary => "binary",
        },
        start.elapsed().as_secs_f64() * 1e3
    );
    Ok(())
}

/// Saves the world to a file when the app stops: a system of the
/// `Shutdown` phase, which `App::run` runs once its loop ends. Its outcome
/// is the [`SaveOutcome`] resource.
pub struct SavePlugin(pub PathBuf);

/// What the [`SavePlugin`]'s save came to (a resource, once it ran).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SaveOutcome(pub Result<(), String>);

impl Plugin for SavePlugin {
    fn build(&self, app: &mut App) -> Result<(), AppError> {
        let path = self.0.clone();
        app.add_systems(Shutdown, move |world: &mut World| {
            let outcome = save(world, &path);
            world.insert_resource(SaveOutcome(outcome));
        })?;
        Ok(())
    }
}

/// Loads the world saved at `path` (refused if larger than `limit` bytes)
/// and says so.
pub fn load(path: &Path, limit: u64) -> Result<World, String> {
    let start = Instant::now();
    let bytes = crate::input::read_limited(path, limit).map_err(|e| e.to_string())?;
    let mut world = World::load(&bytes[..], &save_registry())
        .map_err(|e| format!("{}: {e}", path.display()))?;
    if world.manager::<TransformManager>().is_none() {
        world.add_manager(TransformManager::deferred(), DestroyNotice::Callback);
    }
    crate::outln!(
        "loaded {} entities from {} ({} bytes) in {:.2} ms",
        world.len(),
        path.display(),
        bytes.len(),
        start.elapsed().as_secs_f64() * 1e3
    );
    Ok(world)
}
