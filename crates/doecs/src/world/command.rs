//! Command buffers: structural changes recorded now and applied later.
//!
//! While systems iterate they may not change the world's structure, so they
//! record what they want instead (the `PendingRemove` list and `Flush` of Jungwan Byun's "Data-oriented Entity Component System",
//! and its "record the change requests" answer to data races). A
//! [`CommandBuffer`] keeps one small header per command in a `Vec` and every
//! command's payload (the bundle to insert, the closure to run) packed
//! back-to-back in one byte vector: no `Box` per command, and a buffer that is
//! cleared keeps its capacity for the next frame.
//!
//! Payloads are type-erased closures `FnOnce(&mut World) -> Result<(), EntityError>`.
//! Each header stores the payload's offset and two monomorphised function
//! pointers: one that moves the closure out of the bytes and calls it, one that
//! drops it unrun. Payloads are stored unaligned and moved out with
//! `read_unaligned`, so any alignment works (64-byte components included).
//! Despawns, the most common command, are a header with no payload, and runs
//! of them are applied as one batch (one manager callback).
//!
//! Spawns reserve their entity id when recorded, so later commands in the
//! same buffer, or in other buffers, can refer to the new entity before it
//! exists. A buffer used on its own reserves through
//! [`World::reserve_entity`] (which needs only `&World`); a system's
//! [`Commands`] take ids from the pool the schedule gave that system before
//! the systems started, so the ids do not depend on which system ran first
//! and are the same at any thread count. A reserved id becomes alive when its
//! spawn is applied, or when another command names it (see
//! [`World::reserve_entity`]); if the spawn never happens (the buffer is discarded, or
//! its bundle is refused) the reservation is cancelled, and the id's
//! generation moves on so no copy of it ever comes to life.
//!
//! [`World::apply`] applies the commands in recorded order; a command whose
//! entity died in the meantime is reported in the [`ApplyReport`] and the
//! rest still apply. A buffer dropped unapplied drops its payloads exactly
//! once, and so does an `apply` that a panicking payload interrupts.

use super::World;
use crate::bundle::Bundle;
use crate::component::Component;
use crate::entities::spawn_ids::SpawnIds;
use crate::entities::Entities;
use crate::entity::Entity;
use crate::error::EntityError;
use std::mem::{self, MaybeUninit};
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};

/// Moves the payload at the pointer out and runs it.
type RunFn = unsafe fn(*const MaybeUninit<u8>, &mut World) -> Result<(), EntityError>;
/// Moves the payload at the pointer out and drops it unrun.
type DropFn = unsafe fn(*const MaybeUninit<u8>);

/// One recorded command's header.
#[derive(Copy, Clone)]
enum Command {
    /// Despawn this entity.
    Despawn(Entity),
    /// Run the type-erased closure stored at `offset` in the payload bytes.
    Erased {
        offset: usize,
        run: RunFn,
        drop: DropFn,
    },
}

/// A recorded list of structural changes. See the module docs.
///
/// ```
/// use doecs::{CommandBuffer, World};
/// #[derive(Debug, PartialEq)]
/// struct Health(u32);
///
/// let mut world = World::new();
/// let a = world.spawn((Health(3),));
/// let mut commands = CommandBuffer::new();
/// let b = commands.spawn(&world, (Health(10),));
/// commands.insert_one(b, 1.5f32); // refers to the entity spawned above
/// commands.despawn(a);
/// commands.despawn(a); // dies twice: reported, not a panic
///
/// let report = world.apply(&mut commands);
/// assert_eq!(report.applied, 3);
/// assert_eq!(report.failed.len(), 1);
/// assert_eq!(world.get::<Health>(b), Ok(&Health(10)));
/// assert_eq!(world.get::<f32>(b), Ok(&1.5));
/// assert!(!world.alive(a));
/// assert!(commands.is_empty());
/// ```
///
/// # Invariants
/// - For every `Command::Erased { offset, run, drop }` in `commands[..]`, the
///   bytes `payload[offset..offset + size_of::<F>()]` hold a live, not yet
///   moved-out closure `F`, and `run`/`drop` are `run_payload::<F>` /
///   `drop_payload::<F>` for that same `F`.
/// - Each payload is owned by exactly one header; once a header is taken out
///   of `commands` its payload is moved out exactly once.
#[derive(Default)]
pub struct CommandBuffer {
    commands: Vec<Command>,
    payload: Vec<MaybeUninit<u8>>,
    /// Ids reserved for this buffer's spawns, cancelled if a spawn never happens.
    reserved: Vec<Entity>,
}

