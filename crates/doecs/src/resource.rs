//! Resources: world-level singletons, one per Rust type (a `Time`, a `dt`).
//!
//! Each value sits in its own heap cell behind an [`UnsafeCell`], so that the
//! [`Schedule`](crate::Schedule) can hand a system `&mut R` through a shared
//! `&World` while other systems run, exactly when the system declared a write
//! of `R` and the schedule ordered every other accessor of `R` around it. All
//! safe methods follow the ordinary borrow rules of `&self`/`&mut self`.
//!
//! Each value carries two change ticks ([`ResourceTicks`]): when it was
//! added and when it was last written. A safe `insert` or `get_mut` stamps
//! them with the tick its caller gives; the unchecked path hands out the
//! `changed` tick beside the value, so a system's `ResMut` stamps only when
//! it is written through.

use crate::tick::Tick;
use crate::type_index::TypeIdMap;
use std::any::{Any, TypeId};
use std::cell::UnsafeCell;

/// When a resource was added, and when it was last written.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct ResourceTicks {
    /// The tick of the insert that created it.
    pub added: Tick,
    /// The tick of its last write (or of its insert).
    pub changed: Tick,
}

/// One resource value and its ticks.
///
/// # Invariants
/// The value and its `changed` tick are only mutated through
/// `&mut ResourceCell` or through [`Resources::get_mut_unchecked`], whose
/// callers guarantee exclusive access.
struct ResourceCell {
    value: UnsafeCell<Box<dyn Any + Send + Sync>>,
    added: Tick,
    changed: UnsafeCell<Tick>,
}

// SAFETY: the boxed value is `Send + Sync` and a `Tick` is plain data;
// shared access only reads them, and the one path that writes through
// `&ResourceCell` (`get_mut_unchecked`) requires its caller to guarantee
// that no other access happens meanwhile.
unsafe impl Sync for ResourceCell {}

impl ResourceCell {
    fn new(value: Box<dyn Any + Send + Sync>, tick: Tick) -> Self {
        ResourceCell {
            value: UnsafeCell::new(value),
            added: tick,
            changed: UnsafeCell::new(tick),
        }
    }

    fn value(&self) -> &(dyn Any + Send + Sync) {
        // SAFETY: no `&mut` to the box exists while `&self` is shared, except
        // under `get_mut_unchecked`, whose caller excludes this read.
        unsafe { &**self.value.get() }
    }

    fn ticks(&self) -> ResourceTicks {
        ResourceTicks {
            added: self.added,
            // SAFETY: as for `value`: no writer exists while `&self` is shared.
            changed: unsafe { *self.changed.get() },
        }
    }

    fn into_value<R: 'static>(self) -> R {
        *self
            .value
            .into_inner()
            .downcast::<R>()
            .expect("keyed by TypeId")
    }
}

