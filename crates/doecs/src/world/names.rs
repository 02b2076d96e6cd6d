//! Finding entities by name: paths of [`Name`]s along `ChildOf`.

use super::core::WorldCore;
use crate::entity::Entity;
use crate::name::{LookupError, Name};

impl WorldCore {
    /// The name of `entity`, if it has one.
    pub fn name_of(&self, entity: Entity) -> Option<&str> {
        self.get::<Name>(entity).ok().map(Name::as_str)
    }

    /// The entity at `path`: names separated by `/`, the first a root's
    /// (an entity with no parent), each next one a child's of the one
    /// before. Disabled and prefab entities count too (a path names an
    /// entity, whatever queries skip).
    ///
    /// Costs one pass over the named entities for the root, then one
    /// look at each child along the path.
    ///
    /// # Errors
    /// [`LookupError::NotFound`], [`LookupError::Ambiguous`] where two
    /// entities share a name on the path, [`LookupError::BadPath`].
    ///
    /// ```
    /// use doecs::{Name, World};
    /// let mut world = World::new();
    /// let ship = world.spawn((Name::new("frigate"),));
    /// let turret = world.spawn((Name::new("turret"),));
    /// world.set_parent(turret, ship).unwrap();
    /// assert_eq!(world.lookup("frigate/turret"), Ok(turret));
    /// assert_eq!(world.path_of(turret).as_deref(), Some("frigate/turret"));
    /// assert!(world.lookup("frigate/engine").is_err());
    /// ```
    pub fn lookup(&self, path: &str) -> Result<Entity, LookupError> {
        let mut names = path.split('/');
        if path.is_empty() || path.split('/').any(str::is_empty) {
            return Err(LookupError::BadPath(path.to_owned()));
        }
        let first = names.next().expect("split yields at least one part");
        let roots = self.named_entities(first, |e| self.parent(e).is_none());
        let mut at = one_of(roots, first)?;
        let mut walked = first.len();
        for name in names {
            walked += 1 + name.len();
            let here = &path[..walked];
            let children = self
                .children(at)
                .filter(|&c| self.name_of(c) == Some(name))
                .collect();
            at = one_of(children, here)?;
        }
        Ok(at)
    }

    /// The path of names from `entity`'s root down to it
    /// ([`WorldCore::lookup`] finds it again if it is unambiguous); `None`
    /// if it or an ancestor has no name.
    pub fn path_of(&self, entity: Entity) -> Option<String> {
        let mut parts = vec![self.name_of(entity)?];
        let mut at = entity;
        // A hierarchy is acyclic (`set_parent` refuses cycles); the bound
        // guards against looping on a damaged one.
        for _ in 0..self.len() {
            let Some(parent) = self.parent(at) else {
                parts.reverse();
                return Some(parts.join("/"));
            };
            parts.push(self.name_of(parent)?);
            at = parent;
        }
        None
    }

    /// Every entity named `name` that `keep` accepts, in id order.
    fn named_entities(&self, name: &str, keep: impl Fn(Entity) -> bool) -> Vec<Entity> {
        let Some(id) = self.components.id_of::<Name>() else {
            return Vec::new();
        };
        let mut out: Vec<Entity> = self
            .archetypes()
            .iter()
            .filter(|a| a.has(id))
            .flat_map(|a| a.entities().iter().copied())
            .filter(|&e| self.name_of(e) == Some(name) && keep(e))
            .collect();
        out.sort_unstable();
        out
    }
}

/// The one entity of `found`, or why not.
fn one_of(found: Vec<Entity>, path: &str) -> Result<Entity, LookupError> {
    match found.len() {
        1 => Ok(found[0]),
        0 => Err(LookupError::NotFound(path.to_owned())),
        count => Err(LookupError::Ambiguous {
            path: path.to_owned(),
            count,
        }),
    }
}
