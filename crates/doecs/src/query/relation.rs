//! Relation terms: query data that follows an entity's pairs.
//!
//! Design. Pairs live in their relation's table beside the archetypes (see
//! the [relation module docs](crate::relation)), so a term that follows
//! them is a join done row by row: the visited row's entity is looked up
//! in the table, and what the term hands out comes from there, or from the
//! row of the entity a pair leads to. Three terms do this, usable wherever
//! query data is (`world.query_mut`, [`QueryState`](super::QueryState), a
//! system's [`Query`] parameter), beside ordinary data and filters:
//!
//! - [`Up<R, Q>`](Up): the item of `Q` on the entity's first target of `R`
//!   ("my parent's `Height`", "my prefab's `Mesh`"). `Q` is read-only
//!   query data, matched against the target's archetype, prefabs
//!   included (an up term reads a prefab as readily as any entity).
//! - [`Pairs<R>`](Pairs): the entity's pairs of `R`, as [`Targets`].
//! - [`OwnOrInherited<T>`](super::OwnOrInherited): the entity's own `T`,
//!   else the `T` its prefab chain gives it (in `inherit`).
//!
//! Whether a term has an item depends on the row, not just the archetype:
//! an entity without a target, whose target lacks `Q`, without pairs of
//! `R`, or neither owning nor inheriting `T`, is not matched, as flecs's
//! and bevy's up terms do (so the data's `EVERY_ROW` is false, and the
//! loops skip such rows). `Option<Up<R, Q>>`, `Option<Pairs<R>>` and
//! `Option<OwnOrInherited<T>>` match every row and give `None` instead. A
//! pair pointing at its own source is not followed by an up term (that
//! entity has no item), which is what keeps the term off the visited row.
//! In the chunk forms a term's slice is a [`TermRows`]: an iterator with
//! one `Option` per row of the chunk.
//!
//! The sources of one given target, `(R, target)`, have no term: which
//! entities pass depends on a target picked at run time, and walking the
//! target's list of sources is faster than testing every row. That is
//! [`Query::for_each_source`]: the query's item of each source of
//! `target`, with the pair's value. [`WorldCore::sources`] lists them
//! without a query.
//!
//! Soundness. An up term reads another entity's row, possibly of the very
//! component its query writes: in `(&mut Height, Up<ChildOf, &Height>)`
//! a child's `Height` is written while its parent's is read, and the
//! parent may sit in the same archetype and be visited in the same loop,
//! written as a row of its own. Four things keep the references apart.
//!
//! 1. Within one item. The term's reads are recorded as *related* reads
//!    ([`Access`](super::Access), module docs), which the aliasing check of
//!    one query lets stand beside a write of the same type; the term never
//!    reads the visited row itself, since the target is another entity
//!    (self-pairs are skipped) and each entity has one row. A term inside
//!    a term (a grandparent) may lead back to the visited entity through
//!    two pairs, so its reads count as the entity's own and refuse the
//!    write.
//! 2. Across items of a callback loop. `for_each` (and `get`, and
//!    [`Query::for_each_source`]) hands each item to a call that takes it
//!    for any lifetime, so it cannot keep it: one item is alive at a time,
//!    and the parent's `&mut Height` of its own row is dead before a
//!    child's item reads it, and the other way round.
//! 3. Across items of the other forms. An iterator's items may be
//!    collected, a chunk's slice of a written column covers rows a term
//!    of the same chunk may read, and a parallel loop writes rows on one
//!    thread that another thread reads as relatives. These forms refuse a
//!    query whose related reads overlap its writes
//!    ([`QueryState::iterable`](super::QueryState::iterable),
//!    [`AliasError::RelatedWrite`](super::AliasError::RelatedWrite)), before
//!    any item exists; [`Query::try_iter`] returns the error. A term that
//!    reads what its query does not write (`(&mut Pos, Up<ChildOf,
//!    &Height>)`) runs in every form, in parallel too: every reference to
//!    `Height` it makes is shared.
//! 4. Against other queries and systems. The related reads are in
//!    [`Access::reads`](super::Access::reads), so a system writing `Height`
//!    conflicts with one reading it through an up term, and the schedule
//!    orders them; and a related read reaches past its query's filter, so
//!    two parameters of one system whose filters keep their entities apart
//!    still conflict through it.
//!
//! The pairs themselves only change through `&mut World`, never while a
//! query borrows the world, so a term reads the relation's table freely;
//! [`Pairs`] records no access at all.

