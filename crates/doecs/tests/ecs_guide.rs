//! bevy's ECS guide program ("ecs_guide.rs" of the bevy repository),
//! written on doecs as a bevy user would: an `App`, startup and update
//! systems, an exclusive system, system sets ordered by type, a chain,
//! a run condition and the exit event. No hand-made loop, no string label,
//! no manual sync point. (The guide draws scores with `rand`; here a small
//! deterministic generator stands in, so the game's course is checked.)

use doecs::prelude::*;

// Components.
#[derive(Debug)]
struct Player {
    name: String,
}

#[derive(Debug)]
struct Score {
    value: usize,
}

// Resources.
#[derive(Default, Debug)]
struct GameState {
    current_round: usize,
    total_players: usize,
    winning_player: Option<String>,
}

struct GameRules {
    winning_score: usize,
    max_rounds: usize,
    max_players: usize,
}

/// Stands in for `rand`: a linear congruential generator.
struct Dice(u64);

impl Dice {
    fn roll(&mut self) -> bool {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1);
        (self.0 >> 33).is_multiple_of(2)
    }
}

/// What the game printed, kept to check its course.
#[derive(Default)]
struct Transcript(Vec<String>);

fn say(transcript: &mut Transcript, line: String) {
    transcript.0.push(line);
}

fn print_message_system(mut out: ResMut<Transcript>) {
    say(&mut out, "This game is fun!".into());
}

fn new_round_system(
    game_rules: Res<GameRules>,
    mut game_state: ResMut<GameState>,
    mut out: ResMut<Transcript>,
) {
    game_state.current_round += 1;
    let line = format!(
        "Begin round {} of {}",
        game_state.current_round, game_rules.max_rounds
    );
    say(&mut out, line);
}

fn score_system(mut query: Query<(&Player, &mut Score)>, mut dice: ResMut<Dice>) {
    let mut players: Vec<(&Player, &mut Score)> = query.iter_mut().collect();
    players.sort_by(|a, b| a.0.name.cmp(&b.0.name));
    for (_player, score) in players {
        if dice.roll() {
            score.value += 1;
        }
    }
}

fn score_check_system(
    game_rules: Res<GameRules>,
    mut game_state: ResMut<GameState>,
    query: Query<(&Player, &Score)>,
) {
    let mut players: Vec<(&Player, &Score)> = query.iter().collect();
    players.sort_by(|a, b| a.0.name.cmp(&b.0.name));
    for (player, score) in players {
        if score.value == game_rules.winning_score && game_state.winning_player.is_none() {
            game_state.winning_player = Some(player.name.clone());
        }
    }
}

fn game_over_system(
    game_rules: Res<GameRules>,
    game_state: Res<GameState>,
    mut app_exit: EventWriter<AppExit>,
    mut out: ResMut<Transcript>,
) {
    if let Some(ref player) = game_state.winning_player {
        say(&mut out, format!("{player} won the game!"));
        app_exit.send(AppExit::Success);
    } else if game_state.current_round == game_rules.max_rounds {
        say(&mut out, "Ran out of rounds. Nobody wins!".into());
        app_exit.send(AppExit::Success);
    }
}

fn startup_system(mut commands: Commands, mut game_state: ResMut<GameState>) {
    // (bevy inserts `GameRules` here with `commands.insert_resource`, which
    // doecs's `Commands` lacks; the app inserts it before the first update.)
    commands.spawn((
        Player {
            name: "Alice".to_string(),
        },
        Score { value: 0 },
    ));
    commands.spawn((
        Player {
            name: "Bob".to_string(),
        },
        Score { value: 0 },
    ));
    game_state.total_players = 2;
}

/// An exclusive system, as in the guide: it adds a player each round
/// until the maximum.
fn exclusive_player_system(world: &mut World) {
    let total_players = world.resource::<GameState>().unwrap().total_players;
    let max_players = world.resource::<GameRules>().unwrap().max_players;
    if total_players < max_players {
        let name = format!("Player {}", total_players + 1);
        world.spawn((Player { name: name.clone() }, Score { value: 0 }));
        world
            .resource_mut::<Transcript>()
            .unwrap()
            .0
            .push(format!("{name} joined the game!"));
        world.resource_mut::<GameState>().unwrap().total_players += 1;
    }
}

fn print_at_end_round(mut counter: Local<u32>, mut out: ResMut<Transcript>) {
    *counter += 1;
    say(
        &mut out,
        format!("In set 'Last' for the {}th time", *counter),
    );
}

/// The guide's sets: before and after the round.
#[derive(SystemSet, Debug, Hash, PartialEq, Eq, Clone)]
enum MySet {
    BeforeRound,
    Round,
    AfterRound,
}

fn guide_app(threads: usize) -> App {
    let mut app = App::with_threads(threads);
    app.world_mut().insert_resource(GameState::default());
    app.world_mut().insert_resource(Transcript::default());
    app.world_mut().insert_resource(Dice(1));
    app.world_mut().insert_resource(GameRules {
        max_rounds: 10,
        winning_score: 4,
        max_players: 4,
    });
    app.add_systems(Startup, startup_system).unwrap();
    app.add_systems(Update, print_message_system).unwrap();
    app.add_systems(Last, print_at_end_round).unwrap();
    app.configure_set(Update, MySet::BeforeRound.before(MySet::Round))
        .unwrap();
    app.configure_set(Update, MySet::Round.before(MySet::AfterRound))
        .unwrap();
    app.add_systems(
        Update,
        (
            // The new round and the new player run in the BeforeRound set,
            // new_player (exclusive) after new_round.
            (new_round_system, exclusive_player_system)
                .chain()
                .in_set(MySet::BeforeRound),
            score_system.in_set(MySet::Round),
            (
                score_check_system,
                // Only when someone has a winner or the rounds ran out does
                // the game-over system have anything to say.
                game_over_system.run_if(|s: Res<GameState>, r: Res<GameRules>| {
                    s.winning_player.is_some() || s.current_round == r.max_rounds
                }),
            )
                .chain()
                .in_set(MySet::AfterRound),
        ),
    )
    .unwrap();
    app
}

fn play(threads: usize) -> Vec<String> {
    let mut app = guide_app(threads);
    app.set_runner(doecs::Runner::Frames(100));
    assert_eq!(app.run().unwrap(), AppExit::Success);
    std::mem::take(&mut app.world_mut().resource_mut::<Transcript>().unwrap().0)
}

#[test]
#[cfg_attr(miri, ignore)] // many updates on thread pools
fn the_ecs_guide_plays_to_the_end_the_same_at_any_thread_count() {
    let transcript = play(1);
    // The first round: the message, the round, a new player, the end of round.
    assert_eq!(
        transcript[..4],
        [
            "This game is fun!",
            "Begin round 1 of 10",
            "Player 3 joined the game!",
            "In set 'Last' for the 1th time"
        ]
    );
    assert!(transcript.iter().any(|l| l == "Player 4 joined the game!"));
    assert!(!transcript.iter().any(|l| l == "Player 5 joined the game!"));
    let last_round = transcript
        .iter()
        .filter(|l| l.starts_with("Begin round"))
        .count();
    let ending = &transcript[transcript.len() - 2];
    assert!(
        ending.ends_with("won the game!") || ending == "Ran out of rounds. Nobody wins!",
        "{transcript:#?}"
    );
    assert!(last_round <= 10);
    for threads in [2, 4, 8] {
        assert_eq!(play(threads), transcript, "{threads} threads");
    }
}
