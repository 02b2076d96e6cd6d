//! Built-in tag components.
//!
//! The built-in components are defined here, at the bottom of the crate,
//! below the component registry, so that the registry can give each its
//! snapshot mode when it is first used: a world holding them snapshots with
//! no registration, as it does with its relationship pairs.

/// Tag keeping an entity out of queries that do not ask for it: a prefab.
/// See [`World::instantiate`](crate::World::instantiate) and
/// [`HiddenTags`].
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Prefab;

/// Tag keeping an entity out of queries that do not ask for it: a disabled
/// entity, still alive, still reachable by id (`get`, views, relations),
/// but skipped by every system and loop that does not name `Disabled`.
/// See [`World::disable`](crate::World::disable) and [`HiddenTags`].
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Disabled;

/// The tags a world hides by default: an entity with one of them is left
/// out of every query that does not name that tag (fetch it, also as an
/// `Option`, or filter `With<Tag>`). [`Prefab`] and [`Disabled`] are
/// hidden from the start; [`World::hide_by_default`](crate::World::hide_by_default)
/// adds a tag of the game's own. One mechanism serves them all: a query
/// decides per archetype, when it first sees it, so hiding costs nothing
/// per row or per loop.
#[derive(Clone, Debug)]
pub struct HiddenTags {
    types: Vec<std::any::TypeId>,
    /// Bumped by every change, so cached queries learn again.
    version: u64,
}

impl Default for HiddenTags {
    fn default() -> Self {
        HiddenTags {
            types: vec![
                std::any::TypeId::of::<Prefab>(),
                std::any::TypeId::of::<Disabled>(),
            ],
            version: 0,
        }
    }
}

impl HiddenTags {
    /// The hidden tag types.
    pub fn types(&self) -> &[std::any::TypeId] {
        &self.types
    }

    /// A number that changes whenever the set does.
    pub fn version(&self) -> u64 {
        self.version
    }

    /// Hides `type_id`; `false` if it was hidden already.
    pub(crate) fn hide(&mut self, type_id: std::any::TypeId) -> bool {
        if self.types.contains(&type_id) {
            return false;
        }
        self.types.push(type_id);
        self.version += 1;
        true
    }

    /// Stops hiding `type_id`; `false` if it was not hidden.
    pub(crate) fn show(&mut self, type_id: std::any::TypeId) -> bool {
        let before = self.types.len();
        self.types.retain(|t| *t != type_id);
        let changed = self.types.len() != before;
        if changed {
            self.version += 1;
        }
        changed
    }
}
