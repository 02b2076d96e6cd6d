//! Query state: the cached list of matching archetypes, and the loops over it.
//!
//! A [`QueryState`] remembers which archetypes match and the columns it uses
//! in each. Archetypes are only ever added to a world, so the cache updates
//! incrementally: each use checks just the archetypes created since the last
//! one. A per-archetype slot table makes `get(entity)` O(1). The cache
//! belongs to one world; used with another, it starts over for that world.
//!
//! The loops live in `loops` (and the lazy iterator in `iter`). A query
//! without change filters visits every row of its archetypes; one with them
//! skips chunks and rows outside its change window. Either way a loop that
//! hands out `&mut T` stamps the rows it hands out as changed.
//!
//! The window: a system's query reads through its system's window (see
//! [`crate::tick`]). Used directly on a world, a query with a change filter
//! sees what changed since its own previous use (its first use sees
//! everything), and one without stamps its writes with the world's current
//! tick.

use super::access::{Access, AliasError, FilteredAccess, QueryError};
use super::data::QueryData;
use super::filter::QueryFilter;
use crate::storage::{ArchetypeId, LayoutStamp, WriteStamps};
use crate::tick::{ChangeWindow, Tick};
use crate::world::{WorldCore, WorldId};
use std::any::{Any, TypeId};
use std::marker::PhantomData;

pub use crate::world::query_caches::QueryCaches;

/// One matched archetype: its id, and what `Q` and `F` found there.
pub type Matched<Q, F> = (
    ArchetypeId,
    (<Q as QueryData>::State, <F as QueryFilter>::State),
);

/// The `'static` part of a query's state: matched archetypes and their
/// columns, and the tick of its last use outside a schedule.
///
/// # Invariants
/// - `matched[k].1` is what `match_archetype` and `filter_state` returned for
///   `matched[k].0`, in the world `world`, and the filter passed it.
/// - `slot_of[a] == Some(k)` iff `matched[k].0 == a`; `slot_of.len() == seen`.
/// - `plan` is empty or was fetched from `matched` (see [`FetchPlan`]).
pub(crate) struct QueryCache<S, P> {
    world: WorldId,
    seen: usize,
    pub(crate) matched: Vec<(ArchetypeId, S)>,
    slot_of: Vec<Option<u32>>,
    plan: FetchPlan<P>,
    /// The end of the window of this query's last use outside a schedule.
    pub(crate) last_run: Tick,
    /// Whether row stamps for the filter's components were asked for.
    tracking_requested: bool,
    /// The world's hidden-tag set version the matches were made under.
    hidden_version: u64,
    /// How many storage marks (immutable, sparse) the world's components
    /// had when the query last checked that it writes no immutable
    /// component and reaches no sparse one through a column term.
    marks_seen: u32,
}

impl<S, P> QueryCache<S, P> {
    pub(crate) fn new(world: WorldId) -> Self {
        QueryCache {
            world,
            seen: 0,
            matched: Vec::new(),
            slot_of: Vec::new(),
            plan: FetchPlan {
                entries: Vec::new(),
                stamps: WriteStamps::default(),
                stamp: None,
            },
            last_run: Tick::ZERO,
            tracking_requested: false,
            hidden_version: 0,
            marks_seen: 0,
        }
    }
}

/// The cache of query shape `(Q, F)`.
pub(crate) type CacheOf<Q, F> = QueryCache<
    (<Q as QueryData>::State, <F as QueryFilter>::State),
    (<Q as QueryData>::Fetch, <F as QueryFilter>::Fetch),
>;

/// One matched archetype with rows, fetched: the query's and the filter's
/// pointers to its columns, its row count and its rows per chunk.
#[derive(Copy, Clone)]
pub(crate) struct Fetched<P> {
    pub(crate) fetch: P,
    pub(crate) len: usize,
    pub(crate) chunk_rows: usize,
}

/// One planned archetype of query shape `(Q, F)`.
pub(crate) type FetchedOf<Q, F> = Fetched<(<Q as QueryData>::Fetch, <F as QueryFilter>::Fetch)>;

