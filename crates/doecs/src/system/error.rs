//! Why building or running a schedule failed: [`ScheduleError`].
//!
//! The error lives with the systems, not the schedule, because a system is
//! refused as it is made (a function system's conflicting or invalid
//! parameters) before any schedule sees it; the schedule adds its own cases
//! (names, constraints, missing resources, panics) to the same type, and
//! re-exports it as `schedule::ScheduleError`.

/// Building or running a schedule failed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ScheduleError {
    /// No system is registered under this id (or it is running).
    #[error("no system is registered as {0:?} in this world (or it is running)")]
    NoSuchSystem(super::SystemId),
    /// Two systems share a name.
    #[error(
        "two systems are called `{0}`; system names must be unique (rename one with `.named(..)`)"
    )]
    DuplicateName(String),
    /// Two parameters of one function system would alias.
    #[error("system `{system}`: parameters `{first}` and `{second}` conflict: {reason}")]
    ConflictingParams {
        /// The system.
        system: String,
        /// The earlier parameter's type.
        first: String,
        /// The later parameter's type.
        second: String,
        /// What they both touch.
        reason: String,
    },
    /// A parameter of a function system can never be used.
    #[error("system `{system}`: parameter `{param}` is invalid: {reason}")]
    InvalidParam {
        /// The system.
        system: String,
        /// The parameter's type.
        param: String,
        /// Why.
        reason: String,
    },
    /// A system with a `Trigger` parameter was scheduled, run once or used
    /// as a run condition; it is an observer (see `World::observe`).
    #[error("system `{system}` takes `Trigger<{event}, ..>`: it is an observer; register it with `World::observe`")]
    ObserverNotSystem {
        /// The system.
        system: String,
        /// The event its trigger watches.
        event: &'static str,
    },
    /// A system needs a resource the world does not have (checked before any
    /// system starts).
    #[error("system `{system}` needs resource `{resource}`, which the world does not have")]
    MissingResource {
        /// The system.
        system: String,
        /// The resource's type.
        resource: &'static str,
    },
    /// A system declares a write of a component the world registered
    /// immutable ([`WorldCore::register_immutable`]), whose values change
    /// only by insert (checked before any system starts; a compile-time
    /// check is not possible, since every `Send + Sync + 'static` type is
    /// a component).
    ///
    /// [`WorldCore::register_immutable`]: crate::WorldCore::register_immutable
    #[error(
        "system `{system}` writes component `{component}`, which the world registered immutable; insert new values (through commands) instead"
    )]
    WritesImmutable {
        /// The system.
        system: String,
        /// The component's type.
        component: &'static str,
    },
    /// A query of a system names its terms in a way this world cannot
    /// serve: a column term or archetype filter of a component the world
    /// stores sparse, or a write of one it registered immutable (checked
    /// before any system starts, every run: a component's storage is fixed
    /// by the world, after the system was written).
    #[error("system `{system}`: {error}")]
    RefusedQuery {
        /// The system.
        system: String,
        /// What its query asks that the world refuses.
        #[source]
        error: crate::query::QueryError,
    },
    /// A system needs a component manager the world does not have.
    #[error("system `{system}` needs manager `{manager}`, which the world does not have")]
    MissingManager {
        /// The system.
        system: String,
        /// The manager's type.
        manager: &'static str,
    },
    /// A constraint names a system that is not in the schedule.
    #[error("system `{system}` is ordered relative to `{missing}`, which is neither a system nor a label in the schedule")]
    UnknownSystem {
        /// The system with the constraint.
        system: String,
        /// The name it refers to.
        missing: String,
    },
    /// The `before`/`after` constraints form a cycle.
    #[error("the before/after constraints form a cycle: {}", cycle.join(" -> "))]
    Cycle {
        /// The systems on the cycle, the first repeated at the end.
        cycle: Vec<String>,
    },
    /// A constraint asks a system to run before one that a sync point (or an
    /// exclusive system) already places earlier.
    #[error("`{first}` must run before `{second}`, but a sync point or exclusive system places it after")]
    ContradictsSyncPoint {
        /// The system that should run first.
        first: String,
        /// The system that should run second.
        second: String,
    },
    /// A system panicked while running.
    #[error("system `{system}` panicked: {message}")]
    SystemPanicked {
        /// The first system that panicked (in insertion order).
        system: String,
        /// Its panic message.
        message: String,
        /// Other systems that panicked in the same run.
        also_panicked: Vec<String>,
        /// Systems that did not run because they depend on a panicked one.
        skipped: Vec<String>,
    },
}
