//! Answering ggrs's requests with world snapshots.
//!
//! [`Rollback`] keeps a ring of [`Snapshot`]s, one per frame ggrs may still
//! load, indexed by `frame mod ring length`. A save snapshots the world into
//! its frame's slot (reusing the slot's buffers) and hands ggrs only the
//! slot's index and the checksum; a load checks that the slot still holds
//! that frame and restores it. The ring is longer than ggrs's own (ggrs
//! keeps `max_prediction + 1` cells), so a slot is never reused while ggrs
//! may still ask for its frame.
//!
//! Beside each snapshot the ring keeps the frame's per-item hashes. In a
//! sync test ([`Rollback::check_resaves`]) a frame saved a second time
//! must hash the same as the first time; when it does not, the item whose
//! hash differs is the component to blame, and comparing its per-entity
//! hashes in the live world and in the first snapshot (restored for the
//! moment into the world) names the first entity that differs.
//!
//! Confirmed frames: once every player's input up to frame `c` has
//! arrived, no later rollback can change the states saved for frames up to
//! `c`; [`Rollback::drain_confirmed`] hands out their checksums, for logs
//! and for comparing two peers after the fact.

use crate::checksum::{checksum, Item};
use crate::{Input, PlayerInputs, RollbackError, RollbackFrame, RollbackItems, Slot};
use doecs::{App, Entity, Snapshot, World};
use ggrs::{Config, Frame, GgrsRequest, NULL_FRAME};
use std::time::{Duration, Instant};

/// What the requests cost, summed over a session.
#[derive(Clone, Copy, Debug, Default)]
pub struct RollbackStats {
    /// Saves answered.
    pub saves: u64,
    /// Loads answered (rollbacks).
    pub loads: u64,
    /// Frames advanced, re-simulated ones included.
    pub advances: u64,
    /// Time in saves (snapshot and checksum).
    pub save_time: Duration,
    /// Time in loads.
    pub load_time: Duration,
    /// Time in advances.
    pub advance_time: Duration,
}

/// Answers ggrs's requests on an app set up by [`crate::GgrsPlugin`]. See
/// the module docs.
pub struct Rollback<I> {
    ring: Vec<Snapshot>,
    /// The frame each slot holds (`NULL_FRAME` when none).
    frames: Vec<Frame>,
    checksums: Vec<u128>,
    /// Per slot, each item's hash.
    hashes: Vec<Vec<u64>>,
    items: Vec<Item>,
    scratch: Vec<u64>,
    check_resaves: bool,
    /// The last frame [`Self::drain_confirmed`] handed out.
    drained: Frame,
    stats: RollbackStats,
    _input: std::marker::PhantomData<fn() -> I>,
}

impl<I: Input> Rollback<I> {
    /// A ring for a session whose ggrs `max_prediction` is
    /// `max_prediction` (the ring holds two frames more).
    pub fn new(app: &App, max_prediction: usize) -> Self {
        let len = max_prediction + 2;
        let items = app
            .world()
            .resource::<RollbackItems>()
            .map(|i| i.0.clone())
            .unwrap_or_default();
        Rollback {
            ring: (0..len).map(|_| Snapshot::new()).collect(),
            frames: vec![NULL_FRAME; len],
            checksums: vec![0; len],
            hashes: vec![Vec::new(); len],
            items,
            scratch: Vec::new(),
            check_resaves: false,
            drained: NULL_FRAME,
            stats: RollbackStats::default(),
            _input: std::marker::PhantomData,
        }
    }

    /// A frame saved again must hash as it did the first time, or the save
    /// fails with [`RollbackError::Desync`] (for sync tests).
    pub fn check_resaves(mut self) -> Self {
        self.check_resaves = true;
        self
    }

    /// What the requests have cost so far.
    pub fn stats(&self) -> RollbackStats {
        self.stats
    }

    /// The checksum of the world as it is now.
    pub fn world_checksum(&mut self, world: &World) -> u128 {
        checksum(world, &self.items, &mut self.scratch)
    }

    fn slot_of(&self, frame: Frame) -> usize {
        frame.rem_euclid(self.ring.len() as Frame) as usize
    }

    /// Answers `requests`, in order.
    pub fn handle<A: crate::Address>(
        &mut self,
        app: &mut App,
        requests: Vec<GgrsRequest<crate::GgrsConfig<I, A>>>,
    ) -> Result<(), RollbackError>
    where
        crate::GgrsConfig<I, A>: Config<Input = I, State = Slot>,
    {
        for request in requests {
            match request {
                GgrsRequest::SaveGameState { cell, frame } => {
                    let start = Instant::now();
                    let (slot, sum) = self.save(app.world_mut(), frame)?;
                    cell.save(frame, Some(Slot(slot)), Some(sum));
                    self.stats.saves += 1;
                    self.stats.save_time += start.elapsed();
                }
                GgrsRequest::LoadGameState { cell, frame } => {
                    let start = Instant::now();
                    let slot = cell.load().ok_or(RollbackError::MissingState { frame })?;
                    self.load(app.world_mut(), frame, slot.0)?;
                    self.stats.loads += 1;
                    self.stats.load_time += start.elapsed();
                }
                GgrsRequest::AdvanceFrame { inputs } => {
                    let start = Instant::now();
                    self.advance(app, &inputs)?;
                    self.stats.advances += 1;
                    self.stats.advance_time += start.elapsed();
                }
            }
        }
        Ok(())
    }