// SAFETY: every payload stored is `Send` (enforced by `push_closure`'s bound),
// and the headers are plain data; the buffer owns them all.
unsafe impl Send for CommandBuffer {}

impl std::fmt::Debug for CommandBuffer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CommandBuffer")
            .field("commands", &self.commands.len())
            .field("payload_bytes", &self.payload.len())
            .finish()
    }
}

/// Why one command of a buffer did not apply.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CommandFailure {
    /// The command's position in the buffer, counting from 0.
    pub index: usize,
    /// What went wrong: usually a dead entity or a missing component.
    pub error: EntityError,
}

/// What applying a buffer did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ApplyReport {
    /// Commands that took effect.
    pub applied: usize,
    /// Commands that did not, in recorded order.
    pub failed: Vec<CommandFailure>,
}

impl ApplyReport {
    /// Adds another report's counts (for several buffers applied in a row).
    pub fn absorb(&mut self, other: ApplyReport) {
        self.applied += other.applied;
        self.failed.extend(other.failed);
    }
}

/// Moves an `F` out of `ptr` and calls it.
///
/// # Safety
/// `ptr` must point at a live `F` that is never used again.
unsafe fn run_payload<F>(ptr: *const MaybeUninit<u8>, world: &mut World) -> Result<(), EntityError>
where
    F: FnOnce(&mut World) -> Result<(), EntityError>,
{
    // SAFETY: the caller hands over a live `F`; unaligned reads are allowed.
    let f = unsafe { ptr.cast::<F>().read_unaligned() };
    f(world)
}

/// Moves an `F` out of `ptr` and drops it.
///
/// # Safety
/// As [`run_payload`].
unsafe fn drop_payload<F>(ptr: *const MaybeUninit<u8>) {
    // SAFETY: as in `run_payload`.
    drop(unsafe { ptr.cast::<F>().read_unaligned() });
}

impl CommandBuffer {
    /// An empty buffer.
    pub fn new() -> Self {
        Self::default()
    }

    /// Number of recorded commands.
    pub fn len(&self) -> usize {
        self.commands.len()
    }

    /// Whether no command is recorded.
    pub fn is_empty(&self) -> bool {
        self.commands.is_empty()
    }

    /// Bytes of payload currently stored.
    pub fn payload_bytes(&self) -> usize {
        self.payload.len()
    }

    /// Records a closure to run with `&mut World` when the buffer is applied.
    /// An `Err` it returns is reported in the [`ApplyReport`].
    pub fn push_closure<F>(&mut self, f: F)
    where
        F: FnOnce(&mut World) -> Result<(), EntityError> + Send + 'static,
    {
        let offset = self.payload.len();
        let size = mem::size_of::<F>();
        self.payload.reserve(size);
        // SAFETY: `reserve` made room for `size` bytes after `offset`; the
        // write is unaligned-safe, and `set_len` only covers bytes written
        // (`MaybeUninit<u8>` needs no initialisation anyway).
        unsafe {
            self.payload
                .as_mut_ptr()
                .add(offset)
                .cast::<F>()
                .write_unaligned(f);
            self.payload.set_len(offset + size);
        }
        self.commands.push(Command::Erased {
            offset,
            run: run_payload::<F>,
            drop: drop_payload::<F>,
        });
    }

    /// Reserves an entity in `world` and records spawning it with `bundle`.
    /// The returned id can be used by later commands right away; it is alive
    /// once the buffer is applied to `world`.
    pub fn spawn<B: Bundle>(&mut self, world: &World, bundle: B) -> Entity {
        let entity = world.reserve_entity();
        self.spawn_reserved(entity, bundle);
        entity
    }

    /// Records spawning the reserved id `entity` with `bundle`.
    pub(crate) fn spawn_reserved<B: Bundle>(&mut self, entity: Entity, bundle: B) {
        self.reserved.push(entity);
        self.push_closure(move |w: &mut World| w.spawn_reserved(entity, bundle));
    }

