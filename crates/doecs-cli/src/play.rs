//! `doecs play`: the demo fleet under rollback netcode (ggrs, through the
//! `doecs-ggrs` crate), between two processes or as a local sync test.
//!
//! The game is `doecs run`'s: the demo level's ships, parts and sub-parts,
//! its physics and transform systems ([`SimulationPlugin`]). On top, each
//! ship gets a [`Pilot`], the player who steers it (ships alternate between
//! the two players), and a `steer` system in `PreUpdate` applies each
//! player's [`ShipInput`] (thrust along x, turn about y) to their ships'
//! velocities before the physics runs. Inputs come from a script: a pure
//! function of the player, the frame and `--script`, changing every few
//! frames so that remote inputs are mispredicted and rollbacks happen.
//!
//! Everything the systems read is rolled back: the demo's four components
//! and [`Pilot`] as bytes, the transform manager and the DataComponent
//! store through their snapshot hooks, the frame step, the clocks and the
//! inputs as resources. The checksum covers the five components, the
//! entity count and every transform (local and world).
//!
//! - `--sync-test N`: ggrs's `SyncTestSession`, rolling back N frames every
//!   frame; a frame that re-simulates differently is an error naming the
//!   frame, the component and the entity.
//! - `--local-port P --remote ADDR --player H`: a two-player `P2PSession`
//!   over UDP, optionally through a socket that drops `--loss` of the
//!   packets and delays the rest by `--delay-ms`. It plays until `--frames`
//!   frames are confirmed (both players' inputs arrived), keeps answering
//!   its peer a little longer so the peer can finish too, and writes every
//!   confirmed frame's checksum to `--checksums` (one `frame checksum` line
//!   each), for comparing the two processes. With `--spectator ADDR` the
//!   player also serves a spectator there (ggrs sends it every confirmed
//!   input).
//! - `--local-port P --spectate HOST`: a spectator (`SpectatorSession`)
//!   following the player at HOST that serves it: it simulates every frame
//!   from the confirmed inputs alone, never rolls back, and writes the
//!   checksum of its world after each frame to `--checksums`, so a peer's
//!   confirmed checksums can be compared with it frame by frame.

use crate::components::{Mass, Position, Spin, Velocity};
use crate::run::{FrameDt, SimulationPlugin, DT};
use doecs::prelude::*;
use doecs_ggrs::guard::GuardedSocket;
use doecs_ggrs::session::{p2p_step, spectator_step, sync_test, sync_test_session, Step};
use doecs_ggrs::socket::LossySocket;
use doecs_ggrs::{GgrsPlugin, PlayerInputs, Rollback, RollbackFrame, RollbackStats, StateHasher};
use doecs_resource::{AlignedBytes, SpawnOptions};
use doecs_transform::TransformManager;
use ggrs::{DesyncDetection, Frame, PlayerType, SessionBuilder, UdpNonBlockingSocket};
use serde::{Deserialize, Serialize};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// `doecs play` options.
#[derive(clap::Args, Debug, Clone)]
pub struct PlayArgs {
    /// UDP port to play on (two-player mode)
    #[arg(long, value_name = "PORT")]
    pub local_port: Option<u16>,
    /// The other player's address, e.g. 127.0.0.1:7001 (two-player mode)
    #[arg(long, value_name = "ADDR")]
    pub remote: Option<SocketAddr>,
    /// Also serve a spectator at this address (two-player mode)
    #[arg(long, value_name = "ADDR", conflicts_with_all = ["spectate", "sync_test"])]
    pub spectator: Option<SocketAddr>,
    /// Instead of playing, follow the player at this address as a spectator
    /// (needs --local-port; --frames is how many frames to follow)
    #[arg(long, value_name = "HOST", conflicts_with_all = ["remote", "sync_test"])]
    pub spectate: Option<SocketAddr>,
    /// Which player this process is: 0 or 1
    #[arg(long, default_value_t = 0)]
    pub player: usize,
    /// Frames to play (two-player mode: until this many are confirmed)
    #[arg(long, default_value_t = 600)]
    pub frames: usize,
    /// Instead of playing, a local sync test rolling back N frames every frame (1 to 15)
    #[arg(long, value_name = "N")]
    pub sync_test: Option<usize>,
    /// Ships in the demo level (13 entities each)
    #[arg(long, default_value_t = crate::demo_level::DEFAULT_SHIPS)]
    pub ships: usize,
    /// Which input script the players follow
    #[arg(long, default_value_t = 1)]
    pub script: u64,
    /// Share of outgoing packets to drop, 0 to 1 (testing)
    #[arg(long, default_value_t = 0.0)]
    pub loss: f64,
    /// Delay added to every outgoing packet, in milliseconds (testing)
    #[arg(long, default_value_t = 0)]
    pub delay_ms: u64,
    /// Write every confirmed frame's checksum here (`frame checksum` lines)
    #[arg(long, value_name = "PATH")]
    pub checksums: Option<PathBuf>,
    /// Frames per second to pace the two-player loop to
    #[arg(long, default_value_t = 60)]
    pub fps: u32,
    /// Give up when the session makes no progress for this many seconds
    #[arg(long, default_value_t = 30)]
    pub timeout_secs: u64,
    /// Worker threads
    #[arg(long, default_value_t = 1)]
    pub threads: usize,
    /// Use ggrs's sparse saving mode: save only confirmed frames, at most
    /// once per frame, instead of every frame (the checksums written are
    /// then those of the saved frames only)
    #[arg(long)]
    pub sparse_saving: bool,
}