use super::data::{QueryData, ReadOnlyQueryData};
use super::inherit::OwnOrInherited;
use super::{Access, AliasError, Query, QueryFilter};
use crate::component::{Component, Components};
use crate::entity::Entity;
use crate::relation::table::{RelationTable, Targets};
use crate::relation::Relation;
use crate::storage::{Archetype, ArchetypeId};
use crate::tick::ChangeWindow;
use crate::world::WorldCore;
use std::marker::PhantomData;
use std::ptr::NonNull;

/// Traversal up relation `R`: the item of `Q` on the entity's first target
/// of `R`. An entity without a target, with only a pair to itself, or
/// whose target does not match `Q`, is not matched; `Option<Up<R, Q>>`
/// matches it with `None`. See the module docs.
///
/// ```
/// use doecs::{ChildOf, Up, World};
/// #[derive(Clone, Copy, Debug, PartialEq)]
/// struct Height(f32);
///
/// let mut world = World::new();
/// let ship = world.spawn((Height(10.0),));
/// let mast = world.spawn((Height(3.0),));
/// world.set_parent(mast, ship).unwrap();
///
/// // Each child adds its parent's height to its own.
/// world
///     .query_mut::<(&mut Height, Up<ChildOf, &Height>)>()
///     .for_each(|(own, parent)| own.0 += parent.0);
/// assert_eq!(world.get::<Height>(mast), Ok(&Height(13.0)));
/// assert_eq!(world.get::<Height>(ship), Ok(&Height(10.0)));
/// ```
pub struct Up<R, Q>(PhantomData<fn() -> (R, Q)>);

/// The entity's pairs of relation `R`, as an iterator over `(target,
/// &value)` in the order they were added. An entity without a pair of `R`
/// is not matched; `Option<Pairs<R>>` matches it with `None`. See the
/// module docs.
///
/// ```
/// use doecs::{Entity, Pairs, Relation, World};
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
/// // (Likes, *): every entity with pairs, with its targets.
/// world.query_mut::<(&mut Score, Pairs<Likes>)>().for_each(|(score, likes)| {
///     score.0 = likes.map(|(_, l)| l.0 as u32).sum();
/// });
/// assert_eq!(world.get::<Score>(alice), Ok(&Score(5)));
/// assert_eq!(world.get::<Score>(carol), Ok(&Score(0)), "carol likes no one");
///
/// // (Likes, carol): the sources of one target.
/// let mut fans = Vec::new();
/// world
///     .query_mut::<&Score>()
///     .for_each_source::<Likes>(carol, |score, l| fans.push((score.0, l.0)));
/// assert_eq!(fans, [(5, 2), (5, 5)]);
/// ```
pub struct Pairs<R>(PhantomData<fn() -> R>);

/// The rows of one chunk (or run of rows) of a relation term, in the chunk
/// forms (`for_each_chunk`): for each row, the term's item, or `None`
/// where the term does not match it.
pub struct TermRows<'w, D: ReadOnlyQueryData> {
    env: D::Env<'w>,
    fetch: D::Fetch,
    row: usize,
    end: usize,
}

// SAFETY: the rows hand out items of `D`, which only reads, and whose items
// are `Send`; the fetch points at the rows' entities, and the `Env` at the
// world, read through `&WorldCore` (which is `Sync`).
unsafe impl<'w, D: ReadOnlyQueryData> Send for TermRows<'w, D> where D::Item<'w>: Send {}

impl<'w, D: ReadOnlyQueryData> Iterator for TermRows<'w, D> {
    type Item = Option<D::Item<'w>>;

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        if self.row == self.end {
            return None;
        }
        let row = self.row;
        self.row += 1;
        // SAFETY: `slice` made these rows for the live rows `row..end` of
        // the archetype `fetch` was fetched from, in `env`'s world, under
        // the access of the loop it was handed out by; each row goes out
        // once, and its item only reads.
        Some(unsafe { D::try_item(&mut self.env, self.fetch, row) })
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.end - self.row;
        (n, Some(n))
    }
}

impl<D: ReadOnlyQueryData> ExactSizeIterator for TermRows<'_, D> {}

