//! A textual query language for doecs worlds, modelled on flecs's query
//! DSL, shared by the inspector's JSON API (`GET /api/query?expr=`), its
//! page and the `doecs query` command:
//!
//! ```text
//! position, velocity, !spin, (ChildOf, $parent), ?Name, Changed(mass)
//! ```
//!
//! Design. Text goes through three steps, each its own module, so that
//! each can be tested alone and the costly one runs once per request:
//! [`parse()`] (in [`mod@parse`]) turns text into a [`Query`] (the AST in
//! [`ast`], which prints back as text that parses to the same AST);
//! [`Plan::new`] (in [`eval`]) resolves its names against one world once
//! (components to ids, relations to types, entity names to entities,
//! variables to slots); [`Plan::run`] walks the archetypes. Every error, from the parser or the
//! resolver, is a [`QueryError`] with the 1-based column (in characters)
//! of what it points at: `expected ')' at column 17, found ','`. Nothing a
//! client types leads to a panic, and the parser's work is bounded:
//! at most [`MAX_QUERY_BYTES`] of text and [`MAX_TERMS`] terms, with no
//! nesting beyond a pair's parentheses.
//!
//! # Terms
//!
//! Terms are separated by commas; whitespace between tokens is ignored.
//!
//! | term | matches |
//! |---|---|
//! | `X` | entities with component `X` (its value is the term's data) |
//! | `!X` | entities without `X` |
//! | `?X` | every entity; the result says whether it has `X` |
//! | `(R, target)` | entities with a pair of relation `R` to `target` |
//! | `(R, *)` | entities with any pair of `R` |
//! | `(R, $v)` | entities with a pair of `R`; binds variable `v` to its target |
//! | `!(R, …)`, `?(R, …)` | without such a pair; optionally with one |
//! | `Changed(X)` | entities whose `X` was written (or added) in the window |
//! | `Added(X)` | entities that got `X` in the window |
//!
//! A name is a bare word (a letter or `_`, then letters, digits and
//! `_ . : / < > -`) or a quoted string (`"my component"`, with `\"` and
//! `\\` escapes). A component name is its registration's name
//! (`position`) or the world's name for it (a runtime component's name,
//! a Rust type's path), as everywhere in the inspector; sparse components
//! are terms like any other. A relation is named as the component
//! registry registered it (`ChildOf`, `IsA`, and
//! `ComponentRegistry::register_relation`), or by its type's name, short
//! or full, once the world holds pairs of it. A pair's target is an
//! entity id (`12v0`, or the 64-bit form), a name or a path of names
//! (`ship3`, `ship3/ship3.part1`, looked up with `World::lookup`), `*`, or
//! a variable. Unknown names are errors at their column.
//!
//! # Variables
//!
//! A variable (`$name`) binds a pair's target. Every term naming the same
//! variable must agree, which makes a join: `(ChildOf, $p), (Likes, $p)`
//! keeps entities that like their own parent. A required term binds (once
//! per target: an entity with two targets of a non-exclusive relation is
//! two results), an optional term binds when it can and otherwise leaves
//! the variable unbound (`null`), and a `!` term only checks, so a
//! variable in a `!` term must be bound by a required term. Each result
//! lists every variable's binding.
//!
//! # Change filters
//!
//! `Changed(X)` and `Added(X)` decide as the typed `Changed<X>` and
//! `Added<X>` do (see `doecs::Changed`), relative to a window of ticks
//! the caller passes ([`doecs::ChangeWindow`]): a change stamped after
//! `last_run` and no later than `this_run` passes. Both require `X`. The
//! inspector's API takes the window's start as `since=TICK` (default 0,
//! so a first look sees everything, as a typed query's first run does)
//! and ends it at the world's current tick, which every answer reports
//! as `tick`: passing it back as the next `since` shows what changed
//! between the two looks (frames run in between, and edits). Like a typed
//! change query used outside a schedule, an answer with change filters
//! then moves the world's clock on by one tick, so that nothing written
//! afterwards is stamped with the tick it reported, and asks the world
//! to keep per-row stamps for the components filtered on (until then,
//! and for the first answer, a chunk's stamp stands for its rows).
//!
//! # Results
//!
//! Entities with a tag the world hides by default (`Prefab`, `Disabled`,
//! `World::hide_by_default`) are left out unless the query names the tag,
//! as typed queries do. Results come in archetype order, then row order,
//! then in the order of each join's targets: paging by `offset` and
//! `limit` is stable while the world does not change, and `total` counts
//! every result.

pub mod api;
pub mod ast;
pub mod eval;
mod join;
#[cfg(test)]
mod join_tests;
pub mod parse;

pub use ast::{ChangeKind, Ident, Oper, Query, Target, TargetKind, Term, TermKind};
pub use eval::{Match, Page, Plan};
pub use parse::parse;

/// The longest query text accepted, in bytes.
pub const MAX_QUERY_BYTES: usize = 4096;
/// The most terms in one query.
pub const MAX_TERMS: usize = 32;
/// The most bindings one entity's joins may try before the query is
/// refused (a guard against joins whose results multiply).
pub const MAX_BINDINGS_PER_ENTITY: usize = 1 << 16;

