//! The view of the world a running system gets.
//!
//! Systems run in parallel on a shared `&World`, so a system may only touch
//! what it declared: a [`SystemContext`] checks every query, component lookup
//! and resource access against the system's [`SystemAccess`] and panics with
//! the system's name when something undeclared is asked for. The check for a
//! query shape runs once, when the system first builds that query; the query's
//! matched archetypes are then cached in the system between runs, so a query
//! in a system costs what a held [`QueryState`] costs.
//!
//! This is where the schedule's promise becomes memory safety: the schedule
//! never runs two systems whose accesses conflict at the same time, and the
//! context never lets a system reach beyond its access, so the `unchecked`
//! query loops it calls never alias.

use super::SystemAccess;
use crate::bundle::Bundle;
use crate::component::Component;
use crate::entities::spawn_ids::SpawnIds;
use crate::entities::Entities;
use crate::entity::Entity;
use crate::error::EntityError;
use crate::query::{AccessKey, Query, QueryData, QueryFilter, QueryState};
use crate::tick::ChangeWindow;
use crate::world::command::{CommandBuffer, Commands, IdSource};
use crate::world::WorldCore;

/// Per-system caches of matched archetypes, keyed by query shape.
pub use crate::query::QueryCaches;

/// Where a system's spawns get their ids.
pub(crate) enum SpawnSource<'a> {
    /// The system's pool, given out by the schedule.
    Pool(&'a mut SpawnIds),
    /// The world's allocator (an exclusive system's own context).
    World(&'a Entities),
}

/// What a running system may use. See the module docs.
pub struct SystemContext<'a> {
    world: &'a WorldCore,
    access: &'a SystemAccess,
    name: &'a str,
    commands: &'a mut CommandBuffer,
    spawn: SpawnSource<'a>,
    caches: &'a mut QueryCaches,
    window: ChangeWindow,
    /// The trigger an observer runs for (null for other systems).
    trigger: *mut crate::world::TriggerData,
}

impl<'a> SystemContext<'a> {
    /// A context for system `name` with `access` over `world`.
    ///
    /// The context hands out mutable access to what `access` declares as
    /// written through the shared `world`; the caller must make sure nothing
    /// else touches those for `'a`. That is why only the schedule and
    /// [`super::System::run_exclusive`] (which holds `&mut World`) build one.
    pub(crate) fn new(
        world: &'a WorldCore,
        access: &'a SystemAccess,
        name: &'a str,
        commands: &'a mut CommandBuffer,
        spawn: SpawnSource<'a>,
        caches: &'a mut QueryCaches,
        window: ChangeWindow,
    ) -> Self {
        SystemContext {
            world,
            access,
            name,
            commands,
            spawn,
            caches,
            window,
            trigger: std::ptr::null_mut(),
        }
    }

    /// The context of an observer running for `trigger`.
    pub(crate) fn with_trigger(mut self, trigger: &'a mut crate::world::TriggerData) -> Self {
        self.trigger = trigger;
        self
    }

    /// The system's change window: what its change filters see (changes
    /// since its previous run), and the tick its writes are stamped with.
    pub fn window(&self) -> ChangeWindow {
        self.window
    }

