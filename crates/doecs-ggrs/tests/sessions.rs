//! The three session kinds on a small game: a sync test that passes, one
//! that catches a system breaking determinism (and names the component),
//! two peers plus a spectator on loopback UDP through lossy, delaying
//! sockets, whose confirmed checksums must agree, and a peer that goes
//! silent before the first frame.

use doecs::prelude::*;
use doecs_ggrs::session::{p2p_step, spectator_step, sync_test, sync_test_session, Step};
use doecs_ggrs::socket::LossySocket;
use doecs_ggrs::{GgrsPlugin, PlayerInputs, Rollback, RollbackError};
use ggrs::{
    DesyncDetection, GgrsEvent, Message, NonBlockingSocket, P2PSession, PlayerType, SessionBuilder,
    SessionState, UdpNonBlockingSocket,
};
use std::collections::VecDeque;
use std::net::SocketAddr;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

#[derive(Copy, Clone, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
struct Pos([f32; 2]);
#[derive(Copy, Clone, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
struct Vel([f32; 2]);
#[derive(Copy, Clone, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
struct Pilot(u32);

type In = u8;

fn steer(inputs: Res<PlayerInputs<In>>, mut q: Query<(&Pilot, &mut Vel)>) {
    q.for_each(|(p, v)| {
        let i = inputs.get(p.0 as usize);
        v.0[0] += f32::from(i & 3) * 0.25 - 0.25;
        v.0[1] += f32::from((i >> 2) & 3) * 0.25 - 0.25;
    });
}

fn integrate(mut q: Query<(&mut Pos, &Vel)>) {
    q.for_each(|(p, v)| {
        p.0[0] += v.0[0] / 60.0;
        p.0[1] += v.0[1] / 60.0;
    });
}

static RUNS: AtomicU32 = AtomicU32::new(0);

/// Not deterministic: every run nudges one entity differently.
fn broken(mut q: Query<&mut Vel>) {
    let n = RUNS.fetch_add(1, Ordering::Relaxed);
    if let Some(v) = q.iter_mut().nth(3) {
        v.0[1] += n as f32 * 1e-3;
    }
}

fn game(broken_too: bool) -> App {
    let mut app = App::with_threads(1);
    app.add_plugins(
        GgrsPlugin::<In>::new(Duration::from_micros(16_667))
            .rollback_component::<Pos>()
            .rollback_component::<Vel>()
            .rollback_component::<Pilot>(),
    )
    .unwrap();
    for i in 0..20u32 {
        app.world_mut()
            .spawn((Pos([i as f32, 0.0]), Vel([0.0, 1.0]), Pilot(i % 2)));
    }
    app.add_systems(Update, (steer, integrate).into_group())
        .unwrap();
    if broken_too {
        app.add_systems(PostUpdate, broken).unwrap();
    }
    app
}

fn script(frame: i32, player: usize) -> In {
    ((frame as u32 / 7 + player as u32 * 5) % 16) as u8
}

#[test]
fn a_deterministic_game_passes_the_sync_test() {
    let mut app = game(false);
    let mut rollback = Rollback::<In>::new(&app, 9).check_resaves();
    let mut session = sync_test_session::<In, SocketAddr>(2, 8).unwrap();
    sync_test(&mut app, &mut rollback, &mut session, 100, script).unwrap();
    let stats = rollback.stats();
    assert!(stats.loads >= 90, "{stats:?}");
    assert_eq!(stats.advances, 100 + 8 * stats.loads);
}

#[test]
fn a_desync_names_the_frame_and_the_component() {
    let mut app = game(true);
    let mut rollback = Rollback::<In>::new(&app, 9).check_resaves();
    let mut session = sync_test_session::<In, SocketAddr>(2, 8).unwrap();
    let err = sync_test(&mut app, &mut rollback, &mut session, 100, script).unwrap_err();
    match &err {
        RollbackError::Desync {
            frame,
            component,
            entity,
        } => {
            assert_eq!(*component, "Vel", "{err}");
            assert!(entity.is_some(), "{err}");
            assert!(*frame > 0 && *frame < 20, "{err}");
        }
        other => panic!("not a desync: {other}"),
    }
    assert!(err.to_string().starts_with("desync at frame"), "{err}");
}

