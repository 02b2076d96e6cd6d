//! Observers: systems that run when an event is triggered, on the world or
//! on one entity.
//!
//! Hooks run one function per component type; observers are the general
//! mechanism. An observer is a system whose first parameter is a
//! [`Trigger<E, B>`](crate::Trigger): it runs whenever event `E` is
//! triggered (and, for the lifecycle events, on component `B`), with any
//! other system parameters (queries, resources, `Commands`) fetched from
//! the world as it stands at that moment.
//!
//! **Lifecycle events** ([`OnAdd`], [`OnInsert`], [`OnReplace`],
//! [`OnRemove`]) fire at exactly the points the hooks of the same names
//! fire (see [`crate::hooks`]), on every structural path, and
//! [`OnDespawn`] fires once per entity before its components' `OnReplace`
//! and `OnRemove`. For one change, every component's hook runs first, then
//! the observers, component by component in the archetype's order, each
//! component's observers in registration order. **Custom events** are any
//! type that implements [`Event`], triggered by [`World::trigger`],
//! [`World::trigger_targets`] or their command forms.
//!
//! **Order.** Observers of one trigger run in the order they were
//! registered, global and entity observers interleaved by that order. An
//! observer sees the world read-only except for what its parameters
//! declare, and records structural changes through `Commands`; those are
//! applied after the operation that fired it, with the hooks' commands, in
//! recorded order. An observer's own triggers are therefore applied
//! breadth first, in the next round of the flush, never on the stack, so
//! no chain of observers can overflow it; a chain that does not settle
//! within [`MAX_HOOK_ROUNDS`](crate::MAX_HOOK_ROUNDS) rounds is reported
//! as [`ObserverError::Unsettled`] (its remaining commands stay queued,
//! nothing is dropped).
//!
//! **Propagation.** A targeted custom event whose type sets
//! [`Event::PROPAGATE`] goes on from each target to its `ChildOf` parent,
//! and up, until an observer calls
//! [`Trigger::propagate(false)`](crate::Trigger::propagate) or the root is
//! reached: a hit on a turret reaches its ship.
//!
//! **Where observers live.** Observers are not entities: they belong to
//! their world like hooks, are listed by [`WorldCore::observers`] (and by the
//! inspector), and are removed with [`World::remove_observer`]. An
//! entity's observers go when it is despawned. Snapshots and saves hold
//! entities and components, not code: a restore or a load keeps the
//! world's observers as they are.

use super::command::CommandBuffer;
use super::hooks::HookKind;
use super::{World, WorldCore};
use crate::component::ComponentId;
use crate::entity::Entity;
use std::any::TypeId;
use std::collections::HashMap;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};

/// An event observers can watch. Implement it for a custom event type;
/// set `PROPAGATE` for events that travel up `ChildOf` from their targets.
///
/// ```
/// use doecs::prelude::*;
/// use doecs::{Event, Trigger};
/// struct Hit(u32);
/// impl Event for Hit {
///     const PROPAGATE: bool = true;
/// }
/// struct Hull(u32);
///
/// let mut world = World::new();
/// let ship = world.spawn((Hull(10),));
/// let turret = world.spawn(());
/// world.add_pair(turret, ship, ChildOf)?;
/// world.observe(|trigger: Trigger<Hit>, mut hulls: Query<&mut Hull>| {
///     if let Ok(hull) = hulls.get_mut(trigger.target().unwrap()) {
///         hull.0 -= trigger.event().0;
///     }
/// })?;
/// world.trigger_targets(Hit(3), [turret])?;
/// assert_eq!(world.get::<Hull>(ship)?.0, 7, "the hit on the turret reached its ship");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub trait Event: Send + Sync + 'static {
    /// Whether a targeted trigger goes on to each target's `ChildOf`
    /// parent, and up (an observer can stop it).
    const PROPAGATE: bool = false;
    /// Whether the world fires it itself (the lifecycle events), so that
    /// triggering it by hand is refused when compiled. Not for custom
    /// events.
    #[doc(hidden)]
    const LIFECYCLE: bool = false;
}

