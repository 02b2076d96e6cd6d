//! Built-in tag components, and how snapshots copy the built-in components.
//!
//! The built-in components are defined here, at the bottom of the crate, so
//! that the component registry can give each its snapshot mode when it is
//! first used: a world holding them snapshots with no registration, as it
//! does with its relationship pairs.

use crate::component::SnapshotCopy;
use std::any::TypeId;

/// Tag keeping an entity out of queries that do not ask for it: a prefab.
/// See [`crate::relation::prefab`](mod@crate::relation::prefab).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Prefab;

/// How snapshots copy built-in component `type_id`, if it is one.
pub(crate) fn builtin_snapshot(type_id: Option<TypeId>) -> Option<SnapshotCopy> {
    // `Prefab` is `Copy` (and zero-sized): raw bytes.
    (type_id == Some(TypeId::of::<Prefab>())).then_some(SnapshotCopy::Bytes)
}
