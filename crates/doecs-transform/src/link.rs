//! Handles: the public [`Instance`] and the internal [`Link`] between instances.
//!
//! A `Link` is what the hierarchy columns store: an instance index or nothing,
//! packed in a `u32` with `u32::MAX` as the "nothing" niche. It never leaves the
//! crate; the public API speaks `Option<Instance>`. An [`Instance`] is the index
//! of a slot plus the entity that owned it when the handle was made. Every call
//! checks that entity against the slot (one load and compare), so a handle that
//! went stale because instances moved (destroy, compaction, deferred
//! propagation) is detected and re-resolved through the entity map instead of
//! silently touching another node.

use doecs::Entity;

/// An instance index or nothing; `u32::MAX` encodes nothing.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
#[repr(transparent)]
pub(crate) struct Link(u32);

impl Link {
    /// No instance.
    pub(crate) const NONE: Link = Link(u32::MAX);

    /// A link to instance `i` (`i` must not be `u32::MAX`; capacity guarantees it).
    #[inline]
    pub(crate) const fn some(i: u32) -> Link {
        debug_assert!(i != u32::MAX);
        Link(i)
    }

    /// The linked index, if any.
    #[inline]
    pub(crate) const fn get(self) -> Option<u32> {
        if self.0 == u32::MAX {
            None
        } else {
            Some(self.0)
        }
    }

    /// Whether this links to something.
    #[inline]
    pub(crate) const fn is_some(self) -> bool {
        self.0 != u32::MAX
    }
}

/// A handle to one transform instance in a [`crate::TransformManager`].
///
/// It names the slot where the instance lived when the handle was made and the
/// entity that owns it. Instances move when the manager reorders its arrays:
/// [`destroy`](crate::TransformManager::destroy) (swap-remove),
/// [`compact`](crate::TransformManager::compact) and, in deferred mode,
/// [`propagate`](crate::TransformManager::propagate). A moved handle stays
/// *correct*: the manager notices that the slot's entity differs and finds the
/// instance again through its entity map (slower, one extra lookup). Call
/// [`lookup`](crate::TransformManager::lookup) again to get a fresh handle.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub struct Instance {
    pub(crate) index: u32,
    pub(crate) entity: Entity,
}

impl Instance {
    /// The slot index at the time the handle was made.
    #[inline]
    pub fn index(self) -> u32 {
        self.index
    }

    /// The entity this instance belongs to.
    #[inline]
    pub fn entity(self) -> Entity {
        self.entity
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn link_roundtrip() {
        assert_eq!(Link::NONE.get(), None);
        assert_eq!(Link::some(0).get(), Some(0));
        assert!(Link::some(5).is_some());
        assert!(!Link::NONE.is_some());
    }
}