type Peer = (
    App,
    Rollback<In>,
    ggrs::P2PSession<doecs_ggrs::GgrsConfig<In>>,
    Vec<(i32, u128)>,
);

/// `n` free UDP ports on loopback, found by binding port 0 (ggrs's socket
/// does not say which port the OS gave it), then released for ggrs.
fn free_ports(n: usize) -> Vec<u16> {
    let probes: Vec<_> = (0..n)
        .map(|_| std::net::UdpSocket::bind("127.0.0.1:0").unwrap())
        .collect();
    probes
        .iter()
        .map(|p| p.local_addr().unwrap().port())
        .collect()
}

fn local(port: u16) -> SocketAddr {
    SocketAddr::from(([127, 0, 0, 1], port))
}

/// Two peers on `ports[0..2]` through sockets that drop 10% of packets and
/// delay the rest by 50 ms; peer `k` uses ggrs's sparse saving mode when
/// `sparse[k]`. Peer 0 also serves a spectator at `spectator`.
fn lossy_peers(ports: &[u16], sparse: [bool; 2], spectator: Option<u16>) -> Vec<Peer> {
    let mut peers = Vec::new();
    for me in 0..2usize {
        let udp = UdpNonBlockingSocket::bind_to_port(ports[me]).unwrap();
        let lossy = LossySocket::new(udp, 0.1, Duration::from_millis(50), me as u64 + 1);
        let mut b = SessionBuilder::new()
            .with_num_players(2)
            .unwrap()
            .with_max_prediction_window(8)
            .with_sparse_saving_mode(sparse[me])
            .with_desync_detection_mode(DesyncDetection::On { interval: 10 });
        for (h, &port) in ports[..2].iter().enumerate() {
            let kind = if h == me {
                PlayerType::Local
            } else {
                PlayerType::Remote(local(port))
            };
            b = b.add_player(kind, h).unwrap();
        }
        if let (0, Some(port)) = (me, spectator) {
            b = b.add_player(PlayerType::Spectator(local(port)), 2).unwrap();
        }
        let session = b.start_p2p_session(lossy).unwrap();
        let app = game(false);
        let rollback = Rollback::<In>::new(&app, 8);
        peers.push((app, rollback, session, Vec::new()));
    }
    peers
}

/// One paced step of both peers (each stops advancing at `until`).
fn step_peers(peers: &mut [Peer], until: i32) {
    for (app, rollback, session, sums) in peers {
        if session.current_frame() < until {
            if let Err(e) = p2p_step(app, rollback, session, script, sums) {
                panic!("{e}");
            }
        } else {
            session.poll_remote_clients();
        }
    }
}

#[test]
fn a_sparse_saving_peer_agrees_with_one_saving_every_frame() {
    let ports = free_ports(2);
    let mut peers = lossy_peers(&ports, [true, false], None);
    let frames = 150;
    let start = Instant::now();
    let mut next = Instant::now();
    while !peers
        .iter()
        .all(|p| p.3.last().is_some_and(|c| c.0 >= frames))
    {
        assert!(start.elapsed() < Duration::from_secs(60), "stalled");
        step_peers(&mut peers, frames + 20);
        next += Duration::from_micros(16_667);
        std::thread::sleep(next.saturating_duration_since(Instant::now()));
    }
    let (sparse, dense) = (&peers[0].3, &peers[1].3);
    // The dense peer has every confirmed frame; each frame the sparse peer
    // saved and saw confirmed is one of them, with the same world.
    assert!(dense.windows(2).all(|w| w[1].0 == w[0].0 + 1));
    let mut compared = 0;
    for (f, sum) in sparse {
        if let Some((_, other)) = dense.iter().find(|x| x.0 == *f) {
            assert_eq!(sum, other, "frame {f}");
            compared += 1;
        }
    }
    assert!(compared >= 20, "{compared} of {} compared", sparse.len());
    let stats = peers[0].1.stats();
    assert!(stats.saves < peers[1].1.stats().saves, "{stats:?}");
}

