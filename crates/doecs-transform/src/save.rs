//! The transform manager in save files (`doecs::SaveManager`).
//!
//! The saved form is what defines the scene graph and nothing derived:
//! each node's entity and local transform, in array order, and the
//! parent links in the order that rebuilds every child list in its saved
//! order (each parent's children last to first, since linking puts a child
//! at the head of its parent's list). World transforms are recomputed on
//! load, in one pass however deep the graph (one update of the linked
//! subtrees in immediate mode, one `propagate` in deferred mode), so a
//! loaded manager's world transforms are up to date even if the saved one
//! had moves pending.
//!
//! In a world the hierarchy is `ChildOf`, saved with the world's pairs,
//! and it is the one truth: a load links each node under the node of its
//! entity's nearest `ChildOf` ancestor with a transform, exactly as the
//! manager follows the pairs in a world (see `follow.rs`). The links saved
//! here repeat that (so older builds read the file) and give the order of
//! each node's children; a saved link that disagrees with the pairs (a
//! hand-edited or corrupt file) is ignored, never followed, so the loaded
//! manager and the pairs cannot disagree. A link naming an entity without a
//! node is refused as corrupt. Only a save with no `ChildOf` pair (one
//! written before the hierarchy was saved as pairs) has its links become
//! `ChildOf` pairs, before the nodes are linked.

use crate::TransformManager;
use doecs::{Entity, World};
use glam::Affine3A;
use serde::{Deserialize, Serialize};

/// A transform manager as a save holds it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SavedTransforms {
    /// Deferred mode (moves only mark nodes until `propagate`).
    pub deferred: bool,
    /// Every node: its entity and local transform (12 floats, column-major).
    pub nodes: Vec<(Entity, [f32; 12])>,
    /// `(child, parent)` links, in the order to apply them.
    pub links: Vec<(Entity, Entity)>,
}

impl doecs::SaveManager for TransformManager {
    type Saved = SavedTransforms;

    fn to_saved(&self) -> SavedTransforms {
        let nodes = self
            .iter()
            .map(|i| (i.entity(), self.local(i).expect("live").to_cols_array()))
            .collect();
        let mut links = Vec::new();
        for p in self.iter() {
            let children: Vec<_> = self.children(p).collect();
            links.extend(children.iter().rev().map(|c| (c.entity(), p.entity())));
        }
        SavedTransforms {
            deferred: self.is_deferred(),
            nodes,
            links,
        }
    }

    fn from_saved(saved: SavedTransforms, world: &World) -> Result<Self, String> {
        let mut m = if saved.deferred {
            TransformManager::deferred()
        } else {
            TransformManager::with_capacity(saved.nodes.len())
        };
        for (entity, local) in saved.nodes {
            if !world.alive(entity) {
                return Err(format!("node of entity {entity} which is not alive"));
            }
            if local.iter().any(|x| !x.is_finite()) {
                return Err(format!(
                    "entity {entity}: the local transform is not finite"
                ));
            }
            m.create(entity, Affine3A::from_cols_array(&local))
                .map_err(|e| e.to_string())?;
        }
        let mut order = Vec::with_capacity(saved.links.len());
        for (child, parent) in saved.links {
            let find = |e: Entity| {
                m.lookup(e)
                    .map(|i| i.index())
                    .ok_or_else(|| format!("link names entity {e}, which has no node"))
            };
            order.push((find(child)?, find(parent)?));
        }
        m.link_from_hierarchy(world.hierarchy(), &order);
        if m.is_deferred() {
            m.propagate();
        }
        Ok(m)
    }

    /// The saved links, as `ChildOf` pairs in the order that keeps each
    /// parent's children in their saved order (the links list each
    /// parent's children last to first): what a save without `ChildOf`
    /// pairs (an older one) held as its hierarchy.
    fn saved_parents(saved: &SavedTransforms) -> Vec<(Entity, Entity)> {
        saved.links.iter().rev().copied().collect()
    }
}