/// The fetches of a query's matched archetypes that have rows, kept across
/// uses so a loop over many small archetypes does not look each one up
/// again (Sander Mertens's cached queries in flecs keep their tables the
/// same way).
///
/// # Invariants
/// If `stamp` is `Some(s)`, `entries` holds, in `matched` order, one
/// [`Fetched`] per matched archetype with rows, as `Q::fetch`, `F::fetch`,
/// `len` and `chunk_rows` returned them when the world's archetype layout
/// stamp was `s`. While the world's stamp still equals `s`, no archetype has
/// been changed or created since (see [`LayoutStamp`]), so the pointers
/// address the columns and ticks as they are now and the lengths are
/// current.
///
/// `stamps` is empty unless the query's filter is dense (passes every row);
/// then it holds, gathered by [`QueryData::written_ticks`] when `entries`
/// was, the change stamps of every row of every entry's written columns.
/// Like the fetches, they are current while the layout stamp is.
pub(crate) struct FetchPlan<P> {
    entries: Vec<Fetched<P>>,
    stamps: WriteStamps,
    stamp: Option<LayoutStamp>,
}

// SAFETY: a plan holds addresses, not access: its pointers are only
// dereferenced by a loop that holds the query's access to the world they
// came from (checked through the stamp), on whichever thread the loop runs,
// exactly as freshly fetched pointers would be.
unsafe impl<P> Send for FetchPlan<P> {}
// SAFETY: as above; `&FetchPlan` allows no access through its pointers.
unsafe impl<P> Sync for FetchPlan<P> {}

/// What makes a [`QueryCaches`] slot a query cache: the world layer keeps
/// the slots type-erased (`world/query_caches.rs`), and these methods are
/// the only ones that put a cache in or take one out.
impl QueryCaches {
    /// Whether shape `(Q, F)` has been used here before.
    pub(crate) fn contains<Q: QueryData, F: QueryFilter + 'static>(&self) -> bool {
        self.index.get(Self::key::<Q, F>()).is_some()
    }

    /// The key of shape `(Q, F)`: its `'static` stand-in, together with the
    /// type of its cache. A slot is found only under its own cache's type, so
    /// the slot under a key holds exactly that type, whatever `Q::Key` is.
    #[inline(always)]
    fn key<Q: QueryData, F: QueryFilter + 'static>() -> TypeId {
        TypeId::of::<(Q::Key, F, CacheOf<Q, F>)>()
    }

    /// The state of shape `(Q, F)`, made on first use.
    ///
    /// # Panics
    /// As [`QueryState::new`], on first use.
    #[inline]
    pub(crate) fn state<Q: QueryData, F: QueryFilter + 'static>(
        &mut self,
        world: WorldId,
    ) -> &mut QueryState<Q, F> {
        let key = Self::key::<Q, F>();
        let slot = match self.index.get(key) {
            Some(slot) => slot,
            None => {
                let slot = self.slots.len() as u32;
                self.slots
                    .push(Box::new(QueryState::<Q, F>::new_cache(world)));
                self.index.insert(key, slot);
                slot
            }
        };
        let cache: *mut (dyn Any + Send + Sync) = &mut *self.slots[slot as usize];
        // SAFETY: the slot under `key` was made as a `CacheOf<Q, F>`, a type
        // `key` names (see `QueryCaches::key`), so the box holds one; the
        // cast keeps the box's address and the `&mut self` borrow.
        QueryState::from_cache_mut(unsafe { &mut *cache.cast::<CacheOf<Q, F>>() })
    }
}

/// Marker of a query's shape; `fn() -> ..` keeps `QueryState` `Send + Sync`.
type QueryShape<Q, F> = fn() -> (<Q as QueryData>::Key, F);

/// A typed query with cached matching, held across uses. `Q` is what it
/// fetches, `F` a filter.
///
/// ```
/// use doecs::{QueryState, With, World};
/// struct Pos(f32);
/// struct Vel(f32);
/// struct Frozen;
///
/// let mut world = World::new();
/// world.spawn((Pos(0.0), Vel(1.0)));
/// world.spawn((Pos(0.0), Vel(1.0), Frozen));
/// let mut moving = QueryState::<(&mut Pos, &Vel), doecs::Without<Frozen>>::new(&world);
/// moving.for_each(&mut world, |(p, v)| p.0 += v.0);
/// let mut frozen = QueryState::<&Pos, With<Frozen>>::new(&world);
/// assert_eq!(frozen.iter(&world).map(|p| p.0).sum::<f32>(), 0.0);
/// ```
///
/// `repr(transparent)` over its cache: a cache kept elsewhere (in a world's or
/// a system's query caches) is used as a `QueryState` in place.
#[repr(transparent)]
pub struct QueryState<Q: QueryData, F: QueryFilter = ()> {
    pub(crate) cache: CacheOf<Q, F>,
    _marker: PhantomData<QueryShape<Q, F>>,
}

