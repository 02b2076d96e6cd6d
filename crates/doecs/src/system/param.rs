//! System parameters: what a function system's arguments ask for.
//!
//! A function whose arguments are system parameters is a system:
//! `fn integrate(q: Query<(&mut Pos, &Vel)>, dt: Res<Dt>, commands: Commands)`.
//! Each parameter type says, when the system is added, what it reads and
//! writes ([`SystemParam::describe`]); the schedule derives the system's
//! access from that, so nothing is declared twice, and refuses two
//! parameters of one system that would alias. While the system runs, each
//! parameter is fetched from the world ([`SystemParam::fetch`]).
//!
//! The parameters: [`Query`] (with filters), [`Res`] and [`ResMut`] (and
//! their `Option`s, for resources that may be missing), [`Commands`],
//! [`Local`], [`Manager`] and [`ManagerMut`] (component managers, such as
//! the transform hierarchy), and [`RemovedComponents`] (entities that lost
//! a component). [`ParamSet`](super::ParamSet) holds parameters that
//! conflict with each other, used one at a time, and
//! `#[derive(SystemParam)]` makes a struct of parameters one parameter.

use crate::component::Component;
use crate::manager::ComponentManager;
use crate::query::{Access, AccessKey, FilteredAccess, Query, QueryData, QueryFilter, QueryState};
use crate::resource::{ResourceMut, ResourceTicks};
use crate::system::context::SpawnSource;
use crate::tick::ChangeWindow;
use crate::world::command::{CommandBuffer, Commands, IdSource};
use crate::world::{RemovedComponents, WorldCore};
use std::marker::PhantomData;
use std::ops::{Deref, DerefMut};

/// Everything one parameter touches, recorded when its system is added.
#[derive(Clone, Debug, Default)]
pub struct ParamAccess {
    /// The parameter's type, for messages.
    pub name: String,
    /// Components, with the types its entities must have and lack.
    pub components: FilteredAccess,
    /// Resources read and written.
    pub resources: Access,
    /// Managers read and written.
    pub managers: Access,
    /// Resources that must exist.
    pub required_resources: Vec<AccessKey>,
    /// Managers that must exist.
    pub required_managers: Vec<AccessKey>,
    /// Whether it records commands.
    pub commands: bool,
    /// Why it cannot be used at all (a query that aliases itself).
    pub invalid: Option<String>,
    /// Rust component types whose row stamps it needs (change filters).
    pub tracked: Vec<std::any::TypeId>,
    /// Event types it sends (`Events<T>` resources).
    pub event_writes: Vec<AccessKey>,
    /// Event types it reads.
    pub event_reads: Vec<AccessKey>,
    /// What the world needs before the system first runs on it (an event
    /// type added, a removal log kept); run by the schedule with `&mut`.
    pub setup: Vec<fn(&mut WorldCore)>,
    /// What the world must allow before every run (a query's terms against
    /// the storage each component has); a refusal stops the run before any
    /// system starts.
    pub checks: Vec<WorldCheck>,
    /// The event it observes (a [`Trigger`](crate::Trigger) parameter).
    pub observes: Option<ObservedEvent>,
}

/// A check a parameter asks of the world before every run (see
/// [`ParamAccess::checks`]).
pub type WorldCheck = fn(&WorldCore) -> Result<(), crate::query::QueryError>;

/// The event an observer's [`Trigger`](crate::Trigger) parameter watches,
/// recorded when the system is made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ObservedEvent {
    /// The event type.
    pub event: std::any::TypeId,
    /// Its name, for messages and listings.
    pub event_name: &'static str,
    /// The component (lifecycle events): its name, and how to register it
    /// in a world.
    pub component: Option<(&'static str, RegisterComponent)>,
}

/// Registers a component type in a world and returns its id.
pub type RegisterComponent = fn(&mut WorldCore) -> crate::component::ComponentId;

impl ParamAccess {
    /// Why `self` and `other` cannot both be parameters of one system, if so.
    pub fn conflict_with(&self, other: &ParamAccess) -> Option<String> {
        if let Some(key) = self.components.conflict_with(&other.components) {
            return Some(format!("both access component `{}`, one mutably", key.name));
        }
        if let Some(key) = self.resources.conflict_with(&other.resources) {
            return Some(format!("both access resource `{}`, one mutably", key.name));
        }
        if let Some(key) = self.managers.conflict_with(&other.managers) {
            return Some(format!("both access manager `{}`, one mutably", key.name));
        }
        if self.commands && other.commands {
            return Some("both record into the system's one command buffer".into());
        }
        if self.observes.is_some() && other.observes.is_some() {
            return Some("an observer has one trigger".into());
        }
        None
    }
}