impl<'w, D: ReadOnlyQueryData> TermRows<'w, D> {
    /// The rows `start..start + len`.
    ///
    /// # Safety
    /// As [`QueryData::slice`] for `D`.
    #[inline]
    pub(crate) unsafe fn new(env: D::Env<'w>, fetch: D::Fetch, start: usize, len: usize) -> Self {
        TermRows {
            env,
            fetch,
            row: start,
            end: start + len,
        }
    }
}

/// What an up term needs of the world in one loop: the relation's table,
/// the world (its entity index and archetypes), the target data's own
/// `Env`, and the fetch of `Q` in the archetype it reached last, since
/// targets (parents, prefabs) tend to share an archetype.
pub struct UpEnv<'w, R, Q: QueryData> {
    world: &'w WorldCore,
    table: Option<&'w RelationTable<R>>,
    inner: Q::Env<'w>,
    /// The index of the archetype reached last, and `Q`'s fetch there
    /// (`None`: `Q` does not match it). Fetched while the world is
    /// borrowed for `'w`, so its columns have not moved since.
    last: Option<(usize, Option<Q::Fetch>)>,
}

impl<R, Q: QueryData> Clone for UpEnv<'_, R, Q> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<R, Q: QueryData> Copy for UpEnv<'_, R, Q> {}

impl<'w, R: Relation, Q: QueryData> UpEnv<'w, R, Q> {
    fn new(world: &'w WorldCore, window: ChangeWindow) -> Self {
        UpEnv {
            world,
            table: world.relations.table::<R>(),
            inner: Q::env(world, window),
            last: None,
        }
    }

    /// `source`'s first target's row, with `Q`'s fetch of its archetype;
    /// `None` if `source` has no target, its first target is itself, or the
    /// target's archetype does not match `Q`.
    #[inline]
    fn target(&mut self, source: Entity) -> Option<(Q::Fetch, usize)> {
        let target = self.table?.first_target(source)?;
        if target == source {
            return None;
        }
        let (archetype, row) = self.world.entities.locate(target)?;
        let fetch = match self.last {
            Some((last, fetch)) if last == archetype => fetch,
            _ => {
                let fetch = self.fetch_of(archetype);
                self.last = Some((archetype, fetch));
                fetch
            }
        };
        Some((fetch?, row))
    }

    /// `Q`'s fetch of archetype index `archetype`, if `Q` matches it.
    /// Prefabs are not hidden here: a target may be one.
    #[inline(never)]
    fn fetch_of(&self, archetype: usize) -> Option<Q::Fetch> {
        let arch = self
            .world
            .archetypes()
            .get(ArchetypeId::from_index(archetype));
        let state = Q::match_archetype(arch, self.world.components())?;
        // SAFETY: `state` was just matched on `arch`; fetching only
        // computes addresses.
        Some(unsafe { Q::fetch(arch, state) })
    }
}

// SAFETY: `access` records `Q`'s reads as related reads (a read of a
// related read as an own read), and `Q` writes nothing (it is read-only,
// and `try_add_related` refuses writes besides). `fetch` touches only the
// entity array; the items are `Q`'s items of the target's row, another
// entity's than the visited one (self-pairs are skipped, an entity has one
// row), found through `Q`'s own match of the target's archetype in the
// loop's world. `try_item` gives `Some` exactly where `row_matches` holds.
// `READS_RELATED` is set.
unsafe impl<R: Relation, Q: ReadOnlyQueryData> QueryData for Up<R, Q> {
    type Item<'w> = Q::Item<'w>;
    type Slice<'w> = TermRows<'w, Self>;
    type Fetch = NonNull<Entity>;
    type State = ();
    type Key = Up<R, Q::Key>;
    type Env<'w> = UpEnv<'w, R, Q>;
    type ReadOnly = Self;
    const EVERY_ROW: bool = false;
    const READS_RELATED: bool = true;

