//! Component managers: components that own their storage (seed 001, part 2).
//!
//! Some components want full control of their data layout, like the Bitsquid
//! managers: a transform hierarchy, a physics scene, a data store. Such a manager
//! keeps its own structure-of-arrays keyed by [`Entity`] and hands out `Instance`
//! handles. The world stores managers beside its archetype storage, so one entity
//! can have both kinds of component.
//!
//! A manager learns that entities were destroyed in one of two ways, chosen when
//! it is added to a world ([`DestroyNotice`]):
//! - **Callback:** the world calls [`ComponentManager::on_destroy`] with every batch
//!   of destroyed entities, one call per batch.
//! - **Lazy garbage collection:** the world never calls `on_destroy`; instead
//!   [`ComponentManager::collect_garbage`] runs when the user asks
//!   (`World::collect_garbage`). The seed's version probes random instances and
//!   stops after four live ones in a row, so it costs almost nothing when nothing
//!   died.

use crate::entity::{Entities, Entity};
use std::any::Any;

/// How a manager hears about destroyed entities.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum DestroyNotice {
    /// `on_destroy` is called with each batch of destroyed entities.
    Callback,
    /// Nothing is called on destroy; `collect_garbage` cleans up lazily.
    LazyGc,
}

/// A component that owns its storage. See the module docs.
///
pub trait ComponentManager: Any + Send + Sync {
    /// Called with entities that were destroyed, in destruction order, when the
    /// manager was added with [`DestroyNotice::Callback`]. The slice may contain
    /// entities this manager never saw; ignore those.
    fn on_destroy(&mut self, destroyed: &[Entity]);

    /// Lazy collection of instances whose entity is dead. Returns how many
    /// instances were destroyed. The default does nothing.
    fn collect_garbage(&mut self, entities: &Entities) -> usize {
        let _ = entities;
        0
    }
}
