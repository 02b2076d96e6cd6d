//! One-shot systems: a system run once, now, outside any schedule, and
//! systems registered once and run by id when the game decides.
//!
//! A one-shot run is the step of an exclusive system: the system gets a
//! context over the whole world with its declared access, its run
//! conditions are evaluated first, its command buffer is applied right
//! after, and the change clock moves past its step. Its change window
//! starts at the beginning of time for [`World::run_system_once`] (a
//! fresh system sees everything as added) and at its previous run for a
//! registered system, as in a schedule.

use super::{check_required_access, check_world_allows};
use crate::system::condition::Condition;
use crate::system::context::{QueryCaches, SpawnSource, SystemContext};
use crate::system::desc::{IntoSystemDesc, SystemKind};
use crate::system::error::ScheduleError;
use crate::system::{System, SystemId};
use crate::tick::{ChangeWindow, Tick};
use crate::world::command::CommandBuffer;
use crate::world::World;
use std::sync::{Mutex, PoisonError};

/// A registered system and its state between runs.
struct Registered {
    system: Box<dyn System>,
    conditions: Vec<Box<dyn Condition>>,
    last_run: Tick,
}

/// The world's registered systems (a resource: the mutex makes the
/// `Send` systems shareable, and is never contended, since only `&mut
/// World` reaches it); a slot is empty while its system runs.
#[derive(Default)]
struct RegisteredSystems(Vec<Option<Mutex<Registered>>>);

impl World {
    /// Runs `system` once, now, as an exclusive step: see the module docs.
    ///
    /// ```
    /// use doecs::prelude::*;
    /// struct Score(u32);
    /// let mut world = World::new();
    /// world.insert_resource(Score(1));
    /// world.run_system_once(|mut s: ResMut<Score>| s.0 *= 10)?;
    /// assert_eq!(world.resource::<Score>().unwrap().0, 10);
    /// # Ok::<(), ScheduleError>(())
    /// ```
    ///
    /// # Errors
    /// Whatever adding it to a schedule would refuse (parameters that
    /// alias, a writing run condition), a write of a component the world
    /// registered immutable ([`ScheduleError::WritesImmutable`]), or a
    /// missing resource or manager it requires; the world is unchanged
    /// then.
    pub fn run_system_once<M, S>(&mut self, system: S) -> Result<(), ScheduleError>
    where
        S: SystemKind<M> + IntoSystemDesc<M>,
    {
        let mut registered = prepare(system)?;
        run(self, &mut registered)
    }

    /// Registers `system` to be run by id with [`World::run_system`]; it
    /// keeps its state (queries, `Local`s, its change window) between runs.
    ///
    /// # Errors
    /// As [`World::run_system_once`], for what is known before a run.
    pub fn register_system<M, S>(&mut self, system: S) -> Result<SystemId, ScheduleError>
    where
        S: SystemKind<M> + IntoSystemDesc<M>,
    {
        let registered = prepare(system)?;
        if self.resource::<RegisteredSystems>().is_none() {
            self.insert_resource(RegisteredSystems::default());
        }
        let systems = self
            .resource_mut::<RegisteredSystems>()
            .expect("inserted above");
        systems.0.push(Some(Mutex::new(registered)));
        Ok(SystemId(systems.0.len() as u32 - 1))
    }

    /// Runs the system registered as `id`.
    ///
    /// # Errors
    /// [`ScheduleError::NoSuchSystem`] for an id this world did not hand
    /// out, or for a system already running (a system that runs itself);
    /// a missing resource or manager it requires.
    pub fn run_system(&mut self, id: SystemId) -> Result<(), ScheduleError> {
        let mut registered = self
            .resource_mut::<RegisteredSystems>()
            .and_then(|s| s.0.get_mut(id.0 as usize).and_then(Option::take))
            .ok_or(ScheduleError::NoSuchSystem(id))?
            .into_inner()
            .unwrap_or_else(PoisonError::into_inner);
        let outcome = run(self, &mut registered);
        if let Some(systems) = self.resource_mut::<RegisteredSystems>() {
            systems.0[id.0 as usize] = Some(Mutex::new(registered));
        }
        outcome
    }
}

fn prepare<M, S: SystemKind<M> + IntoSystemDesc<M>>(
    system: S,
) -> Result<Registered, ScheduleError> {
    let desc = system.into_desc();
    let system = desc.system?;
    crate::system::refuse_observer(system.name(), system.access())?;
    let mut conditions = Vec::with_capacity(desc.conditions.len());
    for condition in &desc.conditions {
        conditions.push(condition.make()?);
    }
    Ok(Registered {
        system,
        conditions,
        last_run: Tick::ZERO,
    })
}

/// One exclusive step of `registered` on `world`.
fn run(world: &mut World, registered: &mut Registered) -> Result<(), ScheduleError> {
    let mut access = registered.system.access().clone();
    for condition in &registered.conditions {
        access.extend(condition.access());
    }
    let name = registered.system.name().to_owned();
    check_world_allows(&name, &access, world)?;
    check_required_access(&name, &access, world)?;
    world.core.track_types(&access.tracked);
    for setup in &access.setup {
        setup(&mut world.core);
    }
    let tick = world.change_tick();
    let window = ChangeWindow {
        last_run: registered.last_run,
        this_run: tick,
    };
    if !registered.conditions.is_empty() {
        let mut commands = CommandBuffer::new();
        let mut caches = QueryCaches::default();
        let mut context = SystemContext::new(
            &world.core,
            &access,
            &name,
            &mut commands,
            SpawnSource::World(&world.core.entities),
            &mut caches,
            window,
        );
        if !registered
            .conditions
            .iter_mut()
            .all(|c| c.evaluate(&mut context))
        {
            return Ok(());
        }
    }
    registered.system.run_exclusive(world, window);
    registered.last_run = tick;
    let after = world.change_tick().max(tick.next());
    world.core.set_change_tick(after);
    Ok(())
}
