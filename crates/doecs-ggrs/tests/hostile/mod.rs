//! The pieces of the hostile-peer test: two ggrs P2P sessions joined by an
//! in-memory network, a trivial game, a mirror of ggrs's wire format to
//! build messages from, and the generators of hostile messages. The
//! spectator of one of them, and its storms, are in [`spectator`].

#![allow(dead_code)]

pub mod spectator;

use doecs_ggrs::guard::{GuardStats, GuardedSocket};
use ggrs::{
    Config, DesyncDetection, GgrsError, GgrsRequest, Message, NonBlockingSocket, P2PSession,
    PlayerType, PredictRepeatLast, SessionBuilder, SessionState,
};
use proptest::prelude::*;
use serde::{Deserialize, Serialize};
use std::cell::{Cell, RefCell};
use std::collections::{HashMap, VecDeque};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, Mutex, Once};

/// Peer addresses: A is 0, B is 1, A's spectator (when it has one) 2.
pub const A: u8 = 0;
pub const B: u8 = 1;
pub const S: u8 = 2;
pub const MAX_PREDICTION: usize = 8;

pub struct Cfg;
impl Config for Cfg {
    type Input = u8;
    type InputPredictor = PredictRepeatLast;
    type State = u64;
    type Address = u8;
}

/// Every peer's inbox, and every message B ever sent and every message
/// A sent its spectator (to mutate).
#[derive(Default)]
pub struct Wire {
    inbox: HashMap<u8, VecDeque<(u8, Message)>>,
    pub sent_by_b: Vec<Message>,
    pub sent_to_s: Vec<Message>,
}

pub type Net = Arc<Mutex<Wire>>;

/// A socket whose datagrams go through [`Wire`] without loss or delay.
pub struct MemSocket {
    me: u8,
    net: Net,
}

impl NonBlockingSocket<u8> for MemSocket {
    fn send_to(&mut self, msg: &Message, addr: &u8) {
        let mut w = self.net.lock().unwrap();
        if self.me == B {
            w.sent_by_b.push(msg.clone());
        }
        if *addr == S {
            w.sent_to_s.push(msg.clone());
        }
        w.inbox
            .entry(*addr)
            .or_default()
            .push_back((self.me, msg.clone()));
    }

    fn receive_all_messages(&mut self) -> Vec<(u8, Message)> {
        let mut w = self.net.lock().unwrap();
        w.inbox.entry(self.me).or_default().drain(..).collect()
    }
}

/// A boxed socket, as ggrs wants a sized one.
struct Dyn(Box<dyn NonBlockingSocket<u8>>);

impl NonBlockingSocket<u8> for Dyn {
    fn send_to(&mut self, msg: &Message, addr: &u8) {
        self.0.send_to(msg, addr);
    }

    fn receive_all_messages(&mut self) -> Vec<(u8, Message)> {
        self.0.receive_all_messages()
    }
}

/// The input player `handle` plays at `frame`.
pub fn played(frame: i32, handle: usize) -> u8 {
    (frame.rem_euclid(7) as u8) ^ (handle as u8 * 3)
}

/// The session of A or B (A's local player is 0, B's is 1); A also
/// serves spectator S when `watched`.
fn builder(me: u8, watched: bool) -> SessionBuilder<Cfg> {
    let mut builder = SessionBuilder::<Cfg>::new()
        .with_num_players(2)
        .unwrap()
        .with_max_prediction_window(MAX_PREDICTION)
        .with_desync_detection_mode(DesyncDetection::On { interval: 10 })
        .add_player(PlayerType::Local, usize::from(me))
        .unwrap()
        .add_player(PlayerType::Remote(1 - me), usize::from(1 - me))
        .unwrap();
    if watched {
        builder = builder.add_player(PlayerType::Spectator(S), 2).unwrap();
    }
    builder
}

/// One side of the game: a session, its local handle and its state.
pub struct Peer {
    pub session: P2PSession<Cfg>,
    handle: usize,
    state: u64,
    pub disconnected: bool,
}

