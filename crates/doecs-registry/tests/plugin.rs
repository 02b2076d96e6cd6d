//! The registry plugin: installed on the app, or a typed error.

use doecs::prelude::*;
use doecs::ComponentDescriptor;
use doecs_registry::{ComponentRegistry, RegistryPlugin};
use std::alloc::Layout;

#[derive(
    Clone,
    Copy,
    Debug,
    PartialEq,
    serde::Serialize,
    serde::Deserialize,
    bytemuck::Pod,
    bytemuck::Zeroable,
)]
#[repr(C)]
struct Hp(u32);

#[test]
fn a_name_the_world_gave_another_type_fails_the_plugin() {
    let mut registry = ComponentRegistry::new();
    registry.register::<Hp>("hp").plain();
    let mut app = App::with_threads(1);
    app.world_mut()
        .register_component(ComponentDescriptor::dynamic("hp", Layout::new::<[u8; 4]>()))
        .unwrap();
    let err = app.add_plugins(RegistryPlugin::new(registry)).unwrap_err();
    assert!(matches!(err, AppError::Plugin { .. }), "{err}");
    assert!(err.to_string().contains("hp"), "{err}");
}

#[test]
fn a_registered_type_snapshots_and_shows_by_name() -> Result<(), AppError> {
    let mut registry = ComponentRegistry::new();
    registry.register::<Hp>("hp").plain();
    let mut app = App::with_threads(1);
    app.add_plugins(RegistryPlugin::new(registry))?;
    let e = app.world_mut().spawn((Hp(3),));
    let mut snapshot = Snapshot::new();
    app.world_mut().snapshot_into(&mut snapshot).unwrap();
    app.world_mut().get_mut::<Hp>(e).unwrap().0 = 9;
    app.world_mut().restore(&snapshot).unwrap();
    assert_eq!(app.world().get::<Hp>(e), Ok(&Hp(3)));
    Ok(())
}
