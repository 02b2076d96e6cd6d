//! The transform plugin on an app.

use doecs::prelude::*;
use doecs_transform::{TransformManager, TransformPlugin, TransformSystems, WorldTransforms};
use glam::{Affine3A, Vec3};

struct Seen(Option<Vec3>);

#[test]
fn propagation_runs_in_post_update_before_systems_ordered_after_it() -> Result<(), AppError> {
    let mut app = App::with_threads(1);
    app.add_plugins(TransformPlugin)?;
    assert!(matches!(
        app.add_plugins(TransformPlugin),
        Err(AppError::DuplicatePlugin { .. })
    ));
    app.world_mut().insert_resource(Seen(None));
    let world = app.world_mut();
    let [ship, turret] = [(), ()].map(|()| world.spawn(()));
    world.set_parent(turret, ship).unwrap();
    let ship_node = world.add_transform(ship, Affine3A::IDENTITY).unwrap();
    let turret_node = world
        .add_transform(turret, Affine3A::from_translation(Vec3::Y))
        .unwrap();
    app.add_systems(Update, move |mut t: ManagerMut<TransformManager>| {
        t.set_local(ship_node, Affine3A::from_translation(Vec3::X))
            .unwrap();
    })?;
    app.add_systems(
        PostUpdate,
        (move |t: Manager<TransformManager>, mut seen: ResMut<Seen>| {
            seen.0 = t.world(turret_node).map(|w| w.translation.into());
        })
        .after(TransformSystems::Propagate),
    )?;
    app.update()?;
    assert_eq!(
        app.world().resource::<Seen>().unwrap().0,
        Some(Vec3::new(1.0, 1.0, 0.0))
    );
    Ok(())
}

#[test]
fn a_world_that_has_a_manager_keeps_it() -> Result<(), AppError> {
    let mut app = App::with_threads(1);
    let e = app.world_mut().spawn(());
    app.world_mut()
        .add_transform(e, Affine3A::IDENTITY)
        .unwrap();
    app.add_plugins(TransformPlugin)?;
    assert!(app
        .world()
        .manager::<TransformManager>()
        .unwrap()
        .lookup(e)
        .is_some());
    Ok(())
}
