//! Component managers: components that own their storage (Bitsquid's "Building a Data-Oriented Entity System", part 2).
//!
//! Some components want full control of their data layout, like the Bitsquid
//! managers: a transform hierarchy, a physics scene, a data store. Such a manager
//! keeps its own structure-of-arrays keyed by [`Entity`] and hands out `Instance`
//! handles. The world stores managers beside its archetype storage, so one entity
//! can have both kinds of component.
//!
//! A manager learns that entities were destroyed in one of two ways, chosen when
//! it is added to a world ([`DestroyNotice`]):
//! - **Callback:** the world calls [`ComponentManager::on_destroy`] with every batch
//!   of destroyed entities, one call per batch.
//! - **Lazy garbage collection:** the world never calls `on_destroy`; instead
//!   [`ComponentManager::collect_garbage`] runs when the user asks
//!   (`World::collect_garbage`). The article's version probes random instances and
//!   stops after four live ones in a row, so it costs almost nothing when nothing
//!   died.

use crate::entities::Entities;
use crate::entity::Entity;
use crate::relation::Hierarchy;
use std::any::{Any, TypeId};
use std::cell::UnsafeCell;

/// How a manager hears about destroyed entities.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum DestroyNotice {
    /// `on_destroy` is called with each batch of destroyed entities.
    Callback,
    /// Nothing is called on destroy; `collect_garbage` cleans up lazily.
    LazyGc,
}

/// A component that owns its storage. See the module docs.
///
pub trait ComponentManager: Any + Send + Sync {
    /// Called with entities that were destroyed, in destruction order, when the
    /// manager was added with [`DestroyNotice::Callback`]. The slice may contain
    /// entities this manager never saw; ignore those.
    fn on_destroy(&mut self, destroyed: &[Entity]);

    /// Lazy collection of instances whose entity is dead. Returns how many
    /// instances were destroyed. The default does nothing.
    fn collect_garbage(&mut self, entities: &Entities) -> usize {
        let _ = entities;
        0
    }

    /// Saves the manager's state into a world snapshot. `saved` holds what
    /// the previous snapshot into the same buffer saved (reuse its memory,
    /// for example with `clone_from`). Returns whether the manager takes
    /// part; the default does not, and a restore leaves it as it is.
    fn save_state(&self, saved: &mut Option<Box<dyn Any + Send + Sync>>) -> bool {
        let _ = saved;
        false
    }

    /// Puts back what [`save_state`](Self::save_state) saved.
    fn restore_state(&mut self, saved: &(dyn Any + Send + Sync)) {
        let _ = saved;
    }

    /// Called when the manager joins a world, and again after a load
    /// replaced the world's pairs, with the world's `ChildOf` hierarchy.
    /// A manager that keeps parent links of its own makes them agree with
    /// it here, and from then on follows
    /// [`on_parent_changed`](Self::on_parent_changed): the hierarchy is the
    /// one truth (see [`Hierarchy`]). The default does nothing.
    fn follow_hierarchy(&mut self, hierarchy: Hierarchy<'_>) {
        let _ = hierarchy;
    }

    /// Called after the world gave `child` the parent `parent` (`None`:
    /// `child` lost its parent and lives on as a root), with the hierarchy
    /// as it is now. Despawns are not reported here: they come to
    /// [`on_destroy`](Self::on_destroy). The default does nothing.
    fn on_parent_changed(
        &mut self,
        hierarchy: Hierarchy<'_>,
        child: Entity,
        parent: Option<Entity>,
    ) {
        let _ = (hierarchy, child, parent);
    }

    /// Called after the world gave each of `children` a parent in one call
    /// (a batch of pairs: `set_parents_in_batch`, a level, `instantiate`,
    /// `add_pairs`), with the hierarchy as it is now, which names each
    /// child's parent. A manager that answers a change with a walk of the
    /// hierarchy can share the walk across the batch here. The default
    /// calls [`on_parent_changed`](Self::on_parent_changed) for each child,
    /// in order.
    fn on_parents_changed(&mut self, hierarchy: Hierarchy<'_>, children: &[Entity]) {
        for &child in children {
            self.on_parent_changed(hierarchy, child, hierarchy.parent(child));
        }
    }
}

/// The managers of one world, with how each hears of destroyed entities.
///
/// Each manager sits behind an [`UnsafeCell`], so the schedule can hand a
/// system `&mut M` through a shared world while other systems run, exactly
/// when the system declared a write of `M` and the schedule ordered every
/// other accessor of `M` around it (as for resources). All safe methods
/// follow the ordinary borrow rules of `&self` / `&mut self`.
#[derive(Default)]
pub struct Managers {
    slots: Vec<ManagerSlot>,
}

/// One manager.
///
/// # Invariants
/// The manager is only mutated through `&mut ManagerSlot` or through
/// [`Managers::get_mut_unchecked`], whose callers guarantee exclusive access.
struct ManagerSlot {
    notice: DestroyNotice,
    type_id: TypeId,
    type_name: &'static str,
    manager: UnsafeCell<Box<dyn ComponentManager>>,
}

