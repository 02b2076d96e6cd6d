//! A small complete game on the App, headless: ships dodge asteroids in a
//! wrapping arena.
//!
//! It uses the App's pieces together: states (menu, playing, game over,
//! with entities scoped to play), a fixed-step physics phase, events (hits
//! and the exit), plugins, run conditions, system sets with typed
//! ordering, chains, and the automatic sync points (asteroids spawned by
//! commands are moved in the same frame's later phases).
//!
//! ```text
//! cargo run --example arena                 # plays until the ship is lost
//! cargo run --example arena -- --frames 600 # stops after 600 frames at most
//! ```
//!
//! The run is deterministic: the same frames give the same score at any
//! thread count (`--threads N`).

use doecs::prelude::*;
use std::time::Duration;

const ARENA: f32 = 100.0;

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Screen {
    Menu,
    Playing,
    Over,
}

#[derive(Copy, Clone, Debug, PartialEq)]
struct Position(f32, f32);
#[derive(Copy, Clone, Debug, PartialEq)]
struct Velocity(f32, f32);
#[derive(Copy, Clone, Debug, PartialEq)]
struct Ship {
    shield: u32,
}
#[derive(Copy, Clone, Debug, PartialEq)]
struct Asteroid {
    radius: f32,
}

/// A ship was hit by an asteroid (sent by the fixed-step collision check).
#[derive(Copy, Clone, Debug)]
struct Hit {
    asteroid: Entity,
}

#[derive(Debug, Default)]
struct Score {
    dodged: u32,
    hits: u32,
}

/// A small deterministic random source (an LCG), so runs repeat.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> f32 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((self.0 >> 40) as f32) / ((1u64 << 24) as f32)
    }
}

#[derive(SystemSet, Clone, Debug, PartialEq, Eq, Hash)]
enum Play {
    Spawn,
    Steer,
    Resolve,
}

// --- menu ---------------------------------------------------------------

fn title() {
    println!("ARENA: dodge the asteroids");
}

/// Headless: the menu starts the game after half a second.
fn start_after_a_while(time: Res<Time>, mut next: ResMut<NextState<Screen>>) {
    if time.elapsed() >= Duration::from_millis(500) {
        next.set(Screen::Playing);
    }
}

// --- playing ------------------------------------------------------------

fn launch(mut commands: Commands) {
    commands.spawn((
        Position(ARENA / 2.0, ARENA / 2.0),
        Velocity(0.0, 0.0),
        Ship { shield: 3 },
        StateScoped(Screen::Playing),
    ));
}

fn spawn_asteroids(mut commands: Commands, mut rng: ResMut<Rng>, time: Res<Time>) {
    if time.ticks() % 3 != 0 {
        return;
    }
    let (x, y) = (rng.next() * ARENA, 0.0);
    let (vx, vy) = (rng.next() * 20.0 - 10.0, 10.0 + rng.next() * 30.0);
    commands.spawn((
        Position(x, y),
        Velocity(vx, vy),
        Asteroid {
            radius: 1.0 + rng.next() * 3.0,
        },
        StateScoped(Screen::Playing),
    ));
}

/// The ship steers away from the nearest asteroid.
fn steer(
    mut ships: Query<(&Position, &mut Velocity), With<Ship>>,
    rocks: Query<&Position, With<Asteroid>>,
) {
    let rocks: Vec<Position> = rocks.iter().copied().collect();
    ships.for_each(|(p, v)| {
        let nearest = rocks.iter().min_by(|a, b| {
            let da = (a.0 - p.0).powi(2) + (a.1 - p.1).powi(2);
            let db = (b.0 - p.0).powi(2) + (b.1 - p.1).powi(2);
            da.total_cmp(&db)
        });
        if let Some(r) = nearest {
            v.0 = (p.0 - r.0).signum() * 12.0;
            v.1 = (p.1 - r.1).signum() * 5.0;
        }
    });
}

/// Asteroids that fell off the bottom were dodged.
fn retire_fallen(
    mut commands: Commands,
    rocks: Query<(Entity, &Position), With<Asteroid>>,
    mut score: ResMut<Score>,
) {
    for (e, p) in rocks.iter() {
        if p.1 > ARENA {
            commands.despawn(e);
            score.dodged += 1;
        }
    }
}

fn take_hits(
    mut commands: Commands,
    mut hits: EventReader<Hit>,
    mut ships: Query<&mut Ship>,
    mut score: ResMut<Score>,
    mut next: ResMut<NextState<Screen>>,
) {
    for hit in hits.read() {
        commands.despawn(hit.asteroid);
        score.hits += 1;
        ships.for_each(|ship| {
            ship.shield = ship.shield.saturating_sub(1);
            if ship.shield == 0 {
                next.set(Screen::Over);
            }
        });
    }
}