/// One player's input for a frame: thrust along x and turn about y, each
/// −1, 0 or 1.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShipInput {
    /// Thrust along x.
    pub thrust: i8,
    /// Turn about the y axis.
    pub turn: i8,
}

/// The player who steers a ship.
#[derive(Copy, Clone, Debug, PartialEq, Eq, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(transparent)]
pub struct Pilot(pub u32);

/// Players in a game.
pub const PLAYERS: usize = 2;

/// Player `player`'s scripted input for `frame`: a hash of the three,
/// held for eight frames at a time.
pub fn scripted_input(script: u64, frame: Frame, player: usize) -> ShipInput {
    let mut h = StateHasher::new();
    h.word(script);
    h.word(player as u64);
    h.word((frame.max(0) / 8) as u64);
    let x = h.finish();
    ShipInput {
        thrust: (x % 3) as i8 - 1,
        turn: ((x >> 8) % 3) as i8 - 1,
    }
}

/// Each player's input on their ships' velocities: thrust along x, and a
/// small turn of the velocity about y (a fixed rotation, basic f32 ops in
/// a fixed order).
fn steer(
    inputs: Res<PlayerInputs<ShipInput>>,
    mut ships: Query<(&Pilot, &mut Velocity)>,
    dt: Res<FrameDt>,
) {
    const COS: f32 = 0.999_95;
    const SIN: f32 = 0.01;
    let dt = dt.0;
    ships.for_each(|(pilot, v)| {
        let input = inputs.get(pilot.0 as usize);
        v.0[0] += f32::from(input.thrust) * 4.0 * dt;
        let s = SIN * f32::from(input.turn);
        let (x, z) = (v.0[0], v.0[2]);
        v.0[0] = x * COS - z * s;
        v.0[2] = x * s + z * COS;
    });
}

/// The transforms into the checksum, in the manager's order: the count,
/// the ids, then the local and world matrices, read straight from the
/// manager's arrays. A matrix is four `Vec3A`s; its twelve floats (not
/// the SIMD padding lanes, which are not state) make six 64-bit words: the
/// x and y of each vector, and the z's two by two. The six words of each
/// matrix pair up, and pair `j` of the instance's two matrices goes to
/// lane `j` of six independent chains, each step absorbing two words with
/// one multiply: `lane = (rotl(lane ^ a, 23) + b) * K`, a bijection of
/// the lane for either word when the other is fixed. The lanes are folded
/// in at the end, so one changed float changes one word of one lane and
/// always changes the hash.
fn hash_transforms(world: &World, h: &mut StateHasher) {
    const BATCH: usize = 64;
    const K: u64 = 0x517c_c1b7_2722_0a95;
    /// The z of a (z, padding) word.
    #[inline]
    fn z(w: u64) -> u64 {
        if cfg!(target_endian = "little") {
            w & 0xffff_ffff
        } else {
            w >> 32
        }
    }
    /// A matrix's twelve floats as six words.
    #[inline]
    fn words(m: &glam::Affine3A) -> [u64; 6] {
        let w: [u64; 8] = bytemuck::cast([
            m.matrix3.x_axis,
            m.matrix3.y_axis,
            m.matrix3.z_axis,
            m.translation,
        ]);
        [
            w[0],
            w[2],
            w[4],
            w[6],
            z(w[1]) | z(w[3]) << 32,
            z(w[5]) | z(w[7]) << 32,
        ]
    }
    let Some(tm) = world.manager::<TransformManager>() else {
        return;
    };
    h.word(tm.len() as u64);
    h.word(tm.dirty_len() as u64);
    let mut ids = [Entity::from_bits(0); BATCH];
    let mut entities = tm.entities().peekable();
    while entities.peek().is_some() {
        let n = ids
            .iter_mut()
            .zip(&mut entities)
            .map(|(id, e)| *id = e)
            .count();
        h.entities(&ids[..n]);
    }
    let mut lanes: [u64; 6] = std::array::from_fn(|k| K.rotate_left(8 * k as u32));
    for (local, world) in tm.locals().iter().zip(tm.worlds()) {
        let (l, w) = (words(local), words(world));
        let pairs = [
            (l[0], l[1]),
            (l[2], l[3]),
            (l[4], l[5]),
            (w[0], w[1]),
            (w[2], w[3]),
            (w[4], w[5]),
        ];
        for (lane, (a, b)) in lanes.iter_mut().zip(pairs) {
            *lane = (*lane ^ a).rotate_left(23).wrapping_add(b).wrapping_mul(K);
        }
    }
    for lane in lanes {
        h.word(lane);
    }
}