/// A component arrived on an entity that did not have it (the lifecycle
/// event of the `on_add` hook). Watch it as `Trigger<OnAdd, C>`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct OnAdd;
/// A component was written by an insert or a spawn (`on_insert`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct OnInsert;
/// A component's value is about to be replaced or removed (`on_replace`);
/// the old value is still there to read.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct OnReplace;
/// A component is about to leave its entity (`on_remove`); it is still
/// there to read.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct OnRemove;
/// An entity is about to be despawned; every component is still there.
/// Watch it as `Trigger<OnDespawn>`, globally or on the entity.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct OnDespawn;

impl Event for OnAdd {
    const LIFECYCLE: bool = true;
}
impl Event for OnInsert {
    const LIFECYCLE: bool = true;
}
impl Event for OnReplace {
    const LIFECYCLE: bool = true;
}
impl Event for OnRemove {
    const LIFECYCLE: bool = true;
}
impl Event for OnDespawn {
    const LIFECYCLE: bool = true;
}

/// The component lifecycle kind an event type stands for, if it is one of
/// the four per-component lifecycle events.
pub(crate) fn lifecycle_kind(event: TypeId) -> Option<HookKind> {
    [
        (TypeId::of::<OnAdd>(), HookKind::Add),
        (TypeId::of::<OnInsert>(), HookKind::Insert),
        (TypeId::of::<OnReplace>(), HookKind::Replace),
        (TypeId::of::<OnRemove>(), HookKind::Remove),
    ]
    .into_iter()
    .find_map(|(id, kind)| (id == event).then_some(kind))
}

/// The lifecycle event type of a hook kind.
fn lifecycle_event(kind: HookKind) -> TypeId {
    match kind {
        HookKind::Add => TypeId::of::<OnAdd>(),
        HookKind::Insert => TypeId::of::<OnInsert>(),
        HookKind::Replace => TypeId::of::<OnReplace>(),
        HookKind::Remove => TypeId::of::<OnRemove>(),
    }
}

/// Index of a hook kind in per-kind tables.
fn slot(kind: HookKind) -> usize {
    kind.bit().trailing_zeros() as usize
}

/// An observer's id in its world, in registration order.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ObserverId(pub(crate) u32);

impl ObserverId {
    /// Its index: observers are numbered from 0 in registration order.
    pub fn index(self) -> u32 {
        self.0
    }
}

/// Why an observer did not run, or why a trigger did not settle.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ObserverError {
    /// The observer needs a resource the world lacked when it was
    /// triggered; it did not run.
    #[error("observer `{observer}` needs resource `{resource}`, which the world does not have; it did not run")]
    MissingResource {
        /// The observer.
        observer: String,
        /// The resource's type.
        resource: &'static str,
    },
    /// The observer needs a component manager the world lacked; it did
    /// not run.
    #[error("observer `{observer}` needs manager `{manager}`, which the world does not have; it did not run")]
    MissingManager {
        /// The observer.
        observer: String,
        /// The manager's type.
        manager: &'static str,
    },
    /// Observers kept triggering each other (or recording commands) for
    /// more rounds than a flush runs; the rest stays queued.
    #[error("observers and hooks were still recording commands after {rounds} rounds; the rest stays queued (an observer that triggers itself?)")]
    Unsettled {
        /// The rounds run.
        rounds: usize,
    },
}

/// What an observer is told about the trigger that runs it; the event
/// itself is type-erased here and typed again by [`crate::Trigger`].
pub(crate) struct TriggerData {
    /// The event, an `E` of the observer's event type.
    pub(crate) event: *mut u8,
    /// The entity it is about, if any (for a propagating event, the
    /// current one on the way up).
    pub(crate) target: Option<Entity>,
    /// The entity it was triggered on, before any propagation.
    pub(crate) origin: Option<Entity>,
    /// The component, for lifecycle events.
    pub(crate) component: Option<ComponentId>,
    /// Whether it goes on to the target's parent.
    pub(crate) propagate: bool,
}

/// An observer's body, as the world stores it: the observer module wraps a
/// system in it (the world layer stays below the system layer).
pub(crate) trait RunObserver: Send {
    /// Runs once for `trigger`, on `world`, recording into `commands`.
    fn run(
        &mut self,
        world: &WorldCore,
        trigger: &mut TriggerData,
        commands: &mut CommandBuffer,
    ) -> Result<(), ObserverError>;
}