/// What a running function system's parameters are fetched from.
///
/// The command buffer and the spawn-id source are raw pointers because
/// several parameters are fetched at once; only [`Commands`] uses them, and
/// a system may have one `Commands` parameter (two are refused when the
/// system is added).
pub struct SystemRun<'a> {
    pub(crate) world: &'a WorldCore,
    pub(crate) commands: *mut CommandBuffer,
    /// The context's spawn-id source; its lifetime is erased (it outlives the
    /// run, and only `Commands::fetch` turns it back into a reference).
    pub(crate) spawn: *mut SpawnSource<'static>,
    /// The system's change window.
    pub(crate) window: crate::tick::ChangeWindow,
    /// The trigger an observer runs for; null outside observers (only
    /// `Trigger::fetch` turns it into a reference).
    pub(crate) trigger: *mut crate::world::TriggerData,
}

impl SystemRun<'_> {
    /// The world the system runs on.
    pub fn world(&self) -> &WorldCore {
        self.world
    }

    /// The system's change window.
    pub fn window(&self) -> crate::tick::ChangeWindow {
        self.window
    }
}

/// A function system's parameter. See the module docs.
///
/// # Safety
/// `describe` must record everything `fetch` reads (as reads) and hands out
/// mutably (as writes), and every resource or manager `fetch` expects to
/// exist as required; `fetch` must touch nothing else.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a system parameter",
    label = "not a system parameter",
    note = "a function system's parameters are `Query<D, F>`, `Res<T>`, `ResMut<T>` (or an `Option` of either), `Commands`, `Local<T>`, `EventReader<E>`, `EventWriter<E>`, `RemovedComponents<T>`, `Manager<M>`, `ManagerMut<M>`, `ParamSet<(..)>` of these, and structs of these that `#[derive(SystemParam)]`",
    note = "a component is reached through a query (`Query<&mut Position>`, not `&mut Position`); a system over the whole world takes `&mut World` as its only parameter"
)]
pub unsafe trait SystemParam: Sized {
    /// What the parameter keeps between runs (a query's matched archetypes,
    /// a local value).
    type State: Send + Sync + 'static;
    /// The parameter as the function sees it. `Self: 'a` lets a
    /// parameter written with borrows shorter than `'static` (the `&Pos`
    /// of a `Query<&Pos>` inside a [`ParamSet`](super::ParamSet)) hand out
    /// its item for as long as those borrows last.
    type Item<'a>
    where
        Self: 'a;

    /// Records what the parameter touches and returns its first state.
    fn describe(access: &mut ParamAccess) -> Self::State;

    /// Fetches the parameter for one run.
    ///
    /// # Safety
    /// The schedule must have checked the system's access (no conflicting
    /// system runs meanwhile) and the required resources and managers; the
    /// item must not outlive the run.
    unsafe fn fetch<'a>(state: &'a mut Self::State, run: &'a SystemRun<'a>) -> Self::Item<'a>
    where
        Self: 'a;
}

/// The name of type `T` without module paths, for messages:
/// `Query<(&mut Position, &Velocity)>`.
pub fn short_type_name<T: ?Sized>() -> String {
    crate::error::short_type_path(std::any::type_name::<T>())
}

/// A query's matched archetypes in one world (a function system keeps its
/// parameters' states per world), made on the first run there.
pub struct QueryParamState<S, P> {
    cache: Option<crate::query::state::QueryCache<S, P>>,
}

