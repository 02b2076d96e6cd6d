//! The JSON schema of levels and prefabs, as serde types.
//!
//! ```json
//! {
//!   "entities": [
//!     {
//!       "name": "ship",
//!       "components": {
//!         "transform": { "translation": [0, 10, 0] },
//!         "velocity": [1, 0, 0]
//!       },
//!       "children": [
//!         { "name": "turret", "components": { "transform": { "translation": [0, 1, 0] } } }
//!       ]
//!     },
//!     { "name": "antenna", "parent": 0, "components": { "transform": {} } }
//!   ]
//! }
//! ```
//!
//! - `entities` (array, default empty): the top-level entities. Without
//!   `parent` they are roots. A prefab is a level with one root.
//! - Each entity has an optional `name` (used only in error messages), a
//!   `components` object mapping a registered component name to that
//!   component's JSON (whatever its compiler accepts), and two ways to have
//!   a parent:
//!   - **nested**: `children`, an array of entities of the same shape. The
//!     nested form is limited to [`MAX_NESTED_DEPTH`] (60) entity levels, a
//!     top-level entity being level 1; a deeper one is refused with
//!     [`CompileError::TooDeep`] naming the limit. (Parsing nested JSON
//!     recurses on the stack: the limit keeps it bounded, and inside
//!     serde_json's own limit of 127 nested arrays and objects. An entity at
//!     level `d` is the `2d + 1`-th nested object, so component JSON of the
//!     deepest entities has only a few levels of room left.)
//!   - **flat**: `parent`, allowed only on entities of the top-level
//!     `entities` array: the 0-based index in that array of the entity's
//!     parent, which must come **before** it (`parent < own index`). The
//!     flat form has no depth limit: a chain of a million entities, each the
//!     parent of the next, is a million top-level entities with `"parent": 0`,
//!     `"parent": 1`, and so on. A self-reference, a forward reference, an
//!     index past the end, or `parent` on a nested child is a
//!     [`CompileError::Parent`] naming the entity. Both forms may be mixed: a
//!     top-level entity with a `parent` may have nested `children`, and a
//!     `parent` may name a top-level entity that has nested children.
//! - Unknown keys are refused, so a misspelt `childern` is an error, not an
//!   ignored subtree. A key that appears twice in any object of the level
//!   (an entity, a `components` object, or a component's own JSON) is
//!   [`CompileError::DuplicateKey`], with its line and column, instead of the
//!   last one silently winning.
//!
//! **Entity order.** Entities are numbered (their index in the blob) by
//! visiting the top-level array in order, each top-level entity followed by
//! its nested children in preorder. A parent therefore always gets a smaller
//! index than its children, as the blob format requires.
//!
//! [`CompileError::TooDeep`]: crate::CompileError::TooDeep
//! [`CompileError::Parent`]: crate::CompileError::Parent
//! [`CompileError::DuplicateKey`]: crate::CompileError::DuplicateKey

use crate::error::{CompileError, ParentProblem};
use serde::Serialize;

/// Deepest entity level of the nested `children` form (top-level entities
/// are level 1). Use the flat form (`"parent"`) for deeper hierarchies.
pub const MAX_NESTED_DEPTH: usize = 60;

/// A level or prefab: its top-level entities.
///
/// Deserializing (e.g. `serde_json::from_str::<LevelDesc>`) applies the
/// module's rules: unknown and duplicate keys and nesting deeper than
/// [`MAX_NESTED_DEPTH`] are errors. [`LevelDesc::from_json`] does the same
/// with typed errors; `parent` indices are checked when the level is walked
/// ([`visit_preorder`](Self::visit_preorder), compiling).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct LevelDesc {
    /// The top-level entities, in order.
    pub entities: Vec<EntityDesc>,
}

/// One entity: components by name, and children.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct EntityDesc {
    /// Optional name, used in error messages.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The parent's index in the top-level `entities` array (flat form);
    /// only on top-level entities, and only an earlier one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent: Option<usize>,
    /// Component name → that component's JSON.
    pub components: serde_json::Map<String, serde_json::Value>,
    /// Child entities (nested form).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub children: Vec<EntityDesc>,
}

/// The callback of [`LevelDesc::try_visit_preorder`]: blob index, parent's
/// blob index, the entity, and a function describing where it is.
pub type VisitFn<'f> = dyn FnMut(usize, Option<usize>, &EntityDesc, &dyn Fn() -> String) -> Result<(), CompileError>
    + 'f;

