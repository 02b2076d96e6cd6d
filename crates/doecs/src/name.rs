//! Entity names: the built-in [`Name`] component.
//!
//! A name is an entity's label for people and tools: levels give it
//! (a level entity's `"name"`), the inspector shows it, and
//! [`WorldCore::lookup`](crate::WorldCore::lookup) finds an entity by its
//! path of names along `ChildOf` ("ship/turret"). Names need not be
//! unique; a path that leads to two entities is reported as ambiguous
//! rather than answered with either.

use std::borrow::Cow;

/// An entity's name (a component). See the module docs.
#[derive(Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(transparent))]
pub struct Name(Cow<'static, str>);

// By hand: a derived `clone_from` would clone afresh, while `Cow`'s reuses
// an owned string's memory when it fits (snapshots overwrite names they
// saved before with `clone_from`).
impl Clone for Name {
    fn clone(&self) -> Self {
        Name(self.0.clone())
    }

    fn clone_from(&mut self, source: &Self) {
        self.0.clone_from(&source.0);
    }
}

impl Name {
    /// A name.
    pub fn new(name: impl Into<Cow<'static, str>>) -> Self {
        Name(name.into())
    }

    /// The name as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::ops::Deref for Name {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for Name {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl From<&'static str> for Name {
    fn from(name: &'static str) -> Self {
        Name(Cow::Borrowed(name))
    }
}

impl From<String> for Name {
    fn from(name: String) -> Self {
        Name(Cow::Owned(name))
    }
}

/// Why [`WorldCore::lookup`](crate::WorldCore::lookup) found no one entity.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum LookupError {
    /// No entity at this path (the part up to the first missing name).
    #[error("no entity at `{0}`")]
    NotFound(String),
    /// Several entities at this path (the part up to the first name that
    /// several share).
    #[error("{count} entities at `{path}`: the path is ambiguous")]
    Ambiguous {
        /// The ambiguous part of the path.
        path: String,
        /// How many entities it leads to.
        count: usize,
    },
    /// The path is empty or has an empty name (`"a//b"`).
    #[error("`{0}` is not a path of names separated by `/`")]
    BadPath(String),
}
