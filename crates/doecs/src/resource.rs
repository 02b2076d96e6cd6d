//! Resources: world-level singletons, one per Rust type (a `Time`, a `dt`).
//!
//! Each value sits in its own heap cell behind an [`UnsafeCell`], so that the
//! [`Schedule`](crate::Schedule) can hand a system `&mut R` through a shared
//! `&World` while other systems run, exactly when the system declared a write
//! of `R` and the schedule ordered every other accessor of `R` around it. All
//! safe methods follow the ordinary borrow rules of `&self`/`&mut self`.

use crate::type_index::TypeIdMap;
use std::any::{Any, TypeId};
use std::cell::UnsafeCell;

/// One resource value.
///
/// # Invariants
/// The value is only mutated through `&mut ResourceCell` or through
/// [`Resources::get_mut_unchecked`], whose callers guarantee exclusive access.
struct ResourceCell(UnsafeCell<Box<dyn Any + Send + Sync>>);

// SAFETY: the boxed value is `Send + Sync`; shared access only reads it, and
// the one path that writes through `&ResourceCell` (`get_mut_unchecked`)
// requires its caller to guarantee that no other access happens meanwhile.
unsafe impl Sync for ResourceCell {}

impl ResourceCell {
    fn value(&self) -> &(dyn Any + Send + Sync) {
        // SAFETY: no `&mut` to the box exists while `&self` is shared, except
        // under `get_mut_unchecked`, whose caller excludes this read.
        unsafe { &**self.0.get() }
    }
}

/// A map from type to one value of that type.
#[derive(Default)]
pub struct Resources {
    values: TypeIdMap<ResourceCell>,
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
            .insert(
                TypeId::of::<R>(),
                ResourceCell(UnsafeCell::new(Box::new(value))),
            )
            .map(|old| *old.0.into_inner().downcast::<R>().expect("keyed by TypeId"))
    }

    /// The value of type `R`.
    pub fn get<R: 'static>(&self) -> Option<&R> {
        self.values.get(&TypeId::of::<R>())?.value().downcast_ref()
    }

    /// The value of type `R`, mutably.
    pub fn get_mut<R: 'static>(&mut self) -> Option<&mut R> {
        self.values
            .get_mut(&TypeId::of::<R>())?
            .0
            .get_mut()
            .downcast_mut()
    }

    /// The value of type `R`, mutably, through a shared map.
    ///
    /// # Safety
    /// For as long as the returned reference lives, nothing else may access
    /// the resource `R` (no other `get`, `get_mut_unchecked`, nor removal).
    /// The schedule guarantees this for a system that declared a write of `R`.
    // The `&self` to `&mut R` step is the point: the contract above makes it sound.
    #[allow(clippy::mut_from_ref)]
    pub unsafe fn get_mut_unchecked<R: 'static>(&self) -> Option<&mut R> {
        let cell = self.values.get(&TypeId::of::<R>())?;
        // SAFETY: the caller guarantees exclusive access to this resource; the
        // box's pointee is uniquely owned by the box in the cell.
        let boxed: &mut Box<dyn Any + Send + Sync> = unsafe { &mut *cell.0.get() };
        boxed.downcast_mut()
    }

    /// Removes and returns the value of type `R`.
    pub fn remove<R: 'static>(&mut self) -> Option<R> {
        self.values
            .remove(&TypeId::of::<R>())
            .map(|old| *old.0.into_inner().downcast::<R>().expect("keyed by TypeId"))
    }

    /// Whether a value of type `R` is stored.
    pub fn contains<R: 'static>(&self) -> bool {
        self.values.contains_key(&TypeId::of::<R>())
    }

    /// Whether a value of type `type_id` is stored.
    pub fn contains_type(&self, type_id: TypeId) -> bool {
        self.values.contains_key(&type_id)
    }

    /// Number of resources.
    pub fn len(&self) -> usize {
        self.values.len()
    }

    /// Whether there are no resources.
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn insert_get_replace_remove() {
        let mut r = Resources::default();
        assert!(r.insert(1.5f32).is_none());
        assert_eq!(r.insert(2.5f32), Some(1.5));
        *r.get_mut::<f32>().unwrap() += 1.0;
        assert_eq!(r.get::<f32>(), Some(&3.5));
        // SAFETY: no other access to `f32` exists while `v` lives.
        let v = unsafe { r.get_mut_unchecked::<f32>() }.unwrap();
        *v = 7.0;
        assert_eq!(r.get::<f32>(), Some(&7.0));
        assert_eq!(r.len(), 1);
        assert_eq!(r.remove::<f32>(), Some(7.0));
        assert!(r.is_empty() && !r.contains::<f32>());
    }
}
