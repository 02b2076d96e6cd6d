//! Schedule labels: the names of an app's phases, as values of types.
//!
//! A label is any small value type (`Update`, a user's `struct Physics;`,
//! `OnEnter(GameState::Playing)`), compared by type and value, so a
//! misspelled phase is a compile error rather than a lookup that fails at
//! run time. Labels are kept type-erased ([`AnyLabel`]); an app has a
//! handful of them, found by a linear scan.

use crate::dyn_value::{DynValue, KeyValue};

/// Names a schedule of an [`App`](super::App): any `Clone + Eq + Hash +
/// Debug` value that is `Send + Sync + 'static`. A phase is usually a unit
/// struct:
///
/// ```
/// #[derive(Clone, Debug, PartialEq, Eq, Hash)]
/// struct Physics;
/// ```
pub trait ScheduleLabel: KeyValue {}

impl<T: KeyValue> ScheduleLabel for T {}

/// A label of any type.
pub type AnyLabel = DynValue;

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
phase!(
    /// Runs once when the app stops: at the end of [`App::run`](crate::App::run),
    /// or when [`App::shutdown`](crate::App::shutdown) is called (saving
    /// the game on quit, say).
    Shutdown
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
        assert_eq!(Update.boxed_key(), Update.boxed_key());
        assert_ne!(Update.boxed_key(), Last.boxed_key());
        assert_eq!(Level::Menu.boxed_key(), Level::Menu.boxed_key());
        assert_ne!(Level::Menu.boxed_key(), Level::Play.boxed_key());
        assert!(Level::Play.boxed_key().is(&Level::Play));
        assert!(!Level::Play.boxed_key().is(&Update));
    }
}