impl Peer {
    /// Peer `me`, its session built by `builder`.
    fn new(
        me: u8,
        net: &Net,
        guard: Option<&mut Option<GuardStats>>,
        builder: SessionBuilder<Cfg>,
    ) -> Peer {
        let socket = MemSocket {
            me,
            net: net.clone(),
        };
        let socket: Box<dyn NonBlockingSocket<u8>> = match guard {
            Some(stats) => {
                let g = GuardedSocket::new(socket, 2);
                *stats = Some(g.stats());
                Box::new(g)
            }
            None => Box::new(socket),
        };
        let session = builder.start_p2p_session(Dyn(socket)).unwrap();
        Peer {
            session,
            handle: usize::from(me),
            state: 0,
            disconnected: false,
        }
    }

    /// Polls, and when running adds an input and advances one frame,
    /// answering ggrs's requests with a checksummed `u64`.
    pub fn step(&mut self) {
        self.session.poll_remote_clients();
        for e in self.session.events() {
            if let ggrs::GgrsEvent::Disconnected { .. } = e {
                self.disconnected = true;
            }
        }
        if self.session.current_state() != SessionState::Running {
            return;
        }
        let input = played(self.session.current_frame(), self.handle);
        if self.session.add_local_input(self.handle, input).is_err() {
            return;
        }
        match self.session.advance_frame() {
            Ok(requests) => {
                for r in requests {
                    match r {
                        GgrsRequest::SaveGameState { cell, frame } => {
                            cell.save(frame, Some(self.state), Some(u128::from(self.state)))
                        }
                        GgrsRequest::LoadGameState { cell, .. } => {
                            self.state = cell.load().unwrap_or_default();
                        }
                        GgrsRequest::AdvanceFrame { inputs } => {
                            let sum: u64 = inputs.iter().map(|(i, _)| u64::from(*i)).sum();
                            self.state = self.state.wrapping_mul(31).wrapping_add(sum);
                        }
                    }
                }
            }
            Err(GgrsError::PredictionThreshold) => {}
            Err(_) => {}
        }
    }

    pub fn frame(&self) -> i32 {
        self.session.current_frame()
    }
}

/// Two sessions on one in-memory network, A possibly behind a guard.
pub struct Pair {
    pub a: Peer,
    pub b: Peer,
    pub net: Net,
    pub stats: Option<GuardStats>,
}

impl Pair {
    /// Synchronizes both and plays `frames` honest frames.
    pub fn running(guarded: bool, frames: usize) -> Pair {
        let net: Net = Arc::default();
        let mut stats = None;
        let a = Peer::new(A, &net, guarded.then_some(&mut stats), builder(A, false));
        let b = Peer::new(B, &net, None, builder(B, false));
        let mut pair = Pair { a, b, net, stats };
        for _ in 0..10_000 {
            pair.a.session.poll_remote_clients();
            pair.b.session.poll_remote_clients();
            if pair.a.session.current_state() == SessionState::Running
                && pair.b.session.current_state() == SessionState::Running
            {
                break;
            }
        }
        assert_eq!(pair.a.session.current_state(), SessionState::Running);
        pair.play(frames);
        pair
    }

    pub fn play(&mut self, frames: usize) {
        for _ in 0..frames {
            self.a.step();
            self.b.step();
        }
    }

    /// Puts `msg` into A's inbox as if B had sent it.
    pub fn inject(&self, msg: Message) {
        let mut w = self.net.lock().unwrap();
        w.inbox.entry(A).or_default().push_back((B, msg));
    }

    pub fn captured(&self) -> Vec<Message> {
        self.net.lock().unwrap().sent_by_b.clone()
    }

    /// The magic B stamps on its messages.
    pub fn magic_of_b(&self) -> u16 {
        let w = self.net.lock().unwrap();
        w.sent_by_b
            .last()
            .map(|m| WMsg::from_ggrs(m).magic)
            .unwrap_or(1)
    }
}

// ---- where a panic happened ----

