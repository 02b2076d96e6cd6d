//! Immutable components: values that change only by insert.
//!
//! Design. A component registered immutable in a world keeps a flag in its
//! [`ComponentInfo`](crate::ComponentInfo), and the world counts how many
//! are flagged. Its values are never written in place: every path that
//! hands out `&mut T` or writes a value where it lies checks the flag and
//! refuses with a typed error, so the only way to change a value is to
//! insert a new one, which replaces the old through the structural core
//! and fires `on_replace` and `on_insert` (hooks, and whatever builds on
//! them, see every change). The checks sit where each path already looks
//! the component up, so a mutable component pays one load of its flag:
//! `WorldCore::component_column` for the typed lookups (`get_mut`,
//! `get_many_mut`, entity views, a system's `get_mut`), the byte API,
//! mutable views, and, for queries, the query state, which checks the
//! types its data writes when it is built and again whenever the count
//! of immutable components has grown since it last looked. A system whose
//! declared access writes an immutable component is refused by the
//! schedule (or the one-shot runner) before anything runs.
//!
//! The refusal is at run time because a compile-time one is not possible
//! here: `Component` is a blanket impl over every `Send + Sync + 'static`
//! type, so there is no per-type place to say "immutable" that the type
//! checker could see (bevy's `Component<Mutability = Immutable>` needs a
//! derive per type). Marks are never taken back: a world whose hooks rely
//! on seeing every change keeps relying on it.

use super::core::WorldCore;
use crate::component::{Component, ComponentId};
use crate::error::EntityError;

impl WorldCore {
    /// Registers `T` (if it is not yet) and marks it immutable in this
    /// world: its values change only by insert, which replaces the value and
    /// fires `on_replace` and `on_insert`, so hooks see every change.
    /// Every way of writing a `T` in place is refused from now on: `get_mut`
    /// ([`EntityError::Immutable`]), queries that write it (`&mut T`,
    /// `Mut<T>`, `Option<&mut T>`, derived query data; see
    /// [`QueryState::try_new`](crate::QueryState::try_new)), mutable views,
    /// and systems that declare a write of it
    /// ([`ScheduleError::WritesImmutable`](crate::ScheduleError::WritesImmutable),
    /// before any system runs). Idempotent; returns `T`'s id.
    ///
    /// The check is made at run time: `Component` is implemented for every
    /// `Send + Sync + 'static` type, so the compiler cannot tell an
    /// immutable component from another.
    ///
    /// ```
    /// use doecs::{ComponentHooks, EntityError, World};
    /// use std::sync::atomic::{AtomicU32, Ordering};
    /// use std::sync::Arc;
    ///
    /// #[derive(Debug, PartialEq)]
    /// struct Level(u32);
    ///
    /// let mut world = World::new();
    /// let id = world.register_immutable::<Level>();
    /// assert!(world.components().info(id).is_immutable());
    ///
    /// let inserts = Arc::new(AtomicU32::new(0));
    /// let seen = inserts.clone();
    /// world.set_hooks::<Level>(ComponentHooks::new().on_insert(move |_| {
    ///     seen.fetch_add(1, Ordering::Relaxed);
    /// }));
    /// let e = world.spawn((Level(1),));
    /// assert!(matches!(world.get_mut::<Level>(e), Err(EntityError::Immutable(_))));
    /// world.insert_one(e, Level(2)).unwrap(); // replaced: the hook sees it
    /// assert_eq!(world.get::<Level>(e), Ok(&Level(2)));
    /// assert_eq!(inserts.load(Ordering::Relaxed), 2);
    /// ```
    pub fn register_immutable<T: Component>(&mut self) -> ComponentId {
        let id = self.components.register::<T>();
        self.components.set_immutable(id);
        id
    }

    /// Marks component `id` immutable, as [`WorldCore::register_immutable`]
    /// does for a Rust type: for components registered at runtime (whose
    /// bytes [`WorldCore::get_bytes_mut`] would otherwise write in place).
    /// Idempotent.
    ///
    /// # Errors
    /// [`EntityError::UnknownComponent`] for an id this world did not issue.
    pub fn register_immutable_by_id(&mut self, id: ComponentId) -> Result<(), EntityError> {
        if self.components.get_info(id).is_none() {
            return Err(EntityError::UnknownComponent(id));
        }
        self.components.set_immutable(id);
        Ok(())
    }
}
