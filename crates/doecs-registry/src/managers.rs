//! Managers in save files.
//!
//! A component manager (Bitsquid's "Building a Data-Oriented Entity
//! System": a component that owns its storage, such as the transform
//! hierarchy) is not an archetype column, so a save cannot copy it column
//! by column. A manager type that implements [`SaveManager`] (in doecs,
//! beside `ComponentManager`, with its `serde` feature) says what its saved
//! form is (any serde type) and how to rebuild itself from it;
//! [`ComponentRegistry::register_manager`] names it. Saving writes every
//! registered manager the world has; loading rebuilds each one after the
//! entities are placed, so it can check the entities it names, and adds it
//! to the new world with the registered [`DestroyNotice`]. A manager in the
//! world that is not registered makes the save fail
//! ([`SaveError::UnregisteredManager`](crate::SaveError::UnregisteredManager)),
//! unless the save is told to skip what it cannot write.

use crate::{ComponentRegistry, RegistryError};
use doecs::{DestroyNotice, SaveManager, World};
use serde_json::Value;
use std::any::TypeId;

/// Writes the world's manager as postcard bytes (`None`: the world has none).
type ToPostcard = fn(&World) -> Option<Result<Vec<u8>, String>>;

/// How a registered manager is saved and loaded.
#[derive(Clone, Debug)]
pub(crate) struct ManagerRegistration {
    pub(crate) name: String,
    pub(crate) type_id: TypeId,
    pub(crate) notice: DestroyNotice,
    /// The world's manager as JSON (`None`: the world has none).
    pub(crate) to_json: fn(&World) -> Option<Result<Value, String>>,
    /// The world's manager as postcard bytes.
    pub(crate) to_postcard: ToPostcard,
    /// Rebuilds and adds the manager from JSON.
    pub(crate) from_json: fn(&Value, &mut World, DestroyNotice) -> Result<(), String>,
    /// Rebuilds and adds the manager from postcard bytes.
    pub(crate) from_postcard: fn(&[u8], &mut World, DestroyNotice) -> Result<(), String>,
}

impl ManagerRegistration {
    fn of<M: SaveManager>(name: &str, notice: DestroyNotice) -> ManagerRegistration {
        fn to_json<M: SaveManager>(world: &World) -> Option<Result<Value, String>> {
            let m = world.manager::<M>()?;
            Some(serde_json::to_value(m.to_saved()).map_err(|e| e.to_string()))
        }
        fn to_postcard<M: SaveManager>(world: &World) -> Option<Result<Vec<u8>, String>> {
            let m = world.manager::<M>()?;
            Some(postcard::to_stdvec(&m.to_saved()).map_err(|e| e.to_string()))
        }
        fn add<M: SaveManager>(
            saved: M::Saved,
            world: &mut World,
            notice: DestroyNotice,
        ) -> Result<(), String> {
            // Parents first, so the manager is rebuilt against the
            // hierarchy it will follow.
            if world.hierarchy().is_empty() {
                let parents = M::saved_parents(&saved)
                    .into_iter()
                    .map(|(child, parent)| (child, parent, doecs::ChildOf))
                    .collect();
                world
                    .add_pairs(parents)
                    .map_err(|e| format!("saved parent link: {e}"))?;
            }
            let m = M::from_saved(saved, world)?;
            world.add_manager(m, notice);
            Ok(())
        }
        fn from_json<M: SaveManager>(
            value: &Value,
            world: &mut World,
            notice: DestroyNotice,
        ) -> Result<(), String> {
            let saved = M::Saved::deserialize(value).map_err(|e| e.to_string())?;
            add::<M>(saved, world, notice)
        }
        fn from_postcard<M: SaveManager>(
            bytes: &[u8],
            world: &mut World,
            notice: DestroyNotice,
        ) -> Result<(), String> {
            let (saved, rest) =
                postcard::take_from_bytes::<M::Saved>(bytes).map_err(|e| e.to_string())?;
            if !rest.is_empty() {
                return Err(format!("{} bytes after the manager's state", rest.len()));
            }
            add::<M>(saved, world, notice)
        }
        ManagerRegistration {
            name: name.to_owned(),
            type_id: TypeId::of::<M>(),
            notice,
            to_json: to_json::<M>,
            to_postcard: to_postcard::<M>,
            from_json: from_json::<M>,
            from_postcard: from_postcard::<M>,
        }
    }
}

use serde::Deserialize as _;

impl ComponentRegistry {
    /// Registers manager type `M` as `name` for save files; a loaded world
    /// gets it with `notice`. Fails if the name or type is taken.
    pub fn register_manager<M: SaveManager>(
        &mut self,
        name: &str,
        notice: DestroyNotice,
    ) -> Result<(), RegistryError> {
        if self.managers.iter().any(|m| m.name == name) {
            return Err(RegistryError::NameTaken(name.to_owned()));
        }
        if let Some(m) = self
            .managers
            .iter()
            .find(|m| m.type_id == TypeId::of::<M>())
        {
            return Err(RegistryError::TypeTaken {
                type_name: std::any::type_name::<M>(),
                existing: m.name.clone(),
            });
        }
        self.managers
            .push(ManagerRegistration::of::<M>(name, notice));
        Ok(())
    }

    /// The manager registered as `name`.
    pub(crate) fn manager_by_name(&self, name: &str) -> Option<&ManagerRegistration> {
        self.managers.iter().find(|m| m.name == name)
    }

    /// The manager registration of type `type_id`.
    pub(crate) fn manager_of(&self, type_id: TypeId) -> Option<&ManagerRegistration> {
        self.managers.iter().find(|m| m.type_id == type_id)
    }
}
