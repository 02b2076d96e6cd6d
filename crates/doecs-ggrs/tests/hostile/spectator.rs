//! A spectator S of A's game with B, on the same in-memory network, and
//! storms of messages that look like they come from A (S's host) but are
//! built to break S. S runs a doecs app through `spectator_step`.

use super::{
    builder, panic_site, played, run_storm, Dyn, Hostile, MemSocket, Net, Outcome, Peer, Victim,
    WMsg, A, B, S,
};
use doecs::prelude::*;
use doecs_ggrs::guard::{GuardStats, GuardedSocket};
use doecs_ggrs::session::spectator_step;
use doecs_ggrs::{GgrsConfig, GgrsPlugin, PlayerInputs, Rollback, RollbackFrame};
use ggrs::{
    InputStatus, Message, NonBlockingSocket, SessionBuilder, SessionState, SpectatorSession,
};
use std::time::Duration;

/// What S's game saw: frames simulated, how many confirmed inputs
/// differed from what A and B played, and how many inputs were marked
/// disconnected.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Seen {
    pub frames: u32,
    pub wrong: u32,
    pub disconnected: u32,
}

fn watch(inputs: Res<PlayerInputs<u8>>, frame: Res<RollbackFrame>, mut seen: ResMut<Seen>) {
    // The frame whose inputs these are (the counter is bumped first).
    let f = frame.0 - 1;
    seen.frames += 1;
    for (handle, (input, status)) in inputs.inputs.iter().enumerate() {
        match status {
            InputStatus::Confirmed if *input != played(f, handle) => seen.wrong += 1,
            InputStatus::Disconnected => seen.disconnected += 1,
            _ => {}
        }
    }
}

/// The spectator: a session and the app it drives.
pub struct Watcher {
    pub session: SpectatorSession<GgrsConfig<u8, u8>>,
    app: App,
    rollback: Rollback<u8>,
    /// What each failed `spectator_step` said.
    pub errors: Vec<String>,
}

impl Watcher {
    fn new(net: &Net, guard: Option<&mut Option<GuardStats>>) -> Watcher {
        let socket = MemSocket {
            me: S,
            net: net.clone(),
        };
        let socket: Box<dyn NonBlockingSocket<u8>> = match guard {
            Some(stats) => {
                let g = GuardedSocket::for_spectator(socket, 2);
                *stats = Some(g.stats());
                Box::new(g)
            }
            None => Box::new(socket),
        };
        let session = SessionBuilder::<GgrsConfig<u8, u8>>::new()
            .with_num_players(2)
            .unwrap()
            .start_spectator_session(A, Dyn(socket));
        let mut app = App::with_threads(1);
        app.add_plugins(GgrsPlugin::<u8>::new(Duration::from_micros(16_667)))
            .unwrap();
        app.world_mut().insert_resource(Seen::default());
        app.add_systems(Update, watch).unwrap();
        let rollback = Rollback::new(&app, 4);
        Watcher {
            session,
            app,
            rollback,
            errors: Vec::new(),
        }
    }

    /// One `spectator_step`; an error is kept, and the next step goes on.
    pub fn step(&mut self) {
        if let Err(e) = spectator_step(&mut self.app, &mut self.rollback, &mut self.session) {
            self.errors.push(e.to_string());
        }
    }

    pub fn frame(&self) -> i32 {
        self.session.current_frame()
    }

    pub fn seen(&self) -> Seen {
        *self.app.world().resource::<Seen>().unwrap()
    }
}

/// A and B playing, S watching A, S possibly behind a guard.
pub struct Trio {
    pub a: Peer,
    pub b: Peer,
    pub s: Watcher,
    pub net: Net,
    pub stats: Option<GuardStats>,
    /// Whether S ever held inputs for a frame A had not confirmed: inputs
    /// A never sent it (A sends confirmed inputs only, and its confirmed
    /// frame never goes down).
    pub forged_ahead: bool,
}

impl Trio {
    /// Synchronizes all three and plays `frames` honest frames.
    pub fn running(guarded: bool, frames: usize) -> Trio {
        let mut trio = Trio::synced(guarded, Duration::from_secs(2));
        trio.play(frames);
        trio
    }

    /// Synchronizes all three; A drops a peer it has not heard from for
    /// `timeout`.
    pub fn synced(guarded: bool, timeout: Duration) -> Trio {
        let net: Net = Net::default();
        let mut stats = None;
        let a = Peer::new(
            A,
            &net,
            None,
            builder(A, true).with_disconnect_timeout(timeout),
        );
        let b = Peer::new(B, &net, None, builder(B, false));
        let s = Watcher::new(&net, guarded.then_some(&mut stats));
        let mut trio = Trio {
            a,
            b,
            s,
            net,
            stats,
            forged_ahead: false,
        };
        for _ in 0..10_000 {
            trio.a.session.poll_remote_clients();
            trio.b.session.poll_remote_clients();
            trio.s.session.poll_remote_clients();
            if trio.a.session.current_state() == SessionState::Running
                && trio.b.session.current_state() == SessionState::Running
                && trio.s.session.current_state() == SessionState::Running
            {
                break;
            }
        }
        assert_eq!(trio.s.session.current_state(), SessionState::Running);
        trio
    }

    /// `frames` rounds of A, B and S each stepping once.
    pub fn play(&mut self, frames: usize) {
        for _ in 0..frames {
            self.a.step();
            self.b.step();
            self.s.step();
            self.note_forged();
        }
    }

    /// `frames` rounds of A and S, B silent.
    pub fn play_without_b(&mut self, frames: usize) {
        for _ in 0..frames {
            self.a.step();
            self.s.step();
            self.note_forged();
        }
    }

    fn note_forged(&mut self) {
        let s = &self.s.session;
        let held = s.current_frame() + s.frames_behind_host() as i32;
        if held > self.a.session.confirmed_frame() {
            self.forged_ahead = true;
        }
    }

    /// Puts `msg` into S's inbox as if A had sent it.
    pub fn inject(&self, msg: Message) {
        let mut w = self.net.lock().unwrap();
        w.inbox.entry(S).or_default().push_back((A, msg));
    }

    /// Every message A sent S.
    pub fn captured(&self) -> Vec<Message> {
        self.net.lock().unwrap().sent_to_s.clone()
    }

    /// The magic A stamps on its messages to S.
    pub fn magic_of_a(&self) -> u16 {
        let w = self.net.lock().unwrap();
        w.sent_to_s
            .last()
            .map(|m| WMsg::from_ggrs(m).magic)
            .unwrap_or(1)
    }
}

impl Victim for Trio {
    fn victim_frame(&self) -> i32 {
        self.s.frame()
    }
    fn sender_magic(&self) -> u16 {
        self.magic_of_a()
    }
    fn captured(&self) -> Vec<Message> {
        Trio::captured(self)
    }
    fn inject(&self, msg: Message) {
        Trio::inject(self, msg);
    }
    fn play(&mut self, frames: usize) {
        Trio::play(self, frames);
    }
}

/// Plays `warm` honest frames, then storms S as from A (see
/// [`run_storm`]).
pub fn spectator_storm(guarded: bool, warm: usize, storm: &[Hostile]) -> Outcome<Trio> {
    run_storm(Trio::running(guarded, warm), guarded, storm)
}

/// Injects `msg` into S as from A, plays 10 frames more.
pub fn spectator_after(mut trio: Trio, msg: &WMsg) -> (Option<String>, Trio) {
    let m = msg.to_ggrs();
    let panic = panic_site(|| {
        trio.inject(m);
        trio.play(10);
    });
    (panic, trio)
}
