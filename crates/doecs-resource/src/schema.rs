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
//!     }
//!   ]
//! }
//! ```
//!
//! - `entities` (array, default empty): the root entities. A prefab is a level
//!   with one root.
//! - Each entity has an optional `name` (used only in error messages), a
//!   `components` object mapping a registered component name to that
//!   component's JSON (whatever its compiler accepts), and optional
//!   `children`, entities of the same shape nested to any depth the JSON
//!   parser allows (serde_json's default nesting limit is 128 levels, about 60
//!   entity levels).
//! - Unknown keys are refused, so a misspelt `childern` is an error, not an
//!   ignored subtree.

use serde::{Deserialize, Serialize};

/// A level or prefab: its root entities.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LevelDesc {
    /// The root entities, in order.
    #[serde(default)]
    pub entities: Vec<EntityDesc>,
}

/// One entity: components by name, and children.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EntityDesc {
    /// Optional name, used in error messages.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Component name → that component's JSON.
    #[serde(default)]
    pub components: serde_json::Map<String, serde_json::Value>,
    /// Child entities, nested to any depth.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub children: Vec<EntityDesc>,
}

impl LevelDesc {
    /// Visits every entity in preorder (parents before children) with its
    /// parent's preorder index and a function that describes where it is
    /// (for messages; built only when called). Iterative, so depth is not
    /// limited by the stack.
    pub fn visit_preorder(
        &self,
        mut f: impl FnMut(usize, Option<usize>, &EntityDesc, &dyn Fn() -> String),
    ) {
        // Per visited entity: (parent preorder index, index among its siblings).
        let mut place: Vec<(Option<usize>, usize)> = Vec::new();
        let mut stack: Vec<(&EntityDesc, Option<usize>, usize)> = self
            .entities
            .iter()
            .enumerate()
            .rev()
            .map(|(i, e)| (e, None, i))
            .collect();
        while let Some((e, parent, sibling)) = stack.pop() {
            let me = place.len();
            place.push((parent, sibling));
            let describe = || {
                let mut chain = vec![me];
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
            };
            f(me, parent, e, &describe);
            for (k, c) in e.children.iter().enumerate().rev() {
                stack.push((c, Some(me), k));
            }
        }
    }

    /// Total number of entities, children included.
    pub fn entity_count(&self) -> usize {
        let mut n = 0;
        self.visit_preorder(|_, _, _, _| n += 1);
        n
    }
}