/// What an observer watches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Watch {
    pub(crate) event: TypeId,
    pub(crate) event_name: &'static str,
    pub(crate) component: Option<ComponentId>,
    pub(crate) entity: Option<Entity>,
}

/// A `Send` value that is reached only through `&mut`, so sharing a
/// reference to its holder between threads can never reach it.
struct Exclusive<T>(T);

// SAFETY: `Exclusive` has no method taking `&self`, and its field is
// private to this module, which only reaches it through `&mut Exclusive`:
// a shared reference gives no access to `T`, so `T: Send` is enough for
// the wrapper to be shared.
unsafe impl<T: Send> Sync for Exclusive<T> {}

/// One registered observer.
struct Entry {
    /// Out of its slot while it runs.
    body: Option<Exclusive<Box<dyn RunObserver>>>,
    name: String,
    watch: Watch,
}

/// One observer, as [`WorldCore::observers`] lists it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ObserverInfo {
    /// Its id.
    pub id: ObserverId,
    /// The system's name.
    pub name: String,
    /// The event type it observes.
    pub event: &'static str,
    /// The component, for lifecycle events.
    pub component: Option<ComponentId>,
    /// The entity, for an entity observer.
    pub entity: Option<Entity>,
}

/// Every observer of one world, indexed for the lookups a trigger makes.
#[derive(Default)]
pub(crate) struct Observers {
    /// By id; `None` once removed.
    entries: Vec<Option<Entry>>,
    /// Global lifecycle observers, by component index then kind.
    lifecycle: Vec<[Vec<ObserverId>; 4]>,
    /// Global observers of other events, by event type (and component).
    custom: HashMap<(TypeId, Option<ComponentId>), Vec<ObserverId>>,
    /// Entity observers, by entity.
    by_entity: HashMap<Entity, Vec<ObserverId>>,
    /// How many observers (global or entity) watch each component's
    /// lifecycle kinds: what the hook masks are made of.
    watching: Vec<[u32; 4]>,
    /// How many observers watch `OnDespawn`.
    despawn_watchers: u32,
    /// Reused list of the observers one trigger runs.
    scratch: Vec<ObserverId>,
    /// Observers that could not run, oldest first.
    pub(crate) errors: Vec<ObserverError>,
}

impl Observers {
    /// Registers `body` as watching `watch`; returns its id.
    pub(crate) fn add(
        &mut self,
        body: Box<dyn RunObserver>,
        name: String,
        watch: Watch,
    ) -> ObserverId {
        let id = ObserverId(self.entries.len() as u32);
        let kind = lifecycle_kind(watch.event);
        if let Some(entity) = watch.entity {
            self.by_entity.entry(entity).or_default().push(id);
        } else if let (Some(kind), Some(c)) = (kind, watch.component) {
            grow(&mut self.lifecycle, c.index())[slot(kind)].push(id);
        } else {
            let key = (watch.event, watch.component);
            self.custom.entry(key).or_default().push(id);
        }
        if let (Some(kind), Some(c)) = (kind, watch.component) {
            grow(&mut self.watching, c.index())[slot(kind)] += 1;
        }
        if watch.event == TypeId::of::<OnDespawn>() {
            self.despawn_watchers += 1;
        }
        self.entries.push(Some(Entry {
            body: Some(Exclusive(body)),
            name,
            watch,
        }));
        id
    }

    /// Removes observer `id`; returns what it watched, or `None` if there
    /// was no such observer.
    pub(crate) fn remove(&mut self, id: ObserverId) -> Option<Watch> {
        let entry = self.entries.get_mut(id.0 as usize)?.take()?;
        let watch = entry.watch;
        let kind = lifecycle_kind(watch.event);
        let list = if let Some(entity) = watch.entity {
            self.by_entity.get_mut(&entity)
        } else if let (Some(kind), Some(c)) = (kind, watch.component) {
            self.lifecycle
                .get_mut(c.index())
                .map(|k| &mut k[slot(kind)])
        } else {
            self.custom.get_mut(&(watch.event, watch.component))
        };
        if let Some(list) = list {
            list.retain(|&x| x != id);
        }
        if let Some(entity) = watch.entity {
            if self.by_entity.get(&entity).is_some_and(Vec::is_empty) {
                self.by_entity.remove(&entity);
            }
        }
        if let (Some(kind), Some(c)) = (kind, watch.component) {
            self.watching[c.index()][slot(kind)] -= 1;
        }
        if watch.event == TypeId::of::<OnDespawn>() {
            self.despawn_watchers -= 1;
        }
        Some(watch)
    }

