//! Resources: world-level singletons, one per Rust type (a `Time`, a `dt`).

use crate::component::TypeIdMap;
use std::any::{Any, TypeId};

/// A map from type to one value of that type.
#[derive(Default)]
pub struct Resources {
    values: TypeIdMap<Box<dyn Any + Send + Sync>>,
}

impl std::fmt::Debug for Resources {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Resources")
            .field("count", &self.values.len())
            .finish()
    }
}

impl Resources {
    /// Stores `value`, returning the previous value of that type.
    pub fn insert<R: Send + Sync + 'static>(&mut self, value: R) -> Option<R> {
        self.values
            .insert(TypeId::of::<R>(), Box::new(value))
            .map(|old| *old.downcast::<R>().expect("keyed by TypeId"))
    }

    /// The value of type `R`.
    pub fn get<R: 'static>(&self) -> Option<&R> {
        self.values.get(&TypeId::of::<R>())?.downcast_ref()
    }

    /// The value of type `R`, mutably.
    pub fn get_mut<R: 'static>(&mut self) -> Option<&mut R> {
        self.values.get_mut(&TypeId::of::<R>())?.downcast_mut()
    }

    /// Removes and returns the value of type `R`.
    pub fn remove<R: 'static>(&mut self) -> Option<R> {
        self.values
            .remove(&TypeId::of::<R>())
            .map(|old| *old.downcast::<R>().expect("keyed by TypeId"))
    }

    /// Whether a value of type `R` is stored.
    pub fn contains<R: 'static>(&self) -> bool {
        self.values.contains_key(&TypeId::of::<R>())
    }
}
