//! The transform manager as an app plugin.
//!
//! [`TransformPlugin`] gives the app's world a deferred
//! [`TransformManager`] (local transforms are written during the frame;
//! world transforms are brought up to date once) and runs its propagation
//! in [`PostUpdate`](doecs::PostUpdate), in the system set
//! [`TransformSystems::Propagate`], so systems that write transforms in
//! `Update` are seen in the same frame, and systems that read world
//! transforms can order themselves `.after(TransformSystems::Propagate)`.

use crate::manager::TransformManager;
use doecs::{App, AppError, DestroyNotice, ManagerMut, Plugin, PostUpdate, SystemConfig};

/// The system sets of the transform plugin.
#[derive(doecs::SystemSet, Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TransformSystems {
    /// World transforms brought up to date from the frame's local writes.
    Propagate,
}

/// Adds a deferred [`TransformManager`] (unless the world has one) and its
/// propagation in `PostUpdate`. See the module docs.
///
/// ```
/// use doecs::prelude::*;
/// use doecs_transform::{TransformManager, TransformPlugin, WorldTransforms};
/// use glam::{Affine3A, Vec3};
/// let mut app = App::with_threads(1);
/// app.add_plugins(TransformPlugin)?;
/// let world = app.world_mut();
/// let [ship, turret] = [(), ()].map(|()| world.spawn(()));
/// world.set_parent(turret, ship).unwrap();
/// world.add_transform(ship, Affine3A::IDENTITY).unwrap();
/// let node = world.add_transform(turret, Affine3A::IDENTITY).unwrap();
/// let ship_node = world.manager::<TransformManager>().unwrap().lookup(ship).unwrap();
/// let moved = Affine3A::from_translation(Vec3::X);
/// world.transforms_mut().set_local(ship_node, moved).unwrap();
/// app.update()?; // PostUpdate propagates
/// let transforms = app.world().manager::<TransformManager>().unwrap();
/// assert_eq!(transforms.world(node), Some(moved), "the turret follows its ship");
/// # Ok::<(), AppError>(())
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct TransformPlugin;

fn propagate(mut transforms: ManagerMut<TransformManager>) {
    transforms.propagate();
}

impl Plugin for TransformPlugin {
    fn build(&self, app: &mut App) -> Result<(), AppError> {
        let world = app.world_mut();
        if world.manager::<TransformManager>().is_none() {
            world.add_manager(TransformManager::deferred(), DestroyNotice::Callback);
        }
        app.add_systems(PostUpdate, propagate.in_set(TransformSystems::Propagate))?;
        Ok(())
    }
}
