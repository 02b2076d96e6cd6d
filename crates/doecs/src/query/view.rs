//! Views: one component type, looked up by entity, with the type resolved
//! once.
//!
//! `world.get::<T>(e)` finds `T`'s column in `e`'s archetype on every call.
//! A [`View`] resolves `T` once, when it is made: it records, for every
//! archetype, where `T`'s column starts (or that it has none). A lookup is
//! then one load of the entity's slot (which checks the generation and names
//! the archetype and row), one load of the column start, and the value: the
//! fast path for random access by entity, as in shipyard's views or bevy's
//! `Query::get`. A view borrows the world, so the columns cannot move while
//! it lives.

use crate::component::Component;
use crate::entities::{ByArchetype, Entities};
use crate::entity::Entity;
use crate::error::EntityError;
use crate::storage::sparse_set::{SparseSet, SparseSlot};
use crate::world::WorldCore;
use std::marker::PhantomData;
use std::ptr::NonNull;

/// Read access to one component type by entity. See the module docs.
///
/// ```
/// let mut world = doecs::World::new();
/// let a = world.spawn((1u32, 2.0f32));
/// let b = world.spawn((3u32,));
/// let view = world.view::<u32>();
/// assert_eq!(view.get(a), Ok(&1));
/// assert_eq!(view.get(b), Ok(&3));
/// assert!(world.view::<f32>().get(b).is_err());
/// ```
pub struct View<'w, T> {
    entities: &'w Entities,
    /// Per archetype: row 0 of `T`'s column, if the archetype has `T`.
    columns: ByArchetype<NonNull<T>>,
    /// `T`'s set, where the world stores `T` sparse.
    sparse: Option<&'w SparseSet>,
    _world: PhantomData<&'w T>,
}

/// Mutable access to one component type by entity.
///
/// ```
/// let mut world = doecs::World::new();
/// let a = world.spawn((1u32,));
/// let mut view = world.view_mut::<u32>();
/// *view.get_mut(a).unwrap() += 1;
/// assert_eq!(world.get::<u32>(a), Ok(&2));
/// ```
pub struct ViewMut<'w, T> {
    view: View<'w, T>,
    /// Per archetype: `T`'s change ticks, if the archetype has `T`.
    ticks: ByArchetype<crate::storage::TickPtrs>,
    /// What writes are stamped with.
    tick: crate::tick::Tick,
    /// Whether `T` is immutable in the world: then `get_mut` refuses.
    immutable: bool,
}

// SAFETY: a view hands out `&T` (or, through `&mut ViewMut`, `&mut T`) of a
// `Send + Sync` component, like a shared (or unique) borrow of the world.
unsafe impl<T: Component> Send for View<'_, T> {}
// SAFETY: as above; shared use of a `View` only reads.
unsafe impl<T: Component> Sync for View<'_, T> {}
// SAFETY: as above.
unsafe impl<T: Component> Send for ViewMut<'_, T> {}
// SAFETY: `&ViewMut` only reads (through `get`).
unsafe impl<T: Component> Sync for ViewMut<'_, T> {}

impl<'w, T: Component> View<'w, T> {
    fn new(world: &'w WorldCore) -> Self {
        let id = world.components().id_of::<T>();
        let columns = ByArchetype::new(world.archetypes().iter().map(|a| {
            let column = a.column_of(id?)?;
            Some(a.column_ptr(column).cast::<T>())
        }));
        View {
            entities: &world.entities,
            columns,
            sparse: id.and_then(|id| world.sparse.get(id)),
            _world: PhantomData,
        }
    }

    /// `entity`'s `T` in `T`'s sparse set, or why it has none.
    #[cold]
    #[inline(never)]
    fn sparse_ptr(&self, entity: Entity) -> Result<NonNull<T>, EntityError> {
        self.sparse_slot(entity).map(|(ptr, _)| ptr)
    }

    /// `entity`'s `T` in `T`'s sparse set, and the slot, or why not.
    #[cold]
    #[inline(never)]
    fn sparse_slot(&self, entity: Entity) -> Result<(NonNull<T>, SparseSlot), EntityError> {
        let missing = EntityError::MissingComponent {
            entity,
            component: std::any::type_name::<T>(),
        };
        let set = self.sparse.ok_or(missing)?;
        let slot = set.slot_of(entity).ok_or(missing)?;
        // SAFETY: `slot_of` found a live slot.
        Ok((unsafe { set.value_ptr(slot) }.cast(), slot))
    }