    /// Records despawning `entity`.
    pub fn despawn(&mut self, entity: Entity) {
        self.commands.push(Command::Despawn(entity));
    }

    /// Records inserting one component (replacing any existing value).
    pub fn insert_one<T: Component>(&mut self, entity: Entity, value: T) {
        self.push_closure(move |w: &mut World| w.insert_one(entity, value));
    }

    /// Records inserting a bundle of components.
    pub fn insert<B: Bundle>(&mut self, entity: Entity, bundle: B) {
        self.push_closure(move |w: &mut World| w.insert(entity, bundle));
    }

    /// Records removing (and dropping) component `T`.
    pub fn remove_one<T: Component>(&mut self, entity: Entity) {
        self.push_closure(move |w: &mut World| w.remove_one::<T>(entity).map(drop));
    }

    /// Records removing (and dropping) every component of bundle `B`.
    pub fn remove<B: Bundle>(&mut self, entity: Entity) {
        self.push_closure(move |w: &mut World| w.remove::<B>(entity).map(drop));
    }

    /// Records inserting each bundle into its entity, as one batch (see
    /// [`World::insert_batch`]).
    pub fn insert_batch<B: Bundle>(&mut self, batch: impl IntoIterator<Item = (Entity, B)>) {
        let batch: Vec<(Entity, B)> = batch.into_iter().collect();
        self.push_closure(move |w: &mut World| w.insert_batch(batch));
    }

    /// Records removing (and dropping) bundle `B` from each of `entities`,
    /// as one batch (see [`World::remove_batch`]).
    pub fn remove_batch<B: Bundle>(&mut self, entities: impl IntoIterator<Item = Entity>) {
        let entities: Vec<Entity> = entities.into_iter().collect();
        self.push_closure(move |w: &mut World| w.remove_batch::<B>(&entities));
    }

    /// Records triggering `event` with no target (see [`World::trigger`]).
    pub fn trigger<E: super::Event>(&mut self, event: E) {
        // Applied inside a flush, a trigger's observers' commands join the
        // flush's next round; an unsettled chain is reported by the flush.
        self.push_closure(move |w: &mut World| {
            let _ = w.trigger(event);
            Ok(())
        });
    }

    /// Records triggering `event` on each of `targets` (see
    /// [`World::trigger_targets`]).
    pub fn trigger_targets<E: super::Event>(
        &mut self,
        event: E,
        targets: impl IntoIterator<Item = Entity>,
    ) {
        let targets: Vec<Entity> = targets.into_iter().collect();
        self.push_closure(move |w: &mut World| {
            let _ = w.trigger_targets(event, targets);
            Ok(())
        });
    }

    /// Drops every recorded command unapplied and cancels the ids its spawns
    /// reserved in `world`.
    pub fn discard(&mut self, world: &mut World) {
        self.clear();
        self.cancel_reserved(&mut world.core.entities);
    }

    /// Cancels every reservation of this buffer whose spawn did not happen.
    fn cancel_reserved(&mut self, entities: &mut Entities) {
        for e in self.reserved.drain(..) {
            entities.cancel_reserved(e);
        }
    }

    /// Drops every recorded command unapplied, keeping the capacity. Ids
    /// reserved by its spawns stay reserved (never alive) until the world is
    /// dropped; [`CommandBuffer::discard`] cancels them instead.
    pub fn clear(&mut self) {
        let mut drain = Drain {
            buffer: self,
            next: 0,
        };
        drain.drop_rest();
    }

    /// Applies every command to `world` in recorded order and empties the
    /// buffer, then cancels reservations whose spawn did not happen (also
    /// when a payload panics). Use [`World::apply`].
    fn apply_to(&mut self, world: &mut World) -> ApplyReport {
        let outcome = catch_unwind(AssertUnwindSafe(|| self.run_commands(world)));
        self.cancel_reserved(&mut world.core.entities);
        match outcome {
            Ok(report) => report,
            Err(payload) => resume_unwind(payload),
        }
    }

