//! Observers as systems: the [`Trigger`] parameter, and registering a
//! system as a world's or an entity's observer.
//!
//! The world layer keeps its observers type-erased and fires them where its
//! hooks fire (see [`crate::world`]'s observer table, documented on
//! [`World::trigger`]); this layer makes an observer of any function
//! system whose first parameter is a [`Trigger<E, C>`], so an observer
//! takes queries, resources, `Commands` and the other system parameters,
//! checked for aliasing as any system's are. The trigger says what it
//! watches: the system's access records it when the system is made, so a
//! function is refused as an observer if it has no trigger, and refused
//! by schedules, one-shot runs and run conditions if it has one.
//!
//! An observer runs as an exclusive step would, but in the middle of the
//! operation that fired it: on the world as that operation leaves it at
//! the event's point (see [`crate::hooks`]), with writes to what its
//! parameters declare and structural changes recorded as commands. Its
//! change window runs from its previous run to the world's current tick.
//!
//! ```
//! use doecs::prelude::*;
//! use doecs::{OnAdd, OnRemove, Trigger};
//! struct Health(u32);
//! #[derive(Default)]
//! struct Census(i32);
//!
//! let mut world = World::new();
//! world.init_resource::<Census>();
//! world.observe(|_: Trigger<OnAdd, Health>, mut census: ResMut<Census>| census.0 += 1)?;
//! world.observe(|t: Trigger<OnRemove, Health>, hp: Query<&Health>, mut census: ResMut<Census>| {
//!     // The component is still there to read.
//!     assert!(hp.get(t.entity()).is_ok());
//!     census.0 -= 1;
//! })?;
//! let a = world.spawn((Health(3),));
//! world.spawn((Health(5),));
//! world.despawn(a)?;
//! assert_eq!(world.resource::<Census>().unwrap().0, 1);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use crate::component::{Component, ComponentId};
use crate::entity::Entity;
use crate::system::context::{QueryCaches, SpawnSource, SystemContext};
use crate::system::desc::{IntoSystemDesc, SystemKind};
use crate::system::error::ScheduleError;
use crate::system::param::{ObservedEvent, ParamAccess, SystemParam, SystemRun};
use crate::system::{System, SystemAccess};
use crate::tick::{ChangeWindow, Tick};
use crate::world::command::CommandBuffer;
use crate::world::{
    EntityWorldMut, Event, ObserverError, ObserverId, OnAdd, OnDespawn, OnInsert, OnRemove,
    OnReplace, RunObserver, TriggerData, Watch, World, WorldCore,
};
use std::any::TypeId;
use std::marker::PhantomData;

/// An observer's first parameter: the event `E` that ran it, the entity it
/// is about, and (for lifecycle events) the component `C`. With a
/// lifecycle event, `C` says which component is watched:
/// `Trigger<OnAdd, Health>`; other events leave it out: `Trigger<Hit>`.
pub struct Trigger<'a, E: Event, C: Component = ()> {
    data: &'a mut TriggerData,
    _marker: PhantomData<fn() -> (E, C)>,
}

impl<E: Event, C: Component> Trigger<'_, E, C> {
    /// The event.
    pub fn event(&self) -> &E {
        // SAFETY: the world runs an observer only for triggers of the event
        // type it was registered with (`E`, from this parameter's
        // `describe`), with `event` pointing at a live `E` for the run.
        unsafe { &*self.data.event.cast::<E>() }
    }

    /// The event, mutably: observers that run after this one see the
    /// change.
    pub fn event_mut(&mut self) -> &mut E {
        // SAFETY: as `event`; the trigger is borrowed mutably, and a system
        // has one trigger parameter (a second is refused as aliasing).
        unsafe { &mut *self.data.event.cast::<E>() }
    }

    /// The entity the event is about: the target (for a propagating
    /// event, the ancestor it has reached), or `None` for an untargeted
    /// trigger.
    pub fn target(&self) -> Option<Entity> {
        self.data.target
    }

    /// The entity the event was triggered on, before any propagation.
    pub fn origin(&self) -> Option<Entity> {
        self.data.origin
    }

    /// The component, for lifecycle events.
    pub fn component(&self) -> Option<ComponentId> {
        self.data.component
    }

    /// Whether the trigger goes on to the target's `ChildOf` parent once
    /// this target's observers have run: `E::PROPAGATE` unless an
    /// observer changed it.
    pub fn is_propagating(&self) -> bool {
        self.data.propagate
    }

    /// Lets the trigger go on up `ChildOf` (`true`) or stops it here
    /// (`false`) once this target's observers have run.
    pub fn propagate(&mut self, go_on: bool) {
        self.data.propagate = go_on;
    }
}