// SAFETY: the boxed manager is `Send + Sync`; shared access only reads it,
// and the one path that writes through `&ManagerSlot` (`get_mut_unchecked`)
// requires its caller to guarantee that no other access happens meanwhile.
unsafe impl Sync for ManagerSlot {}

impl ManagerSlot {
    fn get(&self) -> &dyn ComponentManager {
        // SAFETY: no `&mut` to the box exists while `&self` is shared, except
        // under `get_mut_unchecked`, whose caller excludes this read.
        unsafe { &**self.manager.get() }
    }

    fn get_mut(&mut self) -> &mut dyn ComponentManager {
        &mut **self.manager.get_mut()
    }
}

impl std::fmt::Debug for Managers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Managers")
            .field("count", &self.slots.len())
            .finish()
    }
}

impl Managers {
    /// Adds `manager`, replacing (and returning) any manager of the same type.
    pub fn add<M: ComponentManager>(&mut self, manager: M, notice: DestroyNotice) -> Option<M> {
        let old = self.remove::<M>();
        self.slots.push(ManagerSlot {
            notice,
            type_id: TypeId::of::<M>(),
            type_name: std::any::type_name::<M>(),
            manager: UnsafeCell::new(Box::new(manager)),
        });
        old
    }

    fn position<M: ComponentManager>(&self) -> Option<usize> {
        self.slots
            .iter()
            .position(|s| s.type_id == TypeId::of::<M>())
    }

    /// Saves every manager's state into `saved`, one slot per manager, in
    /// order (see [`ComponentManager::save_state`]).
    pub(crate) fn save_states(
        &self,
        saved: &mut Vec<(TypeId, Option<Box<dyn Any + Send + Sync>>)>,
    ) {
        saved.resize_with(self.slots.len(), || (TypeId::of::<()>(), None));
        for (slot, (type_id, state)) in self.slots.iter().zip(saved.iter_mut()) {
            if *type_id != slot.type_id {
                *state = None;
                *type_id = slot.type_id;
            }
            if !slot.get().save_state(state) {
                *state = None;
            }
        }
    }

    /// Restores the states [`Managers::save_states`] saved, to the managers
    /// of the same types.
    pub(crate) fn restore_states(
        &mut self,
        saved: &[(TypeId, Option<Box<dyn Any + Send + Sync>>)],
    ) {
        for (type_id, state) in saved {
            let Some(state) = state else { continue };
            if let Some(slot) = self.slots.iter_mut().find(|s| s.type_id == *type_id) {
                slot.get_mut().restore_state(&**state);
            }
        }
    }

