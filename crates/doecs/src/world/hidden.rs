//! Hidden entities: disabling, and the tags queries leave out by default.
//!
//! A world keeps a set of tag types ([`HiddenTags`]) that queries leave
//! out unless they name them: [`Prefab`](crate::Prefab) and [`Disabled`]
//! from the start, and any tag a game adds. A disabled entity is alive:
//! `get`, views, relations, snapshots and saves see it; only queries (and
//! so systems) skip it. Enabling it again brings it back into every query
//! at once. The set is per world; changing it makes every cached query
//! match its archetypes again on its next use.

use super::World;
use crate::component::Component;
use crate::entity::Entity;
use crate::error::EntityError;
use crate::tags::{Disabled, HiddenTags};
use std::any::TypeId;

impl World {
    /// Disables `entity`: every query that does not name [`Disabled`]
    /// skips it until [`World::enable`].
    ///
    /// ```
    /// use doecs::World;
    /// struct Hp(u32);
    /// let mut world = World::new();
    /// let e = world.spawn((Hp(3),));
    /// world.disable(e).unwrap();
    /// assert_eq!(world.query::<&Hp>().iter().count(), 0);
    /// assert_eq!(world.get::<Hp>(e).unwrap().0, 3, "still alive, still reachable");
    /// world.enable(e).unwrap();
    /// assert_eq!(world.query::<&Hp>().iter().count(), 1);
    /// ```
    pub fn disable(&mut self, entity: Entity) -> Result<(), EntityError> {
        self.insert_one(entity, Disabled)
    }

    /// Enables `entity` again (removes [`Disabled`]; enabling an enabled
    /// entity does nothing).
    pub fn enable(&mut self, entity: Entity) -> Result<(), EntityError> {
        match self.remove_one::<Disabled>(entity) {
            Ok(_) | Err(EntityError::MissingComponent { .. }) => Ok(()),
            Err(e) => Err(e),
        }
    }

    /// Whether `entity` is disabled.
    pub fn is_disabled(&self, entity: Entity) -> bool {
        self.get::<Disabled>(entity).is_ok()
    }

    /// Hides entities with tag `T` from every query that does not name
    /// `T`, as [`Disabled`] and [`Prefab`](crate::Prefab) are; `false` if
    /// it was hidden already.
    pub fn hide_by_default<T: Component>(&mut self) -> bool {
        self.core.hidden.hide(TypeId::of::<T>())
    }

    /// Stops hiding tag `T` by default (the built-in [`Disabled`] and
    /// [`Prefab`](crate::Prefab) included); `false` if it was not hidden.
    pub fn show_by_default<T: Component>(&mut self) -> bool {
        self.core.hidden.show(TypeId::of::<T>())
    }

    /// The tags hidden by default.
    pub fn hidden_tags(&self) -> &HiddenTags {
        &self.core.hidden
    }
}
