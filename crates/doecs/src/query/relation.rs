//! Queries over relationship pairs: `(R, *)`, `(R, target)` and traversal
//! up a relation.
//!
//! Design. Pairs live in their relation's table beside the archetypes (see
//! the [relation module docs](crate::relation)), so a pair query is a join: an ordinary held
//! query over the sources, and the table looked up by entity index for each
//! row. [`PairQuery::for_each`] walks the matched archetypes row by row and
//! hands each source that has pairs its item with an iterator over its
//! targets ([`Targets`]); [`PairQuery::for_each_to`] starts from the other
//! end, the target's list of sources, and fetches each source's item by
//! entity. [`UpQuery`] is the traversal up: each source's item beside the
//! item of its first target ("my parent's `Transform`", "my prefab's
//! `Mesh`"), fetched by a second held, read-only query, which sees prefabs.
//!
//! Aliasing. The sources' items are handed out under `&mut World`, each row
//! once, as by [`QueryState::for_each`]. The pair values are only read. An
//! [`UpQuery`]'s target item is read-only and belongs to another entity than
//! the source's item: a pair pointing at its own source is skipped, so the
//! source query may write the very component the target query reads (a
//! child writing its `Transform` from its parent's).

use super::{QueryData, QueryFilter, QueryState, ReadOnlyQueryData};
use crate::component::Component;
use crate::entity::Entity;
use crate::relation::table::Targets;
use crate::relation::Relation;
use crate::tags::Prefab;
use crate::world::WorldCore;
use std::marker::PhantomData;

/// A held query over the sources of relation `R`'s pairs. See the module
/// docs.
///
/// ```
/// use doecs::{Entity, PairQuery, Relation, World};
/// #[derive(Clone)]
/// struct Likes(u8);
/// impl Relation for Likes {}
/// #[derive(Debug, PartialEq)]
/// struct Score(u32);
///
/// let mut world = World::new();
/// let [alice, bob, carol] = [0, 0, 0].map(|s| world.spawn((Score(s),)));
/// world.add_pair(alice, bob, Likes(3)).unwrap();
/// world.add_pair(alice, carol, Likes(2)).unwrap();
/// world.add_pair(bob, carol, Likes(5)).unwrap();
///
/// // (Likes, *): every source with its targets.
/// let mut likes = PairQuery::<Likes, &mut Score>::new(&world);
/// likes.for_each(&mut world, |score, targets| {
///     score.0 = targets.map(|(_, l)| l.0 as u32).sum();
/// });
/// assert_eq!(world.get::<Score>(alice), Ok(&Score(5)));
///
/// // (Likes, carol): the sources of one target.
/// let mut fans = Vec::new();
/// likes.for_each_to(&mut world, carol, |score, l| fans.push((score.0, l.0)));
/// assert_eq!(fans, [(5, 2), (5, 5)]);
/// ```
pub struct PairQuery<R: Relation, Q: QueryData, F: QueryFilter = ()> {
    sources: QueryState<(Entity, Q), F>,
    _relation: PhantomData<fn() -> R>,
}

impl<R: Relation, Q: QueryData, F: QueryFilter> PairQuery<R, Q, F> {
    /// A pair query over `world`.
    ///
    /// # Panics
    /// If `Q` names a component mutably twice, or mutably and immutably.
    pub fn new(world: &WorldCore) -> Self {
        PairQuery {
            sources: QueryState::new(world),
            _relation: PhantomData,
        }
    }

    /// `(R, *)`: calls `f` once for every entity matching `Q` and `F` that
    /// has at least one pair of `R`, with its item and its targets.
    pub fn for_each(
        &mut self,
        world: &mut WorldCore,
        mut f: impl FnMut(Q::Item<'_>, Targets<'_, R>),
    ) {
        let window = self.sources.write_window(world);
        let world: &WorldCore = world;
        let Some(table) = world.relations.table::<R>() else {
            return;
        };
        // SAFETY: `&mut WorldCore` gives this query exclusive access to what
        // `Q` writes; the table is only read.
        unsafe {
            self.sources
                .for_each_unchecked(world, window, |(source, item)| {
                    if table.has_pairs(source) {
                        f(item, table.pairs_of(source));
                    }
                })
        }
    }

    /// `(R, target)`: calls `f` for every entity matching `Q` and `F` with
    /// a pair `(R, target)`, with its item and the pair's value, in the
    /// order of [`WorldCore::sources`].
    pub fn for_each_to(
        &mut self,
        world: &mut WorldCore,
        target: Entity,
        mut f: impl FnMut(Q::Item<'_>, &R),
    ) {
        let window = self.sources.write_window(world);
        let world: &WorldCore = world;
        let Some(table) = world.relations.table::<R>() else {
            return;
        };
        for source in table.sources(target) {
            // SAFETY: `&mut WorldCore` gives exclusive access; a target's
            // sources are distinct (table invariant), so each item is
            // handed out once.
            let Ok((_, item)) = (unsafe { self.sources.get_unchecked(world, window, source) })
            else {
                continue;
            };
            let value = table
                .value(source, target)
                .expect("a listed source has the pair (table invariant)");
            f(item, value);
        }
    }
}

/// Traversal up relation `R`: each source matching `Q` and `F`, beside the
/// item `P` of its (first) target. See the module docs.
///
/// ```
/// use doecs::{UpQuery, ChildOf, World};
/// #[derive(Clone, Copy, Debug, PartialEq)]
/// struct Height(f32);
///
/// let mut world = World::new();
/// let ship = world.spawn((Height(10.0),));
/// let mast = world.spawn((Height(3.0),));
/// world.set_parent(mast, ship).unwrap();
///
/// // Each child adds its parent's height to its own.
/// let mut up = UpQuery::<ChildOf, &mut Height, &Height>::new(&world);
/// up.for_each(&mut world, |own, parent| own.0 += parent.0);
/// assert_eq!(world.get::<Height>(mast), Ok(&Height(13.0)));
/// assert_eq!(world.get::<Height>(ship), Ok(&Height(10.0)));
/// ```
pub struct UpQuery<R: Relation, Q: QueryData, P: ReadOnlyQueryData, F: QueryFilter = ()> {
    sources: QueryState<(Entity, Q), F>,
    /// Targets are often prefabs (up `IsA`): naming `Prefab` lets the
    /// target query see them.
    up: QueryState<(P, Option<&'static Prefab>)>,
    _relation: PhantomData<fn() -> R>,
}

impl<R: Relation, Q: QueryData, P: ReadOnlyQueryData, F: QueryFilter> UpQuery<R, Q, P, F> {
    /// An up-traversal query over `world`.
    ///
    /// # Panics
    /// If `Q` or `P` names a component mutably twice, or mutably and
    /// immutably.
    pub fn new(world: &WorldCore) -> Self {
        UpQuery {
            sources: QueryState::new(world),
            up: QueryState::new(world),
            _relation: PhantomData,
        }
    }

