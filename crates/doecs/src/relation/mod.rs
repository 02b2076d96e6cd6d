//! Relationships: pairs `(R, target)` between entities, and the `ChildOf`
//! hierarchy built on them.
//!
//! Design. Flecs puts a pair into an entity's type, so `(ChildOf, ship_7)`
//! and `(ChildOf, ship_8)` are different archetypes; with many targets that
//! becomes the flecs problem of hundreds of thousands of three-entity
//! tables, and with 16 KiB chunks each would cost at least a chunk. doecs
//! keeps pairs out of the archetype instead: each relation type has one
//! `table` of pairs beside the archetypes, one dense row per pair, reached
//! by entity index in both directions (source to targets with the pair
//! values, target to sources).
//! Adding or removing a pair moves no row and makes no archetype, so a
//! thousand ships of thirteen parts stay in the archetypes their components
//! put them in, and iterating the parts costs what it cost without a
//! hierarchy. What this gives up is matching pairs by archetype: a query
//! that needs `(R, target)` asks the table (see `World::sources` and
//! `World::targets`) instead of skipping archetypes.
//!
//! A relation is any `'static` type implementing [`Relation`]; a unit
//! struct is a tag relation, a struct with fields carries data per pair.
//! Its constants choose whether a source may have several targets
//! (`EXCLUSIVE`), whether pairs may form cycles (`ACYCLIC`), and what
//! happens to the sources when a target is despawned
//! ([`Cleanup`]). Despawning any entity, by any path (`despawn`,
//! `despawn_batch`, `take`, command buffers, hooks), removes its pairs both
//! ways and applies each relation's cleanup to the sources pointing at it.
//!
//! [`ChildOf`] is the built-in hierarchy: exclusive, acyclic, and deleting
//! children with their parent, recursively. [`IsA`] links an instance to
//! its prefab (see [`world::prefab`](crate::world::prefab)).
//!
//! This module is the bottom of the relationship code, below the world:
//! the pair tables, the [`Relation`] trait, the built-in relations and the
//! [`Hierarchy`] view. What builds on them lives in the layers above: the
//! world's pair operations and prefab instancing in `world` (`relations`,
//! `add_pairs`, `prefab`), and the relation terms of queries ([`Up`],
//! [`Pairs`], [`OwnOrInherited`], and `Query::for_each_source`) in `query`.
//!
//! [`Up`]: crate::Up
//! [`Pairs`]: crate::Pairs
//! [`OwnOrInherited`]: crate::OwnOrInherited

mod hierarchy;
pub(crate) mod table;

pub use crate::tags::Prefab;
pub(crate) use hierarchy::BatchParents;
pub use hierarchy::{Hierarchy, ParentedBatch, ParentsFirst};
pub use table::{Sources, Targets};

use crate::entity::Entity;
use crate::type_index::TypeIndex;
use std::any::TypeId;
use table::{ErasedRelation, RelationTable};

/// What happens to a pair's source when its target is despawned.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Cleanup {
    /// The source loses the pair and lives on.
    RemovePair,
    /// The source is despawned too (and, through its own relations, what
    /// points at it).
    DespawnSource,
}

/// A relationship type: `(Self, target)` pairs link a source entity to a
/// target entity, carrying a `Self` value each. Relations are `Clone` so
/// that world snapshots carry their pairs.
///
/// ```
/// use doecs::{Cleanup, Relation, World};
/// #[derive(Clone)]
/// struct Likes(u8);
/// impl Relation for Likes {}
/// #[derive(Clone)]
/// struct OwnedBy;
/// impl Relation for OwnedBy {
///     const EXCLUSIVE: bool = true;
///     const ON_TARGET_DESPAWN: Cleanup = Cleanup::DespawnSource;
/// }
///
/// let mut world = World::new();
/// let [alice, bob, sword] = [(), (), ()].map(|()| world.spawn(()));
/// world.add_pair(alice, bob, Likes(3)).unwrap();
/// world.add_pair(sword, alice, OwnedBy).unwrap();
/// assert_eq!(world.pair::<Likes>(alice, bob).map(|l| l.0), Some(3));
/// world.despawn(alice).unwrap();
/// assert!(!world.alive(sword), "owned things go with their owner");
/// assert_eq!(world.sources::<Likes>(bob).next(), None);
/// ```
pub trait Relation: Clone + Send + Sync + 'static {
    /// Whether a source has at most one target: adding a second pair
    /// replaces the first.
    const EXCLUSIVE: bool = false;
    /// Whether pairs must never form a cycle (checked on every add).
    const ACYCLIC: bool = false;
    /// What happens to the sources when a target is despawned.
    const ON_TARGET_DESPAWN: Cleanup = Cleanup::RemovePair;
}

