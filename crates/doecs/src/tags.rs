//! Built-in tag components.
//!
//! The built-in components are defined here, at the bottom of the crate,
//! below the component registry, so that the registry can give each its
//! snapshot mode when it is first used: a world holding them snapshots with
//! no registration, as it does with its relationship pairs.

/// Tag keeping an entity out of queries that do not ask for it: a prefab.
/// See [`World::instantiate`](crate::World::instantiate).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Prefab;
