//! Relationship pairs in saves: one registration per relation type, by
//! name, beside the component registrations.
//!
//! A relation is saved as the list of its pairs `(source, target, value)`,
//! entities as their 64 bits, in the order of `World::pairs_in_order`, so
//! a load that adds them in that order rebuilds every entity's targets and
//! sources (children, for `ChildOf`) in their saved order. A load adds them
//! in one batch (`WorldCore::add_pairs`), which checks and inserts them in
//! time linear in the pairs whatever the shape: one by one, the cycle check
//! of each pair walked its target's ancestors, quadratic in a chain's depth. The built-in
//! relations `ChildOf` and `IsA` are always known, as "ChildOf" and "IsA";
//! other relations are registered with
//! [`ComponentRegistry::register_relation`].
//!
//! A load checks every pair before any is added: a dead or unknown entity,
//! a cycle in an acyclic relation, a pair listed twice, or a second target
//! of an exclusive relation is an error naming the first such pair in
//! order, never a silent replacement.

use crate::{ComponentRegistry, RegistryError};
use doecs::{ChildOf, Entity, IsA, Relation, World};
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;
use std::any::TypeId;

/// How one relation type is written to and read from saves.
#[derive(Clone, Debug)]
pub(crate) struct RelationRegistration {
    pub(crate) name: String,
    pub(crate) type_id: TypeId,
    /// The pairs as a JSON array of `[source bits, target bits, value]`.
    pub(crate) to_json: fn(&World) -> Result<Value, String>,
    /// The pairs as one postcard sequence of `(u64, u64, value)`.
    pub(crate) to_postcard: fn(&World) -> Result<Vec<u8>, String>,
    /// Adds the pairs of a JSON array, checking each.
    pub(crate) from_json: fn(&mut World, &Value) -> Result<(), String>,
    /// Adds the pairs of a postcard sequence, checking each.
    pub(crate) from_postcard: fn(&mut World, &[u8]) -> Result<(), String>,
}

impl RelationRegistration {
    fn of<R: Relation + Serialize + DeserializeOwned>(name: &str) -> Self {
        fn to_json<R: Relation + Serialize>(world: &World) -> Result<Value, String> {
            let pairs: Vec<(u64, u64, &R)> = doecs::raw::pairs_in_order::<R>(world)
                .into_iter()
                .map(|(s, t, v)| (s.to_bits(), t.to_bits(), v))
                .collect();
            serde_json::to_value(pairs).map_err(|e| e.to_string())
        }
        fn to_postcard<R: Relation + Serialize>(world: &World) -> Result<Vec<u8>, String> {
            let pairs: Vec<(u64, u64, &R)> = doecs::raw::pairs_in_order::<R>(world)
                .into_iter()
                .map(|(s, t, v)| (s.to_bits(), t.to_bits(), v))
                .collect();
            postcard::to_allocvec(&pairs).map_err(|e| e.to_string())
        }
        fn from_json<R: Relation + DeserializeOwned>(
            world: &mut World,
            value: &Value,
        ) -> Result<(), String> {
            let pairs = Vec::<(u64, u64, R)>::deserialize(value).map_err(|e| e.to_string())?;
            add_checked(world, pairs)
        }
        fn from_postcard<R: Relation + DeserializeOwned>(
            world: &mut World,
            bytes: &[u8],
        ) -> Result<(), String> {
            let pairs: Vec<(u64, u64, R)> =
                postcard::from_bytes(bytes).map_err(|e| e.to_string())?;
            add_checked(world, pairs)
        }
        use serde::Deserialize;
        RelationRegistration {
            name: name.to_owned(),
            type_id: TypeId::of::<R>(),
            to_json: to_json::<R>,
            to_postcard: to_postcard::<R>,
            from_json: from_json::<R>,
            from_postcard: from_postcard::<R>,
        }
    }
}

/// Adds saved pairs to `world` in order, in one batch
/// ([`doecs::WorldCore::add_pairs`]: linear in the pairs however deep the relation's
/// chains), refusing anything a save of a real world cannot hold.
fn add_checked<R: Relation>(world: &mut World, pairs: Vec<(u64, u64, R)>) -> Result<(), String> {
    let pairs = pairs
        .into_iter()
        .map(|(s, t, v)| (Entity::from_bits(s), Entity::from_bits(t), v))
        .collect();
    world.add_pairs(pairs).map_err(|e| e.to_string())
}

/// The relations every registry starts with.
pub(crate) fn builtins() -> Vec<RelationRegistration> {
    vec![
        RelationRegistration::of::<ChildOf>("ChildOf"),
        RelationRegistration::of::<IsA>("IsA"),
    ]
}

impl ComponentRegistry {
    /// Registers relation `R`, which serde writes and reads, as `name`, so
    /// saves carry its pairs. `ChildOf` and `IsA` are built in.
    ///
    /// # Errors
    /// [`RegistryError::NameTaken`] if a relation of that name (a built-in
    /// one included) is registered; [`RegistryError::TypeTaken`] if `R` is.
    pub fn register_relation<R: Relation + Serialize + DeserializeOwned>(
        &mut self,
        name: &str,
    ) -> Result<(), RegistryError> {
        if self.relation_by_name(name).is_some() {
            return Err(RegistryError::NameTaken(name.to_owned()));
        }
        if let Some(existing) = self.relation_of(TypeId::of::<R>()) {
            return Err(RegistryError::TypeTaken {
                type_name: std::any::type_name::<R>(),
                existing: existing.name.clone(),
            });
        }
        self.relations.push(RelationRegistration::of::<R>(name));
        Ok(())
    }

    /// The type of the relation registered as `name` (`"ChildOf"` and
    /// `"IsA"` always are): how tools that take relation names from people
    /// (the inspector's query language) find the relation's pairs.
    ///
    /// ```
    /// let registry = doecs_registry::ComponentRegistry::new();
    /// let child_of = std::any::TypeId::of::<doecs::ChildOf>();
    /// assert_eq!(registry.relation_type("ChildOf"), Some(child_of));
    /// assert_eq!(registry.relation_type("Likes"), None);
    /// ```
    pub fn relation_type(&self, name: &str) -> Option<TypeId> {
        self.relation_by_name(name).map(|r| r.type_id)
    }

    /// The registration of relation type `type_id`.
    pub(crate) fn relation_of(&self, type_id: TypeId) -> Option<&RelationRegistration> {
        self.relations.iter().find(|r| r.type_id == type_id)
    }

    /// The registration of the relation named `name`.
    pub(crate) fn relation_by_name(&self, name: &str) -> Option<&RelationRegistration> {
        self.relations.iter().find(|r| r.name == name)
    }
}
