//! [`Inspector`]: the handle the program's main loop holds.
//!
//! The server's thread queues API requests; the loop answers them between
//! frames, on its own thread, with the world in hand:
//!
//! ```no_run
//! # use doecs::prelude::*;
//! # use doecs_inspect::{Inspector, InspectorConfig};
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let mut world = World::new();
//! let mut schedule = Schedule::new();
//! let mut inspector = Inspector::start(InspectorConfig::new("127.0.0.1:0"))?;
//! println!("inspector: {}", inspector.url());
//! inspector.set_plan(schedule.plan()?.to_string());
//! for _ in 0..600 {
//!     // Serves what is queued; while paused, waits here serving requests
//!     // until resumed or stepped.
//!     inspector.between_frames(&mut world);
//!     let start = std::time::Instant::now();
//!     let report = schedule.run(&mut world)?;
//!     inspector.record_frame(&world, start.elapsed(), &report.systems);
//! }
//! # Ok(()) }
//! ```
//!
//! So the world is read and written only between frames, never at the same
//! time as a system: no locks, no races, and a request never sees half a
//! frame. [`Inspector::serve_pending`] and [`Inspector::wants_frame`] are
//! the two halves of [`Inspector::between_frames`], for loops that want to
//! do something else while paused. The time spent answering is counted in
//! [`ServeStats`].

use crate::controls::Controls;
use crate::error::{ApiError, InspectError};
use crate::history::{History, DEFAULT_HISTORY};
use crate::http::{HttpServer, Pending};
use crate::route::{route, State};
use crate::world_history::{WorldHistory, WorldSample};
use doecs::{SystemTime, World, WorldCore};
use doecs_registry::ComponentRegistry;
use std::net::{SocketAddr, ToSocketAddrs};
use std::panic::AssertUnwindSafe;
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// The address the inspector binds when none is given: loopback, port 8370.
pub const DEFAULT_ADDR: &str = "127.0.0.1:8370";

/// How the inspector starts.
#[derive(Debug, Clone)]
pub struct InspectorConfig {
    /// `HOST:PORT`, or just `PORT` (on 127.0.0.1). Port 0 picks a free port.
    pub addr: String,
    /// Whether edits (set a component, despawn) are allowed.
    pub write: bool,
    /// How component values are read and written.
    pub registry: ComponentRegistry,
    /// Frames kept for `GET /api/systems` (system times) and
    /// `GET /api/history` (the world's counts and frame times).
    pub history: usize,
    /// How long a request waits for the simulation before a 503.
    pub reply_timeout: Duration,
}

impl InspectorConfig {
    /// Read-only, on `addr`, with an empty registry.
    pub fn new(addr: impl Into<String>) -> Self {
        InspectorConfig {
            addr: addr.into(),
            write: false,
            registry: ComponentRegistry::new(),
            history: DEFAULT_HISTORY,
            reply_timeout: Duration::from_secs(10),
        }
    }

    /// Allows or refuses edits.
    pub fn write(mut self, write: bool) -> Self {
        self.write = write;
        self
    }

    /// Reads and writes values through `registry`.
    pub fn registry(mut self, registry: ComponentRegistry) -> Self {
        self.registry = registry;
        self
    }
}

/// Parses `HOST:PORT` or `PORT` (on 127.0.0.1).
pub fn parse_addr(addr: &str) -> Result<SocketAddr, InspectError> {
    let bad = || InspectError::BadAddress(addr.to_owned());
    if let Ok(port) = addr.parse::<u16>() {
        return Ok(SocketAddr::from(([127, 0, 0, 1], port)));
    }
    addr.to_socket_addrs()
        .map_err(|_| bad())?
        .next()
        .ok_or_else(bad)
}

/// Time spent answering requests.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ServeStats {
    /// Requests answered.
    pub requests: u64,
    /// Time spent answering them, on the simulation's thread.
    pub serve_time: Duration,
}

/// A running inspector (see the module docs). Dropping it stops the server.
#[derive(Debug)]
pub struct Inspector {
    state: State,
    requests: mpsc::Receiver<Pending>,
    server: HttpServer,
}

impl Inspector {
    /// Binds the address and starts serving.
    pub fn start(config: InspectorConfig) -> Result<Self, InspectError> {
        let addr = parse_addr(&config.addr)?;
        let (tx, rx) = mpsc::channel();
        let server = HttpServer::start(addr, tx, config.reply_timeout)?;
        Ok(Inspector {
            state: State {
                registry: config.registry,
                write: config.write,
                controls: Controls::default(),
                history: History::new(config.history),
                world_history: WorldHistory::new(config.history),
                frame: 0,
                plan: None,
                stats: ServeStats::default(),
                started: Instant::now(),
            },
            requests: rx,
            server,
        })
    }

