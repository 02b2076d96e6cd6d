//! Pause, step and resume: state the main loop reads between frames.
//!
//! The inspector never runs frames itself. The program's loop asks
//! [`Controls::take_frame`] (through `Inspector::wants_frame`) before each
//! frame: running, the answer is always yes; paused, it is yes once per
//! step asked for, and no otherwise. `POST /api/controls/step?frames=N`
//! pauses and asks for N frames; `pause` drops steps not yet taken;
//! `resume` runs freely again.

use serde_json::{json, Value};

/// The most frames one step request may ask for.
pub const MAX_STEP: u64 = 100_000;

/// Running, or paused with some frames still to step.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Controls {
    paused: bool,
    steps: u64,
}

impl Controls {
    /// Whether the simulation is paused.
    pub fn paused(&self) -> bool {
        self.paused
    }

    /// Frames still to step while paused.
    pub fn pending_steps(&self) -> u64 {
        self.steps
    }

    /// Pauses, dropping steps not yet taken.
    pub fn pause(&mut self) {
        self.paused = true;
        self.steps = 0;
    }

    /// Pauses and asks for `frames` more frames.
    pub fn step(&mut self, frames: u64) {
        self.paused = true;
        self.steps = self.steps.saturating_add(frames).min(MAX_STEP);
    }

    /// Runs freely again.
    pub fn resume(&mut self) {
        self.paused = false;
        self.steps = 0;
    }

    /// Whether the next frame may run; takes one step when paused.
    pub fn take_frame(&mut self) -> bool {
        if !self.paused {
            return true;
        }
        if self.steps > 0 {
            self.steps -= 1;
            return true;
        }
        false
    }

    /// The JSON of `GET /api/controls` (with the frames run so far).
    pub fn to_json(&self, frame: u64) -> Value {
        json!({ "paused": self.paused, "pending_steps": self.steps, "frame": frame })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pause_step_resume() {
        let mut c = Controls::default();
        assert!(c.take_frame() && c.take_frame());
        c.pause();
        assert!(!c.take_frame());
        c.step(2);
        assert!(c.take_frame() && c.take_frame());
        assert!(!c.take_frame());
        c.step(5);
        c.pause();
        assert!(!c.take_frame());
        c.step(u64::MAX);
        assert_eq!(c.pending_steps(), MAX_STEP);
        c.resume();
        assert!(c.take_frame() && !c.paused());
    }
}