    /// The world the system runs on.
    pub(crate) fn world(&self) -> &'a WorldCore {
        self.world
    }

    /// The running system's name.
    pub fn name(&self) -> &str {
        self.name
    }

    /// What a function system's parameters are fetched from, for this run.
    pub(crate) fn system_run(&mut self) -> super::param::SystemRun<'_> {
        super::param::SystemRun {
            world: self.world,
            commands: std::ptr::from_mut(self.commands),
            spawn: std::ptr::from_mut(&mut self.spawn).cast(),
            window: self.window,
            trigger: self.trigger,
        }
    }

    /// Whether `entity` is alive. Entities only die when command buffers are
    /// applied, never while systems run.
    pub fn alive(&self, entity: Entity) -> bool {
        self.world.contains_entity(entity)
    }

    /// Number of live entities.
    pub fn entity_count(&self) -> usize {
        self.world.len()
    }

    /// A query. Every component it reads or writes must be declared.
    ///
    /// # Panics
    /// If the query reaches beyond the system's declared access, or aliases.
    pub fn query<Q: QueryData>(&mut self) -> Query<'_, Q, ()> {
        self.query_filtered::<Q, ()>()
    }

    /// A filtered query. Filters need no declaration.
    ///
    /// # Panics
    /// As [`SystemContext::query`].
    pub fn query_filtered<Q: QueryData, F: QueryFilter + 'static>(&mut self) -> Query<'_, Q, F> {
        if !self.caches.contains::<Q, F>() {
            // First use of this shape: check it against the declaration once.
            self.check_query_access(&QueryState::<Q, F>::access());
        }
        let state = self.caches.state::<Q, F>(self.world.id());
        // SAFETY: the query's access (its filter's reads included) was
        // checked against the system's declaration, the schedule runs no
        // conflicting system meanwhile, and the query borrows `self`, so this
        // system makes one query at a time.
        unsafe { Query::borrowed(self.world, state, self.window) }
    }

    fn check_query_access(&self, wanted: &crate::query::Access) {
        for key in wanted.reads() {
            self.require_read(key);
        }
        for key in wanted.writes() {
            self.require_write(key);
        }
        // Whole-entity views (`EntityRef`, `EntityMut`): the declaration
        // must cover every component too.
        let all = AccessKey::every_component();
        if wanted.writes_all() {
            self.require_write(&all);
        }
        if wanted.reads_all() || wanted.related_reads_all() {
            self.require_read(&all);
        }
    }

    fn require_read(&self, key: &AccessKey) {
        assert!(
            self.access.may_read_component(key),
            "doecs: system `{}` reads component `{}` without declaring it",
            self.name,
            key.name
        );
    }

    fn require_write(&self, key: &AccessKey) {
        assert!(
            self.access.may_write_component(key),
            "doecs: system `{}` writes component `{}` without declaring a write",
            self.name,
            key.name
        );
    }

    /// `entity`'s `T`. `T` must be declared read or written.
    ///
    /// # Panics
    /// If `T` is not declared.
    pub fn get<T: Component>(&self, entity: Entity) -> Result<&T, EntityError> {
        self.require_read(&AccessKey::of::<T>());
        let ptr = self.world.component_ptr::<T>(entity)?;
        // SAFETY: the slot holds a live `T`; the system declared a read of `T`,
        // so no system writing `T` runs meanwhile, and this system can only
        // write `T` through `&mut self`, which this borrow excludes.
        Ok(unsafe { &*ptr })
    }

    /// `entity`'s `T`, mutably. `T` must be declared written.
    ///
    /// # Errors
    /// As [`WorldCore::get_mut`], [`EntityError::Immutable`] included
    /// (the schedule refuses a system that declares a write of an
    /// immutable component before it runs, so only a component made
    /// immutable during the run gets here).
    ///
    /// # Panics
    /// If a write of `T` is not declared.
    pub fn get_mut<T: Component>(&mut self, entity: Entity) -> Result<&mut T, EntityError> {
        self.require_write(&AccessKey::of::<T>());
        let slot = self.world.write_slot::<T>(entity)?;
        // SAFETY: just found; the system declared a write of `T`, so no
        // other system touches `T` (or its stamps) meanwhile; `&mut self`
        // excludes this system's other accesses for the reference's life.
        Ok(unsafe {
            &mut *self
                .world
                .stamp_write_slot(slot, self.window.this_run)
                .cast::<T>()
        })
    }

    /// The resource `R`. It must be declared read or written; the schedule
    /// checked that it exists before the run started.
    ///
    /// # Panics
    /// If `R` is not declared, or was removed during the run (by an exclusive
    /// system).
    pub fn resource<R: Send + Sync + 'static>(&self) -> &R {
        let key = AccessKey::of::<R>();
        assert!(
            self.access.resources.reads().contains(&key)
                || self.access.resources.writes().contains(&key),
            "doecs: system `{}` reads resource `{}` without declaring it",
            self.name,
            key.name
        );
        self.world
            .resources()
            .get::<R>()
            .unwrap_or_else(|| missing(self.name, key))
    }

    /// The resource `R`, mutably. It must be declared written.
    ///
    /// # Panics
    /// As [`SystemContext::resource`].
    pub fn resource_mut<R: Send + Sync + 'static>(&mut self) -> &mut R {
        let key = AccessKey::of::<R>();
        assert!(
            self.access.resources.writes().contains(&key),
            "doecs: system `{}` writes resource `{}` without declaring a write",
            self.name,
            key.name
        );
        // SAFETY: the declared write makes the schedule keep every other
        // accessor of `R` from running meanwhile, and `&mut self` excludes
        // this system's own other accesses while the reference lives.
        let value = unsafe { self.world.resources().get_mut_unchecked::<R>() };
        let value = value.unwrap_or_else(|| missing(self.name, key));
        // Asking for `&mut` marks the resource changed at this system's tick.
        *value.changed = self.window.this_run;
        value.value
    }

    /// The system's commands, for structural changes applied at the next
    /// sync point.
    ///
    /// # Panics
    /// If the system did not declare that it records commands.
    pub fn commands(&mut self) -> Commands<'_> {
        assert!(
            self.access.commands,
            "doecs: system `{}` records commands without declaring it (use `.commands()`)",
            self.name
        );
        let ids = match &mut self.spawn {
            SpawnSource::Pool(pool) => IdSource::Pool(pool),
            SpawnSource::World(entities) => IdSource::World(entities),
        };
        Commands::new(self.commands, ids)
    }

    /// Records spawning `bundle`; the entity id is usable at once.
    ///
    /// # Panics
    /// As [`SystemContext::commands`].
    pub fn spawn<B: Bundle>(&mut self, bundle: B) -> Entity {
        self.commands().spawn(bundle)
    }
}

/// Panics for a declared resource that disappeared during the run.
#[cold]
fn missing(system: &str, key: AccessKey) -> ! {
    panic!(
        "doecs: system `{system}`: resource `{}` was removed while the schedule ran",
        key.name
    )
}