    /// Snapshots the world as frame `frame`; returns the slot and checksum.
    pub fn save(
        &mut self,
        world: &mut World,
        frame: Frame,
    ) -> Result<(usize, u128), RollbackError> {
        let slot = self.slot_of(frame);
        if self.check_resaves && self.frames[slot] == frame {
            let sum = checksum(world, &self.items, &mut self.scratch);
            if sum != self.checksums[slot] {
                return Err(self.diagnose(world, frame, slot));
            }
            return Ok((slot, sum));
        }
        world
            .snapshot_into(&mut self.ring[slot])
            .map_err(|source| RollbackError::Snapshot { frame, source })?;
        let sum = checksum(world, &self.items, &mut self.hashes[slot]);
        self.frames[slot] = frame;
        self.checksums[slot] = sum;
        Ok((slot, sum))
    }

    /// Puts the world back as it was saved for `frame` in `slot`.
    pub fn load(
        &mut self,
        world: &mut World,
        frame: Frame,
        slot: usize,
    ) -> Result<(), RollbackError> {
        if self.frames.get(slot) != Some(&frame) {
            return Err(RollbackError::MissingState { frame });
        }
        world
            .restore(&self.ring[slot])
            .map_err(|source| RollbackError::Snapshot { frame, source })
    }

    /// One update with `inputs` in [`PlayerInputs`].
    pub fn advance(
        &mut self,
        app: &mut App,
        inputs: &[(I, ggrs::InputStatus)],
    ) -> Result<(), RollbackError> {
        let world = app.world_mut();
        let frame = world.resource::<RollbackFrame>().map_or(0, |f| f.0);
        match world.resource_mut::<PlayerInputs<I>>() {
            Some(p) => {
                p.inputs.clear();
                p.inputs.extend_from_slice(inputs);
            }
            None => {
                world.insert_resource(PlayerInputs {
                    inputs: inputs.to_vec(),
                });
            }
        }
        world.insert_resource(RollbackFrame(frame + 1));
        app.update()
            .map_err(|source| RollbackError::App { frame, source })?;
        Ok(())
    }

    /// Appends `(frame, checksum)` for every saved frame up to
    /// `min(confirmed, last_saved)` not handed out before, in order.
    /// Call it after each answered `advance_frame`, with the session's
    /// confirmed frame.
    pub fn drain_confirmed(&mut self, confirmed: Frame, out: &mut Vec<(Frame, u128)>) {
        let last_saved = self.frames.iter().copied().max().unwrap_or(NULL_FRAME);
        let upto = confirmed.min(last_saved);
        while self.drained < upto {
            self.drained += 1;
            let slot = self.slot_of(self.drained);
            if self.frames[slot] == self.drained {
                out.push((self.drained, self.checksums[slot]));
            }
        }
    }

    /// The error for frame `frame`, saved first in `slot`, now hashing
    /// differently in `world`: the first item that differs and, for a
    /// component, the first entity. `self.scratch` holds the new hashes.
    fn diagnose(&mut self, world: &mut World, frame: Frame, slot: usize) -> RollbackError {
        let first = self.hashes[slot]
            .iter()
            .zip(&self.scratch)
            .position(|(a, b)| a != b)
            .unwrap_or(0);
        let item = self.items[first];
        // The live values, then the first run's (restored for the moment),
        // then the live world back.
        let mut now = Vec::new();
        (item.entities)(world, &mut now);
        let mut live = Snapshot::new();
        let mut before = Vec::new();
        if world.snapshot_into(&mut live).is_ok() && world.restore(&self.ring[slot]).is_ok() {
            (item.entities)(world, &mut before);
            let _ = world.restore(&live);
        }
        RollbackError::Desync {
            frame,
            component: item.name,
            entity: first_difference(&before, &now),
        }
    }
}

/// The first entity whose hash differs between two lists in query order,
/// or that only one list has.
fn first_difference(a: &[(Entity, u64)], b: &[(Entity, u64)]) -> Option<Entity> {
    let n = a.len().min(b.len());
    for i in 0..n {
        if a[i] != b[i] {
            return Some(if a[i].0 == b[i].0 {
                a[i].0
            } else {
                a[i].0.min(b[i].0)
            });
        }
    }
    a.get(n).or(b.get(n)).map(|x| x.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_difference_is_found() {
        let e = |i: u32| Entity::from_bits(u64::from(i) | 1 << 32);
        let a = [(e(1), 1), (e(2), 2), (e(3), 3)];
        assert_eq!(first_difference(&a, &a), None);
        assert_eq!(first_difference(&a, &[(e(1), 1), (e(2), 5)]), Some(e(2)));
        assert_eq!(first_difference(&a, &a[..2]), Some(e(3)));
    }
}