    fn access(access: &mut Access) -> Result<(), AliasError> {
        let mut inner = Access::default();
        Q::access(&mut inner)?;
        access.try_add_related(&inner)
    }
    fn match_archetype(_: &Archetype, _: &Components) -> Option<()> {
        Some(())
    }
    #[inline]
    fn env(world: &WorldCore, window: ChangeWindow) -> UpEnv<'_, R, Q> {
        UpEnv::new(world, window)
    }
    #[inline]
    unsafe fn fetch(archetype: &Archetype, _: ()) -> NonNull<Entity> {
        archetype.entities_ptr()
    }
    #[inline]
    unsafe fn item<'w>(env: &mut Self::Env<'w>, fetch: NonNull<Entity>, row: usize) -> Q::Item<'w> {
        // SAFETY: forwarded contract.
        unsafe { Self::try_item(env, fetch, row) }
            .expect("doecs: `item` of a row an up term does not match")
    }
    #[inline]
    unsafe fn try_item<'w>(
        env: &mut Self::Env<'w>,
        fetch: NonNull<Entity>,
        row: usize,
    ) -> Option<Q::Item<'w>> {
        // SAFETY: `row` is live (caller), so its entity slot is initialised.
        let source = unsafe { fetch.add(row).read() };
        let (target_fetch, target_row) = env.target(source)?;
        // SAFETY: `target_row` is the row of a located (so live) entity of
        // the archetype `target_fetch` was fetched from, in `env`'s world,
        // which the loop borrows for `'w`, so neither has moved. `Q` only
        // reads, and the row is not the visited one (the target is another
        // entity). Nothing else writes what `Q` reads: the caller holds the
        // access `access` records, in which `Q`'s reads are reads, and
        // inside this query a write of the same type is of a visited row's
        // own item, which is not alive meanwhile (the caller keeps one item
        // alive at a time where related reads overlap writes; see the
        // module docs).
        unsafe { Q::try_item(&mut env.inner, target_fetch, target_row) }
    }
    #[inline]
    unsafe fn row_matches(env: &mut UpEnv<'_, R, Q>, fetch: NonNull<Entity>, row: usize) -> bool {
        // SAFETY: `row` is live (caller), so its entity slot is initialised.
        let source = unsafe { fetch.add(row).read() };
        match env.target(source) {
            // SAFETY: a live row of the archetype the fetch is of, in
            // `env`'s world, as in `try_item`.
            Some((target_fetch, target_row)) => unsafe {
                Q::row_matches(&mut env.inner, target_fetch, target_row)
            },
            None => false,
        }
    }
    #[inline]
    unsafe fn slice<'w>(
        env: &mut Self::Env<'w>,
        fetch: NonNull<Entity>,
        start: usize,
        len: usize,
    ) -> TermRows<'w, Self> {
        // SAFETY: forwarded contract.
        unsafe { TermRows::new(*env, fetch, start, len) }
    }
}
// SAFETY: only reads (`Q` is read-only).
unsafe impl<R: Relation, Q: ReadOnlyQueryData> ReadOnlyQueryData for Up<R, Q> {}

/// What a pairs term needs of the world in one loop: the relation's table.
pub struct PairsEnv<'w, R>(Option<&'w RelationTable<R>>);

impl<R> Clone for PairsEnv<'_, R> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<R> Copy for PairsEnv<'_, R> {}

// SAFETY: reads no component: only the entity array of the visited
// archetype and the relation's table, which changes only under `&mut World`
// (never while a query borrows the world), so it records no access.
// `try_item` gives `Some` exactly where `row_matches` holds.
unsafe impl<R: Relation> QueryData for Pairs<R> {
    type Item<'w> = Targets<'w, R>;
    type Slice<'w> = TermRows<'w, Self>;
    type Fetch = NonNull<Entity>;
    type State = ();
    type Key = Pairs<R>;
    type Env<'w> = PairsEnv<'w, R>;
    type ReadOnly = Self;
    const EVERY_ROW: bool = false;