/// Each transform's hash, for desync reports.
fn transform_hashes(world: &World, out: &mut Vec<(Entity, u64)>) {
    out.clear();
    if let Some(tm) = world.manager::<TransformManager>() {
        for inst in tm.iter() {
            let mut h = StateHasher::new();
            if let (Some(local), Some(world)) = (tm.local(inst), tm.world(inst)) {
                h.floats(&local.to_cols_array());
                h.floats(&world.to_cols_array());
            }
            out.push((inst.entity(), h.finish()));
        }
    }
}

/// The demo level of `ships` ships in a fresh world, as `doecs run`
/// spawns it, each ship given its pilot.
pub fn fleet_world(ships: usize) -> Result<World, String> {
    crate::demo_level::check_ships(ships)?;
    let json = crate::demo_level::demo_level_json(ships, |_| {});
    let (compiler, spawner) = crate::registry::compiler_and_spawner();
    let text = std::str::from_utf8(&json).map_err(|e| e.to_string())?;
    let blob = compiler.compile_str(text).map_err(|e| e.to_string())?;
    let blob = AlignedBytes::from_slice(&blob);
    let mut world = World::new();
    world.add_manager(TransformManager::deferred(), doecs::DestroyNotice::Callback);
    let (view, skipped) = spawner
        .load(&blob, SpawnOptions::default())
        .map_err(|e| e.to_string())?;
    spawner
        .spawn_loaded(&mut world, &view, skipped)
        .map_err(|e| e.to_string())?;
    let ships: Vec<Entity> = world
        .query::<(Entity, &Velocity)>()
        .iter()
        .map(|(e, _)| e)
        .collect();
    for (i, e) in ships.into_iter().enumerate() {
        world
            .insert(e, (Pilot((i % PLAYERS) as u32),))
            .map_err(|e| e.to_string())?;
    }
    Ok(world)
}

/// The fleet game on an app, set up for rollback.
pub fn fleet_app(ships: usize, threads: usize) -> Result<App, String> {
    let mut world = fleet_world(ships)?;
    crate::rollback::make_snapshotable(&mut world);
    let mut app = App::with_world(world, threads.max(1));
    let plugin = GgrsPlugin::<ShipInput>::new(Duration::from_secs_f32(DT))
        .rollback_component::<Position>()
        .rollback_component::<Velocity>()
        .rollback_component::<Mass>()
        .rollback_component::<Spin>()
        .rollback_component::<Pilot>()
        .rollback_resource::<FrameDt>()
        .checksum_state("transform", hash_transforms, transform_hashes);
    let setup = |app: &mut App| -> Result<(), AppError> {
        app.add_plugins(SimulationPlugin)?;
        app.add_plugins(plugin)?;
        app.add_systems(PreUpdate, steer)?;
        Ok(())
    };
    setup(&mut app).map_err(|e| e.to_string())?;
    Ok(app)
}