/// The built-in hierarchy: `(ChildOf, parent)` on a child. Exclusive (one
/// parent), acyclic, and despawning a parent despawns its children,
/// recursively.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct ChildOf;

impl Relation for ChildOf {
    const EXCLUSIVE: bool = true;
    const ACYCLIC: bool = true;
    const ON_TARGET_DESPAWN: Cleanup = Cleanup::DespawnSource;
}

/// `(IsA, prefab)` on an instance: it reads the prefab's components it has
/// none of its own for. Exclusive (one prefab per instance; a prefab may be
/// an instance of another), acyclic, and instances go with their prefab.
/// See [`World::instantiate`](crate::World::instantiate).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct IsA;

impl Relation for IsA {
    const EXCLUSIVE: bool = true;
    const ACYCLIC: bool = true;
    const ON_TARGET_DESPAWN: Cleanup = Cleanup::DespawnSource;
}

/// Why a relationship change was refused. A refused change leaves the world
/// as it was.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RelationError {
    /// The source or the target is not alive.
    #[error("entity {0:?} is not alive")]
    NoSuchEntity(Entity),
    /// The pair would close a cycle in an acyclic relation.
    #[error("adding ({relation}, {target:?}) to {subject:?} would close a cycle: {target:?} already reaches {subject:?}")]
    Cycle {
        /// The relation's type name.
        relation: &'static str,
        /// The entity the pair was to be added to.
        subject: Entity,
        /// The pair's target.
        target: Entity,
    },
    /// The pair does not exist.
    #[error("{subject:?} has no pair ({relation}, {target:?})")]
    NoSuchPair {
        /// The relation's type name.
        relation: &'static str,
        /// The entity that lacks the pair.
        subject: Entity,
        /// The pair's target.
        target: Entity,
    },
    /// A batch of parents names a child that has a parent already, or
    /// names it twice.
    #[error("entity {0:?} has a parent already (or appears twice in the batch)")]
    HasParent(Entity),
    /// A batch's parent index points outside the batch.
    #[error("item {item} of the batch names parent {parent}, outside the batch")]
    BatchParentOutOfRange {
        /// The item's index in the batch.
        item: usize,
        /// The bad parent index.
        parent: u32,
    },
    /// Parent indices that were to list every parent before its children
    /// do not.
    #[error("item {item} of the batch names parent {parent}, which does not come before it")]
    ParentNotBefore {
        /// The item's index in the batch.
        item: usize,
        /// Its parent index, not smaller than `item`.
        parent: u32,
    },
    /// A batch's slices differ in length.
    #[error("a batch of {children} children with {parents} parents")]
    BatchLength {
        /// Number of children.
        children: usize,
        /// Number of parent indices.
        parents: usize,
    },
    /// A batch of new pairs names a pair twice, or one that exists.
    #[error("({relation}, {target:?}) on {subject:?} is listed twice, or exists already")]
    DuplicatePair {
        /// The relation's type name.
        relation: &'static str,
        /// The pair's source.
        subject: Entity,
        /// The pair's target.
        target: Entity,
    },
    /// A batch of new pairs gives a source of an exclusive relation a
    /// second target (in the batch, or beside the one it has).
    #[error("{subject:?} already has target {existing:?} in the exclusive relation {relation}, so it cannot also have {target:?}")]
    SecondTarget {
        /// The relation's type name.
        relation: &'static str,
        /// The pair's source.
        subject: Entity,
        /// The target it has (or was given earlier in the batch).
        existing: Entity,
        /// The second target.
        target: Entity,
    },
}

/// Why [`WorldCore::add_pairs`](crate::WorldCore::add_pairs) refused a
/// batch of pairs: the first pair that adding them one by one would have
/// refused, and why. The world is unchanged.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("pair {index}: {error}")]
pub struct PairsError {
    /// The pair's position in the batch.
    pub index: usize,
    /// Why it was refused.
    #[source]
    pub error: RelationError,
}

/// Every relation table of a world, one per relation type used.
///
/// # Invariants
/// `index` maps each relation's `TypeId` to its slot in `tables`, whose
/// table is a `RelationTable` of that type.
#[derive(Default)]
pub struct Relations {
    index: TypeIndex<u32>,
    tables: Vec<Box<dyn ErasedRelation>>,
}

impl std::fmt::Debug for Relations {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_map()
            .entries(self.tables.iter().map(|t| (t.name(), t.len())))
            .finish()
    }
}