#[test]
fn two_peers_and_a_spectator_agree_through_a_lossy_link() {
    let ports = free_ports(3);
    let addr = local;
    let mut peers = lossy_peers(&ports, [false, false], Some(ports[2]));
    let udp = UdpNonBlockingSocket::bind_to_port(ports[2]).unwrap();
    let mut spectator = SessionBuilder::new()
        .with_num_players(2)
        .unwrap()
        .start_spectator_session(addr(ports[0]), udp);
    let mut spec_app = game(false);
    let mut spec_rollback = Rollback::<In>::new(&spec_app, 8);
    let mut spec_sums = Vec::new();

    let frames = 150;
    let start = Instant::now();
    let mut next = Instant::now();
    loop {
        let done = peers
            .iter()
            .all(|p| p.3.last().is_some_and(|c: &(i32, u128)| c.0 >= frames))
            && spec_app
                .world()
                .resource::<doecs_ggrs::RollbackFrame>()
                .unwrap()
                .0
                >= frames;
        if done {
            break;
        }
        assert!(start.elapsed() < Duration::from_secs(60), "stalled");
        step_peers(&mut peers, frames + 20);
        if spectator_step(&mut spec_app, &mut spec_rollback, &mut spectator).unwrap()
            == Step::Advanced
        {
            let w = spec_app.world();
            let frame = w.resource::<doecs_ggrs::RollbackFrame>().unwrap().0;
            spec_sums.push((frame, spec_rollback.world_checksum(w)));
        }
        next += Duration::from_micros(16_667);
        std::thread::sleep(next.saturating_duration_since(Instant::now()));
    }
    let (a, b) = (&peers[0].3, &peers[1].3);
    let common: Vec<_> = a.iter().filter(|x| b.contains(x)).collect();
    assert!(
        common.len() as i32 >= frames,
        "{} common of {} and {}",
        common.len(),
        a.len(),
        b.len()
    );
    for (f, sum) in a {
        if let Some((_, other)) = b.iter().find(|x| x.0 == *f) {
            assert_eq!(sum, other, "frame {f}");
        }
    }
    // The spectator's world after frame f is the peers' saved state of frame f.
    let mut checked = 0;
    for (f, sum) in &spec_sums {
        if let Some((_, peer)) = a.iter().find(|x| x.0 == *f) {
            assert_eq!(sum, peer, "spectator, frame {f}");
            checked += 1;
        }
    }
    assert!(checked >= 100, "{checked}");
}

type Inboxes = Arc<Mutex<[VecDeque<(u8, Message)>; 2]>>;

/// A socket on an in-memory network between addresses 0 and 1.
struct Mem {
    me: u8,
    net: Inboxes,
}

impl NonBlockingSocket<u8> for Mem {
    fn send_to(&mut self, msg: &Message, addr: &u8) {
        self.net.lock().unwrap()[usize::from(*addr)].push_back((self.me, msg.clone()));
    }
    fn receive_all_messages(&mut self) -> Vec<(u8, Message)> {
        self.net.lock().unwrap()[usize::from(self.me)]
            .drain(..)
            .collect()
    }
}

type MemSession = P2PSession<doecs_ggrs::GgrsConfig<In, u8>>;

/// Two synchronized peers on an in-memory network that drop a peer silent
/// for `timeout`; A (the first) has read everything B (the second) sent,
/// and neither has advanced a frame.
fn synced_pair(timeout: Duration) -> (MemSession, MemSession) {
    let net = Inboxes::default();
    let mut peers = (0..2u8).map(|me| {
        SessionBuilder::new()
            .with_num_players(2)
            .unwrap()
            .with_disconnect_timeout(timeout)
            .add_player(PlayerType::Local, usize::from(me))
            .unwrap()
            .add_player(PlayerType::Remote(1 - me), usize::from(1 - me))
            .unwrap()
            .start_p2p_session(Mem {
                me,
                net: net.clone(),
            })
            .unwrap()
    });
    let (mut a, mut b) = (peers.next().unwrap(), peers.next().unwrap());
    for _ in 0..1000 {
        a.poll_remote_clients();
        b.poll_remote_clients();
        if a.current_state() == SessionState::Running && b.current_state() == SessionState::Running
        {
            break;
        }
    }
    assert_eq!(a.current_state(), SessionState::Running);
    assert_eq!(b.current_state(), SessionState::Running);
    a.poll_remote_clients();
    (a, b)
}

