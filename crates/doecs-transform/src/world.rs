//! Transforms through the world: the calls that create instances against
//! the world's `ChildOf` hierarchy, so the one scene graph holds (see
//! `follow.rs`).

use crate::error::TransformError;
use crate::link::Instance;
use crate::manager::TransformManager;
use doecs::raw::ParentedBatch;
use doecs::{DestroyNotice, Entity, SharedWorld, World, WorldCore};
use glam::Affine3A;

/// Transform calls on a [`World`] or on one world of a universe
/// ([`SharedWorld`]): each adds the world's
/// [`TransformManager`] (immediate mode, told of despawns) if it has none,
/// and links new instances as the world's `ChildOf` says (under the
/// nearest ancestor with a transform).
///
/// ```
/// use doecs::World;
/// use doecs_transform::{TransformManager, WorldTransforms};
/// use glam::{Affine3A, Vec3};
///
/// let mut world = World::new();
/// let [ship, turret] = [(), ()].map(|()| world.spawn(()));
/// world.set_parent(turret, ship).unwrap();
/// world.add_transform(ship, Affine3A::from_translation(Vec3::X)).unwrap();
/// world.add_transform(turret, Affine3A::from_translation(Vec3::Y)).unwrap();
/// let tm = world.manager::<TransformManager>().unwrap();
/// let t = tm.lookup(turret).unwrap();
/// assert_eq!(tm.world(t).unwrap().translation, Vec3::new(1.0, 1.0, 0.0).into());
/// // The manager follows ChildOf: reparenting moves the world transform at once.
/// world.remove_parent(turret);
/// let tm = world.manager::<TransformManager>().unwrap();
/// assert_eq!(tm.world(t).unwrap().translation, Vec3::Y.into());
/// ```
pub trait WorldTransforms: sealed::WorldAccess {
    /// Gives `entity` a transform with local `local`, linked under the
    /// transform of its nearest `ChildOf` ancestor with one, and over the
    /// transforms below it that had no nearer ancestor with one.
    ///
    /// Errors: [`TransformError::NotAlive`], [`TransformError::AlreadyExists`],
    /// [`TransformError::CapacityOverflow`].
    fn add_transform(
        &mut self,
        entity: Entity,
        local: Affine3A,
    ) -> Result<Instance, TransformError> {
        self.refuse_dead(std::slice::from_ref(&entity))?;
        let (tm, hierarchy) = manager_and_hierarchy(self.core_mut());
        tm.create_in(hierarchy, entity, local)
    }

    /// Gives each of `entities` a transform, in one batch (see
    /// [`TransformManager::create_many_in`]). All or nothing.
    fn add_transforms(
        &mut self,
        entities: &[Entity],
        locals: &[Affine3A],
    ) -> Result<Vec<Instance>, TransformError> {
        self.refuse_dead(entities)?;
        let (tm, hierarchy) = manager_and_hierarchy(self.core_mut());
        tm.create_many_in(hierarchy, entities, locals)
    }

    /// [`add_transforms`](Self::add_transforms) for a batch parented in
    /// one call ([`raw::parent_batch`](doecs::raw::parent_batch)), in batch order: the
    /// manager reads the batch's parent indices instead of looking each
    /// entity up, once the world confirms them (see
    /// [`TransformManager::create_many_in_batch`]). What level spawning
    /// uses. All or nothing; errors as `add_transforms`. Returns no
    /// handles (a level spawn needs none): [`TransformManager::lookup`]
    /// finds each.
    fn add_transforms_to_batch(
        &mut self,
        batch: &ParentedBatch,
        locals: &[Affine3A],
    ) -> Result<(), TransformError> {
        self.refuse_dead_in_batch(batch)?;
        let (tm, hierarchy) = manager_and_hierarchy(self.core_mut());
        tm.create_many_in_batch(hierarchy, batch, locals)
    }

    /// The world's transform manager, added if missing.
    fn transforms_mut(&mut self) -> &mut TransformManager {
        manager_and_hierarchy(self.core_mut()).0
    }
}

/// The world's transform manager (added if missing; a first batch sizes its
/// buffer, writing each slot once) beside the hierarchy it follows.
fn manager_and_hierarchy(core: &mut WorldCore) -> (&mut TransformManager, doecs::Hierarchy<'_>) {
    if core.manager::<TransformManager>().is_none() {
        core.add_manager(TransformManager::new(), DestroyNotice::Callback);
    }
    doecs::raw::manager_and_hierarchy_mut::<TransformManager>(core).expect("added above")
}

mod sealed {
    use crate::error::TransformError;
    use doecs::raw::ParentedBatch;
    use doecs::{Entity, SharedWorld, World, WorldCore};

    /// What [`super::WorldTransforms`] needs of a world: its core, and
    /// whether an entity is alive (in a universe, alive there whether or
    /// not it has entered this world).
    pub trait WorldAccess {
        fn entity_alive(&self, entity: Entity) -> bool;
        fn core_mut(&mut self) -> &mut WorldCore;

        /// [`TransformError::NotAlive`] for the first dead one of `entities`.
        fn refuse_dead(&self, entities: &[Entity]) -> Result<(), TransformError> {
            match entities.iter().find(|&&e| !self.entity_alive(e)) {
                Some(&dead) => Err(TransformError::NotAlive(dead)),
                None => Ok(()),
            }
        }

        /// [`refuse_dead`](Self::refuse_dead) for a parented batch.
        fn refuse_dead_in_batch(&self, batch: &ParentedBatch) -> Result<(), TransformError> {
            self.refuse_dead(batch.children())
        }
    }

    impl WorldAccess for World {
        fn entity_alive(&self, entity: Entity) -> bool {
            self.alive(entity)
        }
        /// In a world, alive is located: a batch none of whose entities
        /// left is confirmed at once ([`doecs::raw::batch_located`]).
        fn refuse_dead_in_batch(&self, batch: &ParentedBatch) -> Result<(), TransformError> {
            if doecs::raw::batch_located(self, batch) {
                return Ok(());
            }
            self.refuse_dead(batch.children())
        }
        fn core_mut(&mut self) -> &mut WorldCore {
            self
        }
    }

    impl WorldAccess for SharedWorld<'_> {
        fn entity_alive(&self, entity: Entity) -> bool {
            self.alive(entity)
        }
        fn core_mut(&mut self) -> &mut WorldCore {
            self
        }
    }
}

impl WorldTransforms for World {}

/// One world of a universe: entities are alive in the universe, whether or
/// not they have entered this world.
impl WorldTransforms for SharedWorld<'_> {}
