//! Schedule labels: the names of an app's phases, as values of types.
//!
//! A label is any small value type (`Update`, a user's `struct Physics;`,
//! `OnEnter(GameState::Playing)`), compared by type and value, so a
//! misspelled phase is a compile error rather than a lookup that fails at
//! run time. Labels are kept type-erased ([`AnyLabel`]); an app has a
//! handful of them, found by a linear scan.

use std::any::Any;
use std::fmt::Debug;
use std::hash::{Hash, Hasher};

/// Names a schedule of an [`App`](super::App). Implemented for every
/// `Clone + Eq + Hash + Debug` type that is `Send + Sync + 'static`; a
/// phase is usually a unit struct:
///
/// ```
/// #[derive(Clone, Debug, PartialEq, Eq, Hash)]
/// struct Physics;
/// ```
pub trait ScheduleLabel: Send + Sync + Debug + 'static {
    /// A boxed copy.
    fn boxed(&self) -> AnyLabel;
    /// Whether `other` is the same label (same type, equal value).
    fn same_as(&self, other: &dyn ScheduleLabel) -> bool;
    /// The label as `Any`, for [`same_as`](Self::same_as).
    fn as_any(&self) -> &dyn Any;
}

impl<T: Clone + Eq + Hash + Debug + Send + Sync + 'static> ScheduleLabel for T {
    fn boxed(&self) -> AnyLabel {
        AnyLabel(Box::new(self.clone()))
    }
    fn same_as(&self, other: &dyn ScheduleLabel) -> bool {
        other.as_any().downcast_ref::<T>() == Some(self)
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// A label of any type.
pub struct AnyLabel(Box<dyn ScheduleLabel>);

impl AnyLabel {
    /// Whether this is `label`.
    pub fn is(&self, label: &dyn ScheduleLabel) -> bool {
        self.0.same_as(label)
    }
}

impl Debug for AnyLabel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

impl PartialEq for AnyLabel {
    fn eq(&self, other: &Self) -> bool {
        self.0.same_as(&*other.0)
    }
}

impl Eq for AnyLabel {}

impl Hash for AnyLabel {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.0.as_any().type_id().hash(state);
        format!("{:?}", self.0).hash(state);
    }
}

impl Clone for AnyLabel {
    fn clone(&self) -> Self {
        self.0.boxed()
    }
}

macro_rules! phase {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
        pub struct $name;
    };
}

phase!(
    /// Runs once, in the first update, before the other phases.
    Startup
);
phase!(
    /// The first phase of every update.
    First
);
phase!(
    /// Runs before [`FixedUpdate`] and [`Update`]: input, say.
    PreUpdate
);
phase!(
    /// Runs 0..n times per update, once per fixed step of `Time<Fixed>`.
    FixedUpdate
);
phase!(
    /// The game's logic, once per update.
    Update
);
phase!(
    /// Runs after [`Update`]: transform propagation, say.
    PostUpdate
);
phase!(
    /// The last phase of every update.
    Last
);

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Clone, Debug, PartialEq, Eq, Hash)]
    enum Level {
        Menu,
        Play,
    }

    #[test]
    fn labels_compare_by_type_and_value() {
        assert_eq!(Update.boxed(), Update.boxed());
        assert_ne!(Update.boxed(), Last.boxed());
        assert_eq!(Level::Menu.boxed(), Level::Menu.boxed());
        assert_ne!(Level::Menu.boxed(), Level::Play.boxed());
        assert!(Level::Play.boxed().is(&Level::Play));
        assert!(!Level::Play.boxed().is(&Update));
    }
}
