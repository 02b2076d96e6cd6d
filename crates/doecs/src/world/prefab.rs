//! Prefabs: entities that other entities are instances of.
//!
//! Design. An instance is linked to its prefab by the built-in relation
//! [`IsA`], the `INSTANCEOF` of Bitsquid-style type flags kept as a pair
//! beside the archetypes like every relation. The instance stores none of
//! the prefab's components: `World::get` (and a system's `get`) looks a
//! component up on the entity itself first and, only when the entity lacks
//! it, follows `IsA` up the chain, so an instance reads its prefab's values
//! as its own without a copy, and the hit path of `get` costs nothing more.
//! Writes never go through the chain: `get_mut` of an inherited component
//! is refused with [`EntityError::Inherited`] (the prefab and every other
//! instance share that value), and `insert` on the instance, or
//! [`World::override_inherited`](crate::World::override_inherited), gives
//! the instance its own copy, which from then on shadows the prefab's.
//!
//! The [`Prefab`] tag keeps an entity out of every query that does not ask
//! for it (by fetching `Prefab`, `Option<&Prefab>` or filtering
//! `With<Prefab>`), so a prefab's components never show up as a live
//! entity's. `Prefab` itself is never inherited: an instance is not a
//! prefab. [`World::instantiate`](crate::World::instantiate) makes `n`
//! instances at once, with a copy of the prefab's `ChildOf` subtree for
//! each: every child prefab gets `n` instances of its own, parented to the
//! matching instance of its parent. Despawning a prefab despawns its
//! instances (`IsA` has the [`Cleanup::DespawnSource`](crate::Cleanup::DespawnSource) policy), and with
//! them their subtrees.
//!
//! `IsA` and `Prefab` are defined below the world (in `relation` and the
//! crate's built-in tags); this file holds what the world does with them.

use super::{World, WorldCore};
use crate::component::Component;
use crate::entity::Entity;
use crate::error::EntityError;
use crate::relation::{IsA, RelationError};
use crate::tags::Prefab;

impl WorldCore {
    /// The prefab `entity` is an instance of, if any.
    pub fn prefab_of(&self, entity: Entity) -> Option<Entity> {
        self.relations.table::<IsA>()?.first_target(entity)
    }

    /// The prefab up `entity`'s `IsA` chain that owns a `T`, when `entity`
    /// lacks one: where an inherited read of `T` comes from. `Prefab` is
    /// never inherited.
    pub fn inherited_from<T: Component>(&self, entity: Entity) -> Option<Entity> {
        if std::any::TypeId::of::<T>() == std::any::TypeId::of::<Prefab>() {
            return None;
        }
        let table = self.relations.table::<IsA>()?;
        let id = self.components.id_of::<T>()?;
        // Owned in the entity's row, or in its sparse set where `T` is
        // stored sparse.
        let owns = |e: Entity| {
            self.entities
                .location(e)
                .is_some_and(|l| self.archetypes.get(l.archetype).has(id))
                || self.has_sparse(id, e)
        };
        if owns(entity) {
            return None;
        }
        // `IsA` is acyclic, so the chain ends.
        let mut at = table.first_target(entity)?;
        while !owns(at) {
            at = table.first_target(at)?;
        }
        Some(at)
    }
}

