//! A live inspector for doecs worlds: a JSON API modelled on flecs's REST
//! API, and a web page that uses it, served by the program itself.
//!
//! The program starts an [`Inspector`] and calls
//! [`Inspector::between_frames`] before each frame and
//! [`Inspector::record_frame`] after it. The HTTP server (hyper, on a
//! one-thread tokio runtime of its own) never touches the world: it queues each API
//! request, and the program's own thread answers the queue between frames.
//! So a request sees a whole frame, systems never race the server, and the
//! cost lands where it can be measured ([`ServeStats`]).
//!
//! Safety by default: the server binds to loopback unless told otherwise,
//! answers only requests addressed to a loopback host when it does, and is
//! read-only unless started with [`InspectorConfig::write`]. Requests with
//! a malformed path, query or body get a 4xx JSON error (`{"error",
//! "status"}`); targets and bodies have size limits ([`parse`], [`http`]).
//! The routes are listed in [`route`].
//!
//! The page (`assets/`, embedded in the binary) shows a sortable archetype
//! table, an entity browser with the transform hierarchy as a tree and
//! each entity's component values and relationship pairs both ways (as
//! lists and a graph of its neighbourhood), a live chart of per-system
//! frame times, charts of the world's history ([`world_history`]), the
//! prefabs with their instance counts ([`prefabs`]), pause, step and
//! resume buttons, and with write access typed editors, create, add,
//! remove and despawn ([`edit`]).

pub mod assets;
pub mod components;
pub mod controls;
pub mod edit;
pub mod entity;
pub mod error;
mod head;
pub mod history;
pub mod http;
pub mod inspector;
pub mod parse;
pub mod plugin;
pub mod prefabs;
pub mod qlang;
pub mod query;
pub mod route;
pub mod summary;
mod wire;
pub mod world_history;

pub use error::{ApiError, InspectError};
pub use inspector::{
    answer_directly, parse_addr, Inspector, InspectorConfig, ServeStats, DEFAULT_ADDR,
};
pub use plugin::{InspectorHandle, InspectorPlugin, InspectorSystems, SERVE_SYSTEM};
pub use route::{ApiRequest, Method};
