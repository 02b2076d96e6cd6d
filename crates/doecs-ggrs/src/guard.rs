//! A socket wrapper that refuses hostile ggrs messages before ggrs sees
//! them.
//!
//! ggrs 0.13 decodes every datagram into a [`Message`] and then trusts
//! it: a well-formed message with the wrong numbers in it reaches
//! `assert!`s, unchecked arithmetic and unbounded allocations inside ggrs
//! and the crates it uses. [`GuardedSocket`] wraps any
//! [`NonBlockingSocket`], re-encodes each received message into ggrs's own
//! wire format (bincode 1, fixed-width little-endian integers), decodes
//! that into a private mirror of the format whose fields it can read, and
//! drops every message that fails one of the checks below. Each dropped
//! message is counted in [`GuardStats`], with the first [`Refusal`] kept
//! for inspection.
//!
//! The checks (each names the ggrs line it protects and why an honest
//! peer never trips it):
//!
//! - **Size**: a message is at most [`MAX_MESSAGE_BYTES`] encoded. ggrs's
//!   own UDP socket reads at most 4096 bytes; this bounds the guard's own
//!   work for any inner socket.
//! - **Connection statuses**: an `Input` carries exactly one status per
//!   player. ggrs checks this itself, but not when `disconnect_requested`
//!   is set (`network/protocol.rs:672`). Honest peers send their whole
//!   `local_connect_status`, one entry per player (`protocol.rs:535`).
//! - **Input bytes**: the run-length layer must be well formed and decode
//!   to at most [`MAX_DECODED_INPUT_BYTES`], and the delta layer under it
//!   must be whole length-prefixed inputs. ggrs calls `bitfield_rle::decode`
//!   on the bytes (`network/compression.rs:39`), which indexes past the
//!   end on a truncated varint (`varinteger-1.0.6/src/lib.rs:54`),
//!   overflows on a long one (`lib.rs:56`), and allocates whatever length
//!   the varints declare (`bitfield-rle-0.2.1/src/lib.rs:145`, `vec![0; len]`:
//!   gigabytes from eight bytes). Honest peers encode at most a few dozen
//!   small inputs with ggrs's own encoder.
//! - **Frames ahead**: the last frame an `Input` carries (`start_frame`
//!   plus the number of inputs, minus one), every status's `last_frame`,
//!   and a `ChecksumReport`'s frame must lie in `-1..=now + window`,
//!   where `now` is the lowest connected frame in the last `Input` this
//!   side sent (its confirmed frame) or, for a side that sends no inputs
//!   (a spectator), the last frame it acknowledged. Too many inputs at
//!   once overflow ggrs's 128-frame input queue
//!   (`input_queue.rs:221`), a start near `i32::MAX` overflows
//!   `start_frame + i` (`protocol.rs:732`), and a checksum frame near
//!   `i32::MIN` overflows `protocol.rs:805`. An honest peer is never more
//!   than its prediction window plus its input delay ahead of our
//!   confirmed frame, and our confirmed frame is at most our prediction
//!   window behind our own: about `2 * max_prediction + delay`, well
//!   under the default window of [`DEFAULT_WINDOW`] frames, which keeps
//!   the input queue below half full. Checksum frames are at least 0
//!   (ggrs sends them from frame `interval` on).
//! - **No early disconnect**: an `Input` that requests a disconnect or
//!   marks a player disconnected is refused until this side has sent its
//!   first input. At frame 0 with nothing received, ggrs sets the frame
//!   to resimulate from to 0 (`sessions/p2p_session.rs:766`) and then
//!   asks to load the frame it is on (`sync_layer.rs:232`). An honest
//!   peer cannot have seen anyone disconnect before inputs flow; if it
//!   goes away that early, ggrs's own timeout still notices. (Not for
//!   spectators: see below.)
//! - **Pongs**: a `QualityReply` must echo one of the last [`PINGS_KEPT`]
//!   pings this side sent in its `QualityReport`s. ggrs takes the round
//!   trip as now minus the pong (`network/protocol.rs:787`), halves it,
//!   clamps it to `i32::MAX` and multiplies it by the frame rate
//!   (`protocol.rs:303`, on every poll once inputs flow): at 60 frames a
//!   second a pong from more than about 20 hours ago, 0 say, overflows. Honest peers echo
//!   the ping they were sent (`protocol.rs:778`); reports go out every
//!   200 ms, so only a reply over six seconds late is refused, and a
//!   refused reply only leaves the round-trip estimate as it was.
//!
//! `ack_frame` is not checked: ggrs only compares it (`protocol.rs:435`).
//! Sync, quality-report and keep-alive messages are passed as they are:
//! ggrs reads them with saturating or wrapping-free arithmetic.
//!
//! # Spectators
//!
//! A spectator's socket is guarded with [`GuardedSocket::for_spectator`].
//! It hears only from its host, which sends it confirmed inputs, acks and
//! quality messages, and it sends no inputs, so its frames are bounded by
//! the last frame it acknowledged. Its checks differ:
//!
//! - **No checksum reports**: ggrs sends them to remote players only
//!   (`sessions/p2p_session.rs:1233`); a spectator's endpoint has desync
//!   detection off and meets a `debug_assert!(false)` on one
//!   (`protocol.rs:795`): a panic in debug builds.
//! - **No disconnect requests**: ggrs 0.13 sends inputs only while its
//!   endpoint is running (`protocol.rs:387`, `protocol.rs:481`) and sets
//!   `disconnect_requested` only when it is disconnected
//!   (`protocol.rs:534`), so an honest host never sets it; a forged one
//!   would end the spectator's session. A host that goes away is still
//!   noticed by ggrs's timeout.
//! - **No gap before the first input**: an `Input` may start at most one
//!   frame past the last frame acknowledged. ggrs decodes a spectator's
//!   first `Input` whatever its start (`protocol.rs:713`) and from then on
//!   skips every frame up to the last one received (`protocol.rs:734`), so
//!   a first input starting past frame 0 leaves the frames before it
//!   missing for good and the spectator waiting on them forever
//!   (`sessions/p2p_spectator_session.rs:198`). An honest host sends its
//!   unacknowledged inputs, from frame 0 on (`p2p_session.rs:221`), each
//!   message starting right after the last frame we acknowledged to it
//!   (`protocol.rs:432`).
//! - **Disconnected players pass**: the early-disconnect check protects a
//!   rollback that spectators never do (they only mark a player's inputs
//!   disconnected), and an honest host keeps sending the statuses of
//!   players who left.
//!
//! A forged `Input` that passes every check (well formed, in range, one
//! frame after the last acknowledged) cannot be told from the host's own;
//! the spectator plays it. Only an authenticated transport prevents that.

