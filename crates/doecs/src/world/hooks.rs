//! Component hooks: code that runs when a component arrives on an entity,
//! is overwritten, or leaves.
//!
//! Four hooks per component type, with bevy_ecs's meanings:
//! - `on_add`: the entity got the component and did not have it before;
//! - `on_insert`: the component was written by an insert or a spawn (after
//!   `on_add` for a new one, and for one that replaced a value);
//! - `on_replace`: the value is about to go, replaced by an insert or
//!   removed (the old value is still there to read);
//! - `on_remove`: the component is about to leave the entity (removed,
//!   taken, exchanged away, or the entity despawned, cleared, or dropped
//!   with its world).
//!
//! They fire on every path, through the one structural core each path takes
//! (`world::structure`): spawn, batch spawn, column spawns (levels), insert,
//! remove, exchange, despawn, command buffers, `clear`, and dropping the
//! world. Each fires exactly once per entity and component per event, with
//! the world consistent: `on_add` and `on_insert` after the values are in
//! place, `on_replace` and `on_remove` before anything changes. A hook sees
//! the world read-only and records structural changes into a command
//! buffer; the world applies those right after the operation that fired the
//! hook, in the order the hooks recorded them, so the result is the same at
//! any thread count. A hook that panics leaves the world consistent: the
//! operation that fired it either has not started (`on_replace`,
//! `on_remove`) or is complete (`on_add`, `on_insert`), and the panic
//! continues to the caller.
//!
//! Hooks belong to a [`World`](crate::World); the worlds of a
//! [`Universe`](crate::Universe) have none, because commands need an id
//! allocator to apply to.

use super::command::CommandBuffer;
use super::WorldCore;
use crate::component::ComponentId;
use crate::entity::Entity;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::sync::Arc;

/// What a hook gets: the world (read-only), the entity and component, and a
/// command buffer applied right after the operation.
pub struct HookContext<'w> {
    /// The world, consistent, as the hook's event leaves it (see the module docs).
    pub world: &'w WorldCore,
    /// The entity.
    pub entity: Entity,
    /// The component the hook belongs to.
    pub component: ComponentId,
    /// Structural changes to make once the operation is done.
    pub commands: &'w mut CommandBuffer,
}

impl HookContext<'_> {
    /// Records spawning an entity with `bundle` after the operation; its id
    /// is reserved now, so later commands can refer to it.
    pub fn spawn<B: crate::bundle::Bundle>(&mut self, bundle: B) -> Entity {
        let entity = self.world.entities.reserve();
        self.commands.spawn_reserved(entity, bundle);
        entity
    }
}

/// One hook: any `Fn` over a [`HookContext`], shareable between threads.
pub type Hook = Arc<dyn Fn(&mut HookContext<'_>) + Send + Sync>;

/// Which hook fires.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum HookKind {
    /// The component arrived on an entity that did not have it.
    Add,
    /// The component was written by an insert or a spawn.
    Insert,
    /// The value is about to be replaced or removed.
    Replace,
    /// The component is about to leave the entity.
    Remove,
}

impl HookKind {
    /// The kind's bit in a hook mask.
    #[inline]
    pub(crate) const fn bit(self) -> u8 {
        match self {
            HookKind::Add => 1,
            HookKind::Insert => 2,
            HookKind::Replace => 4,
            HookKind::Remove => 8,
        }
    }
}

/// The hooks of one component type. Build with the `on_*` methods.
///
/// ```
/// use doecs::{ComponentHooks, World};
/// use std::sync::atomic::{AtomicUsize, Ordering};
/// use std::sync::Arc;
/// struct Health(u32);
///
/// let added = Arc::new(AtomicUsize::new(0));
/// let seen = added.clone();
/// let mut world = World::new();
/// world.set_hooks::<Health>(ComponentHooks::new().on_add(move |ctx| {
///     seen.fetch_add(1, Ordering::Relaxed);
///     // Hooks read the world and record commands.
///     let health = ctx.world.get::<Health>(ctx.entity).unwrap().0;
///     if health == 0 {
///         ctx.commands.despawn(ctx.entity);
///     }
/// }));
/// let alive = world.spawn((Health(3),));
/// let dead = world.spawn((Health(0),));
/// assert_eq!(added.load(Ordering::Relaxed), 2);
/// assert!(world.alive(alive));
/// assert!(!world.alive(dead), "the hook's despawn was applied after the spawn");
/// ```
#[derive(Clone, Default)]
pub struct ComponentHooks {
    add: Option<Hook>,
    insert: Option<Hook>,
    replace: Option<Hook>,
    remove: Option<Hook>,
}