    /// `entity`'s `T`: one load of the entity's slot and one of its
    /// archetype's column start.
    #[inline(always)]
    fn slot(&self, entity: Entity) -> Result<NonNull<T>, EntityError> {
        match self.columns.find(self.entities, entity) {
            // SAFETY: the column holds the archetype's live rows, `row` among them.
            Some((base, row)) => Ok(unsafe { base.add(row) }),
            None => self.slot_elsewhere(entity),
        }
    }

    /// [`View::slot`] for an entity whose archetype has no `T` column: its
    /// sparse `T`, or why it has none.
    #[cold]
    #[inline(never)]
    fn slot_elsewhere(&self, entity: Entity) -> Result<NonNull<T>, EntityError> {
        if self.entities.locate(entity).is_none() {
            return Err(EntityError::NoSuchEntity(entity));
        }
        self.sparse_ptr(entity)
    }

    /// `entity`'s `T`.
    #[inline]
    pub fn get(&self, entity: Entity) -> Result<&'w T, EntityError> {
        let ptr = self.slot(entity)?;
        // SAFETY: the slot holds a live `T`; the view borrows the world for
        // `'w`, shared, so nothing writes it meanwhile.
        Ok(unsafe { ptr.as_ref() })
    }

    /// Whether `entity` is here and has `T`.
    pub fn contains(&self, entity: Entity) -> bool {
        self.slot(entity).is_ok()
    }
}

impl<'w, T: Component> ViewMut<'w, T> {
    /// `entity`'s `T`.
    #[inline]
    pub fn get(&self, entity: Entity) -> Result<&T, EntityError> {
        let ptr = self.view.slot(entity)?;
        // SAFETY: the slot holds a live `T`; the view borrows the world
        // uniquely, and `&self` excludes `get_mut` while the result lives.
        Ok(unsafe { ptr.as_ref() })
    }

    /// `entity`'s `T`, mutably. Marks it changed.
    ///
    /// # Errors
    /// [`EntityError::NoSuchEntity`], [`EntityError::MissingComponent`],
    /// and [`EntityError::Immutable`] where the world registered `T`
    /// immutable ([`WorldCore::register_immutable`]), changing nothing.
    #[inline]
    pub fn get_mut(&mut self, entity: Entity) -> Result<&mut T, EntityError> {
        let (archetype, row) = self
            .view
            .entities
            .locate(entity)
            .ok_or(EntityError::NoSuchEntity(entity))?;
        let mut ptr = self.view.slot(entity)?;
        if self.immutable {
            return Err(EntityError::Immutable(std::any::type_name::<T>()));
        }
        if let Some(ticks) = self.ticks.get(archetype) {
            // SAFETY: the row is live, and the view borrows the world
            // uniquely, so its `T` (and ticks) are ours.
            unsafe { ticks.stamp_changed(row, 1, self.tick) };
        } else if let (Some(set), Ok((_, slot))) = (self.view.sparse, self.view.sparse_slot(entity))
        {
            // SAFETY: the slot is live, and the view borrows the world
            // uniquely, so its stamps are ours.
            unsafe { set.stamp_changed(slot, self.tick) };
        }
        // SAFETY: the slot holds a live `T`; the view borrows the world
        // uniquely, and `&mut self` makes this the only reference from it.
        Ok(unsafe { ptr.as_mut() })
    }
}

impl WorldCore {
    /// A view of component `T`: lookups by entity with the type resolved
    /// once. See [`View`].
    pub fn view<T: Component>(&self) -> View<'_, T> {
        View::new(self)
    }

    /// A mutable view of component `T`. See [`ViewMut`]. For a `T` the
    /// world registered immutable, its `get_mut` refuses
    /// ([`EntityError::Immutable`]); `get` reads as usual.
    pub fn view_mut<T: Component>(&mut self) -> ViewMut<'_, T> {
        let tick = self.write_tick();
        let id = self.components().id_of::<T>();
        let ticks = ByArchetype::new(
            self.archetypes()
                .iter()
                .map(|a| Some(a.column_ticks(a.column_of(id?)?))),
        );
        ViewMut {
            view: View::new(self),
            ticks,
            tick,
            immutable: id.is_some_and(|id| self.components().info(id).is_immutable()),
        }
    }
}