use ggrs::{Frame, Message, NonBlockingSocket};
use std::collections::VecDeque;
use std::hash::Hash;
use std::sync::{Arc, Mutex, MutexGuard};

/// The largest encoded message the guard looks at; bigger ones are refused.
pub const MAX_MESSAGE_BYTES: u64 = 64 * 1024;
/// The most bytes an `Input`'s run-length encoding may decode to.
pub const MAX_DECODED_INPUT_BYTES: u64 = 64 * 1024;
/// How many frames past this side's confirmed frame a peer may send.
pub const DEFAULT_WINDOW: i32 = 64;
/// How many of this side's latest pings a `QualityReply` may echo.
pub const PINGS_KEPT: usize = 32;

/// Why the guard dropped a message.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    /// The message is bigger than [`MAX_MESSAGE_BYTES`] or did not
    /// re-encode into ggrs's format.
    #[error("message does not fit ggrs's wire format within {MAX_MESSAGE_BYTES} bytes")]
    Encoding,
    /// An `Input` with the wrong number of connection statuses.
    #[error("input carries {got} connection statuses, the session has {want} players")]
    StatusCount {
        /// Statuses in the message.
        got: usize,
        /// Players in the session.
        want: usize,
    },
    /// Input bytes that ggrs's decoder would choke on.
    #[error("input bytes: {0}")]
    InputBytes(&'static str),
    /// A disconnect (requested, or a player marked disconnected) before
    /// this side has sent any input.
    #[error("disconnect before this side sent its first input")]
    EarlyDisconnect,
    /// A frame number outside what an honest peer can send.
    #[error("{field} {frame} outside -1..={max}")]
    Frame {
        /// Which field.
        field: &'static str,
        /// Its value (for an input's last frame, computed in `i64`).
        frame: i64,
        /// The largest allowed.
        max: i64,
    },
    /// A `QualityReply` whose pong is none of this side's recent pings.
    #[error("quality reply echoes {pong}, not one of the last {PINGS_KEPT} pings sent")]
    Pong {
        /// The pong.
        pong: u128,
    },
    /// A message a host never sends a spectator.
    #[error("a host never sends a spectator a {0}")]
    NotForSpectators(&'static str),
}

/// What a guard let through and what it dropped.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GuardCounts {
    /// Messages handed on to ggrs.
    pub passed: u64,
    /// Messages dropped.
    pub refused: u64,
    /// Why the first dropped message was dropped.
    pub first_refusal: Option<Refusal>,
}