    /// Runs every command in recorded order; see [`CommandBuffer::apply_to`].
    fn run_commands(&mut self, world: &mut World) -> ApplyReport {
        let mut report = ApplyReport::default();
        let mut drain = Drain {
            buffer: self,
            next: 0,
        };
        let mut despawns = Vec::new();
        while drain.next < drain.buffer.commands.len() {
            let index = drain.next;
            match drain.buffer.commands[index] {
                Command::Despawn(_) => {
                    // Gather the run of consecutive despawns into one batch.
                    despawns.clear();
                    while let Some(&Command::Despawn(e)) = drain.buffer.commands.get(drain.next) {
                        despawns.push(e);
                        drain.next += 1;
                    }
                    let applied = world.despawn_each(&despawns, |k, entity| {
                        report.failed.push(CommandFailure {
                            index: index + k,
                            error: EntityError::NoSuchEntity(entity),
                        })
                    });
                    report.applied += applied;
                }
                Command::Erased { offset, run, .. } => {
                    // The payload is handed over before running, so a panic
                    // inside `run` never leads to a second drop.
                    drain.next += 1;
                    let ptr = drain.buffer.payload[offset..].as_ptr();
                    // SAFETY: buffer invariant: `offset` holds the live payload
                    // `run` was made for; advancing `next` first means it is
                    // never touched again.
                    match unsafe { run(ptr, world) } {
                        Ok(()) => report.applied += 1,
                        Err(error) => report.failed.push(CommandFailure { index, error }),
                    }
                }
            }
        }
        report
    }
}

impl Drop for CommandBuffer {
    fn drop(&mut self) {
        self.clear();
    }
}

/// Where a [`Commands`] takes the ids of the entities it spawns.
pub(crate) enum IdSource<'a> {
    /// Reserve from the world's allocator ([`Entities::reserve`]).
    World(&'a Entities),
    /// Take from a system's pool, given out by the schedule.
    Pool(&'a mut SpawnIds),
}

/// A command buffer together with where its spawns get their ids: what a
/// running system records into (`ctx.commands()`).
///
/// ```
/// use doecs::{system, Schedule, World};
/// struct Bullet(f32);
/// let mut world = World::new();
/// let mut schedule = Schedule::with_threads(1);
/// schedule.add_system(system("fire").commands().run(|ctx| {
///     let mut commands = ctx.commands();
///     let b = commands.spawn((Bullet(0.0),));
///     commands.insert_one(b, 1u8);
/// })).unwrap();
/// schedule.run(&mut world).unwrap();
/// assert_eq!(world.len(), 1);
/// ```
pub struct Commands<'a> {
    buffer: &'a mut CommandBuffer,
    ids: IdSource<'a>,
}

impl<'a> Commands<'a> {
    pub(crate) fn new(buffer: &'a mut CommandBuffer, ids: IdSource<'a>) -> Self {
        Commands { buffer, ids }
    }

    /// Records spawning an entity with `bundle` and returns its id, which
    /// later commands can use at once; it is alive once the commands apply.
    pub fn spawn<B: Bundle>(&mut self, bundle: B) -> Entity {
        let entity = match &mut self.ids {
            IdSource::World(entities) => entities.reserve(),
            IdSource::Pool(pool) => pool.next(),
        };
        self.buffer.spawn_reserved(entity, bundle);
        entity
    }

    /// Records despawning `entity`.
    pub fn despawn(&mut self, entity: Entity) {
        self.buffer.despawn(entity);
    }

    /// Records inserting one component (replacing any existing value).
    pub fn insert_one<T: Component>(&mut self, entity: Entity, value: T) {
        self.buffer.insert_one(entity, value);
    }

    /// Records inserting a bundle of components.
    pub fn insert<B: Bundle>(&mut self, entity: Entity, bundle: B) {
        self.buffer.insert(entity, bundle);
    }

    /// Records removing (and dropping) component `T`.
    pub fn remove_one<T: Component>(&mut self, entity: Entity) {
        self.buffer.remove_one::<T>(entity);
    }

    /// Records removing (and dropping) every component of bundle `B`.
    pub fn remove<B: Bundle>(&mut self, entity: Entity) {
        self.buffer.remove::<B>(entity);
    }

    /// Records a closure to run with `&mut World` when the commands apply.
    pub fn push_closure<F>(&mut self, f: F)
    where
        F: FnOnce(&mut World) -> Result<(), EntityError> + Send + 'static,
    {
        self.buffer.push_closure(f);
    }

    /// Records spawning one entity per bundle, in order, and returns their
    /// ids (usable by later commands at once).
    pub fn spawn_batch<B: Bundle>(&mut self, bundles: impl IntoIterator<Item = B>) -> Vec<Entity> {
        bundles.into_iter().map(|b| self.spawn(b)).collect()
    }