/// Why a query could not be parsed, resolved or run: each names the
/// 1-based column (in characters) of the text it points at.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum QueryError {
    /// Longer than [`MAX_QUERY_BYTES`]; the column is the first character
    /// past the limit.
    #[error("the query is {len} bytes long; the limit is {max} (at column {column})")]
    TooLong {
        /// Its length in bytes.
        len: usize,
        /// The limit.
        max: usize,
        /// The first character past the limit.
        column: usize,
    },
    /// More than [`MAX_TERMS`] terms; the column is the first one too many.
    #[error("a query takes at most {max} terms; term {count} is at column {column}")]
    TooManyTerms {
        /// The limit.
        max: usize,
        /// The term's number.
        count: usize,
        /// Where it starts.
        column: usize,
    },
    /// Something else was found where the parser expected `expected`.
    #[error("expected {expected} at column {column}, found {found}")]
    Expected {
        /// What would have fitted.
        expected: &'static str,
        /// What was there (a token, or "the end of the query").
        found: String,
        /// Where.
        column: usize,
    },
    /// A character that starts no token.
    #[error("unexpected character {found:?} at column {column}")]
    BadCharacter {
        /// The character.
        found: char,
        /// Where.
        column: usize,
    },
    /// A quoted name without its closing quote.
    #[error("the name quoted at column {column} has no closing '\"'")]
    UnterminatedString {
        /// The opening quote.
        column: usize,
    },
    /// A backslash in a quoted name followed by neither `"` nor `\`.
    #[error("bad escape at column {column}: inside quotes, '\\' is followed by '\"' or '\\'")]
    BadEscape {
        /// The backslash.
        column: usize,
    },
    /// `""`: a name must not be empty.
    #[error("empty name at column {column}")]
    EmptyName {
        /// The opening quote.
        column: usize,
    },
    /// A word starting with a digit that is not an entity id.
    #[error("\"{text}\" at column {column} is not an entity id: expected INDEXvGENERATION (12v0) or the 64-bit form")]
    BadEntity {
        /// The word.
        text: String,
        /// Where it starts.
        column: usize,
    },
    /// `!` or `?` before `Changed(...)` or `Added(...)`.
    #[error("'{oper}' at column {column} cannot apply to a change filter")]
    OperatorOnChange {
        /// The operator.
        oper: char,
        /// Where.
        column: usize,
    },
    /// A variable in a `!` term that no required term binds.
    #[error("variable ${name} at column {column} is not bound by a required term")]
    UnboundVariable {
        /// The variable's name.
        name: String,
        /// Where.
        column: usize,
    },
    /// No component of this name.
    #[error("unknown component \"{name}\" at column {column} (GET /api/components lists them)")]
    UnknownComponent {
        /// The name.
        name: String,
        /// Where.
        column: usize,
    },
    /// No relation of this name.
    #[error("unknown relation \"{name}\" at column {column} (known: {known})")]
    UnknownRelation {
        /// The name.
        name: String,
        /// Where.
        column: usize,
        /// The relations it could have named.
        known: String,
    },
    /// A target naming no entity (or several).
    #[error("no one entity \"{name}\" at column {column}: {reason}")]
    UnknownEntity {
        /// The name or path.
        name: String,
        /// Where.
        column: usize,
        /// What the lookup said.
        reason: String,
    },
    /// A target id naming no live entity.
    #[error("entity {entity} at column {column} is not alive")]
    DeadEntity {
        /// The id, as written back (`12v0`).
        entity: String,
        /// Where.
        column: usize,
    },
    /// The joins gave one entity more than [`MAX_BINDINGS_PER_ENTITY`]
    /// bindings; the column is the term whose targets multiplied them.
    #[error("the join at column {column} gives entity {entity} more than {max} bindings")]
    TooManyBindings {
        /// The entity.
        entity: String,
        /// The limit.
        max: usize,
        /// The term.
        column: usize,
    },
}

impl QueryError {
    /// The 1-based column (in characters) the error points at.
    pub fn column(&self) -> usize {
        match self {
            QueryError::TooLong { column, .. }
            | QueryError::TooManyTerms { column, .. }
            | QueryError::Expected { column, .. }
            | QueryError::BadCharacter { column, .. }
            | QueryError::UnterminatedString { column }
            | QueryError::BadEscape { column }
            | QueryError::EmptyName { column }
            | QueryError::BadEntity { column, .. }
            | QueryError::OperatorOnChange { column, .. }
            | QueryError::UnboundVariable { column, .. }
            | QueryError::UnknownComponent { column, .. }
            | QueryError::UnknownRelation { column, .. }
            | QueryError::UnknownEntity { column, .. }
            | QueryError::DeadEntity { column, .. }
            | QueryError::TooManyBindings { column, .. } => *column,
        }
    }
}

impl From<QueryError> for crate::ApiError {
    fn from(e: QueryError) -> Self {
        crate::ApiError::bad_request(e.to_string()).with_column(e.column())
    }
}
