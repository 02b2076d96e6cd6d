//! Rollback netcode for doecs apps, on [ggrs] (the GGPO model in Rust).
//!
//! ggrs owns the hard part of rollback networking: exchanging inputs,
//! predicting the missing ones, deciding when to roll back and how far,
//! time synchronisation between peers and desync detection. It talks to the
//! game only through three requests, and this crate answers them with what
//! doecs already has:
//!
//! - `SaveGameState` → [`World::snapshot_into`](doecs::World::snapshot_into)
//!   into a ring of [`Snapshot`](doecs::Snapshot)s that are reused frame
//!   after frame (their buffers only grow, so steady-state saving allocates
//!   nothing). What ggrs keeps in its cell is only the ring slot's index
//!   ([`Slot`]), so no world is ever cloned. The checksum handed to ggrs is
//!   the world hash of [`checksum`], over every registered component and
//!   piece of state.
//! - `LoadGameState` → [`World::restore`](doecs::World::restore) from that
//!   slot: the same entity ids, generations, rows and change stamps.
//! - `AdvanceFrame` → the players' inputs into the [`PlayerInputs`]
//!   resource and one [`App::update`](doecs::App::update), on a manual
//!   clock of one fixed timestep, so a re-simulated frame sees exactly the
//!   time the first run saw.
//!
//! [`GgrsPlugin`] sets the app up (what snapshots copy and what the
//! checksum covers); [`Rollback`] answers the requests; [`session`] has
//! the loops for [`SyncTestSession`](ggrs::SyncTestSession),
//! [`P2PSession`](ggrs::P2PSession) and
//! [`SpectatorSession`](ggrs::SpectatorSession); [`socket`] a lossy,
//! delaying socket wrapper for tests; [`guard`] a socket wrapper that drops
//! hostile messages (frames out of range, malformed input encodings, wrong
//! status counts) before ggrs, which trusts what it decodes, can panic on
//! them.
//!
//! # What a rollback restores
//!
//! Everything [`World::snapshot_into`](doecs::World::snapshot_into) covers:
//! every entity (ids, generations, the free list), every component of the
//! registered types, relationship pairs, sparse sets, the state of managers
//! that save state (the transform manager does), and the resources
//! registered with [`GgrsPlugin::rollback_resource`] plus the app's clocks
//! (`Time`, `Time<Fixed>`), [`PlayerInputs`] and [`RollbackFrame`].
//!
//! Not restored, by design:
//! - `Events<T>` buffers (not `Clone`; and the readers' cursors live in the
//!   systems): simulation systems must not pass events from one frame to
//!   the next. Events sent and read within one update are fine.
//! - `Local`s of systems and any other state inside the schedule: a
//!   simulation system must keep its state in components or registered
//!   resources.
//! - Resources not registered: presentation state (inspector, frame
//!   statistics, `LastUpdate`) is meant to stay out.
//! - Anything outside the world (files, sockets, the wall clock).
//!
//! A component type present in the world but neither registered here nor
//! with `World::snapshot_by_copy`/`snapshot_by_clone`/`snapshot_skip`
//! makes the first save fail with a typed error naming it.

pub mod checksum;
mod error;
pub mod guard;
mod rollback;
pub mod session;
pub mod socket;

pub use checksum::{component_item, EntityHashesFn, HashFn, Item, StateHasher};
pub use error::RollbackError;
pub use rollback::{Rollback, RollbackStats};

use doecs::{App, AppError, Component, Plugin, TimeSource, World};
use ggrs::{Frame, InputStatus, PredictRepeatLast};
use std::fmt::Debug;
use std::hash::Hash;
use std::marker::PhantomData;
use std::time::Duration;

/// What an input must be: small, `Copy`, serialisable (ggrs sends it).
pub trait Input:
    Copy + PartialEq + Default + serde::Serialize + serde::de::DeserializeOwned + Send + Sync + 'static
{
}
impl<T> Input for T where
    T: Copy
        + PartialEq
        + Default
        + serde::Serialize
        + serde::de::DeserializeOwned
        + Send
        + Sync
        + 'static
{
}

/// What identifies a peer (a socket address, usually).
pub trait Address: Clone + PartialEq + Eq + Hash + Debug + 'static {}
impl<T> Address for T where T: Clone + PartialEq + Eq + Hash + Debug + 'static {}