    fn access(_: &mut Access) -> Result<(), AliasError> {
        Ok(())
    }
    fn match_archetype(_: &Archetype, _: &Components) -> Option<()> {
        Some(())
    }
    #[inline]
    fn env(world: &WorldCore, _: ChangeWindow) -> PairsEnv<'_, R> {
        PairsEnv(world.relations.table::<R>())
    }
    #[inline]
    unsafe fn fetch(archetype: &Archetype, _: ()) -> NonNull<Entity> {
        archetype.entities_ptr()
    }
    #[inline]
    unsafe fn item<'w>(
        env: &mut Self::Env<'w>,
        fetch: NonNull<Entity>,
        row: usize,
    ) -> Targets<'w, R> {
        // SAFETY: forwarded contract.
        unsafe { Self::try_item(env, fetch, row) }.expect("doecs: `item` of a row without pairs")
    }
    #[inline]
    unsafe fn try_item<'w>(
        env: &mut Self::Env<'w>,
        fetch: NonNull<Entity>,
        row: usize,
    ) -> Option<Targets<'w, R>> {
        // SAFETY: `row` is live (caller), so its entity slot is initialised.
        let source = unsafe { fetch.add(row).read() };
        env.0?.pairs_if_any(source)
    }
    #[inline]
    unsafe fn row_matches(env: &mut PairsEnv<'_, R>, fetch: NonNull<Entity>, row: usize) -> bool {
        // SAFETY: `row` is live (caller), so its entity slot is initialised.
        let source = unsafe { fetch.add(row).read() };
        env.0.is_some_and(|table| table.has_pairs(source))
    }
    #[inline]
    unsafe fn slice<'w>(
        env: &mut Self::Env<'w>,
        fetch: NonNull<Entity>,
        start: usize,
        len: usize,
    ) -> TermRows<'w, Self> {
        // SAFETY: forwarded contract.
        unsafe { TermRows::new(*env, fetch, start, len) }
    }
}
// SAFETY: only reads.
unsafe impl<R: Relation> ReadOnlyQueryData for Pairs<R> {}

/// `Option` of a relation term: every row matches, with the term's item or
/// `None`; access, fetch and slices are the term's.
macro_rules! optional_term {
    ($([$($generics:tt)*] $term:ty;)*) => {$(
        // SAFETY: the term's access, fetch and slices, so its contract; the
        // item is the term's `try_item`, so every row has one.
        unsafe impl<$($generics)*> QueryData for Option<$term> {
            type Item<'w> = Option<<$term as QueryData>::Item<'w>>;
            type Slice<'w> = <$term as QueryData>::Slice<'w>;
            type Fetch = <$term as QueryData>::Fetch;
            type State = <$term as QueryData>::State;
            type Key = Option<<$term as QueryData>::Key>;
            type Env<'w> = <$term as QueryData>::Env<'w>;
            type ReadOnly = Self;
            const READS_RELATED: bool = <$term as QueryData>::READS_RELATED;

            fn access(access: &mut Access) -> Result<(), AliasError> {
                <$term>::access(access)
            }
            fn match_archetype(
                archetype: &Archetype,
                components: &Components,
            ) -> Option<Self::State> {
                <$term>::match_archetype(archetype, components)
            }
            #[inline]
            fn env(world: &WorldCore, window: ChangeWindow) -> Self::Env<'_> {
                <$term>::env(world, window)
            }
            #[inline]
            unsafe fn fetch(archetype: &Archetype, state: Self::State) -> Self::Fetch {
                // SAFETY: forwarded contract.
                unsafe { <$term>::fetch(archetype, state) }
            }
            #[inline]
            unsafe fn item<'w>(
                env: &mut Self::Env<'w>,
                fetch: Self::Fetch,
                row: usize,
            ) -> Self::Item<'w> {
                // SAFETY: forwarded contract (`try_item` takes any live row).
                unsafe { <$term>::try_item(env, fetch, row) }
            }
            #[inline]
            unsafe fn slice<'w>(
                env: &mut Self::Env<'w>,
                fetch: Self::Fetch,
                start: usize,
                len: usize,
            ) -> Self::Slice<'w> {
                // SAFETY: forwarded contract.
                unsafe { <$term>::slice(env, fetch, start, len) }
            }
        }
        // SAFETY: the term only reads.
        unsafe impl<$($generics)*> ReadOnlyQueryData for Option<$term> {}
    )*};
}

optional_term! {
    [R: Relation, Q: ReadOnlyQueryData] Up<R, Q>;
    [R: Relation] Pairs<R>;
    [T: Component] OwnOrInherited<T>;
}

