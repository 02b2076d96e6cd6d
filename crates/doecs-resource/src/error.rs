//! Typed errors of the three stages: compiling JSON, loading (validating) a
//! blob, and spawning it into a world. A load error names the field and the
//! byte offset where the blob went wrong.

/// What is wrong at the place a [`LoadError`] names.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Problem {
    /// The field runs past the end of the blob.
    #[error("needs {needed} bytes but only {available} remain")]
    Truncated {
        /// Bytes the field needs.
        needed: u64,
        /// Bytes left in the blob from the field's offset.
        available: u64,
    },
    /// The first eight bytes are not [`crate::format::MAGIC`].
    #[error("bad magic number (not a doecs entity resource)")]
    BadMagic,
    /// A format version this build cannot read.
    #[error("unsupported format version {0}")]
    UnsupportedVersion(u32),
    /// Reserved bits are set.
    #[error("reserved flags {0:#x} must be zero")]
    ReservedFlags(u32),
    /// The header's length disagrees with the bytes given.
    #[error("declares {declared} bytes but the blob has {actual}")]
    LengthMismatch {
        /// The declared `total_length`.
        declared: u64,
        /// The real length.
        actual: u64,
    },
    /// A value is at or above its limit.
    #[error("value {value} is out of range (must be below {limit})")]
    OutOfRange {
        /// The value found.
        value: u64,
        /// The exclusive limit.
        limit: u64,
    },
    /// A parent index does not come before its child.
    #[error("parent {parent} of entity {child} must be a root marker or an earlier entity")]
    ParentNotBefore {
        /// The parent index found.
        parent: u32,
        /// The child's entity index.
        child: u32,
    },
    /// An `entity_index` array is not strictly increasing.
    #[error("entity index {value} does not follow {previous} (indices must strictly increase)")]
    NotIncreasing {
        /// The previous index.
        previous: u32,
        /// The offending index.
        value: u32,
    },
    /// A size computation overflows.
    #[error("size overflows")]
    SizeOverflow,
    /// Bytes are left after the last block.
    #[error("{0} bytes after the last block")]
    TrailingBytes(u64),
    /// Two blocks carry the same component identifier.
    #[error("component type {0:#018x} appears in two blocks")]
    DuplicateType(u64),
    /// The instance size disagrees with the registered component.
    #[error("instance size is {actual} bytes but `{name}` has {expected}")]
    InstanceSize {
        /// The component's registered name.
        name: String,
        /// The size the component needs.
        expected: u64,
        /// The size in the blob.
        actual: u64,
    },
    /// No spawner knows this component type and strict mode is on.
    #[error("unknown component type {0:#018x} (strict mode)")]
    UnknownType(u64),
    /// The component's spawner refused an instance.
    #[error("`{name}` instance {instance}: {message}")]
    Rejected {
        /// The component's registered name.
        name: String,
        /// The instance number within the block.
        instance: u64,
        /// The spawner's reason.
        message: String,
    },
}

/// A blob failed validation. Nothing was created in any world.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid entity resource: {field} at byte {offset}: {problem}")]
pub struct LoadError {
    /// The field, e.g. `header.magic` or `block[2].entity_index[7]`.
    pub field: String,
    /// Byte offset of the field from the start of the blob.
    pub offset: u64,
    /// What is wrong.
    pub problem: Problem,
}

impl LoadError {
    pub(crate) fn new(field: impl Into<String>, offset: u64, problem: Problem) -> Self {
        LoadError {
            field: field.into(),
            offset,
            problem,
        }
    }
}

/// Compiling a JSON level failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CompileError {
    /// The text is not JSON or does not follow the level schema.
    #[error("level JSON does not match the schema: {0}")]
    Schema(String),
    /// No compiler is registered for a component name.
    #[error("{entity}: no compiler is registered for component `{component}`")]
    UnknownComponent {
        /// Where the entity is, e.g. `entities[3].children[0] ("turret")`.
        entity: String,
        /// The component name.
        component: String,
    },
    /// A component compiler refused its JSON.
    #[error("{entity}: component `{component}`: {message}")]
    Component {
        /// Where the entity is.
        entity: String,
        /// The component name.
        component: String,
        /// The compiler's reason.
        message: String,
    },
    /// A compiler returned the wrong number of bytes.
    #[error("compiler for `{component}` returned {actual} bytes, registered size is {expected}")]
    WrongSize {
        /// The component name.
        component: String,
        /// The registered instance size.
        expected: usize,
        /// The bytes returned.
        actual: usize,
    },
    /// The level has more entities (or bytes) than the format can index.
    #[error("level too large for the format: {0}")]
    TooLarge(String),
    /// The nested `children` form goes deeper than
    /// [`crate::schema::MAX_NESTED_DEPTH`] entity levels.
    #[error(
        "level nests children deeper than the limit of {limit} entity levels \
         (at line {line} column {column}); use the flat form with \"parent\" \
         for deeper hierarchies"
    )]
    TooDeep {
        /// The limit, [`crate::schema::MAX_NESTED_DEPTH`].
        limit: usize,
        /// Line of the first entity past the limit (1-based).
        line: usize,
        /// Its column (1-based).
        column: usize,
    },
    /// A JSON object of the level has the same key twice.
    #[error("duplicate key {key:?} at line {line} column {column}")]
    DuplicateKey {
        /// The key.
        key: String,
        /// Line of the second occurrence (1-based).
        line: usize,
        /// Column just after the second occurrence (1-based).
        column: usize,
    },
    /// An entity's `"parent"` is not allowed or does not name an earlier
    /// top-level entity.
    #[error("{entity}: \"parent\": {problem}")]
    Parent {
        /// Where the entity is, e.g. `entities[7] ("arm")`.
        entity: String,
        /// What is wrong.
        problem: ParentProblem,
    },
}

/// What is wrong with an entity's `"parent"` (see [`crate::schema`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParentProblem {
    /// The entity names itself.
    #[error("{0} is the entity itself")]
    SelfParent(usize),
    /// The index is not that of an earlier entity of the top-level array: a
    /// forward reference or past the end.
    #[error(
        "{parent} is not the index of an earlier entity of the top-level `entities` \
         array (this entity is entities[{index}]; parents must come before their children)"
    )]
    NotEarlier {
        /// The `"parent"` value.
        parent: usize,
        /// The entity's own index in the top-level array.
        index: usize,
    },
    /// `"parent"` on a nested child, whose parent is the entity it is nested in.
    #[error(
        "only entities of the top-level `entities` array may name a parent; a nested \
         child's parent is the entity it is nested in"
    )]
    Nested,
}

/// Registering a compiler or spawner failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RegistrationError {
    /// The name is already registered.
    #[error("component `{0}` is already registered")]
    NameTaken(String),
    /// Another name hashes to the same identifier.
    #[error("component `{name}` hashes to the same identifier as `{other}`")]
    HashCollision {
        /// The new name.
        name: String,
        /// The registered name.
        other: String,
    },
}

/// Spawning a blob failed. The world was left untouched.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SpawnError {
    /// The blob is malformed or refused by a spawner's validation.
    #[error(transparent)]
    Load(#[from] LoadError),
    /// The world already has a component of this name that does not fit.
    #[error("component `{name}` cannot be spawned into this world: {reason}")]
    WorldConflict {
        /// The component name.
        name: String,
        /// Why.
        reason: String,
    },
    /// More distinct plain component types than one spawn can group.
    #[error("the blob has {0} plain component types; at most 64 are supported per spawn")]
    TooManyPlainTypes(usize),
}