/// Runs `doecs play`.
pub fn play(args: PlayArgs) -> Result<(), String> {
    if let Some(depth) = args.sync_test {
        if !(1..=15).contains(&depth) {
            return Err(format!("--sync-test must be 1 to 15, got {depth}"));
        }
        return play_sync_test(&args, depth);
    }
    if !(0.0..=1.0).contains(&args.loss) {
        return Err(format!("--loss must be 0 to 1, got {}", args.loss));
    }
    if !(1..=1000).contains(&args.fps) {
        return Err(format!("--fps must be 1 to 1000, got {}", args.fps));
    }
    if let Some(host) = args.spectate {
        let Some(port) = args.local_port else {
            return Err("--spectate needs --local-port".into());
        };
        return spectate(&args, port, host);
    }
    let (Some(port), Some(remote)) = (args.local_port, args.remote) else {
        return Err(
            "play needs --local-port and --remote (or --sync-test N, or --spectate HOST)".into(),
        );
    };
    if args.player >= PLAYERS {
        return Err(format!("--player must be 0 or 1, got {}", args.player));
    }
    play_p2p(&args, port, remote)
}

/// The UDP socket of `--local-port`, dropping and delaying as asked.
/// Callers put the guard around it, so every received message is checked
/// before ggrs sees it: a player's checks, or a spectator's.
fn lossy_socket(
    args: &PlayArgs,
    port: u16,
    seed: u64,
) -> Result<LossySocket<UdpNonBlockingSocket, SocketAddr>, String> {
    let udp = UdpNonBlockingSocket::bind_to_port(port)
        .map_err(|e| format!("cannot bind UDP port {port}: {e}"))?;
    Ok(LossySocket::new(
        udp,
        args.loss,
        Duration::from_millis(args.delay_ms),
        seed,
    ))
}