/// B synchronizes and goes silent; A's first frame comes only after ggrs's
/// disconnect timeout (a long load, say). ggrs then reports B
/// disconnected from frame 0, and `p2p_step` returns that instead of
/// advancing, still at frame 0 (where `advance_frame` would panic: see
/// `ggrs_panics_advancing_after_a_silent_peer_is_dropped`).
#[test]
fn a_peer_silent_from_frame_0_ends_p2p_step_with_disconnected() {
    let timeout = Duration::from_millis(100);
    let (mut a, _b) = synced_pair(timeout);
    let mut app = game(false);
    let mut rollback = Rollback::<In>::new(&app, 8);
    let mut sums = Vec::new();
    std::thread::sleep(timeout + Duration::from_millis(50));
    let mut result = None;
    for _ in 0..100 {
        match p2p_step(&mut app, &mut rollback, &mut a, script, &mut sums) {
            Ok(_) => std::thread::sleep(Duration::from_millis(5)),
            Err(e) => {
                result = Some(e);
                break;
            }
        }
    }
    match result {
        Some(RollbackError::Disconnected(peer)) => assert_eq!(peer, "1"),
        other => panic!("not a disconnect: {other:?}"),
    }
    assert_eq!(a.current_frame(), 0);
    assert_eq!(rollback.stats().advances, 0);
}

/// The same silent peer, but A steps from the start: it predicts as far
/// as ggrs lets it (8 frames), then waits, and the timeout ends the step
/// the same way, 8 frames past the frame ggrs would re-simulate from.
#[test]
fn a_peer_silent_from_frame_0_ends_p2p_step_after_a_stepping_peer_waits() {
    let (mut a, _b) = synced_pair(Duration::from_millis(300));
    let mut app = game(false);
    let mut rollback = Rollback::<In>::new(&app, 8);
    let mut sums = Vec::new();
    let mut steps = Vec::new();
    let err = loop {
        assert!(steps.len() < 1000, "no disconnect");
        match p2p_step(&mut app, &mut rollback, &mut a, script, &mut sums) {
            Ok(step) => steps.push(step),
            Err(e) => break e,
        }
        std::thread::sleep(Duration::from_millis(1));
    };
    assert!(matches!(err, RollbackError::Disconnected(_)), "{err}");
    assert_eq!(a.current_frame(), 8);
    assert_eq!(steps[..8], [Step::Advanced; 8]);
    assert!(steps[8..].iter().all(|s| *s == Step::Waiting), "{steps:?}");
}

/// Not a check: why `p2p_step` stops on the event. The same silent peer,
/// but the caller ignores ggrs's events and advances: ggrs asks to load
/// the frame it is on and panics, at frame 0, and also later when this
/// side stopped advancing (only polling) right after B's last input
/// (fails once ggrs fixes it; then the session docs can drop the warning).
#[test]
#[ignore]
fn ggrs_panics_advancing_after_a_silent_peer_is_dropped() {
    for frames in [0, 5] {
        let timeout = Duration::from_millis(100);
        let (mut a, mut b) = synced_pair(timeout);
        for _ in 0..frames {
            for (s, handle) in [(&mut a, 0), (&mut b, 1)] {
                s.add_local_input(handle, 1).unwrap();
                for r in s.advance_frame().unwrap() {
                    if let ggrs::GgrsRequest::SaveGameState { cell, frame } = r {
                        cell.save(frame, Some(doecs_ggrs::Slot(0)), None);
                    }
                }
            }
        }
        a.poll_remote_clients();
        assert_eq!(a.confirmed_frame(), frames - 1);
        std::thread::sleep(timeout + Duration::from_millis(50));
        a.poll_remote_clients();
        let disconnected = a
            .events()
            .any(|e| matches!(e, GgrsEvent::Disconnected { addr: 1 }));
        assert!(disconnected);
        a.add_local_input(0, 0).unwrap();
        let panic = catch_unwind(AssertUnwindSafe(|| a.advance_frame().map(|r| r.len())));
        let msg = panic.expect_err("advance_frame returned");
        let msg = msg.downcast_ref::<String>().cloned().unwrap_or_default();
        assert!(
            msg.contains("must load frame in the past"),
            "{frames}: {msg}"
        );
    }
}
