//! The names most programs use: `use doecs::prelude::*;`.

pub use crate::command::{CommandBuffer, Commands};
pub use crate::entity::Entity;
pub use crate::event::{EventReader, EventWriter, Events};
pub use crate::hooks::{ComponentHooks, HookContext};
pub use crate::query::{Added, Changed, Or, Query, QueryState, View, ViewMut, With, Without};
pub use crate::schedule::Schedule;
pub use crate::system::{
    system, IntoSystemDesc, Local, Manager, ManagerMut, Res, ResMut, SystemConfig,
};
pub use crate::world::RemovedComponents;
pub use crate::world::{World, WorldCore};