impl<Q: QueryData, F: QueryFilter> QueryState<Q, F> {
    /// A query over `world`.
    ///
    /// # Panics
    /// If `Q` names a component mutably twice, or mutably and immutably,
    /// or writes a component `world` registered immutable (see
    /// [`QueryState::try_new`]).
    pub fn new(world: &WorldCore) -> Self {
        match Self::try_new(world) {
            Ok(state) => state,
            Err(e) => panic!("doecs: {e}"),
        }
    }

    /// A query over `world`, or why it cannot be one.
    ///
    /// # Errors
    /// [`QueryError::Alias`] if `Q` names a component mutably twice, or
    /// mutably and immutably; [`QueryError::Immutable`] if `Q` writes
    /// (`&mut T`, `Mut<T>`, `Option<&mut T>`, a derived field of these) a
    /// component `world` registered immutable
    /// ([`WorldCore::register_immutable`]). Every use of the state checks
    /// again if more components have been registered immutable since, and
    /// panics then.
    ///
    /// ```
    /// use doecs::{QueryError, QueryState, World};
    /// struct Level(u32);
    /// let mut world = World::new();
    /// world.register_immutable::<Level>();
    /// assert!(QueryState::<&Level>::try_new(&world).is_ok());
    /// assert!(matches!(
    ///     QueryState::<&mut Level>::try_new(&world),
    ///     Err(QueryError::Immutable(_))
    /// ));
    /// ```
    pub fn try_new(world: &WorldCore) -> Result<Self, QueryError> {
        Self::try_access()?;
        Self::check_world(world)?;
        let mut q = QueryState {
            cache: QueryCache::new(world.id()),
            _marker: PhantomData,
        };
        q.update(world);
        Ok(q)
    }

    /// Whether `world` allows this query's terms: none writes a component
    /// registered immutable ([`QueryError::Immutable`]), and none reaches
    /// a sparse one other than through a sparse term
    /// ([`QueryError::SparseTerm`]). Schedules run this before every run
    /// of a system with such a query, so a refusal is an error there, not
    /// a panic at the first fetch.
    pub(crate) fn check_world(world: &WorldCore) -> Result<(), QueryError> {
        if let Some(key) = Self::access().immutable_write(world.components()) {
            return Err(QueryError::Immutable(key.name));
        }
        match Self::sparse_as_column(world.components()) {
            Some(name) => Err(QueryError::SparseTerm(name)),
            None => Ok(()),
        }
    }

