//! Driving the three ggrs session kinds on an app.
//!
//! Each function is one step of a game loop; the caller owns the loop, its
//! pacing and its inputs. A step polls the network, turns ggrs's events
//! into errors where they mean the session cannot go on (a peer's
//! checksum disagrees, a peer is gone), adds the local inputs, asks ggrs to
//! advance and answers the requests with [`Rollback`]. A step that ggrs
//! holds back (not yet synchronized, too far ahead of a peer) is not an
//! error: it reports [`Step::Waiting`] and the loop simply tries again.
//!
//! [`sync_test`] runs a whole [`SyncTestSession`]: every frame is
//! simulated, then the last `check_distance` frames are loaded and
//! re-simulated, and every re-saved frame must hash as before.
//!
//! # Stop on a disconnect
//!
//! [`p2p_step`] checks the events before it advances for more than the
//! report: once ggrs has reported a peer [`GgrsEvent::Disconnected`] (by
//! its own timeout, after the peer went silent, say), advancing can panic
//! inside ggrs. ggrs marks the peer's inputs disconnected from the frame after
//! its last one (`sessions/p2p_session.rs:766`) and, on the next advance,
//! re-simulates from there; when this side has not advanced past that
//! frame, it is the frame this side is on, and ggrs asserts "must load
//! frame in the past" (`sync_layer.rs:232`). That happens when a peer
//! synchronizes and goes silent while this side is still at frame 0 (a
//! long load before the first frame), and when a peer vanishes while this
//! side only polls (a pause) right after the peer's last input. So the
//! step returns [`RollbackError::Disconnected`] without advancing, and that
//! error ends the session: stepping it again would advance. Code that
//! calls ggrs's `advance_frame` itself must likewise stop at the
//! `Disconnected` event, not advance past it.
//!
//! One gap remains: `advance_frame` polls the network again itself, so a
//! timeout that expires between the step's poll and that one reaches ggrs
//! unchecked. It can only matter when this side is exactly at that frame
//! as the timeout fires; a loop that steps every frame never is (it
//! predicts ahead of a silent peer until ggrs holds it back).

use crate::{Address, GgrsConfig, Input, Rollback, RollbackError};
use doecs::App;
use ggrs::{
    Frame, GgrsError, GgrsEvent, P2PSession, PlayerHandle, SessionBuilder, SessionState,
    SpectatorSession, SyncTestSession,
};

/// What a step did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// A frame was advanced (perhaps after a rollback).
    Advanced,
    /// ggrs held the frame back (synchronizing, or too far ahead); try
    /// again after a short wait.
    Waiting,
}

/// A sync test session for `players` players, rolling back
/// `check_distance` frames every frame.
pub fn sync_test_session<I: Input, A: Address>(
    players: usize,
    check_distance: usize,
) -> Result<SyncTestSession<GgrsConfig<I, A>>, RollbackError> {
    Ok(SessionBuilder::<GgrsConfig<I, A>>::new()
        .with_num_players(players)?
        .with_max_prediction_window(check_distance + 1)
        .with_check_distance(check_distance)
        .start_synctest_session()?)
}

/// Runs `frames` frames of a sync test; `input(frame, player)` gives every
/// player's input. The first frame that re-simulates differently ends it
/// with [`RollbackError::Desync`] naming the frame, the component and the
/// entity.
pub fn sync_test<I: Input, A: Address>(
    app: &mut App,
    rollback: &mut Rollback<I>,
    session: &mut SyncTestSession<GgrsConfig<I, A>>,
    frames: usize,
    mut input: impl FnMut(Frame, PlayerHandle) -> I,
) -> Result<(), RollbackError> {
    for _ in 0..frames {
        let frame = session.current_frame();
        for player in 0..session.num_players() {
            session.add_local_input(player, input(frame, player))?;
        }
        let requests = match session.advance_frame() {
            Ok(requests) => requests,
            Err(GgrsError::MismatchedChecksum {
                mismatched_frames, ..
            }) => {
                // Caught by ggrs before the re-save check: name the frame.
                let frame = mismatched_frames.first().copied().unwrap_or(frame);
                return Err(RollbackError::Desync {
                    frame,
                    component: "world checksum",
                    entity: None,
                });
            }
            Err(e) => return Err(e.into()),
        };
        rollback.handle(app, requests)?;
    }
    Ok(())
}