// SAFETY: the data it fetches is what `describe` records: `Q`'s access
// (checked not to alias) with `F`'s filters.
//
// `Q` need not be `'static` (its state, fetch and key are, whatever
// lifetime it is written with): `Query<&Pos>` inside another parameter's
// type (`ParamSet<(Query<&mut Pos>, Query<&Pos>)>`) borrows for a lifetime
// of the system function, and the set's members are parameters there too.
unsafe impl<Q, F> SystemParam for Query<'_, Q, F>
where
    Q: QueryData,
    F: QueryFilter + 'static,
{
    type State = QueryParamState<(Q::State, F::State), (Q::Fetch, F::Fetch)>;
    type Item<'a>
        = Query<'a, Q, F>
    where
        Self: 'a;

    fn describe(access: &mut ParamAccess) -> Self::State {
        match QueryState::<Q, F>::filtered_access() {
            Ok(filtered) => access.components = filtered,
            Err(e) => access.invalid = Some(e.to_string()),
        }
        access.tracked = QueryState::<Q, F>::tracked();
        access.checks.push(QueryState::<Q, F>::check_world);
        QueryParamState { cache: None }
    }

    unsafe fn fetch<'a>(state: &'a mut Self::State, run: &'a SystemRun<'a>) -> Query<'a, Q, F>
    where
        Self: 'a,
    {
        let cache = state
            .cache
            .get_or_insert_with(|| crate::query::state::QueryCache::new(run.world.id()));
        let query = QueryState::<Q, F>::from_cache_mut(cache);
        // SAFETY: the system's access covers `Q` and `F`'s reads (recorded
        // in `describe`), and the caller guarantees no conflicting access
        // while the system runs.
        unsafe { Query::borrowed(run.world, query, run.window) }
    }
}

/// A shared borrow of the resource `T` (a system parameter).
///
/// [`is_added`](Res::is_added) and [`is_changed`](Res::is_changed) tell
/// whether the resource was inserted or written since the system's
/// previous run (its change window), as `Added<T>` and `Changed<T>` do for
/// components.
pub struct Res<'a, T: 'static> {
    value: &'a T,
    ticks: ResourceTicks,
    window: ChangeWindow,
}

impl<'a, T> Res<'a, T> {
    /// Whether the resource was inserted since the system's previous run.
    pub fn is_added(&self) -> bool {
        self.window.contains(self.ticks.added)
    }

    /// Whether the resource was inserted or written since the system's
    /// previous run.
    pub fn is_changed(&self) -> bool {
        self.window.contains(self.ticks.changed)
    }

    /// The borrowed value, for as long as the borrow lives.
    pub fn into_inner(self) -> &'a T {
        self.value
    }
}

impl<T> Deref for Res<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        self.value
    }
}

/// A unique borrow of the resource `T` (a system parameter). Writing
/// through it (`DerefMut`) marks the resource changed at the system's tick;
/// reading does not.
pub struct ResMut<'a, T: 'static> {
    value: ResourceMut<'a, T>,
    window: ChangeWindow,
}

impl<T> ResMut<'_, T> {
    /// Whether the resource was inserted since the system's previous run.
    pub fn is_added(&self) -> bool {
        self.window.contains(self.value.added)
    }

    /// Whether the resource was inserted or written since the system's
    /// previous run (a write through this borrow included).
    pub fn is_changed(&self) -> bool {
        self.window.contains(*self.value.changed)
    }

    /// Marks the resource changed without writing it.
    pub fn set_changed(&mut self) {
        *self.value.changed = self.window.this_run;
    }

    /// The value, without marking it changed.
    pub fn bypass_change_detection(&mut self) -> &mut T {
        self.value.value
    }
}

impl<T> Deref for ResMut<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        self.value.value
    }
}

impl<T> DerefMut for ResMut<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        self.set_changed();
        self.value.value
    }
}

fn removed_while_running<T>() -> ! {
    panic!(
        "doecs: resource `{}` was removed while the schedule ran",
        std::any::type_name::<T>()
    )
}