impl Relations {
    /// The table of `R`, if `R` was ever used.
    pub(crate) fn table<R: Relation>(&self) -> Option<&RelationTable<R>> {
        let slot = self.index.get(TypeId::of::<R>())?;
        self.tables[slot as usize].as_any().downcast_ref()
    }

    /// The table of `R`, made on first use.
    pub(crate) fn table_mut<R: Relation>(&mut self) -> &mut RelationTable<R> {
        let slot = match self.index.get(TypeId::of::<R>()) {
            Some(slot) => slot,
            None => {
                let slot = self.tables.len() as u32;
                self.tables.push(Box::new(RelationTable::<R>::default()));
                self.index.insert(TypeId::of::<R>(), slot);
                slot
            }
        };
        self.tables[slot as usize]
            .as_any_mut()
            .downcast_mut()
            .expect("keyed by relation type")
    }

    /// Makes these tables a copy of `other`'s, reusing their memory when
    /// both hold the same relations in the same order (a snapshot taken
    /// and restored frame after frame allocates nothing then).
    pub(crate) fn copy_from(&mut self, other: &Relations) {
        let same_tables = self.tables.len() == other.tables.len()
            && self
                .tables
                .iter()
                .zip(&other.tables)
                .all(|(a, b)| a.relation_type() == b.relation_type());
        if same_tables {
            for (to, from) in self.tables.iter_mut().zip(&other.tables) {
                from.copy_into(&mut **to);
            }
        } else {
            self.tables = other.tables.iter().map(|t| t.clone_box()).collect();
            self.index = other.index.clone();
        }
    }

    /// Every pair of `source`, as (relation type name, target), relation by
    /// relation in the order each was first used: for tools that see pairs
    /// without their types, such as the inspector.
    pub fn pairs_from(&self, source: Entity) -> Vec<(&'static str, Entity)> {
        let mut pairs = Vec::new();
        for t in &self.tables {
            t.for_each_target(source, &mut |target| pairs.push((t.name(), target)));
        }
        pairs
    }

    /// Every pair pointing at `target`, as (relation type name, source).
    pub fn pairs_to(&self, target: Entity) -> Vec<(&'static str, Entity)> {
        let mut pairs = Vec::new();
        for t in &self.tables {
            t.for_each_source(target, &mut |source| pairs.push((t.name(), source)));
        }
        pairs
    }

    /// Calls `f` with each target of `source` in the relation whose type
    /// is `relation`, in the order the pairs were added (nothing when that
    /// relation was never used): [`WorldCore::targets`](crate::WorldCore::targets)
    /// for tools that know the relation only by its `TypeId`, without the
    /// allocation of [`Relations::pairs_from`].
    ///
    /// ```
    /// use doecs::{ChildOf, World};
    /// let mut world = World::new();
    /// let (ship, mast) = (world.spawn(()), world.spawn(()));
    /// world.set_parent(mast, ship).unwrap();
    /// let mut targets = Vec::new();
    /// let child_of = std::any::TypeId::of::<ChildOf>();
    /// world.relations().for_each_target_of(child_of, mast, &mut |t| targets.push(t));
    /// assert_eq!(targets, [ship]);
    /// ```
    pub fn for_each_target_of(&self, relation: TypeId, source: Entity, f: &mut dyn FnMut(Entity)) {
        if let Some(slot) = self.index.get(relation) {
            self.tables[slot as usize].for_each_target(source, f);
        }
    }