    /// Every manager's type: its id, its name and how it hears of destroyed
    /// entities, in the order they were added.
    pub fn types(&self) -> impl Iterator<Item = (TypeId, &'static str, DestroyNotice)> + '_ {
        self.slots
            .iter()
            .map(|s| (s.type_id, s.type_name, s.notice))
    }

    /// Whether a manager of type `type_id` is here.
    pub fn contains_type(&self, type_id: TypeId) -> bool {
        self.slots.iter().any(|s| s.type_id == type_id)
    }

    /// Removes and returns the manager of type `M`.
    pub fn remove<M: ComponentManager>(&mut self) -> Option<M> {
        let i = self.position::<M>()?;
        let slot = self.slots.remove(i);
        let any: Box<dyn Any> = slot.manager.into_inner();
        any.downcast::<M>().ok().map(|b| *b)
    }

    /// The manager of type `M`.
    pub fn get<M: ComponentManager>(&self) -> Option<&M> {
        let slot = &self.slots[self.position::<M>()?];
        (slot.get() as &dyn Any).downcast_ref::<M>()
    }

    /// The manager of type `M`, mutably.
    pub fn get_mut<M: ComponentManager>(&mut self) -> Option<&mut M> {
        let i = self.position::<M>()?;
        (self.slots[i].get_mut() as &mut dyn Any).downcast_mut::<M>()
    }

    /// The manager of type `M`, mutably, through shared access.
    ///
    /// # Safety
    /// For as long as the returned reference lives, nothing else may access
    /// the manager `M` (no other `get`, `get_mut_unchecked`, nor removal).
    /// The schedule guarantees this for a system that declared a write of `M`.
    #[allow(clippy::mut_from_ref)]
    pub unsafe fn get_mut_unchecked<M: ComponentManager>(&self) -> Option<&mut M> {
        let slot = &self.slots[self.position::<M>()?];
        // SAFETY: the caller guarantees exclusive access to this manager; the
        // box's pointee is uniquely owned by the box in the cell.
        let boxed: &mut Box<dyn ComponentManager> = unsafe { &mut *slot.manager.get() };
        (&mut **boxed as &mut dyn Any).downcast_mut::<M>()
    }

    /// Number of managers.
    pub fn len(&self) -> usize {
        self.slots.len()
    }

    /// Whether there are no managers.
    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    /// Tells every callback manager that `destroyed` died.
    pub fn notify_destroyed(&mut self, destroyed: &[Entity]) {
        if destroyed.is_empty() {
            return;
        }
        for slot in &mut self.slots {
            if slot.notice == DestroyNotice::Callback {
                slot.get_mut().on_destroy(destroyed);
            }
        }
    }

    /// Tells every manager that `child`'s parent is now `parent`.
    pub(crate) fn notify_parent_changed(
        &mut self,
        hierarchy: Hierarchy<'_>,
        child: Entity,
        parent: Option<Entity>,
    ) {
        for slot in &mut self.slots {
            slot.get_mut().on_parent_changed(hierarchy, child, parent);
        }
    }

    /// Tells every manager that each of `children` got a parent.
    pub(crate) fn notify_parents_changed(&mut self, hierarchy: Hierarchy<'_>, children: &[Entity]) {
        if children.is_empty() {
            return;
        }
        for slot in &mut self.slots {
            slot.get_mut().on_parents_changed(hierarchy, children);
        }
    }

    /// Hands every manager the hierarchy to follow (after a load).
    pub(crate) fn follow_hierarchy(&mut self, hierarchy: Hierarchy<'_>) {
        for slot in &mut self.slots {
            slot.get_mut().follow_hierarchy(hierarchy);
        }
    }

    /// Runs lazy collection on every manager added with [`DestroyNotice::LazyGc`].
    pub fn collect_garbage(&mut self, entities: &Entities) -> usize {
        self.slots
            .iter_mut()
            .filter(|s| s.notice == DestroyNotice::LazyGc)
            .map(|s| s.get_mut().collect_garbage(entities))
            .sum()
    }
}

/// One probe's finding during [`LazyGc::sweep`].
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Probe {
    /// The instance's entity is alive.
    Alive,
    /// The instance's entity was dead, and the instance was destroyed.
    Destroyed,
    /// The probed slot holds no instance (for managers with holes).
    Vacant,
    /// There is nothing left to probe.
    Empty,
}

/// What one sweep did.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct GcReport {
    /// Instances probed (vacant slots included).
    pub probes: usize,
    /// Instances destroyed.
    pub destroyed: usize,
}

/// Lazy garbage collection as in Bitsquid's "Building a Data-Oriented Entity System" (part 2), shared by managers.
///
/// A sweep probes random instances, destroying each whose entity is dead, and
/// stops after [`LazyGc::ALIVE_IN_A_ROW`] live ones in a row. When nothing has
/// died it costs exactly four probes; when many have, each sweep removes a
/// batch, so repeated sweeps (one per frame) clean up quickly.
///
/// ```
/// use doecs::{LazyGc, Probe};
/// let alive = vec![true; 1000];
/// let mut gc = LazyGc::new();
/// let report = gc.sweep(|random| {
///     let i = (random % alive.len() as u64) as usize;
///     if alive[i] { Probe::Alive } else { Probe::Destroyed }
/// });
/// assert_eq!(report.probes, 4);
/// assert_eq!(report.destroyed, 0);
/// ```
#[derive(Clone, Debug)]
pub struct LazyGc {
    rng: u64,
}

impl Default for LazyGc {
    fn default() -> Self {
        Self::new()
    }
}

impl LazyGc {
    /// Live instances in a row after which a sweep stops.
    pub const ALIVE_IN_A_ROW: usize = 4;
    /// Vacant slots in a row after which a sweep stops (a mostly empty manager).
    pub const VACANT_IN_A_ROW: usize = 64;

    /// A collector with a fixed seed, so runs are repeatable.
    pub fn new() -> Self {
        LazyGc {
            rng: 0x9e37_79b9_7f4a_7c15,
        }
    }

    fn next_random(&mut self) -> u64 {
        // xorshift64*
        self.rng ^= self.rng >> 12;
        self.rng ^= self.rng << 25;
        self.rng ^= self.rng >> 27;
        self.rng.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// Runs one sweep. `probe` gets a random number, picks an instance with it
    /// (e.g. `random % len`), destroys it if its entity is dead, and says what
    /// it found.
    pub fn sweep(&mut self, mut probe: impl FnMut(u64) -> Probe) -> GcReport {
        let mut report = GcReport::default();
        let (mut alive, mut vacant) = (0, 0);
        while alive < Self::ALIVE_IN_A_ROW && vacant < Self::VACANT_IN_A_ROW {
            let found = probe(self.next_random());
            if found == Probe::Empty {
                break;
            }
            report.probes += 1;
            match found {
                Probe::Alive => {
                    alive += 1;
                    vacant = 0;
                }
                Probe::Destroyed => {
                    report.destroyed += 1;
                    alive = 0;
                    vacant = 0;
                }
                Probe::Vacant => vacant += 1,
                Probe::Empty => unreachable!(),
            }
        }
        report
    }
}
