//! Typed errors of the transform manager. No operation panics on bad input;
//! each refusal is one of these variants.

use doecs::Entity;

/// Why a transform operation was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TransformError {
    /// The instance's entity has no transform in this manager (destroyed or never created).
    #[error("entity {0} has no transform instance in this manager")]
    DeadInstance(Entity),
    /// The entity already has a transform instance.
    #[error("entity {0} already has a transform instance")]
    AlreadyExists(Entity),
    /// Linking would put a node under itself or one of its own descendants.
    #[error("linking {child} under {parent} would create a cycle")]
    Cycle {
        /// The node being linked.
        child: Entity,
        /// The requested parent.
        parent: Entity,
    },
    /// `create_many` slices have different lengths.
    #[error(
        "create_many: {entities} entities, {locals} locals and {parents} parents differ in length"
    )]
    LengthMismatch {
        /// Length of `entities`.
        entities: usize,
        /// Length of `locals`.
        locals: usize,
        /// Length of `parents`.
        parents: usize,
    },
    /// A `create_many` parent index points outside the batch.
    #[error("create_many: item {item} names parent {parent}, outside the batch")]
    ParentOutOfRange {
        /// Index of the item in the batch.
        item: usize,
        /// The bad parent index.
        parent: u32,
    },
    /// `create_many` parent indices form a cycle.
    #[error("create_many: the parent indices of item {item} form a cycle")]
    BatchCycle {
        /// An item on the cycle (or below it).
        item: usize,
    },
    /// The same entity appears twice in a `create_many` batch.
    #[error("create_many: entity {0} appears twice in the batch")]
    DuplicateEntity(Entity),
    /// A structural change asked of a manager that follows a world's
    /// `ChildOf` hierarchy. There the pairs are the one scene graph: link
    /// with `World::set_parent`, create with `create_in` or
    /// `WorldTransforms::add_transform`.
    #[error("this transform manager follows its world's ChildOf hierarchy: set parents with World::set_parent and create instances with create_in / WorldTransforms")]
    FollowsHierarchy,
    /// The entity is not alive in the world.
    #[error("entity {0} is not alive")]
    NotAlive(Entity),
    /// More instances than `u32` indices allow.
    #[error("too many transform instances")]
    CapacityOverflow,
}
