//! The transform manager in save files (`doecs_registry::SaveManager`).
//!
//! The saved form is what defines the scene graph and nothing derived:
//! each node's entity and local transform, in array order, and the
//! parent links in the order that rebuilds every child list in its saved
//! order (each parent's children last to first, since linking puts a child
//! at the head of its parent's list). World transforms are recomputed on
//! load, by the links in immediate mode and by one `propagate` in deferred
//! mode, so a loaded manager's world transforms are up to date even if the
//! saved one had moves pending.
//!
//! In a world the hierarchy is `ChildOf`, saved with the world's pairs;
//! the links saved here repeat it (so older builds read the file). A load
//! takes the links from the pairs; only a save with no `ChildOf` pair (one
//! written before the hierarchy was saved as pairs) has its links become
//! `ChildOf` pairs.

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

impl doecs_registry::SaveManager for TransformManager {
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
        for (child, parent) in saved.links {
            let find = |e: Entity| {
                m.lookup(e)
                    .ok_or_else(|| format!("link names entity {e}, which has no node"))
            };
            let (c, p) = (find(child)?, find(parent)?);
            m.link(c, p).map_err(|e| e.to_string())?;
        }
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
