//! The typed errors of rollback sessions.
//!
//! Every failure a session can meet is a [`RollbackError`] variant, so a
//! caller can tell a desync (a bug in the game) from a lost peer (the
//! network) from a refused snapshot (a component that cannot be copied).
//! ggrs decodes its own packets but trusts their contents; a socket
//! wrapped in [`GuardedSocket`](crate::guard::GuardedSocket) drops those
//! that would make it panic, and the requests ggrs hands us are checked
//! against the snapshot ring before they touch the world.

use ggrs::Frame;

/// Why a rollback session stopped.
#[derive(Debug, thiserror::Error)]
pub enum RollbackError {
    /// ggrs refused a call (a bad handle, a session not yet synchronized,
    /// a spectator too far behind, …).
    #[error("ggrs session: {0}")]
    Session(#[from] ggrs::GgrsError),
    /// The world could not be snapshot or restored.
    #[error("frame {frame}: {source}")]
    Snapshot {
        /// The frame being saved or loaded.
        frame: Frame,
        /// What the world said.
        source: doecs::SnapshotError,
    },
    /// A sync test re-simulated a frame to a different state than the first
    /// run: the game is not deterministic.
    #[error(
        "desync at frame {frame}: re-simulating gave a different {component}{}",
        match .entity { Some(e) => format!(" on entity {e:?}"), None => String::new() }
    )]
    Desync {
        /// The frame whose saved state differs (the state before that
        /// frame's inputs are applied).
        frame: Frame,
        /// The first registered component (or state) whose values differ.
        component: &'static str,
        /// The first entity, in query order, whose value differs, when the
        /// component is per entity.
        entity: Option<doecs::Entity>,
    },
    /// A peer reported a checksum for a frame that differs from ours.
    #[error(
        "desync with {peer} at frame {frame}: local checksum {local:#034x}, remote {remote:#034x}"
    )]
    RemoteDesync {
        /// The frame.
        frame: Frame,
        /// Our checksum.
        local: u128,
        /// Theirs.
        remote: u128,
        /// Who sent it, as the session's address type prints.
        peer: String,
    },
    /// ggrs asked to load a frame the snapshot ring no longer holds.
    #[error("ggrs asked to load frame {frame}, which the snapshot ring no longer holds")]
    MissingState {
        /// The frame asked for.
        frame: Frame,
    },
    /// A peer disconnected before the session's end.
    #[error("peer {0} disconnected")]
    Disconnected(String),
    /// An update of the app failed.
    #[error("frame {frame}: {source}")]
    App {
        /// The frame being advanced.
        frame: Frame,
        /// What the app said.
        source: doecs::AppError,
    },
    /// The session made no progress within its time limit.
    #[error("no progress for {0:?} (stuck at frame {1})")]
    Stalled(std::time::Duration, Frame),
}