impl LevelDesc {
    /// Parses JSON text with the module's rules, with typed errors
    /// ([`CompileError::Schema`], [`CompileError::DuplicateKey`],
    /// [`CompileError::TooDeep`]).
    pub fn from_json(json: &str) -> Result<LevelDesc, CompileError> {
        let mut entities = Vec::new();
        crate::parse::parse_level(json, &mut |_, e| {
            entities.push(e);
            Ok(())
        })?;
        Ok(LevelDesc { entities })
    }

    /// Visits every entity in blob order (see the module docs: parents
    /// before children) with its blob index, its parent's blob index and a
    /// function that describes where it is (for messages; built only when
    /// called). Iterative, so depth is not limited by the stack. Stops with
    /// [`CompileError::Parent`] at the first bad `parent`.
    pub fn visit_preorder(
        &self,
        mut f: impl FnMut(usize, Option<usize>, &EntityDesc, &dyn Fn() -> String),
    ) -> Result<(), CompileError> {
        self.try_visit_preorder(&mut |i, p, e, d| {
            f(i, p, e, d);
            Ok(())
        })
    }

    /// [`visit_preorder`](Self::visit_preorder) with a callback that may
    /// stop the walk with an error.
    pub fn try_visit_preorder(&self, f: &mut VisitFn<'_>) -> Result<(), CompileError> {
        let mut walk = Preorder::default();
        for (k, e) in self.entities.iter().enumerate() {
            walk.visit_top(k, e, f)?;
        }
        Ok(())
    }

    /// Total number of entities, children included.
    pub fn entity_count(&self) -> usize {
        let mut n = 0;
        let mut stack: Vec<&EntityDesc> = self.entities.iter().collect();
        while let Some(e) = stack.pop() {
            n += 1;
            stack.extend(&e.children);
        }
        n
    }
}

/// Numbers entities in blob order, one top-level entity (and its nested
/// subtree) at a time, so a level can be compiled while it is parsed.
#[derive(Debug, Default)]
pub(crate) struct Preorder {
    /// Blob index of each top-level entity visited so far.
    top: Vec<usize>,
    /// The next blob index.
    next: usize,
}

impl Preorder {
    /// Visits top-level entity `k` (the `k`-th call, from 0) and its nested
    /// subtree in preorder.
    pub(crate) fn visit_top(
        &mut self,
        k: usize,
        top: &EntityDesc,
        f: &mut VisitFn<'_>,
    ) -> Result<(), CompileError> {
        debug_assert_eq!(k, self.top.len());
        let top_parent = match top.parent {
            None => None,
            Some(p) if p < k => Some(self.top[p]),
            Some(p) => {
                let problem = if p == k {
                    ParentProblem::SelfParent(p)
                } else {
                    ParentProblem::NotEarlier {
                        parent: p,
                        index: k,
                    }
                };
                return Err(CompileError::Parent {
                    entity: describe_path(&[(None, k)], 0, top),
                    problem,
                });
            }
        };
        let first = self.next;
        self.top.push(first);
        // Per visited entity of this subtree: (parent's local index, index
        // among its siblings; for the top entity, its top-level index).
        let mut place: Vec<(Option<usize>, usize)> = Vec::new();
        let mut stack: Vec<(&EntityDesc, Option<usize>, usize)> = vec![(top, None, k)];
        while let Some((e, parent, sibling)) = stack.pop() {
            let local = place.len();
            place.push((parent, sibling));
            let describe = || describe_path(&place, local, e);
            if parent.is_some() && e.parent.is_some() {
                return Err(CompileError::Parent {
                    entity: describe(),
                    problem: ParentProblem::Nested,
                });
            }
            let blob_parent = parent.map_or(top_parent, |p| Some(first + p));
            f(first + local, blob_parent, e, &describe)?;
            for (i, c) in e.children.iter().enumerate().rev() {
                stack.push((c, Some(local), i));
            }
        }
        self.next = first + place.len();
        Ok(())
    }
}

/// `entities[3].children[0] ("name")` for the entity at `local` in `place`.
fn describe_path(place: &[(Option<usize>, usize)], local: usize, e: &EntityDesc) -> String {
    let mut chain = vec![local];
    while let Some(p) = place[*chain.last().expect("non-empty")].0 {
        chain.push(p);
    }
    let mut path = String::new();
    for (depth, &i) in chain.iter().rev().enumerate() {
        let k = place[i].1;
        if depth == 0 {
            path.push_str(&format!("entities[{k}]"));
        } else {
            path.push_str(&format!(".children[{k}]"));
        }
    }
    match &e.name {
        Some(n) => format!("{path} ({n:?})"),
        None => path,
    }
}
