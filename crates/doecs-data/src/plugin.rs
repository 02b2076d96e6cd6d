//! The DataComponent as an app plugin.

use crate::store::DataStore;
use doecs::{App, AppError, DestroyNotice, Plugin};

/// Gives the app's world a [`DataStore`] (unless it has one), told of
/// despawns, so systems reach it as `Manager<DataStore>` or
/// `ManagerMut<DataStore>`.
///
/// ```
/// use doecs::prelude::*;
/// use doecs_data::{DataPlugin, DataStore};
/// let mut app = App::with_threads(1);
/// app.add_plugins(DataPlugin)?;
/// assert!(app.world().manager::<DataStore>().is_some());
/// # Ok::<(), AppError>(())
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct DataPlugin;

impl Plugin for DataPlugin {
    fn build(&self, app: &mut App) -> Result<(), AppError> {
        let world = app.world_mut();
        if world.manager::<DataStore>().is_none() {
            world.add_manager(DataStore::new(), DestroyNotice::Callback);
        }
        Ok(())
    }
}
