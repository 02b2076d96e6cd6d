//! The library half of the `doecs` command: the demo game (its components,
//! level, physics and transform systems) and the runners that drive it
//! (`run`, the rollback sync test, `play` under ggrs), so that benches and
//! tests outside the binary can build exactly the game the command runs.
//! The command's interface is `doecs --help`; see the crate's README.

pub mod components;
pub mod demo_level;
pub mod frame_times;
pub mod input;
pub mod out;
pub mod play;
pub mod registry;
pub mod rollback;
pub mod run;
pub mod saves;