thread_local! {
    static QUIET: Cell<bool> = const { Cell::new(false) };
    static LAST: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Runs `f`, returning `Some("file:line: message")` if it panicked. The
/// panic is not printed.
pub fn panic_site<F: FnOnce()>(f: F) -> Option<String> {
    static HOOK: Once = Once::new();
    HOOK.call_once(|| {
        let default = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if QUIET.with(Cell::get) {
                let at = info
                    .location()
                    .map(|l| format!("{}:{}", l.file(), l.line()))
                    .unwrap_or_default();
                let msg = info
                    .payload()
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| info.payload().downcast_ref::<String>().cloned())
                    .unwrap_or_default();
                LAST.with(|l| *l.borrow_mut() = Some(format!("{at}: {msg}")));
            } else {
                default(info);
            }
        }));
    });
    QUIET.with(|q| q.set(true));
    let r = catch_unwind(AssertUnwindSafe(f));
    QUIET.with(|q| q.set(false));
    r.err()
        .map(|_| LAST.with(|l| l.borrow_mut().take().unwrap_or_default()))
}

// ---- a mirror of ggrs's wire format (bincode 1, fixint, little-endian) ----

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct WConn {
    pub disconnected: bool,
    pub last_frame: i32,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct WInput {
    pub peer_connect_status: Vec<WConn>,
    pub disconnect_requested: bool,
    pub start_frame: i32,
    pub ack_frame: i32,
    pub bytes: Vec<u8>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum WBody {
    SyncRequest { random_request: u32 },
    SyncReply { random_reply: u32 },
    Input(WInput),
    InputAck { ack_frame: i32 },
    QualityReport { frame_advantage: i16, ping: u128 },
    QualityReply { pong: u128 },
    ChecksumReport { checksum: u128, frame: i32 },
    KeepAlive,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct WMsg {
    pub magic: u16,
    pub body: WBody,
}

impl WMsg {
    pub fn from_ggrs(m: &Message) -> WMsg {
        bincode::deserialize(&bincode::serialize(m).unwrap()).unwrap()
    }
    pub fn to_ggrs(&self) -> Message {
        bincode::deserialize(&bincode::serialize(self).unwrap()).unwrap()
    }
}

// ---- hostile messages ----

/// A frame number, absolute or relative to A's current frame.
#[derive(Clone, Copy, Debug)]
pub enum F {
    Abs(i32),
    Rel(i32),
}

impl F {
    fn at(self, current: i32) -> i32 {
        match self {
            F::Abs(f) => f,
            F::Rel(d) => current.saturating_add(d),
        }
    }
}

pub fn frame() -> impl Strategy<Value = F> {
    prop_oneof![
        (-2..=2).prop_map(F::Abs),
        (-20..=20).prop_map(F::Rel),
        (120..=300).prop_map(F::Rel),
        (i32::MIN..=i32::MIN + 2).prop_map(F::Abs),
        (i32::MAX - 2..=i32::MAX).prop_map(F::Abs),
        any::<i32>().prop_map(F::Abs),
    ]
}

/// LEB128, as bitfield-rle's varints.
pub fn varint(mut v: u64, out: &mut Vec<u8>) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Input bytes: random, RLE runs of some length, or `n` well-formed
/// delta-encoded inputs of `len` bytes each.
pub fn input_bytes(huge: bool) -> BoxedStrategy<Vec<u8>> {
    let max_run: u64 = if huge { u64::MAX >> 2 } else { 1 << 16 };
    prop_oneof![
        proptest::collection::vec(any::<u8>(), 0..24),
        (0..max_run, any::<bool>()).prop_map(|(len, ones)| {
            let mut v = Vec::new();
            varint((len << 2) | 1 | if ones { 2 } else { 0 }, &mut v);
            v
        }),
        (0usize..300, 0u16..4, any::<u8>()).prop_map(|(n, len, b)| {
            let mut raw = Vec::new();
            for _ in 0..n {
                raw.extend_from_slice(&len.to_le_bytes());
                raw.extend(std::iter::repeat_n(b, usize::from(len)));
            }
            let mut v = Vec::new();
            varint((raw.len() as u64) << 1, &mut v);
            v.extend(raw);
            v
        }),
    ]
    .boxed()
}

/// A message to build once A's frame and B's magic are known.
#[derive(Clone, Debug)]
pub enum Hostile {
    /// Arbitrary bytes (only those that decode as a ggrs message are used).
    Raw(Vec<u8>),
    /// A message built field by field.
    Built {
        real_magic: bool,
        magic: u16,
        body: BodySpec,
    },
    /// One of B's real messages with one field changed.
    Mutated { index: usize, change: Change },
    /// `n` checksum reports, ten frames apart from `start` (B's magic).
    Flood { start: F, n: u8, checksum: u128 },
}

#[derive(Clone, Debug)]
pub enum BodySpec {
    SyncRequest(u32),
    SyncReply(u32),
    Input {
        status: Vec<(bool, F)>,
        disconnect: bool,
        start: F,
        ack: F,
        bytes: Vec<u8>,
    },
    InputAck(F),
    QualityReport(i16, u128),
    QualityReply(u128),
    ChecksumReport(u128, F),
    KeepAlive,
}

#[derive(Clone, Debug)]
pub enum Change {
    Magic(u16),
    Frame(F),
    SecondFrame(F),
    StatusLen(usize),
    StatusFrame(usize, F),
    Bytes(Vec<u8>),
    FlipByte(usize, u8),
    Disconnect,
}

fn body(huge: bool) -> impl Strategy<Value = BodySpec> {
    prop_oneof![
        1 => any::<u32>().prop_map(BodySpec::SyncRequest),
        1 => any::<u32>().prop_map(BodySpec::SyncReply),
        4 => (
            proptest::collection::vec((any::<bool>(), frame()), 0..4),
            proptest::bool::weighted(0.2),
            frame(),
            frame(),
            input_bytes(huge),
        )
            .prop_map(|(status, disconnect, start, ack, bytes)| BodySpec::Input {
                status,
                disconnect,
                start,
                ack,
                bytes
            }),
        1 => frame().prop_map(BodySpec::InputAck),
        1 => (any::<i16>(), any::<u128>()).prop_map(|(a, p)| BodySpec::QualityReport(a, p)),
        // Pongs from before now (ggrs's round trip is now minus the pong).
        1 => prop_oneof![any::<u128>(), 0..2_000_000_000_000u128].prop_map(BodySpec::QualityReply),
        1 => (any::<u128>(), frame()).prop_map(|(c, f)| BodySpec::ChecksumReport(c, f)),
        1 => Just(BodySpec::KeepAlive),
    ]
}

fn change(huge: bool) -> impl Strategy<Value = Change> {
    prop_oneof![
        1 => any::<u16>().prop_map(Change::Magic),
        2 => frame().prop_map(Change::Frame),
        1 => frame().prop_map(Change::SecondFrame),
        1 => (0usize..5).prop_map(Change::StatusLen),
        1 => (0usize..2, frame()).prop_map(|(i, f)| Change::StatusFrame(i, f)),
        1 => input_bytes(huge).prop_map(Change::Bytes),
        1 => (any::<usize>(), 1u8..).prop_map(|(i, x)| Change::FlipByte(i, x)),
        1 => Just(Change::Disconnect),
    ]
}

/// One hostile message. `huge` allows RLE runs that would make ggrs
/// allocate without bound (only for runs where a guard refuses them).
pub fn hostile(huge: bool) -> impl Strategy<Value = Hostile> {
    prop_oneof![
        1 => proptest::collection::vec(any::<u8>(), 0..64).prop_map(Hostile::Raw),
        3 => (proptest::bool::weighted(0.8), any::<u16>(), body(huge))
            .prop_map(|(real_magic, magic, body)| Hostile::Built { real_magic, magic, body }),
        3 => (any::<usize>(), change(huge)).prop_map(|(index, change)| Hostile::Mutated { index, change }),
    ]
}

fn frame_field(body: &mut WBody) -> Option<&mut i32> {
    match body {
        WBody::Input(i) => Some(&mut i.start_frame),
        WBody::InputAck { ack_frame } => Some(ack_frame),
        WBody::ChecksumReport { frame, .. } => Some(frame),
        _ => None,
    }
}

impl Hostile {
    /// The ggrs messages, given A's current frame, B's magic and B's
    /// captured messages; none when the bytes do not decode.
    pub fn build(&self, current: i32, magic: u16, captured: &[Message]) -> Vec<Message> {
        let w = match self {
            Hostile::Raw(bytes) => {
                return bincode::deserialize::<Message>(bytes).into_iter().collect()
            }
            Hostile::Flood { start, n, checksum } => {
                let start = start.at(current);
                return (0..i32::from(*n))
                    .map(|k| {
                        WMsg {
                            magic,
                            body: WBody::ChecksumReport {
                                checksum: *checksum,
                                frame: start.wrapping_add(10 * k),
                            },
                        }
                        .to_ggrs()
                    })
                    .collect();
            }
            Hostile::Built {
                real_magic,
                magic: m,
                body,
            } => WMsg {
                magic: if *real_magic { magic } else { *m },
                body: match body.clone() {
                    BodySpec::SyncRequest(r) => WBody::SyncRequest { random_request: r },
                    BodySpec::SyncReply(r) => WBody::SyncReply { random_reply: r },
                    BodySpec::Input {
                        status,
                        disconnect,
                        start,
                        ack,
                        bytes,
                    } => WBody::Input(WInput {
                        peer_connect_status: status
                            .iter()
                            .map(|(d, f)| WConn {
                                disconnected: *d,
                                last_frame: f.at(current),
                            })
                            .collect(),
                        disconnect_requested: disconnect,
                        start_frame: start.at(current),
                        ack_frame: ack.at(current),
                        bytes,
                    }),
                    BodySpec::InputAck(f) => WBody::InputAck {
                        ack_frame: f.at(current),
                    },
                    BodySpec::QualityReport(a, p) => WBody::QualityReport {
                        frame_advantage: a,
                        ping: p,
                    },
                    BodySpec::QualityReply(p) => WBody::QualityReply { pong: p },
                    BodySpec::ChecksumReport(c, f) => WBody::ChecksumReport {
                        checksum: c,
                        frame: f.at(current),
                    },
                    BodySpec::KeepAlive => WBody::KeepAlive,
                },
            },
            Hostile::Mutated { index, change } => {
                if captured.is_empty() {
                    return Vec::new();
                }
                let mut w = WMsg::from_ggrs(&captured[index % captured.len()]);
                match change {
                    Change::Magic(m) => w.magic = *m,
                    Change::Frame(f) => {
                        if let Some(x) = frame_field(&mut w.body) {
                            *x = f.at(current);
                        }
                    }
                    Change::SecondFrame(f) => {
                        if let WBody::Input(i) = &mut w.body {
                            i.ack_frame = f.at(current);
                        }
                    }
                    Change::StatusLen(n) => {
                        if let WBody::Input(i) = &mut w.body {
                            i.peer_connect_status.resize(
                                *n,
                                WConn {
                                    disconnected: false,
                                    last_frame: current,
                                },
                            );
                        }
                    }
                    Change::StatusFrame(k, f) => {
                        if let WBody::Input(i) = &mut w.body {
                            if let Some(s) = i.peer_connect_status.get_mut(*k) {
                                s.last_frame = f.at(current);
                            }
                        }
                    }
                    Change::Bytes(b) => {
                        if let WBody::Input(i) = &mut w.body {
                            i.bytes = b.clone();
                        }
                    }
                    Change::FlipByte(k, x) => {
                        if let WBody::Input(i) = &mut w.body {
                            if !i.bytes.is_empty() {
                                let n = i.bytes.len();
                                i.bytes[k % n] ^= x;
                            }
                        }
                    }
                    Change::Disconnect => {
                        if let WBody::Input(i) = &mut w.body {
                            i.disconnect_requested = true;
                        }
                    }
                }
                w
            }
        };
        vec![w.to_ggrs()]
    }
}

/// The length bitfield-rle's `decode` would allocate for `bytes` (its
/// `decode_len`, with no overflow and no allocation), or `None` when the
/// varint runs off the end.
pub fn rle_declared_len(bytes: &[u8]) -> Option<u128> {
    let (mut at, mut total) = (0usize, 0u128);
    while at < bytes.len() {
        let (mut v, mut shift) = (0u128, 0u32);
        loop {
            let b = *bytes.get(at)?;
            at += 1;
            if shift < 128 {
                v |= u128::from(b & 127) << shift;
            }
            shift += 7;
            if b & 128 == 0 {
                break;
            }
        }
        let run = if v & 1 == 1 { v >> 2 } else { v >> 1 };
        total = total.saturating_add(run);
        if v & 1 == 0 {
            at = at.saturating_add(usize::try_from(run).unwrap_or(usize::MAX));
        }
    }
    Some(total)
}

/// Whether unguarded ggrs would try to allocate more than 16 MiB for
/// this message (an abort, not a panic: the explorer must not send it).
pub fn allocates_without_bound(m: &Message) -> bool {
    match WMsg::from_ggrs(m).body {
        WBody::Input(i) => {
            (i.disconnect_requested || i.peer_connect_status.len() == 2)
                && i.start_frame >= 0
                && rle_declared_len(&i.bytes).is_some_and(|n| n > 1 << 24)
        }
        _ => false,
    }
}

/// Sessions on the in-memory network, one of which (the victim) takes
/// hostile messages posing as one of the others.
pub trait Victim {
    /// The victim's frame.
    fn victim_frame(&self) -> i32;
    /// The magic number of the session the hostile messages pose as.
    fn sender_magic(&self) -> u16;
    /// Every message captured on its way to the victim so far.
    fn captured(&self) -> Vec<Message>;
    /// Puts `msg` in the victim's inbox, as from the posed sender.
    fn inject(&self, msg: Message);
    /// Plays `frames` frames of every session.
    fn play(&mut self, frames: usize);
}

impl Victim for Pair {
    fn victim_frame(&self) -> i32 {
        self.a.frame()
    }
    fn sender_magic(&self) -> u16 {
        self.magic_of_b()
    }
    fn captured(&self) -> Vec<Message> {
        Pair::captured(self)
    }
    fn inject(&self, msg: Message) {
        Pair::inject(self, msg);
    }
    fn play(&mut self, frames: usize) {
        Pair::play(self, frames);
    }
}

/// What became of one storm.
pub struct Outcome<V> {
    /// Messages not sent because unguarded ggrs would allocate without
    /// bound on them.
    pub too_big: Vec<Message>,
    /// Where a session panicked, if one did.
    pub panic: Option<String>,
    /// The messages injected (those that decoded).
    pub injected: Vec<Message>,
    /// The sessions, after the storm.
    pub sessions: V,
}

/// Injects `storm` into the victim's inbox one hostile entry per frame
/// (frames relative to "now" are the victim's), then plays on for 10
/// frames, catching any panic.
pub fn run_storm<V: Victim>(mut sessions: V, guarded: bool, storm: &[Hostile]) -> Outcome<V> {
    let mut injected = Vec::new();
    let mut too_big = Vec::new();
    let panic = panic_site(|| {
        for h in storm {
            let captured = sessions.captured();
            for m in h.build(sessions.victim_frame(), sessions.sender_magic(), &captured) {
                if !guarded && allocates_without_bound(&m) {
                    too_big.push(m);
                    continue;
                }
                injected.push(m.clone());
                sessions.inject(m);
            }
            sessions.play(1);
        }
        sessions.play(10);
    });
    Outcome {
        too_big,
        panic,
        injected,
        sessions,
    }
}

/// Plays `warm` honest frames of A and B, then storms A as from B (see
/// [`run_storm`]).
pub fn storm(guarded: bool, warm: usize, storm: &[Hostile]) -> Outcome<Pair> {
    run_storm(Pair::running(guarded, warm), guarded, storm)
}

/// Injects `msg` into A as B, plays 10 frames more.
pub fn one_after(mut pair: Pair, msg: &WMsg) -> (Option<String>, Pair) {
    let m = msg.to_ggrs();
    let panic = panic_site(|| {
        pair.inject(m);
        pair.play(10);
    });
    (panic, pair)
}