impl<Q: QueryData, F: QueryFilter + 'static> Query<'_, Q, F> {
    /// `(R, target)`: calls `f` with the item of every entity this query
    /// matches that has the pair `(R, target)`, and the pair's value, in
    /// the order of [`WorldCore::sources`]. A callback loop, like
    /// [`Query::for_each`]: it runs any query.
    ///
    /// ```
    /// use doecs::{ChildOf, World};
    /// struct Hp(u32);
    /// let mut world = World::new();
    /// let ship = world.spawn((Hp(0),));
    /// let parts = [1, 2, 3].map(|hp| world.spawn((Hp(hp),)));
    /// for part in parts {
    ///     world.set_parent(part, ship).unwrap();
    /// }
    /// let mut total = 0;
    /// world
    ///     .query_mut::<&Hp>()
    ///     .for_each_source::<ChildOf>(ship, |hp, _| total += hp.0);
    /// assert_eq!(total, 6);
    /// ```
    pub fn for_each_source<R: Relation>(
        &mut self,
        target: Entity,
        mut f: impl FnMut(Q::Item<'_>, &R),
    ) {
        let (world, window) = (self.world, self.window);
        let Some(table) = world.relations.table::<R>() else {
            return;
        };
        let state = self.state();
        for source in table.sources(target) {
            // SAFETY: the constructor's caller vouched for the access for
            // `'w`, and `&mut self` keeps this query's other items away; a
            // target's sources are distinct (table invariant), so each
            // item is handed out once, and it cannot outlive its call of
            // `f`.
            let Ok(item) = (unsafe { state.get_unchecked(world, window, source) }) else {
                continue;
            };
            let value = table
                .value(source, target)
                .expect("a listed source has the pair (table invariant)");
            f(item, value);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::relation::ChildOf;
    use crate::world::World;

    #[derive(Debug, PartialEq)]
    struct Height(u32);
    struct Tag;

    /// Which data decide per row, and which read other rows.
    #[test]
    fn relation_terms_say_they_decide_per_row_and_read_related_rows() {
        type UpH = Up<ChildOf, &'static Height>;
        // Checked when the test compiles.
        type H = &'static Height;
        const { assert!(H::EVERY_ROW && !H::READS_RELATED) };
        const { assert!(!UpH::EVERY_ROW && UpH::READS_RELATED) };
        const { assert!(<Option<UpH>>::EVERY_ROW && <Option<UpH>>::READS_RELATED) };
        const { assert!(!Pairs::<ChildOf>::EVERY_ROW && !Pairs::<ChildOf>::READS_RELATED) };
        const { assert!(!<(&Height, UpH)>::EVERY_ROW && <(&Height, UpH)>::READS_RELATED) };
        const { assert!(<(&Height, Option<UpH>)>::EVERY_ROW) };
    }

    /// Parents spread over archetypes, in an order that defeats the
    /// remembered archetype, some without the data: each child reads its
    /// own parent's value, or is skipped.
    #[test]
    fn up_follows_each_target_into_its_own_archetype() {
        let mut world = World::new();
        let mut parents = Vec::new();
        for i in 0..9u32 {
            let p = match i % 3 {
                0 => world.spawn((Height(i),)),
                1 => world.spawn((Height(i), Tag)),
                _ => world.spawn((Tag,)),
            };
            parents.push(p);
        }
        let mut want = Vec::new();
        for _ in 0..2 {
            for (i, &p) in parents.iter().enumerate() {
                let child = world.spawn((Height(1000),));
                world.set_parent(child, p).unwrap();
                if i % 3 != 2 {
                    want.push((child, i as u32));
                }
            }
        }
        let mut got: Vec<(Entity, u32)> = world
            .query::<(Entity, Up<ChildOf, &Height>)>()
            .iter()
            .map(|(e, h)| (e, h.0))
            .collect();
        got.sort();
        want.sort();
        assert_eq!(got, want);
        assert_eq!(
            world.query::<Up<ChildOf, &Height>>().count(),
            want.len(),
            "`count` asks `row_matches`, which agrees"
        );
    }

    /// A chunk's term rows: one `Option` per row, in row order.
    #[test]
    fn term_rows_cover_every_row_of_the_chunk() {
        let mut world = World::new();
        let parent = world.spawn((Height(7),));
        let kids: Vec<Entity> = (0..5).map(|_| world.spawn((Height(0), Tag))).collect();
        world.set_parent(kids[1], parent).unwrap();
        world.set_parent(kids[3], parent).unwrap();
        let mut seen = Vec::new();
        world
            .query_mut::<(&Tag, Up<ChildOf, &Height>)>()
            .for_each_chunk(|(tags, ups)| {
                assert_eq!(tags.len(), ups.len());
                seen.extend(ups.map(|h| h.map(|h| h.0)));
            });
        assert_eq!(seen, [None, Some(7), None, Some(7), None]);
    }
}