    /// The commands of one entity, chained:
    /// `commands.entity(e).insert((Burning,)).remove_one::<Wet>()`.
    pub fn entity(&mut self, entity: Entity) -> EntityCommands<'_, 'a> {
        EntityCommands {
            commands: self,
            entity,
        }
    }

    /// Records inserting each bundle into its entity, as one batch (see
    /// [`World::insert_batch`]).
    pub fn insert_batch<B: Bundle>(&mut self, batch: impl IntoIterator<Item = (Entity, B)>) {
        self.buffer.insert_batch(batch);
    }

    /// Records removing bundle `B` from each of `entities`, as one batch
    /// (see [`World::remove_batch`]).
    pub fn remove_batch<B: Bundle>(&mut self, entities: impl IntoIterator<Item = Entity>) {
        self.buffer.remove_batch::<B>(entities);
    }

    /// Records triggering `event` with no target (see [`World::trigger`]).
    pub fn trigger<E: super::Event>(&mut self, event: E) {
        self.buffer.trigger(event);
    }

    /// Records triggering `event` on each of `targets` (see
    /// [`World::trigger_targets`]).
    pub fn trigger_targets<E: super::Event>(
        &mut self,
        event: E,
        targets: impl IntoIterator<Item = Entity>,
    ) {
        self.buffer.trigger_targets(event, targets);
    }

    /// Records storing resource `value` (replacing one of its type).
    pub fn insert_resource<R: Send + Sync + 'static>(&mut self, value: R) {
        self.push_closure(move |w: &mut World| {
            w.insert_resource(value);
            Ok(())
        });
    }

    /// Records removing (and dropping) resource `R`, if there is one.
    pub fn remove_resource<R: Send + Sync + 'static>(&mut self) {
        self.push_closure(|w: &mut World| {
            w.remove_resource::<R>();
            Ok(())
        });
    }

    /// Number of commands recorded so far.
    pub fn len(&self) -> usize {
        self.buffer.len()
    }

    /// Whether nothing is recorded.
    pub fn is_empty(&self) -> bool {
        self.buffer.is_empty()
    }
}

/// The commands of one entity, recorded in the order they are chained
/// (made by [`Commands::entity`]). Each records one command, as the
/// method of the same name on [`Commands`] does.
pub struct EntityCommands<'c, 'a> {
    commands: &'c mut Commands<'a>,
    entity: Entity,
}

impl EntityCommands<'_, '_> {
    /// The entity.
    pub fn id(&self) -> Entity {
        self.entity
    }

    /// Records inserting a bundle of components.
    pub fn insert<B: Bundle>(&mut self, bundle: B) -> &mut Self {
        self.commands.insert(self.entity, bundle);
        self
    }

    /// Records inserting one component (replacing any existing value).
    pub fn insert_one<T: Component>(&mut self, value: T) -> &mut Self {
        self.commands.insert_one(self.entity, value);
        self
    }

    /// Records removing (and dropping) every component of bundle `B`.
    pub fn remove<B: Bundle>(&mut self) -> &mut Self {
        self.commands.remove::<B>(self.entity);
        self
    }

    /// Records removing (and dropping) component `T`.
    pub fn remove_one<T: Component>(&mut self) -> &mut Self {
        self.commands.remove_one::<T>(self.entity);
        self
    }

    /// Records triggering `event` on the entity.
    pub fn trigger<E: super::Event>(&mut self, event: E) -> &mut Self {
        self.commands.trigger_targets(event, [self.entity]);
        self
    }

    /// Records despawning the entity.
    pub fn despawn(&mut self) {
        self.commands.despawn(self.entity);
    }
}

/// Consumes a buffer's commands from `next` on; whatever is left when it is
/// dropped (normally, or while a payload's panic unwinds) is dropped unrun,
/// and the buffer is left empty.
struct Drain<'a> {
    buffer: &'a mut CommandBuffer,
    next: usize,
}

