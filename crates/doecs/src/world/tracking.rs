//! Change tracking at the world level: the change clock, which components
//! keep row stamps, and explicit marks.
//!
//! Chunk ticks are always kept (see [`crate::storage::ticks`]); row stamps
//! only for components some query filters on. A query or system parameter
//! with `Changed<T>` or `Added<T>` asks for `T`'s row stamps when it is
//! made. With `&mut` access (a function system's parameters, when the
//! schedule first runs it; `world.query_mut`) they start at once. A query
//! made through shared access (`QueryState::new(&world)`, a builder
//! system's `ctx.query_filtered`) files a request instead, which the next
//! write through `&mut` (or the next schedule run) carries out before it
//! stamps anything; until then such a query filters by chunk ticks.
//!
//! That is exact. Each row's stamps start from its chunk's ticks, an upper
//! bound of its true stamps. A reader's first run (window starting at tick
//! zero) sees every row anyway. Every later run's window starts at or after
//! that first run, and every stamp written after the request (so after the
//! first run) was written by a write that carried out the request first, so
//! a row's true stamp and its chunk's tick fall on the same side of the
//! window's start. (Inside a running schedule, systems write through shared
//! access without carrying out requests, so a change filter first made by a
//! builder system mid-run may, in its second run, also pass unchanged rows
//! that share a chunk with rows written during its first; function-system
//! parameters never do.)

use super::core::WorldCore;
use crate::component::{Component, ComponentId};
use crate::entity::Entity;
use crate::error::EntityError;
use crate::tick::{ChangeWindow, Tick};
use std::any::TypeId;
use std::sync::atomic::Ordering::{AcqRel, Acquire, Relaxed, Release};
use std::sync::atomic::{AtomicBool, AtomicU64};
use std::sync::{Mutex, PoisonError};

/// The change clock and the pending row-stamp requests of one world.
#[derive(Debug)]
pub(crate) struct Tracking {
    /// The current tick: what direct writes stamp.
    tick: AtomicU64,
    /// Whether `requests` may be non-empty.
    pending: AtomicBool,
    requests: Mutex<Vec<TypeId>>,
}

impl Default for Tracking {
    fn default() -> Self {
        Tracking {
            // Tick zero means "before everything", so the clock starts at one.
            tick: AtomicU64::new(1),
            pending: AtomicBool::new(false),
            requests: Mutex::new(Vec::new()),
        }
    }
}

impl WorldCore {
    /// The current change tick: what a write made now is stamped with.
    #[inline]
    pub fn change_tick(&self) -> Tick {
        Tick::new(self.tracking.tick.load(Acquire))
    }

    /// Moves the change clock to `tick` (used by schedules, which give each
    /// step its own tick).
    ///
    /// # Panics
    /// If `tick` is earlier than the current tick: the clock never goes back.
    pub(crate) fn set_change_tick(&mut self, tick: Tick) {
        let now = self.change_tick();
        assert!(
            tick >= now,
            "doecs: the change clock cannot go back from {now:?} to {tick:?}"
        );
        self.tracking.tick.store(tick.get(), Release);
    }

    /// The window of a reader that last ran at `last_run` and reads now,
    /// outside any schedule: it ends at the current tick, and the clock
    /// moves on one, so that later writes are stamped after it.
    #[inline]
    pub(crate) fn reader_window(&self, last_run: Tick) -> ChangeWindow {
        let this_run = Tick::new(self.tracking.tick.fetch_add(1, AcqRel));
        ChangeWindow { last_run, this_run }
    }

    /// The tick a direct write stamps with, after carrying out pending
    /// row-stamp requests (see the module docs).
    #[inline]
    pub(crate) fn write_tick(&mut self) -> Tick {
        if self.tracking.pending.load(Relaxed) {
            self.carry_out_requests();
        }
        self.change_tick()
    }

    /// Keeps per-row change stamps for `T` from now on, so `Changed<T>` and
    /// `Added<T>` filter row by row. Queries that filter on `T` do this
    /// themselves; call it ahead to make the first such query cheaper.
    pub fn track_changes<T: Component>(&mut self) {
        self.track_types(&[TypeId::of::<T>()]);
    }

    /// Keeps row stamps for component `id` from now on (a runtime
    /// component, or a Rust type by id).
    pub fn track_changes_by_id(&mut self, id: ComponentId) {
        if self.components.track_rows(id) {
            self.give_row_ticks(id);
        }
    }

    /// Keeps row stamps for every Rust type in `types` from now on.
    pub(crate) fn track_types(&mut self, types: &[TypeId]) {
        for &t in types {
            if let Some(id) = self.components.track_type(t) {
                self.give_row_ticks(id);
            }
        }
    }