impl<E: EntityEvent, C: Component> Trigger<'_, E, C> {
    /// The entity the lifecycle event happened to.
    pub fn entity(&self) -> Entity {
        self.data
            .target
            .expect("the world fires lifecycle events on an entity, and refuses to trigger them")
    }
}

mod sealed {
    pub trait Sealed {}
}

/// The lifecycle events, which always happen to an entity (the world
/// fires them; [`World::trigger`] refuses them at compile time).
pub trait EntityEvent: Event + sealed::Sealed {}
impl sealed::Sealed for OnAdd {}
impl sealed::Sealed for OnInsert {}
impl sealed::Sealed for OnReplace {}
impl sealed::Sealed for OnRemove {}
impl sealed::Sealed for OnDespawn {}
impl EntityEvent for OnAdd {}
impl EntityEvent for OnInsert {}
impl EntityEvent for OnReplace {}
impl EntityEvent for OnRemove {}
impl EntityEvent for OnDespawn {}

/// Registers component `C` in `core` (what a trigger's component needs).
fn register<C: Component>(core: &mut WorldCore) -> ComponentId {
    core.component_id::<C>()
}

// SAFETY: the parameter touches no component, resource or manager; it
// reads and writes only the trigger the world hands the observer, and
// `describe` records that it needs one (a second trigger in one system is
// refused as a conflict, and systems with a trigger are refused outside
// observers, where there is none).
unsafe impl<E: Event, C: Component> SystemParam for Trigger<'_, E, C> {
    type State = ();
    type Item<'a>
        = Trigger<'a, E, C>
    where
        Self: 'a;

    fn describe(access: &mut ParamAccess) -> Self::State {
        let component = (TypeId::of::<C>() != TypeId::of::<()>()).then(|| {
            (
                std::any::type_name::<C>(),
                register::<C> as fn(&mut WorldCore) -> _,
            )
        });
        access.observes = Some(ObservedEvent {
            event: TypeId::of::<E>(),
            event_name: std::any::type_name::<E>(),
            component,
        });
    }

    unsafe fn fetch<'a>(_state: &'a mut (), run: &'a SystemRun<'a>) -> Trigger<'a, E, C>
    where
        Self: 'a,
    {
        // SAFETY: `run.trigger` is null or points at the trigger the world
        // runs this observer for, alive and not otherwise borrowed for the
        // run (the system has this one trigger parameter).
        let data = unsafe { run.trigger.as_mut() }
            .expect("only a trigger runs an observer: schedules refuse systems with a `Trigger`");
        Trigger {
            data,
            _marker: PhantomData,
        }
    }
}

/// Why a system could not be registered as an observer.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ObserveError {
    /// The system itself was refused (parameters that alias, say).
    #[error(transparent)]
    System(#[from] ScheduleError),
    /// The system has no `Trigger` parameter, so nothing says what it
    /// observes.
    #[error("system `{0}` has no `Trigger<E>` parameter, so it cannot observe anything")]
    NoTrigger(String),
    /// A per-component lifecycle event was observed without a component.
    #[error(
        "observer `{observer}`: `{event}` happens to a component; name it: `Trigger<{event}, C>`"
    )]
    NeedsComponent {
        /// The observer.
        observer: String,
        /// The event type.
        event: &'static str,
    },
    /// A component was named for an event that is not about components.
    #[error("observer `{observer}`: `{event}` does not happen to a component; observe it as `Trigger<{event}>`")]
    NotAComponentEvent {
        /// The observer.
        observer: String,
        /// The event type.
        event: &'static str,
    },
    /// Observers run when triggered, not under run conditions.
    #[error("observer `{0}` has run conditions; an observer runs whenever it is triggered (check inside it instead)")]
    RunConditions(String),
    /// An entity observer was asked for an entity that is not alive.
    #[error("cannot observe {0:?}: it is not alive")]
    DeadEntity(Entity),
}

/// A system run as an observer.
struct ObserverSystem {
    system: Box<dyn System>,
    access: SystemAccess,
    name: String,
    last_run: Tick,
    caches: QueryCaches,
}

