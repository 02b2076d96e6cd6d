//! The component registry as an app plugin.

use crate::ComponentRegistry;
use doecs::{App, AppError, Plugin};
use std::sync::Arc;

/// The app's component registry, as a resource: what systems that save,
/// load or show values read (`Res<Registry>`).
#[derive(Clone, Debug)]
pub struct Registry(pub Arc<ComponentRegistry>);

/// Installs a [`ComponentRegistry`] in the app's world (each registered
/// type's component, by its stable name, and its snapshot mode) and keeps
/// it as the resource [`Registry`]. A registration the world refuses (a
/// name already taken by another type) fails the plugin with
/// [`AppError::Plugin`].
///
/// ```
/// use doecs::prelude::*;
/// use doecs_registry::{ComponentRegistry, Registry, RegistryPlugin};
/// #[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize,
///          bytemuck::Pod, bytemuck::Zeroable)]
/// #[repr(C)]
/// struct Hp(u32);
/// let mut registry = ComponentRegistry::new();
/// registry.register::<Hp>("hp").plain();
/// let mut app = App::with_threads(1);
/// app.add_plugins(RegistryPlugin::new(registry))?;
/// assert!(app.world().components().id_of::<Hp>().is_some());
/// assert!(app.world().resource::<Registry>().is_some());
/// # Ok::<(), AppError>(())
/// ```
#[derive(Clone, Debug)]
pub struct RegistryPlugin(Arc<ComponentRegistry>);

impl RegistryPlugin {
    /// The plugin of `registry`.
    pub fn new(registry: ComponentRegistry) -> Self {
        RegistryPlugin(Arc::new(registry))
    }
}

impl Plugin for RegistryPlugin {
    fn build(&self, app: &mut App) -> Result<(), AppError> {
        self.0
            .install(app.world_mut())
            .map_err(|e| AppError::Plugin {
                plugin: self.name().to_owned(),
                source: Box::new(e),
            })?;
        app.world_mut()
            .insert_resource(Registry(Arc::clone(&self.0)));
        Ok(())
    }
}
