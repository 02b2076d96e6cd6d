#![doc = include_str!("../README.md")]

mod deferred;
mod error;
mod follow;
mod invariants;
mod link;
mod manager;
mod plugin;
mod propagate;
mod reorder;
mod save;
mod snapshot;
mod storage;
mod world;

pub use deferred::IDLE_PROPAGATIONS;
pub use error::TransformError;
pub use link::Instance;
pub use manager::{Ancestors, Children, TransformManager};
pub use plugin::{TransformPlugin, TransformSystems};
pub use save::SavedTransforms;
pub use world::WorldTransforms;