    /// The address the server is bound to (the real port when asked for 0).
    pub fn addr(&self) -> SocketAddr {
        self.server.addr()
    }

    /// The page's URL, `http://ADDR/`.
    pub fn url(&self) -> String {
        format!("http://{}/", self.addr())
    }

    /// Whether edits are allowed.
    pub fn write_enabled(&self) -> bool {
        self.state.write
    }

    /// The schedule's plan text (`Schedule::plan().to_string()`), shown
    /// beside the system times.
    pub fn set_plan(&mut self, plan: impl Into<String>) {
        self.state.plan = Some(plan.into());
    }

    /// Records a frame just run: its wall time, the schedule's per-system
    /// times (`RunReport::systems`), and the world after it (entities,
    /// archetypes in use, storage bytes; see [`crate::world_history`]).
    ///
    /// Cheap enough for every frame: no allocation once the histories are
    /// full, and one pass over the archetypes, none over the entities.
    pub fn record_frame(&mut self, world: &WorldCore, time: Duration, systems: &[SystemTime]) {
        self.state.frame += 1;
        let frame = self.state.frame;
        self.state.history.record(frame, time, systems);
        self.state
            .world_history
            .push(WorldSample::of(world, frame, time));
    }

    /// Frames recorded so far.
    pub fn frame(&self) -> u64 {
        self.state.frame
    }

    /// Whether the simulation is paused.
    pub fn is_paused(&self) -> bool {
        self.state.controls.paused()
    }

    /// Time spent answering requests so far.
    pub fn stats(&self) -> ServeStats {
        self.state.stats
    }

    /// Answers every queued request; returns how many.
    pub fn serve_pending(&mut self, world: &mut World) -> usize {
        let mut served = 0;
        while let Ok(pending) = self.requests.try_recv() {
            self.answer(world, pending);
            served += 1;
        }
        served
    }

    /// Whether the next frame may run: always while running; while paused,
    /// once per step asked for. Call it once per frame.
    pub fn wants_frame(&mut self) -> bool {
        self.state.controls.take_frame()
    }

    /// Serves queued requests, then, while paused, waits for and serves
    /// requests until a frame may run (resume or step). Call it before
    /// each frame.
    pub fn between_frames(&mut self, world: &mut World) {
        self.serve_pending(world);
        while !self.wants_frame() {
            match self.requests.recv_timeout(Duration::from_millis(100)) {
                Ok(pending) => {
                    self.answer(world, pending);
                    self.serve_pending(world);
                }
                Err(mpsc::RecvTimeoutError::Timeout) => {}
                // The server is gone: nobody can resume, so run on.
                Err(mpsc::RecvTimeoutError::Disconnected) => return,
            }
        }
    }

    /// Serves requests as they arrive until `deadline`: for a loop that
    /// paces its frames, in place of sleeping, so answers come at once.
    pub fn serve_until(&mut self, world: &mut World, deadline: Instant) {
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                self.serve_pending(world);
                return;
            }
            match self.requests.recv_timeout(left) {
                Ok(pending) => self.answer(world, pending),
                Err(mpsc::RecvTimeoutError::Timeout) => return,
                Err(mpsc::RecvTimeoutError::Disconnected) => {
                    std::thread::sleep(left);
                    return;
                }
            }
        }
    }

    fn answer(&mut self, world: &mut World, pending: Pending) {
        let start = Instant::now();
        // A bug in a handler must not take the program down with it: the
        // client gets a 500, and the panic message is printed as usual.
        let routed = std::panic::catch_unwind(AssertUnwindSafe(|| {
            route(&mut self.state, world, &pending.request)
        }));
        let reply = match routed {
            Ok(Ok(body)) => (200, body),
            Ok(Err(e)) => (e.status, e.to_json()),
            Err(_) => {
                let e = ApiError::new(500, "the inspector failed on this request (a bug)");
                (e.status, e.to_json())
            }
        };
        // Time to build the answer; the server's thread turns it into text.
        self.state.stats.serve_time += start.elapsed();
        self.state.stats.requests += 1;
        // The connection may have timed out and gone (a oneshot send never
        // blocks).
        let _ = pending.reply.send(reply);
    }
}

/// Answers one request directly, without a server: for tests and tools.
pub fn answer_directly(
    world: &mut World,
    registry: &ComponentRegistry,
    write: bool,
    method: crate::Method,
    target: &str,
    body: &[u8],
) -> Result<serde_json::Value, ApiError> {
    let mut state = State {
        registry: registry.clone(),
        write,
        controls: Controls::default(),
        history: History::new(1),
        world_history: WorldHistory::new(1),
        frame: 0,
        plan: None,
        stats: ServeStats::default(),
        started: Instant::now(),
    };
    let request = crate::ApiRequest {
        method,
        target: crate::parse::parse_target(target)?,
        body: body.to_vec(),
    };
    route(&mut state, world, &request)
}