    /// Asks, through shared access, for row stamps of `types`: carried out
    /// by the next write through `&mut` or schedule run.
    pub(crate) fn request_tracking(&self, types: &[TypeId]) {
        let untracked = types.iter().any(|&t| {
            self.components
                .by_type_id(t)
                .is_none_or(|id| !self.components.info(id).tracks_rows())
        });
        if !untracked {
            return;
        }
        let mut requests = self
            .tracking
            .requests
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        requests.extend_from_slice(types);
        self.tracking.pending.store(true, Relaxed);
    }

    /// Carries out every pending request.
    pub(crate) fn carry_out_requests(&mut self) {
        let requests = std::mem::take(
            self.tracking
                .requests
                .get_mut()
                .unwrap_or_else(PoisonError::into_inner),
        );
        self.tracking.pending.store(false, Relaxed);
        self.track_types(&requests);
    }

    /// Gives every archetype holding `id` row stamps.
    fn give_row_ticks(&mut self, id: ComponentId) {
        for arch in self.archetypes.iter_mut() {
            if let Some(column) = arch.column_of(id) {
                arch.enable_row_ticks(column);
            }
        }
    }

    /// Marks `entity`'s `T` as changed now, for writes `Changed<T>` cannot
    /// see: through raw pointers or bytes, or by code that kept a pointer.
    ///
    /// ```
    /// use doecs::{Changed, QueryState, World};
    /// let mut world = World::new();
    /// let e = world.spawn((1u32,));
    /// let mut changed = QueryState::<doecs::Entity, Changed<u32>>::new(&world);
    /// assert_eq!(changed.iter(&world).count(), 1, "spawning is a change");
    /// assert_eq!(changed.iter(&world).count(), 0);
    /// world.mark_changed::<u32>(e).unwrap();
    /// assert_eq!(changed.iter(&world).collect::<Vec<_>>(), vec![e]);
    /// ```
    pub fn mark_changed<T: Component>(&mut self, entity: Entity) -> Result<(), EntityError> {
        let missing = EntityError::MissingComponent {
            entity,
            component: std::any::type_name::<T>(),
        };
        let id = self.components.id_of::<T>().ok_or(missing)?;
        self.mark_changed_by_id(entity, id)
    }

    /// [`WorldCore::mark_changed`] for a component named by id.
    pub fn mark_changed_by_id(
        &mut self,
        entity: Entity,
        component: ComponentId,
    ) -> Result<(), EntityError> {
        let location = self.location(entity)?;
        let arch = self.archetypes.get(location.archetype);
        let column = arch
            .column_of(component)
            .ok_or_else(|| EntityError::missing(&self.components, entity, component))?;
        let tick = self.write_tick();
        let arch = self.archetypes.get(location.archetype);
        // SAFETY: the row is live, and `&mut self` gives write access to it.
        unsafe {
            arch.column_ticks(column)
                .stamp_changed(location.row.index(), 1, tick)
        };
        Ok(())
    }

    /// `entity`'s change stamps for `T` as `(added, changed)`: when it got
    /// `T`, and when `T` was last written (for components without row
    /// stamps, the latest of its chunk).
    pub fn change_ticks<T: Component>(&self, entity: Entity) -> Result<(Tick, Tick), EntityError> {
        let location = self.location(entity)?;
        let missing = EntityError::MissingComponent {
            entity,
            component: std::any::type_name::<T>(),
        };
        let id = self.components.id_of::<T>().ok_or(missing)?;
        let arch = self.archetypes.get(location.archetype);
        match arch.column_of(id) {
            Some(column) => Ok(arch.row_ticks(location.row, column)),
            None => self.sparse_ticks(id, entity).ok_or(missing),
        }
    }

    /// [`WorldCore::change_ticks`] for a component named by id, table or
    /// sparse: `entity`'s `(added, changed)` stamps for it. For tools that
    /// filter on changes without the component's type (the inspector's
    /// query language decides `Changed(X)` on a sparse `X` with it).
    ///
    /// ```
    /// use doecs::World;
    /// let mut world = World::new();
    /// let id = world.component_id::<u32>();
    /// let e = world.spawn((1u32,));
    /// assert_eq!(world.change_ticks_by_id(e, id), world.change_ticks::<u32>(e));
    /// ```
    ///
    /// # Errors
    /// [`EntityError`] for a dead entity, an unknown id, or an entity
    /// without the component.
    pub fn change_ticks_by_id(
        &self,
        entity: Entity,
        id: ComponentId,
    ) -> Result<(Tick, Tick), EntityError> {
        let location = self.location(entity)?;
        if self.components.get_info(id).is_none() {
            return Err(EntityError::MissingComponentId { entity, id });
        }
        let arch = self.archetypes.get(location.archetype);
        match arch.column_of(id) {
            Some(column) => Ok(arch.row_ticks(location.row, column)),
            None => self
                .sparse_ticks(id, entity)
                .ok_or_else(|| EntityError::missing(&self.components, entity, id)),
        }
    }
}