fn fetch_res<'a, T: 'static>(run: &SystemRun<'a>) -> Option<Res<'a, T>> {
    let (value, ticks) = run.world.resources().get_with_ticks::<T>()?;
    Some(Res {
        value,
        ticks,
        window: run.window,
    })
}

/// # Safety
/// The system declared a write of `T`, and nothing else accesses `T` while
/// the result lives.
unsafe fn fetch_res_mut<'a, T: 'static>(run: &SystemRun<'a>) -> Option<ResMut<'a, T>> {
    // SAFETY: the caller's contract is `get_mut_unchecked`'s.
    let value = unsafe { run.world.resources().get_mut_unchecked::<T>() }?;
    Some(ResMut {
        value,
        window: run.window,
    })
}

// SAFETY: reads only resource `T`, recorded as a read and required.
unsafe impl<T: Send + Sync + 'static> SystemParam for Res<'_, T> {
    type State = ();
    type Item<'a>
        = Res<'a, T>
    where
        Self: 'a;

    fn describe(access: &mut ParamAccess) {
        access.resources.add_read(AccessKey::of::<T>());
        access.required_resources.push(AccessKey::of::<T>());
    }

    unsafe fn fetch<'a>(_: &'a mut (), run: &'a SystemRun<'a>) -> Res<'a, T>
    where
        Self: 'a,
    {
        fetch_res(run).unwrap_or_else(|| removed_while_running::<T>())
    }
}

// SAFETY: writes only resource `T`, recorded as a write and required.
unsafe impl<T: Send + Sync + 'static> SystemParam for ResMut<'_, T> {
    type State = ();
    type Item<'a>
        = ResMut<'a, T>
    where
        Self: 'a;

    fn describe(access: &mut ParamAccess) {
        access.resources.add_write(AccessKey::of::<T>());
        access.required_resources.push(AccessKey::of::<T>());
    }

    unsafe fn fetch<'a>(_: &'a mut (), run: &'a SystemRun<'a>) -> ResMut<'a, T>
    where
        Self: 'a,
    {
        // SAFETY: the system declared a write of `T`, so the schedule runs no
        // other accessor of `T` meanwhile (caller's contract).
        unsafe { fetch_res_mut(run) }.unwrap_or_else(|| removed_while_running::<T>())
    }
}

// SAFETY: reads resource `T` if present, recorded as a read (not required).
unsafe impl<T: Send + Sync + 'static> SystemParam for Option<Res<'_, T>> {
    type State = ();
    type Item<'a>
        = Option<Res<'a, T>>
    where
        Self: 'a;

    fn describe(access: &mut ParamAccess) {
        access.resources.add_read(AccessKey::of::<T>());
    }

    unsafe fn fetch<'a>(_: &'a mut (), run: &'a SystemRun<'a>) -> Option<Res<'a, T>>
    where
        Self: 'a,
    {
        fetch_res(run)
    }
}

// SAFETY: writes resource `T` if present, recorded as a write (not required).
unsafe impl<T: Send + Sync + 'static> SystemParam for Option<ResMut<'_, T>> {
    type State = ();
    type Item<'a>
        = Option<ResMut<'a, T>>
    where
        Self: 'a;

    fn describe(access: &mut ParamAccess) {
        access.resources.add_write(AccessKey::of::<T>());
    }

    unsafe fn fetch<'a>(_: &'a mut (), run: &'a SystemRun<'a>) -> Option<ResMut<'a, T>>
    where
        Self: 'a,
    {
        // SAFETY: as for `ResMut`.
        unsafe { fetch_res_mut(run) }
    }
}

// SAFETY: touches only the system's own command buffer and spawn-id source;
// recorded as `commands`, and a second `Commands` parameter is refused.
unsafe impl SystemParam for Commands<'_> {
    type State = ();
    type Item<'a>
        = Commands<'a>
    where
        Self: 'a;

    fn describe(access: &mut ParamAccess) {
        access.commands = true;
    }

    unsafe fn fetch<'a>(_: &'a mut (), run: &'a SystemRun<'a>) -> Commands<'a>
    where
        Self: 'a,
    {
        // SAFETY: the pointers come from the system's context, which outlives
        // the run (so the erased lifetime may be shortened to `'a`); this is
        // the system's only `Commands` parameter, so nothing else borrows
        // them meanwhile.
        let (buffer, spawn) = unsafe {
            (
                &mut *run.commands,
                &mut *run.spawn.cast::<SpawnSource<'a>>(),
            )
        };
        let ids = match spawn {
            SpawnSource::Pool(pool) => IdSource::Pool(pool),
            SpawnSource::World(entities) => IdSource::World(entities),
        };
        Commands::new(buffer, ids)
    }
}

/// A value kept by one system between its runs (a system parameter); it
/// starts as `T::default()`. Like the rest of a system's state, it is kept
/// per world: a system run on worlds `a` and `b` in turn has one value for
/// each, and a dropped world's value is dropped too.
pub struct Local<'a, T> {
    value: &'a mut T,
}

impl<T> Deref for Local<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        self.value
    }
}

impl<T> DerefMut for Local<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        self.value
    }
}

// SAFETY: touches only its own state.
unsafe impl<T: Default + Send + Sync + 'static> SystemParam for Local<'_, T> {
    type State = T;
    type Item<'a>
        = Local<'a, T>
    where
        Self: 'a;