impl RunObserver for ObserverSystem {
    fn run(
        &mut self,
        world: &WorldCore,
        trigger: &mut TriggerData,
        commands: &mut CommandBuffer,
    ) -> Result<(), ObserverError> {
        if let Some(key) = self
            .access
            .required_resources
            .iter()
            .find(|k| !world.resources().contains_type(k.type_id))
        {
            return Err(ObserverError::MissingResource {
                observer: self.name.clone(),
                resource: key.name,
            });
        }
        if let Some(key) = self
            .access
            .required_managers
            .iter()
            .find(|k| !world.managers.contains_type(k.type_id))
        {
            return Err(ObserverError::MissingManager {
                observer: self.name.clone(),
                manager: key.name,
            });
        }
        let window = ChangeWindow {
            last_run: self.last_run,
            this_run: world.change_tick(),
        };
        // The world runs observers while it holds itself mutably, with
        // nothing else touching it: the context's access is this system's.
        let mut context = SystemContext::new(
            world,
            &self.access,
            &self.name,
            commands,
            SpawnSource::World(&world.entities),
            &mut self.caches,
            window,
        )
        .with_trigger(trigger);
        self.system.run(&mut context);
        self.last_run = window.this_run;
        Ok(())
    }
}

impl World {
    /// Registers `system` as a global observer: it runs whenever the event
    /// of its [`Trigger`] parameter is triggered (for lifecycle events, on
    /// the trigger's component, on any entity). See the module docs of
    /// [`Event`] for the order observers run in.
    ///
    /// # Errors
    /// [`ObserveError`]: no trigger, a lifecycle event without a component
    /// (or another event with one), run conditions, or whatever a schedule
    /// would refuse; the world is unchanged then.
    pub fn observe<M, S>(&mut self, system: S) -> Result<ObserverId, ObserveError>
    where
        S: SystemKind<M> + IntoSystemDesc<M>,
    {
        self.add_observer(system, None)
    }

    /// Registers `system` as an observer of `entity`: as
    /// [`observe`](Self::observe), but only for triggers on `entity`. It is
    /// removed when `entity` is despawned.
    ///
    /// # Errors
    /// As [`observe`](Self::observe), and [`ObserveError::DeadEntity`].
    pub fn observe_entity<M, S>(
        &mut self,
        entity: Entity,
        system: S,
    ) -> Result<ObserverId, ObserveError>
    where
        S: SystemKind<M> + IntoSystemDesc<M>,
    {
        if !self.alive(entity) {
            return Err(ObserveError::DeadEntity(entity));
        }
        self.add_observer(system, Some(entity))
    }

    /// The one path of `observe` and `observe_entity`.
    fn add_observer<M, S>(
        &mut self,
        system: S,
        entity: Option<Entity>,
    ) -> Result<ObserverId, ObserveError>
    where
        S: SystemKind<M> + IntoSystemDesc<M>,
    {
        let desc = system.into_desc();
        let name = desc.name().to_owned();
        if !desc.conditions.is_empty() {
            return Err(ObserveError::RunConditions(name));
        }
        let system = desc.system?;
        let access = system.access().clone();
        let observed = access
            .observes
            .ok_or_else(|| ObserveError::NoTrigger(name.clone()))?;
        let lifecycle = crate::world::lifecycle_kind(observed.event).is_some();
        match (lifecycle, observed.component.is_some()) {
            (true, false) => {
                return Err(ObserveError::NeedsComponent {
                    observer: name,
                    event: observed.event_name,
                })
            }
            (false, true) => {
                return Err(ObserveError::NotAComponentEvent {
                    observer: name,
                    event: observed.event_name,
                })
            }
            _ => {}
        }
        let component = observed
            .component
            .map(|(_, register)| register(&mut self.core));
        self.core.track_types(&access.tracked);
        for setup in &access.setup {
            setup(&mut self.core);
        }
        let watch = Watch {
            event: observed.event,
            event_name: observed.event_name,
            component,
            entity,
        };
        let body = ObserverSystem {
            system,
            access,
            name: name.clone(),
            last_run: Tick::ZERO,
            caches: QueryCaches::default(),
        };
        let id = self.core.hooks.observers.add(Box::new(body), name, watch);
        if let Some(c) = component {
            self.refresh_hook_mask(c);
        }
        Ok(id)
    }
}

impl EntityWorldMut<'_> {
    /// Registers `system` as an observer of this entity (see
    /// [`World::observe_entity`]): `world.entity_mut(e)?.observe(..)`.
    ///
    /// # Errors
    /// As [`World::observe`].
    pub fn observe<M, S>(&mut self, system: S) -> Result<ObserverId, ObserveError>
    where
        S: SystemKind<M> + IntoSystemDesc<M>,
    {
        let (world, entity) = self.world_and_entity();
        world.observe_entity(entity, system)
    }
}