/// The ggrs configuration of a doecs game with input `I` and peers
/// addressed by `A`. The state ggrs keeps per frame is a [`Slot`].
pub struct GgrsConfig<I, A = std::net::SocketAddr>(PhantomData<fn() -> (I, A)>);

impl<I: Input, A: Address> ggrs::Config for GgrsConfig<I, A> {
    type Input = I;
    type InputPredictor = PredictRepeatLast;
    type State = Slot;
    type Address = A;
}

/// Which snapshot of the [`Rollback`] ring holds a saved frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Slot(pub usize);

/// The inputs of the frame being simulated, one per player handle, with
/// whether each is confirmed, predicted or from a disconnected player.
#[derive(Clone, Debug)]
pub struct PlayerInputs<I> {
    /// Indexed by player handle.
    pub inputs: Vec<(I, InputStatus)>,
}

impl<I> Default for PlayerInputs<I> {
    fn default() -> Self {
        PlayerInputs { inputs: Vec::new() }
    }
}

impl<I: Input> PlayerInputs<I> {
    /// Player `handle`'s input (the default input for an unknown handle).
    pub fn get(&self, handle: usize) -> I {
        self.inputs.get(handle).map(|i| i.0).unwrap_or_default()
    }
}

/// The number of the frame the world is at: 0 before the first advance,
/// one more after each. Rolled back with the world.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RollbackFrame(pub Frame);

/// The checksummed items, a resource the plugin leaves for [`Rollback`].
#[derive(Clone, Debug, Default)]
pub struct RollbackItems(pub Vec<Item>);

/// Sets an app up for rollback: a manual clock of one `timestep` per
/// update, the snapshot registrations and the checksum's items. See the
/// crate docs for what is and is not rolled back.
pub struct GgrsPlugin<I> {
    timestep: Duration,
    items: Vec<Item>,
    registrations: Vec<fn(&mut World)>,
    _input: PhantomData<fn() -> I>,
}

impl<I: Input> GgrsPlugin<I> {
    /// A plugin whose every update is one `timestep`.
    pub fn new(timestep: Duration) -> Self {
        GgrsPlugin {
            timestep,
            items: vec![checksum::entities_item()],
            registrations: Vec::new(),
            _input: PhantomData,
        }
    }

    /// Component `T` is snapshot as raw bytes and in the checksum.
    pub fn rollback_component<T: Component + Copy + bytemuck::NoUninit>(mut self) -> Self {
        self.registrations
            .push(|world: &mut World| world.snapshot_by_copy::<T>());
        self.items.push(component_item::<T>());
        self
    }

    /// Resource `R` is snapshot (cloned); it is not in the checksum.
    pub fn rollback_resource<R: Clone + Send + Sync + 'static>(mut self) -> Self {
        self.registrations
            .push(|world: &mut World| world.snapshot_resource::<R>());
        self
    }

    /// Adds other state to the checksum (a manager's, say): `hash` hashes
    /// it, `entities` lists per-entity hashes for desync reports (may
    /// leave the list empty). Snapshots must already cover it.
    pub fn checksum_state(
        mut self,
        name: &'static str,
        hash: HashFn,
        entities: EntityHashesFn,
    ) -> Self {
        self.items.push(Item {
            name,
            hash,
            entities,
        });
        self
    }

    /// Anything else to run on the world when the plugin is built (a
    /// component registered with `snapshot_by_clone`, say).
    pub fn register(mut self, f: fn(&mut World)) -> Self {
        self.registrations.push(f);
        self
    }
}

impl<I: Input> Plugin for GgrsPlugin<I> {
    fn build(&self, app: &mut App) -> Result<(), AppError> {
        app.set_time_source(TimeSource::Manual(self.timestep));
        let world = app.world_mut();
        for f in &self.registrations {
            f(world);
        }
        world.snapshot_resource::<doecs::Time>();
        world.snapshot_resource::<doecs::Time<doecs::Fixed>>();
        world.snapshot_resource::<PlayerInputs<I>>();
        world.snapshot_resource::<RollbackFrame>();
        world.insert_resource(PlayerInputs::<I>::default());
        world.insert_resource(RollbackFrame(0));
        // One fixed step per update: `FixedUpdate` systems run exactly once
        // per frame (the accumulator counts whole nanoseconds, no floats).
        if let Some(fixed) = world.resource_mut::<doecs::Time<doecs::Fixed>>() {
            fixed.set_timestep(self.timestep);
        }
        world.insert_resource(RollbackItems(self.items.clone()));
        Ok(())
    }
}
