#![doc = include_str!("../../../README.md")]
#![deny(unsafe_op_in_unsafe_fn)]
#![warn(missing_docs, clippy::undocumented_unsafe_blocks)]

pub mod entity;
pub mod manager;

pub use entity::{Entities, Entity, MIN_FREE_INDICES};
pub use manager::{ComponentManager, DestroyNotice};