// --- physics (fixed step) ----------------------------------------------

fn integrate(mut bodies: Query<(&mut Position, &Velocity)>, fixed: Res<Time<Fixed>>) {
    let dt = fixed.delta_secs();
    bodies.for_each(|(p, v)| {
        p.0 = (p.0 + v.0 * dt).rem_euclid(ARENA);
        p.1 += v.1 * dt;
    });
}

fn collide(
    ships: Query<&Position, With<Ship>>,
    rocks: Query<(Entity, &Position, &Asteroid)>,
    mut hits: EventWriter<Hit>,
) {
    let ships: Vec<Position> = ships.iter().copied().collect();
    for (e, p, a) in rocks.iter() {
        if ships
            .iter()
            .any(|s| (s.0 - p.0).powi(2) + (s.1 - p.1).powi(2) < (a.radius + 1.0).powi(2))
        {
            hits.send(Hit { asteroid: e });
        }
    }
}

// --- game over ----------------------------------------------------------

fn report_and_exit(score: Res<Score>, time: Res<Time>, mut exit: EventWriter<AppExit>) {
    println!(
        "GAME OVER after {} frames: dodged {}, hit {}",
        time.ticks(),
        score.dodged,
        score.hits
    );
    exit.send(AppExit::Success);
}

// --- plugins ------------------------------------------------------------

/// The fixed-step physics: movement, then collisions, while playing.
struct PhysicsPlugin;

impl Plugin for PhysicsPlugin {
    fn build(&self, app: &mut App) -> Result<(), AppError> {
        app.world_mut().add_event::<Hit>();
        app.add_systems(
            FixedUpdate,
            (integrate, collide)
                .chain()
                .run_if(in_state(Screen::Playing)),
        )?;
        Ok(())
    }
}

/// The game: screens, spawning, steering, scoring.
struct ArenaPlugin;

impl Plugin for ArenaPlugin {
    fn build(&self, app: &mut App) -> Result<(), AppError> {
        if !app.has_plugin::<PhysicsPlugin>() {
            app.add_plugins(PhysicsPlugin)?;
        }
        app.world_mut().insert_resource(Score::default());
        app.world_mut().insert_resource(Rng(7));
        app.insert_state(Screen::Menu)?;
        app.add_systems(OnEnter(Screen::Menu), title)?;
        app.add_systems(Update, start_after_a_while.run_if(in_state(Screen::Menu)))?;
        app.add_systems(OnEnter(Screen::Playing), launch)?;
        app.configure_set(Update, Play::Spawn.before(Play::Steer))?;
        app.configure_set(Update, Play::Steer.before(Play::Resolve))?;
        app.configure_set(Update, Play::Spawn.run_if(in_state(Screen::Playing)))?;
        app.configure_set(Update, Play::Steer.run_if(in_state(Screen::Playing)))?;
        app.configure_set(Update, Play::Resolve.run_if(in_state(Screen::Playing)))?;
        app.add_systems(Update, spawn_asteroids.in_set(Play::Spawn))?;
        app.add_systems(Update, steer.in_set(Play::Steer))?;
        app.add_systems(
            Update,
            (take_hits.run_if(on_event::<Hit>()), retire_fallen).in_set(Play::Resolve),
        )?;
        app.add_systems(OnEnter(Screen::Over), report_and_exit)?;
        Ok(())
    }
}

fn arg(name: &str) -> Option<u64> {
    let args: Vec<String> = std::env::args().collect();
    let at = args.iter().position(|a| a == name)?;
    args.get(at + 1)?.parse().ok()
}

fn main() -> Result<(), AppError> {
    let frames = arg("--frames").unwrap_or(100_000);
    let threads = arg("--threads").unwrap_or(0) as usize;
    let mut app = App::with_threads(threads);
    app.set_time_source(TimeSource::Manual(Duration::from_micros(16_667)));
    app.world_mut()
        .insert_resource(Time::<Fixed>::with_timestep(Duration::from_millis(10)));
    app.add_plugins(ArenaPlugin)?;
    app.set_runner(doecs::Runner::Frames(frames));
    let exit = app.run()?;
    let score = app
        .world()
        .resource::<Score>()
        .expect("inserted by the plugin");
    let state = app.world().resource::<State<Screen>>().expect("inserted");
    println!(
        "{:?} in state {:?}: dodged {}, hit {}, {} entities",
        exit,
        state.get(),
        score.dodged,
        score.hits,
        app.world().len()
    );
    Ok(())
}