impl Drain<'_> {
    fn drop_rest(&mut self) {
        while self.next < self.buffer.commands.len() {
            let command = self.buffer.commands[self.next];
            self.next += 1;
            if let Command::Erased { offset, drop, .. } = command {
                let ptr = self.buffer.payload[offset..].as_ptr();
                // SAFETY: buffer invariant; `next` moved past it first, so a
                // panicking `Drop` cannot make us drop it again.
                unsafe { drop(ptr) };
            }
        }
        self.buffer.commands.clear();
        self.buffer.payload.clear();
    }
}

impl Drop for Drain<'_> {
    fn drop(&mut self) {
        self.drop_rest();
    }
}

impl World {
    /// Applies `commands` in recorded order and leaves the buffer empty (its
    /// capacity kept). Commands whose entity died meanwhile are reported, and
    /// the others still apply.
    pub fn apply(&mut self, commands: &mut CommandBuffer) -> ApplyReport {
        // One check at the end, not one per command.
        let report = self.with_checks_held(|world| commands.apply_to(world));
        self.flush_hooks();
        report
    }

    /// Applies several buffers, one after another in slice order.
    pub fn apply_all<'a>(
        &mut self,
        buffers: impl IntoIterator<Item = &'a mut CommandBuffer>,
    ) -> ApplyReport {
        let report = self.with_checks_held(|world| {
            let mut report = ApplyReport::default();
            for buffer in buffers {
                report.absorb(buffer.apply_to(world));
            }
            report
        });
        self.flush_hooks();
        report
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    /// Counts its drops in a shared counter.
    struct Counted(Arc<AtomicUsize>);
    impl Drop for Counted {
        fn drop(&mut self) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    #[repr(align(64))]
    #[derive(Debug, PartialEq, Clone, Copy)]
    struct Wide([u8; 64]);

    struct Zst;

    #[test]
    fn records_and_applies_in_order() {
        let mut world = World::new();
        let a = world.spawn((1u32,));
        let mut cmd = CommandBuffer::new();
        cmd.insert_one(a, 2.0f64);
        cmd.remove_one::<u32>(a);
        cmd.insert(a, (Wide([7; 64]), Zst));
        let b = cmd.spawn(&world, (5u8,));
        cmd.insert_one(b, 9u32);
        let report = world.apply(&mut cmd);
        assert_eq!(
            report,
            ApplyReport {
                applied: 5,
                failed: vec![]
            }
        );
        assert_eq!(world.get::<f64>(a), Ok(&2.0));
        assert!(world.get::<u32>(a).is_err());
        assert_eq!(world.get::<Wide>(a), Ok(&Wide([7; 64])));
        assert!(world.contains::<Zst>(a));
        assert_eq!(world.get::<u32>(b), Ok(&9));
        assert_eq!(world.get::<u8>(b), Ok(&5));
        assert!(cmd.is_empty() && cmd.payload_bytes() == 0);
        world.check_invariants();
    }

    #[test]
    fn dead_targets_are_reported_and_the_rest_apply() {
        let mut world = World::new();
        let a = world.spawn((1u32,));
        let b = world.spawn((2u32,));
        let mut cmd = CommandBuffer::new();
        cmd.despawn(a);
        cmd.insert_one(a, 1u8);
        cmd.despawn(a);
        cmd.remove_one::<f32>(b);
        cmd.insert_one(b, 3u8);
        let report = world.apply(&mut cmd);
        assert_eq!(report.applied, 2);
        let failed: Vec<usize> = report.failed.iter().map(|f| f.index).collect();
        assert_eq!(failed, vec![1, 2, 3]);
        assert_eq!(report.failed[0].error, EntityError::NoSuchEntity(a));
        assert!(matches!(
            report.failed[2].error,
            EntityError::MissingComponent { .. }
        ));
        assert_eq!(world.get::<u8>(b), Ok(&3));
        world.check_invariants();
    }

    #[test]
    fn unapplied_payloads_drop_exactly_once() {
        let drops = Arc::new(AtomicUsize::new(0));
        let world = World::new();
        {
            let mut cmd = CommandBuffer::new();
            for _ in 0..10 {
                cmd.spawn(&world, (Counted(drops.clone()),));
            }
            let e = world.reserve_entity();
            cmd.insert_one(e, Counted(drops.clone()));
            assert_eq!(drops.load(Ordering::SeqCst), 0);
        }
        assert_eq!(drops.load(Ordering::SeqCst), 11);
        let mut cmd = CommandBuffer::new();
        cmd.insert_one(Entity::from_parts(3, 1), Counted(drops.clone()));
        cmd.clear();
        assert_eq!(drops.load(Ordering::SeqCst), 12);
        drop(cmd);
        assert_eq!(drops.load(Ordering::SeqCst), 12);
    }

    #[test]
    fn applied_values_drop_with_the_world_once() {
        let drops = Arc::new(AtomicUsize::new(0));
        let mut world = World::new();
        let mut cmd = CommandBuffer::new();
        let e = cmd.spawn(&world, (Counted(drops.clone()),));
        cmd.insert_one(e, Counted(drops.clone())); // replaces: the first drops
        world.apply(&mut cmd);
        assert_eq!(drops.load(Ordering::SeqCst), 1);
        drop(world);
        assert_eq!(drops.load(Ordering::SeqCst), 2);
    }

    #[test]
    fn a_panicking_command_drops_the_rest_once_and_keeps_the_world_sound() {
        let drops = Arc::new(AtomicUsize::new(0));
        let mut world = World::new();
        let a = world.spawn((1u32,));
        let mut cmd = CommandBuffer::new();
        cmd.insert_one(a, 5u8);
        cmd.push_closure(|_| panic!("user command failed"));
        cmd.insert_one(a, Counted(drops.clone()));
        cmd.spawn(&world, (Counted(drops.clone()),));
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            world.apply(&mut cmd);
        }));
        assert!(result.is_err());
        assert_eq!(drops.load(Ordering::SeqCst), 2);
        assert!(cmd.is_empty());
        assert_eq!(world.get::<u8>(a), Ok(&5));
        world.check_invariants();
        // The buffer is reusable afterwards.
        cmd.insert_one(a, 6u8);
        assert_eq!(world.apply(&mut cmd).applied, 1);
        assert_eq!(world.get::<u8>(a), Ok(&6));
    }

    #[test]
    fn a_refused_spawn_leaves_no_ghost_and_cancels_its_id() {
        let mut world = World::new();
        let mut cmd = CommandBuffer::new();
        let bad = cmd.spawn(&world, (1u32, 2u32));
        let good = cmd.spawn(&world, (3u32,));
        let report = world.apply(&mut cmd);
        assert_eq!(report.applied, 1);
        assert!(matches!(
            report.failed[0].error,
            EntityError::DuplicateInBundle { .. }
        ));
        assert!(!world.alive(bad) && world.alive(good));
        assert_eq!(world.len(), 1);
        assert_eq!(world.entities().reserved_count(), 0);
        world.check_invariants();
    }

    #[test]
    fn discard_frees_reserved_ids() {
        let drops = Arc::new(AtomicUsize::new(0));
        let mut world = World::new();
        let mut cmd = CommandBuffer::new();
        let e = cmd.spawn(&world, (Counted(drops.clone()),));
        cmd.discard(&mut world);
        assert_eq!(drops.load(Ordering::SeqCst), 1);
        assert!(!world.alive(e));
        assert!(world.is_empty());
        world.check_invariants();
    }

    #[test]
    fn several_buffers_apply_in_slice_order() {
        let mut world = World::new();
        let e = world.spawn((0u32,));
        let mut first = CommandBuffer::new();
        let mut second = CommandBuffer::new();
        second.insert_one(e, 2u32);
        first.insert_one(e, 1u32);
        let report = world.apply_all([&mut first, &mut second]);
        assert_eq!(report.applied, 2);
        assert_eq!(world.get::<u32>(e), Ok(&2));
    }

    #[test]
    fn despawn_runs_notify_managers_once_per_batch() {
        #[derive(Default)]
        struct Calls(Vec<usize>);
        impl crate::ComponentManager for Calls {
            fn on_destroy(&mut self, destroyed: &[Entity]) {
                self.0.push(destroyed.len());
            }
        }
        let mut world = World::new();
        world.add_manager(Calls::default(), crate::DestroyNotice::Callback);
        let es = world.spawn_batch((0..5u32).map(|i| (i,)));
        let mut cmd = CommandBuffer::new();
        for &e in &es {
            cmd.despawn(e);
        }
        assert_eq!(world.apply(&mut cmd).applied, 5);
        assert_eq!(world.manager::<Calls>().unwrap().0, vec![5]);
        assert!(world.is_empty());
    }
}