/// A resource handed out mutably through a shared map: the value, when it
/// was added, and its `changed` tick to stamp on a write.
pub struct ResourceMut<'a, R> {
    /// The value.
    pub value: &'a mut R,
    /// When it was added.
    pub added: Tick,
    /// When it was last written; a writer sets it to its own tick.
    pub changed: &'a mut Tick,
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
    /// Stores `value` at `tick`, returning the previous value of that type.
    /// A new resource is added at `tick`; a replaced one keeps its added
    /// tick and is changed at `tick`.
    pub fn insert<R: Send + Sync + 'static>(&mut self, value: R, tick: Tick) -> Option<R> {
        match self.values.get_mut(&TypeId::of::<R>()) {
            Some(cell) => {
                *cell.changed.get_mut() = tick;
                let old = std::mem::replace(cell.value.get_mut(), Box::new(value));
                Some(*old.downcast::<R>().expect("keyed by TypeId"))
            }
            None => {
                let cell = ResourceCell::new(Box::new(value), tick);
                self.values.insert(TypeId::of::<R>(), cell);
                None
            }
        }
    }

    /// The value of type `R`.
    pub fn get<R: 'static>(&self) -> Option<&R> {
        self.values.get(&TypeId::of::<R>())?.value().downcast_ref()
    }

    /// The value of type `R` and its ticks.
    pub fn get_with_ticks<R: 'static>(&self) -> Option<(&R, ResourceTicks)> {
        let cell = self.values.get(&TypeId::of::<R>())?;
        Some((cell.value().downcast_ref()?, cell.ticks()))
    }

    /// The ticks of the resource of type `type_id`.
    pub fn ticks(&self, type_id: TypeId) -> Option<ResourceTicks> {
        self.values.get(&type_id).map(ResourceCell::ticks)
    }

    /// Sets the ticks of the resource of type `type_id` (a restore puts
    /// back the ticks it saved); `false` if there is no such resource.
    pub fn set_ticks(&mut self, type_id: TypeId, ticks: ResourceTicks) -> bool {
        let Some(cell) = self.values.get_mut(&type_id) else {
            return false;
        };
        cell.added = ticks.added;
        *cell.changed.get_mut() = ticks.changed;
        true
    }

    /// The value of type `R`, mutably, marked changed at `tick`.
    pub fn get_mut<R: 'static>(&mut self, tick: Tick) -> Option<&mut R> {
        let cell = self.values.get_mut(&TypeId::of::<R>())?;
        let value = cell.value.get_mut().downcast_mut()?;
        *cell.changed.get_mut() = tick;
        Some(value)
    }

    /// The value of type `R`, mutably, through a shared map.
    ///
    /// # Safety
    /// For as long as the returned reference lives, nothing else may access
    /// the resource `R` (no other `get`, `get_mut_unchecked`, nor removal).
    /// The schedule guarantees this for a system that declared a write of `R`.
    // The `&self` to `&mut R` step is the point: the contract above makes it sound.
    #[allow(clippy::mut_from_ref)]
    pub unsafe fn get_mut_unchecked<R: 'static>(&self) -> Option<ResourceMut<'_, R>> {
        let cell = self.values.get(&TypeId::of::<R>())?;
        // SAFETY: the caller guarantees exclusive access to this resource; the
        // box's pointee is uniquely owned by the box in the cell, and the
        // `changed` tick belongs to this resource alone.
        let (boxed, changed) = unsafe { (&mut *cell.value.get(), &mut *cell.changed.get()) };
        Some(ResourceMut {
            value: boxed.downcast_mut()?,
            added: cell.added,
            changed,
        })
    }

    /// Removes and returns the value of type `R`.
    pub fn remove<R: 'static>(&mut self) -> Option<R> {
        self.values
            .remove(&TypeId::of::<R>())
            .map(ResourceCell::into_value)
    }

    /// Drops every value.
    pub fn clear(&mut self) {
        self.values.clear();
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
        let t = Tick::new;
        let mut r = Resources::default();
        assert!(r.insert(1.5f32, t(1)).is_none());
        assert_eq!(r.insert(2.5f32, t(2)), Some(1.5));
        let ticks = |r: &Resources| r.ticks(TypeId::of::<f32>()).unwrap();
        assert_eq!(
            ticks(&r),
            ResourceTicks {
                added: t(1),
                changed: t(2)
            }
        );
        *r.get_mut::<f32>(t(3)).unwrap() += 1.0;
        assert_eq!(
            r.get_with_ticks::<f32>().unwrap(),
            (
                &3.5,
                ResourceTicks {
                    added: t(1),
                    changed: t(3)
                }
            )
        );
        // SAFETY: no other access to `f32` exists while `v` lives.
        let v = unsafe { r.get_mut_unchecked::<f32>() }.unwrap();
        assert_eq!((v.added, *v.changed), (t(1), t(3)));
        *v.value = 7.0;
        *v.changed = t(5);
        assert_eq!(r.get::<f32>(), Some(&7.0));
        assert_eq!(ticks(&r).changed, t(5));
        assert!(r.set_ticks(TypeId::of::<f32>(), ResourceTicks::default()));
        assert_eq!(ticks(&r), ResourceTicks::default());
        assert_eq!(r.len(), 1);
        assert_eq!(r.remove::<f32>(), Some(7.0));
        assert!(r.is_empty() && !r.contains::<f32>());
    }
}