    /// The hook-mask bits observers add to component `id`.
    pub(crate) fn mask_of(&self, id: ComponentId) -> u8 {
        let Some(counts) = self.watching.get(id.index()) else {
            return 0;
        };
        [
            HookKind::Add,
            HookKind::Insert,
            HookKind::Replace,
            HookKind::Remove,
        ]
        .into_iter()
        .filter(|&k| counts[slot(k)] > 0)
        .fold(0, |m, k| m | k.bit())
    }

    /// Whether any observer watches `kind` on component `id`.
    #[inline]
    pub(crate) fn watches(&self, kind: HookKind, id: ComponentId) -> bool {
        self.watching
            .get(id.index())
            .is_some_and(|c| c[slot(kind)] > 0)
    }

    /// Whether any observer watches `OnDespawn`.
    #[inline]
    pub(crate) fn watches_despawn(&self) -> bool {
        self.despawn_watchers > 0
    }

    /// Whether `entity` has observers of its own.
    #[inline]
    pub(crate) fn has_entity_observers(&self) -> bool {
        !self.by_entity.is_empty()
    }

    /// Removes the observers of `entity` (it is being despawned); returns
    /// the components whose masks may now be stale.
    pub(crate) fn forget_entity(&mut self, entity: Entity) {
        let Some(ids) = self.by_entity.get(&entity).cloned() else {
            return;
        };
        for id in ids {
            self.remove(id);
        }
    }

    /// The global observers of `key`.
    #[inline]
    fn global(&self, key: &Key) -> &[ObserverId] {
        let list = match *key {
            Key::Lifecycle(kind, c) => self.lifecycle.get(c.index()).map(|k| &k[slot(kind)]),
            Key::Other(event) => self.custom.get(&(event, None)),
        };
        list.map_or(&[], Vec::as_slice)
    }

    /// Fills the scratch list with the observers of `event` on
    /// `component`, global and those of `target`, in registration order;
    /// `None` when `target` has no observers of its own, and the global
    /// list is the whole answer.
    fn collect(&mut self, key: &Key, target: Option<Entity>) -> Option<Vec<ObserverId>> {
        if self.by_entity.is_empty() {
            return None;
        }
        let own = target.and_then(|t| self.by_entity.get(&t))?;
        let (event, component) = key.event_and_component();
        let mut out = std::mem::take(&mut self.scratch);
        out.clear();
        out.extend(own.iter().copied().filter(|id| {
            self.entries[id.0 as usize]
                .as_ref()
                .is_some_and(|e| e.watch.event == event && e.watch.component == component)
        }));
        out.extend_from_slice(self.global(key));
        out.sort_unstable();
        Some(out)
    }

    /// Every observer, in registration order.
    pub(crate) fn infos(&self) -> impl Iterator<Item = ObserverInfo> + '_ {
        self.entries.iter().enumerate().filter_map(|(i, e)| {
            let e = e.as_ref()?;
            Some(ObserverInfo {
                id: ObserverId(i as u32),
                name: e.name.clone(),
                event: e.watch.event_name,
                component: e.watch.component,
                entity: e.watch.entity,
            })
        })
    }
}

/// What a trigger is, as the observer lists are keyed: a lifecycle kind on
/// a component, or another event type (with no component).
pub(crate) enum Key {
    Lifecycle(HookKind, ComponentId),
    Other(TypeId),
}

impl Key {
    fn event_and_component(&self) -> (TypeId, Option<ComponentId>) {
        match *self {
            Key::Lifecycle(kind, c) => (lifecycle_event(kind), Some(c)),
            Key::Other(event) => (event, None),
        }
    }
}