impl std::fmt::Debug for ComponentHooks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ComponentHooks")
            .field("on_add", &self.add.is_some())
            .field("on_insert", &self.insert.is_some())
            .field("on_replace", &self.replace.is_some())
            .field("on_remove", &self.remove.is_some())
            .finish()
    }
}

impl ComponentHooks {
    /// No hooks.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the `on_add` hook.
    pub fn on_add(mut self, hook: impl Fn(&mut HookContext<'_>) + Send + Sync + 'static) -> Self {
        self.add = Some(Arc::new(hook));
        self
    }

    /// Sets the `on_insert` hook.
    pub fn on_insert(
        mut self,
        hook: impl Fn(&mut HookContext<'_>) + Send + Sync + 'static,
    ) -> Self {
        self.insert = Some(Arc::new(hook));
        self
    }

    /// Sets the `on_replace` hook.
    pub fn on_replace(
        mut self,
        hook: impl Fn(&mut HookContext<'_>) + Send + Sync + 'static,
    ) -> Self {
        self.replace = Some(Arc::new(hook));
        self
    }

    /// Sets the `on_remove` hook.
    pub fn on_remove(
        mut self,
        hook: impl Fn(&mut HookContext<'_>) + Send + Sync + 'static,
    ) -> Self {
        self.remove = Some(Arc::new(hook));
        self
    }

    /// The hook of `kind`, if set.
    pub fn get(&self, kind: HookKind) -> Option<&Hook> {
        match kind {
            HookKind::Add => self.add.as_ref(),
            HookKind::Insert => self.insert.as_ref(),
            HookKind::Replace => self.replace.as_ref(),
            HookKind::Remove => self.remove.as_ref(),
        }
    }

    /// The mask of the kinds set.
    pub(crate) fn mask(&self) -> u8 {
        [
            HookKind::Add,
            HookKind::Insert,
            HookKind::Replace,
            HookKind::Remove,
        ]
        .into_iter()
        .filter(|&k| self.get(k).is_some())
        .fold(0, |m, k| m | k.bit())
    }
}

/// Records inserting a required component's value on an entity.
pub(crate) type MakeRequired = Arc<dyn Fn(&mut CommandBuffer, Entity) + Send + Sync>;

/// One required component: its id and how to make its value.
#[derive(Clone)]
pub(crate) struct Requirement {
    pub(crate) component: ComponentId,
    pub(crate) make: MakeRequired,
}

/// Every component's hooks in one world, and the buffer their commands go to.
#[derive(Default)]
pub(crate) struct Hooks {
    /// By component index.
    by_component: Vec<Option<Arc<ComponentHooks>>>,
    /// The components each component requires, by component index.
    requires: Vec<Vec<Requirement>>,
    /// Commands recorded by hooks, applied after the operation that fired them.
    pub(crate) commands: CommandBuffer,
    /// The world's observers (they fire where the hooks do).
    pub(crate) observers: super::observers::Observers,
}

impl std::fmt::Debug for Hooks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Hooks")
            .field("components", &self.by_component.iter().flatten().count())
            .field("pending_commands", &self.commands.len())
            .finish()
    }
}

impl Hooks {
    /// Sets (or, with no hooks, clears) the hooks of `id`.
    pub(crate) fn set(&mut self, id: ComponentId, hooks: ComponentHooks) {
        if self.by_component.len() <= id.index() {
            self.by_component.resize(id.index() + 1, None);
        }
        self.by_component[id.index()] = (hooks.mask() != 0).then(|| Arc::new(hooks));
    }

    /// The hooks of `id`.
    #[inline]
    pub(crate) fn of(&self, id: ComponentId) -> Option<&Arc<ComponentHooks>> {
        self.by_component.get(id.index())?.as_ref()
    }

    /// The components `id` requires.
    #[inline]
    pub(crate) fn requirements(&self, id: ComponentId) -> &[Requirement] {
        self.requires.get(id.index()).map_or(&[], Vec::as_slice)
    }

    /// Adds a requirement of `id`.
    pub(crate) fn require(&mut self, id: ComponentId, requirement: Requirement) {
        if self.requires.len() <= id.index() {
            self.requires.resize(id.index() + 1, Vec::new());
        }
        self.requires[id.index()].push(requirement);
    }

    /// The mask of hook kinds that do something for `id`: its hooks', its
    /// observers', and `Add` where it requires components (their
    /// insertion rides on it).
    pub(crate) fn mask_of(&self, id: ComponentId) -> u8 {
        let hooks = self.of(id).map_or(0, |h| h.mask()) | self.observers.mask_of(id);
        let required = if self.requirements(id).is_empty() {
            0
        } else {
            HookKind::Add.bit()
        };
        hooks | required
    }
}

impl WorldCore {
    /// Whether any component of archetype `archetype` has a `kind` hook.
    #[inline]
    pub(crate) fn has_hooks(&self, archetype: crate::storage::ArchetypeId, kind: HookKind) -> bool {
        self.archetypes.get(archetype).hook_mask() & kind.bit() != 0
    }

    /// Runs the `kind` hook of each of `components` (those that have one)
    /// for `entity`, in order. The world must be consistent. If a hook
    /// panics, the commands recorded so far stay queued and the panic goes on.
    pub(crate) fn fire_hooks(
        &mut self,
        kind: HookKind,
        entity: Entity,
        components: &[ComponentId],
    ) {
        let mut commands = std::mem::take(&mut self.hooks.commands);
        let outcome = catch_unwind(AssertUnwindSafe(|| {
            let mut observed = false;
            let world: &WorldCore = self;
            for &component in components {
                if let Some(hook) = world.hooks.of(component).and_then(|h| h.get(kind)) {
                    hook(&mut HookContext {
                        world,
                        entity,
                        component,
                        commands: &mut commands,
                    });
                }
                if kind == HookKind::Add {
                    // Required components the entity lacks are inserted
                    // right after the operation, after its hooks' commands
                    // recorded so far.
                    for required in world.hooks.requirements(component) {
                        if !world.has_id(entity, required.component) {
                            (required.make)(&mut commands, entity);
                        }
                    }
                }
                observed |= world.hooks.observers.watches(kind, component);
            }
            // Observers run after every hook of the change.
            if observed {
                self.run_lifecycle_observers(kind, entity, components, &mut commands);
            }
        }));
        put_back_commands(&mut self.hooks.commands, commands);
        if let Err(payload) = outcome {
            resume_unwind(payload);
        }
    }

    /// Runs the `kind` hooks of every component of the entity at `location`.
    pub(crate) fn fire_row_hooks(
        &mut self,
        kind: HookKind,
        entity: Entity,
        location: crate::location::Location,
    ) {
        if !self.has_hooks(location.archetype, kind) {
            return;
        }
        let components = super::id_list::IdList::from_slice(
            self.archetypes.get(location.archetype).components(),
        );
        self.fire_hooks(kind, entity, components.as_slice());
    }
}

/// Puts a hook firing's command buffer back in the world. What stands in
/// its place meanwhile is the empty default (hooks and observers see the
/// world shared and cannot record into it), which owns no memory: it is
/// forgotten rather than dropped, since dropping walks its (empty) lists.
#[inline]
pub(crate) fn put_back_commands(slot: &mut CommandBuffer, commands: CommandBuffer) {
    let stand_in = std::mem::replace(slot, commands);
    debug_assert!(stand_in.is_empty() && stand_in.payload_bytes() == 0);
    std::mem::forget(stand_in);
}