    /// Calls `f` for every entity matching `Q` and `F` whose first target of
    /// `R` is another entity matching `P`, with both items. Sources without
    /// a pair, or whose target lacks `P`, are skipped.
    pub fn for_each(&mut self, world: &mut WorldCore, mut f: impl FnMut(Q::Item<'_>, P::Item<'_>)) {
        let window = self.sources.write_window(world);
        let world: &WorldCore = world;
        let Some(table) = world.relations.table::<R>() else {
            return;
        };
        let up = &mut self.up;
        // SAFETY: `&mut WorldCore` gives this query exclusive access to what
        // `Q` writes. `P` only reads, and only rows of targets other than
        // the source whose item is alive meanwhile (self-pairs are skipped),
        // so no item of `Q` aliases the item of `P` handed out beside it.
        unsafe {
            self.sources
                .for_each_unchecked(world, window, |(source, item)| {
                    let Some(target) = table.first_target(source) else {
                        return;
                    };
                    if target == source {
                        return;
                    }
                    if let Ok((above, _)) = up.get_unchecked(world, window, target) {
                        f(item, above);
                    }
                })
        }
    }
}

/// The own-or-inherited term: each entity matching `Q` and `F` with its
/// own `T`, or, where it has none, the `T` its prefab chain (up `IsA`,
/// nearest first) gives it, the same value [`WorldCore::get`] reads.
/// Entities with neither are skipped; prefabs themselves are not visited
/// (they are hidden from `Q`'s query). The body sees one `&T` for both, so
/// instances read shared prefab data as their own without a copy.
///
/// Owned values come from the matched archetypes' columns; inherited ones
/// are looked up per entity through its `IsA` pair, so a world of many
/// instances pays one lookup for each row that inherits.
///
/// ```
/// use doecs::{InheritQuery, IsA, Prefab, World};
/// #[derive(Debug, PartialEq)]
/// struct Mesh(&'static str);
/// struct Pos(f32);
///
/// let mut world = World::new();
/// let crate_prefab = world.spawn((Prefab, Mesh("crate")));
/// let plain = world.spawn((Pos(0.0),));
/// let shared = world.spawn((Pos(1.0),));
/// world.add_pair(shared, crate_prefab, IsA).unwrap();
/// let own = world.spawn((Pos(2.0), Mesh("barrel")));
/// world.add_pair(own, crate_prefab, IsA).unwrap();
///
/// let mut q = InheritQuery::<&Pos, Mesh>::new(&world);
/// let mut seen = Vec::new();
/// q.for_each(&mut world, |pos, mesh| seen.push((pos.0, mesh.0)));
/// seen.sort_by(|a, b| a.0.total_cmp(&b.0));
/// assert_eq!(seen, [(1.0, "crate"), (2.0, "barrel")]);
/// # let _ = plain;
/// ```
pub struct InheritQuery<Q: QueryData, T: Component, F: QueryFilter = ()> {
    sources: QueryState<(Entity, Q, Option<&'static T>), F>,
}

impl<Q: QueryData, T: Component, F: QueryFilter> InheritQuery<Q, T, F> {
    /// An own-or-inherited query over `world`.
    ///
    /// # Panics
    /// If `Q` names a component mutably twice, or mutably and immutably,
    /// `T` included (the term reads `T`).
    pub fn new(world: &WorldCore) -> Self {
        InheritQuery {
            sources: QueryState::new(world),
        }
    }

    /// Calls `f` for every entity matching `Q` and `F` that owns or
    /// inherits a `T`, with its item and that `T`.
    pub fn for_each(&mut self, world: &mut WorldCore, mut f: impl FnMut(Q::Item<'_>, &T)) {
        let window = self.sources.write_window(world);
        let world: &WorldCore = world;
        // SAFETY: `&mut WorldCore` gives this query exclusive access to what
        // `Q` writes. `Q` does not name `T` (the access check in `new`
        // refuses it), so the inherited `T`, read from another entity's row,
        // aliases no item of `Q`.
        unsafe {
            self.sources
                .for_each_unchecked(world, window, |(source, item, own)| {
                    let value = match own {
                        Some(own) => own,
                        None => match world.get::<T>(source) {
                            Ok(inherited) => inherited,
                            Err(_) => return,
                        },
                    };
                    f(item, value);
                })
        }
    }
}