    fn describe(_: &mut ParamAccess) -> T {
        T::default()
    }

    unsafe fn fetch<'a>(state: &'a mut T, _: &'a SystemRun<'a>) -> Local<'a, T>
    where
        Self: 'a,
    {
        Local { value: state }
    }
}

/// A shared borrow of the component manager `M` (a system parameter).
pub struct Manager<'a, M> {
    manager: &'a M,
}

impl<M> Deref for Manager<'_, M> {
    type Target = M;
    fn deref(&self) -> &M {
        self.manager
    }
}

/// A unique borrow of the component manager `M` (a system parameter): a
/// system can write, say, the transform hierarchy while other systems that
/// touch neither it nor what this system reads run at the same time.
pub struct ManagerMut<'a, M> {
    manager: &'a mut M,
}

impl<M> Deref for ManagerMut<'_, M> {
    type Target = M;
    fn deref(&self) -> &M {
        self.manager
    }
}

impl<M> DerefMut for ManagerMut<'_, M> {
    fn deref_mut(&mut self) -> &mut M {
        self.manager
    }
}

// SAFETY: reads only manager `M`, recorded as a read and required.
unsafe impl<M: ComponentManager> SystemParam for Manager<'_, M> {
    type State = PhantomData<fn() -> M>;
    type Item<'a>
        = Manager<'a, M>
    where
        Self: 'a;

    fn describe(access: &mut ParamAccess) -> Self::State {
        access.managers.add_read(AccessKey::of::<M>());
        access.required_managers.push(AccessKey::of::<M>());
        PhantomData
    }

    unsafe fn fetch<'a>(_: &'a mut Self::State, run: &'a SystemRun<'a>) -> Manager<'a, M>
    where
        Self: 'a,
    {
        let manager = run.world.manager::<M>().unwrap_or_else(|| {
            panic!(
                "doecs: manager `{}` was removed while the schedule ran",
                std::any::type_name::<M>()
            )
        });
        Manager { manager }
    }
}

// SAFETY: writes only manager `M`, recorded as a write and required.
unsafe impl<M: ComponentManager> SystemParam for ManagerMut<'_, M> {
    type State = PhantomData<fn() -> M>;
    type Item<'a>
        = ManagerMut<'a, M>
    where
        Self: 'a;

    fn describe(access: &mut ParamAccess) -> Self::State {
        access.managers.add_write(AccessKey::of::<M>());
        access.required_managers.push(AccessKey::of::<M>());
        PhantomData
    }

    unsafe fn fetch<'a>(_: &'a mut Self::State, run: &'a SystemRun<'a>) -> ManagerMut<'a, M>
    where
        Self: 'a,
    {
        // SAFETY: the system declared a write of `M`, so the schedule runs no
        // other accessor of `M` meanwhile (caller's contract).
        let manager = unsafe { run.world.managers.get_mut_unchecked::<M>() };
        let manager = manager.unwrap_or_else(|| {
            panic!(
                "doecs: manager `{}` was removed while the schedule ran",
                std::any::type_name::<M>()
            )
        });
        ManagerMut { manager }
    }
}

/// Starts `T`'s removal log before the system first runs.
fn setup_removals<T: Component>(world: &mut WorldCore) {
    world.track_removals::<T>();
}

// SAFETY: reads only the removal log, which is written by structural
// changes alone, and those need `&mut` to the world, so never happen while
// systems run; no component or resource is touched.
unsafe impl<T: Component> SystemParam for RemovedComponents<'_, T> {
    type State = ();
    type Item<'a>
        = RemovedComponents<'a, T>
    where
        Self: 'a;

    fn describe(access: &mut ParamAccess) {
        access.setup.push(setup_removals::<T>);
    }

    unsafe fn fetch<'a>(_: &'a mut (), run: &'a SystemRun<'a>) -> RemovedComponents<'a, T>
    where
        Self: 'a,
    {
        RemovedComponents::new(run.world(), run.window())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_names_drop_module_paths() {
        assert_eq!(
            short_type_name::<Query<'static, (&'static mut u8, &'static String)>>(),
            "Query<(&mut u8, &String)>"
        );
        assert_eq!(short_type_name::<Res<'static, Vec<u8>>>(), "Res<Vec<u8>>");
    }
}
