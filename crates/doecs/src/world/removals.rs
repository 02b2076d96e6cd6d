//! Removed components: which entities lost a component, and when.
//!
//! For each component someone asked about ([`WorldCore::track_removals`],
//! or a [`RemovedComponents`](crate::RemovedComponents) system parameter),
//! the world logs every entity that loses it, by removal, exchange, `take`,
//! or despawn (`clear` and command buffers included), with the tick of the
//! loss. A reader sees the entries stamped in its change window, so a system
//! sees each loss since its previous run exactly once.
//!
//! The log is kept for two schedule runs, as events are: each run starts by
//! dropping the entries stamped before the start of the run before it. A
//! system that runs in every run never misses an entry; one that skips runs
//! sees only the last two runs' losses. Components nobody asked about log
//! nothing, at the cost of one flag test per removal.
//!
//! The logs and their reader live here, in the world; the reader's
//! `SystemParam` implementation is with the other parameters, in
//! `system/param.rs`.

use super::core::WorldCore;
use crate::component::{Component, ComponentId};
use crate::entity::Entity;
use crate::tick::{ChangeWindow, Tick};
use std::any::TypeId;
use std::marker::PhantomData;

/// The removal logs of one world. See the module docs.
#[derive(Debug, Default)]
pub(crate) struct Removals {
    /// By component index: the log, for components that keep one.
    logs: Vec<Option<Vec<(Entity, Tick)>>>,
    /// Rust types asked for before they were registered.
    pending: Vec<TypeId>,
    /// The start tick of the previous schedule run.
    last_run_start: Tick,
}

impl Removals {
    fn enable(&mut self, id: ComponentId) {
        if self.logs.len() <= id.index() {
            self.logs.resize_with(id.index() + 1, || None);
        }
        self.logs[id.index()].get_or_insert_with(Vec::new);
    }
}

impl WorldCore {
    /// Keeps a log of the entities that lose `T` from now on (see the
    /// module docs); [`RemovedComponents<T>`](crate::RemovedComponents)
    /// parameters do this themselves.
    pub fn track_removals<T: Component>(&mut self) {
        match self.components.id_of::<T>() {
            Some(id) => self.removals.enable(id),
            None => {
                let t = TypeId::of::<T>();
                if !self.removals.pending.contains(&t) {
                    self.removals.pending.push(t);
                }
            }
        }
    }

    /// Keeps a removal log for component `id` (a runtime component, say).
    pub fn track_removals_by_id(&mut self, id: ComponentId) {
        self.removals.enable(id);
    }

    /// Whether any component keeps (or was asked to keep) a removal log.
    #[inline]
    pub(crate) fn removals_active(&self) -> bool {
        !(self.removals.logs.is_empty() && self.removals.pending.is_empty())
    }

    /// Records that `entity` lost each of `components` that keeps a log, now.
    pub(crate) fn log_removals(&mut self, entity: Entity, components: &[ComponentId]) {
        if !self.removals_active() {
            return;
        }
        if !self.removals.pending.is_empty() {
            let pending = std::mem::take(&mut self.removals.pending);
            for t in pending {
                match self.components.by_type_id(t) {
                    Some(id) => self.removals.enable(id),
                    None => self.removals.pending.push(t),
                }
            }
        }
        let tick = self.change_tick();
        for &c in components {
            if let Some(Some(log)) = self.removals.logs.get_mut(c.index()) {
                log.push((entity, tick));
            }
        }
    }

    /// Every logged loss of `T` still kept, oldest first, with its tick.
    pub fn removed<T: Component>(&self) -> impl Iterator<Item = (Entity, Tick)> + '_ {
        self.components
            .id_of::<T>()
            .and_then(|id| self.removals.logs.get(id.index()))
            .and_then(Option::as_ref)
            .into_iter()
            .flatten()
            .copied()
    }

    /// The entities that lost `T` in `window`, oldest first.
    pub fn removed_in<T: Component>(
        &self,
        window: ChangeWindow,
    ) -> impl Iterator<Item = Entity> + '_ {
        self.removed::<T>()
            .filter(move |&(_, tick)| window.contains(tick))
            .map(|(e, _)| e)
    }

    /// Called as a schedule run starts at `run_start`: drops the entries
    /// stamped before the previous run's start, so what any system saw in
    /// its last run (or missed since) stays, and no more (see the module docs).
    pub(crate) fn age_removals(&mut self, run_start: Tick) {
        let removals = &mut self.removals;
        let horizon = std::mem::replace(&mut removals.last_run_start, run_start);
        for log in removals.logs.iter_mut().flatten() {
            log.retain(|&(_, tick)| tick >= horizon);
        }
    }
}

/// The entities that lost `T` since the system's previous run (a system
/// parameter). See the module docs.
///
/// ```
/// use doecs::prelude::*;
/// use doecs::RemovedComponents;
/// struct Health(u32);
/// #[derive(Default)]
/// struct Dead(Vec<Entity>);
///
/// fn funerals(gone: RemovedComponents<Health>, mut dead: ResMut<Dead>) {
///     dead.0.extend(gone.iter());
/// }
///
/// let mut world = World::new();
/// world.insert_resource(Dead::default());
/// let mut schedule = Schedule::new();
/// schedule.add_system(funerals).unwrap();
/// schedule.run(&mut world).unwrap(); // the first run starts the log
/// let a = world.spawn((Health(1),));
/// let b = world.spawn((Health(2),));
/// world.despawn(a).unwrap();
/// world.remove_one::<Health>(b).unwrap();
/// schedule.run(&mut world).unwrap();
/// assert_eq!(world.resource::<Dead>().unwrap().0, vec![a, b]);
/// schedule.run(&mut world).unwrap();
/// assert_eq!(world.resource::<Dead>().unwrap().0.len(), 2, "each loss once");
/// ```
pub struct RemovedComponents<'a, T: 'static> {
    world: &'a WorldCore,
    window: ChangeWindow,
    _marker: PhantomData<fn() -> T>,
}

impl<'a, T: Component> RemovedComponents<'a, T> {
    /// The losses of `T` in `window` (what a system's parameter sees).
    pub(crate) fn new(world: &'a WorldCore, window: ChangeWindow) -> Self {
        RemovedComponents {
            world,
            window,
            _marker: PhantomData,
        }
    }

    /// The entities, oldest loss first.
    pub fn iter(&self) -> impl Iterator<Item = Entity> + 'a {
        self.world.removed_in::<T>(self.window)
    }

    /// How many losses.
    pub fn len(&self) -> usize {
        self.iter().count()
    }

    /// Whether there were none.
    pub fn is_empty(&self) -> bool {
        self.iter().next().is_none()
    }
}