/// Writes `frame checksum` lines to `--checksums`, if given.
fn write_checksums(args: &PlayArgs, sums: &[(Frame, u128)]) -> Result<(), String> {
    let Some(path) = &args.checksums else {
        return Ok(());
    };
    let mut out = String::with_capacity(sums.len() * 40);
    for (frame, sum) in sums {
        out.push_str(&format!("{frame} {sum:#034x}\n"));
    }
    std::fs::write(path, out).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

fn per_frame(stats: &RollbackStats, frames: usize) -> String {
    let us = |d: Duration, n: u64| d.as_secs_f64() * 1e6 / n.max(1) as f64;
    format!(
        "{} saves ({:.1} µs each), {} loads ({:.1} µs each), {} advances ({:.3} ms each), \
         {:.3} ms per frame in all",
        stats.saves,
        us(stats.save_time, stats.saves),
        stats.loads,
        us(stats.load_time, stats.loads),
        stats.advances,
        us(stats.advance_time, stats.advances) / 1e3,
        (stats.save_time + stats.load_time + stats.advance_time).as_secs_f64() * 1e3
            / frames.max(1) as f64,
    )
}

fn play_sync_test(args: &PlayArgs, depth: usize) -> Result<(), String> {
    let mut app = fleet_app(args.ships, args.threads)?;
    let mut rollback = Rollback::<ShipInput>::new(&app, depth + 1).check_resaves();
    let mut session =
        sync_test_session::<ShipInput, SocketAddr>(PLAYERS, depth).map_err(|e| e.to_string())?;
    let script = args.script;
    sync_test(
        &mut app,
        &mut rollback,
        &mut session,
        args.frames,
        |f, p| scripted_input(script, f, p),
    )
    .map_err(|e| e.to_string())?;
    let sum = rollback.world_checksum(app.world());
    crate::outln!(
        "sync test {depth}: {} frames, checksums equal; final checksum {sum:#034x}",
        args.frames
    );
    crate::outln!("  {}", per_frame(&rollback.stats(), args.frames));
    Ok(())
}

fn play_p2p(args: &PlayArgs, port: u16, remote: SocketAddr) -> Result<(), String> {
    let mut app = fleet_app(args.ships, args.threads)?;
    let seed = args.script.wrapping_mul(31) + args.player as u64 + 1;
    let socket = GuardedSocket::new(lossy_socket(args, port, seed)?, PLAYERS);
    let max_prediction = 8;
    let other = 1 - args.player;
    let session = SessionBuilder::new()
        .with_num_players(PLAYERS)
        .and_then(|b| b.with_fps(args.fps as usize))
        .and_then(|b| {
            b.with_max_prediction_window(max_prediction)
                .with_sparse_saving_mode(args.sparse_saving)
                .with_desync_detection_mode(DesyncDetection::On { interval: 10 })
                .add_player(PlayerType::Local, args.player)
        })
        .and_then(|b| b.add_player(PlayerType::Remote(remote), other))
        .and_then(|b| match args.spectator {
            // Spectators take the handles after the players'.
            Some(addr) => b.add_player(PlayerType::Spectator(addr), PLAYERS),
            None => Ok(b),
        })
        .and_then(|b| b.start_p2p_session(socket));
    let mut session = session.map_err(|e| e.to_string())?;
    let mut rollback = Rollback::<ShipInput>::new(&app, max_prediction);
    let mut confirmed: Vec<(Frame, u128)> = Vec::with_capacity(args.frames + 16);
    let target = args.frames as Frame;
    let pace = Duration::from_secs_f64(1.0 / f64::from(args.fps));
    let timeout = Duration::from_secs(args.timeout_secs);
    let script = args.script;
    let start = Instant::now();
    let mut progress = Instant::now();
    let mut next = Instant::now();
    let mut last_confirmed = -1;
    while confirmed.last().map_or(-1, |c| c.0) < target {
        let step = p2p_step(
            &mut app,
            &mut rollback,
            &mut session,
            |f, p| scripted_input(script, f, p),
            &mut confirmed,
        )
        .map_err(|e| e.to_string())?;
        let now_confirmed = confirmed.last().map_or(-1, |c| c.0);
        if step == Step::Advanced && now_confirmed > last_confirmed {
            progress = Instant::now();
            last_confirmed = now_confirmed;
        } else if progress.elapsed() > timeout {
            return Err(
                doecs_ggrs::RollbackError::Stalled(timeout, session.current_frame()).to_string(),
            );
        }
        next = (next + pace).max(Instant::now());
        std::thread::sleep(next.saturating_duration_since(Instant::now()));
    }
    let played = start.elapsed();
    // Keep answering (ggrs resends unacknowledged inputs on every poll)
    // so the peer can confirm its last frames too.
    let linger = Instant::now();
    while linger.elapsed() < Duration::from_millis(1500) {
        session.poll_remote_clients();
        std::thread::sleep(Duration::from_millis(5));
    }
    confirmed.retain(|c| c.0 <= target);
    write_checksums(args, &confirmed)?;
    let stats = rollback.stats();
    // Frames 0..=target are confirmed; with sparse saving only the saved
    // ones have a checksum.
    let frames = confirmed.last().map_or(0, |c| c.0 + 1) as usize;
    crate::outln!(
        "play: player {}, {} frames confirmed ({} with a checksum) in {:.1} s, {} rollbacks, \
         last checksum {:#034x}",
        args.player,
        frames,
        confirmed.len(),
        played.as_secs_f64(),
        stats.loads,
        confirmed.last().map_or(0, |c| c.1)
    );
    crate::outln!("  {}", per_frame(&stats, frames));
    crate::out::flush();
    Ok(())
}

/// Follows the player at `host` as a spectator until `--frames` frames are
/// simulated; the world's checksum after each goes to `--checksums`.
fn spectate(args: &PlayArgs, port: u16, host: SocketAddr) -> Result<(), String> {
    let mut app = fleet_app(args.ships, args.threads)?;
    let lossy = lossy_socket(args, port, args.script.wrapping_mul(31) + 7)?;
    let socket = GuardedSocket::for_spectator(lossy, PLAYERS);
    let mut session = SessionBuilder::<doecs_ggrs::GgrsConfig<ShipInput>>::new()
        .with_num_players(PLAYERS)
        .and_then(|b| b.with_fps(args.fps as usize))
        .map_err(|e| e.to_string())?
        .start_spectator_session(host, socket);
    let mut rollback = Rollback::<ShipInput>::new(&app, 8);
    let mut sums: Vec<(Frame, u128)> = Vec::with_capacity(args.frames + 1);
    let target = args.frames as Frame;
    let timeout = Duration::from_secs(args.timeout_secs);
    let start = Instant::now();
    let mut progress = Instant::now();
    while sums.last().map_or(0, |c| c.0) < target {
        let step =
            spectator_step(&mut app, &mut rollback, &mut session).map_err(|e| e.to_string())?;
        if step == Step::Advanced {
            progress = Instant::now();
            let world = app.world();
            let frame = world.resource::<RollbackFrame>().map_or(0, |f| f.0);
            sums.push((frame, rollback.world_checksum(world)));
        } else if progress.elapsed() > timeout {
            let frame = sums.last().map_or(0, |c| c.0);
            return Err(doecs_ggrs::RollbackError::Stalled(timeout, frame).to_string());
        } else {
            // Waiting for the host's inputs: poll again soon.
            std::thread::sleep(Duration::from_millis(2));
        }
    }
    sums.retain(|c| c.0 <= target);
    write_checksums(args, &sums)?;
    let stats = rollback.stats();
    crate::outln!(
        "spectate: {} frames followed in {:.1} s, last checksum {:#034x}",
        sums.len(),
        start.elapsed().as_secs_f64(),
        sums.last().map_or(0, |c| c.1)
    );
    crate::outln!("  {}", per_frame(&stats, sums.len()));
    crate::out::flush();
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scripts_change_every_eight_frames_and_differ_per_player() {
        assert_eq!(scripted_input(1, 0, 0), scripted_input(1, 7, 0));
        let inputs: Vec<_> = (0..40).map(|k| scripted_input(1, k * 8, 0)).collect();
        assert!(inputs.windows(2).any(|w| w[0] != w[1]));
        let other: Vec<_> = (0..40).map(|k| scripted_input(1, k * 8, 1)).collect();
        assert_ne!(inputs, other);
    }

    /// The transform item's hash of a world with three transforms, the
    /// first made from `cols` (four `[x, y, z, padding]` vectors).
    fn transforms_hash(cols: [[f32; 4]; 4]) -> u64 {
        use doecs_transform::WorldTransforms;
        let mut world = World::new();
        let es: Vec<Entity> = (0..3).map(|_| world.spawn(())).collect();
        world.set_parent(es[1], es[0]).unwrap();
        let [x, y, z, t] = cols.map(bytemuck::cast::<[f32; 4], glam::Vec3A>);
        let first = glam::Affine3A::from_cols(x, y, z, t);
        world.add_transform(es[0], first).unwrap();
        let scale = glam::Affine3A::from_scale(glam::Vec3::splat(2.0));
        world.add_transform(es[1], scale).unwrap();
        world
            .add_transform(es[2], glam::Affine3A::IDENTITY)
            .unwrap();
        let mut h = StateHasher::new();
        hash_transforms(&world, &mut h);
        h.finish()
    }

    #[test]
    fn the_transform_hash_sees_every_float_and_not_the_padding() {
        let cols = [
            [1.0, 0.0, 0.0, 0.0],
            [0.0, 1.0, 0.0, 0.0],
            [0.0, 0.0, 1.0, 0.0],
            [3.0, 4.0, 5.0, 0.0],
        ];
        let base = transforms_hash(cols);
        assert_eq!(base, transforms_hash(cols), "deterministic");
        for v in 0..4 {
            let mut padded = cols;
            padded[v][3] = 7.5;
            assert_eq!(transforms_hash(padded), base, "padding of vector {v}");
            for c in 0..3 {
                let mut moved = cols;
                moved[v][c] = f32::from_bits(moved[v][c].to_bits() + 1);
                assert_ne!(transforms_hash(moved), base, "float {c} of vector {v}");
            }
        }
    }

    #[test]
    fn the_fleet_passes_a_sync_test_at_two_threads() {
        let mut app = fleet_app(4, 2).unwrap();
        let mut rollback = Rollback::<ShipInput>::new(&app, 9).check_resaves();
        let mut session = sync_test_session::<ShipInput, SocketAddr>(PLAYERS, 8).unwrap();
        sync_test(&mut app, &mut rollback, &mut session, 40, |f, p| {
            scripted_input(3, f, p)
        })
        .unwrap();
        assert!(rollback.stats().loads > 25);
    }

    #[test]
    fn a_broken_fleet_desync_names_frame_and_component() {
        let mut app = fleet_app(4, 1).unwrap();
        // Not deterministic: each run pushes one ship a little further.
        let mut runs = 0u32;
        app.add_systems(PostUpdate, move |mut q: Query<&mut Position>| {
            runs += 1;
            if let Some(p) = q.iter_mut().next() {
                p.0[0] += runs as f32 * 1e-3;
            }
        })
        .unwrap();
        let mut rollback = Rollback::<ShipInput>::new(&app, 9).check_resaves();
        let mut session = sync_test_session::<ShipInput, SocketAddr>(PLAYERS, 8).unwrap();
        let err = sync_test(&mut app, &mut rollback, &mut session, 40, |f, p| {
            scripted_input(3, f, p)
        })
        .unwrap_err()
        .to_string();
        assert!(err.starts_with("desync at frame"), "{err}");
        assert!(err.contains("Position on entity"), "{err}");
    }
}