/// A shared view of a [`GuardedSocket`]'s counts, readable after the
/// socket has been handed to a ggrs session.
#[derive(Clone, Debug, Default)]
pub struct GuardStats(Arc<Mutex<GuardCounts>>);

impl GuardStats {
    /// The counts so far.
    pub fn get(&self) -> GuardCounts {
        self.lock().clone()
    }

    fn lock(&self) -> MutexGuard<'_, GuardCounts> {
        // A panic elsewhere while holding the lock leaves plain counters.
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// A socket that checks every received message before ggrs sees it. See
/// the module docs for the checks.
pub struct GuardedSocket<S> {
    inner: S,
    players: usize,
    window: i32,
    /// The lowest connected frame in the last `Input` this side sent.
    confirmed: Option<Frame>,
    /// The highest frame this side acknowledged.
    acked: Frame,
    /// The pings of this side's latest quality reports.
    pings: VecDeque<u128>,
    /// Whether this side is a spectator (see the module docs).
    spectator: bool,
    stats: GuardStats,
}

impl<S> GuardedSocket<S> {
    /// Guards `inner` for a session of `players` players (spectators not
    /// counted), with the default window of [`DEFAULT_WINDOW`] frames.
    pub fn new(inner: S, players: usize) -> Self {
        GuardedSocket {
            inner,
            players,
            window: DEFAULT_WINDOW,
            confirmed: None,
            acked: -1,
            pings: VecDeque::with_capacity(PINGS_KEPT),
            spectator: false,
            stats: GuardStats::default(),
        }
    }

    /// Guards a spectator's socket, which hears from its host, for a
    /// session of `players` players: the checks of the module docs'
    /// "Spectators" section, with the default window.
    pub fn for_spectator(inner: S, players: usize) -> Self {
        GuardedSocket {
            spectator: true,
            ..GuardedSocket::new(inner, players)
        }
    }

    /// How many frames past this side's confirmed frame a peer may send
    /// (clamped to 1..=100: ggrs's input queue holds 128 frames).
    pub fn with_window(mut self, window: i32) -> Self {
        self.window = window.clamp(1, 100);
        self
    }

    /// A handle on the counts, to read after the socket is given away.
    pub fn stats(&self) -> GuardStats {
        self.stats.clone()
    }

    /// The highest frame a peer may name now.
    fn max_frame(&self) -> i64 {
        i64::from(self.confirmed.unwrap_or(self.acked)) + i64::from(self.window)
    }

    /// Learns this side's progress from an outgoing message.
    fn note_sent(&mut self, msg: &Message) {
        match wire::decode(msg) {
            Ok(wire::Msg {
                body: wire::Body::Input(i),
                ..
            }) => {
                let lowest = i
                    .peer_connect_status
                    .iter()
                    .filter(|s| !s.disconnected)
                    .map(|s| s.last_frame)
                    .min();
                if let Some(f) = lowest {
                    self.confirmed = Some(self.confirmed.map_or(f, |c| c.max(f)));
                }
            }
            Ok(wire::Msg {
                body: wire::Body::InputAck { ack_frame },
                ..
            }) => self.acked = self.acked.max(ack_frame),
            Ok(wire::Msg {
                body: wire::Body::QualityReport { ping, .. },
                ..
            }) => {
                if self.pings.len() == PINGS_KEPT {
                    self.pings.pop_front();
                }
                self.pings.push_back(ping);
            }
            _ => {}
        }
    }