/// `v[index]`, growing `v` with defaults to reach it.
fn grow<T: Default>(v: &mut Vec<T>, index: usize) -> &mut T {
    if v.len() <= index {
        v.resize_with(index + 1, T::default);
    }
    &mut v[index]
}

impl WorldCore {
    /// Every observer of this world, in registration order (the order
    /// they run in).
    pub fn observers(&self) -> impl Iterator<Item = ObserverInfo> + '_ {
        self.hooks.observers.infos()
    }

    /// Runs the observers of `event` (an `E` of type `event_type`) on
    /// `component` and `target`, in registration order, recording their
    /// commands into `commands`. Returns whether the trigger should go on
    /// to the target's parent. If an observer panics, it is put back and
    /// the panic goes on.
    pub(crate) fn run_observers(
        &mut self,
        key: Key,
        event: *mut u8,
        (target, origin): (Option<Entity>, Option<Entity>),
        propagate: bool,
        commands: &mut CommandBuffer,
    ) -> bool {
        let component = match key {
            Key::Lifecycle(_, c) => Some(c),
            Key::Other(_) => None,
        };
        let mut data = TriggerData {
            event,
            target,
            origin,
            component,
            propagate,
        };
        // The observer lists cannot change while observers run (that takes
        // `&mut World`), so the global list is walked by index, re-read
        // each step, without a copy.
        let merged = self.hooks.observers.collect(&key, target);
        let count = match &merged {
            Some(list) => list.len(),
            None => self.hooks.observers.global(&key).len(),
        };
        let mut panic = None;
        for i in 0..count {
            let id = match &merged {
                Some(list) => list[i],
                None => self.hooks.observers.global(&key)[i],
            };
            if let Err(payload) = self.run_observer(id, &mut data, commands) {
                panic = Some(payload);
                break;
            }
        }
        if let Some(list) = merged {
            self.hooks.observers.scratch = list;
        }
        if let Some(payload) = panic {
            resume_unwind(payload);
        }
        data.propagate
    }

    /// Runs observer `id` (if it exists and is not running) for `data`;
    /// an error it returns is kept, a panic handed back once the observer
    /// is back in its slot.
    #[inline]
    fn run_observer(
        &mut self,
        id: ObserverId,
        data: &mut TriggerData,
        commands: &mut CommandBuffer,
    ) -> Result<(), Box<dyn std::any::Any + Send>> {
        let Some(entry) = self.hooks.observers.entries[id.0 as usize].as_mut() else {
            return Ok(());
        };
        let Some(Exclusive(mut body)) = entry.body.take() else {
            return Ok(());
        };
        let world: &WorldCore = self;
        let outcome = catch_unwind(AssertUnwindSafe(|| body.run(world, data, commands)));
        if let Some(entry) = self.hooks.observers.entries[id.0 as usize].as_mut() {
            entry.body = Some(Exclusive(body));
        }
        match outcome {
            Ok(Ok(())) => Ok(()),
            Ok(Err(e)) => {
                self.hooks.observers.errors.push(e);
                Ok(())
            }
            Err(payload) => Err(payload),
        }
    }

    /// Runs the lifecycle observers of `kind` on each of `components` of
    /// `entity` that has any, in order.
    pub(crate) fn run_lifecycle_observers(
        &mut self,
        kind: HookKind,
        entity: Entity,
        components: &[ComponentId],
        commands: &mut CommandBuffer,
    ) {
        // The lifecycle events are zero-sized: any aligned, non-null
        // pointer is a valid one.
        let event = std::ptr::NonNull::<OnAdd>::dangling().as_ptr().cast::<u8>();
        for &component in components {
            if self.hooks.observers.watches(kind, component) {
                let key = Key::Lifecycle(kind, component);
                self.run_observers(key, event, (Some(entity), Some(entity)), false, commands);
            }
        }
    }

    /// Runs the `OnDespawn` observers of `entity`, if any watch.
    pub(crate) fn run_despawn_observers(&mut self, entity: Entity) {
        if !self.hooks.observers.watches_despawn() {
            return;
        }
        let mut commands = std::mem::take(&mut self.hooks.commands);
        let event = std::ptr::NonNull::<OnDespawn>::dangling()
            .as_ptr()
            .cast::<u8>();
        let key = Key::Other(TypeId::of::<OnDespawn>());
        let trigger = (Some(entity), Some(entity));
        let outcome = catch_unwind(AssertUnwindSafe(|| {
            self.run_observers(key, event, trigger, false, &mut commands)
        }));
        super::hooks::put_back_commands(&mut self.hooks.commands, commands);
        if let Err(payload) = outcome {
            resume_unwind(payload);
        }
    }
}