impl World {
    /// Gives `entity` its own copy of the `T` it inherits, and returns it
    /// mutably; an entity that owns its `T` just returns it. The prefab and
    /// its other instances keep their value.
    ///
    /// # Errors
    /// [`EntityError::NoSuchEntity`] for a dead entity;
    /// [`EntityError::MissingComponent`] if it neither owns nor inherits a
    /// `T`. The world is unchanged then.
    ///
    /// ```
    /// use doecs::{IsA, Prefab, World};
    /// #[derive(Clone, Debug, PartialEq)]
    /// struct Paint(&'static str);
    /// let mut world = World::new();
    /// let car = world.spawn((Prefab, Paint("red")));
    /// let [mine, yours] = [(), ()].map(|()| world.spawn(()));
    /// world.add_pair(mine, car, IsA).unwrap();
    /// world.add_pair(yours, car, IsA).unwrap();
    /// assert!(world.get_mut::<Paint>(mine).is_err(), "shared with the prefab");
    /// world.override_inherited::<Paint>(mine).unwrap().0 = "blue";
    /// assert_eq!(world.get::<Paint>(mine), Ok(&Paint("blue")));
    /// assert_eq!(world.get::<Paint>(yours), Ok(&Paint("red")));
    /// assert_eq!(world.get::<Paint>(car), Ok(&Paint("red")));
    /// ```
    pub fn override_inherited<T: Component + Clone>(
        &mut self,
        entity: Entity,
    ) -> Result<&mut T, EntityError> {
        if let Some(prefab) = self.inherited_from::<T>(entity) {
            let copy = self.get::<T>(prefab)?.clone();
            self.insert_one(entity, copy)?;
        }
        self.get_mut::<T>(entity)
    }

    /// Makes `n` instances of `prefab`, each with a copy of the prefab's
    /// `ChildOf` subtree (instances of the child prefabs, parented like
    /// them). Returns the `n` top instances, in order.
    ///
    /// # Errors
    /// [`RelationError::NoSuchEntity`] if `prefab` is not alive; the world
    /// is unchanged then.
    ///
    /// ```
    /// use doecs::{ChildOf, Prefab, World};
    /// #[derive(Debug, PartialEq)]
    /// struct Hull(u32);
    /// let mut world = World::new();
    /// let ship = world.spawn((Prefab, Hull(100)));
    /// let turret = world.spawn((Prefab, Hull(10)));
    /// world.set_parent(turret, ship).unwrap();
    ///
    /// let fleet = world.instantiate(ship, 3).unwrap();
    /// assert_eq!(world.get::<Hull>(fleet[0]), Ok(&Hull(100)));
    /// let gun = world.children(fleet[0]).next().unwrap();
    /// assert_eq!(world.get::<Hull>(gun), Ok(&Hull(10)));
    /// assert_eq!(world.query_mut::<&Hull>().iter().count(), 0, "only prefabs own hulls");
    /// ```
    pub fn instantiate(&mut self, prefab: Entity, n: usize) -> Result<Vec<Entity>, RelationError> {
        if !self.alive(prefab) {
            return Err(RelationError::NoSuchEntity(prefab));
        }
        if n == 0 {
            return Ok(Vec::new());
        }
        // Parents before children, breadth-first: each node's instances are
        // made after its parent's, so they can be parented at once. The walk
        // knows each node's parent slot as it appends the node, so the
        // whole subtree costs one pass, however deep.
        let mut nodes = vec![prefab];
        let mut parent_slots: Vec<Option<usize>> = vec![None];
        let mut at = 0;
        while at < nodes.len() {
            let node = nodes[at];
            for child in self.children(node) {
                nodes.push(child);
                parent_slots.push(Some(at));
            }
            at += 1;
        }
        // One batch for every instance, node by node: `made[k]` holds the
        // instances of node `k`.
        let all = self.spawn_empty_batch(n * nodes.len());
        let made: Vec<&[Entity]> = all.chunks(n).collect();
        let index_bound = crate::entity::index_bound(&all);
        let isa = self.relations.table_mut::<IsA>();
        isa.reserve(all.len(), index_bound);
        for (instances, &node) in made.iter().zip(&nodes) {
            for &e in *instances {
                // A fresh entity: no pair to replace, no cycle to make.
                isa.insert_first(e, node, IsA);
            }
        }
        // Fresh entities: no parent yet, and the prefab's tree makes no
        // cycle. Instance `i` of node `k` is `all[k * n + i]`; its parent is
        // instance `i` of the node's parent.
        let parents: Vec<Option<u32>> = parent_slots
            .iter()
            .flat_map(|slot| (0..n).map(move |i| slot.map(|s| (s * n + i) as u32)))
            .collect();
        self.insert_fresh_child_of(&all, &parents, index_bound);
        self.sanitize();
        Ok(all[..n].to_vec())
    }
}
