//! The inspector as an app plugin.
//!
//! [`InspectorPlugin`] starts the server when it is added (a port that
//! cannot be bound is the plugin's [`AppError::Plugin`]) and adds one
//! exclusive system in [`First`], in the set
//! [`InspectorSystems::Serve`]. Each frame it hands the inspector the
//! previous update's wall and system times (the app's
//! [`LastUpdate`] resource), then answers the queued requests, and, while
//! the page has paused the simulation, waits there, answering, until it
//! is resumed or stepped. So a request always sees the world between two
//! updates, never in the middle of one, as it did when the loop served
//! the inspector by hand.
//!
//! The [`InspectorHandle`] resource reaches the running inspector: its
//! address, its statistics, a printable plan to show, and serving while a
//! paced loop waits for its next frame ([`InspectorHandle::serve_until`]).

use crate::inspector::{Inspector, InspectorConfig, ServeStats};
use doecs::{App, AppError, First, LastUpdate, Plugin, SystemConfig, World};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Instant;

pub use crate::history::SERVE_SYSTEM;

/// The system sets of the inspector plugin.
#[derive(doecs::SystemSet, Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum InspectorSystems {
    /// Requests are answered between frames (in `First`).
    Serve,
}

/// The running inspector, shared by the plugin's system and its users (a
/// resource). Cheap to clone.
#[derive(Clone)]
pub struct InspectorHandle(Arc<Mutex<Inspector>>);

impl std::fmt::Debug for InspectorHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("InspectorHandle")
            .field(&self.addr())
            .finish()
    }
}

impl InspectorHandle {
    /// The inspector. A panic while it was held (in a request handler,
    /// which catches its own) leaves nothing half-done that matters, so a
    /// poisoned lock is taken as it is.
    pub fn lock(&self) -> MutexGuard<'_, Inspector> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The address it serves on.
    pub fn addr(&self) -> SocketAddr {
        self.lock().addr()
    }

    /// The page's address, `http://…/`.
    pub fn url(&self) -> String {
        self.lock().url()
    }

    /// Time spent answering so far.
    pub fn stats(&self) -> ServeStats {
        self.lock().stats()
    }

    /// Shows `plan` on the page, beside the system times.
    pub fn set_plan(&self, plan: impl Into<String>) {
        self.lock().set_plan(plan);
    }

    /// Records the update just run, then answers requests as they come
    /// until `deadline`: for a loop that paces its frames, in place of
    /// sleeping.
    pub fn serve_until(&self, world: &mut World, deadline: Instant) {
        let mut inspector = self.lock();
        record_last_update(&mut inspector, world);
        inspector.serve_until(world, deadline);
    }

    /// After the last update: records it and answers what is queued.
    pub fn finish(&self, world: &mut World) {
        let mut inspector = self.lock();
        record_last_update(&mut inspector, world);
        inspector.serve_pending(world);
    }
}

/// Hands the inspector the app's last update, once, less the time its
/// own system took (answering, or waiting while paused).
fn record_last_update(inspector: &mut Inspector, world: &World) {
    if let Some(last) = world.resource::<LastUpdate>() {
        if last.number > inspector.frame() {
            let own: std::time::Duration = last
                .systems
                .iter()
                .filter(|s| &*s.name == SERVE_SYSTEM)
                .map(|s| s.time)
                .sum();
            inspector.record_frame(world, last.wall.saturating_sub(own), &last.systems);
        }
    }
}

/// Serves an inspector between the app's frames. See the module docs.
///
/// ```no_run
/// use doecs::prelude::*;
/// use doecs_inspect::{InspectorConfig, InspectorHandle, InspectorPlugin};
/// let mut app = App::new();
/// app.add_plugins(InspectorPlugin::new(InspectorConfig::new("127.0.0.1:8370")))?;
/// let url = app.world().resource::<InspectorHandle>().unwrap().url();
/// println!("inspector at {url}");
/// app.run()?;
/// # Ok::<(), AppError>(())
/// ```
#[derive(Clone, Debug)]
pub struct InspectorPlugin {
    config: InspectorConfig,
}

impl InspectorPlugin {
    /// Serves as `config` says.
    pub fn new(config: InspectorConfig) -> Self {
        InspectorPlugin { config }
    }
}

impl Plugin for InspectorPlugin {
    fn build(&self, app: &mut App) -> Result<(), AppError> {
        let inspector = Inspector::start(self.config.clone()).map_err(|e| AppError::Plugin {
            plugin: "InspectorPlugin".to_owned(),
            source: Box::new(e),
        })?;
        let handle = InspectorHandle(Arc::new(Mutex::new(inspector)));
        app.world_mut().insert_resource(handle.clone());
        let serve = move |world: &mut World| {
            let mut inspector = handle.lock();
            record_last_update(&mut inspector, world);
            inspector.between_frames(world);
        };
        app.add_systems(
            First,
            serve.named(SERVE_SYSTEM).in_set(InspectorSystems::Serve),
        )?;
        Ok(())
    }
}
