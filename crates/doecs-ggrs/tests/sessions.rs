//! The three session kinds on a small game: a sync test that passes, one
//! that catches a system breaking determinism (and names the component),
//! and two peers plus a spectator on loopback UDP through lossy, delaying
//! sockets, whose confirmed checksums must agree.

use doecs::prelude::*;
use doecs_ggrs::session::{p2p_step, spectator_step, sync_test, sync_test_session, Step};
use doecs_ggrs::socket::LossySocket;
use doecs_ggrs::{GgrsPlugin, PlayerInputs, Rollback, RollbackError};
use ggrs::{DesyncDetection, PlayerType, SessionBuilder, UdpNonBlockingSocket};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU32, Ordering};
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
