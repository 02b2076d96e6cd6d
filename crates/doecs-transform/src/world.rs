//! Transforms through the world: the calls that create instances against
//! the world's `ChildOf` hierarchy, so the one scene graph holds (see
//! `follow.rs`).

use crate::error::TransformError;
use crate::link::Instance;
use crate::manager::TransformManager;
use doecs::{DestroyNotice, Entity, SharedWorld, World, WorldCore};
use glam::Affine3A;

/// Transform calls on a [`World`] or on one world of a universe
/// ([`SharedWorld`]): each adds the world's
/// [`TransformManager`] (immediate mode, told of despawns) if it has none,
/// and links new instances as the world's `ChildOf` says.
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
pub trait WorldTransforms {
    /// Gives `entity` a transform with local `local`, linked under its
    /// `ChildOf` parent's transform and over its children's.
    ///
    /// Errors: [`TransformError::NotAlive`], [`TransformError::AlreadyExists`],
    /// [`TransformError::CapacityOverflow`].
    fn add_transform(
        &mut self,
        entity: Entity,
        local: Affine3A,
    ) -> Result<Instance, TransformError>;

    /// Gives each of `entities` a transform, in one batch (see
    /// [`TransformManager::create_many_in`]). All or nothing.
    fn add_transforms(
        &mut self,
        entities: &[Entity],
        locals: &[Affine3A],
    ) -> Result<Vec<Instance>, TransformError>;

    /// The world's transform manager, added if missing.
    fn transforms_mut(&mut self) -> &mut TransformManager;
}

/// `add_transform` on a world core whose liveness test is `alive`.
fn add_one(
    core: &mut WorldCore,
    alive: bool,
    entity: Entity,
    local: Affine3A,
) -> Result<Instance, TransformError> {
    if !alive {
        return Err(TransformError::NotAlive(entity));
    }
    manager_in(core, 0);
    let (tm, hierarchy) = core
        .manager_and_hierarchy_mut::<TransformManager>()
        .expect("added above");
    tm.create_in(hierarchy, entity, local)
}

/// `add_transforms` on a world core; `dead` is the first entity that is
/// not alive, if any.
fn add_many(
    core: &mut WorldCore,
    dead: Option<Entity>,
    entities: &[Entity],
    locals: &[Affine3A],
) -> Result<Vec<Instance>, TransformError> {
    if let Some(dead) = dead {
        return Err(TransformError::NotAlive(dead));
    }
    manager_in(core, entities.len());
    let (tm, hierarchy) = core
        .manager_and_hierarchy_mut::<TransformManager>()
        .expect("added above");
    tm.create_many_in(hierarchy, entities, locals)
}

/// The world's transform manager, added (with room for `n`) if missing.
fn manager_in(core: &mut WorldCore, n: usize) -> &mut TransformManager {
    if core.manager::<TransformManager>().is_none() {
        core.add_manager(TransformManager::with_capacity(n), DestroyNotice::Callback);
    }
    core.manager_mut::<TransformManager>().expect("added above")
}

impl WorldTransforms for World {
    fn add_transform(
        &mut self,
        entity: Entity,
        local: Affine3A,
    ) -> Result<Instance, TransformError> {
        let alive = self.alive(entity);
        add_one(self, alive, entity, local)
    }

    fn add_transforms(
        &mut self,
        entities: &[Entity],
        locals: &[Affine3A],
    ) -> Result<Vec<Instance>, TransformError> {
        let dead = entities.iter().copied().find(|&e| !self.alive(e));
        add_many(self, dead, entities, locals)
    }

    fn transforms_mut(&mut self) -> &mut TransformManager {
        manager_in(self, 0)
    }
}

/// One world of a universe: entities are alive in the universe, whether or
/// not they have entered this world.
impl WorldTransforms for SharedWorld<'_> {
    fn add_transform(
        &mut self,
        entity: Entity,
        local: Affine3A,
    ) -> Result<Instance, TransformError> {
        let alive = self.alive(entity);
        add_one(self, alive, entity, local)
    }

    fn add_transforms(
        &mut self,
        entities: &[Entity],
        locals: &[Affine3A],
    ) -> Result<Vec<Instance>, TransformError> {
        let dead = entities.iter().copied().find(|&e| !self.alive(e));
        add_many(self, dead, entities, locals)
    }

    fn transforms_mut(&mut self) -> &mut TransformManager {
        manager_in(self, 0)
    }
}