/// Turns a session event into an error where it ends the session.
fn check_event<I: Input, A: Address>(
    event: GgrsEvent<GgrsConfig<I, A>>,
) -> Result<(), RollbackError> {
    match event {
        GgrsEvent::DesyncDetected {
            frame,
            local_checksum,
            remote_checksum,
            addr,
        } => Err(RollbackError::RemoteDesync {
            frame,
            local: local_checksum,
            remote: remote_checksum,
            peer: format!("{addr:?}"),
        }),
        GgrsEvent::Disconnected { addr } => Err(RollbackError::Disconnected(format!("{addr:?}"))),
        _ => Ok(()),
    }
}

/// One step of a peer-to-peer session: poll, check events, add
/// `local_input(handle)` for each local player, advance and answer. The
/// checksums of frames that became confirmed are appended to `confirmed`.
///
/// An error ends the session. In particular, after
/// [`RollbackError::Disconnected`] do not step the session again: ggrs can
/// panic advancing after a disconnect (see the module docs).
pub fn p2p_step<I: Input, A: Address>(
    app: &mut App,
    rollback: &mut Rollback<I>,
    session: &mut P2PSession<GgrsConfig<I, A>>,
    mut local_input: impl FnMut(Frame, PlayerHandle) -> I,
    confirmed: &mut Vec<(Frame, u128)>,
) -> Result<Step, RollbackError> {
    session.poll_remote_clients();
    for event in session.events() {
        check_event(event)?;
    }
    if session.current_state() != SessionState::Running {
        return Ok(Step::Waiting);
    }
    let frame = session.current_frame();
    for handle in session.local_player_handles() {
        session.add_local_input(handle, local_input(frame, handle))?;
    }
    let requests = match session.advance_frame() {
        Ok(requests) => requests,
        Err(GgrsError::PredictionThreshold | GgrsError::NotSynchronized) => {
            return Ok(Step::Waiting)
        }
        Err(e) => return Err(e.into()),
    };
    rollback.handle(app, requests)?;
    // The state saved for a frame `f <= confirmed_frame` depends only on
    // confirmed inputs, and this advance has re-simulated it if needed.
    rollback.drain_confirmed(session.confirmed_frame(), confirmed);
    // Too far ahead of a peer, ggrs 0.13 returns no error but requests no
    // new frame (it may still have rolled back and re-simulated).
    if session.current_frame() > frame {
        Ok(Step::Advanced)
    } else {
        Ok(Step::Waiting)
    }
}

/// One step of a spectator session: poll, check events, advance by the
/// host's confirmed inputs. Every frame a spectator simulates is confirmed.
pub fn spectator_step<I: Input, A: Address>(
    app: &mut App,
    rollback: &mut Rollback<I>,
    session: &mut SpectatorSession<GgrsConfig<I, A>>,
) -> Result<Step, RollbackError> {
    session.poll_remote_clients();
    for event in session.events() {
        check_event(event)?;
    }
    if session.current_state() != SessionState::Running {
        return Ok(Step::Waiting);
    }
    match session.advance_frame() {
        Ok(requests) if requests.is_empty() => Ok(Step::Waiting),
        Ok(requests) => {
            rollback.handle(app, requests)?;
            Ok(Step::Advanced)
        }
        Err(GgrsError::PredictionThreshold | GgrsError::NotSynchronized) => Ok(Step::Waiting),
        Err(e) => Err(e.into()),
    }
}