    /// Whether ggrs may see `msg`.
    pub fn check(&self, msg: &Message) -> Result<(), Refusal> {
        let max = self.max_frame();
        let frame = |field: &'static str, f: i64| {
            if (-1..=max).contains(&f) {
                Ok(())
            } else {
                Err(Refusal::Frame {
                    field,
                    frame: f,
                    max,
                })
            }
        };
        match wire::decode(msg)?.body {
            wire::Body::Input(i) => {
                if i.peer_connect_status.len() != self.players {
                    return Err(Refusal::StatusCount {
                        got: i.peer_connect_status.len(),
                        want: self.players,
                    });
                }
                if self.spectator {
                    if i.disconnect_requested {
                        return Err(Refusal::NotForSpectators("disconnect request"));
                    }
                    let next = i64::from(self.acked) + 1;
                    if i64::from(i.start_frame) > next {
                        return Err(Refusal::Frame {
                            field: "start frame",
                            frame: i64::from(i.start_frame),
                            max: next,
                        });
                    }
                } else {
                    let disconnects = i.disconnect_requested
                        || i.peer_connect_status.iter().any(|s| s.disconnected);
                    if disconnects && self.confirmed.is_none() {
                        return Err(Refusal::EarlyDisconnect);
                    }
                }
                for s in &i.peer_connect_status {
                    frame("status last_frame", i64::from(s.last_frame))?;
                }
                let n = wire::count_inputs(&i.bytes).map_err(Refusal::InputBytes)?;
                if n > 0 {
                    frame("last input frame", i64::from(i.start_frame) + n as i64 - 1)?;
                }
                Ok(())
            }
            wire::Body::QualityReply { pong } => {
                if self.pings.contains(&pong) {
                    Ok(())
                } else {
                    Err(Refusal::Pong { pong })
                }
            }
            wire::Body::ChecksumReport { .. } if self.spectator => {
                Err(Refusal::NotForSpectators("checksum report"))
            }
            wire::Body::ChecksumReport { frame: f, .. } => {
                frame("checksum frame", i64::from(f))?;
                if f < 0 {
                    return Err(Refusal::Frame {
                        field: "checksum frame",
                        frame: i64::from(f),
                        max,
                    });
                }
                Ok(())
            }
            _ => Ok(()),
        }
    }
}

impl<S, A> NonBlockingSocket<A> for GuardedSocket<S>
where
    S: NonBlockingSocket<A>,
    A: Clone + PartialEq + Eq + Hash,
{
    fn send_to(&mut self, msg: &Message, addr: &A) {
        self.note_sent(msg);
        self.inner.send_to(msg, addr);
    }

    fn receive_all_messages(&mut self) -> Vec<(A, Message)> {
        let mut msgs = self.inner.receive_all_messages();
        let mut counts = GuardCounts::default();
        msgs.retain(|(_, m)| match self.check(m) {
            Ok(()) => {
                counts.passed += 1;
                true
            }
            Err(r) => {
                counts.refused += 1;
                counts.first_refusal.get_or_insert(r);
                false
            }
        });
        let mut c = self.stats.lock();
        c.passed += counts.passed;
        c.refused += counts.refused;
        if c.first_refusal.is_none() {
            c.first_refusal = counts.first_refusal;
        }
        msgs
    }
}

/// A private mirror of ggrs 0.13's wire format (`network/messages.rs`):
/// the same fields in the same order, so bincode's bytes are identical
/// (the guard's tests check this on real traffic).
mod wire {
    use super::{Refusal, MAX_DECODED_INPUT_BYTES, MAX_MESSAGE_BYTES};
    use bincode::Options;
    use ggrs::{Frame, Message};
    use serde::{Deserialize, Serialize};

    #[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
    pub struct Status {
        pub disconnected: bool,
        pub last_frame: Frame,
    }