impl World {
    /// Triggers `event` with no target: its global observers run now, and
    /// the commands they record are applied before this returns (see the
    /// module docs).
    ///
    /// # Errors
    /// [`ObserverError::Unsettled`] if the observers it set off were still
    /// triggering each other after [`MAX_HOOK_ROUNDS`](crate::MAX_HOOK_ROUNDS)
    /// rounds.
    pub fn trigger<E: Event>(&mut self, event: E) -> Result<(), ObserverError> {
        self.trigger_with(event, &[])
    }

    /// Triggers `event` on each of `targets` in turn (and up their
    /// `ChildOf` ancestors if `E::PROPAGATE`): the global observers of `E`
    /// and the targets' own run for each. Dead targets are skipped.
    ///
    /// # Errors
    /// As [`World::trigger`].
    pub fn trigger_targets<E: Event>(
        &mut self,
        event: E,
        targets: impl IntoIterator<Item = Entity>,
    ) -> Result<(), ObserverError> {
        let targets: Vec<Entity> = targets.into_iter().collect();
        if targets.is_empty() {
            return Ok(());
        }
        self.trigger_with(event, &targets)
    }

    /// The one path of [`trigger`](Self::trigger) and
    /// [`trigger_targets`](Self::trigger_targets): no targets means an
    /// untargeted trigger.
    fn trigger_with<E: Event>(
        &mut self,
        mut event: E,
        targets: &[Entity],
    ) -> Result<(), ObserverError> {
        const {
            assert!(
                !E::LIFECYCLE,
                "lifecycle events are fired by the world, not triggered by hand"
            )
        };
        let event_type = TypeId::of::<E>();
        let event_ptr = std::ptr::from_mut(&mut event).cast::<u8>();
        let mut commands = std::mem::take(&mut self.core.hooks.commands);
        let core = &mut self.core;
        let outcome = catch_unwind(AssertUnwindSafe(|| {
            if targets.is_empty() {
                core.run_observers(
                    Key::Other(event_type),
                    event_ptr,
                    (None, None),
                    false,
                    &mut commands,
                );
            }
            for &origin in targets {
                let mut at = origin;
                // A hierarchy has no cycles, and each step goes one level
                // up: at most as many steps as there are entities.
                for _ in 0..=core.len() {
                    if !core.contains_entity(at) {
                        break;
                    }
                    let trigger = (Some(at), Some(origin));
                    let go_on = core.run_observers(
                        Key::Other(event_type),
                        event_ptr,
                        trigger,
                        E::PROPAGATE,
                        &mut commands,
                    );
                    match core.parent(at) {
                        Some(parent) if go_on => at = parent,
                        _ => break,
                    }
                }
            }
        }));
        self.core.hooks.commands = commands;
        if let Err(payload) = outcome {
            resume_unwind(payload);
        }
        drop(event);
        let nested = self.flushing_hooks;
        self.flush_hooks();
        if !nested && !self.core.hooks.commands.is_empty() {
            return Err(ObserverError::Unsettled {
                rounds: crate::MAX_HOOK_ROUNDS,
            });
        }
        Ok(())
    }

    /// Removes observer `id`; `false` if this world has no such observer.
    pub fn remove_observer(&mut self, id: ObserverId) -> bool {
        match self.core.hooks.observers.remove(id) {
            Some(watch) => {
                if let Some(c) = watch.component {
                    self.refresh_hook_mask(c);
                }
                true
            }
            None => false,
        }
    }

    /// The observers that could not run (a missing resource), oldest
    /// first; taking them empties the list.
    pub fn take_observer_errors(&mut self) -> Vec<ObserverError> {
        std::mem::take(&mut self.core.hooks.observers.errors)
    }
}