    /// A component `components` stores sparse that the query names
    /// through a column term, `Has`, or an archetype filter (`With`,
    /// `Without`, `Changed`, `Or`, ...), which would never see it (see
    /// [`QueryError::SparseTerm`]).
    fn sparse_as_column(components: &crate::component::Components) -> Option<&'static str> {
        if components.sparse_count() == 0 {
            return None;
        }
        if let Some(key) = Self::access().sparse_as_column(components) {
            return Some(key.name);
        }
        // Types named without a read (`Has<T>`) and every type a filter
        // looks at, `Or` branches included: none of them sees a sparse set.
        let mut named = Vec::new();
        Q::named(&mut named);
        F::named(&mut named);
        for type_id in named {
            if components.is_sparse_type(type_id) {
                let id = components.by_type_id(type_id)?;
                return Some(
                    components
                        .info(id)
                        .type_name()
                        .unwrap_or("a sparse component"),
                );
            }
        }
        None
    }

    /// A cache used in place as the state of this shape.
    #[inline]
    pub(crate) fn from_cache_mut(cache: &mut CacheOf<Q, F>) -> &mut Self {
        // SAFETY: `QueryState` is `repr(transparent)` over its cache (the
        // marker is a zero-sized, 1-aligned `PhantomData`), so the two have
        // the same layout; the borrow is carried over unchanged.
        unsafe { &mut *std::ptr::from_mut(cache).cast::<Self>() }
    }

    pub(crate) fn new_cache(world: WorldId) -> CacheOf<Q, F> {
        Self::access();
        QueryCache::new(world)
    }

    /// What the query reads and writes, the change ticks its filter reads
    /// included.
    ///
    /// # Panics
    /// As [`QueryState::new`].
    pub fn access() -> Access {
        match Self::try_access() {
            Ok(access) => access,
            Err(e) => panic!("doecs: {e}"),
        }
    }

    /// What the query reads and writes, or why it would alias.
    pub fn try_access() -> Result<Access, AliasError> {
        let mut access = Access::default();
        Q::access(&mut access)?;
        F::filter_reads(&mut access);
        Ok(access)
    }

    /// Whether the query may run in its iterator, chunk and parallel forms.
    /// Every query may, except one whose relation term reads a component
    /// type the query also writes, like `(&mut Height, Up<ChildOf,
    /// &Height>)`: a parent may be a visited row too, so two items alive
    /// together (collected from an iterator, a chunk's slices, two threads'
    /// rows) could hold its `Height` mutably and shared. Such a query runs
    /// in its callback loops, `for_each` and `get`, whose items never
    /// outlive their call.
    ///
    /// # Errors
    /// [`AliasError::RelatedWrite`] naming the overlapping type, or the
    /// query's own aliasing error.
    ///
    /// ```
    /// use doecs::{AliasError, ChildOf, QueryState, Up};
    /// struct Height(f32);
    /// assert!(QueryState::<(&mut Height, Up<ChildOf, &u8>)>::iterable().is_ok());
    /// assert!(matches!(
    ///     QueryState::<(&mut Height, Up<ChildOf, &Height>)>::iterable(),
    ///     Err(AliasError::RelatedWrite(_))
    /// ));
    /// ```
    pub fn iterable() -> Result<(), AliasError> {
        if !Q::READS_RELATED {
            return Ok(());
        }
        match Self::try_access()?.related_overlap() {
            Some(key) => Err(AliasError::RelatedWrite(key)),
            None => Ok(()),
        }
    }

    /// Panics unless [`QueryState::iterable`]: the check every iterator,
    /// chunk and parallel form makes first. Free for queries without a
    /// relation term.
    #[inline(always)]
    pub(crate) fn assert_iterable() {
        if Q::READS_RELATED {
            if let Err(e) = Self::iterable() {
                panic!("doecs: {e}");
            }
        }
    }

    /// What the query reads and writes, with the component types its
    /// entities must have and must lack.
    pub fn filtered_access() -> Result<FilteredAccess, AliasError> {
        let mut filtered = FilteredAccess {
            access: Self::try_access()?,
            ..FilteredAccess::default()
        };
        Q::required(&mut filtered.with);
        F::filter_access(&mut filtered);
        Ok(filtered)
    }

    /// Whether the query names the tag `tag`: fetches it (also as an
    /// `Option`) or filters `With<Tag>`. Only such a query sees entities
    /// with a tag the world hides by default ([`HiddenTags`]:
    /// [`Prefab`](crate::Prefab), [`Disabled`](crate::Disabled)). Reading
    /// the tag on a related entity (`Up<IsA, &Prefab>`) does not count:
    /// the tagged entity is the relative, not the visited one.
    ///
    /// [`HiddenTags`]: crate::HiddenTags
    pub fn asks_for(tag: TypeId) -> bool {
        let mut named = Vec::new();
        Q::named(&mut named);
        named.contains(&tag)
            || Self::filtered_access().is_ok_and(|f| {
                f.with.contains(&tag) || f.access.own_reads().iter().any(|k| k.type_id == tag)
            })
    }

    /// The Rust types whose row stamps the filter (and data such as
    /// [`Ref`](super::Ref)) needs.
    pub fn tracked() -> Vec<TypeId> {
        let mut types = Vec::new();
        F::tracked(&mut types);
        Q::tracked(&mut types);
        types
    }

    /// Whether the query reads changes (a change filter, or data such as
    /// [`Ref`](super::Ref)): it needs row stamps, and outside a schedule
    /// it sees what changed since its own previous use.
    const NEEDS_TRACKING: bool = !F::DENSE || Q::TRACKS;

    /// Learns about archetypes created since the last update. Used with
    /// another world than before, it forgets the old world's archetypes and
    /// matches the new world's from scratch. A query with change filters asks
    /// the world, on its first update there, to keep row stamps for what it
    /// watches (see [`Changed`](crate::Changed)).
    ///
    /// # Panics
    /// If the query writes a component the world has registered immutable
    /// since the state last looked ([`QueryError::Immutable`]).
    #[inline]
    pub fn update(&mut self, world: &WorldCore) {
        let cache = &self.cache;
        let current = cache.world == world.id()
            && (!Self::NEEDS_TRACKING || cache.tracking_requested)
            && cache.seen == world.archetypes().len()
            && cache.hidden_version == world.hidden.version()
            && cache.marks_seen == world.components().marks();
        if !current {
            self.learn_archetypes(world);
        }
    }

    /// The slow path of [`QueryState::update`]: something to learn.
    #[cold]
    #[inline(never)]
    fn learn_archetypes(&mut self, world: &WorldCore) {
        let cache = &mut self.cache;
        if cache.world != world.id() {
            *cache = QueryCache::new(world.id());
        }
        if cache.hidden_version != world.hidden.version() {
            // The hidden tags changed: match every archetype again.
            cache.seen = 0;
            cache.matched.clear();
            cache.slot_of.clear();
            cache.plan.stamp = None;
            cache.hidden_version = world.hidden.version();
        }
        let marks = world.components().marks();
        if cache.marks_seen != marks {
            // More components became immutable or sparse since the last
            // look: this query must not write an immutable one, and must
            // reach sparse ones through sparse terms.
            if let Err(refusal) = Self::check_world(world) {
                panic!("doecs: {refusal}");
            }
            cache.marks_seen = marks;
        }
        if Self::NEEDS_TRACKING && !cache.tracking_requested {
            world.request_tracking(&Self::tracked());
            cache.tracking_requested = true;
        }
        let archetypes = world.archetypes();
        if cache.seen == archetypes.len() {
            return;
        }
        // Entities with a hidden tag stay out of queries that do not ask
        // for it (few tags, and only archetypes new to this query).
        let hidden: Vec<crate::component::ComponentId> = world
            .hidden
            .types()
            .iter()
            .filter(|&&tag| !Self::asks_for(tag))
            .filter_map(|&tag| world.components().by_type_id(tag))
            .collect();
        for arch in archetypes.since(cache.seen) {
            let visible = hidden.iter().all(|&tag| !arch.has(tag));
            let slot = if visible && F::matches(arch, world.components()) {
                Q::match_archetype(arch, world.components()).map(|state| {
                    let filter = F::filter_state(arch, world.components());
                    cache.matched.push((arch.id(), (state, filter)));
                    (cache.matched.len() - 1) as u32
                })
            } else {
                None
            };
            cache.slot_of.push(slot);
        }
        cache.seen = archetypes.len();
    }

    /// The fetched columns of every matched archetype that has rows, in
    /// match order, with the change stamps of every row they cover (empty
    /// unless `F::DENSE`; see [`FetchPlan`]). They are fetched again only
    /// when the world's archetype layout changed since the last call;
    /// otherwise this costs one compare.
    #[inline]
    pub(crate) fn planned(&mut self, world: &WorldCore) -> (&[FetchedOf<Q, F>], &WriteStamps) {
        self.update(world);
        let archetypes = world.archetypes();
        let stamp = archetypes.layout_stamp();
        let plan = &mut self.cache.plan;
        if plan.stamp != Some(stamp) {
            plan.entries.clear();
            plan.stamps.clear();
            for &(id, (state, filter)) in &self.cache.matched {
                let arch = archetypes.get(id);
                if arch.is_empty() {
                    continue;
                }
                // SAFETY: the states were matched on `arch` (cache
                // invariant); fetching only computes addresses.
                let fetch = unsafe { (Q::fetch(arch, state), F::fetch(arch, filter)) };
                if F::DENSE {
                    Q::written_ticks(fetch.0, &mut |ticks| {
                        // SAFETY: the archetype's rows `0..len` are live.
                        unsafe { plan.stamps.push_rows(ticks, arch.len()) }
                    });
                }
                plan.entries.push(Fetched {
                    fetch,
                    len: arch.len(),
                    chunk_rows: arch.chunk_rows(),
                });
            }
            plan.stamp = Some(stamp);
        }
        (&plan.entries, &plan.stamps)
    }

    /// The slot of archetype index `archetype` in `matched`, if it matches.
    #[inline]
    pub(crate) fn slot_of(&self, archetype: usize) -> Option<usize> {
        match self.cache.slot_of.get(archetype) {
            Some(&Some(k)) => Some(k as usize),
            _ => None,
        }
    }

    /// Number of archetypes that match.
    pub fn matched_archetypes(&self) -> usize {
        self.cache.matched.len()
    }

    /// Number of archetypes that match, were the state updated now (for
    /// debug checks: the state is current when this equals
    /// [`QueryState::matched_archetypes`] and it has seen every archetype).
    pub(crate) fn matched_archetypes_current(&self, world: &WorldCore) -> usize {
        if self.cache.world == world.id() && self.cache.seen == world.archetypes().len() {
            self.cache.matched.len()
        } else {
            usize::MAX
        }
    }

    /// The window of a use outside any schedule: a query with change
    /// filters reads since its previous use, and moves the world's clock on
    /// (see [`crate::tick`]); one without needs only the tick to stamp
    /// writes with.
    pub(crate) fn direct_window(&mut self, world: &WorldCore) -> ChangeWindow {
        if !Self::NEEDS_TRACKING {
            ChangeWindow {
                last_run: self.cache.last_run,
                this_run: world.change_tick(),
            }
        } else {
            let window = world.reader_window(self.cache.last_run);
            self.cache.last_run = window.this_run;
            window
        }
    }

    /// The window of a use through `&mut` to the world: as
    /// [`QueryState::direct_window`], after carrying out row-stamp requests.
    pub(crate) fn write_window(&mut self, world: &mut WorldCore) -> ChangeWindow {
        self.update(world);
        world.write_tick();
        self.direct_window(world)
    }

    /// Number of entities that match (for change filters: that changed
    /// since the last use, which this counts as).
    pub fn count(&mut self, world: &WorldCore) -> usize {
        self.update(world);
        let window = self.direct_window(world);
        // SAFETY: `&WorldCore` keeps writers away.
        unsafe { self.count_in(world, window) }
    }

    /// Number of entities that pass in `window`.
    ///
    /// # Safety
    /// The caller must hold the filter's read access (no writer of what a
    /// change filter watches may run meanwhile).
    pub(crate) unsafe fn count_in(&mut self, world: &WorldCore, window: ChangeWindow) -> usize {
        self.update(world);
        // SAFETY: forwarded contract; just updated.
        unsafe { self.count_matched(world, window) }
    }

    /// The entities that pass in `window`, in iteration order, into `out`
    /// (from the archetypes matched so far).
    ///
    /// # Safety
    /// As [`QueryState::count_in`].
    pub(crate) unsafe fn entities_matched(
        &self,
        world: &WorldCore,
        window: ChangeWindow,
        out: &mut Vec<crate::entity::Entity>,
    ) {
        // SAFETY: forwarded contract.
        unsafe {
            self.visit_passing(world, window, |arch, a, b, matches| {
                let entities = &arch.entities()[a..b];
                for (row, &entity) in (a..b).zip(entities) {
                    if Q::EVERY_ROW || matches(row) {
                        out.push(entity);
                    }
                }
            })
        }
    }

    /// Calls `visit(archetype, a, b, matches)` for each run of rows `a..b`
    /// that passes the filter in `window`, archetype by archetype in match
    /// order; `matches(row)` says whether a row has an item (always, with
    /// `Q::EVERY_ROW`).
    ///
    /// # Safety
    /// As [`QueryState::count_in`]; the state must be current.
    unsafe fn visit_passing(
        &self,
        world: &WorldCore,
        window: ChangeWindow,
        mut visit: impl FnMut(&crate::storage::Archetype, usize, usize, &mut dyn FnMut(usize) -> bool),
    ) {
        let archetypes = world.archetypes();
        let mut env = Q::env(world, window);
        for &(id, (state, filter)) in &self.cache.matched {
            let arch = archetypes.get(id);
            // SAFETY: the states were made for `arch`, whose rows `0..len`
            // are live, and `env` is of its world; the caller holds the
            // filter's read access; `row_matches` reads no component.
            unsafe {
                let fetch = Q::fetch(arch, state);
                let filter = F::fetch(arch, filter);
                super::loops::passing_runs::<F>(
                    arch.chunk_rows(),
                    filter,
                    window,
                    0,
                    arch.len(),
                    |a, b| visit(arch, a, b, &mut |row| Q::row_matches(&mut env, fetch, row)),
                )
            };
        }
    }

    /// [`QueryState::count_in`] over the archetypes matched so far.
    ///
    /// # Safety
    /// As [`QueryState::count_in`].
    pub(crate) unsafe fn count_matched(&self, world: &WorldCore, window: ChangeWindow) -> usize {
        let archetypes = world.archetypes();
        if F::DENSE && Q::EVERY_ROW {
            return self
                .cache
                .matched
                .iter()
                .map(|(a, _)| archetypes.get(*a).len())
                .sum();
        }
        let mut n = 0;
        // SAFETY: forwarded contract.
        unsafe {
            self.visit_passing(world, window, |_, a, b, matches| {
                n += if Q::EVERY_ROW {
                    b - a
                } else {
                    (a..b).filter(|&row| matches(row)).count()
                }
            })
        };
        n
    }
}