    /// Every target of each of `sources` in the relation whose type is
    /// `relation`, in one call: for each source in order, its targets (in
    /// the order the pairs were added) are appended to `targets`, then
    /// `targets.len()` is pushed to `ends`. So source `k`'s targets are
    /// `targets[from..ends[k]]`, where `from` is `ends[k - 1]` (for `k = 0`,
    /// the length `targets` had before the call). A source without pairs
    /// (dead, never paired, or the relation never used) has none.
    ///
    /// This is [`Relations::for_each_target_of`] for a whole run of rows
    /// (an archetype's chunk of entities): the relation is looked up once
    /// and its table walks the run in its own loop, where a call per row
    /// costs an indirect call into the table and another back per target.
    /// For tools that join rows with pairs knowing the relation only by its
    /// `TypeId`, such as the inspector's query language. Both vectors are
    /// only appended to, so one pair of buffers serves many calls.
    ///
    /// ```
    /// use doecs::{ChildOf, Relation, World};
    /// #[derive(Clone)]
    /// struct Likes;
    /// impl Relation for Likes {}
    ///
    /// let mut world = World::new();
    /// let [ship, mast, sail] = [(), (), ()].map(|()| world.spawn(()));
    /// world.set_parent(sail, ship).unwrap();
    /// world.add_pair(mast, ship, Likes).unwrap();
    /// world.add_pair(mast, sail, Likes).unwrap();
    /// let (mut ends, mut targets) = (Vec::new(), Vec::new());
    /// let likes = std::any::TypeId::of::<Likes>();
    /// world.relations().targets_of_each(likes, &[ship, mast, sail], &mut ends, &mut targets);
    /// assert_eq!((ends, targets), (vec![0, 2, 2], vec![ship, sail]));
    ///
    /// let (mut ends, mut targets) = (Vec::new(), Vec::new());
    /// let child_of = std::any::TypeId::of::<ChildOf>();
    /// world.relations().targets_of_each(child_of, &[ship, mast, sail], &mut ends, &mut targets);
    /// assert_eq!((ends, targets), (vec![0, 0, 1], vec![ship]));
    /// ```
    pub fn targets_of_each(
        &self,
        relation: TypeId,
        sources: &[Entity],
        ends: &mut Vec<usize>,
        targets: &mut Vec<Entity>,
    ) {
        match self.index.get(relation) {
            Some(slot) => self.tables[slot as usize].targets_of_each(sources, ends, targets),
            None => ends.extend(sources.iter().map(|_| targets.len())),
        }
    }

    /// Calls `f` with each source of a pair of the relation whose type is
    /// `relation` pointing at `target` (nothing when that relation was
    /// never used): [`WorldCore::sources`](crate::WorldCore::sources) by `TypeId`.
    pub fn for_each_source_of(&self, relation: TypeId, target: Entity, f: &mut dyn FnMut(Entity)) {
        if let Some(slot) = self.index.get(relation) {
            self.tables[slot as usize].for_each_source(target, f);
        }
    }

    /// Every pair of the relation whose type is `relation`, as `(source,
    /// target)`, sources in index order and each source's pairs in the
    /// order added (empty when that relation was never used): for tools
    /// that list a relation's pairs without knowing its type, such as the
    /// inspector's list of prefabs (the targets of [`IsA`]). One pass over
    /// the relation's table; nothing else is read.
    ///
    /// ```
    /// use doecs::{IsA, Prefab, World};
    /// let mut world = World::new();
    /// let drone = world.spawn((Prefab,));
    /// let (a, b) = (world.spawn(()), world.spawn(()));
    /// world.add_pair(a, drone, IsA).unwrap();
    /// world.add_pair(b, drone, IsA).unwrap();
    /// let is_a = std::any::TypeId::of::<IsA>();
    /// assert_eq!(world.relations().pairs_of_relation(is_a), [(a, drone), (b, drone)]);
    /// ```
    pub fn pairs_of_relation(&self, relation: TypeId) -> Vec<(Entity, Entity)> {
        match self.index.get(relation) {
            Some(slot) => self.tables[slot as usize].all_pairs(),
            None => Vec::new(),
        }
    }

    /// Each relation that holds pairs: its `TypeId`, type name and number
    /// of pairs, in the order the relations were first used.
    pub fn kinds(&self) -> impl Iterator<Item = (TypeId, &'static str, usize)> + '_ {
        self.tables
            .iter()
            .filter(|t| t.len() > 0)
            .map(|t| (t.relation_type(), t.name(), t.len()))
    }

    /// Whether no pair exists in any relation.
    pub fn is_empty(&self) -> bool {
        self.tables.iter().all(|t| t.len() == 0)
    }

    /// Number of pairs across all relations.
    pub fn len(&self) -> usize {
        self.tables.iter().map(|t| t.len()).sum()
    }

    /// Every table, type-erased.
    pub(crate) fn tables(&self) -> &[Box<dyn ErasedRelation>] {
        &self.tables
    }

    /// Every table, type-erased and mutable.
    pub(crate) fn tables_mut(&mut self) -> &mut [Box<dyn ErasedRelation>] {
        &mut self.tables
    }

    /// Whether some live source despawns with `target` (through a
    /// [`Cleanup::DespawnSource`] relation): one slot read per such table,
    /// so despawning a leaf costs no more than that.
    pub(crate) fn has_dependents(&self, target: Entity) -> bool {
        self.tables
            .iter()
            .any(|t| t.cleanup() == Cleanup::DespawnSource && t.has_sources(target))
    }

    /// Checks every table's invariants.
    pub fn check_invariants(&self, alive: &dyn Fn(Entity) -> bool) {
        for t in &self.tables {
            t.check_invariants(alive);
        }
    }
}