    #[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
    pub struct Input {
        pub peer_connect_status: Vec<Status>,
        pub disconnect_requested: bool,
        pub start_frame: Frame,
        pub ack_frame: Frame,
        pub bytes: Vec<u8>,
    }

    #[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
    pub enum Body {
        SyncRequest { random_request: u32 },
        SyncReply { random_reply: u32 },
        Input(Input),
        InputAck { ack_frame: Frame },
        QualityReport { frame_advantage: i16, ping: u128 },
        QualityReply { pong: u128 },
        ChecksumReport { checksum: u128, frame: Frame },
        KeepAlive,
    }

    #[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
    pub struct Msg {
        pub magic: u16,
        pub body: Body,
    }

    /// ggrs uses bincode's legacy functions: fixed-width little-endian
    /// integers, trailing bytes allowed. These are the same options, with
    /// a size limit.
    fn options() -> impl Options {
        bincode::DefaultOptions::new()
            .with_fixint_encoding()
            .allow_trailing_bytes()
            .with_limit(MAX_MESSAGE_BYTES)
    }

    pub fn decode(msg: &Message) -> Result<Msg, Refusal> {
        let bytes = options().serialize(msg).map_err(|_| Refusal::Encoding)?;
        options().deserialize(&bytes).map_err(|_| Refusal::Encoding)
    }

    #[cfg(test)]
    pub fn encode(msg: &Msg) -> Vec<u8> {
        options().serialize(msg).unwrap_or_default()
    }

    /// One varint as `varinteger` 1.0 reads it, refused where it would
    /// index past the end or overflow.
    fn varint(buf: &[u8], at: &mut usize) -> Result<u64, &'static str> {
        let mut value = 0u64;
        for i in 0..10 {
            let byte = *buf.get(*at).ok_or("truncated varint")?;
            *at += 1;
            let part = u64::from(byte & 127);
            // varinteger computes `fac * part` with `fac = 1 << 7i`.
            if i == 9 && part > 1 {
                return Err("varint overflows u64");
            }
            value |= part << (7 * i);
            if byte & 128 == 0 {
                return Ok(value);
            }
        }
        Err("varint longer than ten bytes")
    }

    /// How many inputs `bytes` carries, decoding ggrs's two layers
    /// (`bitfield_rle` runs, then length-prefixed deltas) within bounds.
    pub fn count_inputs(bytes: &[u8]) -> Result<usize, &'static str> {
        // First pass: the decoded length, as `decode_len` computes it.
        let (mut at, mut total) = (0usize, 0u64);
        while at < bytes.len() {
            let v = varint(bytes, &mut at)?;
            let run = if v & 1 == 1 { v >> 2 } else { v >> 1 };
            total = total.saturating_add(run);
            if total > MAX_DECODED_INPUT_BYTES {
                return Err("decodes to too many bytes");
            }
            if v & 1 == 0 {
                at = at
                    .checked_add(run as usize)
                    .filter(|&e| e <= bytes.len())
                    .ok_or("literal run past the end")?;
            }
        }
        // Second pass: the decoded bytes (bounded by the first pass).
        let mut out = Vec::with_capacity(total as usize);
        at = 0;
        while at < bytes.len() {
            let v = varint(bytes, &mut at)?;
            if v & 1 == 1 {
                let fill = if v & 2 == 2 { 255 } else { 0 };
                out.resize(out.len() + (v >> 2) as usize, fill);
            } else {
                let end = at + (v >> 1) as usize;
                out.extend_from_slice(bytes.get(at..end).ok_or("literal run past the end")?);
                at = end;
            }
        }
        // The delta layer: `u16` little-endian length, then that many bytes.
        let (mut pos, mut n) = (0usize, 0usize);
        while pos < out.len() {
            let len = out.get(pos..pos + 2).ok_or("truncated input length")?;
            let len = usize::from(u16::from_le_bytes([len[0], len[1]]));
            pos += 2 + len;
            if pos > out.len() {
                return Err("truncated input");
            }
            n += 1;
        }
        Ok(n)
    }
}

#[cfg(test)]
mod tests;
